//! Training the tiny MLP on the GPU: its layer list ([`crate::training::layers::model`]) on the
//! training engine, which owns the arena's buffers and records one training step as ONE
//! command-buffer submit; metrics are read back without ever blocking a step.
//!
//! What stays here is the MLP's planner, the rewrite rule of the engine's train step: it picks
//! the kernels a step runs over the arena's places ([`step_plan_at`], [`Places::of`]). Data
//! flow of a step: the training set lives on the GPU (uploaded once, in batch order), and the
//! CPU writes nothing per step. For a small network (≤ 8 layers of ≤ 64 neurons, no gradient
//! accumulation: [`lanes_fit`]) the step is two dispatches: `mlp-step-lanes` (up to 64
//! workgroups, one per lane of the gradient's sum over the batch that has a sample, each
//! running its samples forward and backward with the activations in workgroup memory and
//! summing every parameter's gradient over them) and `mlp-step-reduce` (a workgroup per
//! parameter adds the 64 lane sums and applies the optimiser). Otherwise one compute pass runs,
//! in order: `mlp-forward-gather` (the first layer, reading its batch rows straight from the
//! training set at the step's offset and advancing the step state), `mlp-forward` per hidden
//! layer, `mlp-forward-loss` (the output layer and the loss, one thread per sample; `mlp-loss`
//! after the gathering layer when the network has no hidden layer), `mlp-backward-params` per
//! layer (a workgroup reduction per parameter) (last first) with `mlp-backward-input` between
//! layers, and one optimiser dispatch (`optim-sgd` or `optim-adam`) over all parameters (Adam
//! reads its bias corrections from a table, indexed by the step counter the GPU keeps). A wide
//! layer (fan-in and fan-out ≥ [`WIDE_MIN`]) runs its forward, backward and gradient products
//! as register-tiled matmuls instead (`mlp-forward-tiled`, `mlp-backward-input-tiled`,
//! `mlp-grad-tiled` + `mlp-grad-reduce`), which add the same terms in the same order. A kernel
//! a learner edits is pinned: no fused kernel stands in for it ([`FUSED_REPLACES`]). The step
//! state ({first row, steps done}) is double-buffered: a step reads one copy and writes the
//! other (the engine swaps them on odd micro-batches). [`TrainingSession::steps`] records
//! several steps in one command buffer. Nothing is read back per step.
//! [`TrainingSession::request_eval`] (every k steps, the caller's choice) runs the engine's
//! evaluation program (the forward, planned by [`forward_plan_at`], over the decision-boundary
//! grid, the training set and the test set) and maps one staging buffer asynchronously; while
//! that mapping is pending further requests are skipped, and [`TrainingSession::poll_eval`]
//! hands the result over once it has arrived, the parameters in `mlp::net`'s layout.
//!
//! [`step_plan_with`] and [`forward_plan_with`] plan over `mlp::net`'s packed layouts (the
//! Dawn runner's buffers, and what the planner's tests read). Every kernel comes from the
//! catalogue (or is a learner's edited copy standing in for one).

pub mod layers;

use std::rc::Rc;

use mlp::net::{LayerOffsets, Layout, BETA1, BETA2, EPSILON};
use mlp::{Hyper, Net, Optimiser};

use crate::catalogue::KernelSpec;
use crate::context::{Gpu, GpuError};
use crate::engine::{self, Engine, Range, Recorded, Rewrite, Setup, EVAL_FORWARD, TRAIN_STEP};
use crate::family::mlp::uniform::{BACK, DENSE, GATHER, GRAD, GRAD_TILED, HEAD, LOSS, STEP_NET};
use crate::family::mlp::{bindings, Slot};
use crate::family::optim;
pub use crate::plan::PlannedDispatch;
use crate::plan::{grid, Binding, Init, LoopFlag, ReadRange, ResidentBuffer, Uniform, LOOP_FLAG};
use crate::workload::BufferLimits;
use layers::{data_buffers, model, optimiser, Map};

/// Threads per workgroup of every MLP kernel but `mlp-step-lanes` ([`LANE_THREADS`]) (their
/// `@workgroup_size(64)`).
pub const WORKGROUP: u32 = 64;

/// How many roundings every gradient element's sum over a step's batch passes through, on
/// the GPU and in the CPU twin alike: both add the same terms in the same order
/// (`mlp::net::REDUCE`): lane t adds samples t, t + 64, … in turn (⌈batch / 64⌉ additions), the
/// 64 lane sums are halved pairwise (log₂ 64 = 6), and `accum` micro-batches are added in turn
/// (`accum − 1` more; the first lands on zero exactly). The wide layers' tiled kernels add the
/// same terms in the same order, so one length serves every path.
pub fn batch_sum_len(batch: usize, accum: usize) -> usize {
    let reduce = mlp::net::REDUCE;
    batch.max(1).div_ceil(reduce) + reduce.trailing_zeros() as usize + accum.max(1) - 1
}

/// f32's unit roundoff u = 2⁻²⁴ (half of `f32::EPSILON`, the ulp at 1).
const U: f64 = 1.0 / (1u64 << 24) as f64;

/// Units of u·|term| by which one term d·a of a gradient sum may differ between the GPU and
/// the twin before it is added: a fused multiply-add the WGSL compiler may emit skips the
/// product's rounding (1), and the activation feeding it may come from WGSL's `exp` and a
/// division, which Vulkan lets be 3 and 2.5 ulps (2u each) off near the activations' working
/// range where the twin's are within ½ ulp: 1 + 2·(3 + 2.5 + ½) = 13.
const TERM_U: f64 = 13.0;

/// How far a session's parameters may move from the CPU twin's per step, in ulps of
/// max(|p|, 1) (an ulp there is `f32::EPSILON`·max(|p|, 1) = 2u·max(|p|, 1)), for gradient
/// sums of `sum_len` roundings ([`batch_sum_len`]).
///
/// # Derivation
/// Both sides run the same formulas in f32 on the same data and add every gradient sum in the
/// same order ([`batch_sum_len`]), so they differ only where an operation may round
/// differently (the pattern of `family::cnn::bound`, which carries it per parameter):
/// - Each side's sum of L = `sum_len` roundings is within γ_L·Σ|terms| of the exact sum of its
///   own terms, whatever the order (γ_L = L·u / (1 − L·u), Higham's bound), so the two sums
///   are within 2·γ_L·Σ|terms| of each other, plus their terms' own gap, at most
///   `TERM_U`·u·Σ|terms|.
/// - The update passes that gap on scaled by ρ / Σ|terms|, where ρ = (the update's change per
///   unit change of the gradient)·Σ|terms| / max(|p|, 1): lr for SGD, lr / (1 − μ) summed over
///   the steps momentum carries it, and for Adam lr·(1 − β₁) / √v̂ over the steps its moment
///   carries it. The bound takes ρ ≤ 1: no step may move a parameter, in the worst case of its
///   batch's terms all pulling one way, by more than max(|p|, 1). This is the one assumption
///   not derived from the arithmetic: past it, training is unstable and the comparison of two
///   runs means little anyway (the comparison then fails rather than passes).
/// - Each side rounds the new parameter once: ½ ulp each, 1 between them.
///
/// Per step: 1 + ρ·(2·γ_L + TERM_U·u) / 2u ≤ 1 + γ_L / u + TERM_U / 2 ulps. Gaps carried from
/// earlier steps pass through the next update to first order unchanged (p ← p − Δp; Δp's own
/// dependence on p is a product of the small gap with lr), so after n steps the bound is n times
/// that. At batch 32 (L = 7) this is 14.5 ulps per step, at 1,024 (L = 22) 29.5.
/// `tests/training_vs_cpu.rs` checks every path against it and that planted mistakes break it.
pub fn param_ulps_per_step(sum_len: usize) -> f32 {
    let l = sum_len as f64;
    let gamma = l * U / (1.0 - l * U).max(f64::MIN_POSITIVE);
    (1.0 + gamma / U + TERM_U / 2.0) as f32
}

/// The largest gap between `gpu` and the twin's `cpu` parameters after `steps` steps whose
/// gradient sums each have `sum_len` roundings ([`batch_sum_len`]), as a multiple of its bound
/// ([`param_ulps_per_step`] per step; ≤ 1 passes). A non-finite parameter on either side, or
/// lists of different lengths, give infinity.
pub fn param_gap_ratio(gpu: &[f32], cpu: &[f32], steps: u32, sum_len: usize) -> f32 {
    if gpu.len() != cpu.len() {
        return f32::INFINITY;
    }
    let ulps = param_ulps_per_step(sum_len);
    gpu.iter()
        .zip(cpu)
        .map(|(&a, &b)| {
            if !(a.is_finite() && b.is_finite()) {
                return f32::INFINITY;
            }
            let bound = ulps * steps as f32 * f32::EPSILON * b.abs().max(1.0);
            (a - b).abs() / bound
        })
        .fold(0.0, f32::max)
}

/// Words of the whole-step kernels' uniform (`StepNet`); every other kernel's uniform is its
/// own struct's size ([`crate::family::mlp::uniform`]).
pub const UNIFORM_WORDS: usize = 80;

/// The whole-step kernels (`mlp-step-samples`, `mlp-step-params`) walk one sample through
/// every layer per thread; they are used up to this many layers of at most this many neurons.
pub const FUSED_MAX_DEPTH: usize = 8;
pub const FUSED_MAX_WIDTH: usize = 64;

/// The step paths a session can take (see [`step_plan_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepPath {
    /// Two dispatches, activations in workgroup memory (`mlp-step-lanes`, `mlp-step-reduce`):
    /// the default where [`lanes_fit`] holds.
    Lanes,
    /// Per layer (`mlp-forward-gather` … `mlp-step-params`): the default for bigger networks
    /// and with gradient accumulation.
    Layers,
    /// Two dispatches, one thread per sample through global memory (`mlp-step-samples`,
    /// `mlp-step-params`): only when asked for.
    Samples,
}

/// Which of its equivalent paths a plan takes: options of the plan, set by whoever makes it
/// (the page leaves them at their defaults; benchmarks and tests pin one to compare).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathOptions {
    /// The step path (None: the default, [`StepPath::Lanes`] where it fits, else per layer).
    /// A path the network does not fit falls back to per layer.
    pub step: Option<StepPath>,
    /// The wide-layer path: Some(true) tiles every layer (tests run the tiled kernels' edges on
    /// small networks), Some(false) none (benchmarks and tests compare with the per-element
    /// kernels), None by width ([`WIDE_MIN`]).
    pub tiled: Option<bool>,
}

impl PathOptions {
    /// The default paths with the step path pinned.
    pub fn step(step: StepPath) -> Self {
        Self {
            step: Some(step),
            tiled: None,
        }
    }

