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
//! The backward ([`run_attention_backward`]) runs a path's forward and then its backward in
//! one plan: the naive one from the stored probabilities (`attention_naive_backward_dp` →
//! `_ds` → `_dq` → `_dkv`, a second n² buffer for dP and dS), the fused one FlashAttention-2's
//! way (`attention_fused_backward_delta` → `_dkv` → `_dq`), recomputing every score and
//! probability per tile from Q, K and the row log-sum-exp the fused forward saves. Each
//! gradient element has one owner, so neither uses atomics. [`backward_bounds`] gives each
//! gradient element's order-free bound; the values come from `gpt::ops::attention_backward`.
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
const NAIVE_DP: &str = include_str!("../../../../shaders/attention_naive_backward_dp.wgsl");
const NAIVE_DS: &str = include_str!("../../../../shaders/attention_naive_backward_ds.wgsl");
const NAIVE_DQ: &str = include_str!("../../../../shaders/attention_naive_backward_dq.wgsl");
const NAIVE_DKV: &str = include_str!("../../../../shaders/attention_naive_backward_dkv.wgsl");
const FUSED_DELTA: &str = include_str!("../../../../shaders/attention_fused_backward_delta.wgsl");
const FUSED_DKV: &str = include_str!("../../../../shaders/attention_fused_backward_dkv.wgsl");
const FUSED_DQ: &str = include_str!("../../../../shaders/attention_fused_backward_dq.wgsl");

/// Query rows per workgroup of the fused forward (one per invocation): `R` in its WGSL.
const FUSED_ROWS: u32 = 64;

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

/// The kernels' `Attn` struct (`attention_common.wgsl`), word by word.
pub static UNIFORM: crate::plan::UniformLayout = crate::plan::UniformLayout {
    name: "Attn",
    words: &[
        "bh", "n", "d", "heads", "q_off", "k_off", "v_off", "o_off", "in_seq", "in_head", "in_row",
        "out_seq", "out_head", "out_row", "scale", "_pad",
    ],
};

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
        [FUSED_ROWS, 1, 1],
        &[("D", 64.0), ("D4", 16.0)]
    ),
    attention_kernel!(
        "attention-naive-backward-dp",
        "shaders/attention_naive_backward_dp.wgsl",
        NAIVE_DP,
        [16, 16, 1]
    ),
    attention_kernel!(
        "attention-naive-backward-ds",
        "shaders/attention_naive_backward_ds.wgsl",
        NAIVE_DS,
        [128, 1, 1]
    ),
    attention_kernel!(
        "attention-naive-backward-dq",
        "shaders/attention_naive_backward_dq.wgsl",
        NAIVE_DQ,
        [16, 16, 1]
    ),
    attention_kernel!(
        "attention-naive-backward-dkv",
        "shaders/attention_naive_backward_dkv.wgsl",
        NAIVE_DKV,
        [16, 16, 1]
    ),
    attention_kernel!(
        "attention-fused-backward-delta",
        "shaders/attention_fused_backward_delta.wgsl",
        FUSED_DELTA,
        [64, 1, 1]
    ),
    // Catalogued with the default head width 64; a run sets D and D4.
    attention_kernel!(
        "attention-fused-backward-dkv",
        "shaders/attention_fused_backward_dkv.wgsl",
        FUSED_DKV,
        [256, 1, 1],
        &[("D", 64.0), ("D4", 16.0)]
    ),
    attention_kernel!(
        "attention-fused-backward-dq",
        "shaders/attention_fused_backward_dq.wgsl",
        FUSED_DQ,
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
    with_width("attention-fused", d)
}

