//! The matrix-multiply Run widget: sizes from the URL, validated at the field; a run on the
//! visitor's GPU verified against the CPU; the time and how it was measured.

use yew::prelude::*;
use yew_router::prelude::*;

use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use std::rc::Rc;

use gpu_runtime::{
    parse_dim, run_matmul_verified_with, BufferLimits, CancelToken, GpuError, Progress, RunControl,
    RunOptions, SizeError, TimingMethod, VerifiedRun, Workload,
};

use super::{replace_query, Ctx};
use crate::format;
use crate::probe::WebGpuStatus;
use crate::session;

/// The kernel this widget runs when no stage is given.
pub const DEFAULT_KERNEL: &str = "matmul-naive";
/// Largest accepted dimension (the device's buffer limits may allow less; that is checked
/// separately, with a message naming the limit).
pub const MAX_DIM: u32 = 8192;
const DEFAULT_DIM: &str = "256";
/// Fixed seed: the same sizes give the same data on every machine.
const SEED: u64 = 1;

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Idle,
    Running,
    /// The run, its size, and whether it had to replace a lost device first.
    Done(Box<VerifiedRun>, MatmulSize, bool),
    Lost(String),
    Failed(GpuError),
    Cancelled,
}

/// What a run in progress is doing, as text and a fraction for a progress bar.
pub fn progress_view(ctx: &Ctx, p: Option<Progress>) -> Html {
    match p {
        Some(Progress::WaitingForQueue) => html! {
            <p class="status checking" data-progress="waiting">{ ctx.t("run.waiting_queue") }</p>
        },
        Some(Progress::Running { done, total }) if total > 0.0 => {
            let pct = (done / total * 100.0).clamp(0.0, 100.0).floor();
            html! {
                <p class="status checking" data-progress={pct.to_string()}>
                    <progress max="100" value={pct.to_string()}></progress>
                    { " " }{ ctx.tf("run.progress", &[("pct", &pct.to_string())]) }
                </p>
            }
        }
        _ => html! { <p class="status checking">{ ctx.t("run.running") }</p> },
    }
}

/// A cancel token for runs started by a component, cancelled when the component goes away
/// (leaving a page mid-run must not leave GPU work queued for the next page).
#[hook]
pub fn use_cancel_on_unmount() -> Rc<std::cell::RefCell<CancelToken>> {
    let token = use_mut_ref(CancelToken::new);
    {
        let token = token.clone();
        use_effect_with((), move |_| move || token.borrow().cancel());
    }
    token
}

fn size_message(ctx: &Ctx, e: &SizeError) -> String {
    match e {
        SizeError::Empty => ctx.t("size.empty").into(),
        SizeError::NotAnInteger => ctx.t("size.not_integer").into(),
        SizeError::OutOfRange { min, max } => ctx.tf(
            "size.out_of_range",
            &[
                ("min", &min.to_string()),
                ("max", &format::count(*max as u64)),
            ],
        ),
        SizeError::ExceedsLimit {
            limit,
            limit_bytes,
            needed_bytes,
            largest_square,
        } => ctx.tf(
            "run.too_large",
            &[
                ("needed", &format::bytes(*needed_bytes)),
                ("limit", limit),
                ("have", &format::bytes(*limit_bytes)),
                ("largest", &largest_square.to_string()),
            ],
        ),
    }
}

#[derive(Properties, PartialEq)]
pub struct MatmulRunProps {
    /// Which catalogued matmul kernel to run.
    #[prop_or(AttrValue::Static(DEFAULT_KERNEL))]
    pub kernel_id: AttrValue,
    /// Leave out the kernel's title and summary (the ladder shows them itself).
    #[prop_or_default]
    pub compact: bool,
}

/// The M, N, K sizes in the URL, parsed as the widget does (for the ladder's "Run all").
pub fn sizes_from_query(query: &crate::query::Query) -> Option<MatmulSize> {
    let dims: Vec<u32> = ["m", "n", "k"]
        .iter()
        .map(|k| parse_dim(query.get(k).unwrap_or(DEFAULT_DIM), 1, MAX_DIM).ok())
        .collect::<Option<_>>()?;
    Some(MatmulSize::new(dims[0], dims[1], dims[2]))
}

