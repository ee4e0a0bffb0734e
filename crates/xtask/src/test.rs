//! `cargo xtask test`: every check the project has, in order, ending with one summary line.
//!
//! A step that cannot run (no browser, no GPU adapter) fails the command. Checks that did not
//! run — cargo's ignored tests, node's skipped and todo tests, and native GPU checks that
//! report `SKIPPED: …` because the adapter lacks a feature — are counted and printed next to
//! the passes and failures, so a missing check is never silent.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::tools;
use crate::util::{describe, info, root, step};

/// Counts of one step.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    /// Checks that reported themselves skipped (node's skip/todo, `SKIPPED:` lines).
    skipped: u64,
    /// Tests marked `#[ignore]` (cargo's "N ignored").
    ignored: u64,
}

struct StepResult {
    name: &'static str,
    seconds: f64,
    tally: Tally,
    error: Option<String>,
}

pub fn test() -> Result<(), String> {
    let started = Instant::now();
    let mut results: Vec<StepResult> = Vec::new();
    let mut record = |name: &'static str, f: &mut dyn FnMut() -> Result<Tally, String>| {
        step(name);
        let t = Instant::now();
        let (tally, error) = match f() {
            Ok(tally) => (tally, None),
            Err(e) => {
                eprintln!("    FAILED: {e}");
                (
                    Tally {
                        failed: 1,
                        ..Tally::default()
                    },
                    Some(e),
                )
            }
        };
        let seconds = t.elapsed().as_secs_f64();
        info(&format!("step took {seconds:.0} s"));
        results.push(StepResult {
            name,
            seconds,
            tally,
            error,
        });
    };

    record("Installing test tools", &mut || {
        tools::ensure_software_vulkan()?;
        tools::ensure_browser()?;
        tools::ensure_wasm_toolchain()?;
        tools::ensure_wasm_bindgen()?;
        // mdBook and Jupyter Book, for the example books the browser step builds.
        crate::books::ensure_tools()?;
        // The CNN's real-data tests train on the MNIST asset, made from the pinned package.
        crate::mnist::write_asset(&root().join(crate::mnist::TEST_ASSET))?;
        // The GPT's real-data tests train on its corpora, made from the pinned packages.
        crate::gpt_data::write_assets(&root().join(crate::gpt_data::TEST_DIR))?;
        Ok(Tally::default())
    });
    let site = root().join("target/e2e-site");
    // The release wasm build starts now, beside the native tests: its fat-LTO,
    // one-codegen-unit link of the app runs on one core for minutes, and the native steps
    // fill the other. It uses its own target dir, so neither waits on the other's lock.
    let mut wasm_build = BackgroundBuild::start(&site);
    // Each test's time, for the ten slowest of each kind in the summary (times.rs).
    let mut native_times: Vec<crate::times::Timed> = Vec::new();
    let mut browser_times: Vec<crate::times::Timed> = Vec::new();
    record("Format check (cargo fmt --check)", &mut || {
        check(Command::new("cargo").args(["fmt", "--all", "--check"]))
    });
    record("Notebook widget's Python package (pytest)", &mut || {
        python_tests()
    });
    record(
        "Clippy + unit and native GPU tests (software Vulkan)",
        &mut || {
            let xdg = std::env::temp_dir().join("gpu-playground-xdg");
            let _ = std::fs::create_dir_all(&xdg);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&xdg, std::fs::Permissions::from_mode(0o700));
            }
            let mut cmd = Command::new("cargo");
            cmd.args(["test", "--workspace", "--no-fail-fast"])
                .env("XDG_RUNTIME_DIR", &xdg);
            let times = root().join("test-output/native-test-times.txt");
            let _ = std::fs::create_dir_all(root().join("test-output"));
            let _ = std::fs::remove_file(&times);
            match crate::times::runner_config(&times) {
                Some((config, (var, file))) => {
                    cmd.args(config).env(var, file);
                }
                None => info("no per-test times: the host triple or this binary's path is unknown"),
            }
            lint_while_building(&mut cmd)?;
            let tally = counted(&mut cmd);
            native_times =
                crate::times::native_times(&std::fs::read_to_string(&times).unwrap_or_default());
            tally
        },
    );
    record(
        "Tensor Core kernels on Mesa 26's lavapipe (cooperative matrices)",
        &mut || {
            // Debian 12's lavapipe has no VK_KHR_cooperative_matrix, so the step above reports
            // the Tensor Core kernels as skipped; Mesa 26's has (8×8×8 f16 tiles). The script
            // unpacks it with a newer glibc into a private sysroot (nothing is installed) and
            // runs that one test there, so the kernel's scheme is checked on every run. It
            // fails, never skips, when that adapter cannot be made, and the test fails unless
            // the kernels built for its 8×8×8 tiles ran (the script sets
            // GPU_PLAYGROUND_REQUIRE_TENSOR_CORE_TILE=8): skipping there once left every
            // Tensor Core kernel unchecked while the suite stayed green.
            // The step above's compiler wrapper too, so the test binary it built is reused
            // rather than every workspace crate compiled again.
            let mut cmd = Command::new("bash");
            cmd.arg("tools/lavapipe-coopmat/run.sh");
            lint_while_building(&mut cmd)?;
            counted(&mut cmd)
        },
    );
    let mut wasm_size = String::new();
    let mut site_built = false;
    record(
        "Release wasm build of the app (started beside the native tests)",
        &mut || {
            wasm_size = wasm_build.finish()?;
            site_built = true;
            Ok(Tally {
                passed: 1,
                ..Tally::default()
            })
        },
    );
    record(
        "End-to-end tests in headless Chromium with WebGPU",
        &mut || {
            // An older site may still be there: never test it in place of a failed build.
            if !site_built || !site.join("index.html").exists() {
                return Err("the site was not built".into());
            }
            let (tally, times) = e2e(&site);
            browser_times = times;
            tally
        },
    );

    let total = Tally {
        passed: results.iter().map(|r| r.tally.passed).sum(),
        failed: results.iter().map(|r| r.tally.failed).sum(),
        skipped: results.iter().map(|r| r.tally.skipped).sum(),
        ignored: results.iter().map(|r| r.tally.ignored).sum(),
    };
    println!("\n==> Summary ({:.0} s)", started.elapsed().as_secs_f64());
    for r in &results {
        let state = if r.error.is_some() || r.tally.failed > 0 {
            "FAIL"
        } else {
            "ok  "
        };
        println!(
            "    {state} {:<55} {:>4} passed {:>3} failed {:>3} skipped {:>3} ignored  {:>6.1} s",
            r.name, r.tally.passed, r.tally.failed, r.tally.skipped, r.tally.ignored, r.seconds
        );
    }
    if !wasm_size.is_empty() {
        println!("    wasm module: {wasm_size}");
    }
    if let Some(s) = wasm_build.took {
        println!("    the release wasm build took {s:.0} s from its start beside the native steps");
    }
    for (kind, times) in [("native", &native_times), ("browser", &browser_times)] {
        if !times.is_empty() {
            crate::times::print_slowest(
                &format!("The ten slowest {kind} tests (of {})", times.len()),
                &crate::times::slowest(times, 10),
            );
        }
    }
    println!("{}", total.line());
    if total.failed > 0 || results.iter().any(|r| r.error.is_some()) {
        Err("some checks failed (see above)".into())
    } else {
        Ok(())
    }
}

