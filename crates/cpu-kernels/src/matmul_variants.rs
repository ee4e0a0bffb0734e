//! The CPU side of the race: f32 matrix multiply in three variants, each over a range of rows of
//! C so the work can be split between workers and reported chunk by chunk.
//!
//! - [`CpuVariant::Naive`]: the textbook triple loop (i, j, p); reads B down a column, one cache
//!   line per multiply-add once B is larger than the cache.
//! - [`CpuVariant::Blocked`]: loop order i-p-j over blocks of K and N, so a block of B stays in
//!   cache and the inner loop runs along rows (contiguous, which compilers may vectorise).
//! - [`CpuVariant::Simd`]: B packed once into strips of [`NR`] columns; a micro-kernel keeps a
//!   [`MR`]×[`NR`] tile of C in registers as 4-lane vectors across a block of K. In wasm it is
//!   written with `core::arch::wasm32` f32x4 intrinsics (SIMD128); elsewhere the same code runs
//!   on a portable 4-lane type, so native tests check the same blocking logic.
//!
//! All variants write `C[r0..r1, ..]` into a slice of `(r1 − r0)·N` elements and read the
//! matching rows of A only, so a worker needs just its slice of A (and all of B).

use crate::matmul::MatmulSize;

/// Rows of C per micro-kernel tile. The accumulators live in vector registers: MR×[`NV`]
/// of them, plus [`NV`] B vectors and the broadcasts of A, which LLVM computes once per step
/// and keeps (x86-64 has 16 vector registers; V8 keeps one for itself). 4×8 needs 8 + 2 + 4 =
/// 14 and is the largest tile that never spills: 6×8 (20 live), 5×8, 4×12 and 6×8 with the
/// columns outermost all measured slower, 3×12 and 2×16 a little slower (docs/benchmarks.md;
/// re-measured in round three, in V8 by CPU time at load 11: 4×8 41.4, 3×12 40.7, 5×8 33.5,
/// 6×8 31.5 GFLOP/s at 512³, relaxed build). Eight independent accumulators also cover the FMA
/// latency (4 cycles × 2 units).
pub const MR: usize = 4;
/// Columns of C per micro-kernel tile (two 4-lane vectors).
pub const NR: usize = 8;
/// 4-lane vectors per row of a tile.
const NV: usize = NR / 4;
/// Depth of a K block: an MR×KC panel of A (4 KiB) plus a KC×NR strip of B (8 KiB) stay in a
/// 32 KiB L1 with room to spare. Measured at 512³ in V8 by CPU time (docs/benchmarks.md, round
/// three): 384 and 512 were within 3 % of 256, inside the run-to-run spread, and 512 would fill
/// two thirds of a 32 KiB L1.
const KC: usize = 256;
/// Columns per N block: a KC×NC block of packed B (256 KiB) stays in L2.
const NC: usize = 256;
/// Rows of A packed at a time for one K block (MC×KC values, 128 KiB): the panels are packed
/// once and reused by every N block, instead of once per N block.
const MC: usize = 128;

/// Whether this build's SIMD micro-kernel multiplies and adds in one rounding step: a wasm
/// build with `relaxed-simd` (`f32x4.relaxed_madd`, which the engine may also run as a
/// multiply then an add: both roundings are covered by the verification bound, see
/// [`Fused`]).
pub const FUSED_BUILD: bool = cfg!(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    target_feature = "relaxed-simd"
));

/// Which CPU implementation to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuVariant {
    Naive,
    Blocked,
    Simd,
}

impl CpuVariant {
    pub const ALL: [CpuVariant; 3] = [CpuVariant::Naive, CpuVariant::Blocked, CpuVariant::Simd];

    /// Stable id, used in URLs and messages to workers.
    pub fn id(self) -> &'static str {
        match self {
            CpuVariant::Naive => "naive",
            CpuVariant::Blocked => "blocked",
            CpuVariant::Simd => "simd",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.id() == id)
    }

    /// Whether this build runs real SIMD instructions for [`CpuVariant::Simd`] (wasm with
    /// simd128); otherwise the portable 4-lane fallback runs the same code.
    pub fn simd_is_native() -> bool {
        cfg!(all(target_arch = "wasm32", target_feature = "simd128"))
    }
}

