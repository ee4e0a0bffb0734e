//! The race's settings as they live in the URL (`#/race?view=sweep&from=16&to=512`): parsed,
//! validated (a bad value is named and replaced by its default) and written back. Pure.

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::CpuVariant;

use crate::query::Query;

/// Fixed seed: both sides (and every visitor) multiply the same numbers.
pub const SEED: u64 = 1;
/// Race sizes: N from 1 to this (square N×N×N).
pub const MAX_RACE_N: u32 = 4096;
pub const DEFAULT_RACE_N: u32 = 256;
/// Scaling sweep bounds; the default top stays small because software GPUs (SwiftShader) and
/// the naive CPU loop are slow.
pub const SWEEP_MIN: u32 = 16;
pub const SWEEP_MAX: u32 = 2048;
pub const DEFAULT_SWEEP_TO: u32 = 512;
/// The article's size (fact-check FC-45) and the sizes the claim may be measured at.
pub const CLAIM_N: u32 = 4096;
pub const CLAIM_SIZES: [u32; 4] = [512, 1024, 2048, 4096];
pub const DEFAULT_CLAIM_AT: u32 = 1024;
/// The claim's default on a software adapter. SwiftShader runs the GPU side on the CPU cores
/// the CPU side also uses, and its speed varies by machine and load: at 1024 a learner waited
/// over 300 s for the GPU row (issue 23), where this repository's test machine took 1.6 s
/// (0.4 s at 512). 512 is 8× less work and the smallest size the check offers; 256 would
/// scale its times by 4096× to reach the claim's N, too far for an estimate.
pub const DEFAULT_CLAIM_AT_SOFTWARE: u32 = 512;
/// The article's ratio: GPU time = CPU time / 100.
pub const CLAIMED_SPEEDUP: f64 = 100.0;
pub const MAX_WORKERS: u32 = 16;
/// The GPU stage raced by default: the fastest f32 stage that runs in every browser.
pub const DEFAULT_GPU_STAGE: &str = "matmul-vec4";

/// Which part of the race page is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Race,
    Sweep,
    Claim,
    /// The race on a convolution (`view=conv`).
    Conv,
}

impl View {
    pub const ALL: [View; 4] = [View::Race, View::Sweep, View::Claim, View::Conv];

    pub fn id(self) -> &'static str {
        match self {
            View::Race => "race",
            View::Sweep => "sweep",
            View::Claim => "claim",
            View::Conv => "conv",
        }
    }
}

/// What the two sides race on: a square matmul, or a convolution (its CPU rows kernel in
/// `cpu_kernels::conv_variants`, its GPU side a conv stage's plan). An MLP step would add a variant
/// here, and the race view, the workers and the verification take it through the same steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Matmul(MatmulSize),
    Conv(cpu_kernels::conv::ConvShape),
}

impl Workload {
    pub fn square(n: u32) -> Self {
        Workload::Matmul(MatmulSize::new(n, n, n))
    }

    pub fn flops(&self) -> f64 {
        match self {
            Workload::Matmul(s) => s.flops(),
            Workload::Conv(s) => s.flops(),
        }
    }

    /// Rows of output the CPU side splits between workers.
    pub fn rows(&self) -> u32 {
        match self {
            Workload::Matmul(s) => s.m,
            Workload::Conv(s) => s.out_pixels() as u32,
        }
    }
}

/// All settings of the race page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceParams {
    pub view: View,
    pub n: u32,
    pub cpu: CpuVariant,
    pub workers: u32,
    /// Requested GPU stage (a catalogued matmul kernel; availability is checked by the page).
    pub gpu: String,
    pub from: u32,
    pub to: u32,
    /// N the claim is measured at (extrapolated to [`CLAIM_N`] when smaller).
    pub at: u32,
}

/// A URL parameter that was not valid: its name, what was given and what is used instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamIssue {
    pub name: &'static str,
    pub value: String,
    pub used: String,
}

/// N the claim is measured at when the URL does not say: smaller on a software adapter.
pub fn default_claim_at(software: bool) -> u32 {
    if software {
        DEFAULT_CLAIM_AT_SOFTWARE
    } else {
        DEFAULT_CLAIM_AT
    }
}

/// Whether the claim runs at a smaller N than elsewhere only because the adapter is a software
/// one (the page then says why, and how to try the larger one).
pub fn claim_at_lowered(software: bool, at: u32) -> bool {
    software && at == DEFAULT_CLAIM_AT_SOFTWARE && at < DEFAULT_CLAIM_AT
}

