//! The convolution family: its stages (the conv ladder), their kernels, buffer layouts, grids
//! and plans, and the verified run. Layouts and the CPU reference: [`cpu_kernels::conv`].
//!
//! A stage is a *plan*: named buffers and an ordered list of dispatches, run in one compute
//! pass per repetition (storage writes of one dispatch are visible to the next). Direct, tiled
//! and implicit GEMM are one-step plans; im2col + GEMM is two steps (im2col, then the matmul
//! ladder's `matmul-vec4`); a 1×1 convolution is a one-step plan that runs `matmul-vec4` on
//! the NHWC input viewed as the (N·H·W)×C matrix — no kernel of its own.

use std::borrow::Cow;

use cpu_kernels::conv::{self as cref, ConvShape, ConvShapeError};
use cpu_kernels::verify::{self, Precision};

use crate::context::{Gpu, GpuError};
use crate::family::matmul::matmul_kernel;
use crate::plan::{
    Binding, Dispatch, Init, LoopFlag, Plan, PlanBuffer, RunControl, RunOptions, RunOutput, Step,
};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::verified::{VerifiedRun, FULL_CHECK_MACS, SAMPLED_ELEMENTS};

const COMMON: &str = include_str!("../../../../shaders/conv_common.wgsl");
const DIRECT: &str = include_str!("../../../../shaders/conv_direct.wgsl");
const TILED: &str = include_str!("../../../../shaders/conv_tiled.wgsl");
const IM2COL: &str = include_str!("../../../../shaders/conv_im2col.wgsl");
const IMPLICIT: &str = include_str!("../../../../shaders/conv_implicit_gemm.wgsl");
const SPLITK_REDUCE: &str = include_str!("../../../../shaders/conv_splitk_reduce.wgsl");
const REGTILE_COMMON: &str = include_str!("../../../../shaders/matmul_regtile_common.wgsl");

/// Tiled stage: output patch TP×TQ, most channels staged per step, workgroup floats (its header).
const TILED_TP: u32 = 8;
const TILED_CC: u32 = 8;
const TILED_FLOATS: u32 = 3840;
/// Filters per invocation of the tiled stage (a `const` in its WGSL).
const TILED_KT: u32 = 8;
/// Implicit GEMM blocks (its header): BM × BN outputs, BK reduction per step, one kernel
/// id each. [`ig_tile`] picks one per shape among those with `auto`; the first is the
/// smallest of them and the fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IgTile {
    pub id: &'static str,
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    /// Rows of the output per invocation: 8, or 4 for twice the invocations per block.
    pub tm: u32,
    /// Whether [`ig_tile`]'s rule may choose it. The small blocks for short, narrow layers
    /// (the 7×7 stem) are candidates only: measured through [`force_ig_tile`] (`bench conv
    /// --ig-tiles`, `bench dump-kernels --conv-ig`) until a measurement says where they win.
    pub auto: bool,
}

pub const IG_TILES: [IgTile; 8] = [
    IgTile {
        id: "conv-implicit-gemm",
        bm: 64,
        bn: 64,
        bk: 16,
        tm: 8,
        auto: true,
    },
    IgTile {
        id: "conv-implicit-gemm-128x64",
        bm: 128,
        bn: 64,
        bk: 16,
        tm: 8,
        auto: true,
    },
    IgTile {
        id: "conv-implicit-gemm-64x128",
        bm: 64,
        bn: 128,
        bk: 16,
        tm: 8,
        auto: true,
    },
    IgTile {
        id: "conv-implicit-gemm-128x128",
        bm: 128,
        bn: 128,
        bk: 16,
        tm: 8,
        auto: true,
    },
    // Half-size blocks of 32 invocations (one warp on NVIDIA): twice the workgroups of the
    // 64×64 block on a layer with few output blocks, such as the 7×7 stem (196 → 392).
    // BK = 8 keeps each invocation at 2 and 4 vec4 loads per step (the shader's 1, 2 or 4).
    IgTile {
        id: "conv-implicit-gemm-32x64",
        bm: 32,
        bn: 64,
        bk: 8,
        tm: 8,
        auto: false,
    },
    IgTile {
        id: "conv-implicit-gemm-64x32",
        bm: 64,
        bn: 32,
        bk: 8,
        tm: 8,
        auto: false,
    },
    // Four rows per invocation instead of eight: twice the invocations for the same blocks,
    // each with half the outputs and half the serial multiply-adds (the stem: 25,088
    // invocations instead of 12,544).
    IgTile {
        id: "conv-implicit-gemm-64x64-r4",
        bm: 64,
        bn: 64,
        bk: 16,
        tm: 4,
        auto: false,
    },
    IgTile {
        id: "conv-implicit-gemm-32x64-r4",
        bm: 32,
        bn: 64,
        bk: 16,
        tm: 4,
        auto: false,
    },
];

