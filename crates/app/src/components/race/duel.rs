//! The live race: both sides start on identical inputs at the same moment; progress bars,
//! timers, a finish line, then the breakdown that explains the result. The same view races a
//! square matmul (`view=race`) or a convolution (`view=conv`: its shape fields, the CPU's
//! direct or im2col + SIMD convolution, a conv stage on the GPU).

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Interval;
use yew::prelude::*;
use yew_router::prelude::*;

use cpu_kernels::conv::ConvShape;
use cpu_kernels::cpu_conv::CpuConvVariant;
use cpu_kernels::cpu_matmul::CpuVariant;
use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::verify::Precision;
use gpu_runtime::conv::{ConvError, ConvStage};
use gpu_runtime::{parse_dim, CancelToken, Progress, RunControl};

use super::{
    browser_stages, duration, gflops, gpu_error, worker_choices, write_params, MeasureError, Setup,
};
use crate::components::Ctx;
use crate::format;
use crate::race::conv_params::{self, ConvRaceParams};
use crate::race::measure::{self, Checks, GpuRun};
use crate::race::params::{RaceParams, Workload, MAX_RACE_N, SEED};
use crate::race::pool::{self, CpuError, CpuRun};
use crate::race::worker_api::now_ms;
use crate::run_family::{check_limits, Problem, Stage};
use crate::session;

#[derive(Properties, PartialEq)]
pub struct DuelProps {
    pub setup: Rc<Setup>,
    /// Race a convolution (its settings from the URL, `race::conv_params`).
    #[prop_or_default]
    pub conv: bool,
}

/// What one race runs: the work, the CPU variant, the GPU side (if any).
#[derive(Clone, Copy, Debug)]
enum Job {
    Matmul {
        size: MatmulSize,
        variant: CpuVariant,
        kernel: Option<&'static gpu_runtime::KernelSpec>,
    },
    Conv {
        shape: ConvShape,
        variant: CpuConvVariant,
        stage: Option<ConvStage>,
    },
}

