//! Judging a GPU result against the CPU reference.
//!
//! A sum of K products computed in f32, in any order, is off from the exact value by at most
//! about K·u·Σ|terms| (u = 2⁻²⁴, the unit roundoff; Higham, "Accuracy and Stability of
//! Numerical Algorithms", §3.1). The bound therefore grows with the reduction length and with
//! the magnitudes involved, and a correct kernel can never trip it, whatever its summation
//! order; a wrong index or a missed edge guard is off by far more.

use crate::matmul::Reference;

/// How a kernel rounds, which sets the bound it is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Precision {
    /// f32 inputs, f32 products and sums (unit roundoff u = 2⁻²⁴).
    F32,
    /// Inputs stored as IEEE binary16 (u₁₆ = 2⁻¹¹), products and sums in f32: mixed
    /// precision. Rounding each input to f16 costs up to 2·u₁₆ relative per product,
    /// whatever K is; the f32 sum adds K·2⁻²⁴ as before. Inputs that become f16 subnormals
    /// lose up to 2⁻²⁵ absolute each, hence an absolute floor of K·2⁻²⁴·max|input|.
    F16Inputs,
    /// The Tensor Core stage's rule: inputs IEEE binary16, judged against the reference of the
    /// SAME rounded inputs ([`Precision::rounds_inputs_to_f16`]), so their rounding costs
    /// nothing here; a product of two f16 is exact in f32 (11 + 11 significant bits ≤ 24);
    /// the sums are f32 but may be done the matrix units' way: a few products and the
    /// accumulator aligned to the largest exponent with the bits below f32's last one cut
    /// off, and the total truncated rather than rounded (Fasi, Higham, Mikaitis and Pranesh,
    /// "Numerical behavior of NVIDIA tensor cores", PeerJ Computer Science, 2021). Truncation
    /// costs up to 2⁻²³ (twice u) of the largest term in each addition, and in the worst case
    /// each term's alignment and the sum's normalisation both cut: 2·K·2⁻²³ = 4·K·u of
    /// Σ|terms|. No absolute floor: f16 subnormals and their products are exact in f32.
    F16Products,
}

const U32: f64 = 1.0 / (1u64 << 24) as f64;
const U16: f64 = 1.0 / (1u64 << 11) as f64;

impl Precision {
    /// The relative bound (before the safety factor) for a reduction of length k.
    fn relative(self, k: f64) -> f64 {
        match self {
            Precision::F32 => k * U32,
            Precision::F16Inputs => (2.0 * U16 + U16 * U16) * (1.0 + k * U32) + k * U32,
            Precision::F16Products => 4.0 * k * U32,
        }
    }

    /// The absolute floor (before the safety factor) for a reduction of length k.
    fn absolute(self, k: f64, max_abs_input: f64) -> f64 {
        match self {
            Precision::F32 => 0.0,
            Precision::F16Inputs => k * U32 * max_abs_input,
            Precision::F16Products => 0.0,
        }
    }

    /// Whether the reference is computed from the inputs rounded to binary16 (what the kernel
    /// multiplied) rather than from the f32 inputs (the problem as posed).
    pub fn rounds_inputs_to_f16(self) -> bool {
        matches!(self, Precision::F16Products)
    }
}

/// The inputs a kernel's result is judged against: rounded to f16 where its precision says
/// the reference is of the rounded inputs ([`Precision::rounds_inputs_to_f16`]), else as
/// they are.
pub fn judged_inputs<'a>(
    precision: Precision,
    a: &'a [f32],
    b: &'a [f32],
) -> (std::borrow::Cow<'a, [f32]>, std::borrow::Cow<'a, [f32]>) {
    use std::borrow::Cow;
    if precision.rounds_inputs_to_f16() {
        (Cow::Owned(round_to_f16(a)), Cow::Owned(round_to_f16(b)))
    } else {
        (Cow::Borrowed(a), Cow::Borrowed(b))
    }
}

