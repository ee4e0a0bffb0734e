//! The tuned CPU trainer against the twin, at an odd shape (vocabulary 13, context 7, heads of
//! width 5), within bounds derived from the arithmetic:
//! - the trainers: along the twin's trajectory (60 steps in, attention no longer uniform),
//!   each of 4 steps from the twin's state on the same batch gives the same loss, gradient and
//!   parameters after Adam;
//! - the layers one at a time (the linear layer's three products, attention forward and
//!   backward, GELU forward and backward) from the same inputs, where the bound is tight enough to see a wrong product
//!   whose effect on the whole step hides under the step's bound.
//!
//! Its speed is a benchmark, not a test (`bench gpt-cpu`, docs/benchmarks.md).
//!
//! # The bound
//! The two trainers compute the same formulas in f32; the tuned one sums each matrix
//! product's terms (the linear layers' forward, input- and weight-gradient products and
//! attention's QKᵀ, P·V and their backward) in another order, and `matrixmultiply` may fuse
//! multiply-adds. Everything else runs the twin's own functions in the twin's order. A sum of
//! n products in any order, fused or not, is within γₙ·Σ|terms| of the exact sum
//! (γₙ = n·u/(1 − n·u), u = 2⁻²⁴), so a bound that holds for *every* order bounds each trainer's
//! distance from exact arithmetic, and the two are within twice that of each other.
//!
//! The bound is carried by running the twin's own generic code ([`gpt::Model::loss_and_grad`]
//! is generic over [`Real`]) on [`Err`]: a value (computed in f64) with a first-order bound on
//! how far an f32 computation of it, with its sums in any order, can be from exact arithmetic.
//! A sum is kept open — its terms counted (n) and their magnitudes added (Σ|terms|) — and is
//! charged γ_{n−1}·Σ|terms| for its additions when it is used (multiplied, divided, passed to
//! exp, ln, √, tanh, compared into a maximum), whatever their order; each product is charged
//! u·|product| (so a dot product gets the γₙ·Σ|terms| above). Adding two sums of two or more
//! terms each closes both first: in this model only dot products are reordered, and they only
//! add single products (and a bias) to their accumulator. exp, ln and tanh are charged 2u of
//! their result for the library's rounding, √ and ÷ u (correctly rounded); their inputs'
//! errors pass through their derivatives. Adam runs the same way, in the twin's formula, on the
//! carried gradient bounds. Each step starts both trainers from the twin's state (parameters
//! and Adam's moments, exact inputs to the bound); `lock_step` says why a bound carried over
//! several free-running steps is of no use with Adam.
//!
//! Products of two errors (~u²) are dropped (first order). A softmax's maximum is taken by value;
//! if the trainers pick different near-equal maxima the result changes only by rounding
//! (softmax does not depend on the shift), within the bound's charge for the shift's error.

use std::cmp::Ordering;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

use cpu_kernels::optim::{
    adam_corrections, BETA1, BETA2, EPSILON, ONE_MINUS_BETA1, ONE_MINUS_BETA2,
};
use gpt::data::{batch, BatchOrder};
use gpt::ops::{self, AttnShape};
use gpt::train::Trainer;
use gpt::tuned::{self, Gemm, Scratch, TunedTrainer};
use gpt::{Config, Model, Real};

const U: f64 = 1.0 / 16_777_216.0;

fn gamma(n: f64) -> f64 {
    n * U / (1.0 - n * U)
}

/// A value with a first-order bound on an f32 computation's distance from exact arithmetic:
/// `e` for everything up to the open sum, plus γ_{n−1}·`mag` for the open sum's own additions.
#[derive(Clone, Copy, Debug, Default)]
struct Err {
    v: f64,
    e: f64,
    /// Σ|terms| of the open sum (|v| for a single term).
    mag: f64,
    /// Terms in the open sum (0 for an exact zero, 1 for a single value).
    n: u32,
}

