//! Lesson `fp64` — double precision for scientific work. WGSL has no f64, so the widget
//! runs a double-float matmul (pairs of f32, `df64-matmul`) and the same tiled matmul in f32 on
//! the learner's GPU, both judged against an almost exact CPU product, and turns the time ratio
//! into an "FP64 rate" beside the real ones (`lessons::fp64`).

use cpu_kernels::df64;
use cpu_kernels::matmul::MatmulSize;
use gpu_runtime::numeric;
use gpu_runtime::{GpuError, Job, RunOptions};
use lessons::fp64::{self, GPUS};
use yew::prelude::*;

use super::kit as common;
use crate::components::Ctx;
use crate::session;

const MIN_N: u32 = 16;
const MAX_N: u32 = 512;
const SEED: u64 = 3;
const F32_KERNEL: &str = "matmul-tiled";
/// The size the GPU table's times are given for.
const TABLE_N: u64 = 4096;

#[derive(Clone, Debug, PartialEq)]
struct Result_ {
    n: u32,
    f32_ms: f64,
    df64_ms: f64,
    f32_err: f64,
    df64_err: f64,
}

fn log2_text(e: f64) -> String {
    fp64::log2_error(e).map_or_else(|| "–".into(), |l| format!("2^{l:.1}"))
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let n_text = use_state(|| "128".to_string());
    let phase = common::use_measure::<Result_>();
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
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
            common::measure(&phase, 3, None, move |p| async move {
                common::yield_to_browser().await;
                let size = MatmulSize::new(n, n, n);
                let (a, b) = df64::inputs(size, SEED);
                let reference = df64::reference(size, &a, &b);
                p.set(1)?;
                let (gpu, _) = session::gpu(software).await?;
                let opts = RunOptions {
                    warmup: 1,
                    repetitions: 3,
                };
                let d = numeric::run_df64(&gpu, size, &a, &b, &opts, &p.control()).await?;
                p.set(2)?;
                let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
                let b32: Vec<f32> = b.iter().map(|&x| x as f32).collect();
                let k = gpu_runtime::kernel(F32_KERNEL)
                    .ok_or_else(|| GpuError::Shader(F32_KERNEL.into()))?;
                let job = Job::Matmul {
                    size,
                    a: &a32,
                    b: &b32,
                };
                let f = gpu.run(k, &job, &opts).await?;
                let f_out: Vec<f64> = f.output.iter().map(|&x| x as f64).collect();
                Ok::<_, GpuError>(Result_ {
                    n,
                    f32_ms: f.timing.kernel_ms(),
                    df64_ms: d.timing.kernel_ms(),
                    f32_err: df64::max_rel_error(&f_out, &reference),
                    df64_err: df64::max_rel_error(&d.output, &reference),
                })
            });
        })
    };
    let done = |r: &Result_| {
        let ratio = fp64::emulated_ratio(r.f32_ms, r.df64_ms);
        let flops = fp64::matmul_flops(r.n as u64);
        html! {
            <>
                <div class="table-scroll"><table class="facts fp64-results">
                    <thead><tr>
                        <th scope="col">{ ctx.t("lesson.fp64.col.kind") }</th>
                        <th scope="col">{ ctx.t("lesson.fp64.col.time") }</th>
                        <th scope="col">{ ctx.t("lesson.fp64.col.rate") }</th>
                        <th scope="col">{ ctx.t("lesson.fp64.col.error") }</th>
                    </tr></thead>
                    <tbody>
                        <tr data-row="f32" data-ms={r.f32_ms.to_string()} data-err={r.f32_err.to_string()}>
                            <th scope="row">{ ctx.t("lesson.fp64.row.f32") }</th>
                            <td>{ format!("{} ms", numbers::ms(r.f32_ms)) }</td>
                            <td>{ numbers::rate(flops / (r.f32_ms * 1e6)) }</td>
                            <td>{ format!("{} ({})", numbers::sci(r.f32_err), log2_text(r.f32_err)) }</td>
                        </tr>
                        <tr data-row="df64" data-ms={r.df64_ms.to_string()} data-err={r.df64_err.to_string()}>
                            <th scope="row">{ ctx.t("lesson.fp64.row.df64") }</th>
                            <td>{ format!("{} ms", numbers::ms(r.df64_ms)) }</td>
                            <td>{ numbers::rate(flops / (r.df64_ms * 1e6)) }</td>
                            <td>{ format!("{} ({})", numbers::sci(r.df64_err), log2_text(r.df64_err)) }</td>
                        </tr>
                    </tbody>
                </table></div>
                { for ratio.map(|x| html! {
                    <p class="verdict" data-ratio={x.to_string()}>
                        { ctx.tf("lesson.fp64.ratio", &[("x", &numbers::rate(x))]) }
                    </p>
                }) }
                <p class="note">{ ctx.t("lesson.fp64.result_note") }</p>
                if software {
                    <p class="note">{ ctx.t("lesson.common.software_note") }</p>
                }
            </>
        }
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.fp64.p1", "lesson.fp64.p2"]) }
            { gpu_table(&ctx) }
            <p class="note">{ ctx.linked("lesson.fp64.table_note") }</p>
            { common::correction(&ctx, "lesson.fp64.fc_ratio") }
            { common::h2(&ctx, "lesson.fp64.h_df64") }
            { common::paras(&ctx, &["lesson.fp64.p3"]) }
            <section class="panel widget" data-widget="fp64">
                <h2>{ ctx.t("lesson.fp64.widget") }</h2>
                <p>{ ctx.t("lesson.fp64.widget_intro") }</p>
                { common::number_field(&ctx, "fp64-n", "lesson.fp64.n", &n_text, n_error, common::text_setter(&n_text)) }
                { common::measure_controls(&ctx, &phase, onclick, n.is_ok(), done) }
            </section>
            { common::h2(&ctx, "lesson.fp64.h_science") }
            { common::paras(&ctx, &["lesson.fp64.p4"]) }
            { common::correction(&ctx, "lesson.fp64.fc_openmm") }
            { common::try_it(&ctx, "lesson.fp64.try", Some(("learn/choosing", "lesson.fp64.try_link"))) }
        </>
    }
}

fn gpu_table(ctx: &Ctx) -> Html {
    let n = TABLE_N.to_string();
    html! {
        <div class="table-scroll"><table class="facts fp64-gpus">
            <thead><tr>
                <th scope="col">{ ctx.t("lesson.fp64.col.gpu") }</th>
                <th scope="col">{ ctx.t("lesson.fp64.col.fp32") }</th>
                <th scope="col">{ ctx.t("lesson.fp64.col.fp64") }</th>
                <th scope="col">{ ctx.t("lesson.fp64.col.ratio") }</th>
                <th scope="col">{ ctx.tf("lesson.fp64.col.time64", &[("n", &n)]) }</th>
            </tr></thead>
            <tbody>
            { for GPUS.iter().map(|g| html! {
                <tr data-gpu={g.name} data-ratio={g.ratio_whole().to_string()}>
                    <th scope="row">{ g.name }</th>
                    <td>{ numbers::rate(g.fp32_tflops) }</td>
                    <td>{ numbers::rate(g.fp64_tflops) }</td>
                    <td>{ format!("1:{}", g.ratio_whole()) }</td>
                    <td>{ format!("{} ms", numbers::ms(fp64::seconds_at_peak(TABLE_N, g.fp64_tflops) * 1e3)) }</td>
                </tr>
            }) }
            </tbody>
        </table></div>
    }
}
