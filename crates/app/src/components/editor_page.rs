//! `#/editor?stage=<kernel>`: edit a ladder stage's WGSL and run it beside the original.
//! Run = naga's check in the editor → the browser compiles it → it runs on the stage's seeded
//! inputs → checked against the CPU reference → timed, then the original runs on the same
//! inputs. Drafts live in local storage; Share puts the source, deflated, in the URL (`src`).

use std::cell::Cell;
use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use gpu_runtime::cpu_kernels::matmul::{self, MatmulSize};
use gpu_runtime::{CancelToken, Family, GpuError, KernelSpec, RunControl, RunOptions};

use super::code_editor::CodeEditor;
use super::matmul_run::sizes_from_query;
use super::Ctx;
use crate::kernel_edit::{
    differences, draft_key, placed_messages, share_code, source_from_code, Difference,
    PlacedMessage, ShareError,
};
use crate::probe::WebGpuStatus;
use crate::route::Route;
use crate::source_view::changed_lines;
use crate::{format, session};

/// Largest side the editor runs: the full CPU reference and the difference list are computed
/// for every element (1024³ f64 multiply-adds take a few seconds in wasm).
pub const MAX_EDITOR_DIM: u32 = 1024;
/// A run that has not finished after this long is stopped and its device dropped.
pub const RUN_TIMEOUT_MS: u32 = 20_000;
/// Wrong elements listed.
const SHOWN: usize = 8;

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

pub fn load_draft(key: &str) -> Option<String> {
    storage()?.get_item(key).ok().flatten()
}

pub fn save_draft(key: &str, text: Option<&str>) {
    if let Some(s) = storage() {
        let _ = match text {
            Some(t) => s.set_item(key, t),
            None => s.remove_item(key),
        };
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct EditedRun {
    pub wrong: usize,
    pub total: usize,
    pub first: Vec<Difference>,
    pub ms: f64,
    pub method: gpu_runtime::TimingMethod,
    pub original_ms: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Idle,
    Running,
    Done(Box<EditedRun>),
    HasErrors(usize),
    Failed(String),
    TimedOut,
}

/// The page's state, changed by the editor, Run, Reset and Share.
#[derive(Clone, Debug, PartialEq)]
pub struct EditorState {
    pub source: String,
    pub revision: u32,
    pub errors: usize,
    pub outcome: Outcome,
    pub share: Option<Result<String, ShareError>>,
    /// Placed messages of the browser's compiler from the last run.
    pub external: Rc<Vec<PlacedMessage>>,
}

pub enum Action {
    Edited(String),
    Replace(String),
    Errors(usize),
    Outcome(Outcome),
    Share(Result<String, ShareError>),
    Compiler(Vec<PlacedMessage>),
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
            }
            Action::Errors(n) => s.errors = n,
            Action::Outcome(o) => s.outcome = o,
            Action::Share(r) => s.share = Some(r),
            Action::Compiler(list) => s.external = Rc::new(list),
        }
        Rc::new(s)
    }
}

