//! Every setting of the CNN page, read from and written to the URL
//! (`ch=6,16&k=5,5&opt=adam&lr=0.001&mom=0.9&batch=64&seed=1`).
//!
//! Parsing never fails: a bad value is replaced by its default and reported as a
//! [`SpecError`] that names the setting and the value as typed, so the page can say exactly
//! what was wrong in the visitor's language ([`SpecError::key`], [`SpecError::args`]). Every
//! limit is a named constant here; the page adds the device's own limits on top.
//!
//! The architecture is `ch` (output channels of each conv block; its length is the number of
//! blocks) and `k` (each block's square kernel side). A block is conv (no padding, stride 1)
//! → bias → ReLU → 2×2 max-pool (stride 2, an odd last row and column dropped); a dense layer
//! to the ten classes and softmax cross-entropy follow. A block whose kernel does not leave at
//! least a 2×2 map for its pool is refused with [`SpecError::KernelDoesNotFit`].

use crate::net::{Block, Hyper, Net, Optimiser, ShapeError};

/// The digits' side (the asset's 28×28 images, and the drawing canvas's).
pub const INPUT_SIDE: usize = 28;
pub const CLASSES: usize = 10;
pub const MIN_BLOCKS: usize = 1;
pub const MAX_BLOCKS: usize = 3;
pub const MAX_CHANNELS: usize = 64;
/// Kernel sides are odd (a centre pixel), from 1 to this.
pub const MAX_KERNEL: usize = 7;
pub use crate::net::POOL;
/// Learning rates are in (0, MAX_LR].
pub const MAX_LR: f32 = 1.0;
/// Momentum (SGD only) is in [0, MAX_MOMENTUM]; 1 would never forget a gradient.
pub const MAX_MOMENTUM: f32 = 0.99;
pub const MIN_BATCH: usize = 1;
/// The URL keys of the settings, in [`Spec::to_params`]'s order.
pub const PARAMS: &[&str] = &["ch", "k", "opt", "lr", "mom", "batch", "seed"];
/// Those whose value is a single whole number.
pub const WHOLE: &[&str] = &["batch", "seed"];
pub const MAX_BATCH: usize = 256;

/// The settings of one training setup.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Output channels of each conv block, first block first.
    pub channels: Vec<usize>,
    /// Kernel side of each conv block (same length as `channels`).
    pub kernels: Vec<usize>,
    pub optimiser: Optimiser,
    pub lr: f32,
    /// SGD's momentum μ (Adam has its own β₁ and ignores it).
    pub momentum: f32,
    pub batch: usize,
    /// Seeds the split, the initial weights and the batch order.
    pub seed: u64,
}

impl Default for Spec {
    /// LeNet-style: conv 5×5 with 6 channels, pool, conv 5×5 with 16 channels, pool, dense 10.
    fn default() -> Self {
        Self {
            channels: vec![6, 16],
            kernels: vec![5, 5],
            optimiser: Optimiser::Adam,
            lr: 0.001,
            momentum: 0.9,
            batch: 64,
            seed: 1,
        }
    }
}

/// A bad setting, named, with the value as typed.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecError {
    /// `ch` has fewer than [`MIN_BLOCKS`] or more than [`MAX_BLOCKS`] entries.
    Blocks(String),
    /// A channel count that is not a whole number from 1 to [`MAX_CHANNELS`].
    Channels(String),
    /// A kernel side that is not an odd whole number from 1 to [`MAX_KERNEL`].
    Kernel(String),
    /// `k` has `kernels` entries for `blocks` blocks.
    KernelCount {
        kernels: usize,
        blocks: usize,
    },
    /// Block `block` (1-based) gets a `map`×`map` feature map, too small for a `kernel`×`kernel`
    /// kernel followed by a 2×2 pool: the largest that fits is `map − 1` (0 if none does).
    KernelDoesNotFit {
        block: usize,
        kernel: usize,
        map: usize,
    },
    UnknownOptimiser(String),
    /// Not a number in (0, [`MAX_LR`]].
    LearningRate(String),
    /// Not a number in [0, [`MAX_MOMENTUM`]].
    Momentum(String),
    /// Not a whole number from [`MIN_BATCH`] to [`MAX_BATCH`].
    Batch(String),
    /// Not a whole number from 0 to 2⁶⁴ − 1.
    Seed(String),
}

