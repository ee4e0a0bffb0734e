//! Scratch mode (`#/editor?scratch`) without DOM or GPU: the buffers a learner declares (name,
//! element type, length, initial values), each field checked with a named error; the WGSL
//! declarations they imply (kept between two marker lines of the source); the dispatch size;
//! the initial bytes; and the whole setup as text for drafts and share links.

/// At most this many buffers (WebGPU guarantees 8 storage buffers per shader stage).
pub const MAX_BUFFERS: usize = 8;
/// Longest buffer, in elements (4 MiB): every element is shown or drawn.
pub const MAX_LEN: u32 = 1 << 20;
/// WebGPU's guaranteed maximum of workgroups per dimension.
pub const MAX_GROUPS: u32 = 65_535;
/// At most this many workgroups in all (x·y·z). Each axis may be 65,535, but 65,535² groups
/// of a loop-free kernel keep a software GPU busy for minutes, and work already submitted
/// cannot be taken back (the watchdog drops the device; the GPU process still finishes the
/// dispatch, and the next run waits behind it). 2²⁰ groups of up to 256 threads each is
/// 268 M invocations: seconds on a software adapter.
pub const MAX_TOTAL_GROUPS: u64 = 1 << 20;

pub const BEGIN: &str = "// buffers:begin";
pub const END: &str = "// buffers:end";

/// The element type of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    F32,
    I32,
    U32,
}

impl ElemType {
    pub const ALL: [ElemType; 3] = [ElemType::F32, ElemType::I32, ElemType::U32];

    pub fn code(self) -> &'static str {
        match self {
            ElemType::F32 => "f32",
            ElemType::I32 => "i32",
            ElemType::U32 => "u32",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.code() == s)
    }

    /// One element's value from its bits, as text.
    pub fn show(self, bits: u32) -> String {
        match self {
            ElemType::F32 => {
                let v = f32::from_bits(bits);
                if v.is_finite() && v == v.trunc() && v.abs() < 1e7 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.4}")
                }
            }
            ElemType::I32 => (bits as i32).to_string(),
            ElemType::U32 => bits.to_string(),
        }
    }

    /// One element's value from its bits, as a number (for the heatmap's scale).
    pub fn value(self, bits: u32) -> f64 {
        match self {
            ElemType::F32 => f64::from(f32::from_bits(bits)),
            ElemType::I32 => f64::from(bits as i32),
            ElemType::U32 => f64::from(bits),
        }
    }
}

/// How a buffer starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitKind {
    Zeros,
    /// 0, 1, 2, …
    Ramp,
    /// Seeded pseudo-random values: f32 in [−1, 1), i32 in [−100, 100), u32 in [0, 256).
    Random,
    /// The values pasted into the buffer's text field.
    List,
}

impl InitKind {
    pub const ALL: [InitKind; 4] = [
        InitKind::Zeros,
        InitKind::Ramp,
        InitKind::Random,
        InitKind::List,
    ];

    pub fn code(self) -> &'static str {
        match self {
            InitKind::Zeros => "zeros",
            InitKind::Ramp => "ramp",
            InitKind::Random => "random",
            InitKind::List => "list",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.code() == s)
    }
}

/// One buffer as typed in the table: text fields are kept as typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDecl {
    pub name: String,
    pub ty: ElemType,
    pub len: String,
    pub init: InitKind,
    /// The seed (random) or the pasted values (list); unused otherwise.
    pub arg: String,
}

/// The whole scratch setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scratch {
    pub buffers: Vec<BufferDecl>,
    pub groups: [String; 3],
    pub source: String,
}

/// A bad field, named, with the value as typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScratchError {
    NoBuffers,
    TooManyBuffers {
        max: usize,
    },
    /// Buffer number `index` (1-based) has no name.
    NameEmpty {
        index: usize,
    },
    /// Not a WGSL identifier, or a word WGSL or this page reserves.
    NameInvalid {
        name: String,
    },
    NameDuplicate {
        name: String,
    },
    /// The length is not a whole number from 1 to [`MAX_LEN`].
    Length {
        name: String,
        value: String,
    },
    Seed {
        name: String,
        value: String,
    },
    /// The `position`-th (1-based) pasted value is not a number of the buffer's type.
    ListValue {
        name: String,
        position: usize,
        value: String,
        ty: &'static str,
    },
    /// The list has `got` values but the buffer `want`.
    ListCount {
        name: String,
        got: usize,
        want: u32,
    },
    /// Workgroups along `axis` (x, y, z) not a whole number from 1 to [`MAX_GROUPS`].
    Groups {
        axis: &'static str,
        value: String,
    },
    /// Every axis is valid but x·y·z is over [`MAX_TOTAL_GROUPS`].
    GroupsTotal {
        total: u64,
    },
}

