//! `#/editor?scratch`: a blank compute shader over buffers the learner declares in a table
//! (`page_models::scratch` checks every field and writes the WGSL declarations into the source),
//! run as a one-step `Plan` (every buffer read back; `page_models::scratch_run` builds it), results
//! as a table and a heatmap.
//! The setup is kept in local storage and shared in the URL (`src`, the same share code as
//! the kernel editor).

use std::rc::Rc;

use wasm_bindgen::JsCast;
use yew::prelude::*;
use yew_router::prelude::*;

use gpu_runtime::{GpuError, RunControl, RunOptions};

use super::code_editor::CodeEditor;
use super::draft_input::DraftInput;
use super::editor_page::{
    browser_messages_view, browser_placed, error_text, load_draft, rejected, run_with_timeout,
    save_draft, timeout_ms,
};
use super::Ctx;
use crate::probe::WebGpuStatus;
use crate::route::Route;
use crate::session;
use page_models::kernel_edit::{
    draft_key, share_code, source_from_code, PlacedMessage, ShareError,
};
use page_models::scratch::{
    check, declarations, from_text, starter, to_text, with_declarations, BufferDecl, Comments,
    ElemType, InitKind, Ready, Scratch,
};
use page_models::scratch_run;

/// Elements shown in each buffer's table.
const TABLE: usize = 256;
/// Columns of the table and of the heatmap.
const COLS: usize = 16;

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Idle,
    Running,
    Done {
        results: Rc<Vec<(String, ElemType, Vec<u32>)>>,
        ms: f64,
    },
    Failed(String),
    TimedOut(u32),
    /// A loop ran out of its budget; the buffers are not shown (not a finished result).
    LoopStopped {
        line: u32,
        budget: u32,
    },
    /// The browser's compiler refused the kernel (listed and underlined).
    Rejected(Rc<Vec<PlacedMessage>>),
    /// Cancel was pressed; the GPU work already sent has finished.
    Cancelled,
}

