//! The WGSL editor widget: loads `editor/editor.js` (CodeMirror + the naga checker) with a
//! dynamic import() the first time an editor is shown, so no other page fetches it, and
//! mounts it in a div. The text lives in the JS editor; every change is reported through
//! `on_change`, and a new `revision` replaces the text with `doc` (Reset, Show solution).

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::Ctx;
use page_models::kernel_edit::{
    listed, BindingProblem, LintError, Listed, ListedFrom, PlacedMessage,
};

#[wasm_bindgen(inline_js = "
let loading = null;
export function load_editor() {
  if (!loading) {
    // A failed fetch (offline before the editor was ever cached, or the server gone) is
    // the marker UNREACHABLE, which the pages put in words; the next call tries again.
    loading = import(new URL('editor/editor.js', document.baseURI).href)
      .catch(() => { loading = null; throw 'editor-unreachable'; });
  }
  return loading;
}
")]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn load_editor() -> Result<JsValue, JsValue>;
}

/// What `load_editor` fails with when editor.js cannot be fetched.
const UNREACHABLE: &str = "editor-unreachable";

/// An error from the editor module in the page's words: its fetch failing (most often the
/// first visit to an editor page while offline) is explained, not shown as the browser's
/// `TypeError`; anything else is shown as it came.
pub fn editor_error(ctx: &Ctx, e: &str) -> String {
    if e == UNREACHABLE {
        ctx.t("editor.unreachable").to_string()
    } else {
        e.to_string()
    }
}

#[wasm_bindgen]
extern "C" {
    /// The object `mount` in editor.js returns.
    pub type EditorHandle;
    #[wasm_bindgen(method)]
    fn get(this: &EditorHandle) -> String;
    #[wasm_bindgen(method)]
    fn set(this: &EditorHandle, doc: &str);
    #[wasm_bindgen(method)]
    fn destroy(this: &EditorHandle);
    #[wasm_bindgen(method, js_name = setExternal)]
    fn set_external(this: &EditorHandle, list: &js_sys::Array);
    #[wasm_bindgen(method, js_name = goto)]
    fn go_to(this: &EditorHandle, line: u32, column: u32);
}

/// naga's comparison of `edited` with `original` (bindings and entry point `entry`), from
/// the editor module (loaded if it is not yet): what would stop the pipeline, in words,
/// before anything is sent to the GPU.
pub async fn binding_check(
    original: &str,
    edited: &str,
    entry: &str,
) -> Result<Vec<BindingProblem>, String> {
    let describe = |e: JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let module = load_editor().await.map_err(describe)?;
    let check = js_sys::Reflect::get(&module, &"bindingCheck".into())
        .map_err(describe)?
        .dyn_into::<js_sys::Function>()
        .map_err(describe)?;
    let promise = check
        .call3(
            &JsValue::NULL,
            &original.into(),
            &edited.into(),
            &entry.into(),
        )
        .map_err(describe)?;
    let list = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map_err(describe)?;
    let list: js_sys::Array = list.dyn_into().map_err(describe)?;
    Ok(list
        .iter()
        .map(|o| {
            let field = |k: &str| {
                js_sys::Reflect::get(&o, &k.into())
                    .ok()
                    .and_then(|v| v.as_string().or_else(|| v.as_f64().map(|n| n.to_string())))
                    .unwrap_or_default()
            };
            BindingProblem {
                kind: field("kind"),
                fields: [
                    "group", "binding", "name", "provided", "expected", "got", "bytes", "limit",
                    "entry", "found",
                ]
                .iter()
                .map(|k| (*k, field(k)))
                .collect(),
            }
        })
        .collect())
}

/// A kernel rewritten by the editor module to log its array accesses.
#[derive(Clone, Debug, PartialEq)]
pub struct InstrumentedKernel {
    pub source: String,
    pub log_binding: u32,
    /// (name, storage binding, fixed length) of each logged array, in log numbering.
    pub arrays: Vec<(String, Option<u32>, Option<u32>)>,
    pub unlogged: u32,
}

