//! The CNN page's training kernels (issue 24) and what each binds. Like the MLP's they run no
//! [`crate::Job`]: a [`crate::cnn_training::CnnSession`] keeps their buffers resident in a
//! [`crate::plan::ResidentPlan`], bound as [`bindings`] says (each file's header lists the
//! same), in the order and with the grids and uniforms of [`step_plan`] and [`forward_plan`].
//!
//! Every buffer has the layout of `cnn::net` (NCHW activations, OIHW filters, one flat
//! parameter buffer); every uniform is 16 words, the last two being the invocation count and
//! the invocations per grid row (a grid is 2-D once it passes 65,535 workgroups).

pub mod bound;

use cnn::net::{ActLayout, Hyper, Net, Optimiser, ParamLayout};
use cpu_kernels::verify::Precision;

use crate::family::optim;
pub use crate::plan::PlannedDispatch;
use crate::plan::{grid_for, Uniform, UniformLayout};
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

/// The buffers a CNN kernel binds, in binding order (its uniform block comes last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Params,
    Grads,
    /// Momentum, or Adam's first moment.
    M,
    /// Adam's second moment.
    V,
    Acts,
    Deltas,
    Argmax,
    Labels,
    Losses,
    /// Per-sample filter-gradient partial sums (`cnn-conv-filter-partials`).
    Partials,
    /// Adam's (c₁, c₂) per step (`family::optim::correction_table`).
    Corrections,
    /// The step state a step reads (its `t`: steps done), and the one it writes: two
    /// buffers, even steps reading the first.
    State,
    NextState,
}

/// Names of the session's resident buffers.
pub mod buffer {
    pub const PARAMS: &str = "cnn params";
    pub const GRADS: &str = "cnn grads";
    pub const M: &str = "cnn m";
    pub const V: &str = "cnn v";
    pub const ACTS: &str = "cnn acts";
    pub const DELTAS: &str = "cnn deltas";
    pub const ARGMAX: &str = "cnn argmax";
    pub const LABELS: &str = "cnn labels";
    pub const LOSSES: &str = "cnn losses";
    pub const PARTIALS: &str = "cnn partials";
    /// The evaluation's activations and argmax (its own batch size, so its own layout).
    pub const EVAL_ACTS: &str = "cnn eval acts";
    pub const EVAL_ARGMAX: &str = "cnn eval argmax";
    pub const CORRECTIONS: &str = "cnn adam corrections";
    /// The double-buffered step state: even steps read the first and write the second.
    pub const STATES: [&str; 2] = ["cnn step state a", "cnn step state b"];
    /// Batches waiting for the steps of one submission (images then labels, per step).
    pub const BATCHES: &str = "cnn batches";
}

impl Slot {
    /// The buffer this slot binds in a training step, or in an evaluation's forward pass.
    pub fn buffer(self, eval: bool) -> &'static str {
        self.buffer_at(eval, 0)
    }

    /// [`Slot::buffer`] on a step of `parity` (0 even, 1 odd: the step state's two buffers
    /// swap).
    pub fn buffer_at(self, eval: bool, parity: usize) -> &'static str {
        use buffer::*;
        match self {
            Slot::Params => PARAMS,
            Slot::Grads => GRADS,
            Slot::M => M,
            Slot::V => V,
            Slot::Acts if eval => EVAL_ACTS,
            Slot::Acts => ACTS,
            Slot::Deltas => DELTAS,
            Slot::Argmax if eval => EVAL_ARGMAX,
            Slot::Argmax => ARGMAX,
            Slot::Labels => LABELS,
            Slot::Losses => LOSSES,
            Slot::Partials => PARTIALS,
            Slot::Corrections => CORRECTIONS,
            Slot::State => STATES[parity % 2],
            Slot::NextState => STATES[(parity + 1) % 2],
        }
    }
}

/// What `kernel_id` binds, in binding order (empty for an id that is not a CNN kernel).
pub fn bindings(kernel_id: &str) -> &'static [Slot] {
    use Slot::*;
    match kernel_id {
        "cnn-conv-forward" => &[Params, Acts],
        "cnn-pool-forward" => &[Acts, Argmax],
        "cnn-dense-forward" => &[Params, Acts],
        "cnn-softmax-xent" => &[Acts, Labels, Deltas, Losses],
        "cnn-dense-grad" => &[Acts, Deltas, Grads],
        "cnn-dense-backward-input" => &[Params, Deltas],
        "cnn-pool-backward" => &[Argmax, Deltas],
        "cnn-relu-backward" => &[Acts, Deltas],
        "cnn-conv-filter-partials" => &[Acts, Deltas, Partials],
        "cnn-conv-filter-reduce" => &[Partials, Grads],
        "cnn-conv-bias-grad" => &[Deltas, Grads],
        "cnn-conv-input-grad" => &[Params, Deltas],
        // The optimiser family's (`family::optim`): Adam advances the step state itself.
        "optim-sgd" => &[Params, Grads, M],
        "optim-adam" => &[Params, Grads, M, V, Corrections, State, NextState],
        _ => &[],
    }
}

