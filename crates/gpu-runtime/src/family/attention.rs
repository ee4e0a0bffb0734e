//! Causal self-attention, the GPT's core (issue 39): out_i = Σ_{j ≤ i} softmax_j(q_i·k_j/√d)·v_j
//! for many independent problems (sequences × heads), in two forms that compute the same thing:
//!
//! - [`AttentionPath::Naive`]: three dispatches that write every score and probability to
//!   memory (`attention_naive_scores` → `attention_naive_softmax` → `attention_naive_pv`):
//!   bh·n² floats, the memory wall of the articles' large-model chapter;
//! - [`AttentionPath::Fused`]: one dispatch (`attention_fused`) with online softmax; scores
//!   and probabilities never leave the chip, memory grows with n.
//!
//! Like conv, the family has no `Job`: [`run_attention`] builds its plan and calls
//! [`Gpu::run_plan`]. One [`AttnLayout`] addresses Q, K, V and the output, so the same kernels
//! read the benchmark's separate (bh, n, d) tensors and the GPT's packed rows [q | k | v].
//!
//! The check ([`verify`]) compares sampled rows (every row of small problems) with an f64
//! reference computed here from the definition, within an order-free bound derived per
//! element: the scores' dot products (d products, one more rounding for the pre-scaled q),
//! WGSL's `exp` (3 + 2·|x| ulps), the softmax sum and the weighted sum of values (n terms each,
//! any order), all relative to Σ_j p_j·|v_j|. `gpt::ops::attention` is the CPU twin the
//! model trains with; a test holds this reference to it.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cpu_kernels::data::SplitMix64;
use cpu_kernels::verify::{Precision, Verdict};

use crate::context::{Gpu, GpuError};
use crate::plan::{
    Binding, Dispatch, Init, Plan, PlanBuffer, RunControl, RunOptions, RunOutput, Step,
};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::{SizeError, Workload};

const COMMON: &str = include_str!("../../../../shaders/attention_common.wgsl");
const SCORES: &str = include_str!("../../../../shaders/attention_naive_scores.wgsl");
const SOFTMAX: &str = include_str!("../../../../shaders/attention_naive_softmax.wgsl");
const PV: &str = include_str!("../../../../shaders/attention_naive_pv.wgsl");
const FUSED: &str = include_str!("../../../../shaders/attention_fused.wgsl");

/// The fused kernel's largest head width (its registers and shared tiles hold 16 vec4s).
pub const MAX_HEAD: u32 = 64;

fn no_grid(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

macro_rules! attention_kernel {
    ($id:literal, $path:literal, $src:ident, $wg:expr) => {
        attention_kernel!($id, $path, $src, $wg, &[])
    };
    ($id:literal, $path:literal, $src:ident, $wg:expr, $constants:expr) => {
        KernelSpec {
            id: $id,
            source_path: $path,
            source: KernelSource::Built(|| format!("{}\n{COMMON}", $src)),
            entry_point: "main",
            family: Family::Attention,
            constants: $constants,
            workgroup_size: $wg,
            grid: no_grid,
            storage: Storage::F32,
            required_features: wgpu::Features::empty(),
            precision: Precision::F32,
            title_key: concat!("kernel.", $id, ".title"),
            summary_key: concat!("kernel.", $id, ".summary"),
        }
    };
}

pub static KERNELS: &[KernelSpec] = &[
    attention_kernel!(
        "attention-naive-scores",
        "shaders/attention_naive_scores.wgsl",
        SCORES,
        [16, 16, 1]
    ),
    attention_kernel!(
        "attention-naive-softmax",
        "shaders/attention_naive_softmax.wgsl",
        SOFTMAX,
        [128, 1, 1]
    ),
    attention_kernel!(
        "attention-naive-pv",
        "shaders/attention_naive_pv.wgsl",
        PV,
        [16, 16, 1]
    ),
    // Catalogued with the default head width 64; a run sets D and D4.
    attention_kernel!(
        "attention-fused",
        "shaders/attention_fused.wgsl",
        FUSED,
        [256, 1, 1],
        &[("D", 64.0), ("D4", 16.0)]
    ),
];

fn kernel(id: &str) -> Result<&'static KernelSpec, GpuError> {
    KERNELS
        .iter()
        .find(|k| k.id == id)
        .ok_or_else(|| GpuError::Shader(format!("no kernel {id}")))
}

/// A kernel's override constants, as a spec holds them.
type Constants = &'static [(&'static str, f64)];

