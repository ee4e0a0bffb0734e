//! The CNN page's MNIST digits: one content-hashed file (`cnn-digits.<hash>.bin`, the format of
//! `cnn::data`), written by `cargo xtask dist` and named in boot.js's `ASSETS`, which hands its
//! URL over at boot ([`set_sources`]). Nothing fetches it until a page calls [`load`]; the
//! service worker keeps it after that first fetch (sw.js `ON_USE`), so the page then works
//! offline.
//!
//! [`load`] fetches and decodes once per page session: later calls (a second visit to the page)
//! get the same [`Rc`], and calls made while the fetch is under way wait for that one fetch.
//! A failure is not remembered, so the next call tries again (the visitor came back online).
//! Every way it can fail is an [`AssetError`] with a translated message ([`AssetError::key`],
//! [`AssetError::args`]); nothing here panics on what the network returns.

use std::cell::RefCell;
use std::rc::Rc;

use cnn::data::{DataError, Digits};
use futures_channel::oneshot;

/// The key of the digits in boot.js's `ASSETS` (xtask's `names::DIGITS_ASSET`).
pub const KEY: &str = "cnn-digits";

/// Why the digits could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssetError {
    /// boot.js named no file (a site built without the asset, or the unbuilt `www/`).
    NoUrl,
    /// The request failed: offline and not cached yet, or the connection broke; the browser's
    /// words.
    Network(String),
    /// The server answered with this status (404: the file is missing on the host).
    Http(u16),
    /// The bytes are not the asset (an HTML error page, a truncated or altered download).
    Corrupt(DataError),
}

impl AssetError {
    /// The translation key of the message (`cnn.txt`, "the digits asset").
    pub fn key(&self) -> &'static str {
        match self {
            AssetError::NoUrl => "cnn.asset.no_url",
            AssetError::Network(_) => "cnn.asset.network",
            AssetError::Http(_) => "cnn.asset.http",
            AssetError::Corrupt(_) => "cnn.asset.corrupt",
        }
    }

    /// The message's placeholders: `{detail}` (network, corrupt) and `{status}` (HTTP).
    pub fn args(&self) -> Vec<(&'static str, String)> {
        match self {
            AssetError::NoUrl => Vec::new(),
            AssetError::Network(detail) => vec![("detail", detail.clone())],
            AssetError::Http(status) => vec![("status", status.to_string())],
            AssetError::Corrupt(e) => vec![("detail", describe(e))],
        }
    }
}

/// A data error in a few words and numbers (shown in brackets after the translated sentence).
fn describe(e: &DataError) -> String {
    match e {
        DataError::TooShort { len, need } => format!("{len} B < {need} B"),
        DataError::BadMagic(m) => format!("magic {:02x}{:02x}{:02x}{:02x}", m[0], m[1], m[2], m[3]),
        DataError::WrongVersion(v) => format!("version {v}"),
        DataError::BadCount(c) => format!("count {c}"),
        DataError::BadShape { rows, cols } => format!("shape {rows}×{cols}"),
        DataError::WrongLength { expected, actual } => format!("{actual} B ≠ {expected} B"),
        DataError::ChecksumMismatch { stored, computed } => {
            format!("checksum {computed:08x} ≠ {stored:08x}")
        }
        DataError::LabelOutOfRange { index, label } => format!("label {label} at {index}"),
    }
}

/// The bytes of a fetched asset, decoded.
pub fn from_bytes(bytes: &[u8]) -> Result<Digits, AssetError> {
    cnn::data::decode(bytes).map_err(AssetError::Corrupt)
}

type Outcome = Result<Rc<Digits>, AssetError>;

/// One value fetched at most once at a time and kept once it arrived: what [`load`] shares
/// between its callers (and `gpt_data_asset::load` between its own), apart from the fetching so
/// that it is tested natively.
pub(crate) struct Memo<T, E> {
    state: RefCell<State<T, E>>,
}

impl<T, E> Default for Memo<T, E> {
    fn default() -> Self {
        Self {
            state: RefCell::new(State::Idle),
        }
    }
}

enum State<T, E> {
    Idle,
    /// A fetch is under way; these callers wait for it.
    Loading(Vec<oneshot::Sender<Result<Rc<T>, E>>>),
    Ready(Rc<T>),
}

pub(crate) enum Joined<T, E> {
    Ready(Rc<T>),
    /// Wait on the receiver; `start`: this caller must start the fetch (nobody else has).
    Wait {
        answer: oneshot::Receiver<Result<Rc<T>, E>>,
        start: bool,
    },
}

impl<T, E: Clone> Memo<T, E> {
    pub(crate) fn join(&self) -> Joined<T, E> {
        let mut state = self.state.borrow_mut();
        let (tx, answer) = oneshot::channel();
        match &mut *state {
            State::Ready(d) => Joined::Ready(d.clone()),
            State::Loading(waiting) => {
                waiting.push(tx);
                Joined::Wait {
                    answer,
                    start: false,
                }
            }
            State::Idle => {
                *state = State::Loading(vec![tx]);
                Joined::Wait {
                    answer,
                    start: true,
                }
            }
        }
    }

