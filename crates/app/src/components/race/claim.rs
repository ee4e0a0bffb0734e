//! "Check the article's claim" (fact-check FC-45): a 4096×4096 matmul supposedly takes a GPU
//! 1/100 of a CPU's time. Measured here on the visitor's machine (or estimated from a smaller
//! N, clearly labelled), shown next to the claim, with why the two differ. A row being measured
//! shows its percentage and time left (`page_models::progress`); on a software adapter the
//! default N is smaller, and the page says why (`params::default_claim_at`).

use std::cell::RefCell;
use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::CpuVariant;

use super::{duration, measure_one, progress_text, write_params, Contender, MeasureError, Setup};
use crate::components::run_lifecycle::{use_run, RunHandle};
use crate::components::Ctx;
use crate::race_workers::pool;
use crate::race_workers::worker_api::now_ms;
use page_models::progress::ProgressClock;
use page_models::race::params::{
    claim_at_lowered, extrapolate_cubic, CLAIMED_SPEEDUP, CLAIM_N, CLAIM_SIZES, DEFAULT_CLAIM_AT,
    SEED,
};

#[derive(Properties, PartialEq)]
pub struct ClaimProps {
    pub setup: Rc<Setup>,
}

#[derive(Clone, Debug, PartialEq)]
enum Row {
    Pending,
    /// Its clock starts when the measured part does (the GPU's after its pipeline compiles).
    Running(ProgressClock),
    Done {
        ms: f64,
        verified: bool,
    },
    Failed(String),
}

/// What the check shows; whether it runs, and which run counts, is its [`RunHandle`]'s.
#[derive(Default)]
struct Model {
    at: u32,
    contenders: Vec<Contender>,
    rows: Vec<Row>,
    finished: u32,
}

#[function_component]
pub fn Claim(props: &ClaimProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let model = use_mut_ref(Model::default);
    let redraw = use_force_update();
    // Cancel, or leaving the page mid-check, stops the workers at once.
    let runs = use_run::<()>(pool::terminate);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let s = props.setup.clone();
    let at = s.params.at;
    let running = runs.is_running();
    let on_at = {
        let (ctx, navigator, p) = (ctx.clone(), navigator.clone(), s.params.clone());
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(a) = sel.value().parse::<u32>() {
                let mut p = p.clone();
                p.at = a;
                write_params(&ctx, &navigator, &p);
            }
        })
    };
    let start = {
        let (model, redraw, s, runs) = (model.clone(), redraw.clone(), s.clone(), runs.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            start_claim(model.clone(), redraw.clone(), &runs, s.clone());
        })
    };
    let cancel = {
        let (model, redraw, runs) = (model.clone(), redraw.clone(), runs.clone());
        Callback::from(move |_| {
            runs.cancel();
            // A stopped row's last percentage and estimate would read as still running.
            for r in model.borrow_mut().rows.iter_mut() {
                if matches!(r, Row::Running(_)) {
                    *r = Row::Pending;
                }
            }
            redraw.force_update();
        })
    };
    let options = CLAIM_SIZES.iter().map(|&n| {
        let label = if n == CLAIM_N {
            ctx.tf("race.claim.at_full", &[("n", &n.to_string())])
        } else {
            ctx.tf("race.claim.at_estimate", &[("n", &n.to_string())])
        };
        html! { <option value={n.to_string()} selected={n == at}>{ label }</option> }
    });

    let m = model.borrow();
    html! {
        <section class="panel claim" aria-labelledby="claim-heading">
            <h2 id="claim-heading">{ ctx.t("race.claim.heading") }</h2>
            <blockquote class="claim-quote">
                <p>{ ctx.t("race.claim.quote") }</p>
                <footer>{ ctx.linked("race.claim.source") }</footer>
            </blockquote>
            <p>{ ctx.t("race.claim.intro") }</p>
            if claim_at_lowered(s.software, at) {
                <p class="note" data-claim-default="software">
                    { ctx.tf("race.claim.software_default", &[("n", &at.to_string()), ("larger", &DEFAULT_CLAIM_AT.to_string()), ("factor", &format!("{:.0}", extrapolate_cubic(1.0, at, DEFAULT_CLAIM_AT)))]) }
                </p>
            }
            <form class="race-controls" onsubmit={start} novalidate=true>
                <div class="field">
                    <label for="claim-at">{ ctx.t("race.claim.at") }</label>
                    <select id="claim-at" onchange={on_at} disabled={running}>{ for options }</select>
                </div>
                <div class="buttons">
                    <button type="submit" class="button primary" id="claim-start" disabled={running}>
                        { ctx.t("race.claim.start") }
                    </button>
                    <button type="button" class="button" id="claim-cancel" disabled={!running} onclick={cancel}>
                        { ctx.t("race.cancel") }
                    </button>
                </div>
            </form>
            if at < CLAIM_N {
                <p class="note extrapolation-note">
                    { ctx.tf("race.claim.extrapolation_note", &[("n", &at.to_string()), ("factor", &format!("{:.0}", extrapolate_cubic(1.0, at, CLAIM_N)))]) }
                </p>
            } else {
                <p class="note">{ ctx.t("race.claim.full_note") }</p>
            }
            if runs.was_cancelled() {
                <p class="message" role="status" data-notice="cancelled">{ ctx.t("race.claim.cancelled") }</p>
            }
            if !m.rows.is_empty() {
                { table(&ctx, &m, !running && m.finished > 0 && !runs.was_cancelled()) }
            }
        </section>
    }
}

