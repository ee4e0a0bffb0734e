//! The tuned trainer against the twin, with a bound derived from the arithmetic.
//!
//! Both trainers compute the same formulas; they differ in the order of every sum (and the
//! matrix multiply may fuse multiply-adds). So neither equals the exact result, but each is
//! within a running-error bound of it, propagated in f64 through the step:
//!
//! - a sum of n products in any order, with or without FMA: |ŝ − s| ≤ γₙ·Σ|terms|,
//!   γₙ = n·u / (1 − n·u), u = 2⁻²⁴; plus Σ|coefficient|·(error of the inputs);
//! - an activation: Lipschitz constant × input error + its own rounding (tanh, sigmoid ≤ 6u
//!   relative); its derivative f′(a) from an output off by e: tanh 2e, sigmoid e, + 4u;
//! - softmax: relative error ≤ 2·max|Δz| + u·(|z_c − m| + max|z_j − m|) + (classes + 2)·u.
//!
//! The bound is computed per gradient element, from the exact (f64) values of the same step.
//! Each trainer must lie within it of the f64 step, so they lie within twice it of each other.
//! ReLU is left out: f′ jumps at 0, so a pre-activation rounded across 0 changes a delta by a
//! whole term, which no rounding bound covers (tanh and sigmoid have smooth derivatives).

use super::*;
use crate::data::{Dataset, Feature};
use crate::net::{batch_indices, batch_order, Activation, CpuTrainer, LossKind, Optimiser};

const U: f64 = 1.0 / 16_777_216.0;

fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu)
}

fn act64(a: Activation, z: f64) -> f64 {
    match a {
        Activation::Linear => z,
        Activation::Relu => z.max(0.0),
        Activation::Tanh => z.clamp(-15.0, 15.0).tanh(),
        Activation::Sigmoid => 1.0 / (1.0 + (-z.clamp(-30.0, 30.0)).exp()),
    }
}

fn deriv64(a: Activation, out: f64) -> f64 {
    match a {
        Activation::Linear => 1.0,
        Activation::Relu => f64::from(u8::from(out > 0.0)),
        Activation::Tanh => 1.0 - out * out,
        Activation::Sigmoid => out * (1.0 - out),
    }
}

/// (Lipschitz constant of f, relative rounding of f, Lipschitz constant of f′ in terms of the
/// output, absolute rounding of f′).
fn act_consts(a: Activation) -> (f64, f64, f64, f64) {
    match a {
        Activation::Linear => (1.0, 0.0, 0.0, 0.0),
        Activation::Tanh => (1.0, 6.0 * U, 2.0, 4.0 * U),
        Activation::Sigmoid => (0.25, 6.0 * U, 1.0, 4.0 * U),
        Activation::Relu => panic!("ReLU has no rounding bound (see the module comment)"),
    }
}

