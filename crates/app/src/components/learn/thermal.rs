//! Lesson `thermal` — heat, power limits and throttling. A sustained matmul load for a
//! chosen time, each point one timed chunk through the plan path (which waits for the queue to
//! drain first), charted as GFLOP/s over time with the throttling verdict of
//! `lessons::thermal`. Stop cancels the run at its next submission (≤ about 200 ms).

use std::cell::Cell;
use std::rc::Rc;

use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::verify;
use gpu_runtime::numeric::mean_ms;
use gpu_runtime::{CancelToken, GpuError, Job, RunControl, RunOptions};
use lessons::thermal::{self, Doubt, Point, Verdict, MAX_SECONDS, MIN_SECONDS};
use yew::prelude::*;

use super::kit as common;
use crate::components::chart_width::use_chart_width;
use crate::components::run_lifecycle::use_run;
use crate::components::Ctx;
use crate::session;

/// The load: the fastest portable stage of the ladder.
const KERNEL: &str = "matmul-vec4";
/// Matrix side on a hardware GPU and on a software adapter (the CPU).
const N_HARDWARE: u32 = 2048;
const N_SOFTWARE: u32 = 256;
/// Aimed-for length of one point.
const POINT_MS: f64 = 500.0;
/// Chart width before the page has measured it (then it is drawn at its rendered width).
const CHART_W: f64 = 640.0;
/// Narrowest chart drawn: the axis texts still fit side by side.
const CHART_MIN_W: f64 = 240.0;
const CHART_H: f64 = 260.0;
const CHART_LEFT: f64 = 56.0;
const CHART_BOTTOM: f64 = 28.0;
/// Iterations of the CPU control: a few milliseconds of the page's own thread.
const CONTROL_ITERS: u64 = 2_000_000;

#[derive(Clone, Debug, PartialEq)]
enum State {
    Idle,
    Starting,
    Running,
    Done,
    Stopped,
    Failed(String),
    Lost(String),
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Starting | State::Running => "running",
            State::Done => "done",
            State::Stopped => "stopped",
            State::Failed(_) => "error",
            State::Lost(_) => "lost",
        }
    }
    fn busy(&self) -> bool {
        matches!(self, State::Starting | State::Running)
    }
}

/// Applies a change to the latest run and renders it.
type Update = Rc<dyn Fn(&dyn Fn(&mut Run))>;

