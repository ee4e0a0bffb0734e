//! The editor's Run for every family behind one call, [`run_target`]: the edited kernel and
//! then the original on the family's inputs, the output compared element by element with the
//! family's CPU reference (`page_models::edit_target` says how each family is compared and drawn).
//!
//! - matmul: `Gpu::run_with` on the URL's sizes, against `matmul::reference`;
//! - conv: `conv::run_conv_with` with the edited kernel replacing its step of the stage's
//!   plan, against the f64 conv reference;
//! - MLP: a training session whose edited kernel replaces the catalogue's, one step and one
//!   evaluation, against the CPU twin (`mlp::CpuTrainer`) after the same step;
//! - CNN: a CNN training session whose edited kernel replaces the catalogue's, a few steps in
//!   lockstep with the CPU twin, every buffer compared after each within the derived bound
//!   (`page_models::edit_cnn`);
//! - measuring kernels: `Gpu::run_with` on their probe, against their own reference and rule.
//!
//! Then both are timed the same way ([`compare`], `page_models::timing`): a warm-up each, then
//! at least five timed runs each, taking turns, on the same inputs and clock. Every family's
//! edited kernel carries a loop budget (its flag buffer bound where the rewrite declared it:
//! in the one-step plan, in the conv plan's step that runs it, in the training session's
//! dispatches of it), and the original is timed rewritten with the same budget (`original`
//! in [`run_target`]), so the counters cost both sides alike. A run whose loop was stopped is
//! not timed: its time would be the budget's, not the kernel's.

use std::future::Future;
use std::rc::Rc;

use cpu_kernels::conv as cref;
use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::verify::Precision;
use gpu_runtime::cnn_training::CnnSession;
use gpu_runtime::conv::{run_conv_with, run_conv_with_loop_flag, ConvError, ConvRun, ConvStage};
use gpu_runtime::training::TrainingSession;
use gpu_runtime::{
    measurements, Gpu, GpuError, Job, KernelSpec, LoopFlag, RunControl, RunOptions, RunOutput,
    TimingMethod,
};

use crate::session;
use page_models::edit_cnn::{CnnCheck, CnnRun};
use page_models::edit_target::{
    compare_elements, conv_shape, edge_size, measure_size, mlp_spec, within, Differences, Layout,
    MlpProbe, Target, MLP_REL_BOUND,
};
use page_models::kernel_edit::{differences, reference_rule};
use page_models::timing::{self, Side, Spread};

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
    /// CNN training steps in lockstep with the twin: the batch, the steps the check runs and
    /// the one it ended at (the first wrong one, or the last).
    CnnSteps {
        batch: usize,
        steps: usize,
        ended: usize,
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
    /// The edited kernel's timed runs; None when none gave a time (or a loop was stopped).
    pub time: Option<Spread>,
    pub method: TimingMethod,
    /// The original's, timed alternately with the edited kernel's; None when it could not
    /// be timed.
    pub original_time: Option<Spread>,
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
    /// this size's (its `problem` and times stay the learner's).
    Failed(MatmulSize),
}

fn conv_err(e: ConvError) -> GpuError {
    match e {
        ConvError::Gpu(g) => g,
        other => GpuError::Dispatch(other.to_string()),
    }
}

/// Told after each GPU run of an edited run has finished, with the timed runs done and
/// planned (both sides; 0 of 0 before the timing starts): the page moves its watchdog on, so
/// its limit holds for each run rather than the series, and shows the count.
pub type Tick = Rc<dyn Fn(u32, u32)>;

/// A kernel to time and, when its loops carry a budget, where its flag buffer goes.
pub struct Budgeted {
    pub kernel: KernelSpec,
    pub flag: Option<LoopFlag>,
}

