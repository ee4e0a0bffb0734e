//! The `fp64` lesson: FP64 rates of real GPUs (vendor peaks, `docs/fact-check.md` FC-160 to FC-162)
//! and the arithmetic that makes them tangible: how long a double-precision matmul takes at
//! each peak, and what the learner's own emulated rate (double-float in f32 pairs) amounts to.

/// One GPU's vector (non-tensor) peaks in TFLOPS, from its vendor's datasheet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fp64Gpu {
    pub name: &'static str,
    pub fp32_tflops: f64,
    pub fp64_tflops: f64,
    /// Data-centre part (true) or gaming card (false).
    pub data_centre: bool,
}

impl Fp64Gpu {
    /// FP32 peak ÷ FP64 peak: 2 means "1:2".
    pub fn ratio(&self) -> f64 {
        self.fp32_tflops / self.fp64_tflops
    }

    /// The ratio as the "1:x" the articles write, x rounded to a whole number.
    pub fn ratio_whole(&self) -> u32 {
        self.ratio().round() as u32
    }
}

/// The table the lesson shows (FC-160).
pub const GPUS: [Fp64Gpu; 6] = [
    Fp64Gpu {
        name: "H100 SXM5",
        fp32_tflops: 67.0,
        fp64_tflops: 34.0,
        data_centre: true,
    },
    Fp64Gpu {
        name: "A100",
        fp32_tflops: 19.5,
        fp64_tflops: 9.7,
        data_centre: true,
    },
    Fp64Gpu {
        name: "V100 SXM2",
        fp32_tflops: 15.7,
        fp64_tflops: 7.8,
        data_centre: true,
    },
    Fp64Gpu {
        name: "MI250X",
        fp32_tflops: 47.9,
        fp64_tflops: 47.9,
        data_centre: true,
    },
    Fp64Gpu {
        name: "RTX 4090",
        fp32_tflops: 82.6,
        fp64_tflops: 1.29,
        data_centre: false,
    },
    Fp64Gpu {
        name: "RTX 3090",
        fp32_tflops: 35.6,
        fp64_tflops: 0.556,
        data_centre: false,
    },
];

/// Floating-point operations of an n×n×n matmul: 2·n³.
pub fn matmul_flops(n: u64) -> f64 {
    2.0 * (n as f64).powi(3)
}

/// Seconds an n×n×n matmul takes at `tflops` (a peak: a lower bound on the time).
pub fn seconds_at_peak(n: u64, tflops: f64) -> f64 {
    matmul_flops(n) / (tflops * 1e12)
}

/// The learner's emulated ratio: how many times longer the double-float kernel took than the
/// f32 kernel on the same problem. `None` for times that are not positive and finite.
pub fn emulated_ratio(f32_ms: f64, df64_ms: f64) -> Option<f64> {
    (f32_ms.is_finite() && df64_ms.is_finite() && f32_ms > 0.0 && df64_ms > 0.0)
        .then(|| df64_ms / f32_ms)
}

/// Relative precision: f32 keeps 24 significant bits, a double-float pair about 48 (two f32
/// significands), f64 53. Unit roundoff 2^-bits.
pub const F32_BITS: u32 = 24;
pub const DF64_BITS: u32 = 48;
pub const F64_BITS: u32 = 53;

/// log2 of a positive error (for "≈ 2^-44"); None for zero or non-finite.
pub fn log2_error(e: f64) -> Option<f64> {
    (e.is_finite() && e > 0.0).then(|| e.log2())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_ratios() {
        // 1:2 on the data-centre parts the article means, 1:64 on GeForce Ampere and Ada.
        let r = |name: &str| {
            GPUS.iter()
                .find(|g| g.name == name)
                .map(|g| g.ratio_whole())
        };
        assert_eq!(r("H100 SXM5"), Some(2)); // 67 / 34 = 1.97
        assert_eq!(r("A100"), Some(2)); // 19.5 / 9.7 = 2.01
        assert_eq!(r("V100 SXM2"), Some(2)); // 15.7 / 7.8 = 2.01
        assert_eq!(r("MI250X"), Some(1));
        assert_eq!(r("RTX 4090"), Some(64)); // 82.6 / 1.29 = 64.03
        assert_eq!(r("RTX 3090"), Some(64)); // 35.6 / 0.556 = 64.03
        for g in GPUS {
            assert_eq!(g.data_centre, g.ratio_whole() <= 2, "{}", g.name);
        }
    }

    #[test]
    fn times_by_hand() {
        // 4096³ · 2 = 137,438,953,472 flop ≈ 1.37 × 10¹¹ (FC-45).
        assert_eq!(matmul_flops(4096), 137_438_953_472.0);
        // At 1 TFLOPS that is 0.137 s; at 34 TFLOPS 4.04 ms; at 1.29 TFLOPS 106.5 ms.
        assert!((seconds_at_peak(4096, 1.0) - 0.137_438_953_472).abs() < 1e-12);
        assert!((seconds_at_peak(4096, 34.0) * 1e3 - 4.042).abs() < 1e-3);
        assert!((seconds_at_peak(4096, 1.29) * 1e3 - 106.54).abs() < 1e-2);
    }

    #[test]
    fn emulated() {
        assert_eq!(emulated_ratio(2.0, 30.0), Some(15.0));
        assert_eq!(emulated_ratio(0.0, 30.0), None);
        assert_eq!(emulated_ratio(f64::NAN, 30.0), None);
        assert_eq!(log2_error(2f64.powi(-44)), Some(-44.0));
        assert_eq!(log2_error(0.0), None);
    }
}
