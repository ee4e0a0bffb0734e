//! The GPT page's training text: two content-hashed files (`gpt-names.<hash>.txt`,
//! `gpt-poems.<hash>.txt`, the format of `gpt::asset`), written by `cargo xtask dist` and named
//! in boot.js's `ASSETS`, which hands their URLs over at boot ([`set_sources`]). Nothing fetches
//! one until a page calls [`load`] for it (the landing page never does); the service worker
//! keeps it after that first fetch (sw.js `ON_USE`), so the page then works offline.
//!
//! As for the digits (`digits_asset.rs`, whose fetching and [`Memo`] this shares): each data
//! set is fetched and decoded once per page session, callers during the fetch wait for it, a
//! failure is not remembered, and every way it can fail is an [`AssetError`] with a translated
//! message. The decoded text is split at once ([`Loaded::corpus`], `gpt::asset::SPLIT_SEED`),
//! so the page, its CPU twin and the bigram baseline all see the same validation documents.

use std::cell::RefCell;
use std::rc::Rc;

use gpt::asset::{CorpusAsset, Dataset};
use gpt::Corpus;

use crate::digits_asset::{self, Joined, Memo};

/// A data set as the page uses it: the asset (its documents and build-time vocabulary) and its
/// seeded train/validation split.
#[derive(Debug, PartialEq, Eq)]
pub struct Loaded {
    pub asset: CorpusAsset,
    pub corpus: Corpus,
}

/// Why a data set could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssetError {
    /// boot.js named no file for it (a site built without the assets, or the unbuilt `www/`).
    NoUrl,
    /// The request failed: offline and not cached yet, or the connection broke; the browser's
    /// words.
    Network(String),
    /// The server answered with this status.
    Http(u16),
    /// The bytes are not the asset (an HTML error page, a truncated or altered download), or
    /// the asset of the other data set.
    Corrupt(String),
}

impl AssetError {
    /// The translation key of the message (`gpt.txt`).
    pub fn key(&self) -> &'static str {
        match self {
            AssetError::NoUrl => "gpt.asset.no_url",
            AssetError::Network(_) => "gpt.asset.network",
            AssetError::Http(_) => "gpt.asset.http",
            AssetError::Corrupt(_) => "gpt.asset.corrupt",
        }
    }

    /// The message's placeholders besides `{name}` ([`name_key`]): `{detail}` (network,
    /// corrupt) and `{status}` (HTTP).
    pub fn args(&self) -> Vec<(&'static str, String)> {
        match self {
            AssetError::NoUrl => Vec::new(),
            AssetError::Network(detail) | AssetError::Corrupt(detail) => {
                vec![("detail", detail.clone())]
            }
            AssetError::Http(status) => vec![("status", status.to_string())],
        }
    }
}

/// The translation key of a data set's name, for `{name}` in the messages and the loading line.
pub fn name_key(d: Dataset) -> &'static str {
    match d {
        Dataset::Names => "gpt.data.names",
        Dataset::Poems => "gpt.data.poems",
    }
}

/// The translation key of a data set's credit line (placeholders `{n}`, `{train}`, `{val}`:
/// [`credit_args`]).
pub fn credit_key(d: Dataset) -> &'static str {
    match d {
        Dataset::Names => "gpt.data.credit.names",
        Dataset::Poems => "gpt.data.credit.poems",
    }
}

/// The credit line's numbers for a loaded data set.
pub fn credit_args(l: &Loaded) -> Vec<(&'static str, String)> {
    vec![
        ("n", numbers::count(l.asset.docs.len() as u64)),
        ("train", numbers::count(l.corpus.train.len() as u64)),
        ("val", numbers::count(l.corpus.val.len() as u64)),
    ]
}

/// The bytes of a fetched asset of `d`, decoded and split.
pub fn from_bytes(d: Dataset, bytes: &[u8]) -> Result<Loaded, AssetError> {
    let asset = CorpusAsset::decode(bytes).map_err(|e| AssetError::Corrupt(e.to_string()))?;
    if asset.name != d.key() {
        return Err(AssetError::Corrupt(format!(
            "{} ≠ {}",
            asset.name.chars().take(40).collect::<String>(),
            d.key()
        )));
    }
    let corpus = asset.corpus();
    debug_assert_eq!(corpus.vocab, asset.vocab, "decode checked the vocabulary");
    Ok(Loaded { asset, corpus })
}

thread_local! {
    static URLS: RefCell<[Option<String>; 2]> = const { RefCell::new([None, None]) };
    static MEMOS: [Memo<Loaded, AssetError>; 2] = Default::default();
}

fn index(d: Dataset) -> usize {
    match d {
        Dataset::Names => 0,
        Dataset::Poems => 1,
    }
}

/// Takes the assets' URLs from boot.js (`{'gpt-names': "gpt-names.<hash>.txt", …}`); a key
/// that is missing (an unbuilt site) leaves none, and [`load`] says so.
pub fn set_sources(map: &wasm_bindgen::JsValue) {
    for d in Dataset::ALL {
        let url = js_sys::Reflect::get(map, &d.key().into())
            .ok()
            .and_then(|v| v.as_string())
            .filter(|u| !u.is_empty());
        URLS.with(|u| u.borrow_mut()[index(d)] = url);
    }
}