/// The buffer names `kernel_id` binds in an even step (or an evaluation).
pub fn bound_buffers(kernel_id: &str, eval: bool) -> Vec<&'static str> {
    bound_buffers_at(kernel_id, eval, 0)
}

/// The buffer names `kernel_id` binds in a step of `parity` (or an evaluation).
pub fn bound_buffers_at(kernel_id: &str, eval: bool, parity: usize) -> Vec<&'static str> {
    bindings(kernel_id)
        .iter()
        .map(|s| s.buffer_at(eval, parity))
        .collect()
}

/// Workgroups for `count` invocations and the invocations per grid row: the one grid rule
/// ([`crate::plan::grid`]; a kernel's index is x + y·row).
pub fn grid(count: usize) -> ([u32; 3], u32) {
    grid_for(count, WORKGROUP)
}

/// A dispatch of `count` invocations on block `block` (1-based; 0 for the dense layer, the
/// loss and the optimiser), its uniform's last two words the count and the row.
fn planned(
    kernel_id: &'static str,
    block: usize,
    count: usize,
    uniform: Uniform,
) -> PlannedDispatch {
    let (workgroups, row) = grid(count);
    PlannedDispatch {
        kernel_id,
        layer: block,
        threads: workgroups.iter().product::<u32>() * WORKGROUP,
        workgroups,
        uniform: uniform.with("count", count as u32).with("row", row),
    }
}

/// The `Block` uniform of block `b` (0-based) for a batch laid out as `l`.
fn block_uniform(net: &Net, pl: &ParamLayout, l: &ActLayout, b: usize) -> Uniform {
    let s = &net.shapes[b];
    let a = &l.blocks[b];
    let in_off = if b == 0 {
        l.input
    } else {
        l.blocks[b - 1].pool
    };
    let u = |v: usize| v as u32;
    Uniform::new(&uniform::BLOCK)
        .with("batch", u(l.batch))
        .with("c_in", u(s.block.c_in))
        .with("c_out", u(s.block.c_out))
        .with("k", u(s.block.kernel))
        .with("in_side", u(s.in_side))
        .with("conv_side", u(s.conv_side))
        .with("pool_side", u(s.pool_side))
        .with("in_off", u(in_off))
        .with("conv_off", u(a.conv))
        .with("relu_off", u(a.relu))
        .with("pool_off", u(a.pool))
        .with("argmax_off", u(a.argmax))
        .with("w_off", u(pl.conv[b].w))
        .with("b_off", u(pl.conv[b].b))
}

