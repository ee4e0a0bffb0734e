//! The CPU side of the conv race: 2-D convolution (layouts of [`crate::conv`]: NHWC input,
//! R×S×C×K filter, NPQK output) over a range of *output pixels* — the rows of the output seen
//! as the (N·P·Q)×K matrix — so the work splits between workers like the matmul race's rows.
//!
//! - [`CpuConvVariant::Direct`]: for each output pixel, for each tap of its window inside the
//!   image, for each channel, one input value times a row of K filter weights added into the
//!   pixel's K outputs (contiguous in K, which compilers may vectorise).
//! - [`CpuConvVariant::Im2colSimd`]: a chunk of output pixels' windows unrolled into im2col
//!   rows (zeros for padding), then multiplied by the filter — the (R·S·C)×K matrix, packed
//!   once — with the matmul race's SIMD micro-kernel ([`crate::matmul_variants::multiply_packed`]).
//!   The unrolled rows exist one chunk at a time, so memory stays small.

use crate::conv::ConvShape;
use crate::matmul_variants::{multiply_packed, PackedB, RowsError};

/// Which CPU convolution to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuConvVariant {
    Direct,
    Im2colSimd,
}

impl CpuConvVariant {
    pub const ALL: [CpuConvVariant; 2] = [CpuConvVariant::Direct, CpuConvVariant::Im2colSimd];

    /// Stable id, used in URLs and messages to workers.
    pub fn id(self) -> &'static str {
        match self {
            CpuConvVariant::Direct => "direct",
            CpuConvVariant::Im2colSimd => "im2col-simd",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.id() == id)
    }
}

/// One worker's output pixels r0..r1 (NPQK order) of a convolution, a chunk at a time. It holds
/// the whole input and filter: a window may reach any row of the image.
pub struct ConvRowJob {
    variant: CpuConvVariant,
    shape: ConvShape,
    r0: usize,
    r1: usize,
    x: Vec<f32>,
    f: Vec<f32>,
    /// The filter packed for the micro-kernel (made on the first step).
    packed: Option<PackedB>,
    /// Pixels r0..r1 of the output, K values each.
    y: Vec<f32>,
    done: usize,
    /// im2col rows of the current chunk (reused between steps).
    scratch: Vec<f32>,
}

impl ConvRowJob {
    pub fn new(
        variant: CpuConvVariant,
        shape: ConvShape,
        r0: usize,
        r1: usize,
        x: Vec<f32>,
        f: Vec<f32>,
    ) -> Result<Self, RowsError> {
        if shape.validate().is_err() {
            return Err(RowsError::BadLength("shape"));
        }
        if r0 > r1 || r1 > shape.out_pixels() {
            return Err(RowsError::BadRange);
        }
        if x.len() != shape.x_len() {
            return Err(RowsError::BadLength("input"));
        }
        if f.len() != shape.f_len() {
            return Err(RowsError::BadLength("filter"));
        }
        Ok(Self {
            variant,
            shape,
            r0,
            r1,
            x,
            f,
            packed: None,
            y: vec![0.0; (r1 - r0) * shape.k as usize],
            done: 0,
            scratch: Vec::new(),
        })
    }

    /// Computes up to `rows` more output pixels; returns the pixels done so far. The im2col
    /// variant packs the filter on its first step (counted as compute).
    pub fn step(&mut self, rows: usize) -> usize {
        let s = self.shape;
        let (k, red) = (s.k as usize, s.reduction_len() as usize);
        if self.variant == CpuConvVariant::Im2colSimd && self.packed.is_none() {
            self.packed = Some(PackedB::new(&self.f, red, k));
        }
        let total = self.r1 - self.r0;
        let end = (self.done + rows.max(1)).min(total);
        if end > self.done {
            let (first, count) = (self.r0 + self.done, end - self.done);
            let y = &mut self.y[self.done * k..end * k];
            match (self.variant, &self.packed) {
                (CpuConvVariant::Im2colSimd, Some(p)) => {
                    self.scratch.clear();
                    self.scratch.resize(count * red, 0.0);
                    for i in 0..count {
                        unroll(
                            &s,
                            &self.x,
                            first + i,
                            &mut self.scratch[i * red..(i + 1) * red],
                        );
                    }
                    multiply_packed(&self.scratch, p, y, count);
                }
                _ => {
                    for i in 0..count {
                        direct_pixel(&s, &self.x, &self.f, first + i, &mut y[i * k..(i + 1) * k]);
                    }
                }
            }
            self.done = end;
        }
        self.done
    }

