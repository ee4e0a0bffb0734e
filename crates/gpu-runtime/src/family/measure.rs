//! The lessons' measuring kernels (`shaders/measure_*.wgsl`): their list, buffer layout,
//! launch grids, CPU references and checks. The measurements built on them are in
//! [`crate::measurements`].
//!
//! Bindings: 0 = input f32 (read), 1 = output f32 (write), 2 = uniform
//! {elements, threads, param, multiplier} (the multiplier is 1.0 as f32 bits).

use std::borrow::Cow;

use cpu_kernels::verify::{Precision, Verdict};

use super::{Layout, SingleRun};
use crate::context::GpuError;
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::{MeasureSize, Workload};

const MEASURE_COPY: &str = include_str!("../../../../shaders/measure_copy.wgsl");
const MEASURE_STRIDED: &str = include_str!("../../../../shaders/measure_strided.wgsl");
const MEASURE_FMA: &str = include_str!("../../../../shaders/measure_fma.wgsl");
const MEASURE_DIVERGENCE: &str = include_str!("../../../../shaders/measure_divergence.wgsl");

pub static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "measure-copy",
        source_path: "shaders/measure_copy.wgsl",
        source: KernelSource::Built(|| MEASURE_COPY.to_string()),
        entry_point: "main",
        family: Family::Measure,
        constants: &[],
        workgroup_size: [256, 1, 1],
        grid: grid_copy,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-copy.title",
        summary_key: "kernel.measure-copy.summary",
    },
    KernelSpec {
        id: "measure-strided",
        source_path: "shaders/measure_strided.wgsl",
        source: KernelSource::Built(|| MEASURE_STRIDED.to_string()),
        entry_point: "main",
        family: Family::Measure,
        constants: &[],
        workgroup_size: [256, 1, 1],
        grid: grid_threads::<256>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-strided.title",
        summary_key: "kernel.measure-strided.summary",
    },
    KernelSpec {
        id: "measure-fma",
        source_path: "shaders/measure_fma.wgsl",
        source: KernelSource::Built(|| MEASURE_FMA.to_string()),
        entry_point: "main",
        family: Family::Measure,
        constants: &[],
        workgroup_size: [64, 1, 1],
        grid: grid_threads::<64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-fma.title",
        summary_key: "kernel.measure-fma.summary",
    },
    KernelSpec {
        id: "measure-divergent",
        source_path: "shaders/measure_divergence.wgsl",
        source: KernelSource::Built(|| MEASURE_DIVERGENCE.to_string()),
        entry_point: "main",
        family: Family::Measure,
        constants: &[("DIVERGENT", 1.0)],
        workgroup_size: [64, 1, 1],
        grid: grid_threads::<64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-divergent.title",
        summary_key: "kernel.measure-divergent.summary",
    },
    KernelSpec {
        id: "measure-uniform",
        source_path: "shaders/measure_divergence.wgsl",
        source: KernelSource::Built(|| MEASURE_DIVERGENCE.to_string()),
        entry_point: "main",
        family: Family::Measure,
        constants: &[("DIVERGENT", 0.0)],
        workgroup_size: [64, 1, 1],
        grid: grid_threads::<64>,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.measure-uniform.title",
        summary_key: "kernel.measure-uniform.summary",
    },
];

/// WebGPU's guaranteed maximum of workgroups per dimension.
const MAX_GROUPS: u32 = 65_535;

/// Largest stride the coalescing probe accepts; buffers are multiples of it.
pub const MAX_STRIDE: u32 = 64;

pub(crate) fn layout(size: MeasureSize, input: &[f32]) -> Layout<'_> {
    Layout {
        inputs: vec![Cow::Borrowed(bytemuck::cast_slice(input))],
        // The chains' multiplier 1.0, as bits: a uniform the shader compiler cannot fold.
        uniform: vec![size.elements, size.threads, size.param, 1f32.to_bits()],
        output_len: size.threads as usize,
        padded_rows: None,
    }
}

/// The copy kernel: one invocation per vec4, grid-stride beyond 65,535 workgroups.
pub(crate) fn grid_copy(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Measure(s) => [(s.elements / 4).div_ceil(256).clamp(1, MAX_GROUPS), 1, 1],
        _ => [0, 0, 0],
    }
}

/// One invocation per logical thread (WG per workgroup), grid-stride beyond 65,535 groups.
pub(crate) fn grid_threads<const WG: u32>(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Measure(s) => [s.threads.div_ceil(WG).clamp(1, MAX_GROUPS), 1, 1],
        _ => [0, 0, 0],
    }
}

