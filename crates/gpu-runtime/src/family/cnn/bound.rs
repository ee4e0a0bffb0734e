//! How far the GPU's training state may be from the CPU twin's: a bound per parameter (and
//! on the step's loss) derived from the arithmetic, carried from step to step.
//!
//! # Derivation
//! Both sides add the same terms in the same order (`cnn::net`'s header), so with equal
//! inputs a correctly rounded operation gives equal results. They can still differ by:
//! - a fused multiply-add the WGSL compiler may emit (it skips the product's rounding,
//!   ≤ u·|a·b| for u = 2⁻²⁴);
//! - WGSL's `exp`, `log`, division and `sqrt`, which Vulkan lets be a few ulps off (exp
//!   3 + 2|x| ulp, log 3 ulp or 2⁻²¹ absolute near 1, division 2.5 ulp, sqrt as 1/inverseSqrt,
//!   about 5 ulp), where the twin's are within an ulp;
//! - inputs that already differ (an earlier layer's or step's rounding).
//!
//! A sum of L products computed in f32 is within γ_L·Σ|terms| of the exact sum whatever its
//! order and fusion (γ_L = L·u / (1 − L·u), Higham's bound), so two such computations differ
//! by at most 2·γ_L·Σ|terms| from rounding, plus, to first order, Σ(δa·|b| + |a|·δb) from
//! their inputs' differences δ. Each formula below is that, with L the reduction length
//! (conv: C_in·K² + 1 with the bias; filter gradient: OH·OW + B; dense: D + 1; …). ReLU and
//! max-pool are 1-Lipschitz (a pool's bound is its window's largest); softmax uses
//! d exp(x) = exp(x)·dx and the functions' ulp allowances above, with an ulp ≤ 2u·|value|.
//! Adam's √ uses |√a − √b| ≤ min(√|a − b|, |a − b| / √a). The bounds are first order:
//! products of two differences (relative 1e-6 or less) are dropped. They assume both sides
//! take the same branch of every ReLU, max-pool and label: a value within its bound of a
//! ReLU's 0 or of its window's runner-up could flip a mask, which no continuous bound covers
//! (and the comparison would then fail, naming it). They also assume subnormal numbers are
//! kept, as lavapipe keeps them: a GPU that flushes them to zero moves a value below 2⁻¹²⁶
//! (Adam's second moment of a tiny gradient, say) by more than this bound allows there.
//!
//! Every magnitude comes from the twin's own values of the step (its workspace, gradients
//! and state), in f64.

use cnn::net::{
    adam_corrections, Hyper, Net, Optimiser, Workspace, BETA1, BETA2, EPSILON, ONE_MINUS_BETA1,
    ONE_MINUS_BETA2, POOL,
};

/// f32's unit roundoff.
pub const U: f64 = 1.0 / (1u64 << 24) as f64;

/// γ_n = n·u / (1 − n·u): the relative error bound of n f32 operations in a row.
pub fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu).max(f64::MIN_POSITIVE)
}

/// Two computations of one sum of `n` terms with Σ|terms| = `abs`: at most this apart.
fn sum_gap(n: usize, abs: f64) -> f64 {
    2.0 * gamma(n) * abs
}

/// WGSL's allowance for exp(x) in ulps (Vulkan: 3 + 2|x|), plus the twin's one.
fn exp_ulps(x: f64) -> f64 {
    4.0 + 2.0 * x.abs()
}

/// Ulps allowed a WGSL division (2.5) plus the twin's correctly rounded one (0.5).
const DIV_ULPS: f64 = 3.0;
/// Ulps allowed a WGSL sqrt (as 1/inverseSqrt: 2 + 2.5) plus the twin's (0.5).
const SQRT_ULPS: f64 = 5.0;
/// Ulps allowed a WGSL log away from 1 (3) plus the twin's (1).
const LOG_ULPS: f64 = 4.0;
/// WGSL log's absolute allowance on [0.5, 2].
const LOG_ABS: f64 = 1.0 / (1u64 << 21) as f64;

