//! Checks the translation files (`locales/<lang>/*.txt`; format and rules in
//! `crates/locale-files`) and, for native builds (the tests), turns them into static tables. The
//! site's wasm carries no text: `cargo xtask dist` writes one file per language that the app
//! fetches (`src/i18n.rs`), so a visitor downloads only the language they read.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read at run time, not with env!(): a build script compiled in another checkout (a
    // copied target/ directory) would otherwise keep reading that checkout's locales.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("locales");
    for lang in locale_files::LANGS {
        let d = dir.join(lang);
        println!("cargo:rerun-if-changed={}", d.display());
        for f in locale_files::files(&d).unwrap_or_else(|e| panic!("{e}")) {
            println!("cargo:rerun-if-changed={}", f.display());
        }
    }
    let tables = locale_files::load_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    let mut out = String::new();
    for (lang, table) in locale_files::LANGS.iter().zip(&tables) {
        writeln!(
            out,
            "pub static {}: &[(&str, &str)] = &[",
            lang.to_uppercase()
        )
        .unwrap();
        // The wasm build gets empty tables: its text is fetched (src/i18n.rs).
        if !wasm {
            for (k, v) in table {
                writeln!(out, "    ({k:?}, {v:?}),").unwrap();
            }
        }
        writeln!(out, "];").unwrap();
    }
    // The few texts an xAPI statement names in both languages (activity names, verbs),
    // whatever language the page loaded: in every build, wasm too (a few KiB).
    let statement_text = |k: &str| {
        k.starts_with("xapi.")
            || k.starts_with("embed.widget.")
            || (k.ends_with(".title")
                && (k.starts_with("puzzle.")
                    || k.starts_with("lesson.")
                    || k.starts_with("kernel.")))
    };
    writeln!(out, "pub static BOTH: &[(&str, &str, &str)] = &[").unwrap();
    if let [en, zh] = &tables[..] {
        for (k, v) in en.iter().filter(|(k, _)| statement_text(k)) {
            let z = zh.get(k).unwrap_or(v);
            writeln!(out, "    ({k:?}, {v:?}, {z:?}),").unwrap();
        }
    }
    writeln!(out, "];").unwrap();
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("locales.rs");
    std::fs::write(dest, out).unwrap();
}
