//! Loop budgets for learner-edited kernels: rewrites a kernel so that every `loop`, `for`
//! and `while` counts its iterations and, once a budget is spent, records which loop it was
//! in an extra storage buffer (the flag) and `break`s. A learner's `while (true) {}` then
//! ends after `budget` iterations instead of keeping the browser's GPU busy until a watchdog
//! drops the device (which cannot take back work already submitted).
//!
//! Like `instrument.rs`, the rewrite is textual and guided by naga's IR: naga's statement
//! spans say where each loop statement starts (so comments and odd spacing cannot fool a
//! token scan), the first `{` after the loop's keyword (comments skipped; WGSL expressions
//! have no braces) opens its body, and the result is parsed and validated again.
//!
//! What is inserted, per loop `n` (numbered in source order over the whole module):
//! - `var gpl_n<n>: u32 = 0u;` once, just before the outermost loop that encloses it (or
//!   itself), in the same function: a function-scope variable, so it is not reset when an
//!   enclosing loop starts again (nested endless loops cost about the sum of their budgets,
//!   not the product), and it stays uniform when it is incremented in uniform control flow,
//!   so kernels with `workgroupBarrier()` inside loops still pass naga's and Tint's
//!   uniformity analysis (a `var<private>` counter would not);
//! - at the start of the body, before anything a `continue` could skip:
//!   `gpl_n<n> += 1u; if (gpl_n<n> > BUDGET) { gpl_trip(<n>u); break; }`.
//!
//! Loops in helper functions (not entry points) share one per-invocation counter instead,
//! `var<private> gpl_helpers`, never reset between calls: a loop calling a helper that loops
//! (calling another that loops…) then costs about the sum of the budgets, not their product,
//! and only the loop that spends the shared budget is flagged. A private counter is
//! non-uniform to WGSL's uniformity analysis, so a module that uses a barrier, a
//! `workgroupUniformLoad` or a subgroup operation anywhere keeps a function-scope counter per
//! helper loop (reset on each call: at worst the product of the budgets, still finite; the
//! editor's watchdog is what stops those in time).
//!
//! Flag layout (u32 words): word 0 counts the budget trips (atomically); word `1 + n` is
//! non-zero when loop `n` tripped. `LoopBudget::lines[n]` is loop `n`'s 1-based line.

/// Words before the per-loop flags.
pub const FLAG_HEADER_WORDS: usize = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopBudget {
    pub source: String,
    /// Where the flag buffer is bound (group 0), after the kernel's own bindings.
    pub flag_binding: u32,
    /// Loop `n`'s 1-based line in the original source.
    pub lines: Vec<u32>,
    /// The budget written into the source.
    pub budget: u32,
}

impl LoopBudget {
    /// Size in u32 words of the flag buffer this kernel needs.
    pub fn flag_words(&self) -> usize {
        FLAG_HEADER_WORDS + self.lines.len().max(1)
    }

    /// Reads a flag buffer back: the lines of the loops that ran out of budget, in source
    /// order (empty when none did, or when the words are too few to say).
    pub fn tripped(&self, words: &[u32]) -> Vec<u32> {
        if words.first().copied().unwrap_or(0) == 0 {
            return Vec::new();
        }
        self.lines
            .iter()
            .enumerate()
            .filter(|(n, _)| words.get(FLAG_HEADER_WORDS + n).copied().unwrap_or(0) != 0)
            .map(|(_, l)| *l)
            .collect()
    }
}

const PREFIX: &str = "gpl_";

fn parse_valid(source: &str) -> Result<naga::Module, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.message().to_string())?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.as_inner().to_string())?;
    Ok(module)
}

