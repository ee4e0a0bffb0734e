//! Instructor mode: whether the widgets show their "Embed" buttons. A learner does not need
//! them on every card, so they are off unless the visitor turned the switch on (saved in
//! local storage, like the language) or followed a link with `?instructor=1`. Embedded
//! widgets never show them and never change the saved setting.

/// The local-storage key that keeps the visitor's choice.
pub const STORAGE_KEY: &str = "gpu-playground.instructor";
/// The URL parameter (`#/race?instructor=1`) that sets it, for links in docs.
pub const PARAM: &str = "instructor";

/// `1`/`true`/`on` or `0`/`false`/`off`; anything else is no choice (ignored, not an error:
/// a mistyped link must not hide or show tools by surprise).
pub fn parse(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// The value written to the URL and to storage.
pub fn code(on: bool) -> &'static str {
    if on {
        "1"
    } else {
        "0"
    }
}

/// Takes `instructor=` out of a query: the value, and the query without it. The switch is
/// read once (and saved); then it leaves the address bar, and no link, share or embed
/// snippet the site writes from the query carries it to students.
pub fn take(mut query: crate::query::Query) -> (crate::query::Query, Option<String>) {
    let value = query.get(PARAM).map(str::to_owned);
    query.remove(PARAM);
    (query, value)
}

/// Instructor mode as the page should show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// Whether the Embed buttons show.
    pub on: bool,
    /// What to save in storage (`Some` only when the URL asked, outside an embed).
    pub save: Option<bool>,
}

/// From, in order: an embed (always off, saves nothing), the URL's `instructor=`, what the
/// visitor saved last time, off.
pub fn resolve(embedded: bool, url: Option<&str>, stored: Option<&str>) -> Mode {
    if embedded {
        return Mode {
            on: false,
            save: None,
        };
    }
    let asked = url.and_then(parse);
    Mode {
        on: asked.or_else(|| stored.and_then(parse)).unwrap_or(false),
        save: asked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default() {
        assert_eq!(
            resolve(false, None, None),
            Mode {
                on: false,
                save: None
            }
        );
    }

    #[test]
    fn storage_keeps_the_choice() {
        assert!(resolve(false, None, Some("1")).on);
        assert!(!resolve(false, None, Some("0")).on);
        // A damaged stored value is no choice.
        assert!(!resolve(false, None, Some("maybe")).on);
    }

    #[test]
    fn the_url_wins_and_is_saved() {
        assert_eq!(
            resolve(false, Some("1"), Some("0")),
            Mode {
                on: true,
                save: Some(true)
            }
        );
        assert_eq!(
            resolve(false, Some("0"), Some("1")),
            Mode {
                on: false,
                save: Some(false)
            }
        );
        // A mistyped value falls back to the saved choice and saves nothing.
        assert_eq!(
            resolve(false, Some("yess"), Some("1")),
            Mode {
                on: true,
                save: None
            }
        );
    }

    #[test]
    fn an_embed_never_shows_or_saves() {
        assert_eq!(
            resolve(true, Some("1"), Some("1")),
            Mode {
                on: false,
                save: None
            }
        );
    }

    #[test]
    fn take_leaves_the_rest_of_the_query() {
        let q = crate::query::Query::parse("n=64&instructor=1&lang=zh");
        let (rest, value) = take(q);
        assert_eq!(value.as_deref(), Some("1"));
        assert_eq!(rest.get(PARAM), None);
        assert_eq!(rest.encode(), "n=64&lang=zh");
        let (same, none) = take(crate::query::Query::parse("n=64"));
        assert_eq!((same.encode().as_str(), none), ("n=64", None));
    }

    #[test]
    fn parse_and_code_agree() {
        for on in [true, false] {
            assert_eq!(parse(code(on)), Some(on));
        }
        assert_eq!(parse(" ON "), Some(true));
        assert_eq!(parse(""), None);
    }
}