thread_local! {
    /// 0 = choose per shape ([`ig_tile`]), i + 1 = always `IG_TILES[i]`.
    static IG_FORCED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// 0 = choose per shape ([`split_k`]), else this many reduction slices.
    static IG_SPLITS_FORCED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Makes implicit GEMM plans made on this thread split the reduction into `splits` slices
/// (None: choose per shape again); at most one slice per BK-step is used. For benchmarks.
pub fn force_ig_splits(splits: Option<u32>) {
    IG_SPLITS_FORCED.with(|f| f.set(splits.unwrap_or(0)));
}

/// Makes every implicit GEMM plan made on this thread use the block with this kernel id
/// (None: choose per shape again). Returns false for an unknown id. Benchmarks use it to
/// compare blocks on one shape, tests to run every block.
pub fn force_ig_tile(id: Option<&str>) -> bool {
    let v = match id {
        None => 0,
        Some(id) => match IG_TILES.iter().position(|t| t.id == id) {
            Some(i) => i + 1,
            None => return false,
        },
    };
    IG_FORCED.with(|f| f.set(v));
    true
}

/// The implicit GEMM block for an (m × k4) output: the largest block that still gives
/// [`IG_TARGET_GROUPS`] workgroups without wasting columns (BN ≤ k4 rounded up to 64);
/// shapes with fewer output blocks keep 64×64 and split the reduction instead.
pub fn ig_tile(m: u32, k4: u32) -> IgTile {
    let forced = IG_FORCED.with(|f| f.get());
    if let Some(t) = forced.checked_sub(1).and_then(|i| IG_TILES.get(i)) {
        return *t;
    }
    let cols = k4.div_ceil(64) * 64;
    IG_TILES
        .iter()
        .filter(|t| t.auto)
        .rev()
        .find(|t| {
            t.bn <= cols
                && (k4.div_ceil(t.bn) as u64) * (m.div_ceil(t.bm) as u64) >= IG_TARGET_GROUPS as u64
        })
        .copied()
        .unwrap_or(IG_TILES[0])
}
/// The matmul family's best portable stage, the GEMM of im2col + GEMM and of 1×1.
const VEC4: &str = "matmul-vec4";
/// Workgroups a larger implicit GEMM block must still give to be chosen: two per SM of a
/// large GPU (an H200 has 132). WebGPU does not tell the SM count, so a constant.
const IG_TARGET_GROUPS: u32 = 264;
/// Workgroups (of the 64×64 block, 64 invocations) split-K aims for: about six per SM. On the
/// H200 (2026-12-01, `bench conv --ig-splits`), 8×128×28×28→128 ran 0.172 ms with 4 slices
/// against 0.249 ms with 2 and 0.220 with 3, and 6 were slower again (0.202).
const IG_SPLIT_TARGET: u32 = 768;
/// Fewest BK-steps a split-K slice keeps, so the partial sums stay worth their traffic.
const IG_MIN_STEPS: u32 = 8;
const IG_MAX_SPLITS: u32 = 16;
/// matmul-vec4's block (see the catalogue).
const VEC4_BLOCK: u32 = 128;

fn no_grid(_: &crate::workload::Workload) -> [u32; 3] {
    // Conv kernels run through this module's plans, which size their own grids.
    [0, 0, 0]
}

const fn spec(
    id: &'static str,
    source_path: &'static str,
    source: fn() -> String,
    constants: &'static [(&'static str, f64)],
    workgroup_size: [u32; 3],
    title_key: &'static str,
    summary_key: &'static str,
) -> KernelSpec {
    KernelSpec {
        id,
        source_path,
        source: KernelSource::Built(source),
        entry_point: "main",
        family: Family::Conv,
        constants,
        workgroup_size,
        grid: no_grid,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key,
        summary_key,
    }
}

/// The conv kernels (the GEMM of im2col + GEMM and of 1×1 is the catalogue's `matmul-vec4`).
pub static KERNELS: &[KernelSpec] = &[
    spec(
        "conv-direct",
        "shaders/conv_direct.wgsl",
        || format!("{DIRECT}\n{COMMON}"),
        &[],
        [16, 16, 1],
        "kernel.conv-direct.title",
        "kernel.conv-direct.summary",
    ),
    spec(
        "conv-tiled",
        "shaders/conv_tiled.wgsl",
        || format!("{TILED}\n{COMMON}"),
        &[
            ("TP", TILED_TP as f64),
            ("TQ", TILED_TP as f64),
            ("TILE_FLOATS", TILED_FLOATS as f64),
        ],
        [8, 8, 1],
        "kernel.conv-tiled.title",
        "kernel.conv-tiled.summary",
    ),
    spec(
        "conv-im2col",
        "shaders/conv_im2col.wgsl",
        || format!("{IM2COL}\n{COMMON}"),
        &[],
        [64, 4, 1],
        "kernel.conv-im2col.title",
        "kernel.conv-im2col.summary",
    ),
    spec(
        "conv-implicit-gemm",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 64.0), ("BN", 64.0), ("BK", 16.0), ("TM", 8.0)],
        [8, 8, 1],
        "kernel.conv-implicit-gemm.title",
        "kernel.conv-implicit-gemm.summary",
    ),
    spec(
        "conv-implicit-gemm-128x64",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 128.0), ("BN", 64.0), ("BK", 16.0), ("TM", 8.0)],
        [8, 16, 1],
        "kernel.conv-implicit-gemm-128x64.title",
        "kernel.conv-implicit-gemm-128x64.summary",
    ),
    spec(
        "conv-implicit-gemm-64x128",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 64.0), ("BN", 128.0), ("BK", 16.0), ("TM", 8.0)],
        [16, 8, 1],
        "kernel.conv-implicit-gemm-64x128.title",
        "kernel.conv-implicit-gemm-64x128.summary",
    ),
    spec(
        "conv-implicit-gemm-128x128",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 128.0), ("BN", 128.0), ("BK", 16.0), ("TM", 8.0)],
        [16, 16, 1],
        "kernel.conv-implicit-gemm-128x128.title",
        "kernel.conv-implicit-gemm-128x128.summary",
    ),
    spec(
        "conv-implicit-gemm-32x64",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 32.0), ("BN", 64.0), ("BK", 8.0), ("TM", 8.0)],
        [8, 4, 1],
        "kernel.conv-implicit-gemm-32x64.title",
        "kernel.conv-implicit-gemm-32x64.summary",
    ),
    spec(
        "conv-implicit-gemm-64x32",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 64.0), ("BN", 32.0), ("BK", 8.0), ("TM", 8.0)],
        [4, 8, 1],
        "kernel.conv-implicit-gemm-64x32.title",
        "kernel.conv-implicit-gemm-64x32.summary",
    ),
    spec(
        "conv-implicit-gemm-64x64-r4",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 64.0), ("BN", 64.0), ("BK", 16.0), ("TM", 4.0)],
        [8, 16, 1],
        "kernel.conv-implicit-gemm-64x64-r4.title",
        "kernel.conv-implicit-gemm-64x64-r4.summary",
    ),
    spec(
        "conv-implicit-gemm-32x64-r4",
        "shaders/conv_implicit_gemm.wgsl",
        || format!("{IMPLICIT}\n{REGTILE_COMMON}\n{COMMON}"),
        &[("BM", 32.0), ("BN", 64.0), ("BK", 16.0), ("TM", 4.0)],
        [8, 8, 1],
        "kernel.conv-implicit-gemm-32x64-r4.title",
        "kernel.conv-implicit-gemm-32x64-r4.summary",
    ),
    spec(
        "conv-splitk-reduce",
        "shaders/conv_splitk_reduce.wgsl",
        || SPLITK_REDUCE.to_string(),
        &[],
        [256, 1, 1],
        "kernel.conv-splitk-reduce.title",
        "kernel.conv-splitk-reduce.summary",
    ),
];

