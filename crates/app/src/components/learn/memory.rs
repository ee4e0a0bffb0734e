//! Lesson `memory` — the memory hierarchy and coalescing: bandwidth against the distance
//! between neighbouring threads' reads, measured with `shaders/measure_strided.wgsl`.

use gpu_runtime::{measurements, RunOptions};
use yew::prelude::*;

use page_models::diagram::{drawn_width, pitch};

use super::kit as common;
use crate::components::chart_width::{use_chart_width, use_drawn_width};
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
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
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
                { stride_chart(&ctx, points, (&chart_ref, chart_w)) }
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
            <AccessDiagram />
            { common::paras(&ctx, &["lesson.memory.p3"]) }
            <section class="panel widget" data-widget="strided">
                <h2>{ ctx.t("lesson.memory.widget") }</h2>
                <p>{ ctx.tf("lesson.memory.widget_intro", &[("size", &numbers::bytes(elements(software) as u64 * 4))]) }</p>
                <p class="source"><code>{ gpu_runtime::kernel("measure-strided").map(|k| k.source_path).unwrap_or_default() }</code>{ " " }{ crate::components::edit_link::edit_link(&ctx, "measure-strided") }</p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
            </section>
            { common::paras(&ctx, &["lesson.memory.p4"]) }
            { common::try_it(&ctx, "lesson.memory.try", Some(("kernels?stage=matmul-coalesced", "lesson.memory.try_link"))) }
        </>
    }
}

/// Vertical bars: useful GB/s for each stride.
/// Drawn at its rendered width, so its numbers show at the stylesheet's 11 px on a phone.
fn stride_chart(
    ctx: &Ctx,
    points: &[(u32, f64)],
    (chart_ref, chart_w): (&NodeRef, Option<f64>),
) -> Html {
    let w = drawn_width(chart_w, 560.0, common::DIAGRAM_MIN_W);
    let (left, bottom, top) = (60.0, 40.0, 20.0);
    let (x_label, x_label_end) = common::text_lines(
        ctx.t("lesson.memory.chart_x"),
        (left, 240.0 - 6.0),
        common::SMALL_PX,
        w - left - 4.0,
        "svg-small",
    );
    let h = x_label_end.max(240.0 - 6.0) + 6.0;
    let max = points
        .iter()
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let base = 240.0 - bottom;
    let plot_h = base - top;
    let slot = (w - left - 10.0) / points.len().max(1) as f64;
    html! {
        <figure class="chart-figure">
            <svg class="stride-chart" ref={chart_ref.clone()} viewBox={format!("0 0 {w} {h}")} role="img"
                aria-label={ctx.t("lesson.memory.chart_alt")}>
                <line x1={left.to_string()} y1={top.to_string()} x2={left.to_string()} y2={base.to_string()} class="axis" />
                <line x1={left.to_string()} y1={base.to_string()} x2={(w - 10.0).to_string()} y2={base.to_string()} class="axis" />
                <text x="8" y={(top + 4.0).to_string()} class="svg-small">{ numbers::rate(max) }</text>
                <text x="8" y={(top + 18.0).to_string()} class="svg-small">{ ctx.t("lesson.memory.chart_unit") }</text>
                { for points.iter().enumerate().map(|(i, (stride, gbps))| {
                    let bh = if max > 0.0 && gbps.is_finite() { (gbps / max * plot_h).max(1.0) } else { 0.0 };
                    let x = left + i as f64 * slot + slot * 0.15;
                    html! {
                        <g class="bar" data-stride={stride.to_string()} data-gbps={gbps.to_string()}>
                            <rect x={x.to_string()} y={(base - bh).to_string()} width={(slot * 0.7).to_string()} height={bh.to_string()} />
                            <text x={(x + slot * 0.35).to_string()} y={(base - bh - 4.0).to_string()} class="svg-small" text-anchor="middle">{ numbers::rate(*gbps) }</text>
                            <text x={(x + slot * 0.35).to_string()} y={(base + 16.0).to_string()} class="svg-small" text-anchor="middle">{ stride.to_string() }</text>
                        </g>
                    }
                }) }
                { x_label }
            </svg>
        </figure>
    }
}

/// Eight threads reading neighbouring addresses (one cache line) vs addresses 4 apart. Drawn
/// at its rendered width: the 32 cells narrow and the labels wrap on a phone.
#[function_component]
fn AccessDiagram() -> Html {
    let ctx = use_context::<Ctx>();
    let (node, w) = use_drawn_width(620.0, common::DIAGRAM_MIN_W);
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let cells = 32;
    // 16 px cells on an 18 px pitch, less where the width is less.
    let pitch = pitch(w - 40.0, cells, 18.0);
    let cell = |i: usize, y: f64, class: &'static str| {
        html! { <rect x={format!("{:.1}", 20.0 + i as f64 * pitch)} y={y.to_string()} width={format!("{:.1}", pitch - 2.0)} height="16" class={class} /> }
    };
    let centre = |i: usize| 20.0 + i as f64 * pitch + (pitch - 2.0) / 2.0;
    let row = |y: f64, stride: usize| {
        let touched: Vec<usize> = (0..8).map(|t| t * stride).collect();
        html! {
            <>
                { for (0..cells).map(|i| {
                    let class = if touched.contains(&i) { "mem read" } else if (i / 8) < (7 * stride) / 8 + 1 { "mem line" } else { "mem" };
                    cell(i, y, class)
                }) }
                { for touched.iter().enumerate().map(|(t, &i)| html! {
                    <>
                        <circle cx={format!("{:.1}", centre(t))} cy={(y - 24.0).to_string()} r="4" class="thread" />
                        <line x1={format!("{:.1}", centre(t))} y1={(y - 20.0).to_string()}
                            x2={format!("{:.1}", centre(i))} y2={(y - 2.0).to_string()} class="arrow" />
                    </>
                }) }
                // Cache-line boundaries: every 8 cells.
                { for (0..=cells / 8).map(|l| html! {
                    <line x1={format!("{:.1}", 19.0 + l as f64 * 8.0 * pitch)} y1={(y - 3.0).to_string()}
                        x2={format!("{:.1}", 19.0 + l as f64 * 8.0 * pitch)} y2={(y + 19.0).to_string()} class="line-edge" />
                }) }
            </>
        }
    };
    let (label1, end1) = common::text_lines(
        ctx.t("lesson.memory.diagram_coalesced"),
        (20.0, 14.0),
        common::LABEL_PX,
        w - 24.0,
        "svg-label",
    );
    let row1 = end1 + 38.0;
    let (label2, end2) = common::text_lines(
        ctx.t("lesson.memory.diagram_strided"),
        (20.0, row1 + 42.0),
        common::LABEL_PX,
        w - 24.0,
        "svg-label",
    );
    let row2 = end2 + 38.0;
    let h = row2 + 28.0;
    html! {
        <figure class="diagram">
            <svg ref={node} viewBox={format!("0 0 {w:.1} {h:.1}")} role="img" aria-label={ctx.t("lesson.memory.diagram_alt")}>
                { label1 }
                { row(row1, 1) }
                { label2 }
                { row(row2, 4) }
            </svg>
            <figcaption>{ ctx.t("lesson.memory.diagram_caption") }</figcaption>
        </figure>
    }
}
