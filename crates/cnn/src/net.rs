//! The network: shape, flat-buffer layout, seeded initialisation and the CPU twin.
//!
//! # Shape
//! Square single-channel images of side `side`; conv blocks (conv with no padding and stride
//! 1 → bias → ReLU → 2×2 max-pool with stride 2, an odd last row and column dropped); a dense
//! layer from the last pool's values to the classes; softmax cross-entropy.
//!
//! # Layout (what the GPU kernels bind)
//! Every tensor is f32, **NCHW, batch-major**: element (n, c, y, x) of a tensor with C
//! channels of side S is at `((n·C + c)·S + y)·S + x` from the start of its region.
//!
//! This is not the conv lesson's layout (`cpu_kernels::conv`: NHWC activations, R×S×C×K
//! filters): an implicit-GEMM stage reused from there must index NCHW/OIHW, or this layout must
//! change here, in [`ParamLayout`], [`ActLayout`] and the index expressions below.
//!
//! - **Parameters** ([`ParamLayout`]), one buffer: for each block its filters W (C_out × C_in ×
//!   K × K, OIHW: `W[o,c,r,s]` at `w + ((o·C_in + c)·K + r)·K + s`) then its C_out biases; then
//!   the dense weights (classes × D row-major, D = C·S·S of the last pool, its input index
//!   being the pool's CHW index, so one sample's pool output *is* the dense input row) and
//!   the classes' biases.
//! - **Gradients** and the **optimiser's state** (momentum or Adam's first moment, Adam's
//!   second moment): three more buffers with the parameters' layout.
//! - **Activations** ([`ActLayout`]), one buffer for a batch of B: the input (B × 1 × side²),
//!   then per block its conv output with bias (pre-ReLU), its ReLU output and its pool
//!   output, then the logits (B × classes) and the softmax probabilities (B × classes).
//! - **Argmax**, a separate u32 buffer: per block, one entry per pool output (the pool's
//!   layout), holding the index of the winning element *within that block's ReLU region*
//!   (batch included), so pool backward is a plain scatter.
//! - **Deltas** (dLoss/d of each activation), a buffer with the activations' layout: the
//!   logits' delta is the softmax-CE gradient (already divided by B), each pool's is what
//!   the layer above sends back, each ReLU region's comes from pool backward, each conv
//!   region's from ReLU backward, and the input's is block 1's input gradient (not needed to
//!   train; the page can show it). The probabilities' delta stays 0.
//!
//! # Arithmetic order (reproduce it to reproduce the twin)
//! Every sum is one f32 accumulator starting at 0.0 and adding terms in the order stated;
//! products are rounded before they are added (Rust never fuses a·b + c; a WGSL compiler may
//! emit an FMA, and WGSL's `exp` and `log` are not correctly rounded, which changes the last
//! bits: the twin comparison's bound must allow for both).
//! - conv forward: `z[n,o,y,x] = (Σ_c Σ_r Σ_s in[n,c,y+r,x+s]·W[o,c,r,s]) + b[o]`, c
//!   outermost, s innermost (the implicit GEMM's reduction index (c·K + r)·K + s ascending);
//!   the bias is added once, after the sum.
//! - ReLU: `max(z, 0)`; pool: the window is read (0,0), (0,1), (1,0), (1,1) and a later value
//!   wins only if strictly greater (ties keep the first).
//! - dense: `logit[n,j] = (Σ_i p[n,i]·Wd[j,i]) + bd[j]`, i ascending.
//! - softmax cross-entropy per sample: `m = max_j z_j`; `e_j = exp(z_j − m)`; `s = Σ_j e_j`
//!   (j ascending); `prob_j = e_j / s`; `loss = ln(s) − (z_y − m)`;
//!   `delta_j = (prob_j − [j = y]) · (1/B)` with 1/B rounded once. The step's loss is
//!   `(Σ_n loss_n) / B`, n ascending.
//! - dense backward: `dWd[j,i] = Σ_n delta[n,j]·p[n,i]` (n ascending);
//!   `dbd[j] = Σ_n delta[n,j]`; `dp[n,i] = Σ_j delta[n,j]·Wd[j,i]` (j ascending).
//! - pool backward: the ReLU delta is zeroed, then each pool delta is stored at its argmax.
//! - ReLU backward: `dz = d_relu` where z > 0, else 0.
//! - conv filter gradient, in two stages (split over the batch, so the GPU can spread it):
//!   per sample, `part_n[o,c,r,s] = Σ_y Σ_x dz[n,o,y,x]·in[n,c,y+r,x+s]` (y outer, x inner);
//!   then `dW[o,c,r,s] = Σ_n part_n[o,c,r,s]` (n ascending). The bias likewise:
//!   `part_n[o] = Σ_y Σ_x dz[n,o,y,x]`, `db[o] = Σ_n part_n[o]`.
//! - conv input gradient, a transposed convolution: the output delta padded by K − 1 on
//!   every side, correlated with the filter rotated by 180°:
//!   `d_in[n,c,y,x] = Σ_o Σ_r' Σ_s' dz[n,o,y+r'−(K−1),x+s'−(K−1)]·W[o,c,K−1−r',K−1−s']`,
//!   o outermost, r' then s' ascending, terms outside dz's map skipped (adding an exact zero
//!   would change only the sign of a zero sum).
//! - SGD with momentum: `v ← μ·v + g`; `p ← p − lr·v`.
//! - Adam: `m ← β₁·m + (1 − β₁)·g`; `v ← β₂·v + ((1 − β₂)·g)·g`;
//!   `p ← p − (lr·(m / c₁)) / (√(v / c₂) + ε)`, with 1 − β as the f32 constants
//!   [`ONE_MINUS_BETA1`] and [`ONE_MINUS_BETA2`] (not WGSL's folded decimals), and
//!   c₁ = 1 − β₁ᵗ, c₂ = 1 − β₂ᵗ computed once in f64 and rounded to f32
//!   ([`adam_corrections`]), handed to the kernel.
//!
//! Initialisation runs on the CPU only (the GPU gets the values uploaded), so its arithmetic
//! need not be reproducible there.