/// Reduction slices for the implicit GEMM: 1 when `groups` output blocks already fill a large
/// GPU ([`IG_TARGET_GROUPS`]), else enough to approach [`IG_SPLIT_TARGET`], each slice
/// keeping ≥ [`IG_MIN_STEPS`] of the `steps` BK-steps.
pub fn split_k(groups: u32, steps: u32) -> u32 {
    if groups >= IG_TARGET_GROUPS {
        return 1;
    }
    IG_SPLIT_TARGET
        .div_ceil(groups.max(1))
        .min(steps / IG_MIN_STEPS)
        .clamp(1, IG_MAX_SPLITS)
}

/// The implicit GEMM's block (kernel id) and reduction slices for a shape, as its plan has
/// them (None for an invalid shape).
pub fn implicit_gemm_plan(shape: &ConvShape) -> Option<(&'static str, u32)> {
    let l = plan_layout(ConvStage::ImplicitGemm, shape).ok()?;
    let first = l.steps.first()?;
    Some((first.kernel, first.groups[2]))
}

/// Looks a conv kernel up by id.
pub fn conv_kernel(id: &str) -> Option<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.id == id)
}

/// The stages of the conv ladder, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvStage {
    Direct,
    Tiled,
    Im2colGemm,
    ImplicitGemm,
    /// 1×1, stride 1, no padding: the matmul stage on the buffers as they are.
    Pointwise,
}

impl ConvStage {
    pub const ALL: [ConvStage; 5] = [
        ConvStage::Direct,
        ConvStage::Tiled,
        ConvStage::Im2colGemm,
        ConvStage::ImplicitGemm,
        ConvStage::Pointwise,
    ];

    /// Stable id, used in URLs and as the prefix of its text keys (`stage.<id>.title`, …).
    pub fn id(self) -> &'static str {
        match self {
            ConvStage::Direct => "conv-direct",
            ConvStage::Tiled => "conv-tiled",
            ConvStage::Im2colGemm => "conv-im2col-gemm",
            ConvStage::ImplicitGemm => "conv-implicit-gemm",
            ConvStage::Pointwise => "conv-pointwise",
        }
    }

    pub fn from_id(id: &str) -> Option<ConvStage> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Translation keys of its title, summary and "what changed from the previous stage".
    pub fn text_keys(self) -> [String; 3] {
        ["title", "summary", "why"].map(|part| format!("kernel.{}.{part}", self.id()))
    }

    /// The kernels its plans may dispatch, in order (split-K's reduction only when needed).
    /// The implicit GEMM's candidate blocks (`auto: false`) are not among them: only a
    /// benchmark that forces one ([`force_ig_tile`]) dispatches it, so a page never compiles
    /// or lists them.
    pub fn kernels(self) -> Vec<&'static KernelSpec> {
        let conv = |id| conv_kernel(id).into_iter();
        let vec4 = matmul_kernel(VEC4).into_iter();
        match self {
            ConvStage::Direct => conv("conv-direct").collect(),
            ConvStage::Tiled => conv("conv-tiled").collect(),
            ConvStage::Im2colGemm => conv("conv-im2col").chain(vec4).collect(),
            ConvStage::ImplicitGemm => IG_TILES
                .iter()
                .filter(|t| t.auto)
                .filter_map(|t| conv_kernel(t.id))
                .chain(conv("conv-splitk-reduce"))
                .collect(),
            ConvStage::Pointwise => vec4.collect(),
        }
    }

    /// The kernel ids its plan for `shape` dispatches, in order.
    pub fn plan_kernels(self, shape: &ConvShape) -> Result<Vec<&'static str>, ConvError> {
        Ok(plan_layout(self, shape)?
            .steps
            .iter()
            .map(|s| s.kernel)
            .collect())
    }

    /// GPU memory this stage needs beyond input, filter and output, in bytes: the im2col
    /// matrix, and the zero padding of channels and filters the vec4 stages add.
    pub fn extra_bytes(self, shape: &ConvShape) -> u64 {
        let Ok(l) = plan_layout(self, shape) else {
            return 0;
        };
        let plain = 4 * (shape.x_len() + shape.f_len() + shape.y_len()) as u64;
        l.buffer_bytes.iter().sum::<u64>().saturating_sub(plain)
    }
}

/// Why a stage cannot run a shape, or why its run failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ConvError {
    /// The shape itself is invalid.
    Shape(ConvShapeError),
    /// The 1×1 stage was asked for a filter that is not 1×1 with stride 1 and no padding.
    NotPointwise,
    /// The tiled stage's input patch (tile plus halo) needs more workgroup memory than it has,
    /// even one channel at a time: `floats` needed, `capacity` available.
    PatchTooLarge {
        floats: u64,
        capacity: u32,
    },
    /// A buffer exceeds a device limit (its name, bytes needed, the limit's WebGPU name and value).
    BufferTooLarge {
        buffer: &'static str,
        bytes: u64,
        limit: &'static str,
        limit_bytes: u64,
    },
    /// More workgroups along one axis than `maxComputeWorkgroupsPerDimension`.
    TooManyWorkgroups {
        groups: u32,
        limit: u32,
    },
    /// The input or filter does not have the shape's length.
    WrongInputLength,
    Gpu(GpuError),
}

