//! The GPT's LayerNorm and GELU kernels against its CPU twin (`gpt::ops`, run in f64) on a
//! real wgpu device (lavapipe under `cargo xtask test`), at row counts and widths that cross
//! the 64-invocation workgroups (1, 7, 65, 130 rows; widths 1, 5, 64, 67), with γ and β at
//! offsets inside a parameter buffer, and gradients added to what is already there.

use gpu_runtime::cpu_kernels::data::random_vec;
use gpu_runtime::gpt::ops;
use gpu_runtime::gpt_layers::{
    gelu_bound, ln_bound, run_gelu, run_layernorm, run_layernorm_backward, run_layernorm_param_grad,
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
        worst = worst.max(e / b);
    }
    println!("{what}: largest error {worst:.3} of its bound");
}

const SHAPES: &[(usize, usize)] = &[(1, 1), (7, 5), (65, 64), (130, 67), (3, 130)];

#[test]
fn layernorm_forward_and_backward_match_the_twin() {
    let gpu = gpu();
    for (k, &(rows, c)) in SHAPES.iter().enumerate() {
        let seed = 100 + k as u64;
        let x: Vec<f32> = random_vec(rows * c, seed)
            .iter()
            .map(|v| 3.0 * v + 0.5)
            .collect();
        // γ and β inside a parameter buffer at offsets 3 and 3 + c.
        let mut params = random_vec(2 * c + 5, seed + 1);
        for g in &mut params[3..3 + c] {
            *g += 1.0;
        }
        let (gamma, beta) = (3, 3 + c);
        let (y, stats) =
            pollster::block_on(run_layernorm(&gpu, &x, &params, (gamma, beta), rows, c))
                .expect("layernorm runs");
        let (x64, p64) = (f64s(&x), f64s(&params));
        let mut y64 = vec![0.0; rows * c];
        let (mut mean, mut rstd) = (vec![0.0; rows], vec![0.0; rows]);
        ops::layernorm(
            &x64,
            &p64[gamma..gamma + c],
            &p64[beta..beta + c],
            c,
            &mut y64,
            &mut mean,
            &mut rstd,
        );
        within(&format!("y {rows}×{c}"), &y, &y64, |e| {
            let (r, i) = (e / c, e % c);
            ln_bound(
                &x64[r * c..(r + 1) * c],
                p64[gamma + i],
                p64[beta + i],
                i,
                mean[r],
                rstd[r],
            )
        });
        let stats64: Vec<f64> = mean.iter().zip(&rstd).flat_map(|(&m, &s)| [m, s]).collect();
        within(&format!("stats {rows}×{c}"), &stats, &stats64, |e| {
            let r = e / 2;
            let row = &x64[r * c..(r + 1) * c];
            let abs: f64 = row.iter().map(|v| v.abs()).sum();
            if e % 2 == 0 {
                2.0 * (c as f64 + 1.0) * f32::EPSILON as f64 * abs / c as f64 + 1e-30
            } else {
                2.0 * (1.5 * c as f64 + 8.0) * f32::EPSILON as f64 * rstd[r]
            }
        });

        // Backward, from the GPU's own stats (what a session passes on), onto a nonzero dx.
        let dy = random_vec(rows * c, seed + 2);
        let dx0 = random_vec(rows * c, seed + 3);
        let dx = pollster::block_on(run_layernorm_backward(
            &gpu,
            &x,
            &params,
            gamma,
            &stats,
            &dy,
            &dx0,
            (rows, c),
        ))
        .expect("backward runs");
        let (dy64, mut dx64) = (f64s(&dy), f64s(&dx0));
        let (mut dg, mut db) = (vec![0.0; c], vec![0.0; c]);
        let (m64, r64): (Vec<f64>, Vec<f64>) =
            stats.chunks(2).map(|s| (s[0] as f64, s[1] as f64)).unzip();
        ops::layernorm_backward(
            &x64,
            &p64[gamma..gamma + c],
            &m64,
            &r64,
            &dy64,
            c,
            &mut dx64,
            &mut dg,
            &mut db,
        );
        within(&format!("dx {rows}×{c}"), &dx, &dx64, |e| {
            // Two sums of c products and a few roundings, relative to the magnitudes summed.
            let (r, _) = (e / c, e % c);
            let row = r * c..(r + 1) * c;
            let d: f64 = row
                .clone()
                .map(|j| (dy64[j] * p64[gamma + j % c]).abs())
                .sum::<f64>();
            let xh: f64 = row
                .map(|j| ((x64[j] - m64[r]) * r64[r]).abs())
                .fold(0.0, f64::max);
            let mag = r64[r]
                * (d / c as f64 * (2.0 + 2.0 * xh * xh) + (dy64[e] * p64[gamma + e % c]).abs());
            2.0 * ((c as f64 + 8.0) * f32::EPSILON as f64 * mag
                + f32::EPSILON as f64 * (dx64[e].abs() + dx0[e].abs() as f64))
        });

        // γ and β gradients, added to a gradient buffer at the same offsets.
        let g0 = random_vec(params.len(), seed + 4);
        let grads = pollster::block_on(run_layernorm_param_grad(
            &gpu,
            &x,
            &stats,
            &dy,
            &g0,
            (gamma, beta),
            (rows, c),
        ))
        .expect("param grad runs");
        let mut want = f64s(&g0);
        for i in 0..c {
            want[gamma + i] += dg[i];
            want[beta + i] += db[i];
        }
        within(&format!("dγ, dβ {rows}×{c}"), &grads, &want, |e| {
            let i = if (gamma..gamma + c).contains(&e) {
                e - gamma
            } else if (beta..beta + c).contains(&e) {
                e - beta
            } else {
                return 0.0;
            };
            let mag: f64 = (0..rows)
                .map(|r| dy64[r * c + i].abs() * (1.0 + ((x64[r * c + i] - m64[r]) * r64[r]).abs()))
                .sum::<f64>()
                + g0[e].abs() as f64;
            2.0 * (rows as f64 + 4.0) * f32::EPSILON as f64 * mag
        });
    }
}

#[test]
fn gelu_forward_and_backward_match_the_twin() {
    let gpu = gpu();
    for (k, &len) in [1usize, 63, 65, 1000].iter().enumerate() {
        let x: Vec<f32> = random_vec(len, 7 + k as u64)
            .iter()
            .map(|v| 4.0 * v)
            .collect();
        let y = pollster::block_on(run_gelu(&gpu, &x, None, &vec![0.0; len])).expect("gelu runs");
        let x64 = f64s(&x);
        let mut y64 = vec![0.0; len];
        ops::gelu(&x64, &mut y64);
        within(&format!("gelu {len}"), &y, &y64, |i| {
            gelu_bound(x64[i], None)
        });
        let dy = random_vec(len, 70 + k as u64);
        let dx0 = random_vec(len, 80 + k as u64);
        let dx = pollster::block_on(run_gelu(&gpu, &x, Some(&dy), &dx0)).expect("backward runs");
        let mut dx64 = f64s(&dx0);
        ops::gelu_backward(&x64, &f64s(&dy), &mut dx64);
        within(&format!("gelu' {len}"), &dx, &dx64, |i| {
            gelu_bound(x64[i], Some(dy[i] as f64)) + f32::EPSILON as f64 * (dx64[i].abs() + 1.0)
        });
    }
}
