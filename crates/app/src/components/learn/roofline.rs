//! Lesson `roofline` — the visitor's own roofline: memory bandwidth from the copy probe,
//! arithmetic peak from the FMA probe, and each matmul ladder stage that runs in this browser
//! placed on it by its modelled arithmetic intensity (`lessons::roofline`) and measured rate.

use cpu_kernels::matmul::MatmulSize;
use gpu_runtime::{measurements, run_matmul_verified, Family, KernelSpec, RunOptions, Storage};
use lessons::roofline::{self, Roof, Tiling};
use yew::prelude::*;

use page_models::diagram::{place_labels, text_width};

use super::kit::{self as common, SMALL_PX};
use crate::components::chart_width::use_chart_width;
use crate::components::Ctx;
use crate::session;

#[derive(Clone, Debug, PartialEq)]
struct Point {
    id: &'static str,
    stage: usize,
    ai: f64,
    gflops: f64,
}

#[derive(Clone, Debug, PartialEq)]
struct Measured {
    roof: Roof,
    n: u32,
    points: Vec<Point>,
}

/// The tiling a stage's catalogue entry describes: BM×BN blocks, TILE×TILE tiles, or none.
fn tiling(k: &KernelSpec) -> Tiling {
    let c = |name: &str| {
        k.constants
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v as u32)
    };
    match (c("BM"), c("BN"), c("TILE")) {
        (Some(bm), Some(bn), _) => Tiling::Block { bm, bn },
        (_, _, Some(t)) => Tiling::Block { bm: t, bn: t },
        _ => Tiling::PerElement,
    }
}

fn input_bytes(k: &KernelSpec) -> u32 {
    if matches!(k.storage, Storage::F16Inputs | Storage::F16Tiles) {
        2
    } else {
        4
    }
}

/// Problem sizes and probe sizes: small on software adapters.
struct Sizes {
    n: u32,
    copy_elements: u32,
    fma_threads: u32,
    fma_iters: u32,
    opts: RunOptions,
}