impl std::fmt::Display for ConvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConvError::Shape(e) => write!(f, "invalid shape: {e}"),
            ConvError::NotPointwise => write!(f, "not a 1×1, stride 1, unpadded convolution"),
            ConvError::PatchTooLarge { floats, capacity } => {
                write!(
                    f,
                    "the input patch needs {floats} floats, the tile holds {capacity}"
                )
            }
            ConvError::BufferTooLarge {
                buffer,
                bytes,
                limit,
                limit_bytes,
            } => write!(f, "{buffer} needs {bytes} bytes, {limit} is {limit_bytes}"),
            ConvError::TooManyWorkgroups { groups, limit } => {
                write!(
                    f,
                    "{groups} workgroups exceed maxComputeWorkgroupsPerDimension ({limit})"
                )
            }
            ConvError::WrongInputLength => write!(f, "input or filter length does not match"),
            ConvError::Gpu(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ConvError {}

impl From<GpuError> for ConvError {
    fn from(e: GpuError) -> Self {
        ConvError::Gpu(e)
    }
}

fn round4(v: u32) -> u32 {
    v.div_ceil(4) * 4
}

/// How a stage stores its data: what goes into each buffer, the uniforms, the steps.
#[derive(Clone, Debug, PartialEq)]
struct PlanLayout {
    /// Channels as stored (C, or rounded up to 4) and filters as stored.
    c_stored: u32,
    k_stored: u32,
    /// Rows of the stored filter (R·S·C, padded for the vec4 GEMMs).
    f_rows: u32,
    /// Bytes of each buffer: x, f, y, and the scratch buffer when there is one.
    buffer_bytes: Vec<u64>,
    /// What the scratch buffer holds (for messages): the im2col matrix or split-K sums.
    scratch: &'static str,
    steps: Vec<StepLayout>,
}

#[derive(Clone, Debug, PartialEq)]
struct StepLayout {
    /// The kernel's id (conv family, or the matmul family's `matmul-vec4`).
    kernel: &'static str,
    /// Buffer indices bound at 0, 1, …; the uniform comes after them.
    bindings: Vec<usize>,
    uniform: Vec<u32>,
    groups: [u32; 3],
    /// Work of the dispatch (multiply-adds, or elements written for im2col), for progress.
    cost: f64,
}

/// The Conv uniform of conv_common.wgsl.
fn conv_uniform(s: &ConvShape, p: u32, q: u32, kred: u32, c4: u32) -> Vec<u32> {
    let m = s.n * p * q;
    vec![
        s.n,
        s.c,
        s.h,
        s.w,
        s.k,
        s.r,
        s.s,
        s.stride,
        s.pad,
        s.dilation,
        p,
        q,
        m,
        kred,
        round4(s.k),
        c4,
        0,
        0,
        0,
        0,
    ]
}

const X: usize = 0;
const F: usize = 1;
const Y: usize = 2;
const A: usize = 3;

fn plan_layout(stage: ConvStage, s: &ConvShape) -> Result<PlanLayout, ConvError> {
    let (p, q) = s.validate().map_err(ConvError::Shape)?;
    // validate() bounds every element count below 2³² and every size below 2²⁴, so these
    // fit in u32 (R·S·round4(C) < 2³² + 3·R·S, checked).
    let m = s.n * p * q;
    let rsc = s.r * s.s * s.c;
    let macs = s.y_len() as f64 * rsc as f64;
    let too_large = ConvError::Shape(ConvShapeError::TooLarge);
    rsc.checked_add(3).ok_or(too_large.clone())?;
    (s.r * s.s).checked_mul(round4(s.c)).ok_or(too_large)?;
    let bytes = |elems: u64| 4 * elems;
    let plain = |steps| PlanLayout {
        c_stored: s.c,
        k_stored: s.k,
        f_rows: rsc,
        buffer_bytes: vec![
            bytes(s.x_len() as u64),
            bytes(s.f_len() as u64),
            bytes(s.y_len() as u64),
        ],
        scratch: "",
        steps,
    };
    Ok(match stage {
        ConvStage::Direct => plain(vec![StepLayout {
            kernel: "conv-direct",
            bindings: vec![X, F, Y],
            uniform: conv_uniform(s, p, q, rsc, s.c),
            groups: [s.k.div_ceil(16), m.div_ceil(16), 1],
            cost: macs,
        }]),
        ConvStage::Tiled => {
            let th =
                (TILED_TP - 1) as u64 * s.stride as u64 + s.dilation as u64 * (s.r - 1) as u64 + 1;
            let tw =
                (TILED_TP - 1) as u64 * s.stride as u64 + s.dilation as u64 * (s.s - 1) as u64 + 1;
            let pixels = th * tw;
            if pixels > TILED_FLOATS as u64 {
                return Err(ConvError::PatchTooLarge {
                    floats: pixels,
                    capacity: TILED_FLOATS,
                });
            }
            // As many channels per step as fit (at least one, as pixels ≤ TILED_FLOATS).
            let chunk = (TILED_FLOATS as u64 / pixels)
                .min(TILED_CC as u64)
                .min(s.c as u64);
            let mut uniform = conv_uniform(s, p, q, rsc, s.c);
            uniform[16] = chunk as u32;
            plain(vec![StepLayout {
                kernel: "conv-tiled",
                bindings: vec![X, F, Y],
                uniform,
                cost: macs,
                groups: [
                    p.div_ceil(TILED_TP) * q.div_ceil(TILED_TP),
                    s.k.div_ceil(TILED_KT),
                    s.n,
                ],
            }])
        }
        ConvStage::Im2colGemm => {
            let kp = round4(rsc);
            let k4 = round4(s.k);
            PlanLayout {
                c_stored: s.c,
                k_stored: k4,
                f_rows: kp,
                buffer_bytes: vec![
                    bytes(s.x_len() as u64),
                    bytes(kp as u64 * k4 as u64),
                    bytes(m as u64 * k4 as u64),
                    bytes(m as u64 * kp as u64),
                ],
                scratch: "im2col matrix",
                steps: vec![
                    StepLayout {
                        kernel: "conv-im2col",
                        bindings: vec![X, A],
                        uniform: conv_uniform(s, p, q, kp, s.c),
                        groups: [kp.div_ceil(64), m.div_ceil(4), 1],
                        cost: m as f64 * kp as f64,
                    },
                    StepLayout {
                        kernel: VEC4,
                        bindings: vec![A, F, Y],
                        uniform: vec![m, k4, kp, 0],
                        groups: [k4.div_ceil(VEC4_BLOCK), m.div_ceil(VEC4_BLOCK), 1],
                        cost: m as f64 * k4 as f64 * kp as f64,
                    },
                ],
            }
        }
        ConvStage::ImplicitGemm => {
            let c4 = round4(s.c);
            let k4 = round4(s.k);
            let kred = s.r * s.s * c4;
            let tile = ig_tile(m, k4);
            let (gx, gy) = (k4.div_ceil(tile.bn), m.div_ceil(tile.bm));
            let steps = kred.div_ceil(tile.bk);
            let splits = match IG_SPLITS_FORCED.with(|f| f.get()) {
                0 => split_k(gx.saturating_mul(gy), steps),
                n => n.clamp(1, steps.clamp(1, IG_MAX_SPLITS)),
            };
            let mut uniform = conv_uniform(s, p, q, kred, c4);
            uniform[17] = splits;
            let y_bytes = bytes(m as u64 * k4 as u64);
            let mut l = PlanLayout {
                c_stored: c4,
                k_stored: k4,
                f_rows: kred,
                buffer_bytes: vec![
                    bytes(s.n as u64 * s.h as u64 * s.w as u64 * c4 as u64),
                    bytes(kred as u64 * k4 as u64),
                    y_bytes,
                ],
                scratch: "",
                steps: vec![StepLayout {
                    kernel: tile.id,
                    bindings: vec![X, F, Y],
                    uniform,
                    groups: [gx, gy, splits],
                    cost: m as f64 * k4 as f64 * kred as f64,
                }],
            };
            if splits > 1 {
                // The GEMM writes slices of partial sums; a second step adds them into y.
                let len4 = m * (k4 / 4);
                l.buffer_bytes.push(splits as u64 * y_bytes);
                l.scratch = "split-K partial sums";
                l.steps[0].bindings[2] = A;
                l.steps.push(StepLayout {
                    kernel: "conv-splitk-reduce",
                    bindings: vec![A, Y],
                    uniform: vec![len4, splits, 0, 0],
                    groups: [len4.div_ceil(256), 1, 1],
                    cost: splits as f64 * len4 as f64,
                });
            }
            l
        }
        ConvStage::Pointwise => {
            if !(s.r == 1 && s.s == 1 && s.stride == 1 && s.pad == 0) {
                return Err(ConvError::NotPointwise);
            }
            let c4 = round4(s.c);
            let k4 = round4(s.k);
            PlanLayout {
                c_stored: c4,
                k_stored: k4,
                f_rows: c4,
                buffer_bytes: vec![
                    bytes(m as u64 * c4 as u64),
                    bytes(c4 as u64 * k4 as u64),
                    bytes(m as u64 * k4 as u64),
                ],
                scratch: "",
                steps: vec![StepLayout {
                    kernel: VEC4,
                    bindings: vec![X, F, Y],
                    uniform: vec![m, k4, c4, 0],
                    groups: [k4.div_ceil(VEC4_BLOCK), m.div_ceil(VEC4_BLOCK), 1],
                    cost: m as f64 * k4 as f64 * c4 as f64,
                }],
            }
        }
    })
}

/// Copies `src` (rows × cols) into rows × `stride` floats, zero-filling the new columns and
/// adding zero rows up to `rows_out`; borrowed as it is when nothing changes.
fn pad_rows<'a>(
    src: &'a [f32],
    cols: usize,
    stride: usize,
    rows_out: usize,
) -> std::borrow::Cow<'a, [f32]> {
    let rows = src.len() / cols.max(1);
    if stride == cols && rows_out == rows {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = vec![0f32; rows_out * stride];
    for (r, row) in src.chunks_exact(cols).enumerate() {
        out[r * stride..r * stride + cols].copy_from_slice(row);
    }
    std::borrow::Cow::Owned(out)
}