/// Why a kernel cannot run in this browser, as text for the visitor; None if it can.
pub fn unavailable_reason(ctx: &Ctx, kernel: &gpu_runtime::KernelSpec) -> Option<String> {
    let adapter = match &ctx.webgpu {
        WebGpuStatus::Available(a) => a,
        WebGpuStatus::Checking => return None,
        WebGpuStatus::Unavailable(_) => return Some(ctx.t("ladder.unavailable.no_webgpu").into()),
    };
    let has = |name: &str| adapter.features.iter().any(|(f, yes)| *f == name && *yes);
    for name in kernel.feature_names() {
        if name == "subgroups" && !kernel.runs_in_browser() && has(name) {
            return Some(ctx.t("ladder.unavailable.subgroups_wgpu").into());
        }
        if !has(name) || (name == "subgroups" && !kernel.runs_in_browser()) {
            return Some(ctx.tf("ladder.unavailable.missing", &[("feature", name)]));
        }
    }
    None
}

#[function_component]
pub fn MatmulRun(props: &MatmulRunProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let url = ctx.as_ref().map(|c| c.query.clone()).unwrap_or_default();
    let fields =
        use_state(|| ["m", "n", "k"].map(|key| url.get(key).unwrap_or(DEFAULT_DIM).to_string()));
    let outcome = use_state(|| Outcome::Idle);
    // The stage and sizes the outcome belongs to: it is shown only while they are on screen.
    let outcome_for = use_state(|| None::<(AttrValue, MatmulSize)>);
    // A link followed in the same tab changes the query, not this component: take its sizes.
    {
        let fields = fields.clone();
        let dims = ["m", "n", "k"].map(|key| url.get(key).unwrap_or(DEFAULT_DIM).to_string());
        use_effect_with(dims, move |dims| {
            if *fields != *dims {
                fields.set(dims.clone());
            }
        });
    }
    // Finished runs, exposed as data-runs so tests (and screen readers via aria-live) can
    // tell a new result from the previous one.
    let finished = use_state(|| 0u32);
    let progress = use_state(|| None::<Progress>);
    let cancel = use_cancel_on_unmount();
    // Set synchronously when a run starts: a second submit in the same task (a double click,
    // Enter pressed twice) comes before the re-render that disables the button.
    let busy = use_mut_ref(|| false);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let Some(kernel) = gpu_runtime::kernel(&props.kernel_id) else {
        return html! {};
    };
    let unavailable = unavailable_reason(&ctx, kernel);

    let parsed: Vec<Result<u32, SizeError>> =
        fields.iter().map(|f| parse_dim(f, 1, MAX_DIM)).collect();
    let size = match parsed.as_slice() {
        [Ok(m), Ok(n), Ok(k)] => Some(MatmulSize::new(*m, *n, *k)),
        _ => None,
    };
    let adapter = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.clone()),
        _ => None,
    };
    // Checked against the adapter's limits before any GPU call.
    let limit_error = match (&size, &adapter) {
        (Some(s), Some(a)) => {
            let limit = |name: &str| {
                a.limits
                    .iter()
                    .find(|(n, _)| *n == name)
                    .and_then(|(_, v)| *v)
                    .map(|v| v as u64)
                    .unwrap_or(u64::MAX)
            };
            Workload::Matmul(*s)
                .check_limits(&BufferLimits {
                    max_storage_buffer_binding_size: limit("maxStorageBufferBindingSize"),
                    max_buffer_size: limit("maxBufferSize"),
                })
                .err()
        }
        _ => None,
    };
    let running = *outcome == Outcome::Running;
    let can_run = size.is_some()
        && adapter.is_some()
        && limit_error.is_none()
        && unavailable.is_none()
        && !running;

    let run = {
        let (outcome, adapter, finished, progress, cancel) = (
            outcome.clone(),
            adapter.clone(),
            finished.clone(),
            progress.clone(),
            cancel.clone(),
        );
        let (outcome_for, kernel_id) = (outcome_for.clone(), props.kernel_id.clone());
        let busy = busy.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let (Some(size), true) = (size, can_run) else {
                return;
            };
            if busy.replace(true) {
                return;
            }
            let busy = busy.clone();
            let software = adapter.as_ref().is_some_and(|a| a.is_software);
            let (outcome, finished) = (outcome.clone(), finished.clone());
            outcome.set(Outcome::Running);
            outcome_for.set(Some((kernel_id.clone(), size)));
            progress.set(None);
            let token = CancelToken::new();
            *cancel.borrow_mut() = token.clone();
            let ctl = RunControl {
                cancel: token,
                progress: Some({
                    let progress = progress.clone();
                    Rc::new(move |p| progress.set(Some(p)))
                }),
                ..Default::default()
            };
            wasm_bindgen_futures::spawn_local(async move {
                let result = async {
                    let (gpu, recovered) = session::gpu(software).await?;
                    run_matmul_verified_with(&gpu, kernel, size, SEED, &RunOptions::default(), &ctl)
                        .await
                        .map(|v| (v, recovered))
                }
                .await;
                super::embed::report(match &result {
                    Ok((v, _)) => Ok(super::embed::matmul_report(kernel.id, v, size)),
                    Err(e) => Err(e.to_string()),
                });
                outcome.set(match result {
                    Ok((v, recovered)) => Outcome::Done(Box::new(v), size, recovered),
                    Err(GpuError::Cancelled) => Outcome::Cancelled,
                    Err(GpuError::DeviceLost(e)) => {
                        session::forget();
                        Outcome::Lost(e)
                    }
                    Err(e) => Outcome::Failed(e),
                });
                finished.set(*finished + 1);
                *busy.borrow_mut() = false;
            });
        })
    };

    let field = |index: usize, key: &'static str, label_key: &'static str| {
        let error = parsed[index].as_ref().err().map(|e| size_message(&ctx, e));
        let oninput = {
            let (fields, navigator, ctx) = (fields.clone(), navigator.clone(), ctx.clone());
            Callback::from(move |e: InputEvent| {
                let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                let mut next = (*fields).clone();
                next[index] = input.value();
                if let Some(nav) = &navigator {
                    let mut q = ctx.query.clone();
                    for (i, k) in ["m", "n", "k"].iter().enumerate() {
                        q.set(k, &next[i]);
                    }
                    replace_query(nav, &ctx.route, &q);
                }
                fields.set(next);
            })
        };
        let id = format!("dim-{key}");
        let err_id = format!("dim-{key}-error");
        html! {
            <div class={classes!("field", error.is_some().then_some("invalid"))}>
                <label for={id.clone()}>{ ctx.t(label_key) }</label>
                <input id={id} name={key} type="text" inputmode="numeric" autocomplete="off"
                    value={fields[index].clone()} {oninput}
                    aria-invalid={error.is_some().to_string()}
                    aria-describedby={err_id.clone()} />
                <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
            </div>
        }
    };

    // An outcome for another stage or other sizes is not shown (it stays, should they return).
    let current = size.map(|s| (props.kernel_id.clone(), s));
    let shown = if running || *outcome_for == current {
        &*outcome
    } else {
        &Outcome::Idle
    };
    let shape = size.map(|s| {
        ctx.tf(
            "run.shape",
            &[
                ("m", &s.m.to_string()),
                ("n", &s.n.to_string()),
                ("k", &s.k.to_string()),
            ],
        )
    });
    html! {
        <section class="panel run-widget" aria-labelledby="run-heading">
            <h2 id="run-heading">{ ctx.t("run.heading") }</h2>
            <super::EmbedButton widget="matmul" extra={vec![("stage", kernel.id.to_string())]} />
            if !props.compact {
                <h3>{ ctx.t(kernel.title_key) }</h3>
                <p class="summary">{ ctx.t(kernel.summary_key) }</p>
                <p class="source"><code>{ kernel.source_path }</code></p>
            }
            <form class="sizes" onsubmit={run} novalidate=true>
                { field(0, "m", "run.m") }
                { field(1, "n", "run.n") }
                { field(2, "k", "run.k") }
                if let Some(e) = &limit_error {
                    <p class="message error" role="alert">{ size_message(&ctx, e) }</p>
                }
                if let Some(s) = shape {
                    <p class="shape">{ s }</p>
                }
                <div class="buttons">
                    <button type="submit" class="button primary" id="run-button" disabled={!can_run}>
                        { ctx.t(if running { "run.running" } else { "run.button" }) }
                    </button>
                    <button type="button" class="button" id="run-cancel" disabled={!running}
                        onclick={
                            let cancel = cancel.clone();
                            Callback::from(move |_| cancel.borrow().cancel())
                        }>
                        { ctx.t("run.cancel") }
                    </button>
                </div>
                if adapter.is_none() && !matches!(ctx.webgpu, WebGpuStatus::Checking) {
                    <p class="message">{ ctx.t("run.disabled_no_gpu") }</p>
                } else if let Some(reason) = &unavailable {
                    <p class="message unavailable" data-unavailable="true">{ reason.clone() }</p>
                }
            </form>
            <div class="result" aria-live="polite" data-runs={finished.to_string()}>
                if running {
                    { progress_view(&ctx, *progress) }
                } else {
                    { render_outcome(&ctx, shown, adapter.is_some_and(|a| a.is_software)) }
                }
            </div>
        </section>
    }
}

