//! Two rules of the components' shape, checked on their source:
//! - no component function runs past 200 lines: a component renders and dispatches, and one
//!   that grows longer is holding page logic (which belongs in `page-models`) or panels that
//!   want components of their own;
//! - no component makes its own cancel token: every run starts through `use_run`
//!   (`components/run_lifecycle.rs`), which stops it on Cancel and on leaving the page and
//!   drops its result once stale.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 200;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("components dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Each `#[function_component]` in `text`: its name and its length in lines, from the `fn`
/// line to the closing brace at the start of a line (rustfmt puts it there).
fn components(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !l.starts_with("#[function_component") {
            continue;
        }
        let Some(start) = (i + 1..lines.len()).find(|&j| lines[j].contains("fn ")) else {
            continue;
        };
        let name = lines[start]
            .split("fn ")
            .nth(1)
            .and_then(|rest| rest.split(['(', '<']).next())
            .unwrap_or("?")
            .to_string();
        let end = (start..lines.len())
            .find(|&k| lines[k] == "}")
            .unwrap_or(lines.len() - 1);
        out.push((name, end - start + 1));
    }
    out
}

#[test]
fn the_measure_counts_a_components_lines() {
    let text = "#[function_component]\npub fn Small() -> Html {\n    html! {}\n}\n";
    assert_eq!(components(text), vec![("Small".to_string(), 3)]);
}

#[test]
fn no_component_function_is_over_200_lines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut long = Vec::new();
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read component");
        for (name, n) in components(&text) {
            seen += 1;
            if n > MAX_LINES {
                long.push(format!("{} {name}: {n} lines", f.display()));
            }
        }
    }
    assert!(
        seen > 50,
        "found only {seen} components: is the pattern still right?"
    );
    assert!(
        long.is_empty(),
        "component functions over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn runs_start_only_through_use_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let own: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("run_lifecycle.rs"))
        .filter(|f| {
            std::fs::read_to_string(f)
                .expect("read component")
                .contains("CancelToken::new")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        own.is_empty(),
        "components making their own cancel token (start runs with use_run):\n{}",
        own.join("\n")
    );
}
