//! The loop budget's policy for learner kernels (editor, scratch mode, puzzles): how many
//! iterations each loop of a rewritten kernel may run (`wgsl-check`'s `loop_budget` does the
//! rewrite), and which loop the flag buffer says was stopped. Plain arithmetic, shared by the
//! edit targets and the pages, so it sits below both.

/// Iterations a loop may run before the loop budget stops it, beyond four times the work
/// each invocation has on average (launch overheads, loads of tiles, short fixed loops).
pub const SLACK: u32 = 4096;

/// The loop budget for a run of `work` inner-loop iterations in all (the family's total:
/// m·n·k for a matmul) over `invocations` threads: 4 × ⌈work / invocations⌉ + slack, so a
/// catalogue kernel, register-tiled ones included (each thread's innermost loop runs its
/// share of the work once), never reaches it, and an endless loop stops after a few times
/// the honest kernel's own iterations.
pub fn budget(work: f64, invocations: f64) -> u32 {
    let per = (work.max(0.0) / invocations.max(1.0)).ceil();
    (4.0 * per + f64::from(SLACK)).min(f64::from(u32::MAX / 2)) as u32
}

/// The first line (in source order) of the loops `lines` whose flag word is set in `words`
/// (word 0 counts the trips, word `1 + n` marks loop `n`); None when no loop was stopped.
pub fn stopped_line(lines: &[u32], words: &[u32]) -> Option<u32> {
    if words.first().copied().unwrap_or(0) == 0 {
        return None;
    }
    let marked = lines
        .iter()
        .enumerate()
        .filter(|(n, _)| words.get(1 + n).copied().unwrap_or(0) != 0)
        .map(|(_, l)| *l)
        .min();
    // Trips counted but no loop marked cannot happen; still never claim "verified".
    Some(marked.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_budget_scales_with_each_threads_work() {
        // 64³ matmul, one output per thread: k iterations each.
        assert_eq!(budget(64.0 * 64.0 * 64.0, 64.0 * 64.0), 4 * 64 + 4096);
        // Register tiling: 16 outputs per thread means 16× the innermost iterations.
        assert_eq!(budget(64.0 * 64.0 * 64.0, 256.0), 4 * 1024 + 4096);
        assert_eq!(budget(0.0, 0.0), 4096);
        assert_eq!(budget(1e30, 1.0), u32::MAX / 2);
    }

    #[test]
    fn stopped_line_reads_the_flag_words() {
        let lines = [12, 5, 30];
        assert_eq!(stopped_line(&lines, &[]), None);
        assert_eq!(stopped_line(&lines, &[0, 0, 0, 0]), None);
        assert_eq!(stopped_line(&lines, &[2, 1, 0, 1]), Some(12));
        assert_eq!(stopped_line(&lines, &[1, 0, 1, 0]), Some(5));
        assert_eq!(stopped_line(&lines, &[1]), Some(0));
    }
}