/// `cargo xtask dist --out <site>` as a child process, its output kept in a log that is
/// printed when the build's step comes, so the native steps' output is not interleaved with it.
struct BackgroundBuild {
    child: Result<Child, String>,
    log: PathBuf,
    started: Instant,
    started_at: std::time::SystemTime,
    /// Seconds from its start to its end, once it has ended.
    took: Option<f64>,
}

impl BackgroundBuild {
    fn start(site: &Path) -> Self {
        let log = root().join("target/e2e-site-build.log");
        let started = Instant::now();
        let started_at = std::time::SystemTime::now();
        let child = (|| {
            let exe = std::env::current_exe().map_err(|e| format!("no xtask binary: {e}"))?;
            let _ = std::fs::create_dir_all(root().join("target"));
            let out = std::fs::File::create(&log)
                .map_err(|e| format!("could not write {}: {e}", log.display()))?;
            let err = out.try_clone().map_err(|e| e.to_string())?;
            let mut cmd = Command::new(exe);
            cmd.arg("dist")
                .arg("--out")
                .arg(site)
                .current_dir(root())
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err);
            info(&format!(
                "$ {} (in the background, log: {})",
                describe(&cmd),
                log.display()
            ));
            cmd.spawn()
                .map_err(|e| format!("could not start `{}`: {e}", describe(&cmd)))
        })();
        BackgroundBuild {
            child,
            log,
            started,
            started_at,
            took: None,
        }
    }

    /// Waits for the build, prints its log, and returns its size line.
    fn finish(&mut self) -> Result<String, String> {
        let child = self.child.as_mut().map_err(|e| e.clone())?;
        let status = child.wait().map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        println!("{text}");
        // Its log's last write is its end, even when it ended before the native steps did.
        let took = std::fs::metadata(&self.log)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|end| end.duration_since(self.started_at).ok())
            .map_or_else(|| self.started.elapsed().as_secs_f64(), |d| d.as_secs_f64());
        self.took = Some(took);
        info(&format!(
            "the build took {took:.0} s from its start beside the native steps"
        ));
        if !status.success() {
            return Err(format!(
                "the release wasm build failed ({status}); its output is above and in {}",
                self.log.display()
            ));
        }
        Ok(text
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with("wasm: "))
            .map(|l| l.trim().trim_start_matches("wasm: ").to_string())
            .unwrap_or_default())
    }
}

