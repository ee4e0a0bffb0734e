//! The tuned CPU trainer against the twin: the same parameters step for step within a bound
//! derived from the arithmetic, and the same learning. Its speed is a benchmark, not a test
//! (`print_step_times_at_lenet_batch_64`, ignored; the command is in docs/benchmarks.md).
//!
//! # The bound
//! Both trainers compute the same formulas; they differ in the order of every sum (and
//! `matrixmultiply` may fuse multiply-adds). A sum of n terms in any order, fused or not, is
//! within γₙ·Σ|terms| of the exact sum, γₙ = n·u / (1 − n·u), u = 2⁻²⁴; so each trainer is
//! within that of the exact value and the two within 2·γₙ·Σ|terms| of each other (`R` = 2 in
//! the code). Errors already in a sum's inputs add Σ|coefficient|·(their error). Carried
//! through the step, per element, in f64 (first order: products of two errors, ~u², dropped;
//! magnitudes are the twin's values):
//!
//! - conv: n = C_in·K² + 1 (the bias is one more term); dense: n = D + 1;
//! - ReLU and max-pool select: their output carries the selected input's error, *provided
//!   both trainers take the same branch* — a pre-activation within its error of 0, or a pool
//!   window whose winner leads by less than the two errors, could flip, which no rounding
//!   bound covers. The test checks that no branch differs between the two trainers (and
//!   prints how many were within the bound of flipping);
//! - softmax: perturbing every logit by ≤ e moves each probability by ≤ 2e relatively (the
//!   numerator and the sum by ≤ e each); rounding per trainer: z − m (u·|z − m| in the
//!   exponent), exp (2u), the sum (γ_classes), the division (u) and the other terms' own
//!   errors (u·max|z − m| + 2u): ≤ u·(|z_j − m| + max|z − m| + classes + 6); the delta's
//!   subtraction and 1/B scaling add 2u·|δ| per trainer;
//! - backward: dense weights n = B, its input n = classes; conv filters and biases
//!   n = B·S'² (the twin sums per sample then over samples, the tuned trainer accumulates
//!   per-sample multiplies: both are some order of the same B·S'² terms); conv input
//!   n = C_out·K².
//!
//! Per step the bound grows: the parameters' difference D_p so far enters every sum as an
//! input error of the weights, and SGD with momentum adds its own: v ← μ·v + g gives
//! D_v ← μ·D_v + D_g + R·u·(|μ·v| + |v′|); p ← p − lr·v′ gives D_p ← D_p + lr·D_v +
//! R·u·(lr·|v′| + |p′|). The comparison uses SGD: Adam's first step is lr·g/(|g| + ε), whose
//! sensitivity to a gradient near 0 is unbounded (≈ lr/ε), and the optimiser is the twin's own
//! function in both trainers anyway.

use cnn::data::Samples;
use cnn::net::{Block, CpuTrainer, Hyper, Net, Optimiser, Workspace};
use cnn::{Gemm, TunedTrainer};
use cpu_kernels::data::SplitMix64;
use std::time::Instant;

mod common;
use common::{bars, small_net};

const U: f64 = 1.0 / 16_777_216.0;
/// Two trainers, each within the rounding bound of the exact value.
const R: f64 = 2.0;

fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu)
}

/// `n` images of `side`² pixels, about a third exactly 0 (as in the digits), the rest in
/// (0, 1]; labels cycle through the classes.
fn random_images(n: usize, side: usize, classes: usize, seed: u64) -> Samples {
    let mut rng = SplitMix64::new(seed);
    let mut s = Samples {
        side,
        ..Samples::default()
    };
    for i in 0..n {
        for _ in 0..side * side {
            let r = rng.next_u64();
            s.x.push(if r.is_multiple_of(3) {
                0.0
            } else {
                ((r >> 8) % 255 + 1) as f32 / 255.0
            });
        }
        s.y.push((i % classes) as u32);
    }
    s
}