/// Why a row range cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowsError {
    /// `r0 > r1` or `r1 > M`.
    BadRange,
    /// A slice has the wrong length for the size and range.
    BadLength(&'static str),
}

/// One worker's share of a multiply: its rows of A, all of B (packed once when the variant
/// wants it) and its rows of C, computed a chunk at a time.
pub struct RowJob {
    variant: CpuVariant,
    size: MatmulSize,
    r0: usize,
    r1: usize,
    /// Rows r0..r1 of A (row-major, K per row).
    a: Vec<f32>,
    b: Vec<f32>,
    /// B packed for the SIMD micro-kernel (made on the first step).
    packed: Option<PackedB>,
    /// Rows r0..r1 of C.
    c: Vec<f32>,
    /// Rows done so far, counted from r0.
    done: usize,
}

impl RowJob {
    /// `a_rows` holds rows r0..r1 of A; `b` all of B.
    pub fn new(
        variant: CpuVariant,
        size: MatmulSize,
        r0: usize,
        r1: usize,
        a_rows: Vec<f32>,
        b: Vec<f32>,
    ) -> Result<Self, RowsError> {
        let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
        if r0 > r1 || r1 > m {
            return Err(RowsError::BadRange);
        }
        if a_rows.len() != (r1 - r0) * k {
            return Err(RowsError::BadLength("A rows"));
        }
        if b.len() != k * n {
            return Err(RowsError::BadLength("B"));
        }
        Ok(Self {
            variant,
            size,
            r0,
            r1,
            a: a_rows,
            b,
            packed: None,
            c: vec![0.0; (r1 - r0) * n],
            done: 0,
        })
    }

    /// A job whose rows of A and B are zeros, to be filled through [`RowJob::inputs_mut`]
    /// (the separately built kernel module's callers write straight into its memory).
    pub fn zeroed(
        variant: CpuVariant,
        size: MatmulSize,
        r0: usize,
        r1: usize,
    ) -> Result<Self, RowsError> {
        let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
        if r0 > r1 || r1 > m {
            return Err(RowsError::BadRange);
        }
        Self::new(
            variant,
            size,
            r0,
            r1,
            vec![0.0; (r1 - r0) * k],
            vec![0.0; k * n],
        )
    }

    /// Rows r0..r1 of A and all of B, to be written before the first step (writing them
    /// later restarts nothing: rows done stay done, and B, once packed, is not read again).
    pub fn inputs_mut(&mut self) -> (&mut [f32], &mut [f32]) {
        (&mut self.a, &mut self.b)
    }

    /// Computes up to `rows` more rows; returns the rows done so far. The SIMD variant packs
    /// B on its first step (counted as compute, not as data transfer).
    pub fn step(&mut self, rows: usize) -> usize {
        if self.variant == CpuVariant::Simd && self.packed.is_none() {
            let (n, k) = (self.size.n as usize, self.size.k as usize);
            self.packed = Some(PackedB::new(&self.b, k, n));
        }
        let total = self.r1 - self.r0;
        let end = (self.done + rows.max(1)).min(total);
        if end > self.done {
            let (n, k) = (self.size.n as usize, self.size.k as usize);
            let a = &self.a[self.done * k..end * k];
            let c = &mut self.c[self.done * n..end * n];
            let rows = end - self.done;
            match (self.variant, &self.packed) {
                (CpuVariant::Naive, _) => naive(a, &self.b, c, rows, n, k),
                (CpuVariant::Blocked, _) => blocked(a, &self.b, c, rows, n, k),
                (CpuVariant::Simd, Some(p)) => simd::<BuildMulAdd>(a, p, c, rows),
                (CpuVariant::Simd, None) => blocked(a, &self.b, c, rows, n, k),
            }
            self.done = end;
        }
        self.done
    }

    pub fn rows_done(&self) -> usize {
        self.done
    }

    pub fn rows_total(&self) -> usize {
        self.r1 - self.r0
    }

