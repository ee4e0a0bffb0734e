//! The access log of an instrumented run (see `wgsl_check::instrument`), decoded and counted
//! for the puzzle page's access view. Pure data: the words the GPU wrote in, counts out.
//!
//! Layout: word 0 = accesses attempted; records of [`RECORD_WORDS`] words from
//! [`HEADER_WORDS`]: invocation linear id, array number, element index, kind bits
//! ([`READ`] | [`WRITE`]).

pub const HEADER_WORDS: usize = 4;
pub const RECORD_WORDS: usize = 4;
pub const READ: u32 = 1;
pub const WRITE: u32 = 2;
/// Records the page's log buffer has room for (more are counted, not kept).
pub const CAPACITY: usize = 4096;

/// Words of a log buffer with room for `records` records.
pub fn log_words(records: usize) -> usize {
    HEADER_WORDS + records * RECORD_WORDS
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub invocation: u32,
    pub array: u32,
    pub index: u32,
    pub kind: u32,
}

impl Access {
    pub fn reads(&self) -> bool {
        self.kind & READ != 0
    }
    pub fn writes(&self) -> bool {
        self.kind & WRITE != 0
    }
}

/// One logged array as the view needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayInfo {
    pub name: String,
    /// Elements the puzzle means it to have (an index at or past it is out of bounds).
    pub len: usize,
    /// Workgroup (shared) memory rather than a storage buffer.
    pub shared: bool,
}

/// Counts per invocation and in total.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Summary {
    pub records: Vec<Access>,
    /// Accesses attempted, including those past the log's capacity.
    pub attempted: u32,
    /// Attempted but not recorded (the log was full).
    pub dropped: u32,
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
    /// Accesses to workgroup memory, per invocation.
    pub shared: Vec<u32>,
    /// Accesses at an index at or past the array's length, per invocation.
    pub out_of_bounds: Vec<u32>,
    /// Elements of storage arrays written by more than one invocation (a race: one write
    /// survives, which one is chance), in (array, index) order.
    pub overwritten: Vec<Overwrite>,
}

/// An element several invocations write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overwrite {
    pub array: u32,
    pub index: u32,
    /// The writing invocations, in increasing order.
    pub writers: Vec<u32>,
}

impl Summary {
    pub fn total_out_of_bounds(&self) -> u32 {
        self.out_of_bounds.iter().sum()
    }
    pub fn total_shared(&self) -> u32 {
        self.shared.iter().sum()
    }
    /// Accesses of invocation `inv`, in log order.
    pub fn of(&self, inv: u32) -> impl Iterator<Item = &Access> {
        self.records.iter().filter(move |a| a.invocation == inv)
    }
}

/// Decodes `words` for a launch of `invocations` invocations over `arrays` (numbered as the
/// instrumenter numbered them). Records naming an unknown array or invocation are kept out of
/// the counts (they cannot come from a correct log) but the totals stay honest.
pub fn summarize(words: &[u32], arrays: &[ArrayInfo], invocations: u32) -> Summary {
    let n = invocations as usize;
    let mut s = Summary {
        attempted: words.first().copied().unwrap_or(0),
        reads: vec![0; n],
        writes: vec![0; n],
        shared: vec![0; n],
        out_of_bounds: vec![0; n],
        ..Default::default()
    };
    let room = words.len().saturating_sub(HEADER_WORDS) / RECORD_WORDS;
    let kept = (s.attempted as usize).min(room);
    s.dropped = s.attempted - kept as u32;
    for r in 0..kept {
        let w = &words[HEADER_WORDS + r * RECORD_WORDS..][..RECORD_WORDS];
        let a = Access {
            invocation: w[0],
            array: w[1],
            index: w[2],
            kind: w[3],
        };
        let (Some(info), true) = (arrays.get(a.array as usize), (a.invocation as usize) < n) else {
            continue;
        };
        let i = a.invocation as usize;
        if a.reads() {
            s.reads[i] += 1;
        }
        if a.writes() {
            s.writes[i] += 1;
        }
        if info.shared {
            s.shared[i] += 1;
        }
        if a.index as usize >= info.len {
            s.out_of_bounds[i] += 1;
        }
        s.records.push(a);
    }
    let mut writers: std::collections::BTreeMap<(u32, u32), Vec<u32>> = Default::default();
    for a in s.records.iter().filter(|a| a.writes()) {
        let shared = arrays.get(a.array as usize).is_some_and(|i| i.shared);
        if !shared {
            let w = writers.entry((a.array, a.index)).or_default();
            if !w.contains(&a.invocation) {
                w.push(a.invocation);
            }
        }
    }
    s.overwritten = writers
        .into_iter()
        .filter(|(_, w)| w.len() > 1)
        .map(|((array, index), mut writers)| {
            writers.sort_unstable();
            Overwrite {
                array,
                index,
                writers,
            }
        })
        .collect();
    s
}

