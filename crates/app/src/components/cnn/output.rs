//! What the CNN page shows of a run: its notices (bad settings, the digits, the device's
//! limits, the GPU's state, the last restart), both sides' rates and their ratio as the
//! seed article's claim (named, with its fact-check), and the loss and accuracy curves of both sides.

use std::rc::Rc;

use yew::prelude::*;

use cnn::SpecError;
use page_models::cnn::board::{caveats, extent, CnnPage, Lead, Point, Score, Verdict};
use page_models::cnn::settings::LimitError;
use page_models::diagram::drawn_width;
use page_models::train::picture::{nice_ceiling, Frame};
use page_models::train::run::{GpuState, RateView};

use super::{error_text, limit_text, Data};
use crate::components::chart_width::use_chart_width;
use crate::components::Ctx;

/// The notices above the controls.
pub fn notices(
    ctx: &Ctx,
    errors: &[SpecError],
    data: &Data,
    limit: Option<&LimitError>,
    page: &CnnPage,
) -> Html {
    let bad = (!errors.is_empty()).then(|| html! {
        <div id="cnn-errors" class="train-errors" role="alert">
            <p><strong>{ ctx.t("cnn.err.title") }</strong></p>
            <ul>{ for errors.iter().map(|e| html! { <li>{ error_text(ctx, e.key(), &e.args()) }</li> }) }</ul>
            <p>{ ctx.t("cnn.err.defaults") }</p>
        </div>
    });
    let data_note = match data {
        Data::Loading => {
            html! { <p id="cnn-data" class="train-note" role="status">{ ctx.t("cnn.data.loading") }</p> }
        }
        Data::Ready(d) => html! {
            <p id="cnn-data" class="hint" data-images={d.len().to_string()}>
                { ctx.tf("cnn.data.ready", &[("n", &numbers::count(d.len() as u64))]) }
            </p>
        },
        Data::Failed(e) => html! {
            <p id="cnn-data" class="train-note error" role="alert" data-error={e.key()}>
                { error_text(ctx, e.key(), &e.args()) }
            </p>
        },
    };
    let gpu = match (&page.gpu_state, limit) {
        (_, Some(l)) => html! {
            <p id="cnn-gpu" class="train-note error" role="alert" data-state="limit">{ limit_text(ctx, l) }</p>
        },
        (GpuState::Unavailable, _) => html! {
            <p id="cnn-gpu" class="train-note" data-state="none">{ ctx.t("cnn.gpu.unavailable") }</p>
        },
        (GpuState::Starting, _) if matches!(data, Data::Failed(_)) => html! {},
        (GpuState::Starting, _) => html! {
            <p id="cnn-gpu" class="train-note" data-state="starting">{ ctx.t("cnn.gpu.starting") }</p>
        },
        (GpuState::Ready, _) => html! {},
        (GpuState::Lost(e), _) => html! {
            <p id="cnn-gpu" class="train-note error" role="alert" data-state="lost">{ ctx.tf("cnn.gpu.lost", &[("detail", e)]) }</p>
        },
        (GpuState::Failed(e), _) => html! {
            <p id="cnn-gpu" class="train-note error" role="alert" data-state="failed">{ ctx.tf("cnn.gpu.failed", &[("detail", e)]) }</p>
        },
    };
    let restart = page.restarted.as_ref().map(|r| {
        let what = r
            .settings
            .iter()
            .map(|k| ctx.t(k).to_string())
            .collect::<Vec<_>>()
            .join(ctx.t("cnn.list_sep"));
        let reached = match r.gpu_step {
            Some(g) => ctx.tf(
                "cnn.restarted.reached",
                &[
                    ("gpu", &numbers::count(g)),
                    ("cpu", &numbers::count(r.cpu_step)),
                ],
            ),
            None => ctx.tf(
                "cnn.restarted.reached_cpu",
                &[("cpu", &numbers::count(r.cpu_step))],
            ),
        };
        html! {
            <p id="cnn-restarted" class="train-note" role="status">
                { ctx.tf("cnn.restarted", &[("what", &what)]) }{ " " }{ reached }
            </p>
        }
    });
    let diverged = page.curves.diverged().then(|| {
        html! {
            <p id="cnn-diverged" class="train-note error" role="alert">
                { ctx.tf("cnn.diverged", &[("lr", &page.spec.lr.to_string())]) }
            </p>
        }
    });
    let collapse = page.curves.collapsed().filter(|_| !page.curves.diverged());
    let collapsed = collapse.map(|c| {
        let (pct, loss) = (
            |s: Score| numbers::percent(f64::from(s.accuracy)),
            |s: Score| numbers::number(f64::from(s.loss)),
        );
        html! {
            <p id="cnn-collapsed" class="train-note error" role="alert" data-side={c.side.code()}
                data-by={if c.by_loss { "loss" } else { "accuracy" }}>
                { ctx.tf(if c.by_loss { "cnn.blown_up" } else { "cnn.collapsed" }, &[
                    ("lr", &page.spec.lr.to_string()),
                    ("best", &pct(c.best.1)),
                    ("from", &numbers::count(c.best.0)),
                    ("now", &pct(c.now.1)),
                    ("to", &numbers::count(c.now.0)),
                    ("loss_then", &loss(c.best.1)),
                    ("loss_now", &loss(c.now.1)),
                ]) }
            </p>
        }
    });
    // A collapse says more than the stall it ends in: one note, not two.
    let stalled = page
        .stalled
        .filter(|_| !page.curves.diverged() && collapse.is_none())
        .map(|span| {
            html! {
                <p id="cnn-stalled" class="train-note error" role="alert">
                    { ctx.tf("cnn.stalled", &[("steps", &numbers::count(span)), ("lr", &page.spec.lr.to_string())]) }
                </p>
            }
        });
    let returned = page.returned.map(|(gpu, cpu)| {
        let at = match gpu {
            Some(g) => ctx.tf(
                "cnn.returned.at",
                &[("gpu", &numbers::count(g)), ("cpu", &numbers::count(cpu))],
            ),
            None => ctx.tf("cnn.returned.at_cpu", &[("cpu", &numbers::count(cpu))]),
        };
        html! {
            <p id="cnn-returned" class="train-note" role="status">
                { ctx.t("cnn.returned") }{ " " }{ at }
            </p>
        }
    });
    html! { <>{ bad }{ data_note }{ gpu }{ returned }{ restart }{ diverged }{ collapsed }{ stalled }</> }
}

