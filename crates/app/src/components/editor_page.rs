//! `#/editor?stage=<id>`: edit any kernel the site shows — a matmul stage, a conv stage, an
//! MLP or CNN kernel, a measuring kernel (`page_models::edit_target::Target`) — and run it beside the
//! original. Run = naga's check in the editor → the browser compiles it → it runs on the
//! family's inputs → checked element by element against the family's CPU reference → timed
//! against the original on the same inputs (`edit_run::run_target`). Wrong elements are
//! listed and marked on the output's picture. Drafts live in local storage; Share puts the
//! source, deflated, in the URL (`src`).
//!
//! Before anything reaches the GPU, naga compares the edited module's entry point and the
//! resources it uses with the original's (`wgsl_check::interface`/`mismatches`, through
//! `editor.js`'s `bindingCheck`) — exactly what the family's plan binds — and names a wrong
//! binding, a missing entry point or a read-only output in words (`editor.bind.*`); then the
//! browser's own compiler messages (`Gpu::compilation_messages`) are placed in UTF-16 columns
//! (`kernel_edit::browser_message`) and stop the run if they are errors. The two kernels are
//! then timed alike (`page_models::timing`: a warm-up, ≥ 5 timed runs each, taking turns),
//! and the page says "faster" only when the two ranges do not overlap. A GPU run still going
//! after 20 s (`watchdog=<ms>` shortens it, ≥ 1 s, for tests; each finished run of the series
//! gives the next the whole limit: [`Watchdog`]) is cancelled and the page's device dropped
//! (`session::forget`), the source kept. The watchdog cannot take back work
//! already submitted, so every edited kernel (matmul, conv, MLP, measuring) also gets a loop
//! budget: `code_editor::budget_loops` rewrites every loop to stop after
//! `edit_target::loop_budget_for` iterations and flag its line (the family's run binds the
//! flag buffer: `edit_run`), and a flagged run is `Outcome::LoopStopped` ("the loop at line
//! N…", never "Correct"). Only a huge dispatch without loops is left to the watchdog.
//! `?scratch` is `scratch_page.rs` (budgeted too).

use std::cell::Cell;
use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use gpu_runtime::{CancelToken, Family, GpuError, RunControl};
use wasm_bindgen::JsCast;

use super::code_editor::CodeEditor;
use super::edit_link::href;
use super::edit_run::{run_target, Budgeted, Edge, EditedRun, Problem, Tick};
use super::matmul_run::sizes_from_query;
use super::Ctx;
use crate::probe::WebGpuStatus;
use crate::route::Route;
use crate::session;
use page_models::edit_target::{Target, WrongMap, GROUPS};
use page_models::kernel_edit::{
    browser_message, draft_key, placed_messages, share_code, source_from_code, BindingProblem,
    PlacedMessage, ShareError,
};
use page_models::source_view::changed_lines;
use page_models::timing::Spread;

/// Largest side the editor runs: the full CPU reference and the difference list are computed
/// for every element (1024³ f64 multiply-adds take a few seconds in wasm).
pub const MAX_EDITOR_DIM: u32 = 1024;
/// A run that has not finished after this long is stopped and its device dropped.
pub const RUN_TIMEOUT_MS: u32 = 20_000;
/// The shortest watchdog a test may ask for with `watchdog=<ms>` in the URL.
const MIN_TIMEOUT_MS: u32 = 1_000;

/// The watchdog's limit: [`RUN_TIMEOUT_MS`], or a shorter one from the URL (tests).
pub fn timeout_ms(query: &page_models::query::Query) -> u32 {
    query
        .get("watchdog")
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(RUN_TIMEOUT_MS, |v| v.clamp(MIN_TIMEOUT_MS, RUN_TIMEOUT_MS))
}

/// A draft (or the solved list) as kept: local storage, or memory where the browser keeps none
/// for this page (`crate::store`).
pub fn load_draft(key: &str) -> Option<String> {
    crate::store::get(key)
}

pub fn save_draft(key: &str, text: Option<&str>) {
    let _ = crate::store::set(key, text);
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Idle,
    Running,
    /// Cancel was pressed and the GPU work already sent has finished.
    Cancelled,
    Done(Box<EditedRun>),
    HasErrors(usize),
    Failed(String),
    /// Stopped by the watchdog after this many milliseconds.
    TimedOut(u32),
    /// The loop at `line` ran past its `budget` of iterations and was stopped: the output
    /// is not verified.
    LoopStopped {
        line: u32,
        budget: u32,
    },
    /// naga found that the kernel does not fit the page's bindings; nothing was run.
    Bindings(Vec<BindingProblem>),
}

/// Why a run did not produce a result.
enum RunError {
    Gpu(GpuError),
    Bindings(Vec<BindingProblem>),
    /// The browser's compiler reported errors (they are in the page's message list).
    Compiler,
    /// The loop budget's rewrite failed (naga's reason).
    Budget(String),
    /// A loop ran out of its budget.
    LoopStopped {
        line: u32,
        budget: u32,
    },
}

/// The page's state, changed by the editor, Run, Reset and Share.
#[derive(Clone, Debug, PartialEq)]
pub struct EditorState {
    pub source: String,
    pub revision: u32,
    pub errors: usize,
    pub outcome: Outcome,
    /// How many times Run has been answered (a result, a refusal, a timeout): tests wait for
    /// this run's answer, never the previous one's (`data-runs` on the result).
    pub runs: u32,
    pub share: Option<Result<String, ShareError>>,
    /// Placed messages of the browser's compiler from the last run.
    pub external: Rc<Vec<PlacedMessage>>,
    /// The source the shown outcome belongs to (the text when Run was pressed); None when
    /// nothing is shown. A result whose source differs from the editor's is stale.
    pub ran: Option<String>,
    /// While running: timed runs done and planned (both kernels together; 0 of 0 before).
    pub timing: (u32, u32),
    /// Cancel was pressed during the run in progress: the page says so until it ends.
    pub cancelling: bool,
}

impl EditorState {
    /// The editor opened on `source`: nothing run yet.
    fn opened(source: String) -> Self {
        Self {
            source,
            revision: 0,
            errors: 0,
            outcome: Outcome::Idle,
            runs: 0,
            share: None,
            external: Rc::default(),
            ran: None,
            timing: (0, 0),
            cancelling: false,
        }
    }