impl Outcome {
    /// For `data-outcome` (tests, and the cancelled state a screen reader hears).
    fn code(&self) -> &'static str {
        match self {
            Outcome::Idle => "idle",
            Outcome::Running => "running",
            Outcome::Done { .. } => "done",
            Outcome::Failed(_) => "failed",
            Outcome::TimedOut(_) => "timed-out",
            Outcome::LoopStopped { .. } => "loop-stopped",
            Outcome::Rejected(_) => "rejected",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// What a scratch run gave back.
enum ScratchRun {
    Done(Vec<(String, ElemType, Vec<u32>)>, f64),
    LoopStopped {
        line: u32,
        budget: u32,
    },
    /// The browser's compiler refused the kernel: its placed messages.
    Rejected(Vec<PlacedMessage>),
}

async fn run_scratch(
    ready: Ready,
    source: String,
    software: bool,
    ctl: RunControl,
) -> Result<ScratchRun, GpuError> {
    // Every loop of the learner's kernel gets an iteration budget and a flag buffer bound
    // after the table's buffers.
    let budget = scratch_run::loop_budget(&ready);
    let budgeted = super::code_editor::budget_loops(&source, budget)
        .await
        .map_err(|e| GpuError::Dispatch(format!("loop budget: {e}")))?;
    if budgeted.flag_binding as usize != ready.buffers.len() {
        return Err(GpuError::Dispatch(format!(
            "loop budget: the kernel's bindings end at {}, the table has {} buffers",
            budgeted.flag_binding,
            ready.buffers.len()
        )));
    }
    let spec = scratch_run::spec(budgeted.source.clone()).ok_or(GpuError::WrongJob)?;
    let (gpu, _) = session::gpu(software).await?;
    // The browser's own compiler on the learner's text (its lines are the learner's).
    if let Some(own) = scratch_run::spec(source.clone()) {
        let said = browser_placed(&gpu, &own, &source).await;
        if rejected(&said) {
            return Ok(ScratchRun::Rejected(said));
        }
    }
    let limit = gpu
        .limits()
        .max_storage_buffer_binding_size
        .min(gpu.limits().max_buffer_size);
    if let Some(b) = scratch_run::oversized(&ready, limit) {
        return Err(GpuError::Dispatch(format!(
            "buffer {} needs {} bytes, over this device's limit of {limit}",
            b.name,
            b.bits.len() * 4
        )));
    }
    let plan = scratch_run::plan(&ready, &spec, budgeted.flag_words);
    let out = gpu.run_plan(&plan, &RunOptions::default(), &ctl).await?;
    let words = out.words(gpu_runtime::LOOP_FLAG);
    if let Some(line) = budgeted.stopped_line(&words) {
        return Ok(ScratchRun::LoopStopped { line, budget });
    }
    let results = scratch_run::results(&ready, |name| out.bytes(name));
    Ok(ScratchRun::Done(results, out.timing.kernel_ms()))
}

/// The starter's comments from the translation files.
fn starter_comments(ctx: &Ctx) -> Comments {
    Comments {
        intro: ctx.t("scratch.starter.intro").to_string(),
        table_note: ctx.t("scratch.starter.table_note").to_string(),
    }
}

#[derive(Clone, Debug, PartialEq)]
struct State {
    scratch: Scratch,
    /// The starter's comments in the page's language (the reducer has no context to ask).
    comments: Comments,
    revision: u32,
    errors: usize,
}

/// Every action is an edit applied to the state the reducer holds, never a whole table built
/// from the snapshot a callback captured: two changes that arrive before the page redraws
/// (a busy machine, fast typing) must both land.
enum Action {
    Source(String),
    /// One field of one buffer; the declarations in the source follow the table.
    EditBuffer(usize, fn(&mut BufferDecl, String), String),
    AddBuffer,
    RemoveBuffer(usize),
    Group(usize, String),
    Errors(usize),
    /// Back to the starter (source, table and groups).
    Reset,
}

impl Reducible for State {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        let mut buffers = None;
        match action {
            Action::Source(t) => {
                if t == s.scratch.source {
                    return self;
                }
                s.scratch.source = t;
            }
            Action::EditBuffer(i, f, v) => {
                let mut b = s.scratch.buffers.clone();
                if let Some(d) = b.get_mut(i) {
                    f(d, v);
                }
                buffers = Some(b);
            }
            Action::AddBuffer => {
                let mut b = s.scratch.buffers.clone();
                b.push(BufferDecl {
                    name: format!("buf{}", b.len()),
                    ty: ElemType::F32,
                    len: "256".into(),
                    init: InitKind::Zeros,
                    arg: String::new(),
                });
                buffers = Some(b);
            }
            Action::RemoveBuffer(i) => {
                let mut b = s.scratch.buffers.clone();
                if i < b.len() {
                    b.remove(i);
                }
                buffers = Some(b);
            }
            Action::Group(axis, v) => {
                if let Some(g) = s.scratch.groups.get_mut(axis) {
                    *g = v;
                }
            }
            Action::Errors(n) => s.errors = n,
            Action::Reset => {
                let fresh = starter(&s.comments);
                s.scratch.groups = fresh.groups;
                s.scratch.source = fresh.source;
                buffers = Some(fresh.buffers);
            }
        }
        if let Some(b) = buffers {
            s.scratch.source = with_declarations(&s.scratch.source, &declarations(&b, &s.comments));
            s.scratch.buffers = b;
            s.revision += 1;
        }
        Rc::new(s)
    }
}

fn input_value(e: &Event) -> String {
    e.target()
        .and_then(|t| {
            t.dyn_ref::<web_sys::HtmlInputElement>()
                .map(|i| i.value())
                .or_else(|| t.dyn_ref::<web_sys::HtmlSelectElement>().map(|s| s.value()))
        })
        .unwrap_or_default()
}

#[function_component]
pub fn ScratchEditor() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let key = draft_key("scratch", "main");
    let shared = ctx
        .as_ref()
        .and_then(|c| c.query.get("src").map(source_from_code));
    let shared_bad =
        matches!(&shared, Some(Err(_))) || matches!(&shared, Some(Ok(t)) if from_text(t).is_none());
    let state = {
        let (key, shared) = (key.clone(), shared.clone());
        let comments = ctx.as_ref().map(starter_comments).unwrap_or_default();
        use_reducer(move || State {
            scratch: shared
                .and_then(|r| r.ok())
                .and_then(|t| from_text(&t))
                .or_else(|| load_draft(&key).and_then(|t| from_text(&t)))
                .unwrap_or_else(|| starter(&comments)),
            comments,
            revision: 0,
            errors: 0,
        })
    };
    let outcome = use_state(|| Outcome::Idle);
    // Cancel was pressed during the run in progress: "Cancelling" until its sent work is done.
    let cancelling = use_state(|| false);
    let share = use_state(|| None::<Result<String, ShareError>>);
    let lifecycle = super::run_lifecycle::use_run::<()>(|| ());
    {
        let (key, scratch) = (key.clone(), state.scratch.clone());
        use_effect_with(scratch, move |s| save_draft(&key, Some(&to_text(s))));
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let has_gpu = matches!(ctx.webgpu, WebGpuStatus::Available(_));
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);
    let checked = check(&state.scratch.buffers, &state.scratch.groups);
    let limit_ms = timeout_ms(&ctx.query);