/// The inputs rounded to the nearest binary16 (ties to even) and back: exactly the values an
/// f16 kernel multiplies.
pub fn round_to_f16(v: &[f32]) -> Vec<f32> {
    use crate::data::{f16_bits_to_f32, f32_to_f16_bits};
    v.iter()
        .map(|&x| f16_bits_to_f32(f32_to_f16_bits(x)))
        .collect()
}

/// Safety factor over the first-order bound K·u: covers the rounding of the inputs themselves
/// when a kernel stores them in a narrower format, and fused vs unfused multiply-add.
const SAFETY: f64 = 2.0;

/// The outcome of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Every element is inside its bound; NaN or ∞ only where the reference is (or where
    /// the terms overflow f32).
    pub ok: bool,
    /// Largest |gpu − ref| / Σ|terms| over all elements: the error relative to the scale of
    /// the numbers summed, which stays meaningful where the result itself is near zero.
    pub max_rel_error: f64,
    /// The relative bound each element was held to (SAFETY·K·2⁻²⁴ for f32).
    pub rel_bound: f64,
    /// The first element outside its bound, if any: (index, gpu value, reference value).
    pub first_failure: Option<(usize, f32, f64)>,
    /// How many elements are outside their bound: with the first failure, it tells a
    /// wholly wrong result from a few wrong tiles or one bad edge.
    pub wrong: usize,
}

