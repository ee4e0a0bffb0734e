//! Inside the tiny GPT of `#/gpt`: two views of the model the page trains.
//!
//! - **Attention maps** ([`prompt_tokens`], [`level`]): the learner's prompt turned into the
//!   model's tokens (the boundary first), or a note saying what is wrong with it; each
//!   probability as one of [`LEVELS`] shades (the site's strict CSP allows no inline colours,
//!   so a shade is a class).
//! - **The seed's claim, measured** ([`Flops`], [`class_of`], [`Claim`]): "attention is at
//!   heart huge matrix multiplications". FLOPs of one training step counted from the model's
//!   shape, by class of kernel — the matmuls of the linear layers (QKV and output
//!   projections, the MLP, the head), attention (scores, softmax, P·V, and their backward),
//!   and everything else (embedding, LayerNorm, GELU, residual adds, the loss, Adam) — beside
//!   the GPU time of the same classes, each timed alone: the step program's dispatches of one
//!   class, run with the queue drained before and after.
//!
//! Counting rule: every add, multiply, exp, tanh, square root or division is one FLOP. The
//! matmul and attention counts follow the kernels exactly (the naive attention kernels compute
//! every score of the T × T square, masked ones included); the element-wise ones follow each
//! formula as written in `gpt::ops` and are small either way.

use gpu_runtime::gpt::data::Vocab;
use gpu_runtime::gpt::{Config, ParamLayout};

pub use crate::timing::Spread;

/// Shades of a probability.
pub const LEVELS: u8 = 10;

/// The mark shown for the boundary position the model reads before the first character.
pub const START_MARK: &str = "▸";

/// What is wrong with a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptError {
    Empty,
    /// More characters than the context holds after the boundary.
    TooLong {
        chars: usize,
        max: usize,
    },
    /// A character the model has never seen (its first).
    Outside(char),
}

impl PromptError {
    /// The message's translation key and its arguments.
    pub fn message(&self) -> (&'static str, Vec<(&'static str, String)>) {
        match self {
            PromptError::Empty => ("gpt.attn.empty", vec![]),
            PromptError::TooLong { chars, max } => (
                "gpt.attn.too_long",
                vec![("chars", chars.to_string()), ("max", max.to_string())],
            ),
            PromptError::Outside(c) => ("gpt.attn.outside", vec![("char", c.to_string())]),
        }
    }
}

/// The tokens of `text` for a model of `context` positions: the boundary 0, then each
/// character's.
pub fn prompt_tokens(text: &str, vocab: &Vocab, context: usize) -> Result<Vec<u32>, PromptError> {
    let chars = text.chars().count();
    if chars == 0 {
        return Err(PromptError::Empty);
    }
    let max = context.saturating_sub(1);
    if chars > max {
        return Err(PromptError::TooLong { chars, max });
    }
    let tokens = vocab.encode(text).map_err(PromptError::Outside)?;
    Ok(std::iter::once(0).chain(tokens).collect())
}

/// The labels of the positions: the start mark, then each character of `text`.
pub fn labels(text: &str) -> Vec<String> {
    std::iter::once(START_MARK.to_string())
        .chain(text.chars().map(String::from))
        .collect()
}

/// The shade of probability `p`: 0 (nothing) to `LEVELS - 1` (all of it); any trace above
/// zero gets at least shade 1, so a small weight is still seen.
pub fn level(p: f32) -> u8 {
    if p.is_nan() || p <= 0.0 {
        return 0;
    }
    let top = f32::from(LEVELS - 1);
    ((p.min(1.0) * top).round() as u8).clamp(1, LEVELS - 1)
}

/// A class of the training step's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Matmul,
    Attention,
    Other,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Matmul, Class::Attention, Class::Other];

    pub fn code(self) -> &'static str {
        match self {
            Class::Matmul => "matmul",
            Class::Attention => "attention",
            Class::Other => "other",
        }
    }

    /// The translation key of its name.
    pub fn key(self) -> &'static str {
        match self {
            Class::Matmul => "gpt.claim.class.matmul",
            Class::Attention => "gpt.claim.class.attention",
            Class::Other => "gpt.claim.class.other",
        }
    }
}