/// Runs `edited` (a copy of `target`'s kernel with the learner's source, and its flag buffer
/// when `code_editor::budget_loops` rewrote it), compares its output with the CPU, and times
/// it against the original on the same inputs. `original`: the original rewritten with the
/// same budget when `edited` was (None there: it could not be, and is not timed). The edited
/// kernel's flag words come back in [`EditedRun::flag`].
pub async fn run_target(
    target: Target,
    edited: Budgeted,
    original: Option<Budgeted>,
    size: Option<MatmulSize>,
    ctl: RunControl,
    software: bool,
    tick: Tick,
) -> Result<EditedRun, GpuError> {
    let (gpu, _) = session::gpu(software).await?;
    let t = Timer {
        ctl: &ctl,
        software,
        tick: &*tick,
    };
    match target {
        Target::Matmul(_) => {
            let size = size.ok_or(GpuError::WrongJob)?;
            run_matmul(&gpu, &edited, original.as_ref(), size, &t).await
        }
        Target::Conv(stage) => run_conv(&gpu, stage, &edited, original.as_ref(), &t).await,
        Target::Mlp(_) => run_mlp(gpu, &edited, original.as_ref(), &t).await,
        Target::Cnn(_) => run_cnn(gpu, &edited, original.as_ref(), &t).await,
        Target::Measure(_) => run_measure(&gpu, &edited, original.as_ref(), &t).await,
    }
}

/// What every family's run needs for its timing.
struct Timer<'a> {
    ctl: &'a RunControl,
    software: bool,
    tick: &'a dyn Fn(u32, u32),
}

/// The timed comparison (`page_models::timing`): a warm-up run of each side, then
/// `timing::rounds` timed runs of each, in the order `timing::order` gives, each run its own
/// sample (ms). An edited run's error ends it (a cancel included); the original's only
/// stops the original's timing.
async fn compare<E, FE, O, FO>(
    edited: E,
    original: Option<O>,
    t: &Timer<'_>,
) -> Result<(Option<Spread>, Option<Spread>), GpuError>
where
    E: Fn() -> FE,
    FE: Future<Output = Result<f64, GpuError>>,
    O: Fn() -> FO,
    FO: Future<Output = Result<f64, GpuError>>,
{
    let start = gpu_runtime::now_ms();
    edited().await?;
    (t.tick)(0, 0);
    let mut original = match original {
        Some(o) => match o().await {
            Ok(_) => Some(o),
            Err(GpuError::Cancelled) => return Err(GpuError::Cancelled),
            Err(_) => None,
        },
        None => None,
    };
    let rounds = timing::rounds(t.software, gpu_runtime::now_ms() - start);
    let total = rounds * if original.is_some() { 2 } else { 1 };
    (t.tick)(0, total);
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for side in timing::order(round) {
            match side {
                Side::Edited => mine.push(edited().await?),
                Side::Original => {
                    let Some(o) = &original else { continue };
                    match o().await {
                        Ok(ms) => theirs.push(ms),
                        Err(GpuError::Cancelled) => return Err(GpuError::Cancelled),
                        Err(_) => original = None,
                    }
                }
            }
            if t.ctl.cancel.is_cancelled() {
                return Err(GpuError::Cancelled);
            }
            (t.tick)((mine.len() + theirs.len()) as u32, total);
        }
    }
    let theirs = original.and_then(|_| Spread::of(&theirs));
    Ok((Spread::of(&mine), theirs))
}

/// The edited kernel's run, with the loop flag when there is one.
async fn run_edited(
    gpu: &Gpu,
    edited: &KernelSpec,
    job: &Job<'_>,
    opts: &RunOptions,
    ctl: &RunControl,
    flag: Option<LoopFlag>,
) -> Result<(RunOutput, Vec<u32>), GpuError> {
    match flag {
        Some(f) => gpu.run_with_loop_flag(edited, job, opts, ctl, f).await,
        None => Ok((gpu.run_with(edited, job, opts, ctl).await?, Vec::new())),
    }
}

