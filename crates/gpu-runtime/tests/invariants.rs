//! Invariants of the runtime's source that no other test sees: where GPU work is encoded,
//! submitted and read back. Checked on the text of `src/`, so moving a call breaks this test,
//! not a user's page.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Only the plan module (`plan.rs` and `plan/`) creates command encoders and compute passes,
/// submits to the queue and maps buffers: so every run has its queue drained, its work cut
/// for Cancel and its buffers counted in one place.
#[test]
fn only_the_plan_module_encodes_submits_and_maps() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 10, "found only {} source files", files.len());
    let calls = [
        "create_command_encoder",
        "begin_compute_pass",
        ".submit([",
        "map_async",
        "create_buffer",
    ];
    let mut outside = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap_or(f);
        let in_plan = rel.starts_with("plan") || rel == Path::new("plan.rs");
        if in_plan {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for c in calls {
                if code.contains(c) {
                    outside.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        outside.is_empty(),
        "GPU work encoded, submitted or mapped outside plan:\n{}",
        outside.join("\n")
    );
}