/// The FMA probe's per-lane addends, chain by chain (as in `measure_fma.wgsl`). None is zero
/// and their total (41) is not, so one skipped step of any chain changes the result.
const FMA_CONSTS: [[f32; 4]; 4] = [
    [1.0, 2.0, 3.0, 4.0],
    [5.0, 6.0, 7.0, 8.0],
    [-1.0, -2.0, -3.0, -5.0],
    [1.0, 3.0, 5.0, 7.0],
];

/// What the probe's kernel computes, on the CPU, in the same f32 operations.
pub fn reference(kernel_id: &str, size: MeasureSize, input: &[f32]) -> Vec<f32> {
    let threads = size.threads as usize;
    let iters = size.param;
    match kernel_id {
        "measure-copy" => input.to_vec(),
        "measure-strided" => {
            let n = size.elements as usize;
            let stride = size.param.max(1) as usize;
            let rows = n / stride;
            (0..threads)
                .map(|t| {
                    let mut acc = 0f32;
                    let mut v = t;
                    while v < n {
                        acc += input[(v % rows) * stride + v / rows];
                        v += threads;
                    }
                    acc
                })
                .collect()
        }
        "measure-fma" => input[..threads]
            .iter()
            .map(|&s| {
                let starts = [s, s + 1.0, s - 1.0, -s];
                let mut lanes = [0f32; 4];
                for (x0, c) in starts.iter().zip(FMA_CONSTS) {
                    for (lane, ci) in c.iter().enumerate() {
                        let mut x = *x0;
                        for _ in 0..iters {
                            x = x.mul_add(1.0, *ci);
                        }
                        lanes[lane] += x;
                    }
                }
                lanes[0] + lanes[1] + lanes[2] + lanes[3]
            })
            .collect(),
        "measure-divergent" | "measure-uniform" => input[..threads]
            .iter()
            .enumerate()
            .map(|(t, &s)| {
                let path_a = if kernel_id == "measure-divergent" {
                    t % 2 == 0
                } else {
                    (t / 64) % 2 == 0
                };
                let mut x = s;
                for _ in 0..iters {
                    x = if path_a {
                        x.mul_add(1.0, 1.0)
                    } else {
                        x.mul_add(x + 2.0, 1.0).sqrt().round_ties_even() % 2048.0
                    };
                }
                x
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Checks a probe's output. The copy must be exact. Sums (strided) may only differ by f32
/// rounding of the terms' magnitudes. The chains (fma, divergence) add whole numbers (or
/// round to them), every operation exact, so they must match bit for bit: a chain that
/// skipped a single step is off by at least 1.
pub fn verify(kernel_id: &str, size: MeasureSize, input: &[f32], got: &[f32]) -> Verdict {
    let want = reference(kernel_id, size, input);
    let rel_bound = match kernel_id {
        "measure-copy" => 0.0,
        "measure-strided" => {
            let reads = size.elements.div_ceil(size.threads.max(1)) as f64;
            2.0 * reads / (1u64 << 24) as f64
        }
        _ => 0.0,
    };
    let mut max_rel_error = 0f64;
    let mut first_failure = None;
    let mut wrong = 0;
    if want.len() != got.len() || want.is_empty() {
        first_failure = Some((0, got.first().copied().unwrap_or(f32::NAN), f64::NAN));
    }
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let scale = (w.abs() as f64).max(1.0);
        let err = (g as f64 - w as f64).abs() / scale;
        let bad =
            !g.is_finite() || err > rel_bound || (rel_bound == 0.0 && g.to_bits() != w.to_bits());
        if err.is_finite() {
            max_rel_error = max_rel_error.max(err);
        }
        if bad {
            wrong += 1;
            first_failure.get_or_insert((i, g, w as f64));
        }
    }
    Verdict {
        ok: first_failure.is_none(),
        max_rel_error,
        rel_bound,
        first_failure,
        wrong,
    }
}

/// The one-step plan of a probe (not split: each probe is short by design).
pub(crate) fn plan<'a>(
    kernel: &'a KernelSpec,
    size: MeasureSize,
    input: &'a [f32],
) -> Result<SingleRun<'a>, GpuError> {
    let groups = kernel.workgroups(&Workload::Measure(size));
    let cost = size.elements.max(size.threads) as f64 * size.param.max(1) as f64;
    layout(size, input).into_plan(kernel, groups, cost, None)
}
