//! Reading and checking the translation files (`locales/<lang>/*.txt`, one file per area of
//! the app), shared by the app's build script (native builds compile the tables in, for the
//! tests) and `cargo xtask dist` (the site's wasm carries no text: it fetches one language's
//! table, written by [`serialize`], see `src/i18n.rs`).
//!
//! Format: one `key = value` per line; `#` starts a comment line; `\n` in a value is a line
//! break; `{name}` is a placeholder; `{name|one|other}` is the word for a count `name`, `one`
//! when it is 1 (English plurals: `{n} {n|block|blocks}`; a language without plural nouns
//! names only `{name}`). Checking fails when two languages do not have exactly the
//! same keys, or a key's placeholders differ between languages — so no text is ever missing
//! in one language.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The languages, in the order of the app's `Lang::ALL`.
pub const LANGS: [&str; 2] = ["en", "zh"];

/// The site fetches its text in parts, each a group of files, so that a page loads only the
/// text of what it shows (an embed of one widget does not download forty lessons:
/// docs/benchmarks.md "First load"). Every file belongs to exactly one part ([`part_of`]);
/// the order is the app's `i18n::Part::ALL`. The first part is always loaded.
pub const PARTS: [(&str, &[&str]); 9] = [
    ("core", &["core", "embed", "kernels", "learn"]),
    ("race", &["race"]),
    ("conv", &["conv", "convrun"]),
    ("editor", &["editor", "puzzles"]),
    ("train", &["train"]),
    (
        "lessons",
        &[
            "lesson-common",
            "lesson-latency-throughput",
            "lesson-simt",
            "lesson-occupancy",
            "lesson-memory",
            "lesson-roofline",
            "lesson-precision",
            "lesson-vram",
            "lesson-utilisation",
            "lesson-multi-gpu",
            "lesson-stack",
            "lesson-choosing",
            "lesson-claims",
            "lesson-conv",
            "lesson-systolic",
            "lesson-int8",
            "lesson-fp64",
            "lesson-thermal",
            "lesson-grad-accum",
            "lesson-cost",
            "lesson-data-movement",
            "glossary-page",
            "quiz",
        ],
    ),
    ("cnn", &["cnn"]),
    // The CNN kernels' explanations: the CNN page's and the editor's.
    ("cnn-kernels", &["cnn-kernels"]),
    // The GPT page: its training text's credit, loading and error lines.
    ("gpt", &["gpt", "gpt-batching"]),
];

/// Which part (index into [`PARTS`]) a translation file belongs to.
pub fn part_of(file: &Path) -> Result<usize, String> {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    PARTS
        .iter()
        .position(|(_, files)| files.contains(&stem))
        .ok_or_else(|| {
            format!(
                "{}: not in any text part (add it to PARTS in crates/locale-files/src/lib.rs)",
                file.display()
            )
        })
}

/// One language's table split into [`PARTS`] (each key in the part of the file that defines it).
pub fn parse_parts(dir: &Path) -> Result<Vec<BTreeMap<String, String>>, String> {
    let mut parts = vec![BTreeMap::new(); PARTS.len()];
    for p in files(dir)? {
        let mut map = BTreeMap::new();
        parse(&p, &mut map)?;
        parts[part_of(&p)?].extend(map);
    }
    Ok(parts)
}

/// The `*.txt` files of one language's folder, sorted.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let p = e
            .map_err(|e| format!("reading {}: {e}", dir.display()))?
            .path();
        if p.extension().is_some_and(|x| x == "txt") {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// All `*.txt` files of one language, merged; a key defined in two files is an error.
pub fn parse_dir(dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    for p in files(dir)? {
        part_of(&p)?;
        parse(&p, &mut map)?;
    }
    Ok(map)
}

fn parse(path: &Path, map: &mut BTreeMap<String, String>) -> Result<(), String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), n + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(" = ") else {
            return Err(format!("{}: expected `key = value`", at()));
        };
        let key = key.trim().to_string();
        if !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        {
            return Err(format!("{}: bad key `{key}`", at()));
        }
        let value = value.trim().replace("\\n", "\n");
        if value.is_empty() {
            return Err(format!("{}: empty value for `{key}`", at()));
        }
        if map.insert(key.clone(), value).is_some() {
            return Err(format!("{}: duplicate key `{key}`", at()));
        }
    }
    Ok(())
}

fn placeholders(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        // `{n|block|blocks}` (a plural choice) names the placeholder `n`.
        let inner = &rest[i + 1..i + j];
        out.insert(inner.split('|').next().unwrap_or(inner).to_string());
        rest = &rest[i + j + 1..];
    }
    out
}

/// Every language's table (in [`LANGS`] order), checked against English.
pub fn load_all(locales: &Path) -> Result<Vec<BTreeMap<String, String>>, String> {
    let tables = LANGS
        .iter()
        .map(|l| parse_dir(&locales.join(l)))
        .collect::<Result<Vec<_>, _>>()?;
    let en_keys: BTreeSet<_> = tables[0].keys().collect();
    for (lang, table) in LANGS.iter().zip(&tables).skip(1) {
        let keys: BTreeSet<_> = table.keys().collect();
        let missing: Vec<_> = en_keys.difference(&keys).collect();
        let extra: Vec<_> = keys.difference(&en_keys).collect();
        if !missing.is_empty() {
            return Err(format!("locales/{lang}/ lacks keys: {missing:?}"));
        }
        if !extra.is_empty() {
            return Err(format!(
                "locales/{lang}/ has keys locales/en/ lacks: {extra:?}"
            ));
        }
        for (k, v) in table {
            if placeholders(v) != placeholders(&tables[0][k]) {
                return Err(format!(
                    "placeholders of `{k}` differ between en and {lang}"
                ));
            }
        }
    }
    Ok(tables)
}

/// One language's table as the site serves it: `key = value` lines sorted by key, line
/// breaks in values written `\n` again (a parsed value never holds a literal `\n` pair, so
/// this is lossless). The app's `i18n::parse_table` reads it back.
pub fn serialize(table: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (k, v) in table {
        out.push_str(k);
        out.push_str(" = ");
        out.push_str(&v.replace('\n', "\\n"));
        out.push('\n');
    }
    out
}