/// Kernel `id` (one with the overrides D and D4) for head width `d`.
fn with_width(id: &str, d: u32) -> Result<KernelSpec, GpuError> {
    static MADE: OnceLock<Mutex<HashMap<u32, Constants>>> = OnceLock::new();
    let base = kernel(id)?;
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

    /// Where row `i` of problem `z` starts in the output buffer.
    pub fn out_at(&self, z: u32, i: u32) -> usize {
        ((z / self.heads) * self.out_seq + (z % self.heads) * self.out_head + i * self.out_row)
            as usize
    }

    /// The uniform block, filled by name (the engine's attention layer).
    pub fn named_uniform(&self) -> crate::plan::Uniform {
        crate::plan::Uniform::from_words(&UNIFORM, &self.uniform())
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

/// The kernels a path's plan dispatches that carry the head width as an override (a plan
/// borrows them: hold one for as long as its [`forward_plan`]).
pub struct Widths {
    fused: KernelSpec,
    fused_dkv: KernelSpec,
    fused_dq: KernelSpec,
}

impl Widths {
    pub fn new(d: u32) -> Result<Self, GpuError> {
        Ok(Self {
            fused: with_width("attention-fused", d)?,
            fused_dkv: with_width("attention-fused-backward-dkv", d)?,
            fused_dq: with_width("attention-fused-backward-dq", d)?,
        })
    }
}

/// The backward's inputs: the output's gradient (laid out as the output) and the gradient
/// buffer it adds into (laid out as qkv).
#[derive(Clone, Copy)]
struct Backward<'a> {
    dy: &'a [f32],
    dqkv: &'a [f32],
}

fn buffer<'a>(name: &'static str, init: Init<'a>, read_back: bool) -> PlanBuffer<'a> {
    PlanBuffer {
        name,
        init,
        read_back,
    }
}

fn step<'a>(
    kernel: &'a KernelSpec,
    names: &[&'static str],
    uniform: &[u32],
    workgroups: [u32; 3],
    cost: f64,
) -> Step<'a> {
    let mut bindings: Vec<Binding> = names.iter().map(|n| Binding::whole(n)).collect();
    bindings.push(Binding::Uniform);
    Step {
        kernel,
        dispatch: Dispatch {
            bindings,
            uniform: uniform.to_vec(),
            workgroups,
        },
        cost,
        split: None,
    }
}

