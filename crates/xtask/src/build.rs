//! Building the web app: cargo (wasm32) → wasm-bindgen (`--target web`) → wasm-opt → static
//! files. All paths in the output are relative, so `dist/` works from any sub-path of any host.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::names::{APP_LIB, EMBED_LIB};
use crate::tools::{ensure_npm, ensure_wasm_bindgen, ensure_wasm_opt, ensure_wasm_toolchain};
use crate::util::{info, root, run, step};

const APP_PACKAGE: &str = "gpu-playground";
/// naga's WGSL checker for the editor: its own wasm module, loaded only when an editor opens.
const CHECK_PACKAGE: &str = "wgsl-check";
const CHECK_LIB: &str = "wgsl_check";
/// The race's SIMD matmul as its own module, built twice (plain SIMD128 with the app, and with
/// relaxed SIMD in its own target dir); `www/cpu-worker.js` loads the one the browser runs.
const KERNEL_PACKAGE: &str = "race-kernel";
const KERNEL_LIB: &str = "race_kernel";
/// Where the two kernel modules go in the site.
pub const KERNEL_DIR: &str = "kernels";
/// The cargo profile of the site's wasm (Cargo.toml: release, tuned for size).
/// `GPU_PLAYGROUND_WEB_PROFILE=web-fast` builds the same site in a fraction of the time
/// (larger module, no fat LTO) for iterating on browser tests; CI always builds `web`.
fn web_profile() -> String {
    std::env::var("GPU_PLAYGROUND_WEB_PROFILE").unwrap_or_else(|_| "web".into())
}

/// Sizes of the built wasm module, for the build report.
pub struct BuildReport {
    pub wasm_bytes: u64,
    pub wasm_gzip_bytes: Option<u64>,
    /// The embed module (the app without its lessons).
    pub embed_bytes: u64,
    pub embed_gzip_bytes: Option<u64>,
    /// What opening the editor adds (editor.js + the checker's glue and wasm).
    pub editor_bytes: u64,
    pub editor_gzip_bytes: Option<u64>,
}

