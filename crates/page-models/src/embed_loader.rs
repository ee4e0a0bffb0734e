//! The one-line embed: what the loader (`www/embed.js`) knows about the widgets and the
//! snippet the Embed button offers for it.
//!
//! The loader is plain JS on the host's page, so it cannot ask this crate: `cargo xtask dist`
//! writes [`widgets_json`] into it (and builds the static `embed/<widget>.html` pages and
//! their oEmbed answers from it). xtask has no wgpu, so it reads the JSON from
//! `crates/page-models/embed-widgets.json`, which a unit test keeps equal to the registry
//! (`UPDATE_EMBED_WIDGETS=1 cargo test -p page-models embed_loader` rewrites it).

use crate::embed::{Widget, WIDGETS};

/// The `hide=` names every snippet (iframe, loader, oEmbed) sets when the widget has them:
/// the full page's heading and view tabs only lead away from the widget.
pub const SNIPPET_HIDES: [&str; 2] = ["heading", "tabs"];

/// The `hide=` names a snippet of `w` sets ([`SNIPPET_HIDES`] that it can hide).
pub fn snippet_hide(w: &Widget) -> Vec<&'static str> {
    w.hideable
        .iter()
        .copied()
        .filter(|h| SNIPPET_HIDES.contains(h))
        .collect()
}

/// The race sizes with a static page and oEmbed answer of their own (`embed/race-1024.html`):
/// the powers of two a course shows the race at, up to the race's largest N. A static site
/// reads no query, so any other size is the loader's or the iframe snippet's.
pub const OEMBED_RACE_SIZES: [u32; 7] = [64, 128, 256, 512, 1024, 2048, 4096];

/// The parameter that names what widget `w` shows and its values that get a static page and
/// an oEmbed answer each: every puzzle by `id`, every lesson by `lesson`, the race by size `n`.
pub fn variants(w: &Widget) -> Option<(&'static str, Vec<String>)> {
    let ids = |it: &mut dyn Iterator<Item = String>| it.collect::<Vec<_>>();
    match w.id {
        "puzzle" => Some((
            "id",
            ids(&mut puzzles::PUZZLES.iter().map(|p| p.id.to_string())),
        )),
        "lesson" => Some((
            "lesson",
            ids(&mut lessons::LESSONS.iter().map(|l| l.id.to_string())),
        )),
        "race" => Some((
            "n",
            ids(&mut OEMBED_RACE_SIZES.iter().map(|n| n.to_string())),
        )),
        _ => None,
    }
}

/// The `data-` attributes the loader reads besides the widget's parameters.
pub const LOADER_OWN: [&str; 3] = ["lang", "theme", "hide"];

fn json_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("\"{s}\"")).collect();
    format!("[{}]", quoted.join(","))
}

/// The registry as the loader and xtask read it: one widget per line (xtask reads fields
/// line by line, std only), `id`, `title` (its locale key), `params`, `whole` (whole-number
/// parameters), `hide` (hideable names), `snippetHide` and `height` (the fallback height),
/// and for a widget with [`variants`] `variantParam` and `variants`. Names are plain ASCII
/// (checked by a test), so nothing needs escaping.
pub fn widgets_json() -> String {
    let lines: Vec<String> = WIDGETS
        .iter()
        .map(|w| {
            let variants = variants(w).map_or(String::new(), |(param, values)| {
                let values: Vec<&str> = values.iter().map(String::as_str).collect();
                format!(
                    ",\"variantParam\":\"{param}\",\"variants\":{}",
                    json_list(&values)
                )
            });
            format!(
                "{{\"id\":\"{}\",\"title\":\"{}\",\"params\":{},\"whole\":{},\"hide\":{},\"snippetHide\":{},\"height\":{}{variants}}}",
                w.id,
                w.title_key,
                json_list(w.params),
                json_list(w.whole),
                json_list(w.hideable),
                json_list(&snippet_hide(w)),
                w.height
            )
        })
        .collect();
    format!("[\n{}\n]\n", lines.join(",\n"))
}

/// The folder of the site's address (`https://h/p/index.html?x` → `https://h/p/`), where
/// `embed.js` lies.
fn site_dir(base: &str) -> String {
    let no_query = base.split(['?', '#']).next().unwrap_or_default();
    let path_from = no_query.find("://").map_or(0, |i| i + 3);
    match no_query[path_from..].rfind('/') {
        Some(i) => no_query[..=path_from + i].to_string(),
        None => format!("{no_query}/"),
    }
}

