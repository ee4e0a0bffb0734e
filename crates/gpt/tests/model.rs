//! The forward pass against independent formulas: causality, attention, and the loss of a
//! model that knows nothing.

use cpu_kernels::data::SplitMix64;
use gpt::ops::{self, AttnShape, IGNORE};
use gpt::{Config, ConfigError, Model};

fn cfg() -> Config {
    Config {
        vocab: 9,
        context: 6,
        width: 12,
        heads: 3,
        layers: 2,
    }
}

#[test]
fn a_later_token_never_changes_an_earlier_prediction() {
    let model = Model::new(cfg()).expect("valid");
    let p = model.init_params(4);
    let a = [0u32, 3, 5, 1, 2, 7];
    let mut b = a;
    b[4] = 8;
    b[5] = 1;
    let t = [IGNORE; 6];
    let fa = model.forward(&p, &a, &t, 1);
    let fb = model.forward(&p, &b, &t, 1);
    let v = cfg().vocab;
    // Positions 0..4 see only tokens 0..=3, which are the same.
    assert_eq!(fa.probs[..4 * v], fb.probs[..4 * v]);
    assert_ne!(fa.probs[4 * v..5 * v], fb.probs[4 * v..5 * v]);
}

#[test]
fn attention_matches_softmax_of_scaled_scores_times_values() {
    // One sequence, 2 heads of width 2, computed here from the definition in f64.
    let s = AttnShape {
        b: 1,
        t: 3,
        h: 2,
        hs: 2,
    };
    let c = 4;
    let mut rng = SplitMix64::new(9);
    let qkv: Vec<f64> = (0..3 * 3 * c)
        .map(|_| rng.next_signed_unit() as f64)
        .collect();
    let mut y = vec![0.0; 3 * c];
    let mut probs = vec![0.0; s.probs_len()];
    ops::attention(&qkv, s, &mut y, &mut probs);
    for h in 0..2 {
        for i in 0..3 {
            let q = |d: usize| qkv[i * 3 * c + h * 2 + d];
            let k = |j: usize, d: usize| qkv[j * 3 * c + c + h * 2 + d];
            let v = |j: usize, d: usize| qkv[j * 3 * c + 2 * c + h * 2 + d];
            let scores: Vec<f64> = (0..=i)
                .map(|j| (q(0) * k(j, 0) + q(1) * k(j, 1)) / 2f64.sqrt())
                .collect();
            let z: f64 = scores.iter().map(|s| s.exp()).sum();
            for d in 0..2 {
                let want: f64 = (0..=i).map(|j| scores[j].exp() / z * v(j, d)).sum();
                let got = y[i * c + h * 2 + d];
                assert!(
                    (got - want).abs() < 1e-12,
                    "head {h} row {i} dim {d}: {got} vs {want}"
                );
            }
            for j in i + 1..3 {
                assert_eq!(probs[(h * 3 + i) * 3 + j], 0.0, "masked key {j} of row {i}");
            }
        }
    }
}

#[test]
fn an_untrained_model_starts_near_uniform() {
    // Weights of spread 0.02 give logits near 0: the loss starts at about ln(vocab).
    let model = Model::new(cfg()).expect("valid");
    let p = model.init_params(1);
    let tokens = [0u32, 1, 2, 3, 4, 5];
    let targets = [1u32, 2, 3, 4, 5, 6];
    let f = model.forward(&p, &tokens, &targets, 1);
    let uniform = (cfg().vocab as f32).ln();
    assert!(
        (f.loss - uniform).abs() < 0.05,
        "{} vs ln 9 = {uniform}",
        f.loss
    );
    assert_eq!(f.counted, 6);
}

#[test]
fn bad_shapes_are_named() {
    let mut c = cfg();
    c.heads = 5;
    assert_eq!(
        Model::new(c).err(),
        Some(ConfigError::WidthNotDivisible {
            width: 12,
            heads: 5
        })
    );
    c.heads = 0;
    assert_eq!(Model::new(c).err(), Some(ConfigError::Zero("heads")));
    c.heads = 3;
    c.context = 5000;
    assert_eq!(
        Model::new(c).err(),
        Some(ConfigError::TooLarge("context", 5000, 1024))
    );
}

#[test]
fn the_layout_holds_every_parameter_once() {
    let c = cfg();
    let l = Model::new(c).expect("valid").layout;
    let w = c.width;
    let per_block =
        4 * w + (3 * w * w + 3 * w) + (w * w + w) + (4 * w * w + 4 * w) + (4 * w * w + w);
    assert_eq!(
        l.len,
        c.vocab * w + c.context * w + c.layers * per_block + 2 * w + w * c.vocab
    );
}
