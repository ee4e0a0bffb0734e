//! Showing WGSL to learners: which lines changed since the previous ladder stage (a line diff)
//! and a small syntax highlighter. Pure functions, unit-tested.

/// For each line of `current`, whether it is new or changed relative to `previous`
/// (longest-common-subsequence line diff; leading/trailing whitespace ignored).
pub fn changed_lines(previous: &str, current: &str) -> Vec<bool> {
    let a: Vec<&str> = previous.lines().map(str::trim).collect();
    let b: Vec<&str> = current.lines().map(str::trim).collect();
    let (n, m) = (a.len(), b.len());
    // lcs[i][j] = LCS length of a[i..] and b[j..]
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut changed = vec![true; m];
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            changed[j] = false;
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    // Blank lines are never "changes" worth marking.
    for (flag, line) in changed.iter_mut().zip(&b) {
        if line.is_empty() {
            *flag = false;
        }
    }
    changed
}

/// A piece of a highlighted line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    Comment,
    Keyword,
    Type,
    Attribute,
    Number,
    Builtin,
    Plain,
}

impl Token {
    /// CSS class of the token.
    pub fn class(self) -> &'static str {
        match self {
            Token::Comment => "tok-comment",
            Token::Keyword => "tok-keyword",
            Token::Type => "tok-type",
            Token::Attribute => "tok-attr",
            Token::Number => "tok-number",
            Token::Builtin => "tok-builtin",
            Token::Plain => "",
        }
    }
}

const KEYWORDS: &[&str] = &[
    "fn", "let", "var", "const", "override", "struct", "alias", "return", "if", "else", "for",
    "while", "loop", "break", "continue", "enable", "true", "false",
];
const TYPES: &[&str] = &[
    "f32",
    "f16",
    "u32",
    "i32",
    "bool",
    "vec2",
    "vec3",
    "vec4",
    "array",
    "ptr",
    "storage",
    "uniform",
    "workgroup",
    "function",
    "read",
    "read_write",
];
const BUILTINS: &[&str] = &[
    "workgroupBarrier",
    "subgroupShuffle",
    "select",
    "min",
    "max",
    "fma",
    "dot",
];

/// Splits one line of WGSL into highlighted tokens (a line comment runs to the end).
pub fn highlight_line(line: &str) -> Vec<(Token, String)> {
    let mut out: Vec<(Token, String)> = Vec::new();
    let push = |out: &mut Vec<(Token, String)>, t: Token, s: &str| match out.last_mut() {
        Some((last, text)) if *last == t => text.push_str(s),
        _ => out.push((t, s.to_string())),
    };
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            push(
                &mut out,
                Token::Comment,
                &chars[i..].iter().collect::<String>(),
            );
            break;
        }
        if c.is_ascii_alphabetic() || c == '_' || c == '@' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let t = if word.starts_with('@') {
                Token::Attribute
            } else if KEYWORDS.contains(&word.as_str()) {
                Token::Keyword
            } else if TYPES.contains(&word.as_str()) {
                Token::Type
            } else if BUILTINS.contains(&word.as_str()) {
                Token::Builtin
            } else {
                Token::Plain
            };
            push(&mut out, t, &word);
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            push(
                &mut out,
                Token::Number,
                &chars[start..i].iter().collect::<String>(),
            );
            continue;
        }
        push(&mut out, Token::Plain, &c.to_string());
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_marks_changed_and_new_lines() {
        let prev = "a\nb\nc\n\nd";
        let cur = "a\nB\nc\n\nd\ne";
        assert_eq!(
            changed_lines(prev, cur),
            vec![false, true, false, false, false, true]
        );
        assert!(changed_lines("", "x\ny").iter().all(|&c| c));
        assert!(changed_lines("x\ny", "  x\ny  ").iter().all(|&c| !c));
    }

    #[test]
    fn naive_to_coalesced_changes_only_the_mapping() {
        let naive = include_str!("../../../shaders/matmul_naive.wgsl");
        let coalesced = include_str!("../../../shaders/matmul_coalesced.wgsl");
        let code_changes: Vec<&str> = coalesced
            .lines()
            .zip(changed_lines(naive, coalesced))
            .filter(|(l, c)| *c && !l.trim_start().starts_with("//"))
            .map(|(l, _)| l.trim())
            .collect();
        assert_eq!(code_changes, vec!["let col = gid.x;", "let row = gid.y;"]);
    }

    #[test]
    fn highlighting_keeps_the_text_and_finds_tokens() {
        let line = "    let x: f32 = a[3u] * 2.0; // note";
        let toks = highlight_line(line);
        let rebuilt: String = toks.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(rebuilt, line);
        assert!(toks.contains(&(Token::Keyword, "let".into())));
        assert!(toks.contains(&(Token::Type, "f32".into())));
        assert!(toks.contains(&(Token::Number, "3u".into())));
        assert_eq!(toks.last(), Some(&(Token::Comment, "// note".into())));
        assert_eq!(
            highlight_line("@compute @workgroup_size(16)")[0].0,
            Token::Attribute
        );
    }
}
