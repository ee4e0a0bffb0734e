//! Embedded widgets (`#/embed/<widget>?…`): the one registry of what can be embedded, and the
//! host that wraps any of them for an iframe — theme, `hide=`, and the postMessage API
//! (`crate::embed` parses and checks; this only wires it to `window`). Widgets stay unaware
//! of embedding except for one call that reports a finished run (`report`).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use yew::prelude::*;
use yew_router::prelude::*;

use super::{
    replace_query, Conv, Ctx, GpuPanel, KernelRun, Ladder, Lesson, Race, Train, Visualiser,
};
use crate::embed::{self as api, Command, Field, Id, Out, Parsed, Report, RequestError, Value};
use crate::probe::WebGpuStatus;
use crate::query::Query;
use crate::run_family::{Problem, RunFamily};

/// One embeddable widget. Adding a widget (a conv view, the editor, a puzzle) is one entry.
pub struct Widget {
    pub id: &'static str,
    /// What it is, for the embed index (locale key).
    pub title_key: &'static str,
    pub render: fn(&Ctx) -> Html,
    /// URL parameters the host may change with `setParams` (read by the widget as if typed
    /// into the address, so its own validation applies).
    pub params: &'static [&'static str],
    /// Parameters this widget always has (which view of a page it is).
    pub forced: &'static [(&'static str, &'static str)],
    /// Parameters it starts with unless the address says otherwise.
    pub defaults: &'static [(&'static str, &'static str)],
    /// Controls `hide=` can hide; each has a rule in `www/css/embed.css`.
    pub hideable: &'static [&'static str],
    /// The button a `run` request presses (a CSS selector), if the widget runs anything.
    pub run_button: Option<&'static str>,
    /// Whether a `run` while the host's run is going presses the button again, to stop it
    /// (training: Play, then Pause ends the run and reports it). Otherwise it is `busy`.
    pub run_stops: bool,
    /// The iframe size the "Embed" button suggests (CSS px; `resize` adjusts the height).
    pub size: (u32, u32),
}

