//! One strided matrix multiply with a choice of engine, for the tuned CPU trainers (the MLP's
//! `mlp::tuned` and the CNN's `cnn::tuned`): the `matrixmultiply` crate's sgemm natively, or
//! the race's packed SIMD micro-kernel ([`crate::matmul_variants::multiply_packed`]; what the
//! browser runs).
//!
//! `matrixmultiply` comes with the `matrixmultiply` feature (native builds only), so crates
//! that must stay dependency-free (xtask, through `cnn`) leave it off and keep [`Gemm::Simd`].

use crate::matmul_variants::{multiply_packed, PackedB};

/// Which matrix multiply a tuned trainer uses. Non-exhaustive: the `matrixmultiply` variant
/// exists only with that feature, which another crate in the build may switch on.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gemm {
    /// The `matrixmultiply` crate's sgemm (native builds with the feature only).
    #[cfg(all(feature = "matrixmultiply", not(target_arch = "wasm32")))]
    MatrixMultiply,
    /// The race's packed SIMD micro-kernel (SIMD128 in wasm, portable 4-lane code natively).
    Simd,
}

impl Gemm {
    /// Every multiply this build offers.
    pub const ALL: &'static [Gemm] = &[
        #[cfg(all(feature = "matrixmultiply", not(target_arch = "wasm32")))]
        Gemm::MatrixMultiply,
        Gemm::Simd,
    ];

    /// The fastest this build offers: `matrixmultiply` natively, the SIMD kernel in wasm.
    pub fn best() -> Self {
        Self::ALL[0]
    }

    pub fn code(self) -> &'static str {
        match self {
            #[cfg(all(feature = "matrixmultiply", not(target_arch = "wasm32")))]
            Gemm::MatrixMultiply => "matrixmultiply",
            Gemm::Simd => "simd",
        }
    }
}

/// A matrix view: element (r, c) at `data[r·rs + c·cs]`.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub rs: usize,
    pub cs: usize,
}

/// Reusable buffers for [`Gemm::Simd`] (A made contiguous, B packed).
pub struct Scratch {
    a: Vec<f32>,
    packed: PackedB,
}

impl Scratch {
    pub fn new() -> Self {
        Self {
            a: Vec::new(),
            packed: PackedB::empty(),
        }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

/// C (m × n, row-major, contiguous) = A (m × k) · B (k × n), or C += A·B when `add`.
///
/// # Panics
/// If A or B is shorter than its shape and strides, or C than m·n (a caller's bug: the
/// trainers size every buffer from the network's shape).
#[allow(clippy::too_many_arguments)]
pub fn gemm(
    kind: Gemm,
    scratch: &mut Scratch,
    m: usize,
    k: usize,
    n: usize,
    a: View,
    b: View,
    c: &mut [f32],
    add: bool,
) {
    let c = &mut c[..m * n];
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !add {
            c.fill(0.0);
        }
        return;
    }
    let last = |v: View, rows: usize, cols: usize| (rows - 1) * v.rs + (cols - 1) * v.cs;
    assert!(
        a.data.len() > last(a, m, k) && b.data.len() > last(b, k, n),
        "gemm operand shorter than its shape"
    );
    match kind {
        #[cfg(all(feature = "matrixmultiply", not(target_arch = "wasm32")))]
        Gemm::MatrixMultiply => {
            let beta = if add { 1.0 } else { 0.0 };
            // SAFETY: the assert above keeps every element of A and B that sgemm reads inside
            // its slice, and C is exactly m × n with strides (n, 1). Strides fit in isize
            // because they index slices.
            unsafe {
                matrixmultiply::sgemm(
                    m,
                    k,
                    n,
                    1.0,
                    a.data.as_ptr(),
                    a.rs as isize,
                    a.cs as isize,
                    b.data.as_ptr(),
                    b.rs as isize,
                    b.cs as isize,
                    beta,
                    c.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
        }
        Gemm::Simd => {
            let rows: &[f32] = if a.cs == 1 && a.rs == k {
                &a.data[..m * k]
            } else {
                scratch.a.clear();
                scratch
                    .a
                    .extend((0..m).flat_map(|r| (0..k).map(move |p| a.data[r * a.rs + p * a.cs])));
                &scratch.a
            };
            scratch.packed.repack_strided(b.data, k, n, b.rs, b.cs);
            if !add {
                c.fill(0.0);
            }
            multiply_packed(rows, &scratch.packed, c, m);
        }
    }
}