impl ScratchError {
    /// Translation key of its sentence (`scratch.err.*`).
    pub fn key(&self) -> &'static str {
        match self {
            ScratchError::NoBuffers => "scratch.err.no_buffers",
            ScratchError::TooManyBuffers { .. } => "scratch.err.too_many",
            ScratchError::NameEmpty { .. } => "scratch.err.name_empty",
            ScratchError::NameInvalid { .. } => "scratch.err.name_invalid",
            ScratchError::NameDuplicate { .. } => "scratch.err.name_duplicate",
            ScratchError::Length { .. } => "scratch.err.length",
            ScratchError::Seed { .. } => "scratch.err.seed",
            ScratchError::ListValue { .. } => "scratch.err.list_value",
            ScratchError::ListCount { .. } => "scratch.err.list_count",
            ScratchError::Groups { .. } => "scratch.err.groups",
            ScratchError::GroupsTotal { .. } => "scratch.err.groups_total",
        }
    }

    /// Its sentence's arguments.
    pub fn args(&self) -> Vec<(&'static str, String)> {
        match self {
            ScratchError::NoBuffers => vec![],
            ScratchError::TooManyBuffers { max } => vec![("max", max.to_string())],
            ScratchError::NameEmpty { index } => vec![("index", index.to_string())],
            ScratchError::NameInvalid { name } | ScratchError::NameDuplicate { name } => {
                vec![("name", name.clone())]
            }
            ScratchError::Length { name, value } => vec![
                ("name", name.clone()),
                ("value", value.clone()),
                ("max", MAX_LEN.to_string()),
            ],
            ScratchError::Seed { name, value } => {
                vec![("name", name.clone()), ("value", value.clone())]
            }
            ScratchError::ListValue {
                name,
                position,
                value,
                ty,
            } => vec![
                ("name", name.clone()),
                ("position", position.to_string()),
                ("value", value.clone()),
                ("type", ty.to_string()),
            ],
            ScratchError::ListCount { name, got, want } => vec![
                ("name", name.clone()),
                ("got", got.to_string()),
                ("want", want.to_string()),
            ],
            ScratchError::Groups { axis, value } => vec![
                ("axis", axis.to_string()),
                ("value", value.clone()),
                ("max", numbers::count(u64::from(MAX_GROUPS))),
            ],
            ScratchError::GroupsTotal { total } => vec![
                ("total", numbers::count(*total)),
                ("max", numbers::count(MAX_TOTAL_GROUPS)),
            ],
        }
    }
}

/// Words a buffer may not be called: WGSL's keywords and types that a learner might pick,
/// and the entry point's name.
const RESERVED: &[&str] = &[
    "main",
    "fn",
    "let",
    "var",
    "const",
    "override",
    "if",
    "else",
    "for",
    "loop",
    "while",
    "return",
    "break",
    "continue",
    "switch",
    "case",
    "default",
    "struct",
    "true",
    "false",
    "array",
    "atomic",
    "bool",
    "f16",
    "f32",
    "i32",
    "u32",
    "vec2",
    "vec3",
    "vec4",
    "mat2x2",
    "mat3x3",
    "mat4x4",
    "ptr",
    "sampler",
    "texture_2d",
    "enable",
    "requires",
    "diagnostic",
    "discard",
    "alias",
    "const_assert",
    "continuing",
    "fallthrough",
    "function",
    "private",
    "storage",
    "uniform",
    "workgroup",
    "read",
    "write",
    "read_write",
    "self",
    "null",
];

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
        && !name.starts_with("__")
        && !RESERVED.contains(&name)
}

/// splitmix64: the seeded values of a random buffer.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A buffer ready to upload: its name, type and initial elements as bits.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadyBuffer {
    pub name: String,
    pub ty: ElemType,
    pub bits: Vec<u32>,
}

/// Everything checked: the buffers' initial contents and the workgroups to dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Ready {
    pub buffers: Vec<ReadyBuffer>,
    pub groups: [u32; 3],
}

