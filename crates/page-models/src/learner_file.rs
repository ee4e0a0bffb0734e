//! A learner's progress as a file and as a share code, to carry it to another device: the
//! solved puzzles and the puzzles' drafts (the local-storage entries that hold them). The
//! file is JSON with a format name, a version and a checksum, so a damaged, foreign or newer
//! file is refused by name, and importing only adds: nothing already on the device is lost.

use std::fmt::Write as _;

use crate::embed::quote;
use crate::kernel_edit::{base64url, unbase64url};

/// The `format` field: what makes a file ours.
pub const FORMAT: &str = "gpu-playground-progress";
pub const VERSION: u64 = 1;
/// Where the solved puzzles are kept (a comma-separated list of ids).
pub const SOLVED_KEY: &str = "gpu-playground.puzzles.solved";
/// The prefix of a puzzle's draft (`kernel_edit::draft_key("puzzle", id)`).
pub const PUZZLE_DRAFT_PREFIX: &str = "gpu-playground.draft.puzzle.";
/// What a share code starts with (its version too).
pub const CODE_PREFIX: &str = "GPP1-";
/// Largest file or unpacked code we read (drafts are small; this is far above them).
const MAX_BYTES: usize = 4 << 20;

/// Whether a local-storage key is part of a learner's progress.
pub fn is_progress_key(key: &str) -> bool {
    key == SOLVED_KEY || key.starts_with(PUZZLE_DRAFT_PREFIX)
}

/// Why a file or code was refused; `key()` names its sentence in the translation files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// Not JSON at all (or cut short).
    NotJson,
    /// JSON, but not a GPU Playground progress file.
    Foreign,
    /// A progress file of a version this site does not read.
    Version(u64),
    /// The contents do not match the checksum: changed or damaged.
    Checksum,
    /// A share code that does not unpack (cut short when copied, or mistyped).
    BadCode,
    TooLarge,
}

impl ImportError {
    /// An English sentence for a host page's developer (`setProgress`'s `bad-progress`); the
    /// learner reads [`ImportError::key`]'s translated sentence.
    pub fn for_host(&self) -> String {
        match self {
            ImportError::NotJson => "the file is not JSON (or was cut short)".into(),
            ImportError::Foreign => "JSON, but not a GPU Playground progress file".into(),
            ImportError::Version(v) => {
                format!("a progress file of version {v}; this site reads version {VERSION}")
            }
            ImportError::Checksum => {
                "the contents do not match the file's checksum: changed or damaged".into()
            }
            ImportError::BadCode => "a share code that does not unpack".into(),
            ImportError::TooLarge => format!("larger than {MAX_BYTES} bytes"),
        }
    }

    pub fn key(&self) -> &'static str {
        match self {
            ImportError::NotJson => "progress.error.not-json",
            ImportError::Foreign => "progress.error.foreign",
            ImportError::Version(_) => "progress.error.version",
            ImportError::Checksum => "progress.error.checksum",
            ImportError::BadCode => "progress.error.bad-code",
            ImportError::TooLarge => "progress.error.too-large",
        }
    }
}