    pub fn is_done(&self) -> bool {
        self.done == self.r1 - self.r0
    }

    /// The computed rows of C (zeros where not yet computed).
    pub fn result(&self) -> &[f32] {
        &self.c
    }

    pub fn into_result(self) -> Vec<f32> {
        self.c
    }
}

/// Rows r0..r1 of C = A·B in one call (A and B whole), for tests and benchmarks.
pub fn matmul_rows(
    variant: CpuVariant,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    r0: usize,
    r1: usize,
) -> Result<Vec<f32>, RowsError> {
    let k = size.k as usize;
    if r0 > r1 || r1 > size.m as usize {
        return Err(RowsError::BadRange);
    }
    if a.len() != size.a_len() {
        return Err(RowsError::BadLength("A"));
    }
    let mut job = RowJob::new(
        variant,
        size,
        r0,
        r1,
        a[r0 * k..r1 * k].to_vec(),
        b.to_vec(),
    )?;
    job.step(r1 - r0);
    Ok(job.into_result())
}

/// The whole product C = A·B.
pub fn matmul(
    variant: CpuVariant,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
) -> Result<Vec<f32>, RowsError> {
    matmul_rows(variant, size, a, b, 0, size.m as usize)
}

/// Textbook i-j-p loop over `rows` rows of A.
fn naive(a: &[f32], b: &[f32], c: &mut [f32], rows: usize, n: usize, k: usize) {
    for i in 0..rows {
        for j in 0..n {
            let mut acc = 0f32;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = acc;
        }
    }
}

/// Cache-blocked i-p-j loop: for each block of columns and of K, every row of C accumulates
/// a[i][p] · (row p of B) along contiguous memory.
fn blocked(a: &[f32], b: &[f32], c: &mut [f32], rows: usize, n: usize, k: usize) {
    const KB: usize = 128;
    const NB: usize = 512;
    for jj in (0..n).step_by(NB) {
        let je = (jj + NB).min(n);
        for pp in (0..k).step_by(KB) {
            let pe = (pp + KB).min(k);
            for i in 0..rows {
                let c_row = &mut c[i * n + jj..i * n + je];
                for p in pp..pe {
                    let aip = a[i * k + p];
                    let b_row = &b[p * n + jj..p * n + je];
                    for (cv, &bv) in c_row.iter_mut().zip(b_row) {
                        *cv += aip * bv;
                    }
                }
            }
        }
    }
}

/// B rearranged for the micro-kernel: for each K block, for each strip of NR columns, KC rows
/// of NR consecutive values (zero-padded past N), so the kernel reads it strictly in order.
pub struct PackedB {
    n: usize,
    k: usize,
    strips: usize,
    data: Vec<[f32; NR]>,
}

impl PackedB {
    pub fn new(b: &[f32], k: usize, n: usize) -> Self {
        let strips = n.div_ceil(NR);
        let mut data = vec![[0f32; NR]; strips * k];
        // Block pc starts at row pc·strips; within it, strip s at s·kc.
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            let base = pc * strips;
            for s in 0..strips {
                let cols = NR.min(n - s * NR);
                for p in 0..kc {
                    let src = &b[(pc + p) * n + s * NR..(pc + p) * n + s * NR + cols];
                    data[base + s * kc + p][..cols].copy_from_slice(src);
                }
            }
        }
        Self { n, k, strips, data }
    }

    /// An empty packing, to be filled by [`PackedB::repack_strided`] (reuses its allocation).
    pub fn empty() -> Self {
        Self {
            n: 0,
            k: 0,
            strips: 0,
            data: Vec::new(),
        }
    }

    /// Packs the k×n matrix whose element (p, j) is `b[p·rs + j·cs]` (a transposed or
    /// row-major view, e.g. the training step's weight matrices), into this buffer's
    /// allocation. Same packed layout as [`PackedB::new`].
    pub fn repack_strided(&mut self, b: &[f32], k: usize, n: usize, rs: usize, cs: usize) {
        let strips = n.div_ceil(NR);
        assert!(
            k == 0 || n == 0 || b.len() > (k - 1) * rs + (n - 1) * cs,
            "B too short for its strides"
        );
        self.data.clear();
        self.data.resize(strips * k, [0.0; NR]);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            let base = pc * strips;
            for s in 0..strips {
                let cols = NR.min(n - s * NR);
                for p in 0..kc {
                    let src = (pc + p) * rs + s * NR * cs;
                    let row = &mut self.data[base + s * kc + p];
                    for (j, d) in row[..cols].iter_mut().enumerate() {
                        *d = b[src + j * cs];
                    }
                }
            }
        }
        self.n = n;
        self.k = k;
        self.strips = strips;
    }
}

