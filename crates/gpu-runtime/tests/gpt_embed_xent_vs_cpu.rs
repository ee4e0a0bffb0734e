//! The GPT's embedding kernels (gather forward, deterministic scatter-add backward) and its
//! softmax cross-entropy head against the CPU twin run in f64, on a real wgpu device
//! (lavapipe under `cargo xtask test`): row counts and widths that cross the 64-invocation
//! workgroups, tokens that repeat, tables at offsets inside a parameter buffer, gradients
//! added to what is already there, and targets that are IGNORE.

use gpu_runtime::cpu_kernels::data::{random_vec, SplitMix64};
use gpu_runtime::gpt::ops::{self, IGNORE};
use gpu_runtime::gpt_layers::{
    embed_bound, run_embed, run_embed_backward, run_softmax_xent, xent_bounds, EmbedShape,
};
use gpu_runtime::Gpu;

fn gpu() -> Gpu {
    Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    )
}

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// |got − want| ≤ bound for every element, with the first one outside named.
fn within(what: &str, got: &[f32], want: &[f64], bound: impl Fn(usize) -> f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let b = bound(i);
        let e = (g as f64 - w).abs();
        assert!(e <= b, "{what}[{i}]: got {g}, want {w} (bound {b:e})");
        if b > 0.0 {
            worst = worst.max(e / b);
        }
    }
    println!("{what}: largest error {worst:.3} of its bound");
}

/// `n` tokens below `vocab`, seeded; small vocabularies repeat every token many times.
fn tokens(n: usize, vocab: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| (rng.next_u64() % vocab as u64) as u32)
        .collect()
}

/// (rows, width, positions per window, vocabulary): one of everything; a window shorter
/// than the rows; widths under, at and over 64; a vocabulary wider than the rows.
const EMBED_SHAPES: &[(usize, usize, usize, usize)] = &[
    (1, 1, 1, 1),
    (7, 5, 7, 3),
    (66, 67, 33, 11),
    (130, 64, 65, 5),
    (9, 3, 3, 130),
];

#[test]
fn embeddings_forward_and_backward_match_the_twin() {
    let gpu = gpu();
    for (k, &(rows, c, t, vocab)) in EMBED_SHAPES.iter().enumerate() {
        let seed = 300 + k as u64;
        // The token table at 3, the position table (t + 2 rows, more than a window uses)
        // after it, then 4 more floats.
        let s = EmbedShape {
            rows,
            c,
            t,
            vocab,
            wte: 3,
            wpe: 3 + vocab * c,
        };
        let len = s.wpe + (t + 2) * c + 4;
        let params = random_vec(len, seed);
        let toks = tokens(rows, vocab, seed + 1);
        let x = pollster::block_on(run_embed(&gpu, &toks, &params, s)).expect("embed runs");
        // The twin (gpt::model's forward): x[r] = wte[tok] + wpe[r % t], in f64.
        let p64 = f64s(&params);
        let terms = |e: usize| {
            let (r, i) = (e / c, e % c);
            [
                p64[s.wte + toks[r] as usize * c + i],
                p64[s.wpe + (r % t) * c + i],
            ]
        };
        let want: Vec<f64> = (0..rows * c).map(|e| terms(e).iter().sum()).collect();
        within(&format!("x {rows}×{c}, t {t}"), &x, &want, |e| {
            embed_bound(&terms(e)) + 1e-30
        });

        // Backward onto a nonzero gradient buffer.
        let dx = random_vec(rows * c, seed + 2);
        let g0 = random_vec(len, seed + 3);
        let g = pollster::block_on(run_embed_backward(&gpu, &toks, &dx, &g0, s))
            .expect("embed backward runs");
        // The twin (gpt::model's backward): by ascending row, each row's gradient added to
        // its token's row and to its position's row. The terms of each element kept for
        // its bound.
        let mut terms: Vec<Vec<f64>> = g0.iter().map(|&v| vec![v as f64]).collect();
        for (r, &tok) in toks.iter().enumerate() {
            for i in 0..c {
                let d = dx[r * c + i] as f64;
                terms[s.wte + tok as usize * c + i].push(d);
                terms[s.wpe + (r % t) * c + i].push(d);
            }
        }
        let want: Vec<f64> = terms.iter().map(|v| v.iter().sum()).collect();
        within(&format!("dwte, dwpe {rows}×{c}, t {t}"), &g, &want, |e| {
            embed_bound(&terms[e]) + 1e-30
        });
    }
}

