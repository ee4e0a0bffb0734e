//! The tuned CPU trainer: the same model, loss, Adam and seeded batch order as the CPU twin
//! ([`crate::train::Trainer`]), computed as a fast single core computes it. Single-threaded:
//! one core, as the twin; the benchmark (`bench gpt-cpu`) compares it with the GPU's step.
//!
//! Every product of the step is a matrix multiply on the model's row-major buffers (n = b·t
//! rows, width c):
//!
//! - each linear layer (qkv c → 3c, the attention's output projection c → c, the MLP's
//!   c → 4c → c, the head c → vocab): Y = X·W, + bias; its input gradient dX = dY·Wᵀ and its
//!   weight gradient dW = Xᵀ·dY (the bias gradient is the column sums of dY, as the twin sums
//!   them);
//! - attention, per sequence and head, on strided views of the qkv rows: S = Q·Kᵀ (then the
//!   1/√hs scale and the causal softmax, row by row as the twin computes them), Y = P·V; and
//!   backward dP = dY·Vᵀ, dV = Pᵀ·dY, dS = P∘(dP − rowsum(P∘dP))·(1/√hs) on the causal part,
//!   dQ = dS·K, dK = dSᵀ·Q. The masked probabilities are exact zeros, so the multiplies over
//!   the whole t × t square add only exact zeros beyond the twin's j ≤ i;
//! - LayerNorm, softmax cross-entropy, the embeddings and Adam are the twin's own functions
//!   ([`crate::ops`], `cpu_kernels::optim::adam_update`); GELU is the twin's formula operation
//!   for operation, with tanh(u) kept from the forward for the backward instead of computed
//!   again (the same numbers; libm's tanh was a third of the step).
//!
//! The multiplies run on [`Gemm`] (`cpu_kernels::gemm`, shared with `mlp::tuned` and
//! `cnn::tuned`): `matrixmultiply`'s sgemm natively (with this crate's `matrixmultiply`
//! feature, on by default), the race's SIMD kernel otherwise. Only the order of the sums
//! differs from the twin, so the two agree within rounding, not bit for bit (`tests/tuned.rs`
//! derives the bound).

use cpu_kernels::gemm::{gemm, View};
pub use cpu_kernels::gemm::{Gemm, Scratch};
use cpu_kernels::optim;

use crate::data::{batch, BatchOrder};
use crate::model::{Model, ParamLayout};
use crate::ops::{self, AttnShape};
use crate::train::Trainer;

/// Multiply-adds of one step × 2 in its matrix multiplies (forward, input and weight
/// gradients of every linear layer; attention's four products forward and backward over the
/// whole t × t square, as computed), for a FLOP rate. Element-wise work is left out.
pub fn flops_per_step(model: &Model, windows: usize) -> f64 {
    let cfg = &model.cfg;
    let (c, t, v) = (cfg.width as f64, cfg.context as f64, cfg.vocab as f64);
    let n = windows as f64 * t;
    let linear = n * (c * 3.0 * c + c * c + 2.0 * c * 4.0 * c);
    // Attention: QKᵀ and P·V forward; dP, dV, dQ, dK backward: each t·t·hs per head.
    let attn = windows as f64 * cfg.heads as f64 * t * t * cfg.head_size() as f64;
    2.0 * (3.0 * (cfg.layers as f64 * linear + n * c * v) + 6.0 * cfg.layers as f64 * attn)
}

/// One block's saved activations (the twin's `BlockActs`).
struct BlockBufs {
    x_in: Vec<f32>,
    ln1: Vec<f32>,
    ln1_mean: Vec<f32>,
    ln1_rstd: Vec<f32>,
    qkv: Vec<f32>,
    probs: Vec<f32>,
    att: Vec<f32>,
    x_mid: Vec<f32>,
    ln2: Vec<f32>,
    ln2_mean: Vec<f32>,
    ln2_rstd: Vec<f32>,
    fc: Vec<f32>,
    gelu: Vec<f32>,
    /// tanh(u) of each GELU, for its backward.
    tanh: Vec<f32>,
}