/// Per parameter, the bound on |gradient of the twin − gradient of the tuned trainer| for the
/// step whose forward and backward values `ws` holds (the twin's, from `params`), when the
/// trainers' parameters differ by up to `dp`, provided both take the same ReLU and pool
/// branches; and how many branches are close enough to flip within the bound (the caller
/// checks that none did).
fn grad_bound(net: &Net, params: &[f32], ws: &Workspace, dp: &[f64]) -> (Vec<f64>, usize) {
    let pl = net.param_layout();
    let l = &ws.layout;
    let batch = l.batch;
    let av = |i: usize| (ws.acts[i] as f64).abs();
    let dv = |i: usize| (ws.deltas[i] as f64).abs();
    let pv = |i: usize| (params[i] as f64).abs();
    // Error bounds of every activation and every delta, in the activations' layout.
    let mut ea = vec![0.0f64; l.len];
    let mut ed = vec![0.0f64; l.len];
    let mut eg = vec![0.0f64; params.len()];
    let mut near = 0;

    let mut in_off = l.input;
    for (b, (s, o)) in net.shapes.iter().zip(&pl.conv).enumerate() {
        let a = l.blocks[b];
        let (c_in, c_out, k) = (s.block.c_in, s.block.c_out, s.block.kernel);
        let (is, cs, ps) = (s.in_side, s.conv_side, s.pool_side);
        for n in 0..batch {
            for oc in 0..c_out {
                for y in 0..cs {
                    for x in 0..cs {
                        let (mut mag, mut prop) = (pv(o.b + oc), dp[o.b + oc]);
                        for c in 0..c_in {
                            for r in 0..k {
                                for t in 0..k {
                                    let xi = in_off + ((n * c_in + c) * is + y + r) * is + x + t;
                                    let wi = o.w + ((oc * c_in + c) * k + r) * k + t;
                                    mag += av(xi) * pv(wi);
                                    prop += pv(wi) * ea[xi] + av(xi) * dp[wi];
                                }
                            }
                        }
                        let i = ((n * c_out + oc) * cs + y) * cs + x;
                        let e = R * gamma(c_in * k * k + 1) * mag + prop;
                        ea[a.conv + i] = e;
                        let z = ws.acts[a.conv + i] as f64;
                        if e > 0.0 && z.abs() <= e {
                            near += 1;
                        }
                        ea[a.relu + i] = if z > 0.0 { e } else { 0.0 };
                    }
                }
            }
        }
        for nc in 0..batch * c_out {
            for py in 0..ps {
                for px in 0..ps {
                    let e = (nc * ps + py) * ps + px;
                    let w = ws.argmax[a.argmax + e] as usize;
                    for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        let c = (nc * cs + 2 * py + dy) * cs + 2 * px + dx;
                        let gap = ea[a.relu + w] + ea[a.relu + c];
                        let lead = (ws.acts[a.relu + w] - ws.acts[a.relu + c]) as f64;
                        if c != w && gap > 0.0 && lead.abs() <= gap {
                            near += 1;
                        }
                    }
                    ea[a.pool + e] = ea[a.relu + w];
                }
            }
        }
        in_off = a.pool;
    }

    let (d, classes) = (net.dense_inputs(), net.classes);
    for n in 0..batch {
        for j in 0..classes {
            let (mut mag, mut prop) = (pv(pl.dense_b + j), dp[pl.dense_b + j]);
            for i in 0..d {
                let (pi, wi) = (in_off + n * d + i, pl.dense_w + j * d + i);
                mag += av(pi) * pv(wi);
                prop += pv(wi) * ea[pi] + av(pi) * dp[wi];
            }
            ea[l.logits + n * classes + j] = R * gamma(d + 1) * mag + prop;
        }
    }
    let inv_b = 1.0 / batch as f64;
    for n in 0..batch {
        let z: Vec<f64> = (0..classes)
            .map(|j| ws.acts[l.logits + n * classes + j] as f64)
            .collect();
        let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread = z.iter().map(|v| (v - m).abs()).fold(0.0, f64::max);
        let ez = (0..classes)
            .map(|j| ea[l.logits + n * classes + j])
            .fold(0.0, f64::max);
        for (j, &zj) in z.iter().enumerate() {
            let i = l.logits + n * classes + j;
            let prob = ws.acts[l.probs + n * classes + j] as f64;
            let rel = 2.0 * ez + R * U * ((zj - m).abs() + spread + (classes + 6) as f64);
            ed[i] = inv_b * prob * rel + R * 2.0 * U * dv(i);
        }
    }
    for j in 0..classes {
        let (mut bmag, mut bprop) = (0.0, 0.0);
        for i in 0..d {
            let (mut mag, mut prop) = (0.0, 0.0);
            for n in 0..batch {
                let (di, pi) = (l.logits + n * classes + j, in_off + n * d + i);
                mag += dv(di) * av(pi);
                prop += ed[di] * av(pi) + dv(di) * ea[pi];
            }
            eg[pl.dense_w + j * d + i] = R * gamma(batch) * mag + prop;
        }
        for n in 0..batch {
            bmag += dv(l.logits + n * classes + j);
            bprop += ed[l.logits + n * classes + j];
        }
        eg[pl.dense_b + j] = R * gamma(batch) * bmag + bprop;
    }
    for n in 0..batch {
        for i in 0..d {
            let (mut mag, mut prop) = (0.0, 0.0);
            for j in 0..classes {
                let (di, wi) = (l.logits + n * classes + j, pl.dense_w + j * d + i);
                mag += dv(di) * pv(wi);
                prop += ed[di] * pv(wi) + dv(di) * dp[wi];
            }
            ed[in_off + n * d + i] = R * gamma(classes) * mag + prop;
        }
    }

    for b in (0..net.shapes.len()).rev() {
        let (s, o, a) = (&net.shapes[b], &pl.conv[b], l.blocks[b]);
        let (c_in, c_out, k) = (s.block.c_in, s.block.c_out, s.block.kernel);
        let (is, cs) = (s.in_side, s.conv_side);
        let in_off = if b == 0 {
            l.input
        } else {
            l.blocks[b - 1].pool
        };
        // Pool then ReLU backward: selections, exact.
        let pool_len = batch * c_out * s.pool_side * s.pool_side;
        for e in 0..pool_len {
            let w = ws.argmax[a.argmax + e] as usize;
            if ws.acts[a.conv + w] > 0.0 {
                ed[a.conv + w] = ed[a.pool + e];
            }
        }
        let n_sum = batch * cs * cs;
        for oc in 0..c_out {
            for c in 0..c_in {
                for r in 0..k {
                    for t in 0..k {
                        let (mut mag, mut prop) = (0.0, 0.0);
                        for n in 0..batch {
                            for y in 0..cs {
                                for x in 0..cs {
                                    let zi = a.conv + ((n * c_out + oc) * cs + y) * cs + x;
                                    let xi = in_off + ((n * c_in + c) * is + y + r) * is + x + t;
                                    mag += dv(zi) * av(xi);
                                    prop += ed[zi] * av(xi) + dv(zi) * ea[xi];
                                }
                            }
                        }
                        eg[o.w + ((oc * c_in + c) * k + r) * k + t] = R * gamma(n_sum) * mag + prop;
                    }
                }
            }
            let (mut mag, mut prop) = (0.0, 0.0);
            for n in 0..batch {
                for i in 0..cs * cs {
                    let zi = a.conv + (n * c_out + oc) * cs * cs + i;
                    mag += dv(zi);
                    prop += ed[zi];
                }
            }
            eg[o.b + oc] = R * gamma(n_sum) * mag + prop;
        }
        if b == 0 {
            break;
        }
        // The input gradient, scattered from each output delta to the pixels it read.
        let len = batch * c_in * is * is;
        let (mut mag, mut prop) = (vec![0.0f64; len], vec![0.0f64; len]);
        for n in 0..batch {
            for oc in 0..c_out {
                for y in 0..cs {
                    for x in 0..cs {
                        let zi = a.conv + ((n * c_out + oc) * cs + y) * cs + x;
                        for c in 0..c_in {
                            for r in 0..k {
                                for t in 0..k {
                                    let xi = ((n * c_in + c) * is + y + r) * is + x + t;
                                    let wi = o.w + ((oc * c_in + c) * k + r) * k + t;
                                    mag[xi] += dv(zi) * pv(wi);
                                    prop[xi] += ed[zi] * pv(wi) + dv(zi) * dp[wi];
                                }
                            }
                        }
                    }
                }
            }
        }
        for i in 0..len {
            ed[in_off + i] = R * gamma(c_out * k * k) * mag[i] + prop[i];
        }
    }
    (eg, near)
}

