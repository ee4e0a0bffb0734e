//! GPU puzzles: small graded exercises in the spirit of GPU Puzzles. Each puzzle is a WGSL
//! file in `shaders/puzzles/` whose reference body sits between `// hole:begin` and
//! `// hole:end`; the learner starts from the same file with that body cut out. Inputs are
//! small exact integers, so every reference result is exact in f32 and the checker can ask for
//! equality within a tiny bound.
//!
//! Buffer convention (the runner binds by it): the inputs at bindings 0, 1, … in order, then
//! the output, all `array<f32>` in group 0. The output buffer is longer than the answer by
//! [`GUARD`] elements and starts filled with [`SENTINEL`], so an element never written and a
//! write past the end are both seen.

pub mod access;

/// Value the output buffer starts with: "not written".
pub const SENTINEL: f32 = -7777.0;
/// Extra output elements after the answer, to catch writes past its end.
pub const GUARD: usize = 16;

/// One exercise. Text lives under `puzzle.<id>.{title,goal,hint1,hint2}` in the app's
/// `puzzles.txt` locale files.
#[derive(Clone, Copy, Debug)]
pub struct Puzzle {
    pub id: &'static str,
    /// The whole reference kernel (the solution is its hole).
    pub source: &'static str,
    /// Names of the input buffers, in binding order; the output is named `out`.
    pub inputs: &'static [&'static str],
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
    /// Threads per workgroup, as the file declares (shown to the learner).
    pub workgroup_size: [u32; 3],
    /// Length of the answer in `out`.
    pub output_len: usize,
    /// The input data (seeded by nothing: fixed small integers).
    pub data: fn() -> Vec<Vec<f32>>,
    /// The CPU reference.
    pub reference: fn(&[Vec<f32>]) -> Vec<f32>,
    /// A plausible mistake for the tests: replace the first string in the solution by the
    /// second; the result must fail the check.
    pub mistake: (&'static str, &'static str),
    /// Other sizes the answer is checked at, when the kernel's launch allows them.
    pub sizing: Option<Sizing>,
}

/// How a puzzle is checked at sizes other than its own: the kernel's size constants
/// (`const N: u32 = 4u;` lines, rewritten for each size), seeded extra sizes, and data,
/// reference and launch for any size.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    /// Names of the size constants, in the order a size lists their values.
    pub consts: &'static [&'static str],
    /// Extra sizes (values of `consts`), drawn from the generator: at least one smaller than
    /// the workgroup, and not multiples of it.
    pub sizes: fn(&mut Rng) -> Vec<Vec<u32>>,
    /// Seeded inputs for a size.
    pub data: fn(&[u32], &mut Rng) -> Vec<Vec<f32>>,
    /// The CPU reference at a size.
    pub reference: fn(&[u32], &[Vec<f32>]) -> Vec<f32>,
    /// Workgroups to dispatch at a size.
    pub workgroups: fn(&[u32]) -> [u32; 3],
}

/// A small seeded generator (SplitMix64): the same sizes and data on every run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next_u64() % u64::from(hi - lo + 1)) as u32
    }
    /// Small integers (exact in f32), `n` of them in `-8..=8`.
    pub fn ints(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.range(0, 16) as f32 - 8.0).collect()
    }
    /// `count` distinct values in `lo..=hi` that are not multiples of `step` and not `skip`.
    pub fn distinct(&mut self, count: usize, lo: u32, hi: u32, step: u32, skip: u32) -> Vec<u32> {
        let pool: Vec<u32> = (lo..=hi)
            .filter(|v| (step <= 1 || v % step != 0) && *v != skip)
            .collect();
        let mut out = Vec::new();
        while out.len() < count.min(pool.len()) {
            let v = pool[(self.next_u64() % pool.len() as u64) as usize];
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }
}

/// One size an answer is checked at: the kernel's size constants, its inputs, the expected
/// answer and the launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Values of the size constants (empty: the puzzle's own, unsized).
    pub size: Vec<u32>,
    pub inputs: Vec<Vec<f32>>,
    pub expected: Vec<f32>,
    pub workgroups: [u32; 3],
    /// Whether this is the puzzle's own size (the one its text and table show).
    pub own: bool,
}

