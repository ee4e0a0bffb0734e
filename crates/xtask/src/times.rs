//! How long each test took, so that `cargo xtask test` can name its slowest ones every run and
//! growth shows in the log rather than in the total alone.
//!
//! - Browser tests: `tests/e2e/file-times.mjs`, a node:test reporter, writes one line per test
//!   (`<ms>\t<file>\t<name>`); [`browser_times`] reads them.
//! - Native tests: libtest prints a test's time only with `-Zunstable-options --report-time`,
//!   which a stable toolchain's test binary accepts only when `RUSTC_BOOTSTRAP` is set where it
//!   *runs*. Setting that for the whole `cargo test` would also reach the compiler and the build
//!   scripts that probe for nightly features (proc-macro2, anyhow), changing what is built, so
//!   the native step instead makes this binary cargo's target runner ([`runner_config`]): cargo
//!   starts each test binary through [`run_test_binary`], which alone gets the variable and the
//!   flags, passes its output through line by line, and appends each timed result to a file
//!   ([`native_times`] reads it).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The environment variable naming the file the runner appends its times to.
const TIMES_FILE_VAR: &str = "XTASK_NATIVE_TEST_TIMES";

/// The hidden subcommand cargo calls as its runner: `xtask __timed-test <binary> <args…>`.
pub const RUNNER_COMMAND: &str = "__timed-test";

/// One test's time: `name` says where it is (`file › test` or `binary::path::test`).
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    pub seconds: f64,
    pub name: String,
}

/// `cargo --config` arguments that make cargo start the host's test binaries through this
/// binary, with their times appended to `file`; `None` (no times, the tests run as before) when
/// the host triple or this binary's path cannot be found.
pub fn runner_config(file: &Path) -> Option<(Vec<String>, (&'static str, PathBuf))> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = crate::util::output(Command::new(rustc).arg("-vV"))?;
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))?
        .trim()
        .to_string();
    let exe = std::env::current_exe().ok()?;
    // A TOML array, so a path with spaces stays one word; Debug quoting escapes `"` and `\`
    // as TOML's basic strings do.
    let config = format!(
        "target.{host}.runner=[{:?}, {:?}]",
        exe.to_str()?,
        RUNNER_COMMAND
    );
    Some((
        vec!["--config".into(), config],
        (TIMES_FILE_VAR, file.to_path_buf()),
    ))
}

/// Runs one test binary as cargo asked (`args`: the binary, then its arguments), adding
/// `--report-time` to cargo's test harness binaries, and appends `<seconds>\t<binary>\t<test>`
/// for each timed result to the file [`TIMES_FILE_VAR`] names. Exits as the binary did.
pub fn run_test_binary(args: &[String]) -> ExitCode {
    let Some((binary, rest)) = args.split_first() else {
        eprintln!("xtask {RUNNER_COMMAND}: no binary to run");
        return ExitCode::FAILURE;
    };
    let path = Path::new(binary);
    // cargo's harness binaries live in `deps/`; anything else (a doctest rustdoc built, were it
    // ever run this way) runs untouched.
    let harness = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "deps");
    let mut cmd = Command::new(path);
    cmd.args(rest);
    if harness {
        cmd.env("RUSTC_BOOTSTRAP", "1")
            .args(["-Zunstable-options", "--report-time"]);
    }
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("xtask {RUNNER_COMMAND}: could not start {binary}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let name = binary_name(path);
    let mut sink = std::env::var_os(TIMES_FILE_VAR).and_then(|f| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(f)
            .ok()
    });
    if let Some(out) = child.stdout.take() {
        let mut stdout = std::io::stdout().lock();
        let mut reader = BufReader::new(out);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            let _ = stdout.write_all(&line);
            let _ = stdout.flush();
            if let (Some(f), Some(t)) =
                (sink.as_mut(), timed_result(&String::from_utf8_lossy(&line)))
            {
                let _ = writeln!(f, "{:.3}\t{name}\t{}", t.seconds, t.name);
            }
            line.clear();
        }
    }
    match child.wait() {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => {
                eprintln!("xtask {RUNNER_COMMAND}: {binary} ended by {status}");
                ExitCode::from(101)
            }
        },
        Err(e) => {
            eprintln!("xtask {RUNNER_COMMAND}: waiting for {binary}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `target/debug/deps/kernels_vs_cpu-0123abcd` → `kernels_vs_cpu`.
fn binary_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => stem,
    }
}