/// Per-parameter bounds on |GPU − twin| of the parameters and the optimiser's two states.
#[derive(Clone, Debug, PartialEq)]
pub struct StateBound {
    pub params: Vec<f64>,
    pub m: Vec<f64>,
    pub v: Vec<f64>,
}

impl StateBound {
    /// Both sides start from the same uploaded values.
    pub fn zero(params: usize) -> Self {
        Self {
            params: vec![0.0; params],
            m: vec![0.0; params],
            v: vec![0.0; params],
        }
    }
}

/// The twin's side of one step: its state before the update, and the step's workspace
/// (after forward and backward), gradients and labels.
pub struct TwinStep<'a> {
    pub net: &'a Net,
    pub hyper: &'a Hyper,
    /// The step being completed, from 1 (Adam's corrections).
    pub step: u64,
    pub params: &'a [f32],
    pub m: &'a [f32],
    pub v: &'a [f32],
    pub ws: &'a Workspace,
    pub grads: &'a [f32],
    pub labels: &'a [u32],
}

/// What one step's bound gives: the state's bound after it, and its mean loss's bound.
#[derive(Clone, Debug, PartialEq)]
pub struct StepBound {
    pub state: StateBound,
    /// The step's gradients (before the update), per parameter.
    pub grads: Vec<f64>,
    /// The step's activations and deltas, in their layout (the argmax must be equal).
    pub acts: Vec<f64>,
    pub deltas: Vec<f64>,
    pub loss: f64,
}

