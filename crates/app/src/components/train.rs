//! The train view (`#/train`): a tiny MLP trained on the visitor's GPU by WGSL kernels that
//! can be opened, with the same network trained by the CPU twin beside it. Every setting lives
//! in the URL (see `mlp::spec`); bad ones are named on the page and replaced by defaults.
//!
//! The page's state is `page_models::train` (settings with named errors, the run lifecycle,
//! what is shown), kept here in a `use_reducer`; these components only render it and
//! dispatch actions or URL edits.
//!
//! - `crate::train_driver::mlp`: the GPU session and CPU twin, driven by one timer
//!   (time-sliced, main thread).
//! - `controls`: the data and network panels (settings that go to the URL).
//! - `output`: the notices, the status line, the decision boundary and the loss chart.
//! - `kernels`: the step's kernels with their WGSL, and the batch-size experiment's panel.
//! - `experiment`: samples/s against batch size (the measuring, on the GPU).
//! - `crossover`: steps/s of the GPU and the tuned CPU over widths × batch sizes.

mod controls;
mod crossover;
mod experiment;
mod kernels;
mod output;

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Interval;
use yew::prelude::*;

use crate::components::page_state::{PageModel, PageState};
use yew_router::prelude::*;

use gpu_runtime::training::max_batch;
use mlp::{Spec, SpecError};
use page_models::train::experiment::{verdict, GpuCell, Row, Verdict};
// Crossover draws its charts with `super::picture::Frame`.
use page_models::train::picture;
use page_models::train::settings::{structural, Settings};
use page_models::train::{rebuild, Action, Experiment, Previous, TrainPage};

use self::controls::{DataPanel, NetworkPanel};
use self::kernels::{conclusion, experiment_view, KernelsPanel};
use self::output::{output_panel, status_line, Notices};
use super::chart_width::use_chart_width;
use super::keep::use_kept;
use super::{replace_query, Ctx};
use crate::probe::WebGpuStatus;
use crate::session;
use crate::train_driver::mlp::{Runner, Sample};
use crate::train_driver::{now_ms, start_session};

/// Milliseconds between engine ticks, and between re-renders while training.
const TICK_MS: u32 = 16;
const RENDER_MS: f64 = 150.0;
const SPACE: &str = " ";

pub type Page = PageState<TrainPage>;

impl PageModel for TrainPage {
    type Action = Action;
    fn next(&self, action: Action) -> Self {
        self.reduce(action)
    }
}

