//! Lesson `grad-accum`: gradient accumulation and the memory wall. A calculator on the `vram` lesson's LLaMA-7B
//! budget (`lessons::accum` over `lessons::vram`): the effective batch at once against one
//! micro-batch at a time, with links to the VRAM calculator at both batches and to the train
//! view, where the accumulation really runs on the GPU and its CPU twin.

use lessons::accum::{self, AccumError};
use lessons::units::parse_count;
use lessons::vram::{Activations, Budget, Dtype, Optimiser};
use numbers::decimal_bytes;
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, q, text_field};
use crate::components::Ctx;

/// The mean of means (maths, not prose).
const FORMULA: &str = "g = 1/B · Σᵢ ∇ℓᵢ = 1/k · Σⱼ (1/b · Σᵢ∈ⱼ ∇ℓᵢ),  B = k · b";

/// The `vram` lesson's default job: LLaMA-7B-sized training, FP16 weights, Adam, sequence 2048.
fn llama_7b(batch: f64) -> Budget {
    Budget {
        params: 7e9,
        dtype: Dtype::Fp16,
        training: true,
        optimiser: Optimiser::Adam,
        lora: None,
        checkpointing: false,
        activations: Activations::Transformer {
            batch,
            seq: 2048.0,
            layers: 32.0,
            hidden: 4096.0,
            heads: 32.0,
        },
    }
}

fn vram_link(ctx: &Ctx, batch: u64) -> String {
    format!(
        "#/learn/vram?p=7e9&w=fp16&mode=train&opt=adam&act=tf&b={batch}&s=2048&l=32&h=4096&a=32&lang={}",
        ctx.lang.code()
    )
}

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    crate::components::cssom::use_widths();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let (big_text, micro_text) = (q(&ctx, "B", "8"), q(&ctx, "mb", "1"));
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let big = parse_count(&big_text);
    let micro = parse_count(&micro_text);
    if big.is_none() {
        errors.push(("B", ctx.t("lesson.common.err.whole").into()));
    }
    if micro.is_none() {
        errors.push(("mb", ctx.t("lesson.common.err.whole").into()));
    }
    let plan = match (big, micro) {
        (Some(b), Some(m)) => match accum::plan(b, m) {
            Ok(p) => Some(p),
            Err(AccumError::Effective) => {
                errors.push(("B", ctx.t("lesson.grad-accum.err.effective").into()));
                None
            }
            Err(AccumError::Micro) => {
                errors.push(("mb", ctx.t("lesson.grad-accum.err.micro").into()));
                None
            }
            Err(AccumError::NotADivisor) => {
                errors.push(("mb", ctx.t("lesson.grad-accum.err.divisor").into()));
                None
            }
        },
        _ => None,
    };
    let memory = plan.and_then(|p| accum::memory(&llama_7b(1.0), &p).ok().map(|m| (p, m)));
    let err = |key: &str| form::field_error(&errors, key);

    let output = match memory {
        None => html! {
            <p class="message error" role="alert" data-accum="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p>
        },
        Some((p, (whole, micro))) => {
            let bar = |label: String, bytes: f64, class: &'static str| {
                let pct = (bytes / whole.total() * 100.0).clamp(0.0, 100.0);
                html! {
                    <div class="accum-bar">
                        <span class="accum-bar-label">{ label }</span>
                        <span class="accum-bar-track">
                            <span class={classes!("accum-bar-fill", class)} data-width-pct={format!("{pct:.2}")}></span>
                        </span>
                        <span class="accum-bar-value">{ decimal_bytes(bytes) }</span>
                    </div>
                }
            };
            html! {
                <div class="accum-result" data-accum="ok"
                    data-k={p.steps.to_string()}
                    data-whole={format!("{:.0}", whole.total())}
                    data-micro={format!("{:.0}", micro.total())}>
                    <p class="total">{ ctx.tf("lesson.grad-accum.result", &[
                        ("k", &p.steps.to_string()),
                        ("micro", &p.micro.to_string()),
                        ("effective", &p.effective.to_string()),
                    ]) }</p>
                    { bar(ctx.tf("lesson.grad-accum.bar.whole", &[("b", &p.effective.to_string())]), whole.total(), "whole") }
                    { bar(ctx.tf("lesson.grad-accum.bar.micro", &[("b", &p.micro.to_string())]), micro.total(), "micro") }
                    <ul class="result-parts">
                        <li>{ ctx.tf("lesson.grad-accum.states", &[("bytes", &decimal_bytes(whole.total() - whole.activations))]) }</li>
                        <li>{ ctx.tf("lesson.grad-accum.acts", &[
                            ("whole", &decimal_bytes(whole.activations)),
                            ("micro", &decimal_bytes(micro.activations)),
                        ]) }</li>
                        <li>{ ctx.tf("lesson.grad-accum.cost", &[("k", &p.steps.to_string())]) }</li>
                    </ul>
                    <p class="note">
                        { ctx.t("lesson.grad-accum.vram_links") }{ " " }
                        <a id="accum-vram-whole" href={vram_link(&ctx, p.effective)}>{ ctx.tf("lesson.grad-accum.vram_at", &[("b", &p.effective.to_string())]) }</a>
                        { " · " }
                        <a id="accum-vram-micro" href={vram_link(&ctx, p.micro)}>{ ctx.tf("lesson.grad-accum.vram_at", &[("b", &p.micro.to_string())]) }</a>
                    </p>
                </div>
            }
        }
    };

    html! {
        <div class="lesson-body lb ld">
            <p class="lead">{ ctx.t("lesson.grad-accum.lead") }</p>
            <p>{ ctx.t("lesson.grad-accum.p1") }</p>
            <p>{ ctx.t("lesson.grad-accum.p2") }</p>
            <p class="formula"><code>{ FORMULA }</code></p>
            <p>{ ctx.t("lesson.grad-accum.p3") }</p>
            <section class="panel calc" id="accum-calc" aria-labelledby="accum-calc-h">
                <h2 id="accum-calc-h">{ ctx.t("lesson.grad-accum.calc") }</h2>
                <p>{ ctx.t("lesson.grad-accum.calc_intro") }</p>
                <div class="fields">
                    { text_field(&ctx, &nav, "B", ctx.t("lesson.grad-accum.f.effective"), big_text, err("B")) }
                    { text_field(&ctx, &nav, "mb", ctx.t("lesson.grad-accum.f.micro"), micro_text, err("mb")) }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
            </section>
            <h2>{ ctx.t("lesson.grad-accum.train_heading") }</h2>
            <p>{ ctx.t("lesson.grad-accum.train_p") }</p>
            <p>
                <a id="accum-train-link" class="button" href={format!("#/train?data=spiral&batch=8&accum=4&lang={}", ctx.lang.code())}>{ ctx.t("lesson.grad-accum.train_link") }</a>
            </p>
            <p>{ ctx.t("lesson.grad-accum.twin") }</p>
            { form::corrections(&ctx, &["lesson.grad-accum.fc130", "lesson.grad-accum.fc48"]) }
            { form::try_it(&ctx, "lesson.grad-accum.try") }
        </div>
    }
}
