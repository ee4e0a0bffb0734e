//! 2-D convolution (cross-correlation, as every deep-learning library computes it), f32.
//!
//! Layouts, shared by the CPU reference and every GPU stage:
//! - activations **NHWC** (channels last, as tfjs-webgpu, ONNX Runtime Web and Burn):
//!   `x[((n·H + h)·W + w)·C + c]`;
//! - filters **R×S×C×K** (TensorFlow's HWIO): `f[((r·S + s)·C + c)·K + k]`. Chosen over K×R×S×C
//!   because then the filter *is* the right-hand matrix of the GEMM form, (R·S·C)×K row-major,
//!   with K contiguous for vec4 loads: im2col + GEMM and 1×1 convolution need no transpose;
//! - output **NPQK**: `y[((n·P + p)·Q + q)·K + k]`, i.e. the (N·P·Q)×K matrix of the GEMM form.
//!
//! y[n,p,q,k] = Σ_{r,s,c} x[n, p·stride − pad + r·dil, q·stride − pad + s·dil, c] · f[r,s,c,k],
//! with x = 0 outside the image (zero padding). Output size: P = (H + 2·pad − dil·(R−1) − 1) /
//! stride + 1 (rounded down), Q likewise with W and S.

use crate::matmul::Reference;

/// The shape of one convolution. Stride, padding and dilation apply to both axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvShape {
    /// Batch (images).
    pub n: u32,
    /// Input channels.
    pub c: u32,
    /// Input height and width.
    pub h: u32,
    pub w: u32,
    /// Filters (= output channels).
    pub k: u32,
    /// Filter height and width.
    pub r: u32,
    pub s: u32,
    pub stride: u32,
    /// Zeros added on every side.
    pub pad: u32,
    pub dilation: u32,
}

/// Why a shape was refused. Each variant names the problem for the page's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvShapeError {
    /// One of the sizes is zero (the field's name: "n", "c", "h", "w", "k", "r", "s").
    ZeroSize(&'static str),
    /// Stride or dilation is zero ("stride" or "dilation").
    ZeroStep(&'static str),
    /// The (dilated) filter is larger than the padded input along an axis ("h" or "w"):
    /// `extent` = dil·(R−1)+1 rows/columns needed, `padded` = H + 2·pad available.
    FilterLargerThanInput {
        axis: &'static str,
        extent: u64,
        padded: u64,
    },
    /// Some buffer would hold more than 2³² − 1 elements (or a size overflowed on the way).
    TooLarge,
}

impl std::fmt::Display for ConvShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ZeroSize(name) => write!(f, "{name} must be at least 1"),
            Self::ZeroStep(name) => write!(f, "{name} must be at least 1"),
            Self::FilterLargerThanInput {
                axis,
                extent,
                padded,
            } => write!(
                f,
                "the filter spans {extent} along {axis}, the padded input only {padded}"
            ),
            Self::TooLarge => write!(f, "a buffer would exceed 2^32 elements"),
        }
    }
}

impl std::error::Error for ConvShapeError {}

/// Largest element count of any buffer: GPU stages index with u32.
const MAX_ELEMENTS: u64 = u32::MAX as u64;
/// Largest single size (batch, channels, height, width, filters, filter side).
const MAX_DIM: u32 = 1 << 24;

impl ConvShape {
    /// A shape with stride 1, no padding, no dilation; adjust the public fields after.
    pub const fn new(n: u32, c: u32, h: u32, w: u32, k: u32, r: u32, s: u32) -> Self {
        Self {
            n,
            c,
            h,
            w,
            k,
            r,
            s,
            stride: 1,
            pad: 0,
            dilation: 1,
        }
    }

    pub const fn with(mut self, stride: u32, pad: u32, dilation: u32) -> Self {
        self.stride = stride;
        self.pad = pad;
        self.dilation = dilation;
        self
    }

