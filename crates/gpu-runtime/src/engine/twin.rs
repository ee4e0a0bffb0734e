//! The engine's CPU twin: the same arena layout as the GPU's buffers (parameters, gradients,
//! m, v, activations, deltas as flat f32 vectors indexed by the [`Net`]'s ranges), each
//! layer computed in f32 in its kernel's order, and beside it a [`Bound`] on |GPU − twin| for
//! every word, carried from layer to layer and from step to step.
//!
//! # Orders (the kernels')
//! - Linear forward: each output sums W[n, k]·x[b, k] by ascending k from zero, then adds the
//!   bias (`mlp-forward-tiled`). Input gradient: Σ_n dy[b, n]·W[n, k] by ascending n,
//!   overwriting (`mlp-backward-input-tiled`). Weight and bias gradient: 64 strided partial
//!   sums (sample b in partial b mod 64, ascending), halved 32, 16, …, 1, added to the zeroed
//!   gradient (`mlp-grad-tiled` + `mlp-grad-reduce`).
//! - LayerNorm, GELU: `gpt::ops` (by ascending column per row; γ's and β's gradients by
//!   ascending row), as the GPT family's kernels.
//! - Softmax cross-entropy: max, Σ exp(x − m) by ascending class, loss ln z − (x_t − m),
//!   gradient (p − onehot)·(1/N) (`gpt-softmax-xent`).
//! - Residual: x + z, and backward dx += dy after the branch's backward.
//! - Adam: `cpu_kernels::optim::adam_update` for step t + 1 after t steps.
//!
//! # The bound
//! First order, per word, composed from one set of per-operation bounds:
//! - a sum of L terms computed twice (any order, any fused multiply-add) differs by at most
//!   2·γ_L·Σ|terms| (γ_L = L·u/(1 − L·u), u = 2⁻²⁴), plus Σ of each term's input differences
//!   times the other factor's magnitude;
//! - an add or a multiply: u of the result on each side;
//! - WGSL's transcendental functions: the GPT family's allowances ([`ln_bound`],
//!   [`xent_bounds`] for exp and log), doubled for the twin's own rounding; tanh as WGSL
//!   inherits it from exp (`tanh_abs`); division 2.5 ulp and sqrt (as 1/inverseSqrt) 4.5 ulp
//!   plus the twin's half ulp;
//! - propagation through each layer by its Jacobian's magnitude: |W| for a linear layer,
//!   |GELU'| (and |GELU''| ≤ 1 for its backward), LayerNorm's through x̂ and 1/σ, softmax's
//!   p_j·(δx_j + Σ p_k·δx_k).
//!
//! Products of two differences are dropped, and both sides are assumed to take the same
//! branch (the maximum of a softmax row may differ; exp(x − m) is the same function of x
//! either way, so the bound still holds to first order).
//!
//! [`ln_bound`]: crate::gpt_layers::ln_bound
//! [`gelu_bound`]: crate::gpt_layers::gelu_bound
//! [`xent_bounds`]: crate::gpt_layers::xent_bounds

use cpu_kernels::optim::{
    adam_corrections, adam_update, BETA1, BETA2, EPSILON, ONE_MINUS_BETA1, ONE_MINUS_BETA2,
};
use gpt::ops;

use super::{Net, Node, Range, Tensor};
use crate::family::gpt::{ln_bound, xent_bounds};

/// f32's unit roundoff.
pub const U: f64 = 1.0 / (1u64 << 24) as f64;
/// Ulps a WGSL division may be off (2.5) plus the twin's correctly rounded one (0.5).
const DIV_ULPS: f64 = 3.0;
/// Ulps a WGSL sqrt may be off (as 1/inverseSqrt: 2 + 2.5) plus the twin's (0.5).
const SQRT_ULPS: f64 = 5.0;
/// A bound on |GELU''| (tanh form; the exact GELU's largest is 2φ(0) ≈ 0.80).
const GELU2: f64 = 1.0;

/// γ_n = n·u / (1 − n·u).
pub fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu).max(f64::MIN_POSITIVE)
}

/// Two computations of one sum of `n` terms with Σ|terms| = `abs`: at most this apart.
fn gap(n: usize, abs: f64) -> f64 {
    2.0 * gamma(n) * abs
}

/// Bounds on |GPU − twin| for every word of the arena's buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    pub params: Vec<f64>,
    pub grads: Vec<f64>,
    pub m: Vec<f64>,
    pub v: Vec<f64>,
    pub acts: Vec<f64>,
    pub deltas: Vec<f64>,
}

/// The CPU twin's state, in the arena's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Twin {
    pub params: Vec<f32>,
    pub grads: Vec<f32>,
    pub m: Vec<f32>,
    pub v: Vec<f32>,
    pub acts: Vec<f32>,
    pub deltas: Vec<f32>,
    pub lr: f32,
    /// Steps done.
    pub steps: u64,
    /// Both sides start from the same uploaded numbers: all zero.
    pub bound: Bound,
}

fn f(v: f32) -> f64 {
    v as f64
}

