//! Translated text. Components never hold user-visible strings: they ask for a key here.
//! The text comes from `locales/<lang>/*.txt` (checked by build.rs, which also guarantees both
//! languages have the same keys). Native builds (the tests) compile the tables in. The site's
//! wasm carries none: `cargo xtask dist` writes each language in [`Part`]s, one content-hashed
//! file each; boot.js names them ([`set_sources`]); before it renders a page the app fetches
//! the parts that page shows ([`load`], the route's `text_parts`), so an embed of one widget
//! does not download the lessons. The service worker precaches every file, so switching
//! language or page works offline (docs/benchmarks.md "First load").
//!
//! A key of a part the page did not ask for is a bug in a route's `text_parts`: it shows
//! nothing for a moment, the rest of the language is fetched and the page re-rendered, and the
//! console gets an error naming the key, which fails the browser tests.

use std::cell::{Cell, RefCell};
use std::sync::OnceLock;

mod tables {
    include!(concat!(env!("OUT_DIR"), "/locales.rs"));
}

type Table = &'static [(&'static str, &'static str)];

/// A group of translation files fetched together; the same groups, in the same order, as
/// `locale_files::PARTS` (`crates/locale-files`; a unit test checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// Shell, navigation, the landing page, embeds, kernel and lesson titles: every page.
    Core,
    Race,
    Conv,
    Editor,
    Train,
    /// Lesson bodies, quizzes and the glossary.
    Lessons,
    /// The CNN page.
    Cnn,
    /// The CNN kernels' explanations: on the CNN page and in the editor.
    CnnKernels,
    /// The GPT page.
    Gpt,
}

impl Part {
    pub const ALL: [Part; 9] = [
        Part::Core,
        Part::Race,
        Part::Conv,
        Part::Editor,
        Part::Train,
        Part::Lessons,
        Part::Cnn,
        Part::CnnKernels,
        Part::Gpt,
    ];

    /// The name in file names and in boot.js (`en-core`).
    pub fn name(self) -> &'static str {
        match self {
            Part::Core => "core",
            Part::Race => "race",
            Part::Conv => "conv",
            Part::Editor => "editor",
            Part::Train => "train",
            Part::Lessons => "lessons",
            Part::Cnn => "cnn",
            Part::CnnKernels => "cnn-kernels",
            Part::Gpt => "gpt",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The parts fetched so far (wasm), per language in `Lang::ALL` order.
static LOADED: [[OnceLock<Table>; Part::ALL.len()]; 2] =
    [const { [const { OnceLock::new() }; Part::ALL.len()] }; 2];

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

    /// The text of `key`, from the compiled table or any part fetched so far.
    fn find(self, key: &str) -> Option<&'static str> {
        let search = |table: Table| {
            table
                .binary_search_by(|(k, _)| (*k).cmp(key))
                .ok()
                .map(|i| table[i].1)
        };
        search(self.compiled()).or_else(|| {
            LOADED[self.index()]
                .iter()
                .filter_map(OnceLock::get)
                .find_map(|t| search(t))
        })
    }
}

/// Whether `lang`'s text for every one of `parts` (and the core) can be shown now.
pub fn is_ready(lang: Lang, parts: &[Part]) -> bool {
    !lang.compiled().is_empty()
        || std::iter::once(&Part::Core)
            .chain(parts)
            .all(|p| LOADED[lang.index()][p.index()].get().is_some())
}

/// Whether `lang`'s core text (the shell, every page's frame) can be shown now.
pub fn is_loaded(lang: Lang) -> bool {
    is_ready(lang, &[])
}

/// Reads a table in the format `cargo xtask dist` writes (`locale_files::serialize`):
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

/// Stores a fetched part of `lang` (kept for the page's lifetime). A second copy of the same
/// part is ignored (two loads raced; they read the same file).
pub fn install(lang: Lang, part: Part, table: Table) {
    let _ = LOADED[lang.index()][part.index()].set(table);
}

thread_local! {
    /// Where each language's parts are (relative URLs), from boot.js.
    static SOURCES: RefCell<Vec<(Lang, Part, String)>> = const { RefCell::new(Vec::new()) };
    /// Called when text fetched because a key was missing has arrived (the shell re-renders).
    static ON_LATE_TEXT: RefCell<Option<Box<dyn Fn()>>> = const { RefCell::new(None) };
    /// Whether such a fetch is under way, per language.
    static LATE_PENDING: [Cell<bool>; 2] = const { [Cell::new(false), Cell::new(false)] };
}

/// Takes the text files' URLs from boot.js: an object
/// `{'en-core': "locales/en-core.<hash>.txt", …}`, one entry per language and [`Part`].
pub fn set_sources(map: &wasm_bindgen::JsValue) {
    let found: Vec<(Lang, Part, String)> = Lang::ALL
        .iter()
        .flat_map(|&l| Part::ALL.iter().map(move |&p| (l, p)))
        .filter_map(|(l, p)| {
            let name = format!("{}-{}", l.code(), p.name());
            js_sys::Reflect::get(map, &name.into())
                .ok()?
                .as_string()
                .map(|url| (l, p, url))
        })
        .collect();
    SOURCES.with(|s| *s.borrow_mut() = found);
}

/// Sets what runs when text fetched late (see the module's note) has arrived.
pub fn on_late_text(f: impl Fn() + 'static) {
    ON_LATE_TEXT.with(|c| *c.borrow_mut() = Some(Box::new(f)));
}

