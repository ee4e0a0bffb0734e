//! What the train view shows of a run: the notices (bad settings, the GPU's state, the last
//! restart), the status line (`page_models::train::run::Status`), the decision boundary over
//! the points and the loss chart.

use yew::prelude::*;

use mlp::data::{label_target, EXTENT};
use mlp::spec::MAX_ADDED;
use mlp::{Spec, SpecError};
use page_models::diagram::drawn_width;
use page_models::train::picture::{
    css, heat_colour, heat_url, nice_ceiling, output_shade, plane_point, Frame, CLASS0, CLASS1,
};
use page_models::train::run::{latest, loss_extent, RateView, Status};
use page_models::train::settings::add_point;
use page_models::train::Restart;

use super::error_text;
use crate::components::Ctx;
use crate::train_driver::mlp::{GpuState, Runner, Sample, GRID};

/// The page's notices: the URL's bad settings, the GPU's state and the last restart.
#[derive(Properties, PartialEq)]
pub struct NoticesProps {
    pub errors: Vec<SpecError>,
    /// The GPU side's state (None before the first network).
    pub gpu: Option<GpuState>,
    pub restarted: Option<Restart>,
    /// Kept while the learner was away: the steps it held at.
    pub returned: Option<(Option<u64>, u64)>,
    /// The batch lowered with a smaller training set (from, to).
    pub batch_lowered: Option<(usize, usize)>,
}

#[function_component]
pub fn Notices(p: &NoticesProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let error_box = (!p.errors.is_empty()).then(|| {
        html! {
            <div class="train-errors" role="alert">
                <p><strong>{ ctx.t("train.err.title") }</strong></p>
                <ul>
                    { for p.errors.iter().map(|e| html! { <li>{ error_text(&ctx, e) }</li> }) }
                </ul>
                <p>{ ctx.t("train.err.defaults") }</p>
            </div>
        }
    });
    let gpu_note = p.gpu.as_ref().map(|g| match g {
        GpuState::Unavailable => html! { <p class="train-note">{ ctx.t("train.gpu.unavailable") }</p> },
        GpuState::Starting => html! { <p class="train-note">{ ctx.t("train.gpu.starting") }</p> },
        GpuState::Ready => html! {},
        GpuState::Lost(e) => html! {
            <p class="train-note error" role="alert">{ ctx.tf("train.gpu.lost", &[("detail", e)]) }</p>
        },
        GpuState::Failed(e) => html! {
            <p class="train-note error" role="alert">{ ctx.tf("train.gpu.failed", &[("detail", e)]) }</p>
        },
    });
    let restart_note = p.restarted.as_ref().map(|r| {
        let what = r
            .settings
            .iter()
            .map(|k| ctx.t(k).to_string())
            .reduce(|a, b| ctx.tf("train.setting.join", &[("a", &a), ("b", &b)]))
            .unwrap_or_default();
        html! {
            <p id="train-restarted" class="train-note" role="status">
                { ctx.tf("train.restarted", &[("what", &what)]) }
                { " " }
                { match r.gpu_step {
                    Some(g) => ctx.tf("train.restarted.reached", &[
                        ("gpu", &numbers::count(g)),
                        ("cpu", &numbers::count(r.cpu_step)),
                    ]),
                    None => ctx.tf("train.restarted.reached_cpu", &[("cpu", &numbers::count(r.cpu_step))]),
                } }
                { " " }
                { ctx.t("train.restarted.lr") }
            </p>
        }
    });
    let returned = p.returned.map(|(gpu, cpu)| {
        let at = match gpu {
            Some(g) => ctx.tf(
                "train.returned.at",
                &[("gpu", &numbers::count(g)), ("cpu", &numbers::count(cpu))],
            ),
            None => ctx.tf("train.returned.at_cpu", &[("cpu", &numbers::count(cpu))]),
        };
        html! {
            <p id="train-returned" class="train-note" role="status">
                { ctx.t("train.returned") }{ " " }{ at }
            </p>
        }
    });
    // A restart's notice already names the batch among what changed.
    let lowered = p.batch_lowered.filter(|_| p.restarted.is_none()).map(|(from, to)| {
        html! {
            <p id="train-batch-lowered" class="train-note" role="status">
                { ctx.tf("train.batch_lowered", &[("from", &numbers::count(from as u64)), ("to", &numbers::count(to as u64))]) }
            </p>
        }
    });
    html! { <>{ error_box }{ gpu_note }{ returned }{ restart_note }{ lowered }</> }
}