/// `rows` rows of A (K each) times packed B, added into `c` (`rows`·N, zero for a plain
/// product): the SIMD micro-kernel for callers that make their own rows of A (the conv race's
/// im2col rows).
pub fn multiply_packed(a: &[f32], packed: &PackedB, c: &mut [f32], rows: usize) {
    assert!(
        a.len() >= rows * packed.k && c.len() >= rows * packed.n,
        "A or C too short"
    );
    simd::<BuildMulAdd>(a, packed, c, rows);
}

/// How the micro-kernel forms `acc + x·y` on 4-lane vectors; the choice sets how results round.
pub trait MulAdd {
    fn mul_add(acc: lanes::F4, x: lanes::F4, y: lanes::F4) -> lanes::F4;
}

/// A multiply, rounded, then an add, rounded (plain SIMD128 has no fused multiply-add).
pub struct Separate;

impl MulAdd for Separate {
    #[inline(always)]
    fn mul_add(acc: lanes::F4, x: lanes::F4, y: lanes::F4) -> lanes::F4 {
        acc.mul_then_add(x, y)
    }
}

/// A fused multiply-add: `acc + x·y` rounded once. In wasm with `relaxed-simd` it is
/// `f32x4.relaxed_madd`, which the engine may run fused or as a multiply then an add (both
/// stay within the bound below); natively (tests) it is `f32::mul_add` per lane, always fused.
///
/// Rounding bound, by the standard argument (Higham §3.1): a tile's accumulator over a K block
/// of length kc rounds once per step when fused (twice when not: the product as well), so
/// each product picks up at most kc (kc + 1) relative errors of u = 2⁻²⁴ there; adding a
/// block's tile into C costs one more rounding per block, ⌈K/KC⌉ in all. So
/// |ĉ − c| ≤ γₘ·Σ|aᵢbᵢ| with m ≤ K + ⌈K/KC⌉ + 1 ≤ 2K for K ≥ 2 (for K = 1 the one product is
/// rounded once, or exact when fused), and γₘ = m·u/(1 − m·u) ≈ m·u far below K = 2²³. This is
/// [`crate::verify::compare`]'s F32 rule, 2·K·u·Σ|aᵢbᵢ|, which therefore holds fused or not.
#[cfg(any(not(target_arch = "wasm32"), target_feature = "relaxed-simd"))]
pub struct Fused;

#[cfg(any(not(target_arch = "wasm32"), target_feature = "relaxed-simd"))]
impl MulAdd for Fused {
    #[inline(always)]
    fn mul_add(acc: lanes::F4, x: lanes::F4, y: lanes::F4) -> lanes::F4 {
        acc.fused_mul_add(x, y)
    }
}

/// The multiply-add of this build's SIMD variant.
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
type BuildMulAdd = Fused;
#[cfg(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
type BuildMulAdd = Separate;

/// The SIMD product of `rows` rows of A (K each) and packed B into `c` with a chosen
/// multiply-add (tests run both roundings natively).
pub fn multiply_packed_with<M: MulAdd>(a: &[f32], packed: &PackedB, c: &mut [f32], rows: usize) {
    assert!(
        a.len() >= rows * packed.k && c.len() >= rows * packed.n,
        "A or C too short"
    );
    simd::<M>(a, packed, c, rows);
}

