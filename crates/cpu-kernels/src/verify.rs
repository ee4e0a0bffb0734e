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
}

const U32: f64 = 1.0 / (1u64 << 24) as f64;
const U16: f64 = 1.0 / (1u64 << 11) as f64;

impl Precision {
    /// The relative bound (before the safety factor) for a reduction of length k.
    fn relative(self, k: f64) -> f64 {
        match self {
            Precision::F32 => k * U32,
            Precision::F16Inputs => (2.0 * U16 + U16 * U16) * (1.0 + k * U32) + k * U32,
        }
    }

    /// The absolute floor (before the safety factor) for a reduction of length k.
    fn absolute(self, k: f64, max_abs_input: f64) -> f64 {
        match self {
            Precision::F32 => 0.0,
            Precision::F16Inputs => k * U32 * max_abs_input,
        }
    }
}

/// Safety factor over the first-order bound K·u: covers the rounding of the inputs themselves
/// when a kernel stores them in a narrower format, and fused vs unfused multiply-add.
const SAFETY: f64 = 2.0;

/// The outcome of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Every element is inside its bound (and finite).
    pub ok: bool,
    /// Largest |gpu − ref| / Σ|terms| over all elements: the error relative to the scale of
    /// the numbers summed, which stays meaningful where the result itself is near zero.
    pub max_rel_error: f64,
    /// The relative bound each element was held to (SAFETY·K·2⁻²⁴ for f32).
    pub rel_bound: f64,
    /// The first element outside its bound, if any: (index, gpu value, reference value).
    pub first_failure: Option<(usize, f32, f64)>,
}

/// Compares `got` with `reference` element by element.
pub fn compare(got: &[f32], reference: &Reference, precision: Precision) -> Verdict {
    let k = reference.reduction_len.max(1) as f64;
    let rel_bound = SAFETY * precision.relative(k);
    let abs_floor = SAFETY * precision.absolute(k, reference.max_abs_input);
    let mut max_rel_error = 0f64;
    let mut first_failure = None;
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
        let rel = if g.is_finite() {
            err / scale
        } else {
            f64::INFINITY
        };
        if rel > max_rel_error {
            max_rel_error = rel;
        }
        // Written so that NaN and ∞ count as outside the bound.
        let inside = g.is_finite() && err <= rel_bound * mag + abs_floor;
        if !inside && first_failure.is_none() {
            first_failure = Some((i, g, r));
        }
    }
    Verdict {
        ok: len_ok && first_failure.is_none(),
        max_rel_error,
        rel_bound,
        first_failure,
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
}
