//! The matmul family, C = A·B: the optimisation ladder's kernels (in ladder order), their
//! grids, how A, B and C are laid out for each [`Storage`], the one-step plan (cut into row
//! ranges for long runs) and the check against `cpu_kernels::matmul`.
//!
//! Bindings: 0 = A (M×K, read), 1 = B (K×N, read), 2 = C (M×N, write), 3 = uniform
//! {m, n, k, 0} (n and k padded to multiples of 4 for vec4 storage; m, n and k padded to
//! whole tiles for [`Storage::F32Vec4Tiles`]).

use std::borrow::Cow;

use cpu_kernels::data::f32_to_f16_bits;
use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::verify::{self, Precision, Verdict};

use super::{Layout, SingleRun};
use crate::context::GpuError;
use crate::plan::{Binding, Dispatch, Split};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;

// The WGSL files, compiled into the binary: `shaders/` is the single source for the browser,
// the native tests and the benchmarks.
const NAIVE: &str = include_str!("../../../../shaders/matmul_naive.wgsl");
const COALESCED: &str = include_str!("../../../../shaders/matmul_coalesced.wgsl");
const TILED: &str = include_str!("../../../../shaders/matmul_tiled.wgsl");
const BLOCKTILE_1D: &str = include_str!("../../../../shaders/matmul_blocktile_1d.wgsl");
const BLOCKTILE_2D: &str = include_str!("../../../../shaders/matmul_blocktile_2d.wgsl");
const VEC4: &str = include_str!("../../../../shaders/matmul_vec4.wgsl");
const TUNED: &str = include_str!("../../../../shaders/matmul_tuned.wgsl");
const SUBGROUP: &str = include_str!("../../../../shaders/matmul_subgroup.wgsl");
const DOUBLE_BUFFER: &str = include_str!("../../../../shaders/matmul_double_buffer.wgsl");
const DEEP_K: &str = include_str!("../../../../shaders/matmul_deep_k.wgsl");
const TENSOR_CORE: &str = include_str!("../../../../shaders/matmul_tensor_core.wgsl");
const TENSOR_CORE_DIRECT: &str = include_str!("../../../../shaders/matmul_tensor_core_direct.wgsl");
const REGTILE_COMMON: &str = include_str!("../../../../shaders/matmul_regtile_common.wgsl");

/// Workgroups for kernels whose x axis runs along columns: one BN×BM block of C each.
fn grid_blocks<const BN: u32, const BM: u32>(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Matmul(s) => [s.n.div_ceil(BN), s.m.div_ceil(BM), 1],
        _ => [0, 0, 0],
    }
}

/// Workgroups for the naive kernel, whose x axis runs along ROWS (that is its lesson).
fn grid_naive(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Matmul(s) => [s.m.div_ceil(16), s.n.div_ceil(16), 1],
        _ => [0, 0, 0],
    }
}

/// The half-precision stage is the 2D block-tiled file with f16 inputs (see its header).
fn f16_source() -> String {
    let body = BLOCKTILE_2D.replace("alias InputElem = f32;", "alias InputElem = f16;");
    format!("enable f16;\n\n{body}\n{REGTILE_COMMON}")
}

const TILE_16: &[(&str, f64)] = &[("TILE", 16.0)];
const BLOCK_64: &[(&str, f64)] = &[("BM", 64.0), ("BN", 64.0), ("BK", 8.0)];
const BLOCK_128: &[(&str, f64)] = &[("BM", 128.0), ("BN", 128.0), ("BK", 16.0)];

/// M and N of [`Storage::F32Vec4Tiles`] are padded to multiples of this.
pub const TILE_PAD_MN: u32 = 128;
/// K of [`Storage::F32Vec4Tiles`] is padded to a multiple of this.
pub const TILE_PAD_K: u32 = 32;

fn tuned_source() -> String {
    format!("{TUNED}\n{REGTILE_COMMON}")
}

fn double_buffer_source() -> String {
    format!("{DOUBLE_BUFFER}\n{REGTILE_COMMON}")
}