impl Twin {
    /// A twin of `net` starting from `params` (its parameter layout), Adam at `lr`.
    pub fn new(net: &Net, params: Vec<f32>, lr: f32) -> Self {
        let a = &net.arena;
        let p = a.params.words();
        let zeros = |n: usize| vec![0.0f64; n];
        Self {
            grads: vec![0.0; p],
            m: vec![0.0; p],
            v: vec![0.0; p],
            acts: vec![0.0; a.acts.words()],
            deltas: vec![0.0; a.deltas.words()],
            params,
            lr,
            steps: 0,
            bound: Bound {
                params: zeros(p),
                grads: zeros(p),
                m: zeros(p),
                v: zeros(p),
                acts: zeros(a.acts.words()),
                deltas: zeros(a.deltas.words()),
            },
        }
    }

    /// The batch's input rows (uploaded exactly on both sides).
    pub fn set_input(&mut self, net: &Net, x: &[f32]) {
        self.acts[net.input.act.words()].copy_from_slice(x);
    }

    /// The batch's targets, kept as their bits in the activation layout as on the GPU.
    pub fn set_targets(&mut self, net: &Net, t: &[u32]) {
        for (a, &k) in self.acts[net.targets.words()].iter_mut().zip(t) {
            *a = f32::from_bits(k);
        }
    }

    /// The forward and the loss head: each row's loss (the twin's, in its layout).
    pub fn forward(&mut self, net: &Net) {
        self.bound.acts.fill(0.0);
        self.bound.deltas.fill(0.0);
        self.deltas.fill(0.0);
        forward(self, &net.nodes, net.batch);
    }

    /// One training step: zeroed deltas and gradients, forward, backward, Adam.
    pub fn step(&mut self, net: &Net) {
        self.grads.fill(0.0);
        self.bound.grads.fill(0.0);
        self.forward(net);
        backward(self, &net.nodes, net.batch);
        self.adam();
    }

    /// The batch's tokens (one per row), for a model that starts with embeddings.
    pub fn set_tokens(&mut self, net: &Net, tokens: &[u32]) {
        for (a, &k) in self.acts[net.input.act.words()].iter_mut().zip(tokens) {
            *a = f32::from_bits(k);
        }
    }

    /// Takes the GPU's parameters and Adam moments (read back after a step and found within
    /// the bound) as its own, their bounds back to zero: each step is then checked from equal
    /// states. Without it the first-order bound compounds: a gradient within its bound of
    /// zero lets Adam's normalised step differ by up to about lr (its sign), and that
    /// parameter's bound then enters every later forward.
    pub fn adopt(&mut self, params: &[f32], m: &[f32], v: &[f32]) {
        self.params.copy_from_slice(params);
        self.m.copy_from_slice(m);
        self.v.copy_from_slice(v);
        self.bound.params.fill(0.0);
        self.bound.m.fill(0.0);
        self.bound.v.fill(0.0);
    }

    /// The rows' losses of the last forward.
    pub fn losses(&self, net: &Net) -> (&[f32], &[f64]) {
        let r = net.losses.words();
        (&self.deltas[r.clone()], &self.bound.deltas[r])
    }

    fn adam(&mut self) {
        let b = &mut self.bound;
        let step = self.steps + 1;
        let (c1, c2) = adam_corrections(step);
        let (c1, c2) = (f(c1), f(c2));
        let (b1, b2) = (f(BETA1), f(BETA2));
        let (o1, o2) = (f(ONE_MINUS_BETA1), f(ONE_MINUS_BETA2));
        let lr = f(self.lr);
        let largest = adam_largest_step(step);
        for i in 0..self.params.len() {
            let (g, e_g) = (f(self.grads[i]), b.grads[i]);
            let (mi, vi, pi) = (f(self.m[i]), f(self.v[i]), f(self.params[i]));
            let m_new = b1 * mi + o1 * g;
            let v_new = b2 * vi + o2 * g * g;
            let e_m = b1 * b.m[i] + o1 * e_g + gap(2, (b1 * mi).abs() + (o1 * g).abs());
            let e_v =
                b2 * b.v[i] + o2 * (2.0 * g.abs() * e_g + e_g * e_g) + gap(3, b2 * vi + o2 * g * g);
            let a = m_new / c1;
            let e_a = e_m / c1 + DIV_ULPS * 2.0 * U * a.abs();
            let vq = v_new / c2;
            let e_vq = e_v / c2 + DIV_ULPS * 2.0 * U * vq;
            let q = vq.max(0.0).sqrt();
            let e_q = if q > 0.0 {
                e_vq.sqrt().min(e_vq / q)
            } else {
                e_vq.sqrt()
            } + SQRT_ULPS * 2.0 * U * q;
            let den = q + f(EPSILON);
            let e_den = e_q + 2.0 * U * den;
            let upd = lr * a / den;
            let e_upd =
                lr * e_a / den + upd.abs() * e_den / den + (2.0 + DIV_ULPS) * 2.0 * U * upd.abs();
            // Never more than both steps' largest sizes apart, whatever the first order says.
            let e_upd = e_upd.min(upd.abs() + lr * largest);
            b.m[i] = e_m;
            b.v[i] = e_v;
            b.params[i] += e_upd + gap(1, pi.abs() + upd.abs());
        }
        adam_update(
            self.lr,
            step,
            &mut self.params,
            &self.grads,
            &mut self.m,
            &mut self.v,
        );
        self.steps = step;
    }
}

