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
}

const HOLE_BEGIN: &str = "// hole:begin";
const HOLE_END: &str = "// hole:end";

fn ramp(n: usize, start: f32) -> Vec<f32> {
    (0..n).map(|i| start + i as f32).collect()
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
}

impl Verdict {
    pub fn passed(&self) -> bool {
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
    let expected = (p.reference)(inputs);
    let mut v = Verdict {
        wrong_length: output.len() != p.output_len + GUARD,
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
        .skip(p.output_len)
        .filter(|g| g.to_bits() != SENTINEL.to_bits())
        .count();
    v
}

fn map_plus_10(x: &[Vec<f32>]) -> Vec<f32> {
    x[0].iter().map(|v| v + 10.0).collect()
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
    },
    Puzzle {
        id: "broadcast",
        source: include_str!("../../../shaders/puzzles/broadcast.wgsl"),
        inputs: &["a", "b"],
        workgroups: [1, 1, 1],
        workgroup_size: [3, 3, 1],
        output_len: 4,
        data: || vec![vec![0.0, 1.0], vec![0.0, 10.0]],
        reference: |x| {
            let n = x[0].len();
            (0..n * n).map(|i| x[0][i / n] + x[1][i % n]).collect()
        },
        mistake: ("a[r] + b[c]", "a[c] + b[r]"),
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
    },
    Puzzle {
        id: "shared",
        source: include_str!("../../../shaders/puzzles/shared.wgsl"),
        inputs: &["a"],
        workgroups: [2, 1, 1],
        workgroup_size: [4, 1, 1],
        output_len: 8,
        data: || vec![ramp(8, 0.0)],
        reference: map_plus_10,
        mistake: (
            "out[i] = tile[l] + 10.0",
            "out[i] = tile[(l + 1u) % TPB] + 10.0",
        ),
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
    },
    Puzzle {
        id: "axis_sum",
        source: include_str!("../../../shaders/puzzles/axis_sum.wgsl"),
        inputs: &["a"],
        workgroups: [4, 1, 1],
        workgroup_size: [1, 1, 1],
        output_len: 4,
        data: || vec![ramp(24, 0.0)],
        reference: |x| x[0].chunks(6).map(|row| row.iter().sum()).collect(),
        // Strides by rows instead of columns: sums a column (reading past the matrix).
        mistake: ("a[r * C + c]", "a[c * C + r]"),
    },
    Puzzle {
        id: "matmul",
        source: include_str!("../../../shaders/puzzles/matmul.wgsl"),
        inputs: &["A", "B"],
        workgroups: [1, 1, 1],
        workgroup_size: [4, 4, 1],
        output_len: 16,
        data: || vec![ramp(16, 0.0), ramp(16, 1.0)],
        reference: |x| {
            let n = 4;
            (0..n * n)
                .map(|i| {
                    (0..n)
                        .map(|k| x[0][(i / n) * n + k] * x[1][k * n + i % n])
                        .sum()
                })
                .collect()
        },
        mistake: ("B[k * N + c]", "B[c * N + k]"),
    },
    Puzzle {
        id: "conv1d",
        source: include_str!("../../../shaders/puzzles/conv1d.wgsl"),
        inputs: &["a", "b"],
        workgroups: [1, 1, 1],
        workgroup_size: [8, 1, 1],
        output_len: 8,
        data: || vec![ramp(8, 1.0), vec![1.0, 2.0, 3.0]],
        reference: |x| {
            let (a, b) = (&x[0], &x[1]);
            (0..a.len())
                .map(|i| {
                    (0..b.len())
                        .filter(|&k| i + k < a.len())
                        .map(|k| a[i + k] * b[k])
                        .sum()
                })
                .collect()
        },
        // Taps in reverse order: a flipped kernel is a different filter.
        mistake: ("* b[k]", "* b[K - 1u - k]"),
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
    fn unknown_id_is_none() {
        assert!(find("nope").is_none());
        assert!(find("conv1d").is_some());
    }
}
