//! The tuned CPU trainer: the same network, loss, optimiser and batch order as the CPU twin
//! ([`crate::net::CpuTrainer`]), computed as a fast single core computes it — the convolutions
//! and the dense layer as matrix multiplies, on the twin's flat NCHW layout:
//!
//! - conv forward, per sample: im2col (row (c·K + r)·K + s, column y·S' + x, so each row is
//!   copied a conv-output row at a time), then Z_n (C_out × S'²) = W (C_out × C_in·K²) · col_n,
//!   which *is* sample n's NCHW conv output; + bias, ReLU and the twin's own max-pool;
//! - filter gradient: dW += dZ_n · col_nᵀ, accumulated over the batch in the same multiply;
//! - input gradient (blocks after the first; the first's is not needed to train):
//!   dcol_n = Wᵀ · dZ_n, then col2im adds each column entry back to the pixel it came from;
//! - dense: logits = P · Wdᵀ, dWd = Δᵀ · P, dP = Δ · Wd;
//! - pool and ReLU backward as one scatter through the pool's argmax, softmax cross-entropy and
//!   the optimiser as the twin computes them ([`apply_update`] is the twin's function).
//!
//! The multiplies run on [`Gemm`] (`cpu_kernels::gemm`, shared with the MLP's tuned trainer):
//! `matrixmultiply`'s sgemm natively, the race's SIMD kernel in wasm. Only the order of the sums
//! differs from the twin, so the two agree within rounding, not bit for bit (`tests/tuned.rs`
//! derives the bound).

pub use cpu_kernels::gemm::Gemm;
use cpu_kernels::gemm::{gemm, Scratch, View};

use crate::data::{BatchOrder, Samples};
use crate::net::{
    apply_update, pool_forward, softmax_parts, Evaluation, Hyper, Net, ParamLayout, Workspace,
    EVAL_CHUNK,
};

/// Multiply-adds of one step × 2 in its matrix multiplies (conv forward, filter and input
/// gradients — the first block's input gradient is skipped —, dense forward and backward), for
/// a FLOP rate. Element-wise work is left out.
pub fn flops_per_step(net: &Net, batch: usize) -> f64 {
    let mut f = 0.0;
    for (i, s) in net.shapes.iter().enumerate() {
        let b = s.block;
        let mults = (b.c_out * b.c_in * b.kernel * b.kernel * s.conv_side * s.conv_side) as f64;
        f += if i == 0 { 2.0 } else { 3.0 } * mults;
    }
    f += 3.0 * (net.classes * net.dense_inputs()) as f64;
    2.0 * f * batch as f64
}

/// One batch's buffers: the twin's workspace (activations, deltas, argmax in its layout) plus
/// each block's im2col matrices and one sample's column gradient.
struct Buffers {
    ws: Workspace,
    /// Per block: batch × (C_in·K² × S'²), sample after sample.
    cols: Vec<Vec<f32>>,
    dcol: Vec<f32>,
    scratch: Scratch,
}

impl Buffers {
    fn new(net: &Net, batch: usize) -> Self {
        let cols = net
            .shapes
            .iter()
            .map(|s| {
                let b = s.block;
                vec![0.0; batch * b.c_in * b.kernel * b.kernel * s.conv_side * s.conv_side]
            })
            .collect();
        let dcol = net
            .shapes
            .iter()
            .map(|s| {
                let b = s.block;
                b.c_in * b.kernel * b.kernel * s.conv_side * s.conv_side
            })
            .max()
            .unwrap_or(0);
        Self {
            ws: net.workspace(batch),
            cols,
            dcol: vec![0.0; dcol],
            scratch: Scratch::new(),
        }
    }
}

