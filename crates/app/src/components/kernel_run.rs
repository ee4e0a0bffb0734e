//! The Run widget, for a stage of any family (matrix multiply, convolution): the family's
//! size fields from the URL, validated at the field (`page_models::run_family`); a run on the
//! visitor's GPU verified against the family's CPU reference; the time and how it was measured.

use yew::prelude::*;
use yew_router::prelude::*;

use std::cell::RefCell;
use std::rc::Rc;

use cpu_kernels::conv::ConvShapeError;
use gpu_runtime::conv::{self, ConvError};
use gpu_runtime::{
    run_matmul_verified_with, BufferLimits, GpuError, Progress, RunControl, RunOptions, SizeError,
    TimingMethod, VerifiedRun,
};

use super::run_lifecycle::{use_run, Run};
use super::{replace_query, Ctx};
use crate::probe::WebGpuStatus;
use crate::session;
use page_models::progress::{minutes_seconds, Left};
use page_models::run_family::{
    check_limits, FieldError, FieldSpec, LimitError, Problem, RunFamily, Stage,
};
use page_models::run_status::{rate_to_remember, Basis, Estimate, RunStatus, Shown};

/// The kernel this widget runs when no stage is given.
pub const DEFAULT_KERNEL: &str = "matmul-naive";
/// Fixed seed: the same sizes give the same data on every machine.
const SEED: u64 = 1;

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Idle,
    Running,
    /// The run, its problem, and whether it had to replace a lost device first.
    Done(Box<VerifiedRun>, Problem, bool),
    /// The stage refused the problem (a limit found only at run time).
    Refused(LimitError),
    Lost(String),
    Failed(GpuError),
    Cancelled,
}

/// What a run in progress is doing, as text and a fraction for a progress bar (the ladder's
/// Run all; the Run widget says more, see [`status_view`]).
pub fn progress_view(ctx: &Ctx, p: Option<Progress>) -> Html {
    match p {
        // The runtime's wait for the queue lasts until the run's own first piece is done.
        Some(Progress::WaitingForQueue) => html! {
            <p class="status checking" data-progress="waiting">{ ctx.t("run.starting") }</p>
        },
        Some(Progress::Running { done, total }) if total > 0.0 => {
            let pct = (done / total * 100.0).clamp(0.0, 100.0).floor();
            html! {
                <p class="status checking" data-progress={pct.to_string()}>
                    <progress max="100" value={pct.to_string()}></progress>
                    { " " }{ ctx.tf("run.progress", &[("pct", &pct.to_string())]) }
                </p>
            }
        }
        _ => html! { <p class="status checking">{ ctx.t("run.running") }</p> },
    }
}

/// A time to come, as "{h} h {min} min", "{min} min {s} s" or "{s} s" (rounded up: never
/// "0 s" for work left).
fn time_text(ctx: &Ctx, ms: f64) -> String {
    match minutes_seconds(ms) {
        (0, s) => ctx.tf("run.time_s", &[("s", &s.max(1).to_string())]),
        (min, s) if min < 60 => ctx.tf(
            "run.time_min",
            &[("min", &min.to_string()), ("s", &s.to_string())],
        ),
        (min, _) => ctx.tf(
            "run.time_h",
            &[
                ("h", &(min / 60).to_string()),
                ("min", &(min % 60).to_string()),
            ],
        ),
    }
}

