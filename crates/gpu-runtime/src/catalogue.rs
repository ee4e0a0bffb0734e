//! The kernel catalogue: each kernel is described exactly once, here.
//!
//! A consumer (run widget, ladder, visualiser, race, tests, benchmarks) looks a kernel up by id
//! and hands it to [`crate::Gpu::run`]; it never builds bind groups or dispatch sizes itself.
//! To add a kernel: put its WGSL in `shaders/`, add one entry to [`KERNELS`], and add its
//! title and summary keys to both translation tables of the app.

use cpu_kernels::matmul;
use cpu_kernels::verify::{self, Precision, Verdict};

use crate::workload::{Job, Workload};

/// The family fixes the buffer layout (bindings), the CPU reference and the verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// C = A·B. Bindings: 0 = A (M×K, read), 1 = B (K×N, read), 2 = C (M×N, write),
    /// 3 = uniform dims {m, n, k, 0}.
    Matmul,
    /// Records when workgroups start and end. Bindings: 0 = atomic counter, 1 = events
    /// (2 u32 per workgroup, read back as raw words), 2 = uniform {gx, gy, work, 0}.
    Schedule,
    /// The tiny MLP's training kernels. They run no [`Job`]: a
    /// [`crate::training::TrainingSession`] owns their buffers and bind groups (each file's
    /// header lists its bindings) and sizes their grids with [`crate::training::step_plan`].
    Mlp,
    /// Measuring kernels of the lessons (bandwidth, FMA peak, coalescing, divergence).
    /// Bindings: 0 = input f32 (read), 1 = output f32 (write), 2 = uniform
    /// {elements, threads, param, 0}. References and checks: [`crate::measure`].
    Measure,
}

/// How the inputs and output are laid out in GPU buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// f32, tightly packed, as the job holds them.
    F32,
    /// f32 read and written as vec4: K and N are padded with zeros up to multiples of 4 (the
    /// uniform carries the padded sizes) and the padded columns of C are dropped on readback.
    F32Vec4,
    /// A and B uploaded as IEEE binary16; C is f32.
    F16Inputs,
    /// As [`Storage::F32Vec4`], but M and N padded with zeros up to multiples of
    /// [`TILE_PAD_MN`] and K up to a multiple of [`TILE_PAD_K`], so a kernel with tiles that
    /// divide them needs no bounds tests; the padding is dropped on readback.
    F32Vec4Tiles,
}

/// M and N of [`Storage::F32Vec4Tiles`] are padded to multiples of this.
pub const TILE_PAD_MN: u32 = 128;
/// K of [`Storage::F32Vec4Tiles`] is padded to a multiple of this.
pub const TILE_PAD_K: u32 = 32;

/// Everything needed to compile, launch and check one kernel.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// Stable id, used in URLs and as the prefix of its text keys.
    pub id: &'static str,
    /// Path of its WGSL file relative to the repository root, shown to learners.
    pub source_path: &'static str,
    /// The complete WGSL as compiled, built from files in `shaders/` (see [`KernelSpec::wgsl`]).
    pub source: fn() -> String,
    pub entry_point: &'static str,
    pub family: Family,
    /// Values for the shader's `override` constants (tile sizes).
    pub constants: &'static [(&'static str, f64)],
    /// The workgroup size the shader ends up with after its overrides; a test checks it
    /// against the shader.
    pub workgroup_size: [u32; 3],
    /// Workgroups to dispatch for a workload.
    pub grid: fn(&Workload) -> [u32; 3],
    pub storage: Storage,
    /// Device features the kernel needs; without them it is shown as unavailable.
    pub required_features: wgpu::Features,
    /// How it rounds, which sets its error bound.
    pub precision: Precision,
    /// Translation key of its short title.
    pub title_key: &'static str,
    /// Translation key of its one-paragraph explanation.
    pub summary_key: &'static str,
}

