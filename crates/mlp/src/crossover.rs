//! The GPU / tuned-CPU crossover experiment's pure side, shared by the train view's
//! experiment and `bench crossover`: the networks (2-w-w-2, ReLU, Adam, cross-entropy on the
//! spiral), the grids of widths × batch sizes, how a side's runs become one number (median and
//! spread), and where, for each width, the GPU starts to beat the tuned CPU.

use crate::data::{batch_order, Dataset, Feature};
use crate::net::{Activation, Hyper, LossKind, Net, Optimiser};

/// The training set every point of the grid trains on: `points` spiral samples (noise 0.1,
/// seed 1), features x and y, and their batch order.
pub struct Data {
    pub x: Vec<f32>,
    pub labels: Vec<u32>,
    pub order: Vec<u32>,
}

pub fn data(points: usize) -> Data {
    let pts = Dataset::Spiral.generate(points, 0.1, 1);
    Data {
        x: pts.features(&[Feature::X, Feature::Y]),
        order: batch_order(pts.len(), 1),
        labels: pts.label,
    }
}

/// The page's grid: small enough for a software adapter (the 512-wide, 4096-sample step is
/// 6.5 GFLOP).
pub const PAGE_WIDTHS: [usize; 4] = [16, 64, 256, 512];
pub const PAGE_BATCHES: [usize; 5] = [1, 16, 256, 1024, 4096];
/// Whole runs per side and point; the figure is their median.
pub const RUNS: usize = 3;
/// The largest batch a page link may ask for: the size of the page's training set.
pub const PAGE_MAX_BATCH: usize = 4096;

/// The widths × batch sizes one run of the page measures: [`PAGE_WIDTHS`] × [`PAGE_BATCHES`]
/// unless a link asks for fewer (`xwidths=16,256&xbatches=1,256`, for a quick look or a test).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    pub widths: Vec<usize>,
    pub batches: Vec<usize>,
}

impl Default for Grid {
    fn default() -> Self {
        Grid {
            widths: PAGE_WIDTHS.to_vec(),
            batches: PAGE_BATCHES.to_vec(),
        }
    }
}

impl Grid {
    pub fn len(&self) -> usize {
        self.widths.len() * self.batches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every point in the order the page measures them: width by width, batches in order.
    pub fn points(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.widths
            .iter()
            .flat_map(|&w| self.batches.iter().map(move |&b| (w, b)))
    }

    /// The grid a link asks for: `xwidths` and `xbatches`, each a comma list of different whole
    /// numbers, smallest first — at most as many widths as [`PAGE_WIDTHS`], each from 1 to the
    /// largest of them, at most as many batch sizes as [`PAGE_BATCHES`], each from 1 to
    /// [`PAGE_MAX_BATCH`]. A list that is absent is the page's; a bad one is named and replaced
    /// by the page's.
    pub fn from_params(widths: Option<&str>, batches: Option<&str>) -> (Grid, Vec<GridError>) {
        let mut grid = Grid::default();
        let mut errors = Vec::new();
        if let Some(s) = widths {
            match list(s, PAGE_WIDTHS.len(), PAGE_WIDTHS[PAGE_WIDTHS.len() - 1]) {
                Some(v) => grid.widths = v,
                None => errors.push(GridError::Widths(s.to_string())),
            }
        }
        if let Some(s) = batches {
            match list(s, PAGE_BATCHES.len(), PAGE_MAX_BATCH) {
                Some(v) => grid.batches = v,
                None => errors.push(GridError::Batches(s.to_string())),
            }
        }
        (grid, errors)
    }
}

/// 1 to `max_len` different whole numbers from 1 to `max`, smallest first.
fn list(s: &str, max_len: usize, max: usize) -> Option<Vec<usize>> {
    let v = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=max).contains(n))
        })
        .collect::<Option<Vec<usize>>>()?;
    (!v.is_empty() && v.len() <= max_len && v.windows(2).all(|w| w[0] < w[1])).then_some(v)
}

/// A grid list in a link that [`Grid::from_params`] refused, with the value as typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GridError {
    Widths(String),
    Batches(String),
}

impl GridError {
    /// Translation key of the message.
    pub fn key(&self) -> &'static str {
        match self {
            GridError::Widths(_) => "train.x.err.widths",
            GridError::Batches(_) => "train.x.err.batches",
        }
    }

    /// Placeholder values of the message: the value, how many numbers at most, the largest.
    pub fn args(&self) -> Vec<(&'static str, String)> {
        match self {
            GridError::Widths(s) => vec![
                ("value", s.clone()),
                ("count", PAGE_WIDTHS.len().to_string()),
                ("max", PAGE_WIDTHS[PAGE_WIDTHS.len() - 1].to_string()),
            ],
            GridError::Batches(s) => vec![
                ("value", s.clone()),
                ("count", PAGE_BATCHES.len().to_string()),
                ("max", PAGE_MAX_BATCH.to_string()),
            ],
        }
    }
}

/// The network of one grid row: two inputs, two hidden layers of `width`, two classes.
pub fn net(width: usize) -> Net {
    Net {
        sizes: vec![2, width, width, 2],
        activation: Activation::Relu,
        loss: LossKind::CrossEntropy,
    }
}

pub fn hyper() -> Hyper {
    Hyper {
        lr: 0.01,
        optimiser: Optimiser::Adam,
        l1: 0.0,
        l2: 0.0,
    }
}

/// Median and spread ((max − min) / median) of a side's runs; `None` without a finite,
/// positive run.
pub fn median_spread(runs: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = runs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some((median, (v[n - 1] - v[0]) / median))
}

