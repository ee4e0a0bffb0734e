//! Every puzzle has its title, goal and hints in both languages of the app's locale files.

use std::path::Path;

#[test]
fn every_puzzle_has_its_text_in_both_languages() {
    for lang in ["en", "zh"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../app/locales/{lang}/puzzles.txt"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for p in puzzles::PUZZLES {
            for part in ["title", "goal", "hint1", "hint2"] {
                let key = format!("puzzle.{}.{part} = ", p.id);
                assert!(
                    text.lines().any(|l| l.starts_with(&key)),
                    "{lang}: missing {key}"
                );
            }
        }
    }
}