fn sizes(software: bool) -> Sizes {
    if software {
        Sizes {
            n: 128,
            copy_elements: 1 << 20,
            fma_threads: 4096,
            fma_iters: 256,
            opts: RunOptions {
                warmup: 1,
                repetitions: 2,
            },
        }
    } else {
        Sizes {
            n: 1024,
            copy_elements: 1 << 24,
            fma_threads: 1 << 20,
            fma_iters: 1024,
            opts: RunOptions {
                warmup: 2,
                repetitions: 5,
            },
        }
    }
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let phase = common::use_measure::<Measured>();
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    // The stages whose features (shader-f16, subgroups) this adapter offers.
    let stages: Vec<(usize, &'static KernelSpec)> = KernelSpec::ladder(Family::Matmul)
        .filter(|(_, k)| {
            k.feature_names()
                .iter()
                .all(|f| common::adapter_has(&ctx, f))
        })
        .collect();
    let onclick = {
        let (phase, stages) = (phase.clone(), stages.clone());
        Callback::from(move |_| {
            let stages = stages.clone();
            let total = 2 + stages.len() as u32;
            let reporting: common::Reporting<Measured> = ("roofline", |m| {
                use page_models::embed::Field;
                let points = m
                    .points
                    .iter()
                    .map(|p| {
                        vec![
                            ("kernel", Field::Str(p.id.into())),
                            ("intensity", Field::Num(p.ai)),
                            ("gflops", Field::Num(p.gflops)),
                            ("verified", Field::Bool(true)),
                        ]
                    })
                    .collect();
                vec![
                    ("n", Field::Num(m.n as f64)),
                    ("gbPerSecond", Field::Num(m.roof.gb_per_s)),
                    ("peakGflops", Field::Num(m.roof.gflop_per_s)),
                    ("points", Field::List(points)),
                ]
            });
            common::measure(&phase, total, Some(reporting), move |pr| async move {
                let p = sizes(software);
                let (gpu, _) = session::gpu(software).await?;
                let bw = measurements::bandwidth(&gpu, p.copy_elements, &p.opts).await?;
                pr.set(1)?;
                let peak =
                    measurements::fma_rate(&gpu, p.fma_threads, p.fma_iters, &p.opts).await?;
                pr.set(2)?;
                let mut points = Vec::new();
                for (i, (stage, k)) in stages.iter().enumerate() {
                    let size = MatmulSize::new(p.n, p.n, p.n);
                    let v = run_matmul_verified(&gpu, k, size, 1, &p.opts).await?;
                    if v.verdict.ok {
                        let bytes =
                            roofline::matmul_bytes(tiling(k), p.n, p.n, p.n, input_bytes(k));
                        points.push(Point {
                            id: k.id,
                            stage: *stage,
                            ai: roofline::intensity(size.flops(), bytes),
                            gflops: v.gflops(),
                        });
                    }
                    pr.set(3 + i as u32)?;
                }
                Ok(Measured {
                    roof: Roof {
                        gb_per_s: bw,
                        gflop_per_s: peak,
                    },
                    n: p.n,
                    points,
                })
            });
        })
    };
    let done = |m: &Measured| {
        html! {
            <>
                <table class="facts">
                    <tr><th scope="row">{ ctx.t("lesson.roofline.bandwidth") }</th>
                        <td class="bandwidth" data-value={m.roof.gb_per_s.to_string()}>{ format!("{} GB/s", numbers::rate(m.roof.gb_per_s)) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.roofline.peak") }</th>
                        <td class="peak" data-value={m.roof.gflop_per_s.to_string()}>{ format!("{} GFLOP/s", numbers::rate(m.roof.gflop_per_s)) }</td></tr>
                    <tr><th scope="row">{ ctx.t("lesson.roofline.ridge") }</th>
                        <td>{ format!("{} FLOP/B", numbers::rate(m.roof.ridge())) }</td></tr>
                </table>
                { roofline_chart(&ctx, m, &chart_ref, chart_w) }
                { crate::components::scroll_table(&ctx, ctx.t("lesson.roofline.widget"), html! {
                    <table class="facts stage-table">
                        <thead><tr>
                            <th scope="col">{ ctx.t("lesson.roofline.col.stage") }</th>
                            <th scope="col">{ ctx.t("lesson.roofline.col.ai") }</th>
                            <th scope="col">{ ctx.t("lesson.roofline.col.measured") }</th>
                            <th scope="col">{ ctx.t("lesson.roofline.col.roof") }</th>
                        </tr></thead>
                        <tbody>
                        { for m.points.iter().map(|p| html! {
                            <tr data-stage={p.id}>
                                <td>{ format!("{}. ", p.stage) }{ gpu_runtime::kernel(p.id).map(|k| ctx.t(k.title_key)).unwrap_or_default() }</td>
                                <td>{ numbers::rate(p.ai) }</td>
                                <td>{ numbers::rate(p.gflops) }</td>
                                <td>{ numbers::rate(m.roof.attainable(p.ai)) }</td>
                            </tr>
                        }) }
                        </tbody>
                    </table>
                }) }
                <p class="note">{ ctx.tf("lesson.roofline.result_note", &[("n", &m.n.to_string())]) }</p>
                if software {
                    <p class="note">{ ctx.t("lesson.common.software_note") }</p>
                }
            </>
        }
    };
    html! {
        <>
            { common::paras(&ctx, &["lesson.roofline.p1", "lesson.roofline.p2"]) }
            { common::correction(&ctx, "lesson.roofline.fc_hbm") }
            { common::correction(&ctx, "lesson.roofline.fc_ddr") }
            { common::correction(&ctx, "lesson.roofline.fc_formula") }
            { common::h2(&ctx, "lesson.roofline.h_model") }
            { common::paras(&ctx, &["lesson.roofline.p3", "lesson.roofline.p4"]) }
            <section class="panel widget" data-widget="roofline">
                <h2>{ ctx.t("lesson.roofline.widget") }</h2>
                <p>{ ctx.t("lesson.roofline.widget_intro") }</p>
                // Two kernels, so each button is labelled with the kernel it opens.
                <p class="source">{ crate::components::edit_link::edit_link_named(&ctx, "measure-copy") }{ " " }{ crate::components::edit_link::edit_link_named(&ctx, "measure-fma") }</p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
            </section>
            { common::paras(&ctx, &["lesson.roofline.p5"]) }
            { common::try_it(&ctx, "lesson.roofline.try", Some(("kernels", "lesson.roofline.try_link"))) }
        </>
    }
}

/// Log-log roofline: GFLOP/s against FLOP/byte, with the stages as labelled dots.
/// Drawn at its rendered width (`chart_w`, 620 until measured), so its text shows at the
/// stylesheet's size on a phone too.
fn roofline_chart(ctx: &Ctx, m: &Measured, chart_ref: &NodeRef, chart_w: Option<f64>) -> Html {
    let w = chart_w.unwrap_or(620.0).max(240.0);
    let (h, left, bottom, top, right) = (320.0, 70.0, 44.0, 16.0, 16.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let roof = m.roof;
    let xy: Vec<(f64, f64)> = m.points.iter().map(|p| (p.ai, p.gflops)).collect();
    let f = roofline::Frame::new((left, top, pw, ph), roof, &xy);
    let (px, py) = (|ai: f64| f.px(ai), |r: f64| f.py(r));
    let path = f.roof_path(roof);
    let (x0, x1, y0, y1) = (f.x0, f.x1, f.y0, f.y1);
    let ticks = roofline::Frame::ticks;
    // Stage labels beside their dots, clear of each other (close stages measure alike).
    let dots: Vec<(f64, f64)> = m.points.iter().map(|p| (px(p.ai), py(p.gflops))).collect();
    let widths: Vec<f64> = m
        .points
        .iter()
        .map(|p| text_width(&p.stage.to_string(), SMALL_PX))
        .collect();
    let labels = place_labels(&dots, &widths, SMALL_PX, (left, 0.0, w, top + ph));
    html! {
        <figure class="chart-figure">
            <svg ref={chart_ref.clone()} class="roofline-chart" viewBox={format!("0 0 {w} {h}")} role="img" aria-label={ctx.t("lesson.roofline.chart_alt")}>
                { for ticks(x0, x1).into_iter().map(|t| html! {
                    <>
                        <line x1={px(t).to_string()} y1={top.to_string()} x2={px(t).to_string()} y2={(top + ph).to_string()} class="grid" />
                        <text x={px(t).to_string()} y={(top + ph + 16.0).to_string()} class="svg-small" text-anchor="middle">{ format_tick(t) }</text>
                    </>
                }) }
                { for ticks(y0, y1).into_iter().map(|t| html! {
                    <>
                        <line x1={left.to_string()} y1={py(t).to_string()} x2={(left + pw).to_string()} y2={py(t).to_string()} class="grid" />
                        <text x={(left - 6.0).to_string()} y={(py(t) + 4.0).to_string()} class="svg-small" text-anchor="end">{ format_tick(t) }</text>
                    </>
                }) }
                <path d={path} class="roof" />
                { for m.points.iter().zip(&dots).zip(&labels).map(|((p, &(x, y)), &(lx, ly))| html! {
                    <g class="point" data-stage={p.id} data-ai={p.ai.to_string()} data-gflops={p.gflops.to_string()}>
                        <circle cx={x.to_string()} cy={y.to_string()} r="5" />
                        <text x={format!("{lx:.1}")} y={format!("{ly:.1}")} class="svg-small">{ p.stage.to_string() }</text>
                    </g>
                }) }
                <text x={(left + pw / 2.0).to_string()} y={(h - 6.0).to_string()} class="svg-small" text-anchor="middle">{ ctx.t("lesson.roofline.axis_x") }</text>
                <text x="12" y={(top + ph / 2.0).to_string()} class="svg-small" transform={format!("rotate(-90 12 {})", top + ph / 2.0)} text-anchor="middle">{ ctx.t("lesson.roofline.axis_y") }</text>
            </svg>
            <figcaption>{ ctx.t("lesson.roofline.chart_caption") }</figcaption>
        </figure>
    }
}

fn format_tick(v: f64) -> String {
    if v >= 1.0 {
        numbers::count(v.round() as u64)
    } else {
        format!("{v}")
    }
}
