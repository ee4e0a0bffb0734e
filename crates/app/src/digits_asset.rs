//! Placeholder of the digits asset's loader (the asset branch replaces this file).

use std::rc::Rc;

use cnn::data::{DataError, Digits};

#[derive(Clone, Debug, PartialEq)]
pub enum AssetError {
    NoUrl,
    Network(String),
    Http(u16),
    Corrupt(DataError),
}

impl AssetError {
    pub fn key(&self) -> &'static str {
        match self {
            AssetError::NoUrl => "cnn.asset.no_url",
            AssetError::Network(_) => "cnn.asset.network",
            AssetError::Http(_) => "cnn.asset.http",
            AssetError::Corrupt(_) => "cnn.asset.corrupt",
        }
    }

    pub fn args(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

pub async fn load() -> Result<Rc<Digits>, AssetError> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let resp = JsFuture::from(gloo::utils::window().fetch_with_str("cnn-digits.bin"))
        .await
        .map_err(|e| AssetError::Network(format!("{e:?}")))?;
    let resp: web_sys::Response = resp
        .dyn_into()
        .map_err(|_| AssetError::Network("not a response".into()))?;
    if !resp.ok() {
        return Err(AssetError::Http(resp.status()));
    }
    let buf = JsFuture::from(
        resp.array_buffer()
            .map_err(|_| AssetError::Network("unreadable".into()))?,
    )
    .await
    .map_err(|_| AssetError::Network("unreadable".into()))?;
    let bytes = js_sys::Uint8Array::new(&buf).to_vec();
    cnn::data::decode(&bytes)
        .map(Rc::new)
        .map_err(AssetError::Corrupt)
}
