//! The scaling sweep: every contender alone at each N, end-to-end times on a log-log chart, and
//! where the GPU starts winning.

use std::cell::RefCell;
use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::CpuVariant;

use super::{duration, measure_one, progress_text, write_params, Contender, MeasureError, Setup};
use crate::components::chart_width::use_chart_width;
use crate::components::run_lifecycle::{use_run, RunHandle};
use crate::components::Ctx;
use crate::race_workers::pool;
use crate::race_workers::worker_api::now_ms;
use page_models::diagram::text_width;
use page_models::progress::ProgressClock;
use page_models::race::doubt::{doubts, Doubt, Runs};
use page_models::race::params::{crossover, sweep_sizes, Crossover, SEED, SWEEP_MAX, SWEEP_MIN};
use page_models::race::plot::{self, LogLog};

/// The stylesheet's sizes of the x ticks and of the crossover label (race.css).
const TICK_PX: f64 = 13.0;
const LABEL_PX: f64 = 12.0;
/// A contender whose next size would take longer than this (estimated from its last time,
/// scaled by N³) is skipped for the rest of the sweep.
const SKIP_MS: f64 = 15_000.0;

/// Runs per point at most, and the time after which a point stops repeating.
const REPEATS: u32 = 3;
const REPEAT_BUDGET_MS: f64 = 300.0;

#[derive(Properties, PartialEq)]
pub struct SweepProps {
    pub setup: Rc<Setup>,
}

#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Pending,
    /// The fastest and the slowest verified run.
    Time(f64, f64),
    /// Measured but the result did not verify: not plotted.
    Wrong(f64),
    Skipped,
    Failed(String),
}

/// What the sweep shows; whether it runs, and which run counts, is its [`RunHandle`]'s.
#[derive(Default)]
struct Model {
    sizes: Vec<u32>,
    contenders: Vec<Contender>,
    /// cells[size][contender]
    cells: Vec<Vec<Cell>>,
    current: Option<(usize, usize)>,
    /// The current point's progress: one point can take seconds (up to [`SKIP_MS`] and more).
    clock: ProgressClock,
    notice: Option<String>,
    finished: u32,
}