    /// Whether the shown result (or refusal) is for a source other than the editor's text:
    /// the page says so and never shows it as current. Undoing back to that source makes
    /// it current again.
    pub fn stale(&self) -> bool {
        !matches!(
            self.outcome,
            Outcome::Idle | Outcome::Running | Outcome::Cancelled
        ) && self.ran.as_deref() != Some(self.source.as_str())
    }
}

pub enum Action {
    Edited(String),
    Replace(String),
    Errors(usize),
    Outcome(Outcome),
    Share(Result<String, ShareError>),
    Compiler(Vec<PlacedMessage>),
    /// Timed runs done and planned.
    Timing(u32, u32),
    /// Cancel pressed (the run ends as `Outcome::Cancelled` at its next submission).
    Cancelling,
}

impl Reducible for EditorState {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::Edited(text) => {
                if text == s.source {
                    return self;
                }
                s.source = text;
                s.share = None;
            }
            Action::Replace(text) => {
                s.source = text;
                s.revision += 1;
                s.share = None;
                s.outcome = Outcome::Idle;
                s.ran = None;
            }
            Action::Errors(n) => s.errors = n,
            Action::Outcome(o) => {
                if o != Outcome::Running {
                    s.runs += 1;
                }
                // A run belongs to the text at Run; an answer without a run (HasErrors) to
                // the text now.
                if o == Outcome::Running || s.outcome != Outcome::Running {
                    s.ran = Some(s.source.clone());
                }
                s.outcome = o;
                s.timing = (0, 0);
                s.cancelling = false;
            }
            Action::Cancelling => {
                if s.outcome != Outcome::Running {
                    return self;
                }
                s.cancelling = true;
            }
            Action::Share(r) => s.share = Some(r),
            Action::Compiler(list) => s.external = Rc::new(list),
            // A late count (after the answer) changes nothing.
            Action::Timing(done, total) => {
                if s.outcome != Outcome::Running || s.timing == (done, total) {
                    return self;
                }
                s.timing = (done, total);
            }
        }
        Rc::new(s)
    }
}

/// Turns the runtime's error into words the learner can act on.
pub fn error_text(ctx: &Ctx, e: &GpuError) -> String {
    match e {
        GpuError::Shader(m) => ctx.tf("editor.error.shader", &[("message", m)]),
        GpuError::DeviceLost(m) => ctx.tf("editor.error.lost", &[("message", m)]),
        other => {
            let m = other.to_string();
            if m.contains("binding") || m.contains("Binding") || m.contains("layout") {
                ctx.tf("editor.error.bindings", &[("message", &m)])
            } else {
                ctx.tf("editor.error.other", &[("message", &m)])
            }
        }
    }
}

/// Starts `work` and gives up on it after [`RUN_TIMEOUT_MS`]: the outcome is then TimedOut,
/// the run is cancelled and the page's device dropped, so the next run gets a fresh one.
pub fn run_with_timeout<F, T>(
    work: F,
    cancel: CancelToken,
    limit_ms: u32,
    finish: impl Fn(Option<T>) + 'static,
) where
    F: std::future::Future<Output = T> + 'static,
    T: 'static,
{
    run_with_watchdog(work, cancel, Watchdog::new(limit_ms), finish);
}

/// When the watchdog gives up: `limit_ms` after the start, moved on by [`Watchdog::alive`].
/// A series of GPU runs (the editor's timing rounds) calls it after each run, so the limit is
/// each run's: a correct kernel timed ten times is not stopped for taking ten runs, and an
/// endless one still is, in its first run.
#[derive(Clone)]
pub struct Watchdog {
    limit_ms: u32,
    deadline: Rc<Cell<f64>>,
}

impl Watchdog {
    pub fn new(limit_ms: u32) -> Self {
        Self {
            limit_ms,
            deadline: Rc::new(Cell::new(gpu_runtime::now_ms() + f64::from(limit_ms))),
        }
    }

    /// A run has just finished: the next one gets the whole limit.
    pub fn alive(&self) {
        self.deadline
            .set(gpu_runtime::now_ms() + f64::from(self.limit_ms));
    }
}

/// [`run_with_timeout`] with a deadline that `work` may move on ([`Watchdog::alive`]).
pub fn run_with_watchdog<F, T>(
    work: F,
    cancel: CancelToken,
    watchdog: Watchdog,
    finish: impl Fn(Option<T>) + 'static,
) where
    F: std::future::Future<Output = T> + 'static,
    T: 'static,
{
    let settled = Rc::new(Cell::new(false));
    let finish = Rc::new(finish);
    {
        let (settled, finish) = (settled.clone(), finish.clone());
        wasm_bindgen_futures::spawn_local(async move {
            loop {
                let left = watchdog.deadline.get() - gpu_runtime::now_ms();
                if left <= 0.0 || settled.get() {
                    break;
                }
                gloo::timers::future::TimeoutFuture::new(left.ceil() as u32).await;
            }
            if !settled.replace(true) {
                cancel.cancel();
                session::forget();
                finish(None);
            }
        });
    }
    wasm_bindgen_futures::spawn_local(async move {
        let r = work.await;
        if !settled.replace(true) {
            finish(Some(r));
        }
    });
}

/// `run-finished` of an edited kernel (docs/embedding.md): its time beside the original's and
/// how many output elements differ from the CPU reference.
fn editor_report(
    stage: &str,
    size: Option<cpu_kernels::matmul::MatmulSize>,
    run: &EditedRun,
) -> page_models::embed::Report {
    use page_models::embed::Field;
    let mut r = vec![("stage", Field::Str(stage.into()))];
    if let Some(size) = size {
        r.push(("m", Field::Num(size.m as f64)));
        r.push(("n", Field::Num(size.n as f64)));
        r.push(("k", Field::Num(size.k as f64)));
    }
    // Medians of the timed runs (`runs` and `originalRuns` of them).
    if let Some(t) = run.time {
        r.push(("ms", Field::Num(t.median)));
        r.push(("runs", Field::Num(f64::from(t.runs))));
    }
    r.push(("wrong", Field::Num(run.diff.wrong as f64)));
    r.push(("checked", Field::Num(run.diff.total as f64)));
    r.push(("verified", Field::Bool(run.diff.wrong == 0)));
    if let Some(o) = run.original_time {
        r.push(("originalMs", Field::Num(o.median)));
        r.push(("originalRuns", Field::Num(f64::from(o.runs))));
    }
    // The second size it was checked at (`wrong` and `checked` are that size's when it failed).
    if let Some(Edge::Passed(e) | Edge::Failed(e)) = run.edge {
        r.push(("edgeM", Field::Num(e.m as f64)));
        r.push(("edgeN", Field::Num(e.n as f64)));
        r.push(("edgeK", Field::Num(e.k as f64)));
        r.push((
            "edgeVerified",
            Field::Bool(matches!(run.edge, Some(Edge::Passed(_)))),
        ));
    }
    r
}

