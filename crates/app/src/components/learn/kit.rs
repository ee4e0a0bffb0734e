//! Pieces shared by the lessons' widgets: paragraphs from keys, the "try it" line, the state
//! of a measurement (idle, running with progress, cancelled, done, failed, device lost), the
//! GPU gate that explains a missing WebGPU, and a wall clock.
//!
//! A measurement is a series of short GPU runs started through the shared run lifecycle
//! ([`use_measure`] wraps `use_run`): Cancel and leaving the page stop it. The work stops at
//! its next step ([`Progress::set`]/[`Progress::check`] return `Err(Cancelled)`), and the
//! runs that take a [`RunControl`] ([`Progress::control`]) stop between their chunks: what
//! was submitted finishes, nothing more is sent.

use gpu_runtime::{GpuError, RunControl};
use yew::prelude::*;

use crate::components::run_lifecycle::{use_run, Run, RunHandle};

use crate::components::Ctx;
use crate::probe::WebGpuStatus;
use crate::session;

/// Paragraphs, one per key.
pub fn paras(ctx: &Ctx, keys: &[&str]) -> Html {
    html! { <>{ for keys.iter().map(|k| html! { <p>{ ctx.linked(k) }</p> }) }</> }
}

/// A short list, one item per key.
pub fn list(ctx: &Ctx, keys: &[&str]) -> Html {
    html! { <ul class="lesson-points">{ for keys.iter().map(|k| html! { <li>{ ctx.linked(k) }</li> }) }</ul> }
}

/// A sub-heading.
pub fn h2(ctx: &Ctx, key: &str) -> Html {
    html! { <h2>{ ctx.t(key) }</h2> }
}

/// The closing "Try it" line: text, and a link to a view of the app (a hash route).
pub fn try_it(ctx: &Ctx, text_key: &str, link: Option<(&str, &str)>) -> Html {
    html! {
        <p class="try-it">
            <strong>{ ctx.t("lesson.common.try_it") }</strong>{ ctx.t(text_key) }
            { for link.map(|(route, label)| html! {
                <>{ " " }<a href={format!("#/{route}{}lang={}", if route.contains('?') { '&' } else { '?' }, ctx.lang.code())}>{ ctx.t(label) }</a></>
            }) }
        </p>
    }
}

/// A fact-check note: "Correction: …" with the FC ids it rests on.
pub fn correction(ctx: &Ctx, key: &str) -> Html {
    html! {
        <aside class="correction">
            <strong>{ ctx.t("lesson.common.correction") }</strong>{ ctx.linked(key) }
        </aside>
    }
}

/// Where a measurement is.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase<T> {
    Idle,
    Running {
        done: u32,
        total: u32,
    },
    /// Stopped by Cancel (or by leaving the page) before it finished.
    Cancelled,
    Done(T),
    Failed(String),
    Lost(String),
}

impl<T> Phase<T> {
    pub fn running(&self) -> bool {
        matches!(self, Phase::Running { .. })
    }
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Running { .. } => "running",
            Phase::Cancelled => "cancelled",
            Phase::Done(_) => "done",
            Phase::Failed(_) => "error",
            Phase::Lost(_) => "lost",
        }
    }
    /// A failed run as a phase: a lost device also drops the page's device so the next
    /// Measure starts a fresh one.
    pub fn from_error(e: GpuError) -> Self {
        match e {
            GpuError::Cancelled => Phase::Cancelled,
            GpuError::DeviceLost(m) => {
                session::forget();
                Phase::Lost(m)
            }
            other => Phase::Failed(other.to_string()),
        }
    }
}

/// A lesson widget's measurement: its phase and its runs (the shared run lifecycle,
/// `use_run`: Cancel and leaving the page stop the run in progress). Derefs to the phase.
pub struct Measure<T> {
    phase: UseStateHandle<Phase<T>>,
    runs: RunHandle<()>,
    cancelling: UseStateHandle<bool>,
}

impl<T> Clone for Measure<T> {
    fn clone(&self) -> Self {
        Measure {
            phase: self.phase.clone(),
            runs: self.runs.clone(),
            cancelling: self.cancelling.clone(),
        }
    }
}

