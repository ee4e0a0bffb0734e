//! `cargo xtask loaded [--runs 3]`: the whole suite from fresh clones, several times in a row,
//! while two busy loops keep both cores occupied — the proof that no check depends on the
//! machine being idle (docs/reliability.md records each run's time and result).
//!
//! The busy loops run at `nice 19`, so they take what the suite leaves and, like a neighbour on
//! a shared CI host, make every wait longer. Each clone is made from the committed HEAD into
//! `target/loaded/run-N` with its own target dir, as CI's clean clone would be; the test tools
//! in `~/.cache/gpu-playground` are shared, as on a CI runner with its cache.

use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::util::{info, root, run, step};

/// Processes this command started, ended by their own pids when it returns or fails.
struct BusyLoops(Vec<Child>);

impl BusyLoops {
    fn start(n: usize) -> Result<Self, String> {
        let mut loops = Vec::new();
        for _ in 0..n {
            let child = Command::new("nice")
                .args(["-n", "19", "sh", "-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("could not start a busy loop: {e}"))?;
            info(&format!("busy loop at nice 19, pid {}", child.id()));
            loops.push(child);
        }
        Ok(BusyLoops(loops))
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn loaded(args: &[String]) -> Result<(), String> {
    let runs = match args {
        [] => 3,
        [flag, n] if flag == "--runs" => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("--runs wants a whole number ≥ 1, not `{n}`"))?,
        _ => {
            return Err(format!(
                "usage: cargo xtask loaded [--runs N], not `{}`",
                args.join(" ")
            ))
        }
    };
    let head = crate::util::output(
        Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(root()),
    )
    .map(|s| s.trim().to_string())
    .ok_or("not a git checkout: `git rev-parse HEAD` failed")?;
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let _busy = BusyLoops::start(cores)?;
    let base = root().join("target/loaded");
    let mut lines = Vec::new();
    for n in 1..=runs {
        let dir = base.join(format!("run-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
        step(&format!(
            "Loaded run {n} of {runs}: a fresh clone of {head} in {}",
            dir.display()
        ));
        run(Command::new("git")
            .arg("clone")
            .arg("-q")
            .arg(root())
            .arg(&dir))?;
        let t = Instant::now();
        let result = run(Command::new("bash")
            .arg(".ci/run")
            .current_dir(&dir)
            .env("CI", "true")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_MANIFEST_DIR"));
        let line = format!(
            "run {n}: {} in {:.0} s ({head}, {cores} busy loops at nice 19)",
            if result.is_ok() { "passed" } else { "FAILED" },
            t.elapsed().as_secs_f64()
        );
        info(&line);
        lines.push(line);
        if result.is_err() {
            break;
        }
        // The next clone builds from nothing, as CI does; this one's build is not needed.
        let _ = std::fs::remove_dir_all(dir.join("target"));
    }
    step("Loaded runs");
    for l in &lines {
        info(l);
    }
    if lines.len() == runs && lines.iter().all(|l| l.contains("passed")) {
        Ok(())
    } else {
        Err("a loaded run failed (its output is above)".into())
    }
}