/// "Also right at …" / "Right at …, but not at …": the matmul edit's second check.
fn edge_text(ctx: &Ctx, run: &EditedRun) -> Option<String> {
    let dims = |s: cpu_kernels::matmul::MatmulSize| format!("{}×{}×{}", s.m, s.n, s.k);
    match run.edge? {
        Edge::Passed(e) => Some(ctx.tf("editor.edge.passed", &[("edge", &dims(e))])),
        Edge::Failed(e) => Some(ctx.tf(
            "editor.edge.failed",
            &[
                ("size", &problem_text(ctx, &run.problem)),
                ("edge", &dims(e)),
            ],
        )),
    }
}

/// `data-edge` of the result: "passed", "failed" or "" (no second check).
fn edge_code(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Done(run) => match run.edge {
            Some(Edge::Passed(_)) => "passed",
            Some(Edge::Failed(_)) => "failed",
            None => "",
        },
        _ => "",
    }
}

/// Translation key of a family's heading in the kernel list.
fn group_key(f: Family) -> &'static str {
    match f {
        Family::Matmul => "editor.group.matmul",
        Family::Conv => "editor.group.conv",
        Family::Mlp => "editor.group.mlp",
        Family::Cnn => "editor.group.cnn",
        _ => "editor.group.measure",
    }
}

/// Opens the page on the editor (`#editor-editing` scrolled to the top) when the intro and
/// the stage links would push it out of view (`page_models::kernel_edit::land_on_editor`).
#[hook]
fn use_land_on_editor() {
    use_effect_with((), |_| {
        let window = gloo::utils::window();
        let height = window.inner_height().ok().and_then(|h| h.as_f64());
        let heading = gloo::utils::document().get_element_by_id("editor-editing");
        if let (Some(h), Some(height)) = (heading, height) {
            if page_models::kernel_edit::land_on_editor(h.get_bounding_client_rect().top(), height)
            {
                h.scroll_into_view();
            }
        }
    });
}

