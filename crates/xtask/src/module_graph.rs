//! The import graph of a crate's modules, and the check that it has no cycle.
//!
//! A module's files (`a.rs`, `a/mod.rs`, `a/b.rs`, inline `mod tests { … }`) are read as text:
//! every path that starts with `crate::`, `super::` or `self::` (in a `use` or inline, brace
//! groups expanded) is resolved to the module it names, following `pub use` re-exports
//! (`super::Train` in `components/embed.rs` is `components/train.rs`). Then, for every module,
//! its child modules must form no cycle: an edge from child `a` to child `b` means some file
//! in `a` (or below it) names something in `b` (or below it). A child naming its parent's own
//! items (`super::Ctx`) or the parent naming its children is the ordinary shape of a module tree
//! and is not an edge. Only this crate's own paths count; other crates are Cargo's business
//! (Cargo already refuses a cycle between crates). No parser beyond what is needed: comments,
//! strings and char literals are blanked first, so a path in a doc comment never counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type ModPath = Vec<String>;

/// One reference from a module to another, for the error message.
#[derive(Clone, Debug)]
struct Site {
    file: String,
    line: usize,
    text: String,
}

/// A crate's sources: file path relative to `src/` (with `/`) → text.
pub fn read_src(src: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).map_err(|e| e.to_string())?;
                let rel = rel.to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&p).map_err(|e| format!("{rel}: {e}"))?;
                files.insert(rel, text);
            }
        }
    }
    Ok(files)
}

/// The module a file is: `lib.rs`/`main.rs` → the root, `a/mod.rs` → `a`, `a/b.rs` → `a::b`.
fn file_module(rel: &str) -> ModPath {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return Vec::new();
    }
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The text with comments, string and char literals replaced by spaces (newlines kept, so
/// line numbers stay right).
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    let keep_lines = |out: &mut String, s: &[char]| {
        for &ch in s {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
    };
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |e| i + e);
            keep_lines(&mut out, &c[i..end]);
            i = end;
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            keep_lines(&mut out, &c[i..j]);
            i = j;
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) && {
            let s = if c[i] == 'b' { i + 2 } else { i + 1 };
            let h = c[s..].iter().take_while(|&&x| x == '#').count();
            c.get(s + h) == Some(&'"')
        } {
            let s = if c[i] == 'b' { i + 2 } else { i + 1 };
            let h = c[s..].iter().take_while(|&&x| x == '#').count();
            let mut j = s + h + 1;
            while j < c.len() {
                if c[j] == '"' && c[j + 1..].iter().take(h).filter(|&&x| x == '#').count() == h {
                    j += 1 + h;
                    break;
                }
                j += 1;
            }
            keep_lines(&mut out, &c[i..j.min(c.len())]);
            i = j;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            let j = (j + 1).min(c.len());
            keep_lines(&mut out, &c[i..j]);
            i = j;
        } else if c[i] == '\'' && !prev_ident {
            // A char literal ('x', '\n', '\u{1F600}'), or a lifetime ('a), which stays.
            let end = if c.get(i + 1) == Some(&'\\') {
                c[i + 2..]
                    .iter()
                    .position(|&x| x == '\'')
                    .map(|e| i + 3 + e)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(e) => {
                    keep_lines(&mut out, &c[i..e]);
                    i = e;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Tokens of blanked text: identifiers, `::` and single punctuation characters, with lines.
fn tokens(text: &str) -> Vec<(String, usize)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((c[s..i].iter().collect(), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(("::".into(), line));
            i += 2;
        } else {
            out.push((ch.to_string(), line));
            i += 1;
        }
    }
    out
}

/// The paths of a brace group or single path at `toks[i..]` (after `a::b::`), each prefixed
/// with `prefix`; returns the index after it. `x as y` keeps `x`; `*` and `self` name `prefix`.
fn path_tree(
    toks: &[(String, usize)],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<ModPath>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(i).map(|t| t.0.as_str()) {
            Some("{") => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| t.0.as_str()) {
                        None => return i,
                        Some("}") => return i + 1,
                        Some(",") => i += 1,
                        _ => i = path_tree(toks, i, &path, out),
                    }
                }
            }
            Some("*") => {
                out.push(path);
                return i + 1;
            }
            Some("self") if !path.is_empty() => {
                out.push(path);
                return i + 1;
            }
            Some(t) if t.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                path.push(t.to_string());
                i += 1;
                if toks.get(i).map(|t| t.0.as_str()) == Some("::") {
                    i += 1;
                    continue;
                }
                out.push(path);
                if toks.get(i).map(|t| t.0.as_str()) == Some("as") {
                    i += 2;
                }
                return i;
            }
            _ => {
                if !path.is_empty() {
                    out.push(path);
                }
                return i;
            }
        }
    }
}

