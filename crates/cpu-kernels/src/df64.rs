//! Double-float ("df64") values and the references the `fp64` lesson measures against.
//!
//! A df64 value is hi + lo with hi = f32(x) and lo = f32(x − hi): about 48 significant bits.
//! The GPU kernel (`shaders/df64_matmul.wgsl`) multiplies matrices of such pairs; its result
//! is judged against an almost exact product of the same values (f64 with error-free products
//! and compensated sums, error ≈ 2⁻¹⁰⁰ relative), so that errors near 2⁻⁴⁸ can be seen.

use crate::data::SplitMix64;
use crate::matmul::{MatmulSize, Reference};

/// x as (hi, lo).
pub fn split(x: f64) -> [f32; 2] {
    let hi = x as f32;
    [hi, (x - hi as f64) as f32]
}

pub fn join(p: [f32; 2]) -> f64 {
    p[0] as f64 + p[1] as f64
}

/// Seeded values uniform in [−1, 1) that are exactly representable as df64 pairs.
pub fn inputs(size: MatmulSize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix64::new(seed ^ 0xD0_0B1E);
    let mut gen = |len: usize| -> Vec<f64> {
        (0..len)
            .map(|_| {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                join(split(2.0 * u - 1.0))
            })
            .collect()
    };
    let a = gen(size.a_len());
    let b = gen(size.b_len());
    (a, b)
}

/// Two-sum in f64: s + e = x + y exactly.
fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let v = s - x;
    (s, (x - (s - v)) + (y - v))
}

/// The product of f64 matrices with every product split exactly (fma) and every sum
/// compensated: value and Σ|a·b| per element.
pub fn reference(size: MatmulSize, a: &[f64], b: &[f64]) -> Reference {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    let mut value = vec![0f64; m * n];
    let mut magnitude = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let (mut s, mut c, mut mag) = (0f64, 0f64, 0f64);
            for p in 0..k {
                let x = a[i * k + p];
                let y = b[p * n + j];
                let prod = x * y;
                let err = x.mul_add(y, -prod);
                let (s1, e1) = two_sum(s, prod);
                s = s1;
                c += e1 + err;
                mag += prod.abs();
            }
            value[i * n + j] = s + c;
            magnitude[i * n + j] = mag;
        }
    }
    Reference {
        value,
        magnitude,
        reduction_len: size.k,
        max_abs_input: a.iter().chain(b).fold(0f64, |m, v| m.max(v.abs())),
    }
}

/// Largest |got − exact| / Σ|a·b|.
pub fn max_rel_error(got: &[f64], reference: &Reference) -> f64 {
    crate::quant::rel_errors(got, reference).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_about_48_bits() {
        let x = std::f64::consts::PI;
        let p = split(x);
        assert_eq!(p[0], std::f32::consts::PI);
        // hi + lo misses π by at most half an ulp of lo: |lo| < 2⁻²³ · 2 so the gap < 2⁻⁴⁸ · 4.
        assert!((join(p) - x).abs() < 2f64.powi(-46));
        assert!((join(p) - x).abs() > 0.0 || p[1] != 0.0);
    }

    #[test]
    fn inputs_are_exact_pairs() {
        let (a, b) = inputs(MatmulSize::new(3, 4, 5), 1);
        for &v in a.iter().chain(&b) {
            assert_eq!(join(split(v)), v);
            assert!((-1.0..1.0).contains(&v));
        }
    }

    #[test]
    fn reference_by_hand() {
        // [1e16, 1, −1e16] · [1, 1, 1] = 1 exactly; a plain f64 sum gives 0.
        let s = MatmulSize::new(1, 1, 3);
        let r = reference(s, &[1e16, 1.0, -1e16], &[1.0, 1.0, 1.0]);
        assert_eq!(r.value[0], 1.0);
        assert_eq!(r.magnitude[0], 2e16 + 1.0);
    }
}

/// The kernel's arithmetic on the CPU, operation for operation in f32 (no fma, no
/// reassociation): what `shaders/df64_matmul.wgsl` computes when the compiler keeps every
/// rounding. Tests use it to tell an algorithm error from a compiler that simplified it.
pub mod twin {
    fn two_sum(x: f32, y: f32) -> (f32, f32) {
        let s = x + y;
        let v = s - x;
        (s, (x - (s - v)) + (y - v))
    }
    fn quick_two_sum(x: f32, y: f32) -> (f32, f32) {
        let s = x + y;
        (s, y - (s - x))
    }
    fn split(x: f32) -> (f32, f32) {
        let t = 4097.0 * x;
        let hi = t - (t - x);
        (hi, x - hi)
    }
    fn two_prod(x: f32, y: f32) -> (f32, f32) {
        let p = x * y;
        let (xh, xl) = split(x);
        let (yh, yl) = split(y);
        (p, ((xh * yh - p) + xh * yl + xl * yh) + xl * yl)
    }
    pub fn mul(x: [f32; 2], y: [f32; 2]) -> [f32; 2] {
        let (p, e) = two_prod(x[0], y[0]);
        let e = e + (x[0] * y[1] + x[1] * y[0]);
        let (s, t) = quick_two_sum(p, e);
        [s, t]
    }
    pub fn add(x: [f32; 2], y: [f32; 2]) -> [f32; 2] {
        let (s1, s2) = two_sum(x[0], y[0]);
        let (t1, t2) = two_sum(x[1], y[1]);
        let (r1, r2) = quick_two_sum(s1, s2 + t1);
        let (a, b) = quick_two_sum(r1, r2 + t2);
        [a, b]
    }
    /// C = A·B with the kernel's order of operations (k ascending).
    pub fn matmul(size: crate::matmul::MatmulSize, a: &[f64], b: &[f64]) -> Vec<f64> {
        let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
        let mut out = Vec::with_capacity(m * n);
        for i in 0..m {
            for j in 0..n {
                let mut acc = [0f32; 2];
                for p in 0..k {
                    acc = add(
                        acc,
                        mul(super::split(a[i * k + p]), super::split(b[p * n + j])),
                    );
                }
                out.push(super::join(acc));
            }
        }
        out
    }
}

#[cfg(test)]
mod twin_tests {
    use super::*;

    #[test]
    fn the_twin_reaches_2_to_the_minus_44() {
        for (m, n, k) in [(1, 1, 1), (5, 7, 3), (16, 16, 256)] {
            let size = MatmulSize::new(m, n, k);
            let (a, b) = inputs(size, 9);
            let e = max_rel_error(&twin::matmul(size, &a, &b), &reference(size, &a, &b));
            assert!(e <= 2f64.powi(-44), "{size:?}: 2^{:.1}", e.log2());
        }
    }
}