    /// Checks the shape and returns the output height and width (P, Q).
    pub fn validate(&self) -> Result<(u32, u32), ConvShapeError> {
        for (name, v) in [
            ("n", self.n),
            ("c", self.c),
            ("h", self.h),
            ("w", self.w),
            ("k", self.k),
            ("r", self.r),
            ("s", self.s),
        ] {
            if v == 0 {
                return Err(ConvShapeError::ZeroSize(name));
            }
        }
        // Sizes above 2²⁴ would make no sensible convolution and could overflow a GPU stage's
        // u32 arithmetic once rounded up to vec4s.
        if [self.n, self.c, self.h, self.w, self.k, self.r, self.s]
            .iter()
            .any(|&v| v > MAX_DIM)
        {
            return Err(ConvShapeError::TooLarge);
        }
        if self.stride == 0 {
            return Err(ConvShapeError::ZeroStep("stride"));
        }
        if self.dilation == 0 {
            return Err(ConvShapeError::ZeroStep("dilation"));
        }
        let axis = |axis, len: u32, taps: u32| {
            // u64 throughout: none of these can overflow from u32 inputs.
            let padded = len as u64 + 2 * self.pad as u64;
            let extent = self.dilation as u64 * (taps as u64 - 1) + 1;
            if extent > padded {
                return Err(ConvShapeError::FilterLargerThanInput {
                    axis,
                    extent,
                    padded,
                });
            }
            let out = (padded - extent) / self.stride as u64 + 1;
            u32::try_from(out).map_err(|_| ConvShapeError::TooLarge)
        };
        let p = axis("h", self.h, self.r)?;
        let q = axis("w", self.w, self.s)?;
        let n = self.n as u64;
        let sizes = [
            n * self.h as u64 * self.w as u64 * self.c as u64,
            self.r as u64 * self.s as u64 * self.c as u64 * self.k as u64,
            n * p as u64 * q as u64 * self.k as u64,
            // The im2col matrix, the largest of all for most shapes.
            n * p as u64 * q as u64 * self.r as u64 * self.s as u64 * self.c as u64,
        ];
        // Each product is of values below 2³², at most 6 factors: checked against u64 overflow.
        let overflow = n
            .checked_mul(p as u64)
            .and_then(|v| v.checked_mul(q as u64))
            .and_then(|v| v.checked_mul(self.r as u64 * self.s as u64))
            .and_then(|v| v.checked_mul(self.c as u64))
            .is_none();
        if overflow || sizes.iter().any(|&v| v > MAX_ELEMENTS) {
            return Err(ConvShapeError::TooLarge);
        }
        Ok((p, q))
    }

    /// Output height and width; (0, 0) for an invalid shape.
    pub fn out_hw(&self) -> (u32, u32) {
        self.validate().unwrap_or((0, 0))
    }

    pub fn x_len(&self) -> usize {
        self.n as usize * self.h as usize * self.w as usize * self.c as usize
    }

    pub fn f_len(&self) -> usize {
        self.r as usize * self.s as usize * self.c as usize * self.k as usize
    }

    /// Output pixels N·P·Q: the M of the GEMM form.
    pub fn out_pixels(&self) -> usize {
        let (p, q) = self.out_hw();
        self.n as usize * p as usize * q as usize
    }

    pub fn y_len(&self) -> usize {
        self.out_pixels() * self.k as usize
    }

    /// Terms per output element, R·S·C: the reduction length of the GEMM form.
    pub fn reduction_len(&self) -> u32 {
        self.r.saturating_mul(self.s).saturating_mul(self.c)
    }

    /// Floating-point operations (one multiply and one add per term, padding included, as
    /// cuDNN and every published TFLOP/s figure count them).
    pub fn flops(&self) -> f64 {
        2.0 * self.y_len() as f64 * self.reduction_len() as f64
    }

    /// Bytes of the im2col matrix in f32: the memory the im2col + GEMM stage costs on top.
    pub fn im2col_bytes(&self) -> u64 {
        4 * self.out_pixels() as u64 * self.reduction_len() as u64
    }

    /// A 1×1 convolution with stride 1 and no padding: exactly the matmul
    /// (N·H·W × C) · (C × K) on the buffers as they are.
    pub fn is_pointwise(&self) -> bool {
        self.r == 1 && self.s == 1 && self.stride == 1 && self.pad == 0
    }

