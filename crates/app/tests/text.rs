//! Every user-visible string comes from the translation tables, in both languages:
//! - every key the source names exists (the build already checks en and zh have the same keys);
//! - keys built at run time (limits, features, kernels, embeddable widgets) exist;
//! - components hold no literal user-facing text.

use std::path::{Path, PathBuf};

use gpu_playground::i18n::{has, t, Lang};

fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push((p.clone(), std::fs::read_to_string(&p).expect("read source")));
        }
    }
    out
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The page models' sources, which name keys for the components to show.
fn page_models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../page-models/src")
}

/// String literals of the form `a.b` / `a.b.c` whose first segment is a table prefix.
fn key_literals(text: &str) -> Vec<String> {
    // Every first segment the tables use, so a new area's keys are checked without listing it.
    let prefixes: std::collections::BTreeSet<&str> = gpu_playground::i18n::keys()
        .map(|k| k.split('.').next().unwrap_or(""))
        .collect();
    let mut keys = Vec::new();
    for piece in text.split('"').skip(1).step_by(2) {
        let looks_like_key = piece.contains('.')
            && !piece.contains(' ')
            && piece
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            && prefixes.contains(&piece.split('.').next().unwrap_or(""))
            && !piece.ends_with('.');
        if looks_like_key {
            keys.push(piece.to_string());
        }
    }
    keys
}