impl Tally {
    /// The closing line: `N passed, N failed, N skipped`, skipped counting ignored tests too
    /// (they are named separately when there are any).
    fn line(&self) -> String {
        let mut s = format!(
            "{} passed, {} failed, {} skipped",
            self.passed,
            self.failed,
            self.skipped + self.ignored
        );
        if self.ignored > 0 {
            s.push_str(&format!(" ({} of them ignored)", self.ignored));
        }
        s
    }
}

/// Makes `cmd` (a cargo build of the workspace) compile the workspace's own crates with
/// clippy's driver, lints denied, as `cargo clippy --workspace --all-targets -- -D warnings`
/// does: the same lints on the same targets (`cargo test` builds every lib, bin, test and
/// example; the workspace has no benches), while every dependency is compiled once, for the
/// tests, instead of once more for a separate clippy pass (about a quarter of the native
/// step's CPU time on 2 cores). A lint is a compile error, so the step fails and says which.
fn lint_while_building(cmd: &mut Command) -> Result<(), String> {
    let driver = crate::util::output(Command::new("rustup").args(["which", "clippy-driver"]))
        .map(|s| PathBuf::from(s.trim()))
        .filter(|p| p.exists())
        .or_else(|| {
            crate::util::output(Command::new("clippy-driver").arg("--version"))
                .map(|_| PathBuf::from("clippy-driver"))
        })
        .ok_or("clippy is needed (`rustup component add clippy`): neither `rustup which clippy-driver` nor `clippy-driver` on PATH answered")?;
    // cargo clippy's own way to hand arguments to the driver: `-- -D warnings`.
    cmd.env("RUSTC_WORKSPACE_WRAPPER", driver).env(
        "CLIPPY_ARGS",
        "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
    );
    Ok(())
}

/// Installs the notebook widget's Python package into the cached venv (a fresh copy each time,
/// so what is tested is what `pip install` makes of the sources) and runs its pytest tests.
fn python_tests() -> Result<Tally, String> {
    let venv = tools::ensure_python_venv()?;
    let python = venv.join("bin/python");
    crate::util::run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--force-reinstall",
                "--no-deps",
            ])
            .arg(root().join("python/gpu_playground"))
            .current_dir(root()),
    )?;
    counted_by(
        Command::new(&python).args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/gpu_playground/tests",
        ]),
        parse_pytest,
    )
}

/// A command that passes or fails as a whole (fmt): one check.
fn check(cmd: &mut Command) -> Result<Tally, String> {
    crate::util::run(cmd.current_dir(root())).map(|_| Tally {
        passed: 1,
        ..Tally::default()
    })
}

