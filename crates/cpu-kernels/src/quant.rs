//! Symmetric per-tensor INT8 quantisation and the exact integer product (the `int8` lesson).
//!
//! scale = max|x| / 127; q = round(x / scale) (ties to even), so the largest value maps to ±127
//! and every q lies in −127..=127. The product of two quantised matrices is computed exactly in
//! integers; C ≈ scale_a · scale_b · (Aq · Bq).

use crate::matmul::{MatmulSize, Reference};

/// A tensor quantised to int8 with one scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantised {
    pub scale: f32,
    pub q: Vec<i8>,
}

/// max|x| / 127; 1 when every value is zero (any scale represents zeros exactly).
pub fn scale_of(x: &[f32]) -> f32 {
    let m = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    if m > 0.0 && m.is_finite() {
        m / 127.0
    } else {
        1.0
    }
}

pub fn quantise(x: &[f32]) -> Quantised {
    let scale = scale_of(x);
    let q = x
        .iter()
        .map(|&v| (v / scale).round_ties_even().clamp(-127.0, 127.0) as i8)
        .collect();
    Quantised { scale, q }
}

/// Words per packed row for a reduction length k: ceil(k / 4).
pub fn words(k: usize) -> usize {
    k.div_ceil(4)
}

fn pack4(v: [i8; 4]) -> u32 {
    u32::from_le_bytes(v.map(|x| x as u8))
}

/// A (rows × k, row-major) packed row by row, four values per word, lane 0 in the low byte,
/// zeros past k.
pub fn pack_rows(q: &[i8], rows: usize, k: usize) -> Vec<u32> {
    let kw = words(k);
    let mut out = Vec::with_capacity(rows * kw);
    for r in 0..rows {
        for w in 0..kw {
            let mut v = [0i8; 4];
            for (l, x) in v.iter_mut().enumerate() {
                let kk = 4 * w + l;
                if kk < k {
                    *x = q[r * k + kk];
                }
            }
            out.push(pack4(v));
        }
    }
    out
}

/// B (k × cols, row-major) packed column by column (the layout `int8_matmul.wgsl` reads).
pub fn pack_cols(q: &[i8], k: usize, cols: usize) -> Vec<u32> {
    let kw = words(k);
    let mut out = Vec::with_capacity(cols * kw);
    for j in 0..cols {
        for w in 0..kw {
            let mut v = [0i8; 4];
            for (l, x) in v.iter_mut().enumerate() {
                let kk = 4 * w + l;
                if kk < k {
                    *x = q[kk * cols + j];
                }
            }
            out.push(pack4(v));
        }
    }
    out
}

/// The exact integer product Aq · Bq (accumulated in i64; every value fits i32 for k ≤ 133,000).
pub fn int_matmul(size: MatmulSize, a: &[i8], b: &[i8]) -> Vec<i64> {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    let mut c = vec![0i64; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = a[i * k + p] as i64;
            if x == 0 {
                continue;
            }
            for j in 0..n {
                c[i * n + j] += x * b[p * n + j] as i64;
            }
        }
    }
    c
}

/// scale_a · scale_b · C, in f64.
pub fn dequantise(c: &[i64], scale_a: f32, scale_b: f32) -> Vec<f64> {
    let s = scale_a as f64 * scale_b as f64;
    c.iter().map(|&v| v as f64 * s).collect()
}

/// Largest and mean |got − exact| / Σ|a·b| over the elements (the measure the `precision` lesson uses).
pub fn rel_errors(got: &[f64], reference: &Reference) -> (f64, f64) {
    let mut max = 0f64;
    let mut sum = 0f64;
    for (g, (v, m)) in got
        .iter()
        .zip(reference.value.iter().zip(&reference.magnitude))
    {
        let e = (g - v).abs() / m.max(f64::MIN_POSITIVE);
        max = max.max(e);
        sum += e;
    }
    (max, sum / got.len().max(1) as f64)
}

