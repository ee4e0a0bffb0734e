//! Checks WGSL source with naga (parse + validate) and reports each problem as a span the
//! editor can draw: naga counts bytes, CodeMirror counts UTF-16 code units, so every position
//! is converted here (a Chinese comment before an error must not shift its column).

pub mod instrument;
pub use instrument::{instrument, Instrumented, LoggedArray};
pub mod loop_budget;
pub use loop_budget::{budget_loops, LoopBudget};
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

/// `message` with `label` after it in brackets, unless the label says nothing the message
/// does not already say (naga's "expected `;`, found \"let\"" is labelled "expected `;`").
fn with_label(message: &str, label: &str) -> String {
    let label = label.trim();
    if label.is_empty() || message.contains(label) {
        message.to_string()
    } else {
        format!("{message} ({label})")
    }
}

/// For an "expected X, found Y" parse error whose span (the token found) starts on a later
/// line than the token before it, the byte range of that earlier token's last character: the
/// place where X is missing, on the line the learner must fix. None otherwise (the span is
/// kept). Line comments between the two are skipped.
fn missing_at(source: &str, message: &str, start: usize) -> Option<std::ops::Range<usize>> {
    if !(message.starts_with("expected ") && message.contains(", found ")) {
        return None;
    }
    let start = start.min(source.len());
    let before = source.get(..start)?;
    let own_line = before.rfind('\n').map_or(0, |i| i + 1);
    if !before[own_line..].trim().is_empty() {
        return None; // another token before it on its own line
    }
    let mut end = own_line;
    while end > 0 {
        let line_end = end - 1; // the '\n' ending the previous line
        let line_start = source[..line_end].rfind('\n').map_or(0, |i| i + 1);
        let text = &source[line_start..line_end];
        let code = text.find("//").map_or(text, |i| &text[..i]).trim_end();
        if let Some(last) = code.chars().last() {
            let to = line_start + code.len();
            return Some(to - last.len_utf8()..to);
        }
        end = line_start;
    }
    None
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
                    let range = span.to_range();
                    let range = range
                        .as_ref()
                        .and_then(|r| missing_at(source, e.message(), r.start))
                        .or(range);
                    diagnostic(source, range, with_label(e.message(), label))
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

/// How a resource is bound, as far as a bind group cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A storage buffer; `write` when the shader may write it (`read_write`).
    Storage {
        write: bool,
    },
    Uniform,
    /// Anything else bound to a slot (textures, samplers): the kernels here have none.
    Other,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Storage { write: false } => "storage, read",
            Class::Storage { write: true } => "storage, read_write",
            Class::Uniform => "uniform",
            Class::Other => "other",
        }
    }
}

/// One resource an entry point uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub group: u32,
    pub binding: u32,
    pub name: String,
    pub class: Class,
    /// Bytes of its type (a runtime-sized array: one element).
    pub size: u32,
}

/// What a pipeline built from this module needs: whether `entry` is a compute entry point,
/// the compute entry points there are, and the resources `entry` uses (an unused
/// declaration is left out of the layout wgpu derives, exactly like the browser does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    pub compute_entries: Vec<String>,
    pub has_entry: bool,
    pub resources: Vec<Resource>,
}

/// The interface of `source` for entry point `entry`; None when naga rejects the source
/// (its diagnostics say why).
pub fn interface(source: &str, entry: &str) -> Option<Interface> {
    let module = naga::front::wgsl::parse_str(source).ok()?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .ok()?;
    let compute = |e: &naga::EntryPoint| matches!(e.stage, naga::ShaderStage::Compute);
    let compute_entries = module
        .entry_points
        .iter()
        .filter(|e| compute(e))
        .map(|e| e.name.clone())
        .collect();
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry && compute(e));
    let mut resources = Vec::new();
    if let Some(i) = index {
        let uses = info.get_entry_point(i);
        for (h, g) in module.global_variables.iter() {
            let Some(b) = &g.binding else { continue };
            if uses[h].is_empty() {
                continue;
            }
            let class = match g.space {
                naga::AddressSpace::Storage { access } => Class::Storage {
                    write: access.contains(naga::StorageAccess::STORE),
                },
                naga::AddressSpace::Uniform => Class::Uniform,
                _ => Class::Other,
            };
            resources.push(Resource {
                group: b.group,
                binding: b.binding,
                name: g.name.clone().unwrap_or_default(),
                class,
                size: module.types[g.ty].inner.size(module.to_ctx()),
            });
        }
    }
    resources.sort_by_key(|r| (r.group, r.binding));
    Some(Interface {
        compute_entries,
        has_entry: index.is_some(),
        resources,
    })
}

