//! Translated text. Components never hold user-visible strings: they ask for a key here.
//! The text comes from `locales/<lang>/*.txt` (checked by build.rs, which also guarantees both
//! languages have the same keys). Native builds (the tests) compile the tables in. The site's
//! wasm carries none: `cargo xtask dist` writes one content-hashed file per language, boot.js
//! names them ([`set_sources`]), and the app fetches the language it shows ([`load`]) before
//! it renders, and another one when the visitor switches. The service worker precaches both,
//! so switching works offline. (That keeps ~430 KB of text, ~150 KiB gzip, out of the first
//! load: docs/benchmarks.md "First load".)

use std::sync::OnceLock;

mod tables {
    include!(concat!(env!("OUT_DIR"), "/locales.rs"));
}

type Table = &'static [(&'static str, &'static str)];

/// The tables fetched so far (wasm), one per language in `Lang::ALL` order.
static LOADED: [OnceLock<Table>; 2] = [OnceLock::new(), OnceLock::new()];

/// A UI language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The code used in URLs (`?lang=zh`) and storage.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// Accepts `en`, `zh` and regional forms such as `zh-CN` or `en-GB`.
    pub fn from_code(code: &str) -> Option<Lang> {
        let primary = code.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }

    fn index(self) -> usize {
        match self {
            Lang::En => 0,
            Lang::Zh => 1,
        }
    }

    /// The compiled-in table: the whole text on native builds, empty in the site's wasm.
    fn compiled(self) -> Table {
        match self {
            Lang::En => tables::EN,
            Lang::Zh => tables::ZH,
        }
    }

    fn table(self) -> Table {
        match LOADED[self.index()].get() {
            Some(t) => t,
            None => self.compiled(),
        }
    }
}

/// Whether `lang`'s text can be shown now (compiled in, or fetched).
pub fn is_loaded(lang: Lang) -> bool {
    !lang.table().is_empty()
}

/// Reads a table in the format `cargo xtask dist` writes (`locale_files.rs`, `serialize`):
/// `key = value` lines, `\n` for a line break in a value. Sorted by key on return (lookups
/// are binary searches), whatever the file's order. Lines without ` = ` are an error.
pub fn parse_table(text: &'static str) -> Result<Table, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(" = ") else {
            return Err(format!("line {}: expected `key = value`", n + 1));
        };
        let value: &'static str = if value.contains("\\n") {
            Box::leak(value.replace("\\n", "\n").into_boxed_str())
        } else {
            value
        };
        out.push((key, value));
    }
    out.sort_unstable_by_key(|(k, _)| *k);
    Ok(Box::leak(out.into_boxed_slice()))
}

/// Stores a fetched table for `lang` (kept for the page's lifetime). A second table for the
/// same language is ignored (two loads raced; they read the same file).
pub fn install(lang: Lang, table: Table) {
    let _ = LOADED[lang.index()].set(table);
}

thread_local! {
    /// Where each language's table is (relative URLs), from boot.js.
    static SOURCES: std::cell::RefCell<Vec<(Lang, String)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Takes the language files' URLs from boot.js: an object `{en: "locales/en.<hash>.txt", …}`.
pub fn set_sources(map: &wasm_bindgen::JsValue) {
    let found: Vec<(Lang, String)> = Lang::ALL
        .iter()
        .filter_map(|&l| {
            js_sys::Reflect::get(map, &l.code().into())
                .ok()?
                .as_string()
                .map(|url| (l, url))
        })
        .collect();
    SOURCES.with(|s| *s.borrow_mut() = found);
}

/// Fetches and installs `lang`'s text unless it is there already. Errors name the file.
pub async fn load(lang: Lang) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    if is_loaded(lang) {
        return Ok(());
    }
    let url = SOURCES
        .with(|s| {
            s.borrow()
                .iter()
                .find(|(l, _)| *l == lang)
                .map(|(_, u)| u.clone())
        })
        .ok_or_else(|| {
            format!(
                "no text file for language {} (boot.js names none)",
                lang.code()
            )
        })?;
    let failed = |what: &str| format!("{url}: {what}");
    let resp = JsFuture::from(gloo::utils::window().fetch_with_str(&url))
        .await
        .map_err(|_| failed("could not be fetched"))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| failed("not a response"))?;
    if !resp.ok() {
        return Err(failed(&format!("HTTP {}", resp.status())));
    }
    let text = JsFuture::from(resp.text().map_err(|_| failed("unreadable"))?)
        .await
        .ok()
        .and_then(|t| t.as_string())
        .ok_or_else(|| failed("unreadable"))?;
    let table = parse_table(Box::leak(text.into_boxed_str())).map_err(|e| failed(&e))?;
    if table.is_empty() {
        return Err(failed("empty"));
    }
    install(lang, table);
    Ok(())
}

/// The text of `key`. A missing key shows the key itself (a unit test keeps that from
/// happening for every key the source uses).
pub fn t(lang: Lang, key: &str) -> &'static str {
    let table = lang.table();
    match table.binary_search_by(|(k, _)| (*k).cmp(key)) {
        Ok(i) => table[i].1,
        Err(_) => lookup_missing(key),
    }
}

/// The whole table of `lang` as it is now (compiled in or fetched; empty before a fetch).
pub fn entries(lang: Lang) -> Table {
    lang.table()
}

fn lookup_missing(key: &str) -> &'static str {
    // Leaking is fine: it only happens for a bug the tests catch, and at most once per key.
    Box::leak(format!("[{key}]").into_boxed_str())
}

/// `t` with `{name}` placeholders filled in.
pub fn tf(lang: Lang, key: &str, args: &[(&str, &str)]) -> String {
    let mut s = t(lang, key).to_string();
    for (name, value) in args {
        s = s.replace(&format!("{{{name}}}"), value);
    }
    s
}

/// Every key (the same in both languages; English's table as loaded now).
pub fn keys() -> impl Iterator<Item = &'static str> {
    Lang::En.table().iter().map(|(k, _)| *k)
}

/// Whether a key exists (in both tables, by construction).
pub fn has(key: &str) -> bool {
    Lang::En
        .table()
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_complete() {
        for lang in Lang::ALL {
            let table = lang.table();
            assert!(table.windows(2).all(|w| w[0].0 < w[1].0));
            assert_eq!(table.len(), tables::EN.len());
        }
    }

    #[test]
    fn parse_table_reads_line_breaks_and_sorts() {
        let t = parse_table("b = two\\nlines\na = one {x}\n\n").unwrap();
        assert_eq!(t, &[("a", "one {x}"), ("b", "two\nlines")]);
        assert!(parse_table("no separator here").is_err());
        assert_eq!(parse_table("").unwrap().len(), 0);
    }

    #[test]
    fn placeholders_are_filled() {
        let s = tf(
            Lang::En,
            "size.out_of_range",
            &[("min", "1"), ("max", "4096")],
        );
        assert!(
            s.contains("1") && s.contains("4096") && !s.contains('{'),
            "{s}"
        );
    }

    #[test]
    fn lang_codes() {
        assert_eq!(Lang::from_code("zh-CN"), Some(Lang::Zh));
        assert_eq!(Lang::from_code("EN"), Some(Lang::En));
        assert_eq!(Lang::from_code("fr"), None);
        assert_eq!(Lang::from_code(""), None);
    }
}
