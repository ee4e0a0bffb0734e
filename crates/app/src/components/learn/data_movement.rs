//! Lesson `data-movement`: moving data between the host and GPUs. Measures what a page can: upload
//! (`queue.writeBuffer`) and readback (`mapAsync`) through `gpu_runtime::measurements::
//! transfer_bandwidth` (every byte checked, wall clock, the median of `REPS` runs per size);
//! the links a browser cannot reach (PCIe, NVLink, InfiniBand) are computed by
//! `lessons::transfer` with the `multi-gpu` lesson's all-reduce formula.

use gpu_runtime::measurements::{transfer_bandwidth, TransferRuns};
use lessons::transfer::{self, compare_links};
use lessons::units::{parse_count, parse_number};
use numbers::{decimal_bytes, duration};
use yew::prelude::*;
use yew_router::prelude::*;

use super::kit::{self as common, Phase};
use super::vram::form::{self, q, text_field};
use crate::components::Ctx;
use crate::session;

/// Product and protocol names (the same in every language).
const PCIE: &str = "PCIe";
const NVLINK: &str = "NVLink";
const RDMA: &str = "GPUDirect RDMA";

/// Sizes moved each way: 256 KiB, 4 MiB, 32 MiB.
const SIZES: [u64; 3] = [256 << 10, 4 << 20, 32 << 20];
/// Runs per size; the median counts (≥ 3, so one outlier cannot set it).
const REPS: u32 = 5;

/// One size's medians.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    bytes: u64,
    upload_ms: f64,
    readback_ms: f64,
}

fn rows(runs: &[TransferRuns]) -> Option<Vec<Row>> {
    runs.iter()
        .map(|r| {
            Some(Row {
                bytes: r.bytes,
                upload_ms: transfer::median(&r.upload_ms)?,
                readback_ms: transfer::median(&r.readback_ms)?,
            })
        })
        .collect()
}

fn gbs_text(bytes: u64, ms: f64) -> String {
    transfer::gb_per_s(bytes as f64, ms)
        .map(|g| format!("{} GB/s", numbers::rate(g)))
        .unwrap_or_else(|| "–".into())
}

