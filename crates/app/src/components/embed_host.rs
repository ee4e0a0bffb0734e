//! Embedded widgets (`#/embed/<widget>?…`): the one registry of what can be embedded, and the
//! host that wraps any of them for an iframe — theme, `hide=`, and the postMessage API
//! (`page_models::embed` parses and checks; this only wires it to `window`). Widgets stay unaware
//! of embedding except for one call that reports a finished run (`page_models::embed::report`).
//! The registry's data (ids, parameters, sizes) and the run reports are pure and live in
//! `page_models::embed`; this file adds only how each widget renders (`render`).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use yew::prelude::*;
use yew_router::prelude::*;

use super::{
    replace_query, Conv, Ctx, GpuPanel, KernelRun, Ladder, Lesson, Race, Train, Visualiser,
};
use crate::probe::WebGpuStatus;
use page_models::embed::{
    self as api, Command, Id, Out, Parsed, RequestError, Value, Widget, WIDGETS,
};
use page_models::learner_file;
use page_models::outcome::{self, Both, Entry, Outcome};
use page_models::query::Query;
use page_models::run_family::RunFamily;

/// The Run widget of the conv stage the widget's forced `stage=` names.
fn conv_run(ctx: &Ctx) -> Html {
    let id = ctx.query.get("stage").unwrap_or("conv-direct").to_string();
    html! { <KernelRun key="conv" family={RunFamily::Conv} stage_id={id} /> }
}

/// How each widget of the registry (`page_models::embed::WIDGETS`) renders: the one place that
/// names every widget, so nothing below imports it back.
fn render(id: &str) -> Option<fn(&Ctx) -> Html> {
    let f: fn(&Ctx) -> Html = match id {
        "matmul" => |ctx| {
            let id = ctx
                .query
                .get("stage")
                .and_then(gpu_runtime::kernel)
                .map(|k| k.id)
                .unwrap_or(super::kernel_run::DEFAULT_KERNEL);
            html! { <KernelRun key="matmul" stage_id={id} /> }
        },
        "ladder" | "conv-ladder" => |_| html! { <Ladder /> },
        "conv-direct" | "conv-tiled" | "conv-im2col-gemm" | "conv-implicit-gemm"
        | "conv-pointwise" => conv_run,
        "race" | "conv-race" | "sweep" | "claim" => |_| html! { <Race /> },
        "simt" | "simt-compare" => |_| html! { <Visualiser /> },
        "schedule" => |_| html! { <super::schedule_replay::ScheduleReplay /> },
        "train" | "batch" => |_| html! { <Train /> },
        "cnn" => |_| html! { <super::Cnn /> },
        "gpt" => |_| html! { <super::Gpt /> },
        "conv-filter" => |_| html! { <Conv views={super::conv::Views::Filter} /> },
        "conv-field" => |_| html! { <Conv views={super::conv::Views::Field} /> },
        "lesson" => |ctx| {
            let id = ctx.query.get("lesson").unwrap_or("latency-throughput");
            html! { <Lesson id={id.to_string()} /> }
        },
        "editor" => |ctx| {
            // Keyed by stage, as on the full page: another stage starts from its own source.
            let key = ctx.query.get("stage").unwrap_or_default().to_string();
            html! { <super::KernelEditor {key} /> }
        },
        "puzzle" => |ctx| {
            let id = ctx
                .query
                .get("id")
                .or(puzzles::PUZZLES.first().map(|p| p.id))
                .unwrap_or_default()
                .to_string();
            let key = id.clone();
            // The embed's storage is the course page's alone (docs/embedding.md, "Where
            // progress lives"): its own box saves it to the file the site imports.
            html! {
                <>
                    <super::PuzzlePage {key} id={id} />
                    { embed_progress() }
                </>
            }
        },
        "gpu" => |_| html! { <GpuPanel /> },
        _ => return None,
    };
    Some(f)
}

