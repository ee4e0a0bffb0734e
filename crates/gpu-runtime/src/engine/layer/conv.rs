//! The CNN's layers on the engine: their dispatches, recorded from the arena's ranges.
//!
//! They run the CNN family's kernels (`family::cnn`, `shaders/cnn_*.wgsl`), which index whole
//! buffers through offsets in their `Block` / `Dense` uniforms and read a tensor's
//! activations and its delta through ONE offset; [`super::Net::compile`] therefore places
//! every range they touch at the same offset in both layouts (and refuses a model where an
//! earlier layer put them apart). Each dispatch binds at most four storage buffers.
//!
//! Gradient flow: each CNN backward kernel OVERWRITES the deltas and gradients it writes (its
//! tensor has one consumer), which the train step's clearing makes safe.

use super::{Node, Recorded};
use crate::engine::buffer::{ACTS, DELTAS, GRADS, PARAMS, SCRATCH};
use crate::engine::Range;
use crate::family::cnn::{grid, uniform, WORKGROUP};
use crate::plan::{Binding, PlannedDispatch, Uniform};

fn u(v: usize) -> u32 {
    v as u32
}

/// A CNN kernel's dispatch of `count` invocations (its uniform's last two words the count
/// and the grid row).
fn planned(
    id: &'static str,
    count: usize,
    uniform: Uniform,
    bindings: &[&'static str],
) -> Recorded {
    let (workgroups, row) = grid(count);
    Recorded {
        planned: PlannedDispatch {
            kernel_id: id,
            layer: 0,
            threads: workgroups.iter().product::<u32>() * WORKGROUP,
            workgroups,
            uniform: uniform.with("count", u(count)).with("row", row),
        },
        bindings: bindings.iter().map(|&b| Binding::whole(b)).collect(),
    }
}

impl Recorded {
    /// The same dispatch binding `bindings` instead.
    fn bind(mut self, bindings: Vec<Binding>) -> Recorded {
        self.bindings = bindings;
        self
    }
}

/// `r` shown as working on conv block `block` (1-based).
fn at(block: usize, mut r: Recorded) -> Recorded {
    r.planned.layer = block;
    r
}

/// The `Block` uniform of a convolution (its input, pre-activation and output).
fn conv_uniform(node: &Node, batch: usize) -> Uniform {
    let Node::Conv2d {
        x,
        conv,
        y,
        w,
        b,
        c_in,
        c_out,
        kernel,
        in_side,
        conv_side,
        ..
    } = node
    else {
        return Uniform::new(&uniform::BLOCK);
    };
    Uniform::new(&uniform::BLOCK)
        .with("batch", u(batch))
        .with("c_in", u(*c_in))
        .with("c_out", u(*c_out))
        .with("k", u(*kernel))
        .with("in_side", u(*in_side))
        .with("conv_side", u(*conv_side))
        .with("in_off", u(x.act.at))
        .with("conv_off", u(conv.act.at))
        .with("relu_off", u(y.act.at))
        .with("w_off", u(w.at))
        .with("b_off", u(b.at))
}

/// The `Block` uniform of a pool: its input is the block's ReLU region, its maps `channels`
/// of `in_side` ("conv side").
fn pool_uniform(
    x: usize,
    y: usize,
    argmax: usize,
    channels: usize,
    in_side: usize,
    pool_side: usize,
    batch: usize,
) -> Uniform {
    Uniform::new(&uniform::BLOCK)
        .with("batch", u(batch))
        .with("c_in", u(channels))
        .with("c_out", u(channels))
        .with("conv_side", u(in_side))
        .with("pool_side", u(pool_side))
        .with("relu_off", u(x))
        .with("pool_off", u(y))
        .with("argmax_off", u(argmax))
}

/// The `Dense` uniform: `inputs` → `classes` from `in_off` to `logits_off` (and the
/// probabilities at `probs_off` for the loss head), 1/B rounded once as the twin rounds it.
#[allow(clippy::too_many_arguments)]
fn dense_uniform(
    batch: usize,
    inputs: usize,
    classes: usize,
    in_off: usize,
    logits_off: usize,
    probs_off: usize,
    w_off: usize,
    b_off: usize,
) -> Uniform {
    Uniform::new(&uniform::DENSE)
        .with("batch", u(batch))
        .with("inputs", u(inputs))
        .with("classes", u(classes))
        .with("in_off", u(in_off))
        .with("logits_off", u(logits_off))
        .with("probs_off", u(probs_off))
        .with("w_off", u(w_off))
        .with("b_off", u(b_off))
        .with_f32("inv_batch", 1.0 / batch.max(1) as f32)
}

/// A CNN node's forward dispatches.
pub(super) fn forward(node: &Node, batch: usize, out: &mut Vec<Recorded>) {
    match node {
        Node::Conv2d { y, block, .. } => out.push(at(
            *block,
            planned(
                "cnn-conv-forward",
                y.act.len,
                conv_uniform(node, batch),
                &[PARAMS, ACTS],
            ),
        )),
        Node::MaxPool2 {
            x,
            y,
            argmax,
            channels,
            in_side,
            pool_side,
            block,
        } => out.push(at(
            *block,
            planned(
                "cnn-pool-forward",
                y.act.len,
                pool_uniform(
                    0,
                    y.act.at - x.act.at,
                    0,
                    *channels,
                    *in_side,
                    *pool_side,
                    batch,
                ),
                &[],
            )
            .bind(vec![
                // The winners' u32 indices live in the activations' buffer too: two writable
                // bindings of one buffer must not overlap (WebGPU), so each is a range.
                Range::span(&[x.act, y.act]).bind(ACTS),
                argmax.bind(ACTS),
            ]),
        )),
        Node::Dense { x, y, w, b } => out.push(planned(
            "cnn-dense-forward",
            y.act.len,
            dense_uniform(batch, x.width, y.width, x.act.at, y.act.at, 0, w.at, b.at),
            &[PARAMS, ACTS],
        )),
        Node::SoftmaxXentProbs {
            logits,
            probs,
            targets,
            losses,
        } => {
            // Writable bindings of one buffer must not overlap (WebGPU): the logits and
            // probabilities, the targets, the logits' delta and the losses are four ranges.
            let a = Range::span(&[logits.act, probs.act]);
            out.push(
                planned(
                    "cnn-softmax-xent",
                    batch,
                    dense_uniform(
                        batch,
                        0,
                        logits.width,
                        0,
                        0,
                        a.offset_of(probs.act) as usize,
                        0,
                        0,
                    ),
                    &[],
                )
                .bind(vec![
                    a.bind(ACTS),
                    targets.bind(ACTS),
                    logits.delta.bind(DELTAS),
                    losses.bind(DELTAS),
                ]),
            );
        }
        _ => {}
    }
}

/// A CNN node's backward dispatches, in the CNN twin's order (`cnn::net::Net::backward`).
pub(super) fn backward(node: &Node, batch: usize, out: &mut Vec<Recorded>) {
    match node {
        Node::Dense { x, y, w, b } => {
            let du = dense_uniform(batch, x.width, y.width, x.act.at, y.act.at, 0, w.at, b.at);
            out.push(planned(
                "cnn-dense-grad",
                y.width * x.width + y.width,
                du.clone(),
                &[ACTS, DELTAS, GRADS],
            ));
            out.push(planned(
                "cnn-dense-backward-input",
                x.act.len,
                du,
                &[PARAMS, DELTAS],
            ));
        }
        Node::MaxPool2 {
            x,
            y,
            argmax,
            channels,
            in_side,
            pool_side,
            block,
        } => out.push(at(
            *block,
            planned(
                "cnn-pool-backward",
                x.act.len,
                pool_uniform(
                    x.act.at, y.act.at, argmax.at, *channels, *in_side, *pool_side, batch,
                ),
                &[ACTS, DELTAS],
            ),
        )),
        Node::Conv2d {
            x,
            conv,
            c_in,
            c_out,
            kernel,
            block,
            ..
        } => {
            let first = out.len();
            let bu = conv_uniform(node, batch);
            let taps = c_out * c_in * kernel * kernel;
            out.push(planned(
                "cnn-relu-backward",
                conv.act.len,
                bu.clone(),
                &[ACTS, DELTAS],
            ));
            out.push(planned(
                "cnn-conv-filter-partials",
                batch * taps,
                bu.clone(),
                &[ACTS, DELTAS, SCRATCH],
            ));
            out.push(planned(
                "cnn-conv-filter-reduce",
                taps,
                bu.clone(),
                &[SCRATCH, GRADS],
            ));
            // One workgroup per channel (the kernel's header: its 64 invocations share the
            // maps).
            let mut bias = planned("cnn-conv-bias-grad", *c_out, bu.clone(), &[DELTAS, GRADS]);
            bias.planned.workgroups = [u(*c_out).max(1), 1, 1];
            bias.planned.threads = bias.planned.workgroups[0] * WORKGROUP;
            out.push(bias);
            out.push(planned(
                "cnn-conv-input-grad",
                x.act.len,
                bu,
                &[PARAMS, DELTAS],
            ));
            for r in &mut out[first..] {
                r.planned.layer = *block;
            }
        }
        _ => {}
    }
}
