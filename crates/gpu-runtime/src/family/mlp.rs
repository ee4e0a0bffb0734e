//! The tiny MLP's training kernels and what each binds. They run no [`crate::Job`]: a
//! [`crate::training::TrainingSession`] runs them on the training engine, binding the arena's
//! buffers for each of [`bindings`]'s slots (each file's header lists the same), and sizes
//! their grids with [`crate::training::step_plan_at`]. [`buffer`] names the buffers of the
//! Dawn runner's plan (`bench`'s `mlp_bench::dump`), which keeps `mlp::net`'s packed layouts.

use cpu_kernels::verify::Precision;

use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;

const MLP_FORWARD: &str = include_str!("../../../../shaders/mlp_forward.wgsl");
const MLP_FORWARD_GATHER: &str = include_str!("../../../../shaders/mlp_forward_gather.wgsl");
const MLP_GATHER: &str = include_str!("../../../../shaders/mlp_gather.wgsl");
const MLP_FORWARD_LOSS: &str = include_str!("../../../../shaders/mlp_forward_loss.wgsl");
const MLP_STEP_SAMPLES: &str = include_str!("../../../../shaders/mlp_step_samples.wgsl");
const MLP_STEP_PARAMS: &str = include_str!("../../../../shaders/mlp_step_params.wgsl");
const MLP_STEP_LANES: &str = include_str!("../../../../shaders/mlp_step_lanes.wgsl");
const MLP_STEP_REDUCE: &str = include_str!("../../../../shaders/mlp_step_reduce.wgsl");
const MLP_LOSS: &str = include_str!("../../../../shaders/mlp_loss.wgsl");
const MLP_BACKWARD_PARAMS: &str = include_str!("../../../../shaders/mlp_backward_params.wgsl");
const MLP_BACKWARD_INPUT: &str = include_str!("../../../../shaders/mlp_backward_input.wgsl");
const MLP_FORWARD_TILED: &str = include_str!("../../../../shaders/mlp_forward_tiled.wgsl");
const MLP_BACKWARD_INPUT_TILED: &str =
    include_str!("../../../../shaders/mlp_backward_input_tiled.wgsl");
const MLP_GRAD_TILED: &str = include_str!("../../../../shaders/mlp_grad_tiled.wgsl");
const MLP_GRAD_REDUCE: &str = include_str!("../../../../shaders/mlp_grad_reduce.wgsl");
/// What several MLP kernels share (activations, the step blocks); appended, as the matmul
/// family appends `matmul_regtile_common.wgsl`, so a kernel's own lines keep their numbers.
const MLP_COMMON: &str = include_str!("../../../../shaders/mlp_common.wgsl");

