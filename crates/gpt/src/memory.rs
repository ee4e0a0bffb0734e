//! The memory tally of the GPT page: how many numbers training and decoding keep, from the
//! model's shape alone, by the same layout the twin and the GPU session allocate. The page
//! shows it for the learner's model, checks it against the buffers actually allocated, and
//! scales the same formulas up to GPT-3's shape (175 B parameters), where the memory wall of
//! the articles' large-model chapter becomes hundreds of gigabytes.

use crate::model::{Config, ParamLayout};

/// Numbers (not bytes) kept by each part, for `batch` windows of the full context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub params: u64,
    /// One gradient per parameter.
    pub grads: u64,
    /// Adam's two moments per parameter.
    pub adam: u64,
    /// What the forward saves for the backward (`model::Forward`): per block the residual
    /// input and middle, both LayerNorms' outputs and statistics, q/k/v, the attention
    /// output, the MLP's pre- and post-GELU values and the n×n attention probabilities per
    /// head; then the final LayerNorm and the logits' probabilities.
    pub activations: u64,
    /// Decoding's cache of keys and values: 2 · layers · batch · context · width.
    pub kv_cache: u64,
}

impl Tally {
    pub fn total_training(&self) -> u64 {
        self.params + self.grads + self.adam + self.activations
    }
}

/// Parameters of a shape without building its layout (for shapes too large to list):
/// embeddings V·C + T·C, per block 12·C² + 13·C, the final LayerNorm 2·C, the head C·V.
pub fn param_count(cfg: &Config) -> u64 {
    let (v, t, c, l) = (
        cfg.vocab as u64,
        cfg.context as u64,
        cfg.width as u64,
        cfg.layers as u64,
    );
    v * c + t * c + l * (12 * c * c + 13 * c) + 2 * c + c * v
}

pub fn tally(cfg: &Config, batch: u64) -> Tally {
    let params = param_count(cfg);
    let (v, t, c, l, h) = (
        cfg.vocab as u64,
        cfg.context as u64,
        cfg.width as u64,
        cfg.layers as u64,
        cfg.heads as u64,
    );
    let n = batch * t;
    let per_block = 16 * n * c + 4 * n + batch * h * t * t;
    Tally {
        params,
        grads: params,
        adam: 2 * params,
        activations: l * per_block + 2 * n * c + 2 * n + n * v,
        kv_cache: 2 * l * batch * t * c,
    }
}

/// GPT-3's shape as its paper gives it (Brown et al. 2020, table 2.1, "GPT-3 175B"): 96 layers,
/// width 12,288, 96 heads, context 2,048, GPT-2's vocabulary of 50,257 tokens.
pub const GPT3: Config = Config {
    vocab: 50_257,
    context: 2048,
    width: 12_288,
    heads: 96,
    layers: 96,
};

/// Checks [`param_count`] against a shape's real layout (small shapes only).
pub fn layout_agrees(cfg: &Config) -> bool {
    ParamLayout::new(cfg).len as u64 == param_count(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_the_layouts() {
        for cfg in [
            Config::default_for(30),
            Config {
                vocab: 7,
                context: 5,
                width: 9,
                heads: 3,
                layers: 3,
            },
        ] {
            assert!(layout_agrees(&cfg), "{cfg:?}");
        }
    }

    #[test]
    fn gpt3s_shape_has_175_billion_parameters() {
        // The head is not tied to the token embedding here, which adds V·C = 0.6 B.
        let p = param_count(&GPT3) as f64;
        assert!((p / 175e9 - 1.0).abs() < 0.01, "{p:e}");
        // Training in f32 with Adam: 16 bytes per parameter before any activation, 2.8 TB.
        let t = tally(&GPT3, 1);
        assert_eq!(t.params + t.grads + t.adam, 4 * t.params);
        assert!(4.0 * (4 * t.params) as f64 > 2.7e12);
    }

    #[test]
    fn activations_grow_with_the_square_of_the_context_only_in_attention() {
        let mut cfg = Config::default_for(30);
        let a = tally(&cfg, 8).activations;
        cfg.context *= 2;
        let b = tally(&cfg, 8).activations;
        // Doubling the context doubles everything linear in it and quadruples the
        // attention probabilities: between 2× and 4×.
        assert!(b > 2 * a && b < 4 * a, "{a} → {b}");
    }
}
