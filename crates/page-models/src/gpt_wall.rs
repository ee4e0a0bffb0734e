//! The memory-wall experiment of `#/gpt` (the articles' large-model chapter: memory, not
//! arithmetic, is the wall): causal attention run two ways on the visitor's GPU over sequence
//! lengths 64…`max_n`, the naive way (every score and probability written to memory: bh·n²
//! floats) and fused (online softmax, nothing of size n² leaves the chip). Each length's
//! time is the median of the runs with their spread, each output is checked against the
//! reference, and a length whose scores pass the adapter's largest buffer is shown as the wall
//! it is, with what it needed. Pure: the page runs the kernels (`gpu_runtime::attention`) and
//! feeds the results to [`Wall`].

use crate::conv_page::{parse_in, read, BadParam};
use crate::query::Query;

/// The shortest length measured; every length is a power of two from it.
pub const MIN_N: u32 = 64;
/// The longest length the page offers (the naive scores of 8 problems: 2 GiB).
pub const MAX_N: u32 = 8192;
/// Problems (sequences × heads) at most.
pub const MAX_BH: u32 = 64;
/// The narrowest head offered.
pub const MIN_D: u32 = 4;
/// The fused kernel's widest head.
pub const MAX_D: u32 = 64;

/// Powers of two from `lo` to `hi`: the values the form offers for each setting (the URL
/// takes no other, so the form always shows what a run uses).
pub fn powers_of_two(lo: u32, hi: u32) -> Vec<u32> {
    std::iter::successors(Some(lo), |n| n.checked_mul(2))
        .take_while(|n| *n <= hi)
        .collect()
}

/// The experiment's settings, all in the URL (`wbh`, `wd`, `wfrom`, `wn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WallSettings {
    /// Independent problems: sequences × heads.
    pub bh: u32,
    /// Head width.
    pub d: u32,
    /// The shortest sequence measured (a power of two, `MIN_N`…`max_n`): a learner who knows
    /// where the wall is goes straight there.
    pub min_n: u32,
    /// The longest sequence measured (a power of two, `MIN_N`…`MAX_N`).
    pub max_n: u32,
}

impl WallSettings {
    /// The defaults: GPT-2-like heads of 64 over 8 problems, from 64 to 2,048 positions on a
    /// GPU and to 256 on a software adapter (a CPU imitating a GPU takes seconds per length
    /// beyond: the naive softmax's workgroup per row and its barriers are slow there).
    pub fn default_for(software: bool) -> Self {
        Self {
            bh: 8,
            d: 64,
            min_n: MIN_N,
            max_n: if software { 256 } else { 2048 },
        }
    }

    /// Reads the URL; each bad value is named and its default used.
    pub fn from_query(q: &Query, software: bool) -> (Self, Vec<BadParam>) {
        let d = Self::default_for(software);
        let mut bad = Vec::new();
        let b = &mut bad;
        let pow2 = |v: &str| parse_in(v, MIN_N, MAX_N).filter(|n| n.is_power_of_two());
        let bh = |v: &str| parse_in(v, 1, MAX_BH).filter(|n| n.is_power_of_two());
        let width = |v: &str| parse_in(v, MIN_D, MAX_D).filter(|n| n.is_power_of_two());
        let s = Self {
            bh: read(q, b, "wbh", &d.bh.to_string(), bh).unwrap_or(d.bh),
            d: read(q, b, "wd", &d.d.to_string(), width).unwrap_or(d.d),
            min_n: d.min_n,
            max_n: read(q, b, "wn", &d.max_n.to_string(), pow2).unwrap_or(d.max_n),
        };
        let from = |v: &str| pow2(v).filter(|n| *n <= s.max_n);
        let min_n = read(q, b, "wfrom", &d.min_n.to_string(), from).unwrap_or(d.min_n);
        (Self { min_n, ..s }, bad)
    }

    pub fn write(&self, q: &mut Query) {
        q.set("wbh", &self.bh.to_string());
        q.set("wd", &self.d.to_string());
        q.set("wn", &self.max_n.to_string());
        if self.min_n != MIN_N {
            q.set("wfrom", &self.min_n.to_string());
        } else {
            q.remove("wfrom");
        }
    }

    /// The lengths measured, shortest first.
    pub fn lengths(&self) -> Vec<u32> {
        powers_of_two(self.min_n, self.max_n)
    }

    /// Bytes of the naive path's score matrix at length `n` (its probabilities overwrite it).
    pub fn scores_bytes(&self, n: u32) -> u64 {
        self.bh as u64 * n as u64 * n as u64 * 4
    }

    /// Bytes of Q, K, V and the output (what both paths hold).
    pub fn io_bytes(&self, n: u32) -> u64 {
        4 * self.bh as u64 * n as u64 * self.d as u64 * 4
    }