/// Every buffer of one step at b windows, allocated once.
struct Buffers {
    b: usize,
    blocks: Vec<BlockBufs>,
    x: Vec<f32>,
    y: Vec<f32>,
    lnf: Vec<f32>,
    lnf_mean: Vec<f32>,
    lnf_rstd: Vec<f32>,
    logits: Vec<f32>,
    probs: Vec<f32>,
    // Backward.
    dlogits: Vec<f32>,
    dx: Vec<f32>,
    dc: Vec<f32>,
    d4c: Vec<f32>,
    dfc: Vec<f32>,
    dqkv: Vec<f32>,
    // Per head: t × t and t × hs.
    s: Vec<f32>,
    head: Vec<f32>,
    scratch: Scratch,
}

impl Buffers {
    fn new(model: &Model, b: usize) -> Self {
        let cfg = &model.cfg;
        let (c, t, v) = (cfg.width, cfg.context, cfg.vocab);
        let n = b * t;
        let z = |len: usize| vec![0.0f32; len];
        Self {
            b,
            blocks: (0..cfg.layers)
                .map(|_| BlockBufs {
                    x_in: z(n * c),
                    ln1: z(n * c),
                    ln1_mean: z(n),
                    ln1_rstd: z(n),
                    qkv: z(n * 3 * c),
                    probs: z(b * cfg.heads * t * t),
                    att: z(n * c),
                    x_mid: z(n * c),
                    ln2: z(n * c),
                    ln2_mean: z(n),
                    ln2_rstd: z(n),
                    fc: z(n * 4 * c),
                    gelu: z(n * 4 * c),
                    tanh: z(n * 4 * c),
                })
                .collect(),
            x: z(n * c),
            y: z(n * c),
            lnf: z(n * c),
            lnf_mean: z(n),
            lnf_rstd: z(n),
            logits: z(n * v),
            probs: z(n * v),
            dlogits: z(n * v),
            dx: z(n * c),
            dc: z(n * c),
            d4c: z(n * 4 * c),
            dfc: z(n * 4 * c),
            dqkv: z(n * 3 * c),
            s: z(t * t),
            head: z(t * cfg.head_size()),
            scratch: Scratch::new(),
        }
    }
}

/// A row-major matrix with `cols` columns (or a column-offset view into one).
fn rm(data: &[f32], cols: usize) -> View<'_> {
    View {
        data,
        rs: cols,
        cs: 1,
    }
}

/// The transpose of a row-major matrix with `cols` columns.
fn tr(data: &[f32], cols: usize) -> View<'_> {
    View {
        data,
        rs: 1,
        cs: cols,
    }
}

/// y (n × m) = x (n × k) · W (k × m) + bias, as [`ops::linear`] with the sum reordered.
/// `bias` may be empty.
#[allow(clippy::too_many_arguments)]
pub fn linear(
    kind: Gemm,
    scratch: &mut Scratch,
    x: &[f32],
    w: &[f32],
    bias: &[f32],
    n: usize,
    k: usize,
    m: usize,
    y: &mut [f32],
) {
    gemm(kind, scratch, n, k, m, rm(x, k), rm(w, m), y, false);
    if !bias.is_empty() {
        for row in y[..n * m].chunks_exact_mut(m) {
            for (v, &b) in row.iter_mut().zip(bias) {
                *v += b;
            }
        }
    }
}

/// The linear layer's backward, as [`ops::linear_backward`] but overwriting: dx = dy·Wᵀ,
/// dW = xᵀ·dy, db = Σ_rows dy (by ascending row, as the twin). `dbias` may be empty.
#[allow(clippy::too_many_arguments)]
pub fn linear_backward(
    kind: Gemm,
    scratch: &mut Scratch,
    x: &[f32],
    w: &[f32],
    dy: &[f32],
    n: usize,
    k: usize,
    m: usize,
    dx: &mut [f32],
    dw: &mut [f32],
    dbias: &mut [f32],
) {
    gemm(kind, scratch, n, m, k, rm(dy, m), tr(w, m), dx, false);
    gemm(kind, scratch, k, n, m, tr(x, k), rm(dy, m), dw, false);
    if !dbias.is_empty() {
        dbias[..m].fill(0.0);
        for row in dy[..n * m].chunks_exact(m) {
            for (g, &d) in dbias.iter_mut().zip(row) {
                *g += d;
            }
        }
    }
}

