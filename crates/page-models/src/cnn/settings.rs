//! The CNN page's settings: read from the URL by `cnn::spec` (every value of the network, the
//! optimiser and the run; a bad one is a named [`SpecError`] and its default is used), the URL
//! pairs each control writes, which changes need a new network and which apply live (the
//! learning rate), and the check of a setting against the device's limits, given as plain
//! numbers, so that a network too large for this adapter is a named error before any GPU call.
//!
//! (`::cnn` is the network crate; `crate::cnn` is this module.)
//!
//! The page adds no settings of its own: everything that shapes a run is `cnn::Spec`'s, so a
//! link reproduces it and the embed's `setParams` goes through the same parser
//! ([`param_errors`]).

use ::cnn::net::{Net, Optimiser, EVAL_CHUNK};
use ::cnn::spec::{parse_batch, parse_lr, MAX_BATCH, MAX_BLOCKS, MAX_CHANNELS, MIN_BATCH};
use ::cnn::{Spec, SpecError};

/// The URL keys of the page's settings (all of `cnn::Spec::to_params`), and those whose value
/// is a whole number.
pub use ::cnn::spec::{PARAMS, WHOLE};

/// The settings of one render: the spec the page runs and the errors of the values it could
/// not use.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub spec: Spec,
    pub errors: Vec<SpecError>,
}

impl Settings {
    /// From the URL's query (`get` answers a key); without a query, the defaults.
    pub fn from_query<'a>(get: Option<impl Fn(&str) -> Option<&'a str>>) -> Self {
        let (spec, errors) = match get {
            Some(get) => Spec::from_params(get),
            None => (Spec::default(), Vec::new()),
        };
        Self { spec, errors }
    }
}

/// The page's parser as translation keys and placeholders: the hook an embed widget's
/// `validate` calls, so `setParams` is refused exactly as the address would be.
pub fn param_errors<'a>(
    get: impl Fn(&str) -> Option<&'a str>,
) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    Spec::from_params(get)
        .1
        .iter()
        .map(|e| (e.key(), e.args()))
        .collect()
}

/// What a change of settings asks of the running page.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    None,
    /// Only the learning rate changed: both trainers take it at their next step.
    Live {
        lr: f32,
    },
    /// A new network (and GPU buffers) is needed; the `cnn.setting.*` keys of what changed.
    Restart(Vec<&'static str>),
}

/// The settings (as `cnn.setting.*` keys) whose change from `old` to `new` needs a new
/// network: all but the learning rate, which the optimiser reads afresh at every step.
pub fn structural_changes(old: &Spec, new: &Spec) -> Vec<&'static str> {
    let checks: [(&'static str, bool); 6] = [
        ("cnn.setting.channels", old.channels != new.channels),
        ("cnn.setting.kernels", old.kernels != new.kernels),
        ("cnn.setting.optimiser", old.optimiser != new.optimiser),
        // Momentum is a uniform in the session's recorded step, so it is not changed live.
        ("cnn.setting.momentum", old.momentum != new.momentum),
        ("cnn.setting.batch", old.batch != new.batch),
        ("cnn.setting.seed", old.seed != new.seed),
    ];
    checks.into_iter().filter(|c| c.1).map(|c| c.0).collect()
}

/// What going from `old` to `new` asks for: a restart wins over a live change (the new
/// network starts with the new rate anyway).
pub fn change(old: &Spec, new: &Spec) -> Change {
    let restart = structural_changes(old, new);
    if !restart.is_empty() {
        Change::Restart(restart)
    } else if old.lr != new.lr {
        Change::Live { lr: new.lr }
    } else {
        Change::None
    }
}

/// The `lr` pair of the typed text, or what is wrong with it (each valid keystroke applies).
pub fn lr_param(text: &str) -> Result<(&'static str, String), SpecError> {
    parse_lr(text).map(|_| ("lr", text.trim().to_string()))
}

/// The `batch` pair of the typed text, within `cnn::spec`'s range and at most `max` (the
/// largest batch this device can hold, [`largest_batch`]).
pub fn batch_param(text: &str, max: usize) -> Result<(&'static str, String), SpecError> {
    match parse_batch(text) {
        Ok(b) if b <= max => Ok(("batch", b.to_string())),
        _ => Err(SpecError::Batch(text.to_string())),
    }
}

/// The `mom` pair of the typed text, or what is wrong with it (`cnn::spec`'s own check).
pub fn momentum_param(text: &str) -> Result<(&'static str, String), SpecError> {
    let (_, errors) = Spec::from_params(|k| (k == "mom").then_some(text));
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(("mom", text.trim().to_string())),
    }
}

