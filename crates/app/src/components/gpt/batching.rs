//! The batching experiment's view (`page_models::gpt_batching` holds its state, rules and cost
//! model): Run measures the device's roof (the copy and FMA probes of the roofline lesson),
//! the prompt's forward, then KV-cache decoding (`gpu_runtime::engine::decode`) at each batch,
//! smallest first. Each batch: a warm-up run whose last logits are checked against the CPU
//! twin, then [`RUNS`] timed runs, each started on a drained queue and ended when the GPU
//! reports it done. Cancel stops between runs (a run is one submission of at most context − 1
//! steps); new settings or leaving the page stop it too (the shared run hook).

use std::rc::Rc;

use gpu_runtime::engine::decode::Decoder;
use gpu_runtime::{measurements, now_ms, GpuError, RunOptions};
use lessons::roofline::{self, Roof};
use page_models::gpt_batching::{
    agrees_with_twin, checked_sequence, model, per_step, steps_per_run, BatchAction, BatchSettings,
    Batching, Cell, RoofProbe, SEED,
};
use page_models::gpt_wall::median_spread;
use yew::prelude::*;
use yew_router::prelude::use_navigator;

use crate::components::chart_width::use_chart_width;
use crate::components::run_lifecycle::{use_run, Run};
use crate::components::{replace_query, scroll_table, Ctx};
use crate::probe::WebGpuStatus;
use crate::session;

/// Timed runs per batch (and of the prompt's forward), after a checked warm-up.
const RUNS: usize = 3;
/// The one-token prompt of every sequence, and the token each step is fed.
const PROMPT: u32 = 1;
const FED: u32 = 7;

struct State(Batching);

impl Reducible for State {
    type Action = BatchAction;
    fn reduce(self: Rc<Self>, action: BatchAction) -> Rc<Self> {
        Rc::new(State(self.0.reduce(action)))
    }
}

/// Why a run stopped early: cancelled (nothing more to show) or a GPU error.
enum Stop {
    Cancelled,
    Gpu(GpuError),
}

impl From<GpuError> for Stop {
    fn from(e: GpuError) -> Self {
        Stop::Gpu(e)
    }
}

fn current(run: &Run<BatchSettings>) -> Result<(), Stop> {
    if run.is_current() {
        Ok(())
    } else {
        Err(Stop::Cancelled)
    }
}

/// The last step's logits, once the GPU has them.
async fn logits(d: &mut Decoder) -> Result<Vec<f32>, GpuError> {
    while !d.request_logits()? {
        d.finished().await?;
    }
    loop {
        if let Some(v) = d.poll_logits()? {
            return Ok(v);
        }
        d.finished().await?;
        gloo::timers::future::TimeoutFuture::new(1).await;
    }
}

/// Milliseconds of `submit`'s work, from a drained queue to the GPU reporting it done.
async fn timed(
    d: &mut Decoder,
    submit: impl Fn(&mut Decoder) -> Result<(), GpuError>,
) -> Result<f64, GpuError> {
    d.finished().await?;
    let t0 = now_ms();
    submit(d)?;
    d.finished().await?;
    Ok(now_ms() - t0)
}

/// The prompt's forward for one sequence of the full context: median milliseconds.
async fn prefill_ms(
    gpu: &Rc<gpu_runtime::Gpu>,
    gp: &[f32],
    run: &Run<BatchSettings>,
) -> Result<f64, Stop> {
    let cfg = model();
    let mut d = Decoder::new(gpu.clone(), cfg, 1, gp).await?;
    let prompt = vec![checked_sequence(&cfg, PROMPT, FED)];
    d.prefill(&prompt)?;
    d.finished().await?;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        current(run)?;
        times.push(timed(&mut d, |d| d.prefill(&prompt)).await?);
    }
    Ok(median_spread(&times).map_or(f64::NAN, |m| m.0))
}

