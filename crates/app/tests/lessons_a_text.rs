//! Lessons 1–6 and 8: every `lesson.*` key their modules name exists (the shared text test
//! only checks the core prefixes), and each lesson has a "try it" line and a widget.

use std::path::Path;

use gpu_playground::i18n::has;

const FILES: [&str; 8] = [
    "kit.rs",
    "latency_throughput.rs",
    "simt.rs",
    "occupancy.rs",
    "memory.rs",
    "roofline.rs",
    "precision.rs",
    "utilisation.rs",
];

fn source(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components/learn");
    std::fs::read_to_string(dir.join(name)).expect("lesson source")
}

#[test]
fn every_lesson_key_exists() {
    let mut missing = Vec::new();
    for f in FILES {
        let text = source(f);
        for piece in text.split('"').skip(1).step_by(2) {
            if piece.starts_with("lesson.") && !piece.contains(' ') && !has(piece) {
                missing.push(format!("{f}: {piece}"));
            }
        }
    }
    assert!(missing.is_empty(), "missing keys:\n{}", missing.join("\n"));
}

#[test]
fn each_lesson_ends_with_try_it_and_has_a_widget() {
    for f in &FILES[1..] {
        let text = source(f);
        assert!(text.contains("common::try_it("), "{f}: no try-it line");
        assert!(text.contains("class=\"panel widget\""), "{f}: no widget");
    }
}
