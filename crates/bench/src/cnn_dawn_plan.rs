//! The CNN's training step as the session planned it BEFORE it moved onto the training engine
//! (the `cnn-*` kernels over `cnn::net`'s own buffers: a separate labels, losses, argmax and
//! partials buffer, whole-buffer bindings only), kept only for the Dawn runner
//! (`crates/bench/dawn/cnn.mjs`, fed by `bench dump-kernels --cnn`), which replays it by
//! buffer name. The app's session no longer runs this plan: it runs the engine's
//! (`gpu_runtime::cnn_training::step_plan`), whose arena places labels, losses and winners
//! in the activation and delta buffers and binds two ranges in the loss head. Porting
//! `cnn.mjs` to the arena's buffers and ranges retires this file; until then Dawn timings
//! measure this plan, with the same kernels, grids and order.

use cnn::net::{ActLayout, Hyper, Net, ParamLayout};
use gpu_runtime::family::cnn::{grid, optimiser_dispatch, uniform, WORKGROUP};
use gpu_runtime::family::optim;
pub use gpu_runtime::plan::PlannedDispatch;
use gpu_runtime::plan::Uniform;

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
}

impl Slot {
    /// The buffer this slot binds in a training step of `parity` (0 even, 1 odd: the step
    /// state's two buffers swap), or in an evaluation's forward pass.
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

/// The buffer names `kernel_id` binds in a step of `parity` (or an evaluation).
pub fn bound_buffers_at(kernel_id: &str, eval: bool, parity: usize) -> Vec<&'static str> {
    bindings(kernel_id)
        .iter()
        .map(|s| s.buffer_at(eval, parity))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use cnn::net::{Block, Optimiser};
    use gpu_runtime::family::cnn::{KERNELS, WORKGROUP};
    use gpu_runtime::family::optim;

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
}
