//! Lesson `precision` — Tensor Cores and mixed precision: what FP32, TF32, FP16 and BF16
//! trade (computed by `lessons::precision`), a number rounded to each, the error f16 inputs
//! cause in a matmul (CPU always; GPU speed where `shader-f16` exists), and the AMP snippet.

use cpu_kernels::data::{f16_bits_to_f32, f32_to_f16_bits};
use cpu_kernels::matmul::{self, MatmulSize};
use gpu_runtime::{run_matmul_verified, RunOptions};
use lessons::precision::{Format, TypedError, FORMATS};
use yew::prelude::*;

use page_models::diagram::{pitch, text_width};

use super::kit::{self as common, Phase};
use crate::components::chart_width::use_drawn_width;
use crate::components::Ctx;
use crate::session;

const MAX_N: u32 = 256;
const F32_STAGE: &str = "matmul-blocktile-2d";
const F16_STAGE: &str = "matmul-f16";

/// The AMP example from the source article, as code (each line explained below it).
const AMP_LINES: [&str; 7] = [
    "scaler = GradScaler()",
    "with autocast():",
    "    output = model(input)",
    "    loss = loss_fn(output, target)",
    "scaler.scale(loss).backward()",
    "scaler.step(optimizer)",
    "scaler.update()",
];
const AMP_KEYS: [&str; 7] = [
    "lesson.precision.amp.1",
    "lesson.precision.amp.2",
    "lesson.precision.amp.3",
    "lesson.precision.amp.4",
    "lesson.precision.amp.5",
    "lesson.precision.amp.6",
    "lesson.precision.amp.7",
];

#[derive(Clone, Debug, PartialEq)]
struct ErrorResult {
    n: u32,
    /// Largest |C(f16 inputs) − C(f32 inputs)| / Σ|a·b| over the elements.
    cpu_max_rel: f64,
    cpu_mean_rel: f64,
    /// GPU: (f32 ms, f16 ms, f16 stage's own max relative error) where shader-f16 exists.
    gpu: Option<(f64, f64, f64)>,
}

fn f16_round(v: &[f32]) -> Vec<f32> {
    v.iter()
        .map(|&x| f16_bits_to_f32(f32_to_f16_bits(x)))
        .collect()
}

/// Relative error of the product when A and B are first rounded to f16 (sums exact in f64).
fn cpu_error(n: u32) -> (f64, f64) {
    let size = MatmulSize::new(n, n, n);
    let (a, b) = size.inputs(1);
    let exact = matmul::reference(size, &a, &b);
    let rounded = matmul::reference(size, &f16_round(&a), &f16_round(&b));
    let mut max: f64 = 0.0;
    let mut sum = 0.0;
    for i in 0..exact.value.len() {
        let scale = exact.magnitude[i].max(f64::MIN_POSITIVE);
        let e = (rounded.value[i] - exact.value[i]).abs() / scale;
        max = max.max(e);
        sum += e;
    }
    (max, sum / exact.value.len().max(1) as f64)
}

/// A stored value with enough digits to show how it differs from what was typed.
fn stored(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        sig(x)
    } else if (1e-4..1e7).contains(&x.abs()) {
        let s = format!("{x:.10}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.9e}")
    }
}