/// The fused kernel for head width `d`: its override constants, made once per width (a
/// spec's constants are `'static`).
pub fn fused_kernel(d: u32) -> Result<KernelSpec, GpuError> {
    static MADE: OnceLock<Mutex<HashMap<u32, Constants>>> = OnceLock::new();
    let base = kernel("attention-fused")?;
    let made = MADE.get_or_init(Default::default);
    let mut made = made
        .lock()
        .map_err(|_| GpuError::Shader("attention constants poisoned".into()))?;
    let constants = *made
        .entry(d)
        .or_insert_with(|| Box::leak(Box::new([("D", d as f64), ("D4", d.div_ceil(4) as f64)])));
    Ok(KernelSpec {
        constants,
        ..base.clone()
    })
}

/// Naive (scores in memory) or fused (online softmax).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttentionPath {
    Naive,
    Fused,
}

impl AttentionPath {
    pub const ALL: [AttentionPath; 2] = [AttentionPath::Naive, AttentionPath::Fused];

    pub fn id(self) -> &'static str {
        match self {
            AttentionPath::Naive => "naive",
            AttentionPath::Fused => "fused",
        }
    }
}

/// Where Q, K, V and the output live: `bh` problems of `n` positions and head width `d`,
/// problem z being sequence z / heads, head z % heads; element e of row i of problem z is at
/// `off + (z / heads)·seq + (z % heads)·head + i·row + e`, strides in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttnLayout {
    pub bh: u32,
    pub n: u32,
    pub d: u32,
    pub heads: u32,
    pub q_off: u32,
    pub k_off: u32,
    pub v_off: u32,
    pub in_seq: u32,
    pub in_head: u32,
    pub in_row: u32,
    pub out_seq: u32,
    pub out_head: u32,
    pub out_row: u32,
}

impl AttnLayout {
    /// Q, K and V as three consecutive (bh, n, d) tensors; the output (bh, n, d): PyTorch's
    /// `scaled_dot_product_attention` layout with one head per problem.
    pub fn separate(bh: u32, n: u32, d: u32) -> Self {
        let per = n * d;
        Self {
            bh,
            n,
            d,
            heads: 1,
            q_off: 0,
            k_off: bh * per,
            v_off: 2 * bh * per,
            in_seq: per,
            in_head: 0,
            in_row: d,
            out_seq: per,
            out_head: 0,
            out_row: d,
        }
    }

    /// The GPT's rows: `b` sequences of `t` positions, each row [q | k | v] of width 3·c with
    /// c = heads·hs; the output rows of width c.
    pub fn packed(b: u32, t: u32, heads: u32, hs: u32) -> Self {
        let c = heads * hs;
        Self {
            bh: b * heads,
            n: t,
            d: hs,
            heads,
            q_off: 0,
            k_off: c,
            v_off: 2 * c,
            in_seq: t * 3 * c,
            in_head: hs,
            in_row: 3 * c,
            out_seq: t * c,
            out_head: hs,
            out_row: c,
        }
    }

    fn seqs(&self) -> u32 {
        self.bh / self.heads.max(1)
    }

    /// f32 elements of the qkv buffer.
    pub fn qkv_len(&self) -> usize {
        if self.heads == 1 && self.in_head == 0 {
            3 * (self.bh * self.n * self.d) as usize
        } else {
            (self.seqs() * self.in_seq) as usize
        }
    }

    /// f32 elements of the output buffer.
    pub fn out_len(&self) -> usize {
        (self.seqs() * self.out_seq) as usize
    }

    fn in_at(&self, z: u32, i: u32) -> usize {
        ((z / self.heads) * self.in_seq + (z % self.heads) * self.in_head + i * self.in_row)
            as usize
    }

    fn out_at(&self, z: u32, i: u32) -> usize {
        ((z / self.heads) * self.out_seq + (z % self.heads) * self.out_head + i * self.out_row)
            as usize
    }

    fn uniform(&self) -> Vec<u32> {
        let scale = 1.0 / (self.d as f32).sqrt();
        vec![
            self.bh,
            self.n,
            self.d,
            self.heads,
            self.q_off,
            self.k_off,
            self.v_off,
            0,
            self.in_seq,
            self.in_head,
            self.in_row,
            self.out_seq,
            self.out_head,
            self.out_row,
            scale.to_bits(),
            0,
        ]
    }

    /// Forward FLOPs counted as PyTorch's anchor does for causal attention: 4·bh·n²·d / 2.
    pub fn flops(&self) -> f64 {
        2.0 * self.bh as f64 * (self.n as f64).powi(2) * self.d as f64
    }

    /// Bytes of the largest buffer each path allocates: the scores (bh·n² f32) for the naive
    /// path, the inputs for the fused one.
    pub fn largest_buffer(&self, path: AttentionPath) -> u64 {
        let inputs = self.qkv_len() as u64 * 4;
        match path {
            AttentionPath::Naive => inputs.max(self.bh as u64 * (self.n as u64).pow(2) * 4),
            AttentionPath::Fused => inputs,
        }
    }
}