#[function_component]
pub fn Sweep(props: &SweepProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let model = use_mut_ref(Model::default);
    let redraw = use_force_update();
    let texts = use_state(|| {
        (
            props.setup.params.from.to_string(),
            props.setup.params.to.to_string(),
        )
    });
    // Cancel, or leaving the page mid-sweep, stops the workers at once.
    let runs = use_run::<()>(pool::terminate);
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
    let Some(ctx) = ctx else {
        return html! {};
    };
    let s = props.setup.clone();
    let parse = |v: &str| gpu_runtime::parse_dim(v, SWEEP_MIN, SWEEP_MAX).ok();
    let from = parse(&texts.0);
    let to = parse(&texts.1);
    let range_error = match (from, to) {
        (Some(f), Some(t)) if f <= t => None,
        _ => Some(ctx.tf(
            "race.sweep.range_error",
            &[
                ("min", &SWEEP_MIN.to_string()),
                ("max", &SWEEP_MAX.to_string()),
            ],
        )),
    };
    let running = runs.is_running();

    let on_range = |which: usize| {
        let (texts, ctx, navigator, p) = (
            texts.clone(),
            ctx.clone(),
            navigator.clone(),
            s.params.clone(),
        );
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let mut t = (*texts).clone();
            if which == 0 {
                t.0 = input.value();
            } else {
                t.1 = input.value();
            }
            let f = gpu_runtime::parse_dim(&t.0, SWEEP_MIN, SWEEP_MAX).ok();
            let to = gpu_runtime::parse_dim(&t.1, SWEEP_MIN, SWEEP_MAX).ok();
            if let (Some(f), Some(to)) = (f, to) {
                if f <= to {
                    let mut p = p.clone();
                    p.from = f;
                    p.to = to;
                    write_params(&ctx, &navigator, &p);
                }
            }
            texts.set(t);
        })
    };

    let start = {
        let (model, redraw, s, runs) = (model.clone(), redraw.clone(), s.clone(), runs.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if let (Some(f), Some(t)) = (from, to) {
                if f <= t {
                    start_sweep(model.clone(), redraw.clone(), &runs, s.clone(), f, t);
                }
            }
        })
    };
    let cancel = {
        let (model, redraw, runs) = (model.clone(), redraw.clone(), runs.clone());
        Callback::from(move |_| {
            runs.cancel();
            model.borrow_mut().current = None;
            redraw.force_update();
        })
    };

    let m = model.borrow();
    let progress = m.current.map(|(si, ci)| {
        let done = si * m.contenders.len() + ci;
        let total = m.sizes.len() * m.contenders.len();
        let label = m
            .contenders
            .get(ci)
            .map(|c| c.label(&ctx))
            .unwrap_or_default();
        html! {
            <>
                <progress max={total.to_string()} value={done.to_string()}></progress>
                <span class="progress-text" data-progress={m.clock.pct().to_string()}
                    data-left={m.clock.left().id()}>
                    { ctx.tf("race.sweep.progress", &[("n", &m.sizes.get(si).copied().unwrap_or(0).to_string()), ("who", &label)]) }
                    { " · " }
                    { progress_text(&ctx, &m.clock) }
                </span>
            </>
        }
    });

    html! {
        <section class="panel sweep" aria-labelledby="sweep-heading">
            <h2 id="sweep-heading">{ ctx.t("race.sweep.heading") }</h2>
            <p>{ ctx.t("race.sweep.intro") }</p>
            <form class="race-controls" onsubmit={start} novalidate=true>
                <div class={classes!("field", range_error.is_some().then_some("invalid"))}>
                    <label for="sweep-from">{ ctx.t("race.sweep.from") }</label>
                    <input id="sweep-from" type="text" inputmode="numeric" value={texts.0.clone()}
                        oninput={on_range(0)} disabled={running} aria-describedby="sweep-error" />
                </div>
                <div class={classes!("field", range_error.is_some().then_some("invalid"))}>
                    <label for="sweep-to">{ ctx.t("race.sweep.to") }</label>
                    <input id="sweep-to" type="text" inputmode="numeric" value={texts.1.clone()}
                        oninput={on_range(1)} disabled={running} aria-describedby="sweep-error" />
                </div>
                <div class="buttons">
                    <button type="submit" class="button primary" id="sweep-start"
                        disabled={running || range_error.is_some()}>{ ctx.t("race.sweep.start") }</button>
                    <button type="button" class="button" id="sweep-cancel" disabled={!running}
                        onclick={cancel}>{ ctx.t("race.cancel") }</button>
                    { for progress }
                </div>
                <p id="sweep-error" class="field-error" role="alert">{ range_error.unwrap_or_default() }</p>
            </form>
            <p class="note">{ ctx.t("race.sweep.slow_note") }</p>
            if runs.was_cancelled() {
                <p class="message" role="status" data-notice="cancelled">{ ctx.t("race.sweep.cancelled") }</p>
            }
            if let Some(n) = &m.notice {
                <p class="message error" role="alert">{ n.clone() }</p>
            }
            if !m.sizes.is_empty() {
                { chart(&ctx, &m, !running && m.finished > 0 && !runs.was_cancelled(), &chart_ref, chart_w) }
            }
        </section>
    }
}