/// Trains the twin and the tuned trainer side by side with SGD and momentum; after every step
/// checks that no branch differs and every parameter is within the bound. Returns the worst
/// |difference| / bound after each step.
fn lock_step(net: Net, batch: usize, train: Samples, gemm: Gemm, steps: usize) -> Vec<f64> {
    let hyper = Hyper {
        lr: 0.05,
        optimiser: Optimiser::Sgd,
        momentum: 0.9,
    };
    let params = net.init_params(11);
    let n = params.len();
    let mut twin = CpuTrainer::new(net.clone(), hyper, params.clone(), batch, train.clone(), 5);
    let mut tuned = TunedTrainer::new(net.clone(), hyper, params, batch, train, 5, gemm);
    let (mut dp, mut dv) = (vec![0.0f64; n], vec![0.0f64; n]);
    let (lr, mu) = (hyper.lr as f64, hyper.momentum as f64);
    let mut worst = Vec::new();
    let mut near_total = 0;
    for step in 0..steps {
        let p_before = twin.params.clone();
        let v_before = twin.optimiser_state().0.to_vec();
        twin.step();
        tuned.step();
        let (eg, near) = grad_bound(&net, &p_before, twin.workspace(), &dp);
        let flips = branch_flips(twin.workspace(), tuned.workspace());
        assert_eq!(flips, 0, "step {}: ReLU or pool branches differ", step + 1);
        near_total += near;
        let v_now = twin.optimiser_state().0;
        let mut ratio = 0.0f64;
        for i in 0..n {
            let (v_new, p_new) = (v_now[i] as f64, twin.params[i] as f64);
            dv[i] = mu * dv[i] + eg[i] + R * U * ((mu * v_before[i] as f64).abs() + v_new.abs());
            dp[i] += lr * dv[i] + R * U * (lr * v_new.abs() + p_new.abs());
            let diff = (tuned.params[i] as f64 - p_new).abs();
            let r = if dp[i] > 0.0 {
                diff / dp[i]
            } else if diff == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            ratio = ratio.max(r);
        }
        assert!(
            ratio <= 1.0,
            "{}: step {}: ratio {ratio}",
            gemm.code(),
            step + 1
        );
        worst.push(ratio);
    }
    eprintln!(
        "  {near_total} branches within their bound of flipping over {steps} steps; none flipped"
    );
    worst
}

