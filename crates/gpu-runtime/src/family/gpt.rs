//! The GPT's layer kernels other than its matrix products and attention (issue 39):
//! LayerNorm forward, its backward to the input and to γ and β, GELU forward and backward, the
//! token and position embeddings (a gather forward, a deterministic scatter-add backward) and
//! the softmax cross-entropy head (loss and logits gradient in one pass), and the residual
//! stream's element-wise sum (checked inside the engine's lockstep test, `tests/engine_vs_cpu.rs`).
//! Each follows its CPU twin in `gpt::ops` (or `gpt::model` for the embeddings) sum for sum
//! (one invocation per row, per column or per gradient element, ascending order) and is
//! checked against the twin run in f64, within bounds derived from the arithmetic
//! ([`ln_bound`], [`gelu_bound`], [`embed_bound`], [`xent_bounds`]).
//!
//! Like conv, the family has no `Job`: each `run_*` builds a one-step plan and calls
//! [`Gpu::run_plan`]. The GPT's training session will put the same dispatches in its resident
//! plan.

use crate::context::{Gpu, GpuError};
use crate::plan::{Binding, Dispatch, Init, Plan, PlanBuffer, RunControl, RunOptions, Step};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;
use cpu_kernels::verify::Precision;

const COMMON: &str = include_str!("../../../../shaders/gpt_common.wgsl");
const LN: &str = include_str!("../../../../shaders/gpt_layernorm.wgsl");
const LN_BACK: &str = include_str!("../../../../shaders/gpt_layernorm_backward.wgsl");
const LN_PARAMS: &str = include_str!("../../../../shaders/gpt_layernorm_param_grad.wgsl");
const GELU: &str = include_str!("../../../../shaders/gpt_gelu.wgsl");
const GELU_BACK: &str = include_str!("../../../../shaders/gpt_gelu_backward.wgsl");
const EMBED: &str = include_str!("../../../../shaders/gpt_embed.wgsl");
const EMBED_BACK: &str = include_str!("../../../../shaders/gpt_embed_backward.wgsl");
const XENT: &str = include_str!("../../../../shaders/gpt_softmax_xent.wgsl");
const ADD: &str = include_str!("../../../../shaders/gpt_add.wgsl");
const ADD_INTO: &str = include_str!("../../../../shaders/gpt_add_into.wgsl");