/// Runs a test command, echoing its output and adding up its result lines: cargo's
/// `test result: ok. N passed; M failed; K ignored`, node's `ℹ pass N` / `ℹ fail N` /
/// `ℹ cancelled N` (counted as failed) / `ℹ skipped N` / `ℹ todo N`, and native checks'
/// `SKIPPED: …` lines.
fn counted(cmd: &mut Command) -> Result<Tally, String> {
    counted_by(cmd, parse_counts)
}

/// [`counted`] with another tool's result lines.
fn counted_by(cmd: &mut Command, parse: fn(&str, &mut Tally)) -> Result<Tally, String> {
    let shown = describe(cmd);
    info(&format!("$ {shown}"));
    let mut child = cmd
        .current_dir(root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    let mut tally = Tally::default();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            parse(&line, &mut tally);
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        tally.failed = tally.failed.max(1);
    }
    // A step that only says why it skipped (a driver it could not fetch) reported, not ran
    // nothing.
    if tally.passed + tally.failed + tally.skipped == 0 {
        return Err(format!("`{shown}` ran no test"));
    }
    Ok(tally)
}

/// pytest's last line with `-q`: `1 failed, 13 passed, 2 skipped in 0.30s` (errors count as
/// failed). Only tests that did not run count as skipped (`skipped`, and `xfailed`: a test
/// marked as expected to fail checks nothing); `xpassed` ran and passed; `warnings` are not
/// tests, and `deselected` ones were never part of the run, so neither is counted.
fn parse_pytest(line: &str, tally: &mut Tally) {
    let l = line.trim().trim_matches('=').trim();
    let Some((counts, time)) = l.rsplit_once(" in ") else {
        return;
    };
    if !time.ends_with('s') {
        return;
    }
    let mut found = Tally::default();
    for part in counts.split(", ") {
        let Some((n, what)) = part.split_once(' ') else {
            return;
        };
        let Ok(n) = n.parse::<u64>() else {
            return;
        };
        match what {
            "failed" | "error" | "errors" => found.failed += n,
            "passed" | "xpassed" => found.passed += n,
            "skipped" | "xfailed" => found.skipped += n,
            "deselected" | "warning" | "warnings" => {}
            _ => return,
        }
    }
    tally.passed += found.passed;
    tally.failed += found.failed;
    tally.skipped += found.skipped;
}

fn parse_counts(line: &str, tally: &mut Tally) {
    let number_after = |s: &str, key: &str| -> Option<u64> {
        let i = s.find(key)? + key.len();
        s[i..]
            .split(|c: char| !c.is_ascii_digit())
            .find(|t| !t.is_empty())?
            .parse()
            .ok()
    };
    let l = line.trim();
    if l.starts_with("test result:") {
        // "test result: ok. 4 passed; 0 failed; ..."
        tally.passed += l
            .split("; ")
            .find_map(|p| {
                p.rsplit(". ")
                    .next()
                    .and_then(|q| q.strip_suffix(" passed"))
            })
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        tally.failed += number_after(l, "; ").unwrap_or(0);
        tally.ignored += l
            .split("; ")
            .find_map(|p| p.trim().strip_suffix(" ignored"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
    } else if l.contains("SKIPPED: ") {
        tally.skipped += 1;
    } else if let Some(rest) = ["ℹ skipped ", "# skip ", "ℹ todo ", "# todo "]
        .iter()
        .find_map(|p| l.strip_prefix(p))
    {
        tally.skipped += rest.trim().parse::<u64>().unwrap_or(0);
    } else if let Some(rest) = l
        .strip_prefix("ℹ pass ")
        .or_else(|| l.strip_prefix("# pass "))
    {
        tally.passed += rest.trim().parse::<u64>().unwrap_or(0);
    } else if let Some(rest) = ["ℹ fail ", "# fail ", "ℹ cancelled ", "# cancelled "]
        .iter()
        .find_map(|p| l.strip_prefix(p))
    {
        // A cancelled test (its file timed out or ended before it finished) did not pass.
        tally.failed += rest.trim().parse::<u64>().unwrap_or(0);
    }
}

/// `cargo xtask e2e [--no-build] [FILE…]`: builds the site (unless `--no-build`) and runs the
/// named browser test files (all when none is named), for quick iteration on one page.
pub fn e2e_only(args: &[String]) -> Result<(), String> {
    // E2E_SITE: another folder for the site, so two people iterating in one tree don't
    // replace each other's site mid-run.
    let site = std::env::var_os("E2E_SITE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target/e2e-site"));
    let build = !args.iter().any(|a| a == "--no-build");
    let only: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_string())
        .collect();
    tools::ensure_browser()?;
    if build || !site.join("index.html").exists() {
        crate::build::dist(&site, None)?;
    }
    let (tally, times) = e2e_files(&site, &only);
    let tally = tally?;
    crate::times::print_slowest(
        &format!("The ten slowest tests (of {})", times.len()),
        &crate::times::slowest(&times, 10),
    );
    println!("{}", tally.line());
    if tally.failed > 0 {
        Err("some browser tests failed".into())
    } else {
        Ok(())
    }
}