/// The ladder, in order.
pub static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "matmul-naive",
        source_path: "shaders/matmul_naive.wgsl",
        source: KernelSource::Built(|| NAIVE.to_string()),
        entry_point: "main",
        family: Family::Matmul,
        constants: &[],
        workgroup_size: [16, 16, 1],
        grid: grid_naive,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-naive.title",
        summary_key: "kernel.matmul-naive.summary",
    },
    KernelSpec {
        id: "matmul-coalesced",
        source_path: "shaders/matmul_coalesced.wgsl",
        source: KernelSource::Built(|| COALESCED.to_string()),
        entry_point: "main",
        family: Family::Matmul,
        constants: &[],
        workgroup_size: [16, 16, 1],
        grid: grid_blocks::<16, 16>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-coalesced.title",
        summary_key: "kernel.matmul-coalesced.summary",
    },
    KernelSpec {
        id: "matmul-tiled",
        source_path: "shaders/matmul_tiled.wgsl",
        source: KernelSource::Built(|| TILED.to_string()),
        entry_point: "main",
        family: Family::Matmul,
        constants: TILE_16,
        workgroup_size: [16, 16, 1],
        grid: grid_blocks::<16, 16>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-tiled.title",
        summary_key: "kernel.matmul-tiled.summary",
    },
    KernelSpec {
        id: "matmul-blocktile-1d",
        source_path: "shaders/matmul_blocktile_1d.wgsl",
        source: KernelSource::Built(|| BLOCKTILE_1D.to_string()),
        entry_point: "main",
        family: Family::Matmul,
        constants: BLOCK_64,
        workgroup_size: [64, 4, 1],
        grid: grid_blocks::<64, 64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-blocktile-1d.title",
        summary_key: "kernel.matmul-blocktile-1d.summary",
    },
    KernelSpec {
        id: "matmul-blocktile-2d",
        source_path: "shaders/matmul_blocktile_2d.wgsl",
        source: KernelSource::Built(|| format!("{BLOCKTILE_2D}\n{REGTILE_COMMON}")),
        entry_point: "main",
        family: Family::Matmul,
        constants: BLOCK_128,
        workgroup_size: [16, 16, 1],
        grid: grid_blocks::<128, 128>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-blocktile-2d.title",
        summary_key: "kernel.matmul-blocktile-2d.summary",
    },
    KernelSpec {
        id: "matmul-vec4",
        source_path: "shaders/matmul_vec4.wgsl",
        source: KernelSource::Built(|| format!("{VEC4}\n{REGTILE_COMMON}")),
        entry_point: "main",
        family: Family::Matmul,
        constants: BLOCK_128,
        workgroup_size: [16, 16, 1],
        grid: grid_blocks::<128, 128>,
        storage: Storage::F32Vec4,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-vec4.title",
        summary_key: "kernel.matmul-vec4.summary",
    },
    KernelSpec {
        id: "matmul-subgroup",
        source_path: "shaders/matmul_subgroup.wgsl",
        source: KernelSource::Built(|| SUBGROUP.to_string()),
        entry_point: "main",
        family: Family::Matmul,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_blocks::<64, 1>,
        storage: Storage::F32,
        required_features: wgpu::Features::SUBGROUP,
        precision: Precision::F32,
        title_key: "kernel.matmul-subgroup.title",
        summary_key: "kernel.matmul-subgroup.summary",
    },
    KernelSpec {
        id: "matmul-f16",
        source_path: "shaders/matmul_blocktile_2d.wgsl",
        source: KernelSource::Built(f16_source),
        entry_point: "main",
        family: Family::Matmul,
        constants: BLOCK_128,
        workgroup_size: [16, 16, 1],
        grid: grid_blocks::<128, 128>,
        storage: Storage::F16Inputs,
        required_features: wgpu::Features::SHADER_F16,
        precision: Precision::F16Inputs,
        title_key: "kernel.matmul-f16.title",
        summary_key: "kernel.matmul-f16.summary",
    },
    KernelSpec {
        id: "matmul-tuned",
        source_path: "shaders/matmul_tuned.wgsl",
        source: KernelSource::Built(tuned_source),
        entry_point: "main",
        family: Family::Matmul,
        // The tuner's choice at 4096³ on an H200 through both wgpu and Dawn (docs/benchmarks.md).
        constants: &[("BM", 64.0), ("BN", 128.0), ("BK", 8.0)],
        workgroup_size: [16, 8, 1],
        grid: grid_blocks::<128, 64>,
        storage: Storage::F32Vec4Tiles,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-tuned.title",
        summary_key: "kernel.matmul-tuned.summary",
    },
    KernelSpec {
        id: "matmul-double-buffer",
        source_path: "shaders/matmul_double_buffer.wgsl",
        source: KernelSource::Built(double_buffer_source),
        entry_point: "main",
        family: Family::Matmul,
        // 128×128×8 was the tuned stage's best shape with its clamps gone (84 % of cuBLAS on
        // an H200 through both compilers); not yet measured for this kernel, which the tuner
        // (`bench matmul --tune`) does on the visitor's GPU.
        constants: &[("BM", 128.0), ("BN", 128.0), ("BK", 8.0)],
        workgroup_size: [256, 1, 1],
        grid: grid_blocks::<128, 128>,
        storage: Storage::F32Vec4Tiles,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.matmul-double-buffer.title",
        summary_key: "kernel.matmul-double-buffer.summary",
    },
    KernelSpec {
        id: "matmul-tensor-core",
        source_path: "shaders/matmul_tensor_core.wgsl",
        source: KernelSource::Built(|| TENSOR_CORE.to_string()),
        entry_point: "main",
        family: Family::Matmul,
        constants: &[],
        workgroup_size: [128, 1, 1],
        grid: grid_blocks::<128, 128>,
        storage: Storage::F16Tiles,
        // Also needs the adapter to offer 16×16×16 f16 → f32 tiles
        // (`KernelSpec::cooperative_tile`, `Gpu::cannot_run`).
        required_features: wgpu::Features::SHADER_F16
            .union(wgpu::Features::SUBGROUP)
            .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
        precision: Precision::F16Products,
        title_key: "kernel.matmul-tensor-core.title",
        summary_key: "kernel.matmul-tensor-core.summary",
    },
];