/// What the Run widget's run is doing: whose GPU work it waits for, its own pieces done and
/// time left, or, after Cancel, what is still draining.
fn status_view(ctx: &Ctx, shown: Shown) -> Html {
    let id = shown.id();
    match shown {
        Shown::Preparing => html! {
            <p class="status checking" data-progress={id}>{ ctx.t("run.running") }</p>
        },
        Shown::WaitingForEarlierWork => html! {
            <p class="status checking" data-progress={id}>{ ctx.t("run.waiting_queue") }</p>
        },
        Shown::FirstPiece => html! {
            <p class="status checking" data-progress={id}>{ ctx.t("run.first_piece") }</p>
        },
        Shown::Running { pct, pieces, left } => {
            let left = match left {
                Left::Estimating => ctx.t("run.left.estimating").to_string(),
                Left::Finishing => ctx.t("run.left.finishing").to_string(),
                Left::Ms(ms) => ctx.tf("run.left", &[("time", &time_text(ctx, ms))]),
            };
            html! {
                <p class="status checking" data-progress={id} data-pieces={pieces.to_string()}>
                    <progress max="100" value={pct.to_string()}></progress>
                    { " " }{ ctx.tf("run.own_progress", &[("pct", &pct.to_string()), ("pieces", &pieces.to_string()), ("left", &left)]) }
                </p>
            }
        }
        Shown::Cancelling { piece_ms } => html! {
            <p class="status checking cancelling" role="status" data-progress={id}>
                { match piece_ms {
                    Some(ms) => ctx.tf("run.cancelling", &[("time", &time_text(ctx, ms))]),
                    None => ctx.t("run.cancelling_first").to_string(),
                } }
            </p>
        },
    }
}

/// The warning before a run that will take long on this adapter, with its estimate and the
/// rate the estimate assumes.
fn long_run_warning(ctx: &Ctx, e: Option<Estimate>) -> Html {
    let Some(e) = e.filter(Estimate::is_long) else {
        return html! {};
    };
    let key = match e.basis {
        Basis::Measured => "run.long.measured",
        Basis::AssumedSoftware => "run.long.software",
        Basis::AssumedHardware => "run.long.hardware",
    };
    let text = ctx.tf(
        key,
        &[
            ("fast", &time_text(ctx, e.fast_ms)),
            ("slow", &time_text(ctx, e.slow_ms)),
            ("rate_slow", &numbers::rate(e.gflops.0)),
            ("rate_fast", &numbers::rate(e.gflops.1)),
        ],
    );
    html! {
        <p class="message warning long-run" role="note" data-long-run="true"
            data-fast-ms={format!("{:.0}", e.fast_ms)} data-slow-ms={format!("{:.0}", e.slow_ms)}>{ text }</p>
    }
}

fn size_message(ctx: &Ctx, e: &SizeError) -> String {
    match e {
        SizeError::Empty => ctx.t("size.empty").into(),
        SizeError::NotAnInteger => ctx.t("size.not_integer").into(),
        SizeError::OutOfRange { min, max } => ctx.tf(
            "size.out_of_range",
            &[
                ("min", &min.to_string()),
                ("max", &numbers::count(*max as u64)),
            ],
        ),
        SizeError::ExceedsLimit {
            limit,
            limit_bytes,
            needed_bytes,
            largest_square,
        } => ctx.tf(
            "run.too_large",
            &[
                ("needed", &numbers::bytes(*needed_bytes)),
                ("limit", limit),
                ("have", &numbers::bytes(*limit_bytes)),
                ("largest", &largest_square.to_string()),
            ],
        ),
    }
}

#[derive(Properties, PartialEq)]
pub struct KernelRunProps {
    /// The family whose stage this is (its fields, reference and run).
    #[prop_or_default]
    pub family: RunFamily,
    /// Which stage of the family's ladder to run (its first when unknown).
    #[prop_or(AttrValue::Static(DEFAULT_KERNEL))]
    pub stage_id: AttrValue,
    /// Leave out the stage's title and summary (the ladder shows them itself).
    #[prop_or_default]
    pub compact: bool,
}

/// The M, N, K sizes in the URL, parsed as the widget does (for the editor's runs).
#[cfg(feature = "editor-pages")]
pub fn sizes_from_query(
    query: &page_models::query::Query,
) -> Option<cpu_kernels::matmul::MatmulSize> {
    match RunFamily::Matmul.problem_from_query(query) {
        Some(Problem::Matmul(s)) => Some(s),
        _ => None,
    }
}

