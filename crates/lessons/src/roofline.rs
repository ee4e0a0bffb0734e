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

/// A log-log roofline chart's geometry: both axes' decades chosen to hold the points, the
/// ridge and the roof at the left edge, and the positions of values inside the plot area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub left: f64,
    pub top: f64,
    pub pw: f64,
    pub ph: f64,
    /// FLOP/byte at the left and right edges.
    pub x0: f64,
    pub x1: f64,
    /// GFLOP/s at the bottom and top edges.
    pub y0: f64,
    pub y1: f64,
}

impl Frame {
    /// The plot area (`left`, `top`, width `pw`, height `ph`) holding points `(FLOP/byte,
    /// GFLOP/s)` under `roof`, with half a decade's room around them.
    pub fn new(
        (left, top, pw, ph): (f64, f64, f64, f64),
        roof: Roof,
        points: &[(f64, f64)],
    ) -> Frame {
        let ais = points.iter().map(|p| p.0).chain([roof.ridge()]);
        let (x0, x1) = decades(
            ais.clone().fold(f64::INFINITY, f64::min) / 2.0,
            ais.fold(0.0, f64::max) * 2.0,
        );
        let rates = points
            .iter()
            .map(|p| p.1)
            .chain([roof.gflop_per_s, roof.attainable(x0)])
            .filter(|v| *v > 0.0);
        let (y0, y1) = decades(
            rates.clone().fold(f64::INFINITY, f64::min) / 2.0,
            rates.fold(0.0, f64::max) * 2.0,
        );
        Frame {
            left,
            top,
            pw,
            ph,
            x0,
            x1,
            y0,
            y1,
        }
    }

    pub fn px(&self, ai: f64) -> f64 {
        self.left + log_pos(ai, self.x0, self.x1, self.pw)
    }

    pub fn py(&self, gflops: f64) -> f64 {
        self.top + self.ph - log_pos(gflops, self.y0, self.y1, self.ph)
    }

    /// The roof as an SVG path: slanted from the left edge to the ridge, flat after it.
    pub fn roof_path(&self, roof: Roof) -> String {
        let ridge = roof.ridge().clamp(self.x0, self.x1);
        let at = |ai: f64| (self.px(ai), self.py(roof.attainable(ai)));
        let ((ax, ay), (bx, by), (cx, cy)) = (at(self.x0), at(ridge), at(self.x1));
        format!("M{ax:.1},{ay:.1} L{bx:.1},{by:.1} L{cx:.1},{cy:.1}")
    }

    /// The gridlines' values along one axis: every power of ten from `lo` to `hi`.
    pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
        let mut v = lo;
        let mut out = Vec::new();
        while v <= hi * 1.0001 {
            out.push(v);
            v *= 10.0;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_holds_every_point_the_ridge_and_the_roof() {
        let roof = Roof {
            gb_per_s: 100.0,
            gflop_per_s: 1_000.0,
        };
        let f = Frame::new(
            (10.0, 5.0, 200.0, 100.0),
            roof,
            &[(0.5, 40.0), (3.0, 900.0)],
        );
        // Intensities 0.25…20 (the ridge is 10) → decades 0.1…100; rates 5…2,000 (the roof
        // gives 10 at the left edge) → 1…10,000.
        assert_eq!((f.x0, f.x1, f.y0, f.y1), (0.1, 100.0, 1.0, 10_000.0));
        assert_eq!(f.px(0.1), 10.0);
        assert_eq!(f.px(100.0), 210.0);
        assert_eq!(f.py(1.0), 105.0);
        assert!((f.py(1_000.0) - 30.0).abs() < 1e-9);
        // The roof: 10 GFLOP/s at the left edge, the ridge at (10, 1,000), flat to the right.
        assert_eq!(f.roof_path(roof), "M10.0,80.0 L143.3,30.0 L210.0,30.0");
        let t = Frame::ticks(0.1, 100.0);
        assert_eq!(t.len(), 4);
        assert!((t[3] - 100.0).abs() < 1e-9);
    }

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
