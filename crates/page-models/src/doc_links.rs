//! Where a text names one of the project's documents — `docs/benchmarks.md`, or a fact-check id
//! such as `FC-103` — the page links it to the document the site carries (`docs/<name>.html`,
//! rendered by `cargo xtask dist`; a fact-check id to its row, `docs/fact-check.html#fc-103`).
//! A reference may carry its own words, `[checked against the NVIDIA A100 datasheet](FC-05)`:
//! the link then reads as those words and keeps the id only in its address, so a learner reads
//! what was checked and against what, not a bare code.
//! Pure: splits a text into plain runs and links; `Ctx::linked` renders them.

/// A piece of a text: plain, or a document reference with its address on the site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Link { text: &'a str, href: String },
}

/// The documents the site carries (`docs/*.md` of the repository).
pub const DOCS: [&str; 4] = ["benchmarks", "embedding", "fact-check", "reliability"];

/// The length of a fact-check id at the start of `s` (`FC-44a`), if one is there.
fn fc_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("FC-")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let after = &rest[digits..];
    let letter = after
        .chars()
        .next()
        .filter(|c| c.is_ascii_lowercase())
        .filter(|_| !after[1..].starts_with(|c: char| c.is_alphanumeric()))
        .map_or(0, |_| 1);
    let n = 3 + digits + letter;
    // A whole word: `FC-12ab` is not an id.
    (!s[n..].starts_with(|c: char| c.is_alphanumeric())).then_some(n)
}

/// `docs/<name>.md` (one the site carries) at the start of `s`: its length and name.
fn doc_at(s: &str) -> Option<(usize, &'static str)> {
    let rest = s.strip_prefix("docs/")?;
    DOCS.iter()
        .find(|d| rest.starts_with(&format!("{d}.md")))
        .map(|d| ("docs/".len() + d.len() + 3, *d))
}

/// The address of a whole reference (`FC-05`, `docs/benchmarks.md`), if `r` is exactly one.
fn href_of(r: &str) -> Option<String> {
    if let Some(n) = fc_len(r).filter(|&n| n == r.len()) {
        return Some(format!(
            "docs/fact-check.html#fc-{}",
            r[3..n].to_ascii_lowercase()
        ));
    }
    doc_at(r)
        .filter(|&(n, _)| n == r.len())
        .map(|(_, d)| format!("docs/{d}.html"))
}

/// `[words](REF)` at the start of `s`, REF one whole reference: its length, words and address.
fn labelled_at(s: &str) -> Option<(usize, &str, String)> {
    let rest = s.strip_prefix('[')?;
    let close = rest.find("](")?;
    let words = &rest[..close];
    let after = &rest[close + 2..];
    let end = after.find(')')?;
    let href = href_of(&after[..end])?;
    (!words.trim().is_empty() && !words.contains('[')).then_some((
        1 + close + 2 + end + 1,
        words,
        href,
    ))
}

/// Splits `text` into plain runs and document links. A reference counts only at a word start
/// (not inside `XFC-1` or `mydocs/…`); `[words](REF)` is a link reading `words`.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut plain = 0;
    let mut i = 0;
    while i < text.len() {
        let at = &text[i..];
        let word_start = text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '/' && c != '-');
        let found = if let Some((n, words, href)) = labelled_at(at) {
            Some((n, words, href))
        } else if !word_start {
            None
        } else if let Some(n) = fc_len(at) {
            Some((
                n,
                &at[..n],
                format!("docs/fact-check.html#fc-{}", at[3..n].to_ascii_lowercase()),
            ))
        } else {
            doc_at(at).map(|(n, d)| (n, &at[..n], format!("docs/{d}.html")))
        };
        match found {
            Some((n, words, href)) => {
                if plain < i {
                    out.push(Piece::Text(&text[plain..i]));
                }
                out.push(Piece::Link { text: words, href });
                i += n;
                plain = i;
            }
            None => i += at.chars().next().map_or(1, char::len_utf8),
        }
    }
    if plain < text.len() {
        out.push(Piece::Text(&text[plain..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_check_ids_and_documents_become_links() {
        assert_eq!(
            pieces("Sources in docs/fact-check.md, FC-131 and FC-44a."),
            [
                Piece::Text("Sources in "),
                Piece::Link {
                    text: "docs/fact-check.md",
                    href: "docs/fact-check.html".into()
                },
                Piece::Text(", "),
                Piece::Link {
                    text: "FC-131",
                    href: "docs/fact-check.html#fc-131".into()
                },
                Piece::Text(" and "),
                Piece::Link {
                    text: "FC-44a",
                    href: "docs/fact-check.html#fc-44a".into()
                },
                Piece::Text("."),
            ]
        );
        assert_eq!(
            pieces("（FC-103、FC-170）"),
            [
                Piece::Text("（"),
                Piece::Link {
                    text: "FC-103",
                    href: "docs/fact-check.html#fc-103".into()
                },
                Piece::Text("、"),
                Piece::Link {
                    text: "FC-170",
                    href: "docs/fact-check.html#fc-170".into()
                },
                Piece::Text("）"),
            ]
        );
        assert_eq!(
            pieces("docs/benchmarks.md compares"),
            [
                Piece::Link {
                    text: "docs/benchmarks.md",
                    href: "docs/benchmarks.html".into()
                },
                Piece::Text(" compares"),
            ]
        );
    }

    #[test]
    fn a_reference_with_its_own_words_reads_as_them() {
        assert_eq!(
            pieces("624 is sparse ([checked against the NVIDIA A100 datasheet](FC-05)); see [the benchmarks](docs/benchmarks.md)."),
            [
                Piece::Text("624 is sparse ("),
                Piece::Link {
                    text: "checked against the NVIDIA A100 datasheet",
                    href: "docs/fact-check.html#fc-05".into()
                },
                Piece::Text("); see "),
                Piece::Link {
                    text: "the benchmarks",
                    href: "docs/benchmarks.html".into()
                },
                Piece::Text("."),
            ]
        );
        assert_eq!(
            pieces("（[对照 NVIDIA A100 数据手册核实](FC-20)）"),
            [
                Piece::Text("（"),
                Piece::Link {
                    text: "对照 NVIDIA A100 数据手册核实",
                    href: "docs/fact-check.html#fc-20".into()
                },
                Piece::Text("）"),
            ]
        );
        // Not a reference inside the brackets, or no words: as before.
        for s in ["[a](FC-5xy)", "[a](https://example.com)", "[](FC-05)"] {
            assert!(
                !pieces(s)
                    .iter()
                    .any(|p| matches!(p, Piece::Link { text, .. } if text.starts_with('a') || text.is_empty())),
                "{s}: {:?}",
                pieces(s)
            );
        }
    }

    #[test]
    fn lookalikes_stay_text() {
        for s in [
            "FC- and FC-x",
            "XFC-12",
            "docs/other.md",
            "mydocs/benchmarks.md",
            "FC-12ab",
            "",
        ] {
            let p = pieces(s);
            assert!(p.iter().all(|x| matches!(x, Piece::Text(_))), "{s}: {p:?}");
        }
    }
}
