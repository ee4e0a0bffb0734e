//! Lesson `memory` — the memory hierarchy and coalescing: bandwidth against the distance
//! between neighbouring threads' reads, measured with `shaders/measure_strided.wgsl`.

use gpu_runtime::{measurements, RunOptions};
use yew::prelude::*;

use super::kit as common;
use crate::components::Ctx;
use crate::session;

/// Strides measured, in floats.
const STRIDES: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Floats read per measurement: 1 MiB on software adapters, 64 MiB on real GPUs (larger than
/// most L2 caches, so the reads come from DRAM).
fn elements(software: bool) -> u32 {
    if software {
        1 << 18
    } else {
        1 << 24
    }
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let phase = common::use_measure::<Vec<(u32, f64)>>();
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    let onclick = {
        let phase = phase.clone();
        Callback::from(move |_| {
            let total = STRIDES.len() as u32;
            let reporting: common::Reporting<Vec<(u32, f64)>> = ("memory", |points| {
                use page_models::embed::Field;
                let points = points
                    .iter()
                    .map(|&(stride, gbs)| {
                        vec![
                            ("stride", Field::Num(stride as f64)),
                            ("gbPerSecond", Field::Num(gbs)),
                        ]
                    })
                    .collect();
                vec![("points", Field::List(points))]
            });
            common::measure(&phase, total, Some(reporting), move |p| async move {
                let opts = RunOptions {
                    warmup: 1,
                    repetitions: 3,
                };
                let (gpu, _) = session::gpu(software).await?;
                let data = measurements::input(elements(software) as usize);
                // One untimed pass first: allocation and first-touch costs would otherwise
                // land on stride 1.
                measurements::strided_read(&gpu, &data, 1, &RunOptions::default()).await?;
                let mut points = Vec::new();
                for (i, &s) in STRIDES.iter().enumerate() {
                    points.push((s, measurements::strided_read(&gpu, &data, s, &opts).await?));
                    p.set(i as u32 + 1)?;
                }
                Ok(points)
            });
        })
    };
    let done = |points: &Vec<(u32, f64)>| {
        let first = points.first().map(|p| p.1).unwrap_or(0.0);
        let (worst_stride, worst) =
            points
                .iter()
                .copied()
                .fold((1, f64::INFINITY), |w, p| if p.1 < w.1 { p } else { w });
        html! {
            <>
                { stride_chart(&ctx, points) }
                <p>{ ctx.tf("lesson.memory.result", &[
                    ("best", &numbers::rate(first)),
                    ("worst", &numbers::rate(worst)),
                    ("stride", &worst_stride.to_string()),
                ]) }</p>
                if software {
                    <p class="note">{ ctx.t("lesson.common.software_note") }</p>
                    <p class="note">{ ctx.t("lesson.memory.software_note") }</p>
                }
            </>
        }
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.memory.p1"]) }
            { common::list(&ctx, &["lesson.memory.l1", "lesson.memory.l2", "lesson.memory.l3", "lesson.memory.l4"]) }
            { common::paras(&ctx, &["lesson.memory.p2"]) }
            { access_diagram(&ctx) }
            { common::paras(&ctx, &["lesson.memory.p3"]) }
            <section class="panel widget" data-widget="strided">
                <h2>{ ctx.t("lesson.memory.widget") }</h2>
                <p>{ ctx.tf("lesson.memory.widget_intro", &[("size", &numbers::bytes(elements(software) as u64 * 4))]) }</p>
                <p class="source"><code>{ gpu_runtime::kernel("measure-strided").map(|k| k.source_path).unwrap_or_default() }</code>{ " " }{ crate::components::editor_page::edit_link(&ctx, "measure-strided") }</p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
            </section>
            { common::paras(&ctx, &["lesson.memory.p4"]) }
            { common::try_it(&ctx, "lesson.memory.try", Some(("kernels?stage=matmul-coalesced", "lesson.memory.try_link"))) }
        </>
    }
}

/// Vertical bars: useful GB/s for each stride.
fn stride_chart(ctx: &Ctx, points: &[(u32, f64)]) -> Html {
    let (w, h, left, bottom, top) = (560.0, 240.0, 60.0, 40.0, 20.0);
    let max = points
        .iter()
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let plot_h = h - bottom - top;
    let slot = (w - left - 10.0) / points.len().max(1) as f64;
    html! {
        <figure class="chart-figure">
            <svg class="stride-chart" viewBox={format!("0 0 {w} {h}")} role="img"
                aria-label={ctx.t("lesson.memory.chart_alt")}>
                <line x1={left.to_string()} y1={top.to_string()} x2={left.to_string()} y2={(h - bottom).to_string()} class="axis" />
                <line x1={left.to_string()} y1={(h - bottom).to_string()} x2={(w - 10.0).to_string()} y2={(h - bottom).to_string()} class="axis" />
                <text x="8" y={(top + 4.0).to_string()} class="svg-small">{ numbers::rate(max) }</text>
                <text x="8" y={(top + 18.0).to_string()} class="svg-small">{ ctx.t("lesson.memory.chart_unit") }</text>
                { for points.iter().enumerate().map(|(i, (stride, gbps))| {
                    let bh = if max > 0.0 && gbps.is_finite() { (gbps / max * plot_h).max(1.0) } else { 0.0 };
                    let x = left + i as f64 * slot + slot * 0.15;
                    html! {
                        <g class="bar" data-stride={stride.to_string()} data-gbps={gbps.to_string()}>
                            <rect x={x.to_string()} y={(h - bottom - bh).to_string()} width={(slot * 0.7).to_string()} height={bh.to_string()} />
                            <text x={(x + slot * 0.35).to_string()} y={(h - bottom - bh - 4.0).to_string()} class="svg-small" text-anchor="middle">{ numbers::rate(*gbps) }</text>
                            <text x={(x + slot * 0.35).to_string()} y={(h - bottom + 16.0).to_string()} class="svg-small" text-anchor="middle">{ stride.to_string() }</text>
                        </g>
                    }
                }) }
                <text x={(left + (w - left) / 2.0).to_string()} y={(h - 6.0).to_string()} class="svg-small" text-anchor="middle">{ ctx.t("lesson.memory.chart_x") }</text>
            </svg>
        </figure>
    }
}

/// Eight threads reading neighbouring addresses (one cache line) vs addresses 4 apart.
fn access_diagram(ctx: &Ctx) -> Html {
    let cells = 32;
    let cell = |x: f64, y: f64, class: &'static str| {
        html! { <rect x={x.to_string()} y={y.to_string()} width="16" height="16" class={class} /> }
    };
    let row = |y: f64, stride: usize| {
        let touched: Vec<usize> = (0..8).map(|t| t * stride).collect();
        html! {
            <>
                { for (0..cells).map(|i| {
                    let class = if touched.contains(&i) { "mem read" } else if (i / 8) < (7 * stride) / 8 + 1 { "mem line" } else { "mem" };
                    cell(20.0 + i as f64 * 18.0, y, class)
                }) }
                { for touched.iter().enumerate().map(|(t, &i)| html! {
                    <>
                        <circle cx={(28.0 + t as f64 * 18.0).to_string()} cy={(y - 24.0).to_string()} r="4" class="thread" />
                        <line x1={(28.0 + t as f64 * 18.0).to_string()} y1={(y - 20.0).to_string()}
                            x2={(28.0 + i as f64 * 18.0).to_string()} y2={(y - 2.0).to_string()} class="arrow" />
                    </>
                }) }
                // Cache-line boundaries: every 8 cells.
                { for (0..=cells / 8).map(|l| html! {
                    <line x1={(19.0 + l as f64 * 144.0).to_string()} y1={(y - 3.0).to_string()}
                        x2={(19.0 + l as f64 * 144.0).to_string()} y2={(y + 19.0).to_string()} class="line-edge" />
                }) }
            </>
        }
    };
    html! {
        <figure class="diagram">
            <svg viewBox="0 0 620 160" role="img" aria-label={ctx.t("lesson.memory.diagram_alt")}>
                <text x="20" y="14" class="svg-label">{ ctx.t("lesson.memory.diagram_coalesced") }</text>
                { row(52.0, 1) }
                <text x="20" y="94" class="svg-label">{ ctx.t("lesson.memory.diagram_strided") }</text>
                { row(132.0, 4) }
            </svg>
            <figcaption>{ ctx.t("lesson.memory.diagram_caption") }</figcaption>
        </figure>
    }
}