/// The stage the URL asks for, else the first editable one.
fn requested_target(ctx: Option<&Ctx>) -> Option<Target> {
    ctx.and_then(|c| c.query.get("stage"))
        .and_then(Target::from_id)
        .or(Target::all().first().copied())
}
#[function_component]
pub fn KernelEditor() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    use_land_on_editor();
    let target = requested_target(ctx.as_ref());
    let kernel = target.and_then(|t| t.kernel());
    let original = use_memo(target.map(|t| t.id()), move |_| {
        kernel.map(|k| k.wgsl()).unwrap_or_default()
    });
    let shared = ctx
        .as_ref()
        .and_then(|c| c.query.get("src").map(source_from_code));
    let key = draft_key("kernel", target.map(|t| t.id()).unwrap_or(""));
    let state = {
        let (original, shared, key) = (original.clone(), shared.clone(), key.clone());
        use_reducer(move || {
            EditorState::opened(match shared {
                Some(Ok(s)) => s,
                _ => load_draft(&key).unwrap_or_else(|| (*original).clone()),
            })
        })
    };
    let lifecycle = super::run_lifecycle::use_run::<()>(|| ());
    let picture = use_wrong_map(&state.outcome);
    let stage = target.map(|t| t.id()).unwrap_or_default();
    super::code_work::use_code_work("stage", stage, &state.source);
    let (Some(ctx), Some(target), Some(kernel)) = (ctx, target, kernel) else {
        return html! {};
    };
    let is_matmul = matches!(target, Target::Matmul(_));
    let size = sizes_from_query(&ctx.query).filter(|s| s.m.max(s.n).max(s.k) <= MAX_EDITOR_DIM);
    let size_ok = !is_matmul || size.is_some();
    let has_gpu = matches!(ctx.webgpu, WebGpuStatus::Available(_));
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);
    let limit_ms = timeout_ms(&ctx.query);

    let on_change = {
        let (state, key) = (state.clone(), key.clone());
        Callback::from(move |text: String| {
            save_draft(&key, Some(&text));
            state.dispatch(Action::Edited(text));
        })
    };
    let on_errors = {
        let state = state.clone();
        Callback::from(move |n| state.dispatch(Action::Errors(n)))
    };
    let reset = {
        let (state, key, original) = (state.clone(), key.clone(), original.clone());
        Callback::from(move |_| {
            save_draft(&key, None);
            state.dispatch(Action::Replace((*original).clone()));
        })
    };
    let share = {
        let (state, navigator, ctx) = (state.clone(), navigator.clone(), ctx.clone());
        Callback::from(move |_| {
            let r = share_code(&state.source);
            if let (Ok(code), Some(nav)) = (&r, &navigator) {
                let q = ctx.query.clone().with("src", code);
                super::replace_query(nav, &Route::Editor, &q);
            }
            state.dispatch(Action::Share(
                r.map(|_| gloo::utils::window().location().href().unwrap_or_default()),
            ));
        })
    };
    let run = {
        let (state, lifecycle, ctx, original) = (
            state.clone(),
            lifecycle.clone(),
            ctx.clone(),
            original.clone(),
        );
        Callback::from(move |_| {
            if !size_ok {
                return;
            }
            if state.errors > 0 {
                state.dispatch(Action::Outcome(Outcome::HasErrors(state.errors)));
                return;
            }
            let run = lifecycle.start(());
            let (flag, ctl) = (run.token().clone(), run.control(None));
            let edited = kernel.with_source(state.source.clone());
            state.dispatch(Action::Outcome(Outcome::Running));
            let (state, ctx2) = (state.clone(), ctx.clone());
            let (original, source) = ((*original).clone(), state.source.clone());
            let watchdog = Watchdog::new(limit_ms);
            let tick = timing_tick(&state, &watchdog);
            let work = check_and_run(target, edited, original, source, size, software, ctl, tick);
            // The code that ran is the learner's response in an embed's outcome.
            let (target_id, response) = (target.id(), state.source.clone());
            run_with_watchdog(work, flag, watchdog, move |r| {
                // Leaving the page makes the run stale: nothing is left to show it.
                if run.finish() {
                    page_models::outcome::set_response(response.clone());
                    show_ended(&state, &ctx2, target_id, size, limit_ms, r);
                }
            });
        })
    };

    // Cancel: nothing more is sent; the run ends as Cancelled once the piece already on the
    // GPU has finished (the watchdog still covers a piece that never does).
    let cancel = {
        let (state, lifecycle) = (state.clone(), lifecycle.clone());
        Callback::from(move |_| {
            lifecycle.token().cancel();
            state.dispatch(Action::Cancelling);
        })
    };

    let requested = ctx.query.get("stage").filter(|id| *id != target.id());
    let unknown = requested.map(|id| {
        let id: String = id.chars().take(40).collect();
        html! { <p class="message error" role="alert">{ ctx.tf("ladder.unknown_stage", &[("name", &id)]) }</p> }
    });
    let shared_error = matches!(shared, Some(Err(_))).then(
        || html! { <p class="message error" role="alert">{ ctx.t("editor.share.corrupt") }</p> },
    );
    let changed: Vec<(usize, String)> = changed_lines(&original, &state.source)
        .into_iter()
        .zip(state.source.lines())
        .enumerate()
        .filter(|(_, (c, _))| *c)
        .map(|(i, (_, l))| (i + 1, l.to_string()))
        .collect();
    let running = state.outcome == Outcome::Running;
    // A result belongs to the source and the sizes it ran on.
    let other_size = matches!(&state.outcome,
        Outcome::Done(run) if matches!(run.problem, Problem::Matmul(s) if Some(s) != size));
    let stale = state.stale() || other_size;
    let context = (!is_matmul).then(|| {
        html! { <p class="editor-context">{ ctx.t(&format!("editor.context.{}", match target.family() {
            Family::Conv => "conv", Family::Mlp => "mlp", Family::Cnn => "cnn", _ => "measure" })) }</p> }
    });
    let explained = cnn_explanation(&ctx, target.id());

    html! {
        <section class="page editor-page" data-stage={target.id()}>
            <h1>{ ctx.t("editor.heading") }</h1>
            <p class="lead">{ ctx.t("editor.intro") }</p>
            <super::EmbedButton widget="editor" extra={vec![("stage", target.id().to_string())]} />
            <p><a class="scratch-link" href={format!("#/editor?lang={}&scratch", ctx.lang.code())}>{ ctx.t("scratch.open") }</a></p>
            { for unknown }
            { for shared_error }
            { stage_nav(&ctx, &Target::all(), target) }
            <h2 id="editor-editing">{ ctx.tf("editor.editing", &[("title", ctx.t(&target.title_key()))]) }{ " — " }<code>{ kernel.source_path }</code></h2>
            { for context }
            <CodeEditor doc={AttrValue::from(state.source.clone())} revision={state.revision}
                on_change={on_change} on_errors={on_errors} external={state.external.clone()} />
            { for explained }
            if is_matmul {
                <EditorSizes />
            }
            <div class="editor-actions">
                <button id="editor-run" class="button primary" onclick={run} disabled={running || !has_gpu || !size_ok}>
                    { ctx.t("editor.run") }
                </button>
                if running {
                    <button id="editor-cancel" class="button" onclick={cancel} disabled={state.cancelling}>{ ctx.t("run.cancel") }</button>
                }
                <button class="button" onclick={reset} disabled={running}>{ ctx.t("editor.reset") }</button>
                <button class="button" onclick={share}>{ ctx.t("editor.share") }</button>
            </div>
            { if !has_gpu { html!{ <p class="message">{ ctx.t("editor.no_webgpu") }</p> } } else { html!{} } }
            { share_view(&ctx, &state.share) }
            { browser_messages_view(&ctx, &state.external) }
            <div class={classes!("editor-result", stale.then_some("stale"))} aria-live="polite"
                data-runs={state.runs.to_string()} data-stale={stale.to_string()}
                data-outcome={outcome_code(&state.outcome)} data-edge={edge_code(&state.outcome)}>
                { stale.then(|| html! { <p class="stale-note" role="status">{
                    match &state.outcome {
                        // Run waits for valid sizes: no "run again" while it cannot.
                        Outcome::Done(run) if !state.stale() => ctx.tf(if size_ok { "editor.stale_size" } else { "editor.stale_size_invalid" }, &[("size", &problem_text(&ctx, &run.problem))]),
                        _ => ctx.t("editor.stale").to_string(),
                    }
                }</p> }) }
                if state.cancelling {
                    <p class="message" role="status" data-cancelling="true">{ ctx.t("run.cancelling_first") }</p>
                } else {
                    { outcome_view(&ctx, &state.outcome, state.timing, picture) }
                }
            </div>
            <details class="editor-diff">
                <summary>{ ctx.tf("editor.diff", &[("n", &changed.len().to_string())]) }</summary>
                <pre class="source"><code>
                    { for changed.iter().map(|(n, l)| html! {
                        <span class="line changed"><span class="ln">{ *n }</span>{ l.clone() }{ "\n" }</span>
                    }) }
                </code></pre>
            </details>
        </section>
    }
}