fn no_grid(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

macro_rules! gpt_kernel {
    ($id:literal, $path:literal, $src:ident) => {
        KernelSpec {
            id: $id,
            source_path: $path,
            source: KernelSource::Built(|| format!("{}\n{COMMON}", $src)),
            entry_point: "main",
            family: Family::Gpt,
            constants: &[],
            workgroup_size: [64, 1, 1],
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
    gpt_kernel!("gpt-layernorm", "shaders/gpt_layernorm.wgsl", LN),
    gpt_kernel!(
        "gpt-layernorm-backward",
        "shaders/gpt_layernorm_backward.wgsl",
        LN_BACK
    ),
    gpt_kernel!(
        "gpt-layernorm-param-grad",
        "shaders/gpt_layernorm_param_grad.wgsl",
        LN_PARAMS
    ),
    gpt_kernel!("gpt-gelu", "shaders/gpt_gelu.wgsl", GELU),
    gpt_kernel!(
        "gpt-gelu-backward",
        "shaders/gpt_gelu_backward.wgsl",
        GELU_BACK
    ),
    gpt_kernel!("gpt-embed", "shaders/gpt_embed.wgsl", EMBED),
    gpt_kernel!(
        "gpt-embed-backward",
        "shaders/gpt_embed_backward.wgsl",
        EMBED_BACK
    ),
    gpt_kernel!("gpt-softmax-xent", "shaders/gpt_softmax_xent.wgsl", XENT),
    gpt_kernel!("gpt-add", "shaders/gpt_add.wgsl", ADD),
    gpt_kernel!("gpt-add-into", "shaders/gpt_add_into.wgsl", ADD_INTO),
];

/// The layer kernels' uniform structs (`shaders/gpt_common.wgsl`), word by word, for planners
/// that fill them by name (the engine's layers).
pub mod uniform {
    use crate::plan::UniformLayout;

    /// LayerNorm's three kernels.
    pub static LN: UniformLayout = UniformLayout {
        name: "Ln",
        words: &["rows", "c", "gamma", "beta", "eps", "_p0", "_p1", "_p2"],
    };
    /// The element-wise kernels (GELU, its gradient, the residual add).
    pub static LEN: UniformLayout = UniformLayout {
        name: "Len",
        words: &["len", "_p0", "_p1", "_p2"],
    };
    /// The embeddings' gather and scatter-add.
    pub static EMBED: UniformLayout = UniformLayout {
        name: "Embed",
        words: &["rows", "c", "t", "vocab", "wte", "wpe", "_p0", "_p1"],
    };
    /// The softmax cross-entropy head.
    pub static XENT: UniformLayout = UniformLayout {
        name: "Xent",
        words: &["rows", "vocab", "_p0", "_p1"],
    };
}

fn kernel(id: &str) -> Result<&'static KernelSpec, GpuError> {
    KERNELS
        .iter()
        .find(|k| k.id == id)
        .ok_or_else(|| GpuError::Shader(format!("no kernel {id}")))
}

/// Runs `kernel` once over `buffers` (bound in order, then the uniform) and returns the
/// read-back buffers' contents in order.
async fn run_one(
    gpu: &Gpu,
    kernel: &KernelSpec,
    buffers: Vec<(&'static str, Init<'_>, bool)>,
    uniform: Vec<u32>,
    groups: u32,
) -> Result<Vec<Vec<f32>>, GpuError> {
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    if groups > max {
        return Err(GpuError::Shader(format!(
            "{groups} workgroups exceed maxComputeWorkgroupsPerDimension ({max})"
        )));
    }
    let mut bindings: Vec<Binding> = buffers.iter().map(|b| Binding::whole(b.0)).collect();
    bindings.push(Binding::Uniform);
    let names: Vec<&'static str> = buffers.iter().filter(|b| b.2).map(|b| b.0).collect();
    let plan = Plan {
        buffers: buffers
            .into_iter()
            .map(|(name, init, read_back)| PlanBuffer {
                name,
                init,
                read_back,
            })
            .collect(),
        steps: vec![Step {
            kernel,
            dispatch: Dispatch {
                bindings,
                uniform,
                workgroups: [groups.max(1), 1, 1],
            },
            cost: 1.0,
            split: None,
        }],
    };
    let out = gpu
        .run_plan(&plan, &RunOptions::default(), &RunControl::default())
        .await?;
    names
        .iter()
        .map(|n| {
            out.bytes(n)
                .map(bytemuck::pod_collect_to_vec)
                .ok_or_else(|| GpuError::Readback(format!("{n} was not read back")))
        })
        .collect()
}

fn bytes(v: &[f32]) -> Init<'_> {
    Init::Bytes(bytemuck::cast_slice(v).into())
}

/// LayerNorm's uniform: rows, c, γ and β offsets in the parameter buffer, ε.
fn ln_uniform(rows: usize, c: usize, gamma: usize, beta: usize) -> Vec<u32> {
    vec![
        rows as u32,
        c as u32,
        gamma as u32,
        beta as u32,
        (gpt::ops::LN_EPS as f32).to_bits(),
        0,
        0,
        0,
    ]
}

/// LayerNorm forward of `rows` rows of width `c`; γ and β at `gamma`, `beta` in `params`:
/// (y, stats as mean and rstd per row).
pub async fn run_layernorm(
    gpu: &Gpu,
    x: &[f32],
    params: &[f32],
    (gamma, beta): (usize, usize),
    rows: usize,
    c: usize,
) -> Result<(Vec<f32>, Vec<f32>), GpuError> {
    let out = run_one(
        gpu,
        kernel("gpt-layernorm")?,
        vec![
            ("x", bytes(x), false),
            ("params", bytes(params), false),
            ("y", Init::Zeroed(4 * (rows * c) as u64), true),
            ("stats", Init::Zeroed(8 * rows as u64), true),
        ],
        ln_uniform(rows, c, gamma, beta),
        rows.div_ceil(64) as u32,
    )
    .await?;
    let mut it = out.into_iter();
    Ok((it.next().unwrap_or_default(), it.next().unwrap_or_default()))
}

/// LayerNorm's backward to its input, added to `dx`.
#[allow(clippy::too_many_arguments)]
pub async fn run_layernorm_backward(
    gpu: &Gpu,
    x: &[f32],
    params: &[f32],
    gamma: usize,
    stats: &[f32],
    dy: &[f32],
    dx: &[f32],
    (rows, c): (usize, usize),
) -> Result<Vec<f32>, GpuError> {
    let out = run_one(
        gpu,
        kernel("gpt-layernorm-backward")?,
        vec![
            ("x", bytes(x), false),
            ("params", bytes(params), false),
            ("stats", bytes(stats), false),
            ("dy", bytes(dy), false),
            ("dx", bytes(dx), true),
        ],
        ln_uniform(rows, c, gamma, 0),
        rows.div_ceil(64) as u32,
    )
    .await?;
    Ok(out.into_iter().next().unwrap_or_default())
}

/// LayerNorm's backward to γ and β, added to `grads` at `gamma` and `beta`.
#[allow(clippy::too_many_arguments)]
pub async fn run_layernorm_param_grad(
    gpu: &Gpu,
    x: &[f32],
    stats: &[f32],
    dy: &[f32],
    grads: &[f32],
    (gamma, beta): (usize, usize),
    (rows, c): (usize, usize),
) -> Result<Vec<f32>, GpuError> {
    let out = run_one(
        gpu,
        kernel("gpt-layernorm-param-grad")?,
        vec![
            ("x", bytes(x), false),
            ("stats", bytes(stats), false),
            ("dy", bytes(dy), false),
            ("grads", bytes(grads), true),
        ],
        ln_uniform(rows, c, gamma, beta),
        c.div_ceil(64) as u32,
    )
    .await?;
    Ok(out.into_iter().next().unwrap_or_default())
}

/// GELU forward (`dy` = None: y) or backward (dx = `out` + dy·GELU'(x)).
pub async fn run_gelu(
    gpu: &Gpu,
    x: &[f32],
    dy: Option<&[f32]>,
    out: &[f32],
) -> Result<Vec<f32>, GpuError> {
    let mut buffers = vec![("x", bytes(x), false)];
    let id = match dy {
        Some(d) => {
            buffers.push(("dy", bytes(d), false));
            "gpt-gelu-backward"
        }
        None => "gpt-gelu",
    };
    buffers.push(("out", bytes(out), true));
    let res = run_one(
        gpu,
        kernel(id)?,
        buffers,
        vec![x.len() as u32, 0, 0, 0],
        x.len().div_ceil(64) as u32,
    )
    .await?;
    Ok(res.into_iter().next().unwrap_or_default())
}

/// The embeddings' shape: `rows` rows of width `c`, row r at position r % `t`, `vocab`
/// tokens; the token table at `wte` and the position table at `wpe` of the parameter (or
/// gradient) buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbedShape {
    pub rows: usize,
    pub c: usize,
    pub t: usize,
    pub vocab: usize,
    pub wte: usize,
    pub wpe: usize,
}