/// `cargo xtask soak [--no-build]`: the long runs of `tests/soak/` against the release site.
pub fn soak(args: &[String]) -> Result<(), String> {
    let site = root().join("target/e2e-site");
    tools::ensure_browser()?;
    if !args.iter().any(|a| a == "--no-build") || !site.join("index.html").exists() {
        crate::build::dist(&site, None)?;
    }
    let tally = node_tests(&site, "tests/soak", &[]).0?;
    println!("{}", tally.line());
    if tally.failed > 0 {
        Err("the soak failed".into())
    } else {
        Ok(())
    }
}

/// Serves the built site on a free port and runs the node test files against it.
fn e2e(site: &Path) -> (Result<Tally, String>, Vec<crate::times::Timed>) {
    e2e_files(site, &[])
}

/// Like [`e2e`], limited to the files named in `only` (all when empty).
fn e2e_files(site: &Path, only: &[String]) -> (Result<Tally, String>, Vec<crate::times::Timed>) {
    node_tests(site, "tests/e2e", only)
}

/// The browser test files that took longest, longest first: the file times (seconds summed over
/// each file's tests) of the fresh-clone run of 2026-12-08 at 26c151e (embed 160 s down to
/// visualiser 49 s), with `cnn` moved down for its stall test's 8 s, started first so that the run
/// does not end on one of them: two run at a time, and a 200 s file started in the last
/// minutes leaves the other worker idle for its rest. Only an order: a file missing here runs
/// after these, by name, and a stale entry costs nothing. When a file grows or shrinks, move it
/// to its place in `cargo xtask test`'s "Time per test file".
const LONGEST_FILES: &[&str] = &[
    "embed.test.mjs",
    "embed-heights.test.mjs",
    "train-settings.test.mjs",
    "ladder.test.mjs",
    "chart-text.test.mjs",
    "embed-results.test.mjs",
    "faults.test.mjs",
    "race.test.mjs",
    "train.test.mjs",
    "cnn-learner.test.mjs",
    "downloads.test.mjs",
    "gpt-inside.test.mjs",
    "train-lifecycle.test.mjs",
    "gpt-page.test.mjs",
    "gpt-train.test.mjs",
    "cnn.test.mjs",
    "lessons-systolic-int8-fp64-thermal.test.mjs",
    "embed-gpt.test.mjs",
    "train-crossover.test.mjs",
    "gpt-batching.test.mjs",
    "puzzles.test.mjs",
    "cnn-inside.test.mjs",
    "editor-sizes.test.mjs",
    "lessons-measured.test.mjs",
    "byte-budget.test.mjs",
    "visualiser.test.mjs",
];

/// The longest files first, the rest by name: two run at a time, and a long file started
/// last would leave one slot working alone at the end.
fn in_run_order(files: &mut [String]) {
    files.sort_by_key(|f| {
        let rank = LONGEST_FILES
            .iter()
            .position(|l| l == f)
            .unwrap_or(LONGEST_FILES.len());
        (rank, f.clone())
    });
}

/// The longest a browser test file may take: its longest wait is 300 s (the batch-size
/// experiment on a software adapter), so twice that is stuck, not slow.
const E2E_TEST_TIMEOUT_MS: u64 = 600_000;

