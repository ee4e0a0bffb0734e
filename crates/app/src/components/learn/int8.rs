//! Lesson `int8` — quantisation for deployment. The same matmul in f32, INT8 (packed 4×8-bit
//! dot products, `int8-matmul`) and f16 on the learner's GPU: time and error side by side, the
//! per-tensor scales shown, the INT8 result checked against the CPU's exact integer product.
//! Without the WGSL language feature the CPU computes the quantised product and says why.

use cpu_kernels::data::{f16_bits_to_f32, f32_to_f16_bits};
use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::quant;
use gpu_runtime::numeric::{self, INT8_LANGUAGE_FEATURE};
use gpu_runtime::{run_matmul_verified, GpuError, RunOptions};
use yew::prelude::*;

use super::kit as common;
use crate::components::Ctx;
use crate::session;

const MIN_N: u32 = 16;
const MAX_N: u32 = 512;
const SEED: u64 = 1;
/// Like-for-like pairs: INT8 has the tiled stage's structure, f16 the 2-D block-tiled one's.
const F32_TILED: &str = "matmul-tiled";
const F32_BLOCK: &str = "matmul-blocktile-2d";
const F16_BLOCK: &str = "matmul-f16";

/// One row of the result table.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    /// "f32-tiled", "int8", "f32-block", "f16".
    id: &'static str,
    /// GPU time of one run (ms), when measured.
    ms: Option<f64>,
    /// Largest |C − exact| / Σ|a·b|.
    err: f64,
    /// Where the error comes from: "gpu" or "cpu".
    err_src: &'static str,
}

#[derive(Clone, Debug, PartialEq)]
struct Result_ {
    n: u32,
    scale_a: f32,
    scale_b: f32,
    max_a: f32,
    max_b: f32,
    /// The first few values of A's first row: x, q, q · scale.
    sample: Vec<(f32, i8, f32)>,
    bound: f64,
    rows: Vec<Row>,
    /// INT8 on the GPU equal to the CPU's integer product, element for element (None: not run).
    int8_exact: Option<bool>,
    /// Why INT8 or f16 did not run on the GPU.
    int8_missing: Option<&'static str>,
    f16_missing: Option<&'static str>,
}

