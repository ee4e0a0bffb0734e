//! Number formats other than f32 (lessons 14 and 15): an INT8 matmul built on packed 4×8-bit
//! dot products (`shaders/int8_matmul.wgsl`) and a double-float matmul that emulates FP64
//! with pairs of f32 (`shaders/df64_matmul.wgsl`). Both have the tiled matmul's structure, so
//! a lesson can time them beside `matmul-tiled`.
//!
//! Like conv, this family has no `Job`: [`run_int8`] and [`run_df64`] build their plans and call
//! [`Gpu::run_plan`]. The CPU sides are `cpu_kernels::quant` (quantisation, packing, the exact
//! integer product) and `cpu_kernels::df64` (pairs and an almost exact reference).

use std::borrow::Cow;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::verify::Precision;

use crate::context::{Gpu, GpuError};
use crate::plan::{
    Binding, Dispatch, Init, Plan, PlanBuffer, RunControl, RunOptions, Split, Step, Timing,
};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::{SizeError, Workload};

const INT8: &str = include_str!("../../../../shaders/int8_matmul.wgsl");
const DF64: &str = include_str!("../../../../shaders/df64_matmul.wgsl");

/// Rows and columns per workgroup of both kernels.
pub const TILE: u32 = 16;
/// Largest K the INT8 kernel's i32 sums hold exactly: 127² · K < 2³¹.
pub const INT8_MAX_K: u32 = 133_000;
/// The WGSL language feature the INT8 kernel needs (`navigator.gpu.wgslLanguageFeatures`).
pub const INT8_LANGUAGE_FEATURE: &str = "packed_4x8_integer_dot_product";

fn no_grid(_: &Workload) -> [u32; 3] {
    // Sized by this module's plans.
    [0, 0, 0]
}

pub static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "int8-matmul",
        source_path: "shaders/int8_matmul.wgsl",
        source: KernelSource::Built(|| INT8.to_string()),
        entry_point: "main",
        family: Family::Numeric,
        constants: &[],
        workgroup_size: [16, 16, 1],
        grid: no_grid,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.int8-matmul.title",
        summary_key: "kernel.int8-matmul.summary",
    },
    KernelSpec {
        id: "df64-matmul",
        source_path: "shaders/df64_matmul.wgsl",
        source: KernelSource::Built(|| DF64.to_string()),
        entry_point: "main",
        family: Family::Numeric,
        constants: &[],
        workgroup_size: [16, 16, 1],
        grid: no_grid,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key: "kernel.df64-matmul.title",
        summary_key: "kernel.df64-matmul.summary",
    },
];

fn kernel(id: &str) -> Result<&'static KernelSpec, GpuError> {
    KERNELS
        .iter()
        .find(|k| k.id == id)
        .ok_or_else(|| GpuError::Shader(format!("no kernel {id}")))
}

/// Refuses buffers over the device's limits before any GPU call. `per_element` is the bytes
/// of one element of the largest buffer, for the largest square size that would fit.
fn check_bytes(gpu: &Gpu, bytes: &[u64], per_element: u64) -> Result<(), GpuError> {
    let l = gpu.buffer_limits();
    let max = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
    match bytes.iter().copied().max() {
        Some(b) if b > max => Err(GpuError::Size(SizeError::ExceedsLimit {
            limit: "maxStorageBufferBindingSize",
            limit_bytes: max,
            needed_bytes: b,
            largest_square: ((max / per_element.max(1)) as f64).sqrt() as u32,
        })),
        _ => Ok(()),
    }
}

/// A one-step plan over buffers `a`, `b`, `c` (and `one`, holding 1.0, when `with_one`) with
/// uniform {m, n, words-or-k, row0}, cut into row tiles for long runs.
fn tiled_plan<'a>(
    kernel: &'a KernelSpec,
    size: MatmulSize,
    reduction: u32,
    a: Cow<'a, [u8]>,
    b: Cow<'a, [u8]>,
    c_bytes: u64,
    with_one: bool,
) -> Plan<'a> {
    let (m, n) = (size.m, size.n);
    let row_tiles = m.div_ceil(TILE);
    let col_tiles = n.div_ceil(TILE);
    let mut bindings = vec![
        Binding::whole("a"),
        Binding::whole("b"),
        Binding::whole("c"),
    ];
    if with_one {
        bindings.push(Binding::whole("one"));
    }
    bindings.push(Binding::Uniform);
    let part = {
        let bindings = bindings.clone();
        move |first: u32, count: u32| Dispatch {
            bindings: bindings.clone(),
            uniform: vec![m, n, reduction, first * TILE],
            workgroups: [col_tiles, count, 1],
        }
    };
    let mut plan = Plan {
        buffers: vec![
            PlanBuffer {
                name: "a",
                init: Init::Bytes(a),
                read_back: false,
            },
            PlanBuffer {
                name: "b",
                init: Init::Bytes(b),
                read_back: false,
            },
            PlanBuffer {
                name: "c",
                init: Init::Zeroed(c_bytes),
                read_back: true,
            },
        ],
        steps: vec![Step {
            kernel,
            dispatch: part(0, row_tiles),
            cost: size.m as f64 * size.n as f64 * size.k as f64,
            split: Some(Split {
                units: row_tiles,
                align: 1,
                part: Box::new(part),
            }),
        }],
    };
    if with_one {
        plan.buffers.push(PlanBuffer {
            name: "one",
            init: Init::Bytes(Cow::Owned(1f32.to_le_bytes().to_vec())),
            read_back: false,
        });
    }
    plan
}