/// The largest |m̂|/(√v̂ + ε) Adam can take at `step` whatever the gradients, with a margin
/// for f32: m_t = (1 − β₁)·Σ β₁^(t−i)·g_i and v_t = (1 − β₂)·Σ β₂^(t−i)·g_i², so by
/// Cauchy–Schwarz |m_t| ≤ (1 − β₁)/√(1 − β₂)·√(Σ_{j<t} (β₁²/β₂)^j)·√v_t, and the bias
/// corrections scale it by √c₂/c₁ (1 at step 1: the step is lr·g/(|g| + ε)).
fn adam_largest_step(step: u64) -> f64 {
    let (c1, c2) = adam_corrections(step);
    let (b1, b2) = (f(BETA1), f(BETA2));
    let (o1, o2) = (f(ONE_MINUS_BETA1), f(ONE_MINUS_BETA2));
    let series: f64 = (0..step).map(|j| (b1 * b1 / b2).powi(j as i32)).sum();
    o1 / o2.sqrt() * series.sqrt() * f(c2).sqrt() / f(c1) * (1.0 + 1e-4)
}

/// The CNN's layers have their twin in `cnn::net` (`CpuTrainer`, the kernels' orders) and
/// their bound in `family::cnn::bound`, compared through `engine::cnn`'s maps between the two
/// layouts; this twin does not run them.
fn cnn_layer() {
    panic!("the engine's twin has no CNN layers: use `engine::cnn` with `cnn::net`'s twin")
}

/// The MLP's layers likewise have their twin in `mlp::net` (`CpuTrainer`, `REDUCE`'s order)
/// and their bound in `training::param_ulps_per_step`, compared through `training::layers`'s map.
fn mlp_layer() {
    panic!("the engine's twin has no MLP layers: use `training::layers` with `mlp::net`'s twin")
}

/// Rows of a tensor's activations (or deltas) as (values, bounds) by row.
fn row(r: Range, width: usize, i: usize) -> std::ops::Range<usize> {
    r.at + i * width..r.at + (i + 1) * width
}

fn forward(t: &mut Twin, nodes: &[Node], batch: usize) {
    for node in nodes {
        match node {
            Node::Linear { x, y, w, b } => linear_forward(t, *x, *y, *w, *b, batch),
            Node::Gelu { x, y } => {
                let xs: Vec<f32> = t.acts[x.act.words()].to_vec();
                let mut ys = vec![0.0f32; xs.len()];
                ops::gelu(&xs, &mut ys);
                t.acts[y.act.words()].copy_from_slice(&ys);
                for (j, &v) in xs.iter().enumerate() {
                    let e_x = t.bound.acts[x.act.at + j];
                    t.bound.acts[y.act.at + j] =
                        gelu_gap(f(v), None) + gelu_slope(f(v)).abs() * e_x;
                }
            }
            Node::LayerNorm {
                x,
                y,
                stats,
                gamma,
                beta,
            } => ln_forward(t, *x, *y, *stats, *gamma, *beta, batch),
            Node::Residual { x, branch, z, y } => {
                forward(t, branch, batch);
                for j in 0..y.act.len {
                    let (a, c) = (t.acts[x.act.at + j], t.acts[z.act.at + j]);
                    let s = a + c;
                    t.acts[y.act.at + j] = s;
                    t.bound.acts[y.act.at + j] = t.bound.acts[x.act.at + j]
                        + t.bound.acts[z.act.at + j]
                        + 2.0 * U * f(s).abs();
                }
            }
            Node::SoftmaxXent {
                logits,
                targets,
                losses,
            } => xent(t, *logits, *targets, *losses, batch),
            Node::Conv2d { .. }
            | Node::MaxPool2 { .. }
            | Node::Dense { .. }
            | Node::SoftmaxXentProbs { .. } => cnn_layer(),
            Node::Perceptron { .. } | Node::Gather { .. } | Node::MlpLoss { .. } => mlp_layer(),
            Node::Embed {
                tokens,
                x,
                wte,
                wpe,
                vocab,
                context,
            } => {
                let c = x.width;
                for r in 0..batch {
                    let tok = t.acts[tokens.act.at + r].to_bits() as usize;
                    for i in 0..c {
                        let j = x.act.at + r * c + i;
                        if tok >= *vocab {
                            t.acts[j] = 0.0;
                            t.bound.acts[j] = 0.0;
                            continue;
                        }
                        let (a, b) = (wte.at + tok * c + i, wpe.at + (r % context) * c + i);
                        let s = t.params[a] + t.params[b];
                        t.acts[j] = s;
                        t.bound.acts[j] =
                            t.bound.params[a] + t.bound.params[b] + 2.0 * U * f(s).abs();
                    }
                }
            }
            Node::Attention {
                qkv,
                y,
                probs,
                heads,
                context,
            } => attention_forward(t, *qkv, *y, *probs, *heads, *context, batch),
        }
    }
}