/// Compares `got` with `reference` element by element.
pub fn compare(got: &[f32], reference: &Reference, precision: Precision) -> Verdict {
    let k = reference.reduction_len.max(1) as f64;
    let rel_bound = SAFETY * precision.relative(k);
    let abs_floor = SAFETY * precision.absolute(k, reference.max_abs_input);
    let mut max_rel_error = 0f64;
    let mut first_failure = None;
    let mut wrong = 0;
    let len_ok = got.len() == reference.value.len();
    for (i, (&g, (&r, &mag))) in got
        .iter()
        .zip(reference.value.iter().zip(&reference.magnitude))
        .enumerate()
    {
        let err = (g as f64 - r).abs();
        // Where every term is zero the result must be exactly zero (up to the smallest
        // subnormal), so use a tiny absolute scale instead of dividing by zero.
        let scale = mag.max(f64::MIN_POSITIVE);
        let inside = if r.is_nan() {
            // A NaN input (or ∞ − ∞) makes NaN the right answer, and only NaN.
            g.is_nan()
        } else if r.is_infinite() {
            // An infinite input: the same infinity, sign included.
            g as f64 == r
        } else if !g.is_finite() {
            // The reference is finite: NaN or ∞ is right only where the terms are too
            // large for f32 (Σ|terms| past f32::MAX), so products or partial sums may overflow.
            mag > f32::MAX as f64
        } else {
            err <= rel_bound * mag + abs_floor
        };
        let rel = if g.is_finite() && r.is_finite() {
            err / scale
        } else if inside {
            0.0
        } else {
            f64::INFINITY
        };
        if rel > max_rel_error {
            max_rel_error = rel;
        }
        if !inside {
            wrong += 1;
            first_failure.get_or_insert((i, g, r));
        }
    }
    Verdict {
        ok: len_ok && first_failure.is_none(),
        max_rel_error,
        rel_bound,
        first_failure,
        wrong,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::{reference, MatmulSize};

    fn naive_f32(size: MatmulSize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f32;
                for p in 0..k {
                    acc += a[i * k + p] * b[p * n + j];
                }
                c[i * n + j] = acc;
            }
        }
        c
    }

    #[test]
    fn f32_sums_in_any_order_pass() {
        let size = MatmulSize::new(9, 11, 4099);
        let (a, b) = size.inputs(3);
        let r = reference(size, &a, &b);
        let forward = naive_f32(size, &a, &b);
        let v = compare(&forward, &r, Precision::F32);
        assert!(v.ok, "{v:?}");
        assert!(
            v.max_rel_error > 0.0,
            "f32 summation should round somewhere"
        );
    }

    #[test]
    fn f16_inputs_pass_the_f16_bound_but_not_the_f32_one() {
        use crate::data::{f16_bits_to_f32, f32_to_f16_bits};
        let size = MatmulSize::new(16, 16, 300);
        let (a, b) = size.inputs(2);
        let round = |v: &[f32]| -> Vec<f32> {
            v.iter()
                .map(|&x| f16_bits_to_f32(f32_to_f16_bits(x)))
                .collect()
        };
        let got = naive_f32(size, &round(&a), &round(&b));
        let r = reference(size, &a, &b);
        let v16 = compare(&got, &r, Precision::F16Inputs);
        assert!(v16.ok, "{v16:?}");
        assert!(
            !compare(&got, &r, Precision::F32).ok,
            "f16 rounding must show at f32's bound"
        );
    }

    /// An f32 sum that truncates (rounds toward zero) after every addition, as matrix units
    /// may: the worst the F16Products rule allows for.
    fn truncating_f32(size: MatmulSize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
        let toward_zero = |exact: f64| {
            let r = exact as f32;
            if (r as f64).abs() > exact.abs() {
                f32::from_bits(r.to_bits() - 1)
            } else {
                r
            }
        };
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f32;
                for p in 0..k {
                    // f16 × f16 is exact in f32; the addition truncates.
                    acc = toward_zero(acc as f64 + (a[i * k + p] * b[p * n + j]) as f64);
                }
                c[i * n + j] = acc;
            }
        }
        c
    }

    #[test]
    fn f16_products_are_judged_on_the_rounded_inputs() {
        let size = MatmulSize::new(16, 16, 1000);
        let (a, b) = size.inputs(5);
        let (a16, b16) = (round_to_f16(&a), round_to_f16(&b));
        let rounded = reference(size, &a16, &b16);
        let got = truncating_f32(size, &a16, &b16);
        let v = compare(&got, &rounded, Precision::F16Products);
        assert!(v.ok, "{v:?}");
        assert!(v.max_rel_error > 0.0);
        // Against the problem as posed (unrounded inputs) the error is larger, and within the
        // f16-inputs rule, which budgets for the inputs' rounding.
        let unrounded = reference(size, &a, &b);
        let posed = compare(&got, &unrounded, Precision::F16Inputs);
        assert!(posed.ok, "{posed:?}");
        assert!(posed.max_rel_error > v.max_rel_error, "{posed:?} vs {v:?}");
        // An element off by 1 % of its terms' scale (a lost term does that) fails.
        let mut wrong = got.clone();
        wrong[17] += (rounded.magnitude[17] * 1e-2) as f32;
        assert!(!compare(&wrong, &rounded, Precision::F16Products).ok);
        assert!(Precision::F16Products.rounds_inputs_to_f16());
        assert!(!Precision::F16Inputs.rounds_inputs_to_f16());
    }

    #[test]
    fn one_wrong_element_fails() {
        let size = MatmulSize::new(8, 8, 8);
        let (a, b) = size.inputs(1);
        let r = reference(size, &a, &b);
        let mut c = naive_f32(size, &a, &b);
        c[13] += 1e-3;
        let v = compare(&c, &r, Precision::F32);
        assert!(!v.ok);
        assert_eq!(v.first_failure.map(|f| f.0), Some(13));
    }

    #[test]
    fn nan_and_wrong_length_fail() {
        let size = MatmulSize::new(2, 2, 2);
        let (a, b) = size.inputs(1);
        let r = reference(size, &a, &b);
        let mut c = naive_f32(size, &a, &b);
        c[0] = f32::NAN;
        assert!(!compare(&c, &r, Precision::F32).ok);
        assert!(!compare(&c[..3], &r, Precision::F32).ok);
    }

    #[test]
    fn bound_scales_with_k() {
        let small = Reference {
            value: vec![0.0],
            magnitude: vec![1.0],
            reduction_len: 10,
            max_abs_input: 1.0,
        };
        let large = Reference {
            reduction_len: 1000,
            ..small.clone()
        };
        let a = compare(&[0.0], &small, Precision::F32).rel_bound;
        let b = compare(&[0.0], &large, Precision::F32).rel_bound;
        assert!((b / a - 100.0).abs() < 1e-9);
    }

    /// A one-row reference for inputs a·b (1×K times K×1).
    fn dot(a: &[f32], b: &[f32]) -> Reference {
        reference(MatmulSize::new(1, 1, a.len() as u32), a, b)
    }

    #[test]
    fn nan_is_right_exactly_where_the_reference_is_nan() {
        let with_nan = dot(&[1.0, f32::NAN, 2.0], &[1.0, 1.0, 1.0]);
        assert!(compare(&[f32::NAN], &with_nan, Precision::F32).ok);
        assert!(!compare(&[3.0], &with_nan, Precision::F32).ok);
        // ∞ − ∞ is NaN too.
        let inf_minus_inf = dot(&[f32::INFINITY, f32::INFINITY], &[1.0, -1.0]);
        assert!(compare(&[f32::NAN], &inf_minus_inf, Precision::F32).ok);
        assert!(!compare(&[f32::INFINITY], &inf_minus_inf, Precision::F32).ok);
        // A finite reference: NaN fails.
        let finite = dot(&[1.0, 2.0], &[3.0, 4.0]);
        assert!(!compare(&[f32::NAN], &finite, Precision::F32).ok);
    }

    #[test]
    fn infinity_must_match_in_sign() {
        let plus = dot(&[f32::INFINITY, 1.0], &[2.0, 1.0]);
        assert!(compare(&[f32::INFINITY], &plus, Precision::F32).ok);
        assert!(!compare(&[f32::NEG_INFINITY], &plus, Precision::F32).ok);
        assert!(!compare(&[f32::NAN], &plus, Precision::F32).ok);
        assert!(!compare(&[f32::MAX], &plus, Precision::F32).ok);
        let minus = dot(&[f32::INFINITY], &[-2.0]);
        assert!(compare(&[f32::NEG_INFINITY], &minus, Precision::F32).ok);
        // A finite reference inside f32's range: ∞ fails.
        let finite = dot(&[1e20, 1.0], &[1e10, 1.0]);
        assert!(!compare(&[f32::INFINITY], &finite, Precision::F32).ok);
    }

    #[test]
    fn overflow_is_accepted_only_past_f32s_range() {
        // 3e38 · 2 overflows f32 in the product: ∞ is what any f32 kernel gives.
        let huge = dot(&[3e38, 1.0], &[2.0, 1.0]);
        assert!(compare(&[f32::INFINITY], &huge, Precision::F32).ok);
        // Cancelling huge terms: f32 gives ∞ − ∞ = NaN (or the exact 1 in another order).
        let cancelling = dot(&[3e38, 1.0, -3e38], &[2.0, 1.0, 2.0]);
        assert!(compare(&[f32::NAN], &cancelling, Precision::F32).ok);
        assert!(compare(&[1.0], &cancelling, Precision::F32).ok);
    }

    #[test]
    fn cancellation_is_judged_against_the_sum_of_magnitudes() {
        // Exact result 1, Σ|terms| = 2e8 + 1: f32 in this order loses the 1 entirely.
        let a = [1e8f32, 1.0, -1e8];
        let b = [1.0f32; 3];
        let r = dot(&a, &b);
        let f32_order = (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2];
        assert_eq!(f32_order, 0.0, "the 1 is absorbed in f32");
        let v = compare(&[f32_order], &r, Precision::F32);
        assert!(v.ok, "{v:?}");
        // The bound is SAFETY·K·u·Σ|terms| = 2·3·2⁻²⁴·(2e8 + 1) ≈ 71.5: 72 away fails.
        let bound = 2.0 * 3.0 * (2e8 + 1.0) / (1u64 << 24) as f64;
        assert!(compare(&[(1.0 + bound * 0.99) as f32], &r, Precision::F32).ok);
        assert!(!compare(&[(1.0 + bound * 1.01) as f32], &r, Precision::F32).ok);
    }
}
