//! The twin learns, and its optimisers take the steps worked out by hand.

use cnn::net::{apply_update, CpuTrainer, Hyper, LayerKind, Optimiser};

mod common;
use common::{bars, small_net};

/// Trains `steps` steps; returns (mean loss of the first 10 steps, of the last 10, test
/// accuracy).
fn train(hyper: Hyper, steps: usize) -> (f32, f32, f32) {
    let net = small_net();
    let params = net.init_params(7);
    let mut t = CpuTrainer::new(net, hyper, params, 16, bars(200, 1), 3);
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        t.step();
        assert!(t.last_loss.is_finite());
        losses.push(t.last_loss);
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    let eval = t.evaluate(&bars(100, 2));
    (
        mean(&losses[..10]),
        mean(&losses[steps - 10..]),
        eval.accuracy,
    )
}

#[test]
fn sgd_with_momentum_learns_bars() {
    let (first, last, accuracy) = train(
        Hyper {
            lr: 0.05,
            optimiser: Optimiser::Sgd,
            momentum: 0.9,
        },
        300,
    );
    eprintln!("loss {first} → {last}, test accuracy {accuracy}");
    assert!(last < 0.25 * first, "loss {first} → {last}");
    assert!(accuracy >= 0.95, "test accuracy {accuracy}");
}

#[test]
fn adam_learns_bars() {
    let (first, last, accuracy) = train(
        Hyper {
            lr: 0.01,
            optimiser: Optimiser::Adam,
            momentum: 0.0,
        },
        300,
    );
    eprintln!("loss {first} → {last}, test accuracy {accuracy}");
    assert!(last < 0.25 * first, "loss {first} → {last}");
    assert!(accuracy >= 0.95, "test accuracy {accuracy}");
}

#[test]
fn training_is_reproducible_and_inspectable() {
    let hyper = Hyper {
        lr: 0.01,
        optimiser: Optimiser::Adam,
        momentum: 0.0,
    };
    let run = || {
        let net = small_net();
        let p = net.init_params(7);
        let mut t = CpuTrainer::new(net, hyper, p, 8, bars(40, 1), 3);
        for _ in 0..20 {
            t.step();
        }
        t
    };
    let (a, b) = (run(), run());
    assert_eq!(a.params, b.params);
    assert_eq!(a.last_loss, b.last_loss);

    let test = bars(4, 9);
    assert!(a.inspect(&[0.0; 99]).is_none());
    let seen = a.inspect(test.image(1)).expect("a 10×10 image");
    let shapes: Vec<_> = seen
        .layers
        .iter()
        .map(|l| (l.kind, l.block, l.channels, l.side, l.values.len()))
        .collect();
    assert_eq!(
        shapes,
        vec![
            (LayerKind::Input, 0, 1, 10, 100),
            (LayerKind::Conv, 1, 4, 8, 256),
            (LayerKind::Relu, 1, 4, 8, 256),
            (LayerKind::Pool, 1, 4, 4, 64),
        ]
    );
    assert!((seen.probs.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    // The page's single-image view and the batch evaluation agree on the class.
    let eval = a.evaluate(&test);
    assert_eq!(eval.predicted[1] as usize, seen.class);
    assert_eq!(eval.predicted.len(), 4);
}

/// Adam, lr 0.1, on three parameters starting at 1 with gradients (0.5, −2, 0) then
/// (0.5, 1, 0). By hand:
/// - step 1: c₁ = 1 − 0.9 = 0.1, c₂ = 1 − 0.999 = 0.001; m = 0.1·g, v = 0.001·g², so
///   m/c₁ = g and v/c₂ = g²: each parameter moves by lr·g / (|g| + ε), i.e. lr·sign(g) less
///   a hair: 1 − 0.1·0.5/(0.5 + 1e-7) = 0.90000002, 1 + 0.1·2/(2 + 1e-7) = 1.09999999; a zero
///   gradient does not move (0 / (0 + ε) = 0);
/// - step 2: c₁ = 1 − 0.81 = 0.19, c₂ = 1 − 0.998001 = 0.001999. First parameter, same
///   gradient again: m = 0.095, v = 0.00049975, m/c₁ = 0.5, v/c₂ = 0.25: another 0.1 down,
///   to 0.80000004. Second: m = 0.9·(−0.2) + 0.1·1 = −0.08, v = 0.999·0.004 + 0.001·1 =
///   0.004996; m/c₁ = −0.42105263, v/c₂ = 2.4992496, √ = 1.5809015; it moves by
///   0.1·0.42105263/1.5809015 = 0.02663370 up, to 1.12663370.
#[test]
fn adam_first_steps_match_hand_values() {
    let hyper = Hyper {
        lr: 0.1,
        optimiser: Optimiser::Adam,
        momentum: 0.0,
    };
    let mut p = vec![1.0f32; 3];
    let (mut m, mut v) = (vec![0.0f32; 3], vec![0.0f32; 3]);
    apply_update(&hyper, 1, &mut p, &[0.5, -2.0, 0.0], &mut m, &mut v);
    // The real-number values above, against f32 arithmetic: 1 − β₁ and 1 − β₂ are computed
    // in f32 (as the kernel gets them), and 1 − 0.999 in f32 is 0.001 − 1.3e-8 (0.999 is not
    // exact): v is off by 1.3e-5 relative, m by 2.4e-7. Through √v that moves a step of 0.1
    // by under 1e-6, and each parameter's own rounding adds 1.2e-7.
    let close = |got: f32, want: f64, rel: f64| (got as f64 - want).abs() <= rel * want.abs();
    let (p_tol, m_tol, v_tol) = (1e-6, 5e-7, 2e-5);
    assert!(close(p[0], 0.90000002, p_tol), "{p:?}");
    assert!(close(p[1], 1.09999999, p_tol), "{p:?}");
    assert_eq!(p[2], 1.0);
    assert!(
        close(m[1], -0.2, m_tol) && close(v[1], 0.004, v_tol),
        "{m:?} {v:?}"
    );
    apply_update(&hyper, 2, &mut p, &[0.5, 1.0, 0.0], &mut m, &mut v);
    assert!(close(p[0], 0.80000004, p_tol), "{p:?}");
    assert!(close(p[1], 1.12663370, p_tol), "{p:?}");
    assert_eq!(p[2], 1.0);
    assert!(
        close(m[1], -0.08, m_tol) && close(v[1], 0.004996, v_tol),
        "{m:?} {v:?}"
    );
    // And the twin's constants are those f32 values, not the decimals.
    assert_eq!(cnn::net::ONE_MINUS_BETA2, 1.0f32 - 0.999f32);
    assert_ne!(cnn::net::ONE_MINUS_BETA2, 0.001f32);
}

/// SGD with momentum 0.5, lr 0.1, gradient 1 twice: v = 1 then 1.5; p = 1 − 0.1 = 0.9, then
/// 0.9 − 0.15 = 0.75.
#[test]
fn sgd_momentum_first_steps_match_hand_values() {
    let hyper = Hyper {
        lr: 0.1,
        optimiser: Optimiser::Sgd,
        momentum: 0.5,
    };
    let (mut p, mut m, mut v) = (vec![1.0f32], vec![0.0f32], vec![0.0f32]);
    apply_update(&hyper, 1, &mut p, &[1.0], &mut m, &mut v);
    assert_eq!((p[0], m[0]), (0.9, 1.0));
    apply_update(&hyper, 2, &mut p, &[1.0], &mut m, &mut v);
    assert!((p[0] - 0.75).abs() < 1e-7 && m[0] == 1.5, "{p:?} {m:?}");
    assert_eq!(v[0], 0.0);
}
