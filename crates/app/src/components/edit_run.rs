//! The editor's Run for every family behind one call, [`run_target`]: the edited kernel and
//! then the original on the family's inputs, the output compared element by element with the
//! family's CPU reference (`page_models::edit_target` says how each family is compared and drawn).
//!
//! - matmul: `Gpu::run_with` on the URL's sizes, against `matmul::reference`;
//! - conv: `conv::run_conv_with` with the edited kernel replacing its step of the stage's
//!   plan, against the f64 conv reference;
//! - MLP: a training session whose edited kernel replaces the catalogue's, one step and one
//!   evaluation, against the CPU twin (`mlp::CpuTrainer`) after the same step;
//! - measuring kernels: `Gpu::run_with` on their probe, against their own reference and rule.

use std::rc::Rc;

use cpu_kernels::conv as cref;
use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::verify::Precision;
use gpu_runtime::conv::{run_conv_with, ConvError, ConvStage};
use gpu_runtime::training::{SessionConfig, TrainingSession};
use gpu_runtime::{
    measurements, Gpu, GpuError, Job, KernelSpec, RunControl, RunOptions, TimingMethod,
};
use mlp::net::batch_order;
use mlp::CpuTrainer;

use crate::session;
use page_models::edit_target::{
    compare_elements, conv_shape, edge_size, measure_size, mlp_spec, within, Differences, Layout,
    Target, MLP_REL_BOUND,
};
use page_models::kernel_edit::{differences, reference_rule};

/// Wrong elements listed by name.
pub const SHOWN: usize = 8;

/// The problem an edited kernel ran on, for the sentence beside its time.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    Matmul(MatmulSize),
    Conv {
        n: u32,
        c: u32,
        h: u32,
        w: u32,
        k: u32,
        r: u32,
        s: u32,
    },
    MlpStep {
        batch: usize,
    },
    Measure {
        elements: u32,
        threads: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct EditedRun {
    pub diff: Differences,
    pub layout: Layout,
    pub ms: f64,
    pub method: TimingMethod,
    pub original_ms: Option<f64>,
    pub problem: Problem,
    /// The loop-budget flag's words read back (empty when the run had no flag).
    pub flag: Vec<u32>,
    /// A matmul edit's second check, at [`edge_size`]; None for the other families and
    /// when the learner's size was already wrong.
    pub edge: Option<Edge>,
}

/// The second check of an edited matmul kernel, at a size that stops short of every tile
/// edge ([`edge_size`]): a kernel without its bounds check is right at 256³ and wrong there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Edge {
    /// Right at this size too.
    Passed(MatmulSize),
    /// Right at the learner's size, wrong at this one: the run's `diff` and `layout` are
    /// this size's (its `problem`, `ms` and `original_ms` stay the learner's).
    Failed(MatmulSize),
}

fn conv_err(e: ConvError) -> GpuError {
    match e {
        ConvError::Gpu(g) => g,
        other => GpuError::Dispatch(other.to_string()),
    }
}

/// Whether `target`'s runs can carry the loop budget's flag buffer (`flag` in
/// [`run_target`]): the one-step families. Conv and MLP runs have only the watchdog.
pub fn takes_loop_flag(target: Target) -> bool {
    matches!(target, Target::Matmul(_) | Target::Measure(_))
}

/// Runs `edited` (a copy of `target`'s kernel with the learner's source) and then the
/// original on the same inputs, and compares the edited one's output with the CPU.
/// `flag`: (binding, words) of the loop budget's flag buffer when `edited` was rewritten by
/// `code_editor::budget_loops` (only where [`takes_loop_flag`]); its words come back in
/// [`EditedRun::flag`].
pub async fn run_target(
    target: Target,
    edited: KernelSpec,
    size: Option<MatmulSize>,
    ctl: RunControl,
    software: bool,
    flag: Option<(u32, usize)>,
) -> Result<EditedRun, GpuError> {
    let (gpu, _) = session::gpu(software).await?;
    match target {
        Target::Matmul(original) => {
            let size = size.ok_or(GpuError::WrongJob)?;
            run_matmul(&gpu, original, &edited, size, &ctl, flag).await
        }
        Target::Conv(stage) => run_conv(&gpu, stage, &edited, &ctl).await,
        Target::Mlp(_) => run_mlp(gpu, &edited, &ctl).await,
        Target::Measure(original) => run_measure(&gpu, original, &edited, &ctl, flag).await,
    }
}