    /// The fetch ended: every waiting caller gets `outcome`; kept when it is the digits,
    /// forgotten when it is an error (the next caller fetches again).
    pub(crate) fn finish(&self, outcome: Result<Rc<T>, E>) {
        let next = match &outcome {
            Ok(d) => State::Ready(d.clone()),
            Err(_) => State::Idle,
        };
        let before = std::mem::replace(&mut *self.state.borrow_mut(), next);
        if let State::Loading(waiting) = before {
            for tx in waiting {
                // A caller that went away (its page left) no longer needs the answer.
                let _ = tx.send(outcome.clone());
            }
        }
    }
}

thread_local! {
    static URL: RefCell<Option<String>> = const { RefCell::new(None) };
    static MEMO: Memo<Digits, AssetError> = Memo::default();
}

/// Takes the assets' URLs from boot.js (`{'cnn-digits': "cnn-digits.<hash>.bin"}`); an
/// object without the key (an unbuilt site) leaves none, and [`load`] says so.
pub fn set_sources(map: &wasm_bindgen::JsValue) {
    let url = js_sys::Reflect::get(map, &KEY.into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|u| !u.is_empty());
    URL.with(|u| *u.borrow_mut() = url);
}

/// The digits, fetched and decoded on the first call of the page session (see the module's
/// note). Never panics; a failure is an [`AssetError`] to show in the page.
pub async fn load() -> Result<Rc<Digits>, AssetError> {
    let answer = match MEMO.with(Memo::join) {
        Joined::Ready(d) => return Ok(d),
        Joined::Wait { answer, start } => {
            if start {
                // Its own task: a caller that stops waiting (left the page) does not cancel the
                // fetch the others wait for.
                wasm_bindgen_futures::spawn_local(async {
                    let outcome = fetch_and_decode().await;
                    MEMO.with(|m| m.finish(outcome));
                });
            }
            answer
        }
    };
    answer
        .await
        .unwrap_or_else(|_| Err(AssetError::Network("the load was dropped".into())))
}

async fn fetch_and_decode() -> Outcome {
    let url = URL.with(|u| u.borrow().clone()).ok_or(AssetError::NoUrl)?;
    let bytes = fetch_bytes(&url).await?;
    let decoded = from_bytes(&bytes);
    if decoded.is_err() {
        // The service worker kept what the server sent (it cannot tell good digits from bad):
        // drop that copy, so that reloading the page downloads them again, as the message says.
        if forget_cached(&url).await.is_none() {
            web_sys::console::warn_1(
                &format!("{url}: could not remove the damaged copy from the cache").into(),
            );
        }
    }
    if decoded.is_ok() {
        keep_on_first_visit(&url, &bytes);
    }
    decoded.map(Rc::new)
}

/// On a first visit the page fetches the digits before the service worker controls it, so
/// the worker never sees them and they would not be there offline. Hand the worker the bytes
/// once it is active (no second download); it keeps them only under an ON_USE name. Nothing to
/// do when a worker already controls the page (it kept its own copy) or without one.
pub(crate) fn keep_on_first_visit(url: &str, bytes: &[u8]) {
    use js_sys::{Function, Object, Reflect, Uint8Array};
    use wasm_bindgen::{JsCast, JsValue};
    let Ok(sw) = Reflect::get(&gloo::utils::window().navigator(), &"serviceWorker".into()) else {
        return;
    };
    if sw.is_undefined() || Reflect::get(&sw, &"controller".into()).is_ok_and(|c| !c.is_null()) {
        return;
    }
    let Ok(ready) = Reflect::get(&sw, &"ready".into()) else {
        return;
    };
    let message = Object::new();
    let body = Uint8Array::from(bytes);
    let set = |k: &str, v: &JsValue| Reflect::set(&message, &k.into(), v).is_ok();
    if !(set("type", &"keep".into()) && set("url", &url.into()) && set("body", &body.buffer())) {
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        let Ok(reg) = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(ready)).await
        else {
            return;
        };
        let active = Reflect::get(&reg, &"active".into()).unwrap_or(JsValue::NULL);
        if let Some(post) = Reflect::get(&active, &"postMessage".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
        {
            let _ = post.call1(&active, &message);
        }
    });
}

/// Deletes `url` from the site's caches (`caches.keys()`, each `open(k).delete(url)`), through
/// `Reflect` so that no web-sys features are needed. `None` when a step failed; nothing to do
/// without `caches` (an insecure context, where no service worker runs either).
pub(crate) async fn forget_cached(url: &str) -> Option<()> {
    use js_sys::{Array, Function, Promise, Reflect};
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;
    let caches = Reflect::get(&js_sys::global(), &"caches".into()).ok()?;
    if caches.is_undefined() {
        return Some(());
    }
    async fn call(obj: &JsValue, method: &str, args: &Array) -> Option<JsValue> {
        let f: Function = Reflect::get(obj, &method.into()).ok()?.dyn_into().ok()?;
        let promise: Promise = f.apply(obj, args).ok()?.dyn_into().ok()?;
        JsFuture::from(promise).await.ok()
    }
    let names = call(&caches, "keys", &Array::new()).await?;
    for name in Array::from(&names).iter() {
        let cache = call(&caches, "open", &Array::of1(&name)).await?;
        call(&cache, "delete", &Array::of1(&url.into())).await?;
    }
    Some(())
}