/// Register-tiled multiply of `rows` rows of A by packed B into C. For each K block and each
/// block of up to MC rows, the rows are packed into MR-row panels (p-major, MR values per step,
/// so the kernel reads one stream; rows past the end are zeros), once; then for each block of NC
/// columns, every panel is multiplied by every strip of the block.
fn simd<M: MulAdd>(a: &[f32], packed: &PackedB, c: &mut [f32], rows: usize) {
    let (n, k, strips) = (packed.n, packed.k, packed.strips);
    let strips_per_block = NC / NR;
    let kc_max = KC.min(k);
    let mut panels = vec![[0f32; MR]; MC.min(rows.next_multiple_of(MR)) / MR * kc_max];
    for pc in (0..k).step_by(KC) {
        let kc = KC.min(k - pc);
        let block = &packed.data[pc * strips..pc * strips + strips * kc];
        for i0 in (0..rows).step_by(MC) {
            let mc = MC.min(rows - i0);
            let tiles = mc.div_ceil(MR);
            for (t, panel) in panels.chunks_exact_mut(kc).take(tiles).enumerate() {
                let i = i0 + t * MR;
                let mr = MR.min(rows - i);
                for (p, slot) in panel.iter_mut().enumerate() {
                    for (r, v) in slot.iter_mut().enumerate() {
                        *v = if r < mr { a[(i + r) * k + pc + p] } else { 0.0 };
                    }
                }
            }
            for s0 in (0..strips).step_by(strips_per_block) {
                let s1 = (s0 + strips_per_block).min(strips);
                for (t, panel) in panels.chunks_exact(kc).take(tiles).enumerate() {
                    let i = i0 + t * MR;
                    let mr = MR.min(rows - i);
                    for s in s0..s1 {
                        let strip = &block[s * kc..(s + 1) * kc];
                        let tile = micro_kernel::<M>(panel, strip);
                        let col0 = s * NR;
                        let cols = NR.min(n - col0);
                        for (r, tile_row) in tile.iter().enumerate().take(mr) {
                            let c_row = &mut c[(i + r) * n + col0..(i + r) * n + col0 + cols];
                            add_row(c_row, tile_row);
                        }
                    }
                }
            }
        }
    }
}

/// An MR×NR tile of an A panel × a B strip (the same number of steps), kept in MR·NV 4-lane
/// accumulators. Both operands are arrays of known length per step, so the hot loop has no
/// bounds checks (the difference between a fast and a slow wasm kernel).
#[inline(always)]
fn micro_kernel<M: MulAdd>(panel: &[[f32; MR]], strip: &[[f32; NR]]) -> [[lanes::F4; NV]; MR] {
    use lanes::F4;
    let mut acc = [[F4::zero(); NV]; MR];
    for (x, b) in panel.iter().zip(strip) {
        let bv: [F4; NV] = std::array::from_fn(|v| F4::load(&b[4 * v..4 * v + 4]));
        for (acc, &x) in acc.iter_mut().zip(x) {
            let x = F4::splat(x);
            for (acc, &b) in acc.iter_mut().zip(&bv) {
                *acc = M::mul_add(*acc, x, b);
            }
        }
    }
    acc
}

/// `c_row += tile_row` for one row of a tile (`c_row` holds 1 to NR values): whole vectors where
/// the row is a full strip, one value at a time at the partial strip past N. Each value is one
/// rounded f32 add either way.
#[inline(always)]
fn add_row(c_row: &mut [f32], tile_row: &[lanes::F4; NV]) {
    use lanes::F4;
    if c_row.len() == NR {
        for (c4, &t) in c_row.chunks_exact_mut(4).zip(tile_row) {
            F4::load(c4).plus(t).store(c4);
        }
    } else {
        let mut t = [0f32; NR];
        for (t4, v) in t.chunks_exact_mut(4).zip(tile_row) {
            v.store(t4);
        }
        for (cv, &t) in c_row.iter_mut().zip(&t) {
            *cv += t;
        }
    }
}

/// A 4-lane f32 vector: wasm SIMD128 where available, plain arrays otherwise (same results:
/// lane by lane, with the same roundings).
pub mod lanes {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    mod imp {
        use core::arch::wasm32::*;