/// M, N and K of a matmul edit, kept in the URL as the Kernels page keeps them (Share and a
/// reload keep them too); a bad value is named at its field and Run waits for a good one.
#[function_component]
fn EditorSizes() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let Some(ctx) = ctx else {
        return html! {};
    };
    let family = page_models::run_family::RunFamily::Matmul;
    let values = family.field_values(&ctx.query);
    let parsed = family.parse(&values);
    let field = |index: usize, spec: &page_models::run_family::FieldSpec| {
        // The editor's own ceiling (every element is checked on the CPU) is the one a field
        // names: the Kernels page's 8,192 would contradict the refusal.
        let over = values[index]
            .trim()
            .parse::<u64>()
            .is_ok_and(|v| v > u64::from(MAX_EDITOR_DIM));
        let error = if over {
            Some(ctx.tf(
                "editor.size_refused",
                &[("max", &numbers::count(u64::from(MAX_EDITOR_DIM)))],
            ))
        } else {
            // Out of range is said with the editor's ceiling too ("1 to 1,024", never 8,192).
            parsed.fields[index].as_ref().map(|e| match e {
                page_models::run_family::FieldError::Size(gpu_runtime::SizeError::OutOfRange {
                    min,
                    ..
                }) => super::matmul_run::field_message(
                    &ctx,
                    &page_models::run_family::FieldError::Size(
                        gpu_runtime::SizeError::OutOfRange {
                            min: *min,
                            max: MAX_EDITOR_DIM,
                        },
                    ),
                ),
                e => super::matmul_run::field_message(&ctx, e),
            })
        };
        let oninput = {
            let (navigator, ctx, key) = (navigator.clone(), ctx.clone(), spec.key);
            Callback::from(move |e: InputEvent| {
                let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                if let Some(nav) = &navigator {
                    let q = ctx.query.clone().with(key, &input.value());
                    super::replace_query(nav, &ctx.route, &q);
                }
            })
        };
        let id = format!("editor-dim-{}", spec.key);
        let err_id = format!("{id}-error");
        html! {
            <div class={classes!("field", error.is_some().then_some("invalid"))}>
                <label for={id.clone()}>{ ctx.t(spec.label_key) }</label>
                <input id={id} name={spec.key} type="text" inputmode="numeric" autocomplete="off"
                    value={values[index].clone()} {oninput}
                    aria-invalid={error.is_some().to_string()} aria-describedby={err_id.clone()} />
                <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
            </div>
        }
    };
    html! {
        <fieldset class="sizes editor-sizes">
            <legend>{ ctx.t("editor.sizes") }</legend>
            { for family.fields().iter().enumerate().map(|(i, f)| field(i, f)) }
            <p class="note">{ ctx.t("editor.sizes.note") }</p>
        </fieldset>
    }
}

/// The wrong-element map's canvas, drawn whenever a run with wrong elements is shown.
#[hook]
fn use_wrong_map(outcome: &Outcome) -> NodeRef {
    let picture = use_node_ref();
    let p = picture.clone();
    use_effect_with(outcome.clone(), move |o| {
        if let Outcome::Done(run) = o {
            if run.diff.wrong > 0 {
                draw_wrong_map(&p, &run.diff.map);
            }
        }
    });
    picture
}

/// Draws the wrong-element map: one pixel per cell (CSS scales it up without smoothing),
/// wrong cells red, darker the more of their elements are wrong, right ones pale green.
fn draw_wrong_map(canvas: &NodeRef, map: &WrongMap) {
    let Some(canvas) = canvas.cast::<web_sys::HtmlCanvasElement>() else {
        return;
    };
    canvas.set_width(map.cols);
    canvas.set_height(map.rows);
    let Ok(Some(c2d)) = canvas.get_context("2d") else {
        return;
    };
    let Ok(c2d) = c2d.dyn_into::<web_sys::CanvasRenderingContext2d>() else {
        return;
    };
    let per_cell = (map.block.0 * map.block.1).max(1) as f64;
    let mut rgba = Vec::with_capacity(map.wrong.len() * 4);
    for &w in &map.wrong {
        if w == 0 {
            rgba.extend_from_slice(&[214, 238, 214, 255]);
        } else {
            let f = (w as f64 / per_cell).min(1.0);
            let shade = (200.0 * (1.0 - f)) as u8;
            rgba.extend_from_slice(&[200 + (55.0 * f) as u8, shade / 3, shade / 3, 255]);
        }
    }
    if let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
        wasm_bindgen::Clamped(&rgba),
        map.cols,
        map.rows,
    ) {
        let _ = c2d.put_image_data(&img, 0.0, 0.0);
    }
}
fn share_view(ctx: &Ctx, share: &Option<Result<String, ShareError>>) -> Html {
    match share {
        None => html! {},
        Some(Ok(url)) => html! {
            <p class="message share-link" role="status">{ ctx.t("editor.share.done") }{ " " }<a href={url.clone()}>{ ctx.t("editor.share.link") }</a></p>
        },
        Some(Err(ShareError::TooLong { chars, limit })) => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.share.too_long", &[("chars", &chars.to_string()), ("limit", &limit.to_string())]) }</p>
        },
        Some(Err(ShareError::Corrupt)) => html! {
            <p class="message error" role="alert">{ ctx.t("editor.share.corrupt") }</p>
        },
    }
}

/// The browser's own compiler messages from the last run that the editor's error list does
/// not show (`page_models::kernel_edit::unlisted`: notes, messages without a place; the
/// others are listed there once, with their place), and the hint for all of them.
pub(super) fn browser_messages_view(ctx: &Ctx, list: &[PlacedMessage]) -> Html {
    let rest = page_models::kernel_edit::unlisted(list);
    let hint = page_models::kernel_edit::compiler_hint(list);
    if rest.is_empty() && hint.is_none() {
        return html! {};
    }
    html! {
        <div class="browser-messages" role="status">
            if !rest.is_empty() {
                <p>{ ctx.tf("editor.browser.heading", &[("n", &rest.len().to_string())]) }</p>
            }
            <ul>
                { for rest.iter().map(|m| {
                    let kind = if m.note {
                        ctx.t("editor.browser.note")
                    } else if m.warning {
                        ctx.t("editor.browser.warning")
                    } else {
                        ctx.t("editor.browser.error")
                    };
                    let place = if m.line > 0 {
                        ctx.tf("editor.browser.place", &[("line", &m.line.to_string()), ("column", &m.column.to_string())])
                    } else {
                        String::new()
                    };
                    html! {
                        <li class={classes!(if m.note { "note" } else if m.warning { "warning" } else { "error" })}
                            data-line={m.line.to_string()} data-column={m.column.to_string()}>
                            <span class="kind">{ kind }</span>{ " " }{ place }{ " " }<span class="text">{ m.message.clone() }</span>
                        </li>
                    }
                }) }
            </ul>
            { for hint.map(|h| html! {
                <p class="hint" data-hint={format!("{h:?}")}>{ ctx.t(h.key()) }</p>
            }) }
        </div>
    }
}

