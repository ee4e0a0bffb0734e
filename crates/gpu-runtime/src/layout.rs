//! How a job's data is laid out in GPU buffers for a given [`Storage`], and back.

use std::borrow::Cow;

use cpu_kernels::data::f32_to_f16_bits;

use crate::catalogue::{Storage, TILE_PAD_K, TILE_PAD_MN};
use crate::workload::Job;

/// The buffers and uniform of one dispatch.
pub struct Layout<'a> {
    /// Input buffers in binding order (bindings 0, 1, …).
    pub inputs: Vec<Cow<'a, [u8]>>,
    /// The uniform `dims` block.
    pub dims: [u32; 4],
    /// f32 elements in the output buffer (binding after the inputs).
    pub output_len: usize,
    /// Rows of the output and the padded and real row lengths, when they differ.
    pub padded_rows: Option<(usize, usize, usize)>,
}

fn round_up4(x: u32) -> u32 {
    x.div_ceil(4) * 4
}

/// Copies a rows×cols row-major matrix into a rows×stride one, zero-filling the new columns.
fn pad_columns(src: &[f32], rows: usize, cols: usize, stride: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * stride];
    for r in 0..rows {
        out[r * stride..r * stride + cols].copy_from_slice(&src[r * cols..(r + 1) * cols]);
    }
    out
}

fn f16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| f32_to_f16_bits(x).to_le_bytes())
        .collect()
}

pub fn layout<'a>(storage: Storage, job: &Job<'a>) -> Layout<'a> {
    match *job {
        Job::Schedule(s) => Layout {
            // The atomic counter, starting at zero.
            inputs: vec![Cow::Owned(vec![0u8; 4])],
            dims: [s.gx, s.gy, s.work, 0],
            output_len: 2 * s.gx as usize * s.gy as usize,
            padded_rows: None,
        },
        Job::Measure { size, input } => crate::measure::layout(size, input),
        Job::Matmul { size, a, b } => {
            let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
            match storage {
                Storage::F32 => Layout {
                    inputs: vec![
                        Cow::Borrowed(bytemuck::cast_slice(a)),
                        Cow::Borrowed(bytemuck::cast_slice(b)),
                    ],
                    dims: [size.m, size.n, size.k, 0],
                    output_len: m * n,
                    padded_rows: None,
                },
                Storage::F32Vec4 => {
                    let (kp, np) = (round_up4(size.k), round_up4(size.n));
                    let (kp_, np_) = (kp as usize, np as usize);
                    let a_p = pad_columns(a, m, k, kp_);
                    // B gains zero rows (K → K4) and zero columns (N → N4).
                    let mut b_p = pad_columns(b, k, n, np_);
                    b_p.resize(kp_ * np_, 0.0);
                    Layout {
                        inputs: vec![
                            Cow::Owned(bytemuck::cast_slice(&a_p).to_vec()),
                            Cow::Owned(bytemuck::cast_slice(&b_p).to_vec()),
                        ],
                        dims: [size.m, np, kp, 0],
                        output_len: m * np_,
                        padded_rows: (np_ != n).then_some((m, np_, n)),
                    }
                }
                Storage::F32Vec4Tiles => {
                    let mp = size.m.div_ceil(TILE_PAD_MN) * TILE_PAD_MN;
                    let np = size.n.div_ceil(TILE_PAD_MN) * TILE_PAD_MN;
                    let kp = size.k.div_ceil(TILE_PAD_K) * TILE_PAD_K;
                    let (mp_, np_, kp_) = (mp as usize, np as usize, kp as usize);
                    // Zero rows and columns on both: they add nothing to any dot product.
                    let mut a_p = pad_columns(a, m, k, kp_);
                    a_p.resize(mp_ * kp_, 0.0);
                    let mut b_p = pad_columns(b, k, n, np_);
                    b_p.resize(kp_ * np_, 0.0);
                    Layout {
                        inputs: vec![
                            Cow::Owned(bytemuck::cast_slice(&a_p).to_vec()),
                            Cow::Owned(bytemuck::cast_slice(&b_p).to_vec()),
                        ],
                        dims: [mp, np, kp, 0],
                        output_len: mp_ * np_,
                        // unpad keeps the first m rows, so padded rows go too.
                        padded_rows: (np_ != n || mp_ != m).then_some((m, np_, n)),
                    }
                }
                Storage::F16Inputs => Layout {
                    inputs: vec![Cow::Owned(f16_bytes(a)), Cow::Owned(f16_bytes(b))],
                    dims: [size.m, size.n, size.k, 0],
                    output_len: m * n,
                    padded_rows: None,
                },
            }
        }
    }
}

/// Drops padded columns from a result read back from the GPU.
pub fn unpad(raw: Vec<f32>, padded_rows: Option<(usize, usize, usize)>) -> Vec<f32> {
    match padded_rows {
        None => raw,
        Some((rows, stride, cols)) => (0..rows)
            .flat_map(|r| raw[r * stride..r * stride + cols].iter().copied())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpu_kernels::matmul::MatmulSize;

    #[test]
    fn vec4_padding_round_trips() {
        let size = MatmulSize::new(2, 3, 5);
        let (a, b) = size.inputs(1);
        let l = layout(Storage::F32Vec4, &Job::Matmul { size, a: &a, b: &b });
        assert_eq!(l.dims, [2, 4, 8, 0]);
        assert_eq!(l.inputs[0].len(), 2 * 8 * 4);
        assert_eq!(l.inputs[1].len(), 8 * 4 * 4);
        let a_p: Vec<f32> = bytemuck::pod_collect_to_vec(&l.inputs[0]);
        assert_eq!(&a_p[..5], &a[..5]);
        assert_eq!(&a_p[5..8], &[0.0; 3]);
        let raw: Vec<f32> = (0..8).map(|x| x as f32).collect();
        assert_eq!(
            unpad(raw, l.padded_rows),
            vec![0.0, 1.0, 2.0, 4.0, 5.0, 6.0]
        );
    }

    #[test]
    fn tile_padding_round_trips() {
        let size = MatmulSize::new(3, 130, 33);
        let (a, b) = size.inputs(1);
        let l = layout(Storage::F32Vec4Tiles, &Job::Matmul { size, a: &a, b: &b });
        assert_eq!(l.dims, [128, 256, 64, 0]);
        assert_eq!(l.inputs[0].len(), 128 * 64 * 4);
        assert_eq!(l.inputs[1].len(), 64 * 256 * 4);
        assert_eq!(l.output_len, 128 * 256);
        let b_p: Vec<f32> = bytemuck::pod_collect_to_vec(&l.inputs[1]);
        assert_eq!(&b_p[256..386], &b[130..260]);
        assert!(b_p[386..512]
            .iter()
            .chain(&b_p[33 * 256..])
            .all(|&x| x == 0.0));
        let raw: Vec<f32> = (0..128 * 256).map(|x| x as f32).collect();
        let c = unpad(raw, l.padded_rows);
        assert_eq!(c.len(), 3 * 130);
        assert_eq!((c[129], c[130]), (129.0, 256.0));
    }

    #[test]
    fn f16_inputs_are_two_bytes_each() {
        let size = MatmulSize::new(3, 3, 3);
        let (a, b) = size.inputs(1);
        let l = layout(Storage::F16Inputs, &Job::Matmul { size, a: &a, b: &b });
        assert_eq!(l.inputs[0].len(), 18);
    }
}