#[test]
fn the_embedding_backward_is_the_same_on_every_run() {
    // No atomics: two runs give the same bits.
    let gpu = gpu();
    let s = EmbedShape {
        rows: 130,
        c: 67,
        t: 65,
        vocab: 4,
        wte: 0,
        wpe: 4 * 67,
    };
    let toks = tokens(130, 4, 9);
    let dx = random_vec(130 * 67, 10);
    let g0 = vec![0.0; s.wpe + 65 * 67];
    let a = pollster::block_on(run_embed_backward(&gpu, &toks, &dx, &g0, s)).expect("runs");
    let b = pollster::block_on(run_embed_backward(&gpu, &toks, &dx, &g0, s)).expect("runs");
    assert_eq!(a, b);
}

#[test]
fn a_token_outside_the_vocabulary_is_refused_before_the_gpu() {
    let gpu = gpu();
    let s = EmbedShape {
        rows: 2,
        c: 3,
        t: 2,
        vocab: 4,
        wte: 0,
        wpe: 12,
    };
    let params = vec![0.0; 18];
    assert!(pollster::block_on(run_embed(&gpu, &[1, 4], &params, s)).is_err());
    assert!(pollster::block_on(run_softmax_xent(&gpu, &[0.0; 8], &[0, 4], 4)).is_err());
}

#[test]
fn softmax_cross_entropy_matches_the_twin() {
    let gpu = gpu();
    // (rows, vocabulary): one class; rows across the 64-invocation workgroups; vocabularies
    // of a few and of hundreds of characters.
    for (k, &(rows, vocab)) in [(1usize, 1usize), (7, 5), (65, 67), (130, 3), (33, 300)]
        .iter()
        .enumerate()
    {
        let seed = 500 + k as u64;
        // Logits spread over ±6, as an untrained-to-trained model's.
        let logits: Vec<f32> = random_vec(rows * vocab, seed)
            .iter()
            .map(|v| 6.0 * v)
            .collect();
        // Every fifth target IGNORE (padding), the rest seeded.
        let mut targets = tokens(rows, vocab, seed + 1);
        for tg in targets.iter_mut().skip(2).step_by(5) {
            *tg = IGNORE;
        }
        let out = pollster::block_on(run_softmax_xent(&gpu, &logits, &targets, vocab))
            .expect("softmax cross-entropy runs");
        let l64 = f64s(&logits);
        let mut probs = vec![0.0; rows * vocab];
        let (loss, counted) = ops::softmax_xent(&l64, &targets, vocab, &mut probs);
        let mut dl = vec![0.0; rows * vocab];
        ops::softmax_xent_backward(&probs, &targets, vocab, counted, &mut dl);
        // Each row's loss: −ln p[target] from the twin's probabilities.
        let row_loss: Vec<f64> = (0..rows)
            .map(|r| match targets[r] {
                IGNORE => 0.0,
                tg => -probs[r * vocab + tg as usize].ln(),
            })
            .collect();
        let bounds: Vec<(f64, Vec<f64>)> = (0..rows)
            .map(|r| match targets[r] {
                IGNORE => (0.0, vec![0.0; vocab]),
                tg => xent_bounds(&l64[r * vocab..][..vocab], tg as usize, counted),
            })
            .collect();
        within(
            &format!("losses {rows}×{vocab}"),
            &out.losses,
            &row_loss,
            |r| bounds[r].0,
        );
        within(
            &format!("dlogits {rows}×{vocab}"),
            &out.dlogits,
            &dl,
            |e| bounds[e / vocab].1[e % vocab],
        );
        // The mean: each row's bound, averaged, plus the f64 sum's own rounding.
        let mean_bound = bounds.iter().map(|b| b.0).sum::<f64>() / counted.max(1) as f64 + 1e-12;
        let got = out.mean(&targets);
        assert!(
            (got - loss).abs() <= mean_bound,
            "loss {rows}×{vocab}: got {got}, want {loss} (bound {mean_bound:e})"
        );
    }
}
