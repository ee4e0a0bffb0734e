//! The live race: both sides start on identical inputs at the same moment; progress bars,
//! timers, a finish line, then the breakdown that explains the result. The same view races a
//! square matmul (`view=race`) or a convolution (`view=conv`: its shape fields, the CPU's
//! direct or im2col + SIMD convolution, a conv stage on the GPU). The page logic is
//! `page_models::race::duel`, the run lifecycle `use_run`, the panels `duel_view`; this file holds
//! the component, its settings hooks and the race task.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Interval;
use yew::prelude::*;
use yew_router::prelude::*;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::verify::Precision;
use gpu_runtime::conv::{ConvError, ConvStage};
use gpu_runtime::{parse_dim, Progress};

use super::duel_view::{self, Controls, Model, Reading};
use super::{gpu_error, write_params, MeasureError, Setup};
use crate::components::kernel_run::{adapter_limits, stage_unavailable};
use crate::components::run_lifecycle::{use_run, RunHandle};
use crate::components::Ctx;
use crate::race_workers::pool::{self, CpuError};
use crate::race_workers::worker_api::now_ms;
use crate::session;
use page_models::progress::ProgressClock;
use page_models::race::conv_params::{self, ConvRaceParams};
use page_models::race::duel::{apply_select, DuelSettings, Job, Phase, SettingsChange};
use page_models::race::measure;
use page_models::race::params::{RaceParams, Workload, MAX_RACE_N, SEED};
use page_models::run_family::{check_limits, Problem, Stage};

#[derive(Properties, PartialEq)]
pub struct DuelProps {
    pub setup: Rc<Setup>,
    /// Race a convolution (its settings from the URL, `race::conv_params`).
    #[prop_or_default]
    pub conv: bool,
}

fn reading(ctx: &Ctx, props: &DuelProps, n_text: &str, conv_text: &[String]) -> Reading {
    let s = &props.setup;
    let parsed_n = parse_dim(n_text, 1, MAX_RACE_N);
    let (conv_p, _) = conv_params::parse(&ctx.query);
    let conv_parsed = conv_params::parse_shape(conv_text);
    let conv_shape = match conv_parsed.problem {
        Some(Problem::Conv(shape)) => Some(shape),
        _ => None,
    };
    let conv_stage = (props.conv && s.kernel.is_some())
        .then_some(conv_p.gpu)
        .filter(|st| stage_unavailable(ctx, &Stage::Conv(*st)).is_none());
    let conv_limit = match (conv_shape, conv_stage, adapter_limits(ctx)) {
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
            variant: s.params.cpu,
            kernel: s.kernel,
        })
    };
    Reading {
        parsed_n,
        conv_p,
        conv_parsed,
        conv_stage,
        conv_limit,
        job,
    }
}