/// FNV-1a 64 over every key and value (each followed by a 0 byte), in the order written.
fn checksum(items: &[(String, String)]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in items {
        for b in k.bytes().chain([0]).chain(v.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The file: the progress entries among `storage` (sorted, so the same progress is the same
/// file).
pub fn export(storage: &[(String, String)]) -> String {
    let mut items: Vec<(String, String)> = storage
        .iter()
        .filter(|(k, _)| is_progress_key(k))
        .cloned()
        .collect();
    items.sort();
    let mut s = String::from("{\"format\":");
    quote(&mut s, FORMAT);
    let _ = write!(s, ",\"version\":{VERSION},\"checksum\":");
    quote(&mut s, &checksum(&items));
    s.push_str(",\"items\":{");
    for (i, (k, v)) in items.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('\n');
        quote(&mut s, k);
        s.push(':');
        quote(&mut s, v);
    }
    s.push_str("\n}}\n");
    s
}

/// The progress entries of a file, checked.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, ImportError> {
    if text.len() > MAX_BYTES {
        return Err(ImportError::TooLarge);
    }
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let top = p.value(0).ok_or(ImportError::NotJson)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(ImportError::NotJson);
    }
    let Json::Obj(fields) = top else {
        return Err(ImportError::Foreign);
    };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    if get("format") != Some(&Json::Str(FORMAT.into())) {
        return Err(ImportError::Foreign);
    }
    match get("version") {
        Some(Json::Num(v)) if *v == VERSION as f64 => {}
        Some(Json::Num(v)) if *v >= 0.0 && v.fract() == 0.0 => {
            return Err(ImportError::Version(*v as u64))
        }
        _ => return Err(ImportError::Foreign),
    }
    let (Some(Json::Str(sum)), Some(Json::Obj(raw))) = (get("checksum"), get("items")) else {
        return Err(ImportError::Foreign);
    };
    let mut items = Vec::with_capacity(raw.len());
    for (k, v) in raw {
        let Json::Str(v) = v else {
            return Err(ImportError::Checksum);
        };
        items.push((k.clone(), v.clone()));
    }
    if checksum(&items) != *sum {
        return Err(ImportError::Checksum);
    }
    // Only our own entries are ever written, whatever else a file carries.
    items.retain(|(k, _)| is_progress_key(k));
    Ok(items)
}

/// The share code of a file: `GPP1-` and the deflated file in base64url.
pub fn share_code(file: &str) -> String {
    let packed = miniz_oxide::deflate::compress_to_vec(file.as_bytes(), 9);
    format!("{CODE_PREFIX}{}", base64url(&packed))
}

/// The progress in a share code (spaces and line breaks from copying are ignored).
pub fn parse_code(code: &str) -> Result<Vec<(String, String)>, ImportError> {
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(body) = code.strip_prefix(CODE_PREFIX) else {
        return Err(ImportError::BadCode);
    };
    let packed = unbase64url(body).ok_or(ImportError::BadCode)?;
    let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_BYTES)
        .map_err(|_| ImportError::BadCode)?;
    let text = String::from_utf8(bytes).map_err(|_| ImportError::BadCode)?;
    // A code cut short can still inflate to the start of a file: that is a bad code too.
    parse(&text).map_err(|e| match e {
        ImportError::NotJson => ImportError::BadCode,
        e => e,
    })
}

/// What an import does to the device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Merge {
    /// Entries to write (new ones, and the solved list grown by the imported ids).
    pub writes: Vec<(String, String)>,
    /// Puzzles newly marked solved.
    pub solved: usize,
    /// Drafts added (the puzzle had none here).
    pub drafts: usize,
    /// Drafts that differ from the one here: the one here is kept (nothing is overwritten).
    pub kept: usize,
}

/// Merges imported entries into `local` without deleting or overwriting anything there.
pub fn merge(local: &[(String, String)], incoming: &[(String, String)]) -> Merge {
    let here = |k: &str| local.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let mut m = Merge::default();
    for (k, v) in incoming {
        if k == SOLVED_KEY {
            let mut ids: Vec<&str> = here(SOLVED_KEY)
                .unwrap_or_default()
                .split(',')
                .filter(|x| !x.is_empty())
                .collect();
            for id in v.split(',').filter(|x| !x.is_empty()) {
                if !ids.contains(&id) {
                    ids.push(id);
                    m.solved += 1;
                }
            }
            if m.solved > 0 {
                m.writes.push((k.clone(), ids.join(",")));
            }
        } else {
            match here(k) {
                None => {
                    m.writes.push((k.clone(), v.clone()));
                    m.drafts += 1;
                }
                Some(old) if old != v => m.kept += 1,
                Some(_) => {}
            }
        }
    }
    m
}