/// The words of the uniform block `entry` binds, one name per 32-bit word in memory order: a
/// scalar member's own name, a vector's or array's name once per word it holds, padding the
/// struct's layout adds as `""`. None when naga rejects the source, `entry` binds no uniform,
/// or the uniform is not a struct. A planner fills the block by these names, so a test can
/// hold the two together.
pub fn uniform_words(source: &str, entry: &str) -> Option<Vec<String>> {
    let module = naga::front::wgsl::parse_str(source).ok()?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .ok()?;
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry && matches!(e.stage, naga::ShaderStage::Compute))?;
    let uses = info.get_entry_point(index);
    let (_, g) = module.global_variables.iter().find(|(h, g)| {
        g.binding.is_some()
            && matches!(g.space, naga::AddressSpace::Uniform)
            && !uses[*h].is_empty()
    })?;
    let naga::TypeInner::Struct { members, span } = &module.types[g.ty].inner else {
        return None;
    };
    let mut words = vec![String::new(); (*span / 4) as usize];
    for m in members {
        let name = m.name.clone().unwrap_or_default();
        let bytes = module.types[m.ty].inner.size(module.to_ctx());
        for w in (m.offset / 4)..((m.offset + bytes) / 4) {
            if let Some(slot) = words.get_mut(w as usize) {
                slot.clone_from(&name);
            }
        }
    }
    Some(words)
}

/// Why an edited kernel cannot run where the original ran, in terms the learner can fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// No compute entry point called `entry`; the compute entry points found.
    NoEntry { entry: String, found: Vec<String> },
    /// The shader uses a slot the kernel does not provide; `provided` lists what it does.
    Extra {
        group: u32,
        binding: u32,
        name: String,
        provided: String,
    },
    /// The kernel binds a buffer there but the shader does not use it (or does not declare it).
    Missing { binding: u32, name: String },
    /// Declared with another kind of buffer than the kernel binds there.
    WrongClass {
        binding: u32,
        name: String,
        expected: Class,
        got: Class,
    },
    /// The kernel reads its result from this buffer, but the shader declares it read-only.
    ReadOnlyOutput { binding: u32, name: String },
    /// A uniform larger than the one the kernel fills.
    UniformTooLarge {
        binding: u32,
        name: String,
        bytes: u32,
        provided: u32,
    },
}

