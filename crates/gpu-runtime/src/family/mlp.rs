//! The tiny MLP's training kernels. They run no [`crate::Job`]: a
//! [`crate::training::TrainingSession`] owns their buffers and bind groups (each file's header
//! lists its bindings) and sizes their grids with [`crate::training::step_plan`].

use cpu_kernels::verify::Precision;

use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;

const MLP_FORWARD: &str = include_str!("../../../../shaders/mlp_forward.wgsl");
const MLP_LOSS: &str = include_str!("../../../../shaders/mlp_loss.wgsl");
const MLP_BACKWARD_PARAMS: &str = include_str!("../../../../shaders/mlp_backward_params.wgsl");
const MLP_BACKWARD_INPUT: &str = include_str!("../../../../shaders/mlp_backward_input.wgsl");
const MLP_SGD: &str = include_str!("../../../../shaders/mlp_sgd.wgsl");
const MLP_ADAM: &str = include_str!("../../../../shaders/mlp_adam.wgsl");

/// MLP kernels take one thread per element of a layer, 64 to a workgroup; the training
/// session computes that count per layer, so a workload gives them no grid.
fn grid_mlp(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

pub static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "mlp-forward",
        source_path: "shaders/mlp_forward.wgsl",
        source: KernelSource::Built(|| MLP_FORWARD.to_string()),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-forward.title",
        summary_key: "kernel.mlp-forward.summary",
    },
    KernelSpec {
        id: "mlp-loss",
        source_path: "shaders/mlp_loss.wgsl",
        source: KernelSource::Built(|| MLP_LOSS.to_string()),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-loss.title",
        summary_key: "kernel.mlp-loss.summary",
    },
    KernelSpec {
        id: "mlp-backward-params",
        source_path: "shaders/mlp_backward_params.wgsl",
        source: KernelSource::Built(|| MLP_BACKWARD_PARAMS.to_string()),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-backward-params.title",
        summary_key: "kernel.mlp-backward-params.summary",
    },
    KernelSpec {
        id: "mlp-backward-input",
        source_path: "shaders/mlp_backward_input.wgsl",
        source: KernelSource::Built(|| MLP_BACKWARD_INPUT.to_string()),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-backward-input.title",
        summary_key: "kernel.mlp-backward-input.summary",
    },
    KernelSpec {
        id: "mlp-sgd",
        source_path: "shaders/mlp_sgd.wgsl",
        source: KernelSource::Built(|| MLP_SGD.to_string()),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-sgd.title",
        summary_key: "kernel.mlp-sgd.summary",
    },
    KernelSpec {
        id: "mlp-adam",
        source_path: "shaders/mlp_adam.wgsl",
        source: KernelSource::Built(|| MLP_ADAM.to_string()),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-adam.title",
        summary_key: "kernel.mlp-adam.summary",
    },
];
