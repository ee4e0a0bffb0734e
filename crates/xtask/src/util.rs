//! Running commands loudly, and finding the repository.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The repository root (the workspace holding this crate). `cargo xtask` (cargo run) sets
/// CARGO_MANIFEST_DIR when it starts the binary; that wins over the compile-time value, which
/// names the checkout the binary was built in (wrong for a copied target/ directory).
pub fn root() -> PathBuf {
    let at_run = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let manifest = at_run.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let manifest = manifest.as_path();
    manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.to_path_buf())
}

/// Prints a step heading, so a long command never runs silently.
pub fn step(msg: &str) {
    println!("\n==> {msg}");
}

pub fn info(msg: &str) {
    println!("    {msg}");
}

/// Runs a command to completion with its output shown; an error names the command.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = describe(cmd);
    info(&format!("$ {shown}"));
    let started = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    if status.success() {
        info(&format!("done in {:.1} s", started.elapsed().as_secs_f64()));
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// Runs a command and returns its stdout, or None if it cannot start or fails.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Whether a program can be found on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}