fn start_sweep(
    model: Rc<RefCell<Model>>,
    redraw: UseForceUpdateHandle,
    runs: &RunHandle<()>,
    s: Rc<Setup>,
    from: u32,
    to: u32,
) {
    let sizes = sweep_sizes(from, to);
    let who = s.contenders(&CpuVariant::ALL);
    let run = runs.start(());
    {
        let mut m = model.borrow_mut();
        let finished = m.finished;
        *m = Model {
            cells: vec![vec![Cell::Pending; who.len()]; sizes.len()],
            sizes: sizes.clone(),
            contenders: who.clone(),
            current: Some((0, 0)),
            finished,
            ..Model::default()
        };
    }
    redraw.force_update();
    let current = {
        let run = run.clone();
        move || run.is_current()
    };
    let software = s.software;
    let cancel = run.token().clone();
    wasm_bindgen_futures::spawn_local(async move {
        let mut last: Vec<Option<(u32, f64)>> = vec![None; who.len()];
        let mut gpu_gone = false;
        'sizes: for (si, &n) in sizes.iter().enumerate() {
            let size = MatmulSize::new(n, n, n);
            let (a, b) = size.inputs(SEED);
            for (ci, &c) in who.iter().enumerate() {
                if !current() {
                    return;
                }
                let too_slow = last[ci].is_some_and(|(n0, ms)| {
                    page_models::race::params::extrapolate_cubic(ms, n0, n) > SKIP_MS
                });
                if too_slow || (c.is_gpu() && gpu_gone) {
                    model.borrow_mut().cells[si][ci] = Cell::Skipped;
                    continue;
                }
                {
                    let mut m = model.borrow_mut();
                    m.current = Some((si, ci));
                    m.clock = ProgressClock::default();
                }
                redraw.force_update();
                // Let the progress text paint before a long measurement.
                gloo::timers::future::TimeoutFuture::new(0).await;
                let progress: Rc<dyn Fn(f64)> = {
                    let (model, redraw, run) = (model.clone(), redraw.clone(), run.clone());
                    Rc::new(move |f| {
                        if run.is_current() {
                            model.borrow_mut().clock.report(now_ms(), f);
                            redraw.force_update();
                        }
                    })
                };
                let r = best_of(c, size, &a, &b, software, &cancel, progress).await;
                if !current() {
                    return;
                }
                let cell = match r {
                    Ok((ms, slowest, true)) => {
                        last[ci] = Some((n, ms));
                        Cell::Time(ms, slowest)
                    }
                    Ok((ms, _, false)) => Cell::Wrong(ms),
                    Err(MeasureError::Cancelled) => return,
                    Err(MeasureError::Lost(e)) => {
                        gpu_gone = true;
                        Cell::Failed(e)
                    }
                    Err(MeasureError::Failed(e)) => {
                        if !c.is_gpu() {
                            model.borrow_mut().cells[si][ci] = Cell::Failed(e.clone());
                            model.borrow_mut().notice = Some(e);
                            break 'sizes;
                        }
                        gpu_gone = true;
                        Cell::Failed(e)
                    }
                };
                model.borrow_mut().cells[si][ci] = cell;
                redraw.force_update();
            }
        }
        if run.finish() {
            let mut m = model.borrow_mut();
            m.current = None;
            m.finished += 1;
            page_models::embed::report(Ok(sweep_report(&m)));
            drop(m);
            redraw.force_update();
        }
    });
}

/// Small sizes are noisy (timer and message latency): measure up to [`REPEATS`] times while
/// the total stays under [`REPEAT_BUDGET_MS`] and keep the fastest verified run, and the
/// slowest (their spread is what `page_models::race::doubt` judges).
async fn best_of(
    c: Contender,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    software: bool,
    cancel: &gpu_runtime::CancelToken,
    progress: Rc<dyn Fn(f64)>,
) -> Result<(f64, f64, bool), MeasureError> {
    let (mut best, mut slowest, mut spent) = (f64::INFINITY, 0.0f64, 0.0);
    // Repeats happen only while the point is quick, so the first run's progress is the one
    // worth showing.
    for _ in 0..REPEATS {
        let (ms, ok) = measure_one(c, size, a, b, software, cancel, progress.clone()).await?;
        if !ok {
            return Ok((ms, ms, false));
        }
        best = best.min(ms);
        slowest = slowest.max(ms);
        spent += ms;
        if spent > REPEAT_BUDGET_MS {
            break;
        }
    }
    Ok((best, slowest, true))
}

fn time_of(c: &Cell) -> Option<f64> {
    match c {
        Cell::Time(ms, _) => Some(*ms),
        _ => None,
    }
}

/// Each cell's doubt (`page_models::race::doubt`), cells[size][contender] as the model's.
fn doubts_of(m: &Model) -> Vec<Vec<Option<Doubt>>> {
    let per_contender: Vec<Vec<Option<Doubt>>> = (0..m.contenders.len())
        .map(|ci| {
            let runs: Vec<Option<Runs>> = m
                .cells
                .iter()
                .map(|row| match row.get(ci) {
                    Some(Cell::Time(fastest, slowest)) => Some(Runs {
                        fastest: *fastest,
                        slowest: *slowest,
                    }),
                    _ => None,
                })
                .collect();
            doubts(&m.sizes, &runs)
        })
        .collect();
    (0..m.sizes.len())
        .map(|si| {
            per_contender
                .iter()
                .map(|d| d.get(si).copied().flatten())
                .collect()
        })
        .collect()
}

/// A doubted cell's explanation.
fn doubt_text(ctx: &Ctx, d: Doubt) -> String {
    match d {
        Doubt::Spread { spread } => ctx.tf(d.key(), &[("spread", &numbers::percent(spread))]),
        Doubt::Order { n, ms } => ctx.tf(d.key(), &[("n", &n.to_string()), ("ms", &duration(ms))]),
    }
}

