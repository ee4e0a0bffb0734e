//! Characters as tokens, documents as windows of the context, and the seeded split.
//!
//! Token 0 is the boundary: it starts every window and is the target after a document's last
//! character (makemore's "." convention), so the model learns where names and poems end. A
//! window of a document d (length L) is tokens [0, d₀, …, d_{L−1}] and targets
//! [d₀, …, d_{L−1}, 0], cut to the context and padded with token 0 and the target
//! [`IGNORE`](crate::ops::IGNORE).

use std::collections::BTreeSet;

use cpu_kernels::data::SplitMix64;

use crate::ops::IGNORE;

/// The characters a corpus uses, sorted; token i + 1 is `chars[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vocab {
    pub chars: Vec<char>,
}

impl Vocab {
    /// Every character of `docs`, sorted (by code point).
    pub fn from_docs<'a>(docs: impl IntoIterator<Item = &'a str>) -> Self {
        let set: BTreeSet<char> = docs.into_iter().flat_map(str::chars).collect();
        Self {
            chars: set.into_iter().collect(),
        }
    }

    /// Tokens, boundary included.
    pub fn len(&self) -> usize {
        self.chars.len() + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// A document's tokens; `None` names the first character outside the vocabulary.
    pub fn encode(&self, s: &str) -> Result<Vec<u32>, char> {
        s.chars()
            .map(|ch| {
                self.chars
                    .binary_search(&ch)
                    .map(|i| i as u32 + 1)
                    .map_err(|_| ch)
            })
            .collect()
    }

    /// The text of `tokens`, the boundary shown as nothing.
    pub fn decode(&self, tokens: &[u32]) -> String {
        tokens
            .iter()
            .filter_map(|&t| t.checked_sub(1).and_then(|i| self.chars.get(i as usize)))
            .collect()
    }
}

/// Documents split into training and validation sets, as token lists (no boundaries).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corpus {
    pub vocab: Vocab,
    pub train: Vec<Vec<u32>>,
    pub val: Vec<Vec<u32>>,
}

impl Corpus {
    /// A seeded shuffle of the non-empty documents, then makemore's split: min(1,000, 10 %) for
    /// validation (at least 1 when there are two or more documents).
    pub fn new<'a>(docs: impl IntoIterator<Item = &'a str> + Clone, seed: u64) -> Self {
        let docs: Vec<&str> = docs.into_iter().filter(|d| !d.is_empty()).collect();
        let vocab = Vocab::from_docs(docs.iter().copied());
        let mut encoded: Vec<Vec<u32>> = docs.iter().filter_map(|d| vocab.encode(d).ok()).collect();
        shuffle(&mut encoded, seed);
        let n_val = if encoded.len() < 2 {
            0
        } else {
            (encoded.len() / 10).clamp(1, 1000)
        };
        let val = encoded.split_off(encoded.len() - n_val);
        Self {
            vocab,
            train: encoded,
            val,
        }
    }
}

/// A document as one window: (tokens, targets), each `context` long.
pub fn window(doc: &[u32], context: usize) -> (Vec<u32>, Vec<u32>) {
    let mut tokens = vec![0u32; context];
    let mut targets = vec![IGNORE; context];
    for i in 0..context.min(doc.len() + 1) {
        tokens[i] = if i == 0 { 0 } else { doc[i - 1] };
        targets[i] = doc.get(i).copied().unwrap_or(0);
    }
    (tokens, targets)
}

/// Windows of the documents `idx` of `docs`, one after another: (tokens, targets), each
/// idx.len() · context long.
pub fn batch(docs: &[Vec<u32>], idx: &[usize], context: usize) -> (Vec<u32>, Vec<u32>) {
    let mut tokens = Vec::with_capacity(idx.len() * context);
    let mut targets = Vec::with_capacity(idx.len() * context);
    for &i in idx {
        let (t, g) = window(&docs[i], context);
        tokens.extend(t);
        targets.extend(g);
    }
    (tokens, targets)
}

/// Fisher–Yates with SplitMix64: the same order for the same seed on every platform.
pub fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut rng = SplitMix64::new(seed ^ 0x0005_B170_BDE5);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// The seeded order in which the training documents are visited: a fresh shuffle each epoch.
#[derive(Clone, Debug)]
pub struct BatchOrder {
    order: Vec<usize>,
    at: usize,
    epoch: u64,
    seed: u64,
}

impl BatchOrder {
    pub fn new(len: usize, seed: u64) -> Self {
        let mut o = Self {
            order: (0..len).collect(),
            at: 0,
            epoch: 0,
            seed,
        };
        shuffle(&mut o.order, seed);
        o
    }

    /// The next `b` document indices (wrapping into a new epoch, reshuffled).
    pub fn next(&mut self, b: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(b);
        while out.len() < b && !self.order.is_empty() {
            if self.at == self.order.len() {
                self.epoch += 1;
                self.at = 0;
                shuffle(&mut self.order, self.seed.wrapping_add(self.epoch));
            }
            out.push(self.order[self.at]);
            self.at += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_start_and_end_at_the_boundary_and_pad_with_ignore() {
        let (t, g) = window(&[5, 6, 7], 6);
        assert_eq!(t, vec![0, 5, 6, 7, 0, 0]);
        assert_eq!(g, vec![5, 6, 7, 0, IGNORE, IGNORE]);
        // Longer than the context: cut, no boundary target.
        let (t, g) = window(&[1, 2, 3, 4], 3);
        assert_eq!(t, vec![0, 1, 2]);
        assert_eq!(g, vec![1, 2, 3]);
    }

    #[test]
    fn vocab_round_trips_and_names_a_stranger() {
        let v = Vocab::from_docs(["emma", "olivia", "床前明月光"]);
        let e = v.encode("月光").unwrap_or_default();
        assert_eq!(v.decode(&e), "月光");
        assert_eq!(v.encode("emmaz"), Err('z'));
        assert_eq!(v.len(), v.chars.len() + 1);
    }

    #[test]
    fn split_is_seeded_and_makemores() {
        let docs: Vec<String> = (0..95).map(|i| format!("n{i}")).collect();
        let a = Corpus::new(docs.iter().map(String::as_str), 3);
        let b = Corpus::new(docs.iter().map(String::as_str), 3);
        assert_eq!(a, b);
        assert_eq!(a.val.len(), 9);
        assert_eq!(a.train.len(), 86);
    }

    #[test]
    fn batch_order_visits_every_document_once_per_epoch() {
        let mut o = BatchOrder::new(10, 1);
        let mut seen: Vec<usize> = (0..5).flat_map(|_| o.next(2)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }
}
