//! The roofline model (the `roofline` lesson): attainable FLOP/s = min(peak, bandwidth × intensity), and
//! how many bytes each matmul stage moves from memory under a simple model of its tiling.
//!
//! Traffic model: a stage that gives each workgroup a BM×BN block of C loads a BM×K strip of A
//! and a K×BN strip of B from memory once per block (what its shared-memory tiles hold) and
//! writes its block of C once. A stage without shared tiles loads, per output element, one row
//! of A and one column of B (2K elements): no reuse is counted. Caches make real traffic lower,
//! which is why a measured point can sit above the line the model draws.

/// How a stage reuses data, as far as memory traffic is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiling {
    /// Every output element reads its own row of A and column of B.
    PerElement,
    /// Each workgroup loads the strips for a BM×BN block of C.
    Block { bm: u32, bn: u32 },
}

/// Bytes a matmul stage moves to and from memory for an m×n×k product, with `input_bytes`
/// per element of A and B (4 for f32, 2 for f16) and 4-byte outputs.
pub fn matmul_bytes(tiling: Tiling, m: u32, n: u32, k: u32, input_bytes: u32) -> f64 {
    let (m, n, k, e) = (m as f64, n as f64, k as f64, input_bytes as f64);
    let reads = match tiling {
        Tiling::PerElement => m * n * 2.0 * k,
        Tiling::Block { bm, bn } => {
            let blocks_y = (m / bm as f64).ceil();
            let blocks_x = (n / bn as f64).ceil();
            blocks_x * blocks_y * (bm as f64 + bn as f64) * k
        }
    };
    reads * e + m * n * 4.0
}

/// FLOPs of an m×n×k matmul (a multiply and an add per term).
pub fn matmul_flops(m: u32, n: u32, k: u32) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// Arithmetic intensity, FLOP per byte.
pub fn intensity(flops: f64, bytes: f64) -> f64 {
    if bytes > 0.0 {
        flops / bytes
    } else {
        0.0
    }
}

/// A device's roof: bandwidth in GB/s and peak in GFLOP/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Roof {
    pub gb_per_s: f64,
    pub gflop_per_s: f64,
}

impl Roof {
    /// Attainable GFLOP/s at `ai` FLOP/byte.
    pub fn attainable(&self, ai: f64) -> f64 {
        (self.gb_per_s * ai).min(self.gflop_per_s)
    }
    /// The intensity where the slanted and flat parts meet.
    pub fn ridge(&self) -> f64 {
        if self.gb_per_s > 0.0 {
            self.gflop_per_s / self.gb_per_s
        } else {
            f64::INFINITY
        }
    }
    /// Whether a kernel at `ai` is limited by memory (left of the ridge).
    pub fn memory_bound(&self, ai: f64) -> bool {
        ai < self.ridge()
    }
}

/// Log-log chart geometry: maps values in [lo, hi] to [0, len] on a log scale, clamped.
pub fn log_pos(value: f64, lo: f64, hi: f64, len: f64) -> f64 {
    if !(value > 0.0 && lo > 0.0 && hi > lo) {
        return 0.0;
    }
    let t = (value.ln() - lo.ln()) / (hi.ln() - lo.ln());
    t.clamp(0.0, 1.0) * len
}

/// Powers of ten covering [lo, hi] (for a log axis), at least one.
pub fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo > 0.0 && lo.is_finite() { lo } else { 1.0 };
    let hi = if hi > lo && hi.is_finite() {
        hi
    } else {
        lo * 10.0
    };
    let a = 10f64.powf(lo.log10().floor());
    let mut b = 10f64.powf(hi.log10().ceil());
    if b <= a {
        b = a * 10.0;
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_element_intensity_is_a_quarter() {
        // 2·n³ FLOPs over 4·(2n³ + n²) bytes → just under 0.25 FLOP/B.
        let b = matmul_bytes(Tiling::PerElement, 64, 64, 64, 4);
        assert_eq!(b, 4.0 * (2.0 * 64f64.powi(3) + 64.0 * 64.0));
        let ai = intensity(matmul_flops(64, 64, 64), b);
        assert!((ai - 2.0 * 262_144.0 / b).abs() < 1e-12 && ai < 0.25 && ai > 0.24);
    }

    #[test]
    fn block_tiles_raise_intensity() {
        // 16×16 tiles at 256³: 256 blocks × 32 × 256 reads = 2,097,152 elements → 8 MiB,
        // plus 256 KiB of C. AI = 33,554,432 / 8,650,752 ≈ 3.879.
        let b = matmul_bytes(Tiling::Block { bm: 16, bn: 16 }, 256, 256, 256, 4);
        assert_eq!(b, 8_388_608.0 + 262_144.0);
        let ai = intensity(matmul_flops(256, 256, 256), b);
        assert!((ai - 33_554_432.0 / 8_650_752.0).abs() < 1e-12);
        // 128×128 blocks with f16 inputs at 1024³: 64 blocks × 256 × 1024 × 2 B + 4 MiB.
        let b = matmul_bytes(Tiling::Block { bm: 128, bn: 128 }, 1024, 1024, 1024, 2);
        assert_eq!(b, 64.0 * 256.0 * 1024.0 * 2.0 + 4.0 * 1_048_576.0);
        // Ragged edges load whole blocks: 129 rows need two 128-row blocks.
        let ragged = matmul_bytes(Tiling::Block { bm: 128, bn: 128 }, 129, 128, 1, 4);
        assert_eq!(ragged, 2.0 * 256.0 * 4.0 + 129.0 * 128.0 * 4.0);
    }

    #[test]
    fn roof_and_ridge() {
        let r = Roof {
            gb_per_s: 1555.0,
            gflop_per_s: 19_500.0,
        };
        assert!((r.ridge() - 19_500.0 / 1555.0).abs() < 1e-12);
        assert_eq!(r.attainable(1.0), 1555.0);
        assert_eq!(r.attainable(100.0), 19_500.0);
        assert!(r.memory_bound(0.25) && !r.memory_bound(32.0));
        assert_eq!(intensity(1.0, 0.0), 0.0);
    }

    #[test]
    fn log_axis() {
        assert_eq!(log_pos(10.0, 1.0, 100.0, 200.0), 100.0);
        assert_eq!(log_pos(1000.0, 1.0, 100.0, 200.0), 200.0);
        assert_eq!(log_pos(f64::NAN, 1.0, 100.0, 200.0), 0.0);
        assert_eq!(log_pos(-1.0, 1.0, 100.0, 200.0), 0.0);
        assert_eq!(decades(0.2, 35.0), (0.1, 100.0));
        assert_eq!(decades(f64::NAN, f64::NAN), (1.0, 10.0));
    }
}