    let on_change = {
        let state = state.clone();
        Callback::from(move |t: String| state.dispatch(Action::Source(t)))
    };
    let on_errors = {
        let state = state.clone();
        Callback::from(move |n| state.dispatch(Action::Errors(n)))
    };
    let run = {
        let (state, outcome, lifecycle, ctx, checked, cancelling) = (
            state.clone(),
            outcome.clone(),
            lifecycle.clone(),
            ctx.clone(),
            checked.clone(),
            cancelling.clone(),
        );
        Callback::from(move |_| {
            let Ok(ready) = checked.clone() else { return };
            if state.errors > 0 {
                outcome.set(Outcome::Failed(
                    ctx.tf("editor.has_errors", &[("n", &state.errors.to_string())]),
                ));
                return;
            }
            let run = lifecycle.start(());
            let (flag, ctl) = (run.token().clone(), run.control(None));
            outcome.set(Outcome::Running);
            cancelling.set(false);
            let (outcome, ctx, cancelling) = (outcome.clone(), ctx.clone(), cancelling.clone());
            run_with_timeout(
                run_scratch(ready, state.scratch.source.clone(), software, ctl),
                flag,
                limit_ms,
                move |r| {
                    // Cancel pressed: the run's token was cancelled, not its ticket (the
                    // result must come, to say when the GPU work sent has finished).
                    let cancelled = run.token().is_cancelled();
                    if !run.finish() {
                        return;
                    }
                    cancelling.set(false);
                    outcome.set(match r {
                        None => Outcome::TimedOut(limit_ms),
                        // A run cancelled after its one dispatch was sent but that still came
                        // back counts as cancelled: the learner asked it to stop.
                        Some(_) if cancelled => Outcome::Cancelled,
                        Some(Ok(ScratchRun::Done(results, ms))) => Outcome::Done {
                            results: Rc::new(results),
                            ms,
                        },
                        Some(Ok(ScratchRun::LoopStopped { line, budget })) => {
                            Outcome::LoopStopped { line, budget }
                        }
                        Some(Ok(ScratchRun::Rejected(list))) => Outcome::Rejected(Rc::new(list)),
                        Some(Err(GpuError::Cancelled)) => Outcome::Cancelled,
                        Some(Err(e)) => Outcome::Failed(error_text(&ctx, &e)),
                    })
                },
            );
        })
    };
    let on_share = {
        let (state, share, navigator, ctx) =
            (state.clone(), share.clone(), navigator.clone(), ctx.clone());
        Callback::from(move |_| {
            let r = share_code(&to_text(&state.scratch));
            if let (Ok(code), Some(nav)) = (&r, &navigator) {
                let q = ctx.query.clone().with("src", code);
                super::replace_query(nav, &Route::Editor, &q);
            }
            share.set(Some(r.map(|_| {
                gloo::utils::window().location().href().unwrap_or_default()
            })));
        })
    };
    let reset = {
        let state = state.clone();
        Callback::from(move |_| state.dispatch(Action::Reset))
    };
    // Cancel: nothing more is sent; the run ends as Cancelled once the dispatch already on the
    // GPU has finished (a GPU cannot take it back; the watchdog still covers one that never does).
    let cancel = {
        let (lifecycle, cancelling) = (lifecycle.clone(), cancelling.clone());
        Callback::from(move |_: MouseEvent| {
            lifecycle.token().cancel();
            cancelling.set(true);
        })
    };

