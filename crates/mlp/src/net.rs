//! The network: shape, flat-buffer layout, seeded initialisation and the CPU twin.
//!
//! Layout (shared with the WGSL kernels in `shaders/mlp_*.wgsl`):
//! - parameters: for each layer l = 1…L, its weights W (fan_out × fan_in, row-major: W[n, k]
//!   at `w_off + n·fan_in + k`) followed by its biases (fan_out values at `b_off`);
//! - activations: for a batch of `rows` samples, layer 0 (the input features) and then every
//!   layer's outputs, each `rows × width` row-major, one after the other;
//! - deltas (dLoss/dz): the same layout as the activations.

use cpu_kernels::data::SplitMix64;
use cpu_kernels::optim;

/// The activation of the hidden layers (the output layer is linear). The number is what the
/// kernels receive in their uniform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Linear = 0,
    Relu = 1,
    Tanh = 2,
    Sigmoid = 3,
}

impl Activation {
    pub const ALL: [Activation; 4] = [
        Activation::Relu,
        Activation::Tanh,
        Activation::Sigmoid,
        Activation::Linear,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Activation::Linear => "linear",
            Activation::Relu => "relu",
            Activation::Tanh => "tanh",
            Activation::Sigmoid => "sigmoid",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.code() == s)
    }

    /// a = f(z), with the same clamping as the shader (large |z| cannot overflow `exp`).
    pub fn apply(self, z: f32) -> f32 {
        match self {
            Activation::Linear => z,
            Activation::Relu => z.max(0.0),
            Activation::Tanh => z.clamp(-15.0, 15.0).tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-z.clamp(-30.0, 30.0)).exp()),
        }
    }

    /// f'(z) written in terms of the output a = f(z), as the backward kernel computes it.
    pub fn derivative_from_output(self, a: f32) -> f32 {
        match self {
            Activation::Linear => 1.0,
            Activation::Relu => {
                if a > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Activation::Tanh => 1.0 - a * a,
            Activation::Sigmoid => a * (1.0 - a),
        }
    }
}

/// The loss on the output layer's logits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// Softmax followed by cross-entropy (classification).
    CrossEntropy = 0,
    /// Mean squared error of the outputs against one-hot targets (regression-style).
    Mse = 1,
    /// Regression: one output z against the point's target t (its label's bits, see
    /// `data::target_label`): loss ½(z − t)². Chosen by the dataset, not offered for classes.
    Regression = 2,
}

impl LossKind {
    pub fn code(self) -> &'static str {
        match self {
            LossKind::CrossEntropy => "ce",
            LossKind::Mse => "mse",
            LossKind::Regression => "reg",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        [LossKind::CrossEntropy, LossKind::Mse]
            .into_iter()
            .find(|l| l.code() == s)
    }
}

/// How parameters are updated from their gradients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optimiser {
    /// p ← p − lr·g (the momentum kernel with momentum 0).
    Sgd,
    /// v ← 0.9·v + g; p ← p − lr·v.
    Momentum,
    /// Adam with β₁ = 0.9, β₂ = 0.999, ε = 1e-7 (Kingma & Ba), bias-corrected.
    Adam,
}

impl Optimiser {
    pub const ALL: [Optimiser; 3] = [Optimiser::Sgd, Optimiser::Momentum, Optimiser::Adam];

    pub fn code(self) -> &'static str {
        match self {
            Optimiser::Sgd => "sgd",
            Optimiser::Momentum => "momentum",
            Optimiser::Adam => "adam",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.code() == s)
    }

    pub fn momentum(self) -> f32 {
        match self {
            Optimiser::Momentum => 0.9,
            _ => 0.0,
        }
    }
}

/// Threads that share one parameter's sum over the batch in `mlp_backward_params.wgsl` (its
/// workgroup size); the CPU twin sums in the same order.
pub const REDUCE: usize = 64;

// One set of optimiser constants and one update for every model: `cpu_kernels::optim`.
pub use cpu_kernels::optim::{BETA1, BETA2, EPSILON};

/// Adam's bias corrections (1 − β₁ᵗ, 1 − β₂ᵗ) for step t ≥ 1, computed once on the CPU and
/// handed to the kernel, so both sides use the same two numbers (`cpu_kernels::optim`'s).
pub fn adam_corrections(t: u32) -> (f32, f32) {
    cpu_kernels::optim::adam_corrections(t.max(1) as u64)
}

