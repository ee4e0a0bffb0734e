//! The tuned CPU trainer: the same network, loss, optimiser and batch order as the CPU twin
//! ([`crate::net::CpuTrainer`]), computed as a fast single core would compute it — every
//! layer's forward and backward pass as one batched matrix multiply:
//!
//! - forward: Z_l (rows × fan_out) = A_{l−1} (rows × fan_in) · W_lᵀ, then + b and the activation;
//! - weight gradients: dW_l (fan_out × fan_in) += D_lᵀ · A_{l−1}, bias gradients the column sums of D_l;
//! - deltas: D_{l−1} = (D_l · W_l) ⊙ f′(A_{l−1}).
//!
//! The multiplies ([`cpu_kernels::gemm`], shared with the CNN's tuned trainer) run on
//! `Gemm::MatrixMultiply` (the `matrixmultiply` crate's sgemm, natively) or [`Gemm::Simd`] (the
//! race's packed SIMD128 micro-kernel, `cpu_kernels::matmul_variants`; what the browser runs). The loss gradient and the optimiser are the twin's own functions
//! ([`loss_delta`], [`apply_update`]); only the order of the sums differs, so results agree with
//! the twin within rounding, not bit for bit (the tests derive the bound).

use cpu_kernels::gemm::{gemm, Scratch, View};
// Re-exported: the trainer's callers pick the multiply (`mlp::Gemm`).
pub use cpu_kernels::gemm::Gemm;

use crate::net::{apply_update, gather_batch, loss_delta, Hyper, Layout, Net};

/// Multiply-adds of one training step × 2: forward (every layer), weight gradients (every
/// layer) and deltas (every layer but the first), 2·fan_in·fan_out FLOP per sample each.
/// Element-wise work (bias, activation, loss, optimiser) is left out.
pub fn flops_per_step(net: &Net, batch: usize) -> f64 {
    let mut f = 0.0;
    for (i, w) in net.sizes.windows(2).enumerate() {
        let mults = (w[0] * w[1]) as f64;
        f += if i == 0 { 2.0 } else { 3.0 } * 2.0 * mults * batch as f64;
    }
    f
}

/// Trains like [`crate::CpuTrainer`] (same settings, data, order and formulas) with batched
/// matrix multiplies.
pub struct TunedTrainer {
    pub net: Net,
    pub hyper: Hyper,
    pub params: Vec<f32>,
    pub batch: usize,
    /// Micro-batches per step (gradient accumulation), as the twin's `accum`.
    pub accum: usize,
    pub gemm: Gemm,
    /// Steps taken so far.
    pub step: u64,
    /// Mean loss of the last batch.
    pub last_batch_loss: f32,
    /// Adam's ε, as the twin's.
    pub epsilon: f32,
    /// The bias column's input (1): a field so a test can give this trainer a wrong bias rule
    /// and see the comparison with the twin fail.
    pub bias_input: f32,
    layout: Layout,
    grads: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    /// Activations per layer (index 0: the batch's inputs), rows × width each.
    acts: Vec<Vec<f32>>,
    /// dLoss/dz per layer, same shapes (index 0 unused).
    deltas: Vec<Vec<f32>>,
    features: Vec<f32>,
    labels: Vec<u32>,
    order: Vec<u32>,
    y: Vec<u32>,
    scratch: Scratch,
}