/// Builds the release app into `out` (replacing what was there). `base`: the site's absolute
/// address (`--base-url`, normalised by `embed_site::normalize_base`), which oEmbed needs.
pub fn dist(out: &Path, base: Option<&str>) -> Result<BuildReport, String> {
    // Absolute: some steps run in other directories (the editor's bundler runs in editor/).
    let out = &std::path::absolute(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let toolchain = ensure_wasm_toolchain()?;
    let bindgen = ensure_wasm_bindgen()?;
    // wasm-opt is an optimisation, not a requirement: without npm the build still works.
    let wasm_opt = match ensure_wasm_opt() {
        Ok(p) => Some(p),
        Err(e) => {
            info(&format!("wasm-opt unavailable, skipping it: {e}"));
            None
        }
    };

    step(&format!(
        "Building {APP_PACKAGE} for wasm32 (profile `{}`; a clean build takes ~4 min on 2 cores)",
        web_profile()
    ));
    let mut cargo = Command::new("cargo");
    cargo
        .args([
            "build",
            "--profile",
            &web_profile(),
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            APP_PACKAGE,
            "-p",
            CHECK_PACKAGE,
            "-p",
            KERNEL_PACKAGE,
        ])
        .current_dir(root());
    toolchain.configure(&mut cargo);
    run(&mut cargo)?;
    let release = toolchain
        .target_dir()
        .join("wasm32-unknown-unknown")
        .join(web_profile());
    let wasm = release.join(format!("{APP_LIB}.wasm"));
    let kernel_file = format!("{KERNEL_LIB}.wasm");
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
    // Kept now: on the Debian path the relaxed build below lands on the same file.
    let simd_kernel = read(&release.join(&kernel_file))?;
    let relaxed_kernel = {
        let mut relaxed = Command::new("cargo");
        relaxed
            .args([
                "build",
                "--profile",
                &web_profile(),
                "--target",
                "wasm32-unknown-unknown",
                "-p",
                KERNEL_PACKAGE,
            ])
            .current_dir(root());
        let built = match toolchain.configure_relaxed(
            &mut relaxed,
            &web_profile(),
            &[KERNEL_PACKAGE, "cpu-kernels"],
        ) {
            Some(dir) => {
                step("Building the race's kernel module with relaxed SIMD (its own target dir)");
                dir.join("wasm32-unknown-unknown")
                    .join(web_profile())
                    .join(&kernel_file)
            }
            None => {
                step("Building the race's kernel module with relaxed SIMD (only the kernel's two crates rebuild)");
                release.join(&kernel_file)
            }
        };
        run(&mut relaxed)?;
        read(&built)?
    };

    step(&format!("Writing the site to {}", out.display()));
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| format!("clearing {}: {e}", out.display()))?;
    }
    let pkg = out.join("pkg");
    run(Command::new(&bindgen)
        .arg(&wasm)
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(&pkg))?;
    let bg = pkg.join(format!("{APP_LIB}_bg.wasm"));
    // No wasm-opt pass for the app: measured on this module, -O3 and -Oz make it smaller raw
    // but *larger* gzip-compressed (what a visitor downloads) than rustc's opt-level "z" + fat
    // LTO output alone (docs/benchmarks.md "First load"). Only the names go.
    let stripped = strip_debug_sections(&bg)?;
    info(&format!(
        "stripped the name section from the app's wasm ({} KiB)",
        stripped / 1024
    ));

    // The embed module: the same crate without its lessons, which boot.js starts for embedded
    // widgets. Built after the whole app's module was bound, since it lands on the same path.
    step("Building the embed module (the app without its lessons; only the app crate rebuilds)");
    let mut embed = Command::new("cargo");
    embed
        .args([
            "build",
            "--profile",
            &web_profile(),
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            APP_PACKAGE,
            "--no-default-features",
        ])
        .current_dir(root());
    toolchain.configure(&mut embed);
    run(&mut embed)?;
    run(Command::new(&bindgen)
        .arg(&wasm)
        .args([
            "--target",
            "web",
            "--no-typescript",
            "--out-name",
            EMBED_LIB,
            "--out-dir",
        ])
        .arg(&pkg))?;
    let embed_bg = pkg.join(format!("{EMBED_LIB}_bg.wasm"));
    strip_debug_sections(&embed_bg)?;
    copy_static(&root().join("www"), out)?;
    // The documents the pages link (docs/*.md as HTML, fact-check ids as anchors).
    crate::docs::write_site_docs(&root().join("docs"), &out.join("docs"))?;
    crate::hosting::write_locales(out, &root().join("crates/app/locales"))?;
    // The CNN page's digits from the pinned npm package, under a content-hashed name that
    // boot.js hands to the app; fetched by that page only, never precached.
    let digits = crate::mnist::write_site_asset(out)?;
    // The GPT page's corpora, the same way: fetched by that page only, never precached.
    let mut assets = vec![(crate::names::DIGITS_ASSET, digits)];
    assets.extend(crate::gpt_data::write_site_assets(out)?);
    crate::hosting::name_assets(out, &assets)?;
    // Not run through wasm-opt: they are small, and the kernel is what LLVM scheduled.
    let kernels = out.join(KERNEL_DIR);
    std::fs::create_dir_all(&kernels)
        .map_err(|e| format!("creating {}: {e}", kernels.display()))?;
    for (bytes, name) in [(&simd_kernel, "simd"), (&relaxed_kernel, "relaxed")] {
        let to = kernels.join(format!("{KERNEL_LIB}_{name}.wasm"));
        std::fs::write(&to, bytes).map_err(|e| format!("writing {}: {e}", to.display()))?;
    }

    let editor = out.join("editor");
    build_editor(&editor)?;
    run(Command::new(&bindgen)
        .arg(release.join(format!("{CHECK_LIB}.wasm")))
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(&editor))?;
    let check_bg = editor.join(format!("{CHECK_LIB}_bg.wasm"));
    if let Some(opt) = &wasm_opt {
        // Size over speed: it validates one small shader per keystroke pause.
        optimise(opt, &check_bg, "-Oz")?;
    }
    let editor_files = [
        editor.join("editor.js"),
        editor.join(format!("{CHECK_LIB}.js")),
        check_bg,
    ];

    let report = BuildReport {
        wasm_bytes: std::fs::metadata(&bg).map(|m| m.len()).unwrap_or(0),
        wasm_gzip_bytes: gzip_size(&bg),
        embed_bytes: std::fs::metadata(&embed_bg).map(|m| m.len()).unwrap_or(0),
        embed_gzip_bytes: gzip_size(&embed_bg),
        editor_bytes: editor_files
            .iter()
            .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
            .sum(),
        editor_gzip_bytes: editor_files.iter().map(|f| gzip_size(f)).sum(),
    };
    info(&format!("wasm: {}", report.describe()));
    crate::hosting::write_icons(out)?;
    let locales = root().join("crates/app/locales");
    let loader = crate::embed_site::write_loader(out, &locales)?;
    info(&format!("one-line embed loader: embed.js and {loader}"));
    let module = crate::embed_site::write_notebook_module(out)?;
    info(&format!("notebook widget module: widget.mjs and {module}"));
    crate::embed_site::index_discovery(out, base)?;
    let version = crate::hosting::finish_site(out)?;
    info(&format!(
        "site version {version} (hashed file names, service worker)"
    ));
    let pages = crate::embed_site::publish(out, base, &locales)?;
    match base {
        Some(b) => info(&format!(
            "{pages} widget pages in embed/ with oEmbed answers for {b}"
        )),
        None => info(&format!(
            "{pages} widget pages in embed/; no oEmbed answers (they need --base-url)"
        )),
    }
    Ok(report)
}