/// Runs the edited kernel, then the original, on the same seeded inputs.
async fn run_both(
    original: &'static KernelSpec,
    edited: KernelSpec,
    size: MatmulSize,
    ctl: RunControl,
    software: bool,
) -> Result<EditedRun, GpuError> {
    let (gpu, _) = session::gpu(software).await?;
    let (a, b) = size.inputs(1);
    let job = gpu_runtime::Job::Matmul { size, a: &a, b: &b };
    let out = gpu
        .run_with(&edited, &job, &RunOptions::default(), &ctl)
        .await?;
    let reference = matmul::reference(size, &a, &b);
    let (wrong, first) = differences(size, &out.output, &reference, edited.precision, SHOWN);
    let original_ms = gpu
        .run_with(original, &job, &RunOptions::default(), &ctl)
        .await
        .ok()
        .map(|o| o.timing.kernel_ms());
    Ok(EditedRun {
        wrong,
        total: size.c_len(),
        first,
        ms: out.timing.kernel_ms(),
        method: out.timing.method,
        original_ms,
    })
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
pub fn run_with_timeout<F, T>(work: F, cancel: CancelToken, finish: impl Fn(Option<T>) + 'static)
where
    F: std::future::Future<Output = T> + 'static,
    T: 'static,
{
    let settled = Rc::new(Cell::new(false));
    let finish = Rc::new(finish);
    {
        let (settled, finish) = (settled.clone(), finish.clone());
        wasm_bindgen_futures::spawn_local(async move {
            gloo::timers::future::TimeoutFuture::new(RUN_TIMEOUT_MS).await;
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

fn href(ctx: &Ctx, id: &str) -> String {
    format!("#/editor?lang={}&stage={id}", ctx.lang.code())
}

/// `run-finished` of an edited stage (docs/embedding.md): its time beside the original's and
/// how many output elements differ from the original's result.
fn editor_report(
    stage: &str,
    size: gpu_runtime::cpu_kernels::matmul::MatmulSize,
    run: &EditedRun,
) -> crate::embed::Report {
    use crate::embed::Field;
    let mut r = vec![
        ("stage", Field::Str(stage.into())),
        ("m", Field::Num(size.m as f64)),
        ("n", Field::Num(size.n as f64)),
        ("k", Field::Num(size.k as f64)),
        ("ms", Field::Num(run.ms)),
        ("wrong", Field::Num(run.wrong as f64)),
        ("checked", Field::Num(run.total as f64)),
        ("verified", Field::Bool(run.wrong == 0)),
    ];
    if let Some(o) = run.original_ms {
        r.push(("originalMs", Field::Num(o)));
    }
    r
}

#[function_component]
pub fn KernelEditor() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let stages: Vec<&'static KernelSpec> =
        KernelSpec::ladder(Family::Matmul).map(|(_, k)| k).collect();
    let requested = ctx
        .as_ref()
        .and_then(|c| c.query.get("stage").map(str::to_string));
    let kernel = requested
        .as_deref()
        .and_then(|id| stages.iter().copied().find(|k| k.id == id))
        .or(stages.first().copied());
    let original = use_memo(kernel.map(|k| k.id), move |_| {
        kernel.map(|k| k.wgsl()).unwrap_or_default()
    });
    let shared = ctx
        .as_ref()
        .and_then(|c| c.query.get("src").map(source_from_code));
    let key = draft_key("kernel", kernel.map(|k| k.id).unwrap_or(""));
    let state = {
        let (original, shared, key) = (original.clone(), shared.clone(), key.clone());
        use_reducer(move || EditorState {
            source: match shared {
                Some(Ok(s)) => s,
                _ => load_draft(&key).unwrap_or_else(|| (*original).clone()),
            },
            revision: 0,
            errors: 0,
            outcome: Outcome::Idle,
            share: None,
            external: Rc::default(),
        })
    };
    let cancel = super::matmul_run::use_cancel_on_unmount();
    let (Some(ctx), Some(kernel)) = (ctx, kernel) else {
        return html! {};
    };
    let size = sizes_from_query(&ctx.query).filter(|s| s.m.max(s.n).max(s.k) <= MAX_EDITOR_DIM);
    let has_gpu = matches!(ctx.webgpu, WebGpuStatus::Available(_));
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);

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
        let (state, cancel, ctx) = (state.clone(), cancel.clone(), ctx.clone());
        Callback::from(move |_| {
            let Some(size) = size else { return };
            if state.errors > 0 {
                state.dispatch(Action::Outcome(Outcome::HasErrors(state.errors)));
                return;
            }
            let flag = CancelToken::new();
            *cancel.borrow_mut() = flag.clone();
            let ctl = RunControl {
                cancel: flag.clone(),
                ..Default::default()
            };
            let edited = kernel.with_source(state.source.clone());
            state.dispatch(Action::Outcome(Outcome::Running));
            let state = state.clone();
            let ctx2 = ctx.clone();
            run_with_timeout(
                run_both(kernel, edited, size, ctl, software),
                flag,
                move |r| {
                    let placed = match &r {
                        Some(Err(GpuError::Shader(m))) => placed_messages(m),
                        _ => Vec::new(),
                    };
                    state.dispatch(Action::Compiler(placed));
                    super::embed::report(match &r {
                        Some(Ok(run)) => Ok(editor_report(kernel.id, size, run)),
                        None => Err("timed out".into()),
                        Some(Err(e)) => Err(e.to_string()),
                    });
                    let o = match r {
                        None => Outcome::TimedOut,
                        Some(Ok(run)) => Outcome::Done(Box::new(run)),
                        Some(Err(GpuError::Cancelled)) => Outcome::Idle,
                        Some(Err(e)) => Outcome::Failed(error_text(&ctx2, &e)),
                    };
                    state.dispatch(Action::Outcome(o));
                },
            );
        })
    };

    let links = stages.iter().map(|k| {
        html! {
            <li><a href={href(&ctx, k.id)} aria-current={(k.id == kernel.id).then_some("page")}>{ ctx.t(k.title_key) }</a></li>
        }
    });
    let unknown = requested.filter(|id| id != kernel.id).map(|id| {
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

    html! {
        <section class="page editor-page">
            <h1>{ ctx.t("editor.heading") }</h1>
            <p class="lead">{ ctx.t("editor.intro") }</p>
            <super::EmbedButton widget="editor" extra={vec![("stage", kernel.id.to_string())]} />
            { for unknown }
            { for shared_error }
            <nav aria-label={ctx.t("editor.stages")}><ul class="editor-stages">{ for links }</ul></nav>
            <h2>{ ctx.tf("editor.editing", &[("title", ctx.t(kernel.title_key))]) }{ " — " }<code>{ kernel.source_path }</code></h2>
            <CodeEditor doc={AttrValue::from(state.source.clone())} revision={state.revision}
                on_change={on_change} on_errors={on_errors} external={state.external.clone()} />
            <div class="editor-actions">
                <button id="editor-run" class="button primary" onclick={run} disabled={running || !has_gpu || size.is_none()}>
                    { ctx.t("editor.run") }
                </button>
                <button class="button" onclick={reset} disabled={running}>{ ctx.t("editor.reset") }</button>
                <button class="button" onclick={share}>{ ctx.t("editor.share") }</button>
            </div>
            { if size.is_none() { html!{ <p class="message error" role="alert">{ ctx.tf("editor.size_refused", &[("max", &MAX_EDITOR_DIM.to_string())]) }</p> } } else { html!{} } }
            { if !has_gpu { html!{ <p class="message">{ ctx.t("editor.no_webgpu") }</p> } } else { html!{} } }
            { share_view(&ctx, &state.share) }
            <div class="editor-result" aria-live="polite">{ outcome_view(&ctx, &state.outcome, size) }</div>
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

fn outcome_view(ctx: &Ctx, outcome: &Outcome, size: Option<MatmulSize>) -> Html {
    match outcome {
        Outcome::Idle => html! {},
        Outcome::Running => {
            html! { <p class="message" role="status">{ ctx.t("editor.running") }</p> }
        }
        Outcome::HasErrors(n) => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.has_errors", &[("n", &n.to_string())]) }</p>
        },
        Outcome::Failed(m) => html! { <p class="message error" role="alert">{ m.clone() }</p> },
        Outcome::TimedOut => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.timed_out", &[("s", &(RUN_TIMEOUT_MS / 1000).to_string())]) }</p>
        },
        Outcome::Done(run) => {
            let dims = size
                .map(|s| format!("{}×{}×{}", s.m, s.n, s.k))
                .unwrap_or_default();
            let times = html! {
                <p class="editor-times">
                    { ctx.tf("editor.time.edited", &[("size", &dims)]) }
                    { " " }
                    { match run.method {
                        gpu_runtime::TimingMethod::Timestamps => ctx.tf("run.time.timestamps", &[("ms", &format::ms(run.ms))]),
                        gpu_runtime::TimingMethod::WallClock => ctx.tf("run.time.wall", &[("ms", &format::ms(run.ms))]),
                    } }
                    { " · " }
                    { match run.original_ms {
                        Some(o) => ctx.tf("editor.time.original", &[("ms", &format::ms(o))]),
                        None => ctx.t("editor.time.original_failed").to_string(),
                    } }
                </p>
            };
            if run.wrong == 0 {
                html! { <div class="verdict ok"><p>{ ctx.t("editor.correct") }</p>{ times }</div> }
            } else {
                html! {
                    <div class="verdict wrong">
                        <p role="alert">{ ctx.tf("editor.wrong", &[("wrong", &run.wrong.to_string()), ("total", &run.total.to_string())]) }</p>
                        <table class="differences">
                            <thead><tr>
                                <th>{ ctx.t("editor.col.element") }</th>
                                <th>{ ctx.t("editor.col.expected") }</th>
                                <th>{ ctx.t("editor.col.got") }</th>
                            </tr></thead>
                            <tbody>
                                { for run.first.iter().map(|d| html! {
                                    <tr>
                                        <td>{ format!("C[{}][{}]", d.row, d.col) }</td>
                                        <td>{ format!("{:.4}", d.expected) }</td>
                                        <td>{ format!("{:.4}", d.got) }</td>
                                    </tr>
                                }) }
                            </tbody>
                        </table>
                        { times }
                    </div>
                }
            }
        }
    }
}