/// Workers used by default: the visitor's logical cores, at most 8 (more rarely helps at
/// these sizes and each worker holds its own copy of B).
pub fn default_workers(hardware_concurrency: u32) -> u32 {
    hardware_concurrency.clamp(1, 8)
}

fn int_in(v: &str, min: u32, max: u32) -> Option<u32> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|x| (min..=max).contains(x))
}

impl RaceParams {
    /// The settings of a URL that names none, on an adapter that is not a software one.
    pub fn defaults(default_workers: u32) -> Self {
        Self {
            view: View::Race,
            n: DEFAULT_RACE_N,
            cpu: CpuVariant::Simd,
            workers: default_workers.clamp(1, MAX_WORKERS),
            gpu: DEFAULT_GPU_STAGE.to_string(),
            from: SWEEP_MIN,
            to: DEFAULT_SWEEP_TO,
            at: DEFAULT_CLAIM_AT,
        }
    }

    /// Reads the settings; every invalid value is reported and replaced by its default, which
    /// for the claim's N depends on whether the adapter is a `software` one.
    pub fn parse(q: &Query, default_workers: u32, software: bool) -> (Self, Vec<ParamIssue>) {
        let mut p = Self::defaults(default_workers);
        p.at = default_claim_at(software);
        let mut issues = Vec::new();
        let mut bad = |name: &'static str, value: &str, used: String| {
            issues.push(ParamIssue {
                name,
                value: value.chars().take(40).collect(),
                used,
            })
        };
        if let Some(v) = q.get("view") {
            match View::ALL.into_iter().find(|x| x.id() == v) {
                Some(view) => p.view = view,
                None => bad("view", v, p.view.id().into()),
            }
        }
        if let Some(v) = q.get("n") {
            match int_in(v, 1, MAX_RACE_N) {
                Some(n) => p.n = n,
                None => bad("n", v, p.n.to_string()),
            }
        }
        if let Some(v) = q.get("cpu") {
            match CpuVariant::from_id(v) {
                Some(c) => p.cpu = c,
                None => bad("cpu", v, p.cpu.id().into()),
            }
        }
        if let Some(v) = q.get("workers") {
            match int_in(v, 1, MAX_WORKERS) {
                Some(w) => p.workers = w,
                None => bad("workers", v, p.workers.to_string()),
            }
        }
        if let Some(v) = q.get("gpu") {
            let known =
                gpu_runtime::kernel(v).is_some_and(|k| k.family == gpu_runtime::Family::Matmul);
            if known {
                p.gpu = v.to_string();
            } else {
                bad("gpu", v, p.gpu.clone());
            }
        }
        let from = q.get("from").map(|v| (v, int_in(v, SWEEP_MIN, SWEEP_MAX)));
        let to = q.get("to").map(|v| (v, int_in(v, SWEEP_MIN, SWEEP_MAX)));
        match from {
            Some((_, Some(f))) => p.from = f,
            Some((v, None)) => bad("from", v, p.from.to_string()),
            None => {}
        }
        match to {
            Some((_, Some(t))) => p.to = t,
            Some((v, None)) => bad("to", v, p.to.to_string()),
            None => {}
        }
        if p.from > p.to {
            let value = format!("{}–{}", p.from, p.to);
            p.from = SWEEP_MIN;
            p.to = DEFAULT_SWEEP_TO.max(p.from);
            bad("from", &value, format!("{}–{}", p.from, p.to));
        }
        if let Some(v) = q.get("at") {
            match v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|x| CLAIM_SIZES.contains(x))
            {
                Some(a) => p.at = a,
                None => bad("at", v, p.at.to_string()),
            }
        }
        (p, issues)
    }

    /// The query with these settings written in (other parameters, such as `lang`, kept).
    pub fn write(&self, mut q: Query) -> Query {
        q.set("view", self.view.id());
        q.set("n", &self.n.to_string());
        q.set("cpu", self.cpu.id());
        q.set("workers", &self.workers.to_string());
        q.set("gpu", &self.gpu);
        q.set("from", &self.from.to_string());
        q.set("to", &self.to.to_string());
        q.set("at", &self.at.to_string());
        q
    }
}

/// The sizes of a sweep: `from`, doubling, and `to` itself as the last point.
pub fn sweep_sizes(from: u32, to: u32) -> Vec<u32> {
    let mut sizes = Vec::new();
    let mut n = from.max(1);
    while n < to {
        sizes.push(n);
        n = n.saturating_mul(2);
    }
    sizes.push(to.max(from));
    sizes
}

