//! Installing what the other commands need, on a fresh machine or a developer's own.
//!
//! - wasm toolchain: rustup's `wasm32-unknown-unknown` target when rustup has (or can get) it;
//!   otherwise, on Debian as root, Debian's `rustc-web` + `rust-web-src` + `lld`, building std
//!   from source with `-Z build-std` (rustup cannot download a wasm32 std on machines without
//!   general network access; ../shared/TOOLCHAIN.md §1).
//! - wasm-bindgen CLI: exactly the version in Cargo.lock, `cargo install`ed into a versioned
//!   folder of the tools cache (shared by every clone on the machine).
//! - wasm-opt (npm `binaryen`; Debian's is too old for current rustc output) and
//!   `playwright-core`, CodeMirror + esbuild for the editor: npm packages pinned by the lock
//!   files in `www/`, `tests/e2e/` and `editor/`.
//! - Chromium + chromedriver and Mesa's software Vulkan driver: Debian packages.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::util::{info, on_path, output, root, run, step};

/// The Debian packages of the Rust-from-Debian wasm path.
const DEBIAN_WASM_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "lld-22"];
/// Headless browser for the end-to-end tests, and a CJK font so Chinese screenshots show text.
const BROWSER_PACKAGES: &[&str] = &["chromium", "chromium-driver", "fonts-wqy-zenhei"];
/// A software Vulkan driver so native GPU tests run without a GPU.
const VULKAN_PACKAGES: &[&str] = &["mesa-vulkan-drivers", "libvulkan1"];

/// How to build for `wasm32-unknown-unknown` on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WasmToolchain {
    /// rustup with the target installed: a plain `cargo build --target wasm32-unknown-unknown`.
    Rustup,
    /// Debian's rustc-web building std from source (nightly flags through RUSTC_BOOTSTRAP).
    DebianWeb,
}

impl WasmToolchain {
    /// Sets the environment for a cargo invocation that targets wasm32. The Debian path keeps
    /// its own target dir: its rustc and RUSTC_BOOTSTRAP would otherwise invalidate the
    /// native build cache on every switch.
    pub fn configure(self, cmd: &mut Command) {
        match self {
            WasmToolchain::Rustup => {
                cmd.env("CARGO_TARGET_DIR", root().join("target/web"));
            }
            WasmToolchain::DebianWeb => {
                cmd.env("RUSTC", "/usr/bin/rustc")
                    .env("RUSTC_BOOTSTRAP", "1")
                    .env("CARGO_UNSTABLE_BUILD_STD", "std,panic_abort")
                    // A panic in wasm32-unknown-unknown is a trap either way: std's panic
                    // message goes to a stderr that does not exist there, so the message
                    // formatting and location tables are dead weight (~N KiB gzip, see
                    // docs/benchmarks.md "First load"). `immediate-abort` leaves them out; a
                    // panic still ends in the same `unreachable` trap. (Replaces the config's
                    // target rustflags, so simd128 is repeated.)
                    .env(
                        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
                        "-C target-feature=+simd128 -Zunstable-options -Cpanic=immediate-abort",
                    )
                    .env("CARGO_TARGET_DIR", root().join("target/web-debian"));
            }
        }
    }

    /// As [`WasmToolchain::configure`], for a build of `packages` in cargo profile `profile` with relaxed SIMD as well as
    /// SIMD128: the race's relaxed-SIMD kernel module, apart from the app, whose module every
    /// browser must be able to load. Returns the target dir it builds into when that is not
    /// [`WasmToolchain::target_dir`].
    ///
    /// - rustup: its own target dir `target/web-relaxed` with the flags for every crate (std
    ///   comes prebuilt, so only the kernel's crates compile there).
    /// - Debian: std is built from source, and a target dir of its own built std a second
    ///   time for the new flags (193 s against the app build's 1,046 s on the loaded 2-core
    ///   machine, 2026-12-07). So the flags go to `packages` alone, through cargo's
    ///   `profile-rustflags` (this path runs cargo with `RUSTC_BOOTSTRAP` already), in the
    ///   app's target dir: only those crates recompile (52 s there), and the app's next build
    ///   recompiles them with its own flags (cargo's fingerprint holds the flags), so the
    ///   app's module never gets relaxed SIMD.
    pub fn configure_relaxed(
        self,
        cmd: &mut Command,
        profile: &str,
        packages: &[&str],
    ) -> Option<PathBuf> {
        self.configure(cmd);
        match self {
            WasmToolchain::Rustup => {
                let dir = root().join("target/web-relaxed");
                cmd.env(
                    "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
                    "-C target-feature=+simd128,+relaxed-simd",
                )
                .env("CARGO_TARGET_DIR", &dir);
                Some(dir)
            }
            WasmToolchain::DebianWeb => {
                cmd.arg("-Zprofile-rustflags");
                for p in packages {
                    cmd.args([
                        "--config",
                        &format!(
                            "profile.{profile}.package.{p}.rustflags=[\"-Ctarget-feature=+relaxed-simd\"]"
                        ),
                    ]);
                }
                None
            }
        }
    }