/// Causal attention's backward in `gpt::ops`'s order (added into the qkv delta), and its
/// bound, first order and order-free as the forward's: dp_ij = Σ dy_i·v_j,
/// D_i = Σ_j p_ij·dp_ij, ds_ij = p_ij·(dp_ij − D_i)·scale (three roundings), then
/// dq_i += Σ_j ds_ij·k_j, dk_j += Σ_i ds_ij·q_i, dv_j += Σ_i p_ij·dy_i, each a sum whose
/// terms' differences come from the saved probabilities', dy's and qkv's bounds.
#[allow(clippy::too_many_arguments)]
fn attention_backward(
    t: &mut Twin,
    qkv: Tensor,
    y: Tensor,
    probs: Range,
    heads: usize,
    context: usize,
    batch: usize,
) {
    let c = y.width;
    let hs = c / heads;
    let shape = ops::AttnShape {
        b: batch / context,
        t: context,
        h: heads,
        hs,
    };
    let x: Vec<f32> = t.acts[qkv.act.words()].to_vec();
    let p: Vec<f32> = t.deltas[probs.words()].to_vec();
    let dy: Vec<f32> = t.deltas[y.delta.words()].to_vec();
    let mut dqkv: Vec<f32> = t.deltas[qkv.delta.words()].to_vec();
    ops::attention_backward(&x, &p, &dy, shape, &mut dqkv);
    t.deltas[qkv.delta.words()].copy_from_slice(&dqkv);
    let scale = 1.0 / (hs as f64).sqrt();
    let ex: Vec<f64> = t.bound.acts[qkv.act.words()].to_vec();
    let edy: Vec<f64> = t.bound.deltas[y.delta.words()].to_vec();
    let ep: Vec<f64> = t.bound.deltas[probs.words()].to_vec();
    // Per qkv element: Σ|terms| and Σ of propagated differences, and the terms' count.
    let n = x.len();
    let (mut abs, mut prop, mut len) = (vec![0.0f64; n], vec![0.0f64; n], vec![0usize; n]);
    for bb in 0..shape.b {
        for hh in 0..heads {
            let q_at = |i: usize| (bb * context + i) * 3 * c + hh * hs;
            let o_at = |i: usize| (bb * context + i) * c + hh * hs;
            for i in 0..context {
                let row = ((bb * heads + hh) * context + i) * context;
                let (mut dp, mut edp) = (vec![0.0f64; i + 1], vec![0.0f64; i + 1]);
                for j in 0..=i {
                    let v = q_at(j) + 2 * c;
                    let (mut s, mut a, mut e) = (0.0, 0.0, 0.0);
                    for d in 0..hs {
                        let (g, vv) = (f(dy[o_at(i) + d]), f(x[v + d]));
                        s += g * vv;
                        a += (g * vv).abs();
                        e += vv.abs() * edy[o_at(i) + d] + g.abs() * ex[v + d];
                    }
                    dp[j] = s;
                    edp[j] = gap(hs, a) + e;
                }
                let pj: Vec<f64> = (0..=i).map(|j| f(p[row + j])).collect();
                let big_d: f64 = (0..=i).map(|j| pj[j] * dp[j]).sum();
                let e_d = gap(i + 2, (0..=i).map(|j| (pj[j] * dp[j]).abs()).sum())
                    + (0..=i)
                        .map(|j| dp[j].abs() * ep[row + j] + pj[j] * edp[j])
                        .sum::<f64>();
                for j in 0..=i {
                    let diff = dp[j] - big_d;
                    let ds = pj[j] * diff * scale;
                    let e_ds = scale * (ep[row + j] * diff.abs() + pj[j] * (edp[j] + e_d))
                        + 2.0 * 3.0 * U * ds.abs();
                    let (qi, kj, vj) = (q_at(i), q_at(j) + c, q_at(j) + 2 * c);
                    for d in 0..hs {
                        // dq_i += ds·k_j; dk_j += ds·q_i; dv_j += p·dy_i.
                        let (k, q, g) = (f(x[kj + d]), f(x[qi + d]), f(dy[o_at(i) + d]));
                        abs[qi + d] += (ds * k).abs();
                        prop[qi + d] += k.abs() * e_ds + ds.abs() * ex[kj + d];
                        len[qi + d] += 1;
                        abs[kj + d] += (ds * q).abs();
                        prop[kj + d] += q.abs() * e_ds + ds.abs() * ex[qi + d];
                        len[kj + d] += 1;
                        abs[vj + d] += (pj[j] * g).abs();
                        prop[vj + d] += g.abs() * ep[row + j] + pj[j] * edy[o_at(i) + d];
                        len[vj + d] += 1;
                    }
                }
            }
        }
    }
    for e in 0..n {
        let now = f(dqkv[e]).abs();
        // The sum (and, in the twin, its 1/√d applied after it), added to what was there.
        t.bound.deltas[qkv.delta.at + e] +=
            gap(len[e] + 2, abs[e] + now) + prop[e] + 2.0 * 2.0 * U * now;
    }
}