/// Kernels the tuner tries that are not stages of the ladder (not in [`KERNELS`], so not in
/// the registry or the page): their tile variants join [`tile_variants`], and a device run
/// measures them beside the ladder's (`bench matmul --tune`, `bench dump-kernels` with
/// `matmul-deep-k@`).
pub static CANDIDATES: &[KernelSpec] = &[KernelSpec {
    id: "matmul-deep-k",
    source_path: "shaders/matmul_deep_k.wgsl",
    source: KernelSource::Built(|| format!("{DEEP_K}\n{REGTILE_COMMON}")),
    entry_point: "main",
    family: Family::Matmul,
    // Not measured yet: 64×64×32 is the shape the tuned stage cannot hold (its rows are
    // fixed at 32 vec4s).
    constants: &[("BM", 64.0), ("BN", 64.0), ("BK", 32.0)],
    workgroup_size: [8, 8, 1],
    grid: grid_blocks::<64, 64>,
    storage: Storage::F32Vec4Tiles,
    required_features: wgpu::Features::empty(),
    precision: Precision::F32,
    title_key: "kernel.matmul-deep-k.title",
    summary_key: "kernel.matmul-deep-k.summary",
}];

/// The Tensor Core stage's id in the ladder (16×16×16 tiles).
pub const TENSOR_CORE_ID: &str = "matmul-tensor-core";
/// Its variant with 8×8×8 tiles (not in the ladder): the same kernel for adapters whose
/// cooperative matrices are 8×8 only (Mesa's lavapipe), so the kernel's scheme is checked
/// against the CPU where no 16×16 tile is offered.
pub const TENSOR_CORE_8_ID: &str = "matmul-tensor-core@8x8x8";
/// The benchmark's control without shared memory (`matmul_tensor_core_direct.wgsl`).
pub const TENSOR_CORE_DIRECT_ID: &str = "matmul-tensor-core-direct";
/// That control with 8×8×8 tiles.
pub const TENSOR_CORE_DIRECT_8_ID: &str = "matmul-tensor-core-direct@8x8x8";

