//! Layers, and a model compiled from a list of them: every tensor placed in the arena once,
//! every forward and backward dispatch recorded from those places.
//!
//! Gradient flow: the train step clears the deltas and the gradients first. A linear layer's
//! input gradient OVERWRITES its input's delta, as every CNN layer's backward overwrites what
//! it writes (`conv.rs`: a CNN tensor has one consumer); every other backward ADDS into the
//! deltas and gradients it writes. That is right because a tensor's consumers run backward in a
//! fixed order: the layer after it first (a linear layer there is the first writer), then, if
//! it is a residual's input, the residual's add (`delta x += delta y`). A residual's output
//! shares its branch's delta range (the identity's gradient is the gradient), so the add
//! needs no copy.

mod conv;

use super::arena::{Arena, Range};
use super::buffer;
use crate::family::attention::AttnLayout;
use crate::family::gpt::uniform as gpt_uniform;
use crate::family::mlp::uniform as mlp_uniform;
use crate::plan::{Binding, PlannedDispatch, Uniform};
use mlp::{Activation, LossKind};

/// One layer of a model, over rows of the width the previous layer left.
#[derive(Clone, Debug, PartialEq)]
pub enum Layer {
    /// y = x·Wᵀ + b, W `out` × width (row-major), b `out`.
    Linear { out: usize },
    /// GELU, tanh form, element-wise.
    Gelu,
    /// LayerNorm over each row, γ and β of the row's width.
    LayerNorm,
    /// y = x + branch(x); the branch must end at x's width.
    Residual(Vec<Layer>),
    /// Softmax cross-entropy over the row (the model's last layer): the mean loss over rows
    /// whose target is not `gpt::ops::IGNORE`.
    SoftmaxXent,
    /// The model's first layer when its input is tokens (one u32 per row, `Model::input`
    /// 1): x = wte[token] + wpe[row % context], width `width`; the rows are sequences of
    /// `context` positions.
    Embed {
        vocab: usize,
        width: usize,
        context: usize,
    },
    /// Causal multi-head self-attention over rows [q | k | v] (width 3c, c divisible by
    /// `heads`) of sequences of `context` positions; out width c. The naive kernels: the
    /// probabilities are kept (in the delta layout) for the backward, whose dS lives in the
    /// gradient scratch (free between a linear layer's two gradient kernels).
    Attention { heads: usize, context: usize },
    /// A valid, stride-1 2-D convolution of rows holding `c_in` maps of `side` × `side`
    /// (channel-major, row-major maps) by `c_out` filters of `kernel` × `kernel` (OIHW), plus
    /// a bias per filter, with ReLU in its epilogue (`cnn-conv-forward`): the pre-activation
    /// is saved for the ReLU's backward; out `c_out` maps of side − kernel + 1.
    Conv2d {
        c_in: usize,
        side: usize,
        c_out: usize,
        kernel: usize,
    },
    /// 2 × 2 max-pooling, stride 2, of rows of `channels` maps of `side` × `side` (an odd
    /// side's last row and column are dropped); the winner of each window is saved.
    MaxPool2 { channels: usize, side: usize },
    /// y = x·Wᵀ + b by the CNN's dense kernels (`cnn-dense-*`: one accumulator per output,
    /// terms by ascending index, the CNN twin's order), W `out` × width.
    Dense { out: usize },
    /// The CNN's loss head (`cnn-softmax-xent`, the model's last layer): the mean
    /// cross-entropy over the rows, the probabilities kept (for the page's "look inside").
    SoftmaxXentProbs,
    /// The MLP's dense layer: y = act(x·Wᵀ + b), W `out` × width, the activation in the
    /// tiled kernels' epilogue (`mlp-forward-tiled`). A tensor keeps one delta, the loss
    /// gradient on its pre-activation (`mlp::net`'s layout), so the backward multiplies the
    /// gradient it sends down by the derivative of the activation that made ITS INPUT, read
    /// from the input's values (`mlp-backward-input-tiled`); the layer before it is the one
    /// that named that activation.
    Perceptron { out: usize, act: Activation },
    /// The first layer of a model whose training set lives on the GPU ([`buffer::DATA_X`],
    /// [`buffer::DATA_Y`], `rows` rows in the seeded batch order): each train step copies rows
    /// (start + b) mod `rows` into the input and their labels into the targets, and advances
    /// the step state (`mlp-gather`; the optimiser then only reads the state). An
    /// evaluation's forward skips it (its rows are written in place). With `accum`
    /// micro-batches per update each micro-batch gathers its own rows and the step counter
    /// (Adam's t) advances once per update.
    Gather { rows: usize, accum: usize },
    /// The MLP's loss head (`mlp-loss`, the model's last layer): softmax cross-entropy,
    /// squared error against one-hot targets, or regression on one output; the mean over the
    /// rows of all `accum` micro-batches of an update (so their gradients, added, are the
    /// mean's); writes the logits' delta and each row's loss (`accum` × batch of them, micro-batch
    /// j's from row j·batch).
    MlpLoss { kind: LossKind, accum: usize },
}