/// Learning settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hyper {
    pub lr: f32,
    pub optimiser: Optimiser,
    /// L1 and L2 regularisation strengths (0 = off). The optimiser adds their gradient to
    /// every parameter's, biases included: g ← g + (l1·sign(p) + l2·p), so the penalty is
    /// l1·Σ|p| + (l2 / 2)·Σp².
    pub l1: f32,
    pub l2: f32,
}

/// sign(p) as WGSL's `sign`: 0 at 0 (Rust's `signum` gives ±1 there).
pub fn sign(p: f32) -> f32 {
    if p > 0.0 {
        1.0
    } else if p < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The gradient the optimiser uses: the loss's plus the regularisation's, in the kernels'
/// order (`mlp_sgd.wgsl`, `mlp_adam.wgsl`).
pub fn regularised(g: f32, p: f32, l1: f32, l2: f32) -> f32 {
    g + (l1 * sign(p) + l2 * p)
}

/// The network's shape: widths of every layer, input features first, classes last.
#[derive(Clone, Debug, PartialEq)]
pub struct Net {
    pub sizes: Vec<usize>,
    pub activation: Activation,
    pub loss: LossKind,
}

/// Where layer l's parameters start in the flat parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerOffsets {
    pub fan_in: usize,
    pub fan_out: usize,
    pub w_off: usize,
    pub b_off: usize,
}

/// Parameter offsets of every layer (index 0 is layer 1) and the total count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub layers: Vec<LayerOffsets>,
    pub param_count: usize,
}

impl Net {
    /// Number of dense layers (hidden layers + the output layer).
    pub fn depth(&self) -> usize {
        self.sizes.len().saturating_sub(1)
    }

    pub fn classes(&self) -> usize {
        self.sizes.last().copied().unwrap_or(0)
    }

    pub fn inputs(&self) -> usize {
        self.sizes.first().copied().unwrap_or(0)
    }

    /// The activation applied after layer l (1-based): hidden layers use the chosen one,
    /// the output layer is linear (logits).
    pub fn activation_of(&self, l: usize) -> Activation {
        if l == self.depth() {
            Activation::Linear
        } else {
            self.activation
        }
    }

    pub fn layout(&self) -> Layout {
        let mut off = 0;
        let layers = self
            .sizes
            .windows(2)
            .map(|w| {
                let (fan_in, fan_out) = (w[0], w[1]);
                let o = LayerOffsets {
                    fan_in,
                    fan_out,
                    w_off: off,
                    b_off: off + fan_in * fan_out,
                };
                off += fan_in * fan_out + fan_out;
                o
            })
            .collect();
        Layout {
            layers,
            param_count: off,
        }
    }

    /// Start of each layer's activations (index 0 = inputs) for a batch of `rows`, and the
    /// total length.
    pub fn act_offsets(&self, rows: usize) -> (Vec<usize>, usize) {
        let mut offs = Vec::with_capacity(self.sizes.len());
        let mut off = 0;
        for &w in &self.sizes {
            offs.push(off);
            off += rows * w;
        }
        (offs, off)
    }

    /// Seeded Glorot-uniform weights (limit √(6 / (fan_in + fan_out))) and zero biases.
    pub fn init_params(&self, seed: u64) -> Vec<f32> {
        let layout = self.layout();
        let mut p = vec![0.0f32; layout.param_count];
        let mut rng = SplitMix64::new(seed ^ 0x5EED_1417);
        for l in &layout.layers {
            let limit = (6.0 / (l.fan_in + l.fan_out) as f32).sqrt();
            for w in &mut p[l.w_off..l.b_off] {
                *w = limit * rng.next_signed_unit();
            }
        }
        p
    }

    /// Forward pass over `rows` samples of `x` (rows × inputs); returns every layer's
    /// activations in the flat layout. Sums run k = 0…fan_in−1, then the bias is added, as in
    /// the kernel.
    pub fn forward_all(&self, params: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
        let (offs, total) = self.act_offsets(rows);
        let mut acts = vec![0.0f32; total];
        acts[..rows * self.inputs()].copy_from_slice(&x[..rows * self.inputs()]);
        for (i, l) in self.layout().layers.iter().enumerate() {
            let act = self.activation_of(i + 1);
            let (inp, out) = acts.split_at_mut(offs[i + 1]);
            let inp = &inp[offs[i]..];
            for b in 0..rows {
                for n in 0..l.fan_out {
                    let mut acc = 0.0f32;
                    for k in 0..l.fan_in {
                        acc += params[l.w_off + n * l.fan_in + k] * inp[b * l.fan_in + k];
                    }
                    out[b * l.fan_out + n] = act.apply(acc + params[l.b_off + n]);
                }
            }
        }
        acts
    }