fn gbs_text_of(g: Option<f64>) -> String {
    g.map_or_else(|| "–".into(), |g| format!("{} GB/s", numbers::rate(g)))
}

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let phase = common::use_measure::<Vec<Row>>();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let software = matches!(common::gpu_gate(&ctx), Ok(true));
    let onclick = {
        let (phase, ctx) = (phase.clone(), ctx.clone());
        Callback::from(move |_| {
            let ctx = ctx.clone();
            let total = SIZES.len() as u32 * REPS;
            common::measure(&phase, total, None, move |p| async move {
                let (gpu, _) = session::gpu(software).await?;
                let progress = move |done, total| p.set_of(done, total);
                let runs = transfer_bandwidth(&gpu, &SIZES, REPS, &progress).await?;
                rows(&runs).ok_or_else(|| {
                    gpu_runtime::GpuError::Readback(
                        ctx.t("lesson.data-movement.err.times").to_string(),
                    )
                })
            });
        })
    };
    let done = |rows: &Vec<Row>| {
        let largest = rows.last();
        html! {
            <>
                <table class="facts transfer-table" id="transfer-table">
                    <thead><tr>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.size") }</th>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.upload") }</th>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.readback") }</th>
                    </tr></thead>
                    <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr data-bytes={r.bytes.to_string()}
                            data-upload-ms={format!("{:.4}", r.upload_ms)}
                            data-readback-ms={format!("{:.4}", r.readback_ms)}>
                            <td>{ decimal_bytes(r.bytes as f64) }</td>
                            <td>{ format!("{} · {}", duration(r.upload_ms / 1000.0), gbs_text(r.bytes, r.upload_ms)) }</td>
                            <td>{ format!("{} · {}", duration(r.readback_ms / 1000.0), gbs_text(r.bytes, r.readback_ms)) }</td>
                        </tr>
                    }) }
                    </tbody>
                </table>
                { for largest.map(|r| html! {
                    <p class="total" id="transfer-summary">{ ctx.tf("lesson.data-movement.transfer_summary", &[
                        ("size", &decimal_bytes(r.bytes as f64)),
                        ("up", &gbs_text(r.bytes, r.upload_ms)),
                        ("down", &gbs_text(r.bytes, r.readback_ms)),
                        ("reps", &REPS.to_string()),
                    ]) }</p>
                }) }
                if software {
                    <p class="note software">{ ctx.t("lesson.data-movement.software") }</p>
                }
            </>
        }
    };
    let measured_up = match &*phase {
        Phase::Done(rows) => rows
            .last()
            .and_then(|r| transfer::gb_per_s(r.bytes as f64, r.upload_ms)),
        _ => None,
    };

    // The calculator: a model's gradients (parameters × 2 bytes) over n GPUs.
    let (p_text, n_text) = (q(&ctx, "p", "7B"), q(&ctx, "n", "8"));
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let params = match parse_number(&p_text) {
        Some(v) if v > 0.0 && v <= 1e13 => Some(v),
        Some(_) => {
            errors.push(("p", ctx.t("lesson.common.err.too_large").into()));
            None
        }
        None => {
            errors.push(("p", ctx.t("lesson.common.err.number").into()));
            None
        }
    };
    let gpus = match parse_count(&n_text) {
        Some(n) if (2..=100_000).contains(&n) => Some(n),
        _ => {
            errors.push(("n", ctx.t("lesson.data-movement.err.gpus").into()));
            None
        }
    };
    let err = |key: &str| form::field_error(&errors, key);
    let table = match (params, gpus) {
        (Some(p), Some(n)) => match compare_links(p * 2.0, n) {
            Ok(rows) => html! {
                <>
                <p class="total">{ ctx.tf("lesson.data-movement.calc_result", &[("bytes", &decimal_bytes(p * 2.0)), ("n", &n.to_string())]) }</p>
                <table class="facts links-table" id="links-table">
                    <thead><tr>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.link") }</th>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.each_way") }</th>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.copy") }</th>
                        <th scope="col">{ ctx.t("lesson.data-movement.col.allreduce") }</th>
                    </tr></thead>
                    <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr data-link={r.link.id} data-allreduce-s={format!("{:.6}", r.allreduce.total_s())} data-copy-s={format!("{:.6}", r.copy_s)}>
                            <td>{ r.link.name }</td>
                            <td>{ format!("{} GB/s", r.link.per_direction_gbs) }</td>
                            <td>{ duration(r.copy_s) }</td>
                            <td>{ duration(r.allreduce.total_s()) }</td>
                        </tr>
                    }) }
                    { for measured_up.and_then(|g| transfer::copy_seconds(p * 2.0, g)).map(|s| html! {
                        <tr data-link="browser" class="measured">
                            <td>{ ctx.t("lesson.data-movement.yours") }</td>
                            <td>{ gbs_text_of(measured_up) }</td>
                            <td>{ duration(s) }</td>
                            <td>{ "—" }</td>
                        </tr>
                    }) }
                    </tbody>
                </table>
                </>
            },
            Err(_) => {
                html! { <p class="message error" role="alert" data-links="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p> }
            }
        },
        _ => {
            html! { <p class="message error" role="alert" data-links="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p> }
        }
    };

    html! {
        <div class="lesson-body lb ld">
            <p class="lead">{ ctx.t("lesson.data-movement.lead") }</p>
            <dl class="terms">
                <dt>{ PCIE }</dt><dd>{ ctx.t("lesson.data-movement.pcie_text") }</dd>
                <dt>{ NVLINK }</dt><dd>{ ctx.t("lesson.data-movement.nvlink_text") }</dd>
                <dt>{ ctx.t("lesson.data-movement.network") }</dt><dd>{ ctx.t("lesson.data-movement.network_text") }</dd>
                <dt>{ RDMA }</dt><dd>{ ctx.t("lesson.data-movement.rdma_text") }</dd>
                <dt>{ ctx.t("lesson.data-movement.um") }</dt><dd>{ ctx.t("lesson.data-movement.um_text") }</dd>
            </dl>
            <section class="panel widget" id="transfer-widget" aria-labelledby="transfer-h">
                <h2 id="transfer-h">{ ctx.t("lesson.data-movement.measure_heading") }</h2>
                <p>{ ctx.t("lesson.data-movement.measure_intro") }</p>
                { common::measure_controls(&ctx, &phase, onclick, true, done) }
                <p class="note">{ ctx.t("lesson.data-movement.browser_note") }</p>
            </section>
            <section class="panel calc" id="links-calc" aria-labelledby="links-h">
                <h2 id="links-h">{ ctx.t("lesson.data-movement.calc") }</h2>
                <p>{ ctx.t("lesson.data-movement.calc_intro") }</p>
                <div class="fields">
                    { text_field(&ctx, &nav, "p", ctx.t("lesson.data-movement.f.params"), p_text, err("p")) }
                    { text_field(&ctx, &nav, "n", ctx.t("lesson.data-movement.f.gpus"), n_text, err("n")) }
                </div>
                <div class="calc-output" aria-live="polite">{ table }</div>
                <p class="note">{ ctx.t("lesson.data-movement.calc_note") }</p>
            </section>
            { form::corrections(&ctx, &["lesson.data-movement.fc107", "lesson.data-movement.fc136", "lesson.data-movement.fc137", "lesson.data-movement.fc93"]) }
            { form::try_it(&ctx, "lesson.data-movement.try") }
        </div>
    }
}
