//! Lesson `latency-throughput` — few fast cores against many slow ones, and a small live
//! race: the same matmul on the CPU (main thread) and on the GPU, from tiny to medium sizes.

use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::matmul_variants::{self, CpuVariant};
use cpu_kernels::verify::{self, Precision};
use gpu_runtime::{run_matmul_verified, GpuError, RunOptions};
use yew::prelude::*;

use page_models::diagram::{cores, Cores};

use super::kit as common;
use crate::components::chart_width::use_drawn_width;
use crate::components::Ctx;
use crate::session;

/// Square sizes raced, smallest first. 256³ is about 34 MFLOP: a few tens of ms on the CPU.
const SIZES: [u32; 4] = [16, 64, 128, 256];
/// The GPU stage raced: shared-memory tiles (ladder stage 3).
const GPU_KERNEL: &str = "matmul-tiled";
/// The CPU contender: the race page's SIMD kernel (not the f64 verification reference).
const CPU_KERNEL: CpuVariant = CpuVariant::Simd;
/// Runs per size on each side; the fastest counts.
const TRIES: u32 = 3;
/// Shortest CPU try, in ms: far above the browser clock's step, far below a GPU round trip.
const MIN_TRY_MS: f64 = 2.0;

#[derive(Clone, Debug, PartialEq)]
struct Row {
    n: u32,
    cpu_ms: f64,
    gpu_ms: f64,
}

/// Times the race's SIMD kernel at size n the way the GPU side is timed: each try whole
/// multiplies from a clock read before to one after (B's packing included, as the GPU's upload
/// is), the fastest try counting; its result is checked against the reference like the GPU's.
/// A try repeats the multiply until at least `MIN_TRY_MS` have passed, so that the browser's
/// coarse clock (0.1 ms steps without cross-origin isolation) can resolve the small sizes.
fn time_cpu(n: u32) -> Result<f64, GpuError> {
    let size = MatmulSize::new(n, n, n);
    let (a, b) = size.inputs(1);
    let mut best = f64::INFINITY;
    let mut last = Vec::new();
    for _ in 0..TRIES {
        let start = common::now_ms();
        let mut reps = 0u32;
        let elapsed = loop {
            last = matmul_variants::matmul(CPU_KERNEL, size, &a, &b)
                .map_err(|e| GpuError::Dispatch(format!("CPU {n}: {e:?}")))?;
            reps += 1;
            let elapsed = common::now_ms() - start;
            if elapsed >= MIN_TRY_MS || reps >= 1000 {
                break elapsed;
            }
        };
        best = best.min(elapsed / reps as f64);
    }
    let verdict = verify::compare(&last, &matmul::reference(size, &a, &b), Precision::F32);
    if !verdict.ok {
        return Err(GpuError::Dispatch(format!(
            "CPU {n}: {:?}",
            verdict.first_failure
        )));
    }
    Ok(best)
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let phase = common::use_measure::<Vec<Row>>();
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    let onclick = {
        let phase = phase.clone();
        Callback::from(move |_| {
            let total = SIZES.len() as u32;
            let reporting: common::Reporting<Vec<Row>> = ("latency-throughput", |rows| {
                use page_models::embed::Field;
                let rows = rows
                    .iter()
                    .map(|r| {
                        vec![
                            ("n", Field::Num(r.n as f64)),
                            ("cpuMs", Field::Num(r.cpu_ms)),
                            ("gpuMs", Field::Num(r.gpu_ms)),
                        ]
                    })
                    .collect();
                // Every GPU result was checked against the CPU reference (else an error).
                vec![("rows", Field::List(rows)), ("verified", Field::Bool(true))]
            });
            common::measure(&phase, total, Some(reporting), move |p| async move {
                let kernel = gpu_runtime::kernel(GPU_KERNEL)
                    .ok_or_else(|| GpuError::Shader(GPU_KERNEL.into()))?;
                let (gpu, _) = session::gpu(software).await?;
                // Compile before timing: a race should not charge the GPU for that.
                gpu.pipeline(kernel).await?;
                let mut rows = Vec::new();
                for (i, &n) in SIZES.iter().enumerate() {
                    common::yield_to_browser().await;
                    let cpu_ms = time_cpu(n)?;
                    let mut gpu_ms = f64::INFINITY;
                    for _ in 0..TRIES {
                        let size = MatmulSize::new(n, n, n);
                        let v = run_matmul_verified(&gpu, kernel, size, 1, &RunOptions::default())
                            .await?;
                        if !v.verdict.ok {
                            return Err(GpuError::Dispatch(format!(
                                "{GPU_KERNEL} {n}: {:?}",
                                v.verdict.first_failure
                            )));
                        }
                        gpu_ms = gpu_ms.min(v.timing.upload_ms + v.timing.submit_to_result_ms);
                    }
                    rows.push(Row { n, cpu_ms, gpu_ms });
                    p.set(i as u32 + 1)?;
                }
                Ok(rows)
            });
        })
    };
    let done = |rows: &Vec<Row>| {
        html! {
            <>
                <table class="facts race-table">
                    <thead><tr>
                        <th scope="col">{ ctx.t("lesson.latency-throughput.col.size") }</th>
                        <th scope="col">{ ctx.t("lesson.latency-throughput.col.cpu") }</th>
                        <th scope="col">{ ctx.t("lesson.latency-throughput.col.gpu") }</th>
                        <th scope="col">{ ctx.t("lesson.latency-throughput.col.winner") }</th>
                    </tr></thead>
                    <tbody>
                    { for rows.iter().map(|r| {
                        let gpu_wins = r.gpu_ms < r.cpu_ms;
                        let ratio = if gpu_wins { r.cpu_ms / r.gpu_ms } else { r.gpu_ms / r.cpu_ms };
                        let winner = ctx.tf(
                            if gpu_wins { "lesson.latency-throughput.gpu_wins" } else { "lesson.latency-throughput.cpu_wins" },
                            &[("x", &numbers::rate(ratio))],
                        );
                        html! {
                            <tr class="race-row" data-n={r.n.to_string()} data-cpu-kernel={CPU_KERNEL.id()}
                                data-cpu-ms={r.cpu_ms.to_string()} data-gpu-ms={r.gpu_ms.to_string()}>
                                // A phone's narrow column may break the size only after a "×",
                                // and never a time inside its number.
                                <td>{ r.n }{ "×" }<wbr />{ r.n }{ "×" }<wbr />{ r.n }</td>
                                <td class="num">{ numbers::duration(r.cpu_ms / 1000.0) }</td>
                                <td class="num">{ numbers::duration(r.gpu_ms / 1000.0) }</td>
                                <td class={if gpu_wins { "gpu" } else { "cpu" }}>{ winner }</td>
                            </tr>
                        }
                    }) }
                    </tbody>
                </table>
                <p class="note">{ ctx.t("lesson.latency-throughput.result_note") }</p>
                if software {
                    <p class="note">{ ctx.t("lesson.common.software_note") }</p>
                }
            </>
        }
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.latency-throughput.p1", "lesson.latency-throughput.p2"]) }
            <CoresDiagram />
            { common::paras(&ctx, &["lesson.latency-throughput.p3"]) }
            { common::h2(&ctx, "lesson.latency-throughput.h_analogies") }
            { common::paras(&ctx, &["lesson.latency-throughput.p4", "lesson.latency-throughput.p5"]) }
            { common::correction(&ctx, "lesson.latency-throughput.fc") }
            <section class="panel widget" data-widget="race">
                <h2>{ ctx.t("lesson.latency-throughput.widget") }</h2>
                <p>{ ctx.t("lesson.latency-throughput.widget_intro") }</p>
                // Which CPU code the column times, and the race's view of the same kernel (a
                // learner otherwise compares two different measurements of "the CPU").
                <p class="note" data-cpu-code={CPU_KERNEL.id()}>
                    { ctx.t("lesson.latency-throughput.cpu_code") }{ " " }
                    <a href={format!("#/race?lang={}&view=sweep&cpu={}&workers=1&from=16&to=256", ctx.lang.code(), CPU_KERNEL.id())}
                        data-race-link="true">{ ctx.t("lesson.latency-throughput.cpu_code_link") }</a>
                </p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
            </section>
            { common::try_it(&ctx, "lesson.latency-throughput.try", Some(("race", "lesson.latency-throughput.try_link"))) }
        </>
    }
}