/// Why a kernel cannot run in this browser, as text for the visitor; None if it can.
pub fn unavailable_reason(ctx: &Ctx, kernel: &gpu_runtime::KernelSpec) -> Option<String> {
    let adapter = match &ctx.webgpu {
        WebGpuStatus::Available(a) => a,
        WebGpuStatus::Checking => return None,
        WebGpuStatus::Unavailable(_) => return Some(ctx.t("ladder.unavailable.no_webgpu").into()),
    };
    let has = |name: &str| adapter.features.iter().any(|(f, yes)| *f == name && *yes);
    // wgpu's cooperative matrices are not a WebGPU feature: no browser adapter lists them.
    // Chrome's own matrix units (another WGSL syntax) may be offered; say which.
    if kernel
        .required_features
        .contains(gpu_runtime::wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
    {
        let why = ctx.t("ladder.unavailable.tensor_cores");
        let offer = match &adapter.subgroup_matrix {
            None => ctx.tf(
                "ladder.unavailable.tensor_cores_absent",
                &[("feature", crate::probe::SUBGROUP_MATRIX)],
            ),
            Some(configs) => ctx.tf(
                "ladder.unavailable.tensor_cores_offered",
                &[
                    ("feature", crate::probe::SUBGROUP_MATRIX),
                    (
                        "tiles",
                        &configs
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                ],
            ),
        };
        return Some(format!("{why} {offer}"));
    }
    // An adapter's feature is one the page's device asks for (subgroups too, through
    // gpu_runtime's web_subgroups), so the adapter's list decides.
    kernel
        .feature_names()
        .into_iter()
        .find(|name| !has(name))
        .map(|name| ctx.tf("ladder.unavailable.missing", &[("feature", name)]))
}

/// Why a stage cannot run here (any of its kernels), None if it can.
pub fn stage_unavailable(ctx: &Ctx, stage: &Stage) -> Option<String> {
    stage
        .kernels()
        .into_iter()
        .find_map(|k| unavailable_reason(ctx, k))
}

/// The adapter's buffer limits (unknown ones as unlimited: the device then says no).
pub fn adapter_limits(ctx: &Ctx) -> Option<BufferLimits> {
    let WebGpuStatus::Available(a) = &ctx.webgpu else {
        return None;
    };
    let limit = |name: &str| {
        a.limits
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v)
            .map(|v| v as u64)
            .unwrap_or(u64::MAX)
    };
    Some(BufferLimits {
        max_storage_buffer_binding_size: limit("maxStorageBufferBindingSize"),
        max_buffer_size: limit("maxBufferSize"),
    })
}

/// Why a run failed, in one type for both families.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    Gpu(GpuError),
    Conv(ConvError),
}

impl From<GpuError> for RunError {
    fn from(e: GpuError) -> Self {
        RunError::Gpu(e)
    }
}

impl From<ConvError> for RunError {
    fn from(e: ConvError) -> Self {
        match e {
            ConvError::Gpu(g) => RunError::Gpu(g),
            other => RunError::Conv(other),
        }
    }
}

