//! Every lesson's text: each `lesson.*` and `gloss.*` key the Learn components name exists
//! (`locales/<lang>/lesson-<id>.txt`, `lesson-common.txt`, `glossary-page.txt`), so do the
//! keys they build at run time, every lesson of the catalogue has a title and a summary, and
//! each lesson built around a widget has one and ends with a "try it" line.

use std::path::Path;

use gpu_playground::i18n::{has, t, Lang};

/// The lessons built around a widget (a measurement or a simulation) with a "try it" line.
const WIDGET_LESSONS: [&str; 11] = [
    "latency_throughput.rs",
    "simt.rs",
    "occupancy.rs",
    "memory.rs",
    "roofline.rs",
    "precision.rs",
    "utilisation.rs",
    "systolic.rs",
    "int8.rs",
    "fp64.rs",
    "thermal.rs",
];

fn learn_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components/learn")
}

fn source(name: &str) -> String {
    std::fs::read_to_string(learn_dir().join(name)).expect("lesson source")
}

/// The `.rs` files of `components/learn`, sorted.
fn learn_sources() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(learn_dir())
        .expect("learn dir")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_lesson_key_exists() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for f in learn_sources() {
        let text = source(&f);
        for piece in text.split('"').skip(1).step_by(2) {
            // A key, not a format string (`lesson.vram.part.{name}`: checked below) nor a
            // prefix (`lesson.`).
            let is_key = (piece.starts_with("lesson.") || piece.starts_with("gloss."))
                && !piece.contains(' ')
                && !piece.contains('{')
                && !piece.ends_with('.');
            if is_key {
                seen += 1;
                if !has(piece) {
                    missing.push(format!("{f}: {piece}"));
                }
            }
        }
    }
    assert!(seen > 500, "only {seen} keys found: is the scan broken?");
    assert!(missing.is_empty(), "missing keys:\n{}", missing.join("\n"));
}

#[test]
fn keys_built_at_run_time_exist() {
    use lessons::vram::{Breakdown, Dtype, Optimiser};
    for d in Dtype::ALL {
        assert!(
            has(&format!("lesson.vram.dtype.{}", d.code())),
            "{}",
            d.code()
        );
    }
    for o in Optimiser::ALL {
        assert!(
            has(&format!("lesson.vram.opt.{}", o.code())),
            "{}",
            o.code()
        );
    }
    for (name, _) in Breakdown::default().parts() {
        assert!(has(&format!("lesson.vram.part.{name}")), "{name}");
    }
    // The GPU table's fact-check ids, each read as what it checked.
    for id in lessons::gpus::GPUS.iter().flat_map(|g| g.fc_ids()) {
        let key = format!("lesson.choosing.checked.{}", id.to_ascii_lowercase());
        assert!(has(&key), "{key}");
        assert_ne!(t(Lang::En, &key), t(Lang::Zh, &key), "{key} untranslated");
    }
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

#[test]
fn each_widget_lesson_ends_with_try_it_and_has_a_widget() {
    for f in WIDGET_LESSONS {
        let text = source(f);
        assert!(text.contains("common::try_it("), "{f}: no try-it line");
        assert!(text.contains("class=\"panel widget\""), "{f}: no widget");
    }
}