    pub fn target_dir(self) -> PathBuf {
        root().join(match self {
            WasmToolchain::Rustup => "target/web",
            WasmToolchain::DebianWeb => "target/web-debian",
        })
    }
}

/// The notebook widget's test dependencies from PyPI, pinned (the venv's folder is named by
/// them, so a change makes a fresh one).
const PYTHON_TEST_PACKAGES: &[&str] = &["anywidget==0.11.0", "pytest==9.2.0"];

/// A Python venv with [`PYTHON_TEST_PACKAGES`] for the notebook widget's tests.
pub fn ensure_python_venv() -> Result<PathBuf, String> {
    ensure_venv(PYTHON_TEST_PACKAGES, "the notebook widget's Python tests")
}

/// A Python venv with `packages` (pinned, from PyPI; ~10 s for the test ones), made once per
/// machine in the tools cache, in a folder named by them, so a change makes a fresh one.
/// Debian's python3-venv where `python3 -m venv` lacks ensurepip.
pub fn ensure_venv(packages: &[&str], why: &str) -> Result<PathBuf, String> {
    let name: String = packages
        .iter()
        .map(|p| p.replace("==", "-"))
        .collect::<Vec<_>>()
        .join("+");
    let venv = tools_dir().join(format!("python-venv-{name}"));
    if venv.join("bin/python").exists() {
        return Ok(venv);
    }
    std::fs::create_dir_all(tools_dir()).map_err(|e| format!("{}: {e}", tools_dir().display()))?;
    let partial = tools_dir().join(format!("python-venv-{name}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    let make = |dir: &Path| run(Command::new("python3").args(["-m", "venv"]).arg(dir));
    if make(&partial).is_err() {
        let _ = std::fs::remove_dir_all(&partial);
        ensure_debs(&["python3", "python3-venv"], why)?;
        make(&partial)?;
    }
    run(Command::new(partial.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet"])
        .args(packages))?;
    // Renamed only when complete, so an interrupted install is not taken for a working one.
    // Only `bin/python` is used (`python -m …`): it finds its venv from where it is, while
    // the venv's other scripts name the folder they were made in.
    std::fs::rename(&partial, &venv).map_err(|e| format!("{}: {e}", venv.display()))?;
    Ok(venv)
}

/// Where downloaded tools live: shared by all clones on the machine, versioned by folder name.
pub fn tools_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("GPU_PLAYGROUND_TOOLS") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache/gpu-playground")
}

fn is_root() -> bool {
    output(Command::new("id").arg("-u")).is_some_and(|s| s.trim() == "0")
}

fn has_apt() -> bool {
    Path::new("/usr/bin/apt-get").exists() && Path::new("/usr/bin/dpkg-query").exists()
}

fn deb_installed(pkg: &str) -> bool {
    output(Command::new("dpkg-query").args(["-W", "-f=${Status}", pkg]))
        .is_some_and(|s| s.contains("install ok installed"))
}

/// Installs Debian packages that are missing; says why, and fails clearly where it cannot.
pub fn ensure_debs(packages: &[&str], why: &str) -> Result<(), String> {
    if !has_apt() {
        return Err(format!(
            "{why} needs {} — this is not a Debian-like system; install the equivalents yourself",
            packages.join(", ")
        ));
    }
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| !deb_installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    step(&format!("Installing {} ({why})", missing.join(" ")));
    let mut prefix: Vec<&str> = Vec::new();
    if !is_root() {
        if !on_path("sudo") {
            return Err(format!(
                "{why} needs: sudo apt-get install {} (run it, then retry)",
                missing.join(" ")
            ));
        }
        prefix.push("sudo");
    }
    static UPDATED: OnceLock<()> = OnceLock::new();
    if UPDATED.get().is_none() {
        run(apt(&prefix).arg("update"))?;
        let _ = UPDATED.set(());
    }
    run(apt(&prefix).args(["install", "-y"]).args(&missing))
}

fn apt(prefix: &[&str]) -> Command {
    let mut cmd = match prefix.first() {
        Some(p) => {
            let mut c = Command::new(p);
            c.arg("apt-get");
            c
        }
        None => Command::new("apt-get"),
    };
    cmd.env("DEBIAN_FRONTEND", "noninteractive");
    cmd
}

fn rustup_has_wasm_target() -> bool {
    output(Command::new("rustup").args(["target", "list", "--installed"]))
        .is_some_and(|s| s.lines().any(|l| l.trim() == "wasm32-unknown-unknown"))
}

/// Picks (and installs) the wasm toolchain for this machine.
pub fn ensure_wasm_toolchain() -> Result<WasmToolchain, String> {
    static CHOSEN: OnceLock<WasmToolchain> = OnceLock::new();
    if let Some(t) = CHOSEN.get() {
        return Ok(*t);
    }
    let forced = std::env::var("GPU_PLAYGROUND_WASM").ok();
    let chosen = match forced.as_deref() {
        Some("rustup") => {
            if !rustup_has_wasm_target() {
                run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?;
            }
            WasmToolchain::Rustup
        }
        Some("debian") => {
            ensure_debs(DEBIAN_WASM_PACKAGES, "building std for wasm32 from source")?;
            WasmToolchain::DebianWeb
        }
        Some(other) => {
            return Err(format!(
                "GPU_PLAYGROUND_WASM must be rustup or debian, not `{other}`"
            ))
        }
        None if rustup_has_wasm_target() => WasmToolchain::Rustup,
        // Debian as root (this project's CI and dev machines): rustup cannot download the
        // wasm32 std there, so take the path that works offline.
        None if has_apt() && is_root() => {
            ensure_debs(DEBIAN_WASM_PACKAGES, "building std for wasm32 from source")?;
            WasmToolchain::DebianWeb
        }
        None => {
            step("Adding the wasm32-unknown-unknown target with rustup");
            run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"])).map_err(
                |e| format!("{e}\n  (set GPU_PLAYGROUND_WASM=debian on Debian to build std from source)"),
            )?;
            WasmToolchain::Rustup
        }
    };
    info(&format!("wasm toolchain: {chosen:?}"));
    let _ = CHOSEN.set(chosen);
    Ok(chosen)
}

/// The version of a package as resolved in Cargo.lock.
fn locked_version(package: &str) -> Result<String, String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("reading Cargo.lock: {e}"))?;
    let needle = format!("name = \"{package}\"\nversion = \"");
    let start = lock
        .find(&needle)
        .ok_or_else(|| format!("{package} is not in Cargo.lock"))?
        + needle.len();
    let end = lock[start..]
        .find('"')
        .ok_or_else(|| "malformed Cargo.lock".to_string())?;
    Ok(lock[start..start + end].to_string())
}