/// Why a run cannot start, before any GPU call.
fn check(gpu: &Gpu, path: AttentionPath, l: &AttnLayout) -> Result<(), GpuError> {
    if l.bh == 0 || l.n == 0 || l.d == 0 || l.heads == 0 || !l.bh.is_multiple_of(l.heads) {
        return Err(GpuError::WrongJob);
    }
    if path == AttentionPath::Fused && l.d > MAX_HEAD {
        return Err(GpuError::Shader(format!(
            "the fused kernel holds head widths up to {MAX_HEAD}, not {}",
            l.d
        )));
    }
    let limits = gpu.limits();
    let max_groups = limits.max_compute_workgroups_per_dimension;
    if l.bh > max_groups || l.n > max_groups {
        return Err(GpuError::Shader(format!(
            "{} problems of {} positions exceed maxComputeWorkgroupsPerDimension ({max_groups})",
            l.bh, l.n
        )));
    }
    let b = gpu.buffer_limits();
    let max = b.max_storage_buffer_binding_size.min(b.max_buffer_size);
    let needed = l.largest_buffer(path);
    if needed > max {
        // The longest sequence whose buffers fit, for the memory-wall chart.
        let per_n2 = l.bh as u64 * 4;
        let largest = ((max / per_n2.max(1)) as f64).sqrt() as u32;
        return Err(GpuError::Size(SizeError::ExceedsLimit {
            limit: "maxStorageBufferBindingSize",
            limit_bytes: max,
            needed_bytes: needed,
            largest_square: largest,
        }));
    }
    Ok(())
}

/// The plan of one path on `qkv`.
fn plan<'a>(
    path: AttentionPath,
    l: &AttnLayout,
    qkv: &'a [f32],
    fused: &'a KernelSpec,
) -> Result<Plan<'a>, GpuError> {
    let u = l.uniform();
    let mut buffers = vec![
        PlanBuffer {
            name: "qkv",
            init: Init::Bytes(bytemuck::cast_slice(qkv).into()),
            read_back: false,
        },
        PlanBuffer {
            name: "out",
            init: Init::Zeroed(l.out_len() as u64 * 4),
            read_back: true,
        },
    ];
    let macs = l.flops() / 2.0;
    let steps = match path {
        AttentionPath::Fused => vec![Step {
            kernel: fused,
            dispatch: Dispatch {
                bindings: vec![
                    Binding::whole("qkv"),
                    Binding::whole("out"),
                    Binding::Uniform,
                ],
                uniform: u,
                workgroups: [l.n.div_ceil(16), l.bh, 1],
            },
            cost: macs,
            split: None,
        }],
        AttentionPath::Naive => {
            buffers.push(PlanBuffer {
                name: "scores",
                init: Init::Zeroed(l.bh as u64 * (l.n as u64).pow(2) * 4),
                read_back: false,
            });
            let tiles = l.n.div_ceil(16);
            vec![
                Step {
                    kernel: kernel("attention-naive-scores")?,
                    dispatch: Dispatch {
                        bindings: vec![
                            Binding::whole("qkv"),
                            Binding::whole("scores"),
                            Binding::Uniform,
                        ],
                        uniform: u.clone(),
                        workgroups: [tiles, tiles, l.bh],
                    },
                    cost: macs / 2.0,
                    split: None,
                },
                Step {
                    kernel: kernel("attention-naive-softmax")?,
                    dispatch: Dispatch {
                        bindings: vec![Binding::whole("scores"), Binding::Uniform],
                        uniform: u.clone(),
                        workgroups: [l.n, l.bh, 1],
                    },
                    cost: l.bh as f64 * (l.n as f64).powi(2) / 2.0,
                    split: None,
                },
                Step {
                    kernel: kernel("attention-naive-pv")?,
                    dispatch: Dispatch {
                        bindings: vec![
                            Binding::whole("qkv"),
                            Binding::whole("scores"),
                            Binding::whole("out"),
                            Binding::Uniform,
                        ],
                        uniform: u,
                        workgroups: [l.d.div_ceil(16), tiles, l.bh],
                    },
                    cost: macs / 2.0,
                    split: None,
                },
            ]
        }
    };
    Ok(Plan { buffers, steps })
}

