//! Checks WGSL source with naga (parse + validate) and reports each problem as a span the
//! editor can draw: naga counts bytes, CodeMirror counts UTF-16 code units, so every position
//! is converted here (a Chinese comment before an error must not shift its column).

#[cfg(target_arch = "wasm32")]
mod web;

/// One problem in the source. Offsets and columns are in UTF-16 code units (what a browser
/// text editor counts); lines and columns are 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub from: usize,
    pub to: usize,
    pub line: usize,
    pub column: usize,
    /// naga's message, with the span's own label when it adds something.
    pub message: String,
}

/// Where a byte offset lands, in the units an editor uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// UTF-16 offset from the start of the text.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in UTF-16 code units.
    pub column: usize,
}

/// Converts a byte offset into `source` (clamped to the text and to a char boundary) into an
/// editor position.
pub fn position(source: &str, byte: usize) -> Position {
    let mut byte = byte.min(source.len());
    while !source.is_char_boundary(byte) {
        byte -= 1;
    }
    let before = &source[..byte];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let utf16 = |s: &str| s.chars().map(char::len_utf16).sum::<usize>();
    Position {
        offset: utf16(before),
        line: before.matches('\n').count() + 1,
        column: utf16(&before[line_start..]) + 1,
    }
}

fn diagnostic(source: &str, range: Option<std::ops::Range<usize>>, message: String) -> Diagnostic {
    let range = range.unwrap_or(0..0);
    let start = position(source, range.start);
    let end = position(source, range.end.max(range.start));
    Diagnostic {
        from: start.offset,
        to: end.offset,
        line: start.line,
        column: start.column,
        message,
    }
}

fn with_label(message: &str, label: &str) -> String {
    if label.is_empty() || label == message {
        message.to_string()
    } else {
        format!("{message} ({label})")
    }
}

/// Parses and validates `source`. Empty when naga accepts it. A parse error gives one
/// diagnostic per labelled span (the first is the main one); a validation error one per span
/// naga attaches, with the error's whole cause chain as the message.
pub fn check(source: &str) -> Vec<Diagnostic> {
    let module = match naga::front::wgsl::parse_str(source) {
        Ok(m) => m,
        Err(e) => {
            let mut out: Vec<Diagnostic> = e
                .labels()
                .map(|(span, label)| {
                    diagnostic(source, span.to_range(), with_label(e.message(), label))
                })
                .collect();
            if out.is_empty() {
                out.push(diagnostic(source, None, e.message().to_string()));
            }
            return out;
        }
    };
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    );
    match validator.validate(&module) {
        Ok(_) => Vec::new(),
        Err(e) => {
            let mut message = e.as_inner().to_string();
            let mut cause = std::error::Error::source(e.as_inner());
            while let Some(c) = cause {
                message.push_str(": ");
                message.push_str(&c.to_string());
                cause = c.source();
            }
            let mut out: Vec<Diagnostic> = e
                .spans()
                .map(|(span, label)| {
                    diagnostic(source, span.to_range(), with_label(&message, label))
                })
                .collect();
            if out.is_empty() {
                out.push(diagnostic(source, None, message));
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "@group(0) @binding(0) var<storage, read_write> a: array<f32>;\n\
        @compute @workgroup_size(64)\n\
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n\
            if (id.x < arrayLength(&a)) { a[id.x] = a[id.x] * 2.0; }\n\
        }\n";

    #[test]
    fn valid_source_has_no_diagnostics() {
        assert_eq!(check(GOOD), Vec::new());
    }

    #[test]
    fn positions_count_utf16_units_not_bytes() {
        // "// 矩阵乘法\n" is 3 + 12 + 1 bytes but 3 + 4 + 1 UTF-16 units; "😀" is 4 bytes, 2 units.
        let s = "// 矩阵乘法\nx😀y";
        let y = s.find('y').unwrap_or(0);
        assert_eq!(
            position(s, y),
            Position {
                offset: 8 + 3,
                line: 2,
                column: 4
            }
        );
        assert_eq!(
            position(s, 0),
            Position {
                offset: 0,
                line: 1,
                column: 1
            }
        );
        // Past the end and inside a character: clamped, never a panic.
        assert_eq!(position(s, 10_000).offset, 8 + 4);
        assert_eq!(position(s, 4).column, 4); // inside 矩 → its start
    }

    #[test]
    fn syntax_error_after_chinese_comment_lands_on_its_line_and_column() {
        // Line 3 is `    let x = 1.0 +;` — the `;` after `+` is unexpected, at column 18.
        let src = "// 每个线程把一个元素乘以二（中文注释）\n\
                   fn f() {\n    let x = 1.0 +;\n}\n";
        let d = check(src);
        assert!(!d.is_empty(), "a syntax error must be reported");
        let first = &d[0];
        assert_eq!((first.line, first.column), (3, 18), "{first:?}");
        let line3_start: usize = src
            .lines()
            .take(2)
            .map(|l| l.encode_utf16().count() + 1)
            .sum();
        assert_eq!(first.from, line3_start + 17);
        assert_eq!(first.to, first.from + 1);
        assert!(!first.message.is_empty());
    }

    #[test]
    fn validation_error_names_the_problem_with_a_span() {
        // Assigning a u32 to an f32 element type-checks in the validator (or the front end);
        // either way there is a span on line 4.
        let src = "// 中文\n@group(0) @binding(0) var<storage, read_write> a: array<f32>;\n\
                   @compute @workgroup_size(1)\n\
                   fn main() { a[0] = 1u; }\n";
        let d = check(src);
        assert!(!d.is_empty());
        assert_eq!(d[0].line, 4, "{d:?}");
    }

    #[test]
    fn empty_and_garbage_input_never_panic() {
        let _ = check("");
        let _ = check("\u{0}\u{ffff}😀 @@@ {{{{");
        let _ = check(&"(".repeat(10_000));
    }
}
