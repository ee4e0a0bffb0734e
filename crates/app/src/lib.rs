//! The GPU Playground web app (Yew). Components render and dispatch; the logic they call
//! lives in plain crates (`gpu-runtime`, `cpu-kernels`, `simt-model`) and in the pure modules
//! here (`query`, `format`, `i18n`).

pub mod chart;
pub mod components;
pub mod format;
pub mod i18n;
pub mod probe;
pub mod query;
pub mod route;
pub mod session;
pub mod source_view;
pub mod vis_params;

use wasm_bindgen::prelude::*;

/// Entry point, called by the module's `init()` in index.html.
#[wasm_bindgen(start)]
pub fn start() {
    route::guard_hash();
    let root = gloo::utils::document()
        .get_element_by_id("app")
        .unwrap_or_else(|| gloo::utils::body().into());
    root.set_inner_html("");
    yew::Renderer::<components::App>::with_root(root).render();
}

/// Test hook: destroys the current GPU device so tests can check that the page recovers.
/// Returns whether there was a device to lose.
#[wasm_bindgen]
pub fn debug_lose_device() -> bool {
    session::simulate_loss()
}