    pub fn is_done(&self) -> bool {
        self.done == self.r1 - self.r0
    }

    pub fn rows_done(&self) -> usize {
        self.done
    }

    /// The computed pixels (zeros where not yet computed).
    pub fn result(&self) -> &[f32] {
        &self.y
    }

    pub fn into_result(self) -> Vec<f32> {
        self.y
    }
}

/// (n, p, q) of output pixel `pixel` (NPQ order).
fn npq(s: &ConvShape, pixel: usize) -> (usize, u32, u32) {
    let (p_len, q_len) = s.out_hw();
    let (p_len, q_len) = (p_len as usize, q_len as usize);
    let n = pixel / (p_len * q_len);
    let rest = pixel % (p_len * q_len);
    (n, (rest / q_len) as u32, (rest % q_len) as u32)
}

/// One output pixel's K values, accumulated in f32 over its window's taps inside the image.
fn direct_pixel(s: &ConvShape, x: &[f32], f: &[f32], pixel: usize, out: &mut [f32]) {
    let (n, p, q) = npq(s, pixel);
    let (c_len, k_len) = (s.c as usize, s.k as usize);
    out.fill(0.0);
    for r in 0..s.r {
        for sx in 0..s.s {
            let Some((ih, iw)) = s.tap(p, q, r, sx) else {
                continue;
            };
            let src = ((n * s.h as usize + ih) * s.w as usize + iw) * c_len;
            let tap = (r as usize * s.s as usize + sx as usize) * c_len;
            for c in 0..c_len {
                let xv = x[src + c];
                let w = &f[(tap + c) * k_len..(tap + c + 1) * k_len];
                for (o, &wv) in out.iter_mut().zip(w) {
                    *o += xv * wv;
                }
            }
        }
    }
}

/// Output pixel `pixel`'s window as one im2col row of R·S·C values (zeros in the padding).
fn unroll(s: &ConvShape, x: &[f32], pixel: usize, row: &mut [f32]) {
    let (n, p, q) = npq(s, pixel);
    let c_len = s.c as usize;
    for r in 0..s.r {
        for sx in 0..s.s {
            let dst = (r as usize * s.s as usize + sx as usize) * c_len;
            match s.tap(p, q, r, sx) {
                Some((ih, iw)) => {
                    let src = ((n * s.h as usize + ih) * s.w as usize + iw) * c_len;
                    row[dst..dst + c_len].copy_from_slice(&x[src..src + c_len]);
                }
                None => row[dst..dst + c_len].fill(0.0),
            }
        }
    }
}

/// Output pixels r0..r1 in one call, for tests and benchmarks.
pub fn conv_rows(
    variant: CpuConvVariant,
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
    r0: usize,
    r1: usize,
) -> Result<Vec<f32>, RowsError> {
    let mut job = ConvRowJob::new(variant, *shape, r0, r1, x.to_vec(), f.to_vec())?;
    job.step(r1 - r0);
    Ok(job.into_result())
}