/// Forward pass of `x` (batch × side²) into `bufs` (activations, argmax, im2col matrices).
fn forward(net: &Net, pl: &ParamLayout, kind: Gemm, params: &[f32], x: &[f32], bufs: &mut Buffers) {
    let l = &bufs.ws.layout;
    let batch = l.batch;
    let acts = &mut bufs.ws.acts;
    acts[l.input..l.input + x.len()].copy_from_slice(x);
    let mut in_off = l.input;
    for (b, (s, o)) in net.shapes.iter().zip(&pl.conv).enumerate() {
        let a = &l.blocks[b];
        let (c_in, c_out, k) = (s.block.c_in, s.block.c_out, s.block.kernel);
        let (is, cs) = (s.in_side, s.conv_side);
        let (ckk, npix) = (c_in * k * k, cs * cs);
        let col = &mut bufs.cols[b];
        for n in 0..batch {
            let col_n = &mut col[n * ckk * npix..(n + 1) * ckk * npix];
            for c in 0..c_in {
                let plane = in_off + (n * c_in + c) * is * is;
                for r in 0..k {
                    for t in 0..k {
                        let row = (c * k + r) * k + t;
                        for y in 0..cs {
                            let src = plane + (y + r) * is + t;
                            col_n[row * npix + y * cs..][..cs].copy_from_slice(&acts[src..][..cs]);
                        }
                    }
                }
            }
            gemm(
                kind,
                &mut bufs.scratch,
                c_out,
                ckk,
                npix,
                View {
                    data: &params[o.w..o.b],
                    rs: ckk,
                    cs: 1,
                },
                View {
                    data: col_n,
                    rs: npix,
                    cs: 1,
                },
                &mut acts[a.conv + n * c_out * npix..],
                false,
            );
        }
        let conv_len = a.relu - a.conv;
        for (i, bias) in (0..conv_len).map(|i| (i, params[o.b + (i / npix) % c_out])) {
            let z = acts[a.conv + i] + bias;
            acts[a.conv + i] = z;
            acts[a.relu + i] = z.max(0.0);
        }
        pool_forward(s, batch, acts, a, &mut bufs.ws.argmax);
        in_off = a.pool;
    }
    // Dense: logits (B × classes) = P (B × D) · Wdᵀ, then the bias and the softmax.
    let (d, classes) = (net.dense_inputs(), net.classes);
    let (below, above) = acts.split_at_mut(l.logits);
    gemm(
        kind,
        &mut bufs.scratch,
        batch,
        d,
        classes,
        View {
            data: &below[in_off..],
            rs: d,
            cs: 1,
        },
        View {
            data: &params[pl.dense_w..pl.dense_b],
            rs: 1,
            cs: d,
        },
        above,
        false,
    );
    let (logits, probs) = above.split_at_mut(l.probs - l.logits);
    for (z, p) in logits
        .chunks_exact_mut(classes)
        .zip(probs.chunks_exact_mut(classes))
        .take(batch)
    {
        for (v, &bias) in z.iter_mut().zip(&params[pl.dense_b..]) {
            *v += bias;
        }
        let (m, sum) = softmax_parts(z);
        for (p, &v) in p.iter_mut().zip(z.iter()) {
            *p = (v - m).exp() / sum;
        }
    }
}