impl SpecError {
    /// Translation key of the message.
    pub fn key(&self) -> &'static str {
        match self {
            SpecError::Blocks(_) => "cnn.err.blocks",
            SpecError::Channels(_) => "cnn.err.channels",
            SpecError::Kernel(_) => "cnn.err.kernel",
            SpecError::KernelCount { .. } => "cnn.err.kernel_count",
            SpecError::KernelDoesNotFit { .. } => "cnn.err.kernel_fit",
            SpecError::UnknownOptimiser(_) => "cnn.err.opt",
            SpecError::LearningRate(_) => "cnn.err.lr",
            SpecError::Momentum(_) => "cnn.err.momentum",
            SpecError::Batch(_) => "cnn.err.batch",
            SpecError::Seed(_) => "cnn.err.seed",
        }
    }

    /// Placeholder values of the message: always `value`, plus the limits it states.
    pub fn args(&self) -> Vec<(&'static str, String)> {
        let v = |s: &str| ("value", s.to_string());
        let n = |k: &'static str, x: usize| (k, x.to_string());
        match self {
            SpecError::Blocks(s) => vec![v(s), n("min", MIN_BLOCKS), n("max", MAX_BLOCKS)],
            SpecError::Channels(s) => vec![v(s), n("max", MAX_CHANNELS)],
            SpecError::Kernel(s) => vec![v(s), n("max", MAX_KERNEL)],
            SpecError::KernelCount { kernels, blocks } => {
                vec![n("value", *kernels), n("blocks", *blocks)]
            }
            SpecError::KernelDoesNotFit { block, kernel, map } => vec![
                n("value", *kernel),
                n("block", *block),
                n("map", *map),
                n("max", map.saturating_sub(1)),
            ],
            SpecError::UnknownOptimiser(s) | SpecError::Seed(s) => vec![v(s)],
            SpecError::LearningRate(s) => vec![v(s), ("max", MAX_LR.to_string())],
            SpecError::Momentum(s) => vec![v(s), ("max", MAX_MOMENTUM.to_string())],
            SpecError::Batch(s) => vec![v(s), n("min", MIN_BATCH), n("max", MAX_BATCH)],
        }
    }
}

/// A comma-separated list of whole numbers, each checked by `ok`; the first bad entry is the
/// error.
fn parse_list(
    s: &str,
    ok: impl Fn(usize) -> bool,
    err: impl Fn(String) -> SpecError,
) -> Result<Vec<usize>, SpecError> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<usize>()
                .ok()
                .filter(|&n| ok(n))
                .ok_or_else(|| err(p.to_string()))
        })
        .collect()
}

/// The side of the map each block's conv reads, first block first, and the side after the
/// last pool; or the first block whose kernel does not fit.
pub fn map_sides(kernels: &[usize]) -> Result<Vec<usize>, SpecError> {
    let mut side = INPUT_SIDE;
    let mut sides = vec![side];
    for (i, &k) in kernels.iter().enumerate() {
        // The conv leaves side − k + 1; the pool needs at least 2 of them.
        if k + 1 > side {
            return Err(SpecError::KernelDoesNotFit {
                block: i + 1,
                kernel: k,
                map: side,
            });
        }
        side = (side - k + 1) / POOL;
        sides.push(side);
    }
    Ok(sides)
}

impl Spec {
    /// Reads the settings from URL parameters (`get("lr")` → `Some("0.001")`). Missing ones
    /// take their defaults; bad ones too, each with an error. A bad architecture (`ch`, `k`)
    /// falls back to the default one as a whole, so the result always builds a network.
    pub fn from_params<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (Spec, Vec<SpecError>) {
        let mut s = Spec::default();
        let mut errors = Vec::new();

        let channels = match get("ch") {
            None => Ok(s.channels.clone()),
            Some(v) => parse_list(v, |n| (1..=MAX_CHANNELS).contains(&n), SpecError::Channels)
                .and_then(|c| {
                    if (MIN_BLOCKS..=MAX_BLOCKS).contains(&c.len()) {
                        Ok(c)
                    } else {
                        Err(SpecError::Blocks(v.to_string()))
                    }
                }),
        };
        let kernels = match get("k") {
            None => Ok(s.kernels.clone()),
            Some(v) => parse_list(v, |n| n % 2 == 1 && n <= MAX_KERNEL, SpecError::Kernel),
        };
        let arch = match (channels, kernels) {
            (Err(e), _) | (_, Err(e)) => Err(e),
            (Ok(c), Ok(k)) if c.len() != k.len() => Err(SpecError::KernelCount {
                kernels: k.len(),
                blocks: c.len(),
            }),
            (Ok(c), Ok(k)) => map_sides(&k).map(|_| (c, k)),
        };
        match arch {
            Ok((c, k)) => (s.channels, s.kernels) = (c, k),
            Err(e) => errors.push(e),
        }

        if let Some(v) = get("opt") {
            match Optimiser::from_code(v) {
                Some(o) => s.optimiser = o,
                None => errors.push(SpecError::UnknownOptimiser(v.to_string())),
            }
        }
        if let Some(v) = get("lr") {
            match parse_lr(v) {
                Ok(lr) => s.lr = lr,
                Err(e) => errors.push(e),
            }
        }
        if let Some(v) = get("mom") {
            match v.trim().parse::<f32>() {
                Ok(m) if (0.0..=MAX_MOMENTUM).contains(&m) => s.momentum = m,
                _ => errors.push(SpecError::Momentum(v.to_string())),
            }
        }
        if let Some(v) = get("batch") {
            match parse_batch(v) {
                Ok(b) => s.batch = b,
                Err(e) => errors.push(e),
            }
        }
        if let Some(v) = get("seed") {
            match v.trim().parse::<u64>() {
                Ok(n) => s.seed = n,
                Err(_) => errors.push(SpecError::Seed(v.to_string())),
            }
        }
        (s, errors)
    }