/// ReLU branches (z > 0) and pool winners that differ between the two trainers' last steps:
/// the bound assumes none do, so this is checked rather than assumed.
fn branch_flips(twin: &Workspace, tuned: &Workspace) -> usize {
    let mut flips = 0;
    for a in &twin.layout.blocks {
        let relu = (a.conv..a.relu).filter(|&i| (twin.acts[i] > 0.0) != (tuned.acts[i] > 0.0));
        flips += relu.count();
    }
    flips
        + twin
            .argmax
            .iter()
            .zip(&tuned.argmax)
            .filter(|(a, b)| a != b)
            .count()
}

fn check(name: &str, net: Net, batch: usize, train: Samples) {
    for &gemm in Gemm::ALL {
        let worst = lock_step(net.clone(), batch, train.clone(), gemm, 5);
        eprintln!(
            "{name}, {}: worst |tuned − twin| / bound after 1 step {:.3e}, after 5 steps {:.3e} \
             (every step: {})",
            gemm.code(),
            worst[0],
            worst[4],
            worst
                .iter()
                .map(|r| format!("{r:.3e}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
}

#[test]
fn tiny_odd_net_agrees_with_the_twin_within_the_bound() {
    // 13 → conv 3 → 11 → pool (odd: last row dropped) → 5 → conv 3 → 3 → pool → 1; 3 and 5
    // channels, 3 classes, batch 5.
    let blocks = vec![
        Block {
            c_in: 1,
            c_out: 3,
            kernel: 3,
        },
        Block {
            c_in: 3,
            c_out: 5,
            kernel: 3,
        },
    ];
    let net = Net::new(13, blocks, 3).expect("fits");
    check("tiny", net, 5, random_images(20, 13, 3, 21));
}

fn lenet() -> Net {
    let spec = cnn::Spec::default();
    spec.net().expect("the default fits")
}

#[test]
fn lenet_agrees_with_the_twin_within_the_bound() {
    check("LeNet", lenet(), 8, random_images(40, 28, 10, 22));
}

fn learn(hyper: Hyper, gemm: Gemm) -> (f32, f32, f32) {
    let net = small_net();
    let params = net.init_params(7);
    let mut t = TunedTrainer::new(net, hyper, params, 16, bars(200, 1), 3, gemm);
    let mut losses = Vec::new();
    for _ in 0..300 {
        t.step();
        assert!(t.last_loss.is_finite());
        losses.push(t.last_loss);
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    let eval = t.evaluate(&bars(100, 2));
    (mean(&losses[..10]), mean(&losses[290..]), eval.accuracy)
}

/// The twin's learning test (`tests/training.rs`), on the tuned trainer with each multiply.
#[test]
fn tuned_learns_bars_like_the_twin() {
    let sgd = Hyper {
        lr: 0.05,
        optimiser: Optimiser::Sgd,
        momentum: 0.9,
    };
    let adam = Hyper {
        lr: 0.01,
        optimiser: Optimiser::Adam,
        momentum: 0.0,
    };
    for &gemm in Gemm::ALL {
        for hyper in [sgd, adam] {
            let (first, last, accuracy) = learn(hyper, gemm);
            let name = format!("{} {}", gemm.code(), hyper.optimiser.code());
            eprintln!("{name}: loss {first} → {last}, test accuracy {accuracy}");
            assert!(last < 0.25 * first, "{name}: loss {first} → {last}");
            assert!(accuracy >= 0.95, "{name}: test accuracy {accuracy}");
        }
    }
}

/// The evaluation reports what the twin's does, within rounding.
#[test]
fn evaluation_matches_the_twin() {
    let net = small_net();
    let params = net.init_params(7);
    let hyper = Hyper {
        lr: 0.01,
        optimiser: Optimiser::Adam,
        momentum: 0.0,
    };
    let twin = CpuTrainer::new(net.clone(), hyper, params.clone(), 4, bars(8, 1), 3);
    let tuned = TunedTrainer::new(net, hyper, params, 4, bars(8, 1), 3, Gemm::best());
    // 300 samples: a full chunk of 256 and a short one.
    let test = bars(300, 4);
    let (a, b) = (twin.evaluate(&test), tuned.evaluate(&test));
    assert_eq!(a.predicted.len(), 300);
    assert!(
        (a.loss - b.loss).abs() <= 1e-5 * a.loss.abs(),
        "{a:?} {b:?}"
    );
    assert!((a.accuracy - b.accuracy).abs() <= 0.01);
    // The logits the page scores are the same forward passes: each row's first largest
    // logit is the class `evaluate` predicted, over both chunks.
    let logits = tuned.logits(&test);
    let k = tuned.net.classes;
    assert_eq!(logits.len(), 300 * k);
    let classes: Vec<u32> = logits
        .chunks_exact(k)
        .map(|z| {
            let mut best = 0;
            for (j, &v) in z.iter().enumerate() {
                if v > z[best] {
                    best = j;
                }
            }
            best as u32
        })
        .collect();
    assert_eq!(classes, b.predicted);
}

/// A benchmark, not a test: per-step time of the twin and the tuned trainer at the default
/// LeNet, batch 64 (this crate builds at opt-level 3 in dev too). Median of 5 steps after one
/// warm-up. It asserts nothing, so run as a test it only added a pass that could not fail;
/// ignored, the suite counts it as not run, and docs/benchmarks.md gives the command:
/// `cargo test -p cnn --release --test tuned -- --ignored --nocapture print_step_times`.
#[test]
#[ignore = "a benchmark: it asserts nothing (docs/benchmarks.md, tuned CPU per Gemm)"]
fn print_step_times_at_lenet_batch_64() {
    let net = lenet();
    let spec = cnn::Spec::default();
    let train = random_images(256, 28, 10, 23);
    let median = |mut step: Box<dyn FnMut()>| {
        step();
        let mut t: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                step();
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[2]
    };
    let p = net.init_params(1);
    let mut twin = CpuTrainer::new(net.clone(), spec.hyper(), p.clone(), 64, train.clone(), 1);
    let twin_ms = median(Box::new(move || twin.step()));
    let mut line = format!("LeNet batch 64, one core: twin {twin_ms:.1} ms/step");
    for &gemm in Gemm::ALL {
        let mut t = TunedTrainer::new(
            net.clone(),
            spec.hyper(),
            p.clone(),
            64,
            train.clone(),
            1,
            gemm,
        );
        let ms = median(Box::new(move || t.step()));
        line += &format!(
            ", tuned ({}) {ms:.1} ms/step ({:.1}× the twin, {:.2} GFLOP/s)",
            gemm.code(),
            twin_ms / ms,
            cnn::tuned::flops_per_step(&net, 64) / (ms * 1e6)
        );
    }
    eprintln!("{line}");
}