    /// The default paths with the wide-layer path pinned (None: by width).
    pub fn tiled(tiled: Option<bool>) -> Self {
        Self { step: None, tiled }
    }
}

/// Whether a network is small enough for the whole-step kernels: at most
/// [`FUSED_MAX_DEPTH`] layers (their uniform's layer table) of at most [`FUSED_MAX_WIDTH`]
/// neurons.
fn whole_step_fits(net: &Net) -> bool {
    net.depth() >= 1
        && net.depth() <= FUSED_MAX_DEPTH
        && net.sizes.iter().all(|&w| w <= FUSED_MAX_WIDTH)
}

/// Whether a training step of `net` runs as the two per-sample whole-step dispatches
/// (`mlp-step-samples`). Only when asked for ([`PathOptions::step`]): on the H200 (2026-12-01,
/// `bench mlp --path`) they were SLOWER than the nine per-layer ones at every batch from 1 to
/// 1,024 (2-16-16-2: 64.6 vs 43.3 µs per step at batch 1, 83.4 vs 58.8 at 1,024; equal at
/// 4,096): one thread walking its sample through every layer is a chain of dependent memory
/// accesses longer than the seven launches it saves.
pub fn fused(net: &Net, paths: PathOptions) -> bool {
    paths.step == Some(StepPath::Samples) && whole_step_fits(net)
}

/// Lanes of the gradient's sum over the batch ([`mlp::net::REDUCE`]): `mlp-step-lanes` runs one
/// workgroup per lane, so its sums are the CPU twin's.
pub const LANES: u32 = mlp::net::REDUCE as u32;

/// Threads per workgroup of `mlp-step-lanes` (WebGPU's default maximum).
pub const LANE_THREADS: u32 = 256;

/// f32 values of `mlp-step-lanes`'s workgroup array `mem` (15 KiB: WebGPU guarantees 16 KiB
/// of workgroup memory). A chunk of C samples needs C · 2 · Σ widths of them.
pub const LANE_MEM_FLOATS: usize = 3840;
// WebGPU's default maxComputeWorkgroupStorageSize is 16,384 bytes.
const _: () = assert!(LANE_MEM_FLOATS * 4 <= 16_384);

/// Whether the default step of `net` is the workgroup-memory one ([`StepPath::Lanes`]): the
/// network fits the whole-step kernels (so one sample's activations and deltas, 2 · Σ widths ≤
/// 2 · 9 · 64 = 1,152 floats, fit [`LANE_MEM_FLOATS`] at least three times), no other path is
/// asked for (nor tiled matmuls on every layer, [`PathOptions::tiled`]), and there is no
/// gradient accumulation (the per-layer path adds micro-batches).
pub fn lanes_fit(net: &Net, accum: usize, paths: PathOptions) -> bool {
    let lanes = matches!(paths.step, None | Some(StepPath::Lanes));
    let all_tiled = paths.tiled == Some(true);
    lanes && !all_tiled && accum <= 1 && whole_step_fits(net)
}

/// Samples of one lane that `mlp-step-lanes` keeps in workgroup memory at once: as many as fit
/// (each needs its activations and deltas, 2 · Σ widths floats), and no more than a lane has
/// (⌈batch / 64⌉).
pub fn lane_chunk(net: &Net, batch: usize) -> usize {
    let per_sample = 2 * net.sizes.iter().sum::<usize>().max(1);
    (LANE_MEM_FLOATS / per_sample)
        .min(batch.div_ceil(LANES as usize))
        .max(1)
}

/// What the planner reads of one network for one plan, worked out once per plan: the
/// parameter layout ([`Net::layout`]) and each layer's activation offset for the plan's rows,
/// with the kernels the caller pins and the paths it asked for. Every planning function below
/// reads it instead of asking the network again.
struct Shape<'a> {
    net: &'a Net,
    layout: Layout,
    /// Samples the plan's dispatches run over (a step's batch, an evaluation's rows).
    rows: usize,
    /// Where each layer's activations (and deltas) start for `rows` samples; the last entry is
    /// the output layer's.
    offs: Vec<usize>,
    /// Words the optimiser steps (the parameter buffer's, padding included).
    optim_count: usize,
    pinned: &'a [&'a str],
    paths: PathOptions,
}

/// Where a plan's tensors live: each layer's parameters and each layer's activations (which
/// the deltas share), and the words of the parameter buffer. `mlp::net`'s packed layouts
/// ([`Places::packed`]), or the engine's arena ([`Places::of`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Places {
    /// Per layer: fan-in, fan-out and the offsets of its weights and biases.
    pub layers: Vec<LayerOffsets>,
    /// Per layer (0: the input): where its activations (and its deltas) start.
    pub acts: Vec<usize>,
    /// Words of the parameter buffer.
    pub param_words: usize,
}

impl Places {
    /// `mlp::net`'s own layouts for `rows` samples.
    pub fn packed(net: &Net, rows: usize) -> Self {
        let layout = net.layout();
        Self {
            param_words: layout.param_count,
            layers: layout.layers,
            acts: net.act_offsets(rows).0,
        }
    }

    /// The engine's arena of [`crate::training::layers::model`]; None when a tensor's deltas sit
    /// apart from its activations (the per-element kernels index both through one offset).
    pub fn of(engine: &crate::engine::Net) -> Option<Self> {
        use crate::engine::Node;
        let mut layers = Vec::new();
        let mut acts = vec![engine.input.act.at];
        for node in &engine.nodes {
            if let Node::Perceptron { x, y, w, b, .. } = node {
                if x.act.at != x.delta.at || y.act.at != y.delta.at {
                    return None;
                }
                layers.push(LayerOffsets {
                    fan_in: x.width,
                    fan_out: y.width,
                    w_off: w.at,
                    b_off: b.at,
                });
                acts.push(y.act.at);
            }
        }
        Some(Self {
            layers,
            acts,
            param_words: engine.param_words(),
        })
    }
}

impl<'a> Shape<'a> {
    fn new(net: &'a Net, rows: usize, pinned: &'a [&'a str], paths: PathOptions) -> Self {
        Self::at(net, rows, pinned, paths, Places::packed(net, rows))
    }

    fn at(
        net: &'a Net,
        rows: usize,
        pinned: &'a [&'a str],
        paths: PathOptions,
        places: Places,
    ) -> Self {
        Self {
            net,
            layout: Layout {
                layers: places.layers,
                // Parameters are numbered in the packed order whatever their places.
                param_count: net.layout().param_count,
            },
            rows,
            offs: places.acts,
            optim_count: places.param_words,
            pinned,
            paths,
        }
    }

    /// Layer `l`'s (1-based) parameter offsets.
    fn layer(&self, l: usize) -> LayerOffsets {
        self.layout.layers[l - 1]
    }

    fn wide(&self, l: usize) -> bool {
        wide_layer(self.layout.layers.get(l.wrapping_sub(1)), self.paths)
    }
}

/// The uniform of `mlp-step-lanes` and `mlp-step-reduce`: the whole-step uniform `u`
/// ([`step_net_uniform`]) with each layer's in/out offsets in workgroup memory for one chunk,
/// C and the parameter count.
fn lanes_uniform(s: &Shape<'_>, mut w: Uniform) -> Uniform {
    let (net, batch) = (s.net, s.rows);
    let chunk = lane_chunk(net, batch);
    // Offsets for one chunk of samples (in workgroup memory), not the batch's.
    let (offs, _) = net.act_offsets(chunk);
    w.set("chunk", chunk as u32);
    w.set("param_count", s.layout.param_count as u32);
    let table = STEP_NET.index("layers").unwrap_or(16);
    for l in 0..net.depth() {
        // Layer l's second vec4: {b_off, in_off, out_off, first group}.
        w[table + 8 * l + 5] = offs[l] as u32;
        w[table + 8 * l + 6] = offs[l + 1] as u32;
    }
    w
}

/// The uniform both whole-step kernels read (`StepNet` in `shaders/mlp_step_samples.wgsl`),
/// for a training set of `rows` samples.
fn step_net_uniform(s: &Shape<'_>, hyper: &Hyper, rows: usize) -> Uniform {
    let (net, batch, layout, offs) = (s.net, s.rows, &s.layout, &s.offs);
    let (opt, momentum) = match hyper.optimiser {
        Optimiser::Adam => (1, 0.0),
        o => (0, o.momentum()),
    };
    let head = Uniform::new(&STEP_NET)
        .with("batch", batch as u32)
        .with("rows", rows as u32)
        .with("depth", net.depth() as u32)
        .with("loss", net.loss as u32)
        .with("optimiser", opt)
        .with("corr_len", adam_correction_table().len() as u32)
        .with_f32("lr", hyper.lr)
        .with_f32("beta1", BETA1)
        .with_f32("beta2", BETA2)
        .with_f32("eps", EPSILON)
        .with_f32("l1", hyper.l1)
        .with_f32("l2", hyper.l2)
        .with_f32("momentum", momentum);
    // The layer table, two vec4 per layer in the struct's order.
    let table = STEP_NET.index("layers").unwrap_or(16);
    let mut w = head[..table].to_vec();
    let mut first_group = 0usize;
    for (i, l) in layout.layers.iter().enumerate() {
        w.extend([
            l.fan_in as u32,
            l.fan_out as u32,
            net.activation_of(i + 1) as u32,
            l.w_off as u32,
            l.b_off as u32,
            offs[i] as u32,
            offs[i + 1] as u32,
            first_group as u32,
        ]);
        first_group += l.fan_out * (l.fan_in + 1);
    }
    // A network deeper than the table is never planned on these kernels
    // ([`FUSED_MAX_DEPTH`]); its table is cut where the struct ends.
    w.truncate(STEP_NET.words.len());
    Uniform::from_words(&STEP_NET, &w)
}

/// A dispatch of one thread per element, 64 to a workgroup, along x.
fn planned(
    kernel_id: &'static str,
    layer: usize,
    threads: usize,
    uniform: Uniform,
) -> PlannedDispatch {
    let threads = threads as u32;
    PlannedDispatch {
        kernel_id,
        layer,
        threads,
        workgroups: [threads.div_ceil(WORKGROUP).max(1), 1, 1],
        uniform,
    }
}

/// The forward dispatches for `rows` samples (wide layers tiled, [`forward_plan_with`]).
pub fn forward_plan(net: &Net, rows: usize) -> Vec<PlannedDispatch> {
    forward_plan_with(net, rows, &[], PathOptions::default())
}