pub(crate) async fn fetch_bytes(url: &str) -> Result<Vec<u8>, AssetError> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let network = |e: wasm_bindgen::JsValue| AssetError::Network(js_message(&e));
    let resp = JsFuture::from(gloo::utils::window().fetch_with_str(url))
        .await
        .map_err(network)?;
    let resp: web_sys::Response = resp
        .dyn_into()
        .map_err(|_| AssetError::Network("not a response".into()))?;
    if !resp.ok() {
        return Err(AssetError::Http(resp.status()));
    }
    let buffer = JsFuture::from(resp.array_buffer().map_err(network)?)
        .await
        .map_err(network)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// A thrown JS value in words: an `Error`'s message, a string, or its type.
fn js_message(e: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string()
        .unwrap_or_else(|| e.js_typeof().as_string().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits() -> Digits {
        Digits {
            rows: 2,
            cols: 2,
            pixels: vec![0, 255, 7, 9, 1, 2, 3, 4],
            labels: vec![3, 9],
        }
    }

    #[test]
    fn the_asset_decodes_and_every_damage_is_a_corrupt_error() {
        let bytes = digits().encode().unwrap();
        assert_eq!(from_bytes(&bytes), Ok(digits()));
        let mut flipped = bytes.clone();
        flipped[21] ^= 1;
        let html = b"<!doctype html><title>404</title>".to_vec();
        for bad in [flipped, html, bytes[..bytes.len() - 1].to_vec(), Vec::new()] {
            let err = from_bytes(&bad).unwrap_err();
            assert_eq!(err.key(), "cnn.asset.corrupt");
            let detail = &err.args()[0];
            assert!(detail.0 == "detail" && !detail.1.is_empty(), "{err:?}");
        }
    }

    #[test]
    fn every_error_has_text_in_both_languages_with_its_placeholders_filled() {
        use crate::i18n::{tf, Lang};
        let errors = [
            AssetError::NoUrl,
            AssetError::Network("Failed to fetch".into()),
            AssetError::Http(404),
            AssetError::Corrupt(DataError::ChecksumMismatch {
                stored: 1,
                computed: 2,
            }),
        ];
        for e in &errors {
            assert!(crate::i18n::has(e.key()), "{}", e.key());
            let args = e.args();
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            for lang in Lang::ALL {
                let text = tf(lang, e.key(), &args);
                assert!(!text.contains('{') && !text.is_empty(), "{lang:?}: {text}");
                for (_, v) in &args {
                    assert!(text.contains(v), "{lang:?}: {text} lacks {v}");
                }
            }
        }
    }

    #[test]
    fn one_fetch_is_shared_kept_on_success_and_retried_after_a_failure() {
        let memo = Memo::<Digits, AssetError>::default();
        let Joined::Wait {
            answer: first,
            start: true,
        } = memo.join()
        else {
            panic!("the first caller starts the fetch");
        };
        let Joined::Wait {
            answer: second,
            start: false,
        } = memo.join()
        else {
            panic!("a caller during the fetch waits for it");
        };
        memo.finish(Err(AssetError::Http(404)));
        assert_eq!(pollster::block_on(first), Ok(Err(AssetError::Http(404))));
        assert_eq!(pollster::block_on(second), Ok(Err(AssetError::Http(404))));
        // The failure is forgotten: the next caller fetches again.
        let Joined::Wait {
            answer: third,
            start: true,
        } = memo.join()
        else {
            panic!("after a failure the next caller fetches again");
        };
        let waiting = memo.join();
        let d = Rc::new(digits());
        memo.finish(Ok(d.clone()));
        let got = pollster::block_on(third).unwrap().unwrap();
        assert!(Rc::ptr_eq(&got, &d));
        let Joined::Wait { answer, .. } = waiting else {
            panic!("waiting");
        };
        assert!(Rc::ptr_eq(
            &pollster::block_on(answer).unwrap().unwrap(),
            &d
        ));
        // Kept: later callers get the same digits without a fetch.
        let Joined::Ready(again) = memo.join() else {
            panic!("the digits are kept");
        };
        assert!(Rc::ptr_eq(&again, &d));
    }

    #[test]
    fn a_caller_that_went_away_does_not_stop_the_others() {
        let memo = Memo::<Digits, AssetError>::default();
        let Joined::Wait { answer: gone, .. } = memo.join() else {
            panic!()
        };
        drop(gone);
        let Joined::Wait { answer: stays, .. } = memo.join() else {
            panic!()
        };
        memo.finish(Ok(Rc::new(digits())));
        assert!(pollster::block_on(stays).unwrap().is_ok());
    }
}