/// Writes settings to the URL, from where they reach the fields and both trainers.
pub type SetQuery = Callback<Vec<(&'static str, String)>>;

type RunnerCell = Rc<RefCell<Option<Runner>>>;

/// A callback that writes one key's value.
pub fn set_key(set: &SetQuery, key: &'static str) -> Callback<String> {
    set.reform(move |v: String| vec![(key, v)])
}

/// A select's value, to one key.
pub fn on_select(set: &SetQuery, key: &'static str) -> Callback<Event> {
    set_key(set, key).reform(|e: Event| {
        let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
        el.value()
    })
}

/// An input's value, to one key.
pub fn on_input(set: &SetQuery, key: &'static str) -> Callback<Event> {
    set_key(set, key).reform(|e: Event| {
        let el: web_sys::HtmlInputElement = e.target_unchecked_into();
        el.value()
    })
}

/// Writes `pairs` to the URL; the batch it lowered with them, if it did.
fn write_query(ctx: &Ctx, nav: &Option<Navigator>, pairs: &[(&str, String)]) -> Option<usize> {
    let mut q = ctx.query.clone();
    for (k, v) in pairs {
        q.set(k, v);
    }
    // A change that shrank the training set below the batch lowers the batch with it.
    let after = Settings::from_query(Some(|k: &str| q.get(k)));
    let lowered = page_models::train::settings::refit_batch(pairs, &after);
    if let Some(b) = lowered {
        q.set("batch", &b.to_string());
    }
    if let Some(nav) = nav {
        replace_query(nav, &ctx.route, &q);
    }
    lowered
}

/// A kept run and its network's number (a GPU session still on its way attaches only to the
/// network it was made for).
#[derive(Clone, Default)]
struct Kept {
    runner: RunnerCell,
    generation: Rc<RefCell<u64>>,
    /// Taken back and not yet driven: the next start drives it instead of a new network.
    resume: Rc<RefCell<bool>>,
}

/// The page's run to keep for its return, if worth keeping.
fn keep(kept: &Kept) -> Option<Kept> {
    let worth = match kept.runner.borrow_mut().as_mut() {
        Some(r) if r.board.worth_keeping(r.reached().0) => {
            let reached = r.reached();
            r.board.left(reached);
            true
        }
        _ => false,
    };
    worth.then(|| kept.clone())
}

#[function_component]
pub fn Train() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let redraw = use_force_update();
    // A run kept when the learner left: its timer starts again without a new network unless
    // the address asks for other settings.
    let (kept, cells) = use_kept(
        |kept: Option<&Kept>| match kept {
            Some(k) => {
                *k.resume.borrow_mut() = true;
                k.clone()
            }
            None => Kept::default(),
        },
        keep,
    );
    let runner = cells.runner.clone();
    let experiment_gen = use_mut_ref(|| 0u64);
    let boundary = use_node_ref();
    let loss_ref = use_node_ref();
    let loss_w = use_chart_width(loss_ref.clone());

    let url_has_settings = ctx.as_ref().is_some_and(|c| {
        Spec::default()
            .to_params()
            .iter()
            .any(|(k, _)| c.query.get(k).is_some())
    });
    // Back by a link without settings (the navigation): the kept run's settings.
    let kept_spec = (*kept)
        .as_ref()
        .filter(|_| !url_has_settings)
        .and_then(|k| k.runner.borrow().as_ref().map(|r| r.board.spec.clone()));
    let Settings { spec, errors } = match kept_spec.clone() {
        Some(spec) => Settings {
            spec,
            errors: Vec::new(),
        },
        None => Settings::from_query(ctx.as_ref().map(|c| |k: &str| c.query.get(k))),
    };
    {
        // ...and the address gets them.
        let (ctx, nav) = (ctx.clone(), navigator.clone());
        use_effect_with((), move |_| {
            if let (Some(spec), Some(ctx), Some(nav)) = (kept_spec, ctx, nav) {
                write_query(&ctx, &Some(nav), &spec.to_params());
            }
        });
    }
    let adapter = Adapter::of(ctx.as_ref());
    let software = adapter.software;
    let page = {
        let spec = spec.clone();
        use_reducer(move || PageState(TrainPage::new(&spec)))
    };
    // The fields follow the URL (a link, Back, another tab's edit) unless they already say it.
    {
        let page = page.dispatcher();
        use_effect_with((spec.lr, spec.batch), move |&(lr, batch)| {
            page.dispatch(Action::Sync { lr, batch })
        });
    }
    use_network(
        &cells,
        &redraw,
        page.dispatcher(),
        &spec,
        page.resets,
        adapter,
    );
    use_live_lr(&runner, spec.lr);

    let Some(ctx) = ctx else {
        return html! {};
    };
    let set_query: SetQuery = {
        let (ctx, nav) = (ctx.clone(), navigator.clone());
        let (page, from) = (page.dispatcher(), spec.batch);
        Callback::from(move |pairs: Vec<(&'static str, String)>| {
            if let Some(to) = write_query(&ctx, &nav, &pairs) {
                page.dispatch(Action::BatchLowered { from, to });
            }
        })
    };
    let dispatch: Callback<Action> = {
        let page = page.dispatcher();
        Callback::from(move |a| page.dispatch(a))
    };
    let on_play: Callback<MouseEvent> = on_runner(&runner, &redraw, Runner::toggle_playing);
    let on_step: Callback<MouseEvent> = on_runner(&runner, &redraw, |r| {
        r.set_playing(false);
        r.step_once(now_ms());
    });
    // The crossover experiment times the CPU on this thread: training pauses while it runs.
    let pause_training: Callback<()> = on_runner(&runner, &redraw, |r| r.set_playing(false));
    let on_experiment = experiment_callback(
        page.dispatcher(),
        page.experiment.running(),
        &experiment_gen,
        &runner,
        &spec,
        software,
    );
    let ceiling = super::kernel_run::adapter_limits(&ctx).map(|l| max_batch(&spec.net(), &l));

    let guard = runner.borrow();
    let r = guard.as_ref();
    html! {
        <section class="page train">
            <h1>{ ctx.t("train.heading") }</h1>
            <p class="lead">{ ctx.t("train.lead") }</p>
            <super::EmbedButton widget="train" />
            <Notices errors={errors} gpu={r.map(|r| r.gpu_state.clone())}
                restarted={page.restarted.clone()} returned={r.and_then(|r| r.board.returned)}
                batch_lowered={page.batch_lowered} />
            <div class="train-toolbar">
                <button id="train-play" class="button primary" onclick={on_play}>
                    { ctx.t(if r.is_some_and(|r| r.board.life.playing) { "train.pause" } else { "train.play" }) }
                </button>
                <button id="train-step" class="button" onclick={on_step}>{ ctx.t("train.step") }</button>
                <button id="train-reset" class="button" onclick={dispatch.reform(|_| Action::Reset)}>
                    { ctx.t("train.reset") }
                </button>
                { r.map(status_line) }
            </div>
            <div class="train-grid">
                <DataPanel spec={spec.clone()} add_class={page.add_class}
                    set_query={set_query.clone()} dispatch={dispatch.clone()} />
                <NetworkPanel spec={spec.clone()}
                    weights={r.map(|r| r.board.weights.clone()).unwrap_or_default()}
                    neurons={r.map(|r| r.board.neurons.clone()).unwrap_or_default()}
                    neurons_from_gpu={r.is_some_and(|r| r.board.heat_from_gpu)}
                    lr={page.lr.clone()} batch={page.batch.clone()}
                    set_query={set_query.clone()} dispatch={dispatch.clone()} />
                { match r {
                    Some(r) => output_panel(&ctx, r, &spec, page.add_class,
                        &set_key(&set_query, "add"), &boundary, (&loss_ref, loss_w)),
                    None => html! { <p>{ ctx.t("train.gpu.starting") }</p> },
                } }
            </div>
            <KernelsPanel plan={r.map(|r| r.plan.clone()).unwrap_or_default()}
                selected={page.selected_kernel} dispatch={dispatch.clone()} />
            <ExperimentPanel experiment={page.experiment.clone()} ceiling={ceiling}
                software={software} on_run={on_experiment} />
            <crossover::CrossoverExperiment on_start={pause_training} />
        </section>
    }
}

