//! The `vram` lesson's VRAM budget: how many bytes a model needs for weights, gradients, optimiser
//! states and activations, for inference or training.
//!
//! Conventions (all stated in the lesson):
//! - sizes are bytes; the UI shows GB (10⁹ bytes) and GiB (2³⁰ bytes) side by side;
//! - mixed precision: when training 16-bit weights, the trainable parameters also get an FP32
//!   master copy, their gradients are 16-bit and optimiser states FP32 (as in the ZeRO paper:
//!   2 + 2 + 12 = 16 bytes per parameter with Adam);
//! - FP32 training keeps FP32 gradients and states and no master copy;
//! - 8- and 4-bit weights are only trained through LoRA adapters (QLoRA style): the frozen base
//!   stays quantised, the adapters train in 16-bit mixed precision;
//! - transformer activations per layer follow Korthikanti et al., "Reducing Activation
//!   Recomputation in Large Transformer Models" (2022): `s·b·h·(34 + 5·a·s/h)` bytes with 16-bit
//!   activations, no tensor or sequence parallelism, no dropout-mask savings. With full
//!   checkpointing each layer keeps only its 16-bit input (`2·s·b·h`), and one layer's full set is
//!   live while it is recomputed. FP32 activations double both. This is a simplification: it
//!   ignores the embedding, the final logits and framework workspace;
//! - inference keeps no activations for a backward pass; transformers keep a KV cache of
//!   `2 · layers · batch · seq · hidden` values in 16-bit.

/// Storage type of the model's weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Fp32,
    Bf16,
    Fp16,
    Int8,
    Int4,
}

impl Dtype {
    pub const ALL: [Dtype; 5] = [
        Dtype::Fp32,
        Dtype::Bf16,
        Dtype::Fp16,
        Dtype::Int8,
        Dtype::Int4,
    ];

    /// Bytes per stored weight.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Fp32 => 4.0,
            Dtype::Bf16 | Dtype::Fp16 => 2.0,
            Dtype::Int8 => 1.0,
            Dtype::Int4 => 0.5,
        }
    }

    /// URL code and display name.
    pub fn code(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Int8 => "int8",
            Dtype::Int4 => "int4",
        }
    }

    pub fn from_code(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.code() == s)
    }

    fn quantised(self) -> bool {
        matches!(self, Dtype::Int8 | Dtype::Int4)
    }
}

/// The optimisers are the train view's (`mlp::Optimiser`): the same three, the same URL codes.
pub use mlp::Optimiser;

/// FP32 state bytes per trainable parameter: SGD none, momentum one velocity, Adam / AdamW two
/// moments.
pub fn state_bytes(o: Optimiser) -> f64 {
    match o {
        Optimiser::Sgd => 0.0,
        Optimiser::Momentum => 4.0,
        Optimiser::Adam => 8.0,
    }
}

/// How activations are estimated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Activations {
    /// A transformer: batch, sequence length, layers, hidden size, attention heads.
    Transformer {
        batch: f64,
        seq: f64,
        layers: f64,
        hidden: f64,
        heads: f64,
    },
    /// Any other network: a batch and the bytes one sample keeps for the backward pass (at
    /// 16-bit). Gradient checkpointing is not modelled for this kind.
    PerSample { batch: f64, bytes_per_sample: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Number of parameters.
    pub params: f64,
    pub dtype: Dtype,
    pub training: bool,
    pub optimiser: Optimiser,
    /// LoRA: the fraction of parameters that train (adapters), e.g. 0.01. None = full training.
    pub lora: Option<f64>,
    pub checkpointing: bool,
    pub activations: Activations,
}

/// Bytes by component. Components that do not apply are zero.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Breakdown {
    pub weights: f64,
    /// LoRA adapter weights (16-bit, or FP32 when the base is FP32).
    pub adapters: f64,
    pub master: f64,
    pub gradients: f64,
    pub optimiser: f64,
    pub activations: f64,
    pub kv_cache: f64,
}

impl Breakdown {
    pub fn total(&self) -> f64 {
        self.weights
            + self.adapters
            + self.master
            + self.gradients
            + self.optimiser
            + self.activations
            + self.kv_cache
    }