/// Runs a stage on the family's seeded data, verified against its CPU reference.
pub async fn run_stage_verified(
    gpu: &gpu_runtime::Gpu,
    stage: &Stage,
    problem: &Problem,
    seed: u64,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<VerifiedRun, RunError> {
    match (stage, problem) {
        (Stage::Matmul(k), Problem::Matmul(s)) => {
            Ok(run_matmul_verified_with(gpu, k, *s, seed, opts, ctl).await?)
        }
        (Stage::Conv(st), Problem::Conv(s)) => {
            Ok(conv::run_conv_verified_with(gpu, *st, s, seed, opts, ctl).await?)
        }
        _ => Err(RunError::Gpu(GpuError::WrongJob)),
    }
}

/// A field's error as text.
pub fn field_message(ctx: &Ctx, e: &FieldError) -> String {
    match e {
        FieldError::Size(s) => size_message(ctx, s),
        FieldError::Shape(s) => shape_message(ctx, s),
    }
}

/// A named conv shape error as text.
pub fn shape_message(ctx: &Ctx, e: &ConvShapeError) -> String {
    match e {
        ConvShapeError::ZeroSize(name) | ConvShapeError::ZeroStep(name) => {
            ctx.tf("convrun.error.zero", &[("name", name)])
        }
        ConvShapeError::FilterLargerThanInput {
            axis,
            extent,
            padded,
        } => ctx.tf(
            "convrun.error.filter_larger",
            &[
                ("axis", axis),
                ("extent", &extent.to_string()),
                ("padded", &padded.to_string()),
            ],
        ),
        ConvShapeError::TooLarge => ctx.t("convrun.error.too_large").into(),
    }
}

/// Why a valid problem cannot run on this stage or device, as text.
pub fn limit_message(ctx: &Ctx, e: &LimitError) -> String {
    match e {
        LimitError::Matmul(s) => size_message(ctx, s),
        LimitError::Conv(c) => conv_message(ctx, c),
    }
}

fn conv_message(ctx: &Ctx, e: &ConvError) -> String {
    match e {
        ConvError::Shape(s) => shape_message(ctx, s),
        ConvError::NotPointwise => ctx.t("convrun.error.not_pointwise").into(),
        ConvError::PatchTooLarge { floats, capacity } => ctx.tf(
            "convrun.error.patch",
            &[
                ("floats", &numbers::count(*floats)),
                ("capacity", &numbers::count(*capacity as u64)),
            ],
        ),
        ConvError::BufferTooLarge {
            buffer,
            bytes,
            limit,
            limit_bytes,
        } => ctx.tf(
            "convrun.error.buffer",
            &[
                ("buffer", buffer),
                ("needed", &numbers::bytes(*bytes)),
                ("limit", limit),
                ("have", &numbers::bytes(*limit_bytes)),
            ],
        ),
        ConvError::TooManyWorkgroups { groups, limit } => ctx.tf(
            "convrun.error.groups",
            &[
                ("groups", &numbers::count(*groups as u64)),
                ("limit", &numbers::count(*limit as u64)),
            ],
        ),
        ConvError::WrongInputLength | ConvError::Gpu(_) => {
            ctx.tf("run.error", &[("error", &e.to_string())])
        }
    }
}

/// The shape line under the fields.
fn shape_line(ctx: &Ctx, p: &Problem) -> String {
    match p {
        Problem::Matmul(s) => ctx.tf(
            "run.shape",
            &[
                ("m", &s.m.to_string()),
                ("n", &s.n.to_string()),
                ("k", &s.k.to_string()),
            ],
        ),
        Problem::Conv(s) => {
            let (p, q) = s.out_hw();
            ctx.tf(
                "convrun.shape",
                &[
                    ("n", &s.n.to_string()),
                    ("h", &s.h.to_string()),
                    ("w", &s.w.to_string()),
                    ("c", &s.c.to_string()),
                    ("k", &s.k.to_string()),
                    ("r", &s.r.to_string()),
                    ("s", &s.s.to_string()),
                    ("p", &p.to_string()),
                    ("q", &q.to_string()),
                    ("red", &numbers::count(s.reduction_len() as u64)),
                ],
            )
        }
    }
}

/// The Run widget for a stage of any family: sizes from the URL, validated at the field; a
/// run on the visitor's GPU verified against the CPU; the time and how it was measured.
#[function_component]
pub fn KernelRun(props: &KernelRunProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let family = props.family;
    let url = ctx.as_ref().map(|c| c.query.clone()).unwrap_or_default();
    let fields = use_state(|| family.field_values(&url));
    let outcome = use_state(|| Outcome::Idle);
    // A link followed in the same tab changes the query, not this component: take its sizes.
    {
        let fields = fields.clone();
        let values = family.field_values(&url);
        use_effect_with(values, move |values| {
            if *fields != *values {
                fields.set(values.clone());
            }
        });
    }
    // Finished runs, exposed as data-runs so tests (and screen readers via aria-live) can
    // tell a new result from the previous one.
    let finished = use_state(|| 0u32);
    // The run's status: written by its progress reports and by Cancel, read when drawn.
    let status = use_mut_ref(RunStatus::default);
    let redraw = use_force_update();
    // Its lifecycle says synchronously that a run is in progress: a second submit in the same
    // task (a double click, Enter pressed twice) comes before the re-render that disables the
    // button. Its last settings are the stage and sizes the outcome belongs to: the outcome is
    // shown only while they are on screen.
    let runs = use_run::<(AttrValue, Problem)>(|| {});
    let Some(ctx) = ctx else {
        return html! {};
    };
    let Some(stage) = family
        .stage(&props.stage_id)
        .or_else(|| family.stages().first().copied())
        .map(|(_, s)| s)
    else {
        return html! {};
    };
    let stage_id = AttrValue::from(stage.id());
    let unavailable = stage_unavailable(&ctx, &stage);

    // The same component may be handed another family (the ladder's family tabs, one embed
    // replacing another): until the effect above has caught up, its fields are the URL's.
    let current: Vec<String> = if fields.len() == family.fields().len() {
        (*fields).clone()
    } else {
        family.field_values(&url)
    };
    let parsed = family.parse(&current);
    let problem = parsed.problem;
    let adapter = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.clone()),
        _ => None,
    };
    // Checked against the adapter's limits and the stage's constraints before any GPU call.
    let limit_error = match (&problem, adapter_limits(&ctx)) {
        (Some(p), Some(l)) => check_limits(&stage, p, &l),
        _ => None,
    };
    let running = *outcome == Outcome::Running;
    let software = adapter.as_ref().is_some_and(|a| a.is_software);
    let estimate = problem
        .filter(|_| adapter.is_some())
        .map(|p| Estimate::new(p.flops(), software, session::measured_rate(stage.id())));
    let can_run = problem.is_some()
        && adapter.is_some()
        && limit_error.is_none()
        && unavailable.is_none()
        && !running;

    let run = {
        let (outcome, finished, status, redraw, runs) = (
            outcome.clone(),
            finished.clone(),
            status.clone(),
            redraw.clone(),
            runs.clone(),
        );
        let stage_id = stage_id.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let (Some(problem), true) = (problem, can_run) else {
                return;
            };
            if runs.is_running() {
                return;
            }
            outcome.set(Outcome::Running);
            *status.borrow_mut() = RunStatus::default();
            let run = runs.start((stage_id.clone(), problem));
            let task = RunTask {
                stage,
                problem,
                software,
                outcome: outcome.clone(),
                finished: finished.clone(),
                status: status.clone(),
                redraw: redraw.clone(),
            };
            wasm_bindgen_futures::spawn_local(task.run(run));
        })
    };

    let field = |index: usize, spec: &FieldSpec| {
        let error = parsed.fields[index]
            .as_ref()
            .map(|e| field_message(&ctx, e));
        let oninput = on_field(&ctx, &navigator, family, &fields, index);
        size_field(&ctx, spec, &current[index], error, oninput)
    };

    // An outcome for another stage or other sizes is not shown (it stays, should they return).
    let current = problem.map(|p| (stage_id.clone(), p));
    let shown = if running || runs.last_settings() == current {
        &*outcome
    } else {
        &Outcome::Idle
    };
    let shape = problem.map(|p| shape_line(&ctx, &p));
    let kernel_paths = stage
        .kernels()
        .iter()
        .map(|k| k.source_path)
        .collect::<Vec<_>>()
        .join(" + ");
    html! {
        <section class="panel run-widget" aria-labelledby="run-heading" data-family={family.id()}>
            <h2 id="run-heading">{ ctx.t("run.heading") }</h2>
            <super::EmbedButton widget={if family == RunFamily::Conv { stage_id.to_string() } else { "matmul".to_string() }} extra={if family == RunFamily::Conv { Vec::new() } else { vec![("stage", stage_id.to_string())] }} />
            if !props.compact {
                <h3>{ ctx.t(&stage.title_key()) }</h3>
                <p class="summary">{ ctx.t(&stage.summary_key()) }</p>
                <p class="source"><code>{ kernel_paths }</code></p>
            }
            <form class={classes!("sizes", (family == RunFamily::Conv).then_some("conv-sizes"))} onsubmit={run} novalidate=true>
                { for family.fields().iter().enumerate().map(|(i, f)| field(i, f)) }
                if let Some(e) = &parsed.shape_error {
                    <p class="message error shape-error" role="alert" data-shape-error="true">{ shape_message(&ctx, e) }</p>
                }
                if let Some(e) = &limit_error {
                    <p class="message error limit-error" role="alert">{ limit_message(&ctx, e) }</p>
                }
                if let Some(s) = shape {
                    <p class="shape">{ s }</p>
                }
                if !running {
                    { long_run_warning(&ctx, estimate) }
                }
                <div class="buttons">
                    <button type="submit" class="button primary" id="run-button" disabled={!can_run}>
                        { ctx.t(if running { "run.running" } else { "run.button" }) }
                    </button>
                    <button type="button" class="button" id="run-cancel" disabled={!running}
                        onclick={
                            // The run ends itself, as Cancelled, at its next submission; until
                            // then the pieces already sent drain, and the status says so.
                            let (runs, status, redraw) = (runs.clone(), status.clone(), redraw.clone());
                            Callback::from(move |_| {
                                runs.token().cancel();
                                status.borrow_mut().cancel();
                                redraw.force_update();
                            })
                        }>
                        { ctx.t("run.cancel") }
                    </button>
                </div>
                if adapter.is_none() && !matches!(ctx.webgpu, WebGpuStatus::Checking) {
                    <p class="message">{ ctx.t("run.disabled_no_gpu") }</p>
                } else if let Some(reason) = &unavailable {
                    <p class="message unavailable" data-unavailable="true">{ reason.clone() }</p>
                }
            </form>
            <div class="result" aria-live="polite" data-runs={finished.to_string()}
                data-started={runs.started().to_string()}>
                if running {
                    { status_view(&ctx, status.borrow().shown()) }
                } else {
                    { render_outcome(&ctx, shown, adapter.is_some_and(|a| a.is_software)) }
                }
            </div>
        </section>
    }
}