/// Removes the custom sections a browser never reads (`name`: function names for debuggers,
/// ~3 MB here; `.debug_*`) from a wasm module in place. Returns the bytes removed.
fn strip_debug_sections(path: &Path) -> Result<u64, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let out = without_debug_sections(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, &out).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok((bytes.len() - out.len()) as u64)
}

/// A wasm module's bytes without its `name` and `.debug_*` custom sections.
fn without_debug_sections(bytes: &[u8]) -> Result<Vec<u8>, String> {
    fn leb(b: &[u8], at: &mut usize) -> Result<usize, String> {
        let (mut value, mut shift) = (0usize, 0);
        loop {
            let byte = *b.get(*at).ok_or("truncated module")?;
            *at += 1;
            value |= ((byte & 0x7f) as usize) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
            shift += 7;
            if shift > 28 {
                return Err("bad section size".into());
            }
        }
    }
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("not a wasm module".into());
    }
    let mut out = bytes[..8].to_vec();
    let mut at = 8;
    while at < bytes.len() {
        let start = at;
        let id = bytes[at];
        at += 1;
        let size = leb(bytes, &mut at)?;
        let end = at
            .checked_add(size)
            .filter(|&e| e <= bytes.len())
            .ok_or("truncated section")?;
        let drop = id == 0 && {
            let mut p = at;
            let len = leb(bytes, &mut p)?;
            let name = bytes.get(p..p + len).ok_or("truncated section name")?;
            name == b"name" || name.starts_with(b".debug")
        };
        if !drop {
            out.extend_from_slice(&bytes[start..end]);
        }
        at = end;
    }
    Ok(out)
}

/// Runs npm's wasm-opt in place at `level`.
fn optimise(opt: &Path, wasm: &Path, level: &str) -> Result<(), String> {
    // The features rustc enables by default for wasm32; wasm-opt must accept them.
    run(Command::new(opt)
        .arg(wasm)
        .args([
            level,
            "--enable-bulk-memory",
            "--enable-mutable-globals",
            "--enable-nontrapping-float-to-int",
            "--enable-sign-ext",
            "--enable-reference-types",
            "--enable-multivalue",
            "--enable-simd",
            "-o",
        ])
        .arg(wasm))
}

/// Bundles the CodeMirror editor (npm packages pinned by `editor/package-lock.json`) into
/// `out/editor.js` with esbuild.
fn build_editor(out: &Path) -> Result<(), String> {
    let dir = root().join("editor");
    ensure_npm(&dir)?;
    step("Bundling the WGSL editor (CodeMirror 6, esbuild)");
    run(Command::new("node")
        .arg("build.mjs")
        .arg(out)
        .current_dir(&dir))
}

impl BuildReport {
    pub fn describe(&self) -> String {
        let kib =
            |g: Option<u64>| g.map_or_else(|| "? KiB".into(), |g| format!("{} KiB", g / 1024));
        format!(
            "{} KiB raw, {} gzip; embed module: {} KiB raw, {} gzip; editor on open: {} KiB raw, {} gzip",
            self.wasm_bytes / 1024,
            kib(self.wasm_gzip_bytes),
            self.embed_bytes / 1024,
            kib(self.embed_gzip_bytes),
            self.editor_bytes / 1024,
            kib(self.editor_gzip_bytes),
        )
    }
}

/// Copies `www/` into the site, leaving out npm's files.
fn copy_static(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if name_str == "node_modules" || name_str.starts_with("package") {
            continue;
        }
        let src: PathBuf = entry.path();
        let dst = to.join(&name);
        if src.is_dir() {
            copy_static(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| format!("copying {}: {e}", src.display()))?;
        }
    }
    Ok(())
}

fn gzip_size(path: &Path) -> Option<u64> {
    let out = Command::new("gzip")
        .args(["-9", "-c"])
        .arg(path)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::without_debug_sections;

    #[test]
    fn strips_name_and_debug_sections_only() {
        let custom = |name: &str, body: &[u8]| {
            let mut s = vec![0u8, (1 + name.len() + body.len()) as u8, name.len() as u8];
            s.extend_from_slice(name.as_bytes());
            s.extend_from_slice(body);
            s
        };
        let mut module = b"\0asm\x01\0\0\0".to_vec();
        let ty = [1u8, 4, 1, 0x60, 0, 0]; // type section: one () -> ()
        module.extend_from_slice(&ty);
        module.extend(custom("name", b"abc"));
        module.extend(custom("producers", b"x"));
        module.extend(custom(".debug_info", b"yy"));
        let out = without_debug_sections(&module).unwrap();
        let mut want = b"\0asm\x01\0\0\0".to_vec();
        want.extend_from_slice(&ty);
        want.extend(custom("producers", b"x"));
        assert_eq!(out, want);
        assert!(
            without_debug_sections(b"\0asm\x01\0\0\0\x01\x09").is_err(),
            "truncated"
        );
        assert!(without_debug_sections(b"not wasm").is_err());
    }
}
