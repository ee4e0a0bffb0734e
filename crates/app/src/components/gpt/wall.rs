//! The memory-wall experiment's view (`page_models::gpt_wall` holds its state and rules):
//! Run measures causal attention both ways at each length, shortest first, through the
//! runtime's one plan path (`gpu_runtime::attention::run_attention`), and checks every output
//! against the reference on sampled rows. A length whose naive scores pass the adapter's
//! largest buffer is refused before any GPU work and shown as the wall. Cancel stops at the
//! next submission; new settings or leaving the page stop the run (the shared run hook).

use std::rc::Rc;

use gpu_runtime::attention::{rows_to_check, run_attention, verify, AttentionPath, AttnLayout};
use gpu_runtime::{GpuError, RunOptions, SizeError};
use page_models::gpt_wall::{median_spread, Cell, Path, Wall, WallAction, WallSettings};
use yew::prelude::*;
use yew_router::prelude::use_navigator;

use crate::components::run_lifecycle::use_run;
use crate::components::{replace_query, scroll_table, Ctx};
use crate::probe::WebGpuStatus;
use crate::session;

/// Timed runs per path and length, after one that compiles the pipelines and whose output
/// is checked (it is not timed: a compile in it would make the spread meaningless).
const RUNS: usize = 3;
/// Output rows checked against the reference per run.
const CHECKED_ROWS: usize = 24;

struct State(Wall);

impl Reducible for State {
    type Action = WallAction;
    fn reduce(self: Rc<Self>, action: WallAction) -> Rc<Self> {
        Rc::new(State(self.0.reduce(action)))
    }
}

/// One path at one length: a checked warm-up run, then [`RUNS`] timed runs.
async fn measure(
    gpu: &gpu_runtime::Gpu,
    path: AttentionPath,
    s: WallSettings,
    n: u32,
    ctl: &gpu_runtime::RunControl,
) -> Result<Cell, GpuError> {
    let l = AttnLayout::separate(s.bh, n, s.d);
    let qkv = gpu_runtime::cpu_kernels::data::random_vec(l.qkv_len(), 39 + n as u64);
    let first = match run_attention(gpu, path, &l, &qkv, &RunOptions::default(), ctl).await {
        Err(GpuError::Size(SizeError::ExceedsLimit {
            limit_bytes,
            needed_bytes,
            ..
        })) => {
            return Ok(Cell::TooLarge {
                needed: needed_bytes,
                limit: limit_bytes,
            })
        }
        other => other?,
    };
    let verified = verify(
        &l,
        &qkv,
        &first.output,
        &rows_to_check(&l, CHECKED_ROWS, n as u64),
    )
    .ok;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let out = run_attention(gpu, path, &l, &qkv, &RunOptions::default(), ctl).await?;
        times.push(out.timing.kernel_ms());
    }
    let (ms, spread) = median_spread(&times).unwrap_or((f64::NAN, f64::NAN));
    Ok(Cell::Ran {
        ms,
        spread,
        verified,
    })
}