/// One run of the widget, for its task: what it runs and where its outcome goes.
struct RunTask {
    stage: Stage,
    problem: Problem,
    software: bool,
    outcome: UseStateHandle<Outcome>,
    finished: UseStateHandle<u32>,
    status: Rc<RefCell<RunStatus>>,
    redraw: UseForceUpdateHandle,
}

impl RunTask {
    async fn run(self, run: Run<(AttrValue, Problem)>) {
        let RunTask {
            stage,
            problem,
            software,
            outcome,
            finished,
            status,
            redraw,
        } = self;
        let progress = {
            let (status, redraw) = (status.clone(), redraw.clone());
            Rc::new(move |p| {
                status.borrow_mut().report(p, gpu_runtime::now_ms());
                redraw.force_update();
            })
        };
        let ctl = run.control(Some(progress));
        let result = async {
            let (gpu, recovered) = session::gpu(software).await?;
            // Earlier work (a cancelled run's last piece, another widget's) drains first, so
            // that everything the status says after it is this run's own.
            // Shown only if the wait lasts (an empty queue drains at once, and a flash of
            // "waiting for earlier work" would say there was some).
            // Only where this device has work of its own still queued: a slow answer from
            // the GPU process with nothing queued is no earlier work (CI, under load, said
            // "waiting for work sent before this run" on an empty queue).
            if !gpu.idle() {
                status.borrow_mut().waiting_for_earlier_work();
                let later = redraw.clone();
                gloo::timers::callback::Timeout::new(300, move || later.force_update()).forget();
            }
            gpu.drain().await?;
            status.borrow_mut().earlier_work_done(gpu_runtime::now_ms());
            redraw.force_update();
            run_stage_verified(&gpu, &stage, &problem, SEED, &RunOptions::default(), &ctl)
                .await
                .map(|v| (v, recovered))
        }
        .await;
        page_models::embed::report(match &result {
            Ok((v, _)) => Ok(page_models::embed::stage_report(stage.id(), v, &problem)),
            Err(RunError::Gpu(e)) => Err(e.to_string()),
            Err(RunError::Conv(e)) => Err(e.to_string()),
        });
        if let Ok((v, _)) = &result {
            if let Some(g) = rate_to_remember(problem.flops(), v.timing.kernel_ms()) {
                session::remember_rate(stage.id(), g);
            }
        }
        outcome.set(match result {
            Ok((v, recovered)) => Outcome::Done(Box::new(v), problem, recovered),
            Err(RunError::Gpu(GpuError::Cancelled)) => Outcome::Cancelled,
            Err(RunError::Gpu(GpuError::DeviceLost(e))) => {
                session::forget();
                Outcome::Lost(e)
            }
            Err(RunError::Gpu(e)) => Outcome::Failed(e),
            Err(RunError::Conv(e)) => Outcome::Refused(LimitError::Conv(e)),
        });
        finished.set(*finished + 1);
        run.finish();
    }
}