    /// The URL parameters of these settings (every one, so a link reproduces the run).
    pub fn to_params(&self) -> Vec<(&'static str, String)> {
        let join = |v: &[usize]| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        vec![
            ("ch", join(&self.channels)),
            ("k", join(&self.kernels)),
            ("opt", self.optimiser.code().to_string()),
            ("lr", format!("{}", self.lr)),
            ("mom", format!("{}", self.momentum)),
            ("batch", self.batch.to_string()),
            ("seed", self.seed.to_string()),
        ]
    }

    /// The network these settings describe. `from_params` only returns specs that fit; a
    /// hand-built one that does not is the error.
    pub fn net(&self) -> Result<Net, SpecError> {
        if self.channels.len() != self.kernels.len() {
            return Err(SpecError::KernelCount {
                kernels: self.kernels.len(),
                blocks: self.channels.len(),
            });
        }
        map_sides(&self.kernels)?;
        let mut c_in = 1;
        let blocks = self
            .channels
            .iter()
            .zip(&self.kernels)
            .map(|(&c_out, &k)| {
                let b = Block {
                    c_in,
                    c_out,
                    kernel: k,
                };
                c_in = c_out;
                b
            })
            .collect();
        Net::new(INPUT_SIDE, blocks, CLASSES).map_err(|e| match e {
            ShapeError::KernelDoesNotFit { block, kernel, map } => {
                SpecError::KernelDoesNotFit { block, kernel, map }
            }
            // No block, or a zero channel count or kernel (the chain is built right above).
            ShapeError::ZeroSize | ShapeError::Channels { .. } => SpecError::Blocks(
                self.channels
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        })
    }

    pub fn hyper(&self) -> Hyper {
        Hyper {
            lr: self.lr,
            optimiser: self.optimiser,
            momentum: self.momentum,
        }
    }
}

/// A learning rate as typed: a number in (0, [`MAX_LR`]].
pub fn parse_lr(v: &str) -> Result<f32, SpecError> {
    match v.trim().parse::<f32>() {
        Ok(lr) if lr > 0.0 && lr <= MAX_LR => Ok(lr),
        _ => Err(SpecError::LearningRate(v.to_string())),
    }
}

/// A batch size as typed: a whole number from [`MIN_BATCH`] to [`MAX_BATCH`].
pub fn parse_batch(v: &str) -> Result<usize, SpecError> {
    match v.trim().parse::<usize>() {
        Ok(b) if (MIN_BATCH..=MAX_BATCH).contains(&b) => Ok(b),
        _ => Err(SpecError::Batch(v.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(q: &str) -> (Spec, Vec<SpecError>) {
        let map: HashMap<&str, &str> = q.split('&').filter_map(|p| p.split_once('=')).collect();
        Spec::from_params(|k| map.get(k).copied())
    }

    #[test]
    fn evaluation_uses_the_largest_batch() {
        assert_eq!(crate::net::EVAL_CHUNK, MAX_BATCH);
    }

    #[test]
    fn params_names_every_key_a_link_writes() {
        let keys: Vec<&str> = Spec::default().to_params().iter().map(|p| p.0).collect();
        assert_eq!(keys, PARAMS);
    }

    #[test]
    fn default_is_lenet() {
        let (s, e) = parse("");
        assert!(e.is_empty());
        assert_eq!(s, Spec::default());
        // 28 → conv 5 → 24 → pool → 12 → conv 5 → 8 → pool → 4.
        assert_eq!(map_sides(&s.kernels), Ok(vec![28, 12, 4]));
        let net = s.net().unwrap();
        assert_eq!(net.dense_inputs(), 16 * 4 * 4);
    }

    #[test]
    fn round_trip() {
        for q in [
            "",
            "ch=8,16,32&k=3,3,3&opt=sgd&lr=0.05&mom=0.5&batch=256&seed=18446744073709551615",
            "ch=1&k=7&opt=adam&lr=1&mom=0&batch=1&seed=0",
            "ch=64,64&k=1,7&lr=0.000123",
            // The tightest fit: a 1×1 kernel on the third block's 2×2 map.
            "ch=6,16,32&k=7,7,1",
        ] {
            let (s, e) = parse(q);
            assert!(e.is_empty(), "{q}: {e:?}");
            let params = s.to_params();
            let map: HashMap<&str, &str> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (t, e) = Spec::from_params(|k| map.get(k).copied());
            assert!(e.is_empty(), "{q}: {e:?}");
            assert_eq!(s, t, "{q}");
        }
    }

    #[test]
    fn bad_settings_are_named_and_replaced_by_defaults() {
        let fit = |block, kernel, map| SpecError::KernelDoesNotFit { block, kernel, map };
        let cases: &[(&str, SpecError)] = &[
            ("ch=&k=", SpecError::Blocks("".into())),
            ("ch=4,4,4,4&k=1,1,1,1", SpecError::Blocks("4,4,4,4".into())),
            ("ch=6,0&k=5,5", SpecError::Channels("0".into())),
            ("ch=6,65&k=5,5", SpecError::Channels("65".into())),
            ("ch=6,x&k=5,5", SpecError::Channels("x".into())),
            ("k=5,4", SpecError::Kernel("4".into())),
            ("k=5,9", SpecError::Kernel("9".into())),
            ("k=5,-1", SpecError::Kernel("-1".into())),
            (
                "k=5",
                SpecError::KernelCount {
                    kernels: 1,
                    blocks: 2,
                },
            ),
            (
                "ch=6,16,32",
                SpecError::KernelCount {
                    kernels: 2,
                    blocks: 3,
                },
            ),
            // 28 → 5 → 12 → 5 → 4: a third 5×5 kernel meets a 4×4 map.
            ("ch=6,16,32&k=5,5,5", fit(3, 5, 4)),
            // 28 → 7 → 11 → 7 → 2: a 3×3 kernel does not fit the third block's 2×2 map.
            ("ch=6,16,32&k=7,7,3", fit(3, 3, 2)),
            ("opt=lion", SpecError::UnknownOptimiser("lion".into())),
            (
                "opt=momentum",
                SpecError::UnknownOptimiser("momentum".into()),
            ),
            ("lr=0", SpecError::LearningRate("0".into())),
            ("lr=-0.1", SpecError::LearningRate("-0.1".into())),
            ("lr=1.5", SpecError::LearningRate("1.5".into())),
            ("lr=NaN", SpecError::LearningRate("NaN".into())),
            ("lr=inf", SpecError::LearningRate("inf".into())),
            ("lr=abc", SpecError::LearningRate("abc".into())),
            ("mom=1", SpecError::Momentum("1".into())),
            ("mom=-0.1", SpecError::Momentum("-0.1".into())),
            ("mom=NaN", SpecError::Momentum("NaN".into())),
            ("batch=0", SpecError::Batch("0".into())),
            ("batch=257", SpecError::Batch("257".into())),
            ("batch=2.5", SpecError::Batch("2.5".into())),
            ("seed=-1", SpecError::Seed("-1".into())),
            ("seed=x", SpecError::Seed("x".into())),
        ];
        for (q, want) in cases {
            let (s, e) = parse(q);
            assert_eq!(e, vec![want.clone()], "{q}");
            assert!(e[0].key().starts_with("cnn.err."));
            assert!(e[0].args().iter().any(|(k, _)| *k == "value"));
            // Whatever was wrong, the settings still build a network.
            assert!(s.net().is_ok(), "{q}");
            assert!((MIN_BATCH..=MAX_BATCH).contains(&s.batch));
            assert!(s.lr > 0.0 && s.lr <= MAX_LR);
        }
        // An architecture error restores the default architecture as a whole.
        let (s, _) = parse("ch=6,16,32&k=5,5,5");
        assert_eq!((s.channels, s.kernels), (vec![6, 16], vec![5, 5]));
        // The fit error says how much room was left.
        let args = fit(3, 5, 4).args();
        assert!(args.contains(&("max", "3".to_string())));
        assert!(args.contains(&("block", "3".to_string())));
        // Several at once are all reported.
        assert_eq!(parse("opt=x&lr=nan&batch=0&ch=0").1.len(), 4);
    }
}