/// A Tensor Core source with 8×8×8 tiles instead of 16×16×16.
fn with_8x8(src: &str) -> String {
    src.replace("coop_mat16x16", "coop_mat8x8")
        .replace("const T: u32 = 16u;", "const T: u32 = 8u;")
}

/// The Tensor Core kernel with 8×8×8 tiles (64×64 blocks), id [`TENSOR_CORE_8_ID`].
pub fn tensor_core_8() -> Option<KernelSpec> {
    tensor_core_variants()
        .into_iter()
        .find(|k| k.id == TENSOR_CORE_8_ID)
}

/// The Tensor Core kernels outside the ladder, each its own spec and pipeline: the stage with
/// 8×8×8 tiles, and the control that loads every tile straight from storage (16×16×16 and
/// 8×8×8). `bench matmul --kernels id,…` runs those named; the native test runs them all.
pub fn tensor_core_variants() -> Vec<KernelSpec> {
    let Some(base) = KERNELS.iter().find(|k| k.id == TENSOR_CORE_ID) else {
        return Vec::new();
    };
    let spec = |id, source: fn() -> String, grid: fn(&Workload) -> [u32; 3]| KernelSpec {
        id,
        source: KernelSource::Built(source),
        source_path: if id.starts_with(TENSOR_CORE_DIRECT_ID) {
            "shaders/matmul_tensor_core_direct.wgsl"
        } else {
            base.source_path
        },
        grid,
        ..base.clone()
    };
    vec![
        spec(
            TENSOR_CORE_8_ID,
            || with_8x8(TENSOR_CORE),
            grid_blocks::<64, 64>,
        ),
        spec(
            TENSOR_CORE_DIRECT_ID,
            || TENSOR_CORE_DIRECT.to_string(),
            grid_blocks::<128, 128>,
        ),
        spec(
            TENSOR_CORE_DIRECT_8_ID,
            || with_8x8(TENSOR_CORE_DIRECT),
            grid_blocks::<64, 64>,
        ),
    ]
}