/// A model: `batch` rows of `input` features through `layers`.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub batch: usize,
    pub input: usize,
    pub layers: Vec<Layer>,
}

/// A tensor of `rows` × `width`: its activations and its delta, each a range of its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub act: Range,
    pub delta: Range,
    pub width: usize,
}

/// A layer placed in the arena: the ranges its dispatches bind and its twin reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Linear {
        x: Tensor,
        y: Tensor,
        w: Range,
        b: Range,
    },
    Gelu {
        x: Tensor,
        y: Tensor,
    },
    LayerNorm {
        x: Tensor,
        y: Tensor,
        /// Saved for the backward: each row's mean and 1/σ.
        stats: Range,
        gamma: Range,
        beta: Range,
    },
    Residual {
        x: Tensor,
        branch: Vec<Node>,
        /// The branch's output; its delta range is `y`'s.
        z: Tensor,
        y: Tensor,
    },
    SoftmaxXent {
        logits: Tensor,
        /// u32 per row, in the activation layout.
        targets: Range,
        /// f32 per row, in the delta layout (written with the logits' delta).
        losses: Range,
    },
    Embed {
        /// The token of each row (u32).
        tokens: Tensor,
        x: Tensor,
        wte: Range,
        wpe: Range,
        vocab: usize,
        context: usize,
    },
    Attention {
        qkv: Tensor,
        y: Tensor,
        /// b·heads problems of context × context probabilities, in the delta layout (a
        /// buffer the forward's qkv binding does not share).
        probs: Range,
        heads: usize,
        context: usize,
    },
    Conv2d {
        x: Tensor,
        /// The pre-activation (its delta: the ReLU's backward output).
        conv: Tensor,
        y: Tensor,
        w: Range,
        b: Range,
        c_in: usize,
        c_out: usize,
        kernel: usize,
        in_side: usize,
        conv_side: usize,
        /// Its convolution's number among the model's (1-based), for showing.
        block: usize,
    },
    MaxPool2 {
        x: Tensor,
        y: Tensor,
        /// u32 per output: the index (in x's rows) of its window's winner; in the activation
        /// layout.
        argmax: Range,
        channels: usize,
        in_side: usize,
        pool_side: usize,
        /// The number of the convolution before it (0 for none), for showing.
        block: usize,
    },
    Dense {
        x: Tensor,
        y: Tensor,
        w: Range,
        b: Range,
    },
    SoftmaxXentProbs {
        logits: Tensor,
        probs: Tensor,
        targets: Range,
        losses: Range,
    },
    Perceptron {
        x: Tensor,
        y: Tensor,
        w: Range,
        b: Range,
        act: Activation,
        /// The activation that made `x` (Linear for the model's input or another layer's).
        below: Activation,
        /// Whether `x` is the model's input (its delta is never read: not computed).
        first: bool,
    },
    Gather {
        input: Tensor,
        /// The loss head's targets (u32 per row, in the activation layout).
        targets: Range,
        rows: usize,
        accum: usize,
    },
    MlpLoss {
        logits: Tensor,
        targets: Range,
        /// f32 per row of every micro-batch of an update, in the delta layout.
        losses: Range,
        kind: LossKind,
        accum: usize,
    },
}

/// A model compiled: its arena and its layers placed in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Net {
    pub batch: usize,
    pub arena: Arena,
    pub input: Tensor,
    pub nodes: Vec<Node>,
    pub targets: Range,
    pub losses: Range,
    /// Classes of the loss head.
    pub classes: usize,
}

/// Partial-gradient slices of `mlp-grad-tiled` (its header: S = min(64, batch)).
fn slices(batch: usize) -> usize {
    batch.clamp(1, 64)
}

struct Builder {
    arena: Arena,
    batch: usize,
    count: usize,
    /// Convolutions placed so far.
    convs: usize,
}

impl Builder {
    fn tensor(&mut self, name: &str, width: usize) -> Tensor {
        let len = self.batch * width;
        Tensor {
            act: self.arena.acts.push(name, len),
            delta: self.arena.deltas.push(name, len),
            width,
        }
    }

    /// `len` words placed at the same offset in the activation and the delta layout (the CNN
    /// kernels index both through one offset, so every range they touch is mirrored).
    fn mirrored(&mut self, name: &str, len: usize) -> Range {
        let r = self.arena.acts.push(name, len);
        self.arena.deltas.push(name, len);
        r
    }

    /// Refuses a tensor whose activations and deltas sit at different offsets, where a CNN
    /// kernel would read one through the other's offset.
    fn same(&self, name: &str, t: &Tensor) -> Result<(), String> {
        if t.act.at == t.delta.at {
            Ok(())
        } else {
            Err(format!(
                "layer {name}: the CNN layers need a tensor's activations and deltas at one \
                 offset; an earlier layer placed them apart"
            ))
        }
    }