/// Backward pass after [`forward`]: overwrites `grads`; returns the batch's summed loss.
fn backward(
    net: &Net,
    pl: &ParamLayout,
    kind: Gemm,
    params: &[f32],
    labels: &[u32],
    bufs: &mut Buffers,
    grads: &mut [f32],
) -> f32 {
    let l = &bufs.ws.layout;
    let batch = l.batch;
    let (acts, deltas) = (&bufs.ws.acts, &mut bufs.ws.deltas);
    let (d, classes) = (net.dense_inputs(), net.classes);
    let inv_b = 1.0 / batch as f32;

    // Softmax cross-entropy, as the twin (a label past the classes, which the asset's decoder
    // refuses, counts as a zero-margin logit rather than panicking).
    let mut loss = 0.0f32;
    for (n, &y) in labels.iter().enumerate().take(batch) {
        let z = &acts[l.logits + n * classes..][..classes];
        let (m, sum) = softmax_parts(z);
        let y = y as usize;
        loss += sum.ln() - (z.get(y).copied().unwrap_or(m) - m);
        for j in 0..classes {
            let t = if j == y { 1.0 } else { 0.0 };
            deltas[l.logits + n * classes + j] = (acts[l.probs + n * classes + j] - t) * inv_b;
        }
    }

    // Dense: dWd (classes × D) = Δᵀ · P, dbd the column sums of Δ, dP (B × D) = Δ · Wd.
    let p_off = l.blocks.last().map_or(l.input, |a| a.pool);
    let (below, above) = deltas.split_at_mut(l.logits);
    let delta = &above[..batch * classes];
    gemm(
        kind,
        &mut bufs.scratch,
        classes,
        batch,
        d,
        View {
            data: delta,
            rs: 1,
            cs: classes,
        },
        View {
            data: &acts[p_off..],
            rs: d,
            cs: 1,
        },
        &mut grads[pl.dense_w..pl.dense_b],
        false,
    );
    let db = &mut grads[pl.dense_b..pl.dense_b + classes];
    db.fill(0.0);
    for row in delta.chunks_exact(classes) {
        for (g, &v) in db.iter_mut().zip(row) {
            *g += v;
        }
    }
    gemm(
        kind,
        &mut bufs.scratch,
        batch,
        classes,
        d,
        View {
            data: delta,
            rs: classes,
            cs: 1,
        },
        View {
            data: &params[pl.dense_w..pl.dense_b],
            rs: d,
            cs: 1,
        },
        &mut below[p_off..],
        false,
    );

    for b in (0..net.shapes.len()).rev() {
        let (s, o, a) = (&net.shapes[b], &pl.conv[b], &l.blocks[b]);
        let (c_in, c_out, k) = (s.block.c_in, s.block.c_out, s.block.kernel);
        let (is, cs) = (s.in_side, s.conv_side);
        let (ckk, npix) = (c_in * k * k, cs * cs);
        // Pool and ReLU backward in one: each pool delta lands on its argmax if the ReLU let
        // that value through (z > 0); everything else is 0. (The ReLU region's own delta,
        // which the twin keeps for the page, is not needed here.)
        let conv_len = a.relu - a.conv;
        deltas[a.conv..a.conv + conv_len].fill(0.0);
        let pool_len = batch * c_out * s.pool_side * s.pool_side;
        for e in 0..pool_len {
            let at = bufs.ws.argmax[a.argmax + e] as usize;
            if acts[a.conv + at] > 0.0 {
                deltas[a.conv + at] = deltas[a.pool + e];
            }
        }
        // Filter gradient: dW (C_out × C_in·K²) = Σ_n dZ_n · col_nᵀ, one accumulating multiply
        // per sample; the bias gradient is the sum of dZ over samples and pixels.
        let col = &bufs.cols[b];
        for n in 0..batch {
            gemm(
                kind,
                &mut bufs.scratch,
                c_out,
                npix,
                ckk,
                View {
                    data: &deltas[a.conv + n * c_out * npix..],
                    rs: npix,
                    cs: 1,
                },
                View {
                    data: &col[n * ckk * npix..],
                    rs: 1,
                    cs: npix,
                },
                &mut grads[o.w..o.b],
                n > 0,
            );
        }
        let dbias = &mut grads[o.b..o.b + c_out];
        dbias.fill(0.0);
        for (i, dz) in deltas[a.conv..a.conv + conv_len]
            .chunks_exact(npix)
            .enumerate()
        {
            dbias[i % c_out] += dz.iter().sum::<f32>();
        }
        if b == 0 {
            break;
        }
        // Input gradient: dcol_n (C_in·K² × S'²) = Wᵀ · dZ_n, then col2im into the delta of
        // the previous block's pool output.
        let in_off = l.blocks[b - 1].pool;
        for n in 0..batch {
            gemm(
                kind,
                &mut bufs.scratch,
                ckk,
                c_out,
                npix,
                View {
                    data: &params[o.w..o.b],
                    rs: 1,
                    cs: ckk,
                },
                View {
                    data: &deltas[a.conv + n * c_out * npix..],
                    rs: npix,
                    cs: 1,
                },
                &mut bufs.dcol,
                false,
            );
            let d_in = &mut deltas[in_off + n * c_in * is * is..][..c_in * is * is];
            d_in.fill(0.0);
            for c in 0..c_in {
                for r in 0..k {
                    for t in 0..k {
                        let row = (c * k + r) * k + t;
                        for y in 0..cs {
                            let dst = &mut d_in[(c * is + y + r) * is + t..][..cs];
                            let src = &bufs.dcol[row * npix + y * cs..][..cs];
                            for (v, &g) in dst.iter_mut().zip(src) {
                                *v += g;
                            }
                        }
                    }
                }
            }
        }
    }
    loss
}