/// The class of a training step's kernel (an engine kernel id, or `"clear"` for the zeroing
/// of gradients and deltas): the tiled GEMMs of the linear layers, the attention kernels, or
/// the rest.
pub fn class_of(kernel_id: &str) -> Class {
    if kernel_id.starts_with("mlp-") {
        Class::Matmul
    } else if kernel_id.starts_with("attention-") {
        Class::Attention
    } else {
        Class::Other
    }
}

/// FLOPs of one training step of `batch` windows, by class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flops {
    pub matmul: u64,
    pub attention: u64,
    pub other: u64,
}

impl Flops {
    /// Counted from the shape (see the module documentation for the rule).
    pub fn of(cfg: &Config, batch: usize) -> Self {
        let (l, c, t, h, v) = (
            cfg.layers as u64,
            cfg.width as u64,
            cfg.context as u64,
            cfg.heads as u64,
            cfg.vocab as u64,
        );
        let w = batch as u64;
        let r = w * t;
        // A linear layer k → m over r rows: forward 2rkm + rm (bias), input gradient 2rkm,
        // weight gradient 2rkm, bias gradient rm.
        let linear = |k: u64, m: u64| 6 * r * k * m + 2 * r * m;
        let matmul = l * (linear(c, 3 * c) + linear(c, c) + linear(c, 4 * c) + linear(4 * c, c))
            + linear(c, v);
        // Per problem (window × head, head width d = c / h) of t × t scores: the scores
        // 2t²d + t² (the scale), the softmax 5t² (max, subtract, exp, sum, divide), P·V 2t²d;
        // backward dP 2t²d, dS = P ⊙ (dP − Σ dP ⊙ P) 4t², dQ 2t²d (+ t², the scale), dK and
        // dV 2t²d each.
        let d = c / h.max(1);
        let problem = 12 * t * t * d + 11 * t * t;
        let attention = l * w * h * problem;
        // Embedding: forward 1 add per element, backward 2 (token and position rows).
        let embed = 3 * r * c;
        // LayerNorm per row of c: forward 8c (mean c, variance 3c, normalise 2c, scale and
        // shift 2c); backward 14c (γ and β gradients 3c, the input gradient 11c).
        let norms = (2 * l + 1) * r * 22 * c;
        // GELU (tanh form) per element: forward 8, backward 16; over r × 4c per layer.
        let gelu = l * r * 4 * c * 24;
        // Residual adds: forward 1, backward 1 (added into the skip's delta); two per layer.
        let adds = l * 2 * r * c * 2;
        // Softmax cross-entropy per row: max v, subtract and exp 2v, sum v, log and pick 2,
        // gradient v (p − one-hot, and the scale): 5v + 2.
        let loss = r * (5 * v + 2);
        // Adam per parameter: m 3, v 4, bias corrections 2, square root 1, divide and
        // epsilon 2, step 2: 14.
        let adam = 14 * Self::params(cfg);
        Flops {
            matmul,
            attention,
            other: embed + norms + gelu + adds + loss + adam,
        }
    }

    /// Parameters on the GPU: the model's, and the head's bias the engine adds.
    pub fn params(cfg: &Config) -> u64 {
        (ParamLayout::new(cfg).len + cfg.vocab) as u64
    }

    pub fn get(&self, c: Class) -> u64 {
        match c {
            Class::Matmul => self.matmul,
            Class::Attention => self.attention,
            Class::Other => self.other,
        }
    }

    pub fn total(&self) -> u64 {
        self.matmul + self.attention + self.other
    }

    /// The share of class `c`, in percent.
    pub fn share(&self, c: Class) -> f64 {
        100.0 * self.get(c) as f64 / self.total().max(1) as f64
    }
}

/// How the GPU time was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Wall clock around each class's submission, the queue drained before and after.
    DrainedWallClock,
}

impl Method {
    pub fn key(self) -> &'static str {
        match self {
            Method::DrainedWallClock => "gpt.claim.method.wall",
        }
    }
}

/// Repetitions of each class's timing (the median of at least three).
pub const REPS: usize = 5;
/// What one timed submission aims to take, so that launching it is a small part.
pub const TARGET_MS: f64 = 60.0;
/// Steps in one timed submission at most.
pub const MAX_STEPS: u64 = 64;