/// Serves the site and runs the `*.test.mjs` files of `dir` named in `only` (all when empty);
/// with each test's time as far as the tests got.
fn node_tests(
    site: &Path,
    dir: &str,
    only: &[String],
) -> (Result<Tally, String>, Vec<crate::times::Timed>) {
    let mut times = Vec::new();
    let tally = node_tests_timed(site, dir, only, &mut times);
    (tally, times)
}

fn node_tests_timed(
    site: &Path,
    dir: &str,
    only: &[String],
    test_times: &mut Vec<crate::times::Timed>,
) -> Result<Tally, String> {
    let chromium = tools::ensure_browser()?;
    let base = crate::serve::spawn_background(site.to_path_buf(), "/course/gpu-playground/")?;
    info(&format!("site served at {base}"));
    // The oEmbed answers name the site's address, which is known only now: published as
    // `dist --base-url` would, for the oEmbed consumer's test.
    crate::embed_site::publish(site, Some(&base), &root().join("crates/app/locales"))?;
    let dir = root().join(dir);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".test.mjs"))
        .filter(|n| only.is_empty() || only.iter().any(|o| o == n))
        .collect();
    in_run_order(&mut files);
    if files.is_empty() {
        return Err(format!("no test files in {} match {only:?}", dir.display()));
    }
    let out = root().join("test-output");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    // The example books are generated, not committed: built from their sources here, for the
    // test that serves them. A tool that cannot be installed fails the step; nothing skips.
    let books = crate::books::default_out();
    if files.iter().any(|f| f == "books.test.mjs") {
        crate::books::build(&books)?;
    }
    // Two files at a time by default: most of a browser test is waiting (page loads, the GPU
    // queue, wasm compiles), so a second file fills the time; each file has its own browser.
    // E2E_CONCURRENCY=1 runs them one by one.
    let concurrency = std::env::var("E2E_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(2);
    let times = out.join("file-times.txt");
    let _ = std::fs::remove_file(&times);
    // node --test sorts the files it is given by name, which undid the order above: the
    // runner (tests/e2e/run-files.mjs, node:test's run()) starts them in the order given.
    // A file whose tests have ended exits even if something of it still listens (a test that
    // failed before stopping its own server kept its file, and so the whole run, waiting
    // until CI's limit); a browser test file still going after ten minutes is stuck, and
    // fails (node 20's --test-timeout, used before, limited each file as a whole too). The
    // soak's tests run for an hour by design, so they get no limit.
    let mut node = Command::new("node");
    node.arg(root().join("tests/e2e/run-files.mjs"))
        .arg("--concurrency")
        .arg(concurrency.to_string());
    if dir.ends_with("tests/e2e") {
        node.arg("--timeout").arg(E2E_TEST_TIMEOUT_MS.to_string());
    }
    // Each test's time is appended to `times` as it ends (tests/e2e/file-times.mjs), printed
    // below.
    let tally = counted(
        node.arg("--times")
            .arg(&times)
            .args(files.iter().map(|f| dir.join(f)))
            .env("BASE_URL", &base)
            // The built site's folder, for tests that serve it themselves (offline: a server
            // they can stop); with E2E_SITE it is not target/e2e-site.
            .env("SITE_DIR", site)
            .env("BOOKS_BUILT", &books)
            .env("CHROMIUM", &chromium)
            .env("TEST_OUTPUT", &out),
    );
    if let Ok(text) = std::fs::read_to_string(&times) {
        println!(
            "\n    Time per test file, summed over its tests ({}):",
            times.display()
        );
        for (file, ms, tests) in file_times(&text) {
            println!("    {:>6.0} s {tests:>4} tests  {file}", ms / 1000.0);
        }
        *test_times = crate::times::browser_times(&text);
    }
    tally
}