    /// Floating-point operations of the causal forward (half of the full 4·bh·n²·d).
    pub fn flops(&self, n: u32) -> f64 {
        2.0 * self.bh as f64 * (n as f64).powi(2) * self.d as f64
    }
}

/// One path at one length.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Not run yet (or the run stopped before it).
    Waiting,
    /// Median and spread (max − min) of the timed runs, ms, and whether the output agreed
    /// with the reference.
    Ran {
        ms: f64,
        spread: f64,
        verified: bool,
    },
    /// Its largest buffer passes the adapter's limit: never sent to the GPU.
    TooLarge {
        needed: u64,
        limit: u64,
    },
    Failed(String),
}

/// Which way attention is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Naive,
    Fused,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub n: u32,
    pub naive: Cell,
    pub fused: Cell,
}

impl Row {
    /// Fused over naive speed, where both ran and agreed.
    pub fn speedup(&self) -> Option<f64> {
        match (&self.naive, &self.fused) {
            (
                Cell::Ran {
                    ms: a,
                    verified: true,
                    ..
                },
                Cell::Ran {
                    ms: b,
                    verified: true,
                    ..
                },
            ) if *b > 0.0 => Some(a / b),
            _ => None,
        }
    }
}

/// The experiment's state: the rows of the last run started, and whether it is going.
#[derive(Clone, Debug, PartialEq)]
pub struct Wall {
    pub settings: WallSettings,
    pub rows: Vec<Row>,
    pub running: bool,
    /// The last run was stopped by Cancel (rows not reached stay Waiting).
    pub cancelled: bool,
}

/// What changes the experiment.
#[derive(Clone, Debug, PartialEq)]
pub enum WallAction {
    Start(WallSettings),
    /// The page's settings now: results of other settings are cleared (a run of them has
    /// been cancelled by then), so no result shows beside settings it does not belong to.
    Settings(WallSettings),
    Measured {
        n: u32,
        path: Path,
        cell: Cell,
    },
    Finished,
    Cancelled,
}

impl Wall {
    pub fn new(settings: WallSettings) -> Self {
        Self {
            settings,
            rows: Vec::new(),
            running: false,
            cancelled: false,
        }
    }

    pub fn reduce(&self, action: WallAction) -> Self {
        let mut next = self.clone();
        match action {
            WallAction::Start(s) => {
                next = Wall::new(s);
                next.running = true;
                next.rows = s
                    .lengths()
                    .into_iter()
                    .map(|n| Row {
                        n,
                        naive: Cell::Waiting,
                        fused: Cell::Waiting,
                    })
                    .collect();
            }
            WallAction::Settings(s) => {
                if s != next.settings {
                    next = Wall::new(s);
                }
            }
            WallAction::Measured { n, path, cell } => {
                if let Some(row) = next.rows.iter_mut().find(|r| r.n == n) {
                    match path {
                        Path::Naive => row.naive = cell,
                        Path::Fused => row.fused = cell,
                    }
                }
            }
            WallAction::Finished => next.running = false,
            WallAction::Cancelled => {
                next.running = false;
                next.cancelled = true;
            }
        }
        next
    }

    /// What a page without a GPU shows: every length's memory, no times.
    pub fn preview(settings: WallSettings) -> Self {
        let mut w = Wall::new(settings).reduce(WallAction::Start(settings));
        w.running = false;
        w
    }

    /// The shortest length at which the naive path did not fit the adapter.
    pub fn wall_at(&self) -> Option<u32> {
        self.rows
            .iter()
            .find(|r| matches!(r.naive, Cell::TooLarge { .. }))
            .map(|r| r.n)
    }

    /// The longest length both paths ran and agreed at, with the fused path's speedup there.
    pub fn longest_speedup(&self) -> Option<(u32, f64)> {
        self.rows
            .iter()
            .rev()
            .find_map(|r| r.speedup().map(|s| (r.n, s)))
    }

    /// Whether any output disagreed with the reference.
    pub fn any_wrong(&self) -> bool {
        self.rows.iter().any(|r| {
            [&r.naive, &r.fused].iter().any(|c| {
                matches!(
                    c,
                    Cell::Ran {
                        verified: false,
                        ..
                    }
                )
            })
        })
    }
}