    let running = *outcome == Outcome::Running;
    let external = match &*outcome {
        Outcome::Rejected(list) => list.clone(),
        _ => Rc::default(),
    };
    html! {
        <section class="page editor-page scratch-page">
            <h1>{ ctx.t("scratch.heading") }</h1>
            <p class="lead">{ ctx.t("scratch.intro") }</p>
            if shared_bad {
                <p class="message error" role="alert">{ ctx.t("editor.share.corrupt") }</p>
            }
            <p><a href={format!("#/editor?lang={}", ctx.lang.code())}>{ ctx.t("scratch.back") }</a></p>
            { buffer_table(&ctx, &state) }
            { groups_fieldset(&ctx, &state) }
            { table_errors(&ctx, &checked) }
            <CodeEditor doc={AttrValue::from(state.scratch.source.clone())} revision={state.revision}
                on_change={on_change} on_errors={on_errors} external={external} />
            <div class="editor-actions">
                <button class="button primary" onclick={run} disabled={running || !has_gpu || checked.is_err()}>{ ctx.t("editor.run") }</button>
                if running {
                    <button id="scratch-cancel" class="button" onclick={cancel} disabled={*cancelling}>{ ctx.t("run.cancel") }</button>
                }
                <button class="button" onclick={reset} disabled={running}>{ ctx.t("scratch.reset") }</button>
                <button class="button" onclick={on_share}>{ ctx.t("editor.share") }</button>
            </div>
            if !has_gpu {
                <p class="message">{ ctx.t("editor.no_webgpu") }</p>
            }
            { share_note(&ctx, &share) }
            <div class="editor-result scratch-result" aria-live="polite" data-outcome={outcome.code()}>
                if *cancelling && running {
                    <p class="message" role="status" data-cancelling="true">{ ctx.t("scratch.cancelling") }</p>
                } else {
                    { outcome_view(&ctx, &outcome) }
                }
            </div>
        </section>
    }
}

fn outcome_view(ctx: &Ctx, outcome: &Outcome) -> Html {
    match outcome {
        Outcome::Idle => html! {},
        Outcome::Running => {
            html! { <p class="message" role="status">{ ctx.t("editor.running") }</p> }
        }
        Outcome::Failed(m) => html! { <p class="message error" role="alert">{ m.clone() }</p> },
        Outcome::Cancelled => {
            html! { <p class="message cancelled" role="status">{ ctx.t("run.cancelled") }</p> }
        }
        Outcome::Rejected(list) => html! {
            <>
                { browser_messages_view(ctx, list) }
                <p class="message error" role="alert">{ ctx.t("editor.browser.rejected") }</p>
            </>
        },
        Outcome::TimedOut(ms) => html! {
            <p class="message error timed-out" role="alert">{ ctx.tf("editor.timed_out", &[("s", &format!("{}", *ms as f64 / 1000.0))]) }</p>
        },
        Outcome::LoopStopped { line, budget } => html! {
            <p class="message error loop-stopped" role="alert" data-line={line.to_string()}>
                { super::editor_page::loop_stopped_text(ctx, *line, *budget) }
            </p>
        },
        Outcome::Done { results, ms } => html! {
            <div class="verdict ok">
                <p>{ ctx.tf("scratch.done", &[("ms", &numbers::ms(*ms))]) }</p>
                { for results.iter().map(|(name, ty, bits)| html! {
                    <ScratchResult name={name.clone()} ty={*ty} bits={Rc::new(bits.clone())} />
                }) }
            </div>
        },
    }
}

#[derive(Properties, PartialEq)]
struct ResultProps {
    name: String,
    ty: ElemType,
    bits: Rc<Vec<u32>>,
}