/// The exact gradient of one step (the whole effective batch `x`, `y`; `inv_b` the f32 scale
/// both trainers use) and, per element, the bound on a trainer's distance from it.
fn exact_and_bound(
    net: &Net,
    params: &[f32],
    x: &[f32],
    y: &[u32],
    inv_b: f32,
) -> (Vec<f64>, Vec<f64>) {
    let layout = net.layout();
    let depth = net.depth();
    let rows = y.len();
    let p: Vec<f64> = params.iter().map(|&v| v as f64).collect();
    let mut grad = vec![0.0f64; p.len()];
    // Σ over samples of |δ|·|a| (with their errors) and of the propagated input errors.
    let mut mag = vec![0.0f64; p.len()];
    let mut prop = vec![0.0f64; p.len()];
    let inv_b = inv_b as f64;
    for b in 0..rows {
        // Forward: values and error bounds per layer.
        let mut a: Vec<Vec<f64>> = vec![x[b * net.inputs()..(b + 1) * net.inputs()]
            .iter()
            .map(|&v| v as f64)
            .collect()];
        let mut ea: Vec<Vec<f64>> = vec![vec![0.0; net.inputs()]];
        for l in 1..=depth {
            let lo = layout.layers[l - 1];
            let act = net.activation_of(l);
            let (lip, rnd, _, _) = act_consts(act);
            let (mut out, mut err) = (Vec::new(), Vec::new());
            for n in 0..lo.fan_out {
                let w = &p[lo.w_off + n * lo.fan_in..][..lo.fan_in];
                let bias = p[lo.b_off + n];
                let z: f64 = w.iter().zip(&a[l - 1]).map(|(w, a)| w * a).sum::<f64>() + bias;
                let terms: f64 = w
                    .iter()
                    .zip(a[l - 1].iter().zip(&ea[l - 1]))
                    .map(|(w, (a, e))| w.abs() * (a.abs() + e))
                    .sum::<f64>()
                    + bias.abs();
                let inherited: f64 = w.iter().zip(&ea[l - 1]).map(|(w, e)| w.abs() * e).sum();
                let ez = gamma(lo.fan_in + 1) * terms + inherited;
                let v = act64(act, z);
                out.push(v);
                err.push(lip * ez + rnd * v.abs());
            }
            a.push(out);
            ea.push(err);
        }
        // Loss gradient on the logits.
        let z = &a[depth];
        let ez = &ea[depth];
        let classes = z.len();
        let max_ez = ez.iter().copied().fold(0.0, f64::max);
        let (mut d, mut ed) = (vec![0.0; classes], vec![0.0; classes]);
        match net.loss {
            LossKind::CrossEntropy => {
                let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = z.iter().map(|v| (v - m).exp()).sum();
                let spread = z.iter().map(|v| (v - m).abs()).fold(0.0, f64::max);
                for c in 0..classes {
                    let pc = (z[c] - m).exp() / s;
                    let t = f64::from(u8::from(c == y[b] as usize));
                    let ep = pc
                        * (2.0 * max_ez
                            + U * ((z[c] - m).abs() + spread)
                            + (classes as f64 + 2.0) * U);
                    d[c] = (pc - t) * inv_b;
                    ed[c] = inv_b * (ep + 2.0 * U * (pc - t).abs());
                }
            }
            LossKind::Mse => {
                for c in 0..classes {
                    let t = f64::from(u8::from(c == y[b] as usize));
                    d[c] = (z[c] - t) * inv_b;
                    ed[c] = inv_b * (ez[c] + 2.0 * U * (z[c] - t).abs());
                }
            }
            LossKind::Regression => panic!("the bound test uses the classification losses"),
        }
        // Backward.
        for l in (1..=depth).rev() {
            let lo = layout.layers[l - 1];
            let (ap, eap) = (&a[l - 1], &ea[l - 1]);
            for n in 0..lo.fan_out {
                for k in 0..lo.fan_in {
                    let i = lo.w_off + n * lo.fan_in + k;
                    grad[i] += d[n] * ap[k];
                    mag[i] += (d[n].abs() + ed[n]) * (ap[k].abs() + eap[k]);
                    prop[i] += ed[n] * (ap[k].abs() + eap[k]) + d[n].abs() * eap[k];
                }
                let i = lo.b_off + n;
                grad[i] += d[n];
                mag[i] += d[n].abs() + ed[n];
                prop[i] += ed[n];
            }
            if l > 1 {
                let act = net.activation_of(l - 1);
                let (_, _, dlip, drnd) = act_consts(act);
                let (mut dn, mut edn) = (Vec::new(), Vec::new());
                for k in 0..lo.fan_in {
                    let col = |n: usize| p[lo.w_off + n * lo.fan_in + k];
                    let s: f64 = (0..lo.fan_out).map(|n| d[n] * col(n)).sum();
                    let terms: f64 = (0..lo.fan_out)
                        .map(|n| (d[n].abs() + ed[n]) * col(n).abs())
                        .sum();
                    let inherited: f64 = (0..lo.fan_out).map(|n| ed[n] * col(n).abs()).sum();
                    let es = gamma(lo.fan_out) * terms + inherited;
                    let f = deriv64(act, ap[k]);
                    let ef = dlip * eap[k] + drnd;
                    dn.push(s * f);
                    edn.push(es * f.abs() + (s.abs() + es) * ef + U * (s * f).abs());
                }
                d = dn;
                ed = edn;
            }
        }
    }
    let g = gamma(rows);
    let bound = mag.iter().zip(&prop).map(|(m, e)| g * m + e).collect();
    (grad, bound)
}

struct Case {
    sizes: Vec<usize>,
    activation: Activation,
    loss: LossKind,
    batch: usize,
    accum: usize,
    optimiser: Optimiser,
}

fn trainers(c: &Case, gemm: Gemm) -> (CpuTrainer, TunedTrainer, Vec<f32>, Vec<u32>, Vec<u32>) {
    let net = Net {
        sizes: c.sizes.clone(),
        activation: c.activation,
        loss: c.loss,
    };
    let hyper = Hyper {
        lr: 0.05,
        optimiser: c.optimiser,
        l1: 0.001,
        l2: 0.002,
    };
    let pts = Dataset::Spiral.generate(300, 0.1, 5);
    let x = pts.features(&[Feature::X, Feature::Y]);
    let order = batch_order(pts.len(), 5);
    let params = net.init_params(5);
    let mut twin = CpuTrainer::new(
        net.clone(),
        hyper,
        params.clone(),
        c.batch,
        x.clone(),
        pts.label.clone(),
        order.clone(),
    );
    twin.accum = c.accum;
    let mut tuned = TunedTrainer::new(
        net,
        hyper,
        params,
        c.batch,
        x.clone(),
        pts.label.clone(),
        order.clone(),
        gemm,
    );
    tuned.accum = c.accum;
    (twin, tuned, x, pts.label, order)
}