/// Steps for one timed run: enough to last `min_ms` at the pilot's `ms_per_step`, at least 1,
/// at most `cap`.
pub fn steps_for(min_ms: f64, ms_per_step: f64, cap: u32) -> u32 {
    if !(ms_per_step.is_finite() && ms_per_step > 0.0) {
        return cap.max(1);
    }
    ((min_ms / ms_per_step).ceil() as u32).clamp(1, cap.max(1))
}

/// One measured point: steps per second (medians) of the GPU (when it ran) and the tuned CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub width: usize,
    pub batch: usize,
    pub gpu: Option<f64>,
    pub cpu: f64,
}

/// Where one width's crossover lies, read from its points in batch order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossover {
    /// No batch size of this width has both numbers.
    NoGpu,
    /// The tuned CPU won at every measured batch size.
    CpuEverywhere,
    /// The GPU won at every measured batch size.
    GpuEverywhere,
    /// The CPU won below `from`, the GPU from `from` on.
    GpuFrom { from: usize },
    /// The lead changed more than once (noise near the crossover).
    Mixed,
}

impl Crossover {
    pub fn code(self) -> &'static str {
        match self {
            Crossover::NoGpu => "no-gpu",
            Crossover::CpuEverywhere => "cpu-all",
            Crossover::GpuEverywhere => "gpu-all",
            Crossover::GpuFrom { .. } => "gpu-from",
            Crossover::Mixed => "mixed",
        }
    }
}

/// The crossover of `width` among `points`.
pub fn crossover(points: &[Point], width: usize) -> Crossover {
    let mut wins: Vec<(usize, bool)> = points
        .iter()
        .filter(|p| p.width == width)
        .filter_map(|p| p.gpu.map(|g| (p.batch, g > p.cpu)))
        .collect();
    wins.sort_by_key(|w| w.0);
    let Some(first) = wins.first() else {
        return Crossover::NoGpu;
    };
    let changes = wins.windows(2).filter(|w| w[0].1 != w[1].1).count();
    match (changes, first.1) {
        (0, false) => Crossover::CpuEverywhere,
        (0, true) => Crossover::GpuEverywhere,
        (1, false) => Crossover::GpuFrom {
            from: wins.iter().find(|w| w.1).map_or(first.0, |w| w.0),
        },
        _ => Crossover::Mixed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(width: usize, batch: usize, gpu: Option<f64>, cpu: f64) -> Point {
        Point {
            width,
            batch,
            gpu,
            cpu,
        }
    }

    #[test]
    fn a_link_asks_for_a_smaller_grid_and_bad_lists_are_named() {
        let (g, e) = Grid::from_params(None, None);
        assert_eq!((g.len(), e), (20, vec![]));
        let (g, e) = Grid::from_params(Some("16,256"), Some(" 1, 256"));
        assert_eq!(e, vec![]);
        assert_eq!(
            g.points().collect::<Vec<_>>(),
            [(16, 1), (16, 256), (256, 1), (256, 256)]
        );
        for bad in [
            "",
            "abc",
            "0",
            "513",
            "64,16",
            "16,16",
            "1,2,3,4,5",
            "16,,64",
            "-1",
        ] {
            let (g, e) = Grid::from_params(Some(bad), None);
            assert_eq!(g, Grid::default(), "{bad:?}");
            assert_eq!(e, vec![GridError::Widths(bad.to_string())], "{bad:?}");
        }
        let (g, e) = Grid::from_params(Some("16"), Some("4097"));
        assert_eq!((g.widths, g.batches), (vec![16], PAGE_BATCHES.to_vec()));
        assert_eq!(e, vec![GridError::Batches("4097".into())]);
        assert_eq!(e[0].key(), "train.x.err.batches");
        assert_eq!(e[0].args()[2], ("max", "4096".to_string()));
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(median_spread(&[3.0, 1.0, 2.0]), Some((2.0, 1.0)));
        assert_eq!(median_spread(&[4.0, 2.0]), Some((3.0, 2.0 / 3.0)));
        assert_eq!(median_spread(&[f64::NAN, 0.0]), None);
        assert_eq!(median_spread(&[]), None);
    }

    #[test]
    fn steps_fill_the_run() {
        assert_eq!(steps_for(50.0, 2.0, 1000), 25);
        assert_eq!(steps_for(50.0, 400.0, 1000), 1);
        assert_eq!(steps_for(50.0, 0.001, 1000), 1000);
        assert_eq!(steps_for(50.0, 0.0, 10), 10);
    }

    #[test]
    fn the_crossover_follows_the_numbers() {
        let pts = [
            p(16, 1, Some(100.0), 5000.0),
            p(16, 4096, Some(90.0), 50.0),
            p(256, 4096, Some(90.0), 5.0),
            p(256, 1, Some(100.0), 900.0),
            p(256, 256, Some(95.0), 30.0),
            p(64, 1, Some(1.0), 9.0),
            p(64, 16, Some(1.0), 8.0),
            p(512, 1, None, 9.0),
            p(1024, 1, Some(10.0), 1.0),
            p(1024, 2, Some(1.0), 2.0),
            p(1024, 4, Some(10.0), 1.0),
        ];
        assert_eq!(crossover(&pts, 16), Crossover::GpuFrom { from: 4096 });
        // Points arrive in any order; the batch order decides.
        assert_eq!(crossover(&pts, 256), Crossover::GpuFrom { from: 256 });
        assert_eq!(crossover(&pts, 64), Crossover::CpuEverywhere);
        assert_eq!(crossover(&pts, 512), Crossover::NoGpu);
        assert_eq!(crossover(&pts, 1024), Crossover::Mixed);
        assert_eq!(
            crossover(&[p(8, 1, Some(2.0), 1.0)], 8),
            Crossover::GpuEverywhere
        );
    }
}