/// A run's result and timing.
#[derive(Clone, Debug)]
pub struct NumericRun<T> {
    pub output: Vec<T>,
    pub timing: Timing,
}

/// C = Aq · Bq on the GPU in exact integers. `a_packed` is A's rows packed four values a word
/// (`cpu_kernels::quant::pack_rows`), `bt_packed` B's columns (`pack_cols`).
pub async fn run_int8(
    gpu: &Gpu,
    size: MatmulSize,
    a_packed: &[u32],
    bt_packed: &[u32],
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<NumericRun<i32>, GpuError> {
    if size.k > INT8_MAX_K {
        return Err(GpuError::Size(SizeError::OutOfRange {
            min: 1,
            max: INT8_MAX_K,
        }));
    }
    let kw = size.k.div_ceil(4);
    if a_packed.len() != size.m as usize * kw as usize
        || bt_packed.len() != size.n as usize * kw as usize
    {
        return Err(GpuError::WrongJob);
    }
    let c_bytes = size.c_len() as u64 * 4;
    check_bytes(
        gpu,
        &[
            a_packed.len() as u64 * 4,
            bt_packed.len() as u64 * 4,
            c_bytes,
        ],
        4,
    )?;
    let plan = tiled_plan(
        kernel("int8-matmul")?,
        size,
        kw,
        Cow::Borrowed(bytemuck::cast_slice(a_packed)),
        Cow::Borrowed(bytemuck::cast_slice(bt_packed)),
        c_bytes,
        false,
    );
    let out = gpu.run_plan(&plan, opts, ctl).await?;
    let bytes = out.bytes("c").ok_or(GpuError::WrongJob)?;
    let mut output: Vec<i32> = bytemuck::pod_collect_to_vec(bytes);
    output.truncate(size.c_len());
    Ok(NumericRun {
        output,
        timing: out.timing,
    })
}

/// C = A · B in double-float arithmetic on the GPU; A and B are f64 values (each exact as a
/// pair, see `cpu_kernels::df64::inputs`), C comes back as hi + lo.
pub async fn run_df64(
    gpu: &Gpu,
    size: MatmulSize,
    a: &[f64],
    b: &[f64],
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<NumericRun<f64>, GpuError> {
    if a.len() != size.a_len() || b.len() != size.b_len() {
        return Err(GpuError::WrongJob);
    }
    let pairs = |v: &[f64]| -> Vec<f32> {
        v.iter()
            .flat_map(|&x| cpu_kernels::df64::split(x))
            .collect()
    };
    let (pa, pb) = (pairs(a), pairs(b));
    let c_bytes = size.c_len() as u64 * 8;
    check_bytes(gpu, &[pa.len() as u64 * 4, pb.len() as u64 * 4, c_bytes], 8)?;
    let plan = tiled_plan(
        kernel("df64-matmul")?,
        size,
        size.k,
        Cow::Owned(bytemuck::cast_slice(&pa).to_vec()),
        Cow::Owned(bytemuck::cast_slice(&pb).to_vec()),
        c_bytes,
        true,
    );
    let out = gpu.run_plan(&plan, opts, ctl).await?;
    let bytes = out.bytes("c").ok_or(GpuError::WrongJob)?;
    let raw: Vec<f32> = bytemuck::pod_collect_to_vec(bytes);
    let output = raw
        .chunks_exact(2)
        .take(size.c_len())
        .map(|p| cpu_kernels::df64::join([p[0], p[1]]))
        .collect();
    Ok(NumericRun {
        output,
        timing: out.timing,
    })
}

/// The mean time of one repetition of a run: timestamps summed over the repetitions when the
/// run has them, else the wall clock over every run it covered (warm-up included).
pub fn mean_ms(t: &Timing) -> f64 {
    if t.pass_ms.is_empty() {
        t.submit_to_result_ms / (t.warmup + t.repetitions.max(1)) as f64
    } else {
        t.pass_ms.iter().sum::<f64>() / t.pass_ms.len() as f64
    }
}