        #[derive(Clone, Copy)]
        pub struct F4(v128);

        impl F4 {
            #[inline(always)]
            pub fn zero() -> Self {
                F4(f32x4_splat(0.0))
            }
            #[inline(always)]
            pub fn splat(x: f32) -> Self {
                F4(f32x4_splat(x))
            }
            /// Loads the first four values of `s` (which must hold at least four).
            #[inline(always)]
            pub fn load(s: &[f32]) -> Self {
                assert!(s.len() >= 4);
                // SAFETY: the assert above guarantees 16 readable bytes; v128_load accepts
                // unaligned addresses.
                F4(unsafe { v128_load(s.as_ptr() as *const v128) })
            }
            #[inline(always)]
            pub fn store(self, s: &mut [f32]) {
                assert!(s.len() >= 4);
                // SAFETY: 16 writable bytes, checked above; unaligned stores are allowed.
                unsafe { v128_store(s.as_mut_ptr() as *mut v128, self.0) }
            }
            #[inline(always)]
            pub fn plus(self, x: Self) -> Self {
                F4(f32x4_add(self.0, x.0))
            }
            /// self + x·y as a multiply, then an add (two roundings).
            #[inline(always)]
            pub fn mul_then_add(self, x: Self, y: Self) -> Self {
                F4(f32x4_add(self.0, f32x4_mul(x.0, y.0)))
            }
            /// self + x·y by `f32x4.relaxed_madd`: fused where the machine has FMA.
            #[cfg(target_feature = "relaxed-simd")]
            #[inline(always)]
            pub fn fused_mul_add(self, x: Self, y: Self) -> Self {
                F4(f32x4_relaxed_madd(x.0, y.0, self.0))
            }
        }
    }

    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    mod imp {
        #[derive(Clone, Copy)]
        pub struct F4([f32; 4]);

        impl F4 {
            #[inline(always)]
            pub fn zero() -> Self {
                F4([0.0; 4])
            }
            #[inline(always)]
            pub fn splat(x: f32) -> Self {
                F4([x; 4])
            }
            #[inline(always)]
            pub fn load(s: &[f32]) -> Self {
                F4([s[0], s[1], s[2], s[3]])
            }
            #[inline(always)]
            pub fn store(self, s: &mut [f32]) {
                s[..4].copy_from_slice(&self.0);
            }
            #[inline(always)]
            pub fn plus(self, x: Self) -> Self {
                let mut r = self.0;
                for (r, x) in r.iter_mut().zip(x.0) {
                    *r += x;
                }
                F4(r)
            }
            #[inline(always)]
            pub fn mul_then_add(self, x: Self, y: Self) -> Self {
                let mut r = self.0;
                for ((r, x), y) in r.iter_mut().zip(x.0).zip(y.0) {
                    *r += x * y;
                }
                F4(r)
            }
            /// One rounding per lane (`f32::mul_add`), as a fused relaxed madd.
            #[inline(always)]
            pub fn fused_mul_add(self, x: Self, y: Self) -> Self {
                let mut r = self.0;
                for ((r, x), y) in r.iter_mut().zip(x.0).zip(y.0) {
                    *r = x.mul_add(y, *r);
                }
                F4(r)
            }
        }
    }

    pub use imp::F4;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::reference;
    use crate::verify::{compare, Precision};

    fn check(size: MatmulSize, seed: u64) {
        let (a, b) = size.inputs(seed);
        let r = reference(size, &a, &b);
        for v in CpuVariant::ALL {
            let c = matmul(v, size, &a, &b).expect("valid shapes");
            let verdict = compare(&c, &r, Precision::F32);
            assert!(verdict.ok, "{v:?} at {size:?}: {verdict:?}");
        }
    }

    #[test]
    fn all_variants_match_the_reference_on_odd_and_degenerate_shapes() {
        for (m, n, k) in [
            (1, 1, 1),
            (1, 1, 7),
            (7, 5, 1),    // K = 1
            (13, 17, 19), // odd everything
            (33, 9, 300), // K over one K block
            (300, 3, 5),  // tall and skinny
            (2, 531, 4),  // wide, several N blocks and a partial strip
            (5, 8, 257),  // exactly one strip, K one past a block
            (64, 64, 64),
        ] {
            check(MatmulSize::new(m, n, k), (m * 31 + n * 7 + k) as u64);
        }
    }