async fn run_matmul(
    gpu: &Gpu,
    edited: &Budgeted,
    original: Option<&Budgeted>,
    size: MatmulSize,
    t: &Timer<'_>,
) -> Result<EditedRun, GpuError> {
    let (ctl, flag) = (t.ctl, edited.flag);
    let (out, words, diff) = checked_matmul(gpu, &edited.kernel, size, 1, ctl, flag).await?;
    (t.tick)(0, 0);
    let mut run = EditedRun {
        diff,
        layout: matrix(size),
        time: None,
        method: out.timing.method,
        original_time: None,
        problem: Problem::Matmul(size),
        flag: words,
        edge: None,
    };
    // Right at the learner's size (and no loop stopped): the edge size too.
    if run.diff.wrong == 0 && !stopped(&run.flag) {
        let e = edge_size(size);
        let (_, words, diff) = checked_matmul(gpu, &edited.kernel, e, 2, ctl, flag).await?;
        (t.tick)(0, 0);
        if stopped(&words) {
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
    // A stopped loop's time is its budget's, not the kernel's: nothing to compare.
    if stopped(&run.flag) {
        return Ok(run);
    }
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    (run.time, run.original_time) = time_single(gpu, edited, original, &job, t).await?;
    Ok(run)
}

/// Whether a loop-flag buffer says a loop was stopped.
fn stopped(words: &[u32]) -> bool {
    words.iter().any(|&w| w != 0)
}

/// [`compare`] for the one-step families: each side one `run_with` of `job` (with its loop
/// flag when it has one), one repetition a sample.
async fn time_single(
    gpu: &Gpu,
    edited: &Budgeted,
    original: Option<&Budgeted>,
    job: &Job<'_>,
    t: &Timer<'_>,
) -> Result<(Option<Spread>, Option<Spread>), GpuError> {
    let opts = &RunOptions::default();
    let ctl = t.ctl;
    let theirs = original.map(|o| move || sample(gpu, o, job, opts, ctl));
    compare(move || sample(gpu, edited, job, opts, ctl), theirs, t).await
}

/// One run of `side`'s kernel on `job`: its time in ms.
async fn sample(
    gpu: &Gpu,
    side: &Budgeted,
    job: &Job<'_>,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<f64, GpuError> {
    run_edited(gpu, &side.kernel, job, opts, ctl, side.flag)
        .await
        .map(|(o, _)| o.timing.kernel_ms())
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
    flag: Option<LoopFlag>,
) -> Result<(RunOutput, Vec<u32>, Differences), GpuError> {
    let (a, b) = size.inputs(seed);
    let job = Job::Matmul { size, a: &a, b: &b };
    let (out, words) = run_edited(gpu, edited, &job, &RunOptions::default(), ctl, flag).await?;
    let reference = matmul::reference(size, &a, &b);
    let diff = differences(size, &out.output, &reference, edited.precision, SHOWN);
    Ok((out, words, diff))
}

/// One run of a conv stage's plan with `side`'s kernel in its step (and its flag bound
/// there when it has one), or the catalogue's plan for None.
async fn conv_once(
    gpu: &Gpu,
    run: &ConvRun<'_>,
    side: Option<&Budgeted>,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<(RunOutput, Vec<u32>), GpuError> {
    let (stage, shape, x, f) = (run.stage, run.shape, run.x, run.f);
    match side {
        Some(Budgeted {
            kernel,
            flag: Some(flag),
        }) => run_conv_with_loop_flag(gpu, run, kernel, *flag, opts, ctl).await,
        Some(b) => run_conv_with(gpu, stage, &[&b.kernel], shape, x, f, opts, ctl)
            .await
            .map(|o| (o, Vec::new())),
        None => run_conv_with(gpu, stage, &[], shape, x, f, opts, ctl)
            .await
            .map(|o| (o, Vec::new())),
    }
    .map_err(conv_err)
}

/// A timed sample of [`conv_once`] (ms).
async fn conv_ms(
    gpu: &Gpu,
    run: &ConvRun<'_>,
    side: &Budgeted,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<f64, GpuError> {
    conv_once(gpu, run, Some(side), opts, ctl)
        .await
        .map(|(o, _)| o.timing.kernel_ms())
}

async fn run_conv(
    gpu: &Gpu,
    stage: ConvStage,
    edited: &Budgeted,
    original: Option<&Budgeted>,
    t: &Timer<'_>,
) -> Result<EditedRun, GpuError> {
    let ctl = t.ctl;
    let shape = conv_shape(stage);
    let (p, q) = shape
        .validate()
        .map_err(|e| GpuError::Dispatch(e.to_string()))?;
    let (x, f) = shape.inputs(1);
    let opts = RunOptions::default();
    let run = ConvRun {
        stage,
        shape: &shape,
        x: &x,
        f: &f,
    };
    let (out, flag) = conv_once(gpu, &run, Some(edited), &opts, ctl).await?;
    (t.tick)(0, 0);
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
    let (time, original_time) = if stopped(&flag) {
        (None, None)
    } else {
        let (run, opts) = (&run, &opts);
        let one = move |side| conv_ms(gpu, run, side, opts, ctl);
        compare(move || one(edited), original.map(|o| move || one(o)), t).await?
    };
    Ok(EditedRun {
        diff,
        layout,
        time,
        method: out.timing.method,
        original_time,
        problem: Problem::Conv {
            n: shape.n,
            c: shape.c,
            h: shape.h,
            w: shape.w,
            k: shape.k,
            r: shape.r,
            s: shape.s,
        },
        flag,
        edge: None,
    })
}

async fn run_measure(
    gpu: &Gpu,
    edited: &Budgeted,
    original: Option<&Budgeted>,
    t: &Timer<'_>,
) -> Result<EditedRun, GpuError> {
    let id = edited.kernel.id;
    let size = measure_size(id);
    let input = measurements::input(size.elements as usize);
    let job = Job::Measure {
        size,
        input: &input,
    };
    let opts = RunOptions::default();
    let (out, flag) = run_edited(gpu, &edited.kernel, &job, &opts, t.ctl, edited.flag).await?;
    (t.tick)(0, 0);
    let rule = measurements::verify(id, size, &input, &out.output).rel_bound;
    let want: Vec<f64> = measurements::reference(id, size, &input)
        .into_iter()
        .map(f64::from)
        .collect();
    let layout = Layout::List {
        len: want.len() as u32,
        cols: 64,
        name: "out",
    };
    let diff = compare_elements(&layout, &out.output, &want, SHOWN, within(rule));
    let (time, original_time) = if stopped(&flag) {
        (None, None)
    } else {
        time_single(gpu, edited, original, &job, t).await?
    };
    Ok(EditedRun {
        diff,
        layout,
        time,
        method: out.timing.method,
        original_time,
        problem: Problem::Measure {
            elements: size.elements,
            threads: size.threads,
        },
        flag,
        edge: None,
    })
}

/// One training step and one evaluation with `side`'s kernel in place of the catalogue's
/// (its flag bound where it runs) or the catalogue's kernels for None, timed by the wall
/// clock from the session's creation to the readback; returns (parameters, logits, ms, the
/// flag's words).
async fn mlp_step(
    gpu: Rc<Gpu>,
    side: Option<&Budgeted>,
    kernel_id: &str,
    ctl: &RunControl,
) -> Result<(Vec<f32>, Vec<f32>, f64, Vec<u32>), GpuError> {
    let probe = MlpProbe::new(kernel_id);
    let start = gpu_runtime::now_ms();
    let replaced: Vec<&KernelSpec> = side.map(|b| &b.kernel).into_iter().collect();
    let flag = side.and_then(|b| b.flag);
    let mut session = TrainingSession::new_edited(gpu, probe.config(), &replaced, flag).await?;
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
            let ms = gpu_runtime::now_ms() - start;
            return Ok((r.params, r.logits, ms, r.loop_flag));
        }
    }
}

/// A timed sample of [`mlp_step`] (ms).
async fn mlp_ms(
    gpu: Rc<Gpu>,
    side: &Budgeted,
    id: &str,
    ctl: &RunControl,
) -> Result<f64, GpuError> {
    mlp_step(gpu, Some(side), id, ctl)
        .await
        .map(|(_, _, ms, _)| ms)
}

async fn run_mlp(
    gpu: Rc<Gpu>,
    edited: &Budgeted,
    original: Option<&Budgeted>,
    t: &Timer<'_>,
) -> Result<EditedRun, GpuError> {
    let ctl = t.ctl;
    let id = edited.kernel.id;
    let (params, logits, _, flag) = mlp_step(gpu.clone(), Some(edited), id, ctl).await?;
    (t.tick)(0, 0);
    // The twin: the same setup, one step, then the same evaluation rows.
    let (expected, layout) = MlpProbe::new(id).twin();
    let got: Vec<f32> = params.iter().chain(&logits).copied().collect();
    let diff = compare_elements(&layout, &got, &expected, SHOWN, within(MLP_REL_BOUND));
    let (time, original_time) = if stopped(&flag) {
        (None, None)
    } else {
        let gpu = &gpu;
        let one = move |side| mlp_ms(gpu.clone(), side, id, ctl);
        compare(move || one(edited), original.map(|o| move || one(o)), t).await?
    };
    Ok(EditedRun {
        diff,
        layout,
        time,
        method: TimingMethod::WallClock,
        original_time,
        problem: Problem::MlpStep {
            batch: mlp_spec(id).batch,
        },
        flag,
        edge: None,
    })
}

/// The CNN check of `side`'s kernel (`page_models::edit_cnn`): a session with it in place of
/// the catalogue's (its flag bound where it runs), the twin's state written before each step,
/// every buffer read back and compared after it, until a step is wrong, a loop was stopped or
/// the last step is done; with `every_step` (a timed sample) every step runs whatever it
/// found, so a kernel that is wrong early is not timed on less work than the original.
/// Returns what it found and the wall-clock time from the session's creation to the last
/// readback (ms).
async fn cnn_check(
    gpu: Rc<Gpu>,
    side: &Budgeted,
    ctl: &RunControl,
    every_step: bool,
) -> Result<(CnnRun, Layout, f64), GpuError> {
    let mut check = CnnCheck::new(side.kernel.id, side.flag.is_some()).ok_or(GpuError::WrongJob)?;
    let start = gpu_runtime::now_ms();
    let mut session =
        CnnSession::new_edited(gpu, check.config(), &[&side.kernel], side.flag).await?;
    loop {
        check.start_step(&mut session)?;
        if !session.request_read(&check.parts())? {
            return Err(GpuError::Readback("a readback is already pending".into()));
        }
        let r = loop {
            gloo::timers::future::TimeoutFuture::new(4).await;
            if ctl.cancel.is_cancelled() {
                return Err(GpuError::Cancelled);
            }
            if let Some(r) = session.poll_read()? {
                break r;
            }
        };
        match check.finish_step(&r, SHOWN) {
            Some(run) if !every_step || check.done() || stopped(&run.flag) => {
                return Ok((run, check.layout, gpu_runtime::now_ms() - start));
            }
            _ => {}
        }
    }
}

async fn run_cnn(
    gpu: Rc<Gpu>,
    edited: &Budgeted,
    original: Option<&Budgeted>,
    t: &Timer<'_>,
) -> Result<EditedRun, GpuError> {
    let ctl = t.ctl;
    let (run, layout, _) = cnn_check(gpu.clone(), edited, ctl, false).await?;
    (t.tick)(0, 0);
    let (time, original_time) = if stopped(&run.flag) {
        (None, None)
    } else {
        let gpu = &gpu;
        let one = move |side| async move {
            cnn_check(gpu.clone(), side, ctl, true)
                .await
                .map(|(_, _, ms)| ms)
        };
        compare(move || one(edited), original.map(|o| move || one(o)), t).await?
    };
    Ok(EditedRun {
        diff: run.diff,
        layout,
        time,
        method: TimingMethod::WallClock,
        original_time,
        problem: Problem::CnnSteps {
            batch: page_models::edit_target::CNN_BATCH,
            steps: run.steps,
            ended: run.step,
        },
        flag: run.flag,
        edge: None,
    })
}
