//! Turns the translation files (`locales/<lang>/*.txt`, one file per area of the app) into
//! static tables.
//!
//! Format: one `key = value` per line; `#` starts a comment line; `\n` in a value is a line
//! break; `{name}` is a placeholder. The build fails when the two files do not have exactly the
//! same keys, or a key's placeholders differ between languages — so no text is ever missing
//! in one language.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// All `*.txt` files of one language, merged; a key defined in two files is an error.
fn parse_dir(dir: &Path) -> BTreeMap<String, String> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let mut map = BTreeMap::new();
    for p in files {
        println!("cargo:rerun-if-changed={}", p.display());
        parse(&p, &mut map);
    }
    map
}

fn parse(path: &Path, map: &mut BTreeMap<String, String>) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(" = ") else {
            panic!("{}:{}: expected `key = value`", path.display(), n + 1);
        };
        let key = key.trim().to_string();
        assert!(
            key.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "{}:{}: bad key `{key}`",
            path.display(),
            n + 1
        );
        let value = value.trim().replace("\\n", "\n");
        assert!(
            !value.is_empty(),
            "{}:{}: empty value for `{key}`",
            path.display(),
            n + 1
        );
        if map.insert(key.clone(), value).is_some() {
            panic!("{}:{}: duplicate key `{key}`", path.display(), n + 1);
        }
    }
}

fn placeholders(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        out.insert(rest[i + 1..i + j].to_string());
        rest = &rest[i + j + 1..];
    }
    out
}

fn main() {
    // Read at run time: env!() would bake in the checkout the build script was first compiled
    // in, and a build directory copied to another checkout would read the old locales.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&manifest).join("locales");
    let langs = ["en", "zh"];
    let tables: Vec<_> = langs.iter().map(|l| parse_dir(&dir.join(l))).collect();
    let en_keys: BTreeSet<_> = tables[0].keys().collect();
    for (lang, table) in langs.iter().zip(&tables).skip(1) {
        let keys: BTreeSet<_> = table.keys().collect();
        let missing: Vec<_> = en_keys.difference(&keys).collect();
        let extra: Vec<_> = keys.difference(&en_keys).collect();
        assert!(
            missing.is_empty(),
            "locales/{lang}/ lacks keys: {missing:?}"
        );
        assert!(
            extra.is_empty(),
            "locales/{lang}/ has keys locales/en/ lacks: {extra:?}"
        );
        for (k, v) in table {
            assert_eq!(
                placeholders(v),
                placeholders(&tables[0][k]),
                "placeholders of `{k}` differ between en and {lang}"
            );
        }
    }
    let mut out = String::new();
    for (lang, table) in langs.iter().zip(&tables) {
        writeln!(
            out,
            "pub static {}: &[(&str, &str)] = &[",
            lang.to_uppercase()
        )
        .unwrap();
        for (k, v) in table {
            writeln!(out, "    ({k:?}, {v:?}),").unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("locales.rs");
    std::fs::write(dest, out).unwrap();
}
