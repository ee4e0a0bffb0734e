//! The crossover experiment: training steps per second of the 2-w-w-2 network on the
//! visitor's GPU (`gpu_runtime::crossover`, the same loop as `bench crossover`) and on a tuned CPU (`mlp::TunedTrainer`: every
//! layer as a matrix multiply on the race's SIMD kernel, one core, on this page's thread), over
//! widths × batch sizes (`mlp::crossover`), and for each width the batch size from which the
//! GPU wins. Each figure is the median of three runs of at least `MIN_MS`; GPU runs start on a
//! drained queue and end when every step has finished. The grid is `mlp::crossover`'s page grid
//! unless the link asks for fewer points (`xwidths`, `xbatches`: [`Grid::from_params`], bad
//! lists named above the button).

use std::rc::Rc;

use yew::prelude::*;

use gpu_runtime::crossover::{gpu_runs, Runs};
use gpu_runtime::training::max_batch;
use gpu_runtime::{CancelToken, Gpu};
use mlp::crossover::{self, crossover, median_spread, Crossover, Grid, Point, RUNS};
use mlp::{Gemm, TunedTrainer};

use super::kernels::TICK_PX;
use super::picture::Frame;
use crate::components::chart_width::use_chart_width;
use crate::components::run_lifecycle::use_run;
use crate::components::Ctx;
use crate::probe::WebGpuStatus;
use crate::session;
use crate::train_driver::now_ms;
use page_models::diagram::drawn_width;

const POINTS: usize = 4096;
/// Least length of one timed run (ms): coarse browser clocks stay small beside it.
const MIN_MS: f64 = 40.0;
const GPU_RUNS: Runs = Runs {
    count: RUNS,
    min_ms: MIN_MS,
    cap: 2000,
};
/// Main-thread slice of CPU work before yielding to the page (ms).
const SLICE_MS: f64 = 20.0;

#[derive(Clone, Debug, PartialEq)]
enum GpuCell {
    /// Median steps/s and spread of the runs.
    Rate(f64, f64),
    TooLarge,
    Failed(String),
    NoGpu,
}

#[derive(Clone, Debug, PartialEq)]
struct Cell {
    width: usize,
    batch: usize,
    gpu: GpuCell,
    cpu: (f64, f64),
}