impl Job {
    fn work(&self) -> Workload {
        match self {
            Job::Matmul { size, .. } => Workload::Matmul(*size),
            Job::Conv { shape, .. } => Workload::Conv(*shape),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Phase {
    #[default]
    Idle,
    Preparing,
    /// Waiting for GPU work submitted before this race (a cancelled run, another page).
    WaitingForGpu,
    Running,
    Checking,
    Done,
    Cancelled,
}

#[derive(Clone, Debug, Default)]
struct Lane {
    progress: f64,
    finished_at: Option<f64>,
    error: Option<String>,
}

/// Everything the race view shows; mutated by the race task and the workers' messages.
#[derive(Default)]
struct Model {
    /// Bumped by every Start and Cancel: results of an older race are ignored.
    run: u32,
    phase: Phase,
    work: Option<Workload>,
    started_at: f64,
    cpu: Lane,
    gpu: Lane,
    cpu_run: Option<CpuRun>,
    gpu_run: Option<GpuRun>,
    /// Worker start-up and pipeline compilation before the start (not part of the race).
    cpu_setup_ms: f64,
    gpu_setup_ms: Option<f64>,
    gpu_lost: bool,
    /// The device had been lost before this race and was replaced during set-up.
    gpu_recovered: bool,
    checks: Option<Checks>,
    /// Races finished (for tests and screen readers).
    finished: u32,
    /// GPU sides still running, this race's or a cancelled one's (they stop at their next
    /// submission boundary); shown as `data-gpu-idle` so a test can tell when a cancelled
    /// race has really stopped submitting work.
    gpu_sides: u32,
    /// Stops this race's GPU side (its next submission boundary).
    gpu_cancel: CancelToken,
    /// How long the start waited for earlier GPU work to drain.
    gpu_waited_ms: Option<f64>,
    ticker: Option<Interval>,
    /// Whether the page was hidden while the race ran: its times are then unreliable.
    hidden: crate::visibility::HiddenWatch,
    /// The settings this race runs with (N from the field, the rest from the URL).
    settings: Option<RaceParams>,
    /// A conv race's settings: variant and stage, and the shape fields' text.
    conv_settings: Option<(ConvRaceParams, Vec<String>)>,
}

fn running(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Preparing | Phase::WaitingForGpu | Phase::Running | Phase::Checking
    )
}

/// Ends a race in progress (Cancel, new settings from outside, leaving the page).
fn stop(model: &Rc<RefCell<Model>>, phase: Phase) {
    {
        let mut m = model.borrow_mut();
        m.run += 1;
        m.phase = phase;
        m.ticker = None;
        m.gpu_cancel.cancel();
    }
    // Stops the CPU side at once and the GPU side at its next submission (well within a
    // second); a GPU result that still comes is ignored.
    pool::terminate();
}

#[function_component]
pub fn Duel(props: &DuelProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let model = use_mut_ref(Model::default);
    let redraw = use_force_update();
    let n_text = use_state(|| props.setup.params.n.to_string());
    crate::components::cssom::use_widths();
    {
        // A hidden moment while the race runs makes its times unreliable (throttled timers,
        // the machine busy with something else); the result says so.
        let model = model.clone();
        use_effect_with((), move |_| {
            let listener = web_sys::window().and_then(|w| w.document()).map(|d| {
                gloo::events::EventListener::new(&d, "visibilitychange", move |_| {
                    if let Ok(mut m) = model.try_borrow_mut() {
                        m.hidden.saw(crate::visibility::page_hidden());
                    }
                })
            });
            move || drop(listener)
        });
    }
    {
        // Settings changed from outside during a race (the URL, the embed API, Back): the
        // older race is cancelled, so its result can never show beside the new settings.
        let (model, redraw, n_text) = (model.clone(), redraw.clone(), n_text.clone());
        use_effect_with(props.setup.params.clone(), move |p| {
            let mut m = model.borrow_mut();
            // The URL catching up with the race's own settings (N typed, then Start at once)
            // is no change.
            if matches!(
                m.phase,
                Phase::Preparing | Phase::WaitingForGpu | Phase::Running | Phase::Checking
            ) && m.settings.as_ref() != Some(p)
            {
                m.run += 1;
                m.phase = Phase::Cancelled;
                m.ticker = None;
                m.gpu_cancel.cancel();
                drop(m);
                pool::terminate();
                redraw.force_update();
            }
            if parse_dim(&n_text, 1, MAX_RACE_N).ok() != Some(p.n) {
                n_text.set(p.n.to_string());
            }
        });
    }
    // The conv race's settings as the URL has them, and the shape fields as typed.
    let conv_url = ctx.as_ref().map(|c| {
        (
            conv_params::parse(&c.query).0,
            conv_params::field_values(&c.query),
        )
    });
    let conv_text = use_state(|| conv_url.as_ref().map(|u| u.1.clone()).unwrap_or_default());
    {
        // As for the matmul settings: a change from outside cancels a conv race, and the
        // fields take the URL's values.
        let (model, redraw, conv_text) = (model.clone(), redraw.clone(), conv_text.clone());
        use_effect_with(conv_url.clone(), move |u| {
            if let Some(u) = u {
                let stale = {
                    let m = model.borrow();
                    running(m.phase) && m.conv_settings.as_ref().is_some_and(|c| c != u)
                };
                if stale {
                    stop(&model, Phase::Cancelled);
                    redraw.force_update();
                }
                if *conv_text != u.1 {
                    conv_text.set(u.1.clone());
                }
            }
        });
    }
    {
        // Leaving the page cancels a race in progress.
        let model = model.clone();
        use_effect_with((), move |_| {
            move || {
                let mut m = model.borrow_mut();
                if matches!(
                    m.phase,
                    Phase::Preparing | Phase::WaitingForGpu | Phase::Running
                ) {
                    m.run += 1;
                    m.ticker = None;
                    m.gpu_cancel.cancel();
                    pool::terminate();
                }
            }
        });
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let s = props.setup.clone();
    let p = &s.params;
    let parsed_n = parse_dim(&n_text, 1, MAX_RACE_N);
    let busy = matches!(
        model.borrow().phase,
        Phase::Preparing | Phase::WaitingForGpu | Phase::Running | Phase::Checking
    );

    // The conv race: its settings, shape, GPU stage (when it runs here) and what stops it.
    let (conv_p, _) = conv_params::parse(&ctx.query);
    let conv_parsed = conv_params::parse_shape(&conv_text);
    let conv_shape = match conv_parsed.problem {
        Some(Problem::Conv(shape)) => Some(shape),
        _ => None,
    };
    let conv_stage = (props.conv && s.kernel.is_some())
        .then_some(conv_p.gpu)
        .filter(|st| {
            super::super::kernel_run::stage_unavailable(&ctx, &Stage::Conv(*st)).is_none()
        });
    let conv_limit = match (
        conv_shape,
        conv_stage,
        super::super::kernel_run::adapter_limits(&ctx),
    ) {
        (Some(shape), Some(st), Some(l)) => {
            check_limits(&Stage::Conv(st), &Problem::Conv(shape), &l)
        }
        _ => None,
    };
    let job = if props.conv {
        conv_shape
            .filter(|_| conv_limit.is_none())
            .map(|shape| Job::Conv {
                shape,
                variant: conv_p.cpu,
                stage: conv_stage,
            })
    } else {
        parsed_n.clone().ok().map(|n| Job::Matmul {
            size: MatmulSize::new(n, n, n),
            variant: p.cpu,
            kernel: s.kernel,
        })
    };
    let start = {
        let (model, redraw, s) = (model.clone(), redraw.clone(), s.clone());
        let conv_settings = props.conv.then(|| (conv_p, (*conv_text).clone()));
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Some(job) = job else { return };
            start_race(
                model.clone(),
                redraw.clone(),
                s.clone(),
                job,
                conv_settings.clone(),
            );
        })
    };
    let cancel = {
        let (model, redraw) = (model.clone(), redraw.clone());
        Callback::from(move |_| {
            stop(&model, Phase::Cancelled);
            redraw.force_update();
        })
    };

    let on_n = {
        let (n_text, ctx, navigator, p) =
            (n_text.clone(), ctx.clone(), navigator.clone(), p.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let v = input.value();
            if let Ok(n) = parse_dim(&v, 1, MAX_RACE_N) {
                let mut p = p.clone();
                p.n = n;
                write_params(&ctx, &navigator, &p);
            }
            n_text.set(v);
        })
    };
    let on_select = |key: &'static str| {
        let (ctx, navigator, p) = (ctx.clone(), navigator.clone(), p.clone());
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let v = sel.value();
            let mut p = p.clone();
            if key == "ccpu" || key == "cgpu" {
                let (mut c, _) = conv_params::parse(&ctx.query);
                if let Some(x) = CpuConvVariant::from_id(&v) {
                    c.cpu = x;
                }
                if let Some(x) = ConvStage::from_id(&v) {
                    c.gpu = x;
                }
                if let Some(nav) = &navigator {
                    super::replace_query(
                        nav,
                        &ctx.route,
                        &conv_params::write(&c, ctx.query.clone()),
                    );
                }
                return;
            }
            match key {
                "cpu" => {
                    if let Some(c) = CpuVariant::from_id(&v) {
                        p.cpu = c;
                    }
                }
                "workers" => {
                    if let Ok(w) = v.parse() {
                        p.workers = w;
                    }
                }
                _ => p.gpu = v,
            }
            write_params(&ctx, &navigator, &p);
        })
    };

    let on_conv_field = |index: usize| {
        let (conv_text, ctx, navigator) = (conv_text.clone(), ctx.clone(), navigator.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let mut next = (*conv_text).clone();
            next[index] = input.value();
            if let Some(nav) = &navigator {
                let mut q = ctx.query.clone();
                for (f, v) in conv_params::FIELDS.iter().zip(&next) {
                    q.set(f.key, v);
                }
                super::replace_query(nav, &ctx.route, &q);
            }
            conv_text.set(next);
        })
    };
    let conv_fields = props.conv.then(|| {
        let fields = conv_params::FIELDS.iter().enumerate().map(|(i, f)| {
            let error = conv_parsed.fields[i]
                .as_ref()
                .map(|e| super::super::kernel_run::field_message(&ctx, e));
            let id = format!("race-conv-{}", f.key);
            let err_id = format!("{id}-error");
            html! {
                <div class={classes!("field", error.is_some().then_some("invalid"))}>
                    <label for={id.clone()}>{ ctx.t(f.label_key) }</label>
                    <input id={id} type="text" inputmode="numeric" autocomplete="off"
                        value={conv_text.get(i).cloned().unwrap_or_default()} oninput={on_conv_field(i)}
                        disabled={busy} aria-invalid={error.is_some().to_string()} aria-describedby={err_id.clone()} />
                    <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
                </div>
            }
        });
        html! {
            <>
                <div class="conv-race-fields">{ for fields }</div>
                if let Some(e) = &conv_parsed.shape_error {
                    <p class="message error" role="alert" data-shape-error="true">{ super::super::kernel_run::shape_message(&ctx, e) }</p>
                }
                if let Some(e) = &conv_limit {
                    <p class="message error" role="alert" data-limit-error="true">{ super::super::kernel_run::limit_message(&ctx, e) }</p>
                }
            </>
        }
    });
    let n_error = parsed_n
        .as_ref()
        .err()
        .map(|_| ctx.tf("race.n_error", &[("max", &MAX_RACE_N.to_string())]));
    let cpu_options: Vec<Html> = if props.conv {
        CpuConvVariant::ALL
            .iter()
            .map(|v| html! {
                <option value={v.id()} selected={*v == conv_p.cpu}>{ ctx.t(&format!("race.conv.cpu.{}", v.id())) }</option>
            })
            .collect()
    } else {
        CpuVariant::ALL
            .iter()
            .map(|v| html! {
                <option value={v.id()} selected={*v == p.cpu}>{ ctx.t(&format!("race.cpu.{}", v.id())) }</option>
            })
            .collect()
    };
    let worker_options = worker_choices(s.cores).into_iter().map(|w| {
        let label = if w == s.cores {
            ctx.tf("race.workers.cores", &[("n", &w.to_string())])
        } else {
            w.to_string()
        };
        html! { <option value={w.to_string()} selected={w == p.workers}>{ label }</option> }
    });
    let stages = browser_stages(&ctx);
    let conv_gpu_select = (props.conv && s.kernel.is_some()).then(|| {
        let options = ConvStage::ALL.iter().map(|st| {
            html! { <option value={st.id()} selected={*st == conv_p.gpu}>{ ctx.t(&format!("kernel.{}.title", st.id())) }</option> }
        });
        html! {
            <div class="field">
                <label for="race-conv-gpu">{ ctx.t("race.gpu_stage") }</label>
                <select id="race-conv-gpu" onchange={on_select("cgpu")} disabled={busy}>{ for options }</select>
            </div>
        }
    });
    let gpu_select = s.kernel.filter(|_| !props.conv).map(|k| {
        let options = stages.iter().map(|st| {
            html! { <option value={st.id} selected={st.id == k.id}>{ ctx.t(st.title_key) }</option> }
        });
        html! {
            <div class="field">
                <label for="race-gpu">{ ctx.t("race.gpu_stage") }</label>
                <select id="race-gpu" onchange={on_select("gpu")} disabled={busy}>{ for options }</select>
            </div>
        }
    });

    let m = model.borrow();
    let now = now_ms();
    let lane = |key: &str, title: String, lane: &Lane, present: bool, indeterminate: bool| {
        let elapsed = match (m.phase, lane.finished_at) {
            (Phase::Idle, _) => None,
            (_, Some(t)) => Some(t - m.started_at),
            (Phase::Running, None) => Some(now - m.started_at),
            _ => None,
        };
        let pct = (lane.progress.clamp(0.0, 1.0) * 100.0).round();
        let state = if lane.error.is_some() {
            "error"
        } else if lane.finished_at.is_some() {
            "finished"
        } else if m.phase == Phase::Running {
            "running"
        } else {
            "waiting"
        };
        html! {
            <div class={classes!("lane", key.to_string(), state)} data-lane={key.to_string()} data-state={state}>
                <div class="lane-head">
                    <span class="lane-title">{ title }</span>
                    <span class="lane-time" aria-live="off">
                        { elapsed.map(duration).unwrap_or_default() }
                    </span>
                </div>
                <div class="track" role="progressbar" aria-valuemin="0" aria-valuemax="100"
                    aria-valuenow={pct.to_string()} aria-label={ctx.t("race.progress")}>
                    if present {
                        <div class={classes!("runner", (indeterminate && state == "running").then_some("indeterminate"))}
                            data-width-pct={pct.to_string()}></div>
                    }
                    <div class="finish-line" aria-hidden="true"></div>
                </div>
                if let Some(e) = &lane.error {
                    <p class="lane-error" role="alert">{ e.clone() }</p>
                }
            </div>
        }
    };
    let cpu_title = ctx.tf(
        "race.contender.cpu",
        &[
            ("variant", ctx.t(&format!("race.cpu.{}", p.cpu.id()))),
            ("workers", &p.workers.to_string()),
        ],
    );
    let cpu_title = if props.conv {
        ctx.tf(
            "race.contender.cpu",
            &[
                (
                    "variant",
                    ctx.t(&format!("race.conv.cpu.{}", conv_p.cpu.id())),
                ),
                ("workers", &p.workers.to_string()),
            ],
        )
    } else {
        cpu_title
    };
    let gpu_title = match (props.conv, s.kernel, conv_stage) {
        (true, _, Some(st)) => ctx.tf(
            "race.contender.gpu",
            &[("stage", ctx.t(&format!("kernel.{}.title", st.id())))],
        ),
        (false, Some(k), _) => ctx.tf("race.contender.gpu", &[("stage", ctx.t(k.title_key))]),
        _ => ctx.t("race.gpu.absent").to_string(),
    };
    let gpu_present = if props.conv {
        conv_stage.is_some()
    } else {
        s.kernel.is_some()
    };
    let start_blocked = if props.conv {
        job.is_none()
    } else {
        n_error.is_some()
    };
    let status = match m.phase {
        Phase::Idle => String::new(),
        Phase::Preparing => ctx.t("race.status.preparing").into(),
        Phase::WaitingForGpu => ctx.t("run.waiting_queue").into(),
        Phase::Running => ctx.t("race.status.running").into(),
        Phase::Checking => ctx.t("race.status.checking").into(),
        Phase::Done => ctx.t("race.status.done").into(),
        Phase::Cancelled => ctx.t("race.status.cancelled").into(),
    };

    html! {
        <section class={classes!("panel", "race", props.conv.then_some("conv-race"))} aria-labelledby="race-run-heading">
            <h2 id="race-run-heading">{ ctx.t(if props.conv { "race.conv.heading" } else { "race.run.heading" }) }</h2>
            <p>{ ctx.t(if props.conv { "race.conv.intro" } else { "race.run.intro" }) }</p>
            <form class="race-controls" onsubmit={start} novalidate=true>
                { for conv_fields }
                if !props.conv {
                <div class={classes!("field", n_error.is_some().then_some("invalid"))}>
                    <label for="race-n">{ ctx.t("race.n") }</label>
                    <input id="race-n" type="text" inputmode="numeric" autocomplete="off"
                        value={(*n_text).clone()} oninput={on_n} disabled={busy}
                        aria-invalid={n_error.is_some().to_string()} aria-describedby="race-n-error" />
                    <p id="race-n-error" class="field-error" role="alert">{ n_error.clone().unwrap_or_default() }</p>
                </div>
                }
                <div class="field">
                    <label for="race-cpu">{ ctx.t("race.cpu_variant") }</label>
                    <select id="race-cpu" onchange={on_select(if props.conv { "ccpu" } else { "cpu" })} disabled={busy}>{ for cpu_options }</select>
                </div>
                <div class="field">
                    <label for="race-workers">{ ctx.t("race.workers") }</label>
                    <select id="race-workers" onchange={on_select("workers")} disabled={busy}>{ for worker_options }</select>
                </div>
                { for gpu_select }
                { for conv_gpu_select }
                <div class="buttons">
                    <button type="submit" class="button primary" id="race-start"
                        disabled={busy || start_blocked}>{ ctx.t("race.start") }</button>
                    <button type="button" class="button" id="race-cancel" disabled={!busy}
                        onclick={cancel}>{ ctx.t("race.cancel") }</button>
                </div>
            </form>
            <div class="lanes" data-phase={format!("{:?}", m.phase).to_lowercase()}
                data-races={m.finished.to_string()} data-gpu-idle={(m.gpu_sides == 0).to_string()}>
                { lane("cpu", cpu_title, &m.cpu, true, false) }
                { lane("gpu", gpu_title, &m.gpu, gpu_present, true) }
            </div>
            <p class="race-status" role="status">{ status }</p>
            if m.phase == Phase::Done {
                { results(&ctx, &m, &s) }
            }
        </section>
    }
}