    fn walk(
        &mut self,
        layers: &[Layer],
        mut x: Tensor,
        top: bool,
    ) -> Result<(Vec<Node>, Tensor), String> {
        let mut nodes = Vec::new();
        // The activation that made `x` (only a perceptron names one).
        let mut below = Activation::Linear;
        for (i, layer) in layers.iter().enumerate() {
            self.count += 1;
            let name = format!("{}", self.count);
            let last = i + 1 == layers.len();
            let made_by = below;
            below = Activation::Linear;
            match layer {
                Layer::Perceptron { out, act } => {
                    if *out == 0 {
                        return Err(format!("layer {name}: a dense layer needs outputs"));
                    }
                    let first = top && nodes.iter().all(|n| matches!(n, Node::Gather { .. }));
                    let w = self.arena.params.push(format!("{name}.w"), out * x.width);
                    let b = self.arena.params.push(format!("{name}.b"), *out);
                    let y = self.tensor(&name, *out);
                    self.arena.scratch_words = self
                        .arena
                        .scratch_words
                        .max(slices(self.batch) * out * (x.width + 1));
                    nodes.push(Node::Perceptron {
                        x,
                        y,
                        w,
                        b,
                        act: *act,
                        below: made_by,
                        first,
                    });
                    below = *act;
                    x = y;
                }
                Layer::Gather { rows, accum } => {
                    if !(top && i == 0) || *rows == 0 || *accum == 0 {
                        return Err(format!(
                            "layer {name}: the gathering layer comes first, over a training set"
                        ));
                    }
                    // The targets are the loss head's, filled in once it is placed.
                    let targets = Range { at: 0, len: 0 };
                    nodes.push(Node::Gather {
                        input: x,
                        targets,
                        rows: *rows,
                        accum: *accum,
                    });
                }
                Layer::MlpLoss { kind, accum } => {
                    if !(top && last) || *accum == 0 {
                        return Err("the loss head must be the model's last layer".into());
                    }
                    if *kind == LossKind::Regression && x.width != 1 {
                        return Err("a regression head needs one output".into());
                    }
                    let targets = self.arena.acts.push("targets", self.batch);
                    let losses = self.arena.deltas.push("losses", accum * self.batch);
                    nodes.push(Node::MlpLoss {
                        logits: x,
                        targets,
                        losses,
                        kind: *kind,
                        accum: *accum,
                    });
                }
                Layer::Linear { out } => {
                    if *out == 0 {
                        return Err(format!("layer {name}: a linear layer needs outputs"));
                    }
                    let w = self.arena.params.push(format!("{name}.w"), out * x.width);
                    let b = self.arena.params.push(format!("{name}.b"), *out);
                    let y = self.tensor(&name, *out);
                    self.arena.scratch_words = self
                        .arena
                        .scratch_words
                        .max(slices(self.batch) * out * (x.width + 1));
                    nodes.push(Node::Linear { x, y, w, b });
                    x = y;
                }
                Layer::Gelu => {
                    let y = self.tensor(&name, x.width);
                    nodes.push(Node::Gelu { x, y });
                    x = y;
                }
                Layer::LayerNorm => {
                    let gamma = self.arena.params.push(format!("{name}.gamma"), x.width);
                    let beta = self.arena.params.push(format!("{name}.beta"), x.width);
                    let stats = self
                        .arena
                        .acts
                        .push(format!("{name}.stats"), 2 * self.batch);
                    let y = self.tensor(&name, x.width);
                    nodes.push(Node::LayerNorm {
                        x,
                        y,
                        stats,
                        gamma,
                        beta,
                    });
                    x = y;
                }
                Layer::Residual(branch) => {
                    if branch.is_empty() {
                        return Err(format!("layer {name}: a residual's branch is empty"));
                    }
                    let (inner, z) = self.walk(branch, x, false)?;
                    if z.width != x.width {
                        return Err(format!(
                            "layer {name}: the branch ends at width {}, its input is {}",
                            z.width, x.width
                        ));
                    }
                    let y = Tensor {
                        act: self.arena.acts.push(&name, self.batch * x.width),
                        delta: z.delta,
                        width: x.width,
                    };
                    nodes.push(Node::Residual {
                        x,
                        branch: inner,
                        z,
                        y,
                    });
                    x = y;
                }
                Layer::Embed {
                    vocab,
                    width,
                    context,
                } => {
                    if !(top && i == 0 && x.width == 1) {
                        return Err(format!(
                            "layer {name}: embeddings come first, over one token per row"
                        ));
                    }
                    if *vocab == 0 || *width == 0 || *context == 0 {
                        return Err(format!("layer {name}: an embedding needs every size"));
                    }
                    if !self.batch.is_multiple_of(*context) {
                        return Err(format!(
                            "layer {name}: {} rows are not whole sequences of {context}",
                            self.batch
                        ));
                    }
                    let wte = self.arena.params.push(format!("{name}.wte"), vocab * width);
                    let wpe = self
                        .arena
                        .params
                        .push(format!("{name}.wpe"), context * width);
                    let y = self.tensor(&name, *width);
                    nodes.push(Node::Embed {
                        tokens: x,
                        x: y,
                        wte,
                        wpe,
                        vocab: *vocab,
                        context: *context,
                    });
                    x = y;
                }
                Layer::Attention { heads, context } => {
                    let c = x.width / 3;
                    if !x.width.is_multiple_of(3)
                        || *heads == 0
                        || !c.is_multiple_of(*heads)
                        || *context == 0
                    {
                        return Err(format!(
                            "layer {name}: attention needs rows [q | k | v] of heads × head width"
                        ));
                    }
                    if !self.batch.is_multiple_of(*context) {
                        return Err(format!(
                            "layer {name}: {} rows are not whole sequences of {context}",
                            self.batch
                        ));
                    }
                    let problems = self.batch / context * heads;
                    let probs = self
                        .arena
                        .deltas
                        .push(format!("{name}.probs"), problems * context * context);
                    self.arena.scratch_words = self.arena.scratch_words.max(probs.len);
                    let y = self.tensor(&name, c);
                    nodes.push(Node::Attention {
                        qkv: x,
                        y,
                        probs,
                        heads: *heads,
                        context: *context,
                    });
                    x = y;
                }
                Layer::Conv2d {
                    c_in,
                    side,
                    c_out,
                    kernel,
                } => {
                    let (c_in, side, c_out, kernel) = (*c_in, *side, *c_out, *kernel);
                    if c_in == 0 || c_out == 0 || kernel == 0 || kernel > side {
                        return Err(format!(
                            "layer {name}: a convolution needs a kernel that fits"
                        ));
                    }
                    if c_in * side * side != x.width {
                        return Err(format!(
                            "layer {name}: {c_in} maps of {side}² are not rows of {}",
                            x.width
                        ));
                    }
                    self.same(&name, &x)?;
                    let conv_side = side - kernel + 1;
                    let taps = c_out * c_in * kernel * kernel;
                    let w = self.arena.params.push(format!("{name}.w"), taps);
                    let b = self.arena.params.push(format!("{name}.b"), c_out);
                    let width = c_out * conv_side * conv_side;
                    let conv = self.tensor(&format!("{name}.conv"), width);
                    let y = self.tensor(&name, width);
                    self.same(&name, &conv)?;
                    self.same(&name, &y)?;
                    // The filter gradient's per-sample partial sums.
                    self.arena.scratch_words = self.arena.scratch_words.max(self.batch * taps);
                    self.convs += 1;
                    nodes.push(Node::Conv2d {
                        x,
                        conv,
                        y,
                        w,
                        b,
                        c_in,
                        c_out,
                        kernel,
                        in_side: side,
                        conv_side,
                        block: self.convs,
                    });
                    x = y;
                }
                Layer::MaxPool2 { channels, side } => {
                    let (channels, side) = (*channels, *side);
                    if channels * side * side != x.width || side < 2 {
                        return Err(format!(
                            "layer {name}: {channels} maps of {side}² are not rows of {} to pool",
                            x.width
                        ));
                    }
                    self.same(&name, &x)?;
                    let pool_side = side / 2;
                    let y = self.tensor(&name, channels * pool_side * pool_side);
                    let argmax = self.mirrored(&format!("{name}.argmax"), y.act.len);
                    self.same(&name, &y)?;
                    nodes.push(Node::MaxPool2 {
                        x,
                        y,
                        argmax,
                        channels,
                        in_side: side,
                        pool_side,
                        block: self.convs,
                    });
                    x = y;
                }
                Layer::Dense { out } => {
                    if *out == 0 {
                        return Err(format!("layer {name}: a dense layer needs outputs"));
                    }
                    self.same(&name, &x)?;
                    let w = self.arena.params.push(format!("{name}.w"), out * x.width);
                    let b = self.arena.params.push(format!("{name}.b"), *out);
                    let y = self.tensor(&name, *out);
                    self.same(&name, &y)?;
                    nodes.push(Node::Dense { x, y, w, b });
                    x = y;
                }
                Layer::SoftmaxXentProbs => {
                    if !(top && last) {
                        return Err("the loss head must be the model's last layer".into());
                    }
                    self.same(&name, &x)?;
                    let probs = self.tensor("probs", x.width);
                    let targets = self.mirrored("targets", self.batch);
                    let losses = self.mirrored("losses", self.batch);
                    nodes.push(Node::SoftmaxXentProbs {
                        logits: x,
                        probs,
                        targets,
                        losses,
                    });
                }
                Layer::SoftmaxXent => {
                    if !(top && last) {
                        return Err("the loss head must be the model's last layer".into());
                    }
                    let targets = self.arena.acts.push("targets", self.batch);
                    let losses = self.arena.deltas.push("losses", self.batch);
                    nodes.push(Node::SoftmaxXent {
                        logits: x,
                        targets,
                        losses,
                    });
                }
            }
        }
        Ok((nodes, x))
    }
}

