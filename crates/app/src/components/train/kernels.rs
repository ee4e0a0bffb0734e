//! The train view's lower panels: the kernels of one training step (each opens its WGSL) and
//! the batch-size experiment's table, chart and conclusion (its rows are the page model's;
//! its panel and button are `super::ExperimentPanel`).

use yew::prelude::*;

use gpu_runtime::training::PlannedDispatch;
use page_models::diagram::drawn_width;
use page_models::train::experiment::{growth, verdict, GpuCell, Row, Verdict, BATCHES};
use page_models::train::picture::Frame;
use page_models::train::Action;

use super::SPACE;
use crate::components::Ctx;
use page_models::source_view::highlight_line;

const NEWLINE: &str = "\n";

#[derive(Properties, PartialEq)]
pub struct KernelsProps {
    pub plan: Vec<PlannedDispatch>,
    /// The kernel shown (None: the step's first).
    pub selected: Option<&'static str>,
    pub dispatch: Callback<Action>,
}

/// The step's dispatches in order; a click shows that kernel's WGSL.
#[function_component]
pub fn KernelsPanel(props: &KernelsProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let plan = &props.plan;
    html! {
        <details class="train-kernels">
            <summary>{ ctx.tf("train.kernels.title", &[("count", &plan.len().to_string())]) }</summary>
            <p>{ ctx.t("train.kernels.intro") }</p>
            <div class="train-table-wrap">
            <table class="train-plan">
                <thead><tr>
                    <th>{ "#" }</th>
                    <th>{ ctx.t("train.kernels.kernel") }</th>
                    <th>{ ctx.t("train.kernels.layer") }</th>
                    <th>{ ctx.t("train.kernels.threads") }</th>
                    <th>{ ctx.t("train.kernels.workgroups") }</th>
                </tr></thead>
                <tbody>
                    { for plan.iter().enumerate().map(|(i, p)| {
                        let id = p.kernel_id;
                        let title = gpu_runtime::kernel(id).map(|k| ctx.t(k.title_key)).unwrap_or_default();
                        html! {
                            <tr class={classes!((props.selected == Some(id)).then_some("selected"))}
                                onclick={props.dispatch.reform(move |_: MouseEvent| Action::SelectKernel(id))}>
                                <td>{ i + 1 }</td>
                                <td>
                                    <button class="link" type="button"><code>{ id }</code></button>
                                    { SPACE }{ title }
                                </td>
                                <td>{ if p.layer == 0 { ctx.t("train.kernels.all_layers").to_string() } else { p.layer.to_string() } }</td>
                                <td>{ numbers::count(p.threads as u64) }</td>
                                <td>{ format!("{} × {} × {}", p.workgroups[0], p.workgroups[1], p.workgroups[2]) }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            </div>
            { kernel_source(&ctx, props.selected.or(plan.first().map(|d| d.kernel_id))) }
        </details>
    }
}

fn kernel_source(ctx: &Ctx, id: Option<&'static str>) -> Html {
    let Some(k) = id.and_then(gpu_runtime::kernel) else {
        return html! {};
    };
    let src = k.wgsl();
    html! {
        <div class="source-view">
            <h4>{ ctx.t(k.title_key) }{ " — " }<code>{ k.source_path }</code></h4>
            <p>{ ctx.t(k.summary_key) }{ " " }{ crate::components::edit_link::edit_link(ctx, k.id) }</p>
            <pre class="source" tabindex="0"><code>
                { for src.lines().enumerate().map(|(i, line)| html! {
                    <span class="line">
                        <span class="ln" aria-hidden="true">{ i + 1 }</span>
                        { for highlight_line(line).into_iter().map(|(tok, text)| html! {
                            <span class={tok.class()}>{ text }</span>
                        }) }
                        { NEWLINE }
                    </span>
                }) }
            </code></pre>
        </div>
    }
}

/// What the finished experiment showed, worded from its own rows, then why.
pub fn conclusion(ctx: &Ctx, rows: &[Row], software: bool) -> Html {
    let v = verdict(rows);
    let batch = |b: usize| numbers::count(b as u64);
    let lead = match &v {
        Verdict::NoGpu => ctx.t("train.exp.v.no_gpu").to_string(),
        Verdict::CpuEverywhere { largest } => {
            ctx.tf("train.exp.v.cpu_all", &[("batch", &batch(*largest))])
        }
        Verdict::GpuEverywhere { smallest } => {
            ctx.tf("train.exp.v.gpu_all", &[("batch", &batch(*smallest))])
        }
        Verdict::GpuFrom { from } => ctx.tf("train.exp.v.gpu_from", &[("batch", &batch(*from))]),
        Verdict::Mixed => ctx.t("train.exp.v.mixed").to_string(),
    };
    let grew = growth(rows).map(|(a, b, g, c)| {
        ctx.tf(
            "train.exp.v.growth",
            &[
                ("from", &batch(a)),
                ("to", &batch(b)),
                ("gpu", &numbers::rate(g)),
                ("cpu", &numbers::rate(c)),
            ],
        )
    });
    html! {
        <div class="lesson" data-verdict={v.code()}>
            <p>{ lead }{ grew.map(|g| html! { <>{ SPACE }{ g }</> }) }</p>
            { software.then(|| html! { <p>{ ctx.t("train.exp.v.software") }</p> }) }
            <p>{ ctx.t("train.exp.lesson") }</p>
        </div>
    }
}

/// The stylesheet's size of the training charts' text (train.css).
pub const TICK_PX: f64 = 11.0;

pub fn experiment_view(ctx: &Ctx, rows: &[Row], (svg_ref, svg_w): (&NodeRef, Option<f64>)) -> Html {
    // Drawn at its rendered width, so its ticks show at the stylesheet's size on a phone.
    let cw = drawn_width(svg_w, 450.0, 260.0);
    let gpu_val = |r: &Row| match r.gpu {
        GpuCell::SamplesPerSecond(v) => Some(v),
        _ => None,
    };
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| [gpu_val(r), Some(r.cpu)])
        .flatten()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor();
    let hi = values.iter().copied().fold(0.0, f64::max).log10().ceil();
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let f = Frame {
        x0: 56.0,
        y0: 10.0,
        w: cw - 70.0,
        h: 160.0,
        x_min: 0.0,
        x_max: 12.0,
        y_min: lo,
        y_max: hi,
    };
    let series = |pick: &dyn Fn(&Row) -> Option<f64>| {
        f.path(rows.iter().filter_map(|r| {
            pick(r)
                .filter(|v| *v > 0.0)
                .map(|v| ((r.batch as f64).log2(), v.log10()))
        }))
    };
    let gpu_line = series(&gpu_val);
    let cpu_line = series(&|r: &Row| Some(r.cpu));
    html! {
        <>
            <svg class="train-exp-chart" ref={svg_ref.clone()} viewBox={format!("0 0 {cw} 200")} role="img" aria-label={ctx.t("train.exp.chart")}>
                <line class="axis" x1="56" y1="170" x2={(cw - 14.0).to_string()} y2="170" />
                <line class="axis" x1="56" y1="10" x2="56" y2="170" />
                { for (lo as i32..=hi as i32).map(|p| html! {
                    <>
                        <line class="grid" x1="56" x2={(cw - 14.0).to_string()} y1={format!("{:.1}", f.y(p as f64))} y2={format!("{:.1}", f.y(p as f64))} />
                        <text x="50" y={format!("{:.1}", f.y(p as f64) + 4.0)} text-anchor="end">{ format!("1e{p}") }</text>
                    </>
                }) }
                { for f.log2_ticks(&BATCHES, TICK_PX).into_iter().map(|(x, b)| html! {
                    <text x={format!("{x:.1}")} y="186" text-anchor="middle">{ b }</text>
                }) }
                <polyline class="gpu-train" points={gpu_line} />
                <polyline class="cpu-train" points={cpu_line} />
            </svg>
            <p class="hint">
                <span class="key gpu-train">{ ctx.t("train.exp.gpu") }</span>
                <span class="key cpu-train">{ ctx.t("train.exp.cpu") }</span>
                { ctx.t("train.exp.axes") }
            </p>
            <table class="train-exp-table">
                <thead><tr>
                    <th>{ ctx.t("train.exp.batch") }</th>
                    <th>{ ctx.t("train.exp.gpu") }</th>
                    <th>{ ctx.t("train.exp.cpu") }</th>
                </tr></thead>
                <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr>
                            <td>{ numbers::count(r.batch as u64) }</td>
                            <td>{ match &r.gpu {
                                GpuCell::SamplesPerSecond(v) => numbers::count(v.round() as u64),
                                GpuCell::TooLarge => ctx.t("train.exp.too_large").to_string(),
                                GpuCell::NoGpu => ctx.t("train.exp.no_gpu").to_string(),
                                GpuCell::Failed(e) => ctx.tf("train.exp.failed", &[("detail", e)]),
                            } }</td>
                            <td>{ numbers::count(r.cpu.round() as u64) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </>
    }
}