/// A hidden moment while the race runs makes its times unreliable (throttled timers, the
/// machine busy with something else); the result says so.
#[hook]
fn use_hidden_watch(model: &Rc<RefCell<Model>>) {
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

/// Cancels a race whose settings changed from outside (the URL, the embed API, Back), so its
/// result can never show beside the new settings.
fn cancel_stale(
    runs: &RunHandle<DuelSettings>,
    model: &Rc<RefCell<Model>>,
    redraw: &UseForceUpdateHandle,
    changed: impl FnOnce(&DuelSettings) -> bool,
) {
    if runs.cancel_if_stale(changed) {
        model.borrow_mut().phase = Phase::Cancelled;
        redraw.force_update();
    }
}

/// The N field's text: it follows the URL's N, and a change of the URL's settings cancels a
/// race run with others.
#[hook]
fn use_n_field(
    params: &RaceParams,
    runs: &RunHandle<DuelSettings>,
    model: &Rc<RefCell<Model>>,
    redraw: &UseForceUpdateHandle,
) -> UseStateHandle<String> {
    let n_text = use_state(|| params.n.to_string());
    let (runs, model, redraw, text) = (runs.clone(), model.clone(), redraw.clone(), n_text.clone());
    use_effect_with(params.clone(), move |p| {
        cancel_stale(&runs, &model, &redraw, |s| s.params_changed(p));
        if parse_dim(&text, 1, MAX_RACE_N).ok() != Some(p.n) {
            text.set(p.n.to_string());
        }
    });
    n_text
}

/// The conv shape fields' text, as for N: they follow the URL, whose change cancels a conv race
/// run with other settings.
#[hook]
fn use_conv_fields(
    url: Option<(ConvRaceParams, Vec<String>)>,
    runs: &RunHandle<DuelSettings>,
    model: &Rc<RefCell<Model>>,
    redraw: &UseForceUpdateHandle,
) -> UseStateHandle<Vec<String>> {
    let conv_text = use_state(|| url.as_ref().map(|u| u.1.clone()).unwrap_or_default());
    let (runs, model, redraw, text) = (
        runs.clone(),
        model.clone(),
        redraw.clone(),
        conv_text.clone(),
    );
    use_effect_with(url, move |u| {
        if let Some(u) = u {
            cancel_stale(&runs, &model, &redraw, |s| s.conv_changed(u));
            if *text != u.1 {
                text.set(u.1.clone());
            }
        }
    });
    conv_text
}

fn on_n(
    ctx: &Ctx,
    navigator: &Option<Navigator>,
    p: &RaceParams,
    n_text: &UseStateHandle<String>,
) -> Callback<InputEvent> {
    let (n_text, ctx, navigator, p) = (n_text.clone(), ctx.clone(), navigator.clone(), p.clone());
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
}

/// A settings select (`cpu`, `workers`, `gpu`, `ccpu`, `cgpu`) writes its value into the URL.
fn on_select(
    ctx: &Ctx,
    navigator: &Option<Navigator>,
    p: &RaceParams,
    key: &'static str,
) -> Callback<Event> {
    let (ctx, navigator, p) = (ctx.clone(), navigator.clone(), p.clone());
    Callback::from(move |e: Event| {
        let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
        let (conv, _) = conv_params::parse(&ctx.query);
        match apply_select(key, &sel.value(), &p, conv) {
            SettingsChange::Conv(c) => {
                if let Some(nav) = &navigator {
                    super::replace_query(
                        nav,
                        &ctx.route,
                        &conv_params::write(&c, ctx.query.clone()),
                    );
                }
            }
            SettingsChange::Race(p) => write_params(&ctx, &navigator, &p),
        }
    })
}

fn on_conv_field(
    ctx: &Ctx,
    navigator: &Option<Navigator>,
    conv_text: &UseStateHandle<Vec<String>>,
    index: usize,
) -> Callback<InputEvent> {
    let (conv_text, ctx, navigator) = (conv_text.clone(), ctx.clone(), navigator.clone());
    Callback::from(move |e: InputEvent| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        let mut next = (*conv_text).clone();
        // Fields and texts are both `conv_params::FIELDS` long; a stray index changes nothing.
        if let Some(v) = next.get_mut(index) {
            *v = input.value();
        }
        if let Some(nav) = &navigator {
            let mut q = ctx.query.clone();
            for (f, v) in conv_params::FIELDS.iter().zip(&next) {
                q.set(f.key, v);
            }
            super::replace_query(nav, &ctx.route, &q);
        }
        conv_text.set(next);
    })
}