/// Rows per tile of the SIMD micro-kernel: splits and chunks are whole tiles where possible.
const TILE: u32 = cpu_kernels::matmul_variants::MR as u32;

/// Splits `rows` rows between up to `workers` workers as evenly as possible, in whole tiles of
/// the SIMD kernel where there are enough; no worker gets an empty range.
pub fn split_rows(rows: u32, workers: u32) -> Vec<(u32, u32)> {
    let workers = workers.clamp(1, rows.max(1));
    let tiles = rows.div_ceil(TILE);
    let used = workers.min(tiles.max(1));
    let mut out = Vec::new();
    let mut r = 0;
    for w in 0..used {
        let tiles_here = tiles / used + u32::from(w < tiles % used);
        let end = (r + tiles_here * TILE).min(rows);
        if end > r {
            out.push((r, end));
        }
        r = end;
    }
    out
}

/// Rows per progress message: about 20 messages per worker, whole tiles.
pub fn chunk_rows(rows: u32) -> u32 {
    (rows.div_ceil(20)).div_ceil(TILE).max(1) * TILE
}

/// Where the GPU starts winning in a sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crossover {
    /// The GPU is faster than every CPU contender from this N up to the end of the sweep.
    At(u32),
    /// Faster at every size measured.
    GpuEverywhere,
    /// Never faster from some size to the end (it may win at a few sizes in between).
    None,
}

/// `points`: (N, fastest CPU time, GPU time) in increasing N; a missing time is `None`.
pub fn crossover(points: &[(u32, Option<f64>, Option<f64>)]) -> Crossover {
    let wins: Vec<(u32, bool)> = points
        .iter()
        .filter_map(|&(n, cpu, gpu)| Some((n, gpu? < cpu?)))
        .collect();
    if wins.is_empty() {
        return Crossover::None;
    }
    // The first N after the last CPU win.
    match wins.iter().rposition(|(_, gpu_wins)| !gpu_wins) {
        None => Crossover::GpuEverywhere,
        Some(i) if i + 1 < wins.len() => Crossover::At(wins[i + 1].0),
        Some(_) => Crossover::None,
    }
}