/// The puzzle embed's own progress box (the puzzle pages are in the full app only; the embed
/// module's puzzle reloads into it).
#[cfg(feature = "editor-pages")]
fn embed_progress() -> Html {
    html! {
        <div class="embed-progress">
            <super::progress_transfer::ProgressTransfer embedded=true on_change={Callback::noop()} />
        </div>
    }
}

#[cfg(not(feature = "editor-pages"))]
fn embed_progress() -> Html {
    Html::default()
}

// ---------------------------------------------------------------- the host

#[derive(Properties, PartialEq)]
pub struct EmbedHostProps {
    pub widget: AttrValue,
}

/// What the message listener needs, shared with the render (refreshed on every render).
struct Shared {
    widget: &'static Widget,
    lang: crate::i18n::Lang,
    query: Query,
    allowed: Vec<String>,
    /// Some while a run the host asked for is going (with the request's id).
    pending: Option<Option<Id>>,
    navigator: Option<Navigator>,
    route: crate::route::Route,
    remount: Option<Callback<()>>,
}

fn post(allowed: &[String], json: &str) {
    let window = gloo::utils::window();
    let Ok(Some(parent)) = window.parent() else {
        return;
    };
    if js_sys::Object::is(&parent, &window) {
        return;
    }
    let Ok(msg) = js_sys::JSON::parse(json) else {
        return;
    };
    for origin in allowed {
        let _ = parent.post_message(&msg, origin);
    }
}

fn post_lti(allowed: &[String], height: u32) {
    let window = gloo::utils::window();
    if let Ok(Some(parent)) = window.parent() {
        if !js_sys::Object::is(&parent, &window) {
            let msg = JsValue::from_str(&api::lti_frame_resize(height));
            for origin in allowed {
                let _ = parent.post_message(&msg, origin);
            }
        }
    }
}