fn sig(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !x.is_finite() {
        "∞".into()
    } else if (1e-4..1e5).contains(&x.abs()) {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.3e}")
    }
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let n_text = use_state(|| "128".to_string());
    let phase = common::use_measure::<ErrorResult>();
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let webgpu = common::gpu_gate(&ctx);
    let software = matches!(webgpu, Ok(true));
    let has_f16 = webgpu.is_ok() && common::adapter_has(&ctx, "shader-f16");

    // f16 inputs in a matmul.
    let n = common::parse_in(&n_text, 1, MAX_N);
    let n_error = n
        .as_ref()
        .err()
        .map(|k| common::parse_message(&ctx, k, 1, MAX_N));
    let onclick = {
        let phase = phase.clone();
        let n = n.clone().ok();
        Callback::from(move |_| {
            let Some(n) = n else {
                return;
            };
            let total = if has_f16 { 2 } else { 1 };
            let reporting: common::Reporting<ErrorResult> = ("precision", |r| {
                use page_models::embed::Field;
                let mut f = vec![
                    ("n", Field::Num(r.n as f64)),
                    ("cpuMaxRelError", Field::Num(r.cpu_max_rel)),
                    ("cpuMeanRelError", Field::Num(r.cpu_mean_rel)),
                ];
                if let Some((f32_ms, f16_ms, f16_err)) = r.gpu {
                    f.push(("gpuF32Ms", Field::Num(f32_ms)));
                    f.push(("gpuF16Ms", Field::Num(f16_ms)));
                    f.push(("gpuF16MaxRelError", Field::Num(f16_err)));
                }
                f
            });
            common::measure(&phase, total, Some(reporting), move |p| async move {
                common::yield_to_browser().await;
                let (cpu_max_rel, cpu_mean_rel) = cpu_error(n);
                p.set(1)?;
                let gpu = if has_f16 {
                    let (gpu, _) = session::gpu(software).await?;
                    let size = MatmulSize::new(n, n, n);
                    let opts = RunOptions {
                        warmup: 1,
                        repetitions: 3,
                    };
                    let k32 = gpu_runtime::kernel(F32_STAGE)
                        .ok_or_else(|| gpu_runtime::GpuError::Shader(F32_STAGE.into()))?;
                    let k16 = gpu_runtime::kernel(F16_STAGE)
                        .ok_or_else(|| gpu_runtime::GpuError::Shader(F16_STAGE.into()))?;
                    let a = run_matmul_verified(&gpu, k32, size, 1, &opts).await?;
                    let b = run_matmul_verified(&gpu, k16, size, 1, &opts).await?;
                    Some((
                        a.timing.kernel_ms(),
                        b.timing.kernel_ms(),
                        b.verdict.max_rel_error,
                    ))
                } else {
                    None
                };
                Ok(ErrorResult {
                    n,
                    cpu_max_rel,
                    cpu_mean_rel,
                    gpu,
                })
            });
        })
    };
    let running = phase.running();
    let f16_reason = match &webgpu {
        Err(_) => ctx.t("lesson.precision.gpu_no_webgpu"),
        Ok(_) if !has_f16 => ctx.t("lesson.precision.gpu_no_f16"),
        Ok(_) => "",
    };
    let result = f16_result(&ctx, &phase, f16_reason);
    html! {
        <>
            { common::paras(&ctx, &["lesson.precision.p1", "lesson.precision.p2"]) }
            <BitLayout />
            { formats_table(&ctx) }
            <p class="note">{ ctx.t("lesson.precision.table_note") }</p>
            { common::correction(&ctx, "lesson.precision.fc_624") }
            { common::correction(&ctx, "lesson.precision.fc_tf32") }
            <Rounding />
            <section class="panel widget" data-widget="f16-error">
                <h2>{ ctx.t("lesson.precision.widget") }</h2>
                <p>{ ctx.t("lesson.precision.widget_intro") }</p>
                { common::number_field(&ctx, "f16-n", "lesson.precision.n", &n_text, n_error, common::text_setter(&n_text)) }
                <button type="button" class="button primary measure" disabled={running || n.is_err()} {onclick}>
                    { ctx.t(if running { "lesson.common.measuring" } else { "lesson.common.measure" }) }
                </button>
                { common::cancel_button(&ctx, &phase) }
                if !f16_reason.is_empty() && !matches!(*phase, Phase::Done(_)) {
                    <p class="note">{ f16_reason }</p>
                }
                <div class="widget-result" aria-live="polite" data-state={phase.name()} data-probe={common::probe_state(&ctx)}>{ result }</div>
            </section>
            { common::h2(&ctx, "lesson.precision.h_amp") }
            { common::paras(&ctx, &["lesson.precision.p3"]) }
            <ol class="amp-lines">
                { for AMP_LINES.iter().zip(AMP_KEYS).map(|(code, key)| html! {
                    <li><pre><code>{ *code }</code></pre><p>{ ctx.t(key) }</p></li>
                }) }
            </ol>
            { common::correction(&ctx, "lesson.precision.fc_amp") }
            { common::try_it(&ctx, "lesson.precision.try", Some(("kernels?stage=matmul-f16", "lesson.precision.try_link"))) }
        </>
    }
}