const MATMUL: &[&str] = &["stage", "m", "n", "k"];
/// A conv stage's Run: its shape fields (the stage is fixed by the widget).
const CONV: &[&str] = &["n", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil"];
const CONV_LADDER: &[&str] = &[
    "stage", "n", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil",
];

/// The Run widget of the conv stage the widget's forced `stage=` names.
fn conv_run(ctx: &Ctx) -> Html {
    let id = ctx.query.get("stage").unwrap_or("conv-direct").to_string();
    html! { <KernelRun key="conv" family={RunFamily::Conv} stage_id={id} /> }
}

macro_rules! conv_stage_widget {
    ($id:literal, $title:literal) => {
        Widget {
            id: $id,
            title_key: $title,
            render: conv_run,
            params: CONV,
            forced: &[("family", "conv"), ("stage", $id)],
            defaults: &[],
            hideable: &["title", "notes"],
            size: (640, 760),
            run_button: Some("#run-button"),
            run_stops: false,
        }
    };
}
const CONV_PAGE: &[&str] = &[
    "img", "filter", "size", "stage", "stride", "pad", "dil", "w", "k1", "k2", "init", "seed",
];
const RACE: &[&str] = &["n", "cpu", "workers", "gpu", "from", "to", "at"];
const CONV_RACE: &[&str] = &[
    "batch", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil", "ccpu", "cgpu", "workers",
];
const SIMT: &[&str] = &[
    "stage", "compare", "size", "wg", "sg", "step", "wgx", "wgy", "t",
];
const TRAIN: &[&str] = &[
    "data", "layers", "act", "opt", "loss", "lr", "noise", "seed", "split", "n", "features", "add",
    "batch",
];

pub const WIDGETS: &[Widget] = &[
    Widget {
        id: "matmul",
        title_key: "embed.widget.matmul",
        render: |ctx| {
            let id = ctx
                .query
                .get("stage")
                .and_then(gpu_runtime::kernel)
                .map(|k| k.id)
                .unwrap_or(super::kernel_run::DEFAULT_KERNEL);
            html! { <KernelRun key="matmul" stage_id={id} /> }
        },
        params: MATMUL,
        forced: &[],
        defaults: &[],
        hideable: &["title", "notes"],
        size: (640, 560),
        run_button: Some("#run-button"),
        run_stops: false,
    },
    Widget {
        id: "ladder",
        title_key: "embed.widget.ladder",
        render: |_| html! { <Ladder /> },
        params: MATMUL,
        forced: &[],
        defaults: &[],
        hideable: &["stages", "source", "run-all"],
        size: (960, 900),
        run_button: Some("#run-all-button"),
        run_stops: false,
    },
    Widget {
        id: "conv-ladder",
        title_key: "embed.widget.conv_ladder",
        render: |_| html! { <Ladder /> },
        params: CONV_LADDER,
        forced: &[("family", "conv")],
        defaults: &[],
        hideable: &["stages", "source", "run-all"],
        size: (960, 1000),
        run_button: Some("#run-all-button"),
        run_stops: false,
    },
    conv_stage_widget!("conv-direct", "embed.widget.conv_direct"),
    conv_stage_widget!("conv-tiled", "embed.widget.conv_tiled"),
    conv_stage_widget!("conv-im2col-gemm", "embed.widget.conv_im2col_gemm"),
    conv_stage_widget!("conv-implicit-gemm", "embed.widget.conv_implicit_gemm"),
    conv_stage_widget!("conv-pointwise", "embed.widget.conv_pointwise"),
    Widget {
        id: "race",
        title_key: "embed.widget.race",
        render: |_| html! { <Race /> },
        params: RACE,
        forced: &[("view", "race")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        size: (760, 700),
        run_button: Some("#race-start"),
        run_stops: false,
    },
    Widget {
        id: "conv-race",
        title_key: "embed.widget.conv_race",
        render: |_| html! { <Race /> },
        params: CONV_RACE,
        forced: &[("view", "conv")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        size: (760, 900),
        run_button: Some("#race-start"),
        run_stops: false,
    },
    Widget {
        id: "sweep",
        title_key: "embed.widget.sweep",
        render: |_| html! { <Race /> },
        params: RACE,
        forced: &[("view", "sweep")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        size: (760, 820),
        run_button: Some("#sweep-start"),
        run_stops: false,
    },
    Widget {
        id: "claim",
        title_key: "embed.widget.claim",
        render: |_| html! { <Race /> },
        params: RACE,
        forced: &[("view", "claim")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        size: (760, 760),
        run_button: Some("#claim-start"),
        run_stops: false,
    },
    Widget {
        id: "simt",
        title_key: "embed.widget.simt",
        render: |_| html! { <Visualiser /> },
        params: SIMT,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "replay"],
        size: (960, 900),
        run_button: Some("#vis-play"),
        run_stops: false,
    },
    Widget {
        id: "simt-compare",
        title_key: "embed.widget.simt_compare",
        render: |_| html! { <Visualiser /> },
        params: SIMT,
        forced: &[],
        defaults: &[("stage", "naive"), ("compare", "tiled")],
        hideable: &["heading", "replay"],
        size: (960, 1000),
        run_button: Some("#vis-play"),
        run_stops: false,
    },
    Widget {
        id: "schedule",
        title_key: "embed.widget.schedule",
        render: |_| html! { <super::schedule_replay::ScheduleReplay /> },
        params: &[],
        forced: &[],
        defaults: &[],
        hideable: &[],
        size: (760, 600),
        run_button: Some("#real-record"),
        run_stops: false,
    },
    Widget {
        id: "train",
        title_key: "embed.widget.train",
        render: |_| html! { <Train /> },
        params: TRAIN,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "kernels", "experiment"],
        size: (1000, 1000),
        run_button: Some("#train-play"),
        run_stops: true,
    },
    Widget {
        id: "batch",
        title_key: "embed.widget.batch",
        render: |_| html! { <Train /> },
        params: TRAIN,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "playground"],
        size: (800, 600),
        run_button: Some("#train-exp-run"),
        run_stops: false,
    },
    Widget {
        id: "conv-filter",
        title_key: "embed.widget.conv_filter",
        render: |_| html! { <Conv views={super::conv::Views::Filter} /> },
        params: CONV_PAGE,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "controls"],
        size: (800, 900),
        run_button: Some("#conv-run"),
        run_stops: false,
    },
    Widget {
        id: "conv-field",
        title_key: "embed.widget.conv_field",
        render: |_| html! { <Conv views={super::conv::Views::Field} /> },
        params: CONV_PAGE,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "controls"],
        size: (900, 1100),
        run_button: Some("#conv-layers-run"),
        run_stops: false,
    },
    Widget {
        id: "lesson",
        title_key: "embed.widget.lesson",
        render: |ctx| {
            let id = ctx.query.get("lesson").unwrap_or("latency-throughput");
            html! { <Lesson id={id.to_string()} /> }
        },
        params: &["lesson"],
        forced: &[],
        defaults: &[],
        hideable: &["heading", "prose"],
        size: (800, 900),
        run_button: Some("button.measure"),
        run_stops: false,
    },
    Widget {
        id: "editor",
        title_key: "embed.widget.editor",
        render: |ctx| {
            // Keyed by stage, as on the full page: another stage starts from its own source.
            let key = ctx.query.get("stage").unwrap_or_default().to_string();
            html! { <super::KernelEditor {key} /> }
        },
        params: &["stage", "m", "n", "k", "src"],
        forced: &[],
        defaults: &[],
        hideable: &["heading", "stages"],
        size: (960, 1000),
        run_button: Some("#editor-run"),
        run_stops: false,
    },
    Widget {
        id: "puzzle",
        title_key: "embed.widget.puzzle",
        render: |ctx| {
            let id = ctx
                .query
                .get("id")
                .or(puzzles::PUZZLES.first().map(|p| p.id))
                .unwrap_or_default()
                .to_string();
            let key = id.clone();
            html! { <super::PuzzlePage {key} id={id} /> }
        },
        params: &["id"],
        forced: &[],
        defaults: &[],
        hideable: &["hints", "solution"],
        size: (900, 1000),
        run_button: Some("#puzzle-run"),
        run_stops: false,
    },
    Widget {
        id: "gpu",
        title_key: "embed.widget.gpu",
        render: |_| html! { <GpuPanel /> },
        params: &[],
        forced: &[],
        defaults: &[],
        hideable: &[],
        size: (560, 640),
        run_button: None,
        run_stops: false,
    },
];