    /// The output layer (logits) for `rows` samples.
    pub fn logits(&self, params: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
        let acts = self.forward_all(params, x, rows);
        let start = acts.len() - rows * self.classes();
        acts[start..].to_vec()
    }
}

/// Mean loss and accuracy of logits (rows × classes) against labels. Accuracy counts the
/// largest logit (first on ties). For regression the second number is the root-mean-square
/// error √(2 · mean loss) instead.
pub fn metrics(loss: LossKind, logits: &[f32], labels: &[u32], classes: usize) -> (f32, f32) {
    let rows = labels.len();
    if rows == 0 || classes == 0 {
        return (0.0, 0.0);
    }
    if loss == LossKind::Regression {
        let mean = (0..rows)
            .map(|b| sample_loss(loss, &logits[b * classes..], labels[b]) as f64)
            .sum::<f64>()
            / rows as f64;
        return (mean as f32, (2.0 * mean).sqrt() as f32);
    }
    let mut total = 0.0f64;
    let mut correct = 0usize;
    for (b, &y) in labels.iter().enumerate() {
        let z = &logits[b * classes..(b + 1) * classes];
        total += sample_loss(loss, z, y) as f64;
        let mut best = 0;
        for c in 1..classes {
            if z[c] > z[best] {
                best = c;
            }
        }
        if best == y as usize {
            correct += 1;
        }
    }
    ((total / rows as f64) as f32, correct as f32 / rows as f32)
}

/// Loss of one sample, as `shaders/mlp_loss.wgsl` computes it.
pub fn sample_loss(loss: LossKind, z: &[f32], y: u32) -> f32 {
    match loss {
        LossKind::CrossEntropy => {
            let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let s: f32 = z.iter().map(|v| (v - m).exp()).sum();
            s.ln() - (z[y as usize] - m)
        }
        LossKind::Mse => {
            let mut acc = 0.0f32;
            for (c, v) in z.iter().enumerate() {
                let t = if c == y as usize { 1.0 } else { 0.0 };
                acc += (v - t) * (v - t);
            }
            0.5 * acc
        }
        LossKind::Regression => {
            let e = z[0] - crate::data::label_target(y);
            0.5 * (e * e)
        }
    }
}

/// Probability of class 1 from two logits (softmax), for the decision-boundary picture.
pub fn prob_class1(z0: f32, z1: f32) -> f32 {
    1.0 / (1.0 + (z0 - z1).clamp(-30.0, 30.0).exp())
}

/// The order batches are drawn in lives with the data (`data::batch_order`); it is named
/// here too because every trainer takes it with [`batch_indices`].
pub use crate::data::batch_order;

/// Indices of the samples in step `step`'s batch: consecutive entries of `order`, wrapping.
pub fn batch_indices(order: &[u32], step: u64, batch: usize) -> impl Iterator<Item = u32> + '_ {
    let n = order.len().max(1) as u64;
    let start = step.wrapping_mul(batch as u64) % n;
    (0..batch as u64).map(move |i| order[((start + i) % n) as usize])
}

/// Copies the inputs and labels of one batch into `x` and `y` (the GPU session uploads
/// exactly these).
#[allow(clippy::too_many_arguments)]
pub fn gather_batch(
    features: &[f32],
    labels: &[u32],
    width: usize,
    order: &[u32],
    step: u64,
    batch: usize,
    x: &mut Vec<f32>,
    y: &mut Vec<u32>,
) {
    x.clear();
    y.clear();
    for i in batch_indices(order, step, batch) {
        let i = i as usize;
        x.extend_from_slice(&features[i * width..(i + 1) * width]);
        y.push(labels[i]);
    }
}