/// Per element, the most quantisation can move it, relative to Σ|a·b|: rounding moves each
/// value by at most half a step, so |ΔC| ≤ (s_b/2)·Σ|a| + (s_a/2)·Σ|b| + K·s_a·s_b/4. The
/// largest of these ratios over the elements.
pub fn error_bound(size: MatmulSize, a: &[f32], b: &[f32], scale_a: f32, scale_b: f32) -> f64 {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    let (sa, sb) = (scale_a as f64, scale_b as f64);
    let mut worst = 0f64;
    for i in 0..m {
        let row_abs: f64 = (0..k).map(|p| a[i * k + p].abs() as f64).sum();
        for j in 0..n {
            let mut col_abs = 0f64;
            let mut mag = 0f64;
            for p in 0..k {
                let bv = b[p * n + j].abs() as f64;
                col_abs += bv;
                mag += a[i * k + p].abs() as f64 * bv;
            }
            let bound = sb / 2.0 * row_abs + sa / 2.0 * col_abs + k as f64 * sa * sb / 4.0;
            worst = worst.max(bound / mag.max(f64::MIN_POSITIVE));
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::reference;

    #[test]
    fn scale_and_rounding_by_hand() {
        // max|x| = 2.54 → scale 0.02; 1.0 / 0.02 = 50; −2.54 → −127; 0.01 / 0.02 = 0.5 → 0 (even).
        let q = quantise(&[1.0, -2.54, 0.01, 0.03]);
        assert!((q.scale - 0.02).abs() < 1e-9);
        assert_eq!(q.q, vec![50, -127, 0, 2]);
        assert_eq!(quantise(&[0.0, 0.0]).scale, 1.0);
        assert_eq!(quantise(&[0.0, 0.0]).q, vec![0, 0]);
    }

    #[test]
    fn packing_by_hand() {
        // Row [1, −1, 2, −2, 3] → words 0xFE02FF01 and 0x00000003.
        assert_eq!(
            pack_rows(&[1, -1, 2, -2, 3], 1, 5),
            vec![0xFE02_FF01, 0x0000_0003]
        );
        // B = [[1, 2], [3, 4], [5, 6]] (3×2): column 0 = 1, 3, 5; column 1 = 2, 4, 6.
        assert_eq!(
            pack_cols(&[1, 2, 3, 4, 5, 6], 3, 2),
            vec![0x0005_0301, 0x0006_0402]
        );
    }

    #[test]
    fn integer_product_by_hand() {
        // [[1, 2], [3, 4]] · [[5, 6], [7, 8]] = [[19, 22], [43, 50]]; extremes: 127·127·2.
        let s = MatmulSize::new(2, 2, 2);
        assert_eq!(
            int_matmul(s, &[1, 2, 3, 4], &[5, 6, 7, 8]),
            vec![19, 22, 43, 50]
        );
        let s1 = MatmulSize::new(1, 1, 2);
        assert_eq!(int_matmul(s1, &[-127, -127], &[-127, -127]), vec![32258]);
    }

    #[test]
    fn dequantised_error_stays_under_its_bound() {
        let size = MatmulSize::new(24, 20, 67);
        let (a, b) = size.inputs(5);
        let (qa, qb) = (quantise(&a), quantise(&b));
        let c = int_matmul(size, &qa.q, &qb.q);
        let got = dequantise(&c, qa.scale, qb.scale);
        let r = reference(size, &a, &b);
        let (max, mean) = rel_errors(&got, &r);
        let bound = error_bound(size, &a, &b, qa.scale, qb.scale);
        assert!(max <= bound, "{max} > {bound}");
        // Uniform inputs in [−1, 1): the bound is about 4/254 ≈ 0.016, the error well below it
        // but far above f32 rounding (2⁻²⁴ ≈ 6e-8).
        assert!(bound > 0.01 && bound < 0.05, "{bound}");
        assert!(mean > 1e-5 && max < 0.02, "{mean} {max}");
    }
}
