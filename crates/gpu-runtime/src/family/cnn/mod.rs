//! The CNN page's training kernels (issue 24). Like the MLP's they run no [`crate::Job`]: the
//! training engine records them as the CNN's layers (`engine/conv.rs`: convolution, pool,
//! dense, loss head) over its arena, binding whole arena buffers and passing every tensor's
//! offset in their uniform (each file's header lists its bindings).
//!
//! Tensors keep `cnn::net`'s shapes (NCHW activations, OIHW filters); every uniform is 16
//! words, the last two being the invocation count and the invocations per grid row (a grid
//! is 2-D once it passes 65,535 workgroups).

pub mod bound;

use cnn::net::{Hyper, Optimiser};
use cpu_kernels::verify::Precision;

use crate::family::optim;
pub use crate::plan::PlannedDispatch;
use crate::plan::{grid_for, UniformLayout};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;

const CONV_FORWARD: &str = include_str!("../../../../../shaders/cnn_conv_forward.wgsl");
const POOL_FORWARD: &str = include_str!("../../../../../shaders/cnn_pool_forward.wgsl");
const DENSE_FORWARD: &str = include_str!("../../../../../shaders/cnn_dense_forward.wgsl");
const SOFTMAX_XENT: &str = include_str!("../../../../../shaders/cnn_softmax_xent.wgsl");
const DENSE_GRAD: &str = include_str!("../../../../../shaders/cnn_dense_grad.wgsl");
const DENSE_BACKWARD_INPUT: &str =
    include_str!("../../../../../shaders/cnn_dense_backward_input.wgsl");
const POOL_BACKWARD: &str = include_str!("../../../../../shaders/cnn_pool_backward.wgsl");
const RELU_BACKWARD: &str = include_str!("../../../../../shaders/cnn_relu_backward.wgsl");
const CONV_FILTER_PARTIALS: &str =
    include_str!("../../../../../shaders/cnn_conv_filter_partials.wgsl");
const CONV_FILTER_REDUCE: &str = include_str!("../../../../../shaders/cnn_conv_filter_reduce.wgsl");
const CONV_BIAS_GRAD: &str = include_str!("../../../../../shaders/cnn_conv_bias_grad.wgsl");
const CONV_INPUT_GRAD: &str = include_str!("../../../../../shaders/cnn_conv_input_grad.wgsl");
/// The uniform blocks every CNN kernel declares, appended to each (its own lines keep their
/// numbers).
const CNN_COMMON: &str = include_str!("../../../../../shaders/cnn_common.wgsl");

/// Invocations per workgroup of every CNN kernel (their `@workgroup_size(64)`).
pub const WORKGROUP: u32 = 64;
/// Words of every CNN kernel's uniform block.
pub const UNIFORM_WORDS: usize = 16;

/// The CNN kernels' uniform structs (`cnn_common.wgsl`), word by word
/// (`tests/dispatch_interfaces.rs` checks them against the WGSL).
pub mod uniform {
    use super::UniformLayout;

    /// A conv block's launches.
    pub static BLOCK: UniformLayout = UniformLayout {
        name: "Block",
        words: &[
            "batch",
            "c_in",
            "c_out",
            "k",
            "in_side",
            "conv_side",
            "pool_side",
            "in_off",
            "conv_off",
            "relu_off",
            "pool_off",
            "argmax_off",
            "w_off",
            "b_off",
            "count",
            "row",
        ],
    };
    /// The dense layer's and the loss's launches.
    pub static DENSE: UniformLayout = UniformLayout {
        name: "Dense",
        words: &[
            "batch",
            "inputs",
            "classes",
            "in_off",
            "logits_off",
            "probs_off",
            "w_off",
            "b_off",
            "inv_batch",
            "pad0",
            "pad1",
            "pad2",
            "pad3",
            "pad4",
            "count",
            "row",
        ],
    };
}