use crate::data::{BatchOrder, Samples};
use cpu_kernels::data::SplitMix64;
use cpu_kernels::optim;

/// The side of every max-pool window and its stride.
pub const POOL: usize = 2;
/// Samples per forward pass when evaluating: the largest training batch (`spec::MAX_BATCH`,
/// which the kernels' buffers are sized for).
pub const EVAL_CHUNK: usize = 256;

/// How parameters are updated from their gradients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optimiser {
    /// Stochastic gradient descent with momentum μ ([`Hyper::momentum`]; 0 is plain SGD).
    Sgd,
    /// Adam with β₁ = [`BETA1`], β₂ = [`BETA2`], ε = [`EPSILON`], bias-corrected.
    Adam,
}

impl Optimiser {
    pub const ALL: [Optimiser; 2] = [Optimiser::Sgd, Optimiser::Adam];

    pub fn code(self) -> &'static str {
        match self {
            Optimiser::Sgd => "sgd",
            Optimiser::Adam => "adam",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.code() == s)
    }
}

// One set of optimiser constants and one update for every model: `cpu_kernels::optim`.
pub use cpu_kernels::optim::{
    adam_corrections, BETA1, BETA2, EPSILON, ONE_MINUS_BETA1, ONE_MINUS_BETA2,
};

/// Learning settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hyper {
    pub lr: f32,
    pub optimiser: Optimiser,
    /// SGD's momentum μ; Adam ignores it.
    pub momentum: f32,
}

/// One conv block's channels and kernel side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub c_in: usize,
    pub c_out: usize,
    pub kernel: usize,
}

/// A block with the sides of the maps it reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockShape {
    pub block: Block,
    /// Side of the map the conv reads.
    pub in_side: usize,
    /// Side of the conv (and ReLU) output: in_side − kernel + 1.
    pub conv_side: usize,
    /// Side of the pool output: conv_side / 2, rounded down.
    pub pool_side: usize,
}

/// Why a network cannot be built. Blocks are numbered from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeError {
    /// The image side, a channel count, a kernel side or the classes is zero, or there is no
    /// block.
    ZeroSize,
    /// Block `block` reads `c_in` channels but the layer below gives `given`.
    Channels {
        block: usize,
        c_in: usize,
        given: usize,
    },
    /// Block `block`'s kernel leaves no 2×2 map for its pool on a `map`×`map` input.
    KernelDoesNotFit {
        block: usize,
        kernel: usize,
        map: usize,
    },
}

/// The network's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Net {
    pub side: usize,
    pub shapes: Vec<BlockShape>,
    pub classes: usize,
}

/// Where a block's parameters start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvOffsets {
    pub w: usize,
    pub b: usize,
}

/// Offsets in the parameter buffer (and the gradient and optimiser buffers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    pub conv: Vec<ConvOffsets>,
    pub dense_w: usize,
    pub dense_b: usize,
    pub len: usize,
}

/// Where a block's activations start in the activation buffer, and its argmax in the u32
/// argmax buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockActs {
    pub conv: usize,
    pub relu: usize,
    pub pool: usize,
    pub argmax: usize,
}