/// libtest's `test a::b ... ok <1.234s>` (or `FAILED <…s>`): the test and its time.
fn timed_result(line: &str) -> Option<Timed> {
    let rest = line.trim_end().strip_prefix("test ")?;
    let (name, outcome) = rest.split_once(" ... ")?;
    let time = outcome.rsplit_once(" <")?.1.strip_suffix("s>")?;
    Some(Timed {
        seconds: time.parse().ok()?,
        name: name.to_string(),
    })
}

/// The runner's lines (`<seconds>\t<binary>\t<test>`) as `binary::test`.
pub fn native_times(text: &str) -> Vec<Timed> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            let seconds = parts.next()?.trim().parse().ok()?;
            let binary = parts.next()?;
            let test = parts.next()?;
            Some(Timed {
                seconds,
                name: format!("{binary}::{test}"),
            })
        })
        .collect()
}

/// The browser reporter's lines (`<ms>\t<file>\t<test>`) as `file › test`.
pub fn browser_times(text: &str) -> Vec<Timed> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            let ms: f64 = parts.next()?.trim().parse().ok()?;
            let file = parts.next()?;
            let test = parts.next().unwrap_or("");
            Some(Timed {
                seconds: ms / 1000.0,
                name: format!("{file} › {test}"),
            })
        })
        .collect()
}

/// The `n` slowest, slowest first.
pub fn slowest(times: &[Timed], n: usize) -> Vec<Timed> {
    let mut sorted = times.to_vec();
    sorted.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    sorted.truncate(n);
    sorted
}

/// Prints `title` and the tests under it, one a line, names cut to fit a log line.
pub fn print_slowest(title: &str, times: &[Timed]) {
    println!("    {title}:");
    for t in times {
        let name: String = if t.name.chars().count() > 110 {
            t.name.chars().take(109).chain(['…']).collect()
        } else {
            t.name.clone()
        };
        println!("    {:>7.1} s  {name}", t.seconds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libtests_timed_results_only() {
        assert_eq!(
            timed_result("test tests::units ... ok <0.250s>\n"),
            Some(Timed {
                seconds: 0.25,
                name: "tests::units".into()
            })
        );
        assert_eq!(
            timed_result("test a::b ... FAILED <12.000s>").map(|t| t.seconds),
            Some(12.0)
        );
        assert_eq!(timed_result("test a::b ... ignored"), None);
        assert_eq!(timed_result("test a::b ... ok"), None);
        assert_eq!(
            timed_result("test result: ok. 4 passed; 0 failed; finished in 0.91s"),
            None
        );
    }

    #[test]
    fn names_binaries_without_their_hash() {
        assert_eq!(
            binary_name(Path::new(
                "target/debug/deps/kernels_vs_cpu-e933009c6e4389fc"
            )),
            "kernels_vs_cpu"
        );
        assert_eq!(binary_name(Path::new("/x/deps/page-models")), "page-models");
    }

    #[test]
    fn the_slowest_come_first_from_both_kinds_of_line() {
        let native = native_times("0.500\tcnn\tmnist::learns\n12.250\tgpu\tkernels\nbad line\n");
        let browser =
            browser_times("1200\ta.test.mjs\tloads\n90000\tb.test.mjs\ttrains\tfast\nx\tc\n");
        assert_eq!(
            slowest(&native, 1),
            [Timed {
                seconds: 12.25,
                name: "gpu::kernels".into()
            }]
        );
        assert_eq!(
            slowest(&browser, 5)
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["b.test.mjs › trains\tfast", "a.test.mjs › loads"]
        );
    }
}