/// The wasm-bindgen CLI, exactly matching the `wasm-bindgen` crate in Cargo.lock.
pub fn ensure_wasm_bindgen() -> Result<PathBuf, String> {
    let version = locked_version("wasm-bindgen")?;
    let dir = tools_dir().join(format!("wasm-bindgen-{version}"));
    let bin = dir.join("bin/wasm-bindgen");
    let has = output(Command::new(&bin).arg("--version"))
        .is_some_and(|v| v.split_whitespace().nth(1) == Some(version.as_str()));
    if !has {
        step(&format!(
            "Installing wasm-bindgen-cli {version} into {} (once per machine, ~4 min on 2 cores)",
            dir.display()
        ));
        // Not --locked: the CLI's lock file pins a webpki-roots that the registry mirror of
        // some machines lacks; the unlocked resolution builds the same CLI.
        run(Command::new("cargo")
            .args([
                "install",
                "wasm-bindgen-cli",
                "--version",
                &version,
                "--root",
            ])
            .arg(&dir)
            .env_remove("RUSTC")
            .env_remove("RUSTC_BOOTSTRAP")
            .env_remove("CARGO_TARGET_DIR"))?;
    }
    Ok(bin)
}

/// Node.js and npm, from Debian when missing.
fn ensure_node() -> Result<(), String> {
    if on_path("node") && on_path("npm") {
        return Ok(());
    }
    ensure_debs(&["nodejs", "npm"], "wasm-opt and the browser tests")
}