/// One batch: a warm-up checked against the twin, then [`RUNS`] timed runs of the decode
/// steps from position 1 to the end of the context.
async fn measure(
    gpu: &Rc<gpu_runtime::Gpu>,
    gp: &[f32],
    batch: u32,
    run: &Run<BatchSettings>,
) -> Result<Cell, Stop> {
    let cfg = model();
    let b = batch as usize;
    let steps = steps_per_run(&cfg) as usize;
    let mut d = Decoder::new(gpu.clone(), cfg, b, gp).await?;
    d.prefill(&vec![vec![PROMPT]; b])?;
    d.decode(&vec![FED; b])?;
    d.chain(steps - 1)?;
    let row = logits(&mut d).await?;
    let verified = agrees_with_twin(
        &cfg,
        gp,
        &checked_sequence(&cfg, PROMPT, FED),
        &row[..cfg.vocab],
    )
    .unwrap_or(false);
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        current(run)?;
        times.push(
            timed(&mut d, |d| {
                d.rewind(1)?;
                d.chain(steps)
            })
            .await?,
        );
    }
    let (ms_per_step, spread) = per_step(&times, steps as u64).unwrap_or((f64::NAN, f64::NAN));
    Ok(Cell::Ran {
        ms_per_step,
        spread,
        verified,
    })
}

/// The roof from the lesson's probes, sized down on a software adapter.
async fn roof(gpu: &gpu_runtime::Gpu, software: bool) -> Result<RoofProbe, GpuError> {
    let (copy, threads, iters, opts) = if software {
        (
            1 << 20,
            4096,
            256,
            RunOptions {
                warmup: 1,
                repetitions: 2,
            },
        )
    } else {
        (
            1 << 24,
            1 << 20,
            1024,
            RunOptions {
                warmup: 2,
                repetitions: 5,
            },
        )
    };
    let gb_per_s = measurements::bandwidth(gpu, copy, &opts).await?;
    let gflop_per_s = measurements::fma_rate(gpu, threads, iters, &opts).await?;
    Ok(RoofProbe {
        gb_per_s,
        gflop_per_s,
    })
}

async fn experiment(
    software: bool,
    settings: BatchSettings,
    run: &Run<BatchSettings>,
    state: &UseReducerDispatcher<State>,
) -> Result<(), Stop> {
    let (gpu, _) = session::gpu(software).await?;
    let gp = gpu_runtime::gpt::Model::new(model())
        .map_err(|e| GpuError::Dispatch(e.to_string()))?
        .init_params(SEED);
    let r = roof(&gpu, software).await?;
    current(run)?;
    state.dispatch(BatchAction::Roof(r));
    let ms = prefill_ms(&gpu, &gp, run).await?;
    current(run)?;
    state.dispatch(BatchAction::Prefill { ms });
    for batch in settings.batches() {
        let cell = match measure(&gpu, &gp, batch, run).await {
            Ok(c) => c,
            Err(Stop::Cancelled) => return Err(Stop::Cancelled),
            Err(Stop::Gpu(e)) => {
                if matches!(e, GpuError::DeviceLost(_)) {
                    session::forget();
                }
                Cell::Failed(e.to_string())
            }
        };
        current(run)?;
        state.dispatch(BatchAction::Measured { batch, cell });
    }
    Ok(())
}