/// The formats' ranges and precision, computed from their bit counts.
fn formats_table(ctx: &Ctx) -> Html {
    html! {
        <div class="table-scroll"><table class="facts formats">
            <thead><tr>
                <th scope="col">{ ctx.t("lesson.precision.col.format") }</th>
                <th scope="col">{ ctx.t("lesson.precision.col.bits") }</th>
                <th scope="col">{ ctx.t("lesson.precision.col.max") }</th>
                <th scope="col">{ ctx.t("lesson.precision.col.min") }</th>
                <th scope="col">{ ctx.t("lesson.precision.col.eps") }</th>
                <th scope="col">{ ctx.t("lesson.precision.col.digits") }</th>
            </tr></thead>
            <tbody>
            { for FORMATS.iter().map(|f| html! {
                <tr data-format={f.name}>
                    <th scope="row">{ f.name }</th>
                    <td>{ ctx.tf("lesson.precision.bits", &[("s", "1"), ("e", &f.exponent_bits.to_string()), ("m", &f.mantissa_bits.to_string())]) }</td>
                    <td>{ sig(f.max()) }</td>
                    <td>{ sig(f.min_normal()) }</td>
                    <td class="eps">{ sig(f.epsilon()) }</td>
                    <td>{ format!("{:.1}", f.decimal_digits()) }</td>
                </tr>
            }) }
            </tbody>
        </table></div>
    }
}

/// Round a typed number to each format: what is stored and the relative error.
#[function_component]
fn Rounding() -> Html {
    let ctx = use_context::<Ctx>();
    let number = use_state(|| "0.1".to_string());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let parsed: Result<f64, &'static str> =
        lessons::precision::parse_typed(&number).map_err(|e| match e {
            TypedError::Empty => "lesson.precision.round.empty",
            TypedError::NotANumber => "lesson.precision.round.not_number",
            TypedError::NaN => "lesson.precision.round.nan",
            TypedError::Infinite => "lesson.precision.round.infinite",
            TypedError::TooLarge => "lesson.precision.round.too_big",
        });
    let round_rows = match parsed {
        Ok(x) => html! {
            <table class="facts rounding">
                <thead><tr>
                    <th scope="col">{ ctx.t("lesson.precision.col.format") }</th>
                    <th scope="col">{ ctx.t("lesson.precision.round.stored") }</th>
                    <th scope="col">{ ctx.t("lesson.precision.round.error") }</th>
                </tr></thead>
                <tbody>
                { for FORMATS.iter().map(|f: &Format| {
                    let r = f.round(x);
                    let err = if r.is_infinite() {
                        ctx.t("lesson.precision.round.overflow").to_string()
                    } else if x == 0.0 {
                        "0".into()
                    } else {
                        format!("{} %", sig(((r - x) / x).abs() * 100.0))
                    };
                    html! { <tr data-format={f.name}><th scope="row">{ f.name }</th><td class="stored">{ stored(r) }</td><td>{ err }</td></tr> }
                }) }
                </tbody>
            </table>
        },
        Err(_) => html! {},
    };
    let round_error = parsed.err().map(|k| ctx.t(k).to_string());

    html! {
        <section class="panel widget" data-widget="rounding">
            <h2>{ ctx.t("lesson.precision.round.heading") }</h2>
            <div class={classes!("field", round_error.is_some().then_some("invalid"))}>
                <label for="round-input">{ ctx.t("lesson.precision.round.label") }</label>
                <input id="round-input" type="text" inputmode="decimal" autocomplete="off" value={(*number).clone()}
                    oninput={common::text_setter(&number)} aria-invalid={round_error.is_some().to_string()} aria-describedby="round-input-error" />
                <p id="round-input-error" class="field-error" role="alert">{ round_error.unwrap_or_default() }</p>
            </div>
            { round_rows }
        </section>
    }
}