/// The whole convolution.
pub fn conv(
    variant: CpuConvVariant,
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
) -> Result<Vec<f32>, RowsError> {
    conv_rows(variant, shape, x, f, 0, shape.out_pixels())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conv::reference;
    use crate::verify::{compare, Precision};

    /// Odd shapes: padding, stride 2, dilation 2, C = 1/3/5, a 1×1 filter, batch > 1, one
    /// output pixel, K not a multiple of the micro-kernel's 8 columns.
    fn shapes() -> Vec<ConvShape> {
        vec![
            ConvShape::new(1, 1, 5, 7, 1, 3, 3).with(1, 0, 1),
            ConvShape::new(2, 3, 9, 11, 5, 3, 3).with(1, 1, 1),
            ConvShape::new(1, 5, 13, 10, 7, 5, 5).with(2, 2, 1),
            ConvShape::new(3, 3, 8, 9, 9, 3, 3).with(1, 2, 2),
            ConvShape::new(2, 5, 6, 7, 11, 1, 1).with(1, 0, 1),
            ConvShape::new(1, 3, 7, 7, 4, 7, 7).with(1, 0, 1),
            ConvShape::new(1, 2, 12, 12, 3, 3, 3).with(3, 1, 1),
        ]
    }

    #[test]
    fn both_variants_match_the_f64_reference_on_odd_shapes() {
        for s in shapes() {
            let (x, f) = s.inputs(5);
            let want = reference(&s, &x, &f);
            for v in CpuConvVariant::ALL {
                let got = conv(v, &s, &x, &f).expect("valid");
                assert_eq!(got.len(), s.y_len());
                let verdict = compare(&got, &want, Precision::F32);
                assert!(verdict.ok, "{v:?} {s:?}: {verdict:?}");
            }
        }
    }

    #[test]
    fn row_ranges_and_chunks_put_together_give_the_whole() {
        let s = ConvShape::new(2, 3, 9, 11, 5, 3, 3).with(2, 1, 1);
        let (x, f) = s.inputs(2);
        let pixels = s.out_pixels();
        assert_eq!(pixels, 2 * 5 * 6);
        for v in CpuConvVariant::ALL {
            let whole = conv(v, &s, &x, &f).expect("valid");
            // Three uneven worker ranges, each stepped in chunks of 7 pixels.
            let cuts = [0, 17, 41, pixels];
            let mut joined = Vec::new();
            for w in cuts.windows(2) {
                let mut job =
                    ConvRowJob::new(v, s, w[0], w[1], x.clone(), f.clone()).expect("valid");
                let mut last = 0;
                while !job.is_done() {
                    let done = job.step(7);
                    assert!(done > last && done <= w[1] - w[0]);
                    last = done;
                }
                joined.extend_from_slice(job.result());
            }
            assert_eq!(joined, whole, "{v:?}");
        }
    }

    #[test]
    fn a_shifted_window_is_caught() {
        // The reference must tell a one-column shift apart: compute with the input shifted.
        let s = ConvShape::new(1, 3, 8, 8, 4, 3, 3).with(1, 1, 1);
        let (x, f) = s.inputs(3);
        let mut shifted = x.clone();
        shifted.rotate_left(3);
        let got = conv(CpuConvVariant::Direct, &s, &shifted, &f).expect("valid");
        assert!(!compare(&got, &reference(&s, &x, &f), Precision::F32).ok);
    }

    #[test]
    fn bad_ranges_and_lengths_are_named() {
        let s = ConvShape::new(1, 1, 4, 4, 2, 3, 3);
        let (x, f) = s.inputs(1);
        assert_eq!(
            ConvRowJob::new(CpuConvVariant::Direct, s, 3, 2, x.clone(), f.clone()).err(),
            Some(RowsError::BadRange)
        );
        assert_eq!(
            ConvRowJob::new(CpuConvVariant::Direct, s, 0, 5, x.clone(), f.clone()).err(),
            Some(RowsError::BadRange)
        );
        assert_eq!(
            ConvRowJob::new(CpuConvVariant::Direct, s, 0, 4, x[1..].to_vec(), f.clone()).err(),
            Some(RowsError::BadLength("input"))
        );
        let zero = ConvShape::new(1, 1, 0, 4, 2, 3, 3);
        assert!(ConvRowJob::new(CpuConvVariant::Direct, zero, 0, 0, vec![], f).is_err());
        assert_eq!(
            CpuConvVariant::from_id("im2col-simd"),
            Some(CpuConvVariant::Im2colSimd)
        );
        assert_eq!(CpuConvVariant::from_id("fft"), None);
    }
}
