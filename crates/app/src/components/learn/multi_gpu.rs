//! Lesson `multi-gpu`: many GPUs. A diagram of data, tensor and pipeline parallelism, and a ring
//! all-reduce calculator (`lessons::allreduce`) over NVLink and PCIe presets.

use lessons::allreduce::{self, RingError, LINKS};
use lessons::units::{parse_count, parse_number};
use numbers::{decimal_bytes, duration};
use page_models::chart;
use page_models::diagram::{panels, PANEL_ROW_W, PANEL_W};
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, q, select, text_field, FieldError};
use crate::components::chart_width::{use_chart_width, use_drawn_width};
use crate::components::Ctx;

/// The ring all-reduce formula (maths, not prose).
const FORMULA: &str = "t = 2·(p−1)/p · S / B + 2·(p−1) · α";

/// One GPU box of the diagram.
fn gpu_box(x: f64, y: f64, label: &str) -> Html {
    html! {
        <g>
            <rect class="gpu" x={x.to_string()} y={y.to_string()} width="70" height="28" rx="4" />
            <text x={(x + 35.0).to_string()} y={(y + 18.0).to_string()} text-anchor="middle">{ label.to_string() }</text>
        </g>
    }
}

/// Three panels: the same four GPUs holding a model in three ways. Drawn at its rendered
/// width: side by side where the three fit, one above another on a phone (each panel is drawn
/// in its own coordinates and moved into place).
#[function_component]
fn Diagram() -> Html {
    let ctx = use_context::<Ctx>();
    let (node, w) = use_drawn_width(PANEL_ROW_W, PANEL_W + 20.0);
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let (places, h) = panels(w);
    let side_by_side = w >= PANEL_ROW_W;
    let gpu = |i: u32| format!("GPU {i}");
    let row_y = |i: u32| 40.0 + i as f64 * 44.0;
    // Data parallel: every GPU has the whole model (4 layer stripes), a different batch shard.
    let data = (0..4).map(|i| {
        let y = row_y(i);
        html! {
            <g>
                { gpu_box(10.0, y, &gpu(i)) }
                { for (0..4).map(|l| html! {
                    <rect class="layer whole" x={(90 + l * 18).to_string()} y={y.to_string()} width="14" height="28" />
                }) }
                <text class="small" x="168" y={(y + 18.0).to_string()}>{ ctx.tf("lesson.multi-gpu.svg.shard", &[("n", &(i + 1).to_string())]) }</text>
            </g>
        }
    });
    // Tensor parallel: each layer's matrix is cut in four; GPU i holds column block i of all.
    let tensor = (0..4).map(|i| {
        let y = row_y(i);
        html! {
            <g>
                { gpu_box(10.0, y, &gpu(i)) }
                { for (0..4).map(|l| html! {
                    <g>
                        <rect class="layer ghost" x={(90 + l * 18).to_string()} y={y.to_string()} width="14" height="28" />
                        <rect class="layer part" x={(90 + l * 18).to_string()} y={(y + i as f64 * 7.0).to_string()} width="14" height="7" />
                    </g>
                }) }
            </g>
        }
    });
    // Pipeline: GPU i holds layer i; micro-batches flow down.
    let pipe = (0..4).map(|i| {
        let y = row_y(i);
        html! {
            <g>
                { gpu_box(10.0, y, &gpu(i)) }
                { for (0..4).map(|l| html! {
                    <rect class={classes!("layer", if l == i { "whole" } else { "ghost" })}
                        x={(90 + l * 18).to_string()} y={y.to_string()} width="14" height="28" />
                }) }
                if i < 3 {
                    <line class="arrow" x1="126" y1={(y + 30.0).to_string()} x2="126" y2={(y + 42.0).to_string()} />
                }
            </g>
        }
    });
    // Below the last row (which ends at 200) and, stacked, above the next panel's heading.
    let note_y = if side_by_side { 238.0 } else { 224.0 };
    let parts = [
        (
            "lesson.multi-gpu.data",
            html! { { for data } },
            "lesson.multi-gpu.svg.data_note",
        ),
        (
            "lesson.multi-gpu.tensor",
            html! { { for tensor } },
            "lesson.multi-gpu.svg.tensor_note",
        ),
        (
            "lesson.multi-gpu.pipeline",
            html! { { for pipe } },
            "lesson.multi-gpu.svg.pipe_note",
        ),
    ];
    html! {
        <svg ref={node} class="diagram mgpu" viewBox={format!("0 0 {w:.1} {h}")} role="img" aria-labelledby="mgpu-svg-title">
            <title id="mgpu-svg-title">{ ctx.t("lesson.multi-gpu.svg.title") }</title>
            { for parts.into_iter().zip(places).map(|((heading, body, note), (tx, ty))| {
                html! {
                    <g transform={format!("translate({tx} {ty})")}>
                        <text class="heading" x="10" y="22">{ ctx.t(heading) }</text>
                        { body }
                        <text class="small" x="10" y={note_y.to_string()}>{ ctx.t(note) }</text>
                    </g>
                }
            }) }
        </svg>
    }
}

