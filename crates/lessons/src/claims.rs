//! The `claims` lesson's matmul arithmetic: how much work a square matrix multiply is and how long it
//! takes at a sustained rate the visitor chooses.

/// Largest accepted matrix side.
pub const MAX_N: u64 = 1 << 20;
/// Largest accepted sustained rate, GFLOP/s (10 EFLOP/s).
pub const MAX_GFLOPS: f64 = 1e10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimError {
    /// n must be an integer from 1 to 2²⁰.
    Size,
    /// A rate must be above 0 and at most 10¹⁰ GFLOP/s.
    Rate,
}

/// Floating-point operations of an n×n by n×n matmul: n³ multiply-adds, counted as 2·n³.
pub fn matmul_flops(n: u64) -> Result<f64, ClaimError> {
    if n == 0 || n > MAX_N {
        return Err(ClaimError::Size);
    }
    let n = n as f64;
    Ok(2.0 * n * n * n)
}

/// The smallest number of bytes the multiply must move: read A and B, write C, once each.
pub fn matmul_min_bytes(n: u64, bytes_per_value: f64) -> f64 {
    3.0 * (n as f64) * (n as f64) * bytes_per_value
}

/// Seconds for `flops` at `gflops` GFLOP/s sustained.
pub fn seconds(flops: f64, gflops: f64) -> Result<f64, ClaimError> {
    if !(gflops.is_finite() && gflops > 0.0 && gflops <= MAX_GFLOPS) {
        return Err(ClaimError::Rate);
    }
    Ok(flops / (gflops * 1e9))
}

/// The CPU time ÷ GPU time for an n-sized matmul at the two rates (the claim's "100×").
pub fn speedup(n: u64, cpu_gflops: f64, gpu_gflops: f64) -> Result<(f64, f64, f64), ClaimError> {
    let f = matmul_flops(n)?;
    let cpu = seconds(f, cpu_gflops)?;
    let gpu = seconds(f, gpu_gflops)?;
    Ok((cpu, gpu, cpu / gpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_4096_matmul() {
        // 2 · 4096³ = 2 · 68,719,476,736 = 137,438,953,472.
        assert_eq!(matmul_flops(4096), Ok(137_438_953_472.0));
        // At 100 GFLOP/s: 1.374 s. At 10 TFLOP/s: 13.7 ms. Ratio 100.
        let (cpu, gpu, r) = speedup(4096, 100.0, 10_000.0).unwrap();
        assert!((cpu - 1.37438953472).abs() < 1e-12);
        assert!((gpu - 0.0137438953472).abs() < 1e-14);
        assert!((r - 100.0).abs() < 1e-9);
        // FP32: 3 · 4096² · 4 bytes = 201,326,592 bytes (192 MiB).
        assert_eq!(matmul_min_bytes(4096, 4.0), 201_326_592.0);
    }

    #[test]
    fn bad_input() {
        assert_eq!(matmul_flops(0), Err(ClaimError::Size));
        assert_eq!(matmul_flops(MAX_N + 1), Err(ClaimError::Size));
        assert_eq!(seconds(1.0, 0.0), Err(ClaimError::Rate));
        assert_eq!(seconds(1.0, -5.0), Err(ClaimError::Rate));
        assert_eq!(seconds(1.0, f64::NAN), Err(ClaimError::Rate));
        assert_eq!(speedup(4096, 1.0, f64::INFINITY), Err(ClaimError::Rate));
        assert!(speedup(MAX_N, 1e-3, MAX_GFLOPS).unwrap().2.is_finite());
    }
}