pub fn widget(id: &str) -> Option<&'static Widget> {
    WIDGETS.iter().find(|w| w.id == id)
}

// ---------------------------------------------------------------- run reports

type Reporter = Box<dyn Fn(Result<Report, String>)>;

thread_local! {
    /// Set while an embed host is mounted; widgets report finished runs through it.
    static REPORTER: RefCell<Option<Reporter>> = const { RefCell::new(None) };
}

/// Called by a widget when a run has finished (or failed); does nothing outside an embed.
pub fn report(result: Result<Report, String>) {
    REPORTER.with(|r| {
        if let Some(f) = r.borrow().as_ref() {
            f(result);
        }
    });
}

/// The results of a verified matmul run, as `run-finished` carries them.
pub fn matmul_report(
    kernel: &str,
    v: &gpu_runtime::VerifiedRun,
    size: gpu_runtime::cpu_kernels::matmul::MatmulSize,
) -> Report {
    vec![
        ("kernel", Field::Str(kernel.into())),
        ("m", Field::Num(size.m as f64)),
        ("n", Field::Num(size.n as f64)),
        ("k", Field::Num(size.k as f64)),
        ("kernelMs", Field::Num(v.timing.kernel_ms())),
        ("uploadMs", Field::Num(v.timing.upload_ms)),
        ("gflops", Field::Num(v.gflops())),
        (
            "timing",
            Field::Str(
                match v.timing.method {
                    gpu_runtime::TimingMethod::Timestamps => "gpu-timestamps",
                    gpu_runtime::TimingMethod::WallClock => "wall-clock",
                }
                .into(),
            ),
        ),
        ("verified", Field::Bool(v.verdict.ok)),
        ("maxRelError", Field::Num(v.verdict.max_rel_error)),
        ("checked", Field::Num(v.checked as f64)),
    ]
}

