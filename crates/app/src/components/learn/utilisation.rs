//! Lesson `utilisation` — batch size, launch overhead and what GPU-Util means: the same tiny
//! work done as one fused dispatch, as many dispatches in one submission, and as many separate
//! round trips (`gpu_runtime::measurements::launch_costs`).

use gpu_runtime::measurements::{self, LaunchCosts};
use yew::prelude::*;

use page_models::diagram::{text_width, timeline, Timeline};

use super::kit as common;
use crate::components::chart_width::use_drawn_width;
use crate::components::Ctx;
use crate::session;

const MAX_DISPATCHES: u32 = 1024;

fn report_fields(c: &LaunchCosts) -> page_models::embed::Report {
    use page_models::embed::Field;
    vec![
        ("dispatches", Field::Num(c.dispatches as f64)),
        ("fusedMs", Field::Num(c.fused_ms)),
        ("oneSubmitMs", Field::Num(c.one_submit_ms)),
        ("separateMs", Field::Num(c.separate_ms)),
        ("perDispatchUs", Field::Num(c.per_dispatch_us())),
    ]
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let phase = common::use_measure::<LaunchCosts>();
    let count = use_state(|| "256".to_string());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    let parsed = common::parse_in(&count, 1, MAX_DISPATCHES);
    let error = parsed
        .as_ref()
        .err()
        .map(|k| common::parse_message(&ctx, k, 1, MAX_DISPATCHES));
    let onclick = {
        let phase = phase.clone();
        let parsed = parsed.clone().ok();
        Callback::from(move |_| {
            let Some(dispatches) = parsed else {
                return;
            };
            common::measure(
                &phase,
                dispatches,
                Some(("utilisation", report_fields)),
                move |p| async move {
                    let (gpu, _) = session::gpu(software).await?;
                    let ctl = p.control();
                    measurements::launch_costs(&gpu, dispatches, &ctl, move |done| {
                        // Each launch is its own submission: stop before the next one.
                        p.check()?;
                        if done % 16 == 0 || done == dispatches {
                            p.set(done)?;
                        }
                        Ok(())
                    })
                    .await
                },
            );
        })
    };
    let done = |c: &LaunchCosts| {
        let n = c.dispatches.to_string();
        html! {
            <>
                <table class="facts launch-table">
                    <tr><th scope="row">{ ctx.tf("lesson.utilisation.fused", &[("n", &n)]) }</th><td>{ format!("{} ms", numbers::ms(c.fused_ms)) }</td></tr>
                    <tr><th scope="row">{ ctx.tf("lesson.utilisation.one_submit", &[("n", &n)]) }</th><td>{ format!("{} ms", numbers::ms(c.one_submit_ms)) }</td></tr>
                    <tr><th scope="row">{ ctx.tf("lesson.utilisation.separate", &[("n", &n)]) }</th><td>{ format!("{} ms", numbers::ms(c.separate_ms)) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.utilisation.per_dispatch") }</th>
                        <td class="per-dispatch" data-value={c.per_dispatch_us().to_string()}>{ format!("{} µs", numbers::rate(c.per_dispatch_us())) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.utilisation.per_trip") }</th>
                        <td class="per-trip" data-value={c.per_round_trip_us().to_string()}>{ format!("{} µs", numbers::rate(c.per_round_trip_us())) }</td></tr>
                </table>
                <p class="note">{ ctx.t("lesson.utilisation.result_note") }</p>
                if software {
                    <p class="note">{ ctx.t("lesson.common.software_note") }</p>
                }
            </>
        }
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.utilisation.p1", "lesson.utilisation.p2"]) }
            <TimelineDiagram />
            <section class="panel widget" data-widget="launch">
                <h2>{ ctx.t("lesson.utilisation.widget") }</h2>
                <p>{ ctx.tf("lesson.utilisation.widget_intro", &[
                    ("threads", &measurements::TINY_THREADS.to_string()),
                    ("iters", &measurements::TINY_ITERS.to_string()),
                ]) }</p>
                { common::number_field(&ctx, "launch-count", "lesson.utilisation.count", &count, error, common::text_setter(&count)) }
                { common::measure_controls(&ctx, &phase, onclick, parsed.is_ok(), done) }
            </section>
            { common::paras(&ctx, &["lesson.utilisation.p3"]) }
            { common::h2(&ctx, "lesson.utilisation.h_smi") }
            { common::paras(&ctx, &["lesson.utilisation.p4"]) }
            { common::list(&ctx, &["lesson.utilisation.smi_util", "lesson.utilisation.smi_mem", "lesson.utilisation.smi_temp", "lesson.utilisation.smi_cmds"]) }
            { common::paras(&ctx, &["lesson.utilisation.p5"]) }
            { common::try_it(&ctx, "lesson.utilisation.try", Some(("visualiser", "lesson.utilisation.try_link"))) }
        </>
    }
}

/// GPU timeline: many small kernels with gaps vs one long kernel. Drawn at its rendered width:
/// the labels sit left of the rows where they fit, above them on a phone.
#[function_component]
fn TimelineDiagram() -> Html {
    let ctx = use_context::<Ctx>();
    let (node, w) = use_drawn_width(620.0, common::DIAGRAM_MIN_W);
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let (many, one) = (
        ctx.t("lesson.utilisation.diagram_many"),
        ctx.t("lesson.utilisation.diagram_one"),
    );
    let label_w = text_width(many, common::LABEL_PX).max(text_width(one, common::LABEL_PX));
    let Timeline {
        x0,
        pitch,
        rows: [row1, row2],
        labels: [label1_y, label2_y],
        ..
    } = timeline(w, label_w);
    let (time, bottom) = common::text_lines(
        ctx.t("lesson.utilisation.diagram_time"),
        (x0, row2 + 44.0),
        common::SMALL_PX,
        w - x0 - 4.0,
        "svg-small",
    );
    let h = (bottom + 6.0).max(120.0);
    html! {
        <figure class="diagram">
            <svg ref={node} viewBox={format!("0 0 {w:.1} {h:.1}")} role="img" aria-label={ctx.t("lesson.utilisation.diagram_alt")}>
                <text x="4" y={label1_y.to_string()} class="svg-label">{ many }</text>
                { for (0..10).map(|i| html! {
                    <rect x={format!("{:.1}", x0 + i as f64 * pitch)} y={row1.to_string()} width={format!("{:.1}", pitch / 3.0)} height="20" class="kernel" />
                }) }
                <text x="4" y={label2_y.to_string()} class="svg-label">{ one }</text>
                <rect x={x0.to_string()} y={row2.to_string()} width={format!("{:.1}", pitch * 10.0 / 3.0)} height="20" class="kernel" />
                { time }
            </svg>
            <figcaption>{ ctx.t("lesson.utilisation.diagram_caption") }</figcaption>
        </figure>
    }
}