/// One sample's loss gradient on its logits `z` (mlp_loss.wgsl), scaled by `inv_b` (1 / the
/// effective batch), written into `delta` (one value per class); returns the sample's loss.
/// The twin and the tuned trainer both call this, so they differ only in their sums.
#[allow(clippy::needless_range_loop)]
pub fn loss_delta(loss: LossKind, z: &[f32], y: u32, inv_b: f32, delta: &mut [f32]) -> f32 {
    let classes = z.len();
    let y_class = y as usize;
    match loss {
        LossKind::CrossEntropy => {
            let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let s: f32 = z.iter().map(|v| (v - m).exp()).sum();
            for c in 0..classes {
                let p = (z[c] - m).exp() / s;
                let t = if c == y_class { 1.0 } else { 0.0 };
                delta[c] = (p - t) * inv_b;
            }
        }
        LossKind::Mse => {
            for c in 0..classes {
                let t = if c == y_class { 1.0 } else { 0.0 };
                delta[c] = (z[c] - t) * inv_b;
            }
        }
        LossKind::Regression => {
            let t = crate::data::label_target(y);
            delta[0] = (z[0] - t) * inv_b;
        }
    }
    sample_loss(loss, z, y)
}

/// The optimiser's update of every parameter from its gradient (mlp_sgd.wgsl /
/// mlp_adam.wgsl); `step` is the step being completed (≥ 1, Adam's bias correction).
pub fn apply_update(
    hyper: &Hyper,
    step: u64,
    epsilon: f32,
    params: &mut [f32],
    grads: &[f32],
    m: &mut [f32],
    v: &mut [f32],
) {
    let (lr, l1, l2) = (hyper.lr, hyper.l1, hyper.l2);
    let reg = |g, p| regularised(g, p, l1, l2);
    match hyper.optimiser {
        Optimiser::Sgd | Optimiser::Momentum => {
            optim::sgd_update_with(lr, hyper.optimiser.momentum(), params, grads, m, reg)
        }
        // Steps past u32::MAX use the last correction, as the kernel's table does.
        Optimiser::Adam => optim::adam_update_with(
            lr,
            step.min(u32::MAX as u64),
            epsilon,
            params,
            grads,
            m,
            v,
            reg,
        ),
    }
}

/// The CPU twin: trains the same network with the same data order and the kernels' formulas.
pub struct CpuTrainer {
    pub net: Net,
    pub hyper: Hyper,
    pub params: Vec<f32>,
    pub batch: usize,
    layout: Layout,
    grads: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    deltas: Vec<f32>,
    features: Vec<f32>,
    labels: Vec<u32>,
    order: Vec<u32>,
    x: Vec<f32>,
    y: Vec<u32>,
    /// Scratch for the per-lane partial sums of the weight gradients (REDUCE × parameters).
    partials: Vec<f32>,
    /// Steps taken so far.
    pub step: u64,
    /// Mean loss of the last batch.
    pub last_batch_loss: f32,
    /// Adam's ε ([`EPSILON`]). A field so a test can give the twin a wrong one and show
    /// that the GPU comparison notices.
    pub epsilon: f32,
    /// The bias column's input (1). A field for the same reason: a twin with a wrong bias
    /// rule must fail the comparison.
    pub bias_input: f32,
    /// Micro-batches per step (gradient accumulation, ≥ 1): a step runs forward and backward
    /// on `accum` consecutive micro-batches of `batch` samples, adds their gradients, and
    /// updates once. Each micro-batch's loss gradient is divided by `accum · batch`, so the sum
    /// is the gradient of the mean loss over the effective batch (the mean of the micro-batch
    /// means), as `mlp_loss.wgsl` does.
    pub accum: usize,
}

impl CpuTrainer {
    /// `features` is rows × `net.inputs()`, `labels` one class per row; `order` is the batch
    /// order (see [`batch_order`]).
    pub fn new(
        net: Net,
        hyper: Hyper,
        params: Vec<f32>,
        batch: usize,
        features: Vec<f32>,
        labels: Vec<u32>,
        order: Vec<u32>,
    ) -> Self {
        let layout = net.layout();
        let n = layout.param_count;
        let (_, acts_len) = net.act_offsets(batch);
        Self {
            net,
            hyper,
            params,
            batch,
            layout,
            grads: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            deltas: vec![0.0; acts_len],
            features,
            labels,
            order,
            x: Vec::new(),
            y: Vec::new(),
            partials: Vec::new(),
            step: 0,
            last_batch_loss: 0.0,
            epsilon: EPSILON,
            bias_input: 1.0,
            accum: 1,
        }
    }

    /// Samples per update: `accum · batch`.
    pub fn effective_batch(&self) -> usize {
        self.accum.max(1) * self.batch
    }