impl Net {
    /// Lays the model out in its arena: the input first, then each layer's parameters and
    /// tensors in order. The only place offsets are computed.
    pub fn compile(model: &Model) -> Result<Net, String> {
        if model.batch == 0 || model.input == 0 {
            return Err("the model needs rows and input features".into());
        }
        let mut b = Builder {
            arena: Arena::default(),
            batch: model.batch,
            count: 0,
            convs: 0,
        };
        let input = b.tensor("input", model.input);
        let (mut nodes, last) = b.walk(&model.layers, input, true)?;
        let (targets, losses) = match nodes.last() {
            Some(Node::SoftmaxXent {
                targets, losses, ..
            })
            | Some(Node::SoftmaxXentProbs {
                targets, losses, ..
            })
            | Some(Node::MlpLoss {
                targets, losses, ..
            }) => (*targets, *losses),
            _ => return Err("the model must end in its loss head".into()),
        };
        if let Some(Node::Gather { targets: t, .. }) = nodes.first_mut() {
            *t = targets;
        }
        Ok(Net {
            batch: model.batch,
            arena: b.arena,
            input,
            nodes,
            targets,
            losses,
            classes: last.width,
        })
    }

    /// Micro-batches per update (the MLP's loss head says; 1 for every other model).
    pub fn accum(&self) -> usize {
        match self.nodes.last() {
            Some(Node::MlpLoss { accum, .. }) => (*accum).max(1),
            _ => 1,
        }
    }

