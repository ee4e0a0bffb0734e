//! The CPU twin's training loop: seeded batches of windows, the forward and backward in f32,
//! Adam from `cpu_kernels::optim` (the update every model shares), and evaluation and sampling.

use cpu_kernels::data::SplitMix64;
use cpu_kernels::optim;

use crate::data::{batch, BatchOrder};
use crate::model::Model;

/// The twin: parameters, Adam's moments and the batch order.
#[derive(Clone, Debug)]
pub struct Trainer {
    pub model: Model,
    pub params: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    order: BatchOrder,
    pub batch: usize,
    pub lr: f32,
    /// Steps done.
    pub step: u64,
}

impl Trainer {
    pub fn new(model: Model, train_docs: usize, batch: usize, lr: f32, seed: u64) -> Self {
        let params = model.init_params(seed);
        let n = params.len();
        Self {
            model,
            params,
            m: vec![0.0; n],
            v: vec![0.0; n],
            order: BatchOrder::new(train_docs, seed),
            batch: batch.max(1),
            lr,
            step: 0,
        }
    }

    /// One step on the next batch of `docs`; returns its loss.
    pub fn step(&mut self, docs: &[Vec<u32>]) -> f32 {
        let idx = self.order.next(self.batch);
        let ctx = self.model.cfg.context;
        let (tokens, targets) = batch(docs, &idx, ctx);
        let (loss, grads) = self
            .model
            .loss_and_grad(&self.params, &tokens, &targets, idx.len());
        self.step += 1;
        optim::adam_update(
            self.lr,
            self.step,
            &mut self.params,
            &grads,
            &mut self.m,
            &mut self.v,
        );
        loss
    }

    /// Adam's moments (m, v), in the parameters' layout.
    pub fn moments(&self) -> (&[f32], &[f32]) {
        (&self.m, &self.v)
    }

    /// Mean loss per counted character over every window of `docs`, in chunks of `chunk`.
    pub fn eval(&self, docs: &[Vec<u32>], chunk: usize) -> f64 {
        let ctx = self.model.cfg.context;
        let (mut total, mut n) = (0.0f64, 0usize);
        let idx: Vec<usize> = (0..docs.len()).collect();
        for part in idx.chunks(chunk.max(1)) {
            let (tokens, targets) = batch(docs, part, ctx);
            let f = self
                .model
                .forward(&self.params, &tokens, &targets, part.len());
            total += f.loss as f64 * f.counted as f64;
            n += f.counted;
        }
        total / n.max(1) as f64
    }

    /// One document sampled at `temperature` (> 0), up to the context: the model's tokens
    /// until it emits the boundary.
    pub fn sample(&self, temperature: f32, rng: &mut SplitMix64) -> Vec<u32> {
        let ctx = self.model.cfg.context;
        let v = self.model.cfg.vocab;
        let mut out = Vec::new();
        while out.len() + 1 < ctx {
            let mut tokens = vec![0u32];
            tokens.extend(&out);
            let t = tokens.len();
            let targets = vec![crate::ops::IGNORE; t];
            let f = self.model.forward(&self.params, &tokens, &targets, 1);
            // The last row's probabilities, re-tempered: p^(1/T), renormalised.
            let row = &f.probs[(t - 1) * v..t * v];
            let w: Vec<f64> = row
                .iter()
                .map(|&p| (p.max(1e-30) as f64).powf(1.0 / temperature.max(1e-3) as f64))
                .collect();
            let total: f64 = w.iter().sum();
            let mut r = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
            let mut next = v as u32 - 1;
            for (i, &wi) in w.iter().enumerate() {
                if r < wi {
                    next = i as u32;
                    break;
                }
                r -= wi;
            }
            if next == 0 {
                break;
            }
            out.push(next);
        }
        out
    }
}
