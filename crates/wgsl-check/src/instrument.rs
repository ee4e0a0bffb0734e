//! Instrumentation for the puzzle page's access view: rewrites a kernel so that every
//! indexed read or write of a storage or workgroup array also appends a record
//! `(invocation, buffer, index, kind)` to an extra storage buffer, the log.
//!
//! The rewrite is textual, guided by naga's IR: naga finds each `Access`/`AccessIndex`
//! expression whose base is such an array and that a `Load`, `Store` or atomic uses; its span
//! (`a[i]`) tells where the index is, and the index is wrapped in a call
//! `gpi_log(buffer, kind, u32(index))` that records and returns it. Only the index is touched,
//! so the kernel computes what it computed before. The result is parsed and validated again.
//!
//! Log layout (u32 words): word 0 counts every access attempted (atomically), words
//! `HEADER_WORDS..` hold records of `RECORD_WORDS` words; records past the buffer's capacity
//! are counted but not written.

use std::collections::BTreeMap;

/// Words before the first record.
pub const HEADER_WORDS: usize = 4;
/// Words per record: invocation linear id, buffer number, element index, kind.
pub const RECORD_WORDS: usize = 4;
/// Kind bits of a record.
pub const READ: u32 = 1;
pub const WRITE: u32 = 2;

/// One array the log numbers (its position in `Instrumented::buffers` is its number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedArray {
    pub name: String,
    /// `@binding` in group 0 for a storage buffer; None for workgroup memory.
    pub binding: Option<u32>,
    /// Element count when the array has a fixed size (workgroup arrays do).
    pub len: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instrumented {
    pub source: String,
    /// Where the log buffer is bound (group 0).
    pub log_binding: u32,
    pub arrays: Vec<LoggedArray>,
    /// Accesses to those arrays that are not logged (through a pointer argument of a helper
    /// function, or a whole-array load): the view says so rather than pretending.
    pub unlogged: usize,
}

const PREFIX: &str = "gpi_";

fn parse_valid(source: &str) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.message().to_string())?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.as_inner().to_string())?;
    Ok((module, info))
}

/// The Access/AccessIndex at the root of `pointer` whose base is a logged global.
fn root(
    exprs: &naga::Arena<naga::Expression>,
    numbers: &BTreeMap<naga::Handle<naga::GlobalVariable>, u32>,
    mut h: naga::Handle<naga::Expression>,
) -> Option<(naga::Handle<naga::Expression>, u32)> {
    loop {
        match exprs[h] {
            naga::Expression::Access { base, .. } | naga::Expression::AccessIndex { base, .. } => {
                if let naga::Expression::GlobalVariable(g) = exprs[base] {
                    return numbers.get(&g).map(|n| (h, *n));
                }
                h = base;
            }
            _ => return None,
        }
    }
}

/// Whether `pointer` reaches a logged global at all (to count what is not logged).
fn touches(
    exprs: &naga::Arena<naga::Expression>,
    numbers: &BTreeMap<naga::Handle<naga::GlobalVariable>, u32>,
    mut h: naga::Handle<naga::Expression>,
) -> bool {
    loop {
        match exprs[h] {
            naga::Expression::Access { base, .. } | naga::Expression::AccessIndex { base, .. } => {
                h = base
            }
            naga::Expression::GlobalVariable(g) => return numbers.contains_key(&g),
            _ => return false,
        }
    }
}

fn walk(block: &naga::Block, f: &mut impl FnMut(naga::Handle<naga::Expression>, u32)) {
    for s in block.iter() {
        match s {
            naga::Statement::Block(b) => walk(b, f),
            naga::Statement::If { accept, reject, .. } => {
                walk(accept, f);
                walk(reject, f);
            }
            naga::Statement::Switch { cases, .. } => {
                for c in cases {
                    walk(&c.body, f);
                }
            }
            naga::Statement::Loop {
                body, continuing, ..
            } => {
                walk(body, f);
                walk(continuing, f);
            }
            naga::Statement::Store { pointer, .. } => f(*pointer, WRITE),
            naga::Statement::Atomic { pointer, .. } => f(*pointer, READ | WRITE),
            _ => {}
        }
    }
}

/// Byte offset just after the `[` matching the `]` that ends `text` (None when it does not
/// end with `]`).
fn index_range(text: &str) -> Option<(usize, usize)> {
    let bytes = text.trim_end().as_bytes();
    let end = bytes.len().checked_sub(1)?;
    if bytes[end] != b']' {
        return None;
    }
    let mut depth = 0usize;
    for i in (0..=end).rev() {
        match bytes[i] {
            b']' => depth += 1,
            b'[' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i + 1, end));
                }
            }
            _ => {}
        }
    }
    None
}