/// Installs the npm packages of `dir` (pinned by its package-lock.json) if they are missing
/// or older than the lock file.
pub fn ensure_npm(dir: &Path) -> Result<(), String> {
    ensure_node()?;
    let lock = dir.join("package-lock.json");
    let stamp = dir.join("node_modules/.package-lock.json");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&stamp), modified(&lock)) {
        (Some(s), Some(l)) => s >= l,
        _ => false,
    };
    if !fresh {
        step(&format!("Installing npm packages in {}", dir.display()));
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(dir))?;
    }
    Ok(())
}

/// wasm-opt from npm's binaryen (Debian's binaryen 108 rejects current rustc output).
pub fn ensure_wasm_opt() -> Result<PathBuf, String> {
    let www = root().join("www");
    ensure_npm(&www)?;
    let bin = www.join("node_modules/.bin/wasm-opt");
    if bin.exists() {
        Ok(bin)
    } else {
        Err(format!("{} is missing after npm ci", bin.display()))
    }
}

/// Headless Chromium (WebGPU on SwiftShader) and playwright-core for the browser tests.
pub fn ensure_browser() -> Result<PathBuf, String> {
    ensure_debs(BROWSER_PACKAGES, "the end-to-end browser tests")?;
    ensure_npm(&root().join("tests/e2e"))?;
    let chromium = PathBuf::from("/usr/bin/chromium");
    if chromium.exists() {
        Ok(chromium)
    } else {
        Err("chromium is not at /usr/bin/chromium".into())
    }
}

/// Mesa's lavapipe, so wgpu's Vulkan backend finds an adapter without a GPU.
pub fn ensure_software_vulkan() -> Result<(), String> {
    ensure_debs(
        VULKAN_PACKAGES,
        "native GPU tests on a software Vulkan adapter",
    )
}

/// `cargo xtask setup`: everything, for people who want to install before they build.
pub fn setup_all() -> Result<(), String> {
    ensure_wasm_toolchain()?;
    ensure_wasm_bindgen()?;
    ensure_wasm_opt()?;
    ensure_npm(&root().join("editor"))?;
    ensure_software_vulkan()?;
    ensure_browser()?;
    step("All tools are installed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the Debian path the relaxed flag reaches only the named crates, in the app's target
    /// dir (a dir of its own would build std again); rustup's build keeps its own dir.
    #[test]
    fn the_relaxed_kernel_build_gives_its_flag_to_its_crates_only() {
        let mut cmd = Command::new("cargo");
        let dir = WasmToolchain::DebianWeb.configure_relaxed(
            &mut cmd,
            "web",
            &["race-kernel", "cpu-kernels"],
        );
        assert_eq!(dir, None);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-Zprofile-rustflags",
                "--config",
                "profile.web.package.race-kernel.rustflags=[\"-Ctarget-feature=+relaxed-simd\"]",
                "--config",
                "profile.web.package.cpu-kernels.rustflags=[\"-Ctarget-feature=+relaxed-simd\"]",
            ]
        );
        let env = |key: &str| {
            cmd.get_envs()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
        };
        assert_eq!(
            env("CARGO_TARGET_DIR"),
            Some(root().join("target/web-debian").display().to_string())
        );
        assert!(env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS")
            .is_some_and(|f| !f.contains("relaxed")));

        let mut cmd = Command::new("cargo");
        let dir = WasmToolchain::Rustup.configure_relaxed(&mut cmd, "web", &["race-kernel"]);
        assert_eq!(dir, Some(root().join("target/web-relaxed")));
        assert_eq!(cmd.get_args().count(), 0);
    }
}