/// [`forward_plan`] where the kernels in `pinned` must run (an edited `mlp-forward` keeps
/// every layer on it; a pinned `mlp-forward-tiled` runs on every layer), on `paths`.
pub fn forward_plan_with(
    net: &Net,
    rows: usize,
    pinned: &[&str],
    paths: PathOptions,
) -> Vec<PlannedDispatch> {
    forward_plan_at(net, rows, pinned, paths, Places::packed(net, rows))
}

/// [`forward_plan_with`] over tensors at `places`.
pub fn forward_plan_at(
    net: &Net,
    rows: usize,
    pinned: &[&str],
    paths: PathOptions,
    places: Places,
) -> Vec<PlannedDispatch> {
    let shape = Shape::at(net, rows, pinned, paths, places);
    let mut plan = plain_forward_plan(&shape);
    tile_wide_layers(&shape, &mut plan);
    plan
}

fn plain_forward_plan(s: &Shape<'_>) -> Vec<PlannedDispatch> {
    let (net, rows, offs) = (s.net, s.rows, &s.offs);
    s.layout
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            planned(
                "mlp-forward",
                i + 1,
                rows * l.fan_out,
                Uniform::new(&DENSE)
                    .with("batch", rows as u32)
                    .with("fan_in", l.fan_in as u32)
                    .with("fan_out", l.fan_out as u32)
                    .with("act", net.activation_of(i + 1) as u32)
                    .with("w_off", l.w_off as u32)
                    .with("b_off", l.b_off as u32)
                    .with("in_off", offs[i] as u32)
                    .with("out_off", offs[i + 1] as u32),
            )
        })
        .collect()
}

/// What a step plan must respect besides the network: gradient accumulation, the kernels
/// the caller runs in place of the catalogue's (the editor's edited copy, a test's override),
/// and the paths it takes.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepOptions<'a> {
    /// Micro-batches per update (0 or 1: none).
    pub accum: usize,
    /// Kernel ids that must run as separate dispatches: no fused kernel replaces them.
    pub pinned: &'a [&'a str],
    pub paths: PathOptions,
}

/// Each fused kernel and the separate kernels whose work it does. A plan uses a fused kernel
/// only when none of these is pinned ([`StepOptions::pinned`]), so an edited kernel always runs.
pub const FUSED_REPLACES: &[(&str, &[&str])] = &[
    ("mlp-forward-gather", &["mlp-gather", "mlp-forward"]),
    // The wide layers' tiled matmuls stand for the one-thread-per-element kernels.
    ("mlp-forward-tiled", &["mlp-forward"]),
    ("mlp-backward-input-tiled", &["mlp-backward-input"]),
    ("mlp-grad-tiled", &["mlp-backward-params"]),
    ("mlp-grad-reduce", &["mlp-backward-params"]),
    (
        "mlp-forward-loss",
        &["mlp-forward", "mlp-loss", "mlp-backward-input"],
    ),
    (
        "mlp-step-params",
        &["mlp-backward-params", "optim-sgd", "optim-adam"],
    ),
    (
        "mlp-step-samples",
        &[
            "mlp-gather",
            "mlp-forward",
            "mlp-forward-gather",
            "mlp-loss",
            "mlp-forward-loss",
            "mlp-backward-input",
        ],
    ),
    // The forward pass, the loss, the deltas and each lane's share of the gradient (of the
    // layers the per-element or the tiled kernels would run: an edited tiled kernel, which
    // the editor runs on a narrow network, must not be stood in for either).
    (
        "mlp-step-lanes",
        &[
            "mlp-gather",
            "mlp-forward",
            "mlp-forward-gather",
            "mlp-loss",
            "mlp-forward-loss",
            "mlp-backward-input",
            "mlp-backward-params",
            "mlp-forward-tiled",
            "mlp-backward-input-tiled",
            "mlp-grad-tiled",
        ],
    ),
    // The gradient's sum over the lanes and the optimiser.
    (
        "mlp-step-reduce",
        &[
            "mlp-backward-params",
            "mlp-step-params",
            "optim-sgd",
            "optim-adam",
            "mlp-grad-reduce",
        ],
    ),
];

/// Whether `fused_id` may stand in for its separate kernels under `pinned`.
fn may_fuse(fused_id: &str, pinned: &[&str]) -> bool {
    FUSED_REPLACES
        .iter()
        .filter(|(f, _)| *f == fused_id)
        .flat_map(|(_, parts)| parts.iter())
        .all(|part| !pinned.contains(part))
}

/// The grid of a kernel with one workgroup per parameter: the one grid rule
/// ([`crate::plan::grid`]; the kernels read their index as `x + y · num_workgroups.x` and skip
/// the few groups past the last parameter), so a 2-256-256-2 network (66,562 parameters) runs
/// like a small one instead of being refused.
fn per_param_grid(groups: u32) -> [u32; 3] {
    grid(groups)
}

/// Every dispatch of one training step, in the order they run, for a training set of `rows`
/// samples, without accumulation or replaced kernels ([`step_plan_with`]).
pub fn step_plan(net: &Net, hyper: &Hyper, batch: usize, rows: usize) -> Vec<PlannedDispatch> {
    step_plan_with(net, hyper, batch, rows, StepOptions::default())
}

/// The `mlp-step-params` dispatch: one workgroup per parameter of every layer, its gradient
/// summed over the batch from the deltas already in place, then the optimiser's update.
fn step_params_dispatch(s: &Shape<'_>, u: Uniform) -> PlannedDispatch {
    let groups = s.layout.param_count as u32;
    PlannedDispatch {
        kernel_id: "mlp-step-params",
        layer: 0,
        threads: groups * WORKGROUP,
        workgroups: per_param_grid(groups),
        uniform: u,
    }
}

/// [`step_plan`] under `opts`. A network that fits [`lanes_fit`]: `mlp-step-lanes` then
/// `mlp-step-reduce` (the default; not while an edit pins a kernel they replace). Per layer
/// (bigger networks, accumulation, such an edit): the first layer gathers its batch
/// (`mlp-forward-gather`; `mlp-gather` then `mlp-forward` when either is pinned), hidden
/// layers `mlp-forward`, the output layer and loss in one dispatch (`mlp-forward-loss`;
/// `mlp-forward` then `mlp-loss` when either is pinned, or when the first layer is the output
/// layer), then `mlp-backward-input` from the last layer down, then ONE `mlp-step-params` that
/// sums every parameter's gradient and applies the optimiser to it — or, with accumulation or a
/// pinned gradient/optimiser kernel, `mlp-backward-params` per layer and `optim-sgd`/`optim-adam`.
/// The optimiser's uniform holds the learning rate of `hyper`; a session rewrites it only
/// when the rate changes.
pub fn step_plan_with(
    net: &Net,
    hyper: &Hyper,
    batch: usize,
    rows: usize,
    opts: StepOptions<'_>,
) -> Vec<PlannedDispatch> {
    step_plan_at(net, hyper, batch, rows, opts, Places::packed(net, batch))
}

/// [`step_plan_with`] over tensors at `places`.
pub fn step_plan_at(
    net: &Net,
    hyper: &Hyper,
    batch: usize,
    rows: usize,
    opts: StepOptions<'_>,
    places: Places,
) -> Vec<PlannedDispatch> {
    let (pinned, paths) = (opts.pinned, opts.paths);
    // The network's layout and the batch's offsets, once for the whole plan.
    let shape = Shape::at(net, batch, pinned, paths, places);
    let s = &shape;
    let layout = &s.layout;
    // The two whole-step kernels when asked for, or when the per-sample one is pinned (it
    // runs nowhere else).
    let whole_step = (fused(net, paths) || pinned.contains(&"mlp-step-samples"))
        && whole_step_fits(net)
        && may_fuse("mlp-step-samples", pinned);
    let u = step_net_uniform(s, hyper, rows);
    if whole_step {
        let mut samples = planned("mlp-step-samples", 0, batch, u.clone());
        samples.workgroups = [(batch as u32).div_ceil(WORKGROUP).max(1), 1, 1];
        return vec![samples, step_params_dispatch(s, u)];
    }
    // The default for small networks: the whole step in two dispatches, activations in
    // workgroup memory, unless an edit pins a kernel these two stand in for.
    if lanes_fit(net, opts.accum, paths)
        && may_fuse("mlp-step-lanes", pinned)
        && may_fuse("mlp-step-reduce", pinned)
    {
        let u = lanes_uniform(s, u);
        let count = layout.param_count as u32;
        // One workgroup per lane that has a sample: a lane t ≥ batch would only write zeros,
        // and its sums stay the zeros the partials buffer is created with (a session's batch
        // never changes). On SwiftShader each idle 256-thread workgroup still cost its setup:
        // batch 1 trained at 9–10 steps/s with all 64 launched.
        let lanes = LANES.min(batch as u32).max(1);
        return vec![
            PlannedDispatch {
                kernel_id: "mlp-step-lanes",
                layer: 0,
                threads: lanes * LANE_THREADS,
                workgroups: [lanes, 1, 1],
                uniform: u.clone(),
            },
            PlannedDispatch {
                kernel_id: "mlp-step-reduce",
                layer: 0,
                threads: count * WORKGROUP,
                workgroups: per_param_grid(count),
                uniform: u,
            },
        ];
    }
    let offs = &s.offs;
    let depth = net.depth();
    let mut plan = plain_forward_plan(s);
    // The first layer picks its batch on the GPU.
    // Its uniform: the first layer's, with the training set's rows.
    let gather_uniform =
        Uniform::from_words(&GATHER, plan[0].uniform.words()).with("rows", rows as u32);
    if may_fuse("mlp-forward-gather", pinned) {
        let first = &mut plan[0];
        first.kernel_id = "mlp-forward-gather";
        first.uniform = gather_uniform;
    } else {
        let gather = planned("mlp-gather", 1, batch * net.inputs(), gather_uniform);
        plan.insert(0, gather);
    }
    let first_is_output = depth < 2;
    if !first_is_output && may_fuse("mlp-forward-loss", pinned) {
        // The output layer, the loss and the gradient one layer down in one dispatch, one
        // thread per sample.
        let out = plan.pop().expect("depth ≥ 2 layers");
        // The output layer's dense words (its fan-out is the classes), then the loss's.
        let u = Uniform::from_words(&HEAD, out.uniform.words())
            .with("delta_off", offs[depth] as u32)
            .with("kind", net.loss as u32)
            // The mean is over this many samples and the losses start at 0: a session
            // with gradient accumulation makes one copy per micro-batch (`micro_loss`).
            .with("mean_over", batch as u32)
            .with("loss_off", 0)
            .with("below_act", net.activation_of(depth - 1) as u32);
        plan.push(planned("mlp-forward-loss", depth, batch, u));
    } else {
        let u = Uniform::new(&LOSS)
            .with("batch", batch as u32)
            .with("classes", net.classes() as u32)
            .with("logits_off", offs[depth] as u32)
            .with("delta_off", offs[depth] as u32)
            .with("kind", net.loss as u32)
            .with("mean_over", batch as u32)
            .with("loss_off", 0);
        plan.push(planned("mlp-loss", depth, batch, u));
    }
    let backward_input = |l: usize| {
        let lo = layout.layers[l - 1];
        let u = Uniform::new(&BACK)
            .with("batch", batch as u32)
            .with("fan_in", lo.fan_in as u32)
            .with("fan_out", lo.fan_out as u32)
            .with("act", net.activation_of(l - 1) as u32)
            .with("w_off", lo.w_off as u32)
            .with("in_off", offs[l - 1] as u32)
            .with("in_delta_off", offs[l - 1] as u32)
            .with("out_delta_off", offs[l] as u32);
        planned("mlp-backward-input", l, batch * lo.fan_in, u)
    };
    // The optimiser inside the gradient kernel: every delta first (each backward-input reads
    // its layer's weights before any is updated), then one workgroup per parameter sums its
    // gradient and updates it. Not with accumulation (the gradient is summed over
    // micro-batches before one update).
    // A layer whose gradient is a tiled matmul sums it apart from the optimiser.
    let step_params = opts.accum <= 1
        && depth <= FUSED_MAX_DEPTH
        && may_fuse("mlp-step-params", pinned)
        && (1..=depth).all(|l| !tiled_grad(s, l));
    // The fused output layer already sent the gradient below the last layer.
    let below_last_done = plan.iter().any(|p| p.kernel_id == "mlp-forward-loss");
    let needs_backward_input = |l: usize| l > 1 && !(l == depth && below_last_done);
    if step_params {
        for l in (2..=depth).rev().filter(|&l| needs_backward_input(l)) {
            plan.push(backward_input(l));
        }
        plan.push(step_params_dispatch(s, u));
        tile_wide_layers(s, &mut plan);
        return plan;
    }
    for l in (1..=depth).rev() {
        let lo = layout.layers[l - 1];
        if tiled_grad(s, l) {
            plan.extend(tiled_grad_plan(s, l));
            if needs_backward_input(l) {
                plan.push(backward_input(l));
            }
            continue;
        }
        // One workgroup of 64 threads per weight or bias (a reduction over the batch).
        let u = Uniform::new(&GRAD)
            .with("batch", batch as u32)
            .with("fan_in", lo.fan_in as u32)
            .with("fan_out", lo.fan_out as u32)
            .with("in_off", offs[l - 1] as u32)
            .with("delta_off", offs[l] as u32)
            .with("w_off", lo.w_off as u32)
            .with("b_off", lo.b_off as u32);
        let mut params = planned(
            "mlp-backward-params",
            l,
            lo.fan_out * (lo.fan_in + 1) * WORKGROUP as usize,
            u,
        );
        params.workgroups = per_param_grid(params.workgroups[0]);
        plan.push(params);
        if needs_backward_input(l) {
            plan.push(backward_input(l));
        }
    }
    plan.push(optimiser_dispatch(s.optim_count, hyper));
    tile_wide_layers(s, &mut plan);
    plan
}