#[test]
fn every_key_named_in_the_source_exists() {
    let mut missing = Vec::new();
    let mut files = sources(&src_dir());
    files.extend(sources(&page_models_dir()));
    for (path, text) in files {
        for key in key_literals(&text) {
            if !has(&key) {
                missing.push(format!("{}: {key}", path.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys missing from locales/<lang>/*.txt:\n{}",
        missing.join("\n")
    );
}

#[test]
fn keys_built_at_run_time_exist() {
    use gpu_playground::probe::{SHOWN_FEATURES, SHOWN_LIMITS};
    for l in SHOWN_LIMITS {
        assert!(has(&format!("gpu.limit.{l}")), "gpu.limit.{l}");
    }
    for f in SHOWN_FEATURES {
        assert!(has(&format!("gpu.feature.{f}")), "gpu.feature.{f}");
    }
    for k in gpu_runtime::kernels() {
        assert!(has(k.title_key), "{}", k.title_key);
        assert!(has(k.summary_key), "{}", k.summary_key);
    }
    // The cost lesson's presets and the GPU table's sources, translated by id.
    for p in lessons::cost::PRESETS {
        assert!(
            has(&format!("lesson.cost.preset.{}", p.id)),
            "lesson.cost.preset.{}",
            p.id
        );
    }
    // The conv page's pictures, filters, fields and stages, named by id.
    use page_models::conv_page::{Image, Preset, FIELDS, STAGES};
    let conv = Image::ALL
        .iter()
        .map(|i| format!("conv.image.{}", i.id()))
        .chain(
            Preset::ALL
                .iter()
                .map(|p| format!("conv.filter.{}", p.id())),
        )
        .chain(FIELDS.iter().map(|(n, _, _)| format!("conv.field.{n}")))
        .chain(STAGES.iter().flat_map(|s| s.text_keys()));
    for key in conv {
        assert!(has(&key), "missing {key}");
    }
    for g in lessons::gpus::GPUS {
        assert!(
            has(&format!("lesson.choosing.source.{}", g.id)),
            "lesson.choosing.source.{}",
            g.id
        );
    }
}

#[test]
fn chinese_text_is_really_translated() {
    // Keys whose text is the same in both languages by nature (names, units).
    let same_ok = [
        "lang.en",
        "lang.zh",
        "run.gflops",
        "run.time_s",
        "run.time_min",
        "run.time_h",
    ];
    let en = gpu_playground::i18n::keys();
    let mut untranslated = Vec::new();
    for key in en {
        if !same_ok.contains(&key) && t(Lang::En, key) == t(Lang::Zh, key) {
            untranslated.push(key);
        }
    }
    assert!(
        untranslated.is_empty(),
        "zh text identical to en: {untranslated:?}"
    );
}

#[test]
fn components_hold_no_literal_user_text() {
    let mut offenders = Vec::new();
    for (path, text) in sources(&src_dir().join("components")) {
        for (n, line) in text.lines().enumerate() {
            let l = line.trim();
            let has_letters = |s: &str| s.chars().any(|c| c.is_alphabetic());
            // The literal right after each marker, e.g. the words of `{ "Some words" }`.
            let literal_after = |marker: &str| {
                l.match_indices(marker).any(|(i, _)| {
                    has_letters(l[i + marker.len()..].split('"').next().unwrap_or(""))
                })
            };
            // Text nodes written as a literal: { "Some words" } (at the start of a line, or
            // after a tag; a class name earlier on the line is not text).
            let text_node = l
                .strip_prefix("{ \"")
                .is_some_and(|rest| has_letters(rest.split('"').next().unwrap_or("")))
                || literal_after(">{ \"");
            // Attributes a person reads.
            let attr = ["title=\"", "placeholder=\"", "aria-label=\"", "alt=\""]
                .iter()
                .any(|a| literal_after(a));
            if text_node || attr {
                offenders.push(format!("{}:{}: {l}", path.display(), n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "literal user-facing text in components:\n{}",
        offenders.join("\n")
    );
}

/// A page that quotes one of the seed articles names it (docs/fact-check.md, "How to read this
/// file"): a learner read "the article's claim" and could not tell which article. The CNN
/// page's ratio quotes 002's "tens of times" (fact-check FC-44), the race's claim view and its
/// embeddable widget 002's "1/100" (FC-45).
#[test]
fn a_quoted_claim_names_its_article() {
    let refused_en = [
        "the article's claim",
        "an article's claim",
        "the articles' claim",
        "the article’s claim",
        "the articles report",
    ];
    let refused_zh = ["核查文章的说法", "文章所说", "文章中 AlexNet"];
    let mut vague = Vec::new();
    for key in gpu_playground::i18n::keys() {
        let (en, zh) = (t(Lang::En, key), t(Lang::Zh, key));
        if refused_en.iter().any(|r| en.to_lowercase().contains(r)) {
            vague.push(format!("en {key}: {en}"));
        }
        if refused_zh.iter().any(|r| zh.contains(r)) {
            vague.push(format!("zh {key}: {zh}"));
        }
    }
    assert!(
        vague.is_empty(),
        "claims without their article:\n{}",
        vague.join("\n")
    );
    let title = [
        (
            Lang::En,
            "“How GPUs became the bedrock of large-model training”",
        ),
        (Lang::Zh, "《GPU如何成为AI大模型训练的算力基石》"),
    ];
    for key in ["cnn.claim.reproduced", "cnn.claim.faster"] {
        for (lang, name) in title {
            let text = t(lang, key);
            assert!(
                text.contains(name),
                "{key} ({lang:?}) does not name its article: {text}"
            );
            assert!(
                text.contains("](FC-44)"),
                "{key} ({lang:?}) does not link the fact-check: {text}"
            );
        }
    }
    for lang in [Lang::En, Lang::Zh] {
        let text = t(lang, "embed.widget.claim");
        assert!(
            text.contains("1/100"),
            "embed.widget.claim ({lang:?}) does not say which claim: {text}"
        );
    }
}

/// An xAPI statement names its activity and verb in both languages from the compiled-in
/// `BOTH` table, whatever language the page loaded: every name it can build must be there,
/// and translated.
#[test]
fn statement_names_exist_in_both_languages() {
    use gpu_playground::i18n::both;
    use page_models::outcome::{name_keys, NameArg};
    let mut keys: Vec<String> = [
        "attempted",
        "completed",
        "progressed",
        "passed",
        "failed",
        "answered",
    ]
    .iter()
    .map(|v| format!("xapi.verb.{v}"))
    .collect();
    let mut names = Vec::new();
    for w in page_models::embed::WIDGETS {
        names.push(name_keys(w.id, None));
    }
    for p in puzzles::PUZZLES {
        names.push(name_keys("puzzle", Some(p.id)));
    }
    for l in lessons::LESSONS {
        names.push(name_keys("lesson", Some(l.id)));
        names.push(name_keys("lesson", Some(&format!("{}/q1", l.id))));
    }
    for k in gpu_runtime::kernels() {
        names.push(name_keys("editor", Some(k.id)));
    }
    for n in names {
        keys.push(n.template.to_string());
        for (_, arg) in n.args {
            if let NameArg::Key(k) = arg {
                keys.push(k);
            }
        }
    }
    for k in keys {
        let Some((en, zh)) = both(&k) else {
            panic!("{k} is not in the statement texts (build.rs BOTH)");
        };
        assert!(!en.is_empty() && en != zh, "{k}: en {en:?}, zh {zh:?}");
    }
}