impl<T> std::ops::Deref for Measure<T> {
    type Target = Phase<T>;
    fn deref(&self) -> &Phase<T> {
        &self.phase
    }
}

impl<T> Measure<T> {
    /// Asks the run in progress to stop before its next GPU run.
    pub fn cancel(&self) {
        if self.runs.cancel() {
            self.cancelling.set(true);
        }
    }
}

/// A measurement's state for a lesson widget, idle at first.
#[hook]
pub fn use_measure<T: 'static>() -> Measure<T> {
    let phase = use_state(|| Phase::<T>::Idle);
    let runs = use_run::<()>(|| ());
    let cancelling = use_state(|| false);
    Measure {
        phase,
        runs,
        cancelling,
    }
}

/// A running measurement's progress: the widget shows `done` of the total.
pub struct Progress<T> {
    phase: UseStateHandle<Phase<T>>,
    total: u32,
    run: Run<()>,
}

impl<T> Clone for Progress<T> {
    fn clone(&self) -> Self {
        Progress {
            phase: self.phase.clone(),
            total: self.total,
            run: self.run.clone(),
        }
    }
}

impl<T> Progress<T> {
    /// Shows `done` of the total; `Err(Cancelled)` instead when the run was cancelled (or
    /// the page left), so the work stops there (`p.set(i)?`).
    pub fn set(&self, done: u32) -> Result<(), GpuError> {
        self.check()?;
        self.phase.set(Phase::Running {
            done,
            total: self.total,
        });
        Ok(())
    }

    /// `Err(Cancelled)` once the run no longer counts: for work that checks between steps
    /// it does not show.
    pub fn check(&self) -> Result<(), GpuError> {
        if self.run.is_current() {
            Ok(())
        } else {
            Err(GpuError::Cancelled)
        }
    }

    /// When the work learns its total as it goes (no cancel check: the caller's next
    /// [`Progress::set`] or [`Progress::control`]'s run makes it).
    pub fn set_of(&self, done: u32, total: u32) {
        if self.run.is_current() {
            self.phase.set(Phase::Running { done, total });
        }
    }

    /// Cancel for the runs that take one: they stop between their chunks.
    pub fn control(&self) -> RunControl {
        self.run.control(None)
    }
}

/// How a lesson's result goes to an embedding page: its id and the result's fields.
pub type Reporting<T> = (&'static str, fn(&T) -> page_models::embed::Report);

/// Starts a lesson's measurement: the widget shows 0 of `total` at once, `work` runs with the
/// widget's [`Progress`], and its result goes to an embedding page (when `reporting` is given)
/// and becomes the widget's phase, Done or the error's (a lost device also drops the page's
/// device: [`Phase::from_error`]).
pub fn measure<T, F, Fut>(
    measure: &Measure<T>,
    total: u32,
    reporting: Option<Reporting<T>>,
    work: F,
) where
    T: 'static,
    F: FnOnce(Progress<T>) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<T, GpuError>> + 'static,
{
    let run = measure.runs.start(());
    measure.cancelling.set(false);
    let phase = measure.phase.clone();
    phase.set(Phase::Running { done: 0, total });
    wasm_bindgen_futures::spawn_local(async move {
        let progress = Progress {
            phase: phase.clone(),
            total,
            run: run.clone(),
        };
        let result = work(progress).await;
        // A run cancelled after its last step still counts as cancelled: what the learner
        // asked for is what the page says.
        let current = run.finish();
        let result = match result {
            Ok(_) if !current => Err(GpuError::Cancelled),
            other => other,
        };
        if let Some((lesson, fields)) = reporting {
            report(lesson, &result, fields);
        }
        phase.set(match result {
            Ok(v) => Phase::Done(v),
            Err(e) => Phase::from_error(e),
        });
    });
}

/// Tells an embedding page that a lesson's measurement ended (`run-finished` with the lesson's
/// id first, or `error`); does nothing outside an embed. Fields per lesson: docs/embedding.md.
pub fn report<T, E: std::fmt::Display>(
    lesson: &'static str,
    result: &Result<T, E>,
    fields: impl FnOnce(&T) -> page_models::embed::Report,
) {
    page_models::embed::report(match result {
        Ok(v) => {
            let mut r = vec![("lesson", page_models::embed::Field::Str(lesson.into()))];
            r.extend(fields(v));
            Ok(r)
        }
        Err(e) => Err(e.to_string()),
    });
}

/// Whether a measuring widget may start: Ok(software adapter?) or the reason, rendered.
pub fn gpu_gate(ctx: &Ctx) -> Result<bool, Html> {
    match &ctx.webgpu {
        WebGpuStatus::Available(a) => Ok(a.is_software),
        WebGpuStatus::Checking => Err(html! {
            <p class="status checking">{ ctx.t("lesson.common.checking") }</p>
        }),
        WebGpuStatus::Unavailable(_) => Err(html! {
            <p class="message unavailable" data-no-webgpu="true">{ ctx.t("lesson.common.no_webgpu") }</p>
        }),
    }
}

/// What the page knows about WebGPU, for tests and styling: checking, available, unavailable.
pub fn probe_state(ctx: &Ctx) -> &'static str {
    match &ctx.webgpu {
        WebGpuStatus::Checking => "checking",
        WebGpuStatus::Available(_) => "available",
        WebGpuStatus::Unavailable(_) => "unavailable",
    }
}