/// A message's data as the protocol's value type: plain data only, two levels deep.
fn to_value(v: &JsValue, depth: u8) -> Value {
    if v.is_null() || v.is_undefined() {
        Value::Null
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if let Some(n) = v.as_f64() {
        Value::Num(n)
    } else if let Some(s) = v.as_string() {
        Value::Str(s)
    } else if v.is_object() && !v.is_function() && !js_sys::Array::is_array(v) && depth < 2 {
        let obj: &js_sys::Object = v.unchecked_ref();
        let keys = js_sys::Object::keys(obj);
        if keys.length() > 64 {
            return Value::Other;
        }
        let fields = keys
            .iter()
            .filter_map(|k| {
                let name = k.as_string()?;
                let val = js_sys::Reflect::get(obj, &k).ok()?;
                Some((name, to_value(&val, depth + 1)))
            })
            .collect();
        Value::Object(fields)
    } else {
        Value::Other
    }
}

/// The `state` reply: the settings, and for `getState` (`with_work`) the learner's work as the
/// widget last noted it (`page_models::embed::note_work`).
fn state_json(s: &Shared, id: Option<&Id>, with_work: bool) -> String {
    let params = api::widget_params(s.query.pairs(), s.widget.params);
    let work = with_work.then(api::work);
    Out::State {
        id,
        widget: s.widget.id,
        params: &params,
        work: work.as_deref(),
    }
    .to_json()
}

fn error_json(id: Option<&Id>, e: &RequestError) -> String {
    Out::Error {
        id,
        code: e.code(),
        message: &e.message(),
    }
    .to_json()
}

thread_local! {
    /// Messages this document has received, and how many of them came from an origin or a
    /// window it does not talk to (`data-messages`, `data-ignored` on `.embed-root`: a test
    /// proves a message was ignored, not merely unanswered so far).
    static SEEN: std::cell::Cell<(u32, u32)> = const { std::cell::Cell::new((0, 0)) };
}

/// Counts a received message (and whether it was ignored) on the embed's root element.
fn count_message(ignored: bool) {
    let (seen, dropped) = SEEN.with(|c| {
        let (s, d) = c.get();
        let next = (s + 1, d + u32::from(ignored));
        c.set(next);
        next
    });
    if let Ok(Some(root)) = gloo::utils::document().query_selector(".embed-root") {
        let _ = root.set_attribute("data-messages", &seen.to_string());
        let _ = root.set_attribute("data-ignored", &dropped.to_string());
    }
}

fn handle(shared: &Rc<RefCell<Shared>>, event: &web_sys::MessageEvent) {
    let window = gloo::utils::window();
    let allowed = shared.borrow().allowed.clone();
    // Only the named origins, and only our own parent window: everything else is ignored
    // without a word, so a foreign page learns nothing from us.
    let from_parent = match (event.source(), window.parent()) {
        (Some(src), Ok(Some(parent))) => js_sys::Object::is(&src, &parent),
        _ => false,
    };
    let ignored = !api::origin_allowed(&allowed, &event.origin()) || !from_parent;
    count_message(ignored);
    if ignored {
        return;
    }
    let widget = shared.borrow().widget;
    let request = match api::parse_request(&to_value(&event.data(), 0), widget.params) {
        Parsed::NotOurs => return,
        Parsed::Invalid(id, e) => return post(&allowed, &error_json(id.as_ref(), &e)),
        Parsed::Request(r) => r,
    };
    let id = request.id.as_ref();
    match request.command {
        Command::GetState => post(&allowed, &state_json(&shared.borrow(), id, true)),
        // The same file "Save progress to a file" writes, and the same merge as reading one:
        // it only adds (docs/embedding.md, "Where progress lives").
        Command::GetProgress => {
            let file = learner_file::export(&crate::store::entries());
            post(&allowed, &Out::Progress { id, file: &file }.to_json());
        }
        Command::SetProgress(text) => match learner_file::parse(&text) {
            Err(e) => post(
                &allowed,
                &error_json(id, &RequestError::BadProgress(e.for_host())),
            ),
            Ok(items) => {
                let m = match crate::store::import(&items) {
                    Ok(m) => m,
                    Err(refused) => {
                        let why =
                            format!("the browser refused {refused} of the entries (storage full)");
                        return post(&allowed, &error_json(id, &RequestError::BadProgress(why)));
                    }
                };
                let reply = Out::ProgressSet {
                    id,
                    solved: m.solved,
                    drafts: m.drafts,
                    kept: m.kept,
                };
                post(&allowed, &reply.to_json());
            }
        },
        Command::Run => {
            let button = widget
                .run_button
                .and_then(|b| gloo::utils::document().query_selector(b).ok().flatten())
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                .filter(|e| !e.has_attribute("disabled"));
            if shared.borrow().pending.is_some() {
                // A second `run` stops a run that only ends when told to (training).
                if let (true, Some(b)) = (widget.run_stops, &button) {
                    b.click();
                    return;
                }
                return post(&allowed, &error_json(id, &RequestError::Busy));
            }
            let Some(button) = button else {
                return post(&allowed, &error_json(id, &RequestError::NotRunnable));
            };
            shared.borrow_mut().pending = Some(request.id.clone());
            post(
                &allowed,
                &Out::RunStarted {
                    id,
                    widget: widget.id,
                }
                .to_json(),
            );
            button.click();
        }
        Command::SetParams(params) => {
            if let Err(e) = widget.check_values(&params) {
                return post(&allowed, &error_json(id, &e));
            }
            let (old, lang) = {
                let s = shared.borrow();
                (s.query.clone(), s.lang)
            };
            let mut q = old.clone();
            for (k, v) in &params {
                q.set(k, v);
            }
            // The page's own parser judges the values; a refused one leaves the widget as
            // it was and the host gets the page's message, in the embed's language.
            if let Err(e) = widget.check_params(&old, &q).map_err(|e| e.for_request()) {
                let args: Vec<(&str, &str)> =
                    e.args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let message = crate::i18n::tf(lang, e.key, &args);
                return post(&allowed, &error_json(id, &RequestError::Refused(message)));
            }
            apply_query(shared, q, id);
        }
        Command::Reset => {
            let old = shared.borrow().query.clone();
            let mut q = Query::default();
            for k in api::OWN_PARAMS {
                if let Some(v) = old.get(k) {
                    q.set(k, v);
                }
            }
            apply_query(shared, q, id);
        }
    }
}

/// Puts new settings into the address and mounts the widget afresh, so it reads them the way
/// it reads a link; replies with the state.
fn apply_query(shared: &Rc<RefCell<Shared>>, q: Query, id: Option<&Id>) {
    let (nav, route, remount, allowed) = {
        let mut s = shared.borrow_mut();
        s.query = q.clone();
        s.pending = None;
        (
            s.navigator.clone(),
            s.route.clone(),
            s.remount.clone(),
            s.allowed.clone(),
        )
    };
    if let Some(nav) = nav {
        replace_query(&nav, &route, &q);
    }
    // The widget mounted afresh notes its own work (a puzzle's draft, say); the old one's
    // work is not its.
    api::clear_work();
    if let Some(r) = remount {
        r.emit(());
    }
    post(&allowed, &state_json(&shared.borrow(), id, false));
}

/// The shortest time between two `resize` messages (about one frame at 60 Hz).
const RESIZE_GAP_MS: f64 = 16.0;

/// The content's height in CSS pixels (what the iframe should be).
fn content_height() -> u32 {
    let doc = gloo::utils::document();
    let Some(main) = doc.get_element_by_id("main") else {
        return 0;
    };
    let scroll = gloo::utils::window().scroll_y().unwrap_or(0.0);
    (main.get_bounding_client_rect().bottom() + scroll)
        .ceil()
        .max(0.0) as u32
}

thread_local! {
    /// When the time of the next outcome's `duration` started: the widget opening, then
    /// each outcome sent.
    static SINCE_MS: std::cell::Cell<f64> = std::cell::Cell::new(js_sys::Date::now());
}

thread_local! {
    /// Grading entries when the browser keeps no storage for this frame (blocked or
    /// partitioned away): they last as long as the page.
    static ENTRIES: RefCell<std::collections::HashMap<String, Entry>> = RefCell::default();
}

/// Where an activity's grading entry is kept: the embed's storage (partitioned by the course
/// page's site, so per course page), and memory.
fn entry_key(object_id: &str) -> String {
    format!("gpu-playground.grade:{object_id}")
}

fn load_entry(object_id: &str) -> Entry {
    let stored = gloo::utils::window()
        .local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item(&entry_key(object_id)).ok().flatten())
        .map(|t| Entry::parse(&t));
    stored
        .unwrap_or_else(|| ENTRIES.with(|m| m.borrow().get(object_id).copied().unwrap_or_default()))
}