fn f16_error(size: MatmulSize, a: &[f32], b: &[f32], exact: &matmul::Reference) -> f64 {
    let r = |v: &[f32]| -> Vec<f32> {
        v.iter()
            .map(|&x| f16_bits_to_f32(f32_to_f16_bits(x)))
            .collect()
    };
    let got = matmul::reference(size, &r(a), &r(b));
    quant::rel_errors(&got.value, exact).0
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let n_text = use_state(|| "256".to_string());
    let phase = common::use_measure::<Result_>();
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let webgpu = common::gpu_gate(&ctx);
    let software = matches!(webgpu, Ok(true));
    let has_gpu = webgpu.is_ok();
    let has_f16 = has_gpu && common::adapter_has(&ctx, "shader-f16");
    let has_dp4 = has_gpu && crate::probe::wgsl_language_feature(INT8_LANGUAGE_FEATURE);
    let n = common::parse_in(&n_text, MIN_N, MAX_N);
    let n_error = n
        .as_ref()
        .err()
        .map(|k| common::parse_message(&ctx, k, MIN_N, MAX_N));
    let onclick = {
        let phase = phase.clone();
        let n = n.clone().ok();
        Callback::from(move |_| {
            let Some(n) = n else {
                return;
            };
            let total = 1 + if has_gpu { 2 } else { 0 } + u32::from(has_dp4) + u32::from(has_f16);
            common::measure(&phase, total, None, move |p| async move {
                common::yield_to_browser().await;
                let size = MatmulSize::new(n, n, n);
                let (a, b) = size.inputs(SEED);
                let exact = matmul::reference(size, &a, &b);
                let (qa, qb) = (quant::quantise(&a), quant::quantise(&b));
                let int_c = quant::int_matmul(size, &qa.q, &qb.q);
                let int8_err =
                    quant::rel_errors(&quant::dequantise(&int_c, qa.scale, qb.scale), &exact).0;
                let bound = quant::error_bound(size, &a, &b, qa.scale, qb.scale);
                let f16_cpu = f16_error(size, &a, &b, &exact);
                let mut done = 1;
                p.set(done)?;
                let mut rows = vec![];
                let mut int8_exact = None;
                let int8_missing = if !has_gpu {
                    Some("lesson.int8.missing_webgpu")
                } else if !has_dp4 {
                    Some("lesson.int8.missing_dp4")
                } else {
                    None
                };
                let f16_missing = if !has_gpu {
                    Some("lesson.int8.missing_webgpu")
                } else if !has_f16 {
                    Some("lesson.int8.missing_f16")
                } else {
                    None
                };
                if has_gpu {
                    let r: Result<(), GpuError> = async {
                        let (gpu, _) = session::gpu(software).await?;
                        let opts = RunOptions {
                            warmup: 1,
                            repetitions: 3,
                        };
                        let k = |id: &str| {
                            gpu_runtime::kernel(id).ok_or_else(|| GpuError::Shader(id.into()))
                        };
                        let t = run_matmul_verified(&gpu, k(F32_TILED)?, size, SEED, &opts).await?;
                        rows.push(Row {
                            id: "f32-tiled",
                            ms: Some(t.timing.kernel_ms()),
                            err: t.verdict.max_rel_error,
                            err_src: "gpu",
                        });
                        done += 1;
                        p.set(done)?;
                        if has_dp4 {
                            let (m, kk) = (n as usize, n as usize);
                            let ap = quant::pack_rows(&qa.q, m, kk);
                            let bp = quant::pack_cols(&qb.q, kk, m);
                            let run = numeric::run_int8(&gpu, size, &ap, &bp, &opts, &p.control())
                                .await?;
                            int8_exact = Some(
                                run.output.len() == int_c.len()
                                    && run.output.iter().zip(&int_c).all(|(g, w)| *g as i64 == *w),
                            );
                            rows.push(Row {
                                id: "int8",
                                ms: Some(run.timing.kernel_ms()),
                                err: int8_err,
                                err_src: "gpu",
                            });
                            done += 1;
                            p.set(done)?;
                        } else {
                            rows.push(Row {
                                id: "int8",
                                ms: None,
                                err: int8_err,
                                err_src: "cpu",
                            });
                        }
                        let t = run_matmul_verified(&gpu, k(F32_BLOCK)?, size, SEED, &opts).await?;
                        rows.push(Row {
                            id: "f32-block",
                            ms: Some(t.timing.kernel_ms()),
                            err: t.verdict.max_rel_error,
                            err_src: "gpu",
                        });
                        done += 1;
                        p.set(done)?;
                        if has_f16 {
                            let t =
                                run_matmul_verified(&gpu, k(F16_BLOCK)?, size, SEED, &opts).await?;
                            rows.push(Row {
                                id: "f16",
                                ms: Some(t.timing.kernel_ms()),
                                err: t.verdict.max_rel_error,
                                err_src: "gpu",
                            });
                        } else {
                            rows.push(Row {
                                id: "f16",
                                ms: None,
                                err: f16_cpu,
                                err_src: "cpu",
                            });
                        }
                        Ok(())
                    }
                    .await;
                    r?;
                } else {
                    rows.push(Row {
                        id: "int8",
                        ms: None,
                        err: int8_err,
                        err_src: "cpu",
                    });
                    rows.push(Row {
                        id: "f16",
                        ms: None,
                        err: f16_cpu,
                        err_src: "cpu",
                    });
                }
                let max_abs = |v: &[f32]| v.iter().fold(0f32, |m, x| m.max(x.abs()));
                Ok(Result_ {
                    n,
                    scale_a: qa.scale,
                    scale_b: qb.scale,
                    max_a: max_abs(&a),
                    max_b: max_abs(&b),
                    sample: (0..4.min(a.len()))
                        .map(|i| (a[i], qa.q[i], qa.q[i] as f32 * qa.scale))
                        .collect(),
                    bound,
                    rows,
                    int8_exact,
                    int8_missing,
                    f16_missing,
                })
            });
        })
    };
    let done = |r: &Result_| result_view(&ctx, r, software);
    html! {
        <>
            { common::paras(&ctx, &["lesson.int8.p1", "lesson.int8.p2"]) }
            { common::h2(&ctx, "lesson.int8.h_scale") }
            { common::paras(&ctx, &["lesson.int8.p3"]) }
            <section class="panel widget" data-widget="int8">
                <h2>{ ctx.t("lesson.int8.widget") }</h2>
                <p>{ ctx.t("lesson.int8.widget_intro") }</p>
                <p class="note" data-dp4={has_dp4.to_string()}>
                    { ctx.linked(if has_dp4 { "lesson.int8.dp4_yes" } else if has_gpu { "lesson.int8.missing_dp4" } else { "lesson.int8.missing_webgpu" }) }
                </p>
                { common::number_field(&ctx, "int8-n", "lesson.int8.n", &n_text, n_error, common::text_setter(&n_text)) }
                { common::measure_controls_with(&ctx, &phase, onclick, n.is_ok(), false, done) }
            </section>
            { common::h2(&ctx, "lesson.int8.h_edge") }
            { common::paras(&ctx, &["lesson.int8.p4", "lesson.int8.p5"]) }
            { common::correction(&ctx, "lesson.int8.fc_orin") }
            { common::correction(&ctx, "lesson.int8.fc_retrain") }
            { common::try_it(&ctx, "lesson.int8.try", Some(("learn/precision", "lesson.int8.try_link"))) }
        </>
    }
}