#[function_component]
pub fn Duel(props: &DuelProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let model = use_mut_ref(Model::default);
    let redraw = use_force_update();
    crate::components::cssom::use_widths();
    // Cancel, new settings or leaving the page mid-race: the ticker stops, and the CPU side at
    // once (the GPU side at its next submission; a GPU result that still comes is ignored).
    let runs = {
        let model = model.clone();
        use_run::<DuelSettings>(move || {
            model.borrow_mut().ticker = None;
            pool::terminate();
        })
    };
    use_hidden_watch(&model);
    let n_text = use_n_field(&props.setup.params, &runs, &model, &redraw);
    // The conv race's settings as the URL has them (the shape fields as typed follow them).
    let conv_url = ctx.as_ref().map(|c| {
        (
            conv_params::parse(&c.query).0,
            conv_params::field_values(&c.query),
        )
    });
    let conv_text = use_conv_fields(conv_url, &runs, &model, &redraw);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let s = props.setup.clone();
    let busy = runs.is_running();
    let reading = reading(&ctx, props, &n_text, &conv_text);

    let start = {
        let (model, redraw, s, runs) = (model.clone(), redraw.clone(), s.clone(), runs.clone());
        let conv_settings = props.conv.then(|| (reading.conv_p, (*conv_text).clone()));
        let job = reading.job;
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Some(job) = job else { return };
            let settings = job.settings(&s.params, conv_settings.clone());
            start_race(
                model.clone(),
                redraw.clone(),
                &runs,
                s.clone(),
                job,
                settings,
            );
        })
    };
    let cancel = {
        let (model, redraw, runs) = (model.clone(), redraw.clone(), runs.clone());
        Callback::from(move |_| {
            runs.cancel();
            model.borrow_mut().phase = Phase::Cancelled;
            redraw.force_update();
        })
    };
    let controls = Controls {
        ctx: &ctx,
        setup: &s,
        conv: props.conv,
        busy,
        reading: &reading,
        n_text: &n_text,
        conv_text: &conv_text,
        on_n: on_n(&ctx, &navigator, &s.params, &n_text),
        on_select: &|key| on_select(&ctx, &navigator, &s.params, key),
        on_conv_field: &|i| on_conv_field(&ctx, &navigator, &conv_text, i),
    };

    let m = model.borrow();
    html! {
        <section class={classes!("panel", "race", props.conv.then_some("conv-race"))} aria-labelledby="race-run-heading">
            <h2 id="race-run-heading">{ ctx.t(if props.conv { "race.conv.heading" } else { "race.run.heading" }) }</h2>
            <p>{ ctx.t(if props.conv { "race.conv.intro" } else { "race.run.intro" }) }</p>
            <form class="race-controls" onsubmit={start} novalidate=true>
                { duel_view::fields(&controls) }
                <div class="buttons">
                    <button type="submit" class="button primary" id="race-start"
                        disabled={busy || controls.start_blocked()}>{ ctx.t("race.start") }</button>
                    <button type="button" class="button" id="race-cancel" disabled={!busy}
                        onclick={cancel}>{ ctx.t("race.cancel") }</button>
                </div>
            </form>
            { duel_view::lanes(&controls, &m, now_ms()) }
            <p class="race-status" role="status">{ m.phase.status_key().map(|k| ctx.t(k)).unwrap_or_default() }</p>
            if m.phase == Phase::Done {
                { duel_view::results(&ctx, &m, &s) }
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
    runs: &RunHandle<DuelSettings>,
    s: Rc<Setup>,
    job: Job,
    settings: DuelSettings,
) {
    let work = job.work();
    // A race still running on the GPU from before is stopped, not raced against.
    let run = runs.start(settings);
    {
        let mut m = model.borrow_mut();
        let (finished, gpu_sides) = (m.finished, m.gpu_sides);
        *m = Model {
            phase: Phase::Preparing,
            work: Some(work),
            finished,
            gpu_sides,
            ..Model::default()
        };
    }
    redraw.force_update();
    let current = {
        let run = run.clone();
        move || run.is_current()
    };
    let side = match job {
        Job::Matmul { kernel, .. } => kernel.map(GpuSide::Matmul),
        Job::Conv { stage, .. } => stage.map(GpuSide::Conv),
    };
    let (workers, software) = (s.params.workers, s.software);
    wasm_bindgen_futures::spawn_local(async move {
        // Set-up, not timed as part of the race.
        let rows = page_models::race::params::split_rows(work.rows(), workers).len();
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
            m.cpu.progress = ProgressClock::started(t0);
            m.gpu.progress = ProgressClock::started(t0);
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
            let (model, redraw, a, b, current, run) = (
                model.clone(),
                redraw.clone(),
                a.clone(),
                b.clone(),
                current.clone(),
                run.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let ctl = run.control(Some({
                    let (model, current) = (model.clone(), current.clone());
                    Rc::new(move |p| {
                        if let (Progress::Running { done, total }, true) = (p, current()) {
                            if total > 0.0 {
                                model
                                    .borrow_mut()
                                    .gpu
                                    .progress
                                    .report(now_ms(), done / total);
                            }
                        }
                    })
                }));
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
                            m.gpu.progress.report(now_ms(), 1.0);
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
                        model.borrow_mut().cpu.progress.report(now_ms(), f);
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
                    m.cpu.progress.report(now_ms(), 1.0);
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
        // Both sides are over: leaving the page now lets the check finish.
        run.settle();
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
            run.finish();
            m.phase = Phase::Done;
            m.finished += 1;
            let (cpu_ms, gpu_ms) = (
                m.cpu_run.as_ref().map(|c| c.total_ms),
                m.gpu_run.as_ref().map(|g| g.total_ms),
            );
            let verified = m.checks.as_ref().map(|c| c.all_ok());
            page_models::embed::report(Ok(match work {
                Workload::Matmul(size) => {
                    page_models::embed::race_report(size, cpu_ms, gpu_ms, verified)
                }
                Workload::Conv(shape) => {
                    page_models::embed::conv_race_report(&shape, cpu_ms, gpu_ms, verified)
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