/// Offsets in the activation buffer (and the delta buffer) for a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActLayout {
    pub batch: usize,
    pub input: usize,
    pub blocks: Vec<BlockActs>,
    pub logits: usize,
    pub probs: usize,
    pub len: usize,
    pub argmax_len: usize,
}

impl Net {
    /// Checks that every block fits the map it gets and that the channels chain.
    pub fn new(side: usize, blocks: Vec<Block>, classes: usize) -> Result<Net, ShapeError> {
        let zero = blocks
            .iter()
            .any(|b| b.c_in == 0 || b.c_out == 0 || b.kernel == 0);
        if side == 0 || classes == 0 || blocks.is_empty() || zero {
            return Err(ShapeError::ZeroSize);
        }
        let (mut map, mut given) = (side, 1);
        let mut shapes = Vec::with_capacity(blocks.len());
        for (i, &b) in blocks.iter().enumerate() {
            if b.c_in != given {
                return Err(ShapeError::Channels {
                    block: i + 1,
                    c_in: b.c_in,
                    given,
                });
            }
            if b.kernel + 1 > map {
                return Err(ShapeError::KernelDoesNotFit {
                    block: i + 1,
                    kernel: b.kernel,
                    map,
                });
            }
            let conv_side = map - b.kernel + 1;
            let pool_side = conv_side / POOL;
            shapes.push(BlockShape {
                block: b,
                in_side: map,
                conv_side,
                pool_side,
            });
            (map, given) = (pool_side, b.c_out);
        }
        Ok(Net {
            side,
            shapes,
            classes,
        })
    }

    /// Values per sample entering the dense layer (C·S·S of the last pool).
    pub fn dense_inputs(&self) -> usize {
        self.shapes
            .last()
            .map_or(0, |s| s.block.c_out * s.pool_side * s.pool_side)
    }

    pub fn param_layout(&self) -> ParamLayout {
        let mut off = 0;
        let conv = self
            .shapes
            .iter()
            .map(|s| {
                let b = s.block;
                let w = off;
                off += b.c_out * b.c_in * b.kernel * b.kernel;
                let bias = off;
                off += b.c_out;
                ConvOffsets { w, b: bias }
            })
            .collect();
        let dense_w = off;
        let dense_b = dense_w + self.classes * self.dense_inputs();
        ParamLayout {
            conv,
            dense_w,
            dense_b,
            len: dense_b + self.classes,
        }
    }

    pub fn act_layout(&self, batch: usize) -> ActLayout {
        let mut off = batch * self.side * self.side;
        let mut arg = 0;
        let blocks = self
            .shapes
            .iter()
            .map(|s| {
                let conv_len = batch * s.block.c_out * s.conv_side * s.conv_side;
                let pool_len = batch * s.block.c_out * s.pool_side * s.pool_side;
                let a = BlockActs {
                    conv: off,
                    relu: off + conv_len,
                    pool: off + 2 * conv_len,
                    argmax: arg,
                };
                off += 2 * conv_len + pool_len;
                arg += pool_len;
                a
            })
            .collect();
        let logits = off;
        let probs = logits + batch * self.classes;
        ActLayout {
            batch,
            input: 0,
            blocks,
            logits,
            probs,
            len: probs + batch * self.classes,
            argmax_len: arg,
        }
    }

    /// Seeded He (Kaiming) uniform weights, limit √(6 / fan_in), fan_in = C_in·K·K for a conv
    /// and D for the dense layer (the ReLUs keep about half the variance, which the factor 2
    /// in 6 = 3·2 makes up for); zero biases. Drawn in buffer order from one generator.
    pub fn init_params(&self, seed: u64) -> Vec<f32> {
        let layout = self.param_layout();
        let mut p = vec![0.0f32; layout.len];
        let mut rng = SplitMix64::new(seed ^ 0xC0_1A7E_5EED);
        let mut fill = |dst: &mut [f32], fan_in: usize| {
            let limit = (6.0 / fan_in as f32).sqrt();
            for w in dst {
                *w = limit * rng.next_signed_unit();
            }
        };
        for (s, o) in self.shapes.iter().zip(&layout.conv) {
            let b = s.block;
            fill(&mut p[o.w..o.b], b.c_in * b.kernel * b.kernel);
        }
        fill(&mut p[layout.dense_w..layout.dense_b], self.dense_inputs());
        p
    }

    /// Buffers for a batch of `batch` samples.
    pub fn workspace(&self, batch: usize) -> Workspace {
        let layout = self.act_layout(batch);
        Workspace {
            acts: vec![0.0; layout.len],
            deltas: vec![0.0; layout.len],
            argmax: vec![0; layout.argmax_len],
            layout,
        }
    }

