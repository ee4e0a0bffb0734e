//! The one planned-dispatch type of every model that trains on the GPU, its grid rule and its
//! named uniform words.
//!
//! A training session's planner says, per dispatch, which kernel runs, on which layer, over
//! how many workgroups, and with which uniform. The MLP and the CNN both plan into
//! [`PlannedDispatch`]; the session hands each to a [`super::ResidentPlan`]. Uniform words are
//! set by the names of the kernel's WGSL uniform struct ([`UniformLayout`]), never by
//! position, and `tests/dispatch_interfaces.rs` checks each layout against the struct.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// Most workgroups a dispatch may have along one dimension on every WebGPU device (the
/// default `maxComputeWorkgroupsPerDimension`).
pub const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// The grid of `groups` workgroups in a line: along x, wrapping into as few rows of y as
/// 65,535 per row allows, the rows as even as possible (a kernel reads its workgroup index as
/// `x + y · num_workgroups.x`, or its invocation as `x + y · row` with the row's invocations
/// in its uniform, and skips the few past the end). Even rows leave at most `rows − 1` groups
/// idle: 65,536 groups run as 32,768 × 2, not 65,535 × 2. Zero groups still launch one.
pub fn grid(groups: u32) -> [u32; 3] {
    grid_within(groups, MAX_GROUPS_PER_DIM)
}

/// [`grid`] with at most `max_x` workgroups per row (a test passes a small limit to cross the
/// wrap with a few elements).
pub fn grid_within(groups: u32, max_x: u32) -> [u32; 3] {
    let groups = groups.max(1);
    let rows = groups.div_ceil(max_x.max(1));
    [groups.div_ceil(rows), rows, 1]
}

/// The [`grid`] for `invocations` of `workgroup` threads each, and the invocations per grid
/// row (what a kernel multiplies `y` by).
pub fn grid_for(invocations: usize, workgroup: u32) -> ([u32; 3], u32) {
    grid_for_within(invocations, workgroup, MAX_GROUPS_PER_DIM)
}

/// [`grid_for`] with at most `max_x` workgroups per row.
pub fn grid_for_within(invocations: usize, workgroup: u32, max_x: u32) -> ([u32; 3], u32) {
    let groups = invocations.div_ceil(workgroup.max(1) as usize).max(1);
    let groups = u32::try_from(groups).unwrap_or(u32::MAX);
    let g = grid_within(groups, max_x);
    (g, g[0] * workgroup)
}

/// The words of a kernel's uniform struct, one name per 32-bit word in WGSL order: a scalar
/// member's own name, and a vector's or array's name once per word it holds.
#[derive(Debug, PartialEq, Eq)]
pub struct UniformLayout {
    /// The WGSL struct's name.
    pub name: &'static str,
    pub words: &'static [&'static str],
}

impl UniformLayout {
    /// The position of the word called `word` (the first, for a vector or array).
    pub fn index(&self, word: &str) -> Option<usize> {
        self.words.iter().position(|w| *w == word)
    }
}

/// A uniform block's words, filled by name. Indexing (through `Deref`) reads and writes them
/// by position for the few places that walk a table.
#[derive(Clone, PartialEq, Eq)]
pub struct Uniform {
    layout: &'static UniformLayout,
    words: Vec<u32>,
}

impl Uniform {
    /// All zeros.
    pub fn new(layout: &'static UniformLayout) -> Self {
        Self {
            layout,
            words: vec![0; layout.words.len()],
        }
    }

    /// `words` in order, zeros after them (a block built by walking its struct, such as the
    /// whole-step kernels' layer table). Panics when there are more words than the layout has:
    /// a planner bug every test that plans the kernel shows.
    pub fn from_words(layout: &'static UniformLayout, words: &[u32]) -> Self {
        assert!(
            words.len() <= layout.words.len(),
            "{} words for {}'s {}",
            words.len(),
            layout.name,
            layout.words.len()
        );
        let mut u = Self::new(layout);
        u.words[..words.len()].copy_from_slice(words);
        u
    }

    fn at(&self, word: &str) -> usize {
        match self.layout.index(word) {
            Some(i) => i,
            // A name the struct lacks is a planner bug, shown by any test that plans it.
            None => panic!("{} has no word `{word}`", self.layout.name),
        }
    }

    /// Whether its struct has a word called `word`.
    pub fn has(&self, word: &str) -> bool {
        self.layout.index(word).is_some()
    }