/// The results of a verified run of any family's stage, as `run-finished` carries them: the
/// matmul fields as before, or a conv stage's shape.
pub fn stage_report(stage: &str, v: &gpu_runtime::VerifiedRun, problem: &Problem) -> Report {
    match problem {
        Problem::Matmul(size) => matmul_report(stage, v, *size),
        Problem::Conv(s) => {
            let mut r = matmul_report(
                stage,
                v,
                gpu_runtime::cpu_kernels::matmul::MatmulSize::new(0, 0, 0),
            );
            r.retain(|(k, _)| !matches!(*k, "m" | "n" | "k"));
            let dims = [
                ("n", s.n),
                ("h", s.h),
                ("w", s.w),
                ("c", s.c),
                ("k", s.k),
                ("r", s.r),
                ("s", s.s),
                ("stride", s.stride),
                ("pad", s.pad),
                ("dil", s.dilation),
            ];
            for (i, (k, d)) in dims.into_iter().enumerate() {
                r.insert(1 + i, (k, Field::Num(d as f64)));
            }
            r.insert(1, ("family", Field::Str("conv".into())));
            r
        }
    }
}

/// The results of a conv race: the shape, both end-to-end times, the winner, verification.
pub fn conv_race_report(
    shape: &gpu_runtime::cpu_kernels::conv::ConvShape,
    cpu_ms: Option<f64>,
    gpu_ms: Option<f64>,
    verified: Option<bool>,
) -> Report {
    let mut r = race_report(
        gpu_runtime::cpu_kernels::matmul::MatmulSize::new(0, 0, 0),
        None,
        None,
        verified,
    );
    r.retain(|(k, _)| *k != "n");
    let rate = |ms: f64| shape.flops() / (ms * 1e6);
    let mut front = vec![
        ("family", Field::Str("conv".into())),
        ("n", Field::Num(shape.n as f64)),
        ("h", Field::Num(shape.h as f64)),
        ("w", Field::Num(shape.w as f64)),
        ("c", Field::Num(shape.c as f64)),
        ("k", Field::Num(shape.k as f64)),
        ("r", Field::Num(shape.r as f64)),
        ("s", Field::Num(shape.s as f64)),
    ];
    if let Some(c) = cpu_ms {
        front.push(("cpuMs", Field::Num(c)));
        front.push(("cpuGflops", Field::Num(rate(c))));
    }
    if let Some(g) = gpu_ms {
        front.push(("gpuMs", Field::Num(g)));
        front.push(("gpuGflops", Field::Num(rate(g))));
    }
    if let (Some(c), Some(g)) = (cpu_ms, gpu_ms) {
        front.push((
            "winner",
            Field::Str(if g < c { "gpu" } else { "cpu" }.into()),
        ));
    }
    front.extend(r);
    front
}

/// The results of a race: both end-to-end times, the winner (the duel's own rule: the
/// shorter time), and whether both results were verified.
pub fn race_report(
    size: gpu_runtime::cpu_kernels::matmul::MatmulSize,
    cpu_ms: Option<f64>,
    gpu_ms: Option<f64>,
    verified: Option<bool>,
) -> Report {
    let mut r = vec![("n", Field::Num(size.n as f64))];
    let rate = |ms: f64| size.flops() / (ms * 1e6);
    if let Some(c) = cpu_ms {
        r.push(("cpuMs", Field::Num(c)));
        r.push(("cpuGflops", Field::Num(rate(c))));
    }
    if let Some(g) = gpu_ms {
        r.push(("gpuMs", Field::Num(g)));
        r.push(("gpuGflops", Field::Num(rate(g))));
    }
    if let (Some(c), Some(g)) = (cpu_ms, gpu_ms) {
        r.push((
            "winner",
            Field::Str(if g < c { "gpu" } else { "cpu" }.into()),
        ));
    }
    r.push(("verified", Field::Bool(verified == Some(true))));
    r
}

// ---------------------------------------------------------------- the host

#[derive(Properties, PartialEq)]
pub struct EmbedHostProps {
    pub widget: AttrValue,
}