/// Checks a stage can run a shape on this device without running it.
pub fn check(stage: ConvStage, shape: &ConvShape, limits: &wgpu::Limits) -> Result<(), ConvError> {
    let l = plan_layout(stage, shape)?;
    let names = ["input", "filter", "output", l.scratch];
    for (i, &b) in l.buffer_bytes.iter().enumerate() {
        for (limit, limit_bytes) in [
            (
                "maxStorageBufferBindingSize",
                limits.max_storage_buffer_binding_size,
            ),
            ("maxBufferSize", limits.max_buffer_size),
        ] {
            if b > limit_bytes {
                return Err(ConvError::BufferTooLarge {
                    buffer: names[i],
                    bytes: b,
                    limit,
                    limit_bytes,
                });
            }
        }
    }
    let max = limits.max_compute_workgroups_per_dimension;
    for step in &l.steps {
        if let Some(&g) = step.groups.iter().find(|&&g| g > max) {
            return Err(ConvError::TooManyWorkgroups {
                groups: g,
                limit: max,
            });
        }
    }
    Ok(())
}

/// Runs a stage on the given data: the output in NPQK order (padding dropped).
pub async fn run_conv(
    gpu: &Gpu,
    stage: ConvStage,
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
    opts: &RunOptions,
) -> Result<RunOutput, ConvError> {
    run_conv_with(gpu, stage, &[], shape, x, f, opts, &RunControl::default()).await
}

/// [`run_conv`] with cancel and progress, and with `replacements`: a step whose kernel id
/// matches one of them runs it instead of the catalogue's (tests pass deliberately broken
/// copies, made with [`KernelSpec::with_source`], to prove that verification catches them).
#[allow(clippy::too_many_arguments)]
pub async fn run_conv_with(
    gpu: &Gpu,
    stage: ConvStage,
    replacements: &[&KernelSpec],
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<RunOutput, ConvError> {
    let run = ConvRun { stage, shape, x, f };
    run_flagged(gpu, &run, replacements, None, opts, ctl)
        .await
        .map(|(out, _)| out)
}

/// One conv stage's problem: the stage, the shape and its data (NHWC input, RSCK filter).
pub struct ConvRun<'a> {
    pub stage: ConvStage,
    pub shape: &'a ConvShape,
    pub x: &'a [f32],
    pub f: &'a [f32],
}

