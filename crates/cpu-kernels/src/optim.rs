//! The optimisers' CPU update, one copy for every model the app trains: SGD with momentum and
//! Adam over a flat parameter buffer, with the constants the kernels receive. Each update is
//! element-wise and its order of operations is the kernels' (`shaders/optim_sgd.wgsl`,
//! `shaders/optim_adam.wgsl`), so a twin and a GPU session that start from the same numbers stay
//! within a few roundings of each other.

pub const BETA1: f32 = 0.9;
pub const BETA2: f32 = 0.999;
/// 1 − β₁ and 1 − β₂ as f32 arithmetic gives them (0.999 is not exact in f32, so
/// `ONE_MINUS_BETA2` is 0.001 − 1.3e-8). Hand these to a kernel in its uniform: WGSL folds
/// `1.0 - 0.999` in abstract-float precision and would get the nearest f32 to 0.001 instead.
pub const ONE_MINUS_BETA1: f32 = 1.0 - BETA1;
pub const ONE_MINUS_BETA2: f32 = 1.0 - BETA2;
/// TensorFlow's default, so a comparison with tfjs trains the same thing.
pub const EPSILON: f32 = 1e-7;

/// Adam's bias corrections (1 − β₁ᵗ, 1 − β₂ᵗ) for step t ≥ 1: computed once per step in f64
/// and rounded, so the twin and the kernel divide by the same two numbers.
pub fn adam_corrections(t: u64) -> (f32, f32) {
    let t = t.clamp(1, i32::MAX as u64) as i32;
    (
        (1.0 - (BETA1 as f64).powi(t)) as f32,
        (1.0 - (BETA2 as f64).powi(t)) as f32,
    )
}

/// Adam's bias corrections for steps 1, 2, … ([`adam_corrections`]), up to the first step where
/// both are exactly 1.0 in f32 (step 17,331 or so); every later step uses that last entry, which
/// is what [`adam_corrections`] returns for it too. The GPU reads entry min(t, len − 1) for the
/// step after t completed steps, t being a step counter it keeps itself, so any number of steps
/// can go in one submission and still divide by the twin's numbers.
pub fn adam_correction_table() -> Vec<[f32; 2]> {
    let mut table = Vec::new();
    for t in 1..=(1u64 << 20) {
        let (c1, c2) = adam_corrections(t);
        table.push([c1, c2]);
        if c1 == 1.0 && c2 == 1.0 {
            break;
        }
    }
    table
}

/// SGD with momentum μ (plain SGD is μ = 0): v ← μ·v + g; p ← p − lr·v.
pub fn sgd_update(lr: f32, mu: f32, params: &mut [f32], grads: &[f32], velocity: &mut [f32]) {
    sgd_update_with(lr, mu, params, grads, velocity, |g, _| g);
}

/// [`sgd_update`] with the gradient each parameter uses computed from (g, p) by `grad`, e.g.
/// with a regularisation term added (the MLP's `regularised`).
pub fn sgd_update_with(
    lr: f32,
    mu: f32,
    params: &mut [f32],
    grads: &[f32],
    velocity: &mut [f32],
    grad: impl Fn(f32, f32) -> f32,
) {
    for ((p, &g), v) in params.iter_mut().zip(grads).zip(velocity) {
        let g = grad(g, *p);
        *v = mu * *v + g;
        *p -= lr * *v;
    }
}

/// Adam for the step `step` being completed (≥ 1): m ← β₁·m + (1 − β₁)·g;
/// v ← β₂·v + ((1 − β₂)·g)·g; p ← p − (lr·(m / c₁)) / (√(v / c₂) + ε).
pub fn adam_update(
    lr: f32,
    step: u64,
    params: &mut [f32],
    grads: &[f32],
    m: &mut [f32],
    v: &mut [f32],
) {
    adam_update_with(lr, step, EPSILON, params, grads, m, v, |g, _| g);
}

