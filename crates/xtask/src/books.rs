//! `cargo xtask books [--out DIR]`: builds the worked example books in `docs/examples/books/`
//! (an mdBook and a Jupyter Book, each embedding a widget through the one-line loader) with
//! the pinned tools below into `target/books/` (or DIR). The output is generated, so it is not
//! in git: the browser step builds it before `tests/e2e/books.test.mjs`, which serves it
//! (see `test::node_tests_timed`), so the test always checks what the sources make today.
//! Both tools are installed once per machine into the tools cache (mdBook without its
//! `serve`/`watch`/`search` features, which the build does not use: the book turns search off).

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
                "--no-default-features",
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

/// Where the browser step builds the books for `tests/e2e/books.test.mjs` (its `BOOKS_BUILT`).
pub fn default_out() -> PathBuf {
    root().join("target/books")
}

/// `cargo xtask books [--out DIR]`.
pub fn books(args: &[String]) -> Result<(), String> {
    let out = match args {
        [] => default_out(),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => {
            return Err(format!(
                "usage: cargo xtask books [--out DIR], not {args:?}"
            ))
        }
    };
    build(&out)
}

/// Installs both tools if this machine lacks them (mdBook: a compile of about two minutes on
/// two cores, once; Jupyter Book: a pip install of about a minute, once).
pub fn ensure_tools() -> Result<(), String> {
    ensure_mdbook()?;
    ensure_venv(&[JUPYTER_BOOK], "Jupyter Book")?;
    Ok(())
}

/// Builds both books into `<built>/mdbook/` and `<built>/jupyter-book/`, replacing what was there.
pub fn build(built: &Path) -> Result<(), String> {
    let books = root().join("docs/examples/books");
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