#[function_component]
pub fn WallView() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let software = matches!(&ctx.as_ref().map(|c| &c.webgpu), Some(WebGpuStatus::Available(a)) if a.is_software);
    let query = ctx.as_ref().map(|c| c.query.clone()).unwrap_or_default();
    let (settings, bad) = WallSettings::from_query(&query, software);
    let wall = use_reducer(|| State(Wall::new(settings)));
    let runs = use_run::<WallSettings>(|| ());
    // New settings in the URL (the form, Back, an embed) stop a run of the old ones and clear
    // their results: none may show beside settings it does not belong to.
    {
        let runs = runs.clone();
        let wall = wall.dispatcher();
        use_effect_with(settings, move |s| {
            let s = *s;
            if runs.cancel_if_stale(|old| *old != s) {
                wall.dispatch(WallAction::Cancelled);
            }
            wall.dispatch(WallAction::Settings(s));
        });
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let gpu = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    let running = wall.0.running;
    let on_run = {
        let (wall, runs) = (wall.dispatcher(), runs.clone());
        Callback::from(move |_: MouseEvent| {
            if running {
                if runs.cancel() {
                    wall.dispatch(WallAction::Cancelled);
                }
                return;
            }
            let Some(sw) = gpu else { return };
            wall.dispatch(WallAction::Start(settings));
            let run = runs.start(settings);
            let wall = wall.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let ctl = run.control(None);
                let failed = |e: &GpuError| Cell::Failed(e.to_string());
                let gpu = match session::gpu(sw).await {
                    Ok((g, _)) => g,
                    Err(e) => {
                        if run.finish() {
                            for n in settings.lengths() {
                                for path in [Path::Fused, Path::Naive] {
                                    wall.dispatch(WallAction::Measured {
                                        n,
                                        path,
                                        cell: failed(&e),
                                    });
                                }
                            }
                            wall.dispatch(WallAction::Finished);
                        }
                        return;
                    }
                };
                for n in settings.lengths() {
                    // Naive first: where it does not fit, the wall shows before fused's runs.
                    for (path, kernel) in [
                        (Path::Naive, AttentionPath::Naive),
                        (Path::Fused, AttentionPath::Fused),
                    ] {
                        let cell = match measure(&gpu, kernel, settings, n, &ctl).await {
                            Ok(c) => c,
                            Err(GpuError::Cancelled) => return,
                            Err(e) => {
                                if matches!(e, GpuError::DeviceLost(_)) {
                                    session::forget();
                                }
                                failed(&e)
                            }
                        };
                        if !run.is_current() {
                            return;
                        }
                        wall.dispatch(WallAction::Measured { n, path, cell });
                    }
                }
                if run.finish() {
                    wall.dispatch(WallAction::Finished);
                }
            });
        })
    };
    // The URL follows the settings form.
    let on_change = {
        let (navigator, ctx) = (navigator.clone(), ctx.clone());
        Callback::from(move |(key, value): (&'static str, String)| {
            if let Some(nav) = &navigator {
                let mut q = ctx.query.clone();
                q.set(key, &value);
                // A longest sequence below the shortest takes the shortest down with it.
                let from = q.get("wfrom").and_then(|f| f.parse::<u32>().ok());
                if key == "wn"
                    && from
                        .zip(value.parse::<u32>().ok())
                        .is_some_and(|(f, n)| f > n)
                {
                    q.remove("wfrom");
                }
                replace_query(nav, &ctx.route, &q);
            }
        })
    };
    let phase = if running {
        "running"
    } else if wall.0.cancelled {
        "cancelled"
    } else if wall.0.rows.is_empty() {
        "idle"
    } else {
        "done"
    };
    html! {
        <section class="panel gpt-wall" id="gpt-wall" data-phase={phase}>
            <h2>{ ctx.t("gpt.wall.heading") }</h2>
            <p>{ ctx.t("gpt.wall.intro") }</p>
            if !bad.is_empty() {
                <div class="message error" role="alert" id="gpt-wall-errors">
                    { for bad.iter().map(|b| html! {
                        <p>{ ctx.tf("gpt.error.url", &[("key", b.key), ("value", &b.value), ("default", &b.default)]) }</p>
                    }) }
                </div>
            }
            { settings_form(&ctx, settings, running, on_change) }
            if software {
                <p class="message" id="gpt-wall-software">{ ctx.t("gpt.wall.software") }</p>
            }
            if gpu.is_none() && !matches!(ctx.webgpu, WebGpuStatus::Checking) {
                <p class="message" id="gpt-wall-no-gpu">{ ctx.t("gpt.wall.no_gpu") }</p>
            }
            <div class="buttons">
                <button id="gpt-wall-run" class={if running { "button" } else { "button primary" }}
                    disabled={gpu.is_none()} onclick={on_run}>
                    { ctx.t(if running { "gpt.wall.cancel" } else { "gpt.wall.run" }) }
                </button>
            </div>
            if wall.0.cancelled {
                <p class="status" id="gpt-wall-cancelled">{ ctx.t("gpt.wall.cancelled") }</p>
            }
            if !wall.0.rows.is_empty() {
                { results(&ctx, &wall.0) }
            } else if gpu.is_none() {
                // Without WebGPU the memory each length needs still shows.
                { results(&ctx, &Wall::preview(settings)) }
            }
        </section>
    }
}

/// The three settings, each written to the URL as it changes.
fn settings_form(
    ctx: &Ctx,
    s: WallSettings,
    running: bool,
    on_change: Callback<(&'static str, String)>,
) -> Html {
    let field = |key: &'static str, label: &str, value: String, options: Vec<u32>| {
        let on_change = on_change.clone();
        let onchange = Callback::from(move |e: Event| {
            if let Some(el) = e.target_dyn_into::<web_sys::HtmlSelectElement>() {
                on_change.emit((key, el.value()));
            }
        });
        html! {
            <label class="field">
                <span>{ label.to_string() }</span>
                <select id={format!("gpt-{key}")} {onchange} disabled={running}>
                    { for options.into_iter().map(|o| {
                        let v = o.to_string();
                        html! { <option value={v.clone()} selected={v == value}>{ numbers::count(o as u64) }</option> }
                    }) }
                </select>
            </label>
        }
    };
    use page_models::gpt_wall::{powers_of_two as pow2, MAX_BH, MAX_D, MAX_N, MIN_D, MIN_N};
    html! {
        <div class="gpt-wall-settings">
            { field("wbh", ctx.t("gpt.wall.bh"), s.bh.to_string(), pow2(1, MAX_BH)) }
            { field("wd", ctx.t("gpt.wall.d"), s.d.to_string(), pow2(MIN_D, MAX_D)) }
            { field("wfrom", ctx.t("gpt.wall.from"), s.min_n.to_string(), pow2(MIN_N, s.max_n)) }
            { field("wn", ctx.t("gpt.wall.n"), s.max_n.to_string(), pow2(MIN_N, MAX_N)) }
        </div>
    }
}