impl Case {
    /// "37×29", "5" (the size constants' values).
    pub fn label(&self) -> String {
        self.size
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("×")
    }

    /// The output buffer's first content: answer + guard, all "not written".
    pub fn initial_output(&self) -> Vec<f32> {
        vec![SENTINEL; self.expected.len() + GUARD]
    }

    /// The checker's verdict on the output buffer read back from this case's run.
    pub fn check(&self, output: &[f32]) -> Verdict {
        check_against(&self.expected, output)
    }
}

/// The value of `const <name>: u32 = <n>u;` in `source`, if it is declared that way.
fn const_value(source: &str, name: &str) -> Option<u32> {
    source.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("const ")?.trim_start();
        let rest = rest.strip_prefix(name)?.trim_start().strip_prefix(':')?;
        let rest = rest.trim_start().strip_prefix("u32")?.trim_start();
        let rest = rest.strip_prefix('=')?.trim();
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// Every size the answer is checked at: the puzzle's own first (its fixed data), then the
/// seeded extra sizes.
pub fn cases(p: &Puzzle) -> Vec<Case> {
    let inputs = (p.data)();
    let expected = (p.reference)(&inputs);
    let own_size = p
        .sizing
        .map(|s| {
            s.consts
                .iter()
                .filter_map(|c| const_value(p.source, c))
                .collect()
        })
        .unwrap_or_default();
    let mut out = vec![Case {
        size: own_size,
        inputs,
        expected,
        workgroups: p.workgroups,
        own: true,
    }];
    if let Some(s) = p.sizing {
        let seed = p.id.bytes().fold(0x00C0_FFEE_u64, |h, b| {
            h.wrapping_mul(31).wrapping_add(u64::from(b))
        });
        let mut rng = Rng::new(seed);
        for size in (s.sizes)(&mut rng) {
            let inputs = (s.data)(&size, &mut rng);
            let expected = (s.reference)(&size, &inputs);
            out.push(Case {
                workgroups: (s.workgroups)(&size),
                size,
                inputs,
                expected,
                own: false,
            });
        }
    }
    out
}

/// The learner's `source` set to `case`'s size: each size constant's line rewritten. `None`
/// when the source no longer declares one of them as `const <name>: u32 = …;`.
pub fn at_size(p: &Puzzle, source: &str, case: &Case) -> Option<String> {
    if case.own {
        return Some(source.to_string());
    }
    let consts = p.sizing?.consts;
    let mut text = String::new();
    let mut found = vec![false; consts.len()];
    for l in source.lines() {
        let hit = consts.iter().position(|c| const_value(l, c).is_some());
        match hit {
            Some(k) => {
                found[k] = true;
                let indent = &l[..l.len() - l.trim_start().len()];
                let v = case.size.get(k)?;
                text.push_str(&format!("{indent}const {}: u32 = {v}u;\n", consts[k]));
            }
            None => {
                text.push_str(l);
                text.push('\n');
            }
        }
    }
    found.iter().all(|f| *f).then_some(text)
}

const HOLE_BEGIN: &str = "// hole:begin";
const HOLE_END: &str = "// hole:end";

fn ramp(n: usize, start: f32) -> Vec<f32> {
    (0..n).map(|i| start + i as f32).collect()
}

/// Puzzles whose answer must wait at a workgroup barrier: a thread reads what another thread
/// of its workgroup wrote. A software GPU that runs a workgroup's threads in lockstep gives the
/// right values without the barrier (luck, not a solution), so its absence is checked in the
/// text ([`calls_barrier`]).
pub const NEEDS_BARRIER: &[&str] = &["shared"];

/// Whether WGSL source calls `workgroupBarrier()` outside comments.
pub fn calls_barrier(source: &str) -> bool {
    let mut code = String::with_capacity(source.len());
    let mut rest = source;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |e| &after[e..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |e| &after[e + 2..]);
        } else {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                code.push(c);
            }
            rest = chars.as_str();
        }
    }
    code.split("workgroupBarrier")
        .skip(1)
        .any(|after| after.trim_start().starts_with('('))
}