/// (N, fastest verified CPU time, verified GPU time) per size, as `crossover` takes them.
fn best_times(m: &Model) -> Vec<(u32, Option<f64>, Option<f64>)> {
    let gpu_col = m.contenders.iter().position(|c| c.is_gpu());
    m.sizes
        .iter()
        .zip(&m.cells)
        .map(|(&n, row)| {
            let best_cpu = row
                .iter()
                .zip(&m.contenders)
                .filter(|(_, c)| !c.is_gpu())
                .filter_map(|(cell, _)| time_of(cell))
                .fold(None, |acc: Option<f64>, t| {
                    Some(acc.map_or(t, |a| a.min(t)))
                });
            let gpu = gpu_col.and_then(|g| time_of(&row[g]));
            (n, best_cpu, gpu)
        })
        .collect()
}

/// `run-finished` of a sweep (docs/embedding.md): every cell measured, and the crossover.
fn sweep_report(m: &Model) -> page_models::embed::Report {
    use page_models::embed::Field;
    let mut points = Vec::new();
    for (&n, row) in m.sizes.iter().zip(&m.cells) {
        for (cell, c) in row.iter().zip(&m.contenders) {
            let (ms, verified) = match cell {
                Cell::Time(ms, _) => (*ms, true),
                Cell::Wrong(ms) => (*ms, false),
                _ => continue,
            };
            let flops = MatmulSize::new(n, n, n).flops();
            points.push(vec![
                ("n", Field::Num(n as f64)),
                ("contender", Field::Str(c.key())),
                ("ms", Field::Num(ms)),
                ("gflops", Field::Num(flops / (ms * 1e6))),
                ("verified", Field::Bool(verified)),
            ]);
        }
    }
    let crossover = match crossover(&best_times(m)) {
        Crossover::At(n) => Field::Num(n as f64),
        Crossover::GpuEverywhere => Field::Str("gpu-everywhere".into()),
        Crossover::None => Field::Str("none".into()),
    };
    let all_verified = points.iter().all(|p| {
        p.iter()
            .any(|(k, v)| *k == "verified" && *v == Field::Bool(true))
    });
    vec![
        ("points", Field::List(points)),
        ("crossover", crossover),
        ("verified", Field::Bool(all_verified)),
    ]
}