/// A size field's input writes every field of the family into the URL.
fn on_field(
    ctx: &Ctx,
    navigator: &Option<Navigator>,
    family: RunFamily,
    fields: &UseStateHandle<Vec<String>>,
    index: usize,
) -> Callback<InputEvent> {
    let keys: Vec<&'static str> = family.fields().iter().map(|f| f.key).collect();
    let (fields, navigator, ctx) = (fields.clone(), navigator.clone(), ctx.clone());
    Callback::from(move |e: InputEvent| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        let mut next = (*fields).clone();
        next.resize(keys.len(), String::new());
        next[index] = input.value();
        if let Some(nav) = &navigator {
            let mut q = ctx.query.clone();
            for (i, k) in keys.iter().enumerate() {
                q.set(k, &next[i]);
            }
            replace_query(nav, &ctx.route, &q);
        }
        fields.set(next);
    })
}

/// One size field with its error under it.
fn size_field(
    ctx: &Ctx,
    spec: &FieldSpec,
    value: &str,
    error: Option<String>,
    oninput: Callback<InputEvent>,
) -> Html {
    let key = spec.key;
    let id = format!("dim-{key}");
    let err_id = format!("dim-{key}-error");
    html! {
        <div class={classes!("field", error.is_some().then_some("invalid"))}>
            <label for={id.clone()}>{ ctx.t(spec.label_key) }</label>
            <input id={id} name={key} type="text" inputmode="numeric" autocomplete="off"
                value={value.to_string()} {oninput}
                aria-invalid={error.is_some().to_string()}
                aria-describedby={err_id.clone()} />
            <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
        </div>
    }
}