/// The first element of array number `out` (the answer) that more than one invocation
/// wrote: what makes a verdict not solved even when every value matches.
pub fn race(s: &Summary, out: u32) -> Option<Overwrite> {
    s.overwritten.iter().find(|o| o.array == out).cloned()
}

/// The array number the instrumenter gave the answer, `out` (bound just after the inputs),
/// among `(binding)`s in its numbering.
pub fn out_array(
    p: &crate::Puzzle,
    bindings: impl IntoIterator<Item = Option<u32>>,
) -> Option<u32> {
    let out = p.inputs.len() as u32;
    bindings
        .into_iter()
        .position(|b| b == Some(out))
        .map(|i| i as u32)
}

/// Where invocation `inv` (the log's linear id: workgroup number × threads per workgroup +
/// local index) sits in a launch with `workgroup_size`: its local (x, y, z) and its workgroup's
/// linear number.
pub fn thread_of(workgroup_size: [u32; 3], inv: u32) -> ([u32; 3], u32) {
    let [x, y, z] = workgroup_size.map(|v| v.max(1));
    let per = x * y * z;
    let local = inv % per;
    ([local % x, (local / x) % y, local / (x * y)], inv / per)
}

/// A thread as the learner names it: "5" in a 1-D workgroup, "(x, y)" in a 2-D one,
/// "(x, y, z)" in a 3-D one (local ids).
pub fn thread_label(workgroup_size: [u32; 3], inv: u32) -> String {
    let ([x, y, z], _) = thread_of(workgroup_size, inv);
    match workgroup_size {
        [_, 1, 1] => x.to_string(),
        [_, _, 1] => format!("({x}, {y})"),
        _ => format!("({x}, {y}, {z})"),
    }
}

/// The length a logged array has for puzzle `p` (bound by the crate's convention): an input's
/// data length, the answer's length for `out` (its guard elements count as out of bounds),
/// a workgroup array's declared size; 0 for a binding the puzzle does not provide.
pub fn logical_len(
    p: &crate::Puzzle,
    inputs: &[Vec<f32>],
    binding: Option<u32>,
    fixed: Option<u32>,
) -> usize {
    match (binding, fixed) {
        (None, Some(n)) => n as usize,
        (Some(b), _) if (b as usize) < inputs.len() => inputs[b as usize].len(),
        (Some(b), _) if b as usize == p.inputs.len() => p.output_len,
        _ => 0,
    }
}

/// Invocations a launch of `p` runs.
pub fn invocations(p: &crate::Puzzle) -> u32 {
    invocations_over(p, p.workgroups)
}