/// [`run_conv_with`] for a learner's copy of one step's kernel rewritten with a loop budget:
/// `edited` replaces the step(s) with its id, which alone bind the [`crate::LOOP_FLAG`]
/// buffer at `flag` ([`Plan::attach_loop_flag`]); its words come back beside the output.
pub async fn run_conv_with_loop_flag(
    gpu: &Gpu,
    run: &ConvRun<'_>,
    edited: &KernelSpec,
    flag: LoopFlag,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<(RunOutput, Vec<u32>), ConvError> {
    run_flagged(gpu, run, &[edited], Some((edited.id, flag)), opts, ctl).await
}

async fn run_flagged(
    gpu: &Gpu,
    run: &ConvRun<'_>,
    replacements: &[&KernelSpec],
    flag: Option<(&str, LoopFlag)>,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<(RunOutput, Vec<u32>), ConvError> {
    let (shape, x, f) = (run.shape, run.x, run.f);
    let layout = plan_layout(run.stage, shape)?;
    if x.len() != shape.x_len() || f.len() != shape.f_len() {
        return Err(ConvError::WrongInputLength);
    }
    let kernels = step_kernels(&layout, replacements)?;
    check(run.stage, shape, &gpu.limits())?;
    let mut plan = plan(shape, &layout, &kernels, x, f);
    if let Some((id, flag)) = flag {
        plan.attach_loop_flag(Some(id), flag)?;
    }
    let out = gpu.run_plan(&plan, opts, ctl).await?;
    let bytes = out
        .bytes(NAMES[Y])
        .ok_or_else(|| GpuError::Readback("no output was read back".into()))?;
    let raw: Vec<f32> = bytemuck::pod_collect_to_vec(bytes);
    let (k, ks) = (shape.k as usize, layout.k_stored as usize);
    let output = if k == ks {
        raw
    } else {
        raw.chunks_exact(ks)
            .flat_map(|row| row[..k].iter().copied())
            .collect()
    };
    let words = out.words(crate::plan::LOOP_FLAG);
    Ok((
        RunOutput {
            output,
            timing: out.timing,
        },
        words,
    ))
}

/// The work of each step of `stage` on `shape` that runs `kernel_id`, as (the step's cost in
/// multiply-adds or elements written, invocations launched): what a loop budget for an
/// edited copy of that kernel is derived from. Empty when no step runs it.
pub fn step_loads(
    stage: ConvStage,
    shape: &ConvShape,
    kernel_id: &str,
) -> Result<Vec<(f64, f64)>, ConvError> {
    let layout = plan_layout(stage, shape)?;
    let kernels = step_kernels(&layout, &[])?;
    Ok(layout
        .steps
        .iter()
        .zip(kernels)
        .filter(|(step, _)| step.kernel == kernel_id)
        .map(|(step, k)| {
            let threads = step
                .groups
                .iter()
                .chain(&k.workgroup_size)
                .map(|&v| f64::from(v))
                .product::<f64>();
            (step.cost, threads)
        })
        .collect())
}

/// The kernel of each step: a replacement with its id, else the catalogue's.
fn step_kernels<'a>(
    layout: &PlanLayout,
    replacements: &[&'a KernelSpec],
) -> Result<Vec<&'a KernelSpec>, ConvError> {
    layout
        .steps
        .iter()
        .map(|step| {
            replacements
                .iter()
                .copied()
                .find(|k| k.id == step.kernel)
                .or_else(|| conv_kernel(step.kernel))
                .or_else(|| matmul_kernel(step.kernel))
                .ok_or(ConvError::Gpu(GpuError::WrongJob))
        })
        .collect()
}

/// A stage's plan for one shape and its data, exactly as [`run_conv`] runs it (the
/// catalogue's kernels, the inputs in the stage's storage, the grids and uniforms), for
/// another WebGPU implementation to run the same dispatches (`bench dump-kernels`, the Dawn
/// runner).
pub struct StagePlan<'a> {
    pub plan: Plan<'a>,
    /// The buffer read back: the output, N·P·Q rows of `k_stored` floats (the first K of
    /// each row are the NPQK output).
    pub output: &'static str,
    pub k_stored: u32,
}

/// The plan [`run_conv`] would run for `stage` on `shape`, `x` and `f` (device limits not
/// checked: see [`check`]).
pub fn stage_plan<'a>(
    stage: ConvStage,
    shape: &ConvShape,
    x: &'a [f32],
    f: &[f32],
) -> Result<StagePlan<'a>, ConvError> {
    let layout = plan_layout(stage, shape)?;
    if x.len() != shape.x_len() || f.len() != shape.f_len() {
        return Err(ConvError::WrongInputLength);
    }
    let kernels = step_kernels(&layout, &[])?;
    Ok(StagePlan {
        plan: plan(shape, &layout, &kernels, x, f),
        output: NAMES[Y],
        k_stored: layout.k_stored,
    })
}

/// Buffer names of the conv plans, indexed by X, F, Y, A.
const NAMES: [&str; 4] = ["x", "f", "y", "scratch"];