fn initial(d: &BufferDecl, len: u32) -> Result<Vec<u32>, ScratchError> {
    let n = len as usize;
    Ok(match d.init {
        InitKind::Zeros => vec![0; n],
        InitKind::Ramp => (0..len)
            .map(|i| match d.ty {
                ElemType::F32 => (i as f32).to_bits(),
                ElemType::I32 | ElemType::U32 => i,
            })
            .collect(),
        InitKind::Random => {
            let mut state: u64 = d.arg.trim().parse().map_err(|_| ScratchError::Seed {
                name: d.name.clone(),
                value: d.arg.clone(),
            })?;
            (0..n)
                .map(|_| {
                    let r = splitmix(&mut state);
                    match d.ty {
                        ElemType::F32 => {
                            ((r >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0).to_bits()
                        }
                        ElemType::I32 => ((r % 200) as i32 - 100) as u32,
                        ElemType::U32 => (r % 256) as u32,
                    }
                })
                .collect()
        }
        InitKind::List => {
            let words: Vec<&str> = d
                .arg
                .split(|c: char| c == ',' || c.is_whitespace() || c == ';')
                .filter(|w| !w.is_empty())
                .collect();
            if words.len() != n {
                return Err(ScratchError::ListCount {
                    name: d.name.clone(),
                    got: words.len(),
                    want: len,
                });
            }
            let mut out = Vec::with_capacity(n);
            for (i, w) in words.iter().enumerate() {
                let v = match d.ty {
                    ElemType::F32 => w
                        .parse::<f32>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .map(f32::to_bits),
                    ElemType::I32 => w.parse::<i32>().ok().map(|v| v as u32),
                    ElemType::U32 => w.parse::<u32>().ok(),
                };
                out.push(v.ok_or_else(|| ScratchError::ListValue {
                    name: d.name.clone(),
                    position: i + 1,
                    value: w.chars().take(24).collect(),
                    ty: d.ty.code(),
                })?);
            }
            out
        }
    })
}

/// Checks every field; all the errors, not just the first, so the learner sees each at once.
pub fn check(buffers: &[BufferDecl], groups: &[String; 3]) -> Result<Ready, Vec<ScratchError>> {
    let mut errors = Vec::new();
    if buffers.is_empty() {
        errors.push(ScratchError::NoBuffers);
    }
    if buffers.len() > MAX_BUFFERS {
        errors.push(ScratchError::TooManyBuffers { max: MAX_BUFFERS });
    }
    let mut ready = Vec::new();
    for (i, d) in buffers.iter().enumerate() {
        let name = d.name.trim();
        if name.is_empty() {
            errors.push(ScratchError::NameEmpty { index: i + 1 });
        } else if !valid_name(name) {
            errors.push(ScratchError::NameInvalid {
                name: name.chars().take(40).collect(),
            });
        } else if buffers[..i].iter().any(|o| o.name.trim() == name) {
            errors.push(ScratchError::NameDuplicate { name: name.into() });
        }
        let len = match d.len.trim().parse::<u32>() {
            Ok(l) if (1..=MAX_LEN).contains(&l) => l,
            _ => {
                errors.push(ScratchError::Length {
                    name: d.name.clone(),
                    value: d.len.chars().take(24).collect(),
                });
                continue;
            }
        };
        match initial(d, len) {
            Ok(bits) => ready.push(ReadyBuffer {
                name: name.to_string(),
                ty: d.ty,
                bits,
            }),
            Err(e) => errors.push(e),
        }
    }
    let mut g = [1u32; 3];
    for (i, axis) in ["x", "y", "z"].into_iter().enumerate() {
        match groups[i].trim().parse::<u32>() {
            Ok(v) if (1..=MAX_GROUPS).contains(&v) => g[i] = v,
            _ => errors.push(ScratchError::Groups {
                axis,
                value: groups[i].chars().take(24).collect(),
            }),
        }
    }
    let total = g.iter().map(|&v| u64::from(v)).product::<u64>();
    if total > MAX_TOTAL_GROUPS {
        errors.push(ScratchError::GroupsTotal { total });
    }
    if errors.is_empty() {
        Ok(Ready {
            buffers: ready,
            groups: g,
        })
    } else {
        Err(errors)
    }
}

/// The comments of the starter and of the declaration block, in the page's language: they
/// come from the translation files (`scratch.starter.*`), so a learner reading Chinese gets
/// Chinese comments in the code too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments {
    /// The starter's first line (without `// `).
    pub intro: String,
    /// After the begin marker: where the declarations come from (without a leading space).
    pub table_note: String,
}