fn result_view(ctx: &Ctx, r: &Result_, software: bool) -> Html {
    let flops = 2.0 * (r.n as f64).powi(3);
    html! {
        <>
            <p class="scales" data-scale-a={r.scale_a.to_string()} data-scale-b={r.scale_b.to_string()}
                data-max-a={r.max_a.to_string()} data-max-b={r.max_b.to_string()}>
                { ctx.tf("lesson.int8.scales", &[
                    ("max_a", &format!("{:.6}", r.max_a)), ("sa", &format!("{:.7}", r.scale_a)),
                    ("max_b", &format!("{:.6}", r.max_b)), ("sb", &format!("{:.7}", r.scale_b)),
                ]) }
            </p>
            <div class="table-scroll"><table class="facts quant-sample">
                <thead><tr>
                    <th scope="col">{ ctx.t("lesson.int8.col.x") }</th>
                    <th scope="col">{ ctx.t("lesson.int8.col.q") }</th>
                    <th scope="col">{ ctx.t("lesson.int8.col.back") }</th>
                </tr></thead>
                <tbody>
                { for r.sample.iter().map(|(x, q, back)| html! {
                    <tr data-x={x.to_string()} data-q={q.to_string()}>
                        <td>{ format!("{x:.6}") }</td><td>{ q }</td><td>{ format!("{back:.6}") }</td>
                    </tr>
                }) }
                </tbody>
            </table></div>
            <div class="table-scroll"><table class="facts int8-results">
                <thead><tr>
                    <th scope="col">{ ctx.t("lesson.int8.col.format") }</th>
                    <th scope="col">{ ctx.t("lesson.int8.col.time") }</th>
                    <th scope="col">{ ctx.t("lesson.int8.col.rate") }</th>
                    <th scope="col">{ ctx.t("lesson.int8.col.error") }</th>
                </tr></thead>
                <tbody>
                { for r.rows.iter().map(|row| html! {
                    <tr data-row={row.id} data-ms={row.ms.map(|m| m.to_string()).unwrap_or_default()}
                        data-err={row.err.to_string()} data-err-src={row.err_src}>
                        <th scope="row">{ ctx.t(&format!("lesson.int8.row.{}", row.id)) }</th>
                        <td>{ row.ms.map(|m| format!("{} ms", numbers::ms(m))).unwrap_or_else(|| ctx.t("lesson.int8.not_run").to_string()) }</td>
                        <td>{ row.ms.map(|m| numbers::rate(flops / (m * 1e6))).unwrap_or_else(|| "–".into()) }</td>
                        <td>{ numbers::sci(row.err) }{ if row.err_src == "cpu" { ctx.t("lesson.int8.cpu_mark") } else { "" } }</td>
                    </tr>
                }) }
                </tbody>
            </table></div>
            <p class="note" data-bound={r.bound.to_string()}>{ ctx.tf("lesson.int8.bound", &[("bound", &numbers::sci(r.bound))]) }</p>
            { for r.int8_exact.map(|ok| html! {
                <p class={classes!("verdict", if ok { "ok" } else { "bad" })} data-exact={ok.to_string()}>
                    { ctx.t(if ok { "lesson.int8.exact" } else { "lesson.int8.not_exact" }) }
                </p>
            }) }
            { for r.int8_missing.map(|k| html! { <p class="message unavailable" data-int8-missing="true">{ ctx.linked(k) }</p> }) }
            { for r.f16_missing.map(|k| html! { <p class="note" data-f16-missing="true">{ ctx.linked(k) }</p> }) }
            <p class="note">{ ctx.t("lesson.int8.result_note") }</p>
            if software {
                <p class="note">{ ctx.t("lesson.common.software_note") }</p>
            }
        </>
    }
}