#[function_component]
pub fn BatchingView() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let software = matches!(&ctx.as_ref().map(|c| &c.webgpu), Some(WebGpuStatus::Available(a)) if a.is_software);
    let query = ctx.as_ref().map(|c| c.query.clone()).unwrap_or_default();
    let (settings, bad) = BatchSettings::from_query(&query, software);
    let state = use_reducer(|| State(Batching::new(settings)));
    let runs = use_run::<BatchSettings>(|| ());
    let tokens_ref = use_node_ref();
    let tokens_w = use_chart_width(tokens_ref.clone());
    let roof_ref = use_node_ref();
    let roof_w = use_chart_width(roof_ref.clone());
    {
        let runs = runs.clone();
        let state = state.dispatcher();
        use_effect_with(settings, move |s| {
            let s = *s;
            if runs.cancel_if_stale(|old| *old != s) {
                state.dispatch(BatchAction::Cancelled);
            }
            state.dispatch(BatchAction::Settings(s));
        });
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let gpu = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    let b = &state.0;
    let running = b.running;
    let on_run = {
        let (state, runs) = (state.dispatcher(), runs.clone());
        Callback::from(move |_: MouseEvent| {
            if running {
                if runs.cancel() {
                    state.dispatch(BatchAction::Cancelled);
                }
                return;
            }
            let Some(sw) = gpu else { return };
            state.dispatch(BatchAction::Start(settings));
            let run = runs.start(settings);
            let state = state.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match experiment(sw, settings, &run, &state).await {
                    Ok(()) => {
                        if run.finish() {
                            state.dispatch(BatchAction::Finished);
                        }
                    }
                    Err(Stop::Cancelled) => {}
                    Err(Stop::Gpu(e)) => {
                        if matches!(e, GpuError::DeviceLost(_)) {
                            session::forget();
                        }
                        if run.finish() {
                            state.dispatch(BatchAction::Failed(e.to_string()));
                        }
                    }
                }
            });
        })
    };
    let on_change = {
        let (navigator, ctx) = (navigator.clone(), ctx.clone());
        Callback::from(move |e: Event| {
            let Some(el) = e.target_dyn_into::<web_sys::HtmlSelectElement>() else {
                return;
            };
            if let Some(nav) = &navigator {
                let mut q = ctx.query.clone();
                q.set("bmax", &el.value());
                replace_query(nav, &ctx.route, &q);
            }
        })
    };
    let phase = if running {
        "running"
    } else if b.cancelled {
        "cancelled"
    } else if b.failed.is_some() {
        "failed"
    } else if b.rows.is_empty() {
        "idle"
    } else {
        "done"
    };
    let cfg = model();
    html! {
        <section class="panel gpt-batching" id="gpt-batching" data-phase={phase}>
            <h2>{ ctx.t("gpt.batch.heading") }</h2>
            <p>{ ctx.t("gpt.batch.intro") }</p>
            <p class="hint">{ ctx.tf("gpt.batch.model", &[
                ("layers", &cfg.layers.to_string()), ("heads", &cfg.heads.to_string()),
                ("width", &cfg.width.to_string()), ("context", &cfg.context.to_string()),
                ("vocab", &cfg.vocab.to_string()),
            ]) }</p>
            if !bad.is_empty() {
                <div class="message error" role="alert" id="gpt-batching-errors">
                    { for bad.iter().map(|b| html! {
                        <p>{ ctx.tf("gpt.error.url", &[("key", b.key), ("value", &b.value), ("default", &b.default)]) }</p>
                    }) }
                </div>
            }
            <div class="gpt-batching-settings">
                <label class="field">
                    <span>{ ctx.t("gpt.batch.max") }</span>
                    <select id="gpt-bmax" onchange={on_change} disabled={running}>
                        { for page_models::gpt_wall::powers_of_two(1, page_models::gpt_batching::MAX_BATCH).into_iter().map(|o| {
                            html! { <option value={o.to_string()} selected={o == settings.max_batch}>{ o.to_string() }</option> }
                        }) }
                    </select>
                </label>
            </div>
            if software {
                <p class="message" id="gpt-batching-software">{ ctx.t("gpt.batch.software") }</p>
            }
            if gpu.is_none() && !matches!(ctx.webgpu, WebGpuStatus::Checking) {
                <p class="message" id="gpt-batching-no-gpu">{ ctx.t("gpt.batch.no_gpu") }</p>
            }
            <div class="buttons">
                <button id="gpt-batching-run" class={if running { "button" } else { "button primary" }}
                    disabled={gpu.is_none()} onclick={on_run}>
                    { ctx.t(if running { "gpt.batch.cancel" } else { "gpt.batch.run" }) }
                </button>
            </div>
            if running {
                <p class="status running" id="gpt-batching-status">{ ctx.t("gpt.batch.running") }</p>
            }
            if b.cancelled {
                <p class="status" id="gpt-batching-cancelled">{ ctx.t("gpt.batch.cancelled") }</p>
            }
            if let Some(m) = &b.failed {
                <p class="message error" role="alert" id="gpt-batching-failed">{ ctx.tf("gpt.batch.failed", &[("message", m)]) }</p>
            }
            if !b.rows.is_empty() {
                { results(&ctx, b, &tokens_ref, tokens_w) }
            }
            // Without WebGPU (or before a run) the intensities still show: they are arithmetic.
            { roofline_part(&ctx, b, &roof_ref, roof_w) }
            <p class="hint">{ ctx.tf("gpt.batch.how", &[("steps", &steps_per_run(&cfg).to_string())]) }</p>
        </section>
    }
}

fn code(c: &Cell) -> &'static str {
    match c {
        Cell::Waiting => "waiting",
        Cell::Ran { verified: true, .. } => "verified",
        Cell::Ran { .. } => "wrong",
        Cell::Failed(_) => "failed",
    }
}