impl Err {
    fn exact(v: f64) -> Self {
        Self {
            v,
            e: 0.0,
            mag: v.abs(),
            n: u32::from(v != 0.0),
        }
    }
    fn with_err(v: f64, e: f64) -> Self {
        Self {
            v,
            e,
            mag: v.abs(),
            n: 1,
        }
    }
    /// The whole bound, the open sum's additions charged.
    fn bound(self) -> f64 {
        if self.n >= 2 {
            self.e + gamma(f64::from(self.n - 1)) * self.mag
        } else {
            self.e
        }
    }
    /// A single value carrying the whole bound.
    fn close(self) -> Self {
        Self::with_err(self.v, self.bound())
    }
    /// The result `v` of a function of `self` with derivative `d`, rounded within `r`·|v|.
    /// (An exact input passes no error, even where the derivative is infinite: √0.)
    fn apply(self, v: f64, d: f64, r: f64) -> Self {
        let e = self.bound();
        let passed = if e == 0.0 { 0.0 } else { d.abs() * e };
        Self::with_err(v, passed + r * U * v.abs())
    }
}

impl Add for Err {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        let (a, b) = if self.n >= 2 && o.n >= 2 {
            (self.close(), o.close())
        } else {
            (self, o)
        };
        Self {
            v: a.v + b.v,
            e: a.e + b.e,
            mag: a.mag + b.mag,
            n: a.n + b.n,
        }
    }
}
impl AddAssign for Err {
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl Neg for Err {
    type Output = Self;
    fn neg(self) -> Self {
        Self { v: -self.v, ..self }
    }
}
impl Sub for Err {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        self + -o
    }
}
impl Mul for Err {
    type Output = Self;
    fn mul(self, o: Self) -> Self {
        let v = self.v * o.v;
        Self::with_err(
            v,
            self.v.abs() * o.bound() + o.v.abs() * self.bound() + U * v.abs(),
        )
    }
}
impl Div for Err {
    type Output = Self;
    fn div(self, o: Self) -> Self {
        let v = self.v / o.v;
        Self::with_err(
            v,
            self.bound() / o.v.abs() + (v / o.v).abs() * o.bound() + U * v.abs(),
        )
    }
}
impl PartialEq for Err {
    fn eq(&self, o: &Self) -> bool {
        self.v == o.v
    }
}
impl PartialOrd for Err {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        self.v.partial_cmp(&o.v)
    }
}

impl Real for Err {
    /// A constant as the f32 code holds it (rounded to f32; both trainers hold the same).
    fn from_f64(x: f64) -> Self {
        Self::exact(x as f32 as f64)
    }
    fn to_f64(self) -> f64 {
        self.v
    }
    fn exp(self) -> Self {
        let v = self.v.exp();
        self.apply(v, v, 2.0)
    }
    fn ln(self) -> Self {
        self.apply(self.v.ln(), 1.0 / self.v, 2.0)
    }
    fn sqrt(self) -> Self {
        let v = self.v.sqrt();
        self.apply(v, 0.5 / v, 1.0)
    }
    fn tanh(self) -> Self {
        let v = self.v.tanh();
        self.apply(v, 1.0 - v * v, 2.0)
    }
}

/// Adam as `cpu_kernels::optim::adam_update` computes it, on carried bounds.
fn adam(lr: f32, step: u64, p: &mut [Err], g: &[Err], m: &mut [Err], v: &mut [Err]) {
    let (c1, c2) = adam_corrections(step);
    let k = |x: f32| Err::exact(f64::from(x));
    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
        *m = k(BETA1) * *m + k(ONE_MINUS_BETA1) * g;
        *v = k(BETA2) * *v + k(ONE_MINUS_BETA2) * g * g;
        *p = *p - k(lr) * (*m / k(c1)) / ((*v / k(c2)).sqrt() + k(EPSILON));
    }
}

/// Names-like documents over a vocabulary of `vocab` (0 is the boundary): seeded lengths
/// 1…context + 2 (some longer than the context, some shorter).
fn docs(count: usize, vocab: u32, context: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = cpu_kernels::data::SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            let len = 1 + (rng.next_u64() % (context as u64 + 2)) as usize;
            (0..len)
                .map(|_| 1 + (rng.next_u64() % u64::from(vocab - 1)) as u32)
                .collect()
        })
        .collect()
}

