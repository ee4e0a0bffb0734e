//! Each layer's forward and backward over row-major slices, generic over [`Real`]. The
//! summation orders stated here are the twin's; a kernel that sums in another order is held to
//! an order-free bound for that sum.
//!
//! Shapes: `n` rows (batch × positions) of width `c`. Backward functions ADD into their
//! gradient outputs (a parameter or the residual stream may receive several contributions)
//! unless they say they overwrite.

use crate::real::Real;

/// LayerNorm's ε (GPT-2's).
pub const LN_EPS: f64 = 1e-5;
/// √(2/π) of GELU's tanh form.
pub const GELU_C: f64 = 0.797_884_560_802_865_4;
/// The cubic term's coefficient of GELU's tanh form.
pub const GELU_A: f64 = 0.044_715;
/// Targets with this value are padding: no loss, no gradient.
pub const IGNORE: u32 = u32::MAX;

/// LayerNorm of each row: mean = Σx / c, var = Σ(x − mean)² / c (both summed by ascending
/// column), rstd = 1/√(var + ε), y = (x − mean)·rstd·γ + β. Saves mean and rstd per row.
pub fn layernorm<R: Real>(
    x: &[R],
    gamma: &[R],
    beta: &[R],
    c: usize,
    y: &mut [R],
    mean: &mut [R],
    rstd: &mut [R],
) {
    let cr = R::from_f64(c as f64);
    for ((xr, yr), (m, rs)) in x
        .chunks_exact(c)
        .zip(y.chunks_exact_mut(c))
        .zip(mean.iter_mut().zip(rstd.iter_mut()))
    {
        let mut s = R::zero();
        for &v in xr {
            s += v;
        }
        let mu = s / cr;
        let mut q = R::zero();
        for &v in xr {
            let d = v - mu;
            q += d * d;
        }
        let r = R::one() / (q / cr + R::from_f64(LN_EPS)).sqrt();
        for i in 0..c {
            yr[i] = (xr[i] - mu) * r * gamma[i] + beta[i];
        }
        *m = mu;
        *rs = r;
    }
}

/// LayerNorm's backward: with x̂ = (x − mean)·rstd and d̂ = dy·γ,
/// dx = rstd·(d̂ − mean(d̂) − x̂·mean(d̂·x̂)); dγ += Σ_rows dy·x̂; dβ += Σ_rows dy.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_backward<R: Real>(
    x: &[R],
    gamma: &[R],
    mean: &[R],
    rstd: &[R],
    dy: &[R],
    c: usize,
    dx: &mut [R],
    dgamma: &mut [R],
    dbeta: &mut [R],
) {
    let cr = R::from_f64(c as f64);
    for (((xr, dyr), dxr), (&mu, &r)) in x
        .chunks_exact(c)
        .zip(dy.chunks_exact(c))
        .zip(dx.chunks_exact_mut(c))
        .zip(mean.iter().zip(rstd))
    {
        let mut sd = R::zero();
        let mut sdx = R::zero();
        for i in 0..c {
            let xh = (xr[i] - mu) * r;
            let d = dyr[i] * gamma[i];
            sd += d;
            sdx += d * xh;
        }
        let (md, mdx) = (sd / cr, sdx / cr);
        for i in 0..c {
            let xh = (xr[i] - mu) * r;
            let d = dyr[i] * gamma[i];
            dxr[i] += r * (d - md - xh * mdx);
            dgamma[i] += dyr[i] * xh;
            dbeta[i] += dyr[i];
        }
    }
}

/// A linear layer y = x·W + b for `n` rows: x is n×k, W is k×m (row-major, as the matmul
/// family's B), y is n×m, overwritten. Each output sums its k products by ascending k from
/// zero, then adds the bias (a GEMM with a bias epilogue). `bias` may be empty (no bias).
pub fn linear<R: Real>(x: &[R], w: &[R], bias: &[R], n: usize, k: usize, m: usize, y: &mut [R]) {
    for r in 0..n {
        let xr = &x[r * k..(r + 1) * k];
        let yr = &mut y[r * m..(r + 1) * m];
        yr.iter_mut().for_each(|v| *v = R::zero());
        for (kk, &xv) in xr.iter().enumerate() {
            let wr = &w[kk * m..(kk + 1) * m];
            for (yv, &wv) in yr.iter_mut().zip(wr) {
                *yv += xv * wv;
            }
        }
        if !bias.is_empty() {
            for (yv, &b) in yr.iter_mut().zip(bias) {
                *yv += b;
            }
        }
    }
}