/// The status line of a runner (its props).
pub fn status_line(r: &Runner) -> Html {
    html! {
        <StatusLine status={r.status()} cpu_steps={r.board.cpu.step}
            gpu_loss={r.board.gpu_hist.last().map(|s| s.train)}
            first_gpu_loss={r.board.gpu_hist.first().map(|s| s.train)}
            cpu_loss={r.board.cpu_hist.last().map(|s| s.train)}
            gpu_eval_step={r.board.gpu_hist.last().map(|s| s.step)}
            heat_version={r.board.heat_version} />
    }
}

#[derive(Properties, PartialEq)]
pub struct StatusProps {
    pub status: Status,
    pub cpu_steps: u64,
    pub gpu_loss: Option<f32>,
    pub first_gpu_loss: Option<f32>,
    pub cpu_loss: Option<f32>,
    /// The step of the GPU evaluation shown (its picture and last loss).
    pub gpu_eval_step: Option<u64>,
    pub heat_version: u64,
}

/// Each side's rate and step count, in words and in `data-*` attributes for tests.
#[function_component]
pub fn StatusLine(p: &StatusProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let s = &p.status;
    let show = |v: RateView| match v {
        RateView::Paused => ctx.t("train.rate.paused").to_string(),
        RateView::Off => ctx.t("train.rate.off").to_string(),
        RateView::Measuring => ctx.t("train.rate.measuring").to_string(),
        RateView::PerSecond(v) => ctx.tf("train.rate.per_second", &[("rate", &numbers::rate(v))]),
        // After Pause the GPU still finishes what was sent (it cannot be taken back): say so,
        // and the count stops once they are done.
        RateView::Finishing(n) => ctx.tf("train.rate.finishing", &[("n", &numbers::count(n))]),
    };
    let num = |v: Option<f32>| v.map(|v| v.to_string()).unwrap_or_default();
    html! {
        <div id="train-status" class="train-rates" data-running={s.running.to_string()}
            data-gpu={s.gpu_state}
            data-gpu-steps={s.gpu_steps.unwrap_or(0).to_string()}
            data-gpu-submitted={s.gpu_submitted.to_string()}
            data-gpu-in-flight={s.gpu_in_flight.to_string()}
            data-gpu-queue-limit={s.gpu_queue_limit.to_string()}
            data-cpu-steps={p.cpu_steps.to_string()}
            data-gpu-loss={num(p.gpu_loss)}
            data-first-gpu-loss={num(p.first_gpu_loss)}
            data-cpu-loss={num(p.cpu_loss)}
            data-heat={p.heat_version.to_string()}
            data-gpu-eval-step={p.gpu_eval_step.map(|v| v.to_string()).unwrap_or_default()}
            data-gpu-rate={s.gpu_rate.map(|v| format!("{v:.1}")).unwrap_or_default()}
            data-cpu-rate={s.cpu_rate.map(|v| format!("{v:.1}")).unwrap_or_default()}>
            <span class="rate gpu">
                { ctx.tf("train.rate.gpu", &[
                    ("rate", &show(s.gpu_view)),
                    ("steps", &s.gpu_steps.map(numbers::count).unwrap_or_else(|| "–".into())),
                ]) }
            </span>
            <span class="rate cpu">
                { ctx.tf("train.rate.cpu", &[
                    ("rate", &show(s.cpu_view)),
                    ("steps", &numbers::count(p.cpu_steps)),
                ]) }
            </span>
        </div>
    }
}