/// A time measured at N = `from` scaled to N = `to` as N³ (the arithmetic of a square matmul):
/// an estimate that ignores caches, memory limits and fixed overheads.
pub fn extrapolate_cubic(ms: f64, from: u32, to: u32) -> f64 {
    ms * (to as f64 / from as f64).powi(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_round_trip() {
        let (p, issues) = RaceParams::parse(&Query::parse("lang=zh"), 4, false);
        assert!(issues.is_empty());
        assert_eq!(p, RaceParams::defaults(4));
        let mut changed = p.clone();
        changed.view = View::Sweep;
        changed.n = 300;
        changed.cpu = CpuVariant::Naive;
        changed.workers = 2;
        changed.from = 32;
        changed.to = 2048;
        changed.at = 4096;
        let q = changed.write(Query::parse("lang=zh"));
        assert_eq!(q.get("lang"), Some("zh"));
        let (back, issues) = RaceParams::parse(&q, 4, false);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(back, changed);
    }

    #[test]
    fn the_claims_default_n_comes_from_the_adapter_and_the_url_wins() {
        let none = Query::parse("view=claim");
        assert_eq!(RaceParams::parse(&none, 4, false).0.at, 1024);
        assert_eq!(RaceParams::parse(&none, 4, true).0.at, 512);
        // An N in the URL is honoured on any adapter.
        for at in CLAIM_SIZES {
            let q = Query::parse(&format!("view=claim&at={at}"));
            for software in [false, true] {
                let (p, issues) = RaceParams::parse(&q, 4, software);
                assert_eq!((p.at, issues.len()), (at, 0), "{at} {software}");
            }
        }
        // A bad one is replaced by this adapter's default.
        let (p, issues) = RaceParams::parse(&Query::parse("at=3000"), 4, true);
        assert_eq!(p.at, 512);
        assert_eq!(issues[0].used, "512");
        assert!(CLAIM_SIZES.contains(&DEFAULT_CLAIM_AT_SOFTWARE));
        // The page says why only where the smaller N is the adapter's doing.
        assert!(claim_at_lowered(true, 512));
        assert!(!claim_at_lowered(true, 1024));
        assert!(!claim_at_lowered(false, 512));
    }

    #[test]
    fn bad_values_are_named_and_defaulted() {
        let q = Query::parse(
            "view=chart&n=0&cpu=fast&workers=99&gpu=matmul-nope&from=8&to=4096&at=3000",
        );
        let (p, issues) = RaceParams::parse(&q, 2, false);
        let names: Vec<&str> = issues.iter().map(|i| i.name).collect();
        assert_eq!(
            names,
            ["view", "n", "cpu", "workers", "gpu", "from", "to", "at"]
        );
        assert_eq!(p, RaceParams::defaults(2));
        assert_eq!(issues[1].value, "0");
        assert_eq!(issues[1].used, "256");
        // from > to is one issue and resets the range.
        let (p, issues) = RaceParams::parse(&Query::parse("from=1024&to=64"), 2, false);
        assert_eq!((p.from, p.to), (SWEEP_MIN, DEFAULT_SWEEP_TO));
        assert_eq!(issues.len(), 1);
        // Not a matmul kernel.
        let (_, issues) = RaceParams::parse(&Query::parse("gpu=schedule-probe"), 2, false);
        assert_eq!(issues.len(), 1);
        // Huge, negative and junk numbers.
        for v in ["99999999999", "-1", "1e3", "", "4097"] {
            let (p, issues) = RaceParams::parse(&Query::parse(&format!("n={v}")), 2, false);
            assert_eq!(p.n, DEFAULT_RACE_N, "{v}");
            assert_eq!(issues.len(), 1, "{v}");
        }
    }

    #[test]
    fn sweep_sizes_double_and_end_at_to() {
        assert_eq!(sweep_sizes(16, 128), [16, 32, 64, 128]);
        assert_eq!(sweep_sizes(16, 100), [16, 32, 64, 100]);
        assert_eq!(sweep_sizes(64, 64), [64]);
        assert_eq!(sweep_sizes(16, 2048).len(), 8);
    }

    #[test]
    fn rows_split_evenly_in_tiles() {
        assert_eq!(TILE, 4);
        assert_eq!(
            split_rows(256, 4),
            [(0, 64), (64, 128), (128, 192), (192, 256)]
        );
        assert_eq!(split_rows(10, 4), [(0, 4), (4, 8), (8, 10)]);
        assert_eq!(split_rows(1, 8), [(0, 1)]);
        assert_eq!(split_rows(7, 1), [(0, 7)]);
        for (rows, w) in [(1000, 3), (17, 16), (4096, 8), (5, 2)] {
            let s = split_rows(rows, w);
            assert_eq!(s.first().map(|x| x.0), Some(0));
            assert_eq!(s.last().map(|x| x.1), Some(rows));
            assert!(s.windows(2).all(|p| p[0].1 == p[1].0 && p[0].0 < p[0].1));
            assert!(s.len() as u32 <= w);
        }
        assert_eq!(chunk_rows(256), 16);
        assert_eq!(chunk_rows(1), 4);
    }

    #[test]
    fn crossover_is_after_the_last_cpu_win() {
        let p = |v: &[(u32, f64, f64)]| -> Vec<(u32, Option<f64>, Option<f64>)> {
            v.iter().map(|&(n, c, g)| (n, Some(c), Some(g))).collect()
        };
        assert_eq!(
            crossover(&p(&[
                (16, 0.01, 1.0),
                (64, 1.0, 1.5),
                (256, 50.0, 3.0),
                (512, 400.0, 9.0)
            ])),
            Crossover::At(256)
        );
        // A lucky GPU win at a small size does not count as the crossover.
        assert_eq!(
            crossover(&p(&[(16, 1.0, 0.5), (64, 1.0, 2.0), (256, 50.0, 3.0)])),
            Crossover::At(256)
        );
        assert_eq!(
            crossover(&p(&[(16, 1.0, 0.5), (32, 2.0, 1.0)])),
            Crossover::GpuEverywhere
        );
        assert_eq!(
            crossover(&p(&[(16, 0.1, 0.5), (32, 0.2, 1.0)])),
            Crossover::None
        );
        assert_eq!(crossover(&[(16, None, Some(1.0))]), Crossover::None);
    }

    #[test]
    fn extrapolation_is_cubic() {
        assert_eq!(extrapolate_cubic(2.0, 1024, 4096), 128.0);
        assert_eq!(extrapolate_cubic(5.0, 4096, 4096), 5.0);
    }
}