    /// One shape past every block edge of the SIMD kernel at once, derived from the constants so
    /// it follows a retuning: M = MC + MR + 1 (a second row block whose last tile is partial),
    /// N = NC + NR + 3 (a second column block ending in a partial strip), K = KC + 5 (a short
    /// second K block); with both roundings, whole and stepped in chunks that end mid-tile and
    /// mid-row-block.
    #[test]
    fn the_simd_kernel_is_exact_past_every_block_edge() {
        let (m, n, k) = (MC + MR + 1, NC + NR + 3, KC + 5);
        let size = MatmulSize::new(m as u32, n as u32, k as u32);
        let (a, b) = size.inputs(77);
        let r = reference(size, &a, &b);
        let packed = PackedB::new(&b, k, n);
        for fused in [false, true] {
            let mut c = vec![0f32; size.c_len()];
            if fused {
                multiply_packed_with::<Fused>(&a, &packed, &mut c, m);
            } else {
                multiply_packed_with::<Separate>(&a, &packed, &mut c, m);
            }
            let v = compare(&c, &r, Precision::F32);
            assert!(v.ok, "fused {fused} at {size:?}: {v:?}");
        }
        let mut job = RowJob::new(CpuVariant::Simd, size, 0, m, a.clone(), b.clone()).expect("ok");
        while !job.is_done() {
            job.step(MC / 2 + 3);
        }
        let v = compare(job.result(), &r, Precision::F32);
        assert!(v.ok, "stepped at {size:?}: {v:?}");
    }

    /// The packed kernel with a separate multiply and add and with a fused multiply-add (the
    /// relaxed-SIMD module's rounding) both stay inside 2·K·u·Σ|aᵢbᵢ| (derivation at
    /// [`Fused`]), over shapes crossing the tile, strip, K-block and N-block edges; and the
    /// two really round differently.
    #[test]
    fn fused_and_separate_multiply_add_both_stay_inside_the_k_scaled_bound() {
        let mut differ = 0usize;
        for (m, n, k) in [
            (1, 1, 1),
            (5, 9, 3),
            (4, 8, 256),
            (9, 17, 257),
            (7, 300, 100), // two N blocks and a partial strip
            (6, 11, 1500), // six K blocks
            (3, 5, 4099),
        ] {
            let size = MatmulSize::new(m, n, k);
            let (a, b) = size.inputs(u64::from(m * 131 + n * 17 + k));
            let r = reference(size, &a, &b);
            let packed = PackedB::new(&b, k as usize, n as usize);
            let mut outs = Vec::new();
            for fused in [false, true] {
                let mut c = vec![0f32; size.c_len()];
                if fused {
                    multiply_packed_with::<Fused>(&a, &packed, &mut c, m as usize);
                } else {
                    multiply_packed_with::<Separate>(&a, &packed, &mut c, m as usize);
                }
                let v = compare(&c, &r, Precision::F32);
                assert!(v.ok, "fused {fused} at {size:?}: {v:?}");
                assert!(v.max_rel_error <= v.rel_bound);
                outs.push(c);
            }
            differ += outs[0].iter().zip(&outs[1]).filter(|(x, y)| x != y).count();
        }
        assert!(
            differ > 0,
            "the fused path rounds like the separate one: not fused"
        );
    }

