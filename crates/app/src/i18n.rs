//! Translated text. Components never hold user-visible strings: they ask for a key here.
//! The tables are generated at build time from `locales/<lang>/*.txt` (see build.rs), which also
//! guarantees both languages have the same keys.

mod tables {
    include!(concat!(env!("OUT_DIR"), "/locales.rs"));
}

/// A UI language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The code used in URLs (`?lang=zh`) and storage.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// Accepts `en`, `zh` and regional forms such as `zh-CN` or `en-GB`.
    pub fn from_code(code: &str) -> Option<Lang> {
        let primary = code.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }

    fn table(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Lang::En => tables::EN,
            Lang::Zh => tables::ZH,
        }
    }
}

/// The text of `key`. A missing key shows the key itself (a unit test keeps that from
/// happening for every key the source uses).
pub fn t(lang: Lang, key: &str) -> &'static str {
    let table = lang.table();
    match table.binary_search_by(|(k, _)| (*k).cmp(key)) {
        Ok(i) => table[i].1,
        Err(_) => lookup_missing(key),
    }
}

fn lookup_missing(key: &str) -> &'static str {
    // Leaking is fine: it only happens for a bug the tests catch, and at most once per key.
    Box::leak(format!("[{key}]").into_boxed_str())
}

/// `t` with `{name}` placeholders filled in.
pub fn tf(lang: Lang, key: &str, args: &[(&str, &str)]) -> String {
    let mut s = t(lang, key).to_string();
    for (name, value) in args {
        s = s.replace(&format!("{{{name}}}"), value);
    }
    s
}

/// Every key (the same in both languages).
pub fn keys() -> impl Iterator<Item = &'static str> {
    tables::EN.iter().map(|(k, _)| *k)
}

/// Whether a key exists (in both tables, by construction).
pub fn has(key: &str) -> bool {
    tables::EN.binary_search_by(|(k, _)| (*k).cmp(key)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_complete() {
        for lang in Lang::ALL {
            let table = lang.table();
            assert!(table.windows(2).all(|w| w[0].0 < w[1].0));
            assert_eq!(table.len(), tables::EN.len());
        }
    }

    #[test]
    fn placeholders_are_filled() {
        let s = tf(
            Lang::En,
            "size.out_of_range",
            &[("min", "1"), ("max", "4096")],
        );
        assert!(
            s.contains("1") && s.contains("4096") && !s.contains('{'),
            "{s}"
        );
    }

    #[test]
    fn lang_codes() {
        assert_eq!(Lang::from_code("zh-CN"), Some(Lang::Zh));
        assert_eq!(Lang::from_code("EN"), Some(Lang::En));
        assert_eq!(Lang::from_code("fr"), None);
        assert_eq!(Lang::from_code(""), None);
    }
}