/// The plan of one path on `qkv`: its forward, then its backward when `back` is given.
fn plan<'a>(
    path: AttentionPath,
    l: &AttnLayout,
    qkv: &'a [f32],
    widths: &'a Widths,
    back: Option<Backward<'a>>,
) -> Result<Plan<'a>, GpuError> {
    let u = l.uniform();
    let per_row = l.bh as u64 * l.n as u64 * 4;
    let n2 = per_row * l.n as u64;
    let mut buffers = vec![
        buffer("qkv", Init::Bytes(bytemuck::cast_slice(qkv).into()), false),
        buffer("out", Init::Zeroed(l.out_len() as u64 * 4), true),
    ];
    if let Some(bk) = back {
        buffers.push(buffer(
            "dy",
            Init::Bytes(bytemuck::cast_slice(bk.dy).into()),
            false,
        ));
        buffers.push(buffer(
            "dqkv",
            Init::Bytes(bytemuck::cast_slice(bk.dqkv).into()),
            true,
        ));
    }
    let macs = l.flops() / 2.0;
    let tiles = l.n.div_ceil(16);
    let mut steps = Vec::new();
    match path {
        AttentionPath::Fused => {
            buffers.push(buffer("lse", Init::Zeroed(per_row), false));
            steps.push(step(
                &widths.fused,
                &["qkv", "out", "lse"],
                &u,
                [l.n.div_ceil(FUSED_ROWS), l.bh, 1],
                macs,
            ));
            if back.is_some() {
                buffers.push(buffer("delta", Init::Zeroed(per_row), false));
                steps.push(step(
                    kernel("attention-fused-backward-delta")?,
                    &["out", "dy", "delta"],
                    &u,
                    [l.n.div_ceil(64), l.bh, 1],
                    (l.bh * l.n * l.d) as f64,
                ));
                let grads = ["qkv", "dy", "lse", "delta", "dqkv"];
                // dK and dV recompute the scores and dp (two products) and sum two more;
                // dQ recomputes both and sums one.
                steps.push(step(
                    &widths.fused_dkv,
                    &grads,
                    &u,
                    [tiles, l.bh, 1],
                    2.0 * macs,
                ));
                steps.push(step(
                    &widths.fused_dq,
                    &grads,
                    &u,
                    [tiles, l.bh, 1],
                    1.5 * macs,
                ));
            }
        }
        AttentionPath::Naive => {
            buffers.push(buffer("scores", Init::Zeroed(n2), false));
            steps.push(step(
                kernel("attention-naive-scores")?,
                &["qkv", "scores"],
                &u,
                [tiles, tiles, l.bh],
                macs / 2.0,
            ));
            steps.push(step(
                kernel("attention-naive-softmax")?,
                &["scores"],
                &u,
                [l.n, l.bh, 1],
                l.bh as f64 * (l.n as f64).powi(2) / 2.0,
            ));
            steps.push(step(
                kernel("attention-naive-pv")?,
                &["qkv", "scores", "out"],
                &u,
                [l.d.div_ceil(16), tiles, l.bh],
                macs / 2.0,
            ));
            if back.is_some() {
                buffers.push(buffer("dscores", Init::Zeroed(n2), false));
                steps.push(step(
                    kernel("attention-naive-backward-dp")?,
                    &["qkv", "dy", "dscores"],
                    &u,
                    [tiles, tiles, l.bh],
                    macs / 2.0,
                ));
                steps.push(step(
                    kernel("attention-naive-backward-ds")?,
                    &["scores", "dscores"],
                    &u,
                    [l.n, l.bh, 1],
                    l.bh as f64 * (l.n as f64).powi(2) / 2.0,
                ));
                steps.push(step(
                    kernel("attention-naive-backward-dq")?,
                    &["qkv", "dscores", "dqkv"],
                    &u,
                    [l.d.div_ceil(16), tiles, l.bh],
                    macs / 2.0,
                ));
                steps.push(step(
                    kernel("attention-naive-backward-dkv")?,
                    &["qkv", "dy", "scores", "dscores", "dqkv"],
                    &u,
                    [l.d.div_ceil(16), tiles, l.bh],
                    macs,
                ));
            }
        }
    }
    Ok(Plan { buffers, steps })
}

/// The plan [`run_attention`] runs for `path` on `qkv` (laid out as `l`; device limits not
/// checked): `out` is read back. `widths` is `Widths::new(l.d)`. `bench dump-kernels` writes
/// this plan for Dawn.
pub fn forward_plan<'a>(
    path: AttentionPath,
    l: &AttnLayout,
    qkv: &'a [f32],
    widths: &'a Widths,
) -> Result<Plan<'a>, GpuError> {
    if qkv.len() != l.qkv_len() {
        return Err(GpuError::WrongJob);
    }
    plan(path, l, qkv, widths, None)
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
    let widths = Widths::new(l.d)?;
    let plan = forward_plan(path, l, qkv, &widths)?;
    let out = gpu.run_plan(&plan, opts, ctl).await?;
    let bytes = out
        .bytes("out")
        .ok_or_else(|| GpuError::Readback("no output was read back".into()))?;
    Ok(RunOutput {
        output: bytemuck::pod_collect_to_vec(bytes),
        timing: out.timing,
    })
}

/// What [`run_attention_backward`] reads back: the forward's output and the gradient buffer
/// with the backward's gradients added.
#[derive(Clone, Debug, PartialEq)]
pub struct AttnGrads {
    pub out: Vec<f32>,
    pub dqkv: Vec<f32>,
}

