//! Lesson `occupancy` — SMs, warps and what limits how many stay resident: an occupancy
//! calculator for A100 / RTX 4090 / H100 (the `lessons::occupancy` maths), with the visitor's
//! WebGPU limits beside it.

use lessons::occupancy::{occupancy, Launch, LaunchError, Limiter, GPUS};
use yew::prelude::*;

use super::kit as common;
use crate::components::Ctx;

/// WebGPU limit names (code, shown as is).
const INVOCATIONS: &str = "maxComputeInvocationsPerWorkgroup";
const STORAGE: &str = "maxComputeWorkgroupStorageSize";

fn limiter_key(l: Limiter) -> &'static str {
    match l {
        Limiter::Warps => "lesson.occupancy.limit.warps",
        Limiter::Blocks => "lesson.occupancy.limit.blocks",
        Limiter::Registers => "lesson.occupancy.limit.registers",
        Limiter::SharedMemory => "lesson.occupancy.limit.shared",
    }
}

#[function_component]
pub fn Body() -> Html {
    let ctx = use_context::<Ctx>();
    let gpu_index = use_state(|| 0usize);
    let threads = use_state(|| "256".to_string());
    let regs = use_state(|| "32".to_string());
    let shared = use_state(|| "0".to_string());
    let Some(ctx) = ctx else {
        return Html::default();
    };
    let gpu = &GPUS[(*gpu_index).min(GPUS.len() - 1)];
    let max_shared = gpu.max_shared_per_block;
    let p_threads = common::parse_in(&threads, 1, gpu.max_threads_per_block);
    let p_regs = common::parse_in(&regs, 1, gpu.max_registers_per_thread);
    let p_shared = common::parse_in(&shared, 0, max_shared);
    let msg = |r: &Result<u32, String>, min: u32, max: u32| {
        r.as_ref()
            .err()
            .map(|k| common::parse_message(&ctx, k, min, max))
    };
    let fields = html! {
        <div class="calc-fields">
            <div class="field">
                <label for="occ-gpu">{ ctx.t("lesson.occupancy.gpu") }</label>
                <select id="occ-gpu" onchange={{
                    let gpu_index = gpu_index.clone();
                    Callback::from(move |e: Event| {
                        let sel: web_sys::HtmlInputElement = e.target_unchecked_into();
                        let i = sel.value().parse::<usize>().unwrap_or(0).min(GPUS.len() - 1);
                        gpu_index.set(i);
                    })
                }}>
                    { for GPUS.iter().enumerate().map(|(i, g)| html! {
                        <option value={i.to_string()} selected={i == *gpu_index}>
                            { ctx.tf("lesson.occupancy.gpu_option", &[("gpu", g.gpu), ("cc", g.cc)]) }
                        </option>
                    }) }
                </select>
            </div>
            { common::number_field(&ctx, "occ-threads", "lesson.occupancy.threads", &threads,
                msg(&p_threads, 1, gpu.max_threads_per_block), common::text_setter(&threads)) }
            { common::number_field(&ctx, "occ-regs", "lesson.occupancy.regs", &regs,
                msg(&p_regs, 1, gpu.max_registers_per_thread), common::text_setter(&regs)) }
            { common::number_field(&ctx, "occ-shared", "lesson.occupancy.shared", &shared,
                msg(&p_shared, 0, max_shared), common::text_setter(&shared)) }
        </div>
    };
    let result = match (&p_threads, &p_regs, &p_shared) {
        (Ok(t), Ok(r), Ok(s)) => {
            let launch = Launch {
                threads_per_block: *t,
                registers_per_thread: *r,
                shared_per_block: *s,
            };
            match occupancy(gpu, &launch) {
                Ok(o) => {
                    let pct = numbers::percent(o.fraction);
                    html! {
                        <div class="occ-result" data-occupancy={pct.clone()}>
                            <p class="big-number">{ ctx.tf("lesson.occupancy.result", &[
                                ("pct", &pct),
                                ("warps", &o.warps_per_sm.to_string()),
                                ("max", &gpu.max_warps_per_sm.to_string()),
                                ("blocks", &o.blocks_per_sm.to_string()),
                            ]) }</p>
                            <p class="limiter" data-limiter={format!("{:?}", o.limiter)}>
                                { ctx.tf("lesson.occupancy.binding", &[("limit", ctx.t(limiter_key(o.limiter)))]) }
                            </p>
                            { warp_slots(&ctx, o.warps_per_sm, gpu.max_warps_per_sm) }
                            <table class="facts">
                                <thead><tr><th scope="col">{ ctx.t("lesson.occupancy.col.limit") }</th><th scope="col">{ ctx.t("lesson.occupancy.col.blocks") }</th></tr></thead>
                                <tbody>
                                { for o.by_limit.iter().map(|(l, b)| html! {
                                    <tr class={classes!((*l == o.limiter).then_some("binding"))}>
                                        <th scope="row">{ ctx.t(limiter_key(*l)) }</th><td>{ b.to_string() }</td>
                                    </tr>
                                }) }
                                </tbody>
                            </table>
                        </div>
                    }
                }
                Err(e) => {
                    let text = match e {
                        LaunchError::Threads { max } => {
                            ctx.tf("lesson.occupancy.err.threads", &[("max", &max.to_string())])
                        }
                        LaunchError::Registers { max } => {
                            ctx.tf("lesson.occupancy.err.regs", &[("max", &max.to_string())])
                        }
                        LaunchError::Shared { max } => ctx.tf(
                            "lesson.occupancy.err.shared",
                            &[("max", &numbers::count(max as u64))],
                        ),
                    };
                    html! { <p class="message error" role="alert">{ text }</p> }
                }
            }
        }
        _ => html! { <p class="message">{ ctx.t("lesson.occupancy.fix_inputs") }</p> },
    };
    let specs = html! {
        <table class="facts spec-table">
            <tr><th scope="row">{ ctx.t("lesson.occupancy.spec.warps") }</th><td>{ gpu.max_warps_per_sm.to_string() }</td></tr>
            <tr><th scope="row">{ ctx.t("lesson.occupancy.spec.blocks") }</th><td>{ gpu.max_blocks_per_sm.to_string() }</td></tr>
            <tr><th scope="row">{ ctx.t("lesson.occupancy.spec.regs") }</th><td>{ numbers::count(gpu.registers_per_sm as u64) }</td></tr>
            <tr><th scope="row">{ ctx.t("lesson.occupancy.spec.shared") }</th><td>{ numbers::bytes(gpu.shared_per_sm as u64) }</td></tr>
        </table>
    };
    let webgpu = webgpu_side(&ctx, &p_threads, &p_shared);
    html! {
        <>
            { common::paras(&ctx, &["lesson.occupancy.p1", "lesson.occupancy.p2", "lesson.occupancy.p3"]) }
            { common::correction(&ctx, "lesson.occupancy.fc") }
            <section class="panel widget" data-widget="occupancy">
                <h2>{ ctx.t("lesson.occupancy.widget") }</h2>
                <p>{ ctx.t("lesson.occupancy.widget_intro") }</p>
                { fields }
                <div class="calc-columns">
                    <div>{ result }</div>
                    <div>
                        <h3>{ ctx.tf("lesson.occupancy.spec_heading", &[("gpu", gpu.gpu), ("cc", gpu.cc)]) }</h3>
                        { specs }
                        <h3>{ ctx.t("lesson.occupancy.webgpu_heading") }</h3>
                        <div data-probe={common::probe_state(&ctx)}>{ webgpu }</div>
                    </div>
                </div>
                <p class="note">{ ctx.linked("lesson.occupancy.source") }</p>
            </section>
            { common::paras(&ctx, &["lesson.occupancy.p4"]) }
            { common::try_it(&ctx, "lesson.occupancy.try", Some(("visualiser", "lesson.occupancy.try_link"))) }
        </>
    }
}