/// The decision boundary over the points (a click adds one), the latest numbers named by
/// their side, and the loss chart. Rendered from the runner on every redraw.
pub fn output_panel(
    ctx: &Ctx,
    r: &Runner,
    spec: &Spec,
    add_class: u32,
    set_add: &Callback<String>,
    boundary: &NodeRef,
    loss: (&NodeRef, Option<f64>),
) -> Html {
    let size = 300.0;
    let to_px = |v: f32| ((v + EXTENT) / (2.0 * EXTENT) * size as f32) as f64;
    let on_click = {
        let (set_add, spec, boundary) = (set_add.clone(), spec.clone(), boundary.clone());
        Callback::from(move |e: MouseEvent| {
            // The picture's own box (yew delegates events, so `current_target` is not the
            // picture); clientX/Y and the box share one coordinate space at any zoom.
            let Some(el) = boundary.cast::<web_sys::Element>() else {
                return;
            };
            if spec.added.len() >= MAX_ADDED {
                return;
            }
            let rect = el.get_bounding_client_rect();
            let Some((x, y)) = plane_point(
                (rect.left(), rect.top(), rect.width(), rect.height()),
                (e.client_x() as f64, e.client_y() as f64),
                EXTENT as f64,
            ) else {
                return;
            };
            if let Some(v) = add_point(&spec, x, y, add_class) {
                set_add.emit(v);
            }
        })
    };
    let heat = (!r.board.heat.is_empty()).then(|| heat_url(GRID, &r.board.heat));
    let regression = spec.dataset.is_regression();
    let dot = |x: f32, y: f32, c: u32, class: &'static str| {
        // Added points carry their coordinates (as in the URL), so they can be read back.
        let (dx, dy) = if class == "added" {
            (Some(format!("{x:.2}")), Some(format!("{y:.2}")))
        } else {
            (None, None)
        };
        html! {
            <circle class={class} data-x={dx} data-y={dy}
                cx={format!("{:.1}", to_px(x))} cy={format!("{:.1}", size - to_px(y))}
                r={if class == "added" { "4.5" } else { "3.2" }}
                fill={css(match regression {
                    true => heat_colour(output_shade(&[label_target(c)])),
                    false if c == 1 => CLASS1,
                    false => CLASS0,
                })} />
        }
    };
    // The runner's own added points: the URL's may be one ahead until the network is rebuilt.
    let n_generated = r.board.train.len() - r.board.spec.added.len().min(r.board.train.len());
    let last = latest(&r.board.gpu_hist, &r.board.cpu_hist).map(|(s, side)| (s, side.code()));
    html! {
        <section class="train-panel train-output">
            <h2>{ ctx.t("train.output") }</h2>
            <svg id="train-boundary" ref={boundary.clone()} viewBox="0 0 300 300"
                class={classes!("train-boundary", regression.then_some("regression"))}
                role="img" aria-label={ctx.t("train.boundary.label")} onclick={on_click}>
                { heat.map(|h| html! {
                    <image href={h} x="0" y="0" width="300" height="300" preserveAspectRatio="none" />
                }) }
                <line class="axis" x1="150" y1="0" x2="150" y2="300" />
                <line class="axis" x1="0" y1="150" x2="300" y2="150" />
                { for r.board.train.xy.iter().zip(&r.board.train.label).enumerate().map(|(i, (p, &c))| {
                    dot(p[0], p[1], c, if i < n_generated { "train" } else { "added" })
                }) }
                { for r.board.test.xy.iter().zip(&r.board.test.label).map(|(p, &c)| dot(p[0], p[1], c, "test")) }
            </svg>
            <p class="hint">
                { ctx.t(if r.board.heat_from_gpu { "train.boundary.gpu" } else { "train.boundary.cpu" }) }
                { " " }{ ctx.t(if regression { "train.boundary.legend_reg" } else { "train.boundary.legend" }) }
            </p>
            { last.map(|(s, side)| html! {
                <p class="train-metrics" data-side={side}>
                <span class="side">{ ctx.t(if side == "gpu" { "train.metrics.gpu" } else { "train.metrics.cpu" }) }</span>{ " " }
                { if regression {
                    // For regression the sample's second number is the RMSE (mlp::net::metrics).
                    ctx.tf("train.metrics_reg", &[
                        ("train", &numbers::number(s.train.into())),
                        ("test", &numbers::number(s.test.into())),
                        ("rmse", &numbers::number(s.test_acc.into())),
                    ])
                } else {
                    ctx.tf("train.metrics", &[
                        ("train", &numbers::number(s.train.into())),
                        ("test", &numbers::number(s.test.into())),
                        ("acc", &numbers::percent(s.test_acc.into())),
                    ])
                } }
                </p>
            }) }
            // "–" alone says nothing: a loss that is no longer a number is divergence, named.
            { for latest(&r.board.gpu_hist, &r.board.cpu_hist).filter(|(s, _)| s.diverged()).map(|_| html! {
                <p class="message error train-diverged" role="alert">
                    { ctx.tf("train.diverged", &[("lr", &spec.lr.to_string())]) }
                </p>
            }) }
            { loss_chart(ctx, r, loss) }
        </section>
    }
}