// ---- Wide layers: their three products as register-tiled matmuls ----
//
// A layer with many inputs and outputs spends a step in three products over the batch:
// forward OUT = IN · Wᵀ, backward DZ_IN = DZ · W, and the gradient DW = DZᵀ · IN. The
// one-thread-per-element kernels read both operands from memory per multiply-add (and the
// per-parameter gradient reduces the whole batch inside one workgroup), which held
// 2-256-256-2 at batch 4,096 to ~0.4 TFLOP/s on the H200. For such a layer the plan swaps in
// tiled kernels that compute the same sums in the same order (see each file's header), so
// the CPU twin still holds them to the last bit on a device without fused multiply-adds.

/// A layer runs its products as tiled matmuls when both its fan-in and fan-out are at least
/// this (a 64 × 64 output tile is then full in one direction at least; narrower layers are
/// launch-bound, where the small-network kernels do better).
pub const WIDE_MIN: usize = 64;

/// Slices the tiled gradient cuts the batch into: the 64 threads of `mlp-backward-params`,
/// whose per-thread partial sums each slice reproduces.
pub const GRAD_SLICES: usize = 64;

/// Output tile side of the tiled kernels (`TILE` in their WGSL).
const TILE: u32 = 64;

/// The partial sums of one layer must fit one storage binding on every WebGPU device
/// (the default `maxStorageBufferBindingSize`, 128 MiB): up to 64 × 512 × 513 floats.
const PARTIALS_MAX_BYTES: u64 = 128 << 20;

/// Whether layer `l` (1-based) of `net` is wide on `paths`: its products run as tiled
/// matmuls unless an edited kernel they stand for is pinned.
pub fn wide(net: &Net, l: usize, paths: PathOptions) -> bool {
    wide_layer(net.layout().layers.get(l.wrapping_sub(1)), paths)
}

/// [`wide`] of a layer's offsets (None: no such layer).
fn wide_layer(lo: Option<&LayerOffsets>, paths: PathOptions) -> bool {
    let Some(lo) = lo else {
        return false;
    };
    match paths.tiled {
        Some(tiled) => tiled,
        None => lo.fan_in >= WIDE_MIN && lo.fan_out >= WIDE_MIN,
    }
}

/// Floats of layer `l`'s partial sums for the plan's batch: one slice per sample up to 64.
fn partials_of(s: &Shape<'_>, l: usize) -> usize {
    let lo = s.layer(l);
    GRAD_SLICES.min(s.rows.max(1)) * lo.fan_out * (lo.fan_in + 1)
}

/// Whether layer `l`'s gradient is the tiled pair (`mlp-grad-tiled`, `mlp-grad-reduce`).
fn tiled_grad(s: &Shape<'_>, l: usize) -> bool {
    let pinned = s.pinned;
    let asked = pinned.contains(&"mlp-grad-tiled") || pinned.contains(&"mlp-grad-reduce");
    let lo = s.layer(l);
    let fits = (GRAD_SLICES * lo.fan_out * (lo.fan_in + 1)) as u64 * 4 <= PARTIALS_MAX_BYTES;
    (asked || s.wide(l)) && fits && may_fuse("mlp-grad-tiled", pinned)
}

/// Floats the session's partial-sum buffer needs: the largest tiled layer's.
pub fn partials_len(net: &Net, batch: usize, pinned: &[&str], paths: PathOptions) -> usize {
    let s = Shape::new(net, batch, pinned, paths);
    (1..=net.depth())
        .filter(|&l| tiled_grad(&s, l))
        .map(|l| partials_of(&s, l))
        .max()
        .unwrap_or(0)
}

/// Layer `l`'s gradient as the two tiled dispatches: the per-slice partial sums, then their
/// halving, added to the gradient buffer.
fn tiled_grad_plan(s: &Shape<'_>, l: usize) -> [PlannedDispatch; 2] {
    let (batch, offs) = (s.rows, &s.offs);
    let lo = s.layer(l);
    let slices = GRAD_SLICES.min(batch.max(1));
    let cols = lo.fan_in + 1;
    let words = Uniform::new(&GRAD_TILED)
        .with("batch", batch as u32)
        .with("fan_in", lo.fan_in as u32)
        .with("fan_out", lo.fan_out as u32)
        .with("in_off", offs[l - 1] as u32)
        .with("delta_off", offs[l] as u32)
        .with("w_off", lo.w_off as u32)
        .with("b_off", lo.b_off as u32)
        .with("slices", slices as u32);
    let mut sums = planned("mlp-grad-tiled", l, 0, words.clone());
    sums.workgroups = [
        (cols as u32).div_ceil(TILE),
        (lo.fan_out as u32).div_ceil(TILE),
        slices as u32,
    ];
    sums.threads = sums.workgroups.iter().product::<u32>() * 256;
    [
        sums,
        planned("mlp-grad-reduce", l, lo.fan_out * cols, words),
    ]
}

/// Swaps `mlp-forward` and `mlp-backward-input` of wide layers for their tiled kernels (same
/// uniform, a 2-D grid of 64 × 64 tiles), where no pinned kernel forbids it; a pinned tiled
/// kernel runs on every layer its plain kernel would.
fn tile_wide_layers(s: &Shape<'_>, plan: &mut [PlannedDispatch]) {
    let (rows, pinned) = (s.rows, s.pinned);
    for p in plan.iter_mut() {
        let (tiled_id, width) = match p.kernel_id {
            "mlp-forward" => ("mlp-forward-tiled", s.layer(p.layer).fan_out),
            "mlp-backward-input" => ("mlp-backward-input-tiled", s.layer(p.layer).fan_in),
            _ => continue,
        };
        if (s.wide(p.layer) || pinned.contains(&tiled_id)) && may_fuse(tiled_id, pinned) {
            p.kernel_id = tiled_id;
            p.workgroups = [
                (width as u32).div_ceil(TILE),
                (rows as u32).div_ceil(TILE).max(1),
                1,
            ];
            p.threads = p.workgroups[0] * p.workgroups[1] * 256;
        }
    }
}

/// Adam's bias corrections for steps 1, 2, … (the optimiser family's table, the numbers the
/// CPU twin uses), up to the first step where both are exactly 1.0 in f32.
pub use crate::family::optim::correction_table as adam_correction_table;

/// The one optimiser dispatch over every parameter (`optim-sgd` or `optim-adam`, the family
/// every model shares), its 16 uniform words first. The gathering kernel advances the step
/// state, so Adam only reads it.
fn optimiser_dispatch(count: usize, hyper: &Hyper) -> PlannedDispatch {
    let h = optim::Hyper {
        rule: match hyper.optimiser {
            Optimiser::Adam => optim::Rule::Adam,
            o => optim::Rule::Sgd {
                momentum: o.momentum(),
            },
        },
        lr: hyper.lr,
        l1: hyper.l1,
        l2: hyper.l2,
        advance: false,
    };
    let mut d = planned(
        h.kernel_id(),
        0,
        count,
        optim::uniform(&h, count, optim::MAX_GROUPS_X),
    );
    d.workgroups = optim::grid(count, optim::MAX_GROUPS_X).0;
    d
}