// The WGSL files, compiled into the binary: `shaders/` is the single source for the browser,
// the native tests and the benchmarks.
const NAIVE: &str = include_str!("../../../shaders/matmul_naive.wgsl");
const COALESCED: &str = include_str!("../../../shaders/matmul_coalesced.wgsl");
const TILED: &str = include_str!("../../../shaders/matmul_tiled.wgsl");
const BLOCKTILE_1D: &str = include_str!("../../../shaders/matmul_blocktile_1d.wgsl");
const BLOCKTILE_2D: &str = include_str!("../../../shaders/matmul_blocktile_2d.wgsl");
const VEC4: &str = include_str!("../../../shaders/matmul_vec4.wgsl");
const TUNED: &str = include_str!("../../../shaders/matmul_tuned.wgsl");
const SUBGROUP: &str = include_str!("../../../shaders/matmul_subgroup.wgsl");
const REGTILE_COMMON: &str = include_str!("../../../shaders/matmul_regtile_common.wgsl");
const SCHEDULE_PROBE: &str = include_str!("../../../shaders/schedule_probe.wgsl");
const MLP_FORWARD: &str = include_str!("../../../shaders/mlp_forward.wgsl");
const MLP_LOSS: &str = include_str!("../../../shaders/mlp_loss.wgsl");
const MLP_BACKWARD_PARAMS: &str = include_str!("../../../shaders/mlp_backward_params.wgsl");
const MLP_BACKWARD_INPUT: &str = include_str!("../../../shaders/mlp_backward_input.wgsl");
const MLP_SGD: &str = include_str!("../../../shaders/mlp_sgd.wgsl");
const MLP_ADAM: &str = include_str!("../../../shaders/mlp_adam.wgsl");
const MEASURE_COPY: &str = include_str!("../../../shaders/measure_copy.wgsl");
const MEASURE_STRIDED: &str = include_str!("../../../shaders/measure_strided.wgsl");
const MEASURE_FMA: &str = include_str!("../../../shaders/measure_fma.wgsl");
const MEASURE_DIVERGENCE: &str = include_str!("../../../shaders/measure_divergence.wgsl");

/// Workgroups for kernels whose x axis runs along columns: one BN×BM block of C each.
/// (A kernel only ever gets workloads of its own family: see [`KernelSpec::accepts`].)
fn grid_blocks<const BN: u32, const BM: u32>(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Matmul(s) => [s.n.div_ceil(BN), s.m.div_ceil(BM), 1],
        Workload::Schedule(_) | Workload::Measure(_) => [0, 0, 0],
    }
}

/// Workgroups for the naive kernel, whose x axis runs along ROWS (that is its lesson).
fn grid_naive(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Matmul(s) => [s.m.div_ceil(16), s.n.div_ceil(16), 1],
        Workload::Schedule(_) | Workload::Measure(_) => [0, 0, 0],
    }
}

/// One workgroup per probe cell.
fn grid_schedule(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Schedule(s) => [s.gx, s.gy, 1],
        Workload::Matmul(_) | Workload::Measure(_) => [0, 0, 0],
    }
}