/// One `matmul-tuned` tile shape: BM, BN, BK, its variant's id and override constants.
type TunedShape = (u32, u32, u32, &'static str, &'static [(&'static str, f64)]);

/// A tile shape of the kernel `$base`: its variant's id is `$base@BMxBNxBK`.
macro_rules! tile_shape {
    ($base:literal, $bm:literal, $bn:literal, $bk:literal) => {
        (
            $bm,
            $bn,
            $bk,
            concat!($base, "@", $bm, "x", $bn, "x", $bk),
            &[("BM", $bm as f64), ("BN", $bn as f64), ("BK", $bk as f64)],
        )
    };
}

/// Tile shapes `matmul-tuned` accepts: each invocation loads 1, 2 or 4 vec4s of each block
/// and its shared memory (2·BK·512 bytes) stays within WebGPU's default 16 KiB.
/// `bench matmul --tune` and `crates/bench/dawn/run.mjs` try them all and report the fastest.
static TUNED_SHAPES: [TunedShape; 8] = [
    tile_shape!("matmul-tuned", 128, 128, 16),
    tile_shape!("matmul-tuned", 128, 128, 8),
    tile_shape!("matmul-tuned", 128, 64, 16),
    tile_shape!("matmul-tuned", 128, 64, 8),
    tile_shape!("matmul-tuned", 64, 128, 16),
    tile_shape!("matmul-tuned", 64, 128, 8),
    tile_shape!("matmul-tuned", 64, 64, 16),
    tile_shape!("matmul-tuned", 64, 64, 8),
];

/// Looks up one of this family's catalogued kernels by id (the conv family's im2col + GEMM
/// and 1×1 stages take `matmul-vec4` from here).
pub fn matmul_kernel(id: &str) -> Option<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.id == id)
}

/// The (BM, BN, BK) shapes of [`tuned_variant`].
pub fn tuned_tiles() -> impl Iterator<Item = (u32, u32, u32)> {
    TUNED_SHAPES.iter().map(|&(m, n, k, _, _)| (m, n, k))
}

/// `matmul-tuned` with other tile sizes, as its own spec (id `matmul-tuned@BMxBNxBK`, its own
/// pipeline); `None` for a shape outside [`tuned_tiles`].
pub fn tuned_variant(bm: u32, bn: u32, bk: u32) -> Option<KernelSpec> {
    // 8 × 8 outputs per invocation.
    variant(
        &TUNED_SHAPES,
        "matmul-tuned",
        (bm, bn, bk),
        [bn / 8, bm / 8, 1],
    )
}

/// `base` at one of its `shapes`, as its own spec: the shape's id and constants, the given
/// workgroup size, the grid of its BM × BN blocks; the rest is the catalogued kernel's.
fn variant(
    shapes: &[TunedShape],
    base: &str,
    (bm, bn, bk): (u32, u32, u32),
    workgroup_size: [u32; 3],
) -> Option<KernelSpec> {
    let &(_, _, _, id, constants) = shapes.iter().find(|s| (s.0, s.1, s.2) == (bm, bn, bk))?;
    let base = KERNELS.iter().chain(CANDIDATES).find(|k| k.id == base)?;
    Some(KernelSpec {
        id,
        constants,
        workgroup_size,
        grid: grid_for(bm, bn),
        ..base.clone()
    })
}

/// The grid of a BM×BN block kernel (x along columns).
fn grid_for(bm: u32, bn: u32) -> fn(&Workload) -> [u32; 3] {
    match (bm, bn) {
        (128, 128) => grid_blocks::<128, 128>,
        (128, 64) => grid_blocks::<64, 128>,
        (64, 128) => grid_blocks::<128, 64>,
        _ => grid_blocks::<64, 64>,
    }
}

/// Tile shapes `matmul-double-buffer` accepts: both shared buffers of both operands,
/// 2·BK·(BM + BN)·4 bytes, must stay within WebGPU's default 16 KiB (so no 128×128×16,
/// 128×64×16 or 64×128×16), and each invocation loads 1, 2 or 4 vec4s of each block.
static DOUBLE_BUFFER_SHAPES: [TunedShape; 5] = [
    tile_shape!("matmul-double-buffer", 128, 128, 8),
    tile_shape!("matmul-double-buffer", 128, 64, 8),
    tile_shape!("matmul-double-buffer", 64, 128, 8),
    tile_shape!("matmul-double-buffer", 64, 64, 8),
    tile_shape!("matmul-double-buffer", 64, 64, 16),
];

/// The (BM, BN, BK) shapes of [`double_buffer_variant`].
pub fn double_buffer_tiles() -> impl Iterator<Item = (u32, u32, u32)> {
    DOUBLE_BUFFER_SHAPES
        .iter()
        .map(|&(m, n, k, _, _)| (m, n, k))
}

/// `matmul-double-buffer` with other tile sizes (id `matmul-double-buffer@BMxBNxBK`); `None`
/// for a shape outside [`double_buffer_tiles`].
pub fn double_buffer_variant(bm: u32, bn: u32, bk: u32) -> Option<KernelSpec> {
    // One invocation per 8 × 8 block of the tile, in one row of invocations.
    variant(
        &DOUBLE_BUFFER_SHAPES,
        "matmul-double-buffer",
        (bm, bn, bk),
        [bm * bn / 64, 1, 1],
    )
}

/// Tile shapes `matmul-deep-k` accepts: exactly BK·(BM + BN)·4 bytes of shared memory within
/// WebGPU's default 16 KiB, at most 8 vec4 loads per invocation per block, BK a multiple of
/// 8 dividing the padded K (32).
static DEEP_K_SHAPES: [TunedShape; 5] = [
    tile_shape!("matmul-deep-k", 64, 64, 32),
    tile_shape!("matmul-deep-k", 128, 128, 16),
    tile_shape!("matmul-deep-k", 128, 64, 16),
    tile_shape!("matmul-deep-k", 64, 128, 16),
    tile_shape!("matmul-deep-k", 64, 64, 16),
];

/// The (BM, BN, BK) shapes of [`deep_k_variant`].
pub fn deep_k_tiles() -> impl Iterator<Item = (u32, u32, u32)> {
    DEEP_K_SHAPES.iter().map(|&(m, n, k, _, _)| (m, n, k))
}

/// `matmul-deep-k` with other tile sizes (id `matmul-deep-k@BMxBNxBK`); `None` for a shape
/// outside [`deep_k_tiles`].
pub fn deep_k_variant(bm: u32, bn: u32, bk: u32) -> Option<KernelSpec> {
    variant(
        &DEEP_K_SHAPES,
        "matmul-deep-k",
        (bm, bn, bk),
        [bn / 8, bm / 8, 1],
    )
}

/// Every tile variant the tuner tries (`bench matmul --tune`, `bench dump-kernels`): those of
/// `matmul-tuned`, then those of `matmul-double-buffer`, then the candidates'.
pub fn tile_variants() -> impl Iterator<Item = KernelSpec> {
    tuned_tiles()
        .filter_map(|(m, n, k)| tuned_variant(m, n, k))
        .chain(double_buffer_tiles().filter_map(|(m, n, k)| double_buffer_variant(m, n, k)))
        .chain(deep_k_tiles().filter_map(|(m, n, k)| deep_k_variant(m, n, k)))
}

fn round_up4(x: u32) -> u32 {
    x.div_ceil(4) * 4
}

/// M, N and K as [`Storage::F32Vec4Tiles`] pads them.
fn tile_padded(size: MatmulSize) -> (u32, u32, u32) {
    let up = |x: u32, to: u32| x.div_ceil(to) * to;
    (
        up(size.m, TILE_PAD_MN),
        up(size.n, TILE_PAD_MN),
        up(size.k, TILE_PAD_K),
    )
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

/// A, B, C and the uniform for a storage.
pub(crate) fn layout<'a>(
    storage: Storage,
    size: MatmulSize,
    a: &'a [f32],
    b: &'a [f32],
) -> Layout<'a> {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    match storage {
        Storage::F32 => Layout {
            inputs: vec![
                Cow::Borrowed(bytemuck::cast_slice(a)),
                Cow::Borrowed(bytemuck::cast_slice(b)),
            ],
            uniform: vec![size.m, size.n, size.k, 0],
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
                uniform: vec![size.m, np, kp, 0],
                output_len: m * np_,
                padded_rows: (np_ != n).then_some((m, np_, n)),
            }
        }
        Storage::F32Vec4Tiles => {
            let (mp, np, kp) = tile_padded(size);
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
                uniform: vec![mp, np, kp, 0],
                output_len: mp_ * np_,
                // unpad keeps the first m rows, so padded rows go too.
                padded_rows: (np_ != n || mp_ != m).then_some((m, np_, n)),
            }
        }
        Storage::F16Tiles => {
            let (mp, np, kp) = tile_padded(size);
            let (mp_, np_, kp_) = (mp as usize, np as usize, kp as usize);
            let mut a_p = pad_columns(a, m, k, kp_);
            a_p.resize(mp_ * kp_, 0.0);
            let mut b_p = pad_columns(b, k, n, np_);
            b_p.resize(kp_ * np_, 0.0);
            Layout {
                inputs: vec![Cow::Owned(f16_bytes(&a_p)), Cow::Owned(f16_bytes(&b_p))],
                uniform: vec![mp, np, kp, 0],
                output_len: mp_ * np_,
                padded_rows: (np_ != n || mp_ != m).then_some((m, np_, n)),
            }
        }
        Storage::F16Inputs => Layout {
            inputs: vec![Cow::Owned(f16_bytes(a)), Cow::Owned(f16_bytes(b))],
            uniform: vec![size.m, size.n, size.k, 0],
            output_len: m * n,
            padded_rows: None,
        },
    }
}