/// Causal attention forward for every sequence and head, as [`ops::attention`]: writes y
/// (n × c) and the probabilities (b × h × t × t). `s_buf` (t × t) and `head` (t × hs) are
/// work space.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    kind: Gemm,
    scratch: &mut Scratch,
    s_buf: &mut [f32],
    head: &mut [f32],
    qkv: &[f32],
    sh: AttnShape,
    y: &mut [f32],
    probs: &mut [f32],
) {
    let (t, hs) = (sh.t, sh.hs);
    let c = sh.h * hs;
    let scale = 1.0f32 / (hs as f32).sqrt();
    for bb in 0..sh.b {
        let rows = bb * t * 3 * c;
        for hh in 0..sh.h {
            let q = &qkv[rows + hh * hs..];
            let k = &qkv[rows + c + hh * hs..];
            let v = &qkv[rows + 2 * c + hh * hs..];
            // S = Q·Kᵀ over the whole square; only j ≤ i is read.
            gemm(
                kind,
                scratch,
                t,
                hs,
                t,
                rm(q, 3 * c),
                tr(k, 3 * c),
                s_buf,
                false,
            );
            let p_all = &mut probs[(bb * sh.h + hh) * t * t..][..t * t];
            for i in 0..t {
                let row = &mut s_buf[i * t..(i + 1) * t];
                // The twin's row: scale, maximum (first of the largest), exp, sum by j.
                let mut max = row[0] * scale;
                for sc in row.iter_mut().take(i + 1) {
                    *sc *= scale;
                    if *sc > max {
                        max = *sc;
                    }
                }
                let mut z = 0.0f32;
                for sc in row.iter_mut().take(i + 1) {
                    *sc = (*sc - max).exp();
                    z += *sc;
                }
                let p = &mut p_all[i * t..(i + 1) * t];
                for j in 0..t {
                    p[j] = if j <= i { row[j] / z } else { 0.0 };
                }
            }
            // Y = P·V (the masked zeros add nothing).
            gemm(
                kind,
                scratch,
                t,
                t,
                hs,
                rm(p_all, t),
                rm(v, 3 * c),
                head,
                false,
            );
            for i in 0..t {
                y[(bb * t + i) * c + hh * hs..][..hs].copy_from_slice(&head[i * hs..][..hs]);
            }
        }
    }
}

/// Attention's backward, as [`ops::attention_backward`] but overwriting `dqkv`; `s_buf`
/// (t × t) and `head` (t × hs) are work space.
#[allow(clippy::too_many_arguments)]
pub fn attention_backward(
    kind: Gemm,
    scratch: &mut Scratch,
    s_buf: &mut [f32],
    head: &mut [f32],
    qkv: &[f32],
    probs: &[f32],
    dy: &[f32],
    sh: AttnShape,
    dqkv: &mut [f32],
) {
    let (t, hs) = (sh.t, sh.hs);
    let c = sh.h * hs;
    let scale = 1.0f32 / (hs as f32).sqrt();
    for bb in 0..sh.b {
        let rows = bb * t * 3 * c;
        let dy_b = &dy[bb * t * c..];
        for hh in 0..sh.h {
            let q = &qkv[rows + hh * hs..];
            let k = &qkv[rows + c + hh * hs..];
            let v = &qkv[rows + 2 * c + hh * hs..];
            let dyh = &dy_b[hh * hs..];
            let p = &probs[(bb * sh.h + hh) * t * t..][..t * t];
            let put = |dqkv: &mut [f32], head: &[f32], part: usize| {
                for i in 0..t {
                    dqkv[rows + i * 3 * c + part * c + hh * hs..][..hs]
                        .copy_from_slice(&head[i * hs..][..hs]);
                }
            };
            // dV = Pᵀ·dY.
            gemm(kind, scratch, t, t, hs, tr(p, t), rm(dyh, c), head, false);
            put(dqkv, head, 2);
            // dP = dY·Vᵀ, then dS in place on the causal part (zero above it).
            gemm(
                kind,
                scratch,
                t,
                hs,
                t,
                rm(dyh, c),
                tr(v, 3 * c),
                s_buf,
                false,
            );
            for i in 0..t {
                let (pr, dp) = (&p[i * t..(i + 1) * t], &mut s_buf[i * t..(i + 1) * t]);
                let mut pdp = 0.0f32;
                for j in 0..=i {
                    pdp += pr[j] * dp[j];
                }
                for j in 0..t {
                    dp[j] = if j <= i {
                        pr[j] * (dp[j] - pdp) * scale
                    } else {
                        0.0
                    };
                }
            }
            // dQ = dS·K, dK = dSᵀ·Q.
            gemm(
                kind,
                scratch,
                t,
                t,
                hs,
                rm(s_buf, t),
                rm(k, 3 * c),
                head,
                false,
            );
            put(dqkv, head, 0);
            gemm(
                kind,
                scratch,
                t,
                t,
                hs,
                tr(s_buf, t),
                rm(q, 3 * c),
                head,
                false,
            );
            put(dqkv, head, 1);
        }
    }
}

