//! The `grad-accum` lesson's arithmetic: gradient accumulation splits an effective batch `B` into `k`
//! micro-batches of `b` (`B = k · b`). Each micro-batch's loss gradient is divided by `B`, not
//! `b`, and the `k` gradients are added before one optimiser step, so the step sees the mean
//! over all `B` samples: the mean of the `k` micro-batch means. Activations are kept for one
//! micro-batch at a time, so they cost what batch `b` costs; weights, gradients and optimiser
//! states do not shrink. The price is time: `k` forward and backward passes per update.

use crate::vram::{self, Activations, Breakdown, Budget, BudgetError};

/// Why an accumulation plan is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccumError {
    /// Effective batch: a whole number from 1 to 10⁶.
    Effective,
    /// Micro-batch: a whole number from 1 to the effective batch.
    Micro,
    /// The micro-batch does not divide the effective batch.
    NotADivisor,
}

/// `k` micro-batches of `micro` samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccumPlan {
    pub effective: u64,
    pub micro: u64,
    pub steps: u64,
}

pub fn plan(effective: u64, micro: u64) -> Result<AccumPlan, AccumError> {
    if !(1..=1_000_000).contains(&effective) {
        return Err(AccumError::Effective);
    }
    if !(1..=effective).contains(&micro) {
        return Err(AccumError::Micro);
    }
    if !effective.is_multiple_of(micro) {
        return Err(AccumError::NotADivisor);
    }
    Ok(AccumPlan {
        effective,
        micro,
        steps: effective / micro,
    })
}

/// The same training job's memory at the whole effective batch and at one micro-batch
/// (`budget`'s own batch is replaced by each).
pub fn memory(budget: &Budget, p: &AccumPlan) -> Result<(Breakdown, Breakdown), BudgetError> {
    let with_batch = |batch: f64| {
        let activations = match budget.activations {
            Activations::Transformer {
                seq,
                layers,
                hidden,
                heads,
                ..
            } => Activations::Transformer {
                batch,
                seq,
                layers,
                hidden,
                heads,
            },
            Activations::PerSample {
                bytes_per_sample, ..
            } => Activations::PerSample {
                batch,
                bytes_per_sample,
            },
        };
        vram::estimate(&Budget {
            activations,
            ..*budget
        })
    };
    Ok((with_batch(p.effective as f64)?, with_batch(p.micro as f64)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vram::{Dtype, Optimiser};

    /// The `vram` lesson's LLaMA-7B case: 7e9 parameters, FP16 + Adam (16 bytes each: 112 GB), and per
    /// sample 32 layers × 2048 · 4096 · (34 + 5 · 32 · 2048 / 4096) = 30,601,641,984 bytes of
    /// activations. An effective batch of 8 as 8 micro-batches of 1: 112e9 + 8 × 30.6e9 =
    /// 356,813,135,872 bytes at once, against 142,601,641,984 with accumulation.
    #[test]
    fn llama_7b_by_hand() {
        let b = Budget {
            params: 7e9,
            dtype: Dtype::Fp16,
            training: true,
            optimiser: Optimiser::Adam,
            lora: None,
            checkpointing: false,
            activations: Activations::Transformer {
                batch: 1.0,
                seq: 2048.0,
                layers: 32.0,
                hidden: 4096.0,
                heads: 32.0,
            },
        };
        let p = plan(8, 1).unwrap();
        assert_eq!(p.steps, 8);
        let (whole, micro) = memory(&b, &p).unwrap();
        assert_eq!(micro.total(), 142_601_641_984.0);
        assert_eq!(whole.total(), 112e9 + 8.0 * 30_601_641_984.0);
        assert_eq!(whole.total(), 356_813_135_872.0);
        // Model states are the same both ways.
        assert_eq!(whole.optimiser, micro.optimiser);
        assert_eq!(whole.weights, micro.weights);
    }

    #[test]
    fn bad_plans_are_named() {
        assert_eq!(plan(0, 1), Err(AccumError::Effective));
        assert_eq!(plan(2_000_000, 1), Err(AccumError::Effective));
        assert_eq!(plan(8, 0), Err(AccumError::Micro));
        assert_eq!(plan(8, 16), Err(AccumError::Micro));
        assert_eq!(plan(8, 3), Err(AccumError::NotADivisor));
        assert_eq!(plan(8, 8).map(|p| p.steps), Ok(1));
    }
}