/// "0 a (storage, read), 1 b (storage, read), …": what the original binds.
fn provided(original: &Interface) -> String {
    original
        .resources
        .iter()
        .map(|r| format!("{} {} ({})", r.binding, r.name, r.class.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares an edited module's interface with the original's (which is exactly what the
/// kernel's plan binds, since the original runs with it). Empty when they fit.
pub fn mismatches(original: &Interface, edited: &Interface, entry: &str) -> Vec<Mismatch> {
    if !edited.has_entry {
        return vec![Mismatch::NoEntry {
            entry: entry.to_string(),
            found: edited.compute_entries.clone(),
        }];
    }
    let mut out = Vec::new();
    let slot = |r: &Resource| (r.group, r.binding);
    for e in &edited.resources {
        match original.resources.iter().find(|o| slot(o) == slot(e)) {
            None => out.push(Mismatch::Extra {
                group: e.group,
                binding: e.binding,
                name: e.name.clone(),
                provided: provided(original),
            }),
            Some(o) => {
                let kind = |c: Class| std::mem::discriminant(&c);
                if kind(o.class) != kind(e.class) {
                    out.push(Mismatch::WrongClass {
                        binding: e.binding,
                        name: e.name.clone(),
                        expected: o.class,
                        got: e.class,
                    });
                } else if o.class == (Class::Storage { write: true })
                    && e.class == (Class::Storage { write: false })
                {
                    out.push(Mismatch::ReadOnlyOutput {
                        binding: e.binding,
                        name: e.name.clone(),
                    });
                } else if o.class == Class::Uniform && e.size > o.size {
                    out.push(Mismatch::UniformTooLarge {
                        binding: e.binding,
                        name: e.name.clone(),
                        bytes: e.size,
                        provided: o.size,
                    });
                }
            }
        }
    }
    for o in &original.resources {
        if !edited.resources.iter().any(|e| slot(e) == slot(o)) {
            out.push(Mismatch::Missing {
                binding: o.binding,
                name: o.name.clone(),
            });
        }
    }
    out
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
    fn uniform_words_name_every_word_in_memory_order() {
        let src = "struct U { n: u32, v: vec2<f32>, s: f32, t: array<vec4<u32>, 2> }\n\
            @group(0) @binding(0) var<storage, read_write> a: array<f32>;\n\
            @group(0) @binding(1) var<uniform> u: U;\n\
            @group(0) @binding(2) var<uniform> unused: U;\n\
            @compute @workgroup_size(64)\n\
            fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n\
                a[id.x] = f32(u.n) + u.v.x + u.s + f32(u.t[1].y);\n\
            }\n";
        // v is 8-byte aligned (a padding word after n); t is 16-byte aligned (one after s).
        let words = uniform_words(src, "main").unwrap_or_default();
        let mut want = vec!["n", "", "v", "v", "s", "", "", ""];
        want.extend(["t"; 8]);
        assert_eq!(words, want);
        assert_eq!(uniform_words(GOOD, "main"), None);
        assert_eq!(uniform_words(src, "other"), None);
    }

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
    fn a_missing_semicolon_is_reported_on_its_own_line_and_said_once() {
        // Line 3 lacks its `;`; naga's span is the `let` on line 4 (after a comment line).
        let src = "// 中文\nfn f() {\n    let x = 1.0\n    // 注释\n    let y = 2.0;\n}\n";
        let d = check(src);
        assert!(!d.is_empty(), "a syntax error must be reported");
        let first = &d[0];
        assert_eq!(first.line, 3, "{first:?}");
        assert_eq!(first.column, "    let x = 1.".len() + 1, "{first:?}");
        assert_eq!(first.to, first.from + 1, "{first:?}");
        assert!(first.message.contains("expected `;`"), "{first:?}");
        assert_eq!(
            first.message.matches("expected `;`").count(),
            1,
            "said once: {first:?}"
        );
        // The same error on one line keeps naga's span (the token found).
        let d = check("fn f() { let x = 1.0 let y = 2.0; }\n");
        assert_eq!((d[0].line, d[0].column), (1, 22), "{:?}", d[0]);
        assert_eq!(
            d[0].message.matches("expected `;`").count(),
            1,
            "{:?}",
            d[0]
        );
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

    const MATMUL: &str = "struct D { m: u32, n: u32, k: u32, p: u32 }\n\
        @group(0) @binding(0) var<storage, read> a: array<f32>;\n\
        @group(0) @binding(1) var<storage, read> b: array<f32>;\n\
        @group(0) @binding(2) var<storage, read_write> c: array<f32>;\n\
        @group(0) @binding(3) var<uniform> d: D;\n\
        @compute @workgroup_size(8)\n\
        fn main(@builtin(global_invocation_id) g: vec3<u32>) { c[g.x] = a[g.x] * b[g.x] + f32(d.m); }\n";

    fn mism(edited: &str) -> Vec<Mismatch> {
        let o = interface(MATMUL, "main").expect("original");
        let e = interface(edited, "main").expect("edited");
        mismatches(&o, &e, "main")
    }

    #[test]
    fn the_original_fits_itself() {
        let i = interface(MATMUL, "main").expect("valid");
        assert_eq!(i.resources.len(), 4);
        assert_eq!(i.resources[3].class, Class::Uniform);
        assert_eq!(i.resources[3].size, 16);
        assert_eq!(mismatches(&i, &i, "main"), vec![]);
        assert_eq!(interface("fn f( {", "main"), None);
    }

    #[test]
    fn a_wrong_binding_number_names_what_is_provided() {
        let m = mism(&MATMUL.replace("@binding(2)", "@binding(4)"));
        assert_eq!(
            m,
            vec![
                Mismatch::Extra {
                    group: 0,
                    binding: 4,
                    name: "c".into(),
                    provided: "0 a (storage, read), 1 b (storage, read), 2 c (storage, read_write), 3 d (uniform)".into()
                },
                Mismatch::Missing {
                    binding: 2,
                    name: "c".into()
                }
            ]
        );
    }

    #[test]
    fn entry_points_types_and_unused_buffers_are_named() {
        assert_eq!(
            mism(&MATMUL.replace("fn main", "fn go")),
            vec![Mismatch::NoEntry {
                entry: "main".into(),
                found: vec!["go".into()]
            }]
        );
        let m = mism(
            &MATMUL
                .replace(
                    "var<storage, read> b: array<f32>",
                    "var<uniform> b: vec4<f32>",
                )
                .replace("b[g.x]", "b.x"),
        );
        assert!(
            matches!(
                &m[..],
                [Mismatch::WrongClass {
                    binding: 1,
                    expected: Class::Storage { write: false },
                    got: Class::Uniform,
                    ..
                }]
            ),
            "{m:?}"
        );
        // b no longer read: the kernel still binds it.
        let m = mism(&MATMUL.replace("* b[g.x]", ""));
        assert_eq!(
            m,
            vec![Mismatch::Missing {
                binding: 1,
                name: "b".into()
            }]
        );
        let m = mism(&MATMUL.replace(
            "struct D { m: u32, n: u32, k: u32, p: u32 }",
            "struct D { m: u32, n: u32, k: u32, p: u32, q: vec4<u32> }",
        ));
        assert_eq!(
            m,
            vec![Mismatch::UniformTooLarge {
                binding: 3,
                name: "d".into(),
                bytes: 32,
                provided: 16
            }]
        );
    }

    #[test]
    fn empty_and_garbage_input_never_panic() {
        let _ = check("");
        let _ = check("\u{0}\u{ffff}😀 @@@ {{{{");
        let _ = check(&"(".repeat(10_000));
    }
}