/// The reference solution with its hole markers removed.
pub fn solution(p: &Puzzle) -> String {
    p.source
        .lines()
        .filter(|l| {
            let t = l.trim();
            t != HOLE_BEGIN && t != HOLE_END
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Only the part the learner writes (the hole's content).
pub fn solution_body(p: &Puzzle) -> String {
    let mut inside = false;
    let mut out = String::new();
    for l in p.source.lines() {
        match l.trim() {
            HOLE_BEGIN => inside = true,
            HOLE_END => inside = false,
            _ if inside => {
                out.push_str(l);
                out.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// The starting kernel: the reference with its hole replaced by a `// TODO` line at the
/// hole's indentation. It compiles and writes nothing, so it fails the check.
pub fn starter(p: &Puzzle) -> String {
    let mut inside = false;
    let mut out = String::new();
    for l in p.source.lines() {
        let t = l.trim();
        if t == HOLE_BEGIN {
            inside = true;
            let indent = &l[..l.len() - l.trim_start().len()];
            out.push_str(indent);
            out.push_str("// TODO\n");
        } else if t == HOLE_END {
            inside = false;
        } else if !inside {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// `source` (a starter or solution) in the page's language: its leading comment block (the
/// shader file's header, written in English) replaced by `header` as comment lines, and the
/// hole's `// TODO` marker followed by `todo`. Both texts come from the translation files.
pub fn localised(source: &str, header: &str, todo: &str) -> String {
    let mut out: String = header.lines().map(|l| format!("// {l}\n")).collect();
    let mut in_header = true;
    for l in source.lines() {
        if in_header && l.trim_start().starts_with("//") {
            continue;
        }
        in_header = false;
        if l.trim() == "// TODO" && !todo.is_empty() {
            out.push_str(l);
            out.push_str(": ");
            out.push_str(todo);
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    out
}

/// The plausible wrong solution the tests run: the mistake applied inside the hole only
/// (the header comment may quote the same expression).
pub fn mistaken(p: &Puzzle) -> String {
    let body = solution_body(p);
    solution(p).replacen(&body, &body.replacen(p.mistake.0, p.mistake.1, 1), 1)
}

/// Initial content of the output buffer: answer + guard, all "not written".
pub fn initial_output(p: &Puzzle) -> Vec<f32> {
    vec![SENTINEL; p.output_len + GUARD]
}

/// What went wrong at one element of the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub index: usize,
    pub expected: f32,
    /// `None` when the element was never written.
    pub got: Option<f32>,
}

/// The checker's verdict on a whole output buffer.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Verdict {
    /// Number of elements of the answer that are wrong or unwritten.
    pub wrong: usize,
    /// The first few of them, in index order.
    pub first: Vec<Mismatch>,
    /// Elements past the answer that were written (a missing guard).
    pub written_past_end: usize,
    /// The output buffer did not have the expected length.
    pub wrong_length: bool,
    /// An element of the answer that more than one thread wrote (from the access log, see
    /// [`access::race`]): right values by luck, since which write survives is chance.
    pub race: Option<access::Overwrite>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.values_right() && self.race.is_none()
    }

    /// Every value as the reference has it, nothing past the end (a race may still be why).
    pub fn values_right(&self) -> bool {
        self.wrong == 0 && self.written_past_end == 0 && !self.wrong_length
    }
}

/// How many mismatches a verdict lists.
pub const SHOWN: usize = 8;

/// Compares the whole output buffer (answer + guard) with the reference. The inputs are small
/// integers and every reference is a short sum of their products, exact in f32; a summation
/// order other than the reference's is still exact, so the bound only absorbs a last-bit
/// difference relative to the magnitude.
pub fn check(p: &Puzzle, inputs: &[Vec<f32>], output: &[f32]) -> Verdict {
    check_against(&(p.reference)(inputs), output)
}

/// [`check`] against an expected answer (of any size): the output buffer must be the answer
/// plus [`GUARD`] elements.
pub fn check_against(expected: &[f32], output: &[f32]) -> Verdict {
    let mut v = Verdict {
        wrong_length: output.len() != expected.len() + GUARD,
        ..Verdict::default()
    };
    for (index, &e) in expected.iter().enumerate() {
        let got = output.get(index).copied();
        let ok = match got {
            Some(g) => (g - e).abs() <= 1e-6 * e.abs().max(1.0),
            None => false,
        };
        if !ok {
            v.wrong += 1;
            if v.first.len() < SHOWN {
                v.first.push(Mismatch {
                    index,
                    expected: e,
                    got: got.filter(|g| g.to_bits() != SENTINEL.to_bits()),
                });
            }
        }
    }
    v.written_past_end = output
        .iter()
        .skip(expected.len())
        .filter(|g| g.to_bits() != SENTINEL.to_bits())
        .count();
    v
}

fn map_plus_10(x: &[Vec<f32>]) -> Vec<f32> {
    x[0].iter().map(|v| v + 10.0).collect()
}

fn zip_broadcast(x: &[Vec<f32>]) -> Vec<f32> {
    let n = x[0].len();
    (0..n * n).map(|i| x[0][i / n] + x[1][i % n]).collect()
}

fn row_sums(c: usize, x: &[Vec<f32>]) -> Vec<f32> {
    x[0].chunks(c.max(1)).map(|row| row.iter().sum()).collect()
}

fn matmul_ref(x: &[Vec<f32>]) -> Vec<f32> {
    let n = (x[0].len() as f64).sqrt() as usize;
    (0..n * n)
        .map(|i| {
            (0..n)
                .map(|k| x[0][(i / n) * n + k] * x[1][k * n + i % n])
                .sum()
        })
        .collect()
}

fn conv_ref(x: &[Vec<f32>]) -> Vec<f32> {
    let (a, b) = (&x[0], &x[1]);
    (0..a.len())
        .map(|i| {
            (0..b.len())
                .filter(|&k| i + k < a.len())
                .map(|k| a[i + k] * b[k])
                .sum()
        })
        .collect()
}

fn one_group(_: &[u32]) -> [u32; 3] {
    [1, 1, 1]
}

fn dim(s: &[u32], k: usize) -> usize {
    s.get(k).copied().unwrap_or(0) as usize
}

/// One size constant `N` with values drawn by `pick`.
fn sizes_n(v: Vec<u32>) -> Vec<Vec<u32>> {
    v.into_iter().map(|n| vec![n]).collect()
}

/// The puzzles, in teaching order.
pub static PUZZLES: &[Puzzle] = &[
    Puzzle {
        id: "map",
        source: include_str!("../../../shaders/puzzles/map.wgsl"),
        inputs: &["a"],
        workgroups: [1, 1, 1],
        workgroup_size: [4, 1, 1],
        output_len: 4,
        data: || vec![ramp(4, 0.0)],
        reference: map_plus_10,
        mistake: ("a[i] + 10.0", "a[i] * 10.0"),
        sizing: None,
    },
    Puzzle {
        id: "zip",
        source: include_str!("../../../shaders/puzzles/zip.wgsl"),
        inputs: &["a", "b"],
        workgroups: [1, 1, 1],
        workgroup_size: [4, 1, 1],
        output_len: 4,
        data: || vec![ramp(4, 0.0), ramp(4, 5.0)],
        reference: |x| x[0].iter().zip(&x[1]).map(|(a, b)| a + b).collect(),
        mistake: ("a[i] + b[i]", "a[i] + a[i]"),
        sizing: None,
    },
    Puzzle {
        id: "guard",
        source: include_str!("../../../shaders/puzzles/guard.wgsl"),
        inputs: &["a"],
        workgroups: [1, 1, 1],
        workgroup_size: [8, 1, 1],
        output_len: 4,
        data: || vec![ramp(4, 0.0)],
        reference: map_plus_10,
        mistake: ("if (i < N) {", "if (true) {"),
        sizing: Some(Sizing {
            consts: &["N"],
            sizes: |r| sizes_n(r.distinct(3, 1, 7, 8, 4)),
            data: |s, r| vec![r.ints(dim(s, 0))],
            reference: |_, x| map_plus_10(x),
            workgroups: one_group,
        }),
    },
    Puzzle {
        id: "map2d",
        source: include_str!("../../../shaders/puzzles/map2d.wgsl"),
        inputs: &["a"],
        workgroups: [1, 1, 1],
        workgroup_size: [4, 4, 1],
        output_len: 9,
        data: || vec![ramp(9, 0.0)],
        reference: map_plus_10,
        mistake: (
            "out[r * N + c] = a[r * N + c]",
            "out[r * N + c] = a[c * N + r]",
        ),
        sizing: Some(Sizing {
            consts: &["N"],
            sizes: |r| sizes_n(r.distinct(2, 1, 4, 4, 3)),
            data: |s, r| vec![r.ints(dim(s, 0) * dim(s, 0))],
            reference: |_, x| map_plus_10(x),
            workgroups: one_group,
        }),
    },
    Puzzle {
        id: "broadcast",
        source: include_str!("../../../shaders/puzzles/broadcast.wgsl"),
        inputs: &["a", "b"],
        workgroups: [1, 1, 1],
        workgroup_size: [3, 3, 1],
        output_len: 4,
        data: || vec![vec![0.0, 1.0], vec![0.0, 10.0]],
        reference: zip_broadcast,
        mistake: ("a[r] + b[c]", "a[c] + b[r]"),
        sizing: Some(Sizing {
            consts: &["N"],
            sizes: |r| sizes_n(r.distinct(2, 1, 3, 0, 2)),
            data: |s, r| vec![r.ints(dim(s, 0)), r.ints(dim(s, 0))],
            reference: |_, x| zip_broadcast(x),
            workgroups: one_group,
        }),
    },
    Puzzle {
        id: "blocks",
        source: include_str!("../../../shaders/puzzles/blocks.wgsl"),
        inputs: &["a"],
        workgroups: [3, 1, 1],
        workgroup_size: [4, 1, 1],
        output_len: 9,
        data: || vec![ramp(9, 0.0)],
        reference: map_plus_10,
        mistake: ("wid.x * 4u + lid.x", "wid.x + lid.x"),
        sizing: Some(Sizing {
            consts: &["N"],
            sizes: |r| {
                let mut v = vec![r.range(1, 3)];
                v.extend(r.distinct(3, 5, 70, 4, 9));
                sizes_n(v)
            },
            data: |s, r| vec![r.ints(dim(s, 0))],
            reference: |_, x| map_plus_10(x),
            workgroups: |s| [s.first().copied().unwrap_or(0).div_ceil(4), 1, 1],
        }),
    },
    Puzzle {
        id: "shared",
        source: include_str!("../../../shaders/puzzles/shared.wgsl"),
        inputs: &["a"],
        workgroups: [2, 1, 1],
        workgroup_size: [4, 1, 1],
        output_len: 8,
        data: || vec![ramp(8, 0.0)],
        reference: |x| {
            // Each block of 4 reversed, plus 10.
            (0..x[0].len())
                .map(|i| x[0][i - i % 4 + (3 - i % 4)] + 10.0)
                .collect()
        },
        mistake: (
            "out[i] = tile[TPB - 1u - l] + 10.0",
            "out[i] = tile[l] + 10.0",
        ),
        sizing: None,
    },
    Puzzle {
        id: "dot",
        source: include_str!("../../../shaders/puzzles/dot.wgsl"),
        inputs: &["a", "b"],
        workgroups: [1, 1, 1],
        workgroup_size: [8, 1, 1],
        output_len: 1,
        data: || vec![ramp(8, 0.0), ramp(8, 0.0)],
        reference: |x| vec![x[0].iter().zip(&x[1]).map(|(a, b)| a * b).sum()],
        // Halving from N / 4 skips the first pair of halves: half the products are lost.
        mistake: ("var stride = N / 2u", "var stride = N / 4u"),
        sizing: None,
    },
    Puzzle {
        id: "prefix_sum",
        source: include_str!("../../../shaders/puzzles/prefix_sum.wgsl"),
        inputs: &["a"],
        workgroups: [1, 1, 1],
        workgroup_size: [8, 1, 1],
        output_len: 8,
        data: || vec![ramp(8, 1.0)],
        reference: |x| {
            let mut acc = 0.0;
            x[0].iter()
                .map(|v| {
                    acc += v;
                    acc
                })
                .collect()
        },
        // An exclusive scan: each output misses its own element.
        mistake: ("s[i] = a[i];", "s[i] = select(0.0, a[i - 1u], i > 0u);"),
        sizing: None,
    },
    Puzzle {
        id: "axis_sum",
        source: include_str!("../../../shaders/puzzles/axis_sum.wgsl"),
        inputs: &["a"],
        workgroups: [4, 1, 1],
        workgroup_size: [1, 1, 1],
        output_len: 4,
        data: || vec![ramp(24, 0.0)],
        reference: |x| row_sums(6, x),
        // Strides by rows instead of columns: sums a column (reading past the matrix).
        mistake: ("a[r * C + c]", "a[c * C + r]"),
        sizing: Some(Sizing {
            consts: &["R", "C"],
            sizes: |r| {
                vec![
                    vec![r.range(20, 40), r.range(20, 40)],
                    vec![r.range(2, 9), r.range(7, 13)],
                    vec![1, r.range(1, 5)],
                ]
            },
            data: |s, r| vec![r.ints(dim(s, 0) * dim(s, 1))],
            reference: |s, x| row_sums(dim(s, 1), x),
            workgroups: |s| [s.first().copied().unwrap_or(0), 1, 1],
        }),
    },
    Puzzle {
        id: "matmul",
        source: include_str!("../../../shaders/puzzles/matmul.wgsl"),
        inputs: &["A", "B"],
        workgroups: [1, 1, 1],
        workgroup_size: [4, 4, 1],
        output_len: 16,
        data: || vec![ramp(16, 0.0), ramp(16, 1.0)],
        reference: matmul_ref,
        mistake: ("B[k * N + c]", "B[c * N + k]"),
        // N = 4 fills the 4×4 block exactly, and the kernel has no guard: one size.
        sizing: None,
    },
    Puzzle {
        id: "conv1d",
        source: include_str!("../../../shaders/puzzles/conv1d.wgsl"),
        inputs: &["a", "b"],
        workgroups: [1, 1, 1],
        workgroup_size: [8, 1, 1],
        output_len: 8,
        data: || vec![ramp(8, 1.0), vec![1.0, 2.0, 3.0]],
        reference: conv_ref,
        // Taps in reverse order: a flipped kernel is a different filter.
        mistake: ("* b[k]", "* b[K - 1u - k]"),
        // Every one of the 8 threads writes its element (no guard): one size.
        sizing: None,
    },
];

/// The puzzle with this id.
pub fn find(id: &str) -> Option<&'static Puzzle> {
    PUZZLES.iter().find(|p| p.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(p: &Puzzle) -> (Vec<Vec<f32>>, Vec<f32>) {
        let inputs = (p.data)();
        let mut out = initial_output(p);
        let r = (p.reference)(&inputs);
        out[..r.len()].copy_from_slice(&r);
        (inputs, out)
    }

    #[test]
    fn a_localised_starter_has_only_the_given_comments_and_still_a_todo() {
        for p in PUZZLES.iter() {
            let zh = localised(&starter(p), "谜题：第一行\n第二行", "在这里写出答案");
            assert!(zh.starts_with("// 谜题：第一行\n// 第二行\n"), "{}", p.id);
            assert!(zh.contains("// TODO: 在这里写出答案\n"), "{}", p.id);
            // No English comment is left: the header went, and the body has none.
            let english = zh
                .lines()
                .filter(|l| l.contains("//"))
                .filter(|l| l.chars().any(|c| c.is_ascii_lowercase()))
                .count();
            assert_eq!(english, 0, "{}: {zh}", p.id);
            // The code itself is untouched: same lines once the comments are dropped.
            let code = |t: &str| -> Vec<String> {
                t.lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(code(&zh), code(&starter(p)), "{}", p.id);
            let sol = localised(&solution(p), "标题", "x");
            assert_eq!(code(&sol), code(&solution(p)), "{}", p.id);
            assert!(sol.starts_with("// 标题\n"));
        }
    }

    #[test]
    fn twelve_distinct_puzzles_with_consistent_shapes() {
        assert!(PUZZLES.len() >= 12);
        let mut ids: Vec<_> = PUZZLES.iter().map(|p| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), PUZZLES.len());
        for p in PUZZLES {
            let inputs = (p.data)();
            assert_eq!(inputs.len(), p.inputs.len(), "{}", p.id);
            assert_eq!((p.reference)(&inputs).len(), p.output_len, "{}", p.id);
            assert!(
                p.source.contains(HOLE_BEGIN) && p.source.contains(HOLE_END),
                "{}",
                p.id
            );
            assert!(
                solution_body(p).contains(p.mistake.0),
                "{}: mistake must apply",
                p.id
            );
            assert_ne!(mistaken(p), solution(p), "{}", p.id);
            assert!(!starter(p).contains(&solution_body(p)), "{}", p.id);
            assert!(starter(p).contains("// TODO"), "{}", p.id);
            let ws = format!("@workgroup_size({}", p.workgroup_size[0]);
            assert!(p.source.contains(&ws) || p.id == "shared", "{}: {ws}", p.id);
        }
    }

    #[test]
    fn a_barrier_is_found_in_code_never_in_comments() {
        assert!(calls_barrier("tile[l] = a[i];\n    workgroupBarrier();\n"));
        assert!(calls_barrier("workgroupBarrier ( );"));
        assert!(!calls_barrier("// then workgroupBarrier();\nout[i] = 1.0;"));
        assert!(!calls_barrier("/* workgroupBarrier(); */ out[i] = 1.0;"));
        assert!(!calls_barrier("let workgroupBarrierCount = 1u;"));
        let shared = find("shared").map(solution).unwrap_or_default();
        assert!(calls_barrier(&shared), "the reference waits");
    }

    #[test]
    fn checker_passes_the_reference_and_names_what_is_wrong() {
        for p in PUZZLES {
            let (inputs, out) = answer(p);
            assert!(check(p, &inputs, &out).passed(), "{}", p.id);
        }
        let p = find("map").unwrap_or(&PUZZLES[0]);
        let (inputs, mut out) = answer(p);
        out[1] = 99.0;
        out[2] = SENTINEL;
        out[p.output_len + 3] = 1.0;
        let v = check(p, &inputs, &out);
        assert!(!v.passed());
        assert_eq!(v.wrong, 2);
        assert_eq!(
            v.first,
            vec![
                Mismatch {
                    index: 1,
                    expected: 11.0,
                    got: Some(99.0)
                },
                Mismatch {
                    index: 2,
                    expected: 12.0,
                    got: None
                },
            ]
        );
        assert_eq!(v.written_past_end, 1);
        assert!(check(p, &inputs, &out[..3]).wrong_length);
    }

    #[test]
    fn sized_puzzles_are_checked_at_seeded_sizes_off_the_workgroup_size() {
        for p in PUZZLES {
            let all = cases(p);
            assert_eq!(all, cases(p), "{}: seeded, so the same every time", p.id);
            assert!(all[0].own && all[1..].iter().all(|c| !c.own), "{}", p.id);
            let Some(s) = p.sizing else {
                assert_eq!(all.len(), 1, "{}", p.id);
                continue;
            };
            assert!(all.len() >= 3, "{}: {} sizes", p.id, all.len());
            assert_eq!(all[0].size.len(), s.consts.len(), "{}: own size read", p.id);
            let threads = p.workgroup_size[0];
            assert!(
                all[1..].iter().any(|c| c.size[0] < threads || threads == 1),
                "{}: one size smaller than the workgroup",
                p.id
            );
            for c in &all[1..] {
                assert_ne!(c.size, all[0].size, "{}", p.id);
                if threads > 1 && c.size[0] > threads {
                    assert_ne!(c.size[0] % threads, 0, "{} {}", p.id, c.label());
                }
                assert_eq!(c.inputs.len(), p.inputs.len(), "{}", p.id);
                let text = at_size(p, &solution(p), c).expect("rewritten");
                for (name, v) in s.consts.iter().zip(&c.size) {
                    assert!(
                        text.contains(&format!("const {name}: u32 = {v}u;")),
                        "{}",
                        p.id
                    );
                }
                assert_eq!(c.initial_output().len(), c.expected.len() + GUARD);
            }
        }
        let p = find("axis_sum").unwrap_or(&PUZZLES[0]);
        let big = &cases(p)[1];
        assert!(big.size[0] >= 20 && big.size[1] >= 20, "{}", big.label());
        assert_eq!(big.workgroups[0], big.size[0]);
        assert!(big.label().contains('×'));
        // A source that no longer declares its size cannot be resized.
        let text = solution(p).replace("const C: u32 = 6u;", "const C = 6u;");
        assert_eq!(at_size(p, &text, big), None);
    }

    #[test]
    fn unknown_id_is_none() {
        assert!(find("nope").is_none());
        assert!(find("conv1d").is_some());
    }
}
