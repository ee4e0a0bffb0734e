//! The site's text files (written by `cargo xtask dist` with `locale_files::serialize`) read
//! back by the app's `i18n::parse_table` give exactly the tables native builds compile in:
//! what a visitor's browser fetches is the text the tests check, every key in exactly one
//! of the parts the app fetches. Each lesson's body is `lesson-<id>.txt`, holding only
//! `lesson.<id>.*` keys, so a lesson's text is found by its id.

use gpu_playground::i18n::{self, Lang, Part};

#[test]
fn the_apps_parts_are_the_files_parts() {
    let names: Vec<&str> = Part::ALL.iter().map(|p| p.name()).collect();
    let files: Vec<&str> = locale_files::PARTS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, files);
}

#[test]
fn served_files_round_trip_to_the_compiled_tables() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("locales");
    let tables = locale_files::load_all(&dir).unwrap();
    for (lang, table) in Lang::ALL.iter().zip(&tables) {
        assert_eq!(
            lang.code(),
            locale_files::LANGS[Lang::ALL.iter().position(|l| l == lang).unwrap()]
        );
        let mut parsed = Vec::new();
        let parts = locale_files::parse_parts(&dir.join(lang.code())).unwrap();
        assert_eq!(parts.len(), Part::ALL.len());
        for part in &parts {
            assert!(!part.is_empty());
            let text: &'static str = Box::leak(locale_files::serialize(part).into_boxed_str());
            parsed.extend_from_slice(i18n::parse_table(text).unwrap());
        }
        parsed.sort_unstable_by_key(|(k, _)| *k);
        assert_eq!(parsed, i18n::entries(*lang), "{}", lang.code());
        assert_eq!(parsed.len(), table.len());
    }
}

#[test]
fn every_lesson_has_a_text_file_of_its_own_keys() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("locales");
    let lesson_files = locale_files::PARTS
        .iter()
        .find(|(part, _)| *part == "lessons")
        .map(|(_, files)| *files)
        .expect("a lessons part");
    for l in lessons::LESSONS {
        let stem = format!("lesson-{}", l.id);
        assert!(
            lesson_files.contains(&stem.as_str()),
            "{stem} is not in the lessons part"
        );
        let prefix = format!("lesson.{}.", l.id);
        for lang in locale_files::LANGS {
            let path = dir.join(lang).join(format!("{stem}.txt"));
            let text = std::fs::read_to_string(&path).expect("the lesson's text file");
            let keys: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| l.split(" = ").next().unwrap_or(l))
                .collect();
            assert!(!keys.is_empty(), "{}: no text", path.display());
            for key in keys {
                assert!(
                    key.starts_with(&prefix),
                    "{}: `{key}` is not a key of lesson {}",
                    path.display(),
                    l.id
                );
            }
        }
    }
}