impl TunedTrainer {
    /// Same arguments as [`crate::CpuTrainer::new`], plus the multiply to use.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        net: Net,
        hyper: Hyper,
        params: Vec<f32>,
        batch: usize,
        features: Vec<f32>,
        labels: Vec<u32>,
        order: Vec<u32>,
        gemm: Gemm,
    ) -> Self {
        let layout = net.layout();
        let n = layout.param_count;
        let acts: Vec<Vec<f32>> = net.sizes.iter().map(|&w| vec![0.0; batch * w]).collect();
        Self {
            deltas: acts.clone(),
            acts,
            net,
            hyper,
            params,
            batch,
            accum: 1,
            gemm,
            step: 0,
            last_batch_loss: 0.0,
            epsilon: crate::net::EPSILON,
            bias_input: 1.0,
            layout,
            grads: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            features,
            labels,
            order,
            y: Vec::new(),
            scratch: Scratch::new(),
        }
    }

    /// One training step: forward, loss and backward over `accum` micro-batches, one update.
    pub fn step(&mut self) {
        let k = self.accum.max(1);
        self.grads.fill(0.0);
        let mut loss_sum = 0.0f32;
        for j in 0..k {
            loss_sum += self.micro_batch(self.step * k as u64 + j as u64, k);
        }
        self.last_batch_loss = loss_sum / (k * self.batch) as f32;
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

    fn micro_batch(&mut self, index: u64, k: usize) -> f32 {
        let rows = self.batch;
        let depth = self.net.depth();
        let mut x = std::mem::take(&mut self.acts[0]);
        gather_batch(
            &self.features,
            &self.labels,
            self.net.inputs(),
            &self.order,
            index,
            rows,
            &mut x,
            &mut self.y,
        );
        self.acts[0] = x;

        // Forward: Z = A·Wᵀ, then bias and activation.
        for l in 1..=depth {
            let lo = self.layout.layers[l - 1];
            let (before, after) = self.acts.split_at_mut(l);
            let (a, z) = (&before[l - 1], &mut after[0]);
            gemm(
                self.gemm,
                &mut self.scratch,
                rows,
                lo.fan_in,
                lo.fan_out,
                View {
                    data: a,
                    rs: lo.fan_in,
                    cs: 1,
                },
                View {
                    data: &self.params[lo.w_off..lo.b_off],
                    rs: 1,
                    cs: lo.fan_in,
                },
                z,
                false,
            );
            let act = self.net.activation_of(l);
            let bias = &self.params[lo.b_off..lo.b_off + lo.fan_out];
            for row in z.chunks_exact_mut(lo.fan_out) {
                for (v, &b) in row.iter_mut().zip(bias) {
                    *v = act.apply(*v + b);
                }
            }
        }

        // Loss gradient on the logits: the twin's function.
        let classes = self.net.classes();
        let inv_b = 1.0 / (k * rows) as f32;
        let mut loss_sum = 0.0f32;
        for ((z, d), &y) in self.acts[depth]
            .chunks_exact(classes)
            .zip(self.deltas[depth].chunks_exact_mut(classes))
            .zip(&self.y)
        {
            loss_sum += loss_delta(self.net.loss, z, y, inv_b, d);
        }

        // Backward, last layer first.
        for l in (1..=depth).rev() {
            let lo = self.layout.layers[l - 1];
            let (d_before, d_after) = self.deltas.split_at_mut(l);
            let d = &d_after[0];
            let a = &self.acts[l - 1];
            // dW += Dᵀ·A (D read transposed through its strides).
            gemm(
                self.gemm,
                &mut self.scratch,
                lo.fan_out,
                rows,
                lo.fan_in,
                View {
                    data: d,
                    rs: 1,
                    cs: lo.fan_out,
                },
                View {
                    data: a,
                    rs: lo.fan_in,
                    cs: 1,
                },
                &mut self.grads[lo.w_off..lo.b_off],
                true,
            );
            // db += column sums of D (times the bias column's input).
            let db = &mut self.grads[lo.b_off..lo.b_off + lo.fan_out];
            for row in d.chunks_exact(lo.fan_out) {
                for (g, &dn) in db.iter_mut().zip(row) {
                    *g += dn * self.bias_input;
                }
            }
            if l > 1 {
                let prev = &mut d_before[l - 1];
                gemm(
                    self.gemm,
                    &mut self.scratch,
                    rows,
                    lo.fan_out,
                    lo.fan_in,
                    View {
                        data: d,
                        rs: lo.fan_out,
                        cs: 1,
                    },
                    View {
                        data: &self.params[lo.w_off..lo.b_off],
                        rs: lo.fan_in,
                        cs: 1,
                    },
                    prev,
                    false,
                );
                let act = self.net.activation_of(l - 1);
                for (s, &a) in prev.iter_mut().zip(a.iter()) {
                    *s *= act.derivative_from_output(a);
                }
            }
        }
        loss_sum
    }

    /// The gradients of the last step.
    pub fn grads(&self) -> &[f32] {
        &self.grads
    }

    /// Starts from another trainer's point: its parameters, optimiser state and step count
    /// (the tests run this trainer and the twin in lock step).
    pub fn set_state(&mut self, params: &[f32], m: &[f32], v: &[f32], step: u64) {
        self.params.copy_from_slice(params);
        self.m.copy_from_slice(m);
        self.v.copy_from_slice(v);
        self.step = step;
    }
}

#[cfg(test)]
mod tests;