#[derive(Properties, PartialEq)]
pub struct ProgressProps {
    pub page: Rc<CnnPage>,
}

fn rate_text(ctx: &Ctx, v: RateView) -> String {
    match v {
        RateView::Off => ctx.t("cnn.rate.off").to_string(),
        RateView::Paused => ctx.t("cnn.rate.paused").to_string(),
        RateView::Measuring => ctx.t("cnn.rate.measuring").to_string(),
        RateView::PerSecond(r) => ctx.tf("cnn.rate.value", &[("rate", &numbers::rate(r))]),
        RateView::Finishing(n) => ctx.tf("cnn.rate.finishing", &[("n", &numbers::count(n))]),
    }
}

/// Both sides' steps and rates, the ratio and its caveats, and the curves.
#[function_component]
pub fn Progress(p: &ProgressProps) -> Html {
    let ctx = use_context::<Ctx>();
    let loss_ref = use_node_ref();
    let loss_w = use_chart_width(loss_ref.clone());
    let acc_ref = use_node_ref();
    let acc_w = use_chart_width(acc_ref.clone());
    let Some(ctx) = ctx else { return html! {} };
    let page = &p.page;
    let steps = |n: Option<u64>| n.map_or("–".to_string(), numbers::count);
    let verdict = page.verdict();
    // The claim's text names its article and links the fact-check of it.
    let ratio = match verdict {
        Verdict::Ratio { ratio, .. } => ctx.linked_f(
            verdict.key(),
            &[
                ("ratio", &numbers::rate(ratio)),
                ("inverse", &numbers::rate(1.0 / ratio)),
            ],
        ),
        // Paused before anything was measured: nothing is being measured.
        Verdict::Measuring { .. } if !page.running() => html! { ctx.t("cnn.ratio.idle") },
        _ => html! { ctx.t(verdict.key()) },
    };
    let ratio_code = match verdict {
        Verdict::Ratio { .. } => "ratio",
        Verdict::Measuring { .. } => "measuring",
        Verdict::NoGpu => "no-gpu",
    };
    let latest = page.latest_test().map(|(side, step, s)| {
        ctx.tf(
            if side == page_models::train::run::Side::Gpu {
                "cnn.latest.gpu"
            } else {
                "cnn.latest.cpu"
            },
            &[
                ("accuracy", &numbers::percent(f64::from(s.accuracy))),
                ("step", &numbers::count(step)),
            ],
        )
    });
    html! {
        <section class="cnn-progress train-output" aria-labelledby="cnn-progress-h">
            <h2 id="cnn-progress-h">{ ctx.t("cnn.progress") }</h2>
            <table class="cnn-rates">
                <thead><tr><th></th><th>{ ctx.t("cnn.col.steps") }</th><th>{ ctx.t("cnn.col.rate") }</th></tr></thead>
                <tbody>
                    <tr id="cnn-gpu-row"><th>{ ctx.t("cnn.side.gpu") }</th>
                        <td id="cnn-gpu-steps">{ steps(page.gpu_steps()) }</td>
                        <td id="cnn-gpu-rate">{ rate_text(&ctx, page.gpu_view()) }</td></tr>
                    <tr id="cnn-cpu-row"><th>{ ctx.t("cnn.side.cpu") }</th>
                        <td id="cnn-cpu-steps">{ numbers::count(page.cpu_steps) }</td>
                        <td id="cnn-cpu-rate">{ rate_text(&ctx, page.cpu_view()) }</td></tr>
                </tbody>
            </table>
            <p id="cnn-ratio" class="cnn-claim" data-verdict={ratio_code}>{ ratio }</p>
            <ul class="cnn-caveats">
                { for caveats(&page.spec, page.software_adapter).into_iter().map(|k| html! { <li>{ ctx.t(k) }</li> }) }
            </ul>
            { latest.map(|t| html! { <p id="cnn-latest">{ t }</p> }) }
            { lead_note(&ctx, page) }
            { curve(&ctx, page, Metric::Loss, (&loss_ref, loss_w)) }
            { curve(&ctx, page, Metric::Accuracy, (&acc_ref, acc_w)) }
        </section>
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Metric {
    Loss,
    Accuracy,
}

/// How far one side's lines go past the other's, said once above both charts.
fn lead_note(ctx: &Ctx, page: &CnnPage) -> Html {
    let span = extent(&page.curves);
    let lead = span.lead();
    let Some(key) = lead.key() else {
        return html! {};
    };
    let (by, behind) = match lead {
        Lead::Ahead { by, behind_at, .. } => (by, behind_at),
        _ => (0, 0),
    };
    let text = ctx.tf(
        key,
        &[
            ("ahead", &numbers::count(span.max_step)),
            ("by", &numbers::count(by)),
            ("behind", &numbers::count(behind)),
        ],
    );
    html! { <p id="cnn-chart-lead" class="hint" data-by={by.to_string()}>{ text }</p> }
}

/// One chart: train and test of both sides on one x axis up to the further side's step; a
/// dashed line marks where the side behind stops.
fn curve(
    ctx: &Ctx,
    page: &CnnPage,
    metric: Metric,
    (svg_ref, svg_w): (&NodeRef, Option<f64>),
) -> Html {
    let w = drawn_width(svg_w, 320.0, 200.0);
    let span = extent(&page.curves);
    let (max_step, max_loss) = (span.max_step, span.max_loss);
    let top = match metric {
        Metric::Loss => nice_ceiling(f64::from(max_loss)),
        Metric::Accuracy => 1.0,
    };
    let f = Frame {
        x0: 40.0,
        y0: 8.0,
        w: w - 48.0,
        h: 120.0,
        x_min: 0.0,
        x_max: max_step as f64,
        y_min: 0.0,
        y_max: top,
    };
    let value = |s: Score| match metric {
        Metric::Loss => f64::from(s.loss),
        Metric::Accuracy => f64::from(s.accuracy),
    };
    let line = |c: &[Point], test: bool| {
        f.path(c.iter().filter_map(|p| {
            let s = if test { p.test } else { p.train }?;
            Some((p.step as f64, value(s)))
        }))
    };
    let (id, label, top_text, zero_text) = match metric {
        Metric::Loss => (
            "cnn-loss-chart",
            "cnn.chart.loss",
            if top >= 1e4 {
                numbers::sci(top)
            } else {
                format!("{top}")
            },
            "0".to_string(),
        ),
        Metric::Accuracy => (
            "cnn-acc-chart",
            "cnn.chart.accuracy",
            "100 %".to_string(),
            "0 %".to_string(),
        ),
    };
    let c = &page.curves;
    let behind = match span.lead() {
        Lead::Ahead { behind_at, .. } => Some(f.x(behind_at as f64)),
        _ => None,
    };
    // The title and the key come first, so on a phone a chart's title sits above its own
    // chart, never under the one before; the x axis is named under it.
    html! {
        <figure class="train-loss cnn-chart" id={id} data-max-step={max_step.to_string()}
            data-gpu-end={span.gpu_end.map(|s| s.to_string())} data-cpu-end={span.cpu_end.map(|s| s.to_string())}>
            <figcaption>
                <strong class="cnn-chart-title">{ ctx.t(label) }</strong>{ " " }
                <span class="key gpu-train">{ ctx.t("cnn.curve.gpu_train") }</span>
                <span class="key gpu-test">{ ctx.t("cnn.curve.gpu_test") }</span>
                <span class="key cpu-train">{ ctx.t("cnn.curve.cpu_train") }</span>
                <span class="key cpu-test">{ ctx.t("cnn.curve.cpu_test") }</span>
            </figcaption>
            <svg ref={svg_ref.clone()} viewBox={format!("0 0 {w} 150")} role="img" aria-label={ctx.t(label)}>
                <line class="axis" x1="40" y1="128" x2={(w - 8.0).to_string()} y2="128" />
                <line class="axis" x1="40" y1="8" x2="40" y2="128" />
                <text x="36" y="16" text-anchor="end">{ top_text }</text>
                <text x="36" y="128" text-anchor="end">{ zero_text }</text>
                <text class="cnn-axis-name" x={(40.0 + (w - 48.0) / 2.0).to_string()} y="144" text-anchor="middle">{ ctx.t("cnn.chart.steps") }</text>
                <text x={(w - 8.0).to_string()} y="144" text-anchor="end">{ numbers::count(max_step) }</text>
                { behind.map(|x| html! {
                    <line class="cnn-behind" x1={x.to_string()} y1="8" x2={x.to_string()} y2="128" />
                }) }
                <polyline class="gpu-train" points={line(&c.gpu, false)} />
                <polyline class="gpu-test" points={line(&c.gpu, true)} />
                <polyline class="cpu-train" points={line(&c.cpu, false)} />
                <polyline class="cpu-test" points={line(&c.cpu, true)} />
            </svg>
        </figure>
    }
}