/// Forward over `b` windows of the context into `bf`; returns (loss, counted rows).
fn forward(
    model: &Model,
    kind: Gemm,
    p: &[f32],
    tokens: &[u32],
    targets: &[u32],
    bf: &mut Buffers,
) -> (f32, usize) {
    let (cfg, l) = (&model.cfg, &model.layout);
    let (c, t, v) = (cfg.width, cfg.context, cfg.vocab);
    let b = bf.b;
    let n = b * t;
    let sh = AttnShape {
        b,
        t,
        h: cfg.heads,
        hs: cfg.head_size(),
    };
    for (r, &tok) in tokens.iter().enumerate() {
        let (e, q) = (l.wte + tok as usize * c, l.wpe + (r % t) * c);
        for i in 0..c {
            bf.x[r * c + i] = p[e + i] + p[q + i];
        }
    }
    let sc = &mut bf.scratch;
    for (bp, a) in l.blocks.iter().zip(&mut bf.blocks) {
        a.x_in.copy_from_slice(&bf.x);
        ops::layernorm(
            &bf.x,
            &p[bp.ln1_g..][..c],
            &p[bp.ln1_b..][..c],
            c,
            &mut a.ln1,
            &mut a.ln1_mean,
            &mut a.ln1_rstd,
        );
        let (w, bias) = (&p[bp.qkv_w..][..3 * c * c], &p[bp.qkv_b..][..3 * c]);
        linear(kind, sc, &a.ln1, w, bias, n, c, 3 * c, &mut a.qkv);
        attention(
            kind,
            sc,
            &mut bf.s,
            &mut bf.head,
            &a.qkv,
            sh,
            &mut a.att,
            &mut a.probs,
        );
        let (w, bias) = (&p[bp.proj_w..][..c * c], &p[bp.proj_b..][..c]);
        linear(kind, sc, &a.att, w, bias, n, c, c, &mut bf.y);
        for (xv, &yv) in bf.x.iter_mut().zip(&bf.y) {
            *xv += yv;
        }
        a.x_mid.copy_from_slice(&bf.x);
        ops::layernorm(
            &bf.x,
            &p[bp.ln2_g..][..c],
            &p[bp.ln2_b..][..c],
            c,
            &mut a.ln2,
            &mut a.ln2_mean,
            &mut a.ln2_rstd,
        );
        let (w, bias) = (&p[bp.fc_w..][..4 * c * c], &p[bp.fc_b..][..4 * c]);
        linear(kind, sc, &a.ln2, w, bias, n, c, 4 * c, &mut a.fc);
        gelu(&a.fc, &mut a.gelu, &mut a.tanh);
        let (w, bias) = (&p[bp.out_w..][..4 * c * c], &p[bp.out_b..][..c]);
        linear(kind, sc, &a.gelu, w, bias, n, 4 * c, c, &mut bf.y);
        for (xv, &yv) in bf.x.iter_mut().zip(&bf.y) {
            *xv += yv;
        }
    }
    ops::layernorm(
        &bf.x,
        &p[l.lnf_g..][..c],
        &p[l.lnf_b..][..c],
        c,
        &mut bf.lnf,
        &mut bf.lnf_mean,
        &mut bf.lnf_rstd,
    );
    let head = &p[l.head..][..c * v];
    linear(kind, sc, &bf.lnf, head, &[], n, c, v, &mut bf.logits);
    ops::softmax_xent(&bf.logits, targets, v, &mut bf.probs)
}

