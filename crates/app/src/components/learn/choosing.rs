//! Lesson `choosing`: choosing a GPU. The corrected spec table (`lessons::gpus`), highlighted and
//! ranked for a workload the visitor picks, sized with the `vram` lesson's `lessons::vram::estimate`.

use lessons::gpus::{self, rank_by_bandwidth};
use lessons::units::parse_number;
use lessons::vram::{self, Activations, Budget, BudgetError, Dtype, Optimiser};
use numbers::{binary_bytes, decimal_bytes, number};
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, q, select, text_field};
use crate::components::Ctx;

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let p_text = q(&ctx, "p", "7B");
    let w = q(&ctx, "w", "bf16");
    let mode = q(&ctx, "mode", "infer");
    let training = mode == "train";

    let mut field_error = None;
    let mut general = None;
    let params = match parse_number(&p_text) {
        Some(v) if v > 0.0 => Some(v),
        Some(_) => {
            field_error = Some(ctx.t("lesson.common.err.positive").to_string());
            None
        }
        None => {
            field_error = Some(ctx.t("lesson.common.err.number").to_string());
            None
        }
    };
    let dtype = Dtype::from_code(&w);
    if dtype.is_none() {
        general = Some(ctx.t("lesson.common.err.choice").to_string());
    }
    // Weights, gradients and optimiser states only; activations come on top (the `vram` lesson).
    let states = params.zip(dtype).and_then(|(p, dtype)| {
        let b = Budget {
            params: p,
            dtype,
            training,
            optimiser: Optimiser::Adam,
            lora: None,
            checkpointing: false,
            activations: Activations::PerSample {
                batch: 1.0,
                bytes_per_sample: 1.0,
            },
        };
        match vram::estimate(&b) {
            Ok(r) => Some((r.total() - r.activations - r.kv_cache, r.weights)),
            Err(BudgetError::QuantisedFullTraining) => {
                general = Some(ctx.t("lesson.vram.err.quantised").to_string());
                None
            }
            Err(_) => {
                field_error = Some(ctx.t("lesson.common.err.too_large").to_string());
                None
            }
        }
    });

    let dtype_options = form::dtype_options(&ctx);
    let mode_options = vec![
        (
            "infer".to_string(),
            ctx.t("lesson.choosing.mode.infer").to_string(),
        ),
        (
            "train".to_string(),
            ctx.t("lesson.choosing.mode.train").to_string(),
        ),
    ];

    let need_line = match (states, &general) {
        (Some((bytes, _)), _) => html! {
            <p class="total" data-need={format!("{bytes:.0}")}>
                { ctx.tf(if training { "lesson.choosing.need_train" } else { "lesson.choosing.need_infer" },
                    &[("gb", &decimal_bytes(bytes)), ("gib", &binary_bytes(bytes))]) }
            </p>
        },
        (None, Some(msg)) => {
            html! { <p class="message error" role="alert" data-need="invalid">{ msg.clone() }</p> }
        }
        (None, None) => {
            html! { <p class="message error" role="alert" data-need="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p> }
        }
    };

    let ranked = rank_by_bandwidth(states.map(|s| s.0).unwrap_or(f64::NAN));
    let lang = ctx.lang.code();
    let rows = ranked.iter().enumerate().map(|(i, (g, fits))| {
        let tokens = states
            .filter(|_| !training)
            .and_then(|(_, weights)| gpus::decode_tokens_per_s_bound(weights, g.bandwidth_gbs));
        let (class, fit_key) = match (states.is_some(), *fits) {
            (false, _) => ("unknown", "lesson.choosing.fit.unknown"),
            (true, true) => ("fits", "lesson.choosing.fit.yes"),
            (true, false) => ("no", "lesson.choosing.fit.no"),
        };
        html! {
            <tr class={classes!("gpu-row", class)} data-gpu={g.id} data-fit={class} data-rank={(i + 1).to_string()}>
                <th scope="row">{ g.name }</th>
                <td>{ format!("{} GB", g.memory_gb) }</td>
                <td>{ number(g.bandwidth_gbs) }</td>
                <td>{ number(g.tensor_fp16_tflops) }</td>
                <td>{ number(g.fp32_tflops) }</td>
                <td>{ format!("{} W", g.tdp_w) }</td>
                <td class="fit-cell">{ ctx.t(fit_key) }</td>
                <td>{ tokens.filter(|_| *fits).map(number).unwrap_or_else(|| "–".into()) }</td>
                <td class="source">{ ctx.t(&format!("lesson.choosing.source.{}", g.id)) }{ for g.fc_ids().map(|id| checked(&ctx, id)) }</td>
            </tr>
        }
    });

    html! {
        <div class="lesson-body lb">
            <p class="lead">{ ctx.t("lesson.choosing.lead") }</p>
            <ol class="priorities">
                <li>{ ctx.t("lesson.choosing.first") }</li>
                <li>{ ctx.t("lesson.choosing.second") }</li>
                <li>{ ctx.t("lesson.choosing.third") }</li>
            </ol>
            <p>{ ctx.t("lesson.choosing.guide") }</p>

            <section class="panel calc" id="choose-calc" aria-labelledby="choose-calc-h">
                <h2 id="choose-calc-h">{ ctx.t("lesson.choosing.calc") }</h2>
                <div class="fields">
                    { text_field(&ctx, &nav, "p", ctx.t("lesson.vram.f.params"), p_text.clone(), field_error) }
                    { select(&ctx, &nav, "w", ctx.t("lesson.vram.f.dtype"), dtype_options, &w) }
                    { select(&ctx, &nav, "mode", ctx.t("lesson.vram.f.mode"), mode_options, &mode) }
                </div>
                <div class="calc-output" aria-live="polite">{ need_line }</div>
                <div class="table-scroll">
                    <table class="data gpu-table">
                        <thead><tr>
                            <th scope="col">{ ctx.t("lesson.common.col.gpu") }</th>
                            <th scope="col">{ ctx.t("lesson.common.col.memory") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.bw") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.tensor") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.fp32") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.tdp") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.fits") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.tokens") }</th>
                            <th scope="col">{ ctx.t("lesson.choosing.col.source") }</th>
                        </tr></thead>
                        <tbody>{ for rows }</tbody>
                    </table>
                </div>
                <p class="note">{ ctx.linked("lesson.choosing.table_note") }</p>
                <p class="note">
                    <a href={format!("#/learn/vram?lang={lang}&p={}&w={}&mode={}", urlish(&p_text), w, mode)}>{ ctx.t("lesson.choosing.full_budget") }</a>
                </p>
            </section>
            { form::corrections(&ctx, &["lesson.choosing.fc09", "lesson.choosing.fc13", "lesson.choosing.fc27", "lesson.choosing.fc05", "lesson.choosing.fc33", "lesson.choosing.fc39"]) }
            { form::try_it(&ctx, "lesson.choosing.try") }
        </div>
    }
}

/// Keeps only characters that are safe in a query value (the target page validates anyway).
fn urlish(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || ".-".contains(*c))
        .take(30)
        .collect()
}

/// A fact-check id of a table row, as a link reading what was checked against the row's
/// source (`lesson.choosing.checked.<id>`), never the bare id.
fn checked(ctx: &Ctx, id: &str) -> Html {
    let words = ctx.t(&format!(
        "lesson.choosing.checked.{}",
        id.to_ascii_lowercase()
    ));
    crate::components::linked(&format!(" · [{words}]({id})"))
}