fn save_entry(object_id: &str, e: Entry) {
    ENTRIES.with(|m| m.borrow_mut().insert(object_id.to_string(), e));
    if let Ok(Some(s)) = gloo::utils::window().local_storage() {
        let _ = s.set_item(&entry_key(object_id), &e.to_text());
    }
}

/// Where the playground is served: this page's origin and path.
fn site() -> String {
    let location = gloo::utils::window().location();
    format!(
        "{}{}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_default()
    )
}

/// A statement text in both languages; a key without text (an unknown stage) is its own text.
fn both(key: &str) -> Both {
    match crate::i18n::both(key) {
        Some((en, zh)) => Both {
            en: en.to_string(),
            zh: zh.to_string(),
        },
        None => Both {
            en: key.to_string(),
            zh: key.to_string(),
        },
    }
}

/// The activity's name in both languages, from the translation files; a target without a
/// title of its own (a stage the translation files do not name) gets the widget's name.
fn activity_name(widget: &str, target: Option<&str>) -> Both {
    let mut keys = outcome::name_keys(widget, target);
    let titled = keys.args.iter().all(|(_, a)| match a {
        outcome::NameArg::Key(k) => crate::i18n::both(k).is_some(),
        outcome::NameArg::Text(_) => true,
    });
    if !titled {
        keys = outcome::name_keys(widget, None);
    }
    let fill = |zh: bool| {
        let args: Vec<(&str, String)> = keys
            .args
            .iter()
            .map(|(name, arg)| {
                let text = match arg {
                    outcome::NameArg::Text(t) => t.clone(),
                    outcome::NameArg::Key(k) => {
                        let b = both(k);
                        if zh {
                            b.zh
                        } else {
                            b.en
                        }
                    }
                };
                (*name, text)
            })
            .collect();
        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let t = both(keys.template);
        crate::i18n::fill(if zh { &t.zh } else { &t.en }, &args)
    };
    Both {
        en: fill(false),
        zh: fill(true),
    }
}