/// One of the adapter's limits as the browser reported it.
pub fn adapter_limit(ctx: &Ctx, name: &str) -> Option<f64> {
    match &ctx.webgpu {
        WebGpuStatus::Available(a) => a
            .limits
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v),
        _ => None,
    }
}

/// Whether the adapter offers a WebGPU feature.
pub fn adapter_has(ctx: &Ctx, feature: &str) -> bool {
    match &ctx.webgpu {
        WebGpuStatus::Available(a) => a.features.iter().any(|(f, yes)| *f == feature && *yes),
        _ => false,
    }
}

/// The Measure button, the gate's message, progress and errors of one widget. `done` renders
/// a finished result.
pub fn measure_controls<T: 'static>(
    ctx: &Ctx,
    m: &Measure<T>,
    onclick: Callback<MouseEvent>,
    can_start: bool,
    done: impl FnOnce(&T) -> Html,
) -> Html {
    measure_controls_with(ctx, m, onclick, can_start, true, done)
}

/// While a measurement runs: its Cancel button ("Cancelling…", disabled, once pressed: the
/// step on the GPU finishes first).
pub fn cancel_button<T: 'static>(ctx: &Ctx, m: &Measure<T>) -> Html {
    if !m.running() {
        return Html::default();
    }
    let cancelling = *m.cancelling;
    let onclick = {
        let m = m.clone();
        Callback::from(move |_: MouseEvent| m.cancel())
    };
    let label = if cancelling {
        "lesson.common.cancelling"
    } else {
        "lesson.common.cancel"
    };
    html! {
        <button type="button" class="button cancel-measure" disabled={cancelling} {onclick}>{ ctx.t(label) }</button>
    }
}

/// What a cancelled measurement says.
pub fn cancelled_note(ctx: &Ctx) -> Html {
    html! { <p class="status cancelled">{ ctx.t("lesson.common.cancelled") }</p> }
}

/// [`measure_controls`], or with `needs_gpu` false for a widget whose CPU part runs without
/// WebGPU: then only the adapter probe still in progress holds the button.
pub fn measure_controls_with<T: 'static>(
    ctx: &Ctx,
    m: &Measure<T>,
    onclick: Callback<MouseEvent>,
    can_start: bool,
    needs_gpu: bool,
    done: impl FnOnce(&T) -> Html,
) -> Html {
    let phase: &Phase<T> = m;
    let gate = gpu_gate(ctx);
    let held = if needs_gpu {
        gate.is_err()
    } else {
        probe_state(ctx) == "checking"
    };
    let disabled = held || phase.running() || !can_start;
    let label = if phase.running() {
        "lesson.common.measuring"
    } else {
        "lesson.common.measure"
    };
    html! {
        <>
            <button type="button" class="button primary measure" {disabled} {onclick}>{ ctx.t(label) }</button>
            { cancel_button(ctx, m) }
            if needs_gpu { { gate.err().unwrap_or_default() } }
            <div class="widget-result" aria-live="polite" data-state={phase.name()} data-probe={probe_state(ctx)}>
                { match phase {
                    Phase::Idle => html! {},
                    Phase::Running { done, total } => html! {
                        <p class="status checking">
                            <progress max={total.to_string()} value={done.to_string()}></progress>
                            { " " }{ ctx.tf("lesson.common.progress", &[("done", &done.to_string()), ("total", &total.to_string())]) }
                        </p>
                    },
                    Phase::Cancelled => cancelled_note(ctx),
                    Phase::Done(v) => done(v),
                    Phase::Failed(e) => html! {
                        <p class="message error" role="alert">{ ctx.tf("lesson.common.failed", &[("error", e)]) }</p>
                    },
                    Phase::Lost(e) => html! {
                        <p class="message error" role="alert" data-lost="true">{ ctx.tf("lesson.common.lost", &[("error", e)]) }</p>
                    },
                } }
            </div>
        </>
    }
}