/// MLP kernels take one thread per element of a layer, 64 to a workgroup; the training
/// session computes that count per layer ([`crate::training::step_plan`]), so a workload
/// gives them no grid.
fn grid_mlp(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

/// The half-precision stage is the 2D block-tiled file with f16 inputs (see its header).
fn f16_source() -> String {
    let body = BLOCKTILE_2D.replace("alias InputElem = f32;", "alias InputElem = f16;");
    format!("enable f16;\n\n{body}\n{REGTILE_COMMON}")
}

const TILE_16: &[(&str, f64)] = &[("TILE", 16.0)];
const BLOCK_64: &[(&str, f64)] = &[("BM", 64.0), ("BN", 64.0), ("BK", 8.0)];
const BLOCK_128: &[(&str, f64)] = &[("BM", 128.0), ("BN", 128.0), ("BK", 16.0)];

/// All kernels. The matmul ones, in this order, are the optimisation ladder.
pub static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "matmul-naive",
        source_path: "shaders/matmul_naive.wgsl",
        source: || NAIVE.to_string(),
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
        source: || COALESCED.to_string(),
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
        source: || TILED.to_string(),
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
        source: || BLOCKTILE_1D.to_string(),
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
        source: || format!("{BLOCKTILE_2D}\n{REGTILE_COMMON}"),
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
        source: || format!("{VEC4}\n{REGTILE_COMMON}"),
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
        source: || SUBGROUP.to_string(),
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
        source: f16_source,
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
        source: || format!("{TUNED}\n{REGTILE_COMMON}"),
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
        id: "schedule-probe",
        source_path: "shaders/schedule_probe.wgsl",
        source: || SCHEDULE_PROBE.to_string(),
        entry_point: "main",
        family: Family::Schedule,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_schedule,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.schedule-probe.title",
        summary_key: "kernel.schedule-probe.summary",
    },
    KernelSpec {
        id: "mlp-forward",
        source_path: "shaders/mlp_forward.wgsl",
        source: || MLP_FORWARD.to_string(),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-forward.title",
        summary_key: "kernel.mlp-forward.summary",
    },
    KernelSpec {
        id: "mlp-loss",
        source_path: "shaders/mlp_loss.wgsl",
        source: || MLP_LOSS.to_string(),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-loss.title",
        summary_key: "kernel.mlp-loss.summary",
    },
    KernelSpec {
        id: "mlp-backward-params",
        source_path: "shaders/mlp_backward_params.wgsl",
        source: || MLP_BACKWARD_PARAMS.to_string(),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-backward-params.title",
        summary_key: "kernel.mlp-backward-params.summary",
    },
    KernelSpec {
        id: "mlp-backward-input",
        source_path: "shaders/mlp_backward_input.wgsl",
        source: || MLP_BACKWARD_INPUT.to_string(),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-backward-input.title",
        summary_key: "kernel.mlp-backward-input.summary",
    },
    KernelSpec {
        id: "mlp-sgd",
        source_path: "shaders/mlp_sgd.wgsl",
        source: || MLP_SGD.to_string(),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-sgd.title",
        summary_key: "kernel.mlp-sgd.summary",
    },
    KernelSpec {
        id: "mlp-adam",
        source_path: "shaders/mlp_adam.wgsl",
        source: || MLP_ADAM.to_string(),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_mlp,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.mlp-adam.title",
        summary_key: "kernel.mlp-adam.summary",
    },
    KernelSpec {
        id: "measure-copy",
        source_path: "shaders/measure_copy.wgsl",
        source: || MEASURE_COPY.to_string(),
        entry_point: "main",
        family: Family::Measure,
        constants: &[],
        workgroup_size: [256, 1, 1],
        grid: crate::measure::grid_copy,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-copy.title",
        summary_key: "kernel.measure-copy.summary",
    },
    KernelSpec {
        id: "measure-strided",
        source_path: "shaders/measure_strided.wgsl",
        source: || MEASURE_STRIDED.to_string(),
        entry_point: "main",
        family: Family::Measure,
        constants: &[],
        workgroup_size: [256, 1, 1],
        grid: crate::measure::grid_threads::<256>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-strided.title",
        summary_key: "kernel.measure-strided.summary",
    },
    KernelSpec {
        id: "measure-fma",
        source_path: "shaders/measure_fma.wgsl",
        source: || MEASURE_FMA.to_string(),
        entry_point: "main",
        family: Family::Measure,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: crate::measure::grid_threads::<64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-fma.title",
        summary_key: "kernel.measure-fma.summary",
    },
    KernelSpec {
        id: "measure-divergent",
        source_path: "shaders/measure_divergence.wgsl",
        source: || MEASURE_DIVERGENCE.to_string(),
        entry_point: "main",
        family: Family::Measure,
        constants: &[("DIVERGENT", 1.0)],
        workgroup_size: [64, 1, 1],
        grid: crate::measure::grid_threads::<64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-divergent.title",
        summary_key: "kernel.measure-divergent.summary",
    },
    KernelSpec {
        id: "measure-uniform",
        source_path: "shaders/measure_divergence.wgsl",
        source: || MEASURE_DIVERGENCE.to_string(),
        entry_point: "main",
        family: Family::Measure,
        constants: &[("DIVERGENT", 0.0)],
        workgroup_size: [64, 1, 1],
        grid: crate::measure::grid_threads::<64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-uniform.title",
        summary_key: "kernel.measure-uniform.summary",
    },
];

/// Tile shapes (BM, BN, BK) `matmul-tuned` accepts: each invocation loads 1, 2 or 4 vec4s of
/// each block and its shared memory (2·BK·512 bytes) stays within WebGPU's default 16 KiB.
/// `bench matmul --tune` and `crates/bench/dawn/run.mjs` try them all and report the fastest.
pub const TUNED_TILES: [(u32, u32, u32); 8] = [
    (128, 128, 16),
    (128, 128, 8),
    (128, 64, 16),
    (128, 64, 8),
    (64, 128, 16),
    (64, 128, 8),
    (64, 64, 16),
    (64, 64, 8),
];

