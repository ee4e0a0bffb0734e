//! Lesson `simt` — lock-step groups of threads, and what a branch that splits a group
//! costs, measured with the divergence probe (`shaders/measure_divergence.wgsl`).

use gpu_runtime::{measurements, RunOptions};
use yew::prelude::*;

use page_models::diagram::{lanes, text_width, Lanes};

use super::kit as common;
use crate::components::chart_width::use_drawn_width;
use crate::components::Ctx;
use crate::session;

#[derive(Clone, Debug, PartialEq)]
struct Result2 {
    divergent_ms: f64,
    uniform_ms: f64,
}

fn report_fields(r: &Result2) -> page_models::embed::Report {
    use page_models::embed::Field;
    let (d, u) = (r.divergent_ms, r.uniform_ms);
    vec![
        ("divergentMs", Field::Num(d)),
        ("uniformMs", Field::Num(u)),
        ("ratio", Field::Num(if u > 0.0 { d / u } else { f64::NAN })),
    ]
}

/// (threads, iterations per thread): small on software adapters, which are slow.
fn workload(software: bool) -> (u32, u32) {
    if software {
        (64 * 32, 128)
    } else {
        (64 * 4096, 2048)
    }
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let phase = common::use_measure::<Result2>();
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    let onclick = {
        let phase = phase.clone();
        Callback::from(move |_| {
            common::measure(
                &phase,
                1,
                Some(("simt", report_fields)),
                move |_| async move {
                    let (threads, iters) = workload(software);
                    let opts = RunOptions {
                        warmup: 1,
                        repetitions: 3,
                    };
                    let (gpu, _) = session::gpu(software).await?;
                    let (d, u) = measurements::divergence(&gpu, threads, iters, &opts).await?;
                    Ok(Result2 {
                        divergent_ms: d,
                        uniform_ms: u,
                    })
                },
            );
        })
    };
    let done = |r: &Result2| {
        let ratio = if r.uniform_ms > 0.0 {
            r.divergent_ms / r.uniform_ms
        } else {
            0.0
        };
        html! {
            <>
                <table class="facts">
                    <tr><th scope="row">{ ctx.t("lesson.simt.divergent") }</th><td>{ format!("{} ms", numbers::ms(r.divergent_ms)) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.simt.uniform") }</th><td>{ format!("{} ms", numbers::ms(r.uniform_ms)) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.simt.ratio") }</th>
                        <td class="ratio" data-value={ratio.to_string()}>{ format!("{}×", numbers::rate(ratio)) }</td></tr>
                </table>
                <p class="note">{ ctx.t("lesson.simt.result_note") }</p>
                if software {
                    <p class="note">{ ctx.t("lesson.common.software_note") }</p>
                }
            </>
        }
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.simt.p1", "lesson.simt.p2"]) }
            <DivergenceDiagram />
            { common::paras(&ctx, &["lesson.simt.p3", "lesson.simt.p4"]) }
            <section class="panel widget" data-widget="divergence">
                <h2>{ ctx.t("lesson.simt.widget") }</h2>
                <p>{ ctx.t("lesson.simt.widget_intro") }</p>
                <p class="source"><code>{ gpu_runtime::kernel("measure-divergent").map(|k| k.source_path).unwrap_or_default() }</code>{ " " }{ crate::components::edit_link::edit_link(&ctx, "measure-divergent") }</p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
            </section>
            { common::paras(&ctx, &["lesson.simt.p5"]) }
            { common::try_it(&ctx, "lesson.simt.try", Some(("visualiser", "lesson.simt.try_link"))) }
        </>
    }
}

/// Eight lanes over time: uniform (all lanes busy in each step) vs divergent (half masked).
/// Drawn at its rendered width: side by side where both fit, one above the other on a phone.
#[function_component]
fn DivergenceDiagram() -> Html {
    let ctx = use_context::<Ctx>();
    let (node, w) = use_drawn_width(640.0, common::DIAGRAM_MIN_W);
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let lanes_label = ctx.t("lesson.simt.diagram_lanes");
    let Lanes {
        side_by_side,
        pitch,
        uniform_x: ux,
        divergent_x: dx,
    } = lanes(
        w,
        text_width(lanes_label, common::LABEL_PX),
        text_width(ctx.t("lesson.simt.diagram_uniform"), common::LABEL_PX),
    );
    let cell = |x: f64, y: f64, class: &'static str| {
        html! { <rect x={format!("{x:.1}")} y={format!("{y:.1}")} width={format!("{:.1}", pitch - 4.0)} height="12" rx="2" class={class} /> }
    };
    let (u_title, u_end) = common::text_lines(
        ctx.t("lesson.simt.diagram_uniform"),
        (if side_by_side { ux } else { 4.0 }, 20.0),
        common::LABEL_PX,
        if side_by_side { dx - ux - 8.0 } else { w - 8.0 },
        "svg-label",
    );
    let (d_title, d_end) = if side_by_side {
        common::text_lines(
            ctx.t("lesson.simt.diagram_divergent"),
            (dx, 20.0),
            common::LABEL_PX,
            w - dx - 4.0,
            "svg-label",
        )
    } else {
        common::text_lines(
            ctx.t("lesson.simt.diagram_divergent"),
            (4.0, u_end + 8.0 * 15.0 + 30.0),
            common::LABEL_PX,
            w - 8.0,
            "svg-label",
        )
    };
    let u_top = if side_by_side {
        u_end.max(d_end) + 10.0
    } else {
        u_end + 10.0
    };
    let d_top = if side_by_side { u_top } else { d_end + 10.0 };
    let mut uniform = Vec::new();
    let mut divergent = Vec::new();
    for lane in 0..8 {
        for step in 0..4 {
            uniform.push(cell(
                ux + step as f64 * pitch,
                u_top + lane as f64 * 15.0,
                "lane a",
            ));
        }
        for step in 0..8 {
            let active_a = step < 4;
            let mine = (lane % 2 == 0) == active_a;
            let class = match (mine, active_a) {
                (true, true) => "lane a",
                (true, false) => "lane b",
                _ => "lane idle",
            };
            divergent.push(cell(
                dx + step as f64 * pitch,
                d_top + lane as f64 * 15.0,
                class,
            ));
        }
    }
    let lanes_at = |top: f64| {
        html! {
            <text x="4" y={format!("{:.1}", top + 4.0 * 15.0 + 4.0)} class="svg-label">{ lanes_label }</text>
        }
    };
    let grid_end = d_top + 8.0 * 15.0;
    let (time, bottom) = common::text_lines(
        ctx.t("lesson.simt.diagram_time"),
        (dx, grid_end + 14.0),
        common::SMALL_PX,
        w - dx - 4.0,
        "svg-small",
    );
    let h = bottom + 6.0;
    html! {
        <figure class="diagram">
            <svg ref={node} viewBox={format!("0 0 {w:.1} {h:.1}")} role="img" aria-label={ctx.t("lesson.simt.diagram_alt")}>
                { u_title }
                { d_title }
                { lanes_at(u_top) }
                if !side_by_side {
                    { lanes_at(d_top) }
                }
                { for uniform }
                { for divergent }
                { time }
            </svg>
            <figcaption>{ ctx.t("lesson.simt.diagram_caption") }</figcaption>
        </figure>
    }
}