/// Runs `steps` steps in lock step (the tuned trainer restarted from the twin's point before
/// each) and counts the elements outside the bound: gradients (both trainers against the
/// exact step, and against each other) and, for SGD and momentum, the parameters after the
/// update.
fn violations(c: &Case, gemm: Gemm, steps: usize, break_bias: bool) -> usize {
    let (mut twin, mut tuned, x, labels, order) = trainers(c, gemm);
    if break_bias {
        tuned.bias_input = 0.99;
    }
    let mut bad = 0;
    for _ in 0..steps {
        let (m, v) = twin.optimiser_state();
        tuned.set_state(&twin.params, m, v, twin.step);
        let before = twin.params.clone();
        let k = c.accum;
        let (mut bx, mut by) = (Vec::new(), Vec::new());
        for j in 0..k {
            for i in batch_indices(&order, twin.step * k as u64 + j as u64, c.batch) {
                let i = i as usize;
                bx.extend_from_slice(&x[i * 2..i * 2 + 2]);
                by.push(labels[i]);
            }
        }
        let inv_b = 1.0 / (k * c.batch) as f32;
        let (exact, bound) = exact_and_bound(&twin.net, &before, &bx, &by, inv_b);
        twin.step();
        tuned.step();
        for i in 0..exact.len() {
            let (gt, gu) = (twin.grads()[i] as f64, tuned.grads()[i] as f64);
            if (gt - exact[i]).abs() > bound[i]
                || (gu - exact[i]).abs() > bound[i]
                || (gt - gu).abs() > 2.0 * bound[i]
            {
                bad += 1;
            }
        }
        if c.optimiser != Optimiser::Adam {
            // m' = μm + g (+ the same regularisation term), p' = p − lr·m': a gradient
            // difference passes through scaled by lr; each side rounds m' and p' once more.
            let lr = twin.hyper.lr as f64;
            let (m_after, _) = twin.optimiser_state();
            for i in 0..exact.len() {
                let (mt, p) = (m_after[i].abs() as f64, before[i].abs() as f64);
                let dm = 1.01 * 2.0 * bound[i] + 4.0 * U * (mt + exact[i].abs());
                let dp = 1.01 * lr * dm + 4.0 * U * (p + lr * mt);
                if (twin.params[i] as f64 - tuned.params[i] as f64).abs() > dp {
                    bad += 1;
                }
            }
        }
    }
    bad
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
            batch: 64,
            accum: 1,
            optimiser: Optimiser::Sgd,
        },
        Case {
            sizes: vec![2, 40, 24, 3],
            activation: Activation::Sigmoid,
            loss: LossKind::Mse,
            batch: 100,
            accum: 1,
            optimiser: Optimiser::Momentum,
        },
        Case {
            sizes: vec![2, 70, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
            batch: 33,
            accum: 2,
            optimiser: Optimiser::Adam,
        },
        Case {
            // Past one K block (256) of the SIMD kernel in layer 2's forward multiply, and past one
            // N block (256) in its delta multiply.
            sizes: vec![2, 300, 20, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
            batch: 70,
            accum: 1,
            optimiser: Optimiser::Sgd,
        },
    ]
}

#[test]
fn matches_the_twin_within_the_rounding_bound_for_every_multiply() {
    for gemm in Gemm::ALL {
        for c in cases() {
            let steps = if c.sizes[1] > 100 { 2 } else { 5 };
            let bad = violations(&c, *gemm, steps, false);
            assert_eq!(
                bad, 0,
                "{gemm:?} {:?}: {bad} elements outside the bound",
                c.sizes
            );
        }
    }
}

#[test]
fn a_wrong_bias_rule_is_caught() {
    // Bias gradients 1 % too small: far above rounding, and the comparison must say so.
    for gemm in Gemm::ALL {
        let c = &cases()[0];
        assert!(
            violations(c, *gemm, 1, true) > 0,
            "{gemm:?}: wrong bias not noticed"
        );
    }
}

#[test]
fn the_bound_is_not_vacuous() {
    // The bound must be far below the gradients themselves, or any trainer would pass.
    let c = &cases()[0];
    let (twin, ..) = trainers(c, Gemm::best());
    let pts = Dataset::Spiral.generate(300, 0.1, 5);
    let x = pts.features(&[Feature::X, Feature::Y]);
    let (exact, bound) = exact_and_bound(
        &twin.net,
        &twin.params,
        &x[..128],
        &pts.label[..64],
        1.0 / 64.0,
    );
    let g: f64 = exact.iter().map(|v| v.abs()).sum();
    let b: f64 = bound.iter().sum();
    assert!(b < 1e-4 * g, "bound {b} against gradient {g}");
}

#[test]
fn flops_count_every_multiply() {
    let net = Net {
        sizes: vec![2, 256, 256, 2],
        activation: Activation::Relu,
        loss: LossKind::CrossEntropy,
    };
    // Forward 2·B·(512 + 65536 + 512), dW the same, deltas for layers 2 and 3 only.
    let b = 4096.0;
    let expect = 2.0 * b * (2.0 * 66560.0 + 65536.0 + 512.0);
    assert_eq!(flops_per_step(&net, 4096), expect);
    assert!(
        (expect / 1e9 - 1.6).abs() < 0.05,
        "the crossover goal point's ≈ 1.6 GFLOP"
    );
}