impl EmbedShape {
    fn uniform(&self) -> Vec<u32> {
        vec![
            self.rows as u32,
            self.c as u32,
            self.t as u32,
            self.vocab as u32,
            self.wte as u32,
            self.wpe as u32,
            0,
            0,
        ]
    }

    /// Why the shape cannot run on `tokens` and a parameter buffer of `len` floats.
    fn check(&self, tokens: &[u32], len: usize) -> Result<(), GpuError> {
        let (c, t) = (self.c, self.t);
        if c == 0 || t == 0 || tokens.len() != self.rows {
            return Err(GpuError::WrongJob);
        }
        if let Some(bad) = tokens.iter().find(|&&k| k as usize >= self.vocab) {
            return Err(GpuError::Shader(format!(
                "token {bad} is outside the vocabulary of {}",
                self.vocab
            )));
        }
        if self.wte + self.vocab * c > len || self.wpe + t * c > len {
            return Err(GpuError::WrongJob);
        }
        Ok(())
    }
}

/// The embeddings forward: x = wte[token] + wpe[position], rows × c.
pub async fn run_embed(
    gpu: &Gpu,
    tokens: &[u32],
    params: &[f32],
    s: EmbedShape,
) -> Result<Vec<f32>, GpuError> {
    s.check(tokens, params.len())?;
    let out = run_one(
        gpu,
        kernel("gpt-embed")?,
        vec![
            (
                "tokens",
                Init::Bytes(bytemuck::cast_slice(tokens).into()),
                false,
            ),
            ("params", bytes(params), false),
            ("x", Init::Zeroed(4 * (s.rows * s.c) as u64), true),
        ],
        s.uniform(),
        (s.rows * s.c).div_ceil(64) as u32,
    )
    .await?;
    Ok(out.into_iter().next().unwrap_or_default())
}