/// Byte offset of the first non-space, non-comment byte at or after `from`.
fn skip_trivia(src: &[u8], mut i: usize) -> usize {
    loop {
        while i < src.len() && src[i].is_ascii_whitespace() {
            i += 1;
        }
        if src[i..].starts_with(b"//") {
            while i < src.len() && src[i] != b'\n' {
                i += 1;
            }
        } else if src[i..].starts_with(b"/*") {
            // WGSL block comments nest.
            let mut depth = 0usize;
            while i < src.len() {
                if src[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else {
            return i;
        }
    }
}

/// Offset of the loop keyword at or after `from` and the offset just after its body's `{`.
fn loop_body(source: &str, from: usize) -> Option<(usize, usize)> {
    let src = source.as_bytes();
    let kw = skip_trivia(src, from);
    let rest = &source[kw..];
    let word = ["loop", "while", "for"].into_iter().find(|w| {
        rest.starts_with(w)
            && !rest[w.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })?;
    let mut i = kw + word.len();
    loop {
        i = skip_trivia(src, i);
        match src.get(i)? {
            b'{' => return Some((kw, i + 1)),
            _ => i += 1,
        }
    }
}

/// Offset just after the `{` that opens the body of function `name` (comments skipped).
fn function_body(source: &str, name: &str) -> Option<usize> {
    let src = source.as_bytes();
    let word_at = |i: usize, w: &str| {
        source[i..].starts_with(w)
            && !source[i + w.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !source[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    let mut i = 0;
    while i < src.len() {
        let j = skip_trivia(src, i);
        if j != i {
            i = j;
            continue;
        }
        if word_at(i, "fn") {
            let n = skip_trivia(src, i + 2);
            if word_at(n, name) {
                let mut k = skip_trivia(src, n + name.len());
                if src.get(k) == Some(&b'(') {
                    let mut depth = 0usize;
                    while k < src.len() {
                        k = skip_trivia(src, k);
                        match src.get(k)? {
                            b'(' => depth += 1,
                            b')' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        k += 1;
                    }
                    loop {
                        k = skip_trivia(src, k);
                        match src.get(k)? {
                            b'{' => return Some(k + 1),
                            _ => k += 1,
                        }
                    }
                }
            }
        }
        i += source[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Whether any function of `module` calls something WGSL's uniformity analysis requires to
/// be in uniform control flow, which a `var<private>` counter's `break` is not.
fn needs_uniform_counters(module: &naga::Module) -> bool {
    fn block_needs(block: &naga::Block) -> bool {
        block.iter().any(|s| match s {
            naga::Statement::ControlBarrier(_)
            | naga::Statement::MemoryBarrier(_)
            | naga::Statement::WorkGroupUniformLoad { .. }
            | naga::Statement::SubgroupBallot { .. }
            | naga::Statement::SubgroupGather { .. }
            | naga::Statement::SubgroupCollectiveOperation { .. } => true,
            naga::Statement::Block(b) => block_needs(b),
            naga::Statement::If { accept, reject, .. } => {
                block_needs(accept) || block_needs(reject)
            }
            naga::Statement::Switch { cases, .. } => cases.iter().any(|c| block_needs(&c.body)),
            naga::Statement::Loop {
                body, continuing, ..
            } => block_needs(body) || block_needs(continuing),
            _ => false,
        })
    }
    module.functions.iter().any(|(_, f)| block_needs(&f.body))
        || module
            .entry_points
            .iter()
            .any(|e| block_needs(&e.function.body))
}

struct Found {
    /// Where the statement starts (span start).
    start: usize,
    /// Index of the outermost enclosing loop (itself when outermost), in `found`.
    outer: usize,
}

fn walk(block: &naga::Block, outer: Option<usize>, found: &mut Vec<Found>) {
    for (s, span) in block.span_iter() {
        match s {
            naga::Statement::Block(b) => walk(b, outer, found),
            naga::Statement::If { accept, reject, .. } => {
                walk(accept, outer, found);
                walk(reject, outer, found);
            }
            naga::Statement::Switch { cases, .. } => {
                for c in cases {
                    walk(&c.body, outer, found);
                }
            }
            naga::Statement::Loop {
                body, continuing, ..
            } => {
                let me = found.len();
                found.push(Found {
                    start: span.to_range().map_or(usize::MAX, |r| r.start),
                    outer: outer.unwrap_or(me),
                });
                let o = Some(outer.unwrap_or(me));
                walk(body, o, found);
                walk(continuing, o, found);
            }
            _ => {}
        }
    }
}

/// Rewrites `source` so that every loop stops after `budget` iterations and says so in the
/// flag buffer (see the module comment). Errors name what stopped it; the caller shows them
/// and runs nothing.
pub fn budget_loops(source: &str, budget: u32) -> Result<LoopBudget, String> {
    if source.contains(PREFIX) {
        return Err(format!(
            "the kernel uses names starting with {PREFIX}, which the loop budget needs"
        ));
    }
    let module = parse_valid(source)?;
    let mut flag_binding = 0;
    for (_, g) in module.global_variables.iter() {
        if let Some(b) = &g.binding {
            if b.group == 0 {
                flag_binding = flag_binding.max(b.binding + 1);
            }
        }
    }

    // Per function, its loops; numbered afterwards in source order.
    let mut all: Vec<(usize, usize, usize)> = Vec::new(); // (start, keyword, body)
    let mut outer_of: Vec<usize> = Vec::new(); // index into `all`
    let mut shared: Vec<bool> = Vec::new(); // counted by the helpers' shared counter
    let share_helpers = !needs_uniform_counters(&module);
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| (f, share_helpers))
        .chain(module.entry_points.iter().map(|e| (&e.function, false)));
    for (f, share) in functions {
        let mut found = Vec::new();
        walk(&f.body, None, &mut found);
        let base = all.len();
        for l in &found {
            let (kw, body) = loop_body(source, l.start)
                .ok_or("a loop's body was not found in the source (unexpected layout)")?;
            all.push((l.start, kw, body));
            outer_of.push(base + l.outer);
            shared.push(share);
        }
    }
    // Number loops in source order.
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&i| all[i].1);
    let mut number = vec![0usize; all.len()];
    for (n, &i) in order.iter().enumerate() {
        number[i] = n;
    }

    // Insertions (byte offset, text), applied from the end; at equal offsets, in push order.
    let mut inserts: Vec<(usize, usize, String)> = Vec::new();
    let mut lines = vec![0u32; all.len()];
    for (i, &(_, kw, body)) in all.iter().enumerate() {
        let n = number[i];
        lines[n] = crate::position(source, kw).line as u32;
        let check = if shared[i] {
            // Every helper loop entered after the budget is spent breaks too; only the one
            // that spent it is flagged.
            format!(
                " {PREFIX}helpers += 1u; if ({PREFIX}helpers > {budget}u) {{ if ({PREFIX}helpers == {budget}u + 1u) {{ {PREFIX}trip({n}u); }} break; }}"
            )
        } else {
            format!(
                " {PREFIX}n{n} += 1u; if ({PREFIX}n{n} > {budget}u) {{ {PREFIX}trip({n}u); break; }}"
            )
        };
        inserts.push((body, inserts.len(), check));
    }
    for (i, &(_, kw, _)) in all.iter().enumerate() {
        if outer_of[i] != i || shared[i] {
            continue;
        }
        let mut decl = String::new();
        for (j, _) in all.iter().enumerate().filter(|(j, _)| outer_of[*j] == i) {
            decl.push_str(&format!("var {PREFIX}n{}: u32 = 0u; ", number[j]));
        }
        inserts.push((kw, inserts.len(), decl));
    }
    // Each entry point uses the flag buffer even when no loop of it runs, so the pipeline's
    // automatic layout always has the binding the caller binds.
    for ep in &module.entry_points {
        let body = function_body(source, &ep.name)
            .ok_or("an entry point's body was not found in the source (unexpected layout)")?;
        inserts.push((
            body,
            inserts.len(),
            format!(" _ = arrayLength(&{PREFIX}flag);"),
        ));
    }
    let helpers = if share_helpers && shared.contains(&true) {
        " (the helper functions' loops: together, per thread)"
    } else {
        ""
    };
    inserts.sort_by_key(|i| std::cmp::Reverse((i.0, i.1)));
    let mut out = source.to_string();
    for (at, _, text) in inserts {
        out.insert_str(at, &text);
    }
    out.push_str(&format!(
        "\n// Loop budget added by the editor: each loop stops after {budget} iterations{helpers}.\n\
@group(0) @binding({flag_binding}) var<storage, read_write> {PREFIX}flag: array<atomic<u32>>;\n\
var<private> {PREFIX}helpers: u32 = 0u;\n\
fn {PREFIX}trip(n: u32) {{\n\
    atomicAdd(&{PREFIX}flag[0], 1u);\n\
    atomicStore(&{PREFIX}flag[{FLAG_HEADER_WORDS}u + n], 1u);\n\
}}\n"
    ));
    parse_valid(&out).map_err(|e| format!("the budgeted kernel does not validate: {e}"))?;
    Ok(LoopBudget {
        source: out,
        flag_binding,
        lines,
        budget,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "@group(0) @binding(0) var<storage, read_write> c: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
";

    fn lines_of(src: &str) -> Vec<u32> {
        budget_loops(src, 100).expect("budgets").lines
    }

    #[test]
    fn endless_while_gets_a_counter_and_the_flag_binding() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(1)
fn main() {{
    var spin = 0u;
    while (true) {{ c[0] = f32(spin); spin = spin + 1u; }}
}}
"
        );
        let r = budget_loops(&src, 2048).expect("budgets");
        assert_eq!(r.flag_binding, 2);
        assert_eq!(r.lines, [6]);
        assert_eq!(r.flag_words(), 2);
        let s = &r.source;
        assert!(
            s.contains("var gpl_n0: u32 = 0u; while (true) { gpl_n0 += 1u; if (gpl_n0 > 2048u) { gpl_trip(0u); break; } c[0]"),
            "{s}"
        );
        assert!(
            s.contains("@group(0) @binding(2) var<storage, read_write> gpl_flag"),
            "{s}"
        );
        assert_eq!(r.tripped(&[0, 0]), Vec::<u32>::new());
        assert_eq!(r.tripped(&[3, 1]), [6]);
    }

    /// A helper function with one loop, called by both helper tests' kernels.
    const HELPER: &str = "fn helper(n: u32) -> f32 {
    var s = 0.0;
    for (var i = 0u; i < n; i++) { s += 1.0; }
    return s;
}
";

    #[test]
    fn every_kind_of_loop_nested_and_in_helpers() {
        let src = format!(
            "{HEAD}{HELPER}@compute @workgroup_size(1)
fn main() {{
    var k = 0u;
    loop {{
        k++;
        /* a {{ brace in a comment */ while k < 3u {{ k++; continue; }}
        // loop {{ in a line comment
        continuing {{ break if k > 10u; }}
    }}
    for (;;) // {{ odd
    {{
        loop {{ if (k > 20u) {{ break; }} k++; }}
        break;
    }}
    c[0] = helper(k);
}}
"
        );
        let r = budget_loops(&src, 50).expect("budgets");
        assert_eq!(r.lines, [5, 11, 13, 17, 19], "{}", r.source);
        let s = &r.source;
        // Nested counters are declared once, before the outermost loop.
        assert!(
            s.contains("var gpl_n1: u32 = 0u; var gpl_n2: u32 = 0u; loop {"),
            "{s}"
        );
        assert!(
            s.contains("var gpl_n3: u32 = 0u; var gpl_n4: u32 = 0u; for (;;)"),
            "{s}"
        );
        // The helper's loop counts on the shared per-invocation counter, declared nowhere in
        // the helper, so repeated calls from main's loops add up instead of starting afresh.
        assert!(
            s.contains("for (var i = 0u; i < n; i++) { gpl_helpers += 1u; if (gpl_helpers > 50u) { if (gpl_helpers == 50u + 1u) { gpl_trip(0u); } break; } s += 1.0; }"),
            "{s}"
        );
        assert!(!s.contains("gpl_n0"), "{s}");
        assert!(s.contains("var<private> gpl_helpers: u32 = 0u;"), "{s}");
        assert!(
            s.contains("while k < 3u { gpl_n2 += 1u; if (gpl_n2 > 50u) { gpl_trip(2u); break; } k++; continue; }"),
            "{s}"
        );
        assert!(s.contains("{ gpl_n3 += 1u;"), "{s}");
        assert_eq!(s.matches("gpl_trip(").count(), 6, "{s}");
    }

    #[test]
    fn a_module_with_a_barrier_keeps_uniform_counters_in_its_helpers() {
        let src = format!(
            "{HEAD}{HELPER}@compute @workgroup_size(1)
fn main() {{
    workgroupBarrier();
    c[0] = helper(dims.x);
}}
"
        );
        let r = budget_loops(&src, 50).expect("budgets");
        assert!(
            r.source
                .contains("var gpl_n0: u32 = 0u; for (var i = 0u; i < n; i++) { gpl_n0 += 1u;"),
            "{}",
            r.source
        );
        assert!(!r.source.contains("gpl_helpers +="), "{}", r.source);
    }

    #[test]
    fn barriers_in_loops_still_validate() {
        let src = "@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
var<workgroup> tile: array<f32, 64>;
@compute @workgroup_size(8, 8)
fn main(@builtin(local_invocation_index) li: u32, @builtin(global_invocation_id) g: vec3<u32>) {
    var acc = 0.0;
    for (var t = 0u; t < 4u; t++) {
        tile[li] = a[t * 64u + li];
        workgroupBarrier();
        for (var k = 0u; k < 8u; k++) { acc += tile[k]; }
        workgroupBarrier();
    }
    loop {
        workgroupBarrier();
        continuing { break if true; }
    }
    c[g.x] = acc;
}";
        let r = budget_loops(src, 1000).expect("validates with barriers");
        assert_eq!(r.lines, [7, 10, 13]);
        assert!(r.source.contains("workgroupBarrier();"));
    }

    #[test]
    fn every_entry_point_uses_the_flag_even_without_loops() {
        let src = format!(
            "{HEAD}// fn main() {{ not this one
fn helper() -> f32 {{ return 1.0; }}
@compute @workgroup_size(1)
fn /* odd */ main ( @builtin(global_invocation_id) g: vec3<u32> ) {{ c[g.x] = helper(); }}
"
        );
        let r = budget_loops(&src, 10).expect("budgets");
        assert!(
            r.source
                .contains("g: vec3<u32> ) { _ = arrayLength(&gpl_flag); c[g.x]"),
            "{}",
            r.source
        );
        assert_eq!(r.source.matches("arrayLength(&gpl_flag)").count(), 1);
    }

    #[test]
    fn no_loops_is_fine_and_bad_input_is_named() {
        let src = format!("{HEAD}@compute @workgroup_size(1)\nfn main() {{ c[0] = 1.0; }}\n");
        let r = budget_loops(&src, 10).expect("budgets");
        assert!(r.lines.is_empty());
        assert_eq!(r.flag_words(), 2);
        assert!(budget_loops("fn main( {", 10).is_err());
        let e = budget_loops(&src.replace("c[0]", "let gpl_x = 1u; c[0]"), 10).unwrap_err();
        assert!(e.contains("gpl_"), "{e}");
        assert_eq!(lines_of(&src), Vec::<u32>::new());
    }
}

#[cfg(test)]
mod catalogue {
    /// Every catalogue kernel that parses on its own still validates through the rewrite.
    #[test]
    fn every_catalogue_shader_validates_budgeted() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
        let mut done = 0;
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .expect("shaders/")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
            .collect();
        entries.sort();
        for p in entries {
            let src = std::fs::read_to_string(&p).expect("reads");
            if naga::front::wgsl::parse_str(&src).is_err() {
                continue; // a fragment other kernels include
            }
            let r =
                super::budget_loops(&src, 4096).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(r.source.contains("gpl_flag"), "{}", p.display());
            done += 1;
        }
        assert!(done >= 20, "only {done} shaders checked");
    }
}