/// The linear layer's three backward products: dx += dy·Wᵀ (each by ascending output column),
/// dW += xᵀ·dy and db += Σ_rows dy (each by ascending row). `dbias` may be empty.
#[allow(clippy::too_many_arguments)]
pub fn linear_backward<R: Real>(
    x: &[R],
    w: &[R],
    dy: &[R],
    n: usize,
    k: usize,
    m: usize,
    dx: &mut [R],
    dw: &mut [R],
    dbias: &mut [R],
) {
    for r in 0..n {
        let dyr = &dy[r * m..(r + 1) * m];
        let xr = &x[r * k..(r + 1) * k];
        for kk in 0..k {
            let wr = &w[kk * m..(kk + 1) * m];
            let mut s = R::zero();
            for (&d, &wv) in dyr.iter().zip(wr) {
                s += d * wv;
            }
            dx[r * k + kk] += s;
            let xv = xr[kk];
            for (g, &d) in dw[kk * m..(kk + 1) * m].iter_mut().zip(dyr) {
                *g += xv * d;
            }
        }
        if !dbias.is_empty() {
            for (g, &d) in dbias.iter_mut().zip(dyr) {
                *g += d;
            }
        }
    }
}

/// The shape of one attention call: `b` sequences of `t` positions, `h` heads of width `hs`
/// (the model's width is c = h·hs).
#[derive(Clone, Copy, Debug)]
pub struct AttnShape {
    pub b: usize,
    pub t: usize,
    pub h: usize,
    pub hs: usize,
}

impl AttnShape {
    fn c(&self) -> usize {
        self.h * self.hs
    }
    /// Length of the saved probabilities: b·h·t·t.
    pub fn probs_len(&self) -> usize {
        self.b * self.h * self.t * self.t
    }
}

/// Causal multi-head attention, the naive way (every score written): `qkv` holds per row
/// [q (c) | k (c) | v (c)], head `hh` using columns hh·hs… of each. For each query position i
/// and key j ≤ i: s = (Σ_d q·k by ascending d)·(1/√hs); p = exp(s − max) / Σ_j exp(…) (sum by
/// ascending j); y[i] = Σ_j p·v[j] by ascending j. Keys after i get probability 0 (the
/// mask). Writes y (n×c) and the probabilities (b×h×t×t, row i of head hh) for the backward.
pub fn attention<R: Real>(qkv: &[R], s: AttnShape, y: &mut [R], probs: &mut [R]) {
    let c = s.c();
    let scale = R::one() / R::from_f64(s.hs as f64).sqrt();
    let mut row = vec![R::zero(); s.t];
    for bb in 0..s.b {
        for hh in 0..s.h {
            for i in 0..s.t {
                let q = &qkv[(bb * s.t + i) * 3 * c + hh * s.hs..][..s.hs];
                let mut max = None::<R>;
                for (j, sc) in row.iter_mut().enumerate().take(i + 1) {
                    let k = &qkv[(bb * s.t + j) * 3 * c + c + hh * s.hs..][..s.hs];
                    let mut dot = R::zero();
                    for d in 0..s.hs {
                        dot += q[d] * k[d];
                    }
                    *sc = dot * scale;
                    max = Some(match max {
                        Some(m) if m >= *sc => m,
                        _ => *sc,
                    });
                }
                let max = max.unwrap_or_default();
                let mut z = R::zero();
                for sc in row.iter_mut().take(i + 1) {
                    *sc = (*sc - max).exp();
                    z += *sc;
                }
                let p = &mut probs[((bb * s.h + hh) * s.t + i) * s.t..][..s.t];
                for j in 0..s.t {
                    p[j] = if j <= i { row[j] / z } else { R::zero() };
                }
                let out = &mut y[(bb * s.t + i) * c + hh * s.hs..][..s.hs];
                out.iter_mut().for_each(|v| *v = R::zero());
                for (j, &pj) in p.iter().enumerate().take(i + 1) {
                    let v = &qkv[(bb * s.t + j) * 3 * c + 2 * c + hh * s.hs..][..s.hs];
                    for d in 0..s.hs {
                        out[d] += pj * v[d];
                    }
                }
            }
        }
    }
}