/// Causal attention's forward in `gpt::ops`'s order, and its bound: each score
/// s = (Σ q·k)·scale errs by scale·(2γ_(d+1)·Σ|q·k| + Σ(|k|·δq + |q|·δk)) and a rounding;
/// each probability by p_j·(δs_j + Σ p_k·δs_k) (softmax's Jacobian) plus the loss head's
/// exp, sum and division allowances; each output Σ p·v by 2γ_L·Σ|p·v| + Σ(|v|·δp + p·δv).
#[allow(clippy::too_many_arguments)]
fn attention_forward(
    t: &mut Twin,
    qkv: Tensor,
    y: Tensor,
    probs: Range,
    heads: usize,
    context: usize,
    batch: usize,
) {
    let c = y.width;
    let hs = c / heads;
    let shape = ops::AttnShape {
        b: batch / context,
        t: context,
        h: heads,
        hs,
    };
    let x: Vec<f32> = t.acts[qkv.act.words()].to_vec();
    let mut out = vec![0.0f32; y.act.len];
    let mut p = vec![0.0f32; probs.len];
    ops::attention(&x, shape, &mut out, &mut p);
    t.acts[y.act.words()].copy_from_slice(&out);
    t.deltas[probs.words()].copy_from_slice(&p);
    let scale = 1.0 / (hs as f64).sqrt();
    let e = |t: &Twin, i: usize| t.bound.acts[qkv.act.at + i];
    for bb in 0..shape.b {
        for hh in 0..heads {
            for i in 0..context {
                let q = (bb * context + i) * 3 * c + hh * hs;
                let (mut s, mut es) = (vec![0.0f64; i + 1], vec![0.0f64; i + 1]);
                for j in 0..=i {
                    let k = (bb * context + j) * 3 * c + c + hh * hs;
                    let (mut dot, mut abs, mut prop) = (0.0, 0.0, 0.0);
                    for d in 0..hs {
                        let (qd, kd) = (f(x[q + d]), f(x[k + d]));
                        dot += qd * kd;
                        abs += (qd * kd).abs();
                        prop += kd.abs() * e(t, q + d) + qd.abs() * e(t, k + d);
                    }
                    s[j] = dot * scale;
                    es[j] = scale * (gap(hs + 1, abs) + prop) + 2.0 * 2.0 * U * s[j].abs();
                }
                let m = s.iter().copied().fold(f64::MIN, f64::max);
                let range = s.iter().map(|v| m - v).fold(0.0, f64::max);
                let z: f64 = s.iter().map(|v| (v - m).exp()).sum();
                let pj: Vec<f64> = s.iter().map(|v| (v - m).exp() / z).collect();
                let pe: f64 = pj.iter().zip(&es).map(|(a, b)| a * b).sum();
                let exp_rel = (7.0 + 5.0 * range) * U;
                let z_rel = exp_rel + i as f64 * U;
                let ep: Vec<f64> = (0..=i)
                    .map(|j| pj[j] * (es[j] + pe) + 2.0 * pj[j] * (exp_rel + z_rel + DIV_ULPS * U))
                    .collect();
                let row = ((bb * heads + hh) * context + i) * context;
                t.bound.deltas[probs.at + row..probs.at + row + i + 1].copy_from_slice(&ep);
                for d in 0..hs {
                    let (mut abs, mut prop) = (0.0, 0.0);
                    for j in 0..=i {
                        let v = (bb * context + j) * 3 * c + 2 * c + hh * hs + d;
                        abs += (pj[j] * f(x[v])).abs();
                        prop += f(x[v]).abs() * ep[j] + pj[j] * e(t, v);
                    }
                    t.bound.acts[y.act.at + (bb * context + i) * c + hh * hs + d] =
                        gap(i + 1, abs) + prop;
                }
            }
        }
    }
}

fn backward(t: &mut Twin, nodes: &[Node], batch: usize) {
    for node in nodes.iter().rev() {
        match node {
            Node::Linear { x, y, w, b } => linear_backward(t, *x, *y, *w, *b, batch),
            Node::Gelu { x, y } => {
                for j in 0..x.act.len {
                    let v = t.acts[x.act.at + j];
                    let d = t.deltas[y.delta.at + j];
                    let mut out = [t.deltas[x.delta.at + j]];
                    ops::gelu_backward(&[v], &[d], &mut out);
                    t.deltas[x.delta.at + j] = out[0];
                    let (e_x, e_d) = (t.bound.acts[x.act.at + j], t.bound.deltas[y.delta.at + j]);
                    t.bound.deltas[x.delta.at + j] += gelu_gap(f(v), Some(f(d)))
                        + gelu_slope(f(v)).abs() * e_d
                        + f(d).abs() * GELU2 * e_x
                        + 2.0 * U * f(out[0]).abs();
                }
            }
            Node::LayerNorm {
                x,
                y,
                stats,
                gamma,
                beta,
            } => ln_backward(t, *x, *y, *stats, *gamma, *beta, batch),
            Node::Residual { x, branch, y, .. } => {
                backward(t, branch, batch);
                for j in 0..x.delta.len {
                    let s = t.deltas[x.delta.at + j] + t.deltas[y.delta.at + j];
                    t.deltas[x.delta.at + j] = s;
                    t.bound.deltas[x.delta.at + j] +=
                        t.bound.deltas[y.delta.at + j] + 2.0 * U * f(s).abs();
                }
            }
            Node::SoftmaxXent { .. } => {}
            Node::Conv2d { .. }
            | Node::MaxPool2 { .. }
            | Node::Dense { .. }
            | Node::SoftmaxXentProbs { .. } => cnn_layer(),
            Node::Perceptron { .. } | Node::Gather { .. } | Node::MlpLoss { .. } => mlp_layer(),
            Node::Embed {
                tokens,
                x,
                wte,
                wpe,
                vocab,
                context,
            } => {
                // Each table element's owner walks the rows by ascending r (the kernel's
                // order), adding where the row's token (or position) is its own.
                let c = x.width;
                let toks: Vec<usize> = (0..batch)
                    .map(|r| t.acts[tokens.act.at + r].to_bits() as usize)
                    .collect();
                for (table, rows, at) in [(0usize, *vocab, wte.at), (1, *context, wpe.at)] {
                    for v in 0..rows {
                        for i in 0..c {
                            let g = at + v * c + i;
                            let (mut s, mut abs, mut prop) = (t.grads[g], 0.0, 0.0);
                            let mut n = 0;
                            for (r, &tok) in toks.iter().enumerate() {
                                let hit = if table == 0 {
                                    tok == v
                                } else {
                                    r % context == v
                                };
                                if hit {
                                    let d = t.deltas[x.delta.at + r * c + i];
                                    s += d;
                                    abs += f(d).abs();
                                    prop += t.bound.deltas[x.delta.at + r * c + i];
                                    n += 1;
                                }
                            }
                            t.grads[g] = s;
                            t.bound.grads[g] += gap(n + 1, abs + f(s).abs()) + prop;
                        }
                    }
                }
            }
            Node::Attention {
                qkv,
                y,
                probs,
                heads,
                context,
            } => attention_backward(t, *qkv, *y, *probs, *heads, *context, batch),
        }
    }
}