/// The session sizes every grid itself ([`grid`]), so a workload gives none.
fn no_grid(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

const fn cnn_kernel(
    id: &'static str,
    source_path: &'static str,
    source: fn() -> String,
    title_key: &'static str,
    summary_key: &'static str,
) -> KernelSpec {
    KernelSpec {
        id,
        source_path,
        source: KernelSource::Built(source),
        entry_point: "main",
        family: Family::Cnn,
        constants: &[],
        workgroup_size: [WORKGROUP, 1, 1],
        grid: no_grid,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key,
        summary_key,
    }
}

/// Workgroups for `count` invocations and the invocations per grid row: the one grid rule
/// ([`crate::plan::grid`]; a kernel's index is x + y·row).
pub fn grid(count: usize) -> ([u32; 3], u32) {
    grid_for(count, WORKGROUP)
}

/// The optimiser family's update for `hyper` (Adam advancing the step state itself: the
/// CNN's batch is not gathered on the GPU).
pub fn optim_hyper(hyper: &Hyper) -> optim::Hyper {
    optim::Hyper {
        rule: match hyper.optimiser {
            Optimiser::Sgd => optim::Rule::Sgd {
                momentum: hyper.momentum,
            },
            Optimiser::Adam => optim::Rule::Adam,
        },
        lr: hyper.lr,
        l1: 0.0,
        l2: 0.0,
        advance: true,
    }
}

/// The optimiser's dispatch over every parameter, on a grid of at most `max_x` workgroups per
/// row ([`optim::MAX_GROUPS_X`] in a session).
pub fn optimiser_dispatch(hyper: &Hyper, params: usize, max_x: u32) -> PlannedDispatch {
    let h = optim_hyper(hyper);
    let (workgroups, _) = optim::grid(params, max_x);
    PlannedDispatch {
        kernel_id: h.kernel_id(),
        layer: 0,
        threads: workgroups.iter().product::<u32>() * optim::WORKGROUP,
        workgroups,
        uniform: optim::uniform(&h, params, max_x),
    }
}

pub static KERNELS: &[KernelSpec] = &[
    cnn_kernel(
        "cnn-conv-forward",
        "shaders/cnn_conv_forward.wgsl",
        || format!("{CONV_FORWARD}\n{CNN_COMMON}"),
        "kernel.cnn-conv-forward.title",
        "kernel.cnn-conv-forward.summary",
    ),
    cnn_kernel(
        "cnn-pool-forward",
        "shaders/cnn_pool_forward.wgsl",
        || format!("{POOL_FORWARD}\n{CNN_COMMON}"),
        "kernel.cnn-pool-forward.title",
        "kernel.cnn-pool-forward.summary",
    ),
    cnn_kernel(
        "cnn-dense-forward",
        "shaders/cnn_dense_forward.wgsl",
        || format!("{DENSE_FORWARD}\n{CNN_COMMON}"),
        "kernel.cnn-dense-forward.title",
        "kernel.cnn-dense-forward.summary",
    ),
    cnn_kernel(
        "cnn-softmax-xent",
        "shaders/cnn_softmax_xent.wgsl",
        || format!("{SOFTMAX_XENT}\n{CNN_COMMON}"),
        "kernel.cnn-softmax-xent.title",
        "kernel.cnn-softmax-xent.summary",
    ),
    cnn_kernel(
        "cnn-dense-grad",
        "shaders/cnn_dense_grad.wgsl",
        || format!("{DENSE_GRAD}\n{CNN_COMMON}"),
        "kernel.cnn-dense-grad.title",
        "kernel.cnn-dense-grad.summary",
    ),
    cnn_kernel(
        "cnn-dense-backward-input",
        "shaders/cnn_dense_backward_input.wgsl",
        || format!("{DENSE_BACKWARD_INPUT}\n{CNN_COMMON}"),
        "kernel.cnn-dense-backward-input.title",
        "kernel.cnn-dense-backward-input.summary",
    ),
    cnn_kernel(
        "cnn-pool-backward",
        "shaders/cnn_pool_backward.wgsl",
        || format!("{POOL_BACKWARD}\n{CNN_COMMON}"),
        "kernel.cnn-pool-backward.title",
        "kernel.cnn-pool-backward.summary",
    ),
    cnn_kernel(
        "cnn-relu-backward",
        "shaders/cnn_relu_backward.wgsl",
        || format!("{RELU_BACKWARD}\n{CNN_COMMON}"),
        "kernel.cnn-relu-backward.title",
        "kernel.cnn-relu-backward.summary",
    ),
    cnn_kernel(
        "cnn-conv-filter-partials",
        "shaders/cnn_conv_filter_partials.wgsl",
        || format!("{CONV_FILTER_PARTIALS}\n{CNN_COMMON}"),
        "kernel.cnn-conv-filter-partials.title",
        "kernel.cnn-conv-filter-partials.summary",
    ),
    cnn_kernel(
        "cnn-conv-filter-reduce",
        "shaders/cnn_conv_filter_reduce.wgsl",
        || format!("{CONV_FILTER_REDUCE}\n{CNN_COMMON}"),
        "kernel.cnn-conv-filter-reduce.title",
        "kernel.cnn-conv-filter-reduce.summary",
    ),
    cnn_kernel(
        "cnn-conv-bias-grad",
        "shaders/cnn_conv_bias_grad.wgsl",
        || format!("{CONV_BIAS_GRAD}\n{CNN_COMMON}"),
        "kernel.cnn-conv-bias-grad.title",
        "kernel.cnn-conv-bias-grad.summary",
    ),
    cnn_kernel(
        "cnn-conv-input-grad",
        "shaders/cnn_conv_input_grad.wgsl",
        || format!("{CONV_INPUT_GRAD}\n{CNN_COMMON}"),
        "kernel.cnn-conv-input-grad.title",
        "kernel.cnn-conv-input-grad.summary",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_grids_get_rows() {
        assert_eq!(grid(1), ([1, 1, 1], 64));
        assert_eq!(grid(64 * 65_535), ([65_535, 1, 1], 64 * 65_535));
        // Past 65,535 workgroups the rows are even (the one grid rule, `plan::grid`).
        assert_eq!(grid(64 * 65_535 + 1), ([32_768, 2, 1], 64 * 32_768));
    }
}