/// [`adam_update`] with ε given and the gradient each parameter uses computed from (g, p) by
/// `grad` (the MLP adds its regularisation there, and a test hands its twin a wrong ε).
#[allow(clippy::too_many_arguments)]
pub fn adam_update_with(
    lr: f32,
    step: u64,
    epsilon: f32,
    params: &mut [f32],
    grads: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    grad: impl Fn(f32, f32) -> f32,
) {
    let (c1, c2) = adam_corrections(step);
    for (((p, &g), m), v) in params.iter_mut().zip(grads).zip(m).zip(v) {
        let g = grad(g, *p);
        *m = BETA1 * *m + ONE_MINUS_BETA1 * g;
        *v = BETA2 * *v + ONE_MINUS_BETA2 * g * g;
        *p -= lr * (*m / c1) / ((*v / c2).sqrt() + epsilon);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_first_step_moves_each_parameter_by_about_lr() {
        // At t = 1 the corrections undo the moments' shrinkage: m/c₁ = g, v/c₂ = g², so the
        // step is lr·g/(|g| + ε) ≈ lr·sign(g).
        let mut p = vec![1.0f32, -2.0, 0.5];
        let g = [0.3f32, -4.0, 1e-3];
        let (mut m, mut v) = (vec![0.0; 3], vec![0.0; 3]);
        adam_update(0.01, 1, &mut p, &g, &mut m, &mut v);
        for ((&after, before), &g) in p.iter().zip([1.0f32, -2.0, 0.5]).zip(&g) {
            let moved = before - after;
            assert!(
                (moved - 0.01 * g.signum()).abs() < 1e-4,
                "{moved} for g = {g}"
            );
        }
    }

    #[test]
    fn adam_second_step_uses_both_moments() {
        // Two steps with gradients 1 then −1, by hand in f64.
        let mut p = vec![0.0f32];
        let (mut m, mut v) = (vec![0.0f32], vec![0.0f32]);
        adam_update(0.1, 1, &mut p, &[1.0], &mut m, &mut v);
        adam_update(0.1, 2, &mut p, &[-1.0], &mut m, &mut v);
        let (b1, b2) = (0.9f64, 0.999f64);
        let m2 = b1 * (1.0 - b1) - (1.0 - b1);
        let v2 = b2 * (1.0 - b2) + (1.0 - b2);
        let p1 = -0.1 * 1.0 / (1.0 + 1e-7);
        let p2 = p1 - 0.1 * (m2 / (1.0 - b1 * b1)) / ((v2 / (1.0 - b2 * b2)).sqrt() + 1e-7);
        assert!((p[0] as f64 - p2).abs() < 1e-6, "{} vs {p2}", p[0]);
    }

    #[test]
    fn the_correction_table_ends_where_both_corrections_are_one() {
        let table = adam_correction_table();
        assert_eq!(table[0], {
            let (a, b) = adam_corrections(1);
            [a, b]
        });
        let last = table.len() as u64;
        assert_eq!(table[last as usize - 1], [1.0, 1.0]);
        assert_ne!(table[last as usize - 2], [1.0, 1.0]);
        assert_eq!(adam_corrections(last + 1000), (1.0, 1.0));
        for (t, c) in table.iter().enumerate().step_by(997) {
            let (a, b) = adam_corrections(t as u64 + 1);
            assert_eq!(*c, [a, b], "step {}", t + 1);
        }
    }

    #[test]
    fn sgd_momentum_accumulates() {
        let mut p = vec![0.0f32];
        let mut vel = vec![0.0f32];
        sgd_update(0.5, 0.9, &mut p, &[1.0], &mut vel);
        sgd_update(0.5, 0.9, &mut p, &[1.0], &mut vel);
        // v: 1, then 1.9; p: −0.5, then −0.5 − 0.95.
        assert_eq!(vel[0], 1.9);
        assert!((p[0] + 1.45).abs() < 1e-6);
    }
}