/// The stage's plan: inputs in its storage (channels padded to c_stored, the filter's (r, s)
/// blocks of C rows padded to c_stored rows of k_stored, then zero rows up to f_rows), the
/// output read back, the im2col matrix when there is one.
fn plan<'a>(
    shape: &ConvShape,
    layout: &PlanLayout,
    kernels: &[&'a KernelSpec],
    x: &'a [f32],
    f: &[f32],
) -> Plan<'a> {
    let x_p = pad_rows(
        x,
        shape.c as usize,
        layout.c_stored as usize,
        x.len() / shape.c as usize,
    );
    let (k, ks) = (shape.k as usize, layout.k_stored as usize);
    let mut f_p = Vec::with_capacity(layout.f_rows as usize * ks);
    for rs in f.chunks_exact(shape.c as usize * k) {
        f_p.extend_from_slice(&pad_rows(rs, k, ks, layout.c_stored as usize));
    }
    f_p.resize(layout.f_rows as usize * ks, 0.0);
    let bytes = |v: Cow<'a, [f32]>| match v {
        Cow::Borrowed(b) => Cow::Borrowed(bytemuck::cast_slice(b)),
        Cow::Owned(o) => Cow::Owned(bytemuck::cast_slice(&o).to_vec()),
    };
    let mut buffers = vec![
        PlanBuffer {
            name: NAMES[X],
            init: Init::Bytes(bytes(x_p)),
            read_back: false,
        },
        PlanBuffer {
            name: NAMES[F],
            init: Init::Bytes(bytes(Cow::Owned(f_p))),
            read_back: false,
        },
        PlanBuffer {
            name: NAMES[Y],
            init: Init::Zeroed(layout.buffer_bytes[Y]),
            read_back: true,
        },
    ];
    if let Some(&a_bytes) = layout.buffer_bytes.get(A) {
        buffers.push(PlanBuffer {
            name: NAMES[A],
            init: Init::Zeroed(a_bytes),
            read_back: false,
        });
    }
    let steps = layout
        .steps
        .iter()
        .zip(kernels)
        .map(|(step, &kernel)| {
            let mut bindings: Vec<Binding> = step
                .bindings
                .iter()
                .map(|&b| Binding::whole(NAMES[b]))
                .collect();
            bindings.push(Binding::Uniform);
            Step {
                kernel,
                dispatch: Dispatch {
                    bindings,
                    uniform: step.uniform.clone(),
                    workgroups: step.groups,
                },
                cost: step.cost,
                split: None,
            }
        })
        .collect();
    Plan { buffers, steps }
}

/// Judges a conv output against the CPU reference: every element when the reference is
/// cheap, else borders, corners and a seeded sample. Returns the verdict and elements checked.
pub fn verify_conv(
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
    got: &[f32],
    seed: u64,
) -> (verify::Verdict, usize) {
    match cref::check_indices(shape, FULL_CHECK_MACS, SAMPLED_ELEMENTS, seed) {
        None => (
            verify::compare(got, &cref::reference(shape, x, f), Precision::F32),
            shape.y_len(),
        ),
        Some(idx) => {
            let reference = cref::reference_at(shape, x, f, &idx);
            let picked: Vec<f32> = idx
                .iter()
                .map(|&i| got.get(i).copied().unwrap_or(f32::NAN))
                .collect();
            let mut v = verify::compare(&picked, &reference, Precision::F32);
            v.ok &= got.len() == shape.y_len();
            (v, idx.len())
        }
    }
}

/// Runs a stage on seeded data and verifies it against the CPU reference.
pub async fn run_conv_verified(
    gpu: &Gpu,
    stage: ConvStage,
    shape: &ConvShape,
    seed: u64,
    opts: &RunOptions,
) -> Result<VerifiedRun, ConvError> {
    run_conv_verified_with(gpu, stage, shape, seed, opts, &RunControl::default()).await
}