fn attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The loader snippet for widget `w` with the settable parameters of `query`: a `<div>` whose
/// `data-` attributes say what to show (its content, a link to the widget, is what a reader
/// without scripts gets) and the loader's `<script>`. No origin to type: the loader fills in
/// `parentOrigin` from the host page. `base` is the site's address (no hash), `title` the
/// link's text.
pub fn loader_snippet(
    base: &str,
    w: &Widget,
    lang: &str,
    query: &[(String, String)],
    title: &str,
) -> String {
    let dir = site_dir(base);
    let mut attrs = format!(r#"data-gpu-playground="{}""#, w.id);
    let mut q = crate::query::Query::default();
    for p in w.params {
        if let Some((_, v)) = query.iter().find(|(k, _)| k == p) {
            attrs.push_str(&format!(r#" data-{p}="{}""#, attr(v)));
            q.set(p, v);
        }
    }
    attrs.push_str(&format!(r#" data-lang="{}""#, attr(lang)));
    q.set("lang", lang);
    let hide = snippet_hide(w);
    if !hide.is_empty() {
        attrs.push_str(&format!(r#" data-hide="{}""#, hide.join(",")));
        q.set("hide", &hide.join(","));
    }
    let link = format!("{dir}#/embed/{}?{}", w.id, q.encode());
    format!(
        "<div {attrs}><a href=\"{}\">{}</a></div>\n<script src=\"{}embed.js\" async></script>",
        attr(&link),
        attr(title),
        attr(&dir)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{widget, OWN_PARAMS};

    #[test]
    fn the_committed_json_is_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/embed-widgets.json");
        let want = widgets_json();
        if std::env::var_os("UPDATE_EMBED_WIDGETS").is_some() {
            std::fs::write(path, &want).expect("write embed-widgets.json");
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "{path} is not the WIDGETS registry: rewrite it with \
             `UPDATE_EMBED_WIDGETS=1 cargo test -p page-models embed_loader`"
        );
    }

    #[test]
    fn names_are_data_attribute_names() {
        // The loader maps `data-<name>` to a parameter: lowercase ASCII letters and digits
        // only, and never one of its own attributes.
        for w in WIDGETS {
            assert!(
                w.id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                w.id
            );
            for p in w.params.iter().chain(w.hideable) {
                assert!(
                    !p.is_empty()
                        && p.bytes().all(|b| b.is_ascii_lowercase()
                            || b.is_ascii_digit()
                            || (b == b'-' && w.hideable.contains(p))),
                    "{}: {p}",
                    w.id
                );
                assert!(
                    !LOADER_OWN.contains(p) && !OWN_PARAMS.contains(p),
                    "{}: {p}",
                    w.id
                );
            }
            for p in w.whole {
                assert!(w.params.contains(p), "{}: whole {p} is no parameter", w.id);
            }
        }
    }

    #[test]
    fn json_has_one_widget_per_line() {
        let j = widgets_json();
        let race = j
            .lines()
            .find(|l| l.contains(r#""id":"race""#))
            .expect("race");
        assert!(race.starts_with('{') && race.trim_end_matches(',').ends_with('}'));
        assert!(race.contains(r#""params":["n","cpu","workers","gpu","from","to","at"]"#));
        assert!(race.contains(r#""snippetHide":["heading","tabs"]"#));
        assert!(race.contains(r#""height":700,"variantParam":"n","variants":["64","#));
        // Every variant is a value the widget takes, in plain ASCII (xtask makes file names).
        for w in WIDGETS {
            if let Some((param, values)) = variants(w) {
                assert!(w.params.contains(&param), "{}: {param}", w.id);
                for v in values {
                    assert!(
                        !v.is_empty()
                            && v.bytes().all(|b| b.is_ascii_lowercase()
                                || b.is_ascii_digit()
                                || b == b'-'
                                || b == b'_'),
                        "{}: {v}",
                        w.id
                    );
                }
            }
        }
        for n in OEMBED_RACE_SIZES {
            assert!(n <= crate::race::params::MAX_RACE_N);
        }
        assert_eq!(j.lines().count(), WIDGETS.len() + 2);
    }

    #[test]
    fn loader_snippet_is_a_div_with_a_link_and_the_script() {
        let w = widget("race").expect("race");
        let q = vec![
            ("n".to_string(), "256".to_string()),
            ("lang".to_string(), "en".to_string()),
            ("junk".to_string(), "<x>".to_string()),
        ];
        let s = loader_snippet(
            "https://u.github.io/gpu/index.html?instructor=1",
            w,
            "zh",
            &q,
            "GPU Playground：CPU 与 GPU 赛跑",
        );
        assert_eq!(
            s,
            "<div data-gpu-playground=\"race\" data-n=\"256\" data-lang=\"zh\" data-hide=\"heading,tabs\">\
             <a href=\"https://u.github.io/gpu/#/embed/race?n=256&amp;lang=zh&amp;hide=heading%2Ctabs\">GPU Playground：CPU 与 GPU 赛跑</a></div>\n\
             <script src=\"https://u.github.io/gpu/embed.js\" async></script>"
        );
        // Values are attribute-escaped; a widget without heading or tabs sets no hide.
        let m = widget("matmul").expect("matmul");
        let s = loader_snippet(
            "http://127.0.0.1:8080/",
            m,
            "en",
            &[("stage".into(), "a\"b".into())],
            "t",
        );
        assert!(
            s.starts_with(
                r#"<div data-gpu-playground="matmul" data-stage="a&quot;b" data-lang="en"><a"#
            ),
            "{s}"
        );
        assert!(s.ends_with(r#"<script src="http://127.0.0.1:8080/embed.js" async></script>"#));
    }

    #[test]
    fn site_dir_is_the_folder() {
        assert_eq!(site_dir("https://h/p/index.html?x=1"), "https://h/p/");
        assert_eq!(site_dir("https://h/p/"), "https://h/p/");
        assert_eq!(site_dir("https://h"), "https://h/");
    }
}