    /// The bound is tight enough to catch a kernel that loses one term in 2000: rounding may
    /// move a result by 2·K·u·Σ|aᵢbᵢ| at most, a missing term moves it by |a·b| of that term.
    #[test]
    fn the_bound_scales_with_k_and_an_off_by_one_term_fails_it() {
        let size = MatmulSize::new(4, 8, 2000);
        let (a, b) = size.inputs(3);
        let r = reference(size, &a, &b);
        let packed = PackedB::new(&b, 2000, 8);
        let mut c = vec![0f32; size.c_len()];
        multiply_packed_with::<Fused>(&a, &packed, &mut c, 4);
        assert!(compare(&c, &r, Precision::F32).ok);
        // Dropping the last of 2000 terms is a far larger error than rounding.
        let mut short = vec![0f32; size.c_len()];
        let a_short: Vec<f32> = a
            .chunks(2000)
            .flat_map(|row| row[..1999].iter().copied().chain([0.0]))
            .collect();
        multiply_packed_with::<Fused>(&a_short, &packed, &mut short, 4);
        assert!(!compare(&short, &r, Precision::F32).ok);
    }

    #[test]
    fn a_strided_packing_equals_packing_the_transposed_copy() {
        // B given as its transpose (n×k row-major): element (p, j) at j·k + p.
        let (k, n) = (19, 13);
        let bt: Vec<f32> = (0..k * n).map(|i| i as f32 * 0.5 - 3.0).collect();
        let mut b = vec![0f32; k * n];
        for p in 0..k {
            for j in 0..n {
                b[p * n + j] = bt[j * k + p];
            }
        }
        let mut packed = PackedB::empty();
        packed.repack_strided(&bt, k, n, 1, k);
        let direct = PackedB::new(&b, k, n);
        assert_eq!(packed.data, direct.data);
        // A second, smaller repack into the same allocation is a fresh packing.
        packed.repack_strided(&b[..3 * n], 3, n, n, 1);
        assert_eq!(packed.data, PackedB::new(&b[..3 * n], 3, n).data);
    }

    #[test]
    fn row_ranges_put_together_give_the_whole_product() {
        let size = MatmulSize::new(37, 29, 41);
        let (a, b) = size.inputs(9);
        for v in CpuVariant::ALL {
            let whole = matmul(v, size, &a, &b).expect("valid");
            let n = size.n as usize;
            // Uneven splits, including an empty range and single rows.
            let cuts = [0, 0, 1, 6, 7, 20, 36, 37];
            let mut joined = Vec::new();
            for w in cuts.windows(2) {
                let part = matmul_rows(v, size, &a, &b, w[0], w[1]).expect("valid range");
                assert_eq!(part.len(), (w[1] - w[0]) * n);
                joined.extend(part);
            }
            assert_eq!(joined, whole, "{v:?}: split result differs from the whole");
        }
    }

    #[test]
    fn stepping_in_chunks_equals_one_call() {
        let size = MatmulSize::new(23, 19, 300);
        let (a, b) = size.inputs(4);
        let k = size.k as usize;
        for v in CpuVariant::ALL {
            let once = matmul_rows(v, size, &a, &b, 3, 22).expect("valid");
            let mut job =
                RowJob::new(v, size, 3, 22, a[3 * k..22 * k].to_vec(), b.clone()).expect("ok");
            let mut last = 0;
            while !job.is_done() {
                let done = job.step(5);
                assert!(done > last && done <= job.rows_total());
                last = done;
            }
            assert_eq!(job.result(), &once[..], "{v:?}");
        }
    }

    #[test]
    fn bad_ranges_and_lengths_are_errors_not_panics() {
        let size = MatmulSize::new(4, 4, 4);
        let (a, b) = size.inputs(1);
        assert_eq!(
            matmul_rows(CpuVariant::Simd, size, &a, &b, 3, 2).err(),
            Some(RowsError::BadRange)
        );
        assert_eq!(
            matmul_rows(CpuVariant::Naive, size, &a, &b, 0, 5).err(),
            Some(RowsError::BadRange)
        );
        assert!(RowJob::new(CpuVariant::Blocked, size, 0, 2, a[..7].to_vec(), b.clone()).is_err());
        assert!(RowJob::new(
            CpuVariant::Blocked,
            size,
            0,
            2,
            a[..8].to_vec(),
            b[..3].to_vec()
        )
        .is_err());
        assert_eq!(CpuVariant::from_id("simd"), Some(CpuVariant::Simd));
        assert_eq!(CpuVariant::from_id("fast"), None);
    }
}
