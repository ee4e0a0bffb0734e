//! Names of the built site's wasm modules, which the build writes and the hosting step
//! fingerprints and precaches (one definition, read by both).

/// The app's library name: `pkg/gpu_playground.js` and `pkg/gpu_playground_bg.wasm`.
pub const APP_LIB: &str = "gpu_playground";
/// The embed module's name in `pkg/` (the app without the `lessons` feature).
pub const EMBED_LIB: &str = "gpu_playground_embed";