/// The bound after the step `t` describes, from the bound `before` it (see the module
/// documentation); `None` if the buffers do not have the net's sizes.
pub fn step_bound(t: &TwinStep, before: &StateBound) -> Option<StepBound> {
    let net = t.net;
    let pl = net.param_layout();
    let l = &t.ws.layout;
    let batch = l.batch;
    let n_params = pl.len;
    let sizes_ok = [t.params.len(), t.m.len(), t.v.len(), t.grads.len()]
        .iter()
        .chain([before.params.len(), before.m.len(), before.v.len()].iter())
        .all(|&n| n == n_params)
        && t.ws.acts.len() == l.len
        && t.ws.deltas.len() == l.len
        && t.ws.argmax.len() == l.argmax_len
        && t.labels.len() == batch
        && t.labels.iter().all(|&y| (y as usize) < net.classes);
    if !sizes_ok {
        return None;
    }
    let p = |i: usize| t.params[i] as f64;
    let ep = &before.params;
    let acts = |i: usize| t.ws.acts[i] as f64;
    let dl = |i: usize| t.ws.deltas[i] as f64;
    // Bounds on the activations' and the deltas' differences, in their layout.
    let mut ea = forward_gaps(net, t.params, ep, t.ws);
    let mut ed = vec![0.0f64; l.len];
    let mut eg = vec![0.0f64; n_params];
    let in_off = l.blocks.last().map_or(l.input, |a| a.pool);
    let d = net.dense_inputs();
    let k = net.classes;

    // Softmax cross-entropy, per sample.
    let inv_b = 1.0 / batch as f64;
    let (mut loss_prop, mut loss_abs) = (0.0f64, 0.0f64);
    for n in 0..batch {
        let z: Vec<f64> = (0..k).map(|j| acts(l.logits + n * k + j)).collect();
        let big = (0..k)
            .map(|j| ea[l.logits + n * k + j])
            .fold(0.0f64, f64::max);
        let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // z_j − m: both inputs off by ≤ big, and a rounding.
        let ex: Vec<f64> = z.iter().map(|&v| (v - m).exp()).collect();
        let e_ex: Vec<f64> = z
            .iter()
            .zip(&ex)
            .map(|(&v, &e)| e * (2.0 * big + 2.0 * U * (v - m).abs() + exp_ulps(v - m) * 2.0 * U))
            .collect();
        let s: f64 = ex.iter().sum();
        let e_s = e_ex.iter().sum::<f64>() + sum_gap(k, s);
        let y = t.labels[n] as usize;
        let e_loss = e_s / s
            + LOG_ULPS * 2.0 * U * s.ln().abs()
            + LOG_ABS
            + 2.0 * big
            + 2.0 * U * (z[y] - m).abs()
            + 2.0 * U * (s.ln() - (z[y] - m)).abs();
        loss_prop += e_loss;
        loss_abs += (s.ln() - (z[y] - m)).abs();
        for j in 0..k {
            let prob = ex[j] / s;
            let e_prob = prob * (e_ex[j] / ex[j].max(f64::MIN_POSITIVE) + e_s / s)
                + DIV_ULPS * 2.0 * U * prob;
            let diff = prob - if j == y { 1.0 } else { 0.0 };
            let at = l.logits + n * k + j;
            ea[l.probs + n * k + j] = e_prob;
            ed[at] = (e_prob + 2.0 * U * diff.abs()) * inv_b + 2.0 * U * dl(at).abs();
        }
    }
    // (Σ_n loss_n) / B: a sum of B, then a division.
    let loss = (loss_prop + sum_gap(batch, loss_abs)) * inv_b + 2.0 * U * loss_abs * inv_b;

    // Dense backward.
    for j in 0..k {
        for i in 0..d {
            let (mut prop, mut abs) = (0.0, 0.0);
            for n in 0..batch {
                let (di, ai) = (l.logits + n * k + j, in_off + n * d + i);
                prop += ed[di] * acts(ai).abs() + dl(di).abs() * ea[ai];
                abs += (dl(di) * acts(ai)).abs();
            }
            eg[pl.dense_w + j * d + i] = prop + sum_gap(batch, abs);
        }
        let (mut prop, mut abs) = (0.0, 0.0);
        for n in 0..batch {
            prop += ed[l.logits + n * k + j];
            abs += dl(l.logits + n * k + j).abs();
        }
        eg[pl.dense_b + j] = prop + sum_gap(batch, abs);
    }
    for n in 0..batch {
        for i in 0..d {
            let (mut prop, mut abs) = (0.0, 0.0);
            for j in 0..k {
                let (di, wi) = (l.logits + n * k + j, pl.dense_w + j * d + i);
                prop += ed[di] * p(wi).abs() + dl(di).abs() * ep[wi];
                abs += (dl(di) * p(wi)).abs();
            }
            ed[in_off + n * d + i] = prop + sum_gap(k, abs);
        }
    }

    // Blocks, last first.
    for b in (0..net.shapes.len()).rev() {
        let (s, o, a) = (&net.shapes[b], &pl.conv[b], &l.blocks[b]);
        let in_off = if b == 0 {
            l.input
        } else {
            l.blocks[b - 1].pool
        };
        let (c_in, c_out, kk) = (s.block.c_in, s.block.c_out, s.block.kernel);
        let (is, cs, ps) = (s.in_side, s.conv_side, s.pool_side);
        let conv_len = batch * c_out * cs * cs;
        // Pool backward copies; ReLU backward copies or zeroes.
        for e in 0..batch * c_out * ps * ps {
            let at = t.ws.argmax[a.argmax + e] as usize;
            if at < conv_len {
                ed[a.relu + at] = ed[a.pool + e];
            }
        }
        for i in 0..conv_len {
            ed[a.conv + i] = if acts(a.conv + i) > 0.0 {
                ed[a.relu + i]
            } else {
                0.0
            };
        }
        // Filter and bias gradients: OH·OW terms per sample, then B partials.
        let terms = cs * cs + batch;
        for oc in 0..c_out {
            for c in 0..c_in {
                for r in 0..kk {
                    for q in 0..kk {
                        let (mut prop, mut abs) = (0.0, 0.0);
                        for n in 0..batch {
                            let dz = a.conv + (n * c_out + oc) * cs * cs;
                            let plane = in_off + (n * c_in + c) * is * is;
                            for y in 0..cs {
                                for x in 0..cs {
                                    let (di, ai) = (dz + y * cs + x, plane + (y + r) * is + x + q);
                                    prop += ed[di] * acts(ai).abs() + dl(di).abs() * ea[ai];
                                    abs += (dl(di) * acts(ai)).abs();
                                }
                            }
                        }
                        eg[o.w + ((oc * c_in + c) * kk + r) * kk + q] = prop + sum_gap(terms, abs);
                    }
                }
            }
            let (mut prop, mut abs) = (0.0, 0.0);
            for n in 0..batch {
                let dz = a.conv + (n * c_out + oc) * cs * cs;
                for i in 0..cs * cs {
                    prop += ed[dz + i];
                    abs += dl(dz + i).abs();
                }
            }
            eg[o.b + oc] = prop + sum_gap(terms, abs);
        }
        // Input gradient (block 1's is not used for training, but is compared all the same).
        let last = kk - 1;
        for n in 0..batch {
            for c in 0..c_in {
                for y in 0..is {
                    for x in 0..is {
                        let (mut prop, mut abs) = (0.0, 0.0);
                        for oc in 0..c_out {
                            let dz = a.conv + (n * c_out + oc) * cs * cs;
                            let w = o.w + (oc * c_in + c) * kk * kk;
                            for rp in 0..kk {
                                let Some(zy) = (y + rp).checked_sub(last).filter(|&v| v < cs)
                                else {
                                    continue;
                                };
                                for sp in 0..kk {
                                    let Some(zx) = (x + sp).checked_sub(last).filter(|&v| v < cs)
                                    else {
                                        continue;
                                    };
                                    let di = dz + zy * cs + zx;
                                    let wi = w + (last - rp) * kk + (last - sp);
                                    prop += ed[di] * p(wi).abs() + dl(di).abs() * ep[wi];
                                    abs += (dl(di) * p(wi)).abs();
                                }
                            }
                        }
                        ed[in_off + ((n * c_in + c) * is + y) * is + x] =
                            prop + sum_gap(c_out * kk * kk, abs);
                    }
                }
            }
        }
    }

    // The optimiser.
    let mut after = before.clone();
    let lr = t.hyper.lr as f64;
    for (i, &e_g) in eg.iter().enumerate() {
        let g = t.grads[i] as f64;
        let (pi, mi, vi) = (p(i), t.m[i] as f64, t.v[i] as f64);
        match t.hyper.optimiser {
            Optimiser::Sgd => {
                let mu = t.hyper.momentum as f64;
                let v_new = mu * mi + g;
                let e_v = mu * before.m[i] + e_g + sum_gap(2, (mu * mi).abs() + g.abs());
                after.m[i] = e_v;
                after.params[i] =
                    before.params[i] + lr * e_v + sum_gap(2, pi.abs() + (lr * v_new).abs());
            }
            Optimiser::Adam => {
                let (c1, c2) = adam_corrections(t.step);
                let (c1, c2) = (c1 as f64, c2 as f64);
                let (b1, b2) = (BETA1 as f64, BETA2 as f64);
                let (o1, o2) = (ONE_MINUS_BETA1 as f64, ONE_MINUS_BETA2 as f64);
                let m_new = b1 * mi + o1 * g;
                let v_new = b2 * vi + o2 * g * g;
                let e_m =
                    b1 * before.m[i] + o1 * e_g + sum_gap(2, (b1 * mi).abs() + (o1 * g).abs());
                let e_v = b2 * before.v[i]
                    + o2 * (2.0 * g.abs() * e_g + e_g * e_g)
                    + sum_gap(3, b2 * vi + o2 * g * g);
                after.m[i] = e_m;
                after.v[i] = e_v;
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
                let den = q + EPSILON as f64;
                let e_den = e_q + 2.0 * U * den;
                let upd = lr * a / den;
                let e_upd = lr * e_a / den
                    + upd.abs() * e_den / den
                    + (2.0 + DIV_ULPS) * 2.0 * U * upd.abs();
                after.params[i] = before.params[i] + e_upd + sum_gap(1, pi.abs() + upd.abs());
            }
        }
    }
    Some(StepBound {
        state: after,
        grads: eg,
        acts: ea,
        deltas: ed,
        loss,
    })
}

