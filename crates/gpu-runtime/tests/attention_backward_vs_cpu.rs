//! Causal attention's backward, naive (from the stored probabilities) and fused (recomputing
//! them per tile from the saved log-sum-exp), against the GPT's CPU twin
//! (`gpt::ops::attention` then `attention_backward`, run in f64) on a real wgpu device
//! (lavapipe under `cargo xtask test`): the GPT's packed rows [q | k | v], sequence lengths
//! and head widths that are not multiples of any tile (16 queries and keys, the fused
//! kernels' vec4 head columns), one to several heads, gradients added to a nonzero buffer.
//! Each element is held to `backward_bounds`, derived from the arithmetic.

use gpu_runtime::attention::{
    backward_bounds, rows_to_check, run_attention_backward, verify, AttentionPath, AttnLayout,
};
use gpu_runtime::cpu_kernels::data::random_vec;
use gpu_runtime::gpt::ops::{attention, attention_backward, AttnShape};
use gpu_runtime::Gpu;

fn gpu() -> Gpu {
    Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    )
}

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// Both paths' gradients for `b` sequences of `t` positions, `h` heads of width `hs`.
fn check(gpu: &Gpu, (b, t, h, hs): (u32, u32, u32, u32), seed: u64) {
    let l = AttnLayout::packed(b, t, h, hs);
    // Scores of a few units, as in a trained model: inputs uniform in ±1.5.
    let qkv: Vec<f32> = random_vec(l.qkv_len(), seed)
        .into_iter()
        .map(|v| 1.5 * v)
        .collect();
    let dy = random_vec(l.out_len(), seed + 1);
    let dqkv0 = random_vec(l.qkv_len(), seed + 2);
    let s = AttnShape {
        b: b as usize,
        t: t as usize,
        h: h as usize,
        hs: hs as usize,
    };
    let q64 = f64s(&qkv);
    let mut y = vec![0.0; l.out_len()];
    let mut probs = vec![0.0; s.probs_len()];
    attention(&q64, s, &mut y, &mut probs);
    let mut want = f64s(&dqkv0);
    attention_backward(&q64, &probs, &f64s(&dy), s, &mut want);
    let bound = backward_bounds(&l, &qkv, &dy, &dqkv0);
    for path in AttentionPath::ALL {
        let got = pollster::block_on(run_attention_backward(gpu, path, &l, &qkv, &dy, &dqkv0))
            .unwrap_or_else(|e| panic!("{path:?} {l:?}: {e}"));
        let v = verify(&l, &qkv, &got.out, &rows_to_check(&l, usize::MAX, seed));
        assert!(v.ok, "{path:?} forward b {b} t {t} h {h} hs {hs}: {v:?}");
        assert_eq!(got.dqkv.len(), want.len());
        let mut worst = 0.0f64;
        for (e, ((&g, &w), &bd)) in got.dqkv.iter().zip(&want).zip(&bound).enumerate() {
            let err = (g as f64 - w).abs();
            // Which of q, k, v and which row, for the message.
            let (pos, col) = (e / (3 * (h * hs) as usize), e % (3 * (h * hs) as usize));
            assert!(
                g.is_finite() && err <= bd,
                "{path:?} b {b} t {t} h {h} hs {hs}: dqkv[{e}] (row {pos}, column {col}): \
                 got {g}, want {w} (bound {bd:e})"
            );
            worst = worst.max(err / bd);
        }
        println!(
            "{:<6} b {b} t {t:>3} h {h} hs {hs:>2}: largest error {worst:.3} of its bound",
            path.id()
        );
    }
}

#[test]
fn both_backwards_match_the_twin_at_odd_sizes() {
    let gpu = gpu();
    // (sequences, positions, heads, head width): one position; odd widths under, at and over
    // a vec4 and the 16-wide tiles; 33, 70 and 129 positions span several 16-key tiles and
    // 16-query blocks; the widest head the fused kernels hold.
    for (k, &shape) in [
        (1, 1, 1, 16),
        (2, 5, 3, 13),
        (2, 33, 1, 3),
        (1, 70, 2, 16),
        (1, 129, 1, 33),
        (2, 37, 1, 64),
    ]
    .iter()
    .enumerate()
    {
        check(&gpu, shape, 700 + 10 * k as u64);
    }
}

#[test]
fn the_bound_is_tight_enough_to_catch_a_wrong_gradient() {
    // The bound of every element stays well under the elements' own size: a gradient off
    // by a tenth of a typical value is outside it.
    let l = AttnLayout::packed(1, 40, 2, 7);
    let qkv: Vec<f32> = random_vec(l.qkv_len(), 5)
        .into_iter()
        .map(|v| 1.5 * v)
        .collect();
    let dy = random_vec(l.out_len(), 6);
    let zeros = vec![0.0f32; l.qkv_len()];
    let bound = backward_bounds(&l, &qkv, &dy, &zeros);
    let s = AttnShape {
        b: 1,
        t: 40,
        h: 2,
        hs: 7,
    };
    let q64 = f64s(&qkv);
    let mut y = vec![0.0; l.out_len()];
    let mut probs = vec![0.0; s.probs_len()];
    attention(&q64, s, &mut y, &mut probs);
    let mut g = vec![0.0; l.qkv_len()];
    attention_backward(&q64, &probs, &f64s(&dy), s, &mut g);
    let typical = g.iter().map(|v| v.abs()).sum::<f64>() / g.len() as f64;
    let widest = bound.iter().copied().fold(0.0, f64::max);
    assert!(
        widest < typical / 10.0,
        "widest bound {widest:e}, typical gradient {typical:e}"
    );
}

#[test]
fn both_backwards_give_the_same_bits_on_every_run() {
    // No float atomics: every gradient element has one owner summing in a fixed order.
    let gpu = gpu();
    let l = AttnLayout::packed(2, 45, 2, 11);
    let qkv = random_vec(l.qkv_len(), 11);
    let dy = random_vec(l.out_len(), 12);
    let dqkv0 = random_vec(l.qkv_len(), 13);
    for path in AttentionPath::ALL {
        let run = || {
            pollster::block_on(run_attention_backward(&gpu, path, &l, &qkv, &dy, &dqkv0))
                .unwrap_or_else(|e| panic!("{path:?}: {e}"))
        };
        assert_eq!(run(), run(), "{path:?}");
    }
}
