//! Lesson "conv": convolution and CNNs. What a conv layer computes and costs, why it suits a
//! GPU (independent outputs, and it is a matmul), AlexNet's layers computed from their shapes
//! (`lessons::cnn`), and what its training run implies about its two GTX 580s. Text: `lesson.conv.*`
//! in `locales/<lang>/lesson-conv.txt`; claims cite `docs/fact-check.md` (FC-44, FC-44a…).

use lessons::cnn::{self, LayerCost, ALEXNET, ALEXNET_INPUT, GTX580_PEAK_FLOPS};
use lessons::units::parse_number;
use numbers::number;
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, q, text_field};
use crate::components::Ctx;
use numbers::count;

/// The convolution written out (a formula, not prose).
const FORMULA: &str =
    "y[p, q, k] = Σ_{r, s, c} w[r, s, c, k] · x[p·stride + r·dil − pad, q·stride + s·dil − pad, c]";

/// The calculator's fields: (URL key, label key, default).
const FIELDS: [(&str, &str, &str); 5] = [
    ("images", "lesson.conv.f.images", "1.2M"),
    ("epochs", "lesson.conv.f.epochs", "90"),
    ("days", "lesson.conv.f.days", "5.5"),
    ("gpus", "lesson.conv.f.gpus", "2"),
    ("peak", "lesson.conv.f.peak", "1.581"),
];

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let costs = cnn::costs(ALEXNET_INPUT, &ALEXNET).unwrap_or_default();
    let total_params: u64 = costs.iter().map(|l| l.params).sum();
    let total_macs: u64 = costs.iter().map(|l| l.macs).sum();
    let conv_macs: u64 = costs.iter().take(5).map(|l| l.macs).sum();
    let conv_params: u64 = costs.iter().take(5).map(|l| l.params).sum();
    let pct = |a: u64, b: u64| numbers::percent(a as f64 / b.max(1) as f64);

    let texts: Vec<String> = FIELDS.iter().map(|(k, _, d)| q(&ctx, k, d)).collect();
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let values: Vec<Option<f64>> = FIELDS
        .iter()
        .zip(&texts)
        .map(|(&(key, _, _), text)| match parse_number(text) {
            Some(v) if v > 0.0 && v.is_finite() && v < 1e15 => Some(v),
            Some(_) => {
                errors.push((key, ctx.t("lesson.common.err.positive").into()));
                None
            }
            None => {
                errors.push((key, ctx.t("lesson.common.err.number").into()));
                None
            }
        })
        .collect();
    let result = match values[..] {
        [Some(images), Some(epochs), Some(days), Some(gpus), Some(peak)] => {
            let flops = cnn::training_flops(total_macs, images, epochs);
            cnn::implied_rate(flops, days, gpus, peak * 1e12).map(|r| (flops, r))
        }
        _ => None,
    };
    let output = match result {
        None => {
            html! { <p class="message error" role="alert" id="conv-calc-result" data-share="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p> }
        }
        Some((flops, (rate, share))) => html! {
            <p class="total" id="conv-calc-result" data-flops={format!("{flops:e}")} data-share={format!("{share:.6}")}>
                { ctx.tf("lesson.conv.calc.result", &[
                    ("flops", &number(flops)),
                    ("rate", &numbers::number(rate / 1e12)),
                    ("share", &format!("{:.0}", share * 100.0)),
                ]) }
            </p>
        },
    };
    let row = |l: &LayerCost| {
        let (h, w, c) = l.out;
        html! {
            <tr data-layer={l.name}>
                <th scope="row">{ l.name }</th>
                <td>{ format!("{h}×{w}×{c}") }</td>
                <td class="num" data-params={l.params.to_string()}>{ count(l.params) }</td>
                <td class="num" data-macs={l.macs.to_string()}>{ count(l.macs) }</td>
                <td class="num">{ format!("{}%", pct(l.macs, total_macs)) }</td>
            </tr>
        }
    };
    let err = |key: &str| form::field_error(&errors, key);
    let lang = ctx.lang.code();
    html! {
        <div class="lesson-body lb">
            <p class="lead">{ ctx.t("lesson.conv.lead") }</p>
            <h2>{ ctx.t("lesson.conv.what_h") }</h2>
            <p>{ ctx.t("lesson.conv.what") }</p>
            <p class="formula"><code>{ FORMULA }</code></p>
            <p>{ ctx.t("lesson.conv.cost") }</p>
            <h2>{ ctx.t("lesson.conv.gpu_h") }</h2>
            <p>{ ctx.t("lesson.conv.gpu") }</p>
            <p>{ ctx.t("lesson.conv.field") }</p>
            <p><a class="button primary" href={format!("#/conv?lang={lang}")}>{ ctx.t("lesson.conv.page_link") }</a></p>

            <h2>{ ctx.t("lesson.conv.alexnet_h") }</h2>
            <p>{ ctx.linked("lesson.conv.alexnet") }</p>
            <div class="table-scroll">
                <table class="data alexnet" id="alexnet-table">
                    <caption>{ ctx.t("lesson.conv.table.caption") }</caption>
                    <thead><tr>
                        <th scope="col">{ ctx.t("lesson.conv.table.layer") }</th>
                        <th scope="col">{ ctx.t("lesson.conv.table.out") }</th>
                        <th scope="col">{ ctx.t("lesson.conv.table.params") }</th>
                        <th scope="col">{ ctx.t("lesson.conv.table.macs") }</th>
                        <th scope="col">{ ctx.t("lesson.conv.table.share") }</th>
                    </tr></thead>
                    <tbody>{ for costs.iter().map(row) }</tbody>
                    <tfoot><tr>
                        <th scope="row">{ ctx.t("lesson.conv.table.total") }</th>
                        <td></td>
                        <td class="num" id="alexnet-params" data-params={total_params.to_string()}>{ count(total_params) }</td>
                        <td class="num" id="alexnet-macs" data-macs={total_macs.to_string()}>{ count(total_macs) }</td>
                        <td class="num">{ format!("{}%", pct(total_macs, total_macs)) }</td>
                    </tr></tfoot>
                </table>
            </div>
            <p>{ ctx.tf("lesson.conv.table.reading", &[
                ("conv_macs", &pct(conv_macs, total_macs)),
                ("conv_params", &pct(conv_params, total_params)),
                ("params", &count(total_params)),
            ]) }</p>

            <section class="panel calc" id="conv-calc" aria-labelledby="conv-calc-h">
                <h2 id="conv-calc-h">{ ctx.t("lesson.conv.calc") }</h2>
                <p>{ ctx.tf("lesson.conv.calc_intro", &[("macs", &count(total_macs)), ("peak", &format!("{:.3}", GTX580_PEAK_FLOPS / 1e12))]) }</p>
                <div class="fields">
                    { for FIELDS.iter().zip(&texts).map(|(&(key, label, _), text)| text_field(&ctx, &nav, key, ctx.t(label), text.clone(), err(key))) }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.linked("lesson.conv.calc_note") }</p>
            </section>

            { form::corrections(&ctx, &["lesson.conv.fc.gpus", "lesson.conv.fc.ratio", "lesson.conv.fc.shape"]) }
            <h2>{ ctx.t("lesson.conv.cnn_h") }</h2>
            <p>{ ctx.t("lesson.conv.cnn") }</p>
            <p><a id="lesson-cnn-link" class="button primary" href={format!("#/cnn?lang={lang}")}>{ ctx.t("lesson.conv.cnn_link") }</a></p>
            { form::try_it(&ctx, "lesson.conv.try") }
        </div>
    }
}