    /// Sets the word called `word`.
    pub fn set(&mut self, word: &str, value: u32) {
        let i = self.at(word);
        self.words[i] = value;
    }

    /// Sets the f32 word called `word`.
    pub fn set_f32(&mut self, word: &str, value: f32) {
        self.set(word, value.to_bits());
    }

    /// [`Uniform::set`], by value (for building).
    pub fn with(mut self, word: &str, value: u32) -> Self {
        self.set(word, value);
        self
    }

    /// [`Uniform::set_f32`], by value.
    pub fn with_f32(mut self, word: &str, value: f32) -> Self {
        self.set_f32(word, value);
        self
    }

    /// The word called `word`.
    pub fn get(&self, word: &str) -> u32 {
        self.words[self.at(word)]
    }

    pub fn layout(&self) -> &'static UniformLayout {
        self.layout
    }

    pub fn words(&self) -> &[u32] {
        &self.words
    }
}

impl Deref for Uniform {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.words
    }
}

impl DerefMut for Uniform {
    fn deref_mut(&mut self) -> &mut [u32] {
        &mut self.words
    }
}

impl fmt::Debug for Uniform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.layout.name, self.words)
    }
}

/// One dispatch of a training step or an evaluation: which kernel, on which layer, how many
/// threads over which workgroups, and its uniform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedDispatch {
    pub kernel_id: &'static str,
    /// The layer (1-based) it works on (an MLP layer, a CNN conv block); 0 for a dispatch
    /// over every layer, the optimiser among them (a CNN's dense layer and loss too).
    pub layer: usize,
    /// Threads launched (workgroups × workgroup size).
    pub threads: u32,
    pub workgroups: [u32; 3],
    pub uniform: Uniform,
}

impl PlannedDispatch {
    /// A dispatch over `groups` workgroups of `workgroup` threads, on [`grid`].
    pub fn over_groups(
        kernel_id: &'static str,
        layer: usize,
        groups: u32,
        workgroup: u32,
        uniform: Uniform,
    ) -> Self {
        let workgroups = grid(groups);
        Self {
            kernel_id,
            layer,
            threads: workgroups.iter().product::<u32>() * workgroup,
            workgroups,
            uniform,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static L: UniformLayout = UniformLayout {
        name: "L",
        words: &["a", "b", "t", "t"],
    };

    #[test]
    fn grids_wrap_into_even_rows_past_65535() {
        assert_eq!(grid(65_535), [65_535, 1, 1]);
        assert_eq!(grid(65_536), [32_768, 2, 1]);
        assert_eq!(grid(3 * 65_535 + 1), [49_152, 4, 1]);
        assert_eq!(grid(0), [1, 1, 1]);
        // A small limit: 1,000 invocations are 16 groups, 3 to a row, 6 rows.
        assert_eq!(grid_for_within(1000, 64, 3), ([3, 6, 1], 192));
        assert_eq!(grid_within(7, 3), [3, 3, 1]);
        assert_eq!(grid_for(1, 64), ([1, 1, 1], 64));
        assert_eq!(grid_for(64 * 65_535, 64), ([65_535, 1, 1], 64 * 65_535));
        assert_eq!(grid_for(64 * 65_535 + 1, 64), ([32_768, 2, 1], 64 * 32_768));
        // Every invocation has a thread and no row is more than one group short.
        for n in [
            1usize,
            63,
            64,
            65,
            4_194_240,
            4_194_241,
            9_999_999,
            300_000_000,
        ] {
            let ([x, y, z], row) = grid_for(n, 64);
            assert!(x <= MAX_GROUPS_PER_DIM && y <= MAX_GROUPS_PER_DIM && z == 1);
            assert!(row as u64 * y as u64 >= n as u64, "{n}");
            assert!((row as u64) * (y as u64 - 1) < n as u64, "{n}");
        }
    }

    #[test]
    fn words_are_set_by_name() {
        let u = Uniform::new(&L).with("b", 7).with_f32("a", 1.5);
        assert_eq!(u.words(), [1.5f32.to_bits(), 7, 0, 0]);
        assert_eq!(u.get("b"), 7);
        assert_eq!(Uniform::from_words(&L, &[1, 2]).words(), [1, 2, 0, 0]);
        assert!(std::panic::catch_unwind(|| Uniform::new(&L).with("nope", 1)).is_err());
    }
}