/// Bounds on |GPU − twin| of every activation of a forward pass (the workspace's layout),
/// from the parameters' bounds `ep` (the input is uploaded, so exact). The caller has checked
/// the sizes.
fn forward_gaps(net: &Net, params: &[f32], ep: &[f64], ws: &Workspace) -> Vec<f64> {
    let pl = net.param_layout();
    let l = &ws.layout;
    let batch = l.batch;
    let p = |i: usize| params[i] as f64;
    let acts = |i: usize| ws.acts[i] as f64;
    let mut ea = vec![0.0f64; l.len];
    // Forward, block by block.
    let mut in_off = l.input;
    for ((s, o), a) in net.shapes.iter().zip(&pl.conv).zip(&l.blocks) {
        let (c_in, c_out, k) = (s.block.c_in, s.block.c_out, s.block.kernel);
        let (is, cs, ps) = (s.in_side, s.conv_side, s.pool_side);
        let terms = c_in * k * k + 1;
        for n in 0..batch {
            for oc in 0..c_out {
                for y in 0..cs {
                    for x in 0..cs {
                        let (mut prop, mut abs) = (ep[o.b + oc], p(o.b + oc).abs());
                        for c in 0..c_in {
                            let plane = in_off + (n * c_in + c) * is * is;
                            let w = o.w + (oc * c_in + c) * k * k;
                            for r in 0..k {
                                for q in 0..k {
                                    let i = plane + (y + r) * is + x + q;
                                    let wi = w + r * k + q;
                                    prop += ea[i] * p(wi).abs() + acts(i).abs() * ep[wi];
                                    abs += (acts(i) * p(wi)).abs();
                                }
                            }
                        }
                        let e = prop + sum_gap(terms, abs);
                        let at = ((n * c_out + oc) * cs + y) * cs + x;
                        ea[a.conv + at] = e;
                        ea[a.relu + at] = e;
                    }
                }
            }
        }
        for nc in 0..batch * c_out {
            for py in 0..ps {
                for px in 0..ps {
                    let mut e = 0.0f64;
                    for dy in 0..POOL {
                        for dx in 0..POOL {
                            let i = (nc * cs + POOL * py + dy) * cs + POOL * px + dx;
                            e = e.max(ea[a.relu + i]);
                        }
                    }
                    ea[a.pool + (nc * ps + py) * ps + px] = e;
                }
            }
        }
        in_off = a.pool;
    }
    let d = net.dense_inputs();
    let k = net.classes;
    for n in 0..batch {
        for j in 0..k {
            let b = pl.dense_b + j;
            let (mut prop, mut abs) = (ep[b], p(b).abs());
            for i in 0..d {
                let (ai, wi) = (in_off + n * d + i, pl.dense_w + j * d + i);
                prop += ea[ai] * p(wi).abs() + acts(ai).abs() * ep[wi];
                abs += (acts(ai) * p(wi)).abs();
            }
            ea[l.logits + n * k + j] = prop + sum_gap(d + 1, abs);
        }
    }

    ea
}

/// Bounds on |GPU − twin| of the logits of a forward pass (an evaluation) with equal
/// parameters, in the logits' layout (batch × classes); `None` if the sizes do not match.
pub fn logits_bound(net: &Net, params: &[f32], ws: &Workspace) -> Option<Vec<f64>> {
    let l = &ws.layout;
    if params.len() != net.param_layout().len || ws.acts.len() != l.len {
        return None;
    }
    let ea = forward_gaps(net, params, &vec![0.0; params.len()], ws);
    Some(ea[l.logits..l.logits + l.batch * net.classes].to_vec())
}