/// Offsets of storage bindings are multiples of this (WebGPU's largest allowed
/// `minStorageBufferOffsetAlignment`, so it suits every device).
const OFFSET_ALIGN: u64 = 256;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Rows whose byte length is a multiple of [`OFFSET_ALIGN`] for a row of `row_bytes`.
fn rows_for_alignment(row_bytes: u64) -> u64 {
    OFFSET_ALIGN / gcd(row_bytes.max(1), OFFSET_ALIGN)
}

/// The one-step plan of a matmul. Rows of C are independent, so a long run is cut into row
/// ranges: A and C bound from the range's first row, the uniform's m set to its row count.
pub(crate) fn plan<'a>(
    kernel: &'a KernelSpec,
    size: MatmulSize,
    a: &'a [f32],
    b: &'a [f32],
) -> Result<SingleRun<'a>, GpuError> {
    if a.len() != size.a_len() || b.len() != size.b_len() {
        return Err(GpuError::WrongJob);
    }
    let l = layout(kernel.storage, size, a, b);
    let uniform = l.uniform.clone();
    let (a_row, c_row) = match kernel.storage {
        Storage::F32 => (4 * size.k as u64, 4 * size.n as u64),
        Storage::F32Vec4 => (4 * round_up4(size.k) as u64, 4 * round_up4(size.n) as u64),
        Storage::F32Vec4Tiles => {
            let (_, np, kp) = tile_padded(size);
            (4 * kp as u64, 4 * np as u64)
        }
        Storage::F16Inputs => (2 * size.k as u64, 4 * size.n as u64),
        Storage::F16Tiles => {
            let (_, np, kp) = tile_padded(size);
            (2 * kp as u64, 4 * np as u64)
        }
    };
    // Padded to whole tiles, the kernel tests no row index: every range covers whole
    // 128-row tiles of the padded M (the last one too, as M is padded to a multiple).
    let (units, tile_rows) = match kernel.storage {
        Storage::F32Vec4Tiles | Storage::F16Tiles => (tile_padded(size).0, TILE_PAD_MN as u64),
        _ => (size.m, 1),
    };
    let lcm = |x: u64, y: u64| x / gcd(x, y) * y;
    let (ra, rc) = (rows_for_alignment(a_row), rows_for_alignment(c_row));
    let align = lcm(lcm(ra, rc), tile_rows).min(u32::MAX as u64) as u32;
    let grid = kernel.grid;
    let split = Split {
        units,
        align,
        part: Box::new(move |first, rows| {
            let at = |name, row_bytes: u64| Binding::Buffer {
                name,
                offset: first as u64 * row_bytes,
                size: None,
            };
            let mut u = uniform.clone();
            u[0] = rows;
            Dispatch {
                bindings: vec![
                    at("in0", a_row),
                    Binding::whole("in1"),
                    at(super::OUTPUT, c_row),
                    Binding::Uniform,
                ],
                uniform: u,
                workgroups: grid(&Workload::Matmul(MatmulSize::new(rows, size.n, size.k))),
            }
        }),
    };
    let groups = kernel.workgroups(&Workload::Matmul(size));
    l.into_plan(kernel, groups, size.flops() / 2.0, Some(split))
}