/// The loss dispatch of micro-batch `j` of `accum` in one step, made from the plan's loss
/// dispatch (`mlp-loss` or the fused `mlp-forward-loss`): the gradient is divided by the
/// effective batch (`accum · batch`), the losses go to `j · batch`. A session with
/// accumulation keeps one such dispatch (and uniform) per micro-batch, so nothing is written
/// between micro-batches.
pub fn micro_loss(loss: &PlannedDispatch, batch: usize, accum: usize, j: usize) -> PlannedDispatch {
    // `mlp-loss` and `mlp-forward-loss` both name these words.
    let mut d = loss.clone();
    d.uniform.set("mean_over", (accum.max(1) * batch) as u32);
    d.uniform.set("loss_off", (j * batch) as u32);
    d
}

/// Memory of one step with gradient accumulation: the activations and deltas a session keeps
/// for one micro-batch, against what one batch of the effective size would need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccumMemory {
    pub micro_batch: usize,
    pub effective_batch: usize,
    /// Activations + deltas for one micro-batch (what the session allocates).
    pub micro_bytes: u64,
    /// Activations + deltas for the whole effective batch at once.
    pub effective_bytes: u64,
}

/// What accumulating `accum` micro-batches of `batch` saves in activation memory.
pub fn accum_memory(net: &Net, batch: usize, accum: usize) -> AccumMemory {
    let effective = batch * accum.max(1);
    AccumMemory {
        micro_batch: batch,
        effective_batch: effective,
        micro_bytes: 2 * activation_bytes(net, batch),
        effective_bytes: 2 * activation_bytes(net, effective),
    }
}

/// Bytes of the largest buffer a session needs for `rows` samples: the activations (the
/// deltas are as large).
pub fn activation_bytes(net: &Net, rows: usize) -> u64 {
    net.act_offsets(rows).1 as u64 * 4
}

/// The largest batch whose activations fit one storage binding of this device: where memory
/// sets the ceiling for this network.
pub fn max_batch(net: &Net, limits: &BufferLimits) -> u64 {
    let per_sample = net.sizes.iter().sum::<usize>().max(1) as u64 * 4;
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
        / per_sample
}

/// What a session trains on.
pub struct SessionConfig<'a> {
    pub net: Net,
    pub hyper: Hyper,
    /// Samples per micro-batch.
    pub batch: usize,
    /// Micro-batches per update (gradient accumulation; 1 = none).
    pub accum: usize,
    /// Initial parameters (see [`Net::init_params`]).
    pub params: &'a [f32],
    /// Training features (rows × inputs) and labels.
    pub features: Vec<f32>,
    pub labels: Vec<u32>,
    /// Batch order (see [`mlp::net::batch_order`]).
    pub order: Vec<u32>,
    /// Rows the evaluation forward pass runs on (rows × inputs); may be empty.
    pub eval_features: &'a [f32],
    /// The paths the step and the evaluation take (the defaults but to compare them).
    pub paths: PathOptions,
}

impl<'a> SessionConfig<'a> {
    /// `net` trained as `spec` says — its hyper-parameters, batch, accumulation, features —
    /// on `train`, in the spec's seeded batch order. Other settings: struct update syntax,
    /// `SessionConfig { accum: 1, ..SessionConfig::from_spec(…) }`.
    pub fn from_spec(
        net: &Net,
        spec: &mlp::Spec,
        train: &mlp::Points,
        params: &'a [f32],
        eval_features: &'a [f32],
    ) -> Self {
        SessionConfig {
            net: net.clone(),
            hyper: spec.hyper(),
            batch: spec.batch,
            accum: spec.accum,
            params,
            features: train.features(&spec.features),
            labels: train.label.clone(),
            order: mlp::net::batch_order(train.len(), spec.seed),
            eval_features,
            paths: PathOptions::default(),
        }
    }
}

/// One evaluation read back from the GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalReadback {
    /// Training steps completed when the evaluation ran.
    pub step: u64,
    /// Logits of every evaluation row (rows × classes).
    pub logits: Vec<f32>,
    /// Each sample's loss in the last training step (all its micro-batches: `accum · batch`).
    pub batch_losses: Vec<f32>,
    /// The parameters at that step (for drawing the weights).
    pub params: Vec<f32>,
    /// The loop-budget flag's words ([`TrainingSession::new_edited`]); empty without one.
    pub loop_flag: Vec<u32>,
}

/// The batch's labels, in a buffer of their own: the per-element kernels bind the
/// activations writable, and WebGPU lets no dispatch bind one buffer both writable and
/// read-only, whatever the ranges.
const LABELS: &str = "mlp labels";

/// What the session binds for one of an MLP kernel's slots ([`bindings`]): the engine's arena
/// buffers (the labels their own, [`LABELS`]). The activations and deltas are bound from 0 to just before the loss head's targets
/// and losses (so a kernel's absolute offsets index them, and no writable binding overlaps
/// another), an evaluation's activations in their own buffer.
fn bind(slot: Slot, eval: bool, net: &engine::Net) -> Binding {
    use engine::buffer as b;
    let whole = Binding::whole;
    match slot {
        Slot::Params => whole(b::PARAMS),
        Slot::Grads => whole(b::GRADS),
        Slot::M => whole(b::M),
        Slot::V => whole(b::V),
        Slot::Acts => Range {
            at: 0,
            len: net.targets.at,
        }
        .bind(if eval { b::EVAL_ACTS } else { b::ACTS }),
        Slot::Deltas => Range {
            at: 0,
            len: net.losses.at,
        }
        .bind(b::DELTAS),
        Slot::Labels => whole(LABELS),
        Slot::Losses => net.losses.bind(b::DELTAS),
        Slot::DataX => whole(b::DATA_X),
        Slot::DataY => whole(b::DATA_Y),
        // The engine swaps the two copies on odd micro-batches.
        Slot::State => whole(b::STATES[0]),
        Slot::NextState => whole(b::STATES[1]),
        Slot::Corrections => whole(b::CORRECTIONS),
        Slot::Partials => whole(b::SCRATCH),
    }
}

/// `p` recorded onto the engine's buffers for `net` (an evaluation's onto its own
/// activations), its bindings the MLP family's slots ([`bindings`]) as [`bind`] places them.
pub(crate) fn record(p: &PlannedDispatch, eval: bool, net: &engine::Net) -> Recorded {
    Recorded {
        planned: p.clone(),
        bindings: bindings(p.kernel_id)
            .iter()
            .map(|&slot| bind(slot, eval, net))
            .collect(),
    }
}

/// A network being trained on the GPU: its layer list ([`training::layers::model`]) on the
/// training engine, whose train step is this module's plan of it ([`step_plan_at`]: the
/// whole-step kernels where the network fits, else per layer, the kernels an edit pins
/// always run) as a rewrite rule over the arena, and whose evaluation is [`forward_plan_at`].
/// Dropping it destroys its buffers.
pub struct TrainingSession {
    net: Net,
    hyper: Hyper,
    accum: usize,
    plan: Vec<PlannedDispatch>,
    engine: Engine,
    /// `mlp::net`'s parameter layout in the arena.
    map: Map,
    /// What an evaluation reads: the logits (evaluation activations), the step's losses.
    logits: Range,
    losses: Range,
    read_step: u64,
    /// Words of the loop-budget flag buffer, 0 without one.
    flag_words: usize,
}

impl TrainingSession {
    /// Creates the buffers, pipelines and bind groups. Fails with a [`GpuError`] when the
    /// device is lost, a shader does not compile or the sizes exceed the device's limits.
    pub async fn new(gpu: Rc<Gpu>, cfg: SessionConfig<'_>) -> Result<Self, GpuError> {
        Self::new_with(gpu, cfg, &[]).await
    }

    /// [`TrainingSession::new`] where a dispatch whose kernel id matches one of
    /// `replacements` runs it instead of the catalogue's (the editor runs a learner's edited
    /// copy, made with [`KernelSpec::with_source`], for one step against the CPU twin).
    pub async fn new_with(
        gpu: Rc<Gpu>,
        cfg: SessionConfig<'_>,
        replacements: &[&KernelSpec],
    ) -> Result<Self, GpuError> {
        Self::new_edited(gpu, cfg, replacements, None).await
    }

