//! What makes the built site safe to host and to use offline: content hashes in the names of
//! the wasm module and the JS that loads it (so no cache ever pairs a new JS file with an old
//! wasm), the service worker's versioned precache list, and the app icons (PNG, drawn here).
//! std only, like the rest of xtask.

use std::path::Path;

use crate::names::{APP_LIB, DIGITS_ASSET, EMBED_LIB, GPT_ASSETS};

/// The Content Security Policy: the header `cargo xtask serve` sends (`serve.rs`), a meta tag
/// in `www/index.html` (a test keeps the two equal) and in the widget pages (`embed_site.rs`).
/// The header adds `frame-ancestors *`: embedding in any course page is the point of the
/// embeds, and the postMessage API only talks to origins the embedder names.
pub const CSP: &str =
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
                       img-src 'self' data: blob:; worker-src 'self'; connect-src 'self'; \
                       manifest-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'";

/// FNV-1a, 64 bits: a cache-busting fingerprint (not a security hash).
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()))
}

fn write(p: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(p, bytes).map_err(|e| format!("writing {}: {e}", p.display()))
}

/// Replaces `from` by `to` in a text file, failing when `from` is absent (a build whose
/// references no longer match must not ship half-renamed).
fn rewrite(p: &Path, from: &str, to: &str) -> Result<String, String> {
    let text = String::from_utf8(read(p)?).map_err(|e| format!("{}: {e}", p.display()))?;
    if !text.contains(from) {
        return Err(format!("{} does not mention {from}", p.display()));
    }
    Ok(text.replace(from, to))
}

/// Writes each language's text in parts (`locales/<lang>-<part>.<hash>.txt`, from
/// `crates/app/locales`, checked as the app's build script checks them; parts in
/// `locale_files::PARTS`) and names the files in `boot.js`, which hands them to the app: the
/// site's wasm carries no text and fetches the parts of the language that its page shows.
pub fn write_locales(out: &Path, locales: &Path) -> Result<(), String> {
    // Checks both languages against each other (same keys, same placeholders) first.
    locale_files::load_all(locales)?;
    let dir = out.join("locales");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut entries = Vec::new();
    for lang in locale_files::LANGS {
        let parts = locale_files::parse_parts(&locales.join(lang))?;
        for ((part, _), table) in locale_files::PARTS.iter().zip(&parts) {
            let text = locale_files::serialize(table);
            let name = format!("{lang}-{part}.{}.txt", fingerprint(text.as_bytes()));
            write(&dir.join(&name), text.as_bytes())?;
            entries.push(format!("'{lang}-{part}': 'locales/{name}'"));
        }
    }
    let boot = out.join("boot.js");
    let text = rewrite(&boot, "/* __LOCALES__ */", &entries.join(", "))?;
    write(&boot, text.as_bytes())
}