/// What the message listener needs, shared with the render (refreshed on every render).
struct Shared {
    widget: &'static Widget,
    lang: &'static str,
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

fn state_json(s: &Shared, id: Option<&Id>) -> String {
    let params = api::widget_params(s.query.pairs(), s.widget.params);
    Out::State {
        id,
        widget: s.widget.id,
        params: &params,
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

fn handle(shared: &Rc<RefCell<Shared>>, event: &web_sys::MessageEvent) {
    let window = gloo::utils::window();
    let allowed = shared.borrow().allowed.clone();
    // Only the named origins, and only our own parent window: everything else is ignored
    // without a word, so a foreign page learns nothing from us.
    if !api::origin_allowed(&allowed, &event.origin()) {
        return;
    }
    let from_parent = match (event.source(), window.parent()) {
        (Some(src), Ok(Some(parent))) => js_sys::Object::is(&src, &parent),
        _ => false,
    };
    if !from_parent {
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
        Command::GetState => post(&allowed, &state_json(&shared.borrow(), id)),
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
            let mut q = shared.borrow().query.clone();
            for (k, v) in &params {
                q.set(k, v);
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
    if let Some(r) = remount {
        r.emit(());
    }
    post(&allowed, &state_json(&shared.borrow(), id));
}

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
    let Some(widget) = widget(&props.widget) else {
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
            lang: ctx.lang.code(),
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
        use_effect_with((), move |_| {
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
                REPORTER.with(|r| {
                    *r.borrow_mut() = Some(Box::new(move |result| {
                        let (allowed, widget, pending) = {
                            let mut s = shared.borrow_mut();
                            (s.allowed.clone(), s.widget.id, s.pending.take())
                        };
                        let id = pending.flatten();
                        let json = match result {
                            Ok(results) => Out::RunFinished {
                                id: id.as_ref(),
                                widget,
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
                    }));
                });
            }
            let last = Rc::new(RefCell::new(0u32));
            let on_resize = {
                let shared = shared.clone();
                Closure::<dyn FnMut()>::new(move || {
                    let h = content_height();
                    if h != *last.borrow() {
                        *last.borrow_mut() = h;
                        let allowed = shared.borrow().allowed.clone();
                        post(&allowed, &Out::Resize { height: h }.to_json());
                        post_lti(&allowed, h);
                    }
                })
            };
            let observer = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()).ok();
            if let (Some(o), Some(main)) =
                (&observer, gloo::utils::document().get_element_by_id("main"))
            {
                o.observe(&main);
            }
            move || {
                drop(listener);
                REPORTER.with(|r| *r.borrow_mut() = None);
                if let Some(o) = observer {
                    o.disconnect();
                }
                drop(on_resize);
            }
        });
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
                        lang: s.lang,
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
                <div key={*generation} class="embed-body">{ (widget.render)(&inner) }</div>
                <p class="embed-open"><a href={full} target="_blank" rel="noopener">{ ctx.t("embed.open") }</a></p>
            </div>
        </ContextProvider<Ctx>>
    }
}

/// The text parts (besides the core) a widget's embed shows: only its own area's, which is
/// less than its page's (the matmul Run widget has none of the kernel page's conv text).
pub fn text_parts(id: &str) -> &'static [crate::i18n::Part] {
    use crate::i18n::Part;
    match id {
        "race" | "sweep" | "claim" => &[Part::Race],
        "conv-race" => &[Part::Race, Part::Conv],
        "train" | "batch" => &[Part::Train],
        "editor" | "puzzle" => &[Part::Editor],
        // The SIMT view and the scheduling replay name the conv stages they can show.
        "simt" | "simt-compare" | "schedule" => &[Part::Conv],
        "lesson" => &Part::ALL,
        id if id.starts_with("conv-") => &[Part::Conv],
        _ => &[],
    }
}

/// The full page a widget belongs to (for "Open in GPU Playground").
fn full_page(w: &Widget, query: &Query) -> String {
    let with_id = |page: &str, key: &str| match query.get(key) {
        Some(id) if !id.is_empty() => format!("{page}/{}", crate::query::encode_component(id)),
        _ => page.to_string(),
    };
    match w.id {
        "matmul" | "ladder" => "kernels".into(),
        "conv-ladder" | "conv-direct" | "conv-tiled" | "conv-im2col-gemm"
        | "conv-implicit-gemm" | "conv-pointwise" => "kernels".into(),
        "race" | "sweep" | "claim" | "conv-race" => "race".into(),
        "simt" | "simt-compare" | "schedule" => "visualiser".into(),
        "train" | "batch" => "train".into(),
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
            include_str!("conv/mod.rs"),
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