/// The table and the tokens/s chart, then the verdict.
fn results(ctx: &Ctx, b: &Batching, chart_ref: &NodeRef, chart_w: Option<f64>) -> Html {
    let table = html! {
        <table class="gpt-batching-table" id="gpt-batching-table">
            <thead><tr>
                <th>{ ctx.t("gpt.batch.col.batch") }</th>
                <th>{ ctx.t("gpt.batch.col.step") }</th>
                <th>{ ctx.t("gpt.batch.col.tokens") }</th>
            </tr></thead>
            <tbody>
                { for b.rows.iter().map(|r| {
                    let step = match &r.cell {
                        Cell::Waiting => html! { <span class="hint">{ if b.running { "…" } else { "–" } }</span> },
                        Cell::Ran { ms_per_step, spread, verified } => html! {
                            <>
                                <span class="num">{ numbers::ms(*ms_per_step) }</span>
                                <span class="hint">{ format!(" ±{}", numbers::ms(spread / 2.0)) }</span>
                                if !*verified { <br/><strong class="wrong">{ ctx.t("gpt.batch.wrong") }</strong> }
                            </>
                        },
                        Cell::Failed(m) => html! { <span class="wrong">{ ctx.tf("gpt.batch.failed", &[("message", m)]) }</span> },
                    };
                    html! {
                        <tr data-batch={r.batch.to_string()} data-cell={code(&r.cell)}
                            data-tokens={r.tokens_per_s().map(|t| t.to_string())}>
                            <th scope="row">{ r.batch.to_string() }</th>
                            <td>{ step }</td>
                            <td class="num">{ r.tokens_per_s().map(|t| numbers::sig(t, 3)).unwrap_or_else(|| "–".into()) }</td>
                        </tr>
                    }
                }) }
            </tbody>
        </table>
    };
    html! {
        <>
            { tokens_chart(ctx, b, chart_ref, chart_w) }
            { scroll_table(ctx, ctx.t("gpt.batch.heading"), table) }
            if !b.running && !b.cancelled {
                if let Some(((b0, t0), (b1, t1))) = b.span() {
                    <p id="gpt-batching-verdict" data-speedup={(t1 / t0).to_string()}>
                        { ctx.tf("gpt.batch.verdict", &[
                            ("small", &b0.to_string()), ("large", &b1.to_string()),
                            ("x", &numbers::sig(t1 / t0, 3)),
                            ("step", &numbers::sig((b1 as f64 / t1) / (b0 as f64 / t0), 3)),
                        ]) }
                    </p>
                }
            }
            if b.any_wrong() {
                <p class="message error" role="alert" id="gpt-batching-wrong">{ ctx.t("gpt.batch.any_wrong") }</p>
            }
        </>
    }
}