    /// Parameters of the model, padding included (what the optimiser steps).
    pub fn param_words(&self) -> usize {
        self.arena.params.words()
    }

    /// The forward's dispatches, in order (the loss head's writes the logits' delta too).
    pub fn forward(&self) -> Vec<Recorded> {
        let mut out = Vec::new();
        forward(&self.nodes, self.batch, &mut out);
        out
    }

    /// The forward without the loss head (an evaluation's: no targets, no deltas).
    pub fn forward_only(&self) -> Vec<Recorded> {
        let head = matches!(
            self.nodes.last(),
            Some(Node::SoftmaxXent { .. } | Node::SoftmaxXentProbs { .. } | Node::MlpLoss { .. })
        );
        // Nor the gathering layer: an evaluation's rows are written into its input.
        let body: Vec<Node> = self.nodes[..self.nodes.len() - usize::from(head)]
            .iter()
            .filter(|n| !matches!(n, Node::Gather { .. }))
            .cloned()
            .collect();
        let mut out = Vec::new();
        forward(&body, self.batch, &mut out);
        out
    }

    /// The backward's dispatches, in order (after [`Net::forward`]).
    pub fn backward(&self) -> Vec<Recorded> {
        let mut out = Vec::new();
        backward(&self.nodes, self.batch, &mut out);
        out
    }
}

/// A planned dispatch and the arena ranges it binds (the uniform block after them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub planned: PlannedDispatch,
    pub bindings: Vec<Binding>,
}

const TILE: usize = 64;

fn groups(n: usize) -> u32 {
    n.div_ceil(TILE).max(1) as u32
}

/// A dispatch of an element-wise (or per-row) kernel of 64 threads per group, along x.
fn line(id: &'static str, n: usize, uniform: Uniform, bindings: Vec<Binding>) -> Recorded {
    Recorded {
        planned: PlannedDispatch {
            kernel_id: id,
            layer: 0,
            threads: groups(n) * 64,
            workgroups: [groups(n), 1, 1],
            uniform,
        },
        bindings,
    }
}

/// A dispatch of a 256-thread tiled kernel over `workgroups`.
fn tiled(
    id: &'static str,
    workgroups: [u32; 3],
    uniform: Uniform,
    bindings: Vec<Binding>,
) -> Recorded {
    Recorded {
        planned: PlannedDispatch {
            kernel_id: id,
            layer: 0,
            threads: workgroups.iter().product::<u32>() * 256,
            workgroups,
            uniform,
        },
        bindings,
    }
}

fn len_uniform(n: usize) -> Uniform {
    Uniform::new(&gpt_uniform::LEN).with("len", n as u32)
}

fn ln_uniform(rows: usize, c: usize, gamma: u32, beta: u32) -> Uniform {
    Uniform::new(&gpt_uniform::LN)
        .with("rows", rows as u32)
        .with("c", c as u32)
        .with("gamma", gamma)
        .with("beta", beta)
        .with_f32("eps", gpt::ops::LN_EPS as f32)
}