/// Trains like [`crate::CpuTrainer`] (same settings, data, batch order and formulas) with
/// im2col and matrix multiplies.
pub struct TunedTrainer {
    pub net: Net,
    pub hyper: Hyper,
    pub params: Vec<f32>,
    pub batch: usize,
    pub gemm: Gemm,
    /// Steps taken so far.
    pub step: u64,
    /// Mean loss of the last batch (before its update).
    pub last_loss: f32,
    layout: ParamLayout,
    grads: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    bufs: Buffers,
    train: Samples,
    order: BatchOrder,
    x: Vec<f32>,
    y: Vec<u32>,
    indices: Vec<u32>,
}

impl TunedTrainer {
    /// Same arguments as [`crate::CpuTrainer::new`], plus the multiply to use.
    pub fn new(
        net: Net,
        hyper: Hyper,
        params: Vec<f32>,
        batch: usize,
        train: Samples,
        order_seed: u64,
        gemm: Gemm,
    ) -> Self {
        let batch = batch.max(1);
        let n = params.len();
        Self {
            bufs: Buffers::new(&net, batch),
            layout: net.param_layout(),
            order: BatchOrder::new(train.len(), order_seed),
            net,
            hyper,
            params,
            batch,
            gemm,
            step: 0,
            last_loss: 0.0,
            grads: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            train,
            x: Vec::new(),
            y: Vec::new(),
            indices: Vec::new(),
        }
    }

    /// One step: forward, loss, backward and the update, on the twin's batch for this step.
    pub fn step(&mut self) {
        if self.train.is_empty() {
            return;
        }
        self.order.batch(self.step, self.batch, &mut self.indices);
        self.x.clear();
        self.y.clear();
        for &i in &self.indices {
            self.x.extend_from_slice(self.train.image(i as usize));
            self.y.push(self.train.y[i as usize]);
        }
        forward(
            &self.net,
            &self.layout,
            self.gemm,
            &self.params,
            &self.x,
            &mut self.bufs,
        );
        let loss = backward(
            &self.net,
            &self.layout,
            self.gemm,
            &self.params,
            &self.y,
            &mut self.bufs,
            &mut self.grads,
        );
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

    /// The logits of every image of `samples` (images × classes), forward passes in chunks of
    /// [`EVAL_CHUNK`]: what the page scores and lists mistakes from, as it does the GPU's.
    pub fn logits(&self, samples: &Samples) -> Vec<f32> {
        let px = self.net.side * self.net.side;
        let k = self.net.classes;
        let mut out = Vec::with_capacity(samples.len() * k);
        let mut bufs: Option<Buffers> = None;
        let mut start = 0;
        while start < samples.len() {
            let rows = EVAL_CHUNK.min(samples.len() - start);
            let fits = bufs.as_ref().is_some_and(|b| b.ws.layout.batch == rows);
            let bufs = match bufs.as_mut() {
                Some(b) if fits => b,
                _ => bufs.insert(Buffers::new(&self.net, rows)),
            };
            let x = &samples.x[start * px..(start + rows) * px];
            forward(&self.net, &self.layout, self.gemm, &self.params, x, bufs);
            let l = &bufs.ws.layout;
            out.extend_from_slice(&bufs.ws.acts[l.logits..l.logits + rows * k]);
            start += rows;
        }
        out
    }

    /// Mean loss, accuracy and predicted classes over `samples`, as [`crate::Net::evaluate`]
    /// reports them (forward passes in chunks of [`EVAL_CHUNK`], on this trainer's multiply).
    pub fn evaluate(&self, samples: &Samples) -> Evaluation {
        crate::net::evaluation(&self.logits(samples), &samples.y, self.net.classes)
    }

    /// The last step's gradients (the first block's input gradient is not computed).
    pub fn grads(&self) -> &[f32] {
        &self.grads
    }

    /// The last step's activations and argmax in the twin's layout (its deltas hold the conv
    /// outputs' and the pools' deltas but not the ReLU regions' or the input's, which the
    /// tuned step skips).
    pub fn workspace(&self) -> &Workspace {
        &self.bufs.ws
    }

    /// (momentum or Adam's first moment, Adam's second moment).
    pub fn optimiser_state(&self) -> (&[f32], &[f32]) {
        (&self.m, &self.v)
    }
}