/// Checks C against the f64 reference, with the bound of the kernel's precision (for the
/// Tensor Core stage, the reference of the f16-rounded inputs: see [`Precision`]).
pub(crate) fn verify(
    kernel: &KernelSpec,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    got: &[f32],
) -> Verdict {
    let (a, b) = verify::judged_inputs(kernel.precision, a, b);
    verify::compare(got, &matmul::reference(size, &a, &b), kernel.precision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vec4_padding_round_trips() {
        let size = MatmulSize::new(2, 3, 5);
        let (a, b) = size.inputs(1);
        let l = layout(Storage::F32Vec4, size, &a, &b);
        assert_eq!(l.uniform, vec![2, 4, 8, 0]);
        assert_eq!(l.inputs[0].len(), 2 * 8 * 4);
        assert_eq!(l.inputs[1].len(), 8 * 4 * 4);
        let a_p: Vec<f32> = bytemuck::pod_collect_to_vec(&l.inputs[0]);
        assert_eq!(&a_p[..5], &a[..5]);
        assert_eq!(&a_p[5..8], &[0.0; 3]);
        let raw: Vec<f32> = (0..8).map(|x| x as f32).collect();
        assert_eq!(
            super::super::unpad(raw, l.padded_rows),
            vec![0.0, 1.0, 2.0, 4.0, 5.0, 6.0]
        );
    }

    #[test]
    fn tile_padding_round_trips() {
        let size = MatmulSize::new(3, 130, 33);
        let (a, b) = size.inputs(1);
        let l = layout(Storage::F32Vec4Tiles, size, &a, &b);
        assert_eq!(l.uniform, vec![128, 256, 64, 0]);
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
        let c = super::super::unpad(raw, l.padded_rows);
        assert_eq!(c.len(), 3 * 130);
        assert_eq!((c[129], c[130]), (129.0, 256.0));
    }

    #[test]
    fn tuned_row_ranges_cover_whole_tiles() {
        // M = 300 pads to 384: ranges are cut over the padded rows, in whole 128-row tiles.
        let size = MatmulSize::new(300, 5, 9);
        let (a, b) = size.inputs(1);
        let k = KERNELS
            .iter()
            .find(|k| k.id == "matmul-tuned")
            .expect("listed");
        let run = plan(k, size, &a, &b).expect("a plan");
        let split = run.plan.steps[0].split.as_ref().expect("splittable");
        assert_eq!(split.units, 384);
        assert_eq!(split.align % 128, 0);
        let d = (split.part)(128, 256);
        // Padded rows: K 9 → 32 (128 bytes), N 5 → 128 (512 bytes).
        assert_eq!(d.uniform, vec![256, 128, 32, 0]);
        assert_eq!(
            d.bindings[0],
            Binding::Buffer {
                name: "in0",
                offset: 128 * 128,
                size: None
            }
        );
        assert_eq!(d.workgroups, [1, 4, 1]);
    }

    #[test]
    fn f16_inputs_are_two_bytes_each() {
        let size = MatmulSize::new(3, 3, 3);
        let (a, b) = size.inputs(1);
        let l = layout(Storage::F16Inputs, size, &a, &b);
        assert_eq!(l.inputs[0].len(), 18);
    }

    #[test]
    fn row_ranges_start_on_aligned_offsets() {
        // 4·7 = 28-byte rows: 64 rows make 1792 = 7·256 bytes.
        assert_eq!(rows_for_alignment(28), 64);
        assert_eq!(rows_for_alignment(4096), 1);
        assert_eq!(rows_for_alignment(2 * 3), 128);
        let size = MatmulSize::new(200, 7, 9);
        let (a, b) = size.inputs(1);
        let k = &KERNELS[0];
        let run = plan(k, size, &a, &b).expect("a plan");
        let split = run.plan.steps[0].split.as_ref().expect("splittable");
        // A rows of 36 bytes need 64 rows, C rows of 28 bytes 64 too.
        assert_eq!(split.align, 64);
        let d = (split.part)(64, 64);
        assert_eq!(d.uniform, vec![64, 7, 9, 0]);
        assert_eq!(
            d.bindings[0],
            Binding::Buffer {
                name: "in0",
                offset: 64 * 36,
                size: None
            }
        );
        assert_eq!(
            d.bindings[2],
            Binding::Buffer {
                name: "out",
                offset: 64 * 28,
                size: None
            }
        );
        assert_eq!(d.workgroups, [4, 1, 1]);
    }
}