/// Trains the twin for `steps` steps; before each, the tuned trainer takes the twin's state
/// (parameters, Adam's moments), then both step on the same batch. Checks the loss and every
/// parameter after the step against twice the bound carried from exact inputs. Returns the
/// worst |tuned − twin| / bound per step (parameters, gradient and loss), and the largest |tuned − twin|
/// of a parameter after the same steps without the re-synchronisation (printed only: its
/// bound is not derived, see below).
///
/// Why re-synchronise: Adam divides by √v̂ + ε, so a gradient whose bound is not small
/// against the gradient itself (attention's backward at initialisation subtracts nearly equal
/// numbers: dS = P∘(dP − rowsum(P∘dP))) moves its parameter by up to 2·lr on a rounding
/// difference; carried into the next step's forward as an input error of that size, the
/// first-order bound grows past any use within two steps (it did: 10⁷ on the loss at step 2).
fn lock_step(
    cfg: Config,
    b: usize,
    lr: f32,
    gemm: Gemm,
    warm: usize,
    steps: usize,
) -> (Vec<(f64, f64)>, f32) {
    let model = Model::new(cfg).expect("valid shape");
    let train = docs(23, cfg.vocab as u32, cfg.context, 8);
    let seed = 17;
    let mut twin = Trainer::new(model.clone(), train.len(), b, lr, seed);
    let mut tuned = TunedTrainer::new(model.clone(), train.len(), b, lr, seed, gemm);
    let mut free = TunedTrainer::new(model.clone(), train.len(), b, lr, seed, gemm);
    assert_eq!(twin.params, tuned.params, "same initialisation");
    let mut order = BatchOrder::new(train.len(), seed);
    let mut worst = Vec::new();
    for step in 1..=(warm + steps) as u64 {
        let idx = order.next(b);
        if step <= warm as u64 {
            // The tuned trainer steps too, to draw the same batches as the twin.
            twin.step(&train);
            tuned.step(&train);
            free.step(&train);
            continue;
        }
        let (tokens, targets) = batch(&train, &idx, cfg.context);
        let exact = |x: &[f32]| -> Vec<Err> {
            x.iter()
                .map(|&x| Err::with_err(f64::from(x), 0.0))
                .collect()
        };
        let mut p = exact(&twin.params);
        let exact_before = p.clone();
        let (mut m, mut v) = (exact(twin.moments().0), exact(twin.moments().1));
        let (loss, g) = model.loss_and_grad(&p, &tokens, &targets, idx.len());
        adam(lr, step, &mut p, &g, &mut m, &mut v);
        tuned.sync_from(&twin);
        let (l_twin, l_tuned) = (twin.step(&train), tuned.step(&train));
        free.step(&train);
        // The gradient itself, before Adam: the twin's (recomputed: its step is this f32 call)
        // against the tuned trainer's last.
        let p_before: Vec<f32> = exact_before.iter().map(|e| e.v as f32).collect();
        let (_, g_twin) = model.loss_and_grad(&p_before, &tokens, &targets, idx.len());
        let mut g_ratio = 0.0f64;
        for (i, ((&a, &b), e)) in tuned.grads().iter().zip(&g_twin).zip(&g).enumerate() {
            let (diff, bound) = (f64::from(a - b).abs(), 2.0 * e.bound());
            let r = if diff == 0.0 { 0.0 } else { diff / bound };
            assert!(
                r <= 1.0,
                "{}: step {step}: gradient {i}: twin {b} tuned {a} (|Δ| {diff:e}, bound {bound:e})",
                gemm.code()
            );
            g_ratio = g_ratio.max(r);
        }
        let loss_ratio = f64::from(l_tuned - l_twin).abs() / (2.0 * loss.bound());
        let mut ratio = 0.0f64;
        for (i, pe) in p.iter().enumerate() {
            let bound = 2.0 * pe.bound();
            let diff = f64::from(tuned.params[i] - twin.params[i]).abs();
            let r = if diff == 0.0 { 0.0 } else { diff / bound };
            assert!(
                r <= 1.0,
                "{}: step {step}: parameter {i}: twin {} tuned {} (|Δ| {diff:e}, bound {bound:e})",
                gemm.code(),
                twin.params[i],
                tuned.params[i],
            );
            ratio = ratio.max(r);
        }
        assert!(
            loss_ratio <= 1.0,
            "{}: step {step}: loss twin {l_twin} tuned {l_tuned}, bound {:e}",
            gemm.code(),
            2.0 * loss.bound()
        );
        worst.push((ratio, g_ratio.max(loss_ratio)));
    }
    let drift = free
        .params
        .iter()
        .zip(&twin.params)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    (worst, drift)
}