/// The `Dense` uniform for a batch laid out as `l`.
fn dense_uniform(net: &Net, pl: &ParamLayout, l: &ActLayout) -> Uniform {
    let in_off = l.blocks.last().map_or(l.input, |a| a.pool);
    let u = |v: usize| v as u32;
    Uniform::new(&uniform::DENSE)
        .with("batch", u(l.batch))
        .with("inputs", u(net.dense_inputs()))
        .with("classes", u(net.classes))
        .with("in_off", u(in_off))
        .with("logits_off", u(l.logits))
        .with("probs_off", u(l.probs))
        .with("w_off", u(pl.dense_w))
        .with("b_off", u(pl.dense_b))
        // 1/B rounded once, as the twin rounds it.
        .with_f32("inv_batch", 1.0 / l.batch.max(1) as f32)
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

/// The forward pass of a batch of `batch`: per block conv (with its bias and ReLU) and pool,
/// then the dense layer.
pub fn forward_plan(net: &Net, batch: usize) -> Vec<PlannedDispatch> {
    let pl = net.param_layout();
    let l = net.act_layout(batch.max(1));
    let mut plan = Vec::new();
    for (b, s) in net.shapes.iter().enumerate() {
        let u = block_uniform(net, &pl, &l, b);
        let conv = l.batch * s.block.c_out * s.conv_side * s.conv_side;
        let pool = l.batch * s.block.c_out * s.pool_side * s.pool_side;
        plan.push(planned("cnn-conv-forward", b + 1, conv, u.clone()));
        plan.push(planned("cnn-pool-forward", b + 1, pool, u));
    }
    let du = dense_uniform(net, &pl, &l);
    plan.push(planned("cnn-dense-forward", 0, l.batch * net.classes, du));
    plan
}

/// A training step of a batch of `batch`, in the CPU twin's order (`cnn::net::Net::backward`):
/// forward, loss, dense backward, then each block last first (pool, ReLU, filter partials and
/// their sum, bias, input), then the optimiser over every parameter (`optim-sgd` or
/// `optim-adam`, whose step number is a counter on the GPU: nothing is rewritten per step).
pub fn step_plan(net: &Net, hyper: &Hyper, batch: usize) -> Vec<PlannedDispatch> {
    let pl = net.param_layout();
    let l = net.act_layout(batch.max(1));
    let mut plan = forward_plan(net, batch);
    let du = dense_uniform(net, &pl, &l);
    let k = net.classes;
    let d = net.dense_inputs();
    plan.push(planned("cnn-softmax-xent", 0, l.batch, du.clone()));
    plan.push(planned("cnn-dense-grad", 0, k * d + k, du.clone()));
    plan.push(planned("cnn-dense-backward-input", 0, l.batch * d, du));
    for (b, s) in net.shapes.iter().enumerate().rev() {
        let u = block_uniform(net, &pl, &l, b);
        let blk = s.block;
        let conv = l.batch * blk.c_out * s.conv_side * s.conv_side;
        let taps = blk.c_out * blk.c_in * blk.kernel * blk.kernel;
        let input = l.batch * blk.c_in * s.in_side * s.in_side;
        plan.push(planned("cnn-pool-backward", b + 1, conv, u.clone()));
        plan.push(planned("cnn-relu-backward", b + 1, conv, u.clone()));
        plan.push(planned(
            "cnn-conv-filter-partials",
            b + 1,
            l.batch * taps,
            u.clone(),
        ));
        plan.push(planned("cnn-conv-filter-reduce", b + 1, taps, u.clone()));
        // One workgroup per channel (the kernel's header: its 64 invocations share the maps).
        let mut bias = planned("cnn-conv-bias-grad", b + 1, blk.c_out, u.clone());
        bias.workgroups = [blk.c_out.max(1) as u32, 1, 1];
        bias.threads = bias.workgroups[0] * WORKGROUP;
        plan.push(bias);
        plan.push(planned("cnn-conv-input-grad", b + 1, input, u));
    }
    plan.push(optimiser_dispatch(hyper, pl.len, optim::MAX_GROUPS_X));
    plan
}

/// f32 values of the filter-gradient partials buffer: the largest block's B × taps.
pub fn partials_len(net: &Net, batch: usize) -> usize {
    net.shapes
        .iter()
        .map(|s| {
            let b = s.block;
            batch * b.c_out * b.c_in * b.kernel * b.kernel
        })
        .max()
        .unwrap_or(0)
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
    use cnn::net::Block;

    fn small() -> Net {
        let b = |c_in, c_out, kernel| Block {
            c_in,
            c_out,
            kernel,
        };
        Net::new(13, vec![b(1, 3, 3), b(3, 4, 3)], 10).expect("fits")
    }

    #[test]
    fn every_kernel_binds_something_and_is_planned() {
        let net = small();
        for opt in Optimiser::ALL {
            let hyper = Hyper {
                lr: 0.1,
                optimiser: opt,
                momentum: 0.9,
            };
            let plan = step_plan(&net, &hyper, 5);
            for p in &plan {
                assert!(!bindings(p.kernel_id).is_empty(), "{}", p.kernel_id);
                assert!(KERNELS
                    .iter()
                    .chain(optim::KERNELS)
                    .any(|k| k.id == p.kernel_id));
                let [x, y, _] = p.workgroups;
                let count = p.uniform[14] as u64;
                assert!(
                    x as u64 * y as u64 * WORKGROUP as u64 >= count,
                    "{}",
                    p.kernel_id
                );
            }
        }
        // Every CNN kernel runs in a step (the optimiser is the family's, `optim-sgd` here).
        let sgd = step_plan(
            &net,
            &Hyper {
                lr: 0.1,
                optimiser: Optimiser::Sgd,
                momentum: 0.0,
            },
            5,
        );
        assert_eq!(
            KERNELS
                .iter()
                .filter(|k| sgd.iter().all(|p| p.kernel_id != k.id))
                .map(|k| k.id)
                .collect::<Vec<_>>(),
            Vec::<&str>::new()
        );
        assert_eq!(sgd.last().map(|p| p.kernel_id), Some("optim-sgd"));
    }

    #[test]
    fn wide_grids_get_rows() {
        assert_eq!(grid(1), ([1, 1, 1], 64));
        assert_eq!(grid(64 * 65_535), ([65_535, 1, 1], 64 * 65_535));
        // Past 65,535 workgroups the rows are even (the one grid rule, `plan::grid`).
        assert_eq!(grid(64 * 65_535 + 1), ([32_768, 2, 1], 64 * 32_768));
    }
}
