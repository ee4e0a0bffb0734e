//! The GPU Playground web app (Yew). Components render and dispatch; the logic they call
//! lives in plain crates (`page-models` for each page's, `gpu-runtime`, `cpu-kernels`,
//! `simt-model`). What stays here holds the browser or the device: the text tables (`i18n`),
//! the page's one device (`session`), the training pages' one driver (`train_driver`), the race's
//! workers (`race_workers`) and what the browser offers (`probe`).

pub mod components;
#[cfg(feature = "cnn-page")]
pub mod digits_asset;
// The data assets ship in the whole app only, with the pages that fetch them.
#[cfg(feature = "cnn-page")]
pub mod gpt_claim;
#[cfg(feature = "cnn-page")]
pub mod gpt_data_asset;
pub mod i18n;
pub mod probe;
pub mod race_workers;
pub mod route;
pub mod session;
pub mod store;
pub mod train_driver;
pub mod visibility;
pub mod visits;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Entry point, called by boot.js once the module is instantiated, with the language files'
/// URLs (`{en: "locales/en.<hash>.txt", …}`, written by `cargo xtask dist`) and the data
/// assets' (`{'cnn-digits': "cnn-digits.<hash>.bin", 'gpt-names': …}`, fetched only by the page
/// that uses them: `digits_asset.rs`, `gpt_data_asset.rs`): fetches the text
/// of the language the page will show, then renders. A rejection (the text could not be
/// fetched) reaches boot.js, which shows its could-not-start message. The race's CPU workers
/// load this same module and never call it.
#[wasm_bindgen]
pub async fn boot(locales: JsValue, assets: JsValue) -> Result<(), JsValue> {
    if js_sys::global().dyn_into::<web_sys::Window>().is_err() {
        return Ok(());
    }
    route::guard_hash();
    i18n::set_sources(&locales);
    // Only the CNN page (and the GPT page to come) fetch data; the embed module has neither.
    #[cfg(feature = "cnn-page")]
    digits_asset::set_sources(&assets);
    #[cfg(feature = "cnn-page")]
    gpt_data_asset::set_sources(&assets);
    #[cfg(not(feature = "cnn-page"))]
    let _ = assets;
    let (lang, parts) = components::initial_text();
    i18n::load(lang, parts)
        .await
        .map_err(|e| JsValue::from_str(&e))?;
    let root = gloo::utils::document()
        .get_element_by_id("app")
        .unwrap_or_else(|| gloo::utils::body().into());
    root.set_inner_html("");
    yew::Renderer::<components::App>::with_root(root).render();
    Ok(())
}

/// Test hook: destroys the current GPU device so tests can check that the page recovers.
/// Returns whether there was a device to lose.
#[wasm_bindgen]
pub fn debug_lose_device() -> bool {
    session::destroy_device()
}

/// Test hook: GPU buffers created by the runtime and not yet destroyed (0 when idle).
#[wasm_bindgen]
pub fn debug_live_buffers() -> u32 {
    gpu_runtime::live_buffers()
}