/// Steps per timed submission for a step of `step_ms`: about [`TARGET_MS`] of work.
pub fn steps_per_run(step_ms: f64) -> u64 {
    if !step_ms.is_finite() || step_ms <= 0.0 {
        return MAX_STEPS;
    }
    ((TARGET_MS / step_ms).ceil() as u64).clamp(1, MAX_STEPS)
}

/// The measured claim: each class's time per step, and the whole step's.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub flops: Flops,
    /// Milliseconds per step of each class alone, in [`Class::ALL`]'s order.
    pub class_ms: [Spread; 3],
    /// Milliseconds per whole step (every class in one program).
    pub step_ms: Spread,
    pub steps_per_run: u64,
    pub method: Method,
    pub software: bool,
}

impl Claim {
    /// From each class's per-step samples (in [`Class::ALL`]'s order) and the whole step's;
    /// None if any has no finite sample.
    pub fn new(
        flops: Flops,
        class_samples: &[Vec<f64>; 3],
        step_samples: &[f64],
        steps_per_run: u64,
        software: bool,
    ) -> Option<Self> {
        let class_ms = [
            Spread::of(&class_samples[0])?,
            Spread::of(&class_samples[1])?,
            Spread::of(&class_samples[2])?,
        ];
        Some(Self {
            flops,
            class_ms,
            step_ms: Spread::of(step_samples)?,
            steps_per_run,
            method: Method::DrainedWallClock,
            software,
        })
    }

    fn index(c: Class) -> usize {
        match c {
            Class::Matmul => 0,
            Class::Attention => 1,
            Class::Other => 2,
        }
    }

    pub fn ms(&self, c: Class) -> Spread {
        self.class_ms[Self::index(c)]
    }

    /// The share of class `c` in the sum of the three classes' median times, in percent.
    pub fn time_share(&self, c: Class) -> f64 {
        let sum: f64 = self.class_ms.iter().map(|s| s.median).sum();
        if sum <= 0.0 {
            return 0.0;
        }
        100.0 * self.ms(c).median / sum
    }

    /// The sum of the classes' medians over the whole step's median: above 1 when running
    /// the classes apart costs more than together (each alone pays its own launches and
    /// waits).
    pub fn apart_over_together(&self) -> f64 {
        let sum: f64 = self.class_ms.iter().map(|s| s.median).sum();
        sum / self.step_ms.median.max(f64::MIN_POSITIVE)
    }

