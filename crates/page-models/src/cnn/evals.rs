//! What the CNN page trains on and evaluates, and an evaluation gathered a chunk at a time.
//!
//! Both sides train on the seeded split's 9,000 training images and are scored on the same
//! images: the 1,000 test images, and a fixed sample of [`TRAIN_SAMPLE`] training images for
//! the training curve (scoring all 9,000 would cost the CPU side as much time as ~90 steps).
//! A GPU evaluation runs the forward pass on at most `EVAL_CHUNK` images at a time, so a
//! split is gathered chunk by chunk ([`Gathering`]); the driver sends no training step while
//! one is being gathered, so every chunk sees the same network.

use std::ops::Range;

use ::cnn::data::{split, Digits, Samples};
use ::cnn::net::{Evaluation, EVAL_CHUNK};

use super::board::{Score, Split};

/// Training images scored for the training curve: one evaluation chunk.
pub const TRAIN_SAMPLE: usize = EVAL_CHUNK;
/// Wall-clock time between one side's evaluations while training.
pub const EVAL_EVERY_MS: f64 = 2_000.0;

/// The page's images, from the digits and the seed of the split.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalData {
    pub train: Samples,
    pub test: Samples,
    /// The first [`TRAIN_SAMPLE`] training images in the split's (seeded) order.
    pub train_sample: Samples,
}

/// The seeded split of `digits` (`cnn::data::split`, the twin's and the tests'), as samples.
pub fn eval_data(digits: &Digits, seed: u64) -> EvalData {
    let (train, test) = split(digits.len(), seed);
    let sample: Vec<u32> = train.iter().copied().take(TRAIN_SAMPLE).collect();
    EvalData {
        train: digits.samples(&train),
        test: digits.samples(&test),
        train_sample: digits.samples(&sample),
    }
}

impl EvalData {
    pub fn samples(&self, split: Split) -> &Samples {
        match split {
            Split::Train => &self.train_sample,
            Split::Test => &self.test,
        }
    }
}

/// The image ranges of an evaluation of `len` images, `EVAL_CHUNK` at a time.
pub fn chunks(len: usize) -> Vec<Range<usize>> {
    (0..len)
        .step_by(EVAL_CHUNK)
        .map(|s| s..(s + EVAL_CHUNK).min(len))
        .collect()
}

/// The pixels of images `range` of `samples` (empty if out of range).
pub fn images(samples: &Samples, range: Range<usize>) -> &[f32] {
    let px = samples.side * samples.side;
    samples
        .x
        .get(range.start * px..range.end * px)
        .unwrap_or(&[])
}

/// An evaluation of one split of one network after `step` steps, gathered chunk by chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct Gathering {
    pub split: Split,
    pub step: u64,
    /// Logits of the chunks gathered so far (images × classes).
    pub logits: Vec<f32>,
    /// Images covered so far.
    pub done: usize,
}

impl Gathering {
    pub fn new(split: Split, step: u64) -> Self {
        Self {
            split,
            step,
            logits: Vec::new(),
            done: 0,
        }
    }

    /// The next chunk to evaluate, None once every image of `samples` is covered.
    pub fn next(&self, samples: &Samples) -> Option<Range<usize>> {
        (self.done < samples.len()).then(|| self.done..(self.done + EVAL_CHUNK).min(samples.len()))
    }

    /// Adds the logits of the chunk [`Gathering::next`] named (`rows` images).
    pub fn add(&mut self, rows: usize, logits: &[f32]) {
        self.logits.extend_from_slice(logits);
        self.done += rows;
    }

    pub fn complete(&self, samples: &Samples) -> bool {
        self.done >= samples.len()
    }
}

/// Loss, accuracy and classes from logits and labels, with the twin's formulas.
pub use gpu_runtime::cnn_training::evaluation;

pub fn score(e: &Evaluation) -> Score {
    Score {
        loss: e.loss,
        accuracy: e.accuracy,
    }
}

/// Whether a side evaluated last at `last_ms` (None: never) is due again at `now_ms`.
pub fn due(last_ms: Option<f64>, now_ms: f64) -> bool {
    last_ms.is_none_or(|t| now_ms - t >= EVAL_EVERY_MS)
}

/// One side's evaluation bookkeeping in the driver: when it last evaluated, and at which step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalClock {
    /// When the last evaluation started, or ended (the GPU's: its readbacks); None: due now.
    pub last_ms: Option<f64>,
    /// The step of the last evaluation started (None: never).
    pub step: Option<u64>,
}