/// The GPU side of a race, prepared: a matmul kernel or a conv stage.
#[derive(Clone, Copy)]
enum GpuSide {
    Matmul(&'static gpu_runtime::KernelSpec),
    Conv(ConvStage),
}

fn conv_to_gpu_error(e: ConvError) -> gpu_runtime::GpuError {
    match e {
        ConvError::Gpu(g) => g,
        other => gpu_runtime::GpuError::Dispatch(other.to_string()),
    }
}

/// Starts a race: setup (workers, GPU pipeline) first, then both sides at the same moment.
fn start_race(
    model: Rc<RefCell<Model>>,
    redraw: UseForceUpdateHandle,
    s: Rc<Setup>,
    job: Job,
    conv_settings: Option<(ConvRaceParams, Vec<String>)>,
) {
    let work = job.work();
    let run = {
        let mut m = model.borrow_mut();
        let run = m.run + 1;
        let (finished, gpu_sides) = (m.finished, m.gpu_sides);
        // A race still running on the GPU from before is stopped, not raced against.
        m.gpu_cancel.cancel();
        let settings = match job {
            Job::Matmul { size, .. } => RaceParams {
                n: size.n,
                ..s.params.clone()
            },
            Job::Conv { .. } => s.params.clone(),
        };
        *m = Model {
            run,
            phase: Phase::Preparing,
            work: Some(work),
            settings: Some(settings),
            conv_settings,
            finished,
            gpu_sides,
            ..Model::default()
        };
        run
    };
    redraw.force_update();
    let current = {
        let model = model.clone();
        move || model.borrow().run == run
    };
    let side = match job {
        Job::Matmul { kernel, .. } => kernel.map(GpuSide::Matmul),
        Job::Conv { stage, .. } => stage.map(GpuSide::Conv),
    };
    let (workers, software) = (s.params.workers, s.software);
    wasm_bindgen_futures::spawn_local(async move {
        // Set-up, not timed as part of the race.
        let rows = crate::race::params::split_rows(work.rows(), workers).len();
        let setup = pool::ensure(rows).await;
        let cpu_setup_ms = match setup {
            Ok(ms) => ms,
            Err(e) => {
                if current() {
                    model.borrow_mut().cpu.error = Some(cpu_message(e));
                }
                0.0
            }
        };
        let gpu = match side {
            Some(side) => {
                let r = async {
                    let (gpu, recovered) = session::gpu(software).await?;
                    let ms = match side {
                        GpuSide::Matmul(k) => measure::prepare(&gpu, k).await?,
                        GpuSide::Conv(st) => measure::prepare_conv(&gpu, st).await?,
                    };
                    Ok::<_, gpu_runtime::GpuError>((gpu, ms, recovered))
                }
                .await;
                match r {
                    Ok((g, ms, recovered)) => {
                        if current() {
                            model.borrow_mut().gpu_recovered = recovered;
                        }
                        Some((g, side, ms))
                    }
                    Err(e) => {
                        if current() {
                            let lost = matches!(e, gpu_runtime::GpuError::DeviceLost(_));
                            let mut m = model.borrow_mut();
                            m.gpu_lost = lost;
                            m.gpu.error = Some(gpu_message(gpu_error(e)));
                        }
                        None
                    }
                }
            }
            None => None,
        };
        if !current() {
            return;
        }
        // GPU work someone else left in the queue must finish before the start, or the
        // GPU's time would include it.
        if let Some((g, _, _)) = &gpu {
            model.borrow_mut().phase = Phase::WaitingForGpu;
            redraw.force_update();
            let waited = g.drain().await.ok();
            if !current() {
                return;
            }
            model.borrow_mut().gpu_waited_ms = waited;
        }
        let (a, b) = match work {
            Workload::Matmul(size) => size.inputs(SEED),
            Workload::Conv(shape) => shape.inputs(SEED),
        };
        let (a, b) = (Rc::new(a), Rc::new(b));
        let t0 = now_ms();
        {
            let mut m = model.borrow_mut();
            m.phase = Phase::Running;
            m.started_at = t0;
            m.hidden = crate::visibility::HiddenWatch::start(crate::visibility::page_hidden());
            m.cpu_setup_ms = cpu_setup_ms;
            m.gpu_setup_ms = gpu.as_ref().map(|g| g.2);
            let (model2, redraw2) = (model.clone(), redraw.clone());
            m.ticker = Some(Interval::new(100, move || {
                let _ = &model2;
                redraw2.force_update();
            }));
        }
        redraw.force_update();

        // GPU side: its own task, so both sides run at once.
        let (gtx, grx) = futures_channel::oneshot::channel::<()>();
        if let Some((gpu, side, _)) = gpu {
            model.borrow_mut().gpu_sides += 1;
            let (model, redraw, a, b, current) = (
                model.clone(),
                redraw.clone(),
                a.clone(),
                b.clone(),
                current.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let ctl = RunControl {
                    cancel: model.borrow().gpu_cancel.clone(),
                    progress: Some({
                        let (model, current) = (model.clone(), current.clone());
                        Rc::new(move |p| {
                            if let (Progress::Running { done, total }, true) = (p, current()) {
                                if total > 0.0 {
                                    model.borrow_mut().gpu.progress = done / total;
                                }
                            }
                        })
                    }),
                    ..Default::default()
                };
                let r = match (side, work) {
                    (GpuSide::Matmul(kernel), Workload::Matmul(size)) => {
                        measure::run_gpu(&gpu, kernel, size, &a, &b, &ctl).await
                    }
                    (GpuSide::Conv(stage), Workload::Conv(shape)) => {
                        measure::run_gpu_conv(&gpu, stage, &shape, &a, &b, &ctl)
                            .await
                            .map_err(conv_to_gpu_error)
                    }
                    _ => Err(gpu_runtime::GpuError::WrongJob),
                };
                if current() {
                    let mut m = model.borrow_mut();
                    m.gpu.finished_at =
                        Some(t0 + r.as_ref().map(|g| g.total_ms).unwrap_or(now_ms() - t0));
                    match r {
                        Ok(g) => {
                            m.gpu.progress = 1.0;
                            m.gpu_run = Some(g);
                        }
                        Err(e) => {
                            m.gpu_lost = matches!(e, gpu_runtime::GpuError::DeviceLost(_));
                            m.gpu.finished_at = None;
                            m.gpu.error = Some(gpu_message(gpu_error(e)));
                        }
                    }
                    drop(m);
                }
                {
                    let mut m = model.borrow_mut();
                    m.gpu_sides = m.gpu_sides.saturating_sub(1);
                }
                redraw.force_update();
                let _ = gtx.send(());
            });
        } else {
            let _ = gtx.send(());
        }

        // CPU side, in the workers.
        let cpu_error_already = model.borrow().cpu.error.is_some();
        if !cpu_error_already {
            let progress: Rc<dyn Fn(f64)> = {
                let (model, redraw, current) = (model.clone(), redraw.clone(), current.clone());
                Rc::new(move |f| {
                    if current() {
                        model.borrow_mut().cpu.progress = f;
                        redraw.force_update();
                    }
                })
            };
            let r = match job {
                Job::Matmul { size, variant, .. } => {
                    pool::run_matmul(variant, workers, size, &a, &b, progress).await
                }
                Job::Conv { shape, variant, .. } => {
                    pool::run_conv(variant, workers, shape, &a, &b, progress).await
                }
            };
            if !current() {
                return;
            }
            let mut m = model.borrow_mut();
            match r {
                Ok(c) => {
                    m.cpu.progress = 1.0;
                    m.cpu.finished_at = Some(t0 + c.total_ms);
                    m.cpu_run = Some(c);
                }
                Err(CpuError::Cancelled) => return,
                Err(e) => m.cpu.error = Some(cpu_message(e)),
            }
        }
        redraw.force_update();
        let _ = grx.await;
        if !current() {
            return;
        }
        {
            let mut m = model.borrow_mut();
            m.phase = Phase::Checking;
            m.ticker = None;
            m.hidden.stop(crate::visibility::page_hidden());
        }
        redraw.force_update();
        // Let the page paint "checking" before the reference is computed.
        gloo::timers::future::TimeoutFuture::new(0).await;
        if !current() {
            return;
        }
        {
            let mut m = model.borrow_mut();
            m.checks = m.cpu_run.as_ref().map(|c| {
                let gpu_c = m.gpu_run.as_ref().map(|g| g.c.as_slice());
                match job {
                    Job::Matmul { size, kernel, .. } => {
                        let precision = kernel.map(|k| k.precision).unwrap_or(Precision::F32);
                        measure::check(
                            size,
                            &a,
                            &b,
                            &c.c,
                            gpu_c.map(|g| (g, precision)),
                            Precision::F32,
                        )
                    }
                    Job::Conv { shape, .. } => measure::check_conv(&shape, &a, &b, &c.c, gpu_c),
                }
            });
            // The results are checked; the big vectors are not needed any more.
            if let Some(c) = m.cpu_run.as_mut() {
                c.c = Vec::new();
            }
            if let Some(g) = m.gpu_run.as_mut() {
                g.c = Vec::new();
            }
            m.phase = Phase::Done;
            m.finished += 1;
            let (cpu_ms, gpu_ms) = (
                m.cpu_run.as_ref().map(|c| c.total_ms),
                m.gpu_run.as_ref().map(|g| g.total_ms),
            );
            let verified = m.checks.as_ref().map(|c| c.all_ok());
            crate::embed::report(Ok(match work {
                Workload::Matmul(size) => crate::embed::race_report(size, cpu_ms, gpu_ms, verified),
                Workload::Conv(shape) => {
                    crate::embed::conv_race_report(&shape, cpu_ms, gpu_ms, verified)
                }
            }));
        }
        redraw.force_update();
    });
}