fn loss_chart(ctx: &Ctx, r: &Runner, (svg_ref, svg_w): (&NodeRef, Option<f64>)) -> Html {
    // Drawn at its rendered width, so its numbers show at the stylesheet's size on a phone.
    let w = drawn_width(svg_w, 320.0, 200.0);
    // Both curves over the steps both sides have reached, so they can be compared; the faster
    // side's later steps are left out.
    let (max_step, max_loss) = loss_extent(&r.board.gpu_hist, &r.board.cpu_hist);
    let top = nice_ceiling(max_loss as f64);
    let f = Frame {
        x0: 36.0,
        y0: 8.0,
        w: w - 44.0,
        h: 120.0,
        x_min: 0.0,
        x_max: max_step as f64,
        y_min: 0.0,
        y_max: top,
    };
    let line = |h: &[Sample], test: bool| {
        f.path(
            h.iter()
                .filter(|s| s.step <= max_step)
                .map(|s| (s.step as f64, if test { s.test } else { s.train } as f64)),
        )
    };
    html! {
        <figure class="train-loss">
            <svg ref={svg_ref.clone()} viewBox={format!("0 0 {w} 150")} role="img" aria-label={ctx.t("train.loss_chart")}>
                <line class="axis" x1="36" y1="128" x2={(w - 8.0).to_string()} y2="128" />
                <line class="axis" x1="36" y1="8" x2="36" y2="128" />
                // A diverging loss reaches 10²⁴ and more: a short label, never 25 digits.
                <text x="32" y="16" text-anchor="end">{ if top >= 1e4 { numbers::sci(top) } else { format!("{top}") } }</text>
                <text x="32" y="128" text-anchor="end">{ "0" }</text>
                <text x={(w - 8.0).to_string()} y="144" text-anchor="end">{ numbers::count(max_step) }</text>
                <polyline class="gpu-train" points={line(&r.board.gpu_hist, false)} />
                <polyline class="gpu-test" points={line(&r.board.gpu_hist, true)} />
                <polyline class="cpu-train" points={line(&r.board.cpu_hist, false)} />
            </svg>
            <figcaption>
                <span class="key gpu-train">{ ctx.t("train.curve.gpu_train") }</span>
                <span class="key gpu-test">{ ctx.t("train.curve.gpu_test") }</span>
                <span class="key cpu-train">{ ctx.t("train.curve.cpu_train") }</span>
                <span class="axis-note">{ ctx.t("train.curve.axes") }</span>
            </figcaption>
        </figure>
    }
}