    /// [`TrainingSession::new_with`] where the replacements are a learner's kernels rewritten
    /// with a loop budget: every dispatch of a replaced kernel (step and evaluation) also
    /// binds the [`LOOP_FLAG`] buffer at `flag.binding`, just after its uniform, and each
    /// evaluation reads the flag back ([`EvalReadback::loop_flag`]).
    pub async fn new_edited(
        gpu: Rc<Gpu>,
        cfg: SessionConfig<'_>,
        replacements: &[&KernelSpec],
        flag: Option<LoopFlag>,
    ) -> Result<Self, GpuError> {
        if gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost before training started".into()));
        }
        let net = cfg.net;
        let width = net.inputs();
        let batch = cfg.batch.max(1);
        let accum = cfg.accum.max(1);
        if cfg.labels.is_empty()
            || cfg.features.len() != cfg.labels.len() * width
            || cfg.order.len() != cfg.labels.len()
            || cfg.params.len() != net.layout().param_count
            || net.depth() == 0
        {
            return Err(GpuError::WrongJob);
        }
        let eval_rows = cfg.eval_features.len() / width.max(1);
        let limits = gpu.buffer_limits();
        let ceiling = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        for rows in [batch, eval_rows.max(1)] {
            let bytes = activation_bytes(&net, rows);
            if bytes > ceiling {
                return Err(GpuError::Dispatch(format!(
                    "{rows} rows need {bytes} bytes of activations, more than this device's \
                     {ceiling}-byte storage buffer limit"
                )));
            }
        }
        let rows = cfg.labels.len();
        let compile = |batch: usize| {
            engine::Net::compile(&model(&net, batch, rows, accum)).map_err(GpuError::Dispatch)
        };
        let (compiled, eval_net) = (compile(batch)?, compile(eval_rows.max(1))?);
        let not_mlp = || GpuError::Dispatch("the arena is not the MLP's".into());
        let map = Map::new(&net, &compiled).ok_or_else(not_mlp)?;
        let places = Places::of(&compiled).ok_or_else(not_mlp)?;
        let eval_places = Places::of(&eval_net).ok_or_else(not_mlp)?;
        let pinned: Vec<&'static str> = replacements.iter().map(|k| k.id).collect();
        let paths = cfg.paths;
        let opts = StepOptions {
            accum,
            pinned: &pinned,
            paths,
        };
        let mut plan = step_plan_at(&net, &cfg.hyper, batch, rows, opts, places);
        let sums_into_grads = plan
            .iter()
            .any(|p| matches!(p.kernel_id, "mlp-backward-params" | "mlp-grad-reduce"));
        if accum > 1 && !sums_into_grads {
            return Err(GpuError::Dispatch(
                "gradient accumulation needs the per-layer step path".into(),
            ));
        }
        // The gather advances Adam's step counter once per update: after `accum` micro-batches.
        if let Some(gather) = plan
            .iter_mut()
            .find(|p| matches!(p.kernel_id, "mlp-forward-gather" | "mlp-gather"))
        {
            gather.uniform.set("accum", accum as u32);
        }
        // The loss's mean is over the update's rows; the engine makes micro-batch j's copy
        // with its losses from row j·batch.
        if let Some(at) = plan
            .iter()
            .position(|p| matches!(p.kernel_id, "mlp-loss" | "mlp-forward-loss"))
        {
            plan[at] = micro_loss(&plan[at], batch, accum, 0);
        }
        let eval_plan = forward_plan_at(&net, eval_rows.max(1), &pinned, paths, eval_places);
        // 64 lane sums per parameter where the workgroup-memory step runs, else the tiled
        // gradients' slices.
        let lanes = plan.iter().any(|p| p.kernel_id == "mlp-step-lanes");
        let scratch_words = if lanes {
            net.layout().param_count * LANES as usize
        } else {
            partials_len(&net, batch, &pinned, paths)
        };
        let rewrite = Rewrite {
            dispatches: plan.iter().map(|p| record(p, false, &compiled)).collect(),
            scratch_words,
            accum,
            clear_grads: sums_into_grads,
            eval: Some(
                eval_plan
                    .iter()
                    .map(|p| record(p, true, &eval_net))
                    .collect(),
            ),
        };
        let mut extra = data_buffers(&cfg.features, &cfg.labels, width, &cfg.order)
            .ok_or(GpuError::WrongJob)?;
        extra.push(ResidentBuffer {
            name: LABELS,
            init: Init::Zeroed(batch as u64 * 4),
        });
        let classes = net.classes();
        let flag_words = flag.map_or(0, |f| f.words.max(1));
        let param_words = compiled.param_words();
        let readback =
            ((eval_rows * classes + accum * batch + param_words + flag_words) * 4) as u64;
        let setup = Setup {
            optimiser: optimiser(&cfg.hyper),
            extra,
            readback,
            eval: Some(eval_net.clone()),
            replacements,
            flag,
            rewrite: Some(rewrite),
        };
        let params = map.to_arena(cfg.params, param_words);
        let engine = Engine::build(gpu, compiled.clone(), &params, setup).await?;
        // The evaluation rows go where its forward reads its input, once.
        let eval_in = &cfg.eval_features[..eval_rows * width];
        engine.write(
            engine::buffer::EVAL_ACTS,
            (eval_net.input.act.at * 4) as u64,
            bytemuck::cast_slice(eval_in),
        )?;
        let last = eval_places_output(&eval_net).ok_or_else(not_mlp)?;
        Ok(Self {
            net,
            hyper: cfg.hyper,
            accum,
            plan,
            engine,
            map,
            logits: Range {
                at: last.at,
                len: eval_rows * classes,
            },
            losses: compiled.losses,
            read_step: 0,
            flag_words,
        })
    }

    /// The dispatches of one step, for showing (kernel id, layer, workgroups).
    pub fn plan(&self) -> &[PlannedDispatch] {
        &self.plan
    }

    pub fn net(&self) -> &Net {
        &self.net
    }

    /// Changes the learning rate from the next step on (the only uniform a step's kernels
    /// get from the CPU after the session is made, written only here).
    pub fn set_lr(&mut self, lr: f32) {
        self.hyper.lr = lr;
        // The engine's own buffers and dispatches: the write cannot miss.
        let _ = self.engine.set_lr(lr);
    }

    /// Steps submitted so far.
    pub fn steps_submitted(&self) -> u64 {
        self.engine.steps()
    }

    /// Steps the GPU has finished (counted by `on_submitted_work_done`, never waited for).
    pub fn steps_completed(&self) -> u64 {
        self.engine.units_completed()
    }

    /// Micro-batches per update.
    pub fn accum(&self) -> usize {
        self.accum
    }

    /// Submits one training step (one command buffer) without waiting for it. With gradient
    /// accumulation the step is `accum` micro-batches in one compute pass, each gathering its
    /// own rows on the GPU; the gradients are cleared before the first and only the last ends
    /// with the optimiser.
    pub fn step(&mut self) -> Result<(), GpuError> {
        self.steps(1)
    }

    /// Submits `count` training steps recorded back to back in one command buffer (one compute
    /// pass per step), without waiting. Each step picks its batch and advances the step state
    /// on the GPU, so nothing is written between them.
    pub fn steps(&mut self, count: u32) -> Result<(), GpuError> {
        if self.device_lost() {
            return Err(GpuError::DeviceLost("lost while training".into()));
        }
        if count == 0 {
            return Ok(());
        }
        self.engine.run(TRAIN_STEP, count as u64)
    }

    /// Resolves when every step submitted so far has finished on the GPU (for timing in the
    /// browser, where nothing may block).
    pub fn finished(&self) -> impl std::future::Future<Output = Result<(), GpuError>> {
        self.engine.finished()
    }

    /// Every step submitted so far has finished: natively by waiting on the device (under
    /// `pollster` nothing else would poll it), in the browser by the queue's callback.
    pub async fn drained(&self) -> Result<(), GpuError> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.wait();
        #[cfg(target_arch = "wasm32")]
        return self.finished().await;
    }

    /// Natively, lets wgpu run finished callbacks without waiting; in the browser they run on
    /// their own and this does nothing.
    pub fn poll(&self) {
        self.engine.poll();
    }

    /// Natively, waits until every submitted step has finished (benchmarks and tests).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<(), GpuError> {
        self.engine.wait()
    }

    /// The device the session runs on.
    pub fn gpu(&self) -> &Rc<Gpu> {
        self.engine.gpu()
    }

    /// Whether the session's device has been lost (wgpu's lost callback fired). A destroyed
    /// device may never report submitted work as done, so a caller waiting for completions
    /// must ask this too.
    pub fn device_lost(&self) -> bool {
        self.engine.gpu().is_lost()
    }

    /// Whether an evaluation readback is on its way.
    pub fn eval_pending(&self) -> bool {
        self.engine.read_pending()
    }

    /// Starts an evaluation (forward pass over the evaluation rows, then an asynchronous map).
    /// Returns false, doing nothing, while the previous one has not been collected.
    pub fn request_eval(&mut self) -> Result<bool, GpuError> {
        if self.device_lost() {
            return Err(GpuError::DeviceLost("lost while training".into()));
        }
        let words = self.engine.net().param_words();
        let mut ranges = vec![
            self.logits.read(engine::buffer::EVAL_ACTS),
            self.losses.read(engine::buffer::DELTAS),
            Range { at: 0, len: words }.read(engine::buffer::PARAMS),
        ];
        if self.flag_words > 0 {
            ranges.push(ReadRange {
                buffer: LOOP_FLAG,
                offset: 0,
                bytes: self.flag_words as u64 * 4,
            });
        }
        let started = self.engine.request_read_after(EVAL_FORWARD, &ranges)?;
        if started {
            self.read_step = self.steps_submitted();
        }
        Ok(started)
    }

    /// The evaluation, if its readback has arrived (never waits).
    pub fn poll_eval(&mut self) -> Result<Option<EvalReadback>, GpuError> {
        let Some(floats) = self.engine.poll_read()? else {
            return Ok(None);
        };
        let n = self.logits.len;
        let losses = self.losses.len;
        let words = self.engine.net().param_words();
        let end = n + losses + words;
        if floats.len() < end + self.flag_words {
            return Err(GpuError::Readback("short evaluation readback".into()));
        }
        Ok(Some(EvalReadback {
            step: self.read_step,
            logits: floats[..n].to_vec(),
            batch_losses: floats[n..n + losses].to_vec(),
            params: self.map.params_of(&floats[n + losses..end]),
            loop_flag: floats[end..end + self.flag_words]
                .iter()
                .map(|f| f.to_bits())
                .collect(),
        }))
    }

    /// Natively: an evaluation now, waiting for it (tests and benchmarks).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn eval_blocking(&mut self) -> Result<EvalReadback, GpuError> {
        if self.eval_pending() {
            self.wait()?;
            let _ = self.poll_eval()?;
        }
        self.request_eval()?;
        self.wait()?;
        self.poll_eval()?
            .ok_or_else(|| GpuError::Readback("no evaluation arrived".into()))
    }

    /// Writes new parameters (for tests that start the GPU and CPU from the same point).
    pub fn write_params(&self, params: &[f32]) {
        let arena = self.map.to_arena(params, self.engine.net().param_words());
        // The buffer is the engine's own, so the name always resolves.
        let _ = self
            .engine
            .write(engine::buffer::PARAMS, 0, bytemuck::cast_slice(&arena));
    }
}