    /// The padding that keeps H and W for stride 1 ("same"), when the filter is odd.
    pub fn same_pad(r: u32, dilation: u32) -> u32 {
        dilation * (r.saturating_sub(1)) / 2
    }

    /// Deterministic input and filter, reproducible from `seed` and shape-dependent.
    pub fn inputs(&self, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let mix = seed
            ^ ((self.n as u64) << 50)
            ^ ((self.c as u64) << 36)
            ^ ((self.h as u64) << 24)
            ^ ((self.w as u64) << 12)
            ^ (self.k as u64)
            ^ ((self.r as u64 * 31 + self.s as u64) << 56);
        (
            crate::data::random_vec(self.x_len(), mix),
            crate::data::random_vec(self.f_len(), mix.rotate_left(23) ^ 0x5A5A),
        )
    }

    /// Input row and column read by output (p, q) at filter tap (r, s), or None in padding.
    pub fn tap(&self, p: u32, q: u32, r: u32, s: u32) -> Option<(usize, usize)> {
        let ih = (p as i64) * self.stride as i64 - self.pad as i64 + (r * self.dilation) as i64;
        let iw = (q as i64) * self.stride as i64 - self.pad as i64 + (s * self.dilation) as i64;
        (ih >= 0 && iw >= 0 && ih < self.h as i64 && iw < self.w as i64)
            .then_some((ih as usize, iw as usize))
    }
}

/// The im2col cells that hold input value x[n, ih, iw, c]: (row, column) pairs of the matrix
/// [`im2col`] builds (row = output pixel, column = (r·S + s)·C + c), one per output window
/// that covers it — what lights up when a learner points at an input pixel.
pub fn im2col_cells_of_input(
    shape: &ConvShape,
    n: u32,
    ih: u32,
    iw: u32,
    c: u32,
) -> Vec<(usize, usize)> {
    let Ok((p_len, q_len)) = shape.validate() else {
        return Vec::new();
    };
    let mut cells = Vec::new();
    for r in 0..shape.r {
        for s in 0..shape.s {
            // Output p reads row p·stride − pad + r·dil: solve for p, if whole and in range.
            let row = |o_len: u32, i: u32, t: u32| {
                let num = i as i64 + shape.pad as i64 - (t as i64) * shape.dilation as i64;
                (num >= 0 && num % shape.stride as i64 == 0)
                    .then_some(num / shape.stride as i64)
                    .filter(|&o| o < o_len as i64)
            };
            if let (Some(p), Some(q)) = (row(p_len, ih, r), row(q_len, iw, s)) {
                let out_row =
                    (n as usize * p_len as usize + p as usize) * q_len as usize + q as usize;
                let col =
                    (r as usize * shape.s as usize + s as usize) * shape.c as usize + c as usize;
                cells.push((out_row, col));
            }
        }
    }
    cells.sort_unstable();
    cells
}

/// The receptive field of output pixel (p, q) of the last of `layers` (each layer's input is
/// the previous one's output): the inclusive row and column ranges of the first layer's input
/// it depends on, clipped to the image — how the field grows layer by layer.
pub fn receptive_field(layers: &[ConvShape], p: u32, q: u32) -> Option<((u32, u32), (u32, u32))> {
    let mut rows = (p as i64, p as i64);
    let mut cols = (q as i64, q as i64);
    for l in layers.iter().rev() {
        let back = |(lo, hi): (i64, i64), taps: u32| {
            (
                lo * l.stride as i64 - l.pad as i64,
                hi * l.stride as i64 - l.pad as i64 + (taps as i64 - 1) * l.dilation as i64,
            )
        };
        rows = back(rows, l.r);
        cols = back(cols, l.s);
    }
    let first = layers.first()?;
    let clip = |(lo, hi): (i64, i64), len: u32| {
        let (lo, hi) = (lo.max(0), hi.min(len as i64 - 1));
        (lo <= hi).then_some((lo as u32, hi as u32))
    };
    Some((clip(rows, first.h)?, clip(cols, first.w)?))
}

