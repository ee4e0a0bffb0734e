//! The kernels' comments are read by learners: "Edit this kernel" (the ladder, `#/cnn`) and the
//! puzzles open `shaders/` as it is. A comment there says why the code is so, never which of the
//! project's issues or pull requests it came from ("(issue 24)", "#24", "PR 12"): a learner has
//! no tracker to look it up in.

use std::path::{Path, PathBuf};

/// Every `.wgsl` file under `dir`, at any depth.
fn wgsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            wgsl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "wgsl") {
            out.push(p);
        }
    }
}

/// The comment text of each line (after `//`, or inside `/* … */`, which may span lines).
fn comments(source: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (n, line) in source.lines().enumerate() {
        let mut text = String::new();
        let mut rest = line;
        loop {
            if in_block {
                match rest.find("*/") {
                    Some(end) => {
                        text.push_str(&rest[..end]);
                        rest = &rest[end + 2..];
                        in_block = false;
                    }
                    None => {
                        text.push_str(rest);
                        break;
                    }
                }
            } else {
                let line_c = rest.find("//");
                let block = rest.find("/*");
                match (line_c, block) {
                    (Some(l), b) if b.is_none_or(|b| l < b) => {
                        text.push_str(&rest[l + 2..]);
                        break;
                    }
                    (_, Some(b)) => {
                        rest = &rest[b + 2..];
                        in_block = true;
                    }
                    _ => break,
                }
            }
        }
        if !text.is_empty() {
            out.push((n + 1, text));
        }
    }
    out
}

/// Whether a comment names an issue or pull request by number: "issue 24", "issues 24 and 25",
/// "issue #24", "#24", "PR 12", "pull request 12" (any case).
fn names_an_issue(comment: &str) -> bool {
    let lower = comment.to_lowercase();
    let number_follows = |at: usize| {
        let after = lower[at..].trim_start_matches([' ', '#', '§']);
        after.starts_with(|c: char| c.is_ascii_digit())
    };
    let word_at = |i: usize| {
        lower[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    };
    let after_word = |word: &str| {
        lower
            .match_indices(word)
            .any(|(i, _)| word_at(i) && number_follows(i + word.len()))
    };
    let hash_number = lower.match_indices('#').any(|(i, _)| {
        word_at(i)
            && lower[i + 1..].starts_with(|c: char| c.is_ascii_digit())
            && lower[i + 1..]
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
    });
    after_word("issues")
        || after_word("issue")
        || after_word("pr")
        || after_word("pull request")
        || hash_number
}

#[test]
fn the_names_are_recognised_and_ordinary_comments_are_not() {
    for named in [
        "CNN conv forward (issue 24): an implicit GEMM",
        "as the Dawn probe of Issue #25 did",
        "issues 24 and 25",
        "see #24",
        "from PR 12",
        "a pull request 3 fix",
    ] {
        assert!(names_an_issue(named), "{named}");
    }
    for plain in [
        "an issue of bank conflicts: 32 banks",
        "tissue 3",
        "the 2×2 pool keeps the winner",
        "colour #1f6fb5",
        "prefetch 4 values",
        "express 2 as",
    ] {
        assert!(!names_an_issue(plain), "{plain}");
    }
    assert_eq!(
        comments("let a = 1; // issue 3\n/* b\n issue 4 */ let c = 2;\nlet d = 3;"),
        vec![
            (1, " issue 3".to_string()),
            (2, " b".to_string()),
            (3, " issue 4 ".to_string())
        ]
    );
}

#[test]
fn no_kernel_comment_names_an_issue() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
    let mut files = Vec::new();
    wgsl_files(&dir, &mut files);
    assert!(files.len() > 30, "found only {} kernels", files.len());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (n, c) in comments(&text) {
            if names_an_issue(&c) {
                let rel = f.strip_prefix(&dir).unwrap_or(f);
                found.push(format!("shaders/{}:{n}: {}", rel.display(), c.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "kernel comments that name an issue (learners read these: say the reason instead):\n{}",
        found.join("\n")
    );
}
