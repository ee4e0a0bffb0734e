//! The CNN page (`#/cnn`, issue 24) as models, without yew, the DOM or a GPU session: the app's
//! component and its training driver keep a [`board::CnnPage`] in a reducer, hand it what the
//! GPU session and the tuned CPU trainer report, and render what it says.
//!
//! - `settings`: the URL's settings (through `cnn::spec`) with named errors, the pairs each
//!   control writes, what restarts and what applies live, the device-limit check.
//! - `board`: the page's state as a reducer: Play, Pause, Step, Reset, settings changes,
//!   both sides' step counts and evaluations, the curves, the rates and their ratio, restarts,
//!   a lost device and the run report an embed gets.
//! - `evals`: the split both sides train on, the images they are scored on, and an
//!   evaluation gathered a chunk at a time.
//! - `inspect`: the confusion matrix, the digits it gets wrong, first-layer filters and
//!   feature maps as grey images, and a drawn digit prepared like MNIST's.
//! - `snapshot`: one network for all of "look inside", gathered from the GPU's readbacks of
//!   one step.
//! - `kernels`: every kernel of a step in step order, with its layer and phase, the keys of
//!   what it computes and of its threads' index mapping, and its editor link.

pub mod board;
pub mod evals;
pub mod inspect;
pub mod kernels;
pub mod settings;
pub mod snapshot;

/// Every translation key this module's models can hand the component (the `cnn.err.*` keys
/// of the settings parser are `cnn::SpecError::key`'s): the page's locale file must hold each.
pub const TEXT_KEYS: &[&str] = &[
    "cnn.buffer.acts",
    "cnn.buffer.argmax",
    "cnn.buffer.eval",
    "cnn.buffer.params",
    "cnn.buffer.partials",
    "cnn.caveat.batch",
    "cnn.caveat.one_core",
    "cnn.caveat.small_batch",
    "cnn.caveat.software",
    "cnn.chart.cpu_ahead",
    "cnn.chart.cpu_alone",
    "cnn.chart.gpu_ahead",
    "cnn.chart.gpu_alone",
    "cnn.claim.faster",
    "cnn.claim.not_faster",
    "cnn.claim.reproduced",
    "cnn.draw.empty",
    "cnn.draw.no_network",
    "cnn.draw.size",
    "cnn.limit.buffer_batch",
    "cnn.limit.buffer_net",
    "cnn.limit.groups_batch",
    "cnn.limit.groups_net",
    "cnn.ratio.measuring",
    "cnn.ratio.no_gpu",
    "cnn.setting.batch",
    "cnn.setting.channels",
    "cnn.setting.kernels",
    "cnn.setting.momentum",
    "cnn.setting.optimiser",
    "cnn.setting.seed",
];

#[cfg(test)]
mod tests {
    use super::board::{caveats, verdict, Claim, Lead, Verdict};
    use super::inspect::DrawError;
    use super::settings::{structural_changes, LimitError, BUFFER_KEYS};
    use super::TEXT_KEYS;
    use crate::train::run::Side;
    use ::cnn::net::Optimiser;
    use ::cnn::Spec;

    #[test]
    fn every_key_the_models_produce_is_listed() {
        let mut produced: Vec<&str> = Vec::new();
        // Every setting changed at once names every restart key.
        let a = Spec::default();
        let b = Spec {
            channels: vec![8, 16],
            kernels: vec![3, 3],
            optimiser: Optimiser::Sgd,
            momentum: 0.5,
            batch: 8,
            seed: 2,
            lr: 0.5,
        };
        produced.extend(structural_changes(&a, &b));
        produced.extend(caveats(&b, true));
        for c in [Claim::Reproduced, Claim::Faster, Claim::NotFaster] {
            produced.push(c.key());
        }
        produced.push(verdict(false, None, None).key());
        for side in [Side::Gpu, Side::Cpu] {
            produced.extend(Lead::Alone(side).key());
            let ahead = Lead::Ahead {
                side,
                by: 1,
                behind_at: 0,
            };
            produced.extend(ahead.key());
        }
        produced.push(
            Verdict::Measuring {
                gpu: true,
                cpu: false,
            }
            .key(),
        );
        for e in [
            DrawError::NothingDrawn,
            DrawError::NoNetwork,
            DrawError::Size {
                width: 0,
                height: 0,
                bytes: 0,
            },
        ] {
            produced.push(e.key());
        }
        for batch in [None, Some(1)] {
            let buffer = LimitError::Buffer {
                buffer: "cnn.buffer.params",
                bytes: 0,
                max: 0,
                batch,
            };
            let groups = LimitError::Workgroups {
                buffer: "cnn.buffer.eval",
                groups: 0,
                max: 0,
                batch,
            };
            produced.extend([buffer.key(), groups.key()]);
        }
        produced.extend(BUFFER_KEYS);
        produced.sort_unstable();
        produced.dedup();
        assert_eq!(produced, TEXT_KEYS);
    }
}
