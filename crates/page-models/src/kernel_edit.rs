//! The editor page's logic, without DOM or GPU: share links (the source deflated and
//! base64url-encoded into the URL, with a limit), local-storage draft keys, the explanation
//! of a wrong matmul result (which elements differ, expected and got), and where the page
//! opens ([`land_on_editor`]).

use cpu_kernels::matmul::{MatmulSize, Reference};
use cpu_kernels::verify::{compare, Precision};

use crate::edit_target::{compare_elements, Differences, Layout};

/// Longest share code we put in a URL. Browsers and hosts accept far longer URLs, but chat
/// apps and mail clients cut around 8 000 characters; 6 000 leaves room for the rest.
pub const MAX_SHARE_CHARS: usize = 6000;
/// Longest source text a share code may unpack to (a guard against a crafted link).
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// The compressed source needs `chars` characters, over the limit.
    TooLong { chars: usize, limit: usize },
    /// The code in the link is not a share code (cut, or typed by hand).
    Corrupt,
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

pub(crate) fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

pub(crate) fn unbase64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let digits: Option<Vec<u32>> = s
        .bytes()
        .map(|c| ALPHABET.iter().position(|&a| a == c).map(|p| p as u32))
        .collect();
    for chunk in digits?.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | (d << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// The share code of `source`: raw deflate, then base64url (safe in a URL as is).
pub fn share_code(source: &str) -> Result<String, ShareError> {
    let packed = miniz_oxide::deflate::compress_to_vec(source.as_bytes(), 9);
    let code = base64url(&packed);
    if code.len() > MAX_SHARE_CHARS {
        return Err(ShareError::TooLong {
            chars: code.len(),
            limit: MAX_SHARE_CHARS,
        });
    }
    Ok(code)
}

/// The source in a share code; never panics on a damaged or hostile code.
pub fn source_from_code(code: &str) -> Result<String, ShareError> {
    if code.len() > MAX_SHARE_CHARS {
        return Err(ShareError::Corrupt);
    }
    let packed = unbase64url(code).ok_or(ShareError::Corrupt)?;
    let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_SOURCE_BYTES)
        .map_err(|_| ShareError::Corrupt)?;
    String::from_utf8(bytes).map_err(|_| ShareError::Corrupt)
}

/// Local-storage key of the draft of kernel or puzzle `id`.
pub fn draft_key(kind: &str, id: &str) -> String {
    format!("gpu-playground.draft.{kind}.{id}")
}

/// Which elements of C are outside the verification bound (the same rule as the ladder's
/// check, element by element): how many, the first `max` in row-major order, and where they
/// sit on the C matrix.
pub fn differences(
    size: MatmulSize,
    got: &[f32],
    reference: &Reference,
    precision: Precision,
    max: usize,
) -> Differences {
    let layout = Layout::Matrix {
        rows: size.m,
        cols: size.n,
    };
    compare_elements(
        &layout,
        got,
        &reference.value,
        max,
        reference_rule(reference, precision),
    )
}

/// The ladder's verification rule applied to one element at a time (matmul and conv: the
/// bound scales with that element's Σ|terms|).
pub fn reference_rule(
    reference: &Reference,
    precision: Precision,
) -> impl Fn(usize, f32, f64) -> bool + '_ {
    move |i, g, r| {
        let one = Reference {
            value: vec![r],
            magnitude: vec![reference.magnitude.get(i).copied().unwrap_or(0.0)],
            reduction_len: reference.reduction_len,
            max_abs_input: reference.max_abs_input,
        };
        !compare(&[g], &one, precision).ok
    }
}

/// One reason (from naga, in the editor's checker) why an edited kernel does not fit the
/// buffers its page binds: `kind` names it, `fields` hold its details as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingProblem {
    pub kind: String,
    pub fields: Vec<(&'static str, String)>,
}

impl BindingProblem {
    /// Translation key of its sentence (`editor.bind.<kind>`); unknown kinds get a generic one.
    pub fn key(&self) -> &'static str {
        match self.kind.as_str() {
            "no_entry" => "editor.bind.no_entry",
            "extra" => "editor.bind.extra",
            "missing" => "editor.bind.missing",
            "wrong_class" => "editor.bind.wrong_class",
            "read_only_output" => "editor.bind.read_only_output",
            "uniform_too_large" => "editor.bind.uniform_too_large",
            _ => "editor.bind.other",
        }
    }

    /// The sentence's arguments.
    pub fn args(&self) -> Vec<(&'static str, &str)> {
        self.fields.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }
}