/// Invocations a launch of `p` over `workgroups` runs (a case's own launch).
pub fn invocations_over(p: &crate::Puzzle, workgroups: [u32; 3]) -> u32 {
    workgroups.iter().product::<u32>() * p.workgroup_size.iter().product::<u32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays() -> Vec<ArrayInfo> {
        vec![
            ArrayInfo {
                name: "a".into(),
                len: 4,
                shared: false,
            },
            ArrayInfo {
                name: "tile".into(),
                len: 2,
                shared: true,
            },
        ]
    }

    #[test]
    fn counts_reads_writes_shared_and_out_of_bounds() {
        let mut w = vec![3, 0, 0, 0];
        w.extend([1, 0, 1, READ]);
        w.extend([1, 1, 5, WRITE]);
        w.extend([0, 1, 0, READ | WRITE]);
        let s = summarize(&w, &arrays(), 2);
        assert_eq!(s.reads, [1, 1]);
        assert_eq!(s.writes, [1, 1]);
        assert_eq!(s.shared, [1, 1]);
        assert_eq!(s.out_of_bounds, [0, 1]);
        assert_eq!(s.dropped, 0);
        assert_eq!(s.of(1).count(), 2);
        // Two invocations writing the same element of tile (workgroup memory) is no race
        // across the launch: not reported.
        assert!(s.overwritten.is_empty());
    }

    #[test]
    fn an_element_written_by_two_threads_is_reported_with_both() {
        let mut w = vec![4, 0, 0, 0];
        w.extend([3, 0, 3, WRITE]);
        w.extend([4, 0, 3, WRITE]);
        w.extend([4, 0, 3, WRITE]); // the same thread twice is one writer
        w.extend([1, 0, 1, WRITE]);
        let s = summarize(&w, &arrays(), 16);
        assert_eq!(
            s.overwritten,
            vec![Overwrite {
                array: 0,
                index: 3,
                writers: vec![3, 4]
            }]
        );
    }

    #[test]
    fn a_race_is_an_element_of_out_written_twice_not_one_of_another_array() {
        let mut w = vec![4, 0, 0, 0];
        w.extend([0, 0, 1, WRITE]);
        w.extend([1, 0, 1, WRITE]);
        w.extend([0, 2, 3, WRITE]);
        w.extend([1, 2, 3, WRITE]);
        let mut a = arrays();
        a.push(ArrayInfo {
            name: "out".into(),
            len: 4,
            shared: false,
        });
        let s = summarize(&w, &a, 2);
        let r = race(&s, 2).expect("out[3] has two writers");
        assert_eq!((r.index, r.writers), (3, vec![0, 1]));
        assert_eq!(race(&s, 1), None);
        let p = crate::find("zip").expect("zip");
        // zip binds a, b, then out: out is the third array logged when all three are.
        assert_eq!(out_array(p, [Some(0), Some(1), Some(2)]), Some(2));
        assert_eq!(out_array(p, [None, Some(2)]), Some(1));
        assert_eq!(out_array(p, [Some(0)]), None);
    }

    #[test]
    fn threads_of_a_2d_workgroup_are_named_by_x_and_y() {
        assert_eq!(thread_of([4, 4, 1], 6), ([2, 1, 0], 0));
        assert_eq!(thread_of([4, 4, 1], 17), ([1, 0, 0], 1));
        assert_eq!(thread_label([4, 4, 1], 7), "(3, 1)");
        assert_eq!(thread_label([8, 1, 1], 7), "7");
        assert_eq!(thread_label([2, 2, 2], 7), "(1, 1, 1)");
        assert_eq!(thread_of([0, 0, 0], 3), ([0, 0, 0], 3));
    }

    #[test]
    fn a_full_log_counts_what_it_dropped_and_garbage_is_ignored() {
        let mut w = vec![10, 0, 0, 0];
        w.extend([7, 0, 0, READ]); // invocation past the launch
        w.extend([0, 9, 0, READ]); // unknown array
        let s = summarize(&w, &arrays(), 2);
        assert_eq!((s.attempted, s.dropped), (10, 8));
        assert!(s.records.is_empty());
        assert_eq!(summarize(&[], &arrays(), 1).attempted, 0);
        assert_eq!(log_words(2), 12);
    }
}