/// MLP kernels take one thread per element of a layer, 64 to a workgroup; the training
/// session computes that count per layer, so a workload gives them no grid.
fn grid_mlp(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

/// An MLP kernel: one file, entry point `main`, 64 threads per workgroup, f32.
const fn mlp_kernel(
    id: &'static str,
    source_path: &'static str,
    source: fn() -> String,
    title_key: &'static str,
    summary_key: &'static str,
) -> KernelSpec {
    sized_kernel(id, source_path, source, 64, title_key, summary_key)
}

/// The wide layers' register-tiled kernels (`training::wide`): 256 threads (16 × 16), each
/// owning a 4 × 4 block of a 64 × 64 output tile.
const fn tiled_kernel(
    id: &'static str,
    source_path: &'static str,
    source: fn() -> String,
    title_key: &'static str,
    summary_key: &'static str,
) -> KernelSpec {
    sized_kernel(id, source_path, source, 256, title_key, summary_key)
}

/// An MLP kernel of `threads` threads per workgroup.
const fn sized_kernel(
    id: &'static str,
    source_path: &'static str,
    source: fn() -> String,
    threads: u32,
    title_key: &'static str,
    summary_key: &'static str,
) -> KernelSpec {
    KernelSpec {
        id,
        source_path,
        source: KernelSource::Built(source),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [threads, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key,
        summary_key,
    }
}

/// The MLP kernels' uniform structs, word by word as each file declares it
/// (`tests/dispatch_interfaces.rs` checks them against the WGSL).
pub mod uniform {
    use crate::plan::UniformLayout;

    /// `mlp-forward`, `mlp-forward-tiled`.
    pub static DENSE: UniformLayout = UniformLayout {
        name: "Dense",
        words: &[
            "batch", "fan_in", "fan_out", "act", "w_off", "b_off", "in_off", "out_off",
        ],
    };
    /// `mlp-forward-gather`, `mlp-gather`: a dense layer's words, the training set's rows
    /// and the micro-batches per update.
    pub static GATHER: UniformLayout = UniformLayout {
        name: "Gather",
        words: &[
            "batch", "fan_in", "fan_out", "act", "w_off", "b_off", "in_off", "out_off", "rows",
            "accum", "pad1", "pad2",
        ],
    };
    /// `mlp-forward-loss`.
    pub static HEAD: UniformLayout = UniformLayout {
        name: "Head",
        words: &[
            "batch",
            "fan_in",
            "classes",
            "act",
            "w_off",
            "b_off",
            "in_off",
            "out_off",
            "delta_off",
            "kind",
            "mean_over",
            "loss_off",
            "below_act",
            "pad0",
            "pad1",
            "pad2",
        ],
    };
    /// `mlp-loss`.
    pub static LOSS: UniformLayout = UniformLayout {
        name: "Loss",
        words: &[
            "batch",
            "classes",
            "logits_off",
            "delta_off",
            "kind",
            "mean_over",
            "loss_off",
            "pad",
        ],
    };
    /// `mlp-backward-input`, `mlp-backward-input-tiled`.
    pub static BACK: UniformLayout = UniformLayout {
        name: "Back",
        words: &[
            "batch",
            "fan_in",
            "fan_out",
            "act",
            "w_off",
            "in_off",
            "in_delta_off",
            "out_delta_off",
        ],
    };
    /// `mlp-backward-params`.
    pub static GRAD: UniformLayout = UniformLayout {
        name: "Grad",
        words: &[
            "batch",
            "fan_in",
            "fan_out",
            "in_off",
            "delta_off",
            "w_off",
            "b_off",
            "pad",
        ],
    };
    /// `mlp-grad-tiled`, `mlp-grad-reduce`: [`GRAD`] with the batch slices last.
    pub static GRAD_TILED: UniformLayout = UniformLayout {
        name: "Grad",
        words: &[
            "batch",
            "fan_in",
            "fan_out",
            "in_off",
            "delta_off",
            "w_off",
            "b_off",
            "slices",
        ],
    };
    /// The whole-step kernels' `StepNet` (`mlp_common.wgsl`): four vec4 headers, then a
    /// table of two vec4 per layer ([`crate::training::step_plan`] walks it in order).
    pub static STEP_NET: UniformLayout = UniformLayout {
        name: "StepNet",
        words: &STEP_NET_WORDS,
    };
    const STEP_NET_WORDS: [&str; 80] = {
        let head = [
            "batch",
            "rows",
            "depth",
            "loss",
            "optimiser",
            "corr_len",
            "chunk",
            "param_count",
            "lr",
            "beta1",
            "beta2",
            "eps",
            "l1",
            "l2",
            "momentum",
            "pad",
        ];
        let mut w = ["layers"; 80];
        let mut i = 0;
        while i < head.len() {
            w[i] = head[i];
            i += 1;
        }
        w
    };
}

/// The buffers an MLP kernel binds, in binding order (its uniform block comes last, always).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Params,
    Grads,
    M,
    V,
    Acts,
    Deltas,
    Labels,
    Losses,
    /// The training set's features and labels, in batch order.
    DataX,
    DataY,
    /// The step state this step reads, and the one it writes (the next step's).
    State,
    NextState,
    /// Adam's (c₁, c₂) per step.
    Corrections,
    /// Partial sums: each parameter's gradient over one lane's samples (`mlp-step-lanes`, 64
    /// per parameter), or the tiled gradient's per-slice sums (`mlp-grad-tiled` →
    /// `mlp-grad-reduce`). One plan never has both.
    Partials,
}

/// Names of the training session's resident buffers.
pub mod buffer {
    pub const PARAMS: &str = "mlp params";
    pub const GRADS: &str = "mlp grads";
    pub const M: &str = "mlp m";
    pub const V: &str = "mlp v";
    pub const ACTS: &str = "mlp acts";
    pub const EVAL_ACTS: &str = "mlp eval acts";
    pub const DELTAS: &str = "mlp deltas";
    pub const LABELS: &str = "mlp labels";
    pub const LOSSES: &str = "mlp losses";
    pub const DATA_X: &str = "mlp data x";
    pub const DATA_Y: &str = "mlp data y";
    /// The double-buffered step state: even steps read the first and write the second.
    pub const STATES: [&str; 2] = ["mlp step state a", "mlp step state b"];
    pub const CORRECTIONS: &str = "mlp adam corrections";
    pub const PARTIALS: &str = "mlp partials";
}

impl Slot {
    /// The buffer this slot binds on a step of `parity` (0 even, 1 odd); an evaluation's
    /// forward pass binds its own activations.
    pub fn buffer(self, parity: usize, eval: bool) -> &'static str {
        use buffer::*;
        match self {
            Slot::Params => PARAMS,
            Slot::Grads => GRADS,
            Slot::M => M,
            Slot::V => V,
            Slot::Acts if eval => EVAL_ACTS,
            Slot::Acts => ACTS,
            Slot::Deltas => DELTAS,
            Slot::Labels => LABELS,
            Slot::Losses => LOSSES,
            Slot::DataX => DATA_X,
            Slot::DataY => DATA_Y,
            Slot::State => STATES[parity % 2],
            Slot::NextState => STATES[(parity + 1) % 2],
            Slot::Corrections => CORRECTIONS,
            Slot::Partials => PARTIALS,
        }
    }
}