/// The embeddings backward: dx scattered into `grads` (added to what is there) at the token
/// table's and the position table's offsets.
pub async fn run_embed_backward(
    gpu: &Gpu,
    tokens: &[u32],
    dx: &[f32],
    grads: &[f32],
    s: EmbedShape,
) -> Result<Vec<f32>, GpuError> {
    s.check(tokens, grads.len())?;
    if dx.len() != s.rows * s.c {
        return Err(GpuError::WrongJob);
    }
    let out = run_one(
        gpu,
        kernel("gpt-embed-backward")?,
        vec![
            (
                "tokens",
                Init::Bytes(bytemuck::cast_slice(tokens).into()),
                false,
            ),
            ("dx", bytes(dx), false),
            ("grads", bytes(grads), true),
        ],
        s.uniform(),
        ((s.vocab + s.t) * s.c).div_ceil(64) as u32,
    )
    .await?;
    Ok(out.into_iter().next().unwrap_or_default())
}

/// What the loss head returns: each row's −ln p[target] (0 on IGNORE rows) and the loss
/// gradient on the logits.
#[derive(Clone, Debug, PartialEq)]
pub struct XentOut {
    pub losses: Vec<f32>,
    pub dlogits: Vec<f32>,
}

impl XentOut {
    /// The loss: the rows' losses summed by ascending row, over the rows counted (the twin's
    /// mean; 0 when none is).
    pub fn mean(&self, targets: &[u32]) -> f64 {
        let counted = targets.iter().filter(|&&t| t != gpt::ops::IGNORE).count();
        let sum: f64 = self.losses.iter().map(|&l| l as f64).sum();
        if counted == 0 {
            0.0
        } else {
            sum / counted as f64
        }
    }
}

/// Softmax cross-entropy of `targets.len()` rows of `vocab` logits: loss and gradient.
pub async fn run_softmax_xent(
    gpu: &Gpu,
    logits: &[f32],
    targets: &[u32],
    vocab: usize,
) -> Result<XentOut, GpuError> {
    let rows = targets.len();
    if vocab == 0 || logits.len() != rows * vocab {
        return Err(GpuError::WrongJob);
    }
    if let Some(bad) = targets
        .iter()
        .find(|&&k| k != gpt::ops::IGNORE && k as usize >= vocab)
    {
        return Err(GpuError::Shader(format!(
            "target {bad} is outside the vocabulary of {vocab}"
        )));
    }
    let out = run_one(
        gpu,
        kernel("gpt-softmax-xent")?,
        vec![
            ("logits", bytes(logits), false),
            (
                "targets",
                Init::Bytes(bytemuck::cast_slice(targets).into()),
                false,
            ),
            ("losses", Init::Zeroed(4 * rows as u64), true),
            ("dlogits", Init::Zeroed(4 * logits.len() as u64), true),
        ],
        vec![rows as u32, vocab as u32, 0, 0],
        rows.div_ceil(64) as u32,
    )
    .await?;
    let mut it = out.into_iter();
    Ok(XentOut {
        losses: it.next().unwrap_or_default(),
        dlogits: it.next().unwrap_or_default(),
    })
}

const U: f64 = f32::EPSILON as f64 / 2.0;

/// WGSL's `log` inside [0.5, 2]: an absolute error below 2⁻²¹ (outside it, 3 ulps).
const LOG_ABS: f64 = 1.0 / 2_097_152.0;

/// The embeddings' bound per element of a sum of `terms` (the f64 values added, in any
/// order: the forward's two, or a gradient's initial value and its rows): recursive summation
/// of k terms errs by at most (k − 1)·u/(1 − (k − 1)·u)·Σ|term|, under 1.01·(k − 1)·u·Σ|term|
/// for the k < 10⁵ here.
pub fn embed_bound(terms: &[f64]) -> f64 {
    let k = terms.len().saturating_sub(1) as f64;
    1.01 * k * U * terms.iter().map(|v| v.abs()).sum::<f64>()
}