/// The reporter's lines ("<ms>\t<file>\t<test>", one per top-level test) summed per file,
/// slowest first: (file, milliseconds, tests). Lines that do not parse are skipped.
fn file_times(text: &str) -> Vec<(String, f64, u32)> {
    let mut sums: Vec<(String, f64, u32)> = Vec::new();
    for (ms, file) in text.lines().filter_map(|l| {
        let mut parts = l.split('\t');
        Some((parts.next()?, parts.next()?))
    }) {
        let Ok(ms) = ms.trim().parse::<f64>() else {
            continue;
        };
        match sums.iter_mut().find(|(f, _, _)| f == file) {
            Some(entry) => {
                entry.1 += ms;
                entry.2 += 1;
            }
            None => sums.push((file.to_string(), ms, 1)),
        }
    }
    sums.sort_by(|a, b| b.1.total_cmp(&a.1));
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_times_sum_each_files_tests_slowest_first() {
        let text = "1200\ta.test.mjs\tone\n300\tb.test.mjs\ttwo\nnoise\n2000\tb.test.mjs\tthree\nx\tc.test.mjs\tfour\n";
        assert_eq!(
            file_times(text),
            vec![
                ("b.test.mjs".to_string(), 2300.0, 2),
                ("a.test.mjs".to_string(), 1200.0, 1)
            ]
        );
    }

    #[test]
    fn the_longest_files_run_first_and_the_rest_by_name() {
        let mut files: Vec<String> = [
            "b.test.mjs",
            "train.test.mjs",
            "a.test.mjs",
            "embed.test.mjs",
        ]
        .map(String::from)
        .to_vec();
        in_run_order(&mut files);
        assert_eq!(
            files,
            [
                "embed.test.mjs",
                "train.test.mjs",
                "a.test.mjs",
                "b.test.mjs"
            ]
        );
    }

    #[test]
    fn counts_pytest_result_lines() {
        let mut t = Tally::default();
        for line in [
            "..............                                                           [100%]",
            "1 failed, 13 passed, 2 skipped in 0.30s",
            "===== 3 passed, 1 error in 1.02s =====",
            "the tests ran in 2s",
        ] {
            parse_pytest(line, &mut t);
        }
        assert_eq!((t.passed, t.failed, t.skipped), (16, 2, 2));
    }

    /// Warnings are not tests and deselected tests were never part of the run: neither is a
    /// skip. An xpassed test ran and passed; an xfailed one checked nothing.
    #[test]
    fn counts_only_pytests_real_skips() {
        let mut t = Tally::default();
        parse_pytest(
            "4 passed, 2 skipped, 3 deselected, 1 xfailed, 1 xpassed, 5 warnings in 0.40s",
            &mut t,
        );
        assert_eq!((t.passed, t.failed, t.skipped), (5, 0, 3));
        parse_pytest("== 2 passed, 1 warning in 0.10s ==", &mut t);
        assert_eq!((t.passed, t.failed, t.skipped), (7, 0, 3));
    }

    #[test]
    fn counts_cargo_and_node_result_lines() {
        let mut t = Tally::default();
        parse_counts(
            "test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.91s",
            &mut t,
        );
        parse_counts("test result: FAILED. 2 passed; 3 failed; 0 ignored", &mut t);
        parse_counts("ℹ pass 7", &mut t);
        parse_counts("ℹ fail 1", &mut t);
        parse_counts("ℹ tests 8", &mut t);
        assert_eq!((t.passed, t.failed, t.skipped, t.ignored), (13, 4, 0, 0));
        parse_counts("ℹ cancelled 2", &mut t);
        parse_counts(
            "    [SwiftShader] test result: ok. 1 passed; 0 failed",
            &mut t,
        );
        assert_eq!((t.passed, t.failed, t.skipped, t.ignored), (13, 6, 0, 0));
        parse_counts(
            "test result: ok. 5 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out",
            &mut t,
        );
        parse_counts("ℹ skipped 3", &mut t);
        parse_counts("ℹ todo 1", &mut t);
        parse_counts(
            "SKIPPED: every_matmul_kernel…: matmul-f16 on llvmpipe",
            &mut t,
        );
        parse_counts(
            "test foo ... SKIPPED: half_precision…: no shader-f16",
            &mut t,
        );
        assert_eq!((t.passed, t.failed, t.skipped, t.ignored), (18, 6, 6, 2));
        assert_eq!(
            t.line(),
            "18 passed, 6 failed, 8 skipped (2 of them ignored)"
        );
    }
}