impl EvalClock {
    /// Whether to evaluate now, at `step`, with `presses` Step presses still to take on this
    /// side: every interval while running, and once for a step count that changed while not.
    /// Never while presses are still to take: an evaluation holds the side's steps until it
    /// is done (every chunk must see one network), and each costs as much as many steps, so
    /// presses queued faster than they could be evaluated are taken first and the curve gets
    /// one point where they end, not one per press.
    pub fn wanted(&self, running: bool, step: u64, presses: u64, now: f64) -> bool {
        if presses > 0 || self.step == Some(step) {
            return false;
        }
        !running || due(self.last_ms, now)
    }

    pub fn started(&mut self, step: u64, now: f64) {
        self.step = Some(step);
        self.last_ms = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(count: usize) -> Digits {
        Digits {
            rows: 2,
            cols: 2,
            pixels: (0..count * 4).map(|i| (i % 251) as u8).collect(),
            labels: (0..count).map(|i| (i % 10) as u8).collect(),
        }
    }

    #[test]
    fn the_split_matches_the_twins_and_the_train_sample_is_its_head() {
        let d = digits(1_000);
        let e = eval_data(&d, 7);
        let (train, test) = split(1_000, 7);
        assert_eq!(e.train, d.samples(&train));
        assert_eq!(e.test, d.samples(&test));
        assert_eq!(e.train_sample, d.samples(&train[..TRAIN_SAMPLE]));
        assert_eq!(e.samples(Split::Test).len(), 100);
    }

    #[test]
    fn chunks_cover_every_image_once() {
        assert_eq!(chunks(0), Vec::<Range<usize>>::new());
        assert_eq!(chunks(1_000), vec![0..256, 256..512, 512..768, 768..1000]);
        assert_eq!(chunks(256), vec![0..256]);
    }

    #[test]
    fn a_gathering_walks_the_chunks_and_scores_like_the_twin() {
        // Three images of two classes: logits (2, 0) → class 0; (0, 1) → 1; (1, 1) → 0 (the
        // first of a tie). Labels 0, 0, 1: one right.
        let samples = Samples {
            side: 1,
            x: vec![0.0; 3],
            y: vec![0, 0, 1],
        };
        let mut g = Gathering::new(Split::Test, 5);
        assert_eq!(g.next(&samples), Some(0..3));
        g.add(3, &[2.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert!(g.complete(&samples));
        assert_eq!(g.next(&samples), None);
        let e = evaluation(&g.logits, &samples.y, 2);
        assert_eq!(e.predicted, vec![0, 1, 0]);
        assert!((e.accuracy - 1.0 / 3.0).abs() < 1e-6);
        // Losses: ln(1 + e^-2), ln(1 + e^1) (label 0, logits (0, 1)), ln 2.
        let want = ((1.0 + (-2f64).exp()).ln() + (1.0 + 1f64.exp()).ln() + 2f64.ln()) / 3.0;
        assert!(
            (f64::from(e.loss) - want).abs() < 1e-6,
            "{} vs {want}",
            e.loss
        );
        assert_eq!(images(&samples, 1..3).len(), 2);
        assert!(images(&samples, 2..9).is_empty());
    }

    #[test]
    fn step_presses_are_taken_before_an_evaluation_and_the_last_one_is_evaluated() {
        // Paused, 30 presses queued at step 0 (evaluated): one step per tick here, as slow
        // as the driver can be. No evaluation while a press is left, one at step 30.
        let mut clock = EvalClock::default();
        assert!(
            clock.wanted(false, 0, 0, 0.0),
            "a new network is evaluated at once"
        );
        clock.started(0, 0.0);
        let (mut step, mut presses, mut evaluated) = (0u64, 30u64, Vec::new());
        for tick in 1..100 {
            let now = f64::from(tick) * 16.0;
            if presses > 0 {
                presses -= 1;
                step += 1;
            }
            if clock.wanted(false, step, presses, now) {
                clock.started(step, now);
                evaluated.push(step);
            }
        }
        assert_eq!(evaluated, vec![30]);
        // One more press after that: evaluated where it stopped, once.
        assert!(clock.wanted(false, 31, 0, 2_000.0));
        clock.started(31, 2_000.0);
        assert!(!clock.wanted(false, 31, 0, 9_000.0));
        // While running, presses left over still come first; then the interval decides.
        assert!(!clock.wanted(true, 40, 1, 9_000.0));
        assert!(clock.wanted(true, 40, 0, 2_000.0 + EVAL_EVERY_MS));
        assert!(!clock.wanted(true, 40, 0, 2_000.0 + EVAL_EVERY_MS - 1.0));
    }

    #[test]
    fn evaluations_are_due_every_interval() {
        assert!(due(None, 0.0));
        assert!(!due(Some(1_000.0), 1_000.0 + EVAL_EVERY_MS - 1.0));
        assert!(due(Some(1_000.0), 1_000.0 + EVAL_EVERY_MS));
    }
}
