//! Lesson `systolic` — a systolic array's multiply-accumulate, cycle by cycle, next to the
//! same work done by SIMT threads (model and counts: `lessons::systolic`), and what Tensor
//! Cores and TPUs take from it.

use gloo::timers::callback::Interval;
use lessons::systolic::{self, Problem, MAX_K, MAX_N, MIN_K, MIN_N};
use yew::prelude::*;

use super::kit as common;
use crate::components::chart_width::use_chart_width;
use crate::components::Ctx;

/// Milliseconds per cycle while playing.
const PLAY_MS: u32 = 700;
/// Upcoming values drawn at each edge of the array.
const QUEUE: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Clock {
    cycle: u32,
    end: u32,
    playing: bool,
}

enum Act {
    Step(i32),
    Tick,
    Play(bool),
    Reset(u32),
    End,
}

impl Reducible for Clock {
    type Action = Act;
    fn reduce(self: std::rc::Rc<Self>, a: Act) -> std::rc::Rc<Self> {
        let mut c = *self;
        match a {
            Act::Step(d) => {
                c.cycle = (c.cycle as i64 + d as i64).clamp(0, c.end as i64) as u32;
                c.playing = false;
            }
            Act::Tick => {
                if c.cycle >= c.end {
                    c.playing = false;
                } else {
                    c.cycle += 1;
                }
            }
            Act::Play(on) => {
                if on && c.cycle >= c.end {
                    c.cycle = 0;
                }
                c.playing = on;
            }
            Act::Reset(end) => {
                c = Clock {
                    cycle: 0,
                    end,
                    playing: false,
                }
            }
            Act::End => {
                c.cycle = c.end;
                c.playing = false;
            }
        }
        c.into()
    }
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let n_text = use_state(|| "4".to_string());
    let k_text = use_state(|| "4".to_string());
    let clock = use_reducer(|| Clock {
        cycle: 0,
        end: 10,
        playing: false,
    });
    let n = common::parse_in(&n_text, MIN_N, MAX_N);
    let k = common::parse_in(&k_text, MIN_K, MAX_K);
    let problem = match (&n, &k) {
        (Ok(n), Ok(k)) => Some(Problem::seeded(*n, *k, 1)),
        _ => None,
    };
    let end = problem.as_ref().map_or(0, |p| p.systolic_cycles());
    {
        let clock = clock.dispatcher();
        use_effect_with(end, move |&end| clock.dispatch(Act::Reset(end)));
    }
    {
        let d = clock.dispatcher();
        use_effect_with(clock.playing, move |&on| {
            let tick = on.then(|| Interval::new(PLAY_MS, move || d.dispatch(Act::Tick)));
            move || drop(tick)
        });
    }
    let (array_ref, simt_ref) = (use_node_ref(), use_node_ref());
    let fits = [
        (array_ref.clone(), use_chart_width(array_ref)),
        (simt_ref.clone(), use_chart_width(simt_ref)),
    ];
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let n_error = n
        .as_ref()
        .err()
        .map(|e| common::parse_message(&ctx, e, MIN_N, MAX_N));
    let k_error = k
        .as_ref()
        .err()
        .map(|e| common::parse_message(&ctx, e, MIN_K, MAX_K));
    let widget = match &problem {
        Some(p) => animation(&ctx, p, &clock, &fits),
        None => html! {
            <p class="message error" role="alert" data-invalid="true">{ ctx.t("lesson.systolic.invalid") }</p>
        },
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.systolic.p1", "lesson.systolic.p2"]) }
            <section class="panel widget" data-widget="systolic">
                <h2>{ ctx.t("lesson.systolic.widget") }</h2>
                <p>{ ctx.t("lesson.systolic.widget_intro") }</p>
                <div class="field-row">
                    { common::number_field(&ctx, "systolic-n", "lesson.systolic.n", &n_text, n_error, common::text_setter(&n_text)) }
                    { common::number_field(&ctx, "systolic-k", "lesson.systolic.k", &k_text, k_error, common::text_setter(&k_text)) }
                </div>
                { widget }
            </section>
            { common::h2(&ctx, "lesson.systolic.h_why") }
            { common::paras(&ctx, &["lesson.systolic.p3", "lesson.systolic.p4"]) }
            { common::h2(&ctx, "lesson.systolic.h_hw") }
            { common::list(&ctx, &["lesson.systolic.tc", "lesson.systolic.tpu", "lesson.systolic.mxu"]) }
            { common::correction(&ctx, "lesson.systolic.fc_tc") }
            { common::correction(&ctx, "lesson.systolic.fc_tpu") }
            { common::try_it(&ctx, "lesson.systolic.try", Some(("learn/precision", "lesson.systolic.try_link"))) }
        </>
    }
}