#[test]
fn odd_shape_trains_like_the_twin_within_the_bound() {
    // Vocabulary 13, context 7, 3 heads of odd width 5 (width 15), 2 layers, 3 windows.
    let cfg = Config {
        vocab: 13,
        context: 7,
        width: 15,
        heads: 3,
        layers: 2,
    };
    for &gemm in Gemm::ALL {
        let (worst, drift) = lock_step(cfg, 3, 1e-2, gemm, 60, 4);
        eprintln!(
            "{}: worst |tuned − twin| / bound per step (parameters, gradient and loss): {}; without \
             re-synchronising, the largest parameter difference after 64 steps: {drift:e}",
            gemm.code(),
            worst
                .iter()
                .map(|(p, l)| format!("({p:.2e}, {l:.2e})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// `n` seeded values uniform on ±`scale`.
fn values(n: usize, scale: f32, seed: u64) -> Vec<f32> {
    let mut rng = cpu_kernels::data::SplitMix64::new(seed);
    (0..n).map(|_| rng.next_signed_unit() * scale).collect()
}

fn exact(x: &[f32]) -> Vec<Err> {
    x.iter()
        .map(|&x| Err::with_err(f64::from(x), 0.0))
        .collect()
}

/// |tuned − twin| ≤ 2·bound element by element; returns the worst ratio.
fn within(what: &str, gemm: Gemm, tuned: &[f32], twin: &[f32], bound: &[Err]) -> f64 {
    assert_eq!(tuned.len(), twin.len());
    let mut worst = 0.0f64;
    for (i, ((&a, &b), e)) in tuned.iter().zip(twin).zip(bound).enumerate() {
        let (diff, bound) = (f64::from(a - b).abs(), 2.0 * e.bound());
        let r = if diff == 0.0 { 0.0 } else { diff / bound };
        assert!(
            r <= 1.0,
            "{}: {what}[{i}]: twin {b} tuned {a} (|Δ| {diff:e}, bound {bound:e})",
            gemm.code()
        );
        worst = worst.max(r);
    }
    worst
}

/// The layers one at a time (and GELU, whose backward reuses the forward's tanh) from the same
/// inputs, where the bound starts from exact inputs
/// and is tight: a wrong product in attention's backward that the trainer-level test cannot
/// see (the key gradient's bound there carries the whole backward's error through
/// dS = P∘(dP − rowsum(P∘dP)), a difference of nearly equal numbers) fails here.
#[test]
fn layers_agree_with_the_twins_ops_within_the_bound() {
    // 2 sequences of 7, 3 heads of width 5; the linear layer 14 × 15 → 11.
    let sh = AttnShape {
        b: 2,
        t: 7,
        h: 3,
        hs: 5,
    };
    let (c, n) = (sh.h * sh.hs, sh.b * sh.t);
    // Scores of order 1, so the softmax is far from uniform.
    let qkv = values(n * 3 * c, 1.5, 31);
    let dy = values(n * c, 1.0, 32);
    let (qkv_e, dy_e) = (exact(&qkv), exact(&dy));
    let mut y_e = vec![Err::default(); n * c];
    let mut p_e = vec![Err::default(); sh.probs_len()];
    ops::attention(&qkv_e, sh, &mut y_e, &mut p_e);
    let mut dqkv_e = vec![Err::default(); n * 3 * c];
    ops::attention_backward(&qkv_e, &p_e, &dy_e, sh, &mut dqkv_e);
    let (mut y, mut p) = (vec![0.0f32; n * c], vec![0.0f32; sh.probs_len()]);
    ops::attention(&qkv, sh, &mut y, &mut p);
    let mut dqkv = vec![0.0f32; n * 3 * c];
    ops::attention_backward(&qkv, &p, &dy, sh, &mut dqkv);

    let (m, k) = (11, c);
    let x = values(n * k, 1.0, 33);
    let w = values(k * m, 0.3, 34);
    let bias = values(m, 0.1, 35);
    let dz = values(n * m, 1.0, 36);
    let mut z_e = vec![Err::default(); n * m];
    ops::linear(&exact(&x), &exact(&w), &exact(&bias), n, k, m, &mut z_e);
    let (mut dx_e, mut dw_e, mut db_e) = (
        vec![Err::default(); n * k],
        vec![Err::default(); k * m],
        vec![Err::default(); m],
    );
    let (x_e, w_e) = (exact(&x), exact(&w));
    ops::linear_backward(
        &x_e,
        &w_e,
        &exact(&dz),
        n,
        k,
        m,
        &mut dx_e,
        &mut dw_e,
        &mut db_e,
    );
    let mut z = vec![0.0f32; n * m];
    ops::linear(&x, &w, &bias, n, k, m, &mut z);
    let (mut dx, mut dw, mut db) = (vec![0.0f32; n * k], vec![0.0f32; k * m], vec![0.0f32; m]);
    ops::linear_backward(&x, &w, &dz, n, k, m, &mut dx, &mut dw, &mut db);

    // GELU over values where its curvature matters (±3).
    let u = values(n * 4 * c, 3.0, 37);
    let du = values(n * 4 * c, 1.0, 38);
    let mut gy_e = vec![Err::default(); u.len()];
    ops::gelu(&exact(&u), &mut gy_e);
    let mut gdx_e = vec![Err::default(); u.len()];
    ops::gelu_backward(&exact(&u), &exact(&du), &mut gdx_e);
    let (mut gy, mut gdx) = (vec![0.0f32; u.len()], vec![0.0f32; u.len()]);
    ops::gelu(&u, &mut gy);
    ops::gelu_backward(&u, &du, &mut gdx);
    let (mut ty, mut th, mut tdx) = (
        vec![0.0f32; u.len()],
        vec![0.0f32; u.len()],
        vec![0.0f32; u.len()],
    );
    tuned::gelu(&u, &mut ty, &mut th);
    tuned::gelu_backward(&u, &th, &du, &mut tdx);
    let gelu_worst = within("gelu y", Gemm::best(), &ty, &gy, &gy_e).max(within(
        "gelu dx",
        Gemm::best(),
        &tdx,
        &gdx,
        &gdx_e,
    ));
    eprintln!(
        "GELU (the twin's formula, tanh kept): worst |tuned − twin| / bound {gelu_worst:.2e}"
    );

    for &gemm in Gemm::ALL {
        let mut sc = Scratch::new();
        let (mut s_buf, mut head) = (vec![0.0f32; sh.t * sh.t], vec![0.0f32; sh.t * sh.hs]);
        let (mut ty, mut tp) = (vec![0.0f32; n * c], vec![0.0f32; sh.probs_len()]);
        tuned::attention(
            gemm, &mut sc, &mut s_buf, &mut head, &qkv, sh, &mut ty, &mut tp,
        );
        let mut tdqkv = vec![0.0f32; n * 3 * c];
        tuned::attention_backward(
            gemm, &mut sc, &mut s_buf, &mut head, &qkv, &p, &dy, sh, &mut tdqkv,
        );
        let mut tz = vec![0.0f32; n * m];
        tuned::linear(gemm, &mut sc, &x, &w, &bias, n, k, m, &mut tz);
        let (mut tdx, mut tdw, mut tdb) =
            (vec![0.0f32; n * k], vec![0.0f32; k * m], vec![0.0f32; m]);
        tuned::linear_backward(
            gemm, &mut sc, &x, &w, &dz, n, k, m, &mut tdx, &mut tdw, &mut tdb,
        );
        let worst = [
            within("attention y", gemm, &ty, &y, &y_e),
            within("attention probabilities", gemm, &tp, &p, &p_e),
            within("attention dqkv", gemm, &tdqkv, &dqkv, &dqkv_e),
            within("linear y", gemm, &tz, &z, &z_e),
            within("linear dx", gemm, &tdx, &dx, &dx_e),
            within("linear dW", gemm, &tdw, &dw, &dw_e),
            within("linear db", gemm, &tdb, &db, &db_e),
        ];
        eprintln!(
            "{}: worst |tuned − twin| / bound: attention y, P, dqkv {:.2e} {:.2e} {:.2e}; \
             linear y, dx, dW, db {:.2e} {:.2e} {:.2e} {:.2e}",
            gemm.code(),
            worst[0],
            worst[1],
            worst[2],
            worst[3],
            worst[4],
            worst[5],
            worst[6]
        );
    }
}