/// What `kernel_id` binds, in binding order (empty for an id that is not an MLP kernel).
pub fn bindings(kernel_id: &str) -> &'static [Slot] {
    use Slot::*;
    match kernel_id {
        "mlp-forward" => &[Params, Acts],
        "mlp-forward-gather" => &[Params, Acts, Labels, DataX, DataY, State, NextState],
        "mlp-gather" => &[Acts, Labels, DataX, DataY, State, NextState],
        "mlp-loss" => &[Acts, Labels, Deltas, Losses],
        "mlp-forward-loss" => &[Params, Acts, Labels, Deltas, Losses],
        "mlp-backward-params" => &[Acts, Deltas, Grads],
        "mlp-backward-input" => &[Params, Acts, Deltas],
        // The optimiser family's (`family::optim`): the gathering kernel advances the step
        // state, so Adam only reads it.
        "optim-sgd" => &[Params, Grads, M],
        "optim-adam" => &[Params, Grads, M, V, Corrections, State, NextState],
        "mlp-step-samples" => &[Params, Acts, Deltas, Losses, DataX, DataY, State, NextState],
        "mlp-step-params" => &[Acts, Deltas, Grads, Params, M, V, Corrections, State],
        "mlp-step-lanes" => &[Params, Losses, DataX, DataY, State, NextState, Partials],
        "mlp-step-reduce" => &[Partials, Grads, Params, M, V, Corrections, State],
        "mlp-forward-tiled" => &[Params, Acts],
        "mlp-backward-input-tiled" => &[Params, Acts, Deltas],
        "mlp-grad-tiled" => &[Acts, Deltas, Partials],
        "mlp-grad-reduce" => &[Partials, Grads],
        _ => &[],
    }
}

/// The buffer names `kernel_id` binds on a step of `parity` (or in an evaluation).
pub fn bound_buffers(kernel_id: &str, parity: usize, eval: bool) -> Vec<&'static str> {
    bindings(kernel_id)
        .iter()
        .map(|s| s.buffer(parity, eval))
        .collect()
}