/// `text` as comment lines, one `// ` line per line of it.
fn comment(text: &str) -> String {
    text.lines().map(|l| format!("// {l}\n")).collect()
}

/// The WGSL declarations of the buffers (binding i = the i-th row of the table), between
/// the marker lines.
pub fn declarations(buffers: &[BufferDecl], c: &Comments) -> String {
    let mut s = String::from(BEGIN);
    // The marker line stays one line: the note is cut at its first line break.
    let note = c.table_note.lines().next().unwrap_or_default();
    if !note.is_empty() {
        s.push(' ');
        s.push_str(note);
    }
    s.push('\n');
    for (i, d) in buffers.iter().enumerate() {
        s.push_str(&format!(
            "@group(0) @binding({i}) var<storage, read_write> {}: array<{}>;\n",
            d.name.trim(),
            d.ty.code()
        ));
    }
    s.push_str(END);
    s
}

/// `source` with its declaration block replaced by `block` (or `block` put first when the
/// markers are gone).
pub fn with_declarations(source: &str, block: &str) -> String {
    if let (Some(b), Some(e)) = (source.find(BEGIN), source.find(END)) {
        if b < e {
            return format!("{}{block}{}", &source[..b], &source[e + END.len()..]);
        }
    }
    format!("{block}\n{source}")
}

/// The starting setup: one f32 buffer `data` with a ramp, doubled by 64-thread workgroups.
pub fn starter(c: &Comments) -> Scratch {
    let buffers = vec![BufferDecl {
        name: "data".into(),
        ty: ElemType::F32,
        len: "256".into(),
        init: InitKind::Ramp,
        arg: String::new(),
    }];
    let source = format!(
        "{}{}\n\n\
         @compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    \
         let i = id.x;\n    \
         if (i < arrayLength(&data)) {{\n        \
         data[i] = data[i] * 2.0;\n    \
         }}\n\
         }}\n",
        comment(&c.intro),
        declarations(&buffers, c)
    );
    Scratch {
        buffers,
        groups: ["4".into(), "1".into(), "1".into()],
        source,
    }
}

/// The setup as text (drafts, share links): a header line per buffer, the dispatch, then
/// the source after a `---` line. Fields are tab-separated; a list's values have no tabs
/// or newlines once split, so they are stored joined by spaces.
pub fn to_text(s: &Scratch) -> String {
    let mut out = String::from("scratch 1\n");
    for d in &s.buffers {
        let arg: Vec<&str> = d.arg.split_whitespace().collect();
        out.push_str(&format!(
            "buffer\t{}\t{}\t{}\t{}\t{}\n",
            d.name.replace(['\t', '\n'], " "),
            d.ty.code(),
            d.len.replace(['\t', '\n'], " "),
            d.init.code(),
            arg.join(" ")
        ));
    }
    out.push_str(&format!(
        "groups\t{}\t{}\t{}\n---\n",
        s.groups[0].replace(['\t', '\n'], " "),
        s.groups[1].replace(['\t', '\n'], " "),
        s.groups[2].replace(['\t', '\n'], " ")
    ));
    out.push_str(&s.source);
    out
}