/// Posts an `outcome` statement (only to a verified parentOrigin, as every message), graded
/// against what this browser keeps of the activity (`page_models::outcome::grade`).
fn post_outcome(shared: &Rc<RefCell<Shared>>, id: Option<&Id>, o: &Outcome) {
    let (allowed, widget, lang) = {
        let s = shared.borrow();
        (s.allowed.clone(), s.widget.id, s.lang)
    };
    let site = site();
    let object = outcome::object_id(&site, widget, o.target.as_deref());
    let mut entry = load_entry(&object);
    let graded = outcome::grade(&mut entry, o);
    save_entry(&object, entry);
    let now = js_sys::Date::now();
    let seconds = (now - SINCE_MS.with(|c| c.replace(now))) / 1000.0;
    let statement = outcome::Statement {
        site: &site,
        widget,
        lang: lang.code(),
        verb: both(&format!("xapi.verb.{}", graded.verb.code())),
        name: activity_name(widget, o.target.as_deref()),
        seconds,
    };
    post(&allowed, &outcome::message(id, &statement, o, &graded));
}

/// The learner opened `target`'s solution: every later attempt at it earns no credit.
fn solution_shown(shared: &Rc<RefCell<Shared>>, target: &str) {
    let widget = shared.borrow().widget.id;
    let object = outcome::object_id(&site(), widget, Some(target));
    let mut entry = load_entry(&object);
    entry.revealed = true;
    save_entry(&object, entry);
}