/// Attention's backward from the saved probabilities: dp_j = Σ_d dy·v[j];
/// ds_j = p_j·(dp_j − Σ_i p_i·dp_i); dq += (1/√hs)·Σ_j ds_j·k[j]; dk[j] += (1/√hs)·ds_j·q;
/// dv[j] += p_j·dy. Adds into `dqkv` (same layout as qkv).
pub fn attention_backward<R: Real>(qkv: &[R], probs: &[R], dy: &[R], s: AttnShape, dqkv: &mut [R]) {
    let c = s.c();
    let scale = R::one() / R::from_f64(s.hs as f64).sqrt();
    let mut dp = vec![R::zero(); s.t];
    for bb in 0..s.b {
        for hh in 0..s.h {
            for i in 0..s.t {
                let p = &probs[((bb * s.h + hh) * s.t + i) * s.t..][..s.t];
                let dyi = &dy[(bb * s.t + i) * c + hh * s.hs..][..s.hs];
                let mut pdp = R::zero();
                for j in 0..=i {
                    let v = &qkv[(bb * s.t + j) * 3 * c + 2 * c + hh * s.hs..][..s.hs];
                    let mut d = R::zero();
                    for e in 0..s.hs {
                        d += dyi[e] * v[e];
                    }
                    dp[j] = d;
                    pdp += p[j] * d;
                    let dv = &mut dqkv[(bb * s.t + j) * 3 * c + 2 * c + hh * s.hs..][..s.hs];
                    for e in 0..s.hs {
                        dv[e] += p[j] * dyi[e];
                    }
                }
                let qi = (bb * s.t + i) * 3 * c + hh * s.hs;
                for j in 0..=i {
                    let ds = p[j] * (dp[j] - pdp) * scale;
                    let kj = (bb * s.t + j) * 3 * c + c + hh * s.hs;
                    for e in 0..s.hs {
                        let (q, k) = (qkv[qi + e], qkv[kj + e]);
                        dqkv[qi + e] += ds * k;
                        dqkv[kj + e] += ds * q;
                    }
                }
            }
        }
    }
}

/// GELU, tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). Overwrites y.
pub fn gelu<R: Real>(x: &[R], y: &mut [R]) {
    let (c, a, half) = (R::from_f64(GELU_C), R::from_f64(GELU_A), R::from_f64(0.5));
    for (o, &v) in y.iter_mut().zip(x) {
        let u = c * (v + a * v * v * v);
        *o = half * v * (R::one() + u.tanh());
    }
}

/// GELU's backward: dx += dy·(0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·√(2/π)·(1 + 3·0.044715·x²)).
pub fn gelu_backward<R: Real>(x: &[R], dy: &[R], dx: &mut [R]) {
    let (c, a, half) = (R::from_f64(GELU_C), R::from_f64(GELU_A), R::from_f64(0.5));
    let three_a = R::from_f64(3.0 * GELU_A);
    for ((g, &v), &d) in dx.iter_mut().zip(x).zip(dy) {
        let th = (c * (v + a * v * v * v)).tanh();
        let du = c * (R::one() + three_a * v * v);
        *g += d * (half * (R::one() + th) + half * v * (R::one() - th * th) * du);
    }
}

/// Softmax cross-entropy over `v` classes per row, averaged over the rows whose target is not
/// [`IGNORE`]: softmax with the row's maximum subtracted (sums by ascending class); loss =
/// mean of −ln p[target]. Writes the probabilities (n×v) and returns (loss, counted rows).
pub fn softmax_xent<R: Real>(
    logits: &[R],
    targets: &[u32],
    v: usize,
    probs: &mut [R],
) -> (R, usize) {
    let mut total = R::zero();
    let mut count = 0;
    for ((lr, pr), &tg) in logits
        .chunks_exact(v)
        .zip(probs.chunks_exact_mut(v))
        .zip(targets)
    {
        let mut max = lr[0];
        for &x in &lr[1..] {
            if x > max {
                max = x;
            }
        }
        let mut z = R::zero();
        for (p, &x) in pr.iter_mut().zip(lr) {
            *p = (x - max).exp();
            z += *p;
        }
        for p in pr.iter_mut() {
            *p = *p / z;
        }
        if tg != IGNORE {
            total += -(pr[tg as usize]).ln();
            count += 1;
        }
    }
    (
        if count > 0 {
            total / R::from_f64(count as f64)
        } else {
            R::zero()
        },
        count,
    )
}

/// The loss gradient on the logits: (p − onehot(target)) / counted rows; zero on ignored rows.
/// Overwrites dlogits.
pub fn softmax_xent_backward<R: Real>(
    probs: &[R],
    targets: &[u32],
    v: usize,
    count: usize,
    dlogits: &mut [R],
) {
    let inv = R::one() / R::from_f64(count.max(1) as f64);
    for ((pr, dr), &tg) in probs
        .chunks_exact(v)
        .zip(dlogits.chunks_exact_mut(v))
        .zip(targets)
    {
        for (i, (d, &p)) in dr.iter_mut().zip(pr).enumerate() {
            *d = if tg == IGNORE {
                R::zero()
            } else if i == tg as usize {
                (p - R::one()) * inv
            } else {
                p * inv
            };
        }
    }
}
