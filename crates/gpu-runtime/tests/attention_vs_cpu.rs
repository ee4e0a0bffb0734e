//! Causal attention, naive and fused, against the f64 reference on a real wgpu device
//! (lavapipe under `cargo xtask test`): sequence lengths and head widths that are not
//! multiples of any tile (the 16-wide tiles of every kernel, the fused kernel's vec4 head
//! columns), separate and packed layouts; and the reference against
//! the GPT's CPU twin.

use gpu_runtime::attention::{
    reference_row, rows_to_check, run_attention, verify, AttentionPath, AttnLayout,
};
use gpu_runtime::cpu_kernels::data::random_vec;
use gpu_runtime::gpt::ops::{attention as twin_attention, AttnShape};
use gpu_runtime::{Gpu, GpuError, RunControl, RunOptions, SizeError};

fn gpu() -> Gpu {
    Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    )
}

fn run(gpu: &Gpu, path: AttentionPath, l: &AttnLayout, seed: u64) {
    // Scores of a few units, as in a trained model: inputs uniform in ±1.5.
    let qkv: Vec<f32> = random_vec(l.qkv_len(), seed)
        .into_iter()
        .map(|v| 1.5 * v)
        .collect();
    let out = pollster::block_on(run_attention(
        gpu,
        path,
        l,
        &qkv,
        &RunOptions::default(),
        &RunControl::default(),
    ))
    .unwrap_or_else(|e| panic!("{path:?} {l:?}: {e}"));
    let checked = rows_to_check(l, usize::MAX, seed);
    let v = verify(l, &qkv, &out.output, &checked);
    assert!(v.ok, "{path:?} n {} d {} bh {}: {v:?}", l.n, l.d, l.bh);
    println!(
        "{:<6} bh {:>2} n {:>3} d {:>2}: largest error {:.3} of its bound",
        path.id(),
        l.bh,
        l.n,
        l.d,
        v.max_rel_error
    );
}

#[test]
fn both_paths_match_the_reference_at_odd_sizes() {
    let gpu = gpu();
    let mut seed = 1;
    // (problems, positions, head width): one position; odd widths under, at and over a
    // vec4 and the 16-wide tiles; 33, 70 and 129 positions span several 16-key tiles and
    // several 16-query blocks (so the online rescale runs).
    for &(bh, n, d) in &[
        (1, 1, 16),
        (3, 5, 13),
        (1, 33, 3),
        (2, 70, 16),
        (1, 129, 33),
    ] {
        let l = AttnLayout::separate(bh, n, d);
        for path in AttentionPath::ALL {
            run(&gpu, path, &l, seed);
            seed += 1;
        }
    }
    // The widest head the fused kernel holds.
    run(
        &gpu,
        AttentionPath::Fused,
        &AttnLayout::separate(2, 70, 64),
        seed,
    );
}

#[test]
fn both_paths_read_the_gpts_packed_rows() {
    // 2 sequences of 7 positions, 3 heads of width 5: rows [q | k | v] of 45 floats.
    let gpu = gpu();
    let l = AttnLayout::packed(2, 7, 3, 5);
    for path in AttentionPath::ALL {
        run(&gpu, path, &l, 40);
    }
}

#[test]
fn the_reference_is_the_gpt_twins_attention() {
    // The GPT trains with gpt::ops::attention; the kernels are checked against
    // reference_row. Both from the same inputs, in f64: equal to rounding.
    let (b, t, h, hs) = (2, 6, 2, 3);
    let l = AttnLayout::packed(b, t, h, hs);
    let qkv = random_vec(l.qkv_len(), 9);
    let q64: Vec<f64> = qkv.iter().map(|&v| v as f64).collect();
    let s = AttnShape {
        b: b as usize,
        t: t as usize,
        h: h as usize,
        hs: hs as usize,
    };
    let c = (h * hs) as usize;
    let mut y = vec![0.0; b as usize * t as usize * c];
    let mut probs = vec![0.0; s.probs_len()];
    twin_attention(&q64, s, &mut y, &mut probs);
    for z in 0..b * h {
        for i in 0..t {
            let (want, _) = reference_row(&l, &qkv, z, i);
            let at = ((z / h) * t + i) as usize * c + (z % h) as usize * hs as usize;
            for (e, w) in want.iter().enumerate() {
                assert!((y[at + e] - w).abs() < 1e-12, "problem {z} row {i} col {e}");
            }
        }
    }
}

#[test]
fn a_wrong_output_is_caught() {
    // The check itself: one element nudged by far less than its magnitude fails.
    let l = AttnLayout::separate(1, 9, 5);
    let qkv = random_vec(l.qkv_len(), 3);
    let rows = rows_to_check(&l, usize::MAX, 0);
    let mut got = vec![0.0f32; l.out_len()];
    for &(z, i) in &rows {
        let (want, _) = reference_row(&l, &qkv, z, i);
        for (e, w) in want.iter().enumerate() {
            got[(z * 9 + i) as usize * 5 + e] = *w as f32;
        }
    }
    assert!(verify(&l, &qkv, &got, &rows).ok);
    got[7 * 5 + 2] += 1e-3;
    let v = verify(&l, &qkv, &got, &rows);
    assert!(!v.ok && v.first_failure.map(|f| f.0) == Some(37), "{v:?}");
}

#[test]
fn naive_attention_past_the_largest_buffer_is_refused_before_the_gpu() {
    // 64 problems of 8,192 positions: 16 GiB of scores, past every adapter's binding limit.
    // The fused path needs only its inputs.
    let gpu = gpu();
    let l = AttnLayout::separate(64, 8192, 16);
    let qkv = vec![0.0f32; l.qkv_len()];
    let err = pollster::block_on(run_attention(
        &gpu,
        AttentionPath::Naive,
        &l,
        &qkv,
        &RunOptions::default(),
        &RunControl::default(),
    ));
    match err {
        Err(GpuError::Size(SizeError::ExceedsLimit {
            needed_bytes,
            largest_square,
            ..
        })) => {
            assert_eq!(needed_bytes, 64 * 8192 * 8192 * 4);
            assert!(
                largest_square > 0 && largest_square < 8192,
                "{largest_square}"
            );
        }
        other => panic!("expected the limit to refuse it, got {other:?}"),
    }
}