/// `matmul-tuned` with other tile sizes, as its own spec (id `matmul-tuned@BMxBNxBK`, so each
/// gets its own pipeline); `None` for a shape outside [`TUNED_TILES`].
pub fn tuned_variant(bm: u32, bn: u32, bk: u32) -> Option<KernelSpec> {
    if !TUNED_TILES.contains(&(bm, bn, bk)) {
        return None;
    }
    let base = kernel("matmul-tuned")?;
    let grid: fn(&Workload) -> [u32; 3] = match (bm, bn) {
        (128, 128) => grid_blocks::<128, 128>,
        (128, 64) => grid_blocks::<64, 128>,
        (64, 128) => grid_blocks::<128, 64>,
        _ => grid_blocks::<64, 64>,
    };
    let constants = vec![("BM", bm as f64), ("BN", bn as f64), ("BK", bk as f64)];
    Some(KernelSpec {
        id: Box::leak(format!("matmul-tuned@{bm}x{bn}x{bk}").into_boxed_str()),
        constants: Box::leak(constants.into_boxed_slice()),
        workgroup_size: [bn / 8, bm / 8, 1],
        grid,
        ..base.clone()
    })
}

/// Looks a kernel up by id.
pub fn kernel(id: &str) -> Option<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.id == id)
}

/// WebGPU names of the optional features the catalogue's kernels may need.
const FEATURE_NAMES: [(wgpu::Features, &str); 2] = [
    (wgpu::Features::SHADER_F16, "shader-f16"),
    (wgpu::Features::SUBGROUP, "subgroups"),
];

impl KernelSpec {
    /// The WebGPU names of the features this kernel needs (`shader-f16`, `subgroups`).
    pub fn feature_names(&self) -> Vec<&'static str> {
        FEATURE_NAMES
            .iter()
            .filter(|(f, _)| self.required_features.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }

    /// Whether wgpu can give this kernel its features in a browser. wgpu 30 treats
    /// `subgroups` as native-only (gfx-rs/wgpu#5555), so those kernels run natively only.
    pub fn runs_in_browser(&self) -> bool {
        !self.required_features.contains(wgpu::Features::SUBGROUP)
    }

    /// The kernels of a family, in ladder order, with their stage numbers (from 1).
    pub fn ladder(family: Family) -> impl Iterator<Item = (usize, &'static KernelSpec)> {
        KERNELS
            .iter()
            .filter(move |k| k.family == family)
            .enumerate()
            .map(|(i, k)| (i + 1, k))
    }

    /// The previous stage of this kernel's ladder, if any.
    pub fn previous(&self) -> Option<&'static KernelSpec> {
        let mut prev = None;
        for (_, k) in Self::ladder(self.family) {
            if k.id == self.id {
                return prev;
            }
            prev = Some(k);
        }
        None
    }

    /// The complete WGSL this kernel compiles from.
    pub fn wgsl(&self) -> String {
        (self.source)()
    }

    /// Workgroups to dispatch for this workload.
    pub fn workgroups(&self, w: &Workload) -> [u32; 3] {
        (self.grid)(w)
    }

    /// Whether a job fits this kernel's family.
    pub fn accepts(&self, job: &Job<'_>) -> bool {
        matches!(
            (self.family, job),
            (Family::Matmul, Job::Matmul { .. })
                | (Family::Schedule, Job::Schedule(_))
                | (Family::Measure, Job::Measure { .. })
        )
    }

    /// Checks a GPU result against the CPU reference for this job.
    pub fn verify(&self, job: &Job<'_>, got: &[f32]) -> Verdict {
        match *job {
            Job::Matmul { size, a, b } => {
                verify::compare(got, &matmul::reference(size, a, b), self.precision)
            }
            Job::Schedule(_) => verify_tickets(got),
            Job::Measure { size, input } => crate::measure::verify(self.id, size, input, got),
        }
    }
}