/// One buffer after the run: the first [`TABLE`] values, [`COLS`] a row, and a heatmap of
/// all of them (blue = smallest, yellow = largest).
#[function_component]
fn ScratchResult(props: &ResultProps) -> Html {
    let ctx = use_context::<Ctx>();
    let canvas = use_node_ref();
    {
        let (canvas, bits, ty) = (canvas.clone(), props.bits.clone(), props.ty);
        use_effect_with(bits.clone(), move |_| draw_heatmap(&canvas, ty, &bits));
    }
    let Some(ctx) = ctx else { return html! {} };
    let shown = props.bits.len().min(TABLE);
    let rows = props.bits[..shown]
        .chunks(COLS)
        .enumerate()
        .map(|(r, chunk)| {
            html! {
                <tr>
                    <th scope="row">{ r * COLS }</th>
                    { for chunk.iter().map(|&b| html! { <td>{ props.ty.show(b) }</td> }) }
                </tr>
            }
        });
    html! {
        <section class="scratch-out" data-buffer-name={props.name.clone()}>
            <h3><code>{ props.name.clone() }</code>{ " " }{ ctx.tf("scratch.out.caption", &[("n", &props.bits.len().to_string()), ("type", props.ty.code())]) }</h3>
            <div class="scratch-out-layout">
                <div class="scratch-table-wrap">
                    <table class="scratch-values"><tbody>{ for rows }</tbody></table>
                </div>
                <canvas ref={canvas} class="scratch-heatmap" role="img" aria-label={ctx.tf("scratch.out.heatmap", &[("name", &props.name)])}></canvas>
            </div>
            if props.bits.len() > TABLE {
                <p class="hint">{ ctx.tf("scratch.out.more", &[("shown", &TABLE.to_string()), ("n", &props.bits.len().to_string())]) }</p>
            }
        </section>
    }
}

fn draw_heatmap(canvas: &NodeRef, ty: ElemType, bits: &[u32]) {
    let Some(canvas) = canvas.cast::<web_sys::HtmlCanvasElement>() else {
        return;
    };
    if bits.is_empty() {
        return;
    }
    let cols = COLS
        .max((bits.len() as f64).sqrt().ceil() as usize)
        .min(1024);
    let rows = bits.len().div_ceil(cols);
    canvas.set_width(cols as u32);
    canvas.set_height(rows as u32);
    let Ok(Some(c2d)) = canvas.get_context("2d") else {
        return;
    };
    let Ok(c2d) = c2d.dyn_into::<web_sys::CanvasRenderingContext2d>() else {
        return;
    };
    let values: Vec<f64> = bits.iter().map(|&b| ty.value(b)).collect();
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut rgba = vec![255u8; cols * rows * 4];
    for (i, v) in values.iter().enumerate() {
        let px = &mut rgba[i * 4..i * 4 + 4];
        if !v.is_finite() {
            px.copy_from_slice(&[200, 0, 0, 255]);
            continue;
        }
        let t = ((v - lo) / span).clamp(0.0, 1.0);
        px.copy_from_slice(&[
            (40.0 + 215.0 * t) as u8,
            (60.0 + 160.0 * t) as u8,
            (160.0 * (1.0 - t)) as u8,
            255,
        ]);
    }
    if let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
        wasm_bindgen::Clamped(&rgba),
        cols as u32,
        rows as u32,
    ) {
        let _ = c2d.put_image_data(&img, 0.0, 0.0);
    }
}

