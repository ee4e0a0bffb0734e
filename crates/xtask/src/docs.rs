//! The project's documents on the site: `docs/*.md` rendered to `<site>/docs/<name>.html`, so
//! the pages can link "docs/benchmarks.md" and a fact-check id such as "FC-103" to something a
//! visitor can open. A small Markdown subset, the one these files use: headings,
//! paragraphs, `-` and `1.` lists, fenced code, pipe tables, `code`, **bold**, *em*, links.
//! A table row whose first cell is a fact-check id gets that id as its anchor (`#fc-103`), so
//! does a paragraph that opens with one in bold (`**FC-42 — …**`: the longer entries), and
//! a heading its slug; links to another `.md` point at its `.html`. Std only, no scripts.

use std::path::Path;

/// The stylesheet every rendered document links (`docs/docs.css`).
const CSS: &str = "body{font:16px/1.55 system-ui,sans-serif;margin:0;color:#1b1f2a;background:#f6f7fb}\
main{max-width:76rem;margin:0 auto;padding:1rem}\
nav{font-size:.9rem;margin-bottom:1rem}\
table{border-collapse:collapse;display:block;overflow-x:auto;font-size:.9rem;margin:.8rem 0}\
th,td{border:1px solid #dde1ea;padding:.3rem .5rem;vertical-align:top;text-align:left;min-width:6rem}td:first-child{min-width:0;white-space:nowrap}td:nth-child(5){min-width:16rem}\
tr:target,p:target{background:#fff4d6}h2:target,h3:target{background:#fff4d6}\
code{font-family:ui-monospace,monospace;font-size:.9em;overflow-wrap:anywhere}\
pre{background:#fff;border:1px solid #dde1ea;padding:.6rem;overflow-x:auto}\
@media (prefers-color-scheme:dark){body{color:#e6e8ef;background:#14171f}th,td{border-color:#343a4a}\
pre{background:#1d212c;border-color:#343a4a}tr:target,p:target,h2:target,h3:target{background:#3a3020}a{color:#8ea2ff}}\n";

/// Renders every `*.md` of `from` into `to` (with the stylesheet).
pub fn write_site_docs(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    std::fs::write(to.join("docs.css"), CSS).map_err(|e| format!("docs.css: {e}"))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let p = entry.path();
        if p.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let md = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("doc");
        let out = to.join(format!("{stem}.html"));
        std::fs::write(&out, page(stem, &md)).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// A whole HTML page for one document.
pub fn page(stem: &str, md: &str) -> String {
    let title = md
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or(stem)
        .trim();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · GPU Playground</title><link rel=\"stylesheet\" href=\"docs.css\"></head>\n\
         <body><main><nav><a href=\"../\">GPU Playground</a> · docs/{stem}.md</nav>\n{}</main></body></html>\n",
        escape(title),
        render(md)
    )
}

/// The anchor of a fact-check id (`FC-44a` → `fc-44a`), if `cell` is one.
pub fn fc_anchor(cell: &str) -> Option<String> {
    let rest = cell.trim().strip_prefix("FC-")?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    let tail = &rest[digits..];
    (digits > 0 && tail.chars().all(|c| c.is_ascii_lowercase()) && tail.len() <= 1)
        .then(|| format!("fc-{}", rest.to_ascii_lowercase()))
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.to_lowercase().chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if (c == ' ' || c == '-') && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The Markdown subset, block by block.
pub fn render(md: &str) -> String {
    let lines: Vec<&str> = md.lines().collect();
    let mut html = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if t.is_empty() {
            i += 1;
        } else if t.starts_with("```") {
            let mut code = String::new();
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                code.push_str(&escape(lines[i]));
                code.push('\n');
                i += 1;
            }
            i += 1;
            html.push_str(&format!("<pre><code>{code}</code></pre>\n"));
        } else if let Some((level, text)) = heading(t) {
            html.push_str(&format!(
                "<h{level} id=\"{}\">{}</h{level}>\n",
                slug(text),
                inline(text)
            ));
            i += 1;
        } else if t.starts_with('|') {
            let mut rows = Vec::new();
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                rows.push(cells(lines[i].trim()));
                i += 1;
            }
            html.push_str(&table(&rows));
        } else if item(t).is_some() {
            let ordered = !t.starts_with("- ") && !t.starts_with("* ");
            let tag = if ordered { "ol" } else { "ul" };
            html.push_str(&format!("<{tag}>\n"));
            while i < lines.len() {
                let Some(first) = item(lines[i].trim_start()) else {
                    break;
                };
                let mut text = first.to_string();
                i += 1;
                // Continuation lines: indented, not a new item.
                while i < lines.len()
                    && lines[i].starts_with("  ")
                    && !lines[i].trim().is_empty()
                    && item(lines[i].trim_start()).is_none()
                {
                    text.push(' ');
                    text.push_str(lines[i].trim());
                    i += 1;
                }
                html.push_str(&format!("<li>{}</li>\n", inline(&text)));
            }
            html.push_str(&format!("</{tag}>\n"));
        } else {
            let mut text = t.to_string();
            i += 1;
            while i < lines.len() {
                let n = lines[i].trim_start();
                if n.is_empty()
                    || n.starts_with("```")
                    || n.starts_with('|')
                    || heading(n).is_some()
                    || item(n).is_some()
                {
                    break;
                }
                text.push(' ');
                text.push_str(n.trim());
                i += 1;
            }
            // A fact-check entry written as a paragraph is linked to like a row.
            let id = text
                .strip_prefix("**")
                .and_then(|r| r.split_whitespace().next())
                .and_then(fc_anchor);
            match id {
                Some(id) => html.push_str(&format!("<p id=\"{id}\">{}</p>\n", inline(&text))),
                None => html.push_str(&format!("<p>{}</p>\n", inline(&text))),
            }
        }
    }
    html
}

fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.chars().take_while(|&c| c == '#').count();
    (1..=6)
        .contains(&level)
        .then(|| t[level..].strip_prefix(' '))
        .flatten()
        .map(|text| (level, text.trim()))
}

fn item(t: &str) -> Option<&str> {
    if let Some(r) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return Some(r);
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    (digits > 0)
        .then(|| t[digits..].strip_prefix(". "))
        .flatten()
}

/// A table row's cells (`\|` is a literal bar).
fn cells(row: &str) -> Vec<String> {
    let inner = row.strip_prefix('|').unwrap_or(row);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                if let Some(s) = out.last_mut() {
                    s.push('|');
                }
                chars.next();
            }
            '|' => out.push(String::new()),
            c => {
                if let Some(s) = out.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

fn table(rows: &[Vec<String>]) -> String {
    let is_rule = |r: &Vec<String>| {
        r.iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| "-: ".contains(ch)))
    };
    let mut html = String::from("<table>\n");
    let (head, body) = match rows {
        [h, rule, rest @ ..] if is_rule(rule) => (Some(h), rest),
        _ => (None, rows),
    };
    if let Some(h) = head {
        html.push_str("<thead><tr>");
        for c in h {
            html.push_str(&format!("<th scope=\"col\">{}</th>", inline(c)));
        }
        html.push_str("</tr></thead>\n");
    }
    html.push_str("<tbody>\n");
    for r in body {
        match r.first().and_then(|c| fc_anchor(c)) {
            Some(id) => html.push_str(&format!("<tr id=\"{id}\">")),
            None => html.push_str("<tr>"),
        }
        for c in r {
            html.push_str(&format!("<td>{}</td>", inline(c)));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    html
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Inline markup: `code`, [text](url), **bold**, *em*; the rest escaped.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('`') {
            if let Some(end) = r.find('`') {
                out.push_str(&format!("<code>{}</code>", escape(&r[..end])));
                rest = &r[end + 1..];
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix('[') {
            if let Some(close) = r.find("](") {
                if let Some(end) = r[close + 2..].find(')') {
                    let text = &r[..close];
                    let url = &r[close + 2..close + 2 + end];
                    out.push_str(&format!(
                        "<a href=\"{}\">{}</a>",
                        escape(&link(url)),
                        inline(text)
                    ));
                    rest = &r[close + 3 + end..];
                    continue;
                }
            }
        }
        if let Some(r) = rest.strip_prefix("**") {
            if let Some(end) = r.find("**") {
                out.push_str(&format!("<strong>{}</strong>", inline(&r[..end])));
                rest = &r[end + 2..];
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix('*') {
            if let Some(end) = r.find('*') {
                if end > 0 && !r.starts_with(' ') {
                    out.push_str(&format!("<em>{}</em>", inline(&r[..end])));
                    rest = &r[end + 1..];
                    continue;
                }
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push_str(&escape(&c.to_string()));
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A link's target on the site: another document's `.md` becomes its `.html`; a file of the
/// repository outside docs/ is not on the site and keeps its path (shown, not followed far).
fn link(url: &str) -> String {
    let (path, frag) = url.split_once('#').unwrap_or((url, ""));
    let path = match path.strip_suffix(".md") {
        Some(stem) if !stem.contains('/') => format!("{stem}.html"),
        _ => path.to_string(),
    };
    if frag.is_empty() {
        path
    } else {
        format!("{path}#{frag}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_check_rows_get_their_ids_as_anchors() {
        let md = "# Fact-check\n\n| ID | Claim |\n| --- | --- |\n| FC-05 | a \\| b |\n| FC-44a | `x<y>` |\n| other | c |\n";
        let html = render(md);
        assert!(
            html.contains(r#"<h1 id="fact-check">Fact-check</h1>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<tr id="fc-05"><td>FC-05</td><td>a | b</td></tr>"#),
            "{html}"
        );
        assert!(
            html.contains(
                r#"<tr id="fc-44a"><td>FC-44a</td><td><code>x&lt;y&gt;</code></td></tr>"#
            ),
            "{html}"
        );
        assert!(html.contains("<tr><td>other</td>"), "{html}");
        assert!(html.contains(r#"<th scope="col">ID</th>"#));
        assert_eq!(fc_anchor("FC-103").as_deref(), Some("fc-103"));
        assert_eq!(fc_anchor("FC-"), None);
        assert_eq!(fc_anchor("ID"), None);
    }

    #[test]
    fn blocks_and_inline_markup() {
        let md = "Some **bold** and *em* text\ncontinued, a [link](embedding.md#message-api) and [file](../www/x.js).\n\n- one\n  more\n- two\n\n1. first\n2. second\n\n```html\n<iframe>\n```\n## Message API, version 1\n";
        let html = render(md);
        assert!(html.contains("<p>Some <strong>bold</strong> and <em>em</em> text continued, a <a href=\"embedding.html#message-api\">link</a> and <a href=\"../www/x.js\">file</a>.</p>"), "{html}");
        assert!(
            html.contains("<ul>\n<li>one more</li>\n<li>two</li>\n</ul>"),
            "{html}"
        );
        assert!(
            html.contains("<ol>\n<li>first</li>\n<li>second</li>\n</ol>"),
            "{html}"
        );
        assert!(
            html.contains("<pre><code>&lt;iframe&gt;\n</code></pre>"),
            "{html}"
        );
        assert!(
            html.contains(r#"<h2 id="message-api-version-1">"#),
            "{html}"
        );
    }

    #[test]
    fn every_document_renders_with_a_title_and_no_script() {
        let docs = crate::util::root().join("docs");
        for e in std::fs::read_dir(&docs).expect("docs/").flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "md") {
                let md = std::fs::read_to_string(&p).expect("read");
                let html = page("x", &md);
                assert!(
                    html.contains("<title>") && !html.contains("<script"),
                    "{}",
                    p.display()
                );
            }
        }
        let fc = std::fs::read_to_string(docs.join("fact-check.md")).expect("fact-check.md");
        let html = render(&fc);
        for id in ["fc-05", "fc-103", "fc-131", "fc-170", "fc-174"] {
            assert!(html.contains(&format!("<tr id=\"{id}\">")), "{id}");
        }
        for id in ["fc-42", "fc-44a", "fc-45"] {
            assert!(html.contains(&format!("<p id=\"{id}\">")), "{id}");
        }
    }

    /// Every fact-check id a page's text names is an anchor of the rendered document, so the
    /// page's link to it (`page_models::doc_links`) lands on its entry.
    #[test]
    fn every_fact_check_id_the_pages_name_has_its_anchor() {
        let root = crate::util::root();
        let fc = std::fs::read_to_string(root.join("docs/fact-check.md")).expect("fact-check.md");
        let html = render(&fc);
        let mut named = std::collections::BTreeSet::new();
        for lang in ["en", "zh"] {
            let dir = root.join("crates/app/locales").join(lang);
            for e in std::fs::read_dir(&dir).expect("locales").flatten() {
                let text = std::fs::read_to_string(e.path()).expect("read");
                for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                    for (at, _) in line.match_indices("FC-") {
                        let word: String = line[at..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                            .collect();
                        if let Some(id) = fc_anchor(&word) {
                            named.insert(id);
                        }
                    }
                }
            }
        }
        assert!(named.len() > 50, "{} ids", named.len());
        let missing: Vec<_> = named
            .iter()
            .filter(|id| !html.contains(&format!(" id=\"{id}\">")))
            .collect();
        assert!(missing.is_empty(), "no anchor for {missing:?}");
    }
}
