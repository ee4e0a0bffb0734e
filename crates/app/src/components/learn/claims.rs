//! Lesson `claims`: the headline claims. What each of the articles' big ratios measures and leaves
//! out, a matmul-time calculator (`lessons::claims`), and a link to the race that measures the
//! last claim on the visitor's machine.

use lessons::claims::{self, ClaimError};
use lessons::units::{parse_count, parse_number};
use numbers::{binary_bytes, duration, number};
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, q, text_field};
use crate::components::Ctx;

/// The four claims: (id for tests, heading key, measures key, leaves-out key, verdict key).
const CLAIMS: [(&str, &str, &str, &str, &str); 4] = [
    (
        "alexnet",
        "lesson.claims.alexnet.h",
        "lesson.claims.alexnet.measures",
        "lesson.claims.alexnet.omits",
        "lesson.claims.alexnet.verdict",
    ),
    (
        "resnet",
        "lesson.claims.resnet.h",
        "lesson.claims.resnet.measures",
        "lesson.claims.resnet.omits",
        "lesson.claims.resnet.verdict",
    ),
    (
        "openmm",
        "lesson.claims.openmm.h",
        "lesson.claims.openmm.measures",
        "lesson.claims.openmm.omits",
        "lesson.claims.openmm.verdict",
    ),
    (
        "matmul",
        "lesson.claims.matmul.h",
        "lesson.claims.matmul.measures",
        "lesson.claims.matmul.omits",
        "lesson.claims.matmul.verdict",
    ),
];

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let n_text = q(&ctx, "n", "4096");
    let cpu_text = q(&ctx, "cpu", "100");
    let gpu_text = q(&ctx, "gpu", "10000");
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let n = parse_count(&n_text).filter(|n| *n > 0);
    if n.is_none() {
        errors.push(("n", ctx.t("lesson.common.err.whole").into()));
    }
    let rate = |key: &'static str, text: &str, errors: &mut Vec<(&'static str, String)>| {
        match parse_number(text) {
            Some(v) if v > 0.0 && v <= claims::MAX_GFLOPS => Some(v),
            // Too large is named at the field it was typed in, not at the GPU's.
            Some(v) if v > 0.0 => {
                errors.push((key, ctx.t("lesson.common.err.too_large").into()));
                None
            }
            Some(_) => {
                errors.push((key, ctx.t("lesson.common.err.positive").into()));
                None
            }
            None => {
                errors.push((key, ctx.t("lesson.common.err.number").into()));
                None
            }
        }
    };
    let cpu = rate("cpu", &cpu_text, &mut errors);
    let gpu = rate("gpu", &gpu_text, &mut errors);
    let result = match (n, cpu, gpu) {
        (Some(n), Some(c), Some(g)) => match claims::speedup(n, c, g) {
            Ok(r) => Some((n, r)),
            Err(ClaimError::Size) => {
                errors.push(("n", ctx.t("lesson.common.err.too_large").into()));
                None
            }
            Err(ClaimError::Rate) => {
                errors.push(("gpu", ctx.t("lesson.common.err.too_large").into()));
                None
            }
        },
        _ => None,
    };
    let err = |key: &str| form::field_error(&errors, key);
    let output = match result {
        None => html! {
            <p class="message error" role="alert" data-ratio="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p>
        },
        Some((n, (cpu_s, gpu_s, ratio))) => {
            let flops = claims::matmul_flops(n).unwrap_or(0.0);
            html! {
                <>
                    <p class="total" data-ratio={format!("{ratio:.6}")}>
                        { ctx.tf(if ratio >= 1.0 { "lesson.claims.result" } else { "lesson.claims.result_slower" }, &[
                            ("n", &n.to_string()),
                            ("flops", &number(flops)),
                            ("cpu", &duration(cpu_s)),
                            ("gpu", &duration(gpu_s)),
                            ("ratio", &number(if ratio >= 1.0 { ratio } else { 1.0 / ratio })),
                        ]) }
                    </p>
                    <p>{ ctx.tf("lesson.claims.bytes", &[("bytes", &binary_bytes(claims::matmul_min_bytes(n, 4.0)))]) }</p>
                </>
            }
        }
    };
    let lang = ctx.lang.code();
    html! {
        <div class="lesson-body lb">
            <p class="lead">{ ctx.t("lesson.claims.lead") }</p>
            <div class="claim-cards">
                { for CLAIMS.iter().map(|(id, h, measures, omits, verdict)| html! {
                    <section class="claim-card" data-claim={*id}>
                        <h2>{ ctx.t(h) }</h2>
                        <p><strong>{ ctx.t("lesson.claims.measures") }</strong>{ ctx.linked(measures) }</p>
                        <p><strong>{ ctx.t("lesson.claims.omits") }</strong>{ ctx.t(omits) }</p>
                        <p class="verdict">{ ctx.t(verdict) }</p>
                    </section>
                }) }
            </div>

            <section class="panel calc" id="claim-calc" aria-labelledby="claim-calc-h">
                <h2 id="claim-calc-h">{ ctx.t("lesson.claims.calc") }</h2>
                <p>{ ctx.t("lesson.claims.calc_intro") }</p>
                <div class="fields">
                    { text_field(&ctx, &nav, "n", ctx.t("lesson.claims.f.n"), n_text.clone(), err("n")) }
                    { text_field(&ctx, &nav, "cpu", ctx.t("lesson.claims.f.cpu"), cpu_text.clone(), err("cpu")) }
                    { text_field(&ctx, &nav, "gpu", ctx.t("lesson.claims.f.gpu"), gpu_text.clone(), err("gpu")) }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.t("lesson.claims.rates_note") }</p>
                <p><a class="button primary" href={format!("#/race?view=claim&lang={lang}")}>{ ctx.t("lesson.claims.race_link") }</a></p>
            </section>

            <h2>{ ctx.t("lesson.claims.checklist_heading") }</h2>
            <ul>
                <li>{ ctx.t("lesson.claims.check.precision") }</li>
                <li>{ ctx.t("lesson.claims.check.baseline") }</li>
                <li>{ ctx.t("lesson.claims.check.timed") }</li>
                <li>{ ctx.t("lesson.claims.check.size") }</li>
                <li>{ ctx.t("lesson.claims.check.verified") }</li>
            </ul>
            { form::try_it(&ctx, "lesson.claims.try") }
        </div>
    }
}