/// What the page knows of the adapter: whether it is a software renderer (None: no WebGPU),
/// and whether WebGPU is still being probed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Adapter {
    software: Option<bool>,
    checking: bool,
}

impl Adapter {
    fn of(ctx: Option<&Ctx>) -> Self {
        let status = ctx.map(|c| &c.webgpu);
        Self {
            software: match status {
                Some(WebGpuStatus::Available(a)) => Some(a.is_software),
                _ => None,
            },
            checking: matches!(status, Some(WebGpuStatus::Checking)),
        }
    }
}

#[derive(Properties, PartialEq)]
pub struct ExperimentProps {
    pub experiment: Experiment,
    /// The largest batch the adapter's buffers hold for this network (None: no adapter).
    pub ceiling: Option<u64>,
    /// Whether the adapter is a software renderer (None: no WebGPU).
    pub software: Option<bool>,
    /// Runs the experiment, or cancels a running one.
    pub on_run: Callback<MouseEvent>,
}

/// Samples per second against batch size on both sides, and what that shows.
#[function_component]
pub fn ExperimentPanel(p: &ExperimentProps) -> Html {
    let ctx = use_context::<Ctx>();
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
    let Some(ctx) = ctx else {
        return html! {};
    };
    let rows = p.experiment.rows();
    html! {
        <section class="train-experiment">
            <h2>{ ctx.t("train.exp.title") }</h2>
            <super::EmbedButton widget="batch" />
            <p>{ ctx.t("train.exp.intro") }</p>
            { p.ceiling.map(|c| html! {
                <p class="hint">{ ctx.tf("train.exp.ceiling", &[("batch", &numbers::count(c))]) }</p>
            }) }
            <button id="train-exp-run" class="button" onclick={p.on_run.clone()}>
                { ctx.t(if p.experiment.running() { "train.exp.cancel" } else { "train.exp.run" }) }
            </button>
            { (!rows.is_empty()).then(|| experiment_view(&ctx, rows, (&chart_ref, chart_w))) }
            { p.experiment.done().then(|| conclusion(&ctx, rows, p.software == Some(true))) }
        </section>
    }
}