pub(super) fn forward(nodes: &[Node], batch: usize, out: &mut Vec<Recorded>) {
    use buffer::{ACTS, DELTAS, PARAMS};
    for node in nodes {
        match node {
            Node::Linear { x, y, w, b } => {
                out.push(linear_forward(*x, *y, *w, *b, batch, Activation::Linear))
            }
            Node::Perceptron {
                x, y, w, b, act, ..
            } => out.push(linear_forward(*x, *y, *w, *b, batch, *act)),
            Node::Gather {
                input,
                targets,
                rows,
                accum,
            } => out.push(line(
                "mlp-gather",
                input.act.len,
                Uniform::new(&mlp_uniform::GATHER)
                    .with("batch", batch as u32)
                    .with("fan_in", input.width as u32)
                    .with("in_off", 0)
                    .with("rows", *rows as u32)
                    .with("accum", *accum as u32),
                vec![
                    input.act.bind(ACTS),
                    targets.bind(ACTS),
                    Binding::whole(buffer::DATA_X),
                    Binding::whole(buffer::DATA_Y),
                    Binding::whole(buffer::STATES[0]),
                    Binding::whole(buffer::STATES[1]),
                ],
            )),
            Node::MlpLoss {
                logits,
                targets,
                losses,
                kind,
                accum,
            } => out.push(line(
                "mlp-loss",
                batch,
                Uniform::new(&mlp_uniform::LOSS)
                    .with("batch", batch as u32)
                    .with("classes", logits.width as u32)
                    .with("logits_off", 0)
                    .with("delta_off", 0)
                    .with("kind", *kind as u32)
                    // Micro-batch j's copy ([`super::Engine`] makes one per micro-batch)
                    // writes its losses from row j·batch.
                    .with("mean_over", (accum * batch) as u32)
                    .with("loss_off", 0),
                vec![
                    logits.act.bind(ACTS),
                    targets.bind(ACTS),
                    logits.delta.bind(DELTAS),
                    losses.bind(DELTAS),
                ],
            )),
            Node::Gelu { x, y } => out.push(line(
                "gpt-gelu",
                x.act.len,
                len_uniform(x.act.len),
                vec![x.act.bind(ACTS), y.act.bind(ACTS)],
            )),
            Node::LayerNorm {
                x,
                y,
                stats,
                gamma,
                beta,
            } => {
                let p = Range::span(&[*gamma, *beta]);
                out.push(line(
                    "gpt-layernorm",
                    batch,
                    ln_uniform(batch, x.width, p.offset_of(*gamma), p.offset_of(*beta)),
                    vec![
                        x.act.bind(ACTS),
                        p.bind(PARAMS),
                        y.act.bind(ACTS),
                        stats.bind(ACTS),
                    ],
                ));
            }
            Node::Residual { x, branch, z, y } => {
                forward(branch, batch, out);
                out.push(line(
                    "gpt-add",
                    y.act.len,
                    len_uniform(y.act.len),
                    vec![x.act.bind(ACTS), z.act.bind(ACTS), y.act.bind(ACTS)],
                ));
            }
            Node::Embed {
                tokens,
                x,
                wte,
                wpe,
                vocab,
                context,
            } => {
                let p = Range::span(&[*wte, *wpe]);
                out.push(line(
                    "gpt-embed",
                    x.act.len,
                    embed_uniform(
                        batch,
                        x.width,
                        *context,
                        *vocab,
                        p.offset_of(*wte),
                        p.offset_of(*wpe),
                    ),
                    vec![tokens.act.bind(ACTS), p.bind(PARAMS), x.act.bind(ACTS)],
                ));
            }
            Node::Attention {
                qkv,
                y,
                probs,
                heads,
                context,
            } => {
                let l = attn_layout(batch, y.width, *heads, *context);
                let u = l.named_uniform();
                let tiles = groups16(*context);
                out.push(grid3(
                    "attention-naive-scores",
                    [tiles, tiles, l.bh],
                    256,
                    u.clone(),
                    vec![qkv.act.bind(ACTS), probs.bind(DELTAS)],
                ));
                out.push(grid3(
                    "attention-naive-softmax",
                    [l.n, l.bh, 1],
                    128,
                    u.clone(),
                    vec![probs.bind(DELTAS)],
                ));
                out.push(grid3(
                    "attention-naive-pv",
                    [groups16(l.d as usize), tiles, l.bh],
                    256,
                    u,
                    vec![qkv.act.bind(ACTS), probs.bind(DELTAS), y.act.bind(ACTS)],
                ));
            }
            Node::Conv2d { .. } | Node::MaxPool2 { .. } | Node::Dense { .. } => {
                conv::forward(node, batch, out)
            }
            Node::SoftmaxXentProbs { .. } => conv::forward(node, batch, out),
            Node::SoftmaxXent {
                logits,
                targets,
                losses,
            } => out.push(line(
                "gpt-softmax-xent",
                batch,
                Uniform::new(&gpt_uniform::XENT)
                    .with("rows", batch as u32)
                    .with("vocab", logits.width as u32),
                vec![
                    logits.act.bind(ACTS),
                    targets.bind(ACTS),
                    losses.bind(DELTAS),
                    logits.delta.bind(DELTAS),
                ],
            )),
        }
    }
}