    /// Achieved GFLOP/s of class `c` (its FLOPs over its median time).
    pub fn gflops(&self, c: Class) -> f64 {
        self.flops.get(c) as f64 / (self.ms(c).median.max(f64::MIN_POSITIVE) * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocab {
        Vocab::from_docs(["abc", "cab"])
    }

    #[test]
    fn a_prompt_becomes_the_boundary_then_its_characters() {
        assert_eq!(prompt_tokens("cab", &vocab(), 8), Ok(vec![0, 3, 1, 2]));
        assert_eq!(labels("ab"), vec![START_MARK, "a", "b"]);
    }

    #[test]
    fn a_bad_prompt_is_named() {
        assert_eq!(prompt_tokens("", &vocab(), 8), Err(PromptError::Empty));
        // Context 4: the boundary and three characters.
        assert_eq!(prompt_tokens("abc", &vocab(), 4).map(|t| t.len()), Ok(4));
        assert_eq!(
            prompt_tokens("abca", &vocab(), 4),
            Err(PromptError::TooLong { chars: 4, max: 3 })
        );
        assert_eq!(
            prompt_tokens("abz", &vocab(), 8),
            Err(PromptError::Outside('z'))
        );
        // Characters, not bytes.
        assert_eq!(
            prompt_tokens("春a", &vocab(), 8),
            Err(PromptError::Outside('春'))
        );
        let (key, args) = PromptError::TooLong { chars: 4, max: 3 }.message();
        assert_eq!(key, "gpt.attn.too_long");
        assert_eq!(args[0], ("chars", "4".to_string()));
    }

    #[test]
    fn shades_keep_a_trace_visible() {
        assert_eq!(level(0.0), 0);
        assert_eq!(level(f32::NAN), 0);
        assert_eq!(level(0.001), 1);
        assert_eq!(level(0.5), 5);
        assert_eq!(level(1.0), LEVELS - 1);
        assert_eq!(level(3.0), LEVELS - 1);
    }

    #[test]
    fn kernels_fall_into_their_classes() {
        for id in [
            "mlp-forward-tiled",
            "mlp-backward-input-tiled",
            "mlp-grad-tiled",
            "mlp-grad-reduce",
        ] {
            assert_eq!(class_of(id), Class::Matmul, "{id}");
        }
        for id in [
            "attention-naive-scores",
            "attention-naive-softmax",
            "attention-naive-pv",
            "attention-naive-backward-dq",
        ] {
            assert_eq!(class_of(id), Class::Attention, "{id}");
        }
        for id in [
            "gpt-embed",
            "gpt-layernorm",
            "gpt-gelu",
            "gpt-softmax-xent",
            "optim-adam",
            "clear",
        ] {
            assert_eq!(class_of(id), Class::Other, "{id}");
        }
    }

    /// One layer, width 4, 2 heads, context 3, vocab 5, one window, counted by hand.
    #[test]
    fn flops_match_a_hand_count() {
        let cfg = Config {
            vocab: 5,
            context: 3,
            width: 4,
            heads: 2,
            layers: 1,
        };
        let f = Flops::of(&cfg, 1);
        // r = 3 rows. qkv 4→12: 6·3·4·12 + 2·3·12 = 864 + 72 = 936; proj 4→4: 288 + 24 =
        // 312; fc 4→16: 1152 + 96 = 1248; out 16→4: 1152 + 24 = 1176; head 4→5: 360 + 30 =
        // 390. Sum 4062.
        assert_eq!(f.matmul, 4062);
        // d = 2; per problem 12·9·2 + 11·9 = 216 + 99 = 315; 2 problems: 630.
        assert_eq!(f.attention, 630);
        // Parameters: wte 5·4 + wpe 3·4 = 32; block: 2 LayerNorms 16, qkv 48 + 12, proj
        // 16 + 4, fc 64 + 16, out 64 + 4 = 244; final LayerNorm 8; head 20; head bias 5:
        // 309.
        assert_eq!(Flops::params(&cfg), 309);
        // embed 3·3·4 = 36; norms 3·3·22·4 = 792; gelu 3·16·24 = 1152; adds 2·3·4·2 = 48;
        // loss 3·27 = 81; Adam 14·309 = 4326. Sum 6435.
        assert_eq!(f.other, 6435);
        assert_eq!(f.total(), 4062 + 630 + 6435);
    }

    #[test]
    fn at_the_page_default_the_matmuls_dominate_the_flops() {
        let cfg = Config {
            vocab: 28,
            context: 32,
            width: 64,
            heads: 4,
            layers: 2,
        };
        let f = Flops::of(&cfg, 32);
        assert!(f.share(Class::Matmul) > 75.0, "{f:?}");
        let sum: f64 = Class::ALL.iter().map(|&c| f.share(c)).sum();
        assert!((sum - 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_claim_sums_up_its_samples() {
        let f = Flops {
            matmul: 3_000_000,
            attention: 1_000_000,
            other: 0,
        };
        let c = Claim::new(
            f,
            &[
                vec![3.0, 1.0, 2.0],
                vec![1.0, 1.0, 1.0],
                vec![1.0, 9.0, 1.0],
            ],
            &[3.0, 4.0, 5.0],
            8,
            true,
        )
        .expect("finite samples");
        assert_eq!(c.ms(Class::Matmul).median, 2.0);
        assert_eq!((c.ms(Class::Other).min, c.ms(Class::Other).max), (1.0, 9.0));
        assert_eq!(c.time_share(Class::Matmul), 50.0);
        assert_eq!(c.apart_over_together(), 1.0);
        assert_eq!(c.gflops(Class::Matmul), 1.5);
        assert!(Claim::new(f, &[vec![], vec![1.0], vec![1.0]], &[1.0], 1, false).is_none());
    }

    #[test]
    fn a_timed_run_takes_about_the_target() {
        assert_eq!(steps_per_run(6.0), 10);
        assert_eq!(steps_per_run(500.0), 1);
        assert_eq!(steps_per_run(0.01), MAX_STEPS);
        assert_eq!(steps_per_run(f64::NAN), MAX_STEPS);
    }
}