/// Backward after [`forward`]: overwrites `g` (the parameters' layout).
#[allow(clippy::too_many_arguments)]
fn backward(
    model: &Model,
    kind: Gemm,
    p: &[f32],
    tokens: &[u32],
    targets: &[u32],
    counted: usize,
    bf: &mut Buffers,
    g: &mut [f32],
) {
    let (cfg, l): (_, &ParamLayout) = (&model.cfg, &model.layout);
    let (c, t, v) = (cfg.width, cfg.context, cfg.vocab);
    let n = bf.b * t;
    let sh = AttnShape {
        b: bf.b,
        t,
        h: cfg.heads,
        hs: cfg.head_size(),
    };
    g.fill(0.0);
    let sc = &mut bf.scratch;
    ops::softmax_xent_backward(&bf.probs, targets, v, counted, &mut bf.dlogits);
    let (head, dhead) = (&p[l.head..][..c * v], &mut g[l.head..][..c * v]);
    linear_backward(
        kind,
        sc,
        &bf.lnf,
        head,
        &bf.dlogits,
        n,
        c,
        v,
        &mut bf.dc,
        dhead,
        &mut [],
    );
    bf.dx.fill(0.0);
    {
        let (gg, gb) = two(g, l.lnf_g, l.lnf_b, c);
        ops::layernorm_backward(
            &bf.x,
            &p[l.lnf_g..][..c],
            &bf.lnf_mean,
            &bf.lnf_rstd,
            &bf.dc,
            c,
            &mut bf.dx,
            gg,
            &mut gb[..c],
        );
    }
    for (bp, a) in l.blocks.iter().zip(&bf.blocks).rev() {
        {
            let (dw, db) = two(g, bp.out_w, bp.out_b, 4 * c * c);
            let w = &p[bp.out_w..][..4 * c * c];
            linear_backward(
                kind,
                sc,
                &a.gelu,
                w,
                &bf.dx,
                n,
                4 * c,
                c,
                &mut bf.d4c,
                dw,
                &mut db[..c],
            );
        }
        bf.dfc.fill(0.0);
        gelu_backward(&a.fc, &a.tanh, &bf.d4c, &mut bf.dfc);
        {
            let (dw, db) = two(g, bp.fc_w, bp.fc_b, 4 * c * c);
            let w = &p[bp.fc_w..][..4 * c * c];
            linear_backward(
                kind,
                sc,
                &a.ln2,
                w,
                &bf.dfc,
                n,
                c,
                4 * c,
                &mut bf.dc,
                dw,
                &mut db[..4 * c],
            );
        }
        {
            let (gg, gb) = two(g, bp.ln2_g, bp.ln2_b, c);
            ops::layernorm_backward(
                &a.x_mid,
                &p[bp.ln2_g..][..c],
                &a.ln2_mean,
                &a.ln2_rstd,
                &bf.dc,
                c,
                &mut bf.dx,
                gg,
                &mut gb[..c],
            );
        }
        {
            let (dw, db) = two(g, bp.proj_w, bp.proj_b, c * c);
            let w = &p[bp.proj_w..][..c * c];
            linear_backward(
                kind,
                sc,
                &a.att,
                w,
                &bf.dx,
                n,
                c,
                c,
                &mut bf.dc,
                dw,
                &mut db[..c],
            );
        }
        attention_backward(
            kind,
            sc,
            &mut bf.s,
            &mut bf.head,
            &a.qkv,
            &a.probs,
            &bf.dc,
            sh,
            &mut bf.dqkv,
        );
        {
            let (dw, db) = two(g, bp.qkv_w, bp.qkv_b, 3 * c * c);
            let w = &p[bp.qkv_w..][..3 * c * c];
            linear_backward(
                kind,
                sc,
                &a.ln1,
                w,
                &bf.dqkv,
                n,
                c,
                3 * c,
                &mut bf.dc,
                dw,
                &mut db[..3 * c],
            );
        }
        {
            let (gg, gb) = two(g, bp.ln1_g, bp.ln1_b, c);
            ops::layernorm_backward(
                &a.x_in,
                &p[bp.ln1_g..][..c],
                &a.ln1_mean,
                &a.ln1_rstd,
                &bf.dc,
                c,
                &mut bf.dx,
                gg,
                &mut gb[..c],
            );
        }
    }
    for (r, &tok) in tokens.iter().enumerate() {
        let pos = r % t;
        for i in 0..c {
            let d = bf.dx[r * c + i];
            g[l.wte + tok as usize * c + i] += d;
            g[l.wpe + pos * c + i] += d;
        }
    }
}