fn join(v: &[i32]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn animation(ctx: &Ctx, p: &Problem, clock: &UseReducerHandle<Clock>, fits: &[Fit; 2]) -> Html {
    let t = clock.cycle.min(p.systolic_cycles());
    let sys = systolic::simulate(p, t);
    let simt = systolic::simt(p, t.min(p.simt_cycles()));
    let total = p.systolic_cycles();
    let peak = (1..=total)
        .map(|c| systolic::macs_in_cycle(p.n, p.k, c))
        .max()
        .unwrap_or(0);
    let done = t == total;
    let c_now: Vec<i32> = sys.pes.iter().map(|pe| pe.acc).collect();
    let correct = done && c_now == p.product();
    let d = clock.dispatcher();
    let step = |delta: i32| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Act::Step(delta)))
    };
    let play = {
        let d = d.clone();
        let on = !clock.playing;
        Callback::from(move |_: MouseEvent| d.dispatch(Act::Play(on)))
    };
    let reset = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Act::Reset(total)))
    };
    let to_end = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Act::End))
    };
    let avg = |cycles: u32| p.macs() as f64 / cycles.max(1) as f64;
    html! {
        <div class="systolic" data-n={p.n.to_string()} data-k={p.k.to_string()}
            data-a={join(&p.a)} data-b={join(&p.b)} data-c={join(&c_now)}
            data-cycle={t.to_string()} data-total={total.to_string()}>
            <div class="controls" role="group" aria-label={ctx.t("lesson.systolic.controls")}>
                <button type="button" class="button" data-act="back" onclick={step(-1)} disabled={t == 0}>{ ctx.t("lesson.systolic.back") }</button>
                <button type="button" class="button primary" data-act="step" onclick={step(1)} disabled={done}>{ ctx.t("lesson.systolic.step") }</button>
                <button type="button" class="button" data-act="play" onclick={play}>
                    { ctx.t(if clock.playing { "lesson.systolic.pause" } else { "lesson.systolic.play" }) }
                </button>
                <button type="button" class="button" data-act="end" onclick={to_end} disabled={done}>{ ctx.t("lesson.systolic.end") }</button>
                <button type="button" class="button" data-act="reset" onclick={reset} disabled={t == 0}>{ ctx.t("lesson.systolic.reset") }</button>
            </div>
            <p class="status" aria-live="polite">{ ctx.tf("lesson.systolic.cycle", &[("t", &t.to_string()), ("total", &total.to_string())]) }</p>
            <div class="systolic-views">
                <figure class="diagram">
                    { array_svg(ctx, p, &sys, t, &fits[0]) }
                    <figcaption>{ ctx.t("lesson.systolic.array_caption") }</figcaption>
                </figure>
                <figure class="diagram">
                    { simt_svg(ctx, p, &simt, t, &fits[1]) }
                    <figcaption>{ ctx.t("lesson.systolic.simt_caption") }</figcaption>
                </figure>
            </div>
            <div class="table-scroll"><table class="facts systolic-stats">
                <thead><tr>
                    <th scope="col"></th>
                    <th scope="col">{ ctx.t("lesson.systolic.col.now") }</th>
                    <th scope="col">{ ctx.t("lesson.systolic.col.done") }</th>
                    <th scope="col">{ ctx.t("lesson.systolic.col.cycles") }</th>
                    <th scope="col">{ ctx.t("lesson.systolic.col.peak") }</th>
                    <th scope="col">{ ctx.t("lesson.systolic.col.avg") }</th>
                    <th scope="col">{ ctx.t("lesson.systolic.col.reads") }</th>
                </tr></thead>
                <tbody>
                    <tr data-row="systolic" data-now={sys.macs_now.to_string()} data-done={sys.macs_total.to_string()}
                        data-cycles={total.to_string()} data-peak={peak.to_string()} data-reads={sys.reads_total.to_string()}
                        data-reads-total={p.systolic_reads().to_string()}>
                        <th scope="row">{ ctx.t("lesson.systolic.row.array") }</th>
                        <td>{ sys.macs_now }</td>
                        <td>{ numbers::count(sys.macs_total) }</td>
                        <td>{ total }</td>
                        <td>{ peak }</td>
                        <td>{ numbers::rate(avg(total)) }</td>
                        <td>{ format!("{} / {}", numbers::count(sys.reads_total), numbers::count(p.systolic_reads())) }</td>
                    </tr>
                    <tr data-row="simt" data-now={simt.macs_now.to_string()} data-done={simt.macs_total.to_string()}
                        data-cycles={p.simt_cycles().to_string()} data-peak={(p.n * p.n).to_string()} data-reads={simt.reads_total.to_string()}
                        data-reads-total={p.simt_reads().to_string()}>
                        <th scope="row">{ ctx.t("lesson.systolic.row.simt") }</th>
                        <td>{ simt.macs_now }</td>
                        <td>{ numbers::count(simt.macs_total) }</td>
                        <td>{ p.simt_cycles() }</td>
                        <td>{ p.n * p.n }</td>
                        <td>{ numbers::rate(avg(p.simt_cycles())) }</td>
                        <td>{ format!("{} / {}", numbers::count(simt.reads_total), numbers::count(p.simt_reads())) }</td>
                    </tr>
                </tbody>
            </table></div>
            <p class="note">{ ctx.tf("lesson.systolic.formula", &[
                ("n", &p.n.to_string()), ("k", &p.k.to_string()), ("cycles", &total.to_string()),
                ("macs", &p.macs().to_string()), ("reads", &p.systolic_reads().to_string()),
                ("simt_reads", &p.simt_reads().to_string()), ("factor", &p.n.to_string()),
            ]) }</p>
            if done {
                <p class={classes!("verdict", if correct { "ok" } else { "bad" })} data-ok={correct.to_string()}>
                    { ctx.t(if correct { "lesson.systolic.correct" } else { "lesson.systolic.wrong" }) }
                </p>
            }
        </div>
    }
}