pub static KERNELS: &[KernelSpec] = &[
    // 256 threads, WebGPU's default maximum: a layer of a chunk's samples is one round.
    sized_kernel(
        "mlp-step-lanes",
        "shaders/mlp_step_lanes.wgsl",
        || format!("{MLP_STEP_LANES}\n{MLP_COMMON}"),
        256,
        "kernel.mlp-step-lanes.title",
        "kernel.mlp-step-lanes.summary",
    ),
    mlp_kernel(
        "mlp-step-reduce",
        "shaders/mlp_step_reduce.wgsl",
        || format!("{MLP_STEP_REDUCE}\n{MLP_COMMON}"),
        "kernel.mlp-step-reduce.title",
        "kernel.mlp-step-reduce.summary",
    ),
    mlp_kernel(
        "mlp-step-samples",
        "shaders/mlp_step_samples.wgsl",
        || format!("{MLP_STEP_SAMPLES}\n{MLP_COMMON}"),
        "kernel.mlp-step-samples.title",
        "kernel.mlp-step-samples.summary",
    ),
    mlp_kernel(
        "mlp-step-params",
        "shaders/mlp_step_params.wgsl",
        || format!("{MLP_STEP_PARAMS}\n{MLP_COMMON}"),
        "kernel.mlp-step-params.title",
        "kernel.mlp-step-params.summary",
    ),
    mlp_kernel(
        "mlp-forward",
        "shaders/mlp_forward.wgsl",
        || format!("{MLP_FORWARD}\n{MLP_COMMON}"),
        "kernel.mlp-forward.title",
        "kernel.mlp-forward.summary",
    ),
    mlp_kernel(
        "mlp-forward-gather",
        "shaders/mlp_forward_gather.wgsl",
        || format!("{MLP_FORWARD_GATHER}\n{MLP_COMMON}"),
        "kernel.mlp-forward-gather.title",
        "kernel.mlp-forward-gather.summary",
    ),
    mlp_kernel(
        "mlp-gather",
        "shaders/mlp_gather.wgsl",
        || format!("{MLP_GATHER}\n{MLP_COMMON}"),
        "kernel.mlp-gather.title",
        "kernel.mlp-gather.summary",
    ),
    mlp_kernel(
        "mlp-loss",
        "shaders/mlp_loss.wgsl",
        || MLP_LOSS.to_string(),
        "kernel.mlp-loss.title",
        "kernel.mlp-loss.summary",
    ),
    mlp_kernel(
        "mlp-forward-loss",
        "shaders/mlp_forward_loss.wgsl",
        || format!("{MLP_FORWARD_LOSS}\n{MLP_COMMON}"),
        "kernel.mlp-forward-loss.title",
        "kernel.mlp-forward-loss.summary",
    ),
    mlp_kernel(
        "mlp-backward-params",
        "shaders/mlp_backward_params.wgsl",
        || MLP_BACKWARD_PARAMS.to_string(),
        "kernel.mlp-backward-params.title",
        "kernel.mlp-backward-params.summary",
    ),
    mlp_kernel(
        "mlp-backward-input",
        "shaders/mlp_backward_input.wgsl",
        || format!("{MLP_BACKWARD_INPUT}\n{MLP_COMMON}"),
        "kernel.mlp-backward-input.title",
        "kernel.mlp-backward-input.summary",
    ),
    tiled_kernel(
        "mlp-forward-tiled",
        "shaders/mlp_forward_tiled.wgsl",
        || format!("{MLP_FORWARD_TILED}\n{MLP_COMMON}"),
        "kernel.mlp-forward-tiled.title",
        "kernel.mlp-forward-tiled.summary",
    ),
    tiled_kernel(
        "mlp-backward-input-tiled",
        "shaders/mlp_backward_input_tiled.wgsl",
        || format!("{MLP_BACKWARD_INPUT_TILED}\n{MLP_COMMON}"),
        "kernel.mlp-backward-input-tiled.title",
        "kernel.mlp-backward-input-tiled.summary",
    ),
    tiled_kernel(
        "mlp-grad-tiled",
        "shaders/mlp_grad_tiled.wgsl",
        || MLP_GRAD_TILED.to_string(),
        "kernel.mlp-grad-tiled.title",
        "kernel.mlp-grad-tiled.summary",
    ),
    mlp_kernel(
        "mlp-grad-reduce",
        "shaders/mlp_grad_reduce.wgsl",
        || MLP_GRAD_REDUCE.to_string(),
        "kernel.mlp-grad-reduce.title",
        "kernel.mlp-grad-reduce.summary",
    ),
];
