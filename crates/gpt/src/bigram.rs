//! The counting baseline: P(next | this) from the training windows' (token, target) pairs
//! with add-one smoothing (makemore's bigram), and its loss on any split in nats per character.
//! The GPT page's goal is a validation loss at most 90 % of this one's on the same split.

use crate::data::window;
use crate::ops::IGNORE;

/// Smoothed bigram probabilities, vocab × vocab (row: this token).
#[derive(Clone, Debug)]
pub struct Bigram {
    vocab: usize,
    probs: Vec<f64>,
}

impl Bigram {
    pub fn fit(docs: &[Vec<u32>], vocab: usize, context: usize) -> Self {
        let mut counts = vec![1.0f64; vocab * vocab];
        for d in docs {
            let (t, g) = window(d, context);
            for (&a, &b) in t.iter().zip(&g) {
                if b != IGNORE {
                    counts[a as usize * vocab + b as usize] += 1.0;
                }
            }
        }
        for row in counts.chunks_exact_mut(vocab) {
            let s: f64 = row.iter().sum();
            row.iter_mut().for_each(|v| *v /= s);
        }
        Self {
            vocab,
            probs: counts,
        }
    }

    /// Mean −ln P over every counted target of `docs`' windows.
    pub fn loss(&self, docs: &[Vec<u32>], context: usize) -> f64 {
        let (mut total, mut n) = (0.0, 0usize);
        for d in docs {
            let (t, g) = window(d, context);
            for (&a, &b) in t.iter().zip(&g) {
                if b != IGNORE {
                    total -= self.probs[a as usize * self.vocab + b as usize].ln();
                    n += 1;
                }
            }
        }
        total / n.max(1) as f64
    }
}