#[derive(Clone, Debug, PartialEq)]
struct Run {
    state: State,
    points: Vec<Point>,
    n: u32,
    reps: u32,
    seconds: u32,
    /// The CPU control's time before and after the load (ms), once measured.
    control_ms: Option<(f64, f64)>,
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let secs_text = use_state(|| "45".to_string());
    let run = use_state(|| Run {
        state: State::Idle,
        points: Vec::new(),
        n: 0,
        reps: 0,
        seconds: 0,
        control_ms: None,
    });
    // The latest run, for the async loop (state handles are snapshots).
    let latest = use_mut_ref(|| (*run).clone());
    // Stop and leaving the page stop the load at its next submission.
    let runs = use_run::<()>(|| ());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    let secs = common::parse_in(&secs_text, MIN_SECONDS, MAX_SECONDS);
    let secs_error = secs
        .as_ref()
        .err()
        .map(|k| common::parse_message(&ctx, k, MIN_SECONDS, MAX_SECONDS));
    let start = {
        let run = run.clone();
        let latest = latest.clone();
        let runs = runs.clone();
        let seconds = secs.clone().ok();
        Callback::from(move |_: MouseEvent| {
            let Some(seconds) = seconds else {
                return;
            };
            let this_run = runs.start(());
            let fresh = this_run.token().clone();
            let set = {
                let run = run.clone();
                let latest = latest.clone();
                Rc::new(move |f: &dyn Fn(&mut Run)| {
                    let mut r = latest.borrow().clone();
                    f(&mut r);
                    *latest.borrow_mut() = r.clone();
                    run.set(r);
                })
            };
            set(&|r: &mut Run| {
                *r = Run {
                    state: State::Starting,
                    points: Vec::new(),
                    n: 0,
                    reps: 0,
                    seconds,
                    control_ms: None,
                }
            });
            wasm_bindgen_futures::spawn_local(async move {
                let result = sustained(software, seconds, &fresh, set.clone()).await;
                // Stopped (made stale by Stop) or not, the points so far stay on the chart.
                this_run.finish();
                set(&|r: &mut Run| {
                    r.state = match &result {
                        Ok(()) => State::Done,
                        Err(GpuError::Cancelled) => State::Stopped,
                        Err(GpuError::DeviceLost(m)) => {
                            session::forget();
                            State::Lost(m.clone())
                        }
                        Err(e) => State::Failed(e.to_string()),
                    }
                });
            });
        })
    };
    let stop = {
        let runs = runs.clone();
        Callback::from(move |_: MouseEvent| {
            runs.cancel();
        })
    };
    let gate = common::gpu_gate(&ctx);
    let busy = run.state.busy();
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
    html! {
        <>
            { common::paras(&ctx, &["lesson.thermal.p1", "lesson.thermal.p2"]) }
            <section class="panel widget" data-widget="thermal">
                <h2>{ ctx.t("lesson.thermal.widget") }</h2>
                <p>{ ctx.t("lesson.thermal.widget_intro") }</p>
                { common::number_field(&ctx, "thermal-secs", "lesson.thermal.secs", &secs_text, secs_error, common::text_setter(&secs_text)) }
                <div class="controls">
                    <button type="button" class="button primary measure" data-act="start"
                        disabled={gate.is_err() || busy || secs.is_err()} onclick={start}>
                        { ctx.t(if busy { "lesson.thermal.running" } else { "lesson.thermal.start" }) }
                    </button>
                    <button type="button" class="button" data-act="stop" disabled={!busy} onclick={stop}>{ ctx.t("lesson.thermal.stop") }</button>
                </div>
                { gate.err().unwrap_or_default() }
                <div class="widget-result" aria-live="polite" data-state={run.state.name()} data-probe={common::probe_state(&ctx)}
                    data-points={run.points.len().to_string()}>
                    { view(&ctx, &run, software, &chart_ref, chart_w) }
                </div>
            </section>
            { common::h2(&ctx, "lesson.thermal.h_power") }
            { common::paras(&ctx, &["lesson.thermal.p3", "lesson.thermal.p4"]) }
            { common::correction(&ctx, "lesson.thermal.fc_temp") }
            { common::correction(&ctx, "lesson.thermal.fc_pl") }
            { common::h2(&ctx, "lesson.thermal.h_cooling") }
            { common::paras(&ctx, &["lesson.thermal.p5"]) }
            { common::correction(&ctx, "lesson.thermal.fc_cooling") }
            { common::try_it(&ctx, "lesson.thermal.try", Some(("learn/roofline", "lesson.thermal.try_link"))) }
        </>
    }
}

/// The verdict in words: throttling only when nothing else explains a slowdown, else why the
/// page cannot tell (`lessons::thermal::verdict`).
fn verdict_view(ctx: &Ctx, v: Verdict) -> Html {
    let pct = numbers::percent;
    let (class, code, drop, text) = match v {
        Verdict::Steady { drop } => (
            "ok",
            "steady",
            drop,
            ctx.tf("lesson.thermal.steady", &[("pct", &pct(drop))]),
        ),
        Verdict::Throttled { drop } => (
            "bad",
            "throttled",
            drop,
            ctx.tf("lesson.thermal.throttled", &[("pct", &pct(drop))]),
        ),
        Verdict::CantTell { drop, doubt } => {
            let (code, text) = match doubt {
                Doubt::SoftwareAdapter => (
                    "software",
                    ctx.tf("lesson.thermal.cant_tell_software", &[("pct", &pct(drop))]),
                ),
                Doubt::CpuBusy { control_slowdown } => (
                    "cpu-busy",
                    ctx.tf(
                        "lesson.thermal.cant_tell_cpu",
                        &[("pct", &pct(drop)), ("cpu", &pct(control_slowdown))],
                    ),
                ),
                Doubt::NoisyStart { spread } => (
                    "noisy",
                    ctx.tf(
                        "lesson.thermal.cant_tell_noisy",
                        &[("pct", &pct(drop)), ("spread", &pct(spread))],
                    ),
                ),
            };
            ("unsure", code, drop, text)
        }
    };
    html! {
        <p class={classes!("verdict", class)} data-verdict={code} data-drop={drop.to_string()}>{ text }</p>
    }
}