/// The edited kernel's run, with the loop flag when there is one.
async fn run_edited(
    gpu: &Gpu,
    edited: &KernelSpec,
    job: &Job<'_>,
    opts: &RunOptions,
    ctl: &RunControl,
    flag: Option<(u32, usize)>,
) -> Result<(gpu_runtime::RunOutput, Vec<u32>), GpuError> {
    match flag {
        Some(f) => gpu.run_with_loop_flag(edited, job, opts, ctl, f).await,
        None => Ok((gpu.run_with(edited, job, opts, ctl).await?, Vec::new())),
    }
}

async fn run_matmul(
    gpu: &Gpu,
    original: &KernelSpec,
    edited: &KernelSpec,
    size: MatmulSize,
    ctl: &RunControl,
    flag: Option<(u32, usize)>,
) -> Result<EditedRun, GpuError> {
    let opts = RunOptions::default();
    let (out, words, diff) = checked_matmul(gpu, edited, size, 1, ctl, flag).await?;
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    let original_ms = gpu
        .run_with(original, &job, &opts, ctl)
        .await
        .ok()
        .map(|o| o.timing.kernel_ms());
    let mut run = EditedRun {
        diff,
        layout: matrix(size),
        ms: out.timing.kernel_ms(),
        method: out.timing.method,
        original_ms,
        problem: Problem::Matmul(size),
        flag: words,
        edge: None,
    };
    // Right at the learner's size (and no loop stopped): the edge size too.
    if run.diff.wrong == 0 && run.flag.iter().all(|&w| w == 0) {
        let e = edge_size(size);
        let (_, words, diff) = checked_matmul(gpu, edited, e, 2, ctl, flag).await?;
        if words.iter().any(|&w| w != 0) {
            run.flag = words;
        }
        run.edge = Some(if diff.wrong == 0 {
            Edge::Passed(e)
        } else {
            run.diff = diff;
            run.layout = matrix(e);
            Edge::Failed(e)
        });
    }
    Ok(run)
}

fn matrix(size: MatmulSize) -> Layout {
    Layout::Matrix {
        rows: size.m,
        cols: size.n,
    }
}

/// The edited kernel at `size` on inputs of `seed`, its loop flag, and its differences from
/// the CPU reference.
async fn checked_matmul(
    gpu: &Gpu,
    edited: &KernelSpec,
    size: MatmulSize,
    seed: u64,
    ctl: &RunControl,
    flag: Option<(u32, usize)>,
) -> Result<(gpu_runtime::RunOutput, Vec<u32>, Differences), GpuError> {
    let (a, b) = size.inputs(seed);
    let job = Job::Matmul { size, a: &a, b: &b };
    let (out, words) = run_edited(gpu, edited, &job, &RunOptions::default(), ctl, flag).await?;
    let reference = matmul::reference(size, &a, &b);
    let diff = differences(size, &out.output, &reference, edited.precision, SHOWN);
    Ok((out, words, diff))
}

async fn run_conv(
    gpu: &Gpu,
    stage: ConvStage,
    edited: &KernelSpec,
    ctl: &RunControl,
) -> Result<EditedRun, GpuError> {
    let shape = conv_shape(stage);
    let (p, q) = shape
        .validate()
        .map_err(|e| GpuError::Dispatch(e.to_string()))?;
    let (x, f) = shape.inputs(1);
    let opts = RunOptions::default();
    let out = run_conv_with(gpu, stage, &[edited], &shape, &x, &f, &opts, ctl)
        .await
        .map_err(conv_err)?;
    let reference = cref::reference(&shape, &x, &f);
    let layout = Layout::Conv {
        n: shape.n,
        p,
        q,
        k: shape.k,
    };
    let diff = compare_elements(
        &layout,
        &out.output,
        &reference.value,
        SHOWN,
        reference_rule(&reference, Precision::F32),
    );
    let original_ms = run_conv_with(gpu, stage, &[], &shape, &x, &f, &opts, ctl)
        .await
        .ok()
        .map(|o| o.timing.kernel_ms());
    Ok(EditedRun {
        diff,
        layout,
        ms: out.timing.kernel_ms(),
        method: out.timing.method,
        original_ms,
        problem: Problem::Conv {
            n: shape.n,
            c: shape.c,
            h: shape.h,
            w: shape.w,
            k: shape.k,
            r: shape.r,
            s: shape.s,
        },
        flag: Vec::new(),
        edge: None,
    })
}

