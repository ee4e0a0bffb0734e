//! Names of the built site's wasm modules and data assets, which the build writes and the
//! hosting step fingerprints and precaches or leaves to be cached on use (one definition, read
//! by both).

/// The app's library name: `pkg/gpu_playground.js` and `pkg/gpu_playground_bg.wasm`.
pub const APP_LIB: &str = "gpu_playground";
/// The embed module's name in `pkg/` (the app without the `lessons` feature).
pub const EMBED_LIB: &str = "gpu_playground_embed";

/// The CNN page's MNIST digits (`cnn-digits.<hash>.bin`, written by `mnist::write_site_asset`):
/// also its key in boot.js's `ASSETS`, which hands the URL to the app (`digits_asset.rs`). Not
/// precached: only the pages that train on it fetch it, and the service worker keeps it then.
pub const DIGITS_ASSET: &str = "cnn-digits";

/// The GPT page's corpora (`gpt-names.<hash>.txt`, `gpt-poems.<hash>.txt`, written by
/// `gpt_data::write_site_assets`): their keys in boot.js's `ASSETS` are `gpt::asset::Dataset`'s
/// keys, one definition for the build and the page. Not precached, as the digits.
pub const GPT_ASSETS: [gpt::asset::Dataset; 2] = gpt::asset::Dataset::ALL;