fn problem_text(ctx: &Ctx, p: &Problem) -> String {
    match *p {
        Problem::Matmul(s) => format!("{}×{}×{}", s.m, s.n, s.k),
        Problem::Conv {
            n,
            c,
            h,
            w,
            k,
            r,
            s,
        } => ctx.tf(
            "editor.problem.conv",
            &[
                ("input", &format!("{n}×{h}×{w}×{c}")),
                ("filter", &format!("{k}×{r}×{s}")),
            ],
        ),
        Problem::MlpStep { batch } => {
            ctx.tf("editor.problem.mlp", &[("batch", &batch.to_string())])
        }
        Problem::CnnSteps {
            batch,
            steps,
            ended,
        } => ctx.tf(
            "editor.problem.cnn",
            &[
                ("batch", &batch.to_string()),
                ("steps", &steps.to_string()),
                ("ended", &ended.to_string()),
            ],
        ),
        Problem::Measure { elements, threads } => ctx.tf(
            "editor.problem.measure",
            &[
                ("elements", &elements.to_string()),
                ("threads", &threads.to_string()),
            ],
        ),
    }
}

/// The outcome's name for `data-outcome` (tests read it instead of the words).
fn outcome_code(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Idle => "idle",
        Outcome::Running => "running",
        Outcome::Cancelled => "cancelled",
        Outcome::Done(run) if run.diff.wrong == 0 => "correct",
        Outcome::Done(_) => "wrong",
        Outcome::HasErrors(_) => "has-errors",
        Outcome::Failed(_) => "failed",
        Outcome::TimedOut(_) => "timed-out",
        Outcome::LoopStopped { .. } => "loop-stopped",
        Outcome::Bindings(_) => "bindings",
    }
}

fn outcome_view(ctx: &Ctx, outcome: &Outcome, timing: (u32, u32), picture: NodeRef) -> Html {
    match outcome {
        Outcome::Idle => html! {},
        Outcome::Cancelled => html! {
            <p class="message" role="status" data-cancelled="true">{ ctx.t("run.cancelled") }</p>
        },
        Outcome::Running => {
            let (done, total) = timing;
            html! { <p class="message" role="status" data-timed={done.to_string()} data-planned={total.to_string()}>{
                if total > 0 {
                    ctx.tf("editor.timing_progress", &[("done", &done.to_string()), ("total", &total.to_string())])
                } else {
                    ctx.t("editor.running").to_string()
                }
            }</p> }
        }
        Outcome::HasErrors(n) => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.has_errors", &[("n", &n.to_string())]) }</p>
        },
        Outcome::Failed(m) => html! { <p class="message error" role="alert">{ m.clone() }</p> },
        Outcome::Bindings(list) => html! {
            <div class="message error binding-problems" role="alert">
                <p>{ ctx.t("editor.bind.heading") }</p>
                <ul>
                    { for list.iter().map(|p| html! {
                        <li data-kind={p.kind.clone()}>{ ctx.tf(p.key(), &p.args()) }</li>
                    }) }
                </ul>
            </div>
        },
        Outcome::TimedOut(ms) => html! {
            <p class="message error timed-out" role="alert">{ ctx.tf("editor.timed_out", &[("s", &format!("{}", *ms as f64 / 1000.0))]) }</p>
        },
        Outcome::LoopStopped { line, budget } => html! {
            <p class="message error loop-stopped" role="alert" data-line={line.to_string()}>
                { loop_stopped_text(ctx, *line, *budget) }
            </p>
        },
        Outcome::Done(run) => {
            let run: &EditedRun = run;
            let times = times_view(ctx, run);
            let d = &run.diff;
            let edge = edge_text(ctx, run);
            if d.wrong == 0 {
                html! {
                    <div class="verdict ok">
                        <p>{ ctx.t("editor.correct") }</p>
                        { for edge.map(|t| html! { <p class="edge-note">{ t }</p> }) }
                        { times }
                    </div>
                }
            } else {
                let (rows, cols) = run.layout.picture();
                let caption = if d.map.block == (1, 1) {
                    ctx.tf(
                        "editor.map.caption",
                        &[
                            ("rows", &rows.to_string()),
                            ("cols", &cols.to_string()),
                            ("cells", &d.map.marked().to_string()),
                        ],
                    )
                } else {
                    ctx.tf(
                        "editor.map.caption_blocks",
                        &[
                            ("rows", &rows.to_string()),
                            ("cols", &cols.to_string()),
                            ("h", &d.map.block.0.to_string()),
                            ("w", &d.map.block.1.to_string()),
                            ("cells", &d.map.marked().to_string()),
                        ],
                    )
                };
                html! {
                    <div class="verdict wrong">
                        <p role="alert">{ ctx.tf("editor.wrong", &[("wrong", &d.wrong.to_string()), ("total", &d.total.to_string())]) }</p>
                        { for edge.map(|t| html! { <p class="edge-note">{ t }</p> }) }
                        <div class="wrong-layout">
                            <table class="differences">
                                <thead><tr>
                                    <th>{ ctx.t("editor.col.element") }</th>
                                    <th>{ ctx.t("editor.col.expected") }</th>
                                    <th>{ ctx.t("editor.col.got") }</th>
                                </tr></thead>
                                <tbody>
                                    { for d.first.iter().map(|e| {
                                        let (expected, got) = numbers::pair(e.expected, f64::from(e.got));
                                        html! {
                                            <tr>
                                                <td>{ e.label.clone() }</td>
                                                <td>{ expected }</td>
                                                <td>{ got }</td>
                                            </tr>
                                        }
                                    }) }
                                </tbody>
                            </table>
                            <figure class="wrong-map">
                                <canvas ref={picture} class="wrong-map-canvas" data-rows={d.map.rows.to_string()} data-cols={d.map.cols.to_string()}
                                    data-marked={d.map.marked().to_string()} role="img" aria-label={caption.clone()}></canvas>
                                <figcaption>{ caption }</figcaption>
                            </figure>
                        </div>
                        { times }
                    </div>
                }
            }
        }
    }
}

