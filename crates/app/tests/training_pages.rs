//! The training pages (`#/train`, `#/cnn`, `#/gpt`'s training) share one keep-on-leave hook,
//! `components/keep.rs`'s `use_kept`, as they share one driver (`src/train_driver/`). Checked
//! on their source: each page keeps its run through the hook, and none keeps one in a
//! thread-local slot of its own.

use std::path::{Path, PathBuf};

/// The training pages' component files: the page's own file and those under its folder.
const PAGES: [&str; 3] = ["train", "cnn", "gpt"];

fn rust_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for entry in std::fs::read_dir(p).expect("components dir").flatten() {
            rust_files(&entry.path(), out);
        }
    } else if p.is_file() && p.extension().is_some_and(|e| e == "rs") {
        out.push(p.to_path_buf());
    }
}

/// A page's files with their text.
fn page_files(page: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components");
    let mut files = Vec::new();
    rust_files(&dir.join(format!("{page}.rs")), &mut files);
    rust_files(&dir.join(page), &mut files);
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("read component");
            (f, text)
        })
        .collect()
}

#[test]
fn every_training_page_keeps_its_run_through_the_one_hook() {
    for page in PAGES {
        let files = page_files(page);
        assert!(!files.is_empty(), "no component files for the {page} page");
        assert!(
            files.iter().any(|(_, t)| t.contains("use_kept(")),
            "the {page} page does not keep its run through components::keep::use_kept"
        );
    }
}

#[test]
fn no_training_page_keeps_a_run_in_a_slot_of_its_own() {
    let own: Vec<String> = PAGES
        .iter()
        .flat_map(|p| page_files(p))
        .filter(|(_, t)| t.contains("thread_local!"))
        .map(|(f, _)| f.display().to_string())
        .collect();
    assert!(
        own.is_empty(),
        "training pages with a thread-local of their own (keep runs with use_kept):\n{}",
        own.join("\n")
    );
}