/// A callback that changes the runner (if there is one) and redraws.
fn on_runner<E>(
    runner: &RunnerCell,
    redraw: &UseForceUpdateHandle,
    f: fn(&mut Runner),
) -> Callback<E> {
    let (runner, redraw) = (runner.clone(), redraw.clone());
    Callback::from(move |_: E| {
        if let Some(r) = runner.borrow_mut().as_mut() {
            f(r);
        }
        redraw.force_update();
    })
}

/// A new network (and GPU session) whenever a structural setting changes or Reset, with its
/// timer; none while WebGPU is still being probed.
#[hook]
fn use_network(
    cells: &Kept,
    redraw: &UseForceUpdateHandle,
    page: UseReducerDispatcher<Page>,
    spec: &Spec,
    resets: u32,
    adapter: Adapter,
) {
    let (runner, generation) = (cells.runner.clone(), cells.generation.clone());
    let (resume, redraw, lr) = (cells.resume.clone(), redraw.clone(), spec.lr);
    use_effect_with(
        (structural(spec), resets, adapter),
        move |(key, _, adapter)| {
            let interval = (!adapter.checking).then(|| {
                let spec = Spec { lr, ..key.clone() };
                // A kept run with these settings carries on: only its timer is new.
                let same = runner
                    .borrow()
                    .as_ref()
                    .is_some_and(|r| structural(&r.board.spec) == *key);
                if std::mem::take(&mut *resume.borrow_mut()) && same {
                    drive(&runner, &redraw)
                } else {
                    start_network(&runner, &generation, &redraw, &page, spec, adapter.software)
                }
            });
            move || drop(interval)
        },
    );
}

/// Replaces the runner by one for `spec` (saying what restarted, keeping Play on if it was),
/// starts its GPU session and returns the timer that drives it.
fn start_network(
    runner: &RunnerCell,
    generation: &Rc<RefCell<u64>>,
    redraw: &UseForceUpdateHandle,
    page: &UseReducerDispatcher<Page>,
    spec: Spec,
    software: Option<bool>,
) -> Interval {
    let gen = {
        let mut g = generation.borrow_mut();
        *g += 1;
        *g
    };
    let decided = {
        let old = runner.borrow();
        let previous = old.as_ref().map(|r| {
            let (gpu_step, cpu_step) = r.reached();
            Previous {
                spec: &r.board.spec,
                gpu_step,
                cpu_step,
                playing: r.board.life.playing,
            }
        });
        rebuild(previous, &spec)
    };
    let mut fresh = Runner::mlp(spec, software.is_some());
    if decided.playing {
        fresh.set_playing(true);
    }
    page.dispatch(Action::Restarted(decided.notice));
    *runner.borrow_mut() = Some(fresh);
    if let Some(software) = software {
        let (generation, redraw) = (generation.clone(), redraw.clone());
        start_session(
            runner,
            software,
            move |_| *generation.borrow() == gen,
            move || redraw.force_update(),
        );
    }
    drive(runner, redraw)
}