/// A fixed piece of work on the page's own thread, timed (the median of five): if it takes
/// longer after the load than before, other programs were competing for the machine, which
/// slows the page's submissions as throttling would.
fn cpu_control_ms() -> f64 {
    let times: Vec<f64> = (0..5)
        .map(|_| {
            let t0 = common::now_ms();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for i in 0..CONTROL_ITERS {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i);
                x ^= x >> 29;
            }
            std::hint::black_box(x);
            common::now_ms() - t0
        })
        .collect();
    // Five finite times always have a median; 0 would make the control say nothing.
    thermal::median(&times).unwrap_or(0.0)
}

/// The load: calibrate (one verified run), then timed chunks until `seconds` have passed or the
/// token is cancelled. Each point is pushed through `set` as it arrives.
async fn sustained(
    software: bool,
    seconds: u32,
    token: &CancelToken,
    set: Update,
) -> Result<(), GpuError> {
    let kernel = gpu_runtime::kernel(KERNEL).ok_or_else(|| GpuError::Shader(KERNEL.into()))?;
    let (gpu, _) = session::gpu(software).await?;
    let n = if software { N_SOFTWARE } else { N_HARDWARE };
    let size = MatmulSize::new(n, n, n);
    gpu_runtime::Workload::Matmul(size)
        .check_limits(&gpu.buffer_limits())
        .map_err(GpuError::Size)?;
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    let ctl = RunControl {
        cancel: token.clone(),
        ..Default::default()
    };
    // Calibration: one run, its result checked (sampled) against the f64 reference.
    let first = gpu
        .run_with(
            kernel,
            &job,
            &RunOptions {
                warmup: 1,
                repetitions: 1,
            },
            &ctl,
        )
        .await?;
    let idx = matmul::check_indices(size, 0, 1024, 1).unwrap_or_default();
    let reference = matmul::reference_at(size, &a, &b, &idx);
    let got: Vec<f32> = idx.iter().map(|&i| first.output[i]).collect();
    let verdict = verify::compare(&got, &reference, kernel.precision);
    if !verdict.ok {
        return Err(GpuError::Dispatch(format!(
            "{KERNEL}: {:?}",
            verdict.first_failure
        )));
    }
    let reps = thermal::reps_for(mean_ms(&first.timing), POINT_MS);
    let control_before = cpu_control_ms();
    set(&|r: &mut Run| {
        r.state = State::Running;
        r.n = n;
        r.reps = reps;
    });
    let t0 = common::now_ms();
    let opts = RunOptions {
        warmup: 0,
        repetitions: reps,
    };
    let stopped = Rc::new(Cell::new(false));
    while (common::now_ms() - t0) / 1e3 < seconds as f64 {
        if token.is_cancelled() {
            stopped.set(true);
            break;
        }
        let out = gpu.run_with(kernel, &job, &opts, &ctl).await?;
        let ms = mean_ms(&out.timing);
        let point = Point {
            t_s: (common::now_ms() - t0) / 1e3,
            gflops: size.flops() / (ms * 1e6),
        };
        set(&|r: &mut Run| r.points.push(point));
    }
    let control = (control_before, cpu_control_ms());
    set(&|r: &mut Run| r.control_ms = Some(control));
    if stopped.get() {
        return Err(GpuError::Cancelled);
    }
    Ok(())
}

