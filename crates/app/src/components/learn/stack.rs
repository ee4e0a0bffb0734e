//! Lesson `stack`: the software stack. A CUDA ↔ WebGPU/WGSL table, a launch translator
//! (`lessons::launch`) and what frameworks do for you.

use lessons::launch::{self, Issue, LaunchError, LaunchInput};
use lessons::units::parse_count;
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, q, text_field};
use crate::components::Ctx;
use numbers::count;

/// (concept key, CUDA, WebGPU/WGSL). The code columns are code, shown as is.
const ROWS: [(&str, &str, &str); 9] = [
    (
        "lesson.stack.row.block",
        "dim3 block(16, 16);",
        "@workgroup_size(16, 16)",
    ),
    (
        "lesson.stack.row.warp",
        "warpSize  // 32",
        "@builtin(subgroup_size)",
    ),
    (
        "lesson.stack.row.shared",
        "__shared__ float tile[256];",
        "var<workgroup> tile: array<f32, 256>;",
    ),
    (
        "lesson.stack.row.barrier",
        "__syncthreads();",
        "workgroupBarrier();",
    ),
    (
        "lesson.stack.row.ids",
        "threadIdx / blockIdx / blockDim",
        "local_invocation_id / workgroup_id / @workgroup_size",
    ),
    (
        "lesson.stack.row.global",
        "blockIdx.x * blockDim.x + threadIdx.x",
        "global_invocation_id.x",
    ),
    (
        "lesson.stack.row.alloc",
        "cudaMalloc / cudaMemcpy",
        "device.createBuffer / queue.writeBuffer",
    ),
    (
        "lesson.stack.row.launch",
        "kernel<<<grid, block>>>(…)",
        "pass.dispatchWorkgroups(x, y, z) + @workgroup_size",
    ),
    ("lesson.stack.row.libs", "cuBLAS / cuDNN", "#/kernels"),
];