fn render_outcome(ctx: &Ctx, outcome: &Outcome, software: bool) -> Html {
    match outcome {
        Outcome::Idle => html! {},
        Outcome::Running => html! { <p class="status checking">{ ctx.t("run.running") }</p> },
        Outcome::Cancelled => html! {
            <p class="message" role="status" data-cancelled="true">{ ctx.t("run.cancelled") }</p>
        },
        Outcome::Lost(e) => html! {
            <p class="message error" role="alert" data-lost="true">{ ctx.tf("run.lost", &[("error", e)]) }</p>
        },
        Outcome::Failed(GpuError::Size(e)) => html! {
            <p class="message error" role="alert">{ size_message(ctx, e) }</p>
        },
        Outcome::Failed(e) => html! {
            <p class="message error" role="alert">{ ctx.tf("run.error", &[("error", &e.to_string())]) }</p>
        },
        Outcome::Done(v, size, recovered) => {
            let err = format::sci(v.verdict.max_rel_error);
            let bound = format::sci(v.verdict.rel_bound);
            let verdict = if v.verdict.ok {
                html! {
                    <p class="verdict ok" data-verified="true">
                        { ctx.tf("run.verified", &[("err", &err), ("bound", &bound)]) }
                    </p>
                }
            } else {
                let (index, got, want) = v.verdict.first_failure.unwrap_or((0, f32::NAN, f64::NAN));
                let n = size.n as usize;
                html! {
                    <p class="verdict bad" data-verified="false" role="alert">
                        { ctx.tf("run.failed", &[
                            ("index", &format!("({}, {})", index / n.max(1), index % n.max(1))),
                            ("got", &got.to_string()),
                            ("want", &format!("{want:.6}")),
                            ("err", &err),
                            ("bound", &bound),
                        ]) }
                    </p>
                }
            };
            let checked = if v.checked == v.total {
                ctx.tf(
                    "run.checked_all",
                    &[("count", &format::count(v.total as u64))],
                )
            } else {
                ctx.tf(
                    "run.checked_some",
                    &[
                        ("checked", &format::count(v.checked as u64)),
                        ("total", &format::count(v.total as u64)),
                    ],
                )
            };
            let ms = format::ms(v.timing.kernel_ms());
            let time = match v.timing.method {
                TimingMethod::Timestamps => ctx.tf("run.time.timestamps", &[("ms", &ms)]),
                TimingMethod::WallClock => ctx.tf("run.time.wall", &[("ms", &ms)]),
            };
            html! {
                <>
                    if *recovered {
                        <p class="message" data-recovered="true">{ ctx.t("run.recovered") }</p>
                    }
                    { verdict }
                    <p class="checked">{ checked }</p>
                    <table class="facts timing">
                        <tr><th scope="row">{ ctx.t("run.time") }</th><td class="gpu-time">{ time }</td></tr>
                        <tr><th scope="row">{ ctx.t("run.upload") }</th><td>{ format!("{} ms", format::ms(v.timing.upload_ms)) }</td></tr>
                        <tr><th scope="row">{ ctx.t("run.rate") }</th><td>{ ctx.tf("run.gflops", &[("value", &format::rate(v.gflops()))]) }</td></tr>
                    </table>
                    if software {
                        <p class="note">{ ctx.t("run.time.software_note") }</p>
                    }
                    <p class="note">{ ctx.t("run.note_tolerance") }</p>
                </>
            }
        }
    }
}