/// The buffers' table (every field an edit for the reducer) and the Add button.
fn buffer_table(ctx: &Ctx, state: &UseReducerHandle<State>) -> Html {
    let edit_buffer = {
        let state = state.clone();
        move |i: usize, f: fn(&mut BufferDecl, String)| {
            let state = state.clone();
            Callback::from(move |v: String| state.dispatch(Action::EditBuffer(i, f, v)))
        }
    };
    // A select commits at once; its value is what the learner picked.
    let pick = |i: usize, f: fn(&mut BufferDecl, String)| {
        edit_buffer(i, f).reform(|e: Event| input_value(&e))
    };
    let remove = |i: usize| {
        let state = state.clone();
        Callback::from(move |_| state.dispatch(Action::RemoveBuffer(i)))
    };
    let add = {
        let state = state.clone();
        Callback::from(move |_| state.dispatch(Action::AddBuffer))
    };
    let rows = state.scratch.buffers.iter().enumerate().map(|(i, d)| {
        let types = ElemType::ALL.iter().map(|t| html! {
            <option value={t.code()} selected={*t == d.ty}>{ t.code() }</option>
        });
        let inits = InitKind::ALL.iter().map(|k| html! {
            <option value={k.code()} selected={*k == d.init}>{ ctx.t(&format!("scratch.init.{}", k.code())) }</option>
        });
        let arg = match d.init {
            InitKind::Random => html! {
                <DraftInput class="scratch-arg" label={ctx.t("scratch.col.seed")} placeholder={ctx.t("scratch.col.seed")}
                    value={d.arg.clone()} on_commit={edit_buffer(i, |d, v| d.arg = v)} />
            },
            InitKind::List => html! {
                <DraftInput class="scratch-arg" label={ctx.t("scratch.col.list")} placeholder={ctx.t("scratch.col.list")}
                    value={d.arg.clone()} on_commit={edit_buffer(i, |d, v| d.arg = v)} />
            },
            _ => html! {},
        };
        html! {
            <tr data-buffer={i.to_string()}>
                <td><DraftInput class="scratch-name" label={ctx.t("scratch.col.name")} value={d.name.clone()}
                    on_commit={edit_buffer(i, |d, v| d.name = v)} /></td>
                <td><select class="scratch-type" aria-label={ctx.t("scratch.col.type")}
                    onchange={pick(i, |d, v| d.ty = ElemType::from_code(&v).unwrap_or(d.ty))}>{ for types }</select></td>
                <td><DraftInput class="scratch-len" inputmode="numeric" label={ctx.t("scratch.col.length")} value={d.len.clone()}
                    on_commit={edit_buffer(i, |d, v| d.len = v)} /></td>
                <td><select class="scratch-init" aria-label={ctx.t("scratch.col.init")}
                    onchange={pick(i, |d, v| d.init = InitKind::from_code(&v).unwrap_or(d.init))}>{ for inits }</select>
                    { arg }</td>
                <td><button class="button scratch-remove" onclick={remove(i)}>{ ctx.t("scratch.remove") }</button></td>
            </tr>
        }
    });
    html! {
        <>
            <div class="scratch-table-wrap">
                <table class="scratch-buffers">
                    <caption>{ ctx.t("scratch.buffers") }</caption>
                    <thead><tr>
                        <th>{ ctx.t("scratch.col.name") }</th><th>{ ctx.t("scratch.col.type") }</th>
                        <th>{ ctx.t("scratch.col.length") }</th><th>{ ctx.t("scratch.col.init") }</th><th></th>
                    </tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </div>
            <p><button class="button scratch-add" onclick={add} disabled={state.scratch.buffers.len() >= page_models::scratch::MAX_BUFFERS}>{ ctx.t("scratch.add") }</button></p>
        </>
    }
}

/// How many workgroups along x, y and z.
fn groups_fieldset(ctx: &Ctx, state: &UseReducerHandle<State>) -> Html {
    let group = |axis: usize| {
        let state = state.clone();
        Callback::from(move |v: String| state.dispatch(Action::Group(axis, v)))
    };
    html! {
        <fieldset class="scratch-groups">
            <legend>{ ctx.t("scratch.groups") }</legend>
            { for ["x", "y", "z"].iter().enumerate().map(|(i, axis)| html! {
                <label>{ *axis }{ " " }<DraftInput class="scratch-group" inputmode="numeric" axis={*axis}
                    value={state.scratch.groups[i].clone()} on_commit={group(i)} /></label>
            }) }
        </fieldset>
    }
}

/// What is wrong with the table, each field named.
fn table_errors(
    ctx: &Ctx,
    checked: &Result<Ready, Vec<page_models::scratch::ScratchError>>,
) -> Html {
    match checked {
        Ok(_) => html! {},
        Err(list) => html! {
            <ul class="message error scratch-errors" role="alert">
                { for list.iter().map(|e| {
                    let args = e.args();
                    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    html! { <li data-error={e.key()}>{ ctx.tf(e.key(), &args) }</li> }
                }) }
            </ul>
        },
    }
}

/// The answer to Share: the link, or why there is none.
fn share_note(ctx: &Ctx, share: &Option<Result<String, ShareError>>) -> Html {
    match share {
        None => html! {},
        Some(Ok(url)) => {
            html! { <p class="message share-link" role="status">{ ctx.t("editor.share.done") }{ " " }<a href={url.clone()}>{ ctx.t("editor.share.link") }</a></p> }
        }
        Some(Err(ShareError::TooLong { chars, limit })) => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.share.too_long", &[("chars", &chars.to_string()), ("limit", &limit.to_string())]) }</p>
        },
        Some(Err(ShareError::Corrupt)) => {
            html! { <p class="message error" role="alert">{ ctx.t("editor.share.corrupt") }</p> }
        }
    }
}