    /// Forward pass over `x` (ws.layout.batch images of side², NCHW with one channel) into
    /// `ws.acts` and `ws.argmax`. Index loops on purpose: they read like the kernels.
    pub fn forward(&self, params: &[f32], x: &[f32], ws: &mut Workspace) {
        let pl = self.param_layout();
        let l = &ws.layout;
        let batch = l.batch;
        let acts = &mut ws.acts;
        acts[l.input..l.input + x.len()].copy_from_slice(x);
        let mut in_off = l.input;
        for ((s, o), a) in self.shapes.iter().zip(&pl.conv).zip(&l.blocks) {
            conv_forward(s, batch, params, o, acts, in_off, a.conv);
            let conv_len = a.relu - a.conv;
            for i in 0..conv_len {
                acts[a.relu + i] = acts[a.conv + i].max(0.0);
            }
            pool_forward(s, batch, acts, a, &mut ws.argmax);
            in_off = a.pool;
        }
        let d = self.dense_inputs();
        let k = self.classes;
        for n in 0..batch {
            for j in 0..k {
                let mut acc = 0.0f32;
                for i in 0..d {
                    acc += acts[in_off + n * d + i] * params[pl.dense_w + j * d + i];
                }
                acts[l.logits + n * k + j] = acc + params[pl.dense_b + j];
            }
            let (m, sum) = softmax_parts(&acts[l.logits + n * k..][..k]);
            for j in 0..k {
                acts[l.probs + n * k + j] = (acts[l.logits + n * k + j] - m).exp() / sum;
            }
        }
    }

    /// Backward pass after [`Net::forward`] on the same workspace: fills `ws.deltas` and
    /// overwrites `grads` (the parameters' layout); returns the batch's summed loss (n
    /// ascending).
    pub fn backward(
        &self,
        params: &[f32],
        labels: &[u32],
        ws: &mut Workspace,
        grads: &mut [f32],
    ) -> f32 {
        let pl = self.param_layout();
        let l = &ws.layout;
        let batch = l.batch;
        let (acts, deltas) = (&ws.acts, &mut ws.deltas);
        let k = self.classes;
        let inv_b = 1.0 / batch as f32;

        // Softmax cross-entropy.
        let mut loss = 0.0f32;
        for n in 0..batch {
            let z = &acts[l.logits + n * k..][..k];
            let (m, sum) = softmax_parts(z);
            let y = labels[n] as usize;
            loss += sum.ln() - (z[y] - m);
            for j in 0..k {
                let t = if j == y { 1.0 } else { 0.0 };
                deltas[l.logits + n * k + j] = (acts[l.probs + n * k + j] - t) * inv_b;
            }
        }

        // Dense: weights, biases, then the delta of its input (the last pool).
        let d = self.dense_inputs();
        let p_off = l.blocks.last().map_or(l.input, |a| a.pool);
        for j in 0..k {
            for i in 0..d {
                let mut acc = 0.0f32;
                for n in 0..batch {
                    acc += deltas[l.logits + n * k + j] * acts[p_off + n * d + i];
                }
                grads[pl.dense_w + j * d + i] = acc;
            }
            let mut acc = 0.0f32;
            for n in 0..batch {
                acc += deltas[l.logits + n * k + j];
            }
            grads[pl.dense_b + j] = acc;
        }
        for n in 0..batch {
            for i in 0..d {
                let mut acc = 0.0f32;
                for j in 0..k {
                    acc += deltas[l.logits + n * k + j] * params[pl.dense_w + j * d + i];
                }
                deltas[p_off + n * d + i] = acc;
            }
        }

        // Blocks, last first.
        for b in (0..self.shapes.len()).rev() {
            let (s, o, a) = (&self.shapes[b], &pl.conv[b], &l.blocks[b]);
            let in_off = if b == 0 {
                l.input
            } else {
                l.blocks[b - 1].pool
            };
            // Pool backward: zero, then scatter to the argmax (windows do not overlap).
            let conv_len = a.relu - a.conv;
            let pool_len = batch * s.block.c_out * s.pool_side * s.pool_side;
            deltas[a.relu..a.relu + conv_len].fill(0.0);
            for e in 0..pool_len {
                let at = ws.argmax[a.argmax + e] as usize;
                deltas[a.relu + at] = deltas[a.pool + e];
            }
            // ReLU backward, on the pre-activation.
            for i in 0..conv_len {
                deltas[a.conv + i] = if acts[a.conv + i] > 0.0 {
                    deltas[a.relu + i]
                } else {
                    0.0
                };
            }
            conv_filter_grad(s, batch, acts, deltas, in_off, a.conv, o, grads);
            conv_input_grad(s, batch, params, o, deltas, a.conv, in_off);
        }
        loss
    }