/// The f64 reference of one output element (`idx` into the NPQK output) and its Σ|terms|.
fn element(shape: &ConvShape, x: &[f32], f: &[f32], idx: usize) -> (f64, f64) {
    let (_, q_len) = shape.out_hw();
    let k_len = shape.k as usize;
    let (c_len, w_len, h_len) = (shape.c as usize, shape.w as usize, shape.h as usize);
    let k = idx % k_len;
    let pix = idx / k_len;
    let q = (pix % q_len as usize) as u32;
    let rest = pix / q_len as usize;
    let p_len = shape.out_hw().0 as usize;
    let p = (rest % p_len) as u32;
    let n = rest / p_len;
    let (mut v, mut mag) = (0f64, 0f64);
    for r in 0..shape.r {
        for s in 0..shape.s {
            let Some((ih, iw)) = shape.tap(p, q, r, s) else {
                continue;
            };
            let xb = ((n * h_len + ih) * w_len + iw) * c_len;
            let fb = (r as usize * shape.s as usize + s as usize) * c_len;
            for c in 0..c_len {
                let t = x[xb + c] as f64 * f[(fb + c) * k_len + k] as f64;
                v += t;
                mag += t.abs();
            }
        }
    }
    (v, mag)
}

fn max_abs(a: &[f32], b: &[f32]) -> f64 {
    a.iter().chain(b).fold(0f32, |m, x| m.max(x.abs())) as f64
}

fn check_lengths(shape: &ConvShape, x: &[f32], f: &[f32]) {
    assert!(shape.validate().is_ok(), "invalid shape {shape:?}");
    assert_eq!(x.len(), shape.x_len(), "x must be N×H×W×C");
    assert_eq!(f.len(), shape.f_len(), "f must be R×S×C×K");
}

/// The reference for every output element, accumulated in f64 (so its own rounding is
/// negligible next to f32 kernels), with per element Σ|terms|: the scale of the tolerance.
/// Padding taps contribute nothing, so `reduction_len` = R·S·C bounds the terms of every element.
pub fn reference(shape: &ConvShape, x: &[f32], f: &[f32]) -> Reference {
    check_lengths(shape, x, f);
    let all: Vec<usize> = (0..shape.y_len()).collect();
    reference_at(shape, x, f, &all)
}

/// The reference at selected output elements (NPQK indices), for shapes whose full reference
/// would take too long.
pub fn reference_at(shape: &ConvShape, x: &[f32], f: &[f32], indices: &[usize]) -> Reference {
    check_lengths(shape, x, f);
    let (value, magnitude) = indices.iter().map(|&i| element(shape, x, f, i)).unzip();
    Reference {
        value,
        magnitude,
        reduction_len: shape.reduction_len(),
        max_abs_input: max_abs(x, f),
    }
}

/// Which output elements to check: all (None) when N·P·Q·K·R·S·C ≤ `full_limit`; otherwise
/// the first and last pixel of every image's corners and borders (where padding and halos
/// live), every filter of the first and last pixel, and `samples` seeded random elements.
pub fn check_indices(
    shape: &ConvShape,
    full_limit: u64,
    samples: usize,
    seed: u64,
) -> Option<Vec<usize>> {
    let macs = shape.y_len() as u64 * shape.reduction_len() as u64;
    if macs <= full_limit {
        return None;
    }
    let (p, q) = shape.out_hw();
    let (p, q, k) = (p as usize, q as usize, shape.k as usize);
    let total = shape.y_len();
    let mut idx = Vec::new();
    let at = |n: usize, pp: usize, qq: usize, kk: usize| ((n * p + pp) * q + qq) * k + kk;
    for n in [0, shape.n as usize - 1] {
        for (pp, qq) in [(0, 0), (0, q - 1), (p - 1, 0), (p - 1, q - 1)] {
            idx.extend((0..k).map(|kk| at(n, pp, qq, kk)));
        }
        // The borders, one filter each (cycling through the filters).
        idx.extend((0..q).map(|qq| at(n, 0, qq, qq % k)));
        idx.extend((0..q).map(|qq| at(n, p - 1, qq, (qq + 1) % k)));
        idx.extend((0..p).map(|pp| at(n, pp, 0, pp % k)));
        idx.extend((0..p).map(|pp| at(n, pp, q - 1, (pp + 3) % k)));
    }
    let mut rng = crate::data::SplitMix64::new(seed);
    idx.extend((0..samples).map(|_| (rng.next_u64() % total as u64) as usize));
    idx.sort_unstable();
    idx.dedup();
    Some(idx)
}