/// Reads [`to_text`]'s form back; None when it is not one (a damaged link or draft).
pub fn from_text(text: &str) -> Option<Scratch> {
    let (head, source) = text.split_once("\n---\n")?;
    let mut lines = head.lines();
    if lines.next()? != "scratch 1" {
        return None;
    }
    let mut buffers = Vec::new();
    let mut groups = None;
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["buffer", name, ty, len, init, arg] => buffers.push(BufferDecl {
                name: name.to_string(),
                ty: ElemType::from_code(ty)?,
                len: len.to_string(),
                init: InitKind::from_code(init)?,
                arg: arg.to_string(),
            }),
            ["groups", x, y, z] => groups = Some([x.to_string(), y.to_string(), z.to_string()]),
            _ => return None,
        }
    }
    if buffers.len() > MAX_BUFFERS * 2 {
        return None;
    }
    Some(Scratch {
        buffers,
        groups: groups?,
        source: source.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, ty: ElemType, len: &str, init: InitKind, arg: &str) -> BufferDecl {
        BufferDecl {
            name: name.into(),
            ty,
            len: len.into(),
            init,
            arg: arg.into(),
        }
    }

    /// The English comments (the app reads them from `locales/en/editor.txt`).
    fn en() -> Comments {
        Comments {
            intro: "Scratch: one compute kernel over the buffers in the table.".into(),
            table_note: "(made from the buffer table: edit the table, not these lines)".into(),
        }
    }

    #[test]
    fn the_starters_comments_are_the_ones_given() {
        let zh = Comments {
            intro: "草稿：对表中的缓冲区运行一个计算内核。".into(),
            table_note: "（由缓冲区表生成：请修改表格，不要改这几行）\n第二行不进标记行".into(),
        };
        let s = starter(&zh);
        assert!(s
            .source
            .starts_with("// 草稿：对表中的缓冲区运行一个计算内核。\n"));
        assert!(s
            .source
            .contains("// buffers:begin （由缓冲区表生成：请修改表格，不要改这几行）\n@group"));
        assert!(!s.source.contains("Scratch") && !s.source.contains("第二行"));
        // The declarations still follow the table with any note, and the round trip holds.
        let r = check(&s.buffers, &s.groups).expect("valid");
        assert_eq!(r.groups, [4, 1, 1]);
        assert_eq!(from_text(&to_text(&s)), Some(s));
        // No note: the bare marker.
        assert!(declarations(&[], &Comments::default()).starts_with("// buffers:begin\n"));
    }

    #[test]
    fn the_workgroups_in_all_are_capped_though_each_axis_is_valid() {
        let s = starter(&Comments::default());
        let g = |x: &str, y: &str| [x.to_string(), y.to_string(), "1".to_string()];
        assert_eq!(
            check(&s.buffers, &g("65535", "65535")),
            Err(vec![ScratchError::GroupsTotal {
                total: 65_535 * 65_535
            }])
        );
        // Exactly the cap is allowed; one axis invalid is named alone, not as a total.
        assert!(check(&s.buffers, &g("1024", "1024")).is_ok());
        assert!(check(&s.buffers, &g("1025", "1024")).is_err());
        assert_eq!(
            check(&s.buffers, &g("70000", "65535")),
            Err(vec![ScratchError::Groups {
                axis: "x",
                value: "70000".into()
            }])
        );
        let e = ScratchError::GroupsTotal {
            total: 65_535 * 65_535,
        };
        assert_eq!(e.key(), "scratch.err.groups_total");
        assert_eq!(
            e.args(),
            vec![
                ("total", "4,294,836,225".to_string()),
                ("max", "1,048,576".to_string())
            ]
        );
    }

    fn groups(x: &str) -> [String; 3] {
        [x.into(), "1".into(), "1".into()]
    }

    #[test]
    fn the_starter_is_valid_and_round_trips() {
        let s = starter(&en());
        let r = check(&s.buffers, &s.groups).expect("valid");
        assert_eq!(r.groups, [4, 1, 1]);
        assert_eq!(r.buffers[0].bits[3], 3f32.to_bits());
        assert!(s
            .source
            .contains("@group(0) @binding(0) var<storage, read_write> data: array<f32>;"));
        assert_eq!(from_text(&to_text(&s)), Some(s));
    }

    #[test]
    fn initial_values_of_each_kind_and_type() {
        let r = check(
            &[
                decl("a", ElemType::I32, "4", InitKind::List, "-1, 2,3\n4"),
                decl("b", ElemType::U32, "3", InitKind::Ramp, ""),
                decl("c", ElemType::F32, "1000", InitKind::Random, "7"),
                decl("d", ElemType::F32, "2", InitKind::Zeros, ""),
                decl("e", ElemType::F32, "2", InitKind::List, "0.5 -2.5e1"),
            ],
            &groups("1"),
        )
        .expect("valid");
        assert_eq!(r.buffers[0].bits, vec![-1i32 as u32, 2, 3, 4]);
        assert_eq!(r.buffers[1].bits, vec![0, 1, 2]);
        let c: Vec<f32> = r.buffers[2]
            .bits
            .iter()
            .map(|&b| f32::from_bits(b))
            .collect();
        assert!(c.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = c.iter().sum::<f32>() / 1000.0;
        assert!(mean.abs() < 0.1, "{mean}");
        // Seeded: the same seed gives the same values.
        let again = check(
            &[decl("c", ElemType::F32, "1000", InitKind::Random, "7")],
            &groups("1"),
        )
        .expect("valid");
        assert_eq!(again.buffers[0].bits, r.buffers[2].bits);
        assert_eq!(r.buffers[3].bits, vec![0, 0]);
        assert_eq!(
            r.buffers[4].bits,
            vec![0.5f32.to_bits(), (-25f32).to_bits()]
        );
    }

    #[test]
    fn every_bad_field_is_named() {
        let e = check(
            &[
                decl("", ElemType::F32, "4", InitKind::Zeros, ""),
                decl("fn", ElemType::F32, "4", InitKind::Zeros, ""),
                decl("9x", ElemType::F32, "4", InitKind::Zeros, ""),
                decl("ok", ElemType::F32, "0", InitKind::Zeros, ""),
                decl("ok", ElemType::F32, "2", InitKind::Zeros, ""),
                decl("r", ElemType::F32, "2", InitKind::Random, "x"),
                decl("l", ElemType::U32, "3", InitKind::List, "1 -2 3"),
                decl("m", ElemType::F32, "3", InitKind::List, "1 2"),
                decl("n", ElemType::F32, "99999999", InitKind::Zeros, ""),
            ],
            &["0".into(), "1".into(), "x".into()],
        )
        .expect_err("bad");
        assert_eq!(
            e,
            vec![
                // Nine rows: one too many, and each row's own problems as well.
                ScratchError::TooManyBuffers { max: 8 },
                ScratchError::NameEmpty { index: 1 },
                ScratchError::NameInvalid { name: "fn".into() },
                ScratchError::NameInvalid { name: "9x".into() },
                ScratchError::Length {
                    name: "ok".into(),
                    value: "0".into()
                },
                ScratchError::NameDuplicate { name: "ok".into() },
                ScratchError::Seed {
                    name: "r".into(),
                    value: "x".into()
                },
                ScratchError::ListValue {
                    name: "l".into(),
                    position: 2,
                    value: "-2".into(),
                    ty: "u32"
                },
                ScratchError::ListCount {
                    name: "m".into(),
                    got: 2,
                    want: 3
                },
                ScratchError::Length {
                    name: "n".into(),
                    value: "99999999".into()
                },
                ScratchError::Groups {
                    axis: "x",
                    value: "0".into()
                },
                ScratchError::Groups {
                    axis: "z",
                    value: "x".into()
                },
            ]
        );
        assert_eq!(check(&[], &groups("1")), Err(vec![ScratchError::NoBuffers]));
        let nine: Vec<BufferDecl> = (0..9)
            .map(|i| decl(&format!("b{i}"), ElemType::F32, "1", InitKind::Zeros, ""))
            .collect();
        assert_eq!(
            check(&nine, &groups("1")),
            Err(vec![ScratchError::TooManyBuffers { max: 8 }])
        );
        for err in e {
            assert!(err.key().starts_with("scratch.err."));
        }
    }

    #[test]
    fn declarations_follow_the_table() {
        let s = starter(&en());
        let bufs = vec![
            decl("x", ElemType::I32, "8", InitKind::Ramp, ""),
            decl("y", ElemType::U32, "8", InitKind::Zeros, ""),
        ];
        let src = with_declarations(&s.source, &declarations(&bufs, &en()));
        assert!(src.contains("@binding(0) var<storage, read_write> x: array<i32>;"));
        assert!(src.contains("@binding(1) var<storage, read_write> y: array<u32>;"));
        assert!(!src.contains("data: array<f32>;"));
        assert!(src.contains("fn main("));
        assert_eq!(src.matches(BEGIN).count(), 1);
        // Markers removed by the learner: the block goes first.
        let bare = with_declarations("fn main() {}", &declarations(&bufs, &en()));
        assert!(bare.starts_with(BEGIN));
    }

    #[test]
    fn damaged_text_is_refused() {
        assert_eq!(from_text(""), None);
        assert_eq!(from_text("scratch 2\ngroups\t1\t1\t1\n---\nx"), None);
        assert_eq!(
            from_text("scratch 1\nbuffer\ta\tf64\t1\tzeros\t\ngroups\t1\t1\t1\n---\n"),
            None
        );
        assert_eq!(
            from_text("scratch 1\nbuffer\ta\tf32\t1\tzeros\t\n---\n"),
            None
        );
        assert!(from_text("scratch 1\ngroups\t1\t1\t1\n---\n").is_some());
    }

    #[test]
    fn values_are_shown_by_type() {
        assert_eq!(ElemType::F32.show(3f32.to_bits()), "3");
        assert_eq!(ElemType::F32.show(0.25f32.to_bits()), "0.2500");
        assert_eq!(ElemType::I32.show(-5i32 as u32), "-5");
        assert_eq!(ElemType::U32.show(7), "7");
    }
}
