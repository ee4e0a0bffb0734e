//! `cargo xtask books`: builds the worked example books in `docs/examples/books/` (an mdBook
//! and a Jupyter Book, each embedding a widget through the one-line loader) with the pinned
//! tools below and writes what they emit into `docs/examples/books/built/`, which is
//! committed: the browser test (`tests/e2e/books.test.mjs`) serves that output, so
//! `cargo xtask test` needs neither tool (compiling mdBook alone takes minutes on CI's two
//! cores). Run it after changing a book's sources or a tool's version.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tools::{ensure_venv, tools_dir};
use crate::util::{info, root, run, step};

/// mdBook from crates.io, `cargo install`ed into a versioned folder of the tools cache.
pub const MDBOOK_VERSION: &str = "0.4.52";
/// Jupyter Book 1 (Sphinx + MyST) from PyPI. Jupyter Book 2 and `mystmd` fetch their HTML
/// theme from the web at build time, which machines without general network access cannot.
pub const JUPYTER_BOOK: &str = "jupyter-book==1.0.4.post1";

fn ensure_mdbook() -> Result<PathBuf, String> {
    let dir = tools_dir().join(format!("mdbook-{MDBOOK_VERSION}"));
    let bin = dir.join("bin/mdbook");
    if !bin.exists() {
        run(Command::new("cargo")
            .args([
                "install",
                "mdbook",
                "--locked",
                "--version",
                MDBOOK_VERSION,
                "--root",
            ])
            .arg(&dir))?;
    }
    Ok(bin)
}

/// Replaces `to` with a copy of `from`, leaving out source maps (debugging aids of the
/// tools' bundled scripts, half of Jupyter Book's output).
fn copy_output(from: &Path, to: &Path) -> Result<usize, String> {
    fn walk(from: &Path, to: &Path, count: &mut usize) -> Result<(), String> {
        std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
        let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            let name = e.file_name();
            if path.is_dir() {
                walk(&path, &to.join(&name), count)?;
            } else if !name.to_string_lossy().ends_with(".map") {
                std::fs::copy(&path, to.join(&name))
                    .map_err(|err| format!("{}: {err}", path.display()))?;
                *count += 1;
            }
        }
        Ok(())
    }
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    let mut count = 0;
    walk(from, to, &mut count)?;
    Ok(count)
}

pub fn books() -> Result<(), String> {
    let books = root().join("docs/examples/books");
    let built = books.join("built");
    let scratch = std::env::temp_dir().join(format!("gpu-playground-books-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);

    step(&format!("mdBook {MDBOOK_VERSION}"));
    let mdbook = ensure_mdbook()?;
    let out = scratch.join("mdbook");
    run(Command::new(&mdbook)
        .arg("build")
        .arg(books.join("mdbook"))
        .arg("--dest-dir")
        .arg(&out))?;
    let n = copy_output(&out, &built.join("mdbook"))?;
    info(&format!("{n} files in {}", built.join("mdbook").display()));

    step(&format!("Jupyter Book ({JUPYTER_BOOK})"));
    let venv = ensure_venv(&[JUPYTER_BOOK], "Jupyter Book")?;
    let out = scratch.join("jupyter-book");
    run(Command::new(venv.join("bin/python"))
        // The `jupyter-book` script's #! names the folder the venv was made in (see
        // `ensure_venv`): its entry point, through the venv's python.
        .args([
            "-c",
            "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
            "build",
        ])
        .arg(books.join("jupyter-book"))
        .arg("--path-output")
        .arg(&out))?;
    let n = copy_output(&out.join("_build/html"), &built.join("jupyter-book"))?;
    info(&format!(
        "{n} files in {}",
        built.join("jupyter-book").display()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