/// Runs one path's forward on `qkv` and then its backward from `dy` (laid out as the output),
/// adding dQ, dK and dV into a copy of `dqkv` (laid out as qkv).
pub async fn run_attention_backward(
    gpu: &Gpu,
    path: AttentionPath,
    l: &AttnLayout,
    qkv: &[f32],
    dy: &[f32],
    dqkv: &[f32],
) -> Result<AttnGrads, GpuError> {
    check(gpu, path, l)?;
    if qkv.len() != l.qkv_len() || dqkv.len() != l.qkv_len() || dy.len() != l.out_len() {
        return Err(GpuError::WrongJob);
    }
    let widths = Widths::new(l.d)?;
    let plan = plan(path, l, qkv, &widths, Some(Backward { dy, dqkv }))?;
    let out = gpu
        .run_plan(&plan, &RunOptions::default(), &RunControl::default())
        .await?;
    let read = |name: &str| {
        out.bytes(name)
            .map(bytemuck::pod_collect_to_vec)
            .ok_or_else(|| GpuError::Readback(format!("{name} was not read back")))
    };
    Ok(AttnGrads {
        out: read("out")?,
        dqkv: read("dqkv")?,
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

/// Each gradient element's allowed error (laid out as qkv) for the backward of either path
/// from `qkv`, `dy` and the gradient buffer `dqkv` it adds into, derived in f64 per problem,
/// order-free and first-order, then doubled for the terms left out (u = 2⁻²⁴):
///
/// - each probability p_ij is relatively off by ρ_i: its score's error twice (the score and
///   the row's maximum or log-sum-exp; (d + 2)·u of the largest Σ|q·k|/√d), WGSL's `exp`
///   (3 + 2·|x| ulps, x up to the row's range plus ln n, per tile of the online rescale too),
///   the row's sum and division ((2n + 8)·u) and, for the fused path's log-sum-exp, `log`
///   (2⁻²¹ absolute, or 3 ulps of ln n) and the rounding of m + ln l;
/// - dp_ij = dy_i·v_j errs by (d + 1)·u·A_ij, A_ij = Σ_e |dy_i[e]·v_j[e]|;
/// - D_i (Σ_j p·dp, or dy_i·out_i) by (ρ_i + (n + 2d + 4)·u)·W_i, W_i = Σ_j p_ij·A_ij;
/// - ds_ij = p_ij·(dp_ij − D_i)/√d by E_ij = p_ij/√d·((ρ_i + 3u)·|dp_ij − D_i| + err dp + err D);
/// - dq_i = Σ_j ds·k_j by Σ_j E_ij·|k_j| + (n + 2)·u·Σ_j |ds·k_j|, dk_j likewise over i with q_i,
///   dv_j = Σ_i p·dy_i by Σ_i p_ij·(ρ_i + (n + 2)·u)·|dy_i|;
/// - adding into `dqkv`: u·(|dqkv| + Σ|terms|).
pub fn backward_bounds(l: &AttnLayout, qkv: &[f32], dy: &[f32], dqkv: &[f32]) -> Vec<f64> {
    let (n, d) = (l.n as usize, l.d as usize);
    let u = f32::EPSILON as f64 / 2.0;
    let scale = 1.0 / (l.d as f64).sqrt();
    let nf = n as f64;
    let mut bound = vec![0.0f64; l.qkv_len()];
    // |terms| summed per element, for the final addition.
    let mut mag = vec![0.0f64; l.qkv_len()];
    let row = |off: u32, z: u32, i: usize| -> Vec<f64> {
        qkv[off as usize + l.in_at(z, i as u32)..][..d]
            .iter()
            .map(|&v| v as f64)
            .collect()
    };
    for z in 0..l.bh {
        let q: Vec<Vec<f64>> = (0..n).map(|i| row(l.q_off, z, i)).collect();
        let k: Vec<Vec<f64>> = (0..n).map(|i| row(l.k_off, z, i)).collect();
        let v: Vec<Vec<f64>> = (0..n).map(|i| row(l.v_off, z, i)).collect();
        let g: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                dy[l.out_at(z, i as u32)..][..d]
                    .iter()
                    .map(|&x| x as f64)
                    .collect()
            })
            .collect();
        // Per (i, j ≤ i): p, dp, A, E and ds.
        let mut p = vec![vec![0.0f64; n]; n];
        let mut ds = vec![vec![0.0f64; n]; n];
        let mut e_ds = vec![vec![0.0f64; n]; n];
        let mut rho = vec![0.0f64; n];
        for i in 0..n {
            let mut s = vec![0.0f64; i + 1];
            let mut dot_mag = 0.0f64;
            for j in 0..=i {
                let (mut dot, mut m) = (0.0, 0.0);
                for e in 0..d {
                    dot += q[i][e] * k[j][e];
                    m += (q[i][e] * k[j][e]).abs();
                }
                s[j] = dot * scale;
                dot_mag = dot_mag.max(m * scale);
            }
            let max = s.iter().copied().fold(f64::MIN, f64::max);
            let w: Vec<f64> = s.iter().map(|&x| (x - max).exp()).collect();
            let zsum: f64 = w.iter().sum();
            let range = s.iter().map(|&x| max - x).fold(0.0, f64::max) + zsum.ln() + 1.0;
            let score = (d as f64 + 2.0) * u * dot_mag;
            let tiles = (i / 16 + 2) as f64;
            let log_err = (1.0 / 2_097_152.0f64).max(6.0 * u * zsum.ln());
            rho[i] = 2.0
                * (2.0 * score
                    + (3.0 * tiles + 6.0 * range) * 2.0 * u
                    + (2.0 * nf + 8.0) * u
                    + log_err
                    + u * (max.abs() + zsum.ln()));
            let mut dp = vec![0.0f64; i + 1];
            let mut a = vec![0.0f64; i + 1];
            let (mut dd, mut wsum) = (0.0f64, 0.0f64);
            for j in 0..=i {
                p[i][j] = w[j] / zsum;
                for e in 0..d {
                    dp[j] += g[i][e] * v[j][e];
                    a[j] += (g[i][e] * v[j][e]).abs();
                }
                dd += p[i][j] * dp[j];
                wsum += p[i][j] * a[j];
            }
            let err_d = (rho[i] + (nf + 2.0 * d as f64 + 4.0) * u) * wsum;
            for j in 0..=i {
                let diff = dp[j] - dd;
                ds[i][j] = p[i][j] * diff * scale;
                let err_dp = (d as f64 + 1.0) * u * a[j];
                e_ds[i][j] = p[i][j] * scale * ((rho[i] + 3.0 * u) * diff.abs() + err_dp + err_d);
            }
        }
        let sum_u = (nf + 2.0) * u;
        for e in 0..d {
            for i in 0..n {
                let at = l.q_off as usize + l.in_at(z, i as u32) + e;
                for j in 0..=i {
                    let t = (ds[i][j] * k[j][e]).abs();
                    bound[at] += e_ds[i][j] * k[j][e].abs() + sum_u * t;
                    mag[at] += t;
                }
            }
            for j in 0..n {
                let kat = l.k_off as usize + l.in_at(z, j as u32) + e;
                let vat = l.v_off as usize + l.in_at(z, j as u32) + e;
                for i in j..n {
                    let t = (ds[i][j] * q[i][e]).abs();
                    bound[kat] += e_ds[i][j] * q[i][e].abs() + sum_u * t;
                    mag[kat] += t;
                    let t = (p[i][j] * g[i][e]).abs();
                    bound[vat] += (rho[i] + sum_u) * t;
                    mag[vat] += t;
                }
            }
        }
    }
    bound
        .iter()
        .zip(&mag)
        .zip(dqkv)
        .map(|((&b, &m), &g0)| 2.0 * (b + u * (m + (g0 as f64).abs())) + f32::MIN_POSITIVE as f64)
        .collect()
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