/// WGSL's tanh accuracy is inherited from sinh/cosh, and theirs from exp (3 + 2|u| ulps):
/// tanh(u) = sinh(u)/cosh(u) is then off by at most 2·(3 + 2|u|) ulps of cosh in the
/// numerator (absolute, after the division by cosh: (6 + 4|u|)·u), the same relatively from
/// the denominator, and the division's 2.5 ulps; the twin's own tanh adds one ulp. So
/// (10 + 4|u|)·u absolute, |tanh| ≤ 1. (An adapter whose tanh is a coarser hardware
/// approximation breaks this; the GPT family's [`gelu_bound`] allows NVIDIA's 2⁻¹¹.)
fn tanh_abs(u: f64) -> f64 {
    (10.0 + 4.0 * u.abs()) * U
}

/// GELU's rounding bound on |GPU − twin| from equal inputs: its forward value
/// 0.5·x·(1 + tanh u) carries tanh's error times 0.5·|x| and about four roundings on each
/// side; its backward `dy·GELU'(x)` carries it times |dy|·(0.5 + |x|·√(2/π)·(1 + 3a·x²))
/// (where tanh enters) and about eight roundings of |dy|·that weight.
fn gelu_gap(x: f64, dy: Option<f64>) -> f64 {
    let c = 0.797_884_560_802_865_4;
    let a = 0.044_715;
    let t = tanh_abs(c * (x + a * x * x * x));
    match dy {
        None => 0.5 * x.abs() * t + 2.0 * 4.0 * U * x.abs(),
        Some(d) => {
            let weight = 0.5 + x.abs() * c * (1.0 + 3.0 * a * x * x);
            d.abs() * weight * (2.0 * t + 2.0 * 8.0 * U)
        }
    }
}

/// GELU's slope (tanh form), in f64.
fn gelu_slope(x: f64) -> f64 {
    let c = 0.797_884_560_802_865_4;
    let a = 0.044_715;
    let th = (c * (x + a * x * x * x)).tanh();
    0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * a * x * x)
}

fn linear_forward(t: &mut Twin, x: Tensor, y: Tensor, w: Range, b: Range, batch: usize) {
    let (k_in, n_out) = (x.width, y.width);
    for r in 0..batch {
        for n in 0..n_out {
            let mut acc = 0.0f32;
            let (mut abs, mut prop) = (0.0f64, 0.0f64);
            for k in 0..k_in {
                let (wv, xv) = (
                    t.params[w.at + n * k_in + k],
                    t.acts[x.act.at + r * k_in + k],
                );
                acc += wv * xv;
                abs += (f(wv) * f(xv)).abs();
                prop += f(wv).abs() * t.bound.acts[x.act.at + r * k_in + k]
                    + f(xv).abs() * t.bound.params[w.at + n * k_in + k];
            }
            let bias = t.params[b.at + n];
            t.acts[y.act.at + r * n_out + n] = acc + bias;
            t.bound.acts[y.act.at + r * n_out + n] =
                gap(k_in + 1, abs + f(bias).abs()) + prop + t.bound.params[b.at + n];
        }
    }
}