/// A schedule probe is right when its tickets (raw words) are exactly 0 … 2·groups − 1, once
/// each — every workgroup started and ended once — and each ends after it starts.
fn verify_tickets(got: &[f32]) -> Verdict {
    let words: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    let mut seen = vec![false; words.len()];
    let mut first_failure = None;
    for (i, &w) in words.iter().enumerate() {
        let fresh = seen.get(w as usize).is_some_and(|s| !s);
        let ordered = i % 2 == 0 || words[i - 1] < w;
        if fresh && ordered {
            seen[w as usize] = true;
        } else if first_failure.is_none() {
            first_failure = Some((i, got[i], w as f64));
        }
    }
    Verdict {
        ok: first_failure.is_none() && seen.iter().all(|&s| s),
        max_rel_error: 0.0,
        rel_bound: 0.0,
        first_failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpu_kernels::matmul::MatmulSize;

    /// The workgroup size a shader declares, with its override defaults substituted.
    fn declared_workgroup_size(k: &KernelSpec) -> [u32; 3] {
        let src = k.wgsl();
        let start = src.find("@workgroup_size(").expect("a workgroup size") + 16;
        let end = start + src[start..].find(')').expect("closing paren");
        let dims: Vec<u32> = src[start..end]
            .split(',')
            .map(|expr| {
                // Each dimension is a literal, an override, or override / literal.
                let mut parts = expr.split('/').map(|p| {
                    let p = p.trim().trim_end_matches('u');
                    p.parse::<u32>().unwrap_or_else(|_| {
                        k.constants
                            .iter()
                            .find(|(name, _)| *name == p)
                            .map(|(_, v)| *v as u32)
                            .unwrap_or_else(|| panic!("{}: unknown size `{p}`", k.id))
                    })
                });
                let first = parts.next().unwrap_or(1);
                parts.fold(first, |acc, d| acc / d)
            })
            .collect();
        [
            dims[0],
            *dims.get(1).unwrap_or(&1),
            *dims.get(2).unwrap_or(&1),
        ]
    }

    #[test]
    fn specs_agree_with_their_shaders() {
        for (i, k) in KERNELS.iter().enumerate() {
            assert!(
                KERNELS[..i].iter().all(|o| o.id != k.id),
                "duplicate {}",
                k.id
            );
            let src = k.wgsl();
            assert_eq!(declared_workgroup_size(k), k.workgroup_size, "{}", k.id);
            assert!(src.contains(&format!("fn {}(", k.entry_point)));
            let first_code = src.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            assert!(
                first_code.starts_with("//") || first_code.starts_with("enable "),
                "{} needs a header comment",
                k.id
            );
            for (name, _) in k.constants {
                assert!(
                    src.contains(&format!("override {name}:")),
                    "{}: {name}",
                    k.id
                );
            }
            assert!(k.title_key.starts_with(&format!("kernel.{}.", k.id)));
            assert!(
                k.workgroup_size.iter().product::<u32>() <= 256,
                "WebGPU's default limit"
            );
        }
    }

    #[test]
    fn ladder_order_and_features() {
        let ids: Vec<&str> = KernelSpec::ladder(Family::Matmul)
            .map(|(_, k)| k.id)
            .collect();
        assert_eq!(ids.len(), 9);
        assert_eq!(ids[0], "matmul-naive");
        assert!(kernel("matmul-naive").and_then(|k| k.previous()).is_none());
        assert_eq!(
            kernel("matmul-coalesced")
                .and_then(|k| k.previous())
                .map(|k| k.id),
            Some("matmul-naive")
        );
        assert_eq!(
            kernel("matmul-f16").map(|k| k.feature_names()),
            Some(vec!["shader-f16"])
        );
        assert_eq!(
            kernel("matmul-subgroup").map(|k| k.runs_in_browser()),
            Some(false)
        );
        assert_eq!(
            kernel("matmul-vec4").map(|k| k.runs_in_browser()),
            Some(true)
        );
    }

    #[test]
    fn tuned_variants_match_their_shapes() {
        for &(bm, bn, bk) in &TUNED_TILES {
            let k = tuned_variant(bm, bn, bk).expect("listed shape");
            assert_eq!(k.workgroup_size, [bn / 8, bm / 8, 1]);
            assert_eq!(declared_workgroup_size(&k), k.workgroup_size, "{}", k.id);
            // Each invocation loads 1, 2 or 4 vec4s of each block; the kernel has no other case.
            for loads in [16 * bk / bn, 16 * bk / bm] {
                assert!([1, 2, 4].contains(&loads), "{}", k.id);
            }
            let w = Workload::Matmul(MatmulSize::new(129, 129, 7));
            assert_eq!(
                k.workgroups(&w),
                [129u32.div_ceil(bn), 129u32.div_ceil(bm), 1]
            );
        }
        assert!(tuned_variant(32, 32, 8).is_none());
    }

    #[test]
    fn grids_cover_odd_sizes() {
        let w = Workload::Matmul(MatmulSize::new(129, 65, 7));
        let grid = |id: &str| kernel(id).map(|k| k.workgroups(&w));
        assert_eq!(grid("matmul-naive"), Some([9, 5, 1]));
        assert_eq!(grid("matmul-coalesced"), Some([5, 9, 1]));
        assert_eq!(grid("matmul-vec4"), Some([1, 2, 1]));
        assert_eq!(grid("matmul-tuned"), Some([1, 3, 1]));
        assert_eq!(grid("matmul-subgroup"), Some([2, 129, 1]));
    }
}