/// The two kernels' times: each side's median and range over its timed runs, how they were
/// taken, and what they allow one to say (`page_models::timing::verdict`). The numbers are
/// on `data-*` too, unrounded, for tests to hold the words to them.
fn times_view(ctx: &Ctx, run: &EditedRun) -> Html {
    use page_models::timing::{factor, verdict, Verdict};
    let spread = |s: &Spread| {
        ctx.tf(
            "editor.time.spread",
            &[
                ("median", &numbers::ms(s.median)),
                ("min", &numbers::ms(s.min)),
                ("max", &numbers::ms(s.max)),
                ("runs", &s.runs.to_string()),
            ],
        )
    };
    let data =
        |s: Option<&Spread>, f: fn(&Spread) -> f64| s.map(|s| f(s).to_string()).unwrap_or_default();
    let (mine, theirs) = (run.time.as_ref(), run.original_time.as_ref());
    let judged = mine.zip(theirs).map(|(m, o)| (verdict(m, o), factor(m, o)));
    let words = judged.map(|(v, f)| {
        let f = numbers::rate(f);
        match v {
            Verdict::Same => ctx.t("editor.time.same").to_string(),
            Verdict::EditedFaster => ctx.tf("editor.time.faster", &[("factor", &f)]),
            Verdict::EditedSlower => ctx.tf("editor.time.slower", &[("factor", &f)]),
            Verdict::TooFew => ctx.t("editor.time.too_few").to_string(),
        }
    });
    let how = mine.map(|m| {
        let key = match run.method {
            gpu_runtime::TimingMethod::Timestamps => "editor.time.how_timestamps",
            gpu_runtime::TimingMethod::WallClock => "editor.time.how_wall",
        };
        ctx.tf(key, &[("runs", &m.runs.to_string())])
    });
    html! {
        <div class="editor-times"
            data-verdict={judged.map_or("", |(v, _)| v.code())}
            data-edited-runs={data(mine, |s| f64::from(s.runs))} data-edited-median={data(mine, |s| s.median)}
            data-edited-min={data(mine, |s| s.min)} data-edited-max={data(mine, |s| s.max)}
            data-original-runs={data(theirs, |s| f64::from(s.runs))} data-original-median={data(theirs, |s| s.median)}
            data-original-min={data(theirs, |s| s.min)} data-original-max={data(theirs, |s| s.max)}>
            <p class="time-edited">
                { ctx.tf("editor.time.edited", &[("size", &problem_text(ctx, &run.problem))]) }{ " " }
                { mine.map_or_else(|| ctx.t("editor.time.failed").to_string(), spread) }
            </p>
            <p class="time-original">{ match theirs {
                Some(o) => ctx.tf("editor.time.original", &[("spread", &spread(o))]),
                None => ctx.t("editor.time.original_failed").to_string(),
            } }</p>
            { for words.map(|w| html! { <p class="time-verdict">{ w }</p> }) }
            { for how.map(|h| html! { <p class="note">{ h }</p> }) }
        </div>
    }
}

/// "The loop at line {line} ran past {budget} iterations, so it was stopped; the result is
/// not verified." (scratch mode and puzzles say the same).
pub fn loop_stopped_text(ctx: &Ctx, line: u32, budget: u32) -> String {
    ctx.tf(
        "editor.loop_stopped",
        &[
            ("line", &line.to_string()),
            ("budget", &numbers::count(u64::from(budget))),
        ],
    )
}

/// What Run does after the editor's own check: naga compares the bindings and entry point
/// with the original's (a mismatch is named in words and nothing reaches the GPU); then the
/// browser's compiler gives its messages (shown beside naga's; errors stop the run); then the
/// loops get their budget and the edited kernel runs beside the original. Returns the
/// browser's messages with the result.
/// Called after each finished timed run: the watchdog's limit starts again for the next run and
/// the page counts the runs done.
fn timing_tick(state: &UseReducerHandle<EditorState>, watchdog: &Watchdog) -> Tick {
    let (state, watchdog) = (state.clone(), watchdog.clone());
    Rc::new(move |done, total| {
        watchdog.alive();
        state.dispatch(Action::Timing(done, total));
    })
}

/// What an ended run (None: it timed out) shows: the compiler's messages placed in the source,
/// the `run-finished` report to an embedding page, and the outcome.
fn show_ended(
    state: &UseReducerHandle<EditorState>,
    ctx: &Ctx,
    target_id: &'static str,
    size: Option<cpu_kernels::matmul::MatmulSize>,
    limit_ms: u32,
    r: Option<(Vec<PlacedMessage>, Result<EditedRun, RunError>)>,
) {
    let (browser, r) = match r {
        Some((b, r)) => (b, Some(r)),
        None => (Vec::new(), None),
    };
    let placed = match &r {
        Some(Err(RunError::Gpu(GpuError::Shader(m)))) if browser.is_empty() => placed_messages(m),
        _ => browser,
    };
    state.dispatch(Action::Compiler(placed));
    page_models::embed::report(run_report(target_id, size, &r));
    state.dispatch(Action::Outcome(run_outcome(ctx, limit_ms, r)));
}

/// The browser's own compiler's messages about `kernel`, placed in `source`'s UTF-16
/// columns for the editor's list and underlines (editor, puzzles and scratch alike: the
/// browser may refuse what naga accepted, e.g. a barrier in non-uniform control flow).
pub(super) async fn browser_placed(
    gpu: &gpu_runtime::Gpu,
    kernel: &gpu_runtime::KernelSpec,
    source: &str,
) -> Vec<PlacedMessage> {
    use gpu_runtime::wgpu::CompilationMessageType as T;
    gpu.compilation_messages(kernel)
        .await
        .iter()
        .map(|m| PlacedMessage {
            note: m.message_type == T::Info,
            ..browser_message(
                source,
                m.location.map_or(0, |l| l.line_number),
                m.location.map(|l| l.offset as usize),
                &m.message,
                m.message_type != T::Error,
            )
        })
        .collect()
}

