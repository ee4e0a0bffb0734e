//! One glossary of terms (`locales/glossary.txt`): a term has one Chinese translation on every
//! page, and a value's unit is the same symbol in both languages.

use std::path::Path;

use gpu_playground::i18n::{keys, t, Lang};

struct Term {
    en: String,
    zh: String,
    refused: Vec<String>,
}

struct Unit {
    symbol: String,
    refused: Vec<String>,
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

fn glossary() -> (Vec<Term>, Vec<Unit>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("locales/glossary.txt");
    let text = std::fs::read_to_string(&path).expect("locales/glossary.txt");
    let (mut terms, mut units) = (Vec::new(), Vec::new());
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("term:") {
            let parts: Vec<&str> = rest.split('|').map(str::trim).collect();
            assert!(parts.len() == 3, "glossary line needs 3 fields: {line}");
            terms.push(Term {
                en: parts[0].to_lowercase(),
                zh: parts[1].to_string(),
                refused: list(parts[2]),
            });
        } else if let Some(rest) = line.strip_prefix("unit:") {
            let parts: Vec<&str> = rest.split('|').map(str::trim).collect();
            assert!(
                parts.len() == 2,
                "glossary unit line needs 2 fields: {line}"
            );
            units.push(Unit {
                symbol: parts[0].to_string(),
                refused: list(parts[1]),
            });
        } else {
            assert!(
                line.is_empty() || line.starts_with('#'),
                "glossary line: {line}"
            );
        }
    }
    assert!(!terms.is_empty() && !units.is_empty());
    (terms, units)
}

/// The placeholders in `s` directly followed by " <symbol>" (and not by a longer unit).
fn values_with_unit(s: &str, symbol: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in s.match_indices('}') {
        let Some(open) = s[..i].rfind('{') else {
            continue;
        };
        let after = &s[i + 1..];
        let Some(rest) = after.strip_prefix(' ').and_then(|a| a.strip_prefix(symbol)) else {
            continue;
        };
        let longer = rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '/');
        if !longer {
            out.push(s[open..=i].to_string());
        }
    }
    out
}

/// `term` (lower case) occurs in `text` as a word of its own: not inside a longer word or a
/// code name (`timestamp-query`); a hyphen between the term's words counts as a space.
fn has_word(text: &str, term: &str) -> bool {
    let text = text.to_lowercase();
    let spaced = text.replace('-', " ");
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(term).any(|(i, m)| {
        let (before, after) = (
            text[..i].chars().next_back(),
            text[i + m.len()..].chars().next(),
        );
        !part(before) && !part(after) && after != Some('-')
    }) || (term.contains(' ') && spaced.contains(term))
}

#[test]
fn every_term_has_one_chinese_translation() {
    let (terms, _) = glossary();
    let mut wrong = Vec::new();
    for key in keys() {
        let (en, zh) = (t(Lang::En, key), t(Lang::Zh, key));
        for term in &terms {
            if has_word(en, &term.en) && !zh.contains(&term.zh) {
                wrong.push(format!(
                    "{key}: \"{}\" is not {} here: {zh}",
                    term.en, term.zh
                ));
            }
            for r in &term.refused {
                if zh.contains(r.as_str()) {
                    wrong.push(format!("{key}: {r} (the glossary says {}): {zh}", term.zh));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "glossary:\n{}", wrong.join("\n"));
}

#[test]
fn units_are_one_symbol_in_both_languages() {
    let (_, units) = glossary();
    let mut wrong = Vec::new();
    for key in keys() {
        let (en, zh) = (t(Lang::En, key), t(Lang::Zh, key));
        for unit in &units {
            for value in values_with_unit(en, &unit.symbol) {
                if !values_with_unit(zh, &unit.symbol).contains(&value) {
                    wrong.push(format!(
                        "{key}: {value} {} in English, not in Chinese: {zh}",
                        unit.symbol
                    ));
                }
            }
            for r in &unit.refused {
                if zh.contains(&format!("}} {r}")) || zh.contains(&format!("}}{r}")) {
                    wrong.push(format!("{key}: a value in {r}, not {}: {zh}", unit.symbol));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "units:\n{}", wrong.join("\n"));
}

#[test]
fn term_detection() {
    assert!(has_word("Wall-clock times", "wall clock"));
    assert!(has_word("the wall clock.", "wall clock"));
    assert!(!has_word("timestamp-query (exact)", "timestamp"));
    assert!(!has_word("GPU timestamps", "timestamp"));
    assert!(has_word("a timestamp query", "timestamp"));
}

#[test]
fn unit_detection() {
    assert_eq!(values_with_unit("{ms} ms (x)", "ms"), ["{ms}"]);
    assert_eq!(values_with_unit("{n} steps", "s"), Vec::<String>::new());
    assert_eq!(values_with_unit("{bw} GB/s and {m} GB", "GB"), ["{m}"]);
}

/// The glossary page's table (`lessons::glossary::TERMS`) and this file's terms never disagree:
/// where a row's English name is a term here, its Chinese is this file's; every row has an
/// explanation in both languages; and the page has at least 25 rows.
#[test]
fn the_glossary_page_agrees_with_the_term_list() {
    use gpu_playground::i18n::has;
    let (terms, _) = glossary();
    let rows = lessons::glossary::TERMS;
    assert!(rows.len() >= 25, "{} rows", rows.len());
    let mut wrong = Vec::new();
    for row in rows {
        if let Some(t) = terms.iter().find(|t| t.en == row.english) {
            if t.zh != row.zh {
                wrong.push(format!(
                    "{}: page says {}, glossary.txt {}",
                    row.id, row.zh, t.zh
                ));
            }
        }
        let key = format!("gloss.{}", row.id);
        if !has(&key) {
            wrong.push(format!("{key} is missing"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