/// [`run_conv_verified`] with cancel and progress (the ladder's Run widget).
pub async fn run_conv_verified_with(
    gpu: &Gpu,
    stage: ConvStage,
    shape: &ConvShape,
    seed: u64,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<VerifiedRun, ConvError> {
    shape.validate().map_err(ConvError::Shape)?;
    check(stage, shape, &gpu.limits())?;
    let (x, f) = shape.inputs(seed);
    let out = run_conv_with(gpu, stage, &[], shape, &x, &f, opts, ctl).await?;
    let (verdict, checked) = verify_conv(shape, &x, &f, &out.output, seed);
    Ok(VerifiedRun {
        verdict,
        checked,
        total: shape.y_len(),
        timing: out.timing,
        flops: shape.flops(),
        posed_error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_and_extra_memory() {
        // 3×3 "same" over 5 channels, 6 filters: im2col's A is (N·P·Q) × round4(45).
        let s = ConvShape::new(2, 5, 7, 9, 6, 3, 3).with(1, 1, 1);
        let l = plan_layout(ConvStage::Im2colGemm, &s).expect("valid");
        assert_eq!(l.buffer_bytes[A], 4 * 2 * 7 * 9 * 48);
        assert_eq!(l.steps[1].uniform, vec![126, 8, 48, 0]);
        // Implicit GEMM pads channels to 8 and filters to 8.
        let ig = plan_layout(ConvStage::ImplicitGemm, &s).expect("valid");
        assert_eq!(
            ig.buffer_bytes,
            vec![4 * 2 * 7 * 9 * 8, 4 * 72 * 8, 4 * 126 * 8]
        );
        assert_eq!(ig.steps[0].groups, [1, 2, 1]);
        assert_eq!(ConvStage::Direct.extra_bytes(&s), 0);
        let plain = 4 * (s.x_len() + s.f_len() + s.y_len()) as u64;
        assert_eq!(
            ConvStage::Im2colGemm.extra_bytes(&s),
            4 * (126 * 48 + 48 * 8 + 126 * 8 + 2 * 7 * 9 * 5) as u64 - plain
        );
        assert_eq!(
            plan_layout(ConvStage::Pointwise, &s),
            Err(ConvError::NotPointwise)
        );
    }

    #[test]
    fn tiled_refuses_patches_that_do_not_fit() {
        // Stride 8, 7×7 dilated 3: (8−1)·8 + 3·6 + 1 = 75 rows → 75·75 floats per channel.
        let s = ConvShape::new(1, 1, 600, 600, 1, 7, 7).with(8, 0, 3);
        assert_eq!(
            plan_layout(ConvStage::Tiled, &s),
            Err(ConvError::PatchTooLarge {
                floats: 75 * 75,
                capacity: TILED_FLOATS
            })
        );
        // Stride 4: 47·47 pixels fit one channel at a time.
        let one = ConvShape::new(1, 2, 200, 200, 1, 7, 7).with(4, 0, 3);
        let l = plan_layout(ConvStage::Tiled, &one).expect("fits");
        assert_eq!(l.steps[0].uniform[16], 1);
        let stem = ConvShape::new(1, 3, 224, 224, 64, 7, 7).with(2, 3, 1);
        let l = plan_layout(ConvStage::Tiled, &stem).expect("fits");
        assert_eq!(l.steps[0].uniform[16], 3);
    }

    #[test]
    fn limits_are_named() {
        let s = ConvShape::new(32, 64, 56, 56, 64, 3, 3).with(1, 1, 1);
        let limits = wgpu::Limits::default();
        assert!(matches!(
            check(ConvStage::Im2colGemm, &s, &limits),
            Err(ConvError::BufferTooLarge {
                buffer: "im2col matrix",
                ..
            })
        ));
        assert_eq!(check(ConvStage::ImplicitGemm, &s, &limits), Ok(()));
        assert!(matches!(
            check(
                ConvStage::Direct,
                &ConvShape::new(1, 1, 1, 1, 1, 2, 2),
                &limits
            ),
            Err(ConvError::Shape(_))
        ));
    }

    #[test]
    fn split_k_fills_the_gpu_only_when_needed() {
        assert_eq!(split_k(49, 36), 4); // 1×64×56×56→64: 36 steps, 8 per slice at least
        assert_eq!(split_k(196, 72), 4); // 8×128×28×28→128
        assert_eq!(split_k(196, 13), 1); // the 7×7 stem: too few steps to split
        assert_eq!(split_k(16, 144), 16); // 1×256×14×14→256: capped at 16
        assert_eq!(split_k(300, 100), 1);
        assert_eq!(split_k(1, 7), 1);
        let s = ConvShape::new(1, 256, 14, 14, 256, 3, 3).with(1, 1, 1);
        let l = plan_layout(ConvStage::ImplicitGemm, &s).expect("valid");
        assert_eq!(l.steps[0].groups, [4, 4, 16]);
        assert_eq!(l.steps[0].uniform[17], 16);
        assert_eq!(l.buffer_bytes[A], 16 * 196 * 256 * 4);
        assert_eq!(
            ConvStage::ImplicitGemm.plan_kernels(&s),
            Ok(vec!["conv-implicit-gemm", "conv-splitk-reduce"])
        );
        let big = ConvShape::new(32, 64, 56, 56, 64, 3, 3).with(1, 1, 1);
        assert_eq!(
            ConvStage::ImplicitGemm.plan_kernels(&big),
            Ok(vec!["conv-implicit-gemm-128x64"])
        );
    }

    #[test]
    fn implicit_gemm_blocks_per_shape() {
        let id = |m, k4| ig_tile(m, k4).id;
        // 32×64×56×56→64: 100,352 pixels, 64 filters: 784 blocks of 128×64.
        assert_eq!(id(32 * 56 * 56, 64), "conv-implicit-gemm-128x64");
        // Many pixels and filters: the largest block.
        assert_eq!(id(32 * 56 * 56, 256), "conv-implicit-gemm-128x128");
        // 1×64×56×56→64: 49 blocks of 64×64 already too few; split-K instead.
        assert_eq!(id(56 * 56, 64), "conv-implicit-gemm");
        // Never wider than the filters (rounded up to 64).
        assert_eq!(id(1 << 20, 8), "conv-implicit-gemm-128x64");
        // The candidates (`auto: false`) are never the rule's choice, at any size: the 7×7
        // stem (12,544 pixels, 64 filters) keeps 64×64 until a measurement says otherwise.
        assert_eq!(id(112 * 112, 64), "conv-implicit-gemm");
        for m in [1, 100, 12_544, 1 << 20] {
            for k4 in [4, 32, 64, 256] {
                assert!(IG_TILES.iter().any(|t| t.auto && t.id == id(m, k4)));
            }
        }
        assert!(force_ig_tile(Some("conv-implicit-gemm-64x128")));
        assert_eq!(id(56 * 56, 64), "conv-implicit-gemm-64x128");
        assert!(!force_ig_tile(Some("nope")));
        assert!(force_ig_tile(None));
        let s = ConvShape::new(8, 128, 28, 28, 128, 3, 3).with(1, 1, 1);
        force_ig_splits(Some(3));
        assert_eq!(
            plan_layout(ConvStage::ImplicitGemm, &s)
                .expect("valid")
                .steps[0]
                .groups[2],
            3
        );
        force_ig_splits(Some(100));
        assert_eq!(
            plan_layout(ConvStage::ImplicitGemm, &s)
                .expect("valid")
                .steps[0]
                .groups[2],
            IG_MAX_SPLITS
        );
        force_ig_splits(None);
        // 196 blocks of 64×64, 72 steps: 4 slices (the fastest on the H200).
        assert_eq!(
            plan_layout(ConvStage::ImplicitGemm, &s)
                .expect("valid")
                .steps[0]
                .groups[2],
            4
        );
        assert_eq!(id(56 * 56, 64), "conv-implicit-gemm");
        for t in IG_TILES {
            let k = conv_kernel(t.id).expect("catalogued");
            assert_eq!(k.workgroup_size, [t.bn / 8, t.bm / t.tm, 1]);
            let tm = k
                .constants
                .iter()
                .find(|(n, _)| *n == "TM")
                .map(|c| c.1 as u32);
            // Every block states its rows per invocation (the shader's default is not used).
            assert_eq!(tm, Some(t.tm), "{}", t.id);
            // Each invocation moves 1, 2 or 4 vec4s of A and of B per step.
            let threads = t.bn / 8 * (t.bm / t.tm);
            for n in [t.bk * t.bm / 4, t.bk * t.bn / 4] {
                assert_eq!(n % threads, 0);
                assert!([1, 2, 4].contains(&(n / threads)), "{}", t.id);
            }
        }
    }

    #[test]
    fn stage_ids_round_trip() {
        for s in ConvStage::ALL {
            assert_eq!(ConvStage::from_id(s.id()), Some(s));
            assert!(!s.kernels().is_empty());
        }
        assert_eq!(ConvStage::Im2colGemm.kernels().len(), 2);
        // The four blocks the rule picks from and the reduction; no candidate.
        let ig: Vec<&str> = ConvStage::ImplicitGemm
            .kernels()
            .iter()
            .map(|k| k.id)
            .collect();
        assert_eq!(ig.len(), 5, "{ig:?}");
        assert!(IG_TILES.iter().all(|t| t.auto == ig.contains(&t.id)));
    }
}