async fn run_measure(
    gpu: &Gpu,
    original: &KernelSpec,
    edited: &KernelSpec,
    ctl: &RunControl,
    flag: Option<(u32, usize)>,
) -> Result<EditedRun, GpuError> {
    let size = measure_size(original.id);
    let input = measurements::input(size.elements as usize);
    let job = Job::Measure {
        size,
        input: &input,
    };
    let opts = RunOptions::default();
    let (out, flag) = run_edited(gpu, edited, &job, &opts, ctl, flag).await?;
    let rule = measurements::verify(original.id, size, &input, &out.output).rel_bound;
    let want: Vec<f64> = measurements::reference(original.id, size, &input)
        .into_iter()
        .map(f64::from)
        .collect();
    let layout = Layout::List {
        len: want.len() as u32,
        cols: 64,
        name: "out",
    };
    let diff = compare_elements(&layout, &out.output, &want, SHOWN, within(rule));
    let original_ms = gpu
        .run_with(original, &job, &opts, ctl)
        .await
        .ok()
        .map(|o| o.timing.kernel_ms());
    Ok(EditedRun {
        diff,
        layout,
        ms: out.timing.kernel_ms(),
        method: out.timing.method,
        original_ms,
        problem: Problem::Measure {
            elements: size.elements,
            threads: size.threads,
        },
        flag,
        edge: None,
    })
}

/// Rows of the evaluation pass the MLP's logits are compared on.
const MLP_EVAL_ROWS: usize = 64;

/// One training step and one evaluation with `replacements`, timed by the wall clock from
/// the session's creation to the readback; returns (parameters, logits, ms).
async fn mlp_step(
    gpu: Rc<Gpu>,
    replacements: &[&KernelSpec],
    kernel_id: &str,
    ctl: &RunControl,
) -> Result<(Vec<f32>, Vec<f32>, f64), GpuError> {
    let spec = mlp_spec(kernel_id);
    let net = spec.net();
    let (train, _) = spec.data();
    let features = train.features(&spec.features);
    let rows = MLP_EVAL_ROWS.min(train.len());
    let eval = features[..rows * net.inputs()].to_vec();
    let params = net.init_params(spec.seed);
    let start = gpu_runtime::now_ms();
    let mut session = TrainingSession::new_with(
        gpu,
        SessionConfig {
            accum: 1,
            ..SessionConfig::from_spec(&net, &spec, &train, &params, &eval)
        },
        replacements,
    )
    .await?;
    session.step()?;
    session.request_eval()?;
    loop {
        gloo::timers::future::TimeoutFuture::new(4).await;
        if ctl.cancel.is_cancelled() {
            return Err(GpuError::Cancelled);
        }
        if session.device_lost() {
            return Err(GpuError::DeviceLost("lost during the training step".into()));
        }
        session.poll();
        if let Some(r) = session.poll_eval()? {
            return Ok((r.params, r.logits, gpu_runtime::now_ms() - start));
        }
    }
}

async fn run_mlp(
    gpu: Rc<Gpu>,
    edited: &KernelSpec,
    ctl: &RunControl,
) -> Result<EditedRun, GpuError> {
    let (params, logits, ms) = mlp_step(gpu.clone(), &[edited], edited.id, ctl).await?;
    // The twin: the same setup, one step, then the same evaluation rows.
    let spec = mlp_spec(edited.id);
    let net = spec.net();
    let (train, _) = spec.data();
    let features = train.features(&spec.features);
    let rows = MLP_EVAL_ROWS.min(train.len());
    let eval = features[..rows * net.inputs()].to_vec();
    let mut twin = CpuTrainer::new(
        net.clone(),
        spec.hyper(),
        net.init_params(spec.seed),
        spec.batch,
        features,
        train.label.clone(),
        batch_order(train.len(), spec.seed),
    );
    twin.step();
    let want_logits = net.logits(&twin.params, &eval, rows);
    let expected: Vec<f64> = twin
        .params
        .iter()
        .chain(&want_logits)
        .map(|&v| f64::from(v))
        .collect();
    let got: Vec<f32> = params.iter().chain(&logits).copied().collect();
    let layout = Layout::Mlp {
        params: twin.params.len() as u32,
        logits: want_logits.len() as u32,
        classes: net.classes() as u32,
        cols: 32,
    };
    let diff = compare_elements(&layout, &got, &expected, SHOWN, within(MLP_REL_BOUND));
    let original_ms = mlp_step(gpu, &[], edited.id, ctl)
        .await
        .ok()
        .map(|(_, _, ms)| ms);
    Ok(EditedRun {
        diff,
        layout,
        ms,
        method: TimingMethod::WallClock,
        original_ms,
        problem: Problem::MlpStep { batch: spec.batch },
        flag: Vec::new(),
        edge: None,
    })
}
