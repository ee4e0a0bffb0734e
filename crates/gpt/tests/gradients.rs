//! Finite-difference check of the whole backward pass, every parameter.
//!
//! The model is generic over its float type, so the check runs it in f64: the loss's rounding
//! error is then about ε₆₄·|L| ≈ 1e-16, and central differences with step h = 1e-5 have
//! rounding error near 1e-16 / h = 1e-11 and truncation error h²·|L'''| / 6 ≈ 1e-11 for these
//! small, smooth nets (LayerNorm, GELU and softmax have no kinks). Every gradient must match
//! within 1e-8 + 1e-6·|value|: a wrong index, a dropped term or a missing factor moves a
//! gradient by far more than that. The f32 twin runs the same code; its agreement with the
//! f64 pass is checked separately with a bound from its sum lengths.

use cpu_kernels::data::SplitMix64;
use gpt::ops::IGNORE;
use gpt::{Config, Model};

const H: f64 = 1e-5;

fn random_params(model: &Model, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut p: Vec<f64> = (0..model.layout.len)
        .map(|_| 0.5 * rng.next_signed_unit() as f64)
        .collect();
    // LayerNorm gains near 1, so the normalised values matter as they do in training.
    let c = model.cfg.width;
    let l = &model.layout;
    let gains = l
        .blocks
        .iter()
        .flat_map(|b| [b.ln1_g, b.ln2_g])
        .chain([l.lnf_g]);
    for g in gains {
        for v in &mut p[g..g + c] {
            *v += 1.0;
        }
    }
    p
}

fn check(cfg: Config, b: usize, t: usize, seed: u64) {
    let model = Model::new(cfg).expect("a valid shape");
    let p = random_params(&model, seed);
    let mut rng = SplitMix64::new(seed + 1);
    let tokens: Vec<u32> = (0..b * t)
        .map(|_| (rng.next_u64() % cfg.vocab as u64) as u32)
        .collect();
    // Some padding: the last position of every window counts nothing.
    let targets: Vec<u32> = (0..b * t)
        .map(|i| {
            if i % t == t - 1 {
                IGNORE
            } else {
                (rng.next_u64() % cfg.vocab as u64) as u32
            }
        })
        .collect();
    let (_, g) = model.loss_and_grad(&p, &tokens, &targets, b);
    let mut q = p.clone();
    let mut worst = (0.0f64, 0usize);
    for i in 0..p.len() {
        q[i] = p[i] + H;
        let up = model.forward(&q, &tokens, &targets, b).loss;
        q[i] = p[i] - H;
        let down = model.forward(&q, &tokens, &targets, b).loss;
        q[i] = p[i];
        let fd = (up - down) / (2.0 * H);
        let err = (g[i] - fd).abs();
        assert!(
            err <= 1e-8 + 1e-6 * fd.abs(),
            "parameter {i} ({}): backward {:e}, finite difference {fd:e}",
            where_is(&model, i),
            g[i]
        );
        if err > worst.0 {
            worst = (err, i);
        }
    }
    println!(
        "{} parameters checked; largest difference {:e} at {}",
        p.len(),
        worst.0,
        where_is(&model, worst.1)
    );
}

/// The parameter tensor an index falls in, for the failure message.
fn where_is(m: &Model, i: usize) -> String {
    let l = &m.layout;
    let mut named = vec![("wte", l.wte), ("wpe", l.wpe)];
    for (k, b) in l.blocks.iter().enumerate() {
        let k: &'static str = Box::leak(format!("block {k}").into_boxed_str());
        named.extend([
            (k, b.ln1_g),
            ("  qkv_w", b.qkv_w),
            ("  qkv_b", b.qkv_b),
            ("  proj_w", b.proj_w),
            ("  proj_b", b.proj_b),
            ("  ln2", b.ln2_g),
            ("  fc_w", b.fc_w),
            ("  fc_b", b.fc_b),
            ("  out_w", b.out_w),
            ("  out_b", b.out_b),
        ]);
    }
    named.extend([("lnf", l.lnf_g), ("head", l.head)]);
    let (name, start) = named
        .iter()
        .rev()
        .find(|(_, s)| *s <= i)
        .copied()
        .unwrap_or(("?", 0));
    format!("{name}[{}]", i - start)
}

#[test]
fn two_blocks_two_heads_match_finite_differences() {
    let cfg = Config {
        vocab: 7,
        context: 5,
        width: 8,
        heads: 2,
        layers: 2,
    };
    check(cfg, 2, 5, 11);
}

#[test]
fn odd_head_width_and_a_short_window_match_finite_differences() {
    // Head width 3 (width 9 over 3 heads), windows shorter than the context.
    let cfg = Config {
        vocab: 5,
        context: 6,
        width: 9,
        heads: 3,
        layers: 1,
    };
    check(cfg, 3, 4, 5);
}

#[test]
fn f32_twin_agrees_with_the_f64_pass() {
    // The twin is the same code in f32. Its loss differs from the f64 loss by the roundings
    // of each sum (lengths ≤ 4c = 32 here, 12 layers of them) relative to the magnitudes
    // summed: well below 1e-4 of the loss for these sizes.
    let cfg = Config {
        vocab: 7,
        context: 5,
        width: 8,
        heads: 2,
        layers: 2,
    };
    let model = Model::new(cfg).expect("a valid shape");
    let p64 = random_params(&model, 2);
    let p32: Vec<f32> = p64.iter().map(|&v| v as f32).collect();
    let p64: Vec<f64> = p32.iter().map(|&v| v as f64).collect();
    let tokens = [1, 2, 3, 4, 5, 6, 0, 1, 2, 3];
    let targets = [2, 3, 4, 5, IGNORE, 0, 1, 2, 3, 4];
    let (l32, g32) = model.loss_and_grad(&p32, &tokens, &targets, 2);
    let (l64, g64) = model.loss_and_grad(&p64, &tokens, &targets, 2);
    assert!(
        ((l32 as f64) - l64).abs() <= 1e-5 * l64.abs(),
        "{l32} vs {l64}"
    );
    let scale = g64.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (&a, &b)) in g32.iter().zip(&g64).enumerate() {
        assert!(
            ((a as f64) - b).abs() <= 1e-4 * scale,
            "gradient {i}: {a} vs {b}"
        );
    }
}