/// Geometry shared by both drawings: cell side and the room for the edge queues.
const CELL: f64 = 46.0;
const GAP: f64 = 6.0;

/// An SVG's ref and its rendered width.
type Fit = (NodeRef, Option<f64>);

/// Font sizes in viewBox units. The 8×8 array's viewBox is wider than a phone's column, so the
/// sizes grow by the scale-down and the text still renders at 11, 13 and 15 px.
struct Sizes {
    small: String,
    queue: String,
    acc: String,
}

impl Sizes {
    fn at(view_w: f64, css_w: Option<f64>) -> Self {
        let k = page_models::chart::text_scale(view_w, css_w);
        // Rounded up: rounding down would render a hair under the size asked for.
        let px = |size: f64| format!("{:.2}", (size * k * 100.0).ceil() / 100.0);
        Sizes {
            small: px(11.0),
            queue: px(13.0),
            acc: px(15.0),
        }
    }
}

fn cell_xy(origin: (f64, f64), i: usize, j: usize) -> (f64, f64) {
    (
        origin.0 + j as f64 * (CELL + GAP),
        origin.1 + i as f64 * (CELL + GAP),
    )
}

fn array_svg(ctx: &Ctx, p: &Problem, s: &systolic::ArrayState, t: u32, fit: &Fit) -> Html {
    let margin = QUEUE as f64 * 26.0 + 10.0;
    let origin = (margin, margin);
    let side = p.n as f64 * (CELL + GAP);
    let w = margin + side + 4.0;
    let z = Sizes::at(w, fit.1);
    let t = t as usize;
    // Values waiting at the left edge: a[i][k] enters PE (i, 0) in cycle i + k + 1.
    let left = (0..p.n).flat_map(|i| {
        (0..p.k).filter_map(move |k| {
            let enters = i + k + 1;
            (enters > t && enters - t <= QUEUE).then_some((i, k, enters - t))
        })
    });
    let top = (0..p.n).flat_map(|j| {
        (0..p.k).filter_map(move |k| {
            let enters = j + k + 1;
            (enters > t && enters - t <= QUEUE).then_some((j, k, enters - t))
        })
    });
    html! {
        <svg ref={fit.0.clone()} class="systolic-svg" viewBox={format!("0 0 {w} {w}")} role="img" aria-label={ctx.t("lesson.systolic.array_alt")}>
            // Both in the empty top-left corner: side by side they run together in zh, and above
            // the columns they collide with B's queue.
            <text x="4" y="14" class="small" font-size={z.small.clone()}>{ ctx.t("lesson.systolic.b_in") }</text>
            <text x="4" y={(margin - 8.0).to_string()} class="small" font-size={z.small.clone()}>{ ctx.t("lesson.systolic.a_in") }</text>
            { for left.map(|(i, k, wait)| {
                let (_, y) = cell_xy(origin, i, 0);
                let x = margin - wait as f64 * 26.0;
                html! { <text x={x.to_string()} y={(y + CELL / 2.0 + 5.0).to_string()} class="queue a" font-size={z.queue.clone()}>{ p.a_at(i, k) }</text> }
            }) }
            { for top.map(|(j, k, wait)| {
                let (x, _) = cell_xy(origin, 0, j);
                let y = margin - wait as f64 * 26.0 + 12.0;
                html! { <text x={(x + CELL / 2.0 - 6.0).to_string()} y={y.to_string()} class="queue b" font-size={z.queue.clone()}>{ p.b_at(k, j) }</text> }
            }) }
            { for s.pes.iter().enumerate().map(|(e, pe)| {
                let (i, j) = (e / p.n, e % p.n);
                let (x, y) = cell_xy(origin, i, j);
                let active = pe.k.is_some();
                html! {
                    <g class={classes!("pe", active.then_some("active"))} data-i={i.to_string()} data-j={j.to_string()}>
                        <rect x={x.to_string()} y={y.to_string()} width={CELL.to_string()} height={CELL.to_string()} rx="4" />
                        <text x={(x + CELL / 2.0).to_string()} y={(y + 20.0).to_string()} text-anchor="middle" class="acc" font-size={z.acc.clone()}>{ pe.acc }</text>
                        if let (Some((a, _)), Some((b, _))) = (pe.a, pe.b) {
                            <text x={(x + CELL / 2.0).to_string()} y={(y + 38.0).to_string()} text-anchor="middle" class="small" font-size={z.small.clone()}>{ format!("{a}·{b}") }</text>
                        }
                    </g>
                }
            }) }
        </svg>
    }
}

