//! The tiny MLP's training kernels. They run no [`crate::Job`]: a
//! [`crate::training::TrainingSession`] owns their buffers and bind groups (each file's header
//! lists its bindings) and sizes their grids with [`crate::training::step_plan`].

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
const MLP_SGD: &str = include_str!("../../../../shaders/mlp_sgd.wgsl");
const MLP_ADAM: &str = include_str!("../../../../shaders/mlp_adam.wgsl");
const MLP_FORWARD_TILED: &str = include_str!("../../../../shaders/mlp_forward_tiled.wgsl");
const MLP_BACKWARD_INPUT_TILED: &str =
    include_str!("../../../../shaders/mlp_backward_input_tiled.wgsl");
const MLP_GRAD_TILED: &str = include_str!("../../../../shaders/mlp_grad_tiled.wgsl");
const MLP_GRAD_REDUCE: &str = include_str!("../../../../shaders/mlp_grad_reduce.wgsl");

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

pub static KERNELS: &[KernelSpec] = &[
    // 256 threads, WebGPU's default maximum: a layer of a chunk's samples is one round.
    sized_kernel(
        "mlp-step-lanes",
        "shaders/mlp_step_lanes.wgsl",
        || MLP_STEP_LANES.to_string(),
        256,
        "kernel.mlp-step-lanes.title",
        "kernel.mlp-step-lanes.summary",
    ),
    mlp_kernel(
        "mlp-step-reduce",
        "shaders/mlp_step_reduce.wgsl",
        || MLP_STEP_REDUCE.to_string(),
        "kernel.mlp-step-reduce.title",
        "kernel.mlp-step-reduce.summary",
    ),
    mlp_kernel(
        "mlp-step-samples",
        "shaders/mlp_step_samples.wgsl",
        || MLP_STEP_SAMPLES.to_string(),
        "kernel.mlp-step-samples.title",
        "kernel.mlp-step-samples.summary",
    ),
    mlp_kernel(
        "mlp-step-params",
        "shaders/mlp_step_params.wgsl",
        || MLP_STEP_PARAMS.to_string(),
        "kernel.mlp-step-params.title",
        "kernel.mlp-step-params.summary",
    ),
    mlp_kernel(
        "mlp-forward",
        "shaders/mlp_forward.wgsl",
        || MLP_FORWARD.to_string(),
        "kernel.mlp-forward.title",
        "kernel.mlp-forward.summary",
    ),
    mlp_kernel(
        "mlp-forward-gather",
        "shaders/mlp_forward_gather.wgsl",
        || MLP_FORWARD_GATHER.to_string(),
        "kernel.mlp-forward-gather.title",
        "kernel.mlp-forward-gather.summary",
    ),
    mlp_kernel(
        "mlp-gather",
        "shaders/mlp_gather.wgsl",
        || MLP_GATHER.to_string(),
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
        || MLP_FORWARD_LOSS.to_string(),
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
        || MLP_BACKWARD_INPUT.to_string(),
        "kernel.mlp-backward-input.title",
        "kernel.mlp-backward-input.summary",
    ),
    mlp_kernel(
        "mlp-sgd",
        "shaders/mlp_sgd.wgsl",
        || MLP_SGD.to_string(),
        "kernel.mlp-sgd.title",
        "kernel.mlp-sgd.summary",
    ),
    mlp_kernel(
        "mlp-adam",
        "shaders/mlp_adam.wgsl",
        || MLP_ADAM.to_string(),
        "kernel.mlp-adam.title",
        "kernel.mlp-adam.summary",
    ),
    tiled_kernel(
        "mlp-forward-tiled",
        "shaders/mlp_forward_tiled.wgsl",
        || MLP_FORWARD_TILED.to_string(),
        "kernel.mlp-forward-tiled.title",
        "kernel.mlp-forward-tiled.summary",
    ),
    tiled_kernel(
        "mlp-backward-input-tiled",
        "shaders/mlp_backward_input_tiled.wgsl",
        || MLP_BACKWARD_INPUT_TILED.to_string(),
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