fn cpu_message(e: CpuError) -> String {
    match e {
        CpuError::Cancelled => String::new(),
        CpuError::Worker(m) => m,
    }
}

fn gpu_message(e: MeasureError) -> String {
    match e {
        MeasureError::Cancelled => String::new(),
        MeasureError::Lost(m) | MeasureError::Failed(m) => m,
    }
}

fn results(ctx: &Ctx, m: &Model, s: &Setup) -> Html {
    let Some(work) = m.work else {
        return html! {};
    };
    let flops = work.flops();
    let cpu_ms = m.cpu_run.as_ref().map(|c| c.total_ms);
    let gpu_ms = m.gpu_run.as_ref().map(|g| g.total_ms);
    let verdict = match (&m.checks, cpu_ms, gpu_ms) {
        (Some(ch), Some(c), Some(g)) => {
            let (winner, ratio) = if g < c {
                ("gpu", c / g)
            } else {
                ("cpu", g / c)
            };
            let text = ctx.tf(
                &format!("race.winner.{winner}"),
                &[("x", &format!("{ratio:.1}"))],
            );
            let agree = match (ch.all_ok(), ch.max_rel_diff) {
                (true, Some(d)) => html! {
                    <p class="verdict ok" data-agree="true">
                        { ctx.tf("race.agree", &[("diff", &format::sci(d)), ("cpu_err", &format::sci(ch.cpu.max_rel_error)),
                            ("gpu_err", &format::sci(ch.gpu.as_ref().map(|g| g.max_rel_error).unwrap_or(0.0)))]) }
                    </p>
                },
                _ => html! {
                    <p class="verdict bad" data-agree="false" role="alert">
                        { ctx.tf("race.disagree", &[
                            ("cpu", ctx.t(if ch.cpu.ok { "race.ok" } else { "race.wrong" })),
                            ("gpu", ctx.t(if ch.gpu.as_ref().is_some_and(|g| g.ok) { "race.ok" } else { "race.wrong" })),
                        ]) }
                    </p>
                },
            };
            html! {
                <>
                    <p class={classes!("winner", winner)} data-winner={winner}>{ text }</p>
                    { agree }
                </>
            }
        }
        (Some(ch), Some(_), None) => html! {
            <p class={classes!("verdict", if ch.cpu.ok { "ok" } else { "bad" })} data-agree="cpu-only">
                { ctx.tf("race.cpu_only", &[("err", &format::sci(ch.cpu.max_rel_error)),
                    ("state", ctx.t(if ch.cpu.ok { "race.ok" } else { "race.wrong" }))]) }
            </p>
        },
        _ => html! {},
    };
    let checked = m.checks.as_ref().map(|ch| {
        if ch.checked == ch.total {
            ctx.tf(
                "run.checked_all",
                &[("count", &format::count(ch.total as u64))],
            )
        } else {
            ctx.tf(
                "run.checked_some",
                &[
                    ("checked", &format::count(ch.checked as u64)),
                    ("total", &format::count(ch.total as u64)),
                ],
            )
        }
    });
    let row = |label: &str, value: String| {
        html! { <tr><th scope="row">{ label.to_string() }</th><td>{ value }</td></tr> }
    };
    let cpu_table = m.cpu_run.as_ref().map(|c| {
        html! {
            <table class="facts breakdown cpu-breakdown">
                <caption>{ ctx.t("race.breakdown.cpu") }</caption>
                { row(ctx.t("race.b.total"), duration(c.total_ms)) }
                { row(ctx.t("race.b.copy_in"), duration(c.copy_in_ms)) }
                { row(ctx.t("race.b.compute"), duration(c.compute_ms)) }
                { row(ctx.t("race.b.copy_out"), duration(c.copy_out_ms)) }
                { row(ctx.t("race.b.wait"), duration(c.wait_ms)) }
                { row(ctx.t("race.b.rate"), ctx.tf("run.gflops", &[("value", &format::rate(gflops(flops, c.total_ms)))])) }
                { row(ctx.t("race.b.workers"), c.workers.to_string()) }
                <tr data-cpu-kernel={c.kernel.id()}>
                    <th scope="row">{ ctx.t("race.b.cpu_kernel") }</th>
                    <td>{ ctx.t(&format!("race.kernel.{}", c.kernel.id())) }</td>
                </tr>
                { row(ctx.t("race.b.setup"), duration(m.cpu_setup_ms)) }
            </table>
        }
    });
    let gpu_table = m.gpu_run.as_ref().map(|g| {
        let t = &g.timing;
        let kernel = match g.kernel_ms() {
            Some(k) => duration(k),
            None => ctx.t("race.b.not_separable").to_string(),
        };
        let launch = match g.launch_ms() {
            Some(l) => duration(l),
            None => ctx.tf("race.b.wall", &[("ms", &duration(t.submit_to_result_ms - t.readback_ms))]),
        };
        html! {
            <table class="facts breakdown gpu-breakdown">
                <caption>{ ctx.t("race.breakdown.gpu") }</caption>
                { row(ctx.t("race.b.total"), duration(g.total_ms)) }
                { row(ctx.t("race.b.upload"), duration(t.upload_ms)) }
                { row(ctx.t("race.b.launch"), launch) }
                { row(ctx.t("race.b.kernel"), kernel) }
                { row(ctx.t("race.b.readback"), duration(t.readback_ms)) }
                { row(ctx.t("race.b.rate"), ctx.tf("run.gflops", &[("value", &format::rate(gflops(flops, g.total_ms)))])) }
                { row(ctx.t("race.b.setup"), m.gpu_setup_ms.map(duration).unwrap_or_default()) }
            </table>
        }
    });
    let conv = matches!(work, Workload::Conv(_));
    let lesson = ctx.t(match (cpu_ms, gpu_ms, conv) {
        (Some(c), Some(g), false) if g >= c => "race.lesson.cpu_won",
        (Some(c), Some(g), true) if g >= c => "race.conv.lesson.cpu_won",
        (Some(_), Some(_), false) => "race.lesson.gpu_won",
        (Some(_), Some(_), true) => "race.conv.lesson.gpu_won",
        (_, _, false) => "race.lesson.no_gpu",
        (_, _, true) => "race.conv.lesson.no_gpu",
    });
    html! {
        <div class="race-results" data-verified={m.checks.as_ref().is_some_and(|c| c.all_ok()).to_string()}
            data-gpu-submissions={m.gpu_run.as_ref().map(|g| g.timing.submissions.to_string())}>
            { verdict }
            if m.hidden.was_hidden() {
                <p class="note hidden-note" role="note" data-hidden-note="true">{ ctx.t("race.hidden_note") }</p>
            }
            if let Some(c) = checked {
                <p class="checked">{ c }</p>
            }
            <div class="breakdowns">
                { for cpu_table }
                { for gpu_table }
            </div>
            <p class="lesson">{ lesson }</p>
            if s.software && m.gpu_run.is_some() {
                <p class="note">{ ctx.t("race.b.software_timestamps") }</p>
            }
            if m.gpu_recovered {
                <p class="message" data-recovered="true">{ ctx.t("run.recovered") }</p>
            }
            if m.gpu_lost {
                <p class="message" data-lost="true">{ ctx.t("race.gpu.lost") }</p>
            }
            if let Some(w) = m.gpu_waited_ms.filter(|w| *w >= 1.0) {
                <p class="note" data-waited={format!("{w:.0}")}>{ ctx.tf("run.waited", &[("ms", &format::ms(w))]) }</p>
            }
            <p class="note">{ ctx.t("race.b.note") }</p>
            <p class="note">{ ctx.t("race.b.parts") }</p>
            <p class="note" data-vs-sweep="true">{ ctx.t("race.b.vs_sweep") }</p>
        </div>
    }
}