/// Median ([`numbers::median`], the site's one summary of repeated runs) and spread
/// (max − min) of run times; None for none.
pub fn median_spread(times: &[f64]) -> Option<(f64, f64)> {
    let median = numbers::median(times)?;
    let finite = || times.iter().copied().filter(|v| v.is_finite());
    let spread = finite().fold(f64::MIN, f64::max) - finite().fold(f64::MAX, f64::min);
    Some((median, spread))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(s)
    }

    #[test]
    fn settings_read_the_url_and_name_bad_values() {
        let (s, bad) = WallSettings::from_query(&q("wbh=4&wd=32&wn=1024&wfrom=512"), false);
        assert_eq!((s.bh, s.d, s.min_n, s.max_n), (4, 32, 512, 1024));
        assert_eq!(s.lengths(), [512, 1024]);
        assert!(bad.is_empty());
        let (s, bad) = WallSettings::from_query(&q("wbh=0&wd=65&wn=1000&wfrom=512"), true);
        assert_eq!(s, WallSettings::default_for(true));
        let keys: Vec<_> = bad.iter().map(|b| b.key).collect();
        assert_eq!(
            keys,
            ["wbh", "wd", "wn", "wfrom"],
            "each bad value named: {bad:?}"
        );
        assert_eq!(bad[2].default, "256", "the software adapter's default");
        assert_eq!(bad[3].value, "512", "past the longest (256 here)");
        for s in [
            WallSettings::default_for(false),
            WallSettings {
                min_n: 512,
                ..WallSettings::default_for(false)
            },
        ] {
            let mut back = Query::default();
            s.write(&mut back);
            assert_eq!(WallSettings::from_query(&back, true).0, s);
        }
    }

    #[test]
    fn lengths_double_from_64_to_the_longest() {
        let s = WallSettings {
            bh: 8,
            d: 64,
            min_n: 64,
            max_n: 512,
        };
        assert_eq!(s.lengths(), [64, 128, 256, 512]);
        // The scores of 8 problems at 4,096: 8 · 4096² · 4 B = 512 MiB.
        assert_eq!(s.scores_bytes(4096), 512 << 20);
        assert_eq!(s.io_bytes(64), 4 * 8 * 64 * 64 * 4);
        assert_eq!(powers_of_two(4, 64), [4, 8, 16, 32, 64]);
        assert_eq!(s.flops(64), 2.0 * 8.0 * 4096.0 * 64.0);
    }

    #[test]
    fn a_run_fills_its_rows_and_names_the_wall() {
        let s = WallSettings {
            bh: 8,
            d: 64,
            min_n: 64,
            max_n: 256,
        };
        let ran = |ms| Cell::Ran {
            ms,
            spread: 0.1,
            verified: true,
        };
        let mut w = Wall::new(s).reduce(WallAction::Start(s));
        assert!(w.running);
        assert_eq!(w.rows.len(), 3);
        for (n, naive, fused) in [(64, 2.0, 1.0), (128, 8.0, 2.0)] {
            w = w.reduce(WallAction::Measured {
                n,
                path: Path::Naive,
                cell: ran(naive),
            });
            w = w.reduce(WallAction::Measured {
                n,
                path: Path::Fused,
                cell: ran(fused),
            });
        }
        w = w.reduce(WallAction::Measured {
            n: 256,
            path: Path::Naive,
            cell: Cell::TooLarge {
                needed: 2 << 20,
                limit: 1 << 20,
            },
        });
        assert_eq!(w.wall_at(), Some(256));
        assert_eq!(w.longest_speedup(), Some((128, 4.0)));
        assert!(!w.any_wrong());
        let w = w.reduce(WallAction::Cancelled);
        assert!(!w.running && w.cancelled);
        assert_eq!(w.rows[2].fused, Cell::Waiting, "not reached");
        // A disagreeing output never counts as a speedup.
        let wrong = w.reduce(WallAction::Measured {
            n: 128,
            path: Path::Fused,
            cell: Cell::Ran {
                ms: 1.0,
                spread: 0.0,
                verified: false,
            },
        });
        assert!(wrong.any_wrong());
        assert_eq!(wrong.longest_speedup(), Some((64, 2.0)));
        // A new run starts from nothing.
        let again = wrong.reduce(WallAction::Start(s));
        assert!(again.rows.iter().all(|r| r.naive == Cell::Waiting));
        assert!(!again.cancelled);
        // New settings clear the results of the old; the same settings keep them.
        assert_eq!(wrong.reduce(WallAction::Settings(s)), wrong);
        let other = WallSettings { bh: 64, ..s };
        let cleared = wrong.reduce(WallAction::Settings(other));
        assert!(cleared.rows.is_empty() && cleared.settings == other);
        // Without a GPU: every length's memory, nothing running.
        let p = Wall::preview(other);
        assert_eq!(p.rows.len(), 3);
        assert!(!p.running && p.wall_at().is_none());
    }

    #[test]
    fn the_median_of_odd_and_even_runs() {
        assert_eq!(median_spread(&[3.0, 1.0, 2.0]), Some((2.0, 2.0)));
        assert_eq!(median_spread(&[4.0, 1.0, 2.0, 3.0]), Some((2.5, 3.0)));
        assert_eq!(median_spread(&[]), None);
    }
}