fn cell_text(ctx: &Ctx, c: &Cell, running: bool) -> Html {
    match c {
        Cell::Waiting => html! { <span class="hint">{ if running { "…" } else { "–" } }</span> },
        Cell::Ran {
            ms,
            spread,
            verified,
        } => html! {
            <>
                <span class="num">{ numbers::ms(*ms) }</span>
                <span class="hint">{ format!(" ±{}", numbers::ms(spread / 2.0)) }</span>
                if !*verified { <br/><strong class="wrong">{ ctx.t("gpt.wall.wrong") }</strong> }
            </>
        },
        Cell::TooLarge { needed, limit } => html! {
            <strong class="wall">{ ctx.tf("gpt.wall.too_large", &[
                ("needed", &numbers::bytes(*needed)), ("limit", &numbers::bytes(*limit)),
            ]) }</strong>
        },
        Cell::Failed(m) => {
            html! { <span class="wrong">{ ctx.tf("gpt.wall.failed", &[("message", m)]) }</span> }
        }
    }
}

fn code(c: &Cell) -> &'static str {
    match c {
        Cell::Waiting => "waiting",
        Cell::Ran { verified: true, .. } => "verified",
        Cell::Ran { .. } => "wrong",
        Cell::TooLarge { .. } => "too-large",
        Cell::Failed(_) => "failed",
    }
}

/// The table: per length, the naive scores' memory drawn against the largest of them (the
/// wall where one did not fit), both times and the fused path's speedup; then the verdict.
fn results(ctx: &Ctx, w: &Wall) -> Html {
    let s = w.settings;
    let largest = w
        .rows
        .iter()
        .map(|r| s.scores_bytes(r.n))
        .max()
        .unwrap_or(1)
        .max(1);
    let table = html! {
        <table class="gpt-wall-table" id="gpt-wall-table">
            <thead><tr>
                <th>{ ctx.t("gpt.wall.col.n") }</th>
                <th>{ ctx.t("gpt.wall.col.scores") }</th>
                <th>{ ctx.t("gpt.wall.col.naive") }</th>
                <th>{ ctx.t("gpt.wall.col.fused") }</th>
                <th>{ ctx.t("gpt.wall.col.speedup") }</th>
            </tr></thead>
            <tbody>
                { for w.rows.iter().map(|r| {
                    let bytes = s.scores_bytes(r.n);
                    let pct = 100.0 * bytes as f64 / largest as f64;
                    html! {
                        <tr data-n={r.n.to_string()} data-naive={code(&r.naive)} data-fused={code(&r.fused)}>
                            <th scope="row">{ numbers::count(r.n as u64) }</th>
                            <td class="gpt-wall-mem">
                                <span class="num">{ numbers::bytes(bytes) }</span>
                                // An SVG attribute, not an inline style: the CSP allows none.
                                <svg class="bar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true">
                                    <rect width={format!("{pct:.1}")} height="6" />
                                </svg>
                            </td>
                            <td>{ cell_text(ctx, &r.naive, w.running) }</td>
                            <td>{ cell_text(ctx, &r.fused, w.running) }</td>
                            <td class="num">{ r.speedup().map(|x| format!("{}×", numbers::sig(x, 3))).unwrap_or_else(|| "–".into()) }</td>
                        </tr>
                    }
                }) }
            </tbody>
        </table>
    };
    html! {
        <>
            { scroll_table(ctx, ctx.t("gpt.wall.heading"), table) }
            // The wall shows as soon as it is found; the comparison once every length ran.
            if w.wall_at().is_some() || (!w.running && !w.cancelled) {
                <p id="gpt-wall-verdict" data-wall={w.wall_at().map(|n| n.to_string())}>
                    { match (w.wall_at(), w.longest_speedup()) {
                        (Some(n), _) => ctx.tf("gpt.wall.verdict.wall", &[("n", &numbers::count(n as u64))]),
                        (None, Some((n, x))) => ctx.tf("gpt.wall.verdict.fits", &[
                            ("n", &numbers::count(n as u64)), ("x", &numbers::sig(x, 3)),
                        ]),
                        (None, None) => String::new(),
                    } }
                </p>
            }
            if w.any_wrong() {
                <p class="message error" role="alert" id="gpt-wall-wrong">{ ctx.t("gpt.wall.any_wrong") }</p>
            }
            <p class="hint">{ ctx.t("gpt.wall.how") }</p>
        </>
    }
}