/// GELU as [`ops::gelu`], keeping tanh(u) in `th` for [`gelu_backward`].
pub fn gelu(x: &[f32], y: &mut [f32], th: &mut [f32]) {
    let (c, a, half) = (ops::GELU_C as f32, ops::GELU_A as f32, 0.5f32);
    for ((o, t), &v) in y.iter_mut().zip(th.iter_mut()).zip(x) {
        let u = c * (v + a * v * v * v);
        *t = u.tanh();
        *o = half * v * (1.0 + *t);
    }
}

/// GELU's backward as [`ops::gelu_backward`] (adds into dx), with the forward's tanh(u).
pub fn gelu_backward(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32]) {
    let (c, half) = (ops::GELU_C as f32, 0.5f32);
    let three_a = (3.0 * ops::GELU_A) as f32;
    for (((g, &v), &d), &th) in dx.iter_mut().zip(x).zip(dy).zip(th) {
        let du = c * (1.0 + three_a * v * v);
        *g += d * (half * (1.0 + th) + half * v * (1.0 - th * th) * du);
    }
}

/// Two disjoint mutable regions of `g`: `first..first + len_first` and `second..`.
fn two(g: &mut [f32], first: usize, second: usize, len_first: usize) -> (&mut [f32], &mut [f32]) {
    let (lo, hi) = g.split_at_mut(second);
    (&mut lo[first..first + len_first], hi)
}

/// Trains like [`crate::train::Trainer`] (same initialisation, batches, formulas and Adam)
/// with matrix multiplies.
pub struct TunedTrainer {
    pub model: Model,
    pub params: Vec<f32>,
    pub batch: usize,
    pub lr: f32,
    pub gemm: Gemm,
    /// Steps done.
    pub step: u64,
    grads: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    order: BatchOrder,
    bufs: Option<Buffers>,
}

impl TunedTrainer {
    /// Same arguments as [`crate::train::Trainer::new`], plus the multiply to use.
    pub fn new(
        model: Model,
        train_docs: usize,
        batch: usize,
        lr: f32,
        seed: u64,
        gemm: Gemm,
    ) -> Self {
        let params = model.init_params(seed);
        let n = params.len();
        Self {
            model,
            params,
            batch: batch.max(1),
            lr,
            gemm,
            step: 0,
            grads: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            order: BatchOrder::new(train_docs, seed),
            bufs: None,
        }
    }

    /// The loss and gradient of `params` on `b` full-context windows (`tokens` and `targets`
    /// b·context each), as [`Model::loss_and_grad`] computes them; the gradient is
    /// [`Self::grads`] afterwards.
    pub fn loss_and_grad(&mut self, params: &[f32], tokens: &[u32], targets: &[u32]) -> f32 {
        let b = tokens.len() / self.model.cfg.context.max(1);
        let fits = self.bufs.as_ref().is_some_and(|bf| bf.b == b);
        let bf = match self.bufs.as_mut() {
            Some(bf) if fits => bf,
            _ => self.bufs.insert(Buffers::new(&self.model, b)),
        };
        let (loss, counted) = forward(&self.model, self.gemm, params, tokens, targets, bf);
        backward(
            &self.model,
            self.gemm,
            params,
            tokens,
            targets,
            counted,
            bf,
            &mut self.grads,
        );
        loss
    }

    /// One step on the next batch of `docs` (the twin's batch for this step); returns its
    /// loss.
    pub fn step(&mut self, docs: &[Vec<u32>]) -> f32 {
        let idx = self.order.next(self.batch);
        let (tokens, targets) = batch(docs, &idx, self.model.cfg.context);
        let params = std::mem::take(&mut self.params);
        let loss = self.loss_and_grad(&params, &tokens, &targets);
        self.params = params;
        self.step += 1;
        optim::adam_update(
            self.lr,
            self.step,
            &mut self.params,
            &self.grads,
            &mut self.m,
            &mut self.v,
        );
        loss
    }

    /// Takes the twin's parameters, Adam's moments and step count (not its batch order: the
    /// two draw the same batches when they have taken the same steps from the same seed), so
    /// a test can compare one step from the same state.
    pub fn sync_from(&mut self, twin: &Trainer) {
        let (m, v) = twin.moments();
        self.params.copy_from_slice(&twin.params);
        self.m.copy_from_slice(m);
        self.v.copy_from_slice(v);
        self.step = twin.step;
    }

    /// The last step's gradient (the parameters' layout).
    pub fn grads(&self) -> &[f32] {
        &self.grads
    }
}