/// The f16 widget's result: progress, the error, or the measured table.
fn f16_result(ctx: &Ctx, phase: &Phase<ErrorResult>, f16_reason: &str) -> Html {
    match phase {
        Phase::Idle => html! {},
        Phase::Running { done, total } => html! {
            <p class="status checking"><progress max={total.to_string()} value={done.to_string()}></progress>
            { " " }{ ctx.tf("lesson.common.progress", &[("done", &done.to_string()), ("total", &total.to_string())]) }</p>
        },
        Phase::Cancelled => common::cancelled_note(ctx),
        Phase::Failed(e) => {
            html! { <p class="message error" role="alert">{ ctx.tf("lesson.common.failed", &[("error", e)]) }</p> }
        }
        Phase::Lost(e) => {
            html! { <p class="message error" role="alert" data-lost="true">{ ctx.tf("lesson.common.lost", &[("error", e)]) }</p> }
        }
        Phase::Done(r) => html! {
            <>
                <table class="facts">
                    <tr><th scope="row">{ ctx.t("lesson.precision.cpu_max") }</th>
                        <td class="cpu-error" data-value={r.cpu_max_rel.to_string()}>{ numbers::sci(r.cpu_max_rel) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.precision.cpu_mean") }</th><td>{ numbers::sci(r.cpu_mean_rel) }</td></tr>
                    { for r.gpu.map(|(t32, t16, e16)| html! {
                        <>
                            <tr><th scope="row">{ ctx.t("lesson.precision.gpu_f32") }</th><td>{ format!("{} ms", numbers::ms(t32)) }</td></tr>
                            <tr><th scope="row">{ ctx.t("lesson.precision.gpu_f16") }</th><td>{ format!("{} ms", numbers::ms(t16)) }</td></tr>
                            <tr><th scope="row">{ ctx.t("lesson.precision.gpu_f16_err") }</th><td>{ numbers::sci(e16) }</td></tr>
                        </>
                    }) }
                </table>
                <p class="note">{ ctx.tf("lesson.precision.cpu_note", &[("n", &r.n.to_string()), ("eps", &sig(lessons::precision::FP16.epsilon()))]) }</p>
                if r.gpu.is_none() {
                    <p class="message unavailable" data-f16-unavailable="true">{ f16_reason }</p>
                }
            </>
        },
    }
}

/// Sign, exponent and mantissa bits of each format, to scale. Drawn at its rendered width: a
/// bit is 17 px wide where 32 fit, less on a phone.
#[function_component]
fn BitLayout() -> Html {
    let ctx = use_context::<Ctx>();
    let (node, w) = use_drawn_width(640.0, common::DIAGRAM_MIN_W);
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let x0 = FORMATS
        .iter()
        .map(|f| text_width(f.name, common::LABEL_PX))
        .fold(0.0, f64::max)
        + 12.0;
    let unit = pitch(w - x0 - 4.0, 32, 17.0);
    let h = 10.0 + FORMATS.len() as f64 * 34.0;
    html! {
        <figure class="diagram">
            <svg ref={node} viewBox={format!("0 0 {w:.1} {h}")} role="img" aria-label={ctx.t("lesson.precision.diagram_alt")}>
                { for FORMATS.iter().enumerate().map(|(row, f)| {
                    let y = 10.0 + row as f64 * 34.0;
                    let e_w = f.exponent_bits as f64 * unit;
                    let m_w = f.mantissa_bits as f64 * unit;
                    html! {
                        <g>
                            <text x="4" y={(y + 17.0).to_string()} class="svg-label">{ f.name }</text>
                            <rect x={format!("{x0:.1}")} y={y.to_string()} width={format!("{unit:.1}")} height="24" class="bit sign" />
                            <rect x={format!("{:.1}", x0 + unit)} y={y.to_string()} width={format!("{e_w:.1}")} height="24" class="bit exp" />
                            <rect x={format!("{:.1}", x0 + unit + e_w)} y={y.to_string()} width={format!("{m_w:.1}")} height="24" class="bit man" />
                            <text x={format!("{:.1}", x0 + unit + e_w / 2.0)} y={(y + 17.0).to_string()} class="svg-small" text-anchor="middle">{ f.exponent_bits.to_string() }</text>
                            <text x={format!("{:.1}", x0 + unit + e_w + m_w / 2.0)} y={(y + 17.0).to_string()} class="svg-small" text-anchor="middle">{ f.mantissa_bits.to_string() }</text>
                        </g>
                    }
                }) }
            </svg>
            <figcaption>{ ctx.t("lesson.precision.diagram_caption") }</figcaption>
        </figure>
    }
}