/// The im2col matrix: (N·P·Q) rows, one per output pixel, of R·S·C columns in (r, s, c) order
/// — the input window each output pixel sees, zeros where it falls in the padding — laid out
/// row-major with rows `stride` ≥ R·S·C floats apart (extra columns zero). Multiplied by the
/// filter viewed as (R·S·C)×K it gives the output.
pub fn im2col(shape: &ConvShape, x: &[f32], row_stride: usize) -> Vec<f32> {
    assert!(shape.validate().is_ok(), "invalid shape {shape:?}");
    assert_eq!(x.len(), shape.x_len(), "x must be N×H×W×C");
    let cols = shape.reduction_len() as usize;
    assert!(row_stride >= cols, "row stride below R·S·C");
    let (p_len, q_len) = shape.out_hw();
    let c_len = shape.c as usize;
    let mut out = vec![0f32; shape.out_pixels() * row_stride];
    for n in 0..shape.n as usize {
        for p in 0..p_len {
            for q in 0..q_len {
                let row = (n * p_len as usize + p as usize) * q_len as usize + q as usize;
                for r in 0..shape.r {
                    for s in 0..shape.s {
                        let Some((ih, iw)) = shape.tap(p, q, r, s) else {
                            continue;
                        };
                        let src = ((n * shape.h as usize + ih) * shape.w as usize + iw) * c_len;
                        let dst =
                            row * row_stride + (r as usize * shape.s as usize + s as usize) * c_len;
                        out[dst..dst + c_len].copy_from_slice(&x[src..src + c_len]);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::{self, MatmulSize};
    use crate::verify::{compare, Precision};

    fn ramp(len: usize) -> Vec<f32> {
        (1..=len).map(|v| v as f32).collect()
    }

    #[test]
    fn output_size_formula() {
        let s = ConvShape::new(1, 3, 224, 224, 64, 7, 7).with(2, 3, 1);
        assert_eq!(s.validate(), Ok((112, 112)));
        assert_eq!(
            ConvShape::new(1, 1, 5, 5, 1, 3, 3).with(1, 1, 1).out_hw(),
            (5, 5)
        );
        // Dilation 2 makes a 3×3 filter span 5: 7 − 5 + 1 = 3.
        assert_eq!(
            ConvShape::new(1, 1, 7, 7, 1, 3, 3).with(1, 0, 2).out_hw(),
            (3, 3)
        );
        // Stride 2 on 6 with a 3×3: (6 − 3)/2 + 1 = 2 (rounded down).
        assert_eq!(
            ConvShape::new(1, 1, 6, 7, 1, 3, 3).with(2, 0, 1).out_hw(),
            (2, 3)
        );
        assert_eq!(ConvShape::same_pad(5, 2), 4);
    }

    #[test]
    fn bad_shapes_have_named_errors() {
        assert_eq!(
            ConvShape::new(1, 0, 5, 5, 1, 3, 3).validate(),
            Err(ConvShapeError::ZeroSize("c"))
        );
        assert_eq!(
            ConvShape::new(1, 1, 5, 5, 1, 3, 3).with(0, 0, 1).validate(),
            Err(ConvShapeError::ZeroStep("stride"))
        );
        assert_eq!(
            ConvShape::new(1, 1, 5, 5, 1, 3, 3).with(1, 0, 0).validate(),
            Err(ConvShapeError::ZeroStep("dilation"))
        );
        assert_eq!(
            ConvShape::new(1, 1, 2, 9, 1, 5, 1).with(1, 1, 1).validate(),
            Err(ConvShapeError::FilterLargerThanInput {
                axis: "h",
                extent: 5,
                padded: 4
            })
        );
        assert_eq!(
            ConvShape::new(u32::MAX, u32::MAX, u32::MAX, u32::MAX, u32::MAX, 1, 1).validate(),
            Err(ConvShapeError::TooLarge)
        );
        assert_eq!(
            ConvShape::new(4096, 64, 512, 512, 64, 3, 3).validate(),
            Err(ConvShapeError::TooLarge)
        );
        let huge_filter = ConvShape::new(1, 1, 1, 1, 1, 1 << 24, 1).with(1, 0, u32::MAX);
        assert!(matches!(
            huge_filter.validate(),
            Err(ConvShapeError::FilterLargerThanInput { .. })
        ));
        assert_eq!(huge_filter.out_hw(), (0, 0));
        assert!(ConvShapeError::TooLarge.to_string().contains("2^32"));
    }

    #[test]
    fn box_filter_by_hand() {
        // 3×3 box over the 4×4 ramp 1..16, no padding: each output is the sum of a 3×3 window.
        let shape = ConvShape::new(1, 1, 4, 4, 1, 3, 3);
        let r = reference(&shape, &ramp(16), &[1.0; 9]);
        // Windows at (0,0): 1+2+3+5+6+7+9+10+11 = 54; each step right adds 9, down adds 36.
        assert_eq!(r.value, vec![54.0, 63.0, 90.0, 99.0]);
        assert_eq!(r.reduction_len, 9);
    }

    #[test]
    fn padding_by_hand() {
        // Same 3×3 box, pad 1: the corner sees only 1+2+5+6 = 14.
        let shape = ConvShape::new(1, 1, 4, 4, 1, 3, 3).with(1, 1, 1);
        let r = reference(&shape, &ramp(16), &[1.0; 9]);
        assert_eq!(r.value.len(), 16);
        assert_eq!(r.value[0], 14.0);
        // (0,1): 1+2+3+5+6+7 = 24; centre (1,1) = 54 as without padding; last corner 11+12+15+16.
        assert_eq!(r.value[1], 24.0);
        assert_eq!(r.value[5], 54.0);
        assert_eq!(r.value[15], 54.0);
    }

    #[test]
    fn stride_and_dilation_by_hand() {
        // 5×5 ramp, 3×3 box, stride 2: windows at (0,0), (0,2), (2,0), (2,2).
        let x = ramp(25);
        let s2 = ConvShape::new(1, 1, 5, 5, 1, 3, 3).with(2, 0, 1);
        // (0,0): 1+2+3+6+7+8+11+12+13 = 63; right by 2 adds 18; down by 2 adds 90.
        assert_eq!(
            reference(&s2, &x, &[1.0; 9]).value,
            vec![63.0, 81.0, 153.0, 171.0]
        );
        // Dilation 2: a 3×3 filter reads rows/cols 0, 2, 4 → the one output is
        // 1+3+5+11+13+15+21+23+25 = 117.
        let d2 = ConvShape::new(1, 1, 5, 5, 1, 3, 3).with(1, 0, 2);
        assert_eq!(reference(&d2, &x, &[1.0; 9]).value, vec![117.0]);
    }

    #[test]
    fn channels_and_filters_use_the_documented_layouts() {
        // 1×1 pixel, C = 2, K = 3, 1×1 filter: y[k] = Σ_c x[c]·f[c·K + k].
        let shape = ConvShape::new(1, 2, 1, 1, 3, 1, 1);
        let f = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0];
        let r = reference(&shape, &[1.0, 2.0], &f);
        assert_eq!(r.value, vec![21.0, 42.0, 63.0]);
        // Batch 2: the second image's output follows the first's.
        let b2 = ConvShape::new(2, 2, 1, 1, 3, 1, 1);
        let r = reference(&b2, &[1.0, 2.0, 0.0, 1.0], &f);
        assert_eq!(r.value, vec![21.0, 42.0, 63.0, 10.0, 20.0, 30.0]);
    }

    #[test]
    fn im2col_times_filter_is_the_convolution() {
        let shape = ConvShape::new(2, 3, 7, 6, 5, 3, 3).with(2, 1, 2);
        let (x, f) = shape.inputs(4);
        let rsc = shape.reduction_len() as usize;
        let a = im2col(&shape, &x, rsc);
        let mm = MatmulSize::new(shape.out_pixels() as u32, shape.k, rsc as u32);
        let via_gemm = matmul::reference(mm, &a, &f);
        let direct = reference(&shape, &x, &f);
        for (g, d) in via_gemm.value.iter().zip(&direct.value) {
            assert!((g - d).abs() <= 1e-12 * (1.0 + d.abs()), "{g} vs {d}");
        }
        // A wider row stride only adds zero columns.
        let wide = im2col(&shape, &x, rsc + 3);
        assert_eq!(&wide[..rsc], &a[..rsc]);
        assert_eq!(&wide[rsc..rsc + 3], &[0.0; 3]);
    }

    #[test]
    fn pointwise_conv_is_the_matmul_of_the_buffers_as_they_are() {
        // 1×1, stride 1, no padding: x (NHWC) is the (N·H·W)×C matrix, f the C×K one.
        let shape = ConvShape::new(2, 7, 5, 3, 6, 1, 1);
        assert!(shape.is_pointwise());
        let (x, f) = shape.inputs(2);
        let mm = MatmulSize::new(2 * 5 * 3, 6, 7);
        let conv = reference(&shape, &x, &f);
        let gemm = matmul::reference(mm, &x, &f);
        // Same terms summed in the same order: identical, not merely close.
        assert_eq!(conv.value, gemm.value);
        assert_eq!(conv.magnitude, gemm.magnitude);
        assert!(!ConvShape::new(1, 1, 4, 4, 1, 1, 1)
            .with(2, 0, 1)
            .is_pointwise());
    }

    #[test]
    fn im2col_by_hand() {
        // 3×3 ramp, 2×2 filter, pad 1, stride 2: 2×2 outputs; the first window is
        // padding except its bottom-right tap, x[0,0] = 1.
        let shape = ConvShape::new(1, 1, 3, 3, 1, 2, 2).with(2, 1, 1);
        let a = im2col(&shape, &ramp(9), 4);
        assert_eq!(
            a,
            vec![
                0.0, 0.0, 0.0, 1.0, // (0,0)
                0.0, 0.0, 2.0, 3.0, // (0,1)
                0.0, 4.0, 0.0, 7.0, // (1,0)
                5.0, 6.0, 8.0, 9.0, // (1,1)
            ]
        );
    }

    #[test]
    fn input_pixels_map_to_their_im2col_cells() {
        let shape = ConvShape::new(2, 3, 7, 6, 5, 3, 3).with(2, 1, 2);
        let (x, _) = shape.inputs(4);
        let rsc = shape.reduction_len() as usize;
        let a = im2col(&shape, &x, rsc);
        // Every cell of the matrix that holds x[n, ih, iw, c] is listed, and no other.
        for (n, ih, iw, c) in [(0, 0, 0, 0), (1, 3, 2, 1), (1, 6, 5, 2), (0, 4, 1, 2)] {
            let v = x[((n * 7 + ih) * 6 + iw) * 3 + c];
            let cells = im2col_cells_of_input(&shape, n as u32, ih as u32, iw as u32, c as u32);
            for &(row, col) in &cells {
                assert_eq!(a[row * rsc + col], v);
            }
            let found = a.iter().filter(|&&e| e == v).count();
            assert_eq!(cells.len(), found, "({n},{ih},{iw},{c})");
        }
        // By hand: 3×3 input, 2×2 filter, stride 1, no padding: the centre pixel is in all
        // four windows, at four different taps.
        let small = ConvShape::new(1, 1, 3, 3, 1, 2, 2);
        assert_eq!(
            im2col_cells_of_input(&small, 0, 1, 1, 0),
            vec![(0, 3), (1, 2), (2, 1), (3, 0)]
        );
        assert_eq!(im2col_cells_of_input(&small, 0, 0, 0, 0), vec![(0, 0)]);
    }

    #[test]
    fn receptive_field_grows_layer_by_layer() {
        let l1 = ConvShape::new(1, 3, 32, 32, 8, 3, 3).with(1, 1, 1);
        // One 3×3 layer: 3×3 window around the pixel.
        assert_eq!(receptive_field(&[l1], 10, 10), Some(((9, 11), (9, 11))));
        // Two: 5×5. A stride-2 3×3 on top: 7 (its own stride does not widen it)…
        let l2 = ConvShape::new(1, 8, 32, 32, 8, 3, 3).with(1, 1, 1);
        assert_eq!(receptive_field(&[l1, l2], 10, 10), Some(((8, 12), (8, 12))));
        let l3 = ConvShape::new(1, 8, 32, 32, 8, 3, 3).with(2, 1, 1);
        assert_eq!(
            receptive_field(&[l1, l2, l3], 5, 5),
            Some(((7, 13), (7, 13)))
        );
        // …but every layer after it grows the field by 2·(3 − 1): 7 + 4 = 11.
        let l4 = ConvShape::new(1, 8, 16, 16, 8, 3, 3).with(1, 1, 1);
        assert_eq!(
            receptive_field(&[l1, l2, l3, l4], 4, 4),
            Some(((3, 13), (3, 13)))
        );
        // Clipped at the border; no layers, nothing.
        assert_eq!(receptive_field(&[l1], 0, 31), Some(((0, 1), (30, 31))));
        assert_eq!(receptive_field(&[], 0, 0), None);
    }

    #[test]
    fn sampled_reference_matches_the_full_one() {
        let shape = ConvShape::new(2, 3, 9, 7, 6, 3, 3).with(1, 1, 1);
        let (x, f) = shape.inputs(9);
        let full = reference(&shape, &x, &f);
        let idx = check_indices(&shape, 0, 40, 2).expect("sampling forced");
        assert!(idx.contains(&0) && idx.contains(&(shape.y_len() - 1)));
        assert!(idx.iter().all(|&i| i < shape.y_len()));
        let part = reference_at(&shape, &x, &f, &idx);
        for (p, &i) in idx.iter().enumerate() {
            assert_eq!(part.value[p], full.value[i]);
        }
        assert_eq!(check_indices(&shape, u64::MAX, 40, 2), None);
    }

    /// A straightforward f32 convolution with a chosen filter indexing: the stand-in for a
    /// kernel, to show the verdict tells a right one from a wrong one.
    fn conv_f32(shape: &ConvShape, x: &[f32], f: &[f32], transposed: bool) -> Vec<f32> {
        let (p_len, q_len) = shape.out_hw();
        let (c_len, k_len) = (shape.c as usize, shape.k as usize);
        let mut y = Vec::with_capacity(shape.y_len());
        for n in 0..shape.n as usize {
            for p in 0..p_len {
                for q in 0..q_len {
                    for k in 0..k_len {
                        let mut acc = 0f32;
                        for r in 0..shape.r {
                            for s in 0..shape.s {
                                let Some((ih, iw)) = shape.tap(p, q, r, s) else {
                                    continue;
                                };
                                // Transposed: the filter flipped (true convolution, not
                                // cross-correlation) — a classic mistake.
                                let (fr, fs) = if transposed {
                                    (shape.r - 1 - r, shape.s - 1 - s)
                                } else {
                                    (r, s)
                                };
                                for c in 0..c_len {
                                    let xv = x[((n * shape.h as usize + ih) * shape.w as usize
                                        + iw)
                                        * c_len
                                        + c];
                                    let fi = ((fr as usize * shape.s as usize + fs as usize)
                                        * c_len
                                        + c)
                                        * k_len
                                        + k;
                                    acc += xv * f[fi];
                                }
                            }
                        }
                        y.push(acc);
                    }
                }
            }
        }
        y
    }

    #[test]
    fn tolerance_passes_f32_and_fails_a_flipped_filter() {
        let shape = ConvShape::new(2, 5, 9, 11, 4, 5, 5).with(1, 2, 1);
        let (x, f) = shape.inputs(1);
        let r = reference(&shape, &x, &f);
        let right = compare(&conv_f32(&shape, &x, &f, false), &r, Precision::F32);
        assert!(right.ok, "{right:?}");
        assert!(right.max_rel_error > 0.0);
        // Bound grows with R·S·C = 125.
        assert!((right.rel_bound - 2.0 * 125.0 / (1u64 << 24) as f64).abs() < 1e-15);
        let flipped = compare(&conv_f32(&shape, &x, &f, true), &r, Precision::F32);
        assert!(!flipped.ok);
    }
}