/// One of naga's problems with the learner's text, as the editor's error list shows it (the
/// same list the underlines are drawn from): 1-based line and column (UTF-16 code units, as
/// the editor counts) and naga's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// Where an entry of the editor's error list comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListedFrom {
    /// naga, checking as the learner types.
    Naga,
    /// The browser's own compiler, at the last run: an error, or a warning.
    Browser { warning: bool },
}

/// One entry of the error list under the editor (tap to jump to its place).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub line: u32,
    pub column: u32,
    pub message: String,
    pub from: ListedFrom,
}

/// The editor's one error list: naga's errors and the browser compiler's placed errors and
/// warnings of the last run (notes explain another message, and a message without a place
/// has nowhere to jump: both stay in the run's own message list), in the order of their
/// places, naga's first at the same place.
pub fn listed(naga: &[LintError], browser: &[PlacedMessage]) -> Vec<Listed> {
    let mut out: Vec<Listed> = naga
        .iter()
        .map(|e| Listed {
            line: e.line,
            column: e.column,
            message: e.message.clone(),
            from: ListedFrom::Naga,
        })
        .chain(browser.iter().filter(|m| in_list(m)).map(|m| Listed {
            line: m.line,
            column: m.column,
            message: m.message.clone(),
            from: ListedFrom::Browser { warning: m.warning },
        }))
        .collect();
    // A stable sort: naga's entries stay before the browser's at the same place.
    out.sort_by_key(|l| (l.line, l.column));
    out
}

/// Whether the editor's error list ([`listed`]) shows this message of the browser's compiler.
fn in_list(m: &PlacedMessage) -> bool {
    m.line > 0 && !m.note
}

/// The browser compiler's messages the editor's error list does not show (notes, messages
/// without a place): the only ones the run's own message list repeats, so no message is shown
/// twice.
pub fn unlisted(browser: &[PlacedMessage]) -> Vec<PlacedMessage> {
    browser.iter().filter(|m| !in_list(m)).cloned().collect()
}

/// A message of the browser's WGSL compiler that names a place: `:line:column error: text`
/// (how Chromium's compiler writes them into the validation error). Lines and columns are
/// 1-based as the compiler gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedMessage {
    pub line: u32,
    pub column: u32,
    pub message: String,
    /// A warning or note (the code still compiles), not an error.
    pub warning: bool,
    /// A note (the browser's "info"), which explains another message.
    pub note: bool,
}

/// A message of the browser's compiler (from `getCompilationInfo`) placed for the editor:
/// wgpu gives its place as a line and a UTF-8 byte offset; the editor counts UTF-16 code
/// units, so the column is counted again from the line's start (a Chinese comment earlier
/// on the line must not shift it). No place (`byte_offset` None): line and column 0.
pub fn browser_message(
    source: &str,
    line: u32,
    byte_offset: Option<usize>,
    message: &str,
    warning: bool,
) -> PlacedMessage {
    let (line, column) = match byte_offset {
        None => (0, 0),
        Some(b) => {
            let mut b = b.min(source.len());
            while !source.is_char_boundary(b) {
                b -= 1;
            }
            let start = source[..b].rfind('\n').map_or(0, |i| i + 1);
            let col: usize = source[start..b].chars().map(char::len_utf16).sum();
            (line.max(1), col as u32 + 1)
        }
    };
    PlacedMessage {
        line,
        column,
        message: message.trim().to_string(),
        warning,
        note: false,
    }
}

/// A kind of browser compiler error that learners meet often and whose words ("uniform
/// control flow") name a rule the page can explain in plain language beside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompilerHint {
    /// A barrier (or derivative) reached only by some threads: WGSL's uniformity rule.
    Uniformity,
}

impl CompilerHint {
    /// The hint's text key.
    pub fn key(self) -> &'static str {
        match self {
            CompilerHint::Uniformity => "editor.browser.hint.uniformity",
        }
    }
}

/// The hint for the first error among `list` that has one (Chromium's Tint and wgpu's naga
/// both write "uniform control flow" in their uniformity errors).
pub fn compiler_hint(list: &[PlacedMessage]) -> Option<CompilerHint> {
    list.iter()
        .filter(|m| !m.warning)
        .find(|m| m.message.contains("uniform control flow"))
        .map(|_| CompilerHint::Uniformity)
}