/// Tokens per second against the batch (log-spaced batches, a linear rate axis from zero).
fn tokens_chart(ctx: &Ctx, b: &Batching, chart_ref: &NodeRef, chart_w: Option<f64>) -> Html {
    let w = chart_w.unwrap_or(620.0).max(240.0);
    let (h, left, bottom, top, right) = (220.0, 64.0, 40.0, 12.0, 16.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let n = b.rows.len().max(1);
    let top_rate = b
        .rows
        .iter()
        .filter_map(|r| r.tokens_per_s())
        .fold(0.0, f64::max);
    let y_hi = if top_rate > 0.0 {
        nice_ceiling(top_rate)
    } else {
        1.0
    };
    let px = |i: usize| left + pw * (i as f64 + 0.5) / n as f64;
    let py = |v: f64| top + ph - ph * (v / y_hi).clamp(0.0, 1.0);
    let bar_w = (pw / n as f64 * 0.6).max(4.0);
    html! {
        <figure class="chart-figure">
            <svg ref={chart_ref.clone()} class="gpt-batching-chart" id="gpt-batching-chart"
                viewBox={format!("0 0 {w} {h}")} role="img" aria-label={ctx.t("gpt.batch.chart_alt")}>
                { for [0.0, 0.5, 1.0].into_iter().map(|f| html! {
                    <>
                        <line x1={left.to_string()} y1={py(f * y_hi).to_string()} x2={(left + pw).to_string()} y2={py(f * y_hi).to_string()} class="grid" />
                        <text x={(left - 6.0).to_string()} y={(py(f * y_hi) + 4.0).to_string()} class="svg-small" text-anchor="end">{ numbers::sig(f * y_hi, 3) }</text>
                    </>
                }) }
                { for b.rows.iter().enumerate().map(|(i, r)| {
                    let x = px(i);
                    html! {
                        <g class="bar" data-batch={r.batch.to_string()}>
                            if let Some(t) = r.tokens_per_s() {
                                <rect x={format!("{:.1}", x - bar_w / 2.0)} y={format!("{:.1}", py(t))}
                                    width={format!("{bar_w:.1}")} height={format!("{:.1}", top + ph - py(t))} />
                            }
                            <text x={format!("{x:.1}")} y={(top + ph + 16.0).to_string()} class="svg-small" text-anchor="middle">{ r.batch.to_string() }</text>
                        </g>
                    }
                }) }
                <text x={(left + pw / 2.0).to_string()} y={(h - 4.0).to_string()} class="svg-small" text-anchor="middle">{ ctx.t("gpt.batch.axis_x") }</text>
                <text x="12" y={(top + ph / 2.0).to_string()} class="svg-small" transform={format!("rotate(-90 12 {})", top + ph / 2.0)} text-anchor="middle">{ ctx.t("gpt.batch.axis_y") }</text>
            </svg>
        </figure>
    }
}

/// 1, 2 or 5 times a power of ten, at least `v`.
fn nice_ceiling(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

/// Prefill and decode on the roofline: their intensities always (arithmetic), the roof and
/// the measured rates once the probes and runs have them.
fn roofline_part(ctx: &Ctx, b: &Batching, chart_ref: &NodeRef, chart_w: Option<f64>) -> Html {
    let cfg = model();
    let (p_ai, p_rate) = b.prefill_point(&cfg);
    let largest = b
        .rows
        .iter()
        .rev()
        .find(|r| r.tokens_per_s().is_some())
        .map_or(b.settings.max_batch, |r| r.batch);
    let mut points = vec![(
        "prefill",
        ctx.tf(
            "gpt.batch.point.prefill",
            &[("context", &cfg.context.to_string())],
        ),
        p_ai,
        p_rate,
    )];
    let (d_ai, d_rate) = b.decode_point(&cfg, 1);
    points.push((
        "decode",
        ctx.tf("gpt.batch.point.decode", &[("batch", "1")]),
        d_ai,
        d_rate,
    ));
    if largest > 1 {
        let (ai, rate) = b.decode_point(&cfg, largest);
        points.push((
            "decode-batched",
            ctx.tf("gpt.batch.point.decode", &[("batch", &largest.to_string())]),
            ai,
            rate,
        ));
    }
    let table = html! {
        <table class="facts" id="gpt-batching-roofline-table">
            <thead><tr>
                <th scope="col">{ ctx.t("gpt.batch.col.work") }</th>
                <th scope="col">{ ctx.t("gpt.batch.col.ai") }</th>
                <th scope="col">{ ctx.t("gpt.batch.col.measured") }</th>
                <th scope="col">{ ctx.t("gpt.batch.col.roof") }</th>
            </tr></thead>
            <tbody>
                { for points.iter().map(|(id, label, ai, rate)| html! {
                    <tr data-point={*id} data-ai={ai.to_string()}>
                        <th scope="row">{ label.clone() }</th>
                        <td class="num">{ numbers::sig(*ai, 3) }</td>
                        <td class="num">{ rate.map(|r| numbers::sig(r, 3)).unwrap_or_else(|| "–".into()) }</td>
                        <td class="num">{ b.roof.map(|r| numbers::sig(roof_of(r).attainable(*ai), 3)).unwrap_or_else(|| "–".into()) }</td>
                    </tr>
                }) }
            </tbody>
        </table>
    };
    html! {
        <>
            <h3>{ ctx.t("gpt.batch.roof_heading") }</h3>
            <p>{ ctx.t("gpt.batch.roof_intro") }</p>
            if let Some(r) = b.roof {
                { roof_chart(ctx, r, &points, chart_ref, chart_w) }
                <p id="gpt-batching-ridge" data-ridge={roof_of(r).ridge().to_string()}>
                    { ctx.tf("gpt.batch.roof_facts", &[
                        ("gb", &numbers::rate(r.gb_per_s)), ("gflops", &numbers::rate(r.gflop_per_s)),
                        ("ridge", &numbers::sig(roof_of(r).ridge(), 3)),
                    ]) }
                </p>
            }
            { scroll_table(ctx, ctx.t("gpt.batch.roof_heading"), table) }
        </>
    }
}

fn roof_of(r: RoofProbe) -> Roof {
    Roof {
        gb_per_s: r.gb_per_s,
        gflop_per_s: r.gflop_per_s,
    }
}

type RoofPoint = (&'static str, String, f64, Option<f64>);

/// Log-log roofline (GFLOP/s against FLOP/byte) with prefill and decode as labelled dots: at
/// their measured rate, or on the roof (hollow) before they ran.
fn roof_chart(
    ctx: &Ctx,
    r: RoofProbe,
    points: &[RoofPoint],
    chart_ref: &NodeRef,
    chart_w: Option<f64>,
) -> Html {
    let roof = roof_of(r);
    let w = chart_w.unwrap_or(620.0).max(240.0);
    let (h, left, bottom, top, right) = (300.0, 64.0, 44.0, 16.0, 16.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let y_of = |p: &RoofPoint| p.3.unwrap_or_else(|| roof.attainable(p.2));
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.2, y_of(p))).collect();
    let f = roofline::Frame::new((left, top, pw, ph), roof, &xy);
    let (px, py) = (|ai: f64| f.px(ai), |v: f64| f.py(v));
    let path = f.roof_path(roof);
    let (x0, x1, y0, y1) = (f.x0, f.x1, f.y0, f.y1);
    let ticks = roofline::Frame::ticks;
    let tick = |v: f64| {
        if v >= 1.0 {
            numbers::count(v.round() as u64)
        } else {
            format!("{v}")
        }
    };
    html! {
        <figure class="chart-figure">
            <svg ref={chart_ref.clone()} class="roofline-chart" id="gpt-batching-roofline"
                viewBox={format!("0 0 {w} {h}")} role="img" aria-label={ctx.t("gpt.batch.roof_alt")}>
                { for ticks(x0, x1).into_iter().map(|t| html! {
                    <>
                        <line x1={px(t).to_string()} y1={top.to_string()} x2={px(t).to_string()} y2={(top + ph).to_string()} class="grid" />
                        <text x={px(t).to_string()} y={(top + ph + 16.0).to_string()} class="svg-small" text-anchor="middle">{ tick(t) }</text>
                    </>
                }) }
                { for ticks(y0, y1).into_iter().map(|t| html! {
                    <>
                        <line x1={left.to_string()} y1={py(t).to_string()} x2={(left + pw).to_string()} y2={py(t).to_string()} class="grid" />
                        <text x={(left - 6.0).to_string()} y={(py(t) + 4.0).to_string()} class="svg-small" text-anchor="end">{ tick(t) }</text>
                    </>
                }) }
                <path d={path} class="roof" />
                { for points.iter().enumerate().map(|(i, p)| {
                    let (x, y) = (px(p.2), py(y_of(p)));
                    // Labels alternate above and below their dots: prefill and decode may sit close.
                    let ly = if i % 2 == 0 { y - 9.0 } else { y + 17.0 };
                    let anchor = if x > left + pw * 0.7 { "end" } else { "start" };
                    html! {
                        <g class="point" data-point={p.0} data-ai={p.2.to_string()}
                            data-measured={p.3.is_some().to_string()}>
                            <circle cx={format!("{x:.1}")} cy={format!("{y:.1}")} r="5"
                                class={if p.3.is_some() { "measured" } else { "modelled" }} />
                            <text x={format!("{x:.1}")} y={format!("{ly:.1}")} class="svg-small" text-anchor={anchor}>{ p.1.clone() }</text>
                        </g>
                    }
                }) }
                <text x={(left + pw / 2.0).to_string()} y={(h - 6.0).to_string()} class="svg-small" text-anchor="middle">{ ctx.t("gpt.batch.axis_ai") }</text>
                <text x="12" y={(top + ph / 2.0).to_string()} class="svg-small" transform={format!("rotate(-90 12 {})", top + ph / 2.0)} text-anchor="middle">{ ctx.t("gpt.batch.axis_gflops") }</text>
            </svg>
            <figcaption>{ ctx.t("gpt.batch.roof_caption") }</figcaption>
        </figure>
    }
}