fn backward(nodes: &[Node], batch: usize, out: &mut Vec<Recorded>) {
    use buffer::{ACTS, DELTAS, GRADS, PARAMS, SCRATCH};
    for node in nodes.iter().rev() {
        match node {
            Node::Linear { x, y, w, b } => {
                linear_backward(*x, *y, *w, *b, batch, Activation::Linear, true, out)
            }
            Node::Perceptron {
                x,
                y,
                w,
                b,
                below,
                first,
                ..
            } => linear_backward(*x, *y, *w, *b, batch, *below, !first, out),
            // Nothing flows back into the training set.
            Node::Gather { .. } => {}
            Node::Gelu { x, y } => out.push(line(
                "gpt-gelu-backward",
                x.act.len,
                len_uniform(x.act.len),
                vec![x.act.bind(ACTS), y.delta.bind(DELTAS), x.delta.bind(DELTAS)],
            )),
            Node::LayerNorm {
                x,
                y,
                stats,
                gamma,
                beta,
            } => {
                let p = Range::span(&[*gamma, *beta]);
                let u = ln_uniform(batch, x.width, p.offset_of(*gamma), p.offset_of(*beta));
                out.push(line(
                    "gpt-layernorm-backward",
                    batch,
                    u.clone(),
                    vec![
                        x.act.bind(ACTS),
                        p.bind(PARAMS),
                        stats.bind(ACTS),
                        y.delta.bind(DELTAS),
                        x.delta.bind(DELTAS),
                    ],
                ));
                out.push(line(
                    "gpt-layernorm-param-grad",
                    x.width,
                    u,
                    vec![
                        x.act.bind(ACTS),
                        stats.bind(ACTS),
                        y.delta.bind(DELTAS),
                        p.bind(GRADS),
                    ],
                ));
            }
            Node::Residual { x, branch, y, .. } => {
                backward(branch, batch, out);
                out.push(line(
                    "gpt-add-into",
                    x.delta.len,
                    len_uniform(x.delta.len),
                    vec![x.delta.bind(DELTAS), y.delta.bind(DELTAS)],
                ));
            }
            // Its forward already wrote the logits' delta.
            Node::SoftmaxXent { .. } | Node::SoftmaxXentProbs { .. } | Node::MlpLoss { .. } => {}
            Node::Conv2d { .. } | Node::MaxPool2 { .. } | Node::Dense { .. } => {
                conv::backward(node, batch, out)
            }
            Node::Embed {
                tokens,
                x,
                wte,
                wpe,
                vocab,
                context,
            } => {
                let g = Range::span(&[*wte, *wpe]);
                out.push(line(
                    "gpt-embed-backward",
                    (vocab + context) * x.width,
                    embed_uniform(
                        batch,
                        x.width,
                        *context,
                        *vocab,
                        g.offset_of(*wte),
                        g.offset_of(*wpe),
                    ),
                    vec![tokens.act.bind(ACTS), x.delta.bind(DELTAS), g.bind(GRADS)],
                ));
            }
            Node::Attention {
                qkv,
                y,
                probs,
                heads,
                context,
            } => {
                let l = attn_layout(batch, y.width, *heads, *context);
                let u = l.named_uniform();
                let tiles = groups16(*context);
                let ds = Range {
                    at: 0,
                    len: probs.len,
                };
                out.push(grid3(
                    "attention-naive-backward-dp",
                    [tiles, tiles, l.bh],
                    256,
                    u.clone(),
                    vec![qkv.act.bind(ACTS), y.delta.bind(DELTAS), ds.bind(SCRATCH)],
                ));
                out.push(grid3(
                    "attention-naive-backward-ds",
                    [l.n, l.bh, 1],
                    128,
                    u.clone(),
                    vec![probs.bind(DELTAS), ds.bind(SCRATCH)],
                ));
                out.push(grid3(
                    "attention-naive-backward-dq",
                    [groups16(l.d as usize), tiles, l.bh],
                    256,
                    u.clone(),
                    vec![qkv.act.bind(ACTS), ds.bind(SCRATCH), qkv.delta.bind(DELTAS)],
                ));
                out.push(grid3(
                    "attention-naive-backward-dkv",
                    [groups16(l.d as usize), tiles, l.bh],
                    256,
                    u,
                    vec![
                        qkv.act.bind(ACTS),
                        y.delta.bind(DELTAS),
                        probs.bind(DELTAS),
                        ds.bind(SCRATCH),
                        qkv.delta.bind(DELTAS),
                    ],
                ));
            }
        }
    }
}