fn render_outcome(ctx: &Ctx, outcome: &Outcome, software: bool) -> Html {
    match outcome {
        Outcome::Idle => html! {},
        Outcome::Running => html! { <p class="status checking">{ ctx.t("run.running") }</p> },
        Outcome::Cancelled => html! {
            <p class="message" role="status" data-cancelled="true">{ ctx.t("run.cancelled") }</p>
        },
        Outcome::Lost(e) => html! {
            <p class="message error" role="alert" data-lost="true">{ ctx.tf("run.lost", &[("error", e)]) }</p>
        },
        Outcome::Failed(GpuError::Size(e)) => html! {
            <p class="message error" role="alert">{ size_message(ctx, e) }</p>
        },
        Outcome::Failed(GpuError::OutOfMemory(_)) => html! {
            <p class="message error" role="alert" data-oom="true">{ ctx.t("run.out_of_memory") }</p>
        },
        Outcome::Failed(e) => html! {
            <p class="message error" role="alert">{ ctx.tf("run.error", &[("error", &e.to_string())]) }</p>
        },
        Outcome::Refused(e) => html! {
            <p class="message error" role="alert">{ limit_message(ctx, e) }</p>
        },
        Outcome::Done(v, problem, recovered) => {
            let err = numbers::sci(v.verdict.max_rel_error);
            let bound = numbers::sci(v.verdict.rel_bound);
            let verdict = if v.verdict.ok {
                html! {
                    <p class="verdict ok" data-verified="true">
                        { ctx.tf("run.verified", &[("err", &err), ("bound", &bound)]) }
                    </p>
                }
            } else {
                let (index, got, want) = v.verdict.first_failure.unwrap_or((0, f32::NAN, f64::NAN));
                html! {
                    <p class="verdict bad" data-verified="false" role="alert">
                        { ctx.tf("run.failed", &[
                            ("index", &element_text(problem, index)),
                            ("got", &got.to_string()),
                            ("want", &format!("{want:.6}")),
                            ("err", &err),
                            ("bound", &bound),
                        ]) }
                    </p>
                }
            };
            let checked = if v.checked == v.total {
                ctx.tf(
                    "run.checked_all",
                    &[("count", &numbers::count(v.total as u64))],
                )
            } else {
                ctx.tf(
                    "run.checked_some",
                    &[
                        ("checked", &numbers::count(v.checked as u64)),
                        ("total", &numbers::count(v.total as u64)),
                    ],
                )
            };
            let ms = numbers::ms(v.timing.kernel_ms());
            let time = match v.timing.method {
                TimingMethod::Timestamps => ctx.tf("run.time.timestamps", &[("ms", &ms)]),
                TimingMethod::WallClock => ctx.tf("run.time.wall", &[("ms", &ms)]),
            };
            html! {
                <>
                    if *recovered {
                        <p class="message" data-recovered="true">{ ctx.t("run.recovered") }</p>
                    }
                    { verdict }
                    <p class="checked">{ checked }</p>
                    <table class="facts timing">
                        <tr><th scope="row">{ ctx.t("run.time") }</th><td class="gpu-time">{ time }</td></tr>
                        <tr><th scope="row">{ ctx.t("run.upload") }</th><td>{ format!("{} ms", numbers::ms(v.timing.upload_ms)) }</td></tr>
                        <tr><th scope="row">{ ctx.t("run.rate") }</th><td>{ ctx.tf("run.gflops", &[("value", &numbers::rate(v.gflops()))]) }</td></tr>
                    </table>
                    if software {
                        <p class="note">{ ctx.t("run.time.software_note") }</p>
                    }
                    <p class="note">{ ctx.t(family_of(problem).tolerance_key()) }</p>
                </>
            }
        }
    }
}

fn family_of(p: &Problem) -> RunFamily {
    match p {
        Problem::Matmul(_) => RunFamily::Matmul,
        Problem::Conv(_) => RunFamily::Conv,
    }
}

/// An output element's coordinates: (row, column) of C, or (n, p, q, k) of the NPQK output.
fn element_text(p: &Problem, index: usize) -> String {
    match p {
        Problem::Matmul(s) => {
            let n = (s.n as usize).max(1);
            format!("({}, {})", index / n, index % n)
        }
        Problem::Conv(s) => {
            let (pp, q) = s.out_hw();
            let (k, q, pp) = (
                (s.k as usize).max(1),
                (q as usize).max(1),
                (pp as usize).max(1),
            );
            let (pix, kk) = (index / k, index % k);
            format!("({}, {}, {}, {kk})", pix / q / pp, (pix / q) % pp, pix % q)
        }
    }
}