/// Runs one path on `qkv` (laid out as `l`): the output (laid out as `l`'s output) and the
/// timing.
pub async fn run_attention(
    gpu: &Gpu,
    path: AttentionPath,
    l: &AttnLayout,
    qkv: &[f32],
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<RunOutput, GpuError> {
    check(gpu, path, l)?;
    if qkv.len() != l.qkv_len() {
        return Err(GpuError::WrongJob);
    }
    let fused = fused_kernel(l.d)?;
    let plan = plan(path, l, qkv, &fused)?;
    let out = gpu.run_plan(&plan, opts, ctl).await?;
    let bytes = out
        .bytes("out")
        .ok_or_else(|| GpuError::Readback("no output was read back".into()))?;
    Ok(RunOutput {
        output: bytemuck::pod_collect_to_vec(bytes),
        timing: out.timing,
    })
}

/// Row `i` of problem `z` in f64 from the definition, and each element's allowed error.
pub fn reference_row(l: &AttnLayout, qkv: &[f32], z: u32, i: u32) -> (Vec<f64>, Vec<f64>) {
    let d = l.d as usize;
    let u = f32::EPSILON as f64 / 2.0;
    let scale = 1.0 / (l.d as f64).sqrt();
    let q = &qkv[l.q_off as usize + l.in_at(z, i)..][..d];
    let mut s = Vec::with_capacity(i as usize + 1);
    let mut dot_mag = 0.0f64;
    for j in 0..=i {
        let k = &qkv[l.k_off as usize + l.in_at(z, j)..][..d];
        let (mut dot, mut mag) = (0.0f64, 0.0f64);
        for e in 0..d {
            dot += q[e] as f64 * k[e] as f64;
            mag += (q[e] as f64 * k[e] as f64).abs();
        }
        s.push(dot * scale);
        dot_mag = dot_mag.max(mag * scale);
    }
    let max = s.iter().copied().fold(f64::MIN, f64::max);
    let range = s.iter().map(|&v| max - v).fold(0.0, f64::max);
    let w: Vec<f64> = s.iter().map(|&v| (v - max).exp()).collect();
    let z_sum: f64 = w.iter().sum();
    let mut out = vec![0.0f64; d];
    let mut mag = vec![0.0f64; d];
    for (j, &wj) in w.iter().enumerate() {
        let v = &qkv[l.v_off as usize + l.in_at(z, j as u32)..][..d];
        let p = wj / z_sum;
        for e in 0..d {
            out[e] += p * v[e] as f64;
            mag[e] += p * (v[e] as f64).abs();
        }
    }
    // Relative error of each p: a score's absolute error (d + 2 roundings of terms up to
    // dot_mag), twice (this score and the maximum), the exp's 3 + 2·|x| ulps, the sum's n
    // roundings and the division; then the weighted sum's n roundings. Twice that, for the
    // first-order terms left out.
    let n = (i + 1) as f64;
    let score = (d as f64 + 2.0) * u * dot_mag;
    let rel = 2.0 * (2.0 * score + (3.0 + 2.0 * range) * u * 2.0 + (2.0 * n + 4.0) * u);
    let bound = mag
        .iter()
        .map(|&m| rel * m + f32::MIN_POSITIVE as f64)
        .collect();
    (out, bound)
}

/// The rows (problem, position) to check: all of them up to `max_rows`, else a seeded sample of
/// that many that always includes each problem's first and last rows.
pub fn rows_to_check(l: &AttnLayout, max_rows: usize, seed: u64) -> Vec<(u32, u32)> {
    let total = l.bh as usize * l.n as usize;
    if total <= max_rows {
        return (0..l.bh)
            .flat_map(|z| (0..l.n).map(move |i| (z, i)))
            .collect();
    }
    let mut rng = SplitMix64::new(seed);
    let mut rows = vec![(0, 0), (l.bh - 1, l.n - 1)];
    while rows.len() < max_rows {
        let r = (rng.next_u64() % total as u64) as u32;
        rows.push((r / l.n, r % l.n));
    }
    rows
}

/// Compares `got` (the output buffer) with [`reference_row`] on `rows`.
pub fn verify(l: &AttnLayout, qkv: &[f32], got: &[f32], rows: &[(u32, u32)]) -> Verdict {
    let mut worst = 0.0f64;
    let mut first_failure = None;
    let mut wrong = 0;
    for &(z, i) in rows {
        let (want, bound) = reference_row(l, qkv, z, i);
        let at = l.out_at(z, i);
        for (e, (&w, &b)) in want.iter().zip(&bound).enumerate() {
            let g = got.get(at + e).copied().unwrap_or(f32::NAN);
            let err = (g as f64 - w).abs();
            let inside = g.is_finite() && err <= b;
            worst = worst.max(if g.is_finite() {
                err / b
            } else {
                f64::INFINITY
            });
            if !inside {
                wrong += 1;
                first_failure.get_or_insert((at + e, g, w));
            }
        }
    }
    Verdict {
        ok: got.len() == l.out_len() && first_failure.is_none(),
        // Per element bounds: the largest error as a fraction of its own bound (1 = at it).
        max_rel_error: worst,
        rel_bound: 1.0,
        first_failure,
        wrong,
    }
}