/// Byte offset of the `(` that opens entry `entry`'s parameter list.
fn entry_params(source: &str, entry: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = source[from..].find("fn ") {
        let at = from + p + 3;
        let rest = &source[at..];
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix(entry) {
            let after_ws = after.trim_start();
            if after_ws.starts_with('(') {
                return Some(source.len() - after_ws.len());
            }
        }
        from = at;
    }
    None
}

/// Rewrites `source` so that entry point `entry` logs its array accesses (see the module
/// comment). Errors name what stopped it; the caller shows them and runs nothing.
pub fn instrument(source: &str, entry: &str) -> Result<Instrumented, String> {
    if source.contains(PREFIX) {
        return Err(format!(
            "the kernel uses names starting with {PREFIX}, which the access log needs"
        ));
    }
    let (module, _) = parse_valid(source)?;
    let ep = module
        .entry_points
        .iter()
        .find(|e| e.name == entry && e.stage == naga::ShaderStage::Compute)
        .ok_or_else(|| format!("no compute entry point named {entry}"))?;

    // Number the arrays: storage buffers and workgroup arrays, in declaration order.
    let mut numbers = BTreeMap::new();
    let mut arrays = Vec::new();
    let mut log_binding = 0;
    for (h, g) in module.global_variables.iter() {
        if let Some(b) = &g.binding {
            if b.group == 0 {
                log_binding = log_binding.max(b.binding + 1);
            }
        }
        let storage = matches!(g.space, naga::AddressSpace::Storage { .. });
        let workgroup = matches!(g.space, naga::AddressSpace::WorkGroup);
        if !(storage || workgroup) {
            continue;
        }
        let naga::TypeInner::Array { size, .. } = module.types[g.ty].inner else {
            continue;
        };
        let len = match size {
            naga::ArraySize::Constant(n) => Some(n.get()),
            _ => None,
        };
        numbers.insert(h, arrays.len() as u32);
        arrays.push(LoggedArray {
            name: g.name.clone().unwrap_or_default(),
            binding: if storage {
                g.binding.as_ref().map(|b| b.binding)
            } else {
                None
            },
            len,
        });
    }

    // Insertions (byte offset, order, text), applied from the end.
    let mut inserts: Vec<(usize, u32, String)> = Vec::new();
    let mut unlogged = 0;
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        let mut kinds: BTreeMap<naga::Handle<naga::Expression>, (u32, u32)> = BTreeMap::new();
        let mut note = |p: naga::Handle<naga::Expression>, kind: u32| match root(
            &f.expressions,
            &numbers,
            p,
        ) {
            Some((h, n)) => kinds.entry(h).or_insert((n, 0)).1 |= kind,
            None => {
                if touches(&f.expressions, &numbers, p) {
                    unlogged += 1;
                }
            }
        };
        for (_, e) in f.expressions.iter() {
            if let naga::Expression::Load { pointer } = e {
                note(*pointer, READ);
            }
        }
        walk(&f.body, &mut note);
        for (h, (n, kind)) in kinds {
            let Some(r) = f.expressions.get_span(h).to_range() else {
                unlogged += 1;
                continue;
            };
            let Some((a, b)) = source.get(r.clone()).and_then(index_range) else {
                unlogged += 1;
                continue;
            };
            inserts.push((r.start + a, 1, format!("{PREFIX}log({n}u, {kind}u, u32(")));
            inserts.push((r.start + b, 0, "))".to_string()));
        }
    }

    // The invocation's linear id, from builtins the entry has or that we add.
    let builtin = |want: naga::BuiltIn| {
        ep.function.arguments.iter().find_map(|a| match a.binding {
            Some(naga::Binding::BuiltIn(b)) if b == want => a.name.clone(),
            _ => None,
        })
    };
    let open = entry_params(source, entry).ok_or("entry point's parameter list not found")?;
    let mut params = String::new();
    let mut name = |want: naga::BuiltIn, attr: &str, ty: &str, fresh: &str| match builtin(want) {
        Some(n) => n,
        None => {
            params.push_str(&format!("@builtin({attr}) {fresh}: {ty}, "));
            fresh.to_string()
        }
    };
    let lix = name(
        naga::BuiltIn::LocalInvocationIndex,
        "local_invocation_index",
        "u32",
        "gpi_lix",
    );
    let wg = name(
        naga::BuiltIn::WorkGroupId,
        "workgroup_id",
        "vec3<u32>",
        "gpi_wg",
    );
    let nwg = name(
        naga::BuiltIn::NumWorkGroups,
        "num_workgroups",
        "vec3<u32>",
        "gpi_nwg",
    );
    let [x, y, z] = ep.workgroup_size;
    let per_group = x * y * z;
    inserts.push((open + 1, 2, params));
    let body = source[open..]
        .find('{')
        .map(|p| open + p + 1)
        .ok_or("entry point's body not found")?;
    inserts.push((
        body,
        2,
        format!(
            " {PREFIX}inv = ({wg}.x + {wg}.y * {nwg}.x + {wg}.z * {nwg}.x * {nwg}.y) * {per_group}u + {lix};"
        ),
    ));

    inserts.sort_by_key(|i| std::cmp::Reverse((i.0, i.1)));
    let mut out = source.to_string();
    for (at, _, text) in inserts {
        out.insert_str(at, &text);
    }
    out.push_str(&format!(
        "\n// Access log added for the puzzle page's access view.\n\
@group(0) @binding({log_binding}) var<storage, read_write> {PREFIX}buf: array<atomic<u32>>;\n\
var<private> {PREFIX}inv: u32;\n\
fn {PREFIX}log(b: u32, k: u32, i: u32) -> u32 {{\n\
    let n = atomicAdd(&{PREFIX}buf[0], 1u);\n\
    let cap = (arrayLength(&{PREFIX}buf) - {HEADER_WORDS}u) / {RECORD_WORDS}u;\n\
    if (n < cap) {{\n\
        let o = {HEADER_WORDS}u + n * {RECORD_WORDS}u;\n\
        atomicStore(&{PREFIX}buf[o], {PREFIX}inv);\n\
        atomicStore(&{PREFIX}buf[o + 1u], b);\n\
        atomicStore(&{PREFIX}buf[o + 2u], i);\n\
        atomicStore(&{PREFIX}buf[o + 3u], k);\n\
    }}\n\
    return i;\n\
}}\n"
    ));
    parse_valid(&out).map_err(|e| format!("the instrumented kernel does not validate: {e}"))?;
    Ok(Instrumented {
        source: out,
        log_binding,
        arrays,
        unlogged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<f32, 4>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = lid.x;
    tile[i] = a[i];
    workgroupBarrier();
    out[i] += tile[(i + 1u) % 4u] + a[ i ];
}
";

    #[test]
    fn wraps_each_indexed_access_and_keeps_the_rest() {
        let r = instrument(MAP, "main").expect("instruments");
        assert_eq!(r.log_binding, 2);
        assert_eq!(r.unlogged, 0);
        assert_eq!(
            r.arrays.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["a", "out", "tile"]
        );
        assert_eq!(r.arrays[2].len, Some(4));
        let s = &r.source;
        assert!(
            s.contains("tile[gpi_log(2u, 2u, u32(i))] = a[gpi_log(0u, 1u, u32(i))];"),
            "{s}"
        );
        // `+=` reads and writes the same element: one record of both kinds.
        assert!(
            s.contains("out[gpi_log(1u, 3u, u32(i))] += tile[gpi_log(2u, 1u, u32((i + 1u) % 4u))]"),
            "{s}"
        );
        assert!(s.contains("a[gpi_log(0u, 1u, u32( i ))]"), "{s}");
        assert!(
            s.contains("fn main(@builtin(local_invocation_index) gpi_lix: u32, "),
            "{s}"
        );
        assert!(
            s.contains("@group(0) @binding(2) var<storage, read_write> gpi_buf"),
            "{s}"
        );
    }

    #[test]
    fn reuses_builtins_the_entry_already_has() {
        let src = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(2, 2)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    out[li] = 1u;
}";
        let r = instrument(src, "main").expect("instruments");
        assert!(
            r.source
                .contains("gpi_inv = (w.x + w.y * nw.x + w.z * nw.x * nw.y) * 4u + li;"),
            "{}",
            r.source
        );
    }

    #[test]
    fn nested_and_helper_accesses_are_logged() {
        let src = "@group(0) @binding(0) var<storage, read> idx: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
fn put(i: u32) { out[idx[i]] = i; }
@compute @workgroup_size(1)
fn main() { put(0u); }";
        let r = instrument(src, "main").expect("instruments");
        assert!(
            r.source
                .contains("out[gpi_log(1u, 2u, u32(idx[gpi_log(0u, 1u, u32(i))]))] = i;"),
            "{}",
            r.source
        );
    }

    #[test]
    fn bad_input_gives_a_named_error() {
        assert!(instrument("fn main( {", "main").is_err());
        let e = instrument(MAP, "other").unwrap_err();
        assert!(e.contains("other"), "{e}");
        let e = instrument(&MAP.replace("let i", "let gpi_x = 0u; let i"), "main").unwrap_err();
        assert!(e.contains("gpi_"), "{e}");
    }
}