fn issue_text(i: Issue) -> (bool, &'static str) {
    // (is it an error for one of the APIs, key)
    match i {
        Issue::CudaBlock => (true, "lesson.stack.issue.cuda_block"),
        Issue::CudaGridY => (true, "lesson.stack.issue.cuda_grid"),
        Issue::WebGpuInvocations => (true, "lesson.stack.issue.webgpu_invocations"),
        Issue::WebGpuSize => (true, "lesson.stack.issue.webgpu_size"),
        Issue::WebGpuWorkgroups => (true, "lesson.stack.issue.webgpu_workgroups"),
        Issue::PartialWarp => (false, "lesson.stack.issue.partial_warp"),
    }
}

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let keys = [("w", "1000"), ("h", "1000"), ("bx", "16"), ("by", "16")];
    let raw: Vec<String> = keys.iter().map(|(k, d)| q(&ctx, k, d)).collect();
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let nums: Vec<Option<u64>> = keys
        .iter()
        .zip(&raw)
        .map(|((k, _), r)| {
            let v = parse_count(r).filter(|v| *v > 0);
            if v.is_none() {
                errors.push((k, ctx.t("lesson.common.err.whole").to_string()));
            }
            v
        })
        .collect();
    let result = match nums.as_slice() {
        [Some(w), Some(h), Some(bx), Some(by)] => {
            match launch::translate(&LaunchInput {
                width: *w,
                height: *h,
                block_x: *bx,
                block_y: *by,
            }) {
                Ok(r) => Some((*w, *h, *bx, *by, r)),
                Err(LaunchError::OutOfRange(name)) => {
                    let key = match name {
                        "width" => "w",
                        "height" => "h",
                        "block_x" => "bx",
                        _ => "by",
                    };
                    errors.push((key, ctx.t("lesson.common.err.too_large").to_string()));
                    None
                }
            }
        }
        _ => None,
    };
    let err = |key: &str| form::field_error(&errors, key);

    let output = match result {
        None => html! {
            <p class="message error" role="alert" data-launch="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p>
        },
        Some((w, h, bx, by, (l, issues))) => {
            let cuda = format!(
                "dim3 block({bx}, {by});\ndim3 grid(({w} + {bx} - 1) / {bx}, ({h} + {by} - 1) / {by});  // = ({gx}, {gy})\nkernel<<<grid, block>>>(out, {w}, {h});\n\n__global__ void kernel(float* out, int w, int h) {{\n  int x = blockIdx.x * blockDim.x + threadIdx.x;\n  int y = blockIdx.y * blockDim.y + threadIdx.y;\n  if (x >= w || y >= h) return;\n}}",
                gx = l.grid_x,
                gy = l.grid_y
            );
            let wgsl = format!(
                "// WGSL\n@compute @workgroup_size({bx}, {by})\nfn main(@builtin(workgroup_id) wid: vec3<u32>,\n        @builtin(local_invocation_id) lid: vec3<u32>) {{\n  let x = wid.x * {bx}u + lid.x;   // = global_invocation_id.x\n  let y = wid.y * {by}u + lid.y;\n  if (x >= {w}u || y >= {h}u) {{ return; }}\n}}\n\n// WebGPU API\npass.dispatchWorkgroups({gx}, {gy});",
                gx = l.grid_x,
                gy = l.grid_y
            );
            let issue_items = issues.iter().map(|i| {
                let (bad, key) = issue_text(*i);
                html! { <li class={classes!(if bad { "bad" } else { "warn" })} data-issue={format!("{i:?}")}>{ ctx.t(key) }</li> }
            });
            html! {
                <>
                    <p class="total" data-launch={format!("{}x{}", l.grid_x, l.grid_y)}>
                        { ctx.tf("lesson.stack.result", &[
                            ("gx", &count(l.grid_x)),
                            ("gy", &count(l.grid_y)),
                            ("tpb", &count(l.threads_per_block)),
                            ("warps", &l.warps_per_block.to_string()),
                            ("launched", &count(l.launched)),
                            ("idle", &count(l.idle)),
                        ]) }
                    </p>
                    if issues.is_empty() {
                        <p class="message ok">{ ctx.t("lesson.stack.ok") }</p>
                    } else {
                        <ul class="issues">{ for issue_items }</ul>
                    }
                    <div class="code-pair">
                        <figure>
                            <figcaption>{ ctx.t("lesson.stack.cuda") }</figcaption>
                            <pre><code>{ cuda }</code></pre>
                        </figure>
                        <figure>
                            <figcaption>{ ctx.t("lesson.stack.webgpu") }</figcaption>
                            <pre><code>{ wgsl }</code></pre>
                        </figure>
                    </div>
                </>
            }
        }
    };

    let lang = ctx.lang.code();
    html! {
        <div class="lesson-body lb">
            <p class="lead">{ ctx.t("lesson.stack.lead") }</p>
            <table class="data mapping">
                <thead><tr>
                    <th scope="col">{ ctx.t("lesson.stack.col.concept") }</th>
                    <th scope="col">{ ctx.t("lesson.stack.cuda") }</th>
                    <th scope="col">{ ctx.t("lesson.stack.webgpu") }</th>
                </tr></thead>
                <tbody>
                    { for ROWS.iter().map(|(key, cuda, wgsl)| html! {
                        <tr>
                            <th scope="row">{ ctx.t(key) }</th>
                            <td><code>{ *cuda }</code></td>
                            <td>
                                if wgsl.starts_with('#') {
                                    <a href={format!("{wgsl}?lang={lang}")}>{ ctx.t("lesson.stack.kernels_link") }</a>
                                } else {
                                    <code>{ *wgsl }</code>
                                }
                            </td>
                        </tr>
                    }) }
                </tbody>
            </table>
            <p class="note">{ ctx.t("lesson.stack.table_note") }</p>

            <section class="panel calc" id="launch-calc" aria-labelledby="launch-calc-h">
                <h2 id="launch-calc-h">{ ctx.t("lesson.stack.calc") }</h2>
                <p>{ ctx.t("lesson.stack.calc_intro") }</p>
                <div class="fields">
                    { text_field(&ctx, &nav, "w", ctx.t("lesson.stack.f.width"), raw[0].clone(), err("w")) }
                    { text_field(&ctx, &nav, "h", ctx.t("lesson.stack.f.height"), raw[1].clone(), err("h")) }
                    { text_field(&ctx, &nav, "bx", ctx.t("lesson.stack.f.bx"), raw[2].clone(), err("bx")) }
                    { text_field(&ctx, &nav, "by", ctx.t("lesson.stack.f.by"), raw[3].clone(), err("by")) }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.t("lesson.stack.limits_note") }</p>
            </section>

            <h2>{ ctx.t("lesson.stack.frameworks_heading") }</h2>
            <p>{ ctx.t("lesson.stack.frameworks_intro") }</p>
            <ul>
                <li>{ ctx.t("lesson.stack.fw.autograd") }</li>
                <li>{ ctx.t("lesson.stack.fw.kernels") }</li>
                <li>{ ctx.t("lesson.stack.fw.memory") }</li>
                <li>{ ctx.t("lesson.stack.fw.amp") }</li>
                <li>{ ctx.t("lesson.stack.fw.comms") }</li>
                <li>{ ctx.t("lesson.stack.fw.compile") }</li>
            </ul>
            { form::corrections(&ctx, &["lesson.stack.fc72", "lesson.stack.fc75", "lesson.stack.fc51", "lesson.stack.fc84"]) }
            { form::try_it(&ctx, "lesson.stack.try") }
        </div>
    }
}