fn ring_error(ctx: &Ctx, e: RingError) -> (&'static str, String) {
    match e {
        RingError::Bytes => ("p", ctx.t("lesson.common.err.too_large").to_string()),
        RingError::Gpus => ("n", ctx.t("lesson.multi-gpu.err.gpus").to_string()),
        RingError::Bandwidth => ("bw", ctx.t("lesson.common.err.too_large").to_string()),
        RingError::Latency => ("lat", ctx.t("lesson.multi-gpu.err.latency").to_string()),
    }
}

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let ctx = use_context::<Ctx>();
    let bars_ref = use_node_ref();
    let bars_w = use_chart_width(bars_ref.clone());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let link_id = q(&ctx, "link", "nvlink3");
    let preset = allreduce::link(&link_id);
    let bw_default = preset
        .map(|l| l.per_direction_gbs.to_string())
        .unwrap_or_else(|| "300".into());
    let val = |key: &str, d: &str| q(&ctx, key, d);

    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let params = match parse_number(&val("p", "7B")) {
        Some(v) if v > 0.0 => Some(v),
        Some(_) => {
            errors.push(("p", ctx.t("lesson.common.err.positive").into()));
            None
        }
        None => {
            errors.push(("p", ctx.t("lesson.common.err.number").into()));
            None
        }
    };
    let grad_bytes = if val("g", "bf16") == "fp32" { 4.0 } else { 2.0 };
    let gpus = match parse_count(&val("n", "8")) {
        Some(n) => Some(n),
        None => {
            errors.push(("n", ctx.t("lesson.multi-gpu.err.gpus").into()));
            None
        }
    };
    // With a preset chosen the bandwidth field follows it; typing a number makes it custom.
    let bw_text = if preset.is_some() {
        bw_default.clone()
    } else {
        val("bw", &bw_default)
    };
    let bw = parse_number(&bw_text);
    if bw.is_none() {
        errors.push(("bw", ctx.t("lesson.common.err.number").into()));
    }
    let lat_text = val("lat", "0");
    let lat = parse_number(&lat_text);
    if lat.is_none() {
        errors.push(("lat", ctx.t("lesson.common.err.number").into()));
    }
    let result = match (params, gpus, bw, lat) {
        (Some(p), Some(n), Some(bw), Some(lat)) => {
            match allreduce::ring_allreduce(p * grad_bytes, n, bw, lat) {
                Ok(t) => Some((p * grad_bytes, n, t)),
                Err(e) => {
                    errors.push(ring_error(&ctx, e));
                    None
                }
            }
        }
        _ => None,
    };
    let err = |key: &str| form::field_error(&errors, key);

    let link_options = LINKS
        .iter()
        .map(|l| {
            (
                l.id.to_string(),
                ctx.tf(
                    "lesson.multi-gpu.link_option",
                    &[("name", l.name), ("each", &l.per_direction_gbs.to_string())],
                ),
            )
        })
        .chain(std::iter::once((
            "custom".to_string(),
            ctx.t("lesson.multi-gpu.custom").to_string(),
        )))
        .collect();
    let grad_options = vec![
        (
            "bf16".to_string(),
            ctx.t("lesson.multi-gpu.grad.bf16").to_string(),
        ),
        (
            "fp32".to_string(),
            ctx.t("lesson.multi-gpu.grad.fp32").to_string(),
        ),
    ];

    let output = match &result {
        None => html! {
            <p class="message error" role="alert" data-ring-time="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p>
        },
        Some((bytes, n, t)) => {
            // The same all-reduce over every preset link, as bars.
            let times: Vec<(String, f64)> = LINKS
                .iter()
                .filter_map(|l| {
                    let lat = lat.unwrap_or(0.0);
                    allreduce::ring_allreduce(*bytes, *n, l.per_direction_gbs, lat)
                        .ok()
                        .map(|r| (l.name.to_string(), r.total_s()))
                })
                .collect();
            // Laid out as the ladder's bars, at the chart's rendered width (labels above the
            // bars on a phone).
            let layout = chart::Layout::at(bars_w);
            let values: Vec<f64> = times.iter().map(|(_, s)| *s).collect();
            let value_anchor = if layout.stacked { "end" } else { "start" };
            let bars = times.iter().zip(chart::bars(&values, &layout)).map(|((name, s), bar)| {
                html! {
                    <g>
                        <text x="0" y={bar.label_y.to_string()}>{ name.clone() }</text>
                        <rect class="bar" x={bar.x.to_string()} y={bar.y.to_string()} width={format!("{:.1}", bar.width)} height={bar.height.to_string()} />
                        <text x={layout.value_x().to_string()} y={bar.value_y.to_string()} text-anchor={value_anchor}>{ duration(*s) }</text>
                    </g>
                }
            });
            html! {
                <>
                    <p class="total" data-ring-time={format!("{:.9}", t.total_s())}>
                        { ctx.tf(if *n == 1 { "lesson.multi-gpu.result_one" } else { "lesson.multi-gpu.result" }, &[
                            ("time", &duration(t.total_s())),
                            ("bytes", &decimal_bytes(*bytes)),
                            ("n", &n.to_string()),
                        ]) }
                    </p>
                    <ul class="result-parts">
                        <li>{ ctx.tf("lesson.multi-gpu.sent", &[("bytes", &decimal_bytes(t.bytes_per_gpu))]) }</li>
                        <li>{ ctx.tf("lesson.multi-gpu.parts", &[
                            ("transfer", &duration(t.transfer_s)),
                            ("steps", &t.steps.to_string()),
                            ("latency", &duration(t.latency_s)),
                        ]) }</li>
                    </ul>
                    <svg class="bars" ref={bars_ref.clone()} viewBox={format!("0 0 {} {}", layout.width, layout.height(times.len()))} role="img"
                        aria-label={ctx.t("lesson.multi-gpu.bars_label")}>
                        { for bars }
                    </svg>
                </>
            }
        }
    };

    html! {
        <div class="lesson-body lb">
            <p class="lead">{ ctx.t("lesson.multi-gpu.lead") }</p>
            <Diagram />
            <dl class="terms">
                <dt>{ ctx.t("lesson.multi-gpu.data") }</dt><dd>{ ctx.t("lesson.multi-gpu.data_text") }</dd>
                <dt>{ ctx.t("lesson.multi-gpu.tensor") }</dt><dd>{ ctx.t("lesson.multi-gpu.tensor_text") }</dd>
                <dt>{ ctx.t("lesson.multi-gpu.pipeline") }</dt><dd>{ ctx.t("lesson.multi-gpu.pipeline_text") }</dd>
            </dl>
            <h2>{ ctx.t("lesson.multi-gpu.ring_heading") }</h2>
            <p>{ ctx.t("lesson.multi-gpu.ring_p1") }</p>
            <p class="formula"><code>{ FORMULA }</code></p>
            <p>{ ctx.t("lesson.multi-gpu.ring_p2") }</p>
            <p>{ ctx.t("lesson.multi-gpu.conventions") }</p>

            <section class="panel calc" id="ring-calc" aria-labelledby="ring-calc-h">
                <h2 id="ring-calc-h">{ ctx.t("lesson.multi-gpu.calc") }</h2>
                <div class="fields">
                    { text_field(&ctx, &nav, "p", ctx.t("lesson.multi-gpu.f.params"), val("p", "7B"), err("p")) }
                    { select(&ctx, &nav, "g", ctx.t("lesson.multi-gpu.f.grad"), grad_options, &val("g", "bf16")) }
                    { text_field(&ctx, &nav, "n", ctx.t("lesson.multi-gpu.f.gpus"), val("n", "8"), err("n")) }
                </div>
                <div class="fields">
                    { select(&ctx, &nav, "link", ctx.t("lesson.multi-gpu.f.link"), link_options, if preset.is_some() { &link_id } else { "custom" }) }
                    { bw_field(&ctx, &nav, bw_text, err("bw")) }
                    { text_field(&ctx, &nav, "lat", ctx.t("lesson.multi-gpu.f.latency"), lat_text, err("lat")) }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.t("lesson.multi-gpu.note") }</p>
            </section>
            { form::corrections(&ctx, &["lesson.multi-gpu.fc37", "lesson.multi-gpu.fc38", "lesson.multi-gpu.fc62", "lesson.multi-gpu.fc30", "lesson.multi-gpu.fc86"]) }
            { form::try_it(&ctx, "lesson.multi-gpu.try") }
        </div>
    }
}

/// The bandwidth field: typing a value switches the link to "custom".
fn bw_field(ctx: &Ctx, nav: &Option<Navigator>, value: String, error: FieldError) -> Html {
    let oninput = {
        let (ctx, nav) = (ctx.clone(), nav.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            form::set(&ctx, &nav, &[("bw", &input.value()), ("link", "custom")]);
        })
    };
    html! {
        <div class={classes!("field", error.is_some().then_some("invalid"))}>
            <label for="f-bw">{ ctx.t("lesson.multi-gpu.f.bw") }</label>
            <input id="f-bw" name="bw" type="text" autocomplete="off" {value} {oninput}
                aria-invalid={error.is_some().to_string()} aria-describedby="f-bw-error" />
            <p id="f-bw-error" class="field-error" role="alert">{ error.unwrap_or_default() }</p>
        </div>
    }
}
