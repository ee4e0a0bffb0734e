//! Lessons 17–19 and the glossary keep their text under `ld.*` and `gloss.*` keys
//! (locales/<lang>/lessons-d.txt). This checks that every such key their components name
//! exists, and that each lesson of the catalogue has a title and a summary.

use std::path::Path;

use gpu_playground::i18n::{has, t, Lang};

const FILES: [&str; 4] = [
    "grad_accum.rs",
    "cost.rs",
    "data_movement.rs",
    "glossary.rs",
];

#[test]
fn every_ld_and_gloss_key_exists() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components/learn");
    let mut missing = Vec::new();
    let mut seen = 0;
    for f in FILES {
        let text = std::fs::read_to_string(dir.join(f)).expect("lesson source");
        for piece in text.split('"').skip(1).step_by(2) {
            let is_key = (piece.starts_with("ld.") || piece.starts_with("gloss."))
                && !piece.ends_with('.')
                && piece
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if is_key {
                seen += 1;
                if !has(piece) {
                    missing.push(format!("{f}: {piece}"));
                }
            }
        }
    }
    assert!(seen > 50, "only {seen} keys found: is the scan broken?");
    assert!(missing.is_empty(), "missing keys:\n{}", missing.join("\n"));
}

#[test]
fn every_lesson_has_a_title_and_summary_in_both_languages() {
    for l in lessons::LESSONS {
        for key in [l.title_key, l.summary_key] {
            assert!(has(key), "{key}");
            assert_ne!(t(Lang::En, key), t(Lang::Zh, key), "{key} untranslated");
        }
    }
}