/// The visitor's WebGPU limits that correspond to threads per block and shared memory.
fn webgpu_side(ctx: &Ctx, threads: &Result<u32, String>, shared: &Result<u32, String>) -> Html {
    let inv = common::adapter_limit(ctx, INVOCATIONS);
    let smem = common::adapter_limit(ctx, STORAGE);
    let (Some(inv), Some(smem)) = (inv, smem) else {
        return html! { <p class="message">{ ctx.t("lesson.occupancy.webgpu_unknown") }</p> };
    };
    let fits = |v: &Result<u32, String>, max: f64| match v {
        Ok(x) if (*x as f64) <= max => Some(true),
        Ok(_) => Some(false),
        Err(_) => None,
    };
    let verdict = |f: Option<bool>| match f {
        Some(true) => html! { <span class="yes">{ ctx.t("lesson.occupancy.fits") }</span> },
        Some(false) => html! { <span class="no">{ ctx.t("lesson.occupancy.too_big") }</span> },
        None => html! {},
    };
    html! {
        <>
            <table class="facts" data-webgpu-limits="true">
                <tr><th scope="row"><code>{ INVOCATIONS }</code></th>
                    <td>{ numbers::count(inv as u64) }{ " " }{ verdict(fits(threads, inv)) }</td></tr>
                <tr><th scope="row"><code>{ STORAGE }</code></th>
                    <td>{ numbers::bytes(smem as u64) }{ " " }{ verdict(fits(shared, smem)) }</td></tr>
            </table>
            <p class="note">{ ctx.t("lesson.occupancy.webgpu_note") }</p>
        </>
    }
}

/// One square per warp slot of the SM; resident warps filled.
fn warp_slots(ctx: &Ctx, warps: u32, max: u32) -> Html {
    let per_row = 16;
    let rows = max.div_ceil(per_row);
    html! {
        <svg class="warp-slots" viewBox={format!("0 0 {} {}", per_row * 18, rows * 18)} role="img"
            aria-label={ctx.tf("lesson.occupancy.slots_alt", &[("warps", &warps.to_string()), ("max", &max.to_string())])}>
            { for (0..max).map(|i| html! {
                <rect x={((i % per_row) * 18).to_string()} y={((i / per_row) * 18).to_string()}
                    width="15" height="15" rx="2" class={if i < warps { "slot used" } else { "slot" }} />
            }) }
        </svg>
    }
}
