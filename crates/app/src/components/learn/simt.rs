//! Lesson `simt` — lock-step groups of threads, and what a branch that splits a group
//! costs, measured with the divergence probe (`shaders/measure_divergence.wgsl`).

use gpu_runtime::{measurements, RunOptions};
use yew::prelude::*;

use super::kit as common;
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
            { divergence_diagram(&ctx) }
            { common::paras(&ctx, &["lesson.simt.p3", "lesson.simt.p4"]) }
            <section class="panel widget" data-widget="divergence">
                <h2>{ ctx.t("lesson.simt.widget") }</h2>
                <p>{ ctx.t("lesson.simt.widget_intro") }</p>
                <p class="source"><code>{ gpu_runtime::kernel("measure-divergent").map(|k| k.source_path).unwrap_or_default() }</code>{ " " }{ crate::components::editor_page::edit_link(&ctx, "measure-divergent") }</p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
            </section>
            { common::paras(&ctx, &["lesson.simt.p5"]) }
            { common::try_it(&ctx, "lesson.simt.try", Some(("visualiser", "lesson.simt.try_link"))) }
        </>
    }
}

/// Eight lanes over time: uniform (all lanes busy in each step) vs divergent (half masked).
fn divergence_diagram(ctx: &Ctx) -> Html {
    let lanes = 8;
    let cell = |x: f64, y: f64, class: &'static str| {
        html! { <rect x={x.to_string()} y={y.to_string()} width="26" height="12" rx="2" class={class} /> }
    };
    let mut uniform = Vec::new();
    let mut divergent = Vec::new();
    for lane in 0..lanes {
        let y = 40.0 + lane as f64 * 15.0;
        for step in 0..4 {
            uniform.push(cell(90.0 + step as f64 * 30.0, y, "lane a"));
        }
        for step in 0..8 {
            let active_a = step < 4;
            let mine = (lane % 2 == 0) == active_a;
            let class = match (mine, active_a) {
                (true, true) => "lane a",
                (true, false) => "lane b",
                _ => "lane idle",
            };
            divergent.push(cell(390.0 + step as f64 * 30.0, y, class));
        }
    }
    html! {
        <figure class="diagram">
            <svg viewBox="0 0 640 170" role="img" aria-label={ctx.t("lesson.simt.diagram_alt")}>
                <text x="90" y="26" class="svg-label">{ ctx.t("lesson.simt.diagram_uniform") }</text>
                <text x="390" y="26" class="svg-label">{ ctx.t("lesson.simt.diagram_divergent") }</text>
                <text x="10" y="100" class="svg-label">{ ctx.t("lesson.simt.diagram_lanes") }</text>
                { for uniform }
                { for divergent }
                <text x="390" y="166" class="svg-small">{ ctx.t("lesson.simt.diagram_time") }</text>
            </svg>
            <figcaption>{ ctx.t("lesson.simt.diagram_caption") }</figcaption>
        </figure>
    }
}