    /// One training step: forward, loss and backward over `accum` micro-batches, then one
    /// update. Index loops on purpose: they read like the kernels they mirror.
    pub fn step(&mut self) {
        let k = self.accum.max(1);
        self.grads.iter_mut().for_each(|g| *g = 0.0);
        let mut loss_sum = 0.0f32;
        for j in 0..k {
            loss_sum += self.micro_batch(self.step * k as u64 + j as u64, k);
        }
        self.last_batch_loss = loss_sum / (k * self.batch) as f32;
        self.update();
    }

    /// Forward and backward over micro-batch `index` (the `index`-th run of `batch` samples
    /// in the batch order), adding its gradients to `grads`; returns its summed loss.
    #[allow(clippy::needless_range_loop)]
    fn micro_batch(&mut self, index: u64, k: usize) -> f32 {
        let net = &self.net;
        let rows = self.batch;
        gather_batch(
            &self.features,
            &self.labels,
            net.inputs(),
            &self.order,
            index,
            rows,
            &mut self.x,
            &mut self.y,
        );
        let acts = net.forward_all(&self.params, &self.x, rows);
        let (offs, _) = net.act_offsets(rows);
        let depth = net.depth();
        let classes = net.classes();

        // Loss gradient on the logits (mlp_loss.wgsl).
        let z_off = offs[depth];
        let inv_b = 1.0 / (k * rows) as f32;
        let mut loss_sum = 0.0f32;
        for b in 0..rows {
            let z = &acts[z_off + b * classes..z_off + (b + 1) * classes];
            let d = &mut self.deltas[z_off + b * classes..z_off + (b + 1) * classes];
            loss_sum += loss_delta(net.loss, z, self.y[b], inv_b, d);
        }

        // Backward, last layer first (mlp_backward_params.wgsl, mlp_backward_input.wgsl).
        for l in (1..=depth).rev() {
            let lo = self.layout.layers[l - 1];
            let (in_off, out_off) = (offs[l - 1], offs[l]);
            // The kernel's order: lane t sums samples t, t + REDUCE, t + 2·REDUCE, … in turn,
            // then the lanes are halved. Walking the batch once and adding sample b into lane
            // b mod REDUCE gives every lane exactly that sum, with contiguous inner loops (so the
            // twin is as fast as a plain serial loop, and the same to the last bit).
            let cols = lo.fan_in + 1;
            let per_lane = lo.fan_out * cols;
            let part = &mut self.partials;
            part.clear();
            part.resize(REDUCE * per_lane, 0.0);
            for b in 0..rows {
                let lane = &mut part[(b % REDUCE) * per_lane..][..per_lane];
                let a = &acts[in_off + b * lo.fan_in..][..lo.fan_in];
                let d = &self.deltas[out_off + b * lo.fan_out..][..lo.fan_out];
                for (row, &dn) in lane.chunks_exact_mut(cols).zip(d) {
                    for (g, &ak) in row.iter_mut().zip(a) {
                        *g += dn * ak;
                    }
                    // The bias column's input is 1.
                    row[lo.fan_in] += dn * self.bias_input;
                }
            }
            let mut s = REDUCE / 2;
            while s > 0 {
                let (low, high) = part.split_at_mut(s * per_lane);
                for (x, y) in low.iter_mut().zip(&high[..s * per_lane]) {
                    *x += *y;
                }
                s /= 2;
            }
            // Added to what earlier micro-batches left (`mlp_backward_params.wgsl` adds too;
            // the step starts from zero, and 0 + x = x exactly).
            for n in 0..lo.fan_out {
                let row = &part[n * cols..(n + 1) * cols];
                for (g, &r) in self.grads[lo.w_off + n * lo.fan_in..][..lo.fan_in]
                    .iter_mut()
                    .zip(&row[..lo.fan_in])
                {
                    *g += r;
                }
                self.grads[lo.b_off + n] += row[lo.fan_in];
            }
            if l > 1 {
                let act = net.activation_of(l - 1);
                for b in 0..rows {
                    for k in 0..lo.fan_in {
                        let mut s = 0.0f32;
                        for n in 0..lo.fan_out {
                            s += self.deltas[out_off + b * lo.fan_out + n]
                                * self.params[lo.w_off + n * lo.fan_in + k];
                        }
                        let a = acts[in_off + b * lo.fan_in + k];
                        self.deltas[in_off + b * lo.fan_in + k] = s * act.derivative_from_output(a);
                    }
                }
            }
        }

        loss_sum
    }