/// Fetches and installs the core and `parts` of `lang`'s text, those not there yet; the
/// requests go out together. Errors name the file.
pub async fn load(lang: Lang, parts: &[Part]) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let mut pending = Vec::new();
    for part in std::iter::once(Part::Core).chain(parts.iter().copied()) {
        if LOADED[lang.index()][part.index()].get().is_some()
            || !lang.compiled().is_empty()
            || pending.iter().any(|(p, _, _)| *p == part)
        {
            continue;
        }
        let url = SOURCES
            .with(|s| {
                s.borrow()
                    .iter()
                    .find(|(l, p, _)| *l == lang && *p == part)
                    .map(|(_, _, u)| u.clone())
            })
            .ok_or_else(|| {
                format!(
                    "no text file for {}-{} (boot.js names none)",
                    lang.code(),
                    part.name()
                )
            })?;
        // fetch() sends the request now; the answers are awaited below, one after another.
        let request = JsFuture::from(gloo::utils::window().fetch_with_str(&url));
        pending.push((part, url, request));
    }
    for (part, url, request) in pending {
        let failed = |what: &str| format!("{url}: {what}");
        let resp = request.await.map_err(|_| failed("could not be fetched"))?;
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
        install(lang, part, table);
    }
    Ok(())
}

/// The text of `key`. A missing key shows the key itself (a unit test keeps that from
/// happening for every key the source uses); a key of a part not fetched yet shows nothing
/// until it arrives (see the module's note).
pub fn t(lang: Lang, key: &str) -> &'static str {
    match lang.find(key) {
        Some(text) => text,
        None if !is_ready(lang, &Part::ALL) => late(lang, key),
        None => lookup_missing(key),
    }
}

/// A key whose part the page did not ask for: fetch the rest of the language, re-render.
fn late(lang: Lang, key: &str) -> &'static str {
    web_sys::console::error_1(
        &format!(
            "text key `{key}` ({}) is in a part this page's route did not load: add it to the route's text_parts",
            lang.code()
        )
        .into(),
    );
    if !LATE_PENDING.with(|p| p[lang.index()].replace(true)) {
        wasm_bindgen_futures::spawn_local(async move {
            if let Err(e) = load(lang, &Part::ALL).await {
                web_sys::console::warn_1(&e.into());
            }
            LATE_PENDING.with(|p| p[lang.index()].set(false));
            ON_LATE_TEXT.with(|c| {
                if let Some(f) = c.borrow().as_ref() {
                    f();
                }
            });
        });
    }
    ""
}

fn lookup_missing(key: &str) -> &'static str {
    // Leaking is fine: it only happens for a bug the tests catch, and at most once per key.
    Box::leak(format!("[{key}]").into_boxed_str())
}

/// `t` with `{name}` placeholders filled in, and each plural choice `{name|one|other}` (a
/// count's noun: `{n} {n|block|blocks}`) replaced by `one` when `name`'s value is exactly `1`,
/// else by `other`. Chinese has no plural nouns, so its text names only `{n}`.
pub fn tf(lang: Lang, key: &str, args: &[(&str, &str)]) -> String {
    fill(t(lang, key), args)
}

/// A text an xAPI statement carries in both languages (activity names, verbs; build.rs's
/// `BOTH`, compiled into every build): `(en, zh)`, whatever language this page loaded.
pub fn both(key: &str) -> Option<(&'static str, &'static str)> {
    let all = tables::BOTH;
    all.binary_search_by(|(k, _, _)| (*k).cmp(key))
        .ok()
        .and_then(|i| all.get(i))
        .map(|(_, en, zh)| (*en, *zh))
}

/// [`tf`]'s substitution, on any text.
pub fn fill(text: &str, args: &[(&str, &str)]) -> String {
    let mut s = text.to_string();
    for (name, value) in args {
        s = s.replace(&format!("{{{name}}}"), value);
        let open = format!("{{{name}|");
        while let Some(i) = s.find(&open) {
            let Some(len) = s[i..].find('}') else { break };
            let inner = &s[i + open.len()..i + len];
            let (one, other) = inner.split_once('|').unwrap_or((inner, inner));
            let word = if value.trim() == "1" { one } else { other }.to_string();
            s.replace_range(i..i + len + 1, &word);
        }
    }
    s
}

/// Every key (the same in both languages): all of them on native builds (the tests); the
/// site's wasm compiles none in.
pub fn keys() -> impl Iterator<Item = &'static str> {
    Lang::En.compiled().iter().map(|(k, _)| *k)
}

/// `lang`'s whole compiled table (native builds, as [`keys`]).
pub fn entries(lang: Lang) -> Table {
    lang.compiled()
}

/// Whether a key exists (in both tables, by construction; native builds, as [`keys`]).
pub fn has(key: &str) -> bool {
    Lang::En
        .compiled()
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_takes_its_nouns_plural_form_unless_it_is_one() {
        let text = "{n} {n|block|blocks} of {k} {k|thread|threads}; {n}";
        assert_eq!(
            fill(text, &[("n", "1"), ("k", "64")]),
            "1 block of 64 threads; 1"
        );
        assert_eq!(
            fill(text, &[("n", "2"), ("k", "1")]),
            "2 blocks of 1 thread; 2"
        );
        assert_eq!(fill("{n|x|y}", &[("n", "0")]), "y");
        assert_eq!(fill("{n|x|y} {m}", &[("m", "1")]), "{n|x|y} 1");
    }

    #[test]
    fn tables_are_sorted_and_complete() {
        for lang in Lang::ALL {
            let table = lang.compiled();
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
