//! "Your GPU": whether WebGPU is there, which adapter, key limits and features.

use yew::prelude::*;

use super::Ctx;
use crate::probe::{Unavailable, WebGpuStatus, BYTE_LIMITS};

#[function_component]
pub fn GpuPanel() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let body = match &ctx.webgpu {
        WebGpuStatus::Checking => {
            html! { <p class="status checking">{ ctx.t("gpu.checking") }</p> }
        }
        WebGpuStatus::Unavailable(why) => {
            let reason = match why {
                Unavailable::InsecureContext => ctx.t("gpu.why.insecure").to_string(),
                Unavailable::NoApi => ctx.t("gpu.why.no_api").to_string(),
                Unavailable::NoAdapter => ctx.t("gpu.why.no_adapter").to_string(),
                Unavailable::Failed(e) => ctx.tf("gpu.why.error", &[("error", e)]),
            };
            html! {
                <>
                    <p class="status bad" data-webgpu="unavailable">{ ctx.t("gpu.unavailable") }</p>
                    <p class="reason">{ reason }</p>
                    <p>{ ctx.t("gpu.still_works") }</p>
                </>
            }
        }
        WebGpuStatus::Available(a) => {
            let or_unknown = |s: &str| {
                if s.is_empty() {
                    ctx.t("gpu.unknown").to_string()
                } else {
                    s.to_string()
                }
            };
            let info_rows = [
                ("gpu.vendor", or_unknown(&a.vendor)),
                ("gpu.architecture", or_unknown(&a.architecture)),
                ("gpu.device", or_unknown(&a.device)),
                ("gpu.description", or_unknown(&a.description)),
            ];
            let limit_rows = a.limits.iter().map(|(name, value)| {
                let shown = match value {
                    Some(v) if BYTE_LIMITS.contains(name) => numbers::bytes(*v as u64),
                    Some(v) => numbers::count(*v as u64),
                    None => ctx.t("gpu.unknown").to_string(),
                };
                html! {
                    <tr><th scope="row">{ ctx.t(&format!("gpu.limit.{name}")) }</th><td>{ shown }</td></tr>
                }
            });
            let feature_rows = a.features.iter().map(|(name, has)| {
                html! {
                    <tr>
                        <th scope="row">{ ctx.t(&format!("gpu.feature.{name}")) }</th>
                        <td class={if *has { "yes" } else { "no" }}>
                            { ctx.t(if *has { "gpu.feature.yes" } else { "gpu.feature.no" }) }
                        </td>
                    </tr>
                }
            });
            let kind = if a.is_software {
                html! {
                    <p class="notice software" data-software="true">
                        { ctx.tf("gpu.software", &[("name", &a.display_name())]) }
                    </p>
                }
            } else {
                html! { <p class="notice hardware">{ ctx.t("gpu.hardware") }</p> }
            };
            html! {
                <>
                    <p class="status good" data-webgpu="available">{ ctx.t("gpu.available") }</p>
                    { kind }
                    <table class="facts">
                        { for info_rows.iter().map(|(k, v)| html! {
                            <tr><th scope="row">{ ctx.t(k) }</th><td class="adapter-value">{ v.clone() }</td></tr>
                        }) }
                        if let Some((lo, hi)) = a.subgroup_sizes {
                            <tr>
                                <th scope="row">{ ctx.t("gpu.subgroup_sizes") }</th>
                                <td>{ if lo == hi { lo.to_string() } else { format!("{lo}–{hi}") } }</td>
                            </tr>
                        }
                    </table>
                    <h3>{ ctx.t("gpu.limits") }</h3>
                    <table class="facts">{ for limit_rows }</table>
                    <h3>{ ctx.t("gpu.features") }</h3>
                    <table class="facts">
                        { for feature_rows }
                        <tr data-subgroup-matrix={(a.subgroup_matrix.is_some()).to_string()}>
                            <th scope="row">{ ctx.t("gpu.feature.subgroup-matrix") }</th>
                            { match &a.subgroup_matrix {
                                None => html! { <td class="no">{ ctx.t("gpu.feature.no") }</td> },
                                Some(c) => html! { <td class="yes">{
                                    ctx.tf("gpu.feature.subgroup-matrix.tiles", &[(
                                        "tiles",
                                        &c.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
                                    )])
                                }</td> },
                            } }
                        </tr>
                    </table>
                </>
            }
        }
    };
    html! {
        <aside class="panel gpu-panel" aria-labelledby="gpu-panel-heading">
            <h2 id="gpu-panel-heading">{ ctx.t("gpu.heading") }</h2>
            { body }
        </aside>
    }
}