impl Cell {
    fn point(&self) -> Point {
        Point {
            width: self.width,
            batch: self.batch,
            gpu: match self.gpu {
                GpuCell::Rate(m, _) => Some(m),
                _ => None,
            },
            cpu: self.cpu.0,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
enum Phase {
    #[default]
    Idle,
    Running {
        width: usize,
        batch: usize,
    },
    Done,
    Cancelled,
}

#[derive(Default)]
struct State {
    phase: Phase,
    cells: Vec<Cell>,
    /// The grid of the run shown (the link's may change while it runs).
    grid: Grid,
}

async fn yield_now() {
    gloo::timers::future::TimeoutFuture::new(0).await;
}

/// `RUNS` timed runs of the tuned CPU trainer, in slices that yield to the page (only the
/// time spent stepping counts); `None` when cancelled.
async fn cpu_runs(
    d: &crossover::Data,
    width: usize,
    batch: usize,
    cancel: &CancelToken,
) -> Option<Vec<f64>> {
    let net = crossover::net(width);
    let mut t = TunedTrainer::new(
        net.clone(),
        crossover::hyper(),
        net.init_params(1),
        batch,
        d.x.clone(),
        d.labels.clone(),
        d.order.clone(),
        Gemm::best(),
    );
    // The first step allocates; it is not timed.
    t.step();
    let mut out = Vec::new();
    for _ in 0..RUNS {
        // Steps in slices that yield to the page until MIN_MS of stepping (only that counts).
        let (mut busy, mut done) = (0.0, 0u32);
        while done == 0 || busy < MIN_MS {
            yield_now().await;
            if cancel.is_cancelled() {
                return None;
            }
            let s0 = now_ms();
            let mut slice = 0u32;
            while slice == 0 || now_ms() - s0 < SLICE_MS.min(MIN_MS - busy) {
                t.step();
                slice += 1;
            }
            busy += now_ms() - s0;
            done += slice;
        }
        out.push(done as f64 * 1000.0 / busy.max(1e-3));
    }
    Some(out)
}

/// Every grid point in turn, each one reported as it finishes; stops when cancelled.
async fn run(
    gpu: Option<Rc<Gpu>>,
    grid: Grid,
    cancel: CancelToken,
    on_start: impl Fn(usize, usize),
    on_cell: impl Fn(Cell),
) -> bool {
    let d = crossover::data(POINTS);
    for &width in &grid.widths {
        for &batch in &grid.batches {
            if cancel.is_cancelled() {
                return false;
            }
            on_start(width, batch);
            yield_now().await;
            let net = crossover::net(width);
            let gpu_cell = match &gpu {
                None => GpuCell::NoGpu,
                Some(g) if max_batch(&net, &g.buffer_limits()) < batch as u64 => GpuCell::TooLarge,
                Some(g) => {
                    match gpu_runs(g, &d, width, batch, GPU_RUNS, Default::default(), &cancel).await
                    {
                        Ok(Some(r)) => median_spread(&r)
                            .map_or(GpuCell::Failed("no time measured".into()), |(m, s)| {
                                GpuCell::Rate(m, s)
                            }),
                        Ok(None) => return false,
                        Err(e) => GpuCell::Failed(e.to_string()),
                    }
                }
            };
            let Some(cpu) = cpu_runs(&d, width, batch, &cancel).await else {
                return false;
            };
            let cpu = median_spread(&cpu).unwrap_or((f64::NAN, 0.0));
            on_cell(Cell {
                width,
                batch,
                gpu: gpu_cell,
                cpu,
            });
        }
    }
    true
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Called when a run starts (the train view pauses its own training: both would share
    /// this thread).
    pub on_start: Callback<()>,
}

#[function_component]
pub fn CrossoverExperiment(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let state = use_mut_ref(State::default);
    let redraw = use_force_update();
    let runs = use_run::<()>(|| ());
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    let (grid, grid_errors) =
        Grid::from_params(ctx.query.get("xwidths"), ctx.query.get("xbatches"));
    let running = matches!(state.borrow().phase, Phase::Running { .. });
    let on_click = {
        let grid = grid.clone();
        let (state, redraw, runs) = (state.clone(), redraw.clone(), runs.clone());
        let on_start = props.on_start.clone();
        Callback::from(move |_: MouseEvent| {
            if running {
                runs.cancel();
                return;
            }
            on_start.emit(());
            let this_run = runs.start(());
            let token = this_run.token().clone();
            {
                let mut s = state.borrow_mut();
                s.cells.clear();
                s.grid = grid.clone();
                s.phase = Phase::Running {
                    width: grid.widths[0],
                    batch: grid.batches[0],
                };
            }
            redraw.force_update();
            let (state, redraw, grid) = (state.clone(), redraw.clone(), grid.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let gpu = match software {
                    Some(sw) => session::gpu(sw).await.ok().map(|(g, _)| g),
                    None => None,
                };
                let (s1, r1, s2, r2) =
                    (state.clone(), redraw.clone(), state.clone(), redraw.clone());
                let finished = run(
                    gpu,
                    grid,
                    token.clone(),
                    move |width, batch| {
                        s1.borrow_mut().phase = Phase::Running { width, batch };
                        r1.force_update();
                    },
                    move |cell| {
                        s2.borrow_mut().cells.push(cell);
                        r2.force_update();
                    },
                )
                .await;
                // Cancelled or left: the points so far stay, marked as a cancelled run.
                let finished = this_run.finish() && finished;
                state.borrow_mut().phase = if finished {
                    Phase::Done
                } else {
                    Phase::Cancelled
                };
                if finished {
                    page_models::embed::report(Ok(report(&state.borrow().cells)));
                }
                redraw.force_update();
            });
        })
    };
    let s = state.borrow();
    // The run shown keeps its grid; before the first run, the link's.
    let shown = if s.phase == Phase::Idle {
        &grid
    } else {
        &s.grid
    };
    let total = shown.len();
    let list = |v: &[usize]| {
        v.iter()
            .map(|&n| numbers::count(n as u64))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let phase_code = match s.phase {
        Phase::Idle => "idle",
        Phase::Running { .. } => "running",
        Phase::Done => "done",
        Phase::Cancelled => "cancelled",
    };
    html! {
        <section class="train-crossover" id="train-crossover" data-phase={phase_code}>
            <h2>{ ctx.t("train.x.title") }</h2>
            <p>{ ctx.t("train.x.intro") }</p>
            <p class="hint">{ ctx.t("train.x.how") }</p>
            if !grid_errors.is_empty() {
                <ul class="train-x-errors" role="alert">
                    { for grid_errors.iter().map(|e| {
                        let args = e.args();
                        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                        html! { <li data-error={e.key()}>{ ctx.tf(e.key(), &args) }</li> }
                    }) }
                </ul>
            }
            if grid != Grid::default() {
                <p class="hint" id="train-x-grid" data-points={grid.len().to_string()}>
                    { ctx.tf("train.x.grid", &[("widths", &list(&grid.widths)), ("batches", &list(&grid.batches))]) }
                </p>
            }
            <button id="train-x-run" class="button" onclick={on_click}>
                { ctx.t(if running { "train.x.cancel" } else { "train.x.run" }) }
            </button>
            { match s.phase {
                Phase::Running { width, batch } => html! {
                    <p class="status running" id="train-x-progress">
                        <progress max={total.to_string()} value={s.cells.len().to_string()} />
                        { " " }
                        { ctx.tf("train.x.progress", &[
                            ("done", &s.cells.len().to_string()),
                            ("total", &total.to_string()),
                            ("width", &width.to_string()),
                            ("batch", &numbers::count(batch as u64)),
                        ]) }
                    </p>
                },
                Phase::Cancelled => html! { <p class="status">{ ctx.t("train.x.cancelled") }</p> },
                _ => html! {},
            } }
            { (!s.cells.is_empty()).then(|| view(&ctx, shown, &s.cells, (&chart_ref, chart_w))) }
            { (s.phase == Phase::Done).then(|| verdicts(&ctx, shown, &s.cells, software == Some(true))) }
        </section>
    }
}

fn net_name(width: usize) -> String {
    format!("2-{width}-{width}-2")
}

fn ratio_of(c: &Cell) -> Option<f64> {
    match c.gpu {
        GpuCell::Rate(g, _) if c.cpu.0 > 0.0 => Some(g / c.cpu.0),
        _ => None,
    }
}

/// The chart (GPU ÷ tuned CPU against batch size, one line per width, the break-even line at
/// 1×) and the table of every point.
fn view(ctx: &Ctx, grid: &Grid, cells: &[Cell], (svg_ref, svg_w): (&NodeRef, Option<f64>)) -> Html {
    // Drawn at its rendered width, so its ticks show at the stylesheet's size on a phone.
    let cw = drawn_width(svg_w, 450.0, 260.0);
    // Each distinct GPU failure is written out once, under the table; its cells point to it.
    let mut failures: Vec<String> = Vec::new();
    for c in cells {
        if let GpuCell::Failed(e) = &c.gpu {
            if !failures.contains(e) {
                failures.push(e.clone());
            }
        }
    }
    let logs: Vec<f64> = cells
        .iter()
        .filter_map(ratio_of)
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(f64::log10)
        .collect();
    let lo = logs
        .iter()
        .copied()
        .fold(0.0f64, f64::min)
        .floor()
        .min(-1.0);
    let hi = logs.iter().copied().fold(0.0f64, f64::max).ceil().max(1.0);
    let tick = |p: i32| match p {
        0 => "1×".to_string(),
        p if p > 0 => format!("{}×", numbers::count(10u64.pow(p as u32))),
        p => format!("1/{}", numbers::count(10u64.pow((-p) as u32))),
    };
    // The axis sits right of its longest tick label ("1/100,000" when the GPU is that far
    // behind on a software adapter), about 6.6 units a character at the chart's font size.
    let longest = (lo as i32..=hi as i32)
        .map(|p| tick(p).chars().count())
        .max()
        .unwrap_or(0);
    let x0 = (14.0 + 6.6 * longest as f64).max(56.0);
    let f = Frame {
        x0,
        y0: 10.0,
        w: cw - x0 - 14.0,
        h: 160.0,
        x_min: 0.0,
        x_max: 12.0,
        y_min: lo,
        y_max: hi,
    };
    let y = |v: f64| format!("{:.1}", f.y(v));
    let (ax, tx) = (format!("{x0:.1}"), format!("{:.1}", x0 - 6.0));
    html! {
        <>
            <svg class="train-x-chart" ref={svg_ref.clone()} viewBox={format!("0 0 {cw} 200")} role="img" aria-label={ctx.t("train.x.chart")}>
                <line class="axis" x1={ax.clone()} y1="170" x2={(cw - 14.0).to_string()} y2="170" />
                <line class="axis" x1={ax.clone()} y1="10" x2={ax.clone()} y2="170" />
                { for (lo as i32..=hi as i32).map(|p| html! {
                    <>
                        <line class={if p == 0 { "even" } else { "grid" }} x1={ax.clone()} x2={(cw - 14.0).to_string()} y1={y(p as f64)} y2={y(p as f64)} />
                        <text x={tx.clone()} y={format!("{:.1}", f.y(p as f64) + 4.0)} text-anchor="end">{ tick(p) }</text>
                    </>
                }) }
                { for f.log2_ticks(&grid.batches, TICK_PX).into_iter().map(|(x, b)| html! {
                    <text x={format!("{x:.1}")} y="186" text-anchor="middle">{ b }</text>
                }) }
                { for grid.widths.iter().enumerate().map(|(i, &w)| {
                    let pts = f.path(cells.iter().filter(|c| c.width == w).filter_map(|c| {
                        ratio_of(c).filter(|r| *r > 0.0).map(|r| ((c.batch as f64).log2(), r.log10()))
                    }));
                    html! { <polyline class={format!("x-line x-w{i}")} points={pts} /> }
                }) }
                <text class="even-label" x={(cw - 18.0).to_string()} y={format!("{:.1}", f.y(0.0) - 4.0)} text-anchor="end">{ ctx.t("train.x.even") }</text>
            </svg>
            <p class="hint">
                { for grid.widths.iter().enumerate().map(|(i, &w)| html! {
                    <span class={format!("key x-w{i}")}>{ net_name(w) }</span>
                }) }
                { ctx.t("train.x.axes") }
            </p>
            <div class="table-scroll">
                <table class="train-x-table">
                    <thead><tr>
                        <th>{ ctx.t("train.x.net") }</th>
                        <th>{ ctx.t("train.x.batch") }</th>
                        <th>{ ctx.t("train.x.gpu") }</th>
                        <th>{ ctx.t("train.x.cpu") }</th>
                        <th>{ ctx.t("train.x.ratio") }</th>
                    </tr></thead>
                    <tbody>
                        { for cells.iter().map(|c| row(ctx, c, &failures)) }
                    </tbody>
                </table>
            </div>
            { for failures.iter().enumerate().map(|(i, e)| html! {
                <p class="hint train-x-failure" data-note={(i + 1).to_string()}>
                    { ctx.tf("train.x.failure_note", &[("n", &(i + 1).to_string()), ("detail", e)]) }
                </p>
            }) }
        </>
    }
}

fn rate_text(m: f64, spread: f64) -> String {
    format!("{} ±{:.0} %", numbers::number(m), spread * 100.0)
}

/// GPU ÷ CPU as the chart's axis writes it: "3.20×" above 1, "1/250" below.
fn ratio_text(r: f64) -> String {
    if r >= 1.0 {
        format!("{}×", numbers::rate(r))
    } else {
        format!("1/{}", numbers::count((1.0 / r).round() as u64))
    }
}

fn row(ctx: &Ctx, c: &Cell, failures: &[String]) -> Html {
    let (gpu_text, gpu_attr) = match &c.gpu {
        GpuCell::Rate(m, s) => (rate_text(*m, *s), format!("{m}")),
        GpuCell::TooLarge => (ctx.t("train.x.too_large").to_string(), String::new()),
        GpuCell::NoGpu => (ctx.t("train.x.no_gpu").to_string(), String::new()),
        GpuCell::Failed(e) => {
            let n = failures.iter().position(|f| f == e).map_or(0, |i| i + 1);
            (
                ctx.tf("train.x.failed", &[("n", &n.to_string())]),
                String::new(),
            )
        }
    };
    let ratio = ratio_of(c);
    let winner = match ratio {
        Some(r) if r > 1.0 => "x-gpu",
        Some(_) => "x-cpu",
        None => "",
    };
    html! {
        <tr class={winner} data-width={c.width.to_string()} data-batch={c.batch.to_string()}
            data-gpu={gpu_attr} data-cpu={format!("{}", c.cpu.0)}>
            <td>{ net_name(c.width) }</td>
            <td>{ numbers::count(c.batch as u64) }</td>
            <td>{ gpu_text }</td>
            <td>{ rate_text(c.cpu.0, c.cpu.1) }</td>
            <td>{ ratio.filter(|r| *r > 0.0).map_or(String::new(), ratio_text) }</td>
        </tr>
    }
}

/// For every width, where the crossover lies in this run, then why.
fn verdicts(ctx: &Ctx, grid: &Grid, cells: &[Cell], software: bool) -> Html {
    let points: Vec<Point> = cells.iter().map(Cell::point).collect();
    html! {
        <div class="lesson">
            <ul class="train-x-verdicts">
                { for grid.widths.iter().map(|&w| {
                    let v = crossover(&points, w);
                    let net = net_name(w);
                    let text = match v {
                        Crossover::NoGpu => ctx.tf("train.x.v.no_gpu", &[("net", &net)]),
                        Crossover::CpuEverywhere => ctx.tf("train.x.v.cpu_all", &[("net", &net)]),
                        Crossover::GpuEverywhere => ctx.tf("train.x.v.gpu_all", &[("net", &net)]),
                        Crossover::GpuFrom { from } => ctx.tf(
                            "train.x.v.gpu_from",
                            &[("net", &net), ("batch", &numbers::count(from as u64))],
                        ),
                        Crossover::Mixed => ctx.tf("train.x.v.mixed", &[("net", &net)]),
                    };
                    html! { <li data-width={w.to_string()} data-verdict={v.code()}>{ text }</li> }
                }) }
            </ul>
            { software.then(|| html! { <p>{ ctx.t("train.x.software") }</p> }) }
            <p>{ ctx.t("train.x.lesson") }</p>
        </div>
    }
}

/// `run-finished` of the crossover experiment: every point's steps/s on each side.
fn report(cells: &[Cell]) -> page_models::embed::Report {
    use page_models::embed::Field;
    let points = cells
        .iter()
        .map(|c| {
            let mut o = vec![
                ("width", Field::Num(c.width as f64)),
                ("batch", Field::Num(c.batch as f64)),
                ("cpuStepsPerSecond", Field::Num(c.cpu.0)),
            ];
            if let GpuCell::Rate(m, _) = c.gpu {
                o.push(("gpuStepsPerSecond", Field::Num(m)));
            }
            o
        })
        .collect();
    vec![("points", Field::List(points))]
}