    /// Mean loss, accuracy and each sample's predicted class over `samples`, in batches of up
    /// to `chunk` (at least 1). The mean is summed in f64: a report, not a training step.
    pub fn evaluate(&self, params: &[f32], samples: &Samples, chunk: usize) -> Evaluation {
        let chunk = chunk.max(1);
        let px = self.side * self.side;
        let k = self.classes;
        let (mut loss, mut correct) = (0.0f64, 0usize);
        let mut predicted = Vec::with_capacity(samples.len());
        let mut start = 0;
        let mut ws = self.workspace(chunk.min(samples.len()).max(1));
        while start < samples.len() {
            let rows = chunk.min(samples.len() - start);
            if ws.layout.batch != rows {
                ws = self.workspace(rows);
            }
            self.forward(params, &samples.x[start * px..(start + rows) * px], &mut ws);
            let l = &ws.layout;
            for n in 0..rows {
                let z = &ws.acts[l.logits + n * k..][..k];
                let y = samples.y[start + n] as usize;
                let (m, sum) = softmax_parts(z);
                loss += (sum.ln() - (z[y] - m)) as f64;
                let best = argmax_first(z);
                correct += usize::from(best == y);
                predicted.push(best as u32);
            }
            start += rows;
        }
        let len = samples.len().max(1);
        Evaluation {
            loss: (loss / len as f64) as f32,
            accuracy: correct as f32 / len as f32,
            predicted,
        }
    }

    /// One image (side², values in [0, 1]) through the network, with every layer's values for
    /// the page's "look inside"; `None` if the image is not side² values.
    pub fn inspect(&self, params: &[f32], image: &[f32]) -> Option<Inspection> {
        if image.len() != self.side * self.side {
            return None;
        }
        let mut ws = self.workspace(1);
        self.forward(params, image, &mut ws);
        let l = &ws.layout;
        let mut layers = vec![LayerView {
            kind: LayerKind::Input,
            block: 0,
            channels: 1,
            side: self.side,
            values: ws.acts[l.input..l.input + self.side * self.side].to_vec(),
        }];
        for (i, (s, a)) in self.shapes.iter().zip(&l.blocks).enumerate() {
            let c = s.block.c_out;
            let view = |kind, side, off: usize| LayerView {
                kind,
                block: i + 1,
                channels: c,
                side,
                values: ws.acts[off..off + c * side * side].to_vec(),
            };
            layers.push(view(LayerKind::Conv, s.conv_side, a.conv));
            layers.push(view(LayerKind::Relu, s.conv_side, a.relu));
            layers.push(view(LayerKind::Pool, s.pool_side, a.pool));
        }
        let logits = ws.acts[l.logits..l.logits + self.classes].to_vec();
        let probs = ws.acts[l.probs..l.probs + self.classes].to_vec();
        Some(Inspection {
            class: argmax_first(&logits),
            logits,
            probs,
            layers,
        })
    }
}

/// The buffers of one batch: activations, deltas and argmax in [`ActLayout`].
#[derive(Clone, Debug)]
pub struct Workspace {
    pub layout: ActLayout,
    pub acts: Vec<f32>,
    pub deltas: Vec<f32>,
    pub argmax: Vec<u32>,
}

/// What [`Net::evaluate`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub loss: f32,
    pub accuracy: f32,
    /// Each sample's class (the first largest logit), for the confusion matrix and the
    /// digits it gets wrong.
    pub predicted: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    Input,
    /// Conv output with its bias, before the ReLU.
    Conv,
    Relu,
    Pool,
}

/// One layer's values for one image: `channels` maps of `side`×`side`, CHW.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerView {
    pub kind: LayerKind,
    /// The block it belongs to (1-based; 0 for the input).
    pub block: usize,
    pub channels: usize,
    pub side: usize,
    pub values: Vec<f32>,
}

/// One image's way through the network.
#[derive(Clone, Debug, PartialEq)]
pub struct Inspection {
    pub class: usize,
    pub logits: Vec<f32>,
    pub probs: Vec<f32>,
    pub layers: Vec<LayerView>,
}