/// The output layer's activations in an MLP arena.
fn eval_places_output(net: &engine::Net) -> Option<Range> {
    net.nodes.iter().rev().find_map(|n| match n {
        engine::Node::Perceptron { y, .. } => Some(y.act),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::kernel;
    use crate::family::mlp::bindings;
    use mlp::net::adam_corrections;
    use mlp::{Activation, LossKind};

    fn hyper() -> Hyper {
        Hyper {
            lr: 0.1,
            optimiser: Optimiser::Adam,
            l1: 0.0,
            l2: 0.0,
        }
    }

    /// The sums' length follows the kernels' order (lanes of 64, six halvings, micro-batches
    /// in turn), and the bound grows with it as the derivation says: 1 + γ_L/u + 6.5 ulps.
    #[test]
    fn the_parameter_bound_grows_with_the_batch_sums_length() {
        assert_eq!(batch_sum_len(1, 1), 7);
        assert_eq!(batch_sum_len(64, 1), 7);
        assert_eq!(batch_sum_len(65, 1), 8);
        assert_eq!(batch_sum_len(1024, 1), 22);
        assert_eq!(batch_sum_len(300, 2), 12);
        assert!((param_ulps_per_step(7) - 14.5).abs() < 1e-4);
        assert!((param_ulps_per_step(22) - 29.5).abs() < 1e-4);
        let gap = 14.0 * 10.0 * f32::EPSILON;
        assert!(param_gap_ratio(&[1.0 + gap], &[1.0], 10, 7) < 1.0);
        assert!(param_gap_ratio(&[1.0 + 2.0 * gap], &[1.0], 10, 7) > 1.0);
        assert!(param_gap_ratio(&[f32::NAN], &[1.0], 10, 7).is_infinite());
    }

    #[test]
    fn a_small_net_trains_in_two_dispatches_per_step() {
        let net = Net {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        // Only when asked for (it measured slower on the H200).
        let samples = PathOptions::step(StepPath::Samples);
        assert!(!fused(&net, PathOptions::default()));
        assert!(fused(&net, samples));
        let opts = StepOptions {
            paths: samples,
            ..StepOptions::default()
        };
        let plan = step_plan_with(&net, &hyper(), 1024, 5000, opts);
        let ids: Vec<&str> = plan.iter().map(|p| p.kernel_id).collect();
        assert_eq!(ids, ["mlp-step-samples", "mlp-step-params"]);
        assert_eq!(plan[0].workgroups, [16, 1, 1]); // one thread per sample
        assert_eq!(plan[1].workgroups, [16 * 3 + 16 * 17 + 2 * 17, 1, 1]); // one per parameter
        let u = &plan[0].uniform;
        assert_eq!(
            &u[..6],
            &[
                1024,
                5000,
                3,
                LossKind::CrossEntropy as u32,
                1,
                adam_correction_table().len() as u32
            ]
        );
        assert_eq!(f32::from_bits(u[8]), 0.1);
        // Layer 2: 16 → 16, ReLU, its parameters' first workgroup after layer 1's 48.
        let (offs, _) = net.act_offsets(1024);
        let l2 = net.layout().layers[1];
        assert_eq!(
            &u[24..32],
            &[
                16,
                16,
                Activation::Relu as u32,
                l2.w_off as u32,
                l2.b_off as u32,
                offs[1] as u32,
                offs[2] as u32,
                48
            ]
        );
        // The output layer is linear.
        assert_eq!(u[32 + 2], 0);
        assert_eq!(plan[0].uniform, plan[1].uniform);
        for p in &plan {
            assert_eq!(p.layer, 0);
            assert!(kernel(p.kernel_id).is_some(), "{}", p.kernel_id);
            // At most 8 storage buffers per stage (WebGPU's default limit).
            assert!(bindings(p.kernel_id).len() <= 8, "{}", p.kernel_id);
        }
        // Too wide or too deep: per layer.
        let wide = Net {
            sizes: vec![2, 65, 2],
            ..net.clone()
        };
        assert!(!fused(&wide, samples));
        let deep = Net {
            sizes: vec![2; 10],
            ..net
        };
        assert!(!fused(&deep, samples));
    }

    #[test]
    fn plan_of_a_wide_two_hidden_layer_net() {
        let net = Net {
            sizes: vec![2, 16, 80, 2],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        // With gradient accumulation: a gradient kernel per layer, then the optimiser.
        let opts = StepOptions {
            accum: 2,
            pinned: &[],
            ..StepOptions::default()
        };
        let plan = step_plan_with(&net, &hyper(), 1024, 5000, opts);
        let ids: Vec<&str> = plan.iter().map(|p| p.kernel_id).collect();
        assert_eq!(
            ids,
            [
                "mlp-forward-gather",
                "mlp-forward",
                "mlp-forward-loss",
                "mlp-backward-params",
                "mlp-backward-params",
                "mlp-backward-input",
                "mlp-backward-params",
                "optim-adam"
            ]
        );
        assert_eq!(plan[0].workgroups, [256, 1, 1]); // 1024 × 16 / 64
        assert_eq!(plan[2].workgroups, [16, 1, 1]); // one thread per sample
        assert_eq!(plan[2].uniform[9], LossKind::CrossEntropy as u32);
        assert_eq!(plan[3].threads, 2 * 81 * 64);
        assert_eq!(plan[3].workgroups, [162, 1, 1]);
        assert_eq!(plan[7].threads, 48 + 1360 + 162);
        // The fused output layer also sends the gradient below it (ReLU's derivative).
        assert_eq!(plan[2].uniform[12], Activation::Relu as u32);
        // The output layer is linear, hidden layers use the chosen activation.
        assert_eq!(plan[2].uniform[3], 0);
        assert_eq!(plan[0].uniform[3], Activation::Relu as u32);
        assert_eq!(plan[0].uniform[8], 5000); // rows of the training set
                                              // Adam: the correction table's length, no per-step numbers.
        let table = adam_correction_table();
        assert_eq!(plan[7].uniform[9], table.len() as u32);
        assert_eq!(table[0], {
            let (a, b) = adam_corrections(1);
            [a, b]
        });
        assert_eq!(*table.last().expect("entries"), [1.0, 1.0]);
        // Past the table's end the CPU's numbers are the last entry's.
        assert_eq!(adam_corrections(table.len() as u32 + 1000), (1.0, 1.0));
        assert!(
            table.len() > 1000 && table.len() < 30_000,
            "{}",
            table.len()
        );
        for p in &plan {
            assert!(bindings(p.kernel_id).len() >= 2, "{}", p.kernel_id);
            assert!(bindings(p.kernel_id).len() <= 8, "{}", p.kernel_id);
            assert!(kernel(p.kernel_id).is_some(), "{}", p.kernel_id);
        }
        // Without a hidden layer the gathering layer is the output layer: a separate loss.
        let flat = Net {
            sizes: vec![2, 100],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        let ids: Vec<&str> = step_plan(&flat, &hyper(), 8, 100)
            .iter()
            .map(|p| p.kernel_id)
            .collect();
        assert_eq!(ids, ["mlp-forward-gather", "mlp-loss", "mlp-step-params"]);
    }

    fn ids_of(plan: &[PlannedDispatch]) -> Vec<&'static str> {
        plan.iter().map(|p| p.kernel_id).collect()
    }

    #[test]
    fn a_small_net_steps_in_two_workgroup_memory_dispatches_by_default() {
        let net = Net {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        let default = PathOptions::default();
        assert!(lanes_fit(&net, 1, default));
        let plan = step_plan(&net, &hyper(), 1024, 5000);
        assert_eq!(ids_of(&plan), ["mlp-step-lanes", "mlp-step-reduce"]);
        let count = net.layout().param_count as u32;
        assert_eq!(count, 354);
        // One workgroup of 256 per lane; one of 64 per parameter.
        assert_eq!(plan[0].workgroups, [64, 1, 1]);
        assert_eq!(plan[1].workgroups, [count, 1, 1]);
        assert_eq!(plan[0].uniform, plan[1].uniform);
        assert!(plan.iter().all(|p| p.layer == 0)); // `set_lr` rewrites both
        let u = &plan[0].uniform;
        // Batch 1,024: 16 samples per lane, all in one chunk (2 · 36 floats each).
        assert_eq!(lane_chunk(&net, 1024), 16);
        assert_eq!(
            &u[4..8],
            &[1, adam_correction_table().len() as u32, 16, count]
        );
        // Layer offsets are in workgroup memory for 16 rows: inputs at 0, layer 1 at 32,
        // layer 2 at 32 + 256, the logits at 32 + 512; parameters numbered 0, 48, 320.
        for (l, (inn, out, first)) in [(0, 32, 0), (32, 288, 48), (288, 544, 320)]
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                &u[16 + 8 * l + 5..16 + 8 * l + 8],
                &[inn, out, first],
                "{l}"
            );
        }
        // The chunk's activations and deltas fit the workgroup array.
        assert!(2 * 16 * net.sizes.iter().sum::<usize>() <= LANE_MEM_FLOATS);
        // The widest, deepest network allowed still fits at least one sample (three).
        let widest = Net {
            sizes: vec![64; 9],
            ..net.clone()
        };
        assert!(lanes_fit(&widest, 1, default));
        assert_eq!(lane_chunk(&widest, 1024), 3);
        assert_eq!(lane_chunk(&net, 1), 1);
        assert_eq!(lane_chunk(&net, 65), 2);
        // The WGSL's array and thread count are these constants.
        let wgsl = kernel("mlp-step-lanes").expect("catalogued").wgsl();
        assert!(wgsl.contains(&format!(
            "var<workgroup> mem: array<f32, {LANE_MEM_FLOATS}>;"
        )));
        assert!(wgsl.contains(&format!("const LANES: u32 = {LANES}u;")));
        assert!(wgsl.contains(&format!("const THREADS: u32 = {LANE_THREADS}u;")));
        assert!(wgsl.contains(&format!("@workgroup_size({LANE_THREADS})")));
        for p in &plan {
            assert!(bindings(p.kernel_id).len() <= 7, "{}", p.kernel_id);
            assert!(kernel(p.kernel_id).is_some(), "{}", p.kernel_id);
        }
        // Not with accumulation, not past 64 neurons or 8 layers, not when per layer is forced.
        assert!(!lanes_fit(&net, 2, default));
        let wide = Net {
            sizes: vec![2, 65, 2],
            ..net.clone()
        };
        assert!(!lanes_fit(&wide, 1, default));
        assert!(!lanes_fit(
            &Net {
                sizes: vec![2; 10],
                ..net.clone()
            },
            1,
            default
        ));
        let layers = PathOptions::step(StepPath::Layers);
        assert!(!lanes_fit(&net, 1, layers));
        let opts = StepOptions {
            paths: layers,
            ..StepOptions::default()
        };
        assert_eq!(
            ids_of(&step_plan_with(&net, &hyper(), 1024, 5000, opts)).len(),
            5
        );
        assert!(lanes_fit(&net, 1, PathOptions::step(StepPath::Lanes)));
        // Past 65,535 parameters the reduce grid wraps (a 64-wide, 8-layer net has fewer).
        assert_eq!(per_param_grid(widest.layout().param_count as u32)[1], 1);
    }

    #[test]
    fn per_layer_the_optimiser_runs_inside_the_gradient_kernel() {
        let net = Net {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        let layers = StepOptions {
            paths: PathOptions::step(StepPath::Layers),
            ..StepOptions::default()
        };
        let plan = step_plan_with(&net, &hyper(), 1024, 5000, layers);
        // Every delta before any parameter changes (the output layer's dispatch also sends
        // the gradient one layer down), then one workgroup per parameter.
        assert_eq!(
            ids_of(&plan),
            [
                "mlp-forward-gather",
                "mlp-forward",
                "mlp-forward-loss",
                "mlp-backward-input",
                "mlp-step-params"
            ]
        );
        assert_eq!(plan[3].layer, 2);
        let count = net.layout().param_count as u32;
        assert_eq!(plan[4].workgroups, [count, 1, 1]);
        assert_eq!(plan[4].layer, 0); // `set_lr` rewrites its uniform
        assert_eq!(f32::from_bits(plan[4].uniform[8]), 0.1);
        // Its layer table: layer 3 (16 → 2) reads the deltas the fused loss wrote, and
        // layer 2 the ones it sent down (at the activations' offsets).
        let (offs, _) = net.act_offsets(1024);
        assert_eq!(plan[4].uniform[16 + 2 * 8 + 5], offs[2] as u32);
        assert_eq!(plan[4].uniform[16 + 2 * 8 + 6], offs[3] as u32);
        assert_eq!(plan[4].uniform[16 + 8 + 6], offs[2] as u32);
        assert_eq!(plan[2].uniform[8], offs[3] as u32);
        assert_eq!(plan[2].uniform[6], offs[2] as u32);
        assert_eq!(plan[3].uniform[7], offs[2] as u32); // backward-input 2 reads them
                                                        // Wide layers kept on the per-element kernels (as an edit of one of them would):
                                                        // the per-parameter kernel still takes every parameter.
        let untiled = StepOptions {
            paths: PathOptions {
                step: Some(StepPath::Layers),
                tiled: Some(false),
            },
            ..StepOptions::default()
        };
        let wide = Net {
            sizes: vec![2, 128, 128, 2],
            ..net.clone()
        };
        assert!(
            ids_of(&step_plan_with(&wide, &hyper(), 64, 100, untiled)).contains(&"mlp-step-params")
        );
        let wider = Net {
            sizes: vec![2, 256, 256, 2],
            ..net.clone()
        };
        // Past 65,535 parameters the per-parameter grid wraps into y instead.
        let count = wider.layout().param_count as u32;
        assert!(count > 65_535);
        let plan = step_plan_with(&wider, &hyper(), 64, 100, untiled);
        let last = plan.last().map(|p| (p.kernel_id, p.workgroups));
        assert_eq!(last, Some(("mlp-step-params", [count.div_ceil(2), 2, 1])));
        assert_eq!(per_param_grid(65_535), [65_535, 1, 1]);
        assert_eq!(per_param_grid(65_536), [32_768, 2, 1]);
        assert_eq!(per_param_grid(3 * 65_535 + 1), [49_152, 4, 1]);
        assert_eq!(per_param_grid(0), [1, 1, 1]);
        // Too deep for its table: per layer.
        let deep = Net {
            sizes: vec![2; 10],
            ..net
        };
        assert_eq!(
            ids_of(&step_plan_with(&deep, &hyper(), 64, 100, layers)).last(),
            Some(&"optim-adam")
        );
    }

    #[test]
    fn a_pinned_kernel_always_runs() {
        let net = Net {
            sizes: vec![2, 8, 8, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
        };
        let plan_with = |pinned: &[&str]| {
            let opts = StepOptions {
                accum: 1,
                pinned,
                ..StepOptions::default()
            };
            ids_of(&step_plan_with(&net, &hyper(), 16, 100, opts))
        };
        // The edited loss: the output layer and the loss as two dispatches.
        assert_eq!(
            plan_with(&["mlp-loss"]),
            [
                "mlp-forward-gather",
                "mlp-forward",
                "mlp-forward",
                "mlp-loss",
                "mlp-backward-input",
                "mlp-backward-input",
                "mlp-step-params"
            ]
        );
        // The edited dense layer runs on every layer, the first included.
        assert_eq!(
            plan_with(&["mlp-forward"]),
            [
                "mlp-gather",
                "mlp-forward",
                "mlp-forward",
                "mlp-forward",
                "mlp-loss",
                "mlp-backward-input",
                "mlp-backward-input",
                "mlp-step-params"
            ]
        );
        assert_eq!(
            plan_with(&["mlp-gather"])[..2],
            ["mlp-gather", "mlp-forward"]
        );
        // An edited gradient kernel or optimiser: the separate kernels.
        for id in ["mlp-backward-params", "optim-adam"] {
            let ids = plan_with(&[id]);
            assert!(
                ids.contains(&id) && !ids.contains(&"mlp-step-params"),
                "{ids:?}"
            );
            assert_eq!(
                &ids[..3],
                ["mlp-forward-gather", "mlp-forward", "mlp-forward-loss"]
            );
        }
        // The fused kernels themselves run where they are pinned.
        for id in [
            "mlp-forward-gather",
            "mlp-forward-loss",
            "mlp-backward-input",
            "mlp-step-params",
            "mlp-step-lanes",
            "mlp-step-reduce",
        ] {
            assert!(plan_with(&[id]).contains(&id), "{id}");
        }
        // Nothing pinned: the two workgroup-memory dispatches.
        assert_eq!(plan_with(&[]), ["mlp-step-lanes", "mlp-step-reduce"]);
        assert_eq!(
            plan_with(&["mlp-step-samples"]),
            ["mlp-step-samples", "mlp-step-params"]
        );
        // Every kernel a fused one replaces is catalogued, and so is every fused one.
        for (fused_id, parts) in FUSED_REPLACES {
            assert!(kernel(fused_id).is_some(), "{fused_id}");
            for part in *parts {
                assert!(kernel(part).is_some(), "{part}");
                assert!(!may_fuse(fused_id, &[part]), "{fused_id} / {part}");
            }
        }
        // The gathering kernel's uniform: the first layer's, with the training set's rows.
        let opts = StepOptions {
            accum: 1,
            pinned: &["mlp-forward"],
            ..StepOptions::default()
        };
        let plan = step_plan_with(&net, &hyper(), 16, 100, opts);
        assert_eq!(plan[0].workgroups, [1, 1, 1]); // 16 × 2 inputs
        assert_eq!(plan[0].uniform[..8], plan[1].uniform[..8]);
        assert_eq!(plan[0].uniform[8], 100);
        assert_eq!(bindings("mlp-gather").len(), 6);
    }

    #[test]
    fn wide_layers_run_as_tiled_matmuls() {
        let net = Net {
            sizes: vec![2, 256, 256, 2],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        let plan = step_plan(&net, &hyper(), 4096, 5000);
        // Only layer 2 (256 → 256) is wide; its gradient is summed apart from the optimiser,
        // so the narrow layers keep the per-parameter gradient kernel and Adam runs after.
        assert_eq!(
            ids_of(&plan),
            [
                "mlp-forward-gather",
                "mlp-forward-tiled",
                "mlp-forward-loss",
                "mlp-backward-params",
                "mlp-grad-tiled",
                "mlp-grad-reduce",
                "mlp-backward-input-tiled",
                "mlp-backward-params",
                "optim-adam"
            ]
        );
        assert!((1..=3)
            .map(|l| wide(&net, l, PathOptions::default()))
            .eq([false, true, false]));
        let (offs, _) = net.act_offsets(4096);
        let l2 = net.layout().layers[1];
        // 64 × 64 output tiles: 4 × 64 for 4,096 × 256.
        assert_eq!(plan[1].workgroups, [4, 64, 1]);
        assert_eq!(plan[6].workgroups, [4, 64, 1]);
        // The gradient: 257 columns (the bias last) × 256 rows of tiles, 64 batch slices.
        assert_eq!(plan[4].workgroups, [5, 4, 64]);
        assert_eq!(plan[4].layer, 2);
        assert_eq!(
            plan[4].uniform[..8],
            [
                4096,
                256,
                256,
                offs[1] as u32,
                offs[2] as u32,
                l2.w_off as u32,
                l2.b_off as u32,
                64
            ]
        );
        assert_eq!(plan[5].uniform, plan[4].uniform);
        assert_eq!(plan[5].workgroups, [(256 * 257u32).div_ceil(64), 1, 1]);
        assert_eq!(
            partials_len(&net, 4096, &[], PathOptions::default()),
            64 * 256 * 257
        );
        // A batch under 64: one slice per sample.
        let small = step_plan(&net, &hyper(), 37, 5000);
        assert_eq!(small[4].workgroups, [5, 4, 37]);
        assert_eq!(small[4].uniform[7], 37);
        // Every grid within WebGPU's default 65,535 workgroups per dimension.
        for p in &plan {
            assert!(
                p.workgroups.iter().all(|&g| (1..=65_535).contains(&g)),
                "{p:?}"
            );
        }
        // The evaluation's forward pass is tiled the same way.
        let eval = forward_plan(&net, 1600);
        assert_eq!(
            ids_of(&eval),
            ["mlp-forward", "mlp-forward-tiled", "mlp-forward"]
        );
        assert_eq!(eval[1].workgroups, [4, 25, 1]);
        // An edited per-element kernel keeps its layer off the tiled one; the others stay tiled.
        fn opts<'a>(pinned: &'a [&'a str]) -> StepOptions<'a> {
            StepOptions {
                accum: 1,
                pinned,
                ..StepOptions::default()
            }
        }
        let ids = ids_of(&step_plan_with(
            &net,
            &hyper(),
            64,
            100,
            opts(&["mlp-forward"]),
        ));
        assert!(ids.contains(&"mlp-forward") && !ids.contains(&"mlp-forward-tiled"));
        assert!(ids.contains(&"mlp-grad-tiled"), "{ids:?}");
        let ids = ids_of(&step_plan_with(
            &net,
            &hyper(),
            64,
            100,
            opts(&["mlp-backward-params"]),
        ));
        assert!(!ids.contains(&"mlp-grad-tiled") && ids.contains(&"mlp-forward-tiled"));
        assert_eq!(
            partials_len(&net, 64, &["mlp-backward-params"], PathOptions::default()),
            0
        );
        // A pinned tiled kernel runs on a narrow network too (the editor's edited copy).
        let narrow = Net {
            sizes: vec![2, 8, 8, 2],
            ..net.clone()
        };
        for id in [
            "mlp-forward-tiled",
            "mlp-backward-input-tiled",
            "mlp-grad-tiled",
            "mlp-grad-reduce",
        ] {
            let pinned = [id];
            let ids = ids_of(&step_plan_with(&narrow, &hyper(), 16, 100, opts(&pinned)));
            assert!(ids.contains(&id), "{id}: {ids:?}");
        }
        // Too large for the partial sums' binding (64 × 1024 × 1025 floats): per parameter.
        let huge = Net {
            sizes: vec![2, 1024, 1024, 2],
            ..net.clone()
        };
        let ids = ids_of(&step_plan(&huge, &hyper(), 64, 100));
        assert!(!ids.contains(&"mlp-grad-tiled") && ids.contains(&"mlp-forward-tiled"));
        // Forced on: every layer tiled, the output layer's gradient and all.
        let all_tiled = StepOptions {
            paths: PathOptions::tiled(Some(true)),
            ..StepOptions::default()
        };
        let ids = ids_of(&step_plan_with(&narrow, &hyper(), 16, 100, all_tiled));
        assert_eq!(ids.iter().filter(|&&i| i == "mlp-grad-tiled").count(), 3);
    }

    #[test]
    fn memory_sets_the_batch_ceiling() {
        let net = Net {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
        };
        let limits = BufferLimits {
            max_storage_buffer_binding_size: 128 << 20,
            max_buffer_size: 256 << 20,
        };
        assert_eq!(max_batch(&net, &limits), (128 << 20) / (36 * 4));
    }
}