/// A few large cores against a grid of small ones. Drawn at its rendered width: side by side
/// where both fit, the GPU's grid under the CPU's cores on a phone.
#[function_component]
fn CoresDiagram() -> Html {
    let ctx = use_context::<Ctx>();
    let (node, w) = use_drawn_width(620.0, common::DIAGRAM_MIN_W);
    let Some(ctx) = ctx else {
        return Html::default();
    };
    // The GPU block: 16 × 12 small lanes on a 20 × 10 pitch (narrower on a phone).
    let Cores {
        side_by_side,
        gpu_x: gx,
        pitch,
    } = cores(w);
    let (cpu, cpu_end) = common::text_lines(
        ctx.t("lesson.latency-throughput.diagram_cpu"),
        (20.0, 24.0),
        common::LABEL_PX,
        if side_by_side { gx - 30.0 } else { w - 24.0 },
        "svg-label",
    );
    let gpu_y = if side_by_side { 24.0 } else { cpu_end + 146.0 };
    let (gpu, gpu_end) = common::text_lines(
        ctx.t("lesson.latency-throughput.diagram_gpu"),
        (gx, gpu_y),
        common::LABEL_PX,
        w - gx - 4.0,
        "svg-label",
    );
    let cpu_top = cpu_end + 12.0;
    let gpu_top = gpu_end + 12.0;
    let big: Vec<(f64, f64)> = (0..4)
        .map(|i| {
            (
                20.0 + (i % 2) as f64 * 70.0,
                cpu_top + (i / 2) as f64 * 60.0,
            )
        })
        .collect();
    let small: Vec<(f64, f64)> = (0..16 * 12)
        .map(|i| {
            (
                gx + (i % 16) as f64 * pitch,
                gpu_top + (i / 16) as f64 * 10.0,
            )
        })
        .collect();
    let h = (cpu_top + 120.0).max(gpu_top + 120.0) + 10.0;
    html! {
        <figure class="diagram">
            <svg ref={node} viewBox={format!("0 0 {w:.1} {h:.1}")} role="img" aria-label={ctx.t("lesson.latency-throughput.diagram_alt")}>
                { cpu }
                { for big.iter().map(|(x, y)| html! { <rect x={x.to_string()} y={y.to_string()} width="60" height="50" rx="4" class="core big" /> }) }
                { gpu }
                { for small.iter().map(|(x, y)| html! { <rect x={format!("{x:.1}")} y={y.to_string()} width={format!("{:.1}", pitch - 4.0)} height="7" rx="1" class="core small" /> }) }
            </svg>
            <figcaption>{ ctx.t("lesson.latency-throughput.diagram_caption") }</figcaption>
        </figure>
    }
}