/// Loss, accuracy and each sample's class from an evaluation's logits (rows × `classes`)
/// and the samples' labels, with the twin's formulas ([`Net::evaluate`]: the mean
/// loss summed in f64, the class the first largest logit), so GPU and twin evaluations read
/// the same. Rows beyond the shorter of the two are ignored; no rows give zeros.
pub fn evaluation(logits: &[f32], labels: &[u32], classes: usize) -> Evaluation {
    let rows = labels.len().min(logits.len() / classes.max(1));
    let (mut loss, mut correct) = (0.0f64, 0usize);
    let mut predicted = Vec::with_capacity(rows);
    for (z, &y) in logits.chunks_exact(classes.max(1)).zip(labels).take(rows) {
        let (m, sum) = softmax_parts(z);
        let y = (y as usize).min(classes.saturating_sub(1));
        loss += (sum.ln() - (z[y] - m)) as f64;
        let mut best = 0;
        for (j, &v) in z.iter().enumerate().skip(1) {
            if v > z[best] {
                best = j;
            }
        }
        correct += usize::from(best == y);
        predicted.push(best as u32);
    }
    let len = rows.max(1);
    Evaluation {
        loss: (loss / len as f64) as f32,
        accuracy: correct as f32 / len as f32,
        predicted,
    }
}

/// Index of the first largest value.
pub(crate) fn argmax_first(z: &[f32]) -> usize {
    let mut best = 0;
    for (j, &v) in z.iter().enumerate().skip(1) {
        if v > z[best] {
            best = j;
        }
    }
    best
}

/// (max, Σ exp(z − max)) of one sample's logits, j ascending: the max keeps every exponent
/// ≤ 0, so nothing overflows.
pub fn softmax_parts(z: &[f32]) -> (f32, f32) {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f32;
    for &v in z {
        sum += (v - m).exp();
    }
    (m, sum)
}

/// Conv forward of one block (order in the module header).
fn conv_forward(
    s: &BlockShape,
    batch: usize,
    params: &[f32],
    o: &ConvOffsets,
    acts: &mut [f32],
    in_off: usize,
    out_off: usize,
) {
    let Block {
        c_in,
        c_out,
        kernel,
    } = s.block;
    let (is, cs) = (s.in_side, s.conv_side);
    for n in 0..batch {
        for oc in 0..c_out {
            for y in 0..cs {
                for x in 0..cs {
                    let mut acc = 0.0f32;
                    for c in 0..c_in {
                        let plane = in_off + (n * c_in + c) * is * is;
                        let w = o.w + (oc * c_in + c) * kernel * kernel;
                        for r in 0..kernel {
                            for t in 0..kernel {
                                acc +=
                                    acts[plane + (y + r) * is + x + t] * params[w + r * kernel + t];
                            }
                        }
                    }
                    acts[out_off + ((n * c_out + oc) * cs + y) * cs + x] = acc + params[o.b + oc];
                }
            }
        }
    }
}

/// 2×2 max-pool with stride 2 of one block's ReLU output, keeping the winners' indices.
pub(crate) fn pool_forward(
    s: &BlockShape,
    batch: usize,
    acts: &mut [f32],
    a: &BlockActs,
    argmax: &mut [u32],
) {
    let (cs, ps, c) = (s.conv_side, s.pool_side, s.block.c_out);
    for nc in 0..batch * c {
        for py in 0..ps {
            for px in 0..ps {
                let at = |dy: usize, dx: usize| (nc * cs + POOL * py + dy) * cs + POOL * px + dx;
                let mut best = at(0, 0);
                for (dy, dx) in [(0, 1), (1, 0), (1, 1)] {
                    let i = at(dy, dx);
                    if acts[a.relu + i] > acts[a.relu + best] {
                        best = i;
                    }
                }
                let e = (nc * ps + py) * ps + px;
                acts[a.pool + e] = acts[a.relu + best];
                argmax[a.argmax + e] = best as u32;
            }
        }
    }
}

/// A block's filter and bias gradients: per-sample partial sums, then their sum over the
/// batch (order in the module header).
#[allow(clippy::too_many_arguments)]
fn conv_filter_grad(
    s: &BlockShape,
    batch: usize,
    acts: &[f32],
    deltas: &[f32],
    in_off: usize,
    dz_off: usize,
    o: &ConvOffsets,
    grads: &mut [f32],
) {
    let Block {
        c_in,
        c_out,
        kernel,
    } = s.block;
    let (is, cs) = (s.in_side, s.conv_side);
    let kk = kernel * kernel;
    grads[o.w..o.b + c_out].fill(0.0);
    for n in 0..batch {
        for oc in 0..c_out {
            let dz = dz_off + (n * c_out + oc) * cs * cs;
            for c in 0..c_in {
                let plane = in_off + (n * c_in + c) * is * is;
                for r in 0..kernel {
                    for t in 0..kernel {
                        let mut part = 0.0f32;
                        for y in 0..cs {
                            for x in 0..cs {
                                part +=
                                    deltas[dz + y * cs + x] * acts[plane + (y + r) * is + x + t];
                            }
                        }
                        grads[o.w + (oc * c_in + c) * kk + r * kernel + t] += part;
                    }
                }
            }
            let mut part = 0.0f32;
            for i in 0..cs * cs {
                part += deltas[dz + i];
            }
            grads[o.b + oc] += part;
        }
    }
}