fn linear_backward(t: &mut Twin, x: Tensor, y: Tensor, w: Range, b: Range, batch: usize) {
    let (k_in, n_out) = (x.width, y.width);
    // The input gradient, overwritten.
    for r in 0..batch {
        for k in 0..k_in {
            let mut s = 0.0f32;
            let (mut abs, mut prop) = (0.0f64, 0.0f64);
            for n in 0..n_out {
                let (d, wv) = (
                    t.deltas[y.delta.at + r * n_out + n],
                    t.params[w.at + n * k_in + k],
                );
                s += d * wv;
                abs += (f(d) * f(wv)).abs();
                prop += f(wv).abs() * t.bound.deltas[y.delta.at + r * n_out + n]
                    + f(d).abs() * t.bound.params[w.at + n * k_in + k];
            }
            t.deltas[x.delta.at + r * k_in + k] = s;
            t.bound.deltas[x.delta.at + r * k_in + k] = gap(n_out, abs) + prop;
        }
    }
    // Weights (c < k_in) and bias (c = k_in): 64 strided partial sums, halved.
    for n in 0..n_out {
        for c in 0..=k_in {
            let input = |t: &Twin, r: usize| {
                if c < k_in {
                    (
                        t.acts[x.act.at + r * k_in + c],
                        t.bound.acts[x.act.at + r * k_in + c],
                    )
                } else {
                    (1.0, 0.0)
                }
            };
            let mut p = [0.0f32; 64];
            let (mut abs, mut prop) = (0.0f64, 0.0f64);
            for (s, slot) in p.iter_mut().enumerate() {
                let mut r = s;
                while r < batch {
                    let d = t.deltas[y.delta.at + r * n_out + n];
                    let (xv, e_x) = input(t, r);
                    *slot += d * xv;
                    abs += (f(d) * f(xv)).abs();
                    prop +=
                        f(xv).abs() * t.bound.deltas[y.delta.at + r * n_out + n] + f(d).abs() * e_x;
                    r += 64;
                }
            }
            let mut half = 32;
            while half > 0 {
                for s in 0..half {
                    p[s] += p[s + half];
                }
                half /= 2;
            }
            let at = if c < k_in {
                w.at + n * k_in + c
            } else {
                b.at + n
            };
            t.grads[at] += p[0];
            t.bound.grads[at] += gap(batch + 7, abs) + prop;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn ln_forward(t: &mut Twin, x: Tensor, y: Tensor, stats: Range, g: Range, be: Range, batch: usize) {
    let c = x.width;
    let cf = c as f64;
    let gam: Vec<f32> = t.params[g.words()].to_vec();
    let bet: Vec<f32> = t.params[be.words()].to_vec();
    for r in 0..batch {
        let xs: Vec<f32> = t.acts[row(x.act, c, r)].to_vec();
        let mut ys = vec![0.0f32; c];
        let (mut mean, mut rstd) = ([0.0f32], [0.0f32]);
        ops::layernorm(&xs, &gam, &bet, c, &mut ys, &mut mean, &mut rstd);
        t.acts[row(y.act, c, r)].copy_from_slice(&ys);
        t.acts[stats.at + 2 * r] = mean[0];
        t.acts[stats.at + 2 * r + 1] = rstd[0];
        let x64: Vec<f64> = xs.iter().map(|&v| f(v)).collect();
        let (mu, rs) = (f(mean[0]), f(rstd[0]));
        let ex: Vec<f64> = t.bound.acts[row(x.act, c, r)].to_vec();
        let xh: Vec<f64> = x64.iter().map(|&v| (v - mu) * rs).collect();
        let e_mean_in = ex.iter().sum::<f64>() / cf;
        let weighted = xh.iter().zip(&ex).map(|(h, e)| h.abs() * e).sum::<f64>() / cf;
        // The statistics' own roundings (ln_bound's terms) on each side, and the inputs'.
        let abs_mean = x64.iter().map(|v| v.abs()).sum::<f64>() / cf;
        let e_mean = e_mean_in + 2.0 * cf * U * abs_mean;
        let rstd_rel = rs * weighted + 2.0 * ((cf / 2.0 + 4.0) * U + cf * U);
        t.bound.acts[stats.at + 2 * r] = e_mean;
        t.bound.acts[stats.at + 2 * r + 1] = rstd_rel * rs;
        for i in 0..c {
            let (gi, bi) = (f(gam[i]), f(bet[i]));
            let prop = gi.abs() * rs * (ex[i] + e_mean_in + xh[i].abs() * weighted)
                + xh[i].abs() * t.bound.params[g.at + i]
                + t.bound.params[be.at + i];
            t.bound.acts[y.act.at + r * c + i] = 2.0 * ln_bound(&x64, gi, bi, i, mu, rs) + prop;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn ln_backward(
    t: &mut Twin,
    x: Tensor,
    y: Tensor,
    stats: Range,
    g: Range,
    be: Range,
    batch: usize,
) {
    let c = x.width;
    let cf = c as f64;
    let gam: Vec<f32> = t.params[g.words()].to_vec();
    // The twin first (dx, dγ, dβ added to), then the bound from the values it used.
    let xs: Vec<f32> = t.acts[x.act.words()].to_vec();
    let dys: Vec<f32> = t.deltas[y.delta.words()].to_vec();
    let mean: Vec<f32> = (0..batch).map(|r| t.acts[stats.at + 2 * r]).collect();
    let rstd: Vec<f32> = (0..batch).map(|r| t.acts[stats.at + 2 * r + 1]).collect();
    let mut dx: Vec<f32> = t.deltas[x.delta.words()].to_vec();
    let before = dx.clone();
    let mut dg: Vec<f32> = t.grads[g.words()].to_vec();
    let mut db: Vec<f32> = t.grads[be.words()].to_vec();
    ops::layernorm_backward(&xs, &gam, &mean, &rstd, &dys, c, &mut dx, &mut dg, &mut db);
    t.deltas[x.delta.words()].copy_from_slice(&dx);
    t.grads[g.words()].copy_from_slice(&dg);
    t.grads[be.words()].copy_from_slice(&db);

    let (mut g_abs, mut g_prop) = (vec![0.0f64; c], vec![0.0f64; c]);
    let (mut b_abs, mut b_prop) = (vec![0.0f64; c], vec![0.0f64; c]);
    for r in 0..batch {
        let (mu, rs) = (f(mean[r]), f(rstd[r]));
        let (e_mu, e_rs) = (
            t.bound.acts[stats.at + 2 * r],
            t.bound.acts[stats.at + 2 * r + 1],
        );
        let at = r * c;
        let xh: Vec<f64> = (0..c).map(|i| (f(xs[at + i]) - mu) * rs).collect();
        // |δx̂| from x's, the mean's and 1/σ's differences and x̂'s two roundings per side.
        let dxh: Vec<f64> = (0..c)
            .map(|i| {
                rs * (t.bound.acts[x.act.at + at + i] + e_mu)
                    + xh[i].abs() * e_rs / rs
                    + 4.0 * U * xh[i].abs()
            })
            .collect();
        let d: Vec<f64> = (0..c).map(|i| f(dys[at + i]) * f(gam[i])).collect();
        let dd: Vec<f64> = (0..c)
            .map(|i| {
                f(gam[i]).abs() * t.bound.deltas[y.delta.at + at + i]
                    + f(dys[at + i]).abs() * t.bound.params[g.at + i]
                    + 2.0 * U * d[i].abs()
            })
            .collect();
        let d_abs: f64 = d.iter().map(|v| v.abs()).sum();
        let dx_abs: f64 = d.iter().zip(&xh).map(|(a, b)| (a * b).abs()).sum();
        let md = d.iter().sum::<f64>() / cf;
        let mdx = d.iter().zip(&xh).map(|(a, b)| a * b).sum::<f64>() / cf;
        let e_md = dd.iter().sum::<f64>() / cf + (gap(c, d_abs) + DIV_ULPS * 2.0 * U * d_abs) / cf;
        let e_mdx = (0..c)
            .map(|i| d[i].abs() * dxh[i] + xh[i].abs() * dd[i])
            .sum::<f64>()
            / cf
            + (gap(c + 1, dx_abs) + DIV_ULPS * 2.0 * U * dx_abs) / cf;
        for i in 0..c {
            let term = d[i] - md - xh[i] * mdx;
            let e_term = dd[i]
                + e_md
                + xh[i].abs() * e_mdx
                + mdx.abs() * dxh[i]
                + 2.0 * 3.0 * U * (d[i].abs() + md.abs() + (xh[i] * mdx).abs());
            let j = x.delta.at + at + i;
            let now = f(dx[at + i]);
            t.bound.deltas[j] += e_rs * term.abs()
                + rs * e_term
                + 2.0 * 2.0 * U * (rs * term).abs()
                + 2.0 * U * now.abs().max(f(before[at + i]).abs());
            let dy = f(dys[at + i]);
            let e_dy = t.bound.deltas[y.delta.at + at + i];
            g_abs[i] += (dy * xh[i]).abs();
            g_prop[i] += xh[i].abs() * e_dy + dy.abs() * dxh[i];
            b_abs[i] += dy.abs();
            b_prop[i] += e_dy;
        }
    }
    for i in 0..c {
        t.bound.grads[g.at + i] += gap(batch + 1, g_abs[i]) + g_prop[i];
        t.bound.grads[be.at + i] += gap(batch + 1, b_abs[i]) + b_prop[i];
    }
}

fn xent(t: &mut Twin, logits: Tensor, targets: Range, losses: Range, batch: usize) {
    let v = logits.width;
    let tg: Vec<u32> = t.acts[targets.words()]
        .iter()
        .map(|a| a.to_bits())
        .collect();
    let counted = tg.iter().filter(|&&k| k != ops::IGNORE).count();
    let inv = 1.0f32 / counted.max(1) as f32;
    for (r, &target) in tg.iter().enumerate().take(batch) {
        let xs: Vec<f32> = t.acts[row(logits.act, v, r)].to_vec();
        let dl = row(logits.delta, v, r);
        if target == ops::IGNORE {
            t.deltas[losses.at + r] = 0.0;
            t.deltas[dl].fill(0.0);
            continue;
        }
        let k = target as usize;
        let m = xs.iter().copied().fold(f32::MIN, f32::max);
        let mut z = 0.0f32;
        for &x in &xs {
            z += (x - m).exp();
        }
        t.deltas[losses.at + r] = z.ln() - (xs[k] - m);
        for (j, &x) in xs.iter().enumerate() {
            let p = (x - m).exp() / z;
            t.deltas[dl.start + j] = if j == k { p - 1.0 } else { p } * inv;
        }
        // Rounding (the GPT family's bound against an exact head, doubled for the twin's own)
        // and the logits' differences through softmax.
        let x64: Vec<f64> = xs.iter().map(|&a| f(a)).collect();
        let (loss_b, d_b) = xent_bounds(&x64, k, counted);
        let m64 = x64.iter().copied().fold(f64::MIN, f64::max);
        let z64: f64 = x64.iter().map(|a| (a - m64).exp()).sum();
        let p: Vec<f64> = x64.iter().map(|a| (a - m64).exp() / z64).collect();
        let e: Vec<f64> = t.bound.acts[row(logits.act, v, r)].to_vec();
        let pe: f64 = p.iter().zip(&e).map(|(a, b)| a * b).sum();
        t.bound.deltas[losses.at + r] = 2.0 * loss_b + pe + e[k];
        let inv64 = 1.0 / counted.max(1) as f64;
        for j in 0..v {
            t.bound.deltas[dl.start + j] = 2.0 * d_b[j] + inv64 * p[j] * (e[j] + pe);
        }
    }
}