/// Every path of a file that starts at `crate`, `super` or `self`, written absolute
/// (`crate` first, `super` resolved from the module it appears in), with its line; and the
/// re-exports (`pub use a::B;`) of each module: (module, name, absolute path).
#[allow(clippy::type_complexity)]
fn file_paths(
    rel: &str,
    text: &str,
) -> (
    Vec<(ModPath, ModPath, usize)>,
    Vec<(ModPath, String, ModPath)>,
) {
    let toks = tokens(&blank(text));
    let file_mod = file_module(rel);
    // Inline modules: (module path, brace depth at which it closes).
    let mut inline: Vec<(ModPath, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut paths = Vec::new();
    let mut reexports = Vec::new();
    let mut pending_mod: Option<String> = None;
    let current = |inline: &Vec<(ModPath, usize)>| {
        inline
            .last()
            .map_or_else(|| file_mod.clone(), |(m, _)| m.clone())
    };
    let absolute = |cur: &ModPath, p: &ModPath| -> Option<ModPath> {
        let mut base = cur.clone();
        let mut rest = p.as_slice();
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("super") | Some("self") => {
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            base.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    };
    let mut i = 0;
    while i < toks.len() {
        let (t, line) = (&toks[i].0, toks[i].1);
        let prev = if i > 0 { toks[i - 1].0.as_str() } else { "" };
        match t.as_str() {
            "{" => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    let mut m = current(&inline);
                    m.push(name);
                    inline.push((m, depth));
                }
                i += 1;
            }
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            ";" => {
                pending_mod = None;
                i += 1;
            }
            "mod" => {
                pending_mod = toks.get(i + 1).map(|t| t.0.clone());
                i += 2;
            }
            "use" => {
                // `pub use …;` re-exports; a plain `use` is just another path.
                let public = prev == "pub" || prev == ")";
                let mut out = Vec::new();
                let end = path_tree(&toks, i + 1, &[], &mut out);
                let cur = current(&inline);
                for p in out {
                    let first = p.first().map(String::as_str);
                    let abs = match first {
                        Some("crate") | Some("super") | Some("self") => absolute(&cur, &p),
                        // 2018 paths relative to the module (`pub use train::Train;`).
                        Some(_) => {
                            let mut a = cur.clone();
                            a.extend(p.iter().cloned());
                            Some(a)
                        }
                        None => None,
                    };
                    let Some(abs) = abs else { continue };
                    if matches!(first, Some("crate") | Some("super") | Some("self")) {
                        paths.push((cur.clone(), abs.clone(), line));
                    }
                    if public {
                        if let Some(name) = p.last() {
                            reexports.push((cur.clone(), name.clone(), abs));
                        }
                    }
                }
                i = end.max(i + 1);
            }
            "crate" | "super" | "self"
                if toks.get(i + 1).map(|t| t.0.as_str()) == Some("::") && prev != "::" =>
            {
                let mut out = Vec::new();
                let end = path_tree(&toks, i, &[], &mut out);
                let cur = current(&inline);
                for p in out {
                    if let Some(abs) = absolute(&cur, &p) {
                        paths.push((cur.clone(), abs, line));
                    }
                }
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    (paths, reexports)
}

/// The cycles among the children of every module of a crate's `src/` files, each written as
/// `a → b → a` with one place each edge comes from. Empty when the graph is a tree of DAGs.
pub fn cycles(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut modules: BTreeSet<ModPath> = files.keys().map(|f| file_module(f)).collect();
    let mut refs = Vec::new();
    let mut reexports: BTreeMap<(ModPath, String), ModPath> = BTreeMap::new();
    for (rel, text) in files {
        let (paths, re) = file_paths(rel, text);
        for (from, to, line) in paths {
            let text = text
                .lines()
                .nth(line - 1)
                .unwrap_or_default()
                .trim()
                .to_string();
            refs.push((
                from,
                to,
                Site {
                    file: rel.clone(),
                    line,
                    text,
                },
            ));
        }
        for (m, name, target) in re {
            reexports.insert((m, name), target);
        }
    }
    // Inline modules (`mod tests { … }`) are modules too.
    for (from, _, _) in &refs {
        modules.insert(from.clone());
    }
    // The module a path names: the longest prefix that is a module, following re-exports.
    fn resolve(
        p: &[String],
        modules: &BTreeSet<ModPath>,
        reexports: &BTreeMap<(ModPath, String), ModPath>,
        hops: u8,
    ) -> ModPath {
        let mut m: ModPath = Vec::new();
        for (k, seg) in p.iter().enumerate() {
            let mut next = m.clone();
            next.push(seg.clone());
            if modules.contains(&next) {
                m = next;
            } else if let Some(target) = reexports.get(&(m.clone(), seg.clone())) {
                if hops == 0 || target.as_slice() == p {
                    return m;
                }
                let mut via = target.clone();
                via.extend(p[k + 1..].iter().cloned());
                return resolve(&via, modules, reexports, hops - 1);
            } else {
                return m;
            }
        }
        m
    }
    let mut edges: BTreeMap<(ModPath, ModPath), Site> = BTreeMap::new();
    for (from, to, site) in refs {
        let to = resolve(&to, &modules, &reexports, 8);
        // The edge is between the children of the deepest module holding both ends.
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common < from.len() && common < to.len() {
            edges
                .entry((from[..=common].to_vec(), to[..=common].to_vec()))
                .or_insert(site);
        }
    }
    // Cycles: for each edge a → b, is there a path b → … → a? Report each cycle once.
    let mut found = Vec::new();
    let mut seen: BTreeSet<BTreeSet<ModPath>> = BTreeSet::new();
    for (a, b) in edges.keys() {
        // Breadth-first from b back to a, remembering the way.
        let mut back: BTreeMap<ModPath, ModPath> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([b.clone()]);
        let mut reached = b == a;
        while let Some(n) = queue.pop_front() {
            if &n == a {
                reached = true;
                break;
            }
            for (x, y) in edges.keys() {
                if *x == n && !back.contains_key(y) && y != b {
                    back.insert(y.clone(), n.clone());
                    queue.push_back(y.clone());
                }
            }
        }
        if !reached {
            continue;
        }
        // The way back from a to b, reversed: b → … → a.
        let mut way = vec![a.clone()];
        while let Some(p) = back.get(way.last().unwrap_or(a)) {
            way.push(p.clone());
        }
        way.reverse();
        let ring: Vec<ModPath> = std::iter::once(a.clone()).chain(way).collect();
        let members: BTreeSet<ModPath> = ring.iter().cloned().collect();
        if !seen.insert(members) {
            continue;
        }
        let name = |m: &ModPath| format!("crate::{}", m.join("::"));
        let mut s = ring.iter().map(name).collect::<Vec<_>>().join(" → ");
        for w in ring.windows(2) {
            if let Some(site) = edges.get(&(w[0].clone(), w[1].clone())) {
                s += &format!(
                    "\n    {} → {}: {}:{}: {}",
                    name(&w[0]),
                    name(&w[1]),
                    site.file,
                    site.line,
                    site.text
                );
            }
        }
        found.push(s);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn a_cycle_between_siblings_is_found_and_a_tree_is_not() {
        let ok = files(&[
            ("lib.rs", "mod a; mod b; pub use a::A;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            (
                "b.rs",
                "// use crate::a::A;  (a comment)\npub struct B; const S: &str = \"crate::a::A\";",
            ),
        ]);
        assert_eq!(cycles(&ok), Vec::<String>::new());
        let bad = files(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B;\nfn f() { let _ = crate::a::A; }"),
        ]);
        let c = cycles(&bad);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].contains("b.rs:2"), "{}", c[0]);
    }

    /// `super::Name` through the parent's `pub use child::Name`, and a child using the
    /// parent's own items, the way `components/` is built.
    #[test]
    fn re_exports_are_followed_and_parents_are_not_edges() {
        let tree = |back: &str| {
            files(&[
                ("lib.rs", "pub mod components;"),
                (
                    "components/mod.rs",
                    "mod embed; mod train; pub use train::Train; pub struct Ctx;",
                ),
                ("components/embed.rs", "use super::{Ctx, Train};"),
                (
                    "components/train.rs",
                    &format!("use super::Ctx; pub struct Train; {back}"),
                ),
            ])
        };
        assert!(cycles(&tree("")).is_empty());
        let c = cycles(&tree("fn f() { super::embed::report(); }"));
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].contains("crate::components::embed"), "{}", c[0]);
    }

    /// `super` inside an inline `mod tests` is the file's own module.
    #[test]
    fn inline_modules_move_super() {
        let f = files(&[
            ("lib.rs", "mod a; mod b;"),
            (
                "a.rs",
                "use crate::b::x; pub fn y() {}\n#[cfg(test)]\nmod tests { use super::y; }",
            ),
            ("b.rs", "pub fn x() {}"),
        ]);
        assert!(cycles(&f).is_empty(), "{:?}", cycles(&f));
    }

    /// Every crate of the workspace: no module imports, directly or around a ring, a module
    /// that imports it back.
    #[test]
    fn no_crate_has_an_import_cycle() {
        let crates = crate::util::root().join("crates");
        let mut all = Vec::new();
        for e in std::fs::read_dir(&crates).unwrap() {
            let src = e.unwrap().path().join("src");
            if !src.is_dir() {
                continue;
            }
            let name = src
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string();
            for c in cycles(&read_src(&src).unwrap()) {
                all.push(format!("{name}: {c}"));
            }
        }
        assert!(all.is_empty(), "import cycles:\n{}", all.join("\n"));
    }
}