/// Whether the browser's compiler refused the kernel (an error, not only warnings).
pub(super) fn rejected(list: &[PlacedMessage]) -> bool {
    list.iter().any(|m| !m.warning)
}

#[allow(clippy::too_many_arguments)]
async fn check_and_run(
    target: Target,
    edited: gpu_runtime::KernelSpec,
    original: String,
    source: String,
    size: Option<cpu_kernels::matmul::MatmulSize>,
    software: bool,
    ctl: RunControl,
    tick: Tick,
) -> (Vec<PlacedMessage>, Result<EditedRun, RunError>) {
    if let Ok(problems) =
        super::code_editor::binding_check(&original, &source, edited.entry_point).await
    {
        if !problems.is_empty() {
            return (Vec::new(), Err(RunError::Bindings(problems)));
        }
    }
    let gpu = match session::gpu(software).await {
        Ok((g, _)) => g,
        Err(e) => return (Vec::new(), Err(RunError::Gpu(e))),
    };
    let browser = browser_placed(&gpu, &edited, &source).await;
    if rejected(&browser) {
        return (browser, Err(RunError::Compiler));
    }
    // Every loop of the learner's kernel gets an iteration budget (the browser's
    // messages above are about the learner's own text, so their lines are right); the
    // original gets the same, so the two are timed with the same counters.
    let original_kernel = edited.with_source(original.clone());
    let (budgeted, original) = match page_models::edit_target::loop_budget_for(target, size) {
        Some(b) => match super::code_editor::budget_loops(&source, b).await {
            Ok(k) => {
                let theirs = super::code_editor::budget_loops(&original, b)
                    .await
                    .ok()
                    .map(|o| Budgeted {
                        kernel: original_kernel.with_source(o.source.clone()),
                        flag: Some(o.flag()),
                    });
                (Some(k), theirs)
            }
            Err(e) => return (browser, Err(RunError::Budget(e))),
        },
        None => (
            None,
            Some(Budgeted {
                kernel: original_kernel,
                flag: None,
            }),
        ),
    };
    let edited = match &budgeted {
        Some(k) => Budgeted {
            kernel: edited.with_source(k.source.clone()),
            flag: Some(k.flag()),
        },
        None => Budgeted {
            kernel: edited,
            flag: None,
        },
    };
    let r = run_target(target, edited, original, size, ctl, software, tick)
        .await
        .map_err(RunError::Gpu)
        .and_then(
            |run| match budgeted.as_ref().and_then(|k| k.stopped_line(&run.flag)) {
                Some(line) => Err(RunError::LoopStopped {
                    line,
                    budget: budgeted.as_ref().map_or(0, |k| k.budget),
                }),
                None => Ok(run),
            },
        );
    (browser, r)
}

/// What a run reports to an embedding page (`None`: it timed out).
fn run_report(
    target_id: &str,
    size: Option<cpu_kernels::matmul::MatmulSize>,
    r: &Option<Result<EditedRun, RunError>>,
) -> Result<page_models::embed::Report, String> {
    match r {
        Some(Ok(run)) => Ok(editor_report(target_id, size, run)),
        None => Err("timed out".into()),
        Some(Err(RunError::Gpu(e))) => Err(e.to_string()),
        Some(Err(RunError::Bindings(_))) => Err("binding mismatch".into()),
        Some(Err(RunError::Compiler)) => Err("compile error".into()),
        Some(Err(RunError::Budget(e))) => Err(e.clone()),
        Some(Err(RunError::LoopStopped { .. })) => Err("loop budget spent".into()),
    }
}

/// What a run shows (`None`: the watchdog stopped it after `limit_ms`).
fn run_outcome(ctx: &Ctx, limit_ms: u32, r: Option<Result<EditedRun, RunError>>) -> Outcome {
    match r {
        None => Outcome::TimedOut(limit_ms),
        Some(Ok(run)) => Outcome::Done(Box::new(run)),
        Some(Err(RunError::Gpu(GpuError::Cancelled))) => Outcome::Cancelled,
        Some(Err(RunError::Gpu(e))) => Outcome::Failed(error_text(ctx, &e)),
        Some(Err(RunError::Bindings(p))) => Outcome::Bindings(p),
        Some(Err(RunError::Compiler)) => {
            Outcome::Failed(ctx.t("editor.browser.rejected").to_string())
        }
        Some(Err(RunError::Budget(e))) => Outcome::Failed(ctx.tf(
            "editor.loop_budget_failed",
            &[("why", &super::code_editor::editor_error(ctx, &e))],
        )),
        Some(Err(RunError::LoopStopped { line, budget })) => Outcome::LoopStopped { line, budget },
    }
}

/// The stages one can edit, by family, the one shown marked.
fn stage_nav(ctx: &Ctx, targets: &[Target], target: Target) -> Html {
    let groups = GROUPS.iter().map(|&f| {
        let links = targets.iter().filter(|t| t.family() == f).map(|t| {
            html! {
                <li><a href={href(ctx, t.id())} aria-current={(t.id() == target.id()).then_some("page")}>{ ctx.t(&t.title_key()) }</a></li>
            }
        });
        html! {
            <li class="editor-group">
                <span class="editor-group-name">{ ctx.t(group_key(f)) }</span>
                <ul class="editor-stages">{ for links }</ul>
            </li>
        }
    });
    html! {
        <nav aria-label={ctx.t("editor.stages")}><ul class="editor-groups">{ for groups }</ul></nav>
    }
}

/// A CNN kernel explained as on the CNN page: what it computes, how its threads map (None for
/// another family's kernel).
fn cnn_explanation(ctx: &Ctx, id: &str) -> Option<Html> {
    page_models::cnn::kernels::KERNELS
        .iter()
        .find(|k| k.id == id)
        .map(|k| {
            html! {
                <details id="editor-cnn-mapping" class="editor-explained" open=true>
                    <summary>{ ctx.t("cnn.kernel.what") }</summary>
                    <p>{ ctx.t(&k.what_key()) }</p>
                    <h3>{ ctx.t("cnn.kernel.mapping") }</h3>
                    <p>{ ctx.t(&k.mapping_key()) }</p>
                </details>
            }
        })
}
