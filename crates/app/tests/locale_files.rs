//! The site's text files (written by `cargo xtask dist` with `locale_files::serialize`) read
//! back by the app's `i18n::parse_table` give exactly the tables native builds compile in:
//! what a visitor's browser fetches is the text the tests check.

#[path = "../locale_files.rs"]
mod locale_files;

use gpu_playground::i18n::{self, Lang};

#[test]
fn served_files_round_trip_to_the_compiled_tables() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("locales");
    let tables = locale_files::load_all(&dir).unwrap();
    for (lang, table) in Lang::ALL.iter().zip(&tables) {
        assert_eq!(
            lang.code(),
            locale_files::LANGS[Lang::ALL.iter().position(|l| l == lang).unwrap()]
        );
        let text: &'static str = Box::leak(locale_files::serialize(table).into_boxed_str());
        let parsed = i18n::parse_table(text).unwrap();
        assert_eq!(parsed, i18n::entries(*lang), "{}", lang.code());
    }
}