fn simt_svg(ctx: &Ctx, p: &Problem, s: &systolic::SimtState, t: u32, fit: &Fit) -> Html {
    let margin = 24.0;
    let side = p.n as f64 * (CELL + GAP);
    let w = margin + side + 4.0;
    let z = Sizes::at(w, fit.1);
    let k_now = (t as usize).checked_sub(1).filter(|&k| k < p.k);
    html! {
        <svg ref={fit.0.clone()} class="systolic-svg" viewBox={format!("0 0 {w} {w}")} role="img" aria-label={ctx.t("lesson.systolic.simt_alt")}>
            <text x="4" y="14" class="small" font-size={z.small.clone()}>{ ctx.t("lesson.systolic.threads") }</text>
            { for s.acc.iter().enumerate().map(|(e, acc)| {
                let (i, j) = (e / p.n, e % p.n);
                let (x, y) = cell_xy((margin, margin), i, j);
                html! {
                    <g class={classes!("simt-cell", k_now.is_some().then_some("active"))}>
                        <rect x={x.to_string()} y={y.to_string()} width={CELL.to_string()} height={CELL.to_string()} rx="4" />
                        <text x={(x + CELL / 2.0).to_string()} y={(y + 20.0).to_string()} text-anchor="middle" class="acc" font-size={z.acc.clone()}>{ acc }</text>
                        { for k_now.map(|k| html! {
                            <text x={(x + CELL / 2.0).to_string()} y={(y + 38.0).to_string()} text-anchor="middle" class="small" font-size={z.small.clone()}>{ format!("{}·{}", p.a_at(i, k), p.b_at(k, j)) }</text>
                        }) }
                    </g>
                }
            }) }
        </svg>
    }
}