    /// (name, bytes) in display order.
    pub fn parts(&self) -> [(&'static str, f64); 7] {
        [
            ("weights", self.weights),
            ("adapters", self.adapters),
            ("master", self.master),
            ("gradients", self.gradients),
            ("optimiser", self.optimiser),
            ("activations", self.activations),
            ("kv_cache", self.kv_cache),
        ]
    }
}

/// Why a budget cannot be computed. The UI names the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetError {
    /// A count or size is not a finite number above zero, or is beyond the plausible range.
    OutOfRange(&'static str),
    /// The LoRA fraction must be in (0, 1].
    LoraFraction,
    /// Full training of 8/4-bit weights: use LoRA or a float type.
    QuantisedFullTraining,
    /// More heads than the hidden size, or a hidden size not divisible by the heads.
    Heads,
}

/// Largest accepted parameter count (10 trillion) and size of any other dimension.
pub const MAX_PARAMS: f64 = 1e13;
pub const MAX_DIM: f64 = 1e7;

fn check(name: &'static str, v: f64, max: f64) -> Result<(), BudgetError> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(())
    } else {
        Err(BudgetError::OutOfRange(name))
    }
}

/// The budget, or why it cannot be computed. Never returns a non-finite number.
pub fn estimate(b: &Budget) -> Result<Breakdown, BudgetError> {
    check("params", b.params, MAX_PARAMS)?;
    match b.activations {
        Activations::Transformer {
            batch,
            seq,
            layers,
            hidden,
            heads,
        } => {
            check("batch", batch, MAX_DIM)?;
            check("seq", seq, MAX_DIM)?;
            check("layers", layers, 1e4)?;
            check("hidden", hidden, MAX_DIM)?;
            check("heads", heads, MAX_DIM)?;
            if heads > hidden || hidden % heads != 0.0 {
                return Err(BudgetError::Heads);
            }
        }
        Activations::PerSample {
            batch,
            bytes_per_sample,
        } => {
            check("batch", batch, MAX_DIM)?;
            check("bytes_per_sample", bytes_per_sample, 1e12)?;
        }
    }
    if let Some(f) = b.lora {
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            return Err(BudgetError::LoraFraction);
        }
    }
    if b.training && b.dtype.quantised() && b.lora.is_none() {
        return Err(BudgetError::QuantisedFullTraining);
    }

    let p = b.params;
    let mut out = Breakdown {
        weights: p * b.dtype.bytes(),
        ..Breakdown::default()
    };
    // Activations are FP32 only when the whole model is FP32.
    let act_scale = if b.dtype == Dtype::Fp32 { 2.0 } else { 1.0 };

    if !b.training {
        if let Activations::Transformer {
            batch,
            seq,
            layers,
            hidden,
            ..
        } = b.activations
        {
            out.kv_cache = 2.0 * layers * batch * seq * hidden * 2.0;
        }
        return Ok(out);
    }

    let fp32 = b.dtype == Dtype::Fp32;
    // Bytes per trainable parameter of each kind.
    let (grad, master) = if fp32 { (4.0, 0.0) } else { (2.0, 4.0) };
    let trainable = match b.lora {
        Some(f) => {
            let t = f * p;
            out.adapters = t * if fp32 { 4.0 } else { 2.0 };
            t
        }
        None => p,
    };
    out.master = trainable * master;
    out.gradients = trainable * grad;
    out.optimiser = trainable * state_bytes(b.optimiser);
    out.activations = act_scale
        * match b.activations {
            Activations::Transformer {
                batch,
                seq,
                layers,
                hidden,
                heads,
            } => {
                let per_layer = seq * batch * hidden * (34.0 + 5.0 * heads * seq / hidden);
                if b.checkpointing {
                    layers * 2.0 * seq * batch * hidden + per_layer
                } else {
                    layers * per_layer
                }
            }
            Activations::PerSample {
                batch,
                bytes_per_sample,
            } => batch * bytes_per_sample,
        };
    Ok(out)
}