/// Names the site's data assets in `boot.js` (`ASSETS`: key → relative URL), which hands them
/// to the app; `entries` are (key, file name relative to the site) pairs, the files already
/// written under their content-hashed names. Nothing fetches them before a page asks.
pub fn name_assets(out: &Path, entries: &[(&str, String)]) -> Result<(), String> {
    let boot = out.join("boot.js");
    let list = entries
        .iter()
        .map(|(key, name)| format!("'{key}': '{name}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = rewrite(&boot, "/* __ASSETS__ */", &list)?;
    write(&boot, text.as_bytes())
}

/// Whether `file` (relative to the site) is fetched only by the pages that use it and cached by
/// the service worker then, instead of being precached: the editor's files, the digits and the
/// GPT page's corpora.
pub fn cached_on_use(file: &str) -> bool {
    file.starts_with(EDITOR_DIR) || is_data_asset(file)
}

/// A data asset at the site's root: `cnn-digits.<16 hex digits>.bin` or
/// `gpt-names.<16 hex digits>.txt` (and the other GPT corpora, `names::GPT_ASSETS`).
fn is_data_asset(file: &str) -> bool {
    let named = |key: &str, ext: &str| {
        file.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('.'))
            .and_then(|rest| rest.strip_suffix(ext))
            .is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    named(DIGITS_ASSET, ".bin") || GPT_ASSETS.iter().any(|d| named(d.key(), ".txt"))
}

/// Gives the wasm modules (the whole app's and the embed module), their JS glue and `boot.js`
/// content-hashed names and rewrites every reference to them (glue → wasm, boot.js → both
/// glues, each worker file → its module's glue, index.html → boot.js). Then writes the
/// service worker with the site's version and precache list, and the version into boot.js.
/// Returns the version.
pub fn finish_site(out: &Path) -> Result<String, String> {
    let pkg = out.join("pkg");
    let boot = out.join("boot.js");
    let mut boot_text =
        String::from_utf8(read(&boot)?).map_err(|e| format!("{}: {e}", boot.display()))?;
    // cpu-worker.js names the whole app's glue; the embed module's workers get a copy that
    // names its own (`race/pool.rs` picks the file by the build's features).
    let worker_template = out.join("cpu-worker.js");
    let worker_text = String::from_utf8(read(&worker_template)?)
        .map_err(|e| format!("{}: {e}", worker_template.display()))?;
    let mut wasm_names = Vec::new();
    for (lib, worker) in [
        (APP_LIB, "cpu-worker.js"),
        (EMBED_LIB, "cpu-worker-embed.js"),
    ] {
        let wasm = pkg.join(format!("{lib}_bg.wasm"));
        let wasm_name = format!("{lib}_bg.{}.wasm", fingerprint(&read(&wasm)?));
        std::fs::rename(&wasm, pkg.join(&wasm_name))
            .map_err(|e| format!("renaming {}: {e}", wasm.display()))?;

        let glue = pkg.join(format!("{lib}.js"));
        let glue_text = rewrite(
            &glue,
            &format!("'{lib}_bg.wasm'"),
            &format!("'{wasm_name}'"),
        )?;
        let glue_name = format!("{lib}.{}.js", fingerprint(glue_text.as_bytes()));
        write(&pkg.join(&glue_name), glue_text.as_bytes())?;
        std::fs::remove_file(&glue).map_err(|e| format!("removing {}: {e}", glue.display()))?;

        let new_ref = format!("./pkg/{glue_name}");
        let app_ref = format!("./pkg/{APP_LIB}.js");
        if !worker_text.contains(&app_ref) {
            return Err(format!("cpu-worker.js does not mention {app_ref}"));
        }
        write(
            &out.join(worker),
            worker_text.replace(&app_ref, &new_ref).as_bytes(),
        )?;
        let old_ref = format!("./pkg/{lib}.js");
        if !boot_text.contains(&old_ref) {
            return Err(format!("boot.js does not mention {old_ref}"));
        }
        boot_text = boot_text.replace(&old_ref, &new_ref);
        wasm_names.push(wasm_name);
    }

    // The site's version: every file that will be precached (boot.js gets it written in,
    // so it is computed over the rest plus boot.js before that).
    let mut files = list_files(out)?;
    files.retain(|f| f != "boot.js" && f != "sw.js");
    let mut all = boot_text.clone().into_bytes();
    for f in &files {
        all.extend_from_slice(f.as_bytes());
        all.extend_from_slice(&read(&out.join(f))?);
    }
    let version = fingerprint(&all);
    let boot_text = boot_text.replace("__BUILD_VERSION__", &version);
    let boot_name = format!("boot.{}.js", fingerprint(boot_text.as_bytes()));
    write(&out.join(&boot_name), boot_text.as_bytes())?;
    std::fs::remove_file(&boot).map_err(|e| format!("removing boot.js: {e}"))?;
    let index = out.join("index.html");
    write(
        &index,
        rewrite(&index, "./boot.js", &format!("./{boot_name}"))?.as_bytes(),
    )?;

    // index.html changed after the file list was taken: list again for the precache.
    // The editor's files (CodeMirror and naga's checker, ~500 KiB gzip) are left out: a first
    // visit should not download what most visitors never open. The service worker caches
    // them when the editor first loads them (network-first requests are stored), so the
    // editor works offline after it has been opened once. The same for the CNN page's digits
    // (7.5 MiB) and the GPT page's text: kept once fetched (`ON_USE` in sw.js), and carried
    // into the next version's cache while their hashed name stays the same.
    let (on_use, mut precache): (Vec<String>, Vec<String>) = list_files(out)?
        .into_iter()
        .filter(|f| f != "sw.js")
        .partition(|f| cached_on_use(f));
    precache.insert(0, "./".into());
    let quoted = |files: &[String]| {
        files
            .iter()
            .map(|f| format!("  '{}',", f.replace('\'', "\\'")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let on_use: Vec<String> = on_use.into_iter().filter(|f| is_data_asset(f)).collect();
    let sw = out.join("sw.js");
    let sw_text = rewrite(&sw, "'__BUILD_VERSION__'", &format!("'{version}'"))?;
    let sw_text = sw_text.replace("  // __PRECACHE__", &quoted(&precache));
    if wasm_names.iter().any(|w| !sw_text.contains(w.as_str())) {
        return Err("sw.js: the precache list was not written (marker missing)".into());
    }
    if !sw_text.contains(ON_USE_MARKER) {
        return Err(format!("sw.js does not mention {ON_USE_MARKER}"));
    }
    let sw_text = sw_text.replace(ON_USE_MARKER, &quoted(&on_use));
    write(&sw, sw_text.as_bytes())?;
    Ok(version)
}

/// Where sw.js lists the files it keeps once a page has fetched them.
const ON_USE_MARKER: &str = "  // __ON_USE__";

/// Files under this folder are not precached (see `finish_site`).
pub const EDITOR_DIR: &str = "editor/";

/// Every file under `dir`, as `/`-separated relative paths, sorted.
fn list_files(dir: &Path) -> Result<Vec<String>, String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out)?;
            } else if let Ok(rel) = p.strip_prefix(base) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

// ---------------------------------------------------------------- icons

/// The app icon at `size` px: a GPU die (rounded dark square) holding a 4 × 4 grid of cores,
/// one row lit in the accent colour — drawn pixel by pixel, so no image tool is needed.
pub fn icon_rgba(size: u32) -> Vec<u8> {
    let s = size as f32;
    let mut px = Vec::with_capacity((size * size * 4) as usize);
    let bg = [0x3b, 0x5b, 0xdb];
    let die = [0x1b, 0x1f, 0x2a];
    let core = [0x5b, 0x64, 0x75];
    let lit = [0xf5, 0x9f, 0x00];
    for y in 0..size {
        for x in 0..size {
            let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
            // Full-bleed background (maskable: the safe zone is the middle 80 %).
            let mut c = bg;
            let (d0, d1, r) = (0.2 * s, 0.8 * s, 0.06 * s);
            let inside = |a: f32, lo: f32, hi: f32| a >= lo && a <= hi;
            if inside(fx, d0, d1) && inside(fy, d0, d1) {
                let cx = fx.clamp(d0 + r, d1 - r);
                let cy = fy.clamp(d0 + r, d1 - r);
                if (fx - cx).powi(2) + (fy - cy).powi(2) <= r * r {
                    c = die;
                    let cell = (d1 - d0) / 4.0;
                    let (gx, gy) = ((fx - d0) / cell, (fy - d0) / cell);
                    let (ix, iy) = (gx.floor() as i32, gy.floor() as i32);
                    let (ux, uy) = (gx - ix as f32, gy - iy as f32);
                    if inside(ux, 0.18, 0.82) && inside(uy, 0.18, 0.82) {
                        c = if iy == 1 { lit } else { core };
                    }
                }
            }
            px.extend_from_slice(&[c[0], c[1], c[2], 0xff]);
        }
    }
    px
}

/// A PNG of RGBA pixels (stored deflate blocks: icons are small, no compressor needed).
pub fn png(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(rgba.len() + height as usize);
    for row in rgba.chunks(width as usize * 4) {
        raw.push(0); // filter: none
        raw.extend_from_slice(row);
    }
    let mut z = vec![0x78, 0x01];
    let mut chunks = raw.chunks(65_535).peekable();
    while let Some(block) = chunks.next() {
        z.push(u8::from(chunks.peek().is_none()));
        let len = block.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(block);
    }
    z.extend_from_slice(&adler32(&raw).to_be_bytes());

    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in bytes {
        a = (a + x as u32) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

/// Writes `icons/icon-192.png` and `icons/icon-512.png` (named in the web app manifest) and
/// `icons/icon-32.png`, the page's favicon: the PNGs are stored uncompressed (148 KiB at 192 px,
/// and hosts do not gzip images), so the page itself links the small one.
pub fn write_icons(out: &Path) -> Result<(), String> {
    let dir = out.join("icons");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for size in [32, 192, 512] {
        write(
            &dir.join(format!("icon-{size}.png")),
            &png(size, size, &icon_rgba(size)),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_values() {
        // Reference values of the standard algorithms.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        assert_eq!(fingerprint(b""), "cbf29ce484222325");
        assert_ne!(fingerprint(b"a"), fingerprint(b"b"));
    }

    #[test]
    fn png_has_the_right_structure() {
        let p = png(2, 1, &[255, 0, 0, 255, 0, 255, 0, 255]);
        assert_eq!(&p[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&p[12..16], b"IHDR");
        assert_eq!(u32::from_be_bytes([p[16], p[17], p[18], p[19]]), 2);
        assert!(p.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]));
        // A 512 px icon spans several stored blocks.
        assert!(png(512, 512, &icon_rgba(512)).len() > 512 * 512 * 4);
    }

    #[test]
    fn write_locales_writes_hashed_files_that_boot_js_names() {
        let dir = std::env::temp_dir().join(format!("xtask-locales-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("boot.js"),
            "const LOCALES = { /* __LOCALES__ */ };",
        )
        .unwrap();
        write_locales(&dir, &crate::util::root().join("crates/app/locales")).unwrap();
        let boot = std::fs::read_to_string(dir.join("boot.js")).unwrap();
        let en = locale_files::load_all(&crate::util::root().join("crates/app/locales"))
            .unwrap()
            .swap_remove(0);
        for lang in locale_files::LANGS {
            let mut keys = 0;
            for (part, _) in locale_files::PARTS {
                let label = format!("'{lang}-{part}': 'locales/");
                let start = boot.find(&label).unwrap() + label.len() - "locales/".len();
                let name = &boot[start..start + boot[start..].find('\'').unwrap()];
                let text = std::fs::read_to_string(dir.join(name)).unwrap();
                assert!(name.ends_with(&format!(".{}.txt", fingerprint(text.as_bytes()))));
                // The page's title is in the part every page loads; the lessons are not.
                assert_eq!(
                    text.lines().any(|l| l.starts_with("app.title = ")),
                    part == "core",
                    "{name}"
                );
                keys += text.lines().count();
            }
            // Every key in exactly one part.
            assert_eq!(keys, en.len(), "{lang}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_the_hashed_data_assets_and_the_editor_are_cached_on_use() {
        assert!(is_data_asset("cnn-digits.0123456789abcdef.bin"));
        for not in [
            "cnn-digits.bin",
            "cnn-digits.0123456789abcdeg.bin",
            "cnn-digits.0123456789abcdef0.bin",
            "cnn-digits.0123456789abcdef.bin.txt",
            "x/cnn-digits.0123456789abcdef.bin",
            "gpt-names.txt",
            "gpt-names.0123456789abcdef.bin",
            "gpt-poems.0123456789abcdefa.txt",
            "gpt-other.0123456789abcdef.txt",
        ] {
            assert!(!is_data_asset(not), "{not}");
        }
        assert!(is_data_asset("gpt-names.0123456789abcdef.txt"));
        assert!(is_data_asset("gpt-poems.fedcba9876543210.txt"));
        assert!(cached_on_use("editor/editor.js"));
        assert!(cached_on_use("cnn-digits.0123456789abcdef.bin"));
        assert!(!cached_on_use(
            "pkg/gpu_playground_bg.0123456789abcdef.wasm"
        ));
        assert!(!cached_on_use("locales/en-cnn.0123456789abcdef.txt"));
    }

    #[test]
    fn name_assets_hands_boot_js_the_urls_and_needs_its_marker() {
        let dir = std::env::temp_dir().join(format!("xtask-assets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("boot.js"), "const ASSETS = { /* __ASSETS__ */ };").unwrap();
        let name = "cnn-digits.0123456789abcdef.bin".to_string();
        name_assets(&dir, &[(DIGITS_ASSET, name)]).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("boot.js")).unwrap(),
            "const ASSETS = { 'cnn-digits': 'cnn-digits.0123456789abcdef.bin' };"
        );
        // Run again: the marker is gone, which fails rather than shipping no URL.
        assert!(name_assets(&dir, &[(DIGITS_ASSET, "x".into())]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_shipped_boot_js_and_sw_js_have_the_markers() {
        let www = crate::util::root().join("www");
        let boot = std::fs::read_to_string(www.join("boot.js")).unwrap();
        assert!(boot.contains("/* __ASSETS__ */") && boot.contains("app.boot(LOCALES, ASSETS)"));
        let sw = std::fs::read_to_string(www.join("sw.js")).unwrap();
        assert!(sw.contains(ON_USE_MARKER));
    }

    #[test]
    fn finish_site_renames_and_rewrites_every_reference() {
        let dir = std::env::temp_dir().join(format!("xtask-hosting-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        let w = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
        let modules = [("gpu_playground", "WASM"), ("gpu_playground_embed", "SLIM")];
        for (lib, bytes) in modules {
            w(&format!("pkg/{lib}_bg.wasm"), bytes);
            w(
                &format!("pkg/{lib}.js"),
                &format!("x = new URL('{lib}_bg.wasm', import.meta.url);"),
            );
        }
        w(
            "boot.js",
            "import(e ? './pkg/gpu_playground_embed.js' : './pkg/gpu_playground.js'); v='__BUILD_VERSION__';",
        );
        w("cpu-worker.js", "import './pkg/gpu_playground.js';");
        std::fs::create_dir_all(dir.join("editor")).unwrap();
        w("editor/editor.js", "// CodeMirror");
        w(
            "index.html",
            r#"<script type="module" src="./boot.js"></script>"#,
        );
        let sw_template = "const VERSION = '__BUILD_VERSION__';\nconst P = [\n  // __PRECACHE__\n];\nconst ON_USE = [\n  // __ON_USE__\n];";
        w("sw.js", sw_template);
        let digits = "cnn-digits.0123456789abcdef.bin";
        w(digits, "GPMD");
        let names = "gpt-names.0123456789abcdef.txt";
        w(names, "gpt-corpus");
        let version = finish_site(&dir).unwrap();
        let files = list_files(&dir).unwrap();
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
        let boot = files.iter().find(|f| f.starts_with("boot.")).unwrap();
        let sw = read("sw.js");
        for ((lib, bytes), worker) in modules.iter().zip(["cpu-worker.js", "cpu-worker-embed.js"]) {
            let wasm = format!("pkg/{lib}_bg.{}.wasm", fingerprint(bytes.as_bytes()));
            assert!(files.contains(&wasm), "{wasm}");
            let prefix = format!("pkg/{lib}.");
            let js = files
                .iter()
                .find(|f| f.starts_with(&prefix) && f.ends_with(".js"))
                .unwrap();
            assert!(read(js).contains(wasm.trim_start_matches("pkg/")));
            assert!(
                read(boot).contains(&format!("./{js}")),
                "boot.js names {js}"
            );
            // Each module's workers load that module.
            assert_eq!(read(worker), format!("import './{js}';"));
            for f in [&wasm, js, &worker.to_string()] {
                assert!(sw.contains(&format!("'{f}'")), "{f} not precached");
            }
            assert!(!files.contains(&format!("pkg/{lib}.js")));
        }
        assert!(read(boot).contains(&version));
        assert!(read("index.html").contains(&format!("./{boot}")));
        assert!(sw.contains(&version));
        for f in [boot, &"index.html".to_string()] {
            assert!(sw.contains(&format!("'{f}'")), "{f} not precached");
        }
        // The editor is cached when first opened, not on the first visit; it still counts
        // towards the version (a new editor is a new build).
        assert!(files.contains(&"editor/editor.js".to_string()));
        assert!(!sw.contains("editor/"), "the editor is precached");
        // The digits are kept once a page fetched them, not precached.
        let (precached, on_use) = sw.split_once("const ON_USE").unwrap();
        assert!(!precached.contains(digits), "the digits are precached");
        assert!(on_use.contains(&format!("'{digits}'")), "{on_use}");
        // So are the GPT page's corpora.
        assert!(!precached.contains(names), "the names are precached");
        assert!(on_use.contains(&format!("'{names}'")), "{on_use}");
        // A service worker without the list of files kept on use fails the build.
        let fresh = |sw: &str| {
            for (lib, bytes) in modules {
                w(&format!("pkg/{lib}_bg.wasm"), bytes);
                w(
                    &format!("pkg/{lib}.js"),
                    &format!("x = new URL('{lib}_bg.wasm', import.meta.url);"),
                );
            }
            w(
                "boot.js",
                "import(e ? './pkg/gpu_playground_embed.js' : './pkg/gpu_playground.js');",
            );
            w("cpu-worker.js", "import './pkg/gpu_playground.js';");
            w(
                "index.html",
                r#"<script type="module" src="./boot.js"></script>"#,
            );
            w("sw.js", sw);
        };
        fresh(&sw_template.replace("  // __ON_USE__\n", ""));
        let err = finish_site(&dir).unwrap_err();
        assert!(err.contains("__ON_USE__"), "{err}");
        // A glue file that no longer names the wasm the way we expect fails the build (the
        // rest of the site written afresh, so that is the only fault).
        for (lib, bytes) in modules {
            w(&format!("pkg/{lib}_bg.wasm"), bytes);
        }
        w(
            "boot.js",
            "import(e ? './pkg/gpu_playground_embed.js' : './pkg/gpu_playground.js');",
        );
        w("cpu-worker.js", "import './pkg/gpu_playground.js';");
        w("pkg/gpu_playground.js", "fetch(somewhere)");
        w(
            "pkg/gpu_playground_embed.js",
            "x = new URL('gpu_playground_embed_bg.wasm', import.meta.url);",
        );
        let err = finish_site(&dir).unwrap_err();
        assert!(err.contains("gpu_playground.js does not mention"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