/// The timer that drives the page's runner.
fn drive(runner: &RunnerCell, redraw: &UseForceUpdateHandle) -> Interval {
    let (runner, redraw) = (runner.clone(), redraw.clone());
    let last_render = Rc::new(RefCell::new(0.0f64));
    Interval::new(TICK_MS, move || {
        let now = now_ms();
        let render = {
            let Ok(mut guard) = runner.try_borrow_mut() else {
                return;
            };
            let Some(r) = guard.as_mut() else { return };
            // Training holds while the tab is hidden and resumes when shown.
            r.board.set_hidden(crate::visibility::page_hidden());
            r.tick(&(), now);
            if r.take_finished_run() {
                page_models::embed::report(Ok(train_report(r)));
            }
            let due = r.board.dirty && now - *last_render.borrow() >= RENDER_MS;
            if due {
                r.board.dirty = false;
                // Inside an embed, `getState` answers with how far training got.
                page_models::embed::note_work(train_work(r));
            }
            due
        };
        if render {
            *last_render.borrow_mut() = now;
            redraw.force_update();
        }
    })
}

/// The learning rate changes without starting over.
#[hook]
fn use_live_lr(runner: &RunnerCell, lr: f32) {
    let runner = runner.clone();
    use_effect_with(lr, move |lr| {
        if let Some(r) = runner.borrow_mut().as_mut() {
            r.set_lr(*lr);
        }
    });
}

/// The batch-size experiment's button: runs it (pausing training), or cancels a running one.
fn experiment_callback(
    page: UseReducerDispatcher<Page>,
    running: bool,
    experiment_gen: &Rc<RefCell<u64>>,
    runner: &RunnerCell,
    spec: &Spec,
    software: Option<bool>,
) -> Callback<MouseEvent> {
    let (experiment_gen, runner, spec) = (experiment_gen.clone(), runner.clone(), spec.clone());
    Callback::from(move |_: MouseEvent| {
        let gen = {
            let mut g = experiment_gen.borrow_mut();
            *g += 1;
            *g
        };
        if running {
            page.dispatch(Action::ExperimentCancelled);
            return;
        }
        if let Some(r) = runner.borrow_mut().as_mut() {
            r.set_playing(false);
        }
        page.dispatch(Action::ExperimentRows(Vec::new()));
        let (page, experiment_gen, spec) = (page.clone(), experiment_gen.clone(), spec.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let gpu = match software {
                Some(sw) => session::gpu(sw).await.ok().map(|(g, _)| g),
                None => None,
            };
            let rows = Rc::new(RefCell::new(Vec::new()));
            let (rows2, page2, gen2, gen3) = (
                rows.clone(),
                page.clone(),
                experiment_gen.clone(),
                experiment_gen.clone(),
            );
            experiment::run(
                gpu,
                spec,
                move |row| {
                    if *gen2.borrow() == gen {
                        rows2.borrow_mut().push(row);
                        page2.dispatch(Action::ExperimentRows(rows2.borrow().clone()));
                    }
                },
                move || *experiment_gen.borrow() != gen,
            )
            .await;
            let rows = rows.borrow().clone();
            // A cancelled experiment (a second press, new settings) reports nothing.
            if *gen3.borrow() == gen {
                page_models::embed::report(Ok(experiment_report(&rows)));
            }
            page.dispatch(Action::ExperimentDone(rows));
        });
    })
}