/// The loss head's bounds for one row of logits (f64 from the f32 inputs) with a counted
/// target `tg` out of `counted`: (the row's loss, each dlogit).
///
/// Each exp(x − m) errs relatively by u·|x − m| (the subtraction) plus WGSL's 3 + 2·|x − m|
/// ulps (2u each), so by ≤ (7 + 5·R)·u with R the row's range; z, a sum of v such terms,
/// by that plus (v − 1)·u. The loss ln z − (x_t − m) adds `log`'s own error (2⁻²¹ absolute
/// for z ≤ 2, else 3 ulps of ln z), the subtraction's u·|x_t − m| and a final rounding. Each
/// p = exp/z errs by both relative errors and the division's u, p − 1 and the product with
/// 1/N (itself rounded) add 3 roundings. Twice each, for the second-order terms left out.
pub fn xent_bounds(row: &[f64], tg: usize, counted: usize) -> (f64, Vec<f64>) {
    let v = row.len() as f64;
    let m = row.iter().copied().fold(f64::MIN, f64::max);
    let range = row.iter().map(|&x| m - x).fold(0.0, f64::max);
    let z: f64 = row.iter().map(|&x| (x - m).exp()).sum();
    let exp_rel = (7.0 + 5.0 * range) * U;
    let z_rel = exp_rel + (v - 1.0) * U;
    let lnz = z.ln();
    let loss = lnz - (row[tg] - m);
    let log_err = if z <= 2.0 { LOG_ABS } else { 6.0 * U * lnz };
    let loss_bound = 2.0 * (z_rel + log_err + U * (m - row[tg]) + U * loss.abs());
    let inv = 1.0 / counted.max(1) as f64;
    let dl = row
        .iter()
        .enumerate()
        .map(|(j, &x)| {
            let p = (x - m).exp() / z;
            let d = if j == tg { p - 1.0 } else { p };
            2.0 * inv * (p * (exp_rel + z_rel + U) + 3.0 * U * d.abs()) + 1e-30
        })
        .collect();
    (loss_bound, dl)
}

/// The allowance for one WGSL `tanh`, absolute: WGSL states no accuracy of its own for it,
/// and NVIDIA's hardware tanh has a largest error near 2⁻¹¹, so 2⁻¹⁰.
pub const TANH_ABS: f64 = 1.0 / 1024.0;

/// LayerNorm forward's bound per output element, from the f64 reference's row: mean and
/// variance are sums of c terms (c·u of Σ|x| and of Σ(x − mean)²), rstd adds a square root, a
/// division and ε (≤ (c/2 + 4)·u relative), then three roundings for y; twice that.
pub fn ln_bound(x_row: &[f64], gamma: f64, beta: f64, i: usize, mean: f64, rstd: f64) -> f64 {
    let c = x_row.len() as f64;
    let abs_mean = x_row.iter().map(|v| v.abs()).sum::<f64>() / c;
    let mean_err = c * U * abs_mean;
    let rstd_rel = (c / 2.0 + 4.0) * U + c * U;
    let d = (x_row[i] - mean).abs();
    2.0 * (gamma.abs() * rstd * (mean_err + d * (rstd_rel + 3.0 * U)) + beta.abs() * U) + 1e-30
}

/// GELU's bound per element: the tanh allowance times 0.5·|x| (its weight in y), or in dx
/// times |dy|·(0.5 + |x|·√(2/π)·(1 + 3·0.044715·x²)) (where tanh enters), and a few roundings.
pub fn gelu_bound(x: f64, dy: Option<f64>) -> f64 {
    let c = 0.797_884_560_802_865_4;
    match dy {
        None => 0.5 * x.abs() * (TANH_ABS + 8.0 * U) + 4.0 * U * x.abs(),
        Some(d) => {
            let weight = 0.5 + x.abs() * c * (1.0 + 3.0 * 0.044_715 * x * x);
            d.abs() * weight * (2.0 * TANH_ABS + 16.0 * U)
        }
    }
}