/// Connects the embed to its host page: the `message` listener, the reporter that sends a
/// run's result, and the size observer. Returns what disconnects them.
fn connect(shared: Rc<RefCell<Shared>>) -> impl FnOnce() {
    SINCE_MS.with(|c| c.set(js_sys::Date::now()));
    let listener = {
        let shared = shared.clone();
        gloo::events::EventListener::new(&gloo::utils::window(), "message", move |e| {
            if let Some(e) = e.dyn_ref::<web_sys::MessageEvent>() {
                handle(&shared, e);
            }
        })
    };
    {
        let shared = shared.clone();
        api::set_reporter(Some(Box::new(move |result| {
            let (allowed, widget, pending) = {
                let mut s = shared.borrow_mut();
                (s.allowed.clone(), s.widget, s.pending.take())
            };
            let id = pending.flatten();
            // The learner's outcome follows the run's measurements (docs: "Outcomes").
            let response = outcome::take_response();
            let outcome = outcome::of_report(&result, widget.run_stops, response);
            let json = match result {
                Ok(results) => Out::RunFinished {
                    id: id.as_ref(),
                    widget: widget.id,
                    results: &results,
                }
                .to_json(),
                Err(message) => Out::Error {
                    id: id.as_ref(),
                    code: "run-failed",
                    message: &message,
                }
                .to_json(),
            };
            post(&allowed, &json);
            post_outcome(&shared, id.as_ref(), &outcome);
        })));
    }
    {
        let shared = shared.clone();
        outcome::set_sink(Some(Box::new(move |e| match e {
            outcome::Event::Outcome(o) => post_outcome(&shared, None, &o),
            outcome::Event::SolutionShown(target) => solution_shown(&shared, &target),
        })));
    }
    // The content's height goes to the host on a timer, never on an animation frame: Chrome
    // throttles rAF (and delays ResizeObserver) in a cross-origin frame scrolled out of view,
    // and a height changed there must still reach the host. Changes are coalesced (one
    // measurement per burst, at most one message per RESIZE_GAP_MS) and sent only when the
    // height really changed. A MutationObserver (a microtask, never throttled) notices DOM
    // changes; the ResizeObserver and the window's resize cover layout-only changes.
    let last = Rc::new(RefCell::new((0u32, f64::NEG_INFINITY)));
    let pending = Rc::new(RefCell::new(None::<i32>));
    let on_timer = {
        let (shared, pending, last) = (shared.clone(), pending.clone(), last.clone());
        Closure::<dyn FnMut()>::new(move || {
            *pending.borrow_mut() = None;
            let h = content_height();
            if h != last.borrow().0 {
                *last.borrow_mut() = (h, js_sys::Date::now());
                let allowed = shared.borrow().allowed.clone();
                post(&allowed, &Out::Resize { height: h }.to_json());
                post_lti(&allowed, h);
            }
        })
    };
    let on_change = {
        let pending = pending.clone();
        let last = last.clone();
        let timer: js_sys::Function = on_timer
            .as_ref()
            .unchecked_ref::<js_sys::Function>()
            .clone();
        Closure::<dyn FnMut()>::new(move || {
            if pending.borrow().is_none() {
                let since = js_sys::Date::now() - last.borrow().1;
                let wait = (RESIZE_GAP_MS - since).clamp(0.0, RESIZE_GAP_MS) as i32;
                *pending.borrow_mut() = gloo::utils::window()
                    .set_timeout_with_callback_and_timeout_and_arguments_0(&timer, wait)
                    .ok();
            }
        })
    };
    let main = gloo::utils::document().get_element_by_id("main");
    let observer = web_sys::ResizeObserver::new(on_change.as_ref().unchecked_ref()).ok();
    let mutations = web_sys::MutationObserver::new(on_change.as_ref().unchecked_ref()).ok();
    if let Some(main) = &main {
        if let Some(o) = &observer {
            o.observe(main);
        }
        if let Some(m) = &mutations {
            let opts = web_sys::MutationObserverInit::new();
            opts.set_subtree(true);
            opts.set_child_list(true);
            opts.set_attributes(true);
            opts.set_character_data(true);
            let _ = m.observe_with_options(main, &opts);
        }
    }
    let window_resize = {
        let f: js_sys::Function = on_change
            .as_ref()
            .unchecked_ref::<js_sys::Function>()
            .clone();
        gloo::events::EventListener::new(&gloo::utils::window(), "resize", move |_| {
            let _ = f.call0(&JsValue::NULL);
        })
    };
    // The first measurement, whatever the observers do.
    let _ = on_change
        .as_ref()
        .unchecked_ref::<js_sys::Function>()
        .call0(&JsValue::NULL);
    move || {
        drop(listener);
        api::set_reporter(None);
        api::clear_work();
        drop(window_resize);
        outcome::set_sink(None);
        if let Some(o) = observer {
            o.disconnect();
        }
        if let Some(m) = mutations {
            m.disconnect();
        }
        // A timer set and not yet run would call a dropped closure.
        if let Some(id) = pending.borrow_mut().take() {
            gloo::utils::window().clear_timeout_with_handle(id);
        }
        drop(on_change);
        drop(on_timer);
    }
}