/// A linear layer's forward (`mlp-forward-tiled`), `act` in its epilogue.
fn linear_forward(
    x: Tensor,
    y: Tensor,
    w: Range,
    b: Range,
    batch: usize,
    act: Activation,
) -> Recorded {
    use buffer::{ACTS, PARAMS};
    let p = Range::span(&[w, b]);
    let a = Range::span(&[x.act, y.act]);
    let u = Uniform::new(&mlp_uniform::DENSE)
        .with("batch", batch as u32)
        .with("fan_in", x.width as u32)
        .with("fan_out", y.width as u32)
        .with("act", act as u32)
        .with("w_off", p.offset_of(w))
        .with("b_off", p.offset_of(b))
        .with("in_off", a.offset_of(x.act))
        .with("out_off", a.offset_of(y.act));
    tiled(
        "mlp-forward-tiled",
        [groups(y.width), groups(batch), 1],
        u,
        vec![p.bind(PARAMS), a.bind(ACTS)],
    )
}

/// A linear layer's backward: the input gradient (times the derivative of `below`, the
/// activation that made the input; skipped without `input_grad`), then the weight and bias
/// gradient in `mlp::net::REDUCE`'s order (64 strided partial sums, halved).
#[allow(clippy::too_many_arguments)]
fn linear_backward(
    x: Tensor,
    y: Tensor,
    w: Range,
    b: Range,
    batch: usize,
    below: Activation,
    input_grad: bool,
    out: &mut Vec<Recorded>,
) {
    use buffer::{ACTS, DELTAS, GRADS, PARAMS, SCRATCH};
    let (fan_in, fan_out) = (x.width, y.width);
    if input_grad {
        let d = Range::span(&[x.delta, y.delta]);
        let back = Uniform::new(&mlp_uniform::BACK)
            .with("batch", batch as u32)
            .with("fan_in", fan_in as u32)
            .with("fan_out", fan_out as u32)
            .with("act", below as u32)
            .with("w_off", 0)
            .with("in_off", 0)
            .with("in_delta_off", d.offset_of(x.delta))
            .with("out_delta_off", d.offset_of(y.delta));
        out.push(tiled(
            "mlp-backward-input-tiled",
            [groups(fan_in), groups(batch), 1],
            back,
            vec![w.bind(PARAMS), x.act.bind(ACTS), d.bind(DELTAS)],
        ));
    }
    let g = Range::span(&[w, b]);
    let s = slices(batch);
    let grad = Uniform::new(&mlp_uniform::GRAD_TILED)
        .with("batch", batch as u32)
        .with("fan_in", fan_in as u32)
        .with("fan_out", fan_out as u32)
        .with("in_off", 0)
        .with("delta_off", 0)
        .with("w_off", g.offset_of(w))
        .with("b_off", g.offset_of(b))
        .with("slices", s as u32);
    out.push(tiled(
        "mlp-grad-tiled",
        [groups(fan_in + 1), groups(fan_out), s as u32],
        grad.clone(),
        vec![
            x.act.bind(ACTS),
            y.delta.bind(DELTAS),
            Binding::whole(SCRATCH),
        ],
    ));
    out.push(line(
        "mlp-grad-reduce",
        fan_out * (fan_in + 1),
        grad,
        vec![Binding::whole(SCRATCH), g.bind(GRADS)],
    ));
}

fn embed_uniform(rows: usize, c: usize, t: usize, vocab: usize, wte: u32, wpe: u32) -> Uniform {
    Uniform::new(&gpt_uniform::EMBED)
        .with("rows", rows as u32)
        .with("c", c as u32)
        .with("t", t as u32)
        .with("vocab", vocab as u32)
        .with("wte", wte)
        .with("wpe", wpe)
}

/// The attention family's layout of the GPT's packed rows: `batch` rows of [q | k | v] (c
/// wide each) in sequences of `context`, out rows c wide.
pub fn attn_layout(batch: usize, c: usize, heads: usize, context: usize) -> AttnLayout {
    AttnLayout::packed(
        (batch / context) as u32,
        context as u32,
        heads as u32,
        (c / heads) as u32,
    )
}

fn groups16(n: usize) -> u32 {
    n.div_ceil(16).max(1) as u32
}

/// A dispatch of `threads` per workgroup over `workgroups`.
pub(super) fn grid3(
    id: &'static str,
    workgroups: [u32; 3],
    threads: u32,
    uniform: Uniform,
    bindings: Vec<Binding>,
) -> Recorded {
    Recorded {
        planned: PlannedDispatch {
            kernel_id: id,
            layer: 0,
            threads: workgroups.iter().product::<u32>() * threads,
            workgroups,
            uniform,
        },
        bindings,
    }
}