fn start_claim(
    model: Rc<RefCell<Model>>,
    redraw: UseForceUpdateHandle,
    runs: &RunHandle<()>,
    s: Rc<Setup>,
) {
    let who = s.contenders(&[CpuVariant::Simd]);
    let at = s.params.at;
    let run = runs.start(());
    {
        let mut m = model.borrow_mut();
        let finished = m.finished;
        *m = Model {
            at,
            rows: vec![Row::Pending; who.len()],
            contenders: who.clone(),
            finished,
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
        let size = MatmulSize::new(at, at, at);
        let (a, b) = size.inputs(SEED);
        for (i, &c) in who.iter().enumerate() {
            if !current() {
                return;
            }
            model.borrow_mut().rows[i] = Row::Running(ProgressClock::default());
            redraw.force_update();
            gloo::timers::future::TimeoutFuture::new(0).await;
            let progress: Rc<dyn Fn(f64)> = {
                let (model, redraw, run) = (model.clone(), redraw.clone(), run.clone());
                Rc::new(move |f| {
                    if !run.is_current() {
                        return;
                    }
                    if let Some(Row::Running(clock)) = model.borrow_mut().rows.get_mut(i) {
                        clock.report(now_ms(), f);
                    }
                    redraw.force_update();
                })
            };
            let r = measure_one(c, size, &a, &b, software, &cancel, progress).await;
            if !current() {
                return;
            }
            model.borrow_mut().rows[i] = match r {
                Ok((ms, verified)) => Row::Done { ms, verified },
                Err(MeasureError::Cancelled) => return,
                Err(MeasureError::Lost(e)) | Err(MeasureError::Failed(e)) => Row::Failed(e),
            };
            redraw.force_update();
        }
        // Current here: nothing was awaited since the last row's check.
        run.finish();
        let mut m = model.borrow_mut();
        m.finished += 1;
        page_models::embed::report(Ok(claim_report(&m)));
        drop(m);
        redraw.force_update();
    });
}

/// `run-finished` of a claim check (docs/embedding.md): each contender's time at `at`, its
/// N³ estimate at the claim's size, and the GPU's speed-up over each verified CPU time.
fn claim_report(m: &Model) -> page_models::embed::Report {
    use page_models::embed::Field;
    let gpu_ms = m
        .contenders
        .iter()
        .zip(&m.rows)
        .find(|(c, _)| c.is_gpu())
        .and_then(|(_, r)| match r {
            Row::Done { ms, verified: true } => Some(*ms),
            _ => None,
        });
    let mut rows = Vec::new();
    let mut all_verified = !m.rows.is_empty();
    for (c, r) in m.contenders.iter().zip(&m.rows) {
        let mut row = vec![("contender", Field::Str(c.key()))];
        match r {
            Row::Done { ms, verified } => {
                all_verified &= *verified;
                row.push(("ms", Field::Num(*ms)));
                row.push((
                    "msAtClaim",
                    Field::Num(extrapolate_cubic(*ms, m.at, CLAIM_N)),
                ));
                row.push(("verified", Field::Bool(*verified)));
                if let (false, true, Some(g)) = (c.is_gpu(), *verified, gpu_ms) {
                    row.push(("gpuSpeedup", Field::Num(ms / g)));
                }
            }
            Row::Failed(e) => {
                all_verified = false;
                row.push(("error", Field::Str(e.clone())));
            }
            Row::Pending | Row::Running(_) => all_verified = false,
        }
        rows.push(row);
    }
    vec![
        ("at", Field::Num(m.at as f64)),
        ("claimN", Field::Num(CLAIM_N as f64)),
        ("claimedSpeedup", Field::Num(CLAIMED_SPEEDUP)),
        ("rows", Field::List(rows)),
        ("verified", Field::Bool(all_verified)),
    ]
}

/// A row being measured: how far it is and about how long it has left, from its chunks so far.
fn running_row(ctx: &Ctx, c: &Contender, clock: &ProgressClock, estimate: bool) -> Html {
    let pct = clock.pct().to_string();
    html! {
        <tr data-contender={c.key()} data-state="running" data-progress={pct.clone()}
            data-left={clock.left().id()}>
            <th scope="row">{ c.label(ctx) }</th>
            <td class="claim-progress">
                <progress max="100" value={pct} aria-label={ctx.t("race.progress")}></progress>
                <span class="progress-text">{ progress_text(ctx, clock) }</span>
            </td>
            <td class={classes!(estimate.then_some("estimate"))}></td>
            <td class="ratio"></td>
        </tr>
    }
}