/// Milliseconds from the page's high-resolution clock (the runtime's clock).
pub use gpu_runtime::now_ms;

/// Lets the browser paint (progress) before more main-thread work.
pub async fn yield_to_browser() {
    gloo::timers::future::TimeoutFuture::new(0).await;
}

/// Parses a whole number a visitor typed, in `min..=max`; the error is the message key and
/// its arguments.
pub fn parse_in(text: &str, min: u32, max: u32) -> Result<u32, String> {
    gpu_runtime::parse_dim(text, min, max).map_err(|e| match e {
        gpu_runtime::SizeError::Empty => "empty".into(),
        gpu_runtime::SizeError::NotAnInteger => "not_integer".into(),
        _ => "range".into(),
    })
}

/// The message for a [`parse_in`] error.
pub fn parse_message(ctx: &Ctx, kind: &str, min: u32, max: u32) -> String {
    match kind {
        "empty" => ctx.t("size.empty").into(),
        "not_integer" => ctx.t("size.not_integer").into(),
        _ => ctx.tf(
            "size.out_of_range",
            &[
                ("min", &min.to_string()),
                ("max", &numbers::count(max as u64)),
            ],
        ),
    }
}

/// A labelled text field for a whole number, with its validation message.
pub fn number_field(
    ctx: &Ctx,
    id: &str,
    label_key: &str,
    value: &str,
    error: Option<String>,
    oninput: Callback<InputEvent>,
) -> Html {
    let err_id = format!("{id}-error");
    html! {
        <div class={classes!("field", error.is_some().then_some("invalid"))}>
            <label for={id.to_string()}>{ ctx.t(label_key) }</label>
            <input id={id.to_string()} type="text" inputmode="numeric" autocomplete="off"
                value={value.to_string()} {oninput}
                aria-invalid={error.is_some().to_string()}
                aria-describedby={err_id.clone()} />
            <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
        </div>
    }
}

/// An input callback that stores the field's text.
pub fn text_setter(state: &UseStateHandle<String>) -> Callback<InputEvent> {
    let state = state.clone();
    Callback::from(move |e: InputEvent| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        state.set(input.value());
    })
}

/// `text` broken to fit `max_w` at `font_px` (`page_models::diagram::wrap`), one `<text>` a
/// line, 1.35 em apart, the first baseline at `y`; and the y just below its last line.
pub fn text_lines(
    text: &str,
    (x, y): (f64, f64),
    font_px: f64,
    max_w: f64,
    class: &'static str,
) -> (Html, f64) {
    let line_h = (font_px * 1.35).round();
    let lines = page_models::diagram::wrap(text, font_px, max_w);
    let n = lines.len();
    let html = html! {
        { for lines.into_iter().enumerate().map(|(i, l)| html! {
            <text x={format!("{x:.1}")} y={format!("{:.1}", y + i as f64 * line_h)} class={class}>{ l }</text>
        }) }
    };
    (
        html,
        y + n.saturating_sub(1) as f64 * line_h + font_px * 0.4,
    )
}

/// The stylesheet's sizes of `.svg-label` and `.svg-small` (learn.css).
pub const LABEL_PX: f64 = 13.0;
pub const SMALL_PX: f64 = 11.0;
/// The narrowest a diagram is drawn (a 320 px phone's column).
pub const DIAGRAM_MIN_W: f64 = 280.0;