fn view(ctx: &Ctx, run: &Run, software: bool, chart_ref: &NodeRef, chart_w: Option<f64>) -> Html {
    let failed = match &run.state {
        State::Failed(e) => Some(html! {
            <p class="message error" role="alert">{ ctx.tf("lesson.common.failed", &[("error", e)]) }</p>
        }),
        State::Lost(e) => Some(html! {
            <p class="message error" role="alert" data-lost="true">{ ctx.tf("lesson.common.lost", &[("error", e)]) }</p>
        }),
        _ => None,
    };
    if run.state == State::Idle {
        return html! {};
    }
    let analysis = thermal::analyse(&run.points);
    // Drawn at its rendered width, so its text shows at the stylesheet's 11 px on a phone too.
    let w = chart_w.unwrap_or(CHART_W).max(CHART_MIN_W);
    let chart = thermal::chart(
        &run.points,
        run.seconds as f64,
        w,
        CHART_H,
        CHART_LEFT,
        CHART_BOTTOM,
    );
    let line: String = chart
        .points
        .iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ");
    let low = analysis.as_ref().map(|a| a.low.clone()).unwrap_or_default();
    let y_top = CHART_H - CHART_BOTTOM;
    let verdict = matches!(run.state, State::Done | State::Stopped)
        .then(|| thermal::verdict(&run.points, software, run.control_ms))
        .flatten();
    html! {
        <>
            if run.n > 0 {
                <p class="note" data-n={run.n.to_string()} data-reps={run.reps.to_string()}>
                    { ctx.tf("lesson.thermal.load", &[("n", &run.n.to_string()), ("reps", &run.reps.to_string())]) }
                </p>
            }
            <figure class="diagram thermal-chart">
                <svg ref={chart_ref.clone()} viewBox={format!("0 0 {w} {CHART_H}")} role="img" aria-label={ctx.t("lesson.thermal.chart_alt")}>
                    <line x1={CHART_LEFT.to_string()} y1="8" x2={CHART_LEFT.to_string()} y2={y_top.to_string()} class="axis" />
                    <line x1={CHART_LEFT.to_string()} y1={y_top.to_string()} x2={(w - 8.0).to_string()} y2={y_top.to_string()} class="axis" />
                    <text x={(CHART_LEFT + 6.0).to_string()} y="18" class="svg-small">{ numbers::rate(chart.max_gflops) }</text>
                    <text x={(CHART_LEFT - 6.0).to_string()} y={y_top.to_string()} text-anchor="end" class="svg-small">{ 0 }</text>
                    <text x={(w - 8.0).to_string()} y={(CHART_H - 8.0).to_string()} text-anchor="end" class="svg-small">{ format!("{} s", chart.max_s.round()) }</text>
                    <text x={CHART_LEFT.to_string()} y={(CHART_H - 8.0).to_string()} class="svg-small">{ ctx.t("lesson.thermal.axes") }</text>
                    { for chart.median_y.map(|y| html! {
                        <line x1={CHART_LEFT.to_string()} y1={y.to_string()} x2={(w - 8.0).to_string()} y2={y.to_string()} class="median" />
                    }) }
                    { for chart.threshold_y.map(|y| html! {
                        <line x1={CHART_LEFT.to_string()} y1={y.to_string()} x2={(w - 8.0).to_string()} y2={y.to_string()} class="threshold" />
                    }) }
                    <polyline points={line} class="series" />
                    { for chart.points.iter().enumerate().map(|(i, (x, y))| html! {
                        <circle cx={x.to_string()} cy={y.to_string()} r="3"
                            class={classes!("point", low.contains(&i).then_some("low"))}
                            data-t={run.points[i].t_s.to_string()} data-gflops={run.points[i].gflops.to_string()} />
                    }) }
                </svg>
                <figcaption>{ ctx.t("lesson.thermal.chart_caption") }</figcaption>
            </figure>
            { for analysis.as_ref().map(|a| html! {
                <p class="note" data-early={a.early_median.to_string()}>
                    { ctx.tf("lesson.thermal.early", &[("g", &numbers::rate(a.early_median)), ("low", &a.low.len().to_string())]) }
                </p>
            }) }
            { for verdict.map(|v| verdict_view(ctx, v)) }
            if matches!(run.state, State::Stopped) {
                <p class="note" data-stopped="true">{ ctx.t(if run.points.is_empty() { "lesson.thermal.stopped_none" } else { "lesson.thermal.stopped" }) }</p>
            }
            { failed.unwrap_or_default() }
            if software {
                <p class="note">{ ctx.t("lesson.common.software_note") }</p>
            }
        </>
    }
}