/// The `seed` pair of the typed text, or what is wrong with it.
pub fn seed_param(text: &str) -> Result<(&'static str, String), SpecError> {
    text.trim()
        .parse::<u64>()
        .map(|s| ("seed", s.to_string()))
        .map_err(|_| SpecError::Seed(text.to_string()))
}

/// The `opt` pair of the optimiser chosen in its select.
pub fn optimiser_param(o: Optimiser) -> (&'static str, String) {
    ("opt", o.code().to_string())
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The `ch` and `k` pairs with block `block` (0-based) given `channels` and kernel side
/// `kernel`; None when there is no such block. The result may not fit (a kernel too large
/// for its map): the parser names that, so the control need not know the geometry.
pub fn block_params(
    spec: &Spec,
    block: usize,
    channels: usize,
    kernel: usize,
) -> Option<[(&'static str, String); 2]> {
    let mut ch = spec.channels.clone();
    let mut k = spec.kernels.clone();
    *ch.get_mut(block)? = channels;
    *k.get_mut(block)? = kernel;
    Some([("ch", join(&ch)), ("k", join(&k))])
}

/// The `ch` and `k` pairs with one more block (twice the last one's channels, capped, and a
/// 3×3 kernel, the smallest odd side that still sees a neighbourhood); None at the maximum.
pub fn add_block(spec: &Spec) -> Option<[(&'static str, String); 2]> {
    if spec.channels.len() >= MAX_BLOCKS {
        return None;
    }
    let last = spec.channels.last().copied().unwrap_or(4);
    let mut ch = spec.channels.clone();
    let mut k = spec.kernels.clone();
    ch.push((last * 2).min(MAX_CHANNELS));
    k.push(3);
    Some([("ch", join(&ch)), ("k", join(&k))])
}

/// The `ch` and `k` pairs without the last block; None when only one is left.
pub fn remove_block(spec: &Spec) -> Option<[(&'static str, String); 2]> {
    let n = spec.channels.len().min(spec.kernels.len());
    if n <= 1 {
        return None;
    }
    Some([
        ("ch", join(&spec.channels[..n - 1])),
        ("k", join(&spec.kernels[..n - 1])),
    ])
}

/// The adapter's limits that bound a network, as plain numbers (the app reads them from
/// `wgpu::Limits`; page-models stays free of wgpu's types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// `maxStorageBufferBindingSize`, bytes.
    pub max_storage_buffer_binding_size: u64,
    /// `maxComputeWorkgroupsPerDimension`.
    pub max_workgroups_per_dimension: u32,
}

impl DeviceLimits {
    /// WebGPU's guaranteed minimums: what every adapter offers.
    pub const DEFAULT: DeviceLimits = DeviceLimits {
        max_storage_buffer_binding_size: 128 << 20,
        max_workgroups_per_dimension: 65_535,
    };
}

/// A setting this device cannot run, named before any GPU call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LimitError {
    /// Buffer `buffer` (a `cnn.buffer.*` key) would be `bytes` long, over the device's `max`.
    /// `batch`: the largest batch that fits (None: the network itself is too large, whatever
    /// the batch).
    Buffer {
        buffer: &'static str,
        bytes: u64,
        max: u64,
        batch: Option<usize>,
    },
    /// A dispatch over `buffer` would need `groups` workgroups in one dimension, over `max`.
    Workgroups {
        buffer: &'static str,
        groups: u64,
        max: u32,
        batch: Option<usize>,
    },
}

impl LimitError {
    /// Translation key of the message.
    pub fn key(&self) -> &'static str {
        match self {
            LimitError::Buffer { batch: Some(_), .. } => "cnn.limit.buffer_batch",
            LimitError::Buffer { batch: None, .. } => "cnn.limit.buffer_net",
            LimitError::Workgroups { batch: Some(_), .. } => "cnn.limit.groups_batch",
            LimitError::Workgroups { batch: None, .. } => "cnn.limit.groups_net",
        }
    }

    /// Placeholder values: the buffer's key, the amount, the limit, and the batch that fits.
    pub fn args(&self) -> Vec<(&'static str, String)> {
        let (buffer, value, max, batch) = match self {
            LimitError::Buffer {
                buffer,
                bytes,
                max,
                batch,
            } => (buffer, *bytes, *max, batch),
            LimitError::Workgroups {
                buffer,
                groups,
                max,
                batch,
            } => (buffer, *groups, u64::from(*max), batch),
        };
        let mut out = vec![
            ("buffer", buffer.to_string()),
            ("value", value.to_string()),
            ("max", max.to_string()),
        ];
        if let Some(b) = batch {
            out.push(("batch", b.to_string()));
        }
        out
    }
}

/// Threads per workgroup of every CNN kernel (`gpu_runtime::family::cnn::WORKGROUP`).
const WORKGROUP: u64 = gpu_runtime::family::cnn::WORKGROUP as u64;
/// The grid's first dimension (the family wraps wider grids into a second row).
const GROUPS_X: u64 = 65_535;

/// The storage buffers of a session training `net` at `batch`, as (`cnn.buffer.*` key,
/// elements of 4 bytes): `cnn::net`'s layouts, and the training engine's scratch for the
/// filter-gradient partials. The engine's arena pads each tensor to 256 bytes and keeps the
/// pools' winners, labels and losses inside the activation and delta buffers, so its buffers
/// are a little larger than these; the session's own check (`Arena::fits`) has the last word.
/// The ones left out are never larger than one listed: gradients and the optimiser's moments
/// have the parameters' layout, the deltas the activations'. The evaluation has its own
/// activations at [`EVAL_CHUNK`] images whatever the training batch.
fn buffers(net: &Net, batch: usize) -> [(&'static str, u64); 5] {
    let pl = net.param_layout();
    let train = net.act_layout(batch);
    let eval = net.act_layout(EVAL_CHUNK);
    // The filter gradient's per-sample partials: the engine's scratch, as its arena lays it
    // out (a network it cannot lay out fits nowhere).
    let partials =
        gpu_runtime::cnn_training::arena(net, batch).map_or(usize::MAX, |a| a.scratch_words);
    let sizes = [pl.len, train.len, train.argmax_len, partials, eval.len];
    std::array::from_fn(|i| (BUFFER_KEYS[i], sizes[i] as u64))
}

/// The `cnn.buffer.*` keys a [`LimitError`] names, in the order they are checked.
pub const BUFFER_KEYS: [&str; 5] = [
    "cnn.buffer.params",
    "cnn.buffer.acts",
    "cnn.buffer.argmax",
    "cnn.buffer.partials",
    "cnn.buffer.eval",
];

/// The first buffer of `net` at `batch` over `limits`, without the batch advice.
fn first_over(net: &Net, batch: usize, limits: &DeviceLimits) -> Option<LimitError> {
    for (buffer, elems) in buffers(net, batch) {
        let bytes = elems.saturating_mul(4);
        if bytes > limits.max_storage_buffer_binding_size {
            return Some(LimitError::Buffer {
                buffer,
                bytes,
                max: limits.max_storage_buffer_binding_size,
                batch: None,
            });
        }
        // No dispatch covers more threads than its largest buffer has elements, so the
        // buffer's own grid bounds every grid (a little stricter than needed, never looser).
        let groups = elems.div_ceil(WORKGROUP).max(1);
        let x = groups.min(GROUPS_X);
        let (widest, y) = (x, groups.div_ceil(x));
        let max = u64::from(limits.max_workgroups_per_dimension);
        if widest > max || y > max {
            return Some(LimitError::Workgroups {
                buffer,
                groups: widest.max(y),
                max: limits.max_workgroups_per_dimension,
                batch: None,
            });
        }
    }
    None
}

/// The largest batch (at most `cnn::spec::MAX_BATCH`) whose buffers fit `limits`; None when
/// not even a batch of one does.
pub fn largest_batch(net: &Net, limits: &DeviceLimits) -> Option<usize> {
    // Every size grows with the batch, so the fitting batches are 1..=b: search for b.
    let fits = |b: usize| first_over(net, b, limits).is_none();
    if !fits(MIN_BATCH) {
        return None;
    }
    let (mut lo, mut hi) = (MIN_BATCH, MAX_BATCH);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

/// Whether `spec` fits the device: the first buffer or grid over its limits, named with the
/// largest batch that would fit (None there: the network itself is too large).
pub fn check_limits(spec: &Spec, limits: &DeviceLimits) -> Result<(), LimitError> {
    let net = spec.net().map_err(|_| LimitError::Buffer {
        // A spec that builds no network never reaches here from the URL (`from_params`
        // returns buildable ones); name the parameters' buffer rather than panic.
        buffer: "cnn.buffer.params",
        bytes: 0,
        max: limits.max_storage_buffer_binding_size,
        batch: None,
    })?;
    let Some(err) = first_over(&net, spec.batch, limits) else {
        return Ok(());
    };
    let batch = largest_batch(&net, limits);
    Err(match err {
        LimitError::Buffer {
            buffer, bytes, max, ..
        } => LimitError::Buffer {
            buffer,
            bytes,
            max,
            batch,
        },
        LimitError::Workgroups {
            buffer,
            groups,
            max,
            ..
        } => LimitError::Workgroups {
            buffer,
            groups,
            max,
            batch,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(q: &str) -> Settings {
        let map: HashMap<&str, &str> = q.split('&').filter_map(|p| p.split_once('=')).collect();
        Settings::from_query(Some(move |k: &str| map.get(k).copied()))
    }

    #[test]
    fn the_url_is_read_by_the_network_s_own_parser() {
        let s = parse("lr=abc&batch=16");
        assert_eq!(s.spec.lr, Spec::default().lr);
        assert_eq!(s.spec.batch, 16);
        assert_eq!(s.errors, vec![SpecError::LearningRate("abc".into())]);
        let none: Option<fn(&str) -> Option<&'static str>> = None;
        assert_eq!(Settings::from_query(none), parse(""));
        // Every key the spec writes is a page parameter, and the whole ones are among them.
        let keys: Vec<&str> = Spec::default().to_params().iter().map(|p| p.0).collect();
        assert_eq!(keys, PARAMS);
        assert!(WHOLE.iter().all(|k| PARAMS.contains(k)));
    }

    #[test]
    fn the_embed_hook_names_each_bad_value() {
        let q = |k: &str| match k {
            "batch" => Some("0"),
            "opt" => Some("lion"),
            _ => None,
        };
        let errs = param_errors(q);
        assert_eq!(
            errs.iter().map(|e| e.0).collect::<Vec<_>>(),
            vec!["cnn.err.opt", "cnn.err.batch"]
        );
        assert!(errs[1].1.contains(&("value", "0".to_string())));
        assert!(param_errors(|_| None).is_empty());
    }

    #[test]
    fn only_the_learning_rate_applies_live() {
        let a = Spec::default();
        assert_eq!(change(&a, &a), Change::None);
        let lr = Spec {
            lr: 0.01,
            ..a.clone()
        };
        assert_eq!(change(&a, &lr), Change::Live { lr: 0.01 });
        assert!(structural_changes(&a, &lr).is_empty());
        let b = Spec {
            batch: 32,
            channels: vec![8, 16],
            lr: 0.01,
            ..a.clone()
        };
        assert_eq!(
            change(&a, &b),
            Change::Restart(vec!["cnn.setting.channels", "cnn.setting.batch"])
        );
        let m = Spec {
            momentum: 0.5,
            optimiser: Optimiser::Sgd,
            ..a.clone()
        };
        assert_eq!(
            structural_changes(&a, &m),
            vec!["cnn.setting.optimiser", "cnn.setting.momentum"]
        );
    }

    #[test]
    fn each_control_writes_its_pair_or_names_the_error() {
        assert_eq!(lr_param(" 0.01 "), Ok(("lr", "0.01".to_string())));
        assert_eq!(lr_param("0"), Err(SpecError::LearningRate("0".into())));
        assert_eq!(batch_param("64", 256), Ok(("batch", "64".to_string())));
        assert_eq!(batch_param("64", 32), Err(SpecError::Batch("64".into())));
        assert_eq!(batch_param("x", 256), Err(SpecError::Batch("x".into())));
        assert_eq!(momentum_param("0.5"), Ok(("mom", "0.5".to_string())));
        assert_eq!(momentum_param("1"), Err(SpecError::Momentum("1".into())));
        assert_eq!(seed_param("7"), Ok(("seed", "7".to_string())));
        assert_eq!(seed_param("-7"), Err(SpecError::Seed("-7".into())));
        assert_eq!(optimiser_param(Optimiser::Sgd), ("opt", "sgd".to_string()));
    }

    #[test]
    fn blocks_are_edited_added_and_removed_through_the_url() {
        let s = Spec::default();
        assert_eq!(
            block_params(&s, 1, 32, 3),
            Some([("ch", "6,32".to_string()), ("k", "5,3".to_string())])
        );
        assert_eq!(block_params(&s, 2, 32, 3), None);
        let added = add_block(&s).expect("room for a third block");
        assert_eq!(
            added,
            [("ch", "6,16,32".to_string()), ("k", "5,5,3".to_string())]
        );
        // 28 → 5 → 12 → 5 → 4 → 3: a 3×3 kernel fits the 4×4 map, so the parser takes it.
        let map: HashMap<&str, &str> = added.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert!(Spec::from_params(|k| map.get(k).copied()).1.is_empty());
        let three = Spec {
            channels: vec![6, 16, 64],
            kernels: vec![5, 5, 3],
            ..s.clone()
        };
        assert_eq!(add_block(&three), None);
        assert_eq!(
            remove_block(&three),
            Some([("ch", "6,16".to_string()), ("k", "5,5".to_string())])
        );
        let one = Spec {
            channels: vec![6],
            kernels: vec![5],
            ..s
        };
        assert_eq!(remove_block(&one), None);
    }

    #[test]
    fn a_network_too_large_for_the_device_is_named_with_the_batch_that_fits() {
        let s = Spec::default();
        assert_eq!(check_limits(&s, &DeviceLimits::DEFAULT), Ok(()));
        let net = s.net().expect("default builds");
        // Default net, batch B: the training activations are B·(784 + 6·24²·2 + 6·12²
        // + 16·8²·2 + 16·4² + 10 + 10) = B·10 884 floats; the evaluation's are 256 of them.
        let per_image = 784 + 6 * 576 * 2 + 6 * 144 + 16 * 64 * 2 + 16 * 16 + 20;
        assert_eq!(per_image, 10_884);
        assert_eq!(net.act_layout(1).len, per_image);
        // A limit that holds the evaluation's 256 images but not 257: every batch fits.
        let eval_bytes = 4 * 256 * per_image as u64;
        let roomy = DeviceLimits {
            max_storage_buffer_binding_size: eval_bytes,
            ..DeviceLimits::DEFAULT
        };
        assert_eq!(largest_batch(&net, &roomy), Some(256));
        // One byte less: the evaluation buffer no longer fits, whatever the batch.
        let tight = DeviceLimits {
            max_storage_buffer_binding_size: eval_bytes - 1,
            ..DeviceLimits::DEFAULT
        };
        assert_eq!(largest_batch(&net, &tight), None);
        let e = check_limits(&s, &tight).expect_err("over the limit");
        assert_eq!(
            e,
            LimitError::Buffer {
                buffer: "cnn.buffer.eval",
                bytes: eval_bytes,
                max: eval_bytes - 1,
                batch: None,
            }
        );
        assert_eq!(e.key(), "cnn.limit.buffer_net");
        // Workgroups: the evaluation's 2 786 304 floats need 43 536 groups of 64; a device
        // allowing 40 000 per dimension cannot run them.
        let groups = (256 * per_image as u64).div_ceil(64);
        assert_eq!(groups, 43_536);
        let narrow = DeviceLimits {
            max_workgroups_per_dimension: 40_000,
            ..DeviceLimits::DEFAULT
        };
        let e = check_limits(&s, &narrow).expect_err("too many groups");
        assert_eq!(e.key(), "cnn.limit.groups_net");
        assert!(e.args().contains(&("value", "43536".to_string())));
    }

    #[test]
    fn a_batch_too_large_is_named_with_the_largest_that_fits() {
        // Two blocks of 64 channels with 7×7 kernels: 28 → 22 → 11 → 5 → 2. The second
        // block's filter-gradient partials are B·64·64·49 = B·200 704 floats, more per image
        // than the activations (784 + 64·22²·2 + 64·11² + 64·5²·2 + 64·2² + 20 = 73 956), so
        // the batch decides whether the session fits.
        let s = Spec {
            channels: vec![64, 64],
            kernels: vec![7, 7],
            batch: 256,
            ..Spec::default()
        };
        let net = s.net().expect("builds");
        assert_eq!(net.act_layout(1).len, 73_956);
        // WebGPU's guaranteed 128 MiB: 134 217 728 / (4 · 200 704) = 167.2, so 167 fits.
        let e = check_limits(&s, &DeviceLimits::DEFAULT).expect_err("256 is too many");
        assert_eq!(
            e,
            LimitError::Buffer {
                buffer: "cnn.buffer.partials",
                bytes: 4 * 256 * 200_704,
                max: 128 << 20,
                batch: Some(167),
            }
        );
        assert_eq!(e.key(), "cnn.limit.buffer_batch");
        assert!(e.args().contains(&("batch", "167".to_string())));
        let ok = Spec {
            batch: 167,
            ..s.clone()
        };
        assert_eq!(check_limits(&ok, &DeviceLimits::DEFAULT), Ok(()));
        let over = Spec { batch: 168, ..s };
        assert!(check_limits(&over, &DeviceLimits::DEFAULT).is_err());
    }
}