    /// The optimiser's update from the accumulated gradients (mlp_sgd.wgsl / mlp_adam.wgsl).
    fn update(&mut self) {
        self.step += 1;
        apply_update(
            &self.hyper,
            self.step,
            self.epsilon,
            &mut self.params,
            &self.grads,
            &mut self.m,
            &mut self.v,
        );
    }

    /// Mean loss and accuracy over a data set (rows × inputs features).
    pub fn evaluate(&self, features: &[f32], labels: &[u32]) -> (f32, f32) {
        let logits = self.net.logits(&self.params, features, labels.len());
        metrics(self.net.loss, &logits, labels, self.net.classes())
    }

    /// The gradients of the last step (for tests).
    pub fn grads(&self) -> &[f32] {
        &self.grads
    }

    /// The optimiser's state (momentum or Adam's first moment, Adam's second moment), for
    /// tests that start another trainer from the same point.
    pub fn optimiser_state(&self) -> (&[f32], &[f32]) {
        (&self.m, &self.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> Net {
        Net {
            sizes: vec![2, 3, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
        }
    }

    #[test]
    fn layout_is_packed() {
        let l = net().layout();
        assert_eq!(l.param_count, 2 * 3 + 3 + 3 * 2 + 2);
        assert_eq!(l.layers[1].w_off, 9);
        assert_eq!(l.layers[1].b_off, 15);
        assert_eq!(net().act_offsets(4), (vec![0, 8, 20], 28));
    }

    #[test]
    fn init_is_seeded_and_bounded() {
        let a = net().init_params(3);
        assert_eq!(a, net().init_params(3));
        assert_ne!(a, net().init_params(4));
        assert!(a.iter().all(|w| w.abs() <= (6.0f32 / 5.0).sqrt()));
        assert_eq!(&a[6..9], &[0.0, 0.0, 0.0]);
    }

    #[test]
    fn batch_order_is_a_permutation_and_batches_wrap() {
        let o = batch_order(10, 1);
        let mut s = o.clone();
        s.sort();
        assert_eq!(s, (0..10).collect::<Vec<_>>());
        let b: Vec<u32> = batch_indices(&o, 3, 4).collect();
        assert_eq!(b, vec![o[2], o[3], o[4], o[5]]);
    }

    /// Backward agrees with finite differences of the loss (checks the formulas the kernels
    /// copy), for every activation and both losses.
    #[test]
    fn gradients_match_finite_differences() {
        for act in Activation::ALL {
            for loss in [LossKind::CrossEntropy, LossKind::Mse] {
                let net = Net {
                    sizes: vec![2, 4, 3, 2],
                    activation: act,
                    loss,
                };
                let params = net.init_params(11);
                let x = vec![0.3, -0.7, 0.9, 0.1, -0.4, 0.5];
                let y = vec![1, 0, 1];
                let mut t = CpuTrainer::new(
                    net.clone(),
                    Hyper {
                        lr: 0.0,
                        optimiser: Optimiser::Sgd,
                        l1: 0.0,
                        l2: 0.0,
                    },
                    params.clone(),
                    3,
                    x.clone(),
                    y.clone(),
                    vec![0, 1, 2],
                );
                t.step();
                let loss_at = |p: &[f32]| -> f64 {
                    let z = net.logits(p, &x, 3);
                    (0..3)
                        .map(|b| sample_loss(loss, &z[b * 2..b * 2 + 2], y[b]) as f64)
                        .sum::<f64>()
                        / 3.0
                };
                let fd_at = |i: usize, h: f32| {
                    let mut p = params.clone();
                    p[i] += h;
                    let up = loss_at(&p);
                    p[i] -= 2.0 * h;
                    let down = loss_at(&p);
                    (up - down) / (2.0 * h as f64)
                };
                for i in 0..params.len() {
                    let fd = fd_at(i, 2e-3);
                    // Across ReLU's kink a finite difference means nothing: there the two step
                    // sizes disagree, and the parameter is skipped.
                    if act == Activation::Relu && (fd - fd_at(i, 1e-3)).abs() > 1e-3 {
                        continue;
                    }
                    let g = t.grads()[i] as f64;
                    assert!(
                        (fd - g).abs() < 1e-3 + 1e-2 * g.abs(),
                        "{act:?} {loss:?} param {i}: fd {fd} vs {g}"
                    );
                }
            }
        }
    }
}