#[function_component]
pub fn EmbedHost(props: &EmbedHostProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let generation = use_state(|| 0u32);
    let shared = use_mut_ref(|| None::<Rc<RefCell<Shared>>>);
    let ready_sent = use_mut_ref(|| false);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let (Some(widget), Some(draw)) = (api::widget(&props.widget), render(&props.widget)) else {
        return unknown(&ctx, &props.widget);
    };

    // The widget sees its forced and default parameters as if they were in the address.
    let mut query = ctx.query.clone();
    for (k, v) in widget.defaults {
        if query.get(k).is_none() {
            query.set(k, v);
        }
    }
    for (k, v) in widget.forced {
        query.set(k, v);
    }
    let origins = api::parse_origins(ctx.query.get("parentOrigin"));
    let allowed = origins.clone().unwrap_or_default();
    let theme = api::Theme::parse(ctx.query.get("theme"));
    let (hidden, unknown_hide) = api::parse_hide(ctx.query.get("hide"), widget.hideable);

    {
        let remount = {
            let generation = generation.clone();
            Callback::from(move |()| generation.set(*generation + 1))
        };
        let fresh = Shared {
            widget,
            lang: ctx.lang,
            query: query.clone(),
            allowed: allowed.clone(),
            pending: None,
            navigator: navigator.clone(),
            route: ctx.route.clone(),
            remount: Some(remount),
        };
        let mut slot = shared.borrow_mut();
        match slot.as_ref() {
            Some(s) => {
                let mut s = s.borrow_mut();
                let pending = s.pending.take();
                *s = Shared { pending, ..fresh };
            }
            None => *slot = Some(Rc::new(RefCell::new(fresh))),
        }
    }
    let Some(shared_now) = shared.borrow().clone() else {
        return html! {};
    };

    {
        // Listener, reporter and size observer live as long as the embed.
        let shared = shared_now.clone();
        use_effect_with((), move |_| connect(shared));
    }
    {
        // `ready` once the widget can act on requests (the WebGPU probe has answered).
        let probed = !matches!(ctx.webgpu, WebGpuStatus::Checking);
        let shared = shared_now.clone();
        let ready_sent = ready_sent.clone();
        use_effect_with(probed, move |probed| {
            if *probed && !*ready_sent.borrow() {
                *ready_sent.borrow_mut() = true;
                let s = shared.borrow();
                let params = api::widget_params(s.query.pairs(), s.widget.params);
                post(
                    &s.allowed,
                    &Out::Ready {
                        widget: s.widget.id,
                        lang: s.lang.code(),
                        params: &params,
                    }
                    .to_json(),
                );
            }
        });
    }
    {
        let theme = theme.unwrap_or(api::Theme::Auto);
        use_effect_with(theme, move |theme| {
            if let Some(el) = gloo::utils::document().document_element() {
                let _ = el.set_attribute("data-theme", theme.code());
            }
        });
    }

    let inner = Ctx {
        query: query.clone(),
        ..ctx.clone()
    };
    let full = format!("#/{}?{}", full_page(widget, &query), {
        let mut q = query.clone();
        for k in ["parentOrigin", "hide", "theme"] {
            q.remove(k);
        }
        q.set("lang", ctx.lang.code());
        q.encode()
    });
    let mut notes = Vec::new();
    match &origins {
        Err(api::OriginError::Wildcard) => notes.push(ctx.t("embed.origin.wildcard").to_string()),
        Err(api::OriginError::NotAnOrigin(o)) => {
            notes.push(ctx.tf("embed.origin.bad", &[("value", o)]))
        }
        Ok(_) => {}
    }
    if theme.is_none() {
        let v: String = ctx
            .query
            .get("theme")
            .unwrap_or("")
            .chars()
            .take(20)
            .collect();
        notes.push(ctx.tf("embed.theme.bad", &[("value", &v)]));
    }
    if !unknown_hide.is_empty() {
        notes.push(ctx.tf(
            "embed.hide.bad",
            &[
                ("names", &unknown_hide.join(", ")),
                ("list", &widget.hideable.join(", ")),
            ],
        ));
    }
    html! {
        <ContextProvider<Ctx> context={inner.clone()}>
            <div class="embed-root" data-widget={widget.id} data-hide={hidden.join(" ")}
                data-hideable={widget.hideable.join(" ")}>
                { for notes.iter().map(|n| html! { <p class="message error embed-note" role="alert">{ n.clone() }</p> }) }
                <div key={*generation} class="embed-body">{ draw(&inner) }</div>
                <p class="embed-open"><a href={full} target="_blank" rel="noopener">{ ctx.t("embed.open") }</a></p>
            </div>
        </ContextProvider<Ctx>>
    }
}