/// The chart and table; `done` when the sweep ended by itself (the crossover is then shown).
fn chart(ctx: &Ctx, m: &Model, done: bool, chart_ref: &NodeRef, chart_w: Option<f64>) -> Html {
    let xs: Vec<f64> = m.sizes.iter().map(|&n| n as f64).collect();
    let ys: Vec<f64> = m.cells.iter().flatten().filter_map(time_of).collect();
    // Drawn at its rendered width, so its ticks show at the stylesheet's 13 px on a phone too.
    let p = LogLog::new(&xs, &ys).at_width(chart_w);
    let right = p.right();
    let gpu_col = m.contenders.iter().position(|c| c.is_gpu());
    let points = best_times(m);
    let cross = crossover(&points);
    let doubted = doubts_of(m);
    let lines = m.contenders.iter().enumerate().map(|(ci, c)| {
        let pts: Vec<(f64, Option<f64>)> = m
            .sizes
            .iter()
            .zip(&m.cells)
            .map(|(&n, row)| (n as f64, time_of(&row[ci])))
            .collect();
        // A doubted point is drawn hollow: there, but not to be read.
        let dots = pts.iter().zip(&doubted).filter_map(|(&(n, t), d)| {
            p.dot(n, t).map(|xy| (xy, d.get(ci).copied().flatten().is_some()))
        });
        html! {
            <g class={classes!("series", c.key(), format!("s{ci}"))} data-series={c.key()}>
                <path d={p.path(&pts)} />
                { for dots.map(|((x, y), doubt)| html! {
                    <circle class={doubt.then_some("doubt")} cx={format!("{x:.1}")} cy={format!("{y:.1}")} r="3.5" />
                }) }
            </g>
        }
    });
    let y_grid = p.y_ticks().into_iter().map(|t| {
        let y = p.y(t);
        html! {
            <g class="grid">
                <line x1={plot::LEFT.to_string()} x2={right.to_string()}
                    y1={format!("{y:.1}")} y2={format!("{y:.1}")} />
                <text x={(plot::LEFT - 9.0).to_string()} y={format!("{:.1}", y + 4.0)} class="tick y">{ numbers::tick_ms(t) }</text>
            </g>
        }
    });
    let shown = p.x_tick_labels(&m.sizes, TICK_PX);
    let x_ticks = m.sizes.iter().zip(shown).filter(|(_, s)| *s).map(|(&n, _)| {
        let x = p.x(n as f64);
        html! {
            <text x={format!("{x:.1}")} y={(plot::HEIGHT - plot::BOTTOM + 18.0).to_string()} class="tick x">{ n.to_string() }</text>
        }
    });
    let marker = match (done, cross) {
        (true, Crossover::At(n)) => {
            let x = p.x(n as f64);
            let label = ctx.tf("race.sweep.crossover_label", &[("n", &n.to_string())]);
            let (lx, end) = p.beside(x, text_width(&label, LABEL_PX));
            Some(html! {
                <g class="crossover" data-crossover={n.to_string()}>
                    <line x1={format!("{x:.1}")} x2={format!("{x:.1}")} y1={plot::TOP.to_string()}
                        y2={(plot::HEIGHT - plot::BOTTOM).to_string()} />
                    <text x={format!("{lx:.1}")} y={(plot::TOP + 12.0).to_string()} text-anchor={if end { "end" } else { "start" }}>
                        { label }
                    </text>
                </g>
            })
        }
        _ => None,
    };
    let summary = done.then(|| match cross {
        Crossover::At(n) => ctx.tf("race.sweep.crossover", &[("n", &n.to_string())]),
        Crossover::GpuEverywhere => ctx.t("race.sweep.gpu_everywhere").to_string(),
        Crossover::None if gpu_col.is_some() => ctx.t("race.sweep.no_crossover").to_string(),
        Crossover::None => ctx.t("race.sweep.no_gpu").to_string(),
    });
    let legend = m.contenders.iter().enumerate().map(|(ci, c)| {
        html! { <li class={classes!(c.key(), format!("s{ci}"))}><span class="swatch"></span>{ c.label(ctx) }</li> }
    });
    let header = m
        .contenders
        .iter()
        .map(|c| html! { <th scope="col">{ c.label(ctx) }</th> });
    let rows = m.sizes.iter().zip(&m.cells).zip(&doubted).map(|((&n, row), doubt)| {
        html! {
            <tr>
                <th scope="row">{ n.to_string() }</th>
                { for row.iter().zip(doubt).map(|(cell, d)| match (cell, d) {
                    (Cell::Time(ms, _), Some(d)) => html! {
                        <td class="doubt" data-doubt={d.key()}>{ duration(*ms) }{ " " }
                            <span class="cant-tell">{ ctx.t("race.sweep.cant_tell") }</span>
                            <span class="why">{ doubt_text(ctx, *d) }</span></td>
                    },
                    (cell, _) => match cell {
                    Cell::Pending => html! { <td></td> },
                    Cell::Time(ms, _) => html! { <td>{ duration(*ms) }</td> },
                    Cell::Wrong(ms) => html! { <td class="bad">{ ctx.tf("race.sweep.wrong", &[("ms", &duration(*ms))]) }</td> },
                    Cell::Skipped => html! { <td class="skipped">{ ctx.t("race.sweep.skipped") }</td> },
                    Cell::Failed(e) => html! { <td class="bad" title={e.clone()}>{ ctx.t("race.sweep.failed") }</td> },
                    },
                }) }
            </tr>
        }
    });
    html! {
        <>
            <figure class="chart sweep-chart" data-runs={m.finished.to_string()}
                data-done={done.to_string()}>
                <figcaption>{ ctx.t("race.sweep.chart_title") }</figcaption>
                <svg ref={chart_ref.clone()} viewBox={format!("0 0 {} {}", p.width(), plot::HEIGHT)} role="img"
                    aria-label={ctx.t("race.sweep.chart_title")}>
                    { for y_grid }
                    { for x_ticks }
                    <text x={((plot::LEFT + right) / 2.0).to_string()} y={(plot::HEIGHT - 6.0).to_string()}
                        class="axis-label">{ ctx.t("race.sweep.x_axis") }</text>
                    { for marker }
                    { for lines }
                </svg>
                <ul class="legend">{ for legend }</ul>
            </figure>
            if let Some(text) = summary {
                <p class="crossover-summary" data-crossover-summary={format!("{cross:?}")}>{ text }</p>
                <p class="lesson">{ ctx.t("race.sweep.lesson") }</p>
            }
            { crate::components::scroll_table(ctx, ctx.t("race.sweep.chart_title"), html! {
                <table class="sweep-table">
                    <thead><tr><th scope="col">{ ctx.t("race.sweep.n_col") }</th>{ for header }</tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            }) }
            if doubted.iter().flatten().any(Option::is_some) {
                <p class="note" id="sweep-doubt-note">{ ctx.t("race.sweep.doubt_note") }</p>
            }
            <p class="note">{ ctx.tf("race.sweep.skip_note", &[("s", &format!("{:.0}", SKIP_MS / 1000.0))]) }</p>
        </>
    }
}
