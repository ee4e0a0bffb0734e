//! The site's embedding files beyond the app: the one-line loader (`embed.js`, also as
//! `embed.<hash>.js`) with the widget list and its text written in, the notebook widget's
//! module (`widget.mjs`, also as `widget.<hash>.mjs`), and for every widget a
//! static page `embed/<widget>.html` (`.zh.html` in Chinese) that opens it, whose oEmbed
//! discovery link names `embed/<widget>.json` (`.zh.json`).
//!
//! The widget list comes from `crates/page-models/embed-widgets.json`, which page-models'
//! tests keep equal to its `WIDGETS` registry (xtask cannot link page-models: wgpu). oEmbed
//! needs absolute URLs, so its files are written only with a base URL (`cargo xtask dist
//! --base-url https://…/`); they are written after the service worker's list is made
//! ([`publish`]), so the browser tests can publish a built site at the address they serve it.

use std::collections::BTreeMap;
use std::path::Path;

use crate::hosting::fingerprint;

/// What xtask needs of a widget (the loader gets the whole JSON).
#[derive(Debug, PartialEq)]
pub struct WidgetInfo {
    pub id: String,
    /// The locale key of its name.
    pub title: String,
    /// The frame's height before the widget says (CSS px).
    pub height: u32,
    /// The `hide=` names its snippets set.
    pub snippet_hide: Vec<String>,
    /// The parameter that names what it shows and the values that get a page and an oEmbed
    /// answer of their own (a puzzle by `id`, a lesson by `lesson`, the race by size `n`).
    pub variants: Option<(String, Vec<String>)>,
}

/// One static page and its oEmbed answer: a widget as it opens by default, or one of its
/// variants (`puzzle` with `id=zip`).
#[derive(Clone, Copy, Debug)]
pub struct Answer<'a> {
    pub w: &'a WidgetInfo,
    pub variant: Option<&'a str>,
}

impl<'a> Answer<'a> {
    pub fn of(w: &'a WidgetInfo) -> Self {
        Answer { w, variant: None }
    }