/// The little JSON this needs: objects, strings, numbers (and the rest read and dropped).
#[derive(Debug, PartialEq)]
enum Json {
    Obj(Vec<(String, Json)>),
    Str(String),
    Num(f64),
    Other,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn value(&mut self, depth: u8) -> Option<Json> {
        if depth > 16 {
            return None;
        }
        self.ws();
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut out = Vec::new();
                if self.eat(b'}') {
                    return Some(Json::Obj(out));
                }
                loop {
                    self.ws();
                    let Json::Str(k) = self.string()? else {
                        return None;
                    };
                    if !self.eat(b':') {
                        return None;
                    }
                    out.push((k, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Some(Json::Obj(out));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.eat(b']') {
                    return Some(Json::Other);
                }
                loop {
                    self.value(depth + 1)?;
                    if self.eat(b']') {
                        return Some(Json::Other);
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'"' => self.string(),
            b't' => self.word("true"),
            b'f' => self.word("false"),
            b'n' => self.word("null"),
            _ => {
                let start = self.i;
                while matches!(
                    self.s.get(self.i),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                ) {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                t.parse().ok().map(Json::Num)
            }
        }
    }
    fn word(&mut self, w: &str) -> Option<Json> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Some(Json::Other)
        } else {
            None
        }
    }
    fn string(&mut self) -> Option<Json> {
        if self.s.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).ok().map(Json::Str),
                b'\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let hex = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
                            self.i += 4;
                            let mut u = u32::from_str_radix(hex, 16).ok()?;
                            if (0xd800..0xdc00).contains(&u) {
                                // A surrogate pair: the low half follows as \uXXXX.
                                if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return None;
                                }
                                let lo = std::str::from_utf8(self.s.get(self.i + 2..self.i + 6)?)
                                    .ok()?;
                                let lo = u32::from_str_radix(lo, 16).ok()?;
                                self.i += 6;
                                u = 0x10000 + ((u - 0xd800) << 10) + (lo.checked_sub(0xdc00)?);
                            }
                            char::from_u32(u)?
                        }
                        _ => return None,
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    fn storage() -> Vec<(String, String)> {
        vec![
            kv(
                "gpu-playground.draft.puzzle.map",
                "fn main() {\n  // \"quoted\" 中文 \u{1F600}\n}",
            ),
            kv(SOLVED_KEY, "map,zip"),
            kv("gpu-playground.theme", "dark"),
            kv("gpu-playground.draft.editor.matmul-naive", "x"),
        ]
    }

    #[test]
    fn a_file_round_trips_only_progress() {
        let file = export(&storage());
        assert!(
            !file.contains("theme") && !file.contains("editor"),
            "{file}"
        );
        let items = parse(&file).expect("own file");
        let mut want: Vec<_> = storage()
            .into_iter()
            .filter(|(k, _)| is_progress_key(k))
            .collect();
        want.sort();
        assert_eq!(items, want);
        assert_eq!(parse_code(&share_code(&file)), Ok(want));
    }

    #[test]
    fn refusals_are_named() {
        let file = export(&storage());
        assert_eq!(parse("not json {"), Err(ImportError::NotJson));
        assert_eq!(parse(&file[..file.len() / 2]), Err(ImportError::NotJson));
        assert_eq!(parse("{\"name\":\"a photo\"}"), Err(ImportError::Foreign));
        assert_eq!(parse("[1,2]"), Err(ImportError::Foreign));
        let newer = file.replace("\"version\":1", "\"version\":2");
        assert_eq!(parse(&newer), Err(ImportError::Version(2)));
        let altered = file.replace("map,zip", "map,zip,dot");
        assert_eq!(parse(&altered), Err(ImportError::Checksum));
        let code = share_code(&file);
        assert_eq!(
            parse_code(&code[..code.len() - 8]),
            Err(ImportError::BadCode)
        );
        assert_eq!(parse_code("hello"), Err(ImportError::BadCode));
        assert_eq!(parse_code("GPP1-!!!!"), Err(ImportError::BadCode));
        // Spaces and line breaks picked up when copying do not matter.
        let spaced = format!("{} \n{}", &code[..10], &code[10..]);
        assert!(parse_code(&spaced).is_ok());
        for e in [
            ImportError::NotJson,
            ImportError::Version(2),
            ImportError::BadCode,
        ] {
            assert!(e.key().starts_with("progress.error."));
        }
    }

    #[test]
    fn import_adds_and_never_overwrites() {
        let local = vec![
            kv(SOLVED_KEY, "dot"),
            kv("gpu-playground.draft.puzzle.map", "mine"),
        ];
        let incoming = vec![
            kv(SOLVED_KEY, "map,dot"),
            kv("gpu-playground.draft.puzzle.map", "theirs"),
            kv("gpu-playground.draft.puzzle.zip", "new"),
        ];
        let m = merge(&local, &incoming);
        assert_eq!(
            m.writes,
            vec![
                kv(SOLVED_KEY, "dot,map"),
                kv("gpu-playground.draft.puzzle.zip", "new")
            ]
        );
        assert_eq!((m.solved, m.drafts, m.kept), (1, 1, 1));
        // Importing the same again changes nothing.
        let mut after = local.clone();
        after.retain(|(k, _)| !m.writes.iter().any(|(w, _)| w == k));
        after.extend(m.writes.clone());
        assert_eq!(merge(&after, &incoming).writes, vec![]);
    }
}