/// The data set `d`, fetched, decoded and split on the first call of the page session (see
/// the module's note). Never panics; a failure is an [`AssetError`] to show in the page.
pub async fn load(d: Dataset) -> Result<Rc<Loaded>, AssetError> {
    let answer = match MEMOS.with(|m| m[index(d)].join()) {
        Joined::Ready(l) => return Ok(l),
        Joined::Wait { answer, start } => {
            if start {
                // Its own task: a caller that leaves the page does not cancel the fetch the
                // others wait for.
                wasm_bindgen_futures::spawn_local(async move {
                    let outcome = fetch_and_decode(d).await;
                    MEMOS.with(|m| m[index(d)].finish(outcome));
                });
            }
            answer
        }
    };
    answer
        .await
        .unwrap_or_else(|_| Err(AssetError::Network("the load was dropped".into())))
}

async fn fetch_and_decode(d: Dataset) -> Result<Rc<Loaded>, AssetError> {
    let url = URLS
        .with(|u| u.borrow()[index(d)].clone())
        .ok_or(AssetError::NoUrl)?;
    let bytes = digits_asset::fetch_bytes(&url).await.map_err(|e| match e {
        digits_asset::AssetError::Http(s) => AssetError::Http(s),
        digits_asset::AssetError::Network(m) => AssetError::Network(m),
        other => AssetError::Network(format!("{other:?}")),
    })?;
    let decoded = from_bytes(d, &bytes);
    match &decoded {
        // The service worker kept what the server sent: drop that copy, so that reloading
        // downloads the text again, as the message says.
        Err(_) => {
            if digits_asset::forget_cached(&url).await.is_none() {
                web_sys::console::warn_1(
                    &format!("{url}: could not remove the damaged copy from the cache").into(),
                );
            }
        }
        Ok(_) => digits_asset::keep_on_first_visit(&url, &bytes),
    }
    decoded.map(Rc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset(d: Dataset) -> Vec<u8> {
        let docs: Vec<String> = match d {
            Dataset::Names => (0..30)
                .map(|i| format!("n{}", "ab".repeat(i % 4 + 1)))
                .collect(),
            Dataset::Poems => vec![
                "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。".into();
                3
            ],
        };
        CorpusAsset::new(d.key(), docs).unwrap().encode()
    }

    #[test]
    fn the_asset_decodes_split_and_every_damage_is_a_corrupt_error() {
        let bytes = asset(Dataset::Names);
        let l = from_bytes(Dataset::Names, &bytes).unwrap();
        assert_eq!(l.asset.docs.len(), 30);
        assert_eq!((l.corpus.train.len(), l.corpus.val.len()), (27, 3));
        assert_eq!(l.corpus.vocab, l.asset.vocab);
        assert_eq!(from_bytes(Dataset::Names, &bytes), Ok(l));
        let mut flipped = bytes.clone();
        let at = flipped.len() - 2;
        flipped[at] ^= 1;
        let html = b"<!doctype html><title>404</title>".to_vec();
        for (d, bad) in [
            (Dataset::Names, flipped),
            (Dataset::Names, html),
            (Dataset::Names, bytes[..bytes.len() - 1].to_vec()),
            (Dataset::Names, Vec::new()),
            // The other data set's file under this one's key.
            (Dataset::Names, asset(Dataset::Poems)),
        ] {
            let err = from_bytes(d, &bad).unwrap_err();
            assert_eq!(err.key(), "gpt.asset.corrupt");
            let detail = &err.args()[0];
            assert!(detail.0 == "detail" && !detail.1.is_empty(), "{err:?}");
        }
    }

    #[test]
    fn every_message_and_credit_has_text_in_both_languages_with_its_placeholders_filled() {
        use crate::i18n::{tf, Lang};
        let errors = [
            AssetError::NoUrl,
            AssetError::Network("Failed to fetch".into()),
            AssetError::Http(404),
            AssetError::Corrupt("checksum 1 ≠ 2".into()),
        ];
        for d in Dataset::ALL {
            for lang in Lang::ALL {
                let name = tf(lang, name_key(d), &[]);
                assert!(!name.is_empty());
                for e in &errors {
                    let mut args = e.args();
                    args.push(("name", name.clone()));
                    let args: Vec<(&str, &str)> =
                        args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    let text = tf(lang, e.key(), &args);
                    assert!(!text.contains('{') && !text.is_empty(), "{lang:?}: {text}");
                    for (_, v) in &args {
                        assert!(text.contains(v), "{lang:?}: {text} lacks {v}");
                    }
                }
                let l = from_bytes(d, &asset(d)).unwrap();
                let args = credit_args(&l);
                let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let credit = tf(lang, credit_key(d), &args);
                assert!(!credit.contains('{'), "{lang:?}: {credit}");
                for (_, v) in &args {
                    assert!(credit.contains(v), "{lang:?}: {credit} lacks {v}");
                }
            }
        }
    }
}