/// A block's input gradient as a transposed convolution (order in the module header).
fn conv_input_grad(
    s: &BlockShape,
    batch: usize,
    params: &[f32],
    o: &ConvOffsets,
    deltas: &mut [f32],
    dz_off: usize,
    in_off: usize,
) {
    let Block {
        c_in,
        c_out,
        kernel,
    } = s.block;
    let (is, cs) = (s.in_side, s.conv_side);
    let kk = kernel * kernel;
    let last = kernel - 1;
    for n in 0..batch {
        for c in 0..c_in {
            for y in 0..is {
                for x in 0..is {
                    let mut acc = 0.0f32;
                    for oc in 0..c_out {
                        let dz = dz_off + (n * c_out + oc) * cs * cs;
                        let w = o.w + (oc * c_in + c) * kk;
                        for rp in 0..kernel {
                            // Row y + rp − (K − 1) of dz, which must lie inside the map.
                            let Some(zy) = (y + rp).checked_sub(last).filter(|&v| v < cs) else {
                                continue;
                            };
                            for sp in 0..kernel {
                                let Some(zx) = (x + sp).checked_sub(last).filter(|&v| v < cs)
                                else {
                                    continue;
                                };
                                // The 180° rotation: tap (K−1−r', K−1−s').
                                acc += deltas[dz + zy * cs + zx]
                                    * params[w + (last - rp) * kernel + (last - sp)];
                            }
                        }
                    }
                    deltas[in_off + ((n * c_in + c) * is + y) * is + x] = acc;
                }
            }
        }
    }
}

/// The optimiser's update of every parameter (order in the module header); `step` is the
/// step being completed (≥ 1, for Adam's bias correction).
pub fn apply_update(
    hyper: &Hyper,
    step: u64,
    params: &mut [f32],
    grads: &[f32],
    m: &mut [f32],
    v: &mut [f32],
) {
    match hyper.optimiser {
        Optimiser::Sgd => optim::sgd_update(hyper.lr, hyper.momentum, params, grads, m),
        Optimiser::Adam => optim::adam_update(hyper.lr, step, params, grads, m, v),
    }
}

/// The CPU twin: trains the network on `train` in the seeded batch order with the kernels'
/// formulas, step for step.
pub struct CpuTrainer {
    pub net: Net,
    pub hyper: Hyper,
    pub params: Vec<f32>,
    pub batch: usize,
    grads: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    ws: Workspace,
    train: Samples,
    order: BatchOrder,
    x: Vec<f32>,
    y: Vec<u32>,
    indices: Vec<u32>,
    /// Steps taken so far.
    pub step: u64,
    /// Mean loss of the last batch (before its update).
    pub last_loss: f32,
}

impl CpuTrainer {
    /// `batch` is at least 1; `order_seed` seeds the per-epoch batch order. `train`'s images
    /// have the net's side (the page builds both from one [`crate::Spec`]).
    pub fn new(
        net: Net,
        hyper: Hyper,
        params: Vec<f32>,
        batch: usize,
        train: Samples,
        order_seed: u64,
    ) -> Self {
        let batch = batch.max(1);
        let n = params.len();
        Self {
            ws: net.workspace(batch),
            order: BatchOrder::new(train.len(), order_seed),
            net,
            hyper,
            params,
            batch,
            grads: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            train,
            x: Vec::new(),
            y: Vec::new(),
            indices: Vec::new(),
            step: 0,
            last_loss: 0.0,
        }
    }

    /// The inputs and labels of step `step`'s batch (what the GPU session uploads).
    pub fn gather(&mut self, step: u64) -> (&[f32], &[u32]) {
        self.order.batch(step, self.batch, &mut self.indices);
        self.x.clear();
        self.y.clear();
        for &i in &self.indices {
            self.x.extend_from_slice(self.train.image(i as usize));
            self.y.push(self.train.y[i as usize]);
        }
        (&self.x, &self.y)
    }

    /// One step: forward, loss, backward and the update.
    pub fn step(&mut self) {
        if self.train.is_empty() {
            return;
        }
        self.gather(self.step);
        self.net.forward(&self.params, &self.x, &mut self.ws);
        let loss = self
            .net
            .backward(&self.params, &self.y, &mut self.ws, &mut self.grads);
        self.last_loss = loss / self.batch as f32;
        self.step += 1;
        apply_update(
            &self.hyper,
            self.step,
            &mut self.params,
            &self.grads,
            &mut self.m,
            &mut self.v,
        );
    }