    /// Every answer of the registry: each widget, then each of its variants.
    pub fn all(widgets: &'a [WidgetInfo]) -> Vec<Answer<'a>> {
        let mut out = Vec::new();
        for w in widgets {
            out.push(Answer::of(w));
            for v in w.variants.iter().flat_map(|(_, vs)| vs) {
                out.push(Answer {
                    w,
                    variant: Some(v),
                });
            }
        }
        out
    }

    /// Its file name without language and extension: `race`, `puzzle-zip`, `race-1024`.
    pub fn stem(&self) -> String {
        match self.variant {
            None => self.w.id.clone(),
            Some(v) => format!("{}-{v}", self.w.id),
        }
    }

    /// The key of its measured height in [`HEIGHTS_FILE`]: the stem, `.zh` in Chinese.
    pub fn height_key(&self, lang: &str) -> String {
        page_name(&self.stem(), lang, "")
            .trim_end_matches('.')
            .to_string()
    }
}

/// The measured content height of every oEmbed answer at [`OEMBED_WIDTH`], per language
/// (`"race": 700`, `"race.zh": 690`), written by `tests/e2e/embed-heights.test.mjs` with
/// `UPDATE_OEMBED_HEIGHTS=1` and checked by it (within 10 %) otherwise.
pub const HEIGHTS_FILE: &str = "crates/xtask/oembed-heights.json";

/// Reads [`HEIGHTS_FILE`]'s `"key": number` lines.
pub fn parse_heights(json: &str) -> BTreeMap<String, u32> {
    json.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().trim_end_matches(',').split_once(':')?;
            let k = k.trim().strip_prefix('"')?.strip_suffix('"')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The width an oEmbed answer asks for (the widgets lay out from phone width up).
pub const OEMBED_WIDTH: u32 = 720;

fn err(p: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", p.display())
}

/// The text of `"name":"value"` or `"name":[…]` / `"name":123` in one line of the JSON.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{name}\":");
    let rest = &line[line.find(&key)? + key.len()..];
    if let Some(s) = rest.strip_prefix('"') {
        return s.split('"').next();
    }
    if rest.starts_with('[') {
        return rest.find(']').map(|i| &rest[..=i]);
    }
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Reads the widget list (one widget per line, see page-models' `embed_loader::widgets_json`).
pub fn parse_widgets(json: &str) -> Result<Vec<WidgetInfo>, String> {
    let mut out = Vec::new();
    for line in json.lines().filter(|l| l.trim_start().starts_with('{')) {
        let bad = || format!("embed-widgets.json: cannot read `{line}`");
        let list = field(line, "snippetHide").ok_or_else(bad)?;
        let names = |l: &str| -> Vec<String> {
            l.trim_matches(['[', ']'])
                .split(',')
                .map(|s| s.trim_matches('"').to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let variants = match (field(line, "variantParam"), field(line, "variants")) {
            (Some(p), Some(vs)) => Some((p.to_string(), names(vs))),
            _ => None,
        };
        out.push(WidgetInfo {
            id: field(line, "id").ok_or_else(bad)?.to_string(),
            title: field(line, "title").ok_or_else(bad)?.to_string(),
            height: field(line, "height")
                .and_then(|h| h.parse().ok())
                .ok_or_else(bad)?,
            snippet_hide: names(list),
            variants,
        });
    }
    if out.is_empty() {
        return Err("embed-widgets.json lists no widget".into());
    }
    Ok(out)
}

fn widgets_file() -> std::path::PathBuf {
    crate::util::root().join("crates/page-models/embed-widgets.json")
}

/// A JSON string literal (also safe inside a `<script>`: `<` is escaped).
pub fn json_str(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '<' => out.push_str("\\u003c"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn html_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The loader's text: per language, its messages, the frame title and every widget's name.
fn loader_text(tables: &[BTreeMap<String, String>], widgets: &[WidgetInfo]) -> String {
    let langs: Vec<String> = locale_files::LANGS
        .iter()
        .zip(tables)
        .map(|(lang, table)| {
            let entries: Vec<String> = table
                .iter()
                .filter(|(k, _)| {
                    k.starts_with("embed.loader.")
                        || *k == "embed.frame_title"
                        || widgets.iter().any(|w| &w.title == *k)
                })
                .map(|(k, v)| format!("{}: {}", json_str(k), json_str(v)))
                .collect();
            format!("{}: {{\n{}\n}}", json_str(lang), entries.join(",\n"))
        })
        .collect();
    format!("{{\n{}\n}}", langs.join(",\n"))
}

/// Fills in `out/embed.js` (copied from `www/`) and writes the same file as
/// `embed.<hash>.js`. Returns the hashed name.
pub fn write_loader(out: &Path, locales: &Path) -> Result<String, String> {
    let file = widgets_file();
    let json = std::fs::read_to_string(&file).map_err(|e| err(&file, e))?;
    let widgets = parse_widgets(&json)?;
    let tables = locale_files::load_all(locales)?;
    let loader = out.join("embed.js");
    let text = std::fs::read_to_string(&loader).map_err(|e| err(&loader, e))?;
    let (w_mark, t_mark) = ("/* __WIDGETS__ */[]", "/* __TEXT__ */{}");
    if !text.contains(w_mark) || !text.contains(t_mark) {
        return Err(format!("{} lacks {w_mark} or {t_mark}", loader.display()));
    }
    let text = text
        .replace(w_mark, json.trim())
        .replace(t_mark, &loader_text(&tables, &widgets));
    let hashed = format!("embed.{}.js", fingerprint(text.as_bytes()));
    for name in ["embed.js", hashed.as_str()] {
        std::fs::write(out.join(name), &text).map_err(|e| err(&out.join(name), e))?;
    }
    Ok(hashed)
}

/// The notebook widget's module: the Python package's `_esm`, its one copy.
pub const NOTEBOOK_MODULE: &str = "python/gpu_playground/gpu_playground/widget.mjs";

/// Writes the notebook widget's module into the site as `widget.mjs` and `widget.<hash>.mjs`
/// (for notebooks that pin a version). Returns the hashed name.
pub fn write_notebook_module(out: &Path) -> Result<String, String> {
    let module = crate::util::root().join(NOTEBOOK_MODULE);
    let text = std::fs::read(&module).map_err(|e| err(&module, e))?;
    let hashed = format!("widget.{}.mjs", fingerprint(&text));
    for name in ["widget.mjs", hashed.as_str()] {
        std::fs::write(out.join(name), &text).map_err(|e| err(&out.join(name), e))?;
    }
    Ok(hashed)
}

/// `--base-url`: an absolute http(s) address of the site's folder, ending in `/`.
pub fn normalize_base(url: &str) -> Result<String, String> {
    let ok_scheme = url.starts_with("https://") || url.starts_with("http://");
    let host = url.split("://").nth(1).unwrap_or("");
    if !ok_scheme
        || host.is_empty()
        || host.starts_with('/')
        || url
            .chars()
            .any(|c| c.is_whitespace() || "\"'<>#?\\".contains(c))
    {
        return Err(format!(
            "--base-url needs the site's absolute address, like https://you.github.io/gpu-playground/ (no query or #), not `{url}`"
        ));
    }
    Ok(if url.ends_with('/') {
        url.to_string()
    } else {
        format!("{url}/")
    })
}

/// index.html's oEmbed discovery link: absolute with a base URL, gone without one (a
/// relative answer would be resolved against the consumer's page).
pub fn index_discovery(out: &Path, base: Option<&str>) -> Result<(), String> {
    let index = out.join("index.html");
    let text = std::fs::read_to_string(&index).map_err(|e| err(&index, e))?;
    let link = r#"href="./oembed.json""#;
    let Some(at) = text.find(link) else {
        return Err(format!("{} has no oEmbed link ({link})", index.display()));
    };
    let text = match base {
        Some(b) => text.replace(link, &format!(r#"href="{}oembed.json""#, html_attr(b))),
        None => {
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            format!("{}{}", &text[..start], &text[end..])
        }
    };
    std::fs::write(&index, text).map_err(|e| err(&index, e))
}

/// The page of widget `w` in `lang` (`embed/race.html`, `embed/race.zh.html`).
fn page_name(id: &str, lang: &str, ext: &str) -> String {
    if lang == "en" {
        format!("{id}.{ext}")
    } else {
        format!("{id}.{lang}.{ext}")
    }
}

/// The answer's hash route with its language, its variant and the widget's snippet hides.
fn embed_route(a: &Answer, lang: &str) -> String {
    let w = a.w;
    let mut route = format!("#/embed/{}?lang={lang}", w.id);
    if let (Some(v), Some((param, _))) = (a.variant, &w.variants) {
        route.push_str(&format!("&{param}={v}"));
    }
    if !w.snippet_hide.is_empty() {
        route.push_str(&format!("&hide={}", w.snippet_hide.join("%2C")));
    }
    route
}

struct Text<'a>(&'a BTreeMap<String, String>);

impl Text<'_> {
    fn t(&self, key: &str) -> String {
        self.0.get(key).cloned().unwrap_or_else(|| key.to_string())
    }
    fn title(&self, a: &Answer) -> String {
        let Some(v) = a.variant else {
            return self
                .t("embed.frame_title")
                .replace("{widget}", &self.t(&a.w.title));
        };
        // `puzzle.zip.title`, `lesson.simt.title`; a race size names itself.
        let name_key = format!("{}.{v}.title", a.w.id);
        let name = self
            .0
            .get(&name_key)
            .cloned()
            .unwrap_or_else(|| v.to_string());
        self.t(&format!("embed.answer.{}", a.w.id))
            .replace("{name}", &name)
    }
}

/// The static page of one widget: its name, the widget through the loader (a link without
/// scripts), the discovery link to its oEmbed answer when there is a base URL.
pub fn widget_page(
    a: &Answer,
    lang: &str,
    text: &BTreeMap<String, String>,
    base: Option<&str>,
) -> String {
    let w = a.w;
    let stem = a.stem();
    let tx = Text(text);
    let title = html_attr(&tx.title(a));
    let other = if lang == "en" { "zh" } else { "en" };
    let mut head_links = String::new();
    if let Some(b) = base {
        head_links.push_str(&format!(
            "  <link rel=\"canonical\" href=\"{}embed/{}\">\n  <link rel=\"alternate\" type=\"application/json+oembed\" href=\"{}embed/{}\" title=\"{title}\">\n",
            html_attr(b),
            page_name(&stem, lang, "html"),
            html_attr(b),
            page_name(&stem, lang, "json"),
        ));
    }
    let mut hide = if w.snippet_hide.is_empty() {
        String::new()
    } else {
        format!(" data-hide=\"{}\"", w.snippet_hide.join(","))
    };
    if let (Some(v), Some((param, _))) = (a.variant, &w.variants) {
        hide = format!(" data-{param}=\"{}\"{hide}", html_attr(v));
    }
    format!(
        r#"<!doctype html>
<html lang="{lang}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta http-equiv="Content-Security-Policy" content="{csp}">
  <title>{title}</title>
  <meta name="description" content="{intro}">
  <link rel="icon" type="image/png" sizes="32x32" href="../icons/icon-32.png">
{head_links}  <link rel="alternate" hreflang="{other}" href="{other_page}">
  <link rel="stylesheet" href="../style.css">
</head>
<body>
<main class="embed-page">
  <h1>{title}</h1>
  <p class="note">{intro}</p>
  <div data-gpu-playground="{id}" data-lang="{lang}"{hide}><a href="../{route}">{title}</a></div>
  <p><a href="../#/?lang={lang}">{site}</a> · <a href="{other_page}" hreflang="{other}" lang="{other}">{other_name}</a></p>
</main>
<script src="../embed.js" async></script>
</body>
</html>
"#,
        csp = crate::hosting::CSP,
        intro = html_attr(&tx.t("embed.page.intro")),
        id = w.id,
        route = html_attr(&embed_route(a, lang)),
        site = html_attr(&tx.t("embed.page.site")),
        other_page = page_name(&stem, other, "html"),
        other_name = html_attr(&tx.t(&format!("lang.{other}"))),
    )
}

/// The oEmbed answer `a` in `lang`: a "rich" embed, its iframe the widget's own address (no
/// script: consumers strip them), `height` tall: its content's measured height at
/// [`OEMBED_WIDTH`] ([`HEIGHTS_FILE`]).
pub fn oembed_json(
    a: &Answer,
    lang: &str,
    text: &BTreeMap<String, String>,
    base: &str,
    height: u32,
) -> String {
    let tx = Text(text);
    let title = tx.title(a);
    let iframe = format!(
        r#"<iframe src="{}" width="{OEMBED_WIDTH}" height="{height}" title="{}" loading="lazy" frameborder="0"></iframe>"#,
        html_attr(&format!("{base}{}", embed_route(a, lang))),
        html_attr(&title),
    );
    format!(
        "{{\n  \"version\": \"1.0\",\n  \"type\": \"rich\",\n  \"title\": {},\n  \"provider_name\": {},\n  \
         \"provider_url\": {},\n  \"width\": {OEMBED_WIDTH},\n  \"height\": {},\n  \"html\": {}\n}}\n",
        json_str(&title),
        json_str(&tx.t("app.title")),
        json_str(base),
        height,
        json_str(&iframe)
    )
}

/// Writes every widget's page in each language and, with a base URL, their oEmbed answers
/// and `oembed.json` (the race in English, named by index.html). Run after the site's
/// version is made: these files depend on the address the site is served at, not on the
/// build, so the browser tests publish a built site again at their own address.
pub fn publish(out: &Path, base: Option<&str>, locales: &Path) -> Result<usize, String> {
    let file = widgets_file();
    let widgets = parse_widgets(&std::fs::read_to_string(&file).map_err(|e| err(&file, e))?)?;
    let tables = locale_files::load_all(locales)?;
    let heights_file = crate::util::root().join(HEIGHTS_FILE);
    let heights =
        parse_heights(&std::fs::read_to_string(&heights_file).map_err(|e| err(&heights_file, e))?);
    let dir = out.join("embed");
    std::fs::create_dir_all(&dir).map_err(|e| err(&dir, e))?;
    let mut written = 0;
    for (lang, table) in locale_files::LANGS.iter().zip(&tables) {
        for a in Answer::all(&widgets) {
            let stem = a.stem();
            let page = dir.join(page_name(&stem, lang, "html"));
            std::fs::write(&page, widget_page(&a, lang, table, base)).map_err(|e| err(&page, e))?;
            written += 1;
            if let Some(b) = base {
                let json = dir.join(page_name(&stem, lang, "json"));
                // Not measured yet (a new widget): its usual height until the test measures it.
                let height = heights
                    .get(&a.height_key(lang))
                    .copied()
                    .unwrap_or(a.w.height);
                let answer = oembed_json(&a, lang, table, b, height);
                std::fs::write(&json, &answer).map_err(|e| err(&json, e))?;
                if *lang == "en" && stem == "race" {
                    let root = out.join("oembed.json");
                    std::fs::write(&root, &answer).map_err(|e| err(&root, e))?;
                }
            }
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> Vec<BTreeMap<String, String>> {
        locale_files::load_all(&crate::util::root().join("crates/app/locales")).unwrap()
    }

    fn widgets() -> Vec<WidgetInfo> {
        parse_widgets(&std::fs::read_to_string(widgets_file()).unwrap()).unwrap()
    }

    #[test]
    fn reads_the_registry_json() {
        let ws = widgets();
        let race = ws.iter().find(|w| w.id == "race").unwrap();
        assert_eq!(
            race,
            &WidgetInfo {
                id: "race".into(),
                title: "embed.widget.race".into(),
                height: 700,
                snippet_hide: vec!["heading".into(), "tabs".into()],
                variants: Some((
                    "n".into(),
                    ["64", "128", "256", "512", "1024", "2048", "4096"]
                        .map(String::from)
                        .to_vec()
                )),
            }
        );
        let puzzle = ws.iter().find(|w| w.id == "puzzle").unwrap();
        let (param, ids) = puzzle.variants.as_ref().unwrap();
        assert_eq!(param, "id");
        assert!(ids.len() >= 10 && ids[0] == "map", "{ids:?}");
        let lesson = ws.iter().find(|w| w.id == "lesson").unwrap();
        let (param, ids) = lesson.variants.as_ref().unwrap();
        assert_eq!(param, "lesson");
        assert!(ids.iter().any(|i| i == "occupancy"), "{ids:?}");
        assert!(ws
            .iter()
            .any(|w| w.id == "gpu" && w.snippet_hide.is_empty()));
        // Every widget's name exists in every language.
        for t in tables() {
            for w in &ws {
                assert!(t.contains_key(&w.title), "{}", w.title);
            }
        }
        assert!(parse_widgets("[\n]").is_err());
        assert!(parse_widgets("{\"id\":\"x\"}").is_err());
    }

    #[test]
    fn base_urls_are_absolute_folders() {
        assert_eq!(
            normalize_base("https://u.github.io/gpu").unwrap(),
            "https://u.github.io/gpu/"
        );
        assert_eq!(
            normalize_base("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080/"
        );
        for bad in [
            "",
            "./",
            "u.github.io/gpu",
            "https://",
            "https:///x",
            "https://a/b?x=1",
            "https://a/#/",
            "https://a/\"><script>",
        ] {
            assert!(normalize_base(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn oembed_answers_are_absolute_and_name_the_widget() {
        let t = tables();
        let ws = widgets();
        let race = ws.iter().find(|w| w.id == "race").unwrap();
        let j = oembed_json(
            &Answer::of(race),
            "en",
            &t[0],
            "https://u.github.io/gpu/",
            700,
        );
        assert!(
            j.contains(r#""provider_url": "https://u.github.io/gpu/""#),
            "{j}"
        );
        assert!(
            j.contains(r#""title": "GPU Playground: the CPU vs GPU race""#),
            "{j}"
        );
        assert!(j.contains(r#""provider_name": "GPU Playground""#));
        assert!(j.contains(r#""height": 700"#) && j.contains(r#""width": 720"#));
        assert!(
            j.contains(r#""html": "\u003ciframe src=\"https://u.github.io/gpu/#/embed/race?lang=en&amp;hide=heading%2Ctabs\" width=\"720\" height=\"700\""#),
            "{j}"
        );
        let zh = oembed_json(
            &Answer::of(race),
            "zh",
            &t[1],
            "https://u.github.io/gpu/",
            690,
        );
        assert!(
            zh.contains("CPU 与 GPU 赛跑") && zh.contains("?lang=zh&amp;"),
            "{zh}"
        );
        assert!(zh.contains(r#""provider_name": "GPU 游乐场""#));
        assert!(
            zh.contains(r#""height": 690"#) && zh.contains(r#"height=\"690\""#),
            "{zh}"
        );
        // A variant: the puzzle by id, the race by size, named in words.
        let puzzle = ws.iter().find(|w| w.id == "puzzle").unwrap();
        let zip = Answer {
            w: puzzle,
            variant: Some("zip"),
        };
        assert_eq!(zip.stem(), "puzzle-zip");
        assert_eq!(zip.height_key("zh"), "puzzle-zip.zh");
        assert_eq!(zip.height_key("en"), "puzzle-zip");
        let j = oembed_json(&zip, "en", &t[0], "https://u.github.io/gpu/", 1234);
        assert!(
            j.contains(r#""title": "GPU Playground puzzle: Zip""#),
            "{j}"
        );
        assert!(
            j.contains(r#"src=\"https://u.github.io/gpu/#/embed/puzzle?lang=en&amp;id=zip\" width=\"720\" height=\"1234\""#),
            "{j}"
        );
        let n = Answer {
            w: race,
            variant: Some("1024"),
        };
        let j = oembed_json(&n, "en", &t[0], "https://u.github.io/gpu/", 700);
        assert!(
            j.contains("N = 1024") && j.contains("&amp;n=1024&amp;hide="),
            "{j}"
        );
        let all = Answer::all(&ws);
        assert!(all.iter().any(|a| a.stem() == "lesson-occupancy"));
        assert_eq!(
            all.len(),
            ws.len()
                + ws.iter()
                    .filter_map(|w| w.variants.as_ref())
                    .map(|v| v.1.len())
                    .sum::<usize>()
        );
    }

    #[test]
    fn heights_are_read_per_answer_and_language() {
        let h = parse_heights("{\n\"race\": 700,\n\"race.zh\": 690,\n\"bad\": x\n}\n");
        assert_eq!(h.get("race"), Some(&700));
        assert_eq!(h.get("race.zh"), Some(&690));
        assert_eq!(h.len(), 2);
        // The committed file names every answer in every language.
        let file = parse_heights(
            &std::fs::read_to_string(crate::util::root().join(HEIGHTS_FILE)).unwrap(),
        );
        let ws = widgets();
        for a in Answer::all(&ws) {
            for lang in locale_files::LANGS {
                assert!(
                    file.contains_key(&a.height_key(lang)),
                    "{HEIGHTS_FILE} lacks {}",
                    a.height_key(lang)
                );
            }
        }
    }

    #[test]
    fn widget_pages_discover_their_own_answer() {
        let t = tables();
        let ws = widgets();
        let gpu = ws.iter().find(|w| w.id == "gpu").unwrap();
        let p = widget_page(
            &Answer::of(gpu),
            "zh",
            &t[1],
            Some("https://u.github.io/gpu/"),
        );
        assert!(p.contains(r#"<link rel="alternate" type="application/json+oembed" href="https://u.github.io/gpu/embed/gpu.zh.json""#), "{p}");
        assert!(p.contains(r#"<html lang="zh">"#));
        assert!(
            p.contains(
                r#"<div data-gpu-playground="gpu" data-lang="zh"><a href="../#/embed/gpu?lang=zh">"#
            ),
            "{p}"
        );
        assert!(p.contains(r#"<script src="../embed.js" async></script>"#));
        assert!(p.contains(crate::hosting::CSP));
        assert!(
            !p.contains("<script>") && !p.contains("style="),
            "no inline script or style"
        );
        // Without a base URL: the page, no discovery.
        let p = widget_page(&Answer::of(gpu), "en", &t[0], None);
        assert!(!p.contains("json+oembed") && p.contains(r#"href="gpu.zh.html""#));
        // A variant's page opens that variant and links its own other language.
        let lesson = ws.iter().find(|w| w.id == "lesson").unwrap();
        let a = Answer {
            w: lesson,
            variant: Some("occupancy"),
        };
        let p = widget_page(&a, "en", &t[0], Some("https://u.github.io/gpu/"));
        assert!(
            p.contains(r#"href="https://u.github.io/gpu/embed/lesson-occupancy.json""#),
            "{p}"
        );
        assert!(
            p.contains(r#"<div data-gpu-playground="lesson" data-lang="en" data-lesson="occupancy" data-hide="heading">"#),
            "{p}"
        );
        assert!(
            p.contains("SMs, cores and occupancy")
                && p.contains(r#"href="lesson-occupancy.zh.html""#),
            "{p}"
        );
    }

    #[test]
    fn loader_gets_the_list_and_the_text() {
        let dir = std::env::temp_dir().join(format!("xtask-loader-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            crate::util::root().join("www/embed.js"),
            dir.join("embed.js"),
        )
        .unwrap();
        let hashed = write_loader(&dir, &crate::util::root().join("crates/app/locales")).unwrap();
        let a = std::fs::read_to_string(dir.join("embed.js")).unwrap();
        let b = std::fs::read_to_string(dir.join(&hashed)).unwrap();
        assert_eq!(a, b);
        assert_eq!(hashed, format!("embed.{}.js", fingerprint(a.as_bytes())));
        assert!(a.contains(r#"{"id":"race","title":"embed.widget.race""#));
        assert!(a.contains(r#""embed.loader.unknown_widget": "GPU 游乐场没有名为“{name}”的组件"#));
        assert!(!a.contains("__WIDGETS__") && !a.contains("__TEXT__"));
        // A loader without its markers fails the build.
        std::fs::write(dir.join("embed.js"), "nothing").unwrap();
        assert!(write_loader(&dir, &crate::util::root().join("crates/app/locales")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn index_link_is_absolute_or_gone() {
        let dir = std::env::temp_dir().join(format!("xtask-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let html = "<head>\n  <link rel=\"alternate\" type=\"application/json+oembed\" href=\"./oembed.json\" title=\"GPU Playground\">\n  <link rel=\"stylesheet\" href=\"./style.css\">\n</head>";
        std::fs::write(dir.join("index.html"), html).unwrap();
        index_discovery(&dir, Some("https://u.github.io/gpu/")).unwrap();
        let got = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert!(got.contains(r#"href="https://u.github.io/gpu/oembed.json""#));
        std::fs::write(dir.join("index.html"), html).unwrap();
        index_discovery(&dir, None).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("index.html")).unwrap(),
            "<head>\n  <link rel=\"stylesheet\" href=\"./style.css\">\n</head>"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