/// The full page a widget belongs to (for "Open in GPU Playground").
fn full_page(w: &Widget, query: &Query) -> String {
    let with_id = |page: &str, key: &str| match query.get(key) {
        Some(id) if !id.is_empty() => {
            format!("{page}/{}", page_models::query::encode_component(id))
        }
        _ => page.to_string(),
    };
    match w.id {
        "matmul" | "ladder" => "kernels".into(),
        "conv-ladder" | "conv-direct" | "conv-tiled" | "conv-im2col-gemm"
        | "conv-implicit-gemm" | "conv-pointwise" => "kernels".into(),
        "race" | "sweep" | "claim" | "conv-race" => "race".into(),
        "simt" | "simt-compare" | "schedule" => "visualiser".into(),
        "train" | "batch" => "train".into(),
        "cnn" => "cnn".into(),
        "gpt" => "gpt".into(),
        "lesson" => with_id("learn", "lesson"),
        "conv-filter" | "conv-field" => "conv".into(),
        "editor" => "editor".into(),
        "puzzle" => with_id("puzzles", "id"),
        _ => String::new(),
    }
}

fn unknown(ctx: &Ctx, name: &str) -> Html {
    let list = WIDGETS.iter().map(|w| w.id).collect::<Vec<_>>().join(", ");
    let name: String = name.chars().take(40).collect();
    html! {
        <p class="message error" role="alert">
            { ctx.tf("embed.unknown", &[("name", &name), ("list", &list)]) }
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_url_safe() {
        for (i, w) in WIDGETS.iter().enumerate() {
            assert!(
                // Digits are URL-safe too (the conv stage `conv-im2col-gemm`).
                w.id.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                w.id
            );
            assert!(
                WIDGETS[i + 1..].iter().all(|o| o.id != w.id),
                "{} twice",
                w.id
            );
            for p in w.params {
                assert!(!api::OWN_PARAMS.contains(p), "{} may not set {p}", w.id);
            }
        }
    }

    /// The registry's data is in `page_models::embed`; each entry needs its arm here.
    #[test]
    fn every_widget_renders() {
        for w in WIDGETS {
            assert!(render(w.id).is_some(), "{} has no arm in render()", w.id);
        }
    }

    /// `hide=` works through CSS; a name without a rule would silently hide nothing.
    #[test]
    fn every_hideable_control_has_a_css_rule() {
        let css = include_str!("../../../../www/css/embed.css");
        for w in WIDGETS {
            for h in w.hideable {
                let rule = format!(r#"[data-widget="{}"][data-hide~="{h}"]"#, w.id);
                let any = format!(r#".embed-root[data-hide~="{h}"]"#);
                assert!(
                    css.contains(&rule) || css.contains(&any),
                    "no rule in www/css/embed.css hides {h} of {}",
                    w.id
                );
            }
        }
    }

    /// `run` presses a button by id; the id must exist in the widget's source.
    #[test]
    fn run_buttons_exist() {
        let sources = [
            include_str!("./kernel_run.rs"),
            include_str!("./ladder.rs"),
            include_str!("race/duel.rs"),
            include_str!("race/sweep.rs"),
            include_str!("race/claim.rs"),
            include_str!("./visualiser.rs"),
            include_str!("./schedule_replay.rs"),
            include_str!("./train.rs"),
            include_str!("cnn/controls.rs"),
            include_str!("gpt/train.rs"),
            include_str!("./conv.rs"),
            include_str!("conv/layers.rs"),
            include_str!("./editor_page.rs"),
            include_str!("./puzzle_page.rs"),
            include_str!("./learn/kit.rs"),
        ];
        for w in WIDGETS {
            if let Some(b) = w.run_button {
                // `#id` or `tag.class`: the id attribute, or the class among an element's.
                let found = if let Some(id) = b.strip_prefix('#') {
                    let attr = format!(r#"id="{id}""#);
                    sources.iter().any(|s| s.contains(&attr))
                } else {
                    let (tag, class) = b.split_once('.').unwrap_or((b, ""));
                    sources.iter().any(|s| {
                        s.match_indices(&format!("<{tag} ")).any(|(i, _)| {
                            let el = &s[i..s[i..].find('>').map_or(s.len(), |e| i + e)];
                            el.split('"').any(|v| v.split(' ').any(|c| c == class))
                        })
                    })
                };
                assert!(found, "{}: no element matches {b}", w.id);
            }
        }
    }
}