    pub fn evaluate(&self, samples: &Samples) -> Evaluation {
        self.net.evaluate(&self.params, samples, EVAL_CHUNK)
    }

    pub fn inspect(&self, image: &[f32]) -> Option<Inspection> {
        self.net.inspect(&self.params, image)
    }

    /// The last step's gradients.
    pub fn grads(&self) -> &[f32] {
        &self.grads
    }

    /// The last step's activations, argmax and deltas.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// (momentum or Adam's first moment, Adam's second moment).
    pub fn optimiser_state(&self) -> (&[f32], &[f32]) {
        (&self.m, &self.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lenet() -> Net {
        Net::new(
            28,
            vec![
                Block {
                    c_in: 1,
                    c_out: 6,
                    kernel: 5,
                },
                Block {
                    c_in: 6,
                    c_out: 16,
                    kernel: 5,
                },
            ],
            10,
        )
        .unwrap()
    }

    #[test]
    fn lenet_shapes_and_layout() {
        let net = lenet();
        let sides: Vec<_> = net
            .shapes
            .iter()
            .map(|s| (s.in_side, s.conv_side, s.pool_side))
            .collect();
        assert_eq!(sides, vec![(28, 24, 12), (12, 8, 4)]);
        let p = net.param_layout();
        assert_eq!(p.conv[0], ConvOffsets { w: 0, b: 150 });
        assert_eq!(
            p.conv[1],
            ConvOffsets {
                w: 156,
                b: 156 + 2400
            }
        );
        assert_eq!(p.dense_w, 2572);
        assert_eq!(p.dense_b, 2572 + 2560);
        assert_eq!(p.len, 2572 + 2560 + 10);
        let a = net.act_layout(2);
        assert_eq!(a.blocks[0].conv, 2 * 784);
        assert_eq!(a.blocks[0].relu, 2 * 784 + 2 * 6 * 576);
        assert_eq!(a.blocks[0].pool, 2 * 784 + 4 * 6 * 576);
        assert_eq!(a.blocks[1].argmax, 2 * 6 * 144);
        assert_eq!(a.argmax_len, 2 * 6 * 144 + 2 * 16 * 16);
        assert_eq!(a.len, a.probs + 20);
    }

    #[test]
    fn bad_shapes_are_named() {
        let b = |c_in, c_out, kernel| Block {
            c_in,
            c_out,
            kernel,
        };
        assert_eq!(Net::new(28, vec![], 10), Err(ShapeError::ZeroSize));
        assert_eq!(
            Net::new(28, vec![b(1, 4, 3), b(3, 4, 3)], 10),
            Err(ShapeError::Channels {
                block: 2,
                c_in: 3,
                given: 4
            })
        );
        assert_eq!(
            Net::new(9, vec![b(1, 2, 3), b(2, 2, 3)], 10),
            Err(ShapeError::KernelDoesNotFit {
                block: 2,
                kernel: 3,
                map: 3
            })
        );
    }

    #[test]
    fn init_is_seeded_and_scaled() {
        let net = lenet();
        let a = net.init_params(3);
        assert_eq!(a, net.init_params(3));
        assert_ne!(a, net.init_params(4));
        let p = net.param_layout();
        let limit = (6.0f32 / 25.0).sqrt();
        assert!(a[..150].iter().all(|w| w.abs() <= limit));
        assert!(a[150..156].iter().all(|&b| b == 0.0));
        assert!(a[p.dense_b..].iter().all(|&b| b == 0.0));
    }

    #[test]
    fn pool_keeps_the_first_of_equal_maxima() {
        // One 2×2 conv output, all equal: the pool keeps index 0; the delta goes there.
        let net = Net::new(
            3,
            vec![Block {
                c_in: 1,
                c_out: 1,
                kernel: 2,
            }],
            2,
        )
        .unwrap();
        let mut params = vec![0.0; net.param_layout().len];
        params[4] = 0.5; // conv bias: every conv output is 0.5
        let mut ws = net.workspace(1);
        net.forward(&params, &[0.0; 9], &mut ws);
        assert_eq!(ws.argmax, vec![0]);
        assert_eq!(ws.acts[ws.layout.blocks[0].pool], 0.5);
    }

    #[test]
    fn adam_corrections_are_exact_enough() {
        let (c1, c2) = adam_corrections(1);
        assert_eq!(
            (c1, c2),
            ((1.0 - BETA1 as f64) as f32, (1.0 - BETA2 as f64) as f32)
        );
        let (c1, _) = adam_corrections(2);
        assert_eq!(c1, (1.0 - (BETA1 as f64) * (BETA1 as f64)) as f32);
        assert_eq!(adam_corrections(0), adam_corrections(1));
    }
}