/// The table and verdict; `done` when the check ended by itself (the verdict is then shown).
fn table(ctx: &Ctx, m: &Model, done: bool) -> Html {
    let estimate = m.at < CLAIM_N;
    let at_4096 = |ms: f64| extrapolate_cubic(ms, m.at, CLAIM_N);
    let gpu_ms = m
        .contenders
        .iter()
        .zip(&m.rows)
        .find(|(c, _)| c.is_gpu())
        .and_then(|(_, r)| match r {
            Row::Done { ms, verified: true } => Some(*ms),
            _ => None,
        });
    let rows = m.contenders.iter().zip(&m.rows).map(|(c, r)| {
        if let Row::Running(clock) = r {
            return running_row(ctx, c, clock, estimate);
        }
        let (measured, scaled, ratio) = match r {
            Row::Pending | Row::Running(_) => (String::new(), String::new(), String::new()),
            Row::Failed(e) => (
                ctx.tf("race.claim.failed", &[("error", e)]),
                String::new(),
                String::new(),
            ),
            Row::Done { ms, verified } => {
                let scaled = if estimate {
                    ctx.tf("race.claim.estimated", &[("time", &duration(at_4096(*ms)))])
                } else {
                    duration(*ms)
                };
                let ratio = match (c.is_gpu(), gpu_ms) {
                    (false, Some(g)) if *ms >= g => {
                        ctx.tf("race.claim.ratio", &[("x", &numbers::number(ms / g))])
                    }
                    (false, Some(g)) => ctx.tf(
                        "race.claim.ratio_slower",
                        &[("x", &numbers::number(g / ms))],
                    ),
                    _ => String::new(),
                };
                let measured = if *verified {
                    duration(*ms)
                } else {
                    ctx.tf("race.sweep.wrong", &[("ms", &duration(*ms))])
                };
                (measured, scaled, ratio)
            }
        };
        let state = match r {
            Row::Pending => "pending",
            Row::Failed(_) => "failed",
            _ => "done",
        };
        html! {
            <tr data-contender={c.key()} data-state={state}>
                <th scope="row">{ c.label(ctx) }</th>
                <td>{ measured }</td>
                <td class={classes!(estimate.then_some("estimate"))}>{ scaled }</td>
                <td class="ratio">{ ratio }</td>
            </tr>
        }
    });
    // GPU speed-ups over each CPU contender, measured at the same N (the ratio does not
    // change when both times are scaled by the same factor).
    let speedups: Vec<(String, f64)> = m
        .contenders
        .iter()
        .zip(&m.rows)
        .filter(|(c, _)| !c.is_gpu())
        .filter_map(|(c, r)| match (r, gpu_ms) {
            (Row::Done { ms, verified: true }, Some(g)) => Some((c.label(ctx), ms / g)),
            _ => None,
        })
        .collect();
    let verdict = done.then(|| {
        if speedups.is_empty() {
            return html! { <p class="message">{ ctx.t("race.claim.no_gpu") }</p> };
        }
        let claim = format!("{CLAIMED_SPEEDUP:.0}");
        let items = speedups.iter().map(|(who, x)| {
            let text = if *x >= 1.0 {
                ctx.tf(
                    "race.claim.here",
                    &[("who", who), ("x", &numbers::number(*x)), ("claim", &claim)],
                )
            } else {
                ctx.tf(
                    "race.claim.here_slower",
                    &[
                        ("who", who),
                        ("x", &numbers::number(1.0 / x)),
                        ("claim", &claim),
                    ],
                )
            };
            html! { <li>{ text }</li> }
        });
        html! { <ul class="claim-verdict" data-claim-done="true">{ for items }</ul> }
    });
    html! {
        <>
            { crate::components::scroll_table(ctx, ctx.t("race.claim.heading"), html! {
                <table class="claim-table" data-runs={m.finished.to_string()}>
                    <thead>
                        <tr>
                            <th scope="col">{ ctx.t("race.claim.col.who") }</th>
                            <th scope="col">{ ctx.tf("race.claim.col.measured", &[("n", &m.at.to_string())]) }</th>
                            <th scope="col">{ ctx.tf("race.claim.col.at", &[("n", &CLAIM_N.to_string())]) }</th>
                            <th scope="col">{ ctx.t("race.claim.col.ratio") }</th>
                        </tr>
                    </thead>
                    <tbody>{ for rows }</tbody>
                </table>
            }) }
            { for verdict }
            if done {
                <h3>{ ctx.t("race.claim.why_heading") }</h3>
                <ul class="claim-why">
                    <li>{ ctx.t("race.claim.why.hardware") }</li>
                    <li>{ ctx.t("race.claim.why.precision") }</li>
                    <li>{ ctx.t("race.claim.why.counted") }</li>
                    <li>{ ctx.t("race.claim.why.cpu") }</li>
                </ul>
            }
        </>
    }
}