/// A model preset for the calculator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    pub id: &'static str,
    /// Shown as is (a model name).
    pub name: &'static str,
    pub params: f64,
    pub activations: Activations,
}

/// GPT-3 175B: 96 layers, d_model 12288, 96 heads, context 2048 (Brown et al. 2020, Table 2.1).
/// LLaMA 7B: 6.7B parameters, 32 layers, 4096 hidden, 32 heads, context 2048 (Touvron et al.
/// 2023, Table 2). ResNet-50: 25.6M parameters (He et al. 2016); about 27 million stored
/// values per 224×224 image is our own count of the conv, batch-norm and ReLU outputs, so
/// about 54 MB per sample at 2 bytes.
pub const PRESETS: [Preset; 3] = [
    Preset {
        id: "gpt3",
        name: "GPT-3 175B",
        params: 175e9,
        activations: Activations::Transformer {
            batch: 1.0,
            seq: 2048.0,
            layers: 96.0,
            hidden: 12288.0,
            heads: 96.0,
        },
    },
    Preset {
        id: "llama7b",
        name: "LLaMA 7B",
        params: 6.7e9,
        activations: Activations::Transformer {
            batch: 1.0,
            seq: 2048.0,
            layers: 32.0,
            hidden: 4096.0,
            heads: 32.0,
        },
    },
    Preset {
        id: "resnet50",
        name: "ResNet-50",
        params: 25.6e6,
        activations: Activations::PerSample {
            batch: 32.0,
            bytes_per_sample: 54e6,
        },
    },
];