/// `run-finished` of training (docs/embedding.md): the latest evaluation of the GPU's network
/// and of its CPU twin (each evaluated every few steps, so `step` says which step it is).
fn train_report(r: &Runner) -> page_models::embed::Report {
    use page_models::embed::Field;
    let sample = |s: Option<&Sample>| match s {
        None => Field::List(Vec::new()),
        Some(s) => Field::List(vec![vec![
            ("step", Field::Num(s.step as f64)),
            ("trainLoss", Field::Num(s.train as f64)),
            ("testLoss", Field::Num(s.test as f64)),
            ("testAccuracy", Field::Num(s.test_acc as f64)),
        ]]),
    };
    let mut out = vec![
        ("data", Field::Str(r.board.spec.dataset.code().into())),
        ("batch", Field::Num(r.board.spec.batch as f64)),
        ("cpuSteps", Field::Num(r.board.cpu.step as f64)),
    ];
    if let Some(g) = r.gpu_steps() {
        out.push(("gpuSteps", Field::Num(g.completed as f64)));
    }
    out.push(("gpu", sample(r.board.gpu_hist.last())));
    out.push(("cpu", sample(r.board.cpu_hist.last())));
    // A classifier's run is complete at the target accuracy (the latest evaluation, the
    // GPU's when it has one); a regression's accuracy means nothing, so it has no target.
    if !r.board.spec.dataset.is_regression() {
        let latest = r.board.gpu_hist.last().or(r.board.cpu_hist.last());
        if let Some(s) = latest {
            out.push(("accuracy", Field::Num(s.test_acc as f64)));
        }
        out.push((
            "targetAccuracy",
            Field::Num(page_models::outcome::TARGET_ACCURACY),
        ));
    }
    out
}

/// How far training got, as an embed's `getState` carries it in `work`: `training`
/// (`playing` or `paused`), then the fields of `run-finished`.
fn train_work(r: &Runner) -> page_models::embed::Report {
    let training = if r.board.life.playing {
        "playing"
    } else {
        "paused"
    };
    let mut out = train_report(r);
    out.insert(
        0,
        ("training", page_models::embed::Field::Str(training.into())),
    );
    out
}

/// `run-finished` of the batch-size experiment: samples per second per batch size on each
/// side, and the conclusion drawn from them.
fn experiment_report(rows: &[Row]) -> page_models::embed::Report {
    use page_models::embed::Field;
    let rows_out = rows
        .iter()
        .map(|row| {
            let mut o = vec![
                ("batch", Field::Num(row.batch as f64)),
                ("cpuSamplesPerSecond", Field::Num(row.cpu)),
            ];
            match &row.gpu {
                GpuCell::SamplesPerSecond(v) => o.push(("gpuSamplesPerSecond", Field::Num(*v))),
                GpuCell::TooLarge => o.push(("gpu", Field::Str("too-large".into()))),
                GpuCell::NoGpu => o.push(("gpu", Field::Str("no-gpu".into()))),
                GpuCell::Failed(e) => o.push(("gpuError", Field::Str(e.clone()))),
            }
            o
        })
        .collect();
    let (verdict_code, at) = match verdict(rows) {
        Verdict::NoGpu => ("no-gpu", None),
        Verdict::CpuEverywhere { largest } => ("cpu-everywhere", Some(largest)),
        Verdict::GpuEverywhere { smallest } => ("gpu-everywhere", Some(smallest)),
        Verdict::GpuFrom { from } => ("gpu-from", Some(from)),
        Verdict::Mixed => ("mixed", None),
    };
    let mut out = vec![
        ("rows", Field::List(rows_out)),
        ("verdict", Field::Str(verdict_code.into())),
    ];
    if let Some(b) = at {
        out.push(("verdictBatch", Field::Num(b as f64)));
    }
    out
}

/// `<option>`s for setting codes, each labelled by the key `{prefix}{code}` (`prefix` ends in a
/// dot), `current` selected.
fn code_options<const N: usize>(
    ctx: &Ctx,
    prefix: &str,
    codes: [&'static str; N],
    current: &str,
) -> Html {
    html! {
        { for codes.into_iter().map(|c| html! {
            <option value={c} selected={c == current}>{ ctx.t(&format!("{prefix}{c}")) }</option>
        }) }
    }
}

/// A named error's text.
fn error_text(ctx: &Ctx, e: &SpecError) -> String {
    let args = e.args();
    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ctx.tf(e.key(), &args)
}

/// A bad value typed into a field, named under it.
fn field_error(ctx: &Ctx, id: &'static str, e: Option<&SpecError>) -> Html {
    let Some(e) = e else { return html! {} };
    html! { <span id={id} class="field-error" role="alert">{ error_text(ctx, e) }</span> }
}