/// Finds the placed messages in a shader-compile error text, so the editor can underline
/// them beside naga's own.
pub fn placed_messages(text: &str) -> Vec<PlacedMessage> {
    fn number(s: &str) -> Option<(u32, &str)> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        Some((s[..end].parse().ok()?, &s[end..]))
    }
    // `L:C error: text` at the start of `s`.
    fn placed(s: &str) -> Option<PlacedMessage> {
        let (line, s) = number(s)?;
        let (column, s) = number(s.strip_prefix(':')?)?;
        let s = s.strip_prefix(' ')?;
        let m = s
            .strip_prefix("error:")
            .or_else(|| s.strip_prefix("warning:"))?;
        Some(PlacedMessage {
            line: line.max(1),
            column: column.max(1),
            message: m.trim().to_string(),
            warning: false,
            note: false,
        })
    }
    text.lines()
        .filter_map(|l| l.match_indices(':').find_map(|(i, _)| placed(&l[i + 1..])))
        .collect()
}

/// Where the editor's heading ("Editing …") may start, as a share of the viewport's height,
/// for the page to open at its top: below this the kernel would start out of view.
pub const EDITOR_IN_VIEW: f64 = 0.4;

/// Whether the editor page, just opened, scrolls its heading to the top: when the heading
/// starts below [`EDITOR_IN_VIEW`] of the viewport (on a phone the intro and about 60 stage
/// links come first) or above it (the scroll of the page before), the learner lands on the
/// kernel they asked to edit rather than on the list of the others.
pub fn land_on_editor(heading_top: f64, viewport_height: f64) -> bool {
    viewport_height > 0.0 && (heading_top < 0.0 || heading_top > EDITOR_IN_VIEW * viewport_height)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_scrolls_to_the_editor_only_when_it_starts_out_of_the_way() {
        // A phone, 844 px high: the heading 2,400 px down (after the stage links) is scrolled
        // to; one 300 px down (a laptop, the links in a few rows) is left where it is.
        assert!(land_on_editor(2_400.0, 844.0));
        assert!(!land_on_editor(300.0, 844.0));
        // The bound itself: 40 % of the height.
        assert!(!land_on_editor(400.0, 1_000.0));
        assert!(land_on_editor(400.5, 1_000.0));
        // Above the viewport (the last page's scroll kept): brought back.
        assert!(land_on_editor(-1.0, 844.0));
        assert!(!land_on_editor(0.0, 844.0));
        // No viewport measured (0 or NaN): nothing moves.
        assert!(!land_on_editor(2_400.0, 0.0));
        assert!(!land_on_editor(f64::NAN, 844.0));
    }

    #[test]
    fn a_uniformity_error_gets_its_hint_and_a_warning_does_not() {
        let m = |message: &str, warning| PlacedMessage {
            line: 3,
            column: 5,
            message: message.into(),
            warning,
            note: false,
        };
        let tint = "'workgroupBarrier' must only be called from uniform control flow";
        assert_eq!(
            compiler_hint(&[m(tint, false)]),
            Some(CompilerHint::Uniformity)
        );
        assert_eq!(
            compiler_hint(&[m("unresolved identifier 'x'", false)]),
            None
        );
        assert_eq!(compiler_hint(&[m(tint, true)]), None);
    }

    #[test]
    fn the_error_list_holds_naga_and_the_browsers_placed_messages_in_place_order() {
        let naga = vec![LintError {
            line: 9,
            column: 2,
            message: "naga".into(),
        }];
        let at = |line, warning, note, message: &str| PlacedMessage {
            line,
            column: 5,
            message: message.into(),
            warning,
            note,
        };
        let browser = vec![
            at(12, false, false, "uniformity"),
            at(12, false, true, "explains it"),
            at(0, false, false, "nowhere"),
            at(3, true, false, "unreachable"),
            at(9, false, false, "same line"),
        ];
        let l = listed(&naga, &browser);
        let seen: Vec<(u32, &str, ListedFrom)> = l
            .iter()
            .map(|e| (e.line, e.message.as_str(), e.from))
            .collect();
        assert_eq!(
            seen,
            vec![
                (3, "unreachable", ListedFrom::Browser { warning: true }),
                (9, "naga", ListedFrom::Naga),
                (9, "same line", ListedFrom::Browser { warning: false }),
                (12, "uniformity", ListedFrom::Browser { warning: false }),
            ]
        );
        assert!(listed(&[], &[]).is_empty());
        // The rest, and only the rest, is left for the run's message list: each message is
        // shown once.
        let rest: Vec<String> = unlisted(&browser).into_iter().map(|m| m.message).collect();
        assert_eq!(rest, ["explains it", "nowhere"]);
        assert_eq!(l.len() + rest.len(), browser.len() + naga.len());
    }

    use super::*;
    use cpu_kernels::matmul;

    #[test]
    fn share_codes_round_trip_any_text() {
        for src in [
            "",
            "a",
            "ab",
            "abc",
            "// 中文注释 😀\nfn main() {}\n",
            &"x".repeat(10_000),
        ] {
            let code = share_code(src).expect("fits");
            assert!(code
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            assert_eq!(source_from_code(&code).as_deref(), Ok(src));
        }
    }

    #[test]
    fn a_source_too_big_for_a_link_is_refused_with_its_size() {
        // Pseudo-random text barely compresses.
        let mut x = 12345u32;
        let noisy: String = (0..20_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                char::from(b'!' + ((x >> 16) % 90) as u8)
            })
            .collect();
        match share_code(&noisy) {
            Err(ShareError::TooLong { chars, limit }) => {
                assert!(chars > limit);
                assert_eq!(limit, MAX_SHARE_CHARS);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn damaged_codes_are_corrupt_not_a_panic() {
        let code = share_code("fn main() {}").expect("fits");
        for bad in [
            "!!!",
            "A",
            &code[..code.len() - 2],
            &"A".repeat(MAX_SHARE_CHARS + 1),
        ] {
            assert_eq!(source_from_code(bad), Err(ShareError::Corrupt), "{bad}");
        }
        // A deflate bomb is cut at the limit.
        let bomb = base64url(&miniz_oxide::deflate::compress_to_vec(
            &vec![b'a'; MAX_SOURCE_BYTES + 1],
            9,
        ));
        assert_eq!(source_from_code(&bomb), Err(ShareError::Corrupt));
    }

    #[test]
    fn binding_problems_have_a_sentence_each() {
        let p = |kind: &str| BindingProblem {
            kind: kind.into(),
            fields: vec![("binding", "3".into())],
        };
        for kind in [
            "no_entry",
            "extra",
            "missing",
            "wrong_class",
            "read_only_output",
            "uniform_too_large",
        ] {
            assert_eq!(p(kind).key(), format!("editor.bind.{kind}"));
        }
        assert_eq!(p("new").key(), "editor.bind.other");
        assert_eq!(p("extra").args(), vec![("binding", "3")]);
    }

    #[test]
    fn browser_messages_count_utf16_columns() {
        // Line 2 holds 4 Chinese characters (12 bytes, 4 UTF-16 units) before `x`.
        let src = "fn f() {\n/*矩阵乘法*/x\n}";
        let x = src.find('x').expect("x");
        let m = browser_message(src, 2, Some(x), " unknown identifier ", false);
        assert_eq!(
            (m.line, m.column, m.message.as_str()),
            (2, 9, "unknown identifier")
        );
        // Inside a character, past the end, or without a place: clamped, never a panic.
        assert_eq!(browser_message(src, 2, Some(x - 1), "", true).column, 8);
        assert_eq!(browser_message(src, 3, Some(10_000), "", true).column, 2);
        assert_eq!(
            (
                browser_message(src, 7, None, "", true).line,
                browser_message(src, 7, None, "", true).column
            ),
            (0, 0)
        );
    }

    #[test]
    fn browser_compiler_messages_are_placed() {
        let text = "Shader validation error: \n  ┌─ :3:18\nError while parsing WGSL: :3:18 error: expected expression\n    let x = 1.0 +;\n";
        assert_eq!(
            placed_messages(text),
            vec![PlacedMessage {
                line: 3,
                column: 18,
                message: "expected expression".into(),
                warning: false,
                note: false,
            }]
        );
        assert_eq!(placed_messages("no place here: 12: not a number"), vec![]);
        assert_eq!(placed_messages(""), vec![]);
    }

    #[test]
    fn differences_name_the_wrong_elements_in_order() {
        let size = MatmulSize::new(3, 4, 5);
        let (a, b) = size.inputs(7);
        let reference = matmul::reference(size, &a, &b);
        let mut got: Vec<f32> = reference.value.iter().map(|&v| v as f32).collect();
        assert_eq!(
            differences(size, &got, &reference, Precision::F32, 4).wrong,
            0
        );
        got[6] += 1.0; // row 1, col 2
        got[11] = f32::NAN; // row 2, col 3
        let d = differences(size, &got, &reference, Precision::F32, 1);
        assert_eq!(d.wrong, 2);
        assert_eq!(d.first.len(), 1);
        assert_eq!(
            (d.first[0].index, d.first[0].label.as_str()),
            (6, "C[1][2]")
        );
        assert_eq!(d.first[0].expected, reference.value[6]);
        assert_eq!(d.map.marked(), 2);
        assert_eq!((d.map.rows, d.map.cols), (3, 4));
        assert_eq!(d.map.wrong[6], 1);
        // A short output counts its missing elements as wrong.
        assert_eq!(
            differences(size, &got[..10], &reference, Precision::F32, 8).wrong,
            3
        );
    }
}