pub fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// How many GPUs of `capacity` bytes would hold `total` bytes if it were split evenly (the
/// ideal of ZeRO-3/FSDP-style sharding; real splits need some headroom). At least 1.
pub fn gpus_needed(total: f64, capacity: f64) -> Option<u64> {
    if !(total.is_finite() && capacity.is_finite() && total >= 0.0 && capacity > 0.0) {
        return None;
    }
    Some(((total / capacity).ceil() as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tf(params: f64, dtype: Dtype, training: bool) -> Budget {
        Budget {
            params,
            dtype,
            training,
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
        }
    }

    #[test]
    fn seven_billion_adam_mixed_precision_is_112_gb_before_activations() {
        // 7e9 × (2 weights + 2 grads + 4 master + 4 + 4 Adam) = 7e9 × 16 = 112e9 bytes.
        let b = estimate(&tf(7e9, Dtype::Fp16, true)).unwrap();
        assert_eq!(b.weights, 14e9);
        assert_eq!(b.gradients, 14e9);
        assert_eq!(b.master, 28e9);
        assert_eq!(b.optimiser, 56e9);
        assert_eq!(b.total() - b.activations, 112e9);
        // 112e9 bytes = 104.3 GiB.
        assert!(((b.total() - b.activations) / (1u64 << 30) as f64 - 104.31).abs() < 0.01);
    }

    #[test]
    fn llama_activations_follow_the_formula() {
        // s=2048, b=1, h=4096, a=32: per layer 2048·4096·(34 + 5·32·2048/4096) = 8,388,608·114
        // = 956,301,312 bytes; × 32 layers = 30,601,641,984.
        let b = estimate(&tf(7e9, Dtype::Bf16, true)).unwrap();
        assert_eq!(b.activations, 30_601_641_984.0);
        // Checkpointing: 32 · 2 · 2048 · 4096 + one layer = 536,870,912 + 956,301,312.
        let mut c = tf(7e9, Dtype::Bf16, true);
        c.checkpointing = true;
        assert_eq!(estimate(&c).unwrap().activations, 1_493_172_224.0);
        // FP32 doubles activations; no master copy; 4-byte gradients.
        let f = estimate(&tf(7e9, Dtype::Fp32, true)).unwrap();
        assert_eq!(f.activations, 2.0 * 30_601_641_984.0);
        assert_eq!(f.master, 0.0);
        assert_eq!(f.gradients, 28e9);
        assert_eq!(f.total() - f.activations, 7e9 * 16.0);
    }

    #[test]
    fn inference_counts_weights_and_kv_cache() {
        // GPT-3 in FP16: 350 GB of weights (FC-53). KV cache for one 2048-token sequence:
        // 2 · 96 · 1 · 2048 · 12288 · 2 bytes = 9,663,676,416.
        let mut g = tf(175e9, Dtype::Fp16, false);
        g.activations = PRESETS[0].activations;
        let b = estimate(&g).unwrap();
        assert_eq!(b.weights, 350e9);
        assert_eq!(b.kv_cache, 9_663_676_416.0);
        assert_eq!(b.gradients + b.optimiser + b.master + b.activations, 0.0);
        // 4-bit: 87.5 GB of weights.
        g.dtype = Dtype::Int4;
        assert_eq!(estimate(&g).unwrap().weights, 87.5e9);
    }

    #[test]
    fn lora_and_optimisers() {
        // QLoRA-style: 7e9 int4 base (3.5e9 B) + 1 % adapters = 7e7 params ×(2+2+4+8) = 1.12e9.
        let mut q = tf(7e9, Dtype::Int4, true);
        q.lora = Some(0.01);
        let b = estimate(&q).unwrap();
        assert_eq!(b.weights, 3.5e9);
        assert_eq!(b.adapters + b.gradients + b.master + b.optimiser, 1.12e9);
        // SGD: no state; momentum: 4 bytes each.
        let mut s = tf(1e9, Dtype::Bf16, true);
        s.optimiser = Optimiser::Sgd;
        assert_eq!(estimate(&s).unwrap().optimiser, 0.0);
        s.optimiser = Optimiser::Momentum;
        assert_eq!(estimate(&s).unwrap().optimiser, 4e9);
        // ResNet-50, batch 32 at 54 MB per sample: 1.728e9 bytes of activations.
        let mut r = tf(25.6e6, Dtype::Bf16, true);
        r.activations = PRESETS[2].activations;
        assert_eq!(estimate(&r).unwrap().activations, 1.728e9);
    }

    #[test]
    fn bad_input_is_an_error_never_nan() {
        let mut b = tf(-1.0, Dtype::Fp16, true);
        assert_eq!(estimate(&b), Err(BudgetError::OutOfRange("params")));
        b.params = f64::NAN;
        assert_eq!(estimate(&b), Err(BudgetError::OutOfRange("params")));
        b.params = 1e20;
        assert_eq!(estimate(&b), Err(BudgetError::OutOfRange("params")));
        b.params = 7e9;
        b.lora = Some(1.5);
        assert_eq!(estimate(&b), Err(BudgetError::LoraFraction));
        b.lora = Some(0.0);
        assert_eq!(estimate(&b), Err(BudgetError::LoraFraction));
        b.lora = None;
        b.dtype = Dtype::Int8;
        assert_eq!(estimate(&b), Err(BudgetError::QuantisedFullTraining));
        b.dtype = Dtype::Fp16;
        b.activations = Activations::Transformer {
            batch: 1.0,
            seq: 1.0,
            layers: 1.0,
            hidden: 100.0,
            heads: 3.0,
        };
        assert_eq!(estimate(&b), Err(BudgetError::Heads));
        b.activations = Activations::PerSample {
            batch: 0.0,
            bytes_per_sample: 1.0,
        };
        assert_eq!(estimate(&b), Err(BudgetError::OutOfRange("batch")));
        // The largest accepted inputs stay finite.
        let huge = Budget {
            params: MAX_PARAMS,
            activations: Activations::Transformer {
                batch: MAX_DIM,
                seq: MAX_DIM,
                layers: 1e4,
                hidden: MAX_DIM,
                heads: 1.0,
            },
            ..tf(1.0, Dtype::Fp32, true)
        };
        assert!(estimate(&huge).unwrap().total().is_finite());
    }

    #[test]
    fn gpus_needed_rounds_up() {
        assert_eq!(gpus_needed(112e9, 80e9), Some(2));
        assert_eq!(gpus_needed(80e9, 80e9), Some(1));
        assert_eq!(gpus_needed(0.0, 80e9), Some(1));
        assert_eq!(gpus_needed(1.0, 0.0), None);
        assert_eq!(gpus_needed(f64::NAN, 1.0), None);
    }
}