fn describe(e: JsValue) -> String {
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Calls `name(a, b)` of the editor module (naga stays out of the app's own wasm; loaded if it
/// is not yet) and awaits its answer: the result object, or its `error` in words.
async fn call_editor(name: &str, a: JsValue, b: JsValue) -> Result<JsValue, String> {
    let module = load_editor().await.map_err(describe)?;
    let f = js_sys::Reflect::get(&module, &name.into())
        .map_err(describe)?
        .dyn_into::<js_sys::Function>()
        .map_err(describe)?;
    let promise = f.call2(&JsValue::NULL, &a, &b).map_err(describe)?;
    let r = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map_err(describe)?;
    match field(&r, "error").as_string() {
        Some(e) => Err(e),
        None => Ok(r),
    }
}

/// A field of an answer (undefined when absent).
fn field(o: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(o, &k.into()).unwrap_or(JsValue::UNDEFINED)
}

/// A value that is a u32 (None for anything else).
fn as_u32(v: &JsValue) -> Option<u32> {
    v.as_f64()
        .filter(|v| *v >= 0.0 && *v <= f64::from(u32::MAX))
        .map(|v| v as u32)
}

/// `instrument` from the editor module: the kernel with its access log, or naga's reason why
/// not.
pub async fn instrument(source: &str, entry: &str) -> Result<InstrumentedKernel, String> {
    let r = call_editor("instrument", source.into(), entry.into()).await?;
    let num = |o: &JsValue, k: &str| as_u32(&field(o, k));
    let arrays: js_sys::Array = field(&r, "arrays").dyn_into().map_err(describe)?;
    Ok(InstrumentedKernel {
        source: field(&r, "source")
            .as_string()
            .ok_or("the instrumented kernel is missing")?,
        log_binding: num(&r, "logBinding").ok_or("the log binding is missing")?,
        arrays: arrays
            .iter()
            .map(|a| {
                (
                    field(&a, "name").as_string().unwrap_or_default(),
                    num(&a, "binding"),
                    num(&a, "len"),
                )
            })
            .collect(),
        unlogged: num(&r, "unlogged").unwrap_or(0),
    })
}

/// A learner's kernel rewritten by the editor module so that every loop stops after a
/// budget of iterations (`wgsl_check::loop_budget`).
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetedKernel {
    /// The rewritten source: run this instead of the learner's.
    pub source: String,
    /// `@group(0) @binding(flag_binding)`: the flag buffer, just after the kernel's own
    /// bindings; bind a zeroed storage buffer of `flag_words` u32 words there and read it back.
    pub flag_binding: u32,
    pub flag_words: usize,
    /// 1-based line, in the learner's source, of loop `n` (flag word `1 + n`).
    pub lines: Vec<u32>,
    pub budget: u32,
}

impl BudgetedKernel {
    /// Where a plan binds its flag buffer.
    pub fn flag(&self) -> gpu_runtime::LoopFlag {
        gpu_runtime::LoopFlag {
            binding: self.flag_binding,
            words: self.flag_words,
        }
    }

    /// The first line (in source order) of a loop that ran out of budget, from the flag
    /// buffer's words; None when no loop did.
    pub fn stopped_line(&self, words: &[u32]) -> Option<u32> {
        page_models::loop_budget::stopped_line(&self.lines, words)
    }
}

/// The loop budget for learner-edited code (editor, scratch mode, puzzles): asks the editor
/// module (naga; loaded if it is not yet) to rewrite `source` so that each `loop`/`for`/
/// `while` breaks after `budget` iterations and records which loop did in a flag buffer.
/// Bind that buffer as [`BudgetedKernel`] says, read it back, and when
/// [`BudgetedKernel::stopped_line`] is Some the result is not verified (say so; the
/// `editor.loop_stopped` text takes `line` and `budget`). Errors are naga's reason, in words.
/// `page_models::loop_budget::budget` derives a budget from the problem's size.
pub async fn budget_loops(source: &str, budget: u32) -> Result<BudgetedKernel, String> {
    let r = call_editor("budgetLoops", source.into(), JsValue::from(budget)).await?;
    let num = |k: &str| as_u32(&field(&r, k));
    let lines: js_sys::Array = field(&r, "lines").dyn_into().map_err(describe)?;
    Ok(BudgetedKernel {
        source: field(&r, "source")
            .as_string()
            .ok_or("the budgeted kernel is missing")?,
        flag_binding: num("flagBinding").ok_or("the flag binding is missing")?,
        flag_words: num("flagWords").ok_or("the flag size is missing")? as usize,
        lines: lines.iter().map(|l| as_u32(&l).unwrap_or(0)).collect(),
        budget: num("budget").unwrap_or(budget),
    })
}

/// A mounted editor and the closures it calls (dropped with it).
struct Mounted {
    handle: EditorHandle,
    _on_change: Closure<dyn FnMut(String)>,
    _on_diagnostics: Closure<dyn FnMut(js_sys::Array)>,
}

async fn mount(
    parent: web_sys::Element,
    doc: &str,
    label: &str,
    on_change: Callback<String>,
    on_errors: Callback<Vec<LintError>>,
) -> Result<Mounted, String> {
    let describe = |e: JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let module = load_editor().await.map_err(describe)?;
    let mount = js_sys::Reflect::get(&module, &"mount".into())
        .map_err(describe)?
        .dyn_into::<js_sys::Function>()
        .map_err(describe)?;
    let change = Closure::<dyn FnMut(String)>::new(move |s: String| on_change.emit(s));
    let diagnostics = Closure::<dyn FnMut(js_sys::Array)>::new(move |d: js_sys::Array| {
        on_errors.emit(
            d.iter()
                .map(|e| LintError {
                    line: as_u32(&field(&e, "line")).unwrap_or(1),
                    column: as_u32(&field(&e, "column")).unwrap_or(1),
                    message: field(&e, "message").as_string().unwrap_or_default(),
                })
                .collect(),
        )
    });
    let opts = js_sys::Object::new();
    for (k, v) in [
        ("doc", JsValue::from_str(doc)),
        ("label", JsValue::from_str(label)),
        ("onChange", change.as_ref().clone()),
        ("onDiagnostics", diagnostics.as_ref().clone()),
    ] {
        js_sys::Reflect::set(&opts, &k.into(), &v).map_err(describe)?;
    }
    let promise = mount
        .call2(&JsValue::NULL, &parent, &opts)
        .map_err(describe)?;
    let handle = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map_err(describe)?;
    Ok(Mounted {
        handle: handle.unchecked_into(),
        _on_change: change,
        _on_diagnostics: diagnostics,
    })
}

#[derive(Properties, PartialEq)]
pub struct CodeEditorProps {
    /// The text at mount, and the text put in when `revision` changes.
    pub doc: AttrValue,
    pub revision: u32,
    pub on_change: Callback<String>,
    /// naga's error count after each check.
    pub on_errors: Callback<usize>,
    /// The browser compiler's placed messages from the last run, underlined too.
    #[prop_or_default]
    pub external: Rc<Vec<PlacedMessage>>,
}

#[derive(Clone, PartialEq)]
enum Status {
    Loading,
    Ready,
    Failed(String),
}

#[function_component]
pub fn CodeEditor(props: &CodeEditorProps) -> Html {
    let ctx = use_context::<Ctx>();
    let host = use_node_ref();
    let mounted = use_mut_ref(|| None::<Mounted>);
    let status = use_state(|| Status::Loading);
    // naga's errors from the last check, listed under the editor (the underlines' list).
    let errors = use_state_eq(Vec::<LintError>::new);
    let label = ctx
        .as_ref()
        .map(|c| c.t("editor.label"))
        .unwrap_or_default();
    {
        let (host, mounted, status) = (host.clone(), mounted.clone(), status.clone());
        let (doc, on_change) = (props.doc.to_string(), props.on_change.clone());
        let on_errors = {
            let (errors, count) = (errors.clone(), props.on_errors.clone());
            Callback::from(move |list: Vec<LintError>| {
                count.emit(list.len());
                errors.set(list);
            })
        };
        use_effect_with((), move |_| {
            let alive = Rc::new(Cell::new(true));
            if let Some(parent) = host.cast::<web_sys::Element>() {
                let (alive, mounted) = (alive.clone(), mounted.clone());
                wasm_bindgen_futures::spawn_local(async move {
                    match mount(parent, &doc, label, on_change, on_errors).await {
                        Ok(m) if alive.get() => {
                            *mounted.borrow_mut() = Some(m);
                            status.set(Status::Ready);
                        }
                        Ok(m) => m.handle.destroy(),
                        Err(e) if alive.get() => status.set(Status::Failed(e)),
                        Err(_) => {}
                    }
                });
            }
            move || {
                alive.set(false);
                if let Some(m) = mounted.borrow_mut().take() {
                    m.handle.destroy();
                }
            }
        });
    }
    {
        let (mounted, doc) = (mounted.clone(), props.doc.clone());
        use_effect_with(props.revision, move |_| {
            if let Some(m) = mounted.borrow().as_ref() {
                if m.handle.get() != doc.as_str() {
                    m.handle.set(&doc);
                }
            }
        });
    }
    {
        let mounted = mounted.clone();
        use_effect_with(
            (props.external.clone(), (*status).clone()),
            move |(list, _)| {
                if let Some(m) = mounted.borrow().as_ref() {
                    let out = js_sys::Array::new();
                    for p in list.iter().filter(|p| p.line > 0) {
                        let o = js_sys::Object::new();
                        let severity = if p.note {
                            "info"
                        } else if p.warning {
                            "warning"
                        } else {
                            "error"
                        };
                        let _ = js_sys::Reflect::set(&o, &"severity".into(), &severity.into());
                        let _ = js_sys::Reflect::set(&o, &"line".into(), &p.line.into());
                        let _ = js_sys::Reflect::set(&o, &"column".into(), &p.column.into());
                        let _ =
                            js_sys::Reflect::set(&o, &"message".into(), &p.message.as_str().into());
                        out.push(&o);
                    }
                    m.handle.set_external(&out);
                }
            },
        );
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let jump = {
        let mounted = mounted.clone();
        Callback::from(move |(line, column): (u32, u32)| {
            if let Some(m) = mounted.borrow().as_ref() {
                m.handle.go_to(line, column);
            }
        })
    };
    let note = match &*status {
        Status::Loading => {
            html! { <p class="message" role="status">{ ctx.t("editor.loading") }</p> }
        }
        Status::Ready => html! {},
        Status::Failed(e) => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.load_failed", &[("error", &editor_error(&ctx, e))]) }</p>
        },
    };
    html! {
        <div class="code-editor" data-ready={(*status == Status::Ready).then_some("true")}>
            { note }
            <div class="cm-host" ref={host}></div>
            { error_list(&ctx, &listed(&errors, &props.external), jump) }
            <p class="editor-keys">{ ctx.t("editor.keys") }</p>
        </div>
    }
}

/// naga's errors, and the browser compiler's placed messages from the last run, as buttons
/// under the editor, each jumping to its place (the underline's marker gives nothing to tap
/// on a phone, and the line may be scrolled away). Nothing when there are none.
fn error_list(ctx: &Ctx, errors: &[Listed], jump: Callback<(u32, u32)>) -> Html {
    if errors.is_empty() {
        return html! {};
    }
    let n = errors.len().to_string();
    html! {
        <div class="editor-errors" id="editor-errors">
            <p class="editor-errors-heading">{ ctx.tf("editor.errors.heading", &[("n", &n)]) }</p>
            <ul>
                { for errors.iter().map(|e| {
                    let (line, column) = (e.line, e.column);
                    let onclick = jump.reform(move |_: MouseEvent| (line, column));
                    let place = ctx.tf("editor.errors.place", &[("line", &line.to_string()), ("column", &column.to_string())]);
                    let (from, who) = match e.from {
                        ListedFrom::Naga => ("naga", None),
                        ListedFrom::Browser { warning: false } => ("browser", Some(ctx.t("editor.errors.browser"))),
                        ListedFrom::Browser { warning: true } => ("browser-warning", Some(ctx.t("editor.errors.browser_warning"))),
                    };
                    html! {
                        <li>
                            <button type="button" class="editor-error" onclick={onclick}
                                data-line={line.to_string()} data-column={column.to_string()} data-from={from}>
                                <span class="place">{ place }</span>
                                if let Some(who) = who {
                                    <span class="from">{ who }</span>
                                }
                                <span class="text">{ e.message.clone() }</span>
                            </button>
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}
