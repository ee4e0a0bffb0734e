//! Step-by-step traces of the first matmul ladder stages, as the visualiser replays them.
//!
//! A trace is a list of steps. At each step every active invocation reads and writes some
//! elements; grouped by subgroup, those accesses cost global-memory sectors and lines and
//! shared-memory passes ([`crate::memory`]). The model mirrors the WGSL in `shaders/`:
//!
//! - [`Mapping::RowPerLane`] = `matmul_naive.wgsl` (x → row of C),
//! - [`Mapping::ColumnPerLane`] = `matmul_coalesced.wgsl` (x → column of C),
//! - [`Mapping::Tiled`] = `matmul_tiled.wgsl` (square TILE×TILE workgroups staging A and B in
//!   shared memory); `transpose_a` stores the A tile k-major as the register-blocked stages do,
//!   which is where bank conflicts appear, and `pad` adds words per tile row to remove them.

use crate::memory::{bank_conflict_degree, global_cost};
use crate::{InvocationIds, Launch};

/// How invocations map to the output and memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    RowPerLane,
    ColumnPerLane,
    /// `pad`: extra words at the end of each row of the A tile.
    Tiled {
        transpose_a: bool,
        pad: u32,
    },
}

/// The arrays a kernel touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Array {
    A,
    B,
    C,
    TileA,
    TileB,
    /// Convolution (`crate::conv_trace`): input NHWC, filter R×S×C×K, output NPQK, and the
    /// tiled stage's staged input patch in workgroup memory.
    X,
    F,
    Y,
    TileX,
}

impl Array {
    /// Arrays in global memory, then in workgroup (shared) memory.
    pub const GLOBAL: [Array; 6] = [Array::A, Array::B, Array::C, Array::X, Array::F, Array::Y];
    pub const SHARED: [Array; 3] = [Array::TileA, Array::TileB, Array::TileX];
}

/// What happens at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Naive/coalesced: term p of every dot product.
    Multiply { p: u32 },
    /// Tiled: tile t of A and B copied into shared memory, then a barrier.
    LoadTile { t: u32 },
    /// Tiled: term p of tile t, read from shared memory (a barrier follows the last p).
    ComputeTile { t: u32, p: u32 },
    /// The result written to C.
    Store,
    /// Direct convolution: the term (r, s, c) of every output's sum.
    ConvTap { r: u32, s: u32, c: u32 },
    /// Tiled convolution: pass `pass` of copying the input patch (channels c0…) into
    /// workgroup memory, 64 words per pass; a barrier follows the last pass.
    ConvStage { c0: u32, pass: u32, last: bool },
    /// Tiled convolution: the term (r, s, c0 + cc) read from the patch; a barrier follows the
    /// chunk's last term.
    ConvTileTap {
        c0: u32,
        r: u32,
        s: u32,
        cc: u32,
        last: bool,
    },
}

impl Step {
    /// Whether a workgroup barrier ends this step.
    pub fn ends_with_barrier(&self, tile: u32) -> bool {
        match *self {
            Step::LoadTile { .. } => true,
            Step::ComputeTile { p, .. } => p + 1 == tile,
            Step::ConvStage { last, .. } | Step::ConvTileTap { last, .. } => last,
            _ => false,
        }
    }
}

/// One invocation's memory traffic at one step: (array, element or word index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneAccess {
    pub ids: InvocationIds,
    /// False for invocations outside C that returned early, and for the unused lanes of a
    /// partial subgroup.
    pub active: bool,
    pub global_reads: Vec<(Array, u32)>,
    pub global_writes: Vec<(Array, u32)>,
    pub shared_reads: Vec<(Array, u32)>,
    pub shared_writes: Vec<(Array, u32)>,
}

impl LaneAccess {
    /// A lane that touches nothing at this step.
    pub fn idle(ids: InvocationIds) -> Self {
        LaneAccess {
            ids,
            active: false,
            global_reads: Vec::new(),
            global_writes: Vec::new(),
            shared_reads: Vec::new(),
            shared_writes: Vec::new(),
        }
    }
}

/// Costs of one step (for one subgroup, or summed over a launch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCost {
    /// Per-lane global loads and stores.
    pub global_accesses: u32,
    /// 32-byte sectors moved.
    pub sectors: u32,
    /// 128-byte lines touched.
    pub lines: u32,
    /// Per-lane shared-memory reads and writes.
    pub shared_accesses: u32,
    /// Extra serialised passes caused by bank conflicts (0 when conflict-free).
    pub bank_conflicts: u32,
    pub active_lanes: u32,
    pub inactive_lanes: u32,
}

impl std::ops::AddAssign for StepCost {
    fn add_assign(&mut self, o: Self) {
        self.global_accesses += o.global_accesses;
        self.sectors += o.sectors;
        self.lines += o.lines;
        self.shared_accesses += o.shared_accesses;
        self.bank_conflicts += o.bank_conflicts;
        self.active_lanes += o.active_lanes;
        self.inactive_lanes += o.inactive_lanes;
    }
}

/// A matmul launch to trace: C (M×N) = A (M×K) · B (K×N), f32, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulTrace {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// Workgroup size (x, y); square for the tiled mapping (TILE = x).
    pub workgroup: [u32; 2],
    pub subgroup_width: u32,
    pub mapping: Mapping,
}

impl MatmulTrace {
    fn tile(&self) -> u32 {
        self.workgroup[0].max(1)
    }

    /// Row and column of C an invocation owns.
    fn output_of(&self, ids: &InvocationIds) -> (u32, u32) {
        match self.mapping {
            Mapping::RowPerLane => (ids.global[0], ids.global[1]),
            _ => (ids.global[1], ids.global[0]),
        }
    }

    /// Shared-memory word of the A tile for (row in tile, k in tile).
    fn tile_a_word(&self, r: u32, kk: u32) -> u32 {
        let tile = self.tile();
        match self.mapping {
            Mapping::Tiled {
                transpose_a: true,
                pad,
            } => kk * (tile + pad) + r,
            Mapping::Tiled { pad, .. } => r * (tile + pad) + kk,
            _ => 0,
        }
    }

    /// What the shared tiles of `workgroup` hold during `step`: per word of each tile, the
    /// element of A or B (row-major index) loaded there, or None (zero padding outside the
    /// matrix, padding words, or nothing loaded yet). Empty for stages without tiles.
    pub fn tile_contents(&self, step: Step, workgroup: [u32; 3]) -> Vec<(Array, Vec<Option<u32>>)> {
        let t = match step {
            Step::LoadTile { t } | Step::ComputeTile { t, .. } => t,
            _ => return Vec::new(),
        };
        let Mapping::Tiled { pad, .. } = self.mapping else {
            return Vec::new();
        };
        let tile = self.tile();
        let (row0, col0) = (workgroup[1] * tile, workgroup[0] * tile);
        let mut a = vec![None; (tile * (tile + pad)) as usize];
        let mut b = vec![None; (tile * tile) as usize];
        for r in 0..tile {
            for c in 0..tile {
                let (ka, row) = (t * tile + c, row0 + r);
                if row < self.m && ka < self.k {
                    a[self.tile_a_word(r, c) as usize] = Some(row * self.k + ka);
                }
                let (kb, col) = (t * tile + r, col0 + c);
                if kb < self.k && col < self.n {
                    b[(r * tile + c) as usize] = Some(kb * self.n + col);
                }
            }
        }
        vec![(Array::TileA, a), (Array::TileB, b)]
    }
}

impl Traced for MatmulTrace {
    fn launch(&self) -> Launch {
        let [wx, wy] = [self.workgroup[0].max(1), self.workgroup[1].max(1)];
        let grid = match self.mapping {
            Mapping::RowPerLane => [self.m.div_ceil(wx), self.n.div_ceil(wy), 1],
            _ => [self.n.div_ceil(wx), self.m.div_ceil(wy), 1],
        };
        Launch {
            grid,
            workgroup: [wx, wy, 1],
            subgroup_width: self.subgroup_width.max(1),
        }
    }

    fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        match self.mapping {
            Mapping::RowPerLane | Mapping::ColumnPerLane => {
                steps.extend((0..self.k).map(|p| Step::Multiply { p }));
            }
            Mapping::Tiled { .. } => {
                let tile = self.tile();
                for t in 0..self.k.div_ceil(tile) {
                    steps.push(Step::LoadTile { t });
                    steps.extend((0..tile).map(|p| Step::ComputeTile { t, p }));
                }
            }
        }
        steps.push(Step::Store);
        steps
    }

    fn access(&self, step: Step, ids: InvocationIds) -> LaneAccess {
        let (row, col) = self.output_of(&ids);
        let inside = row < self.m && col < self.n;
        let mut a = LaneAccess::idle(ids);
        match (self.mapping, step) {
            (Mapping::RowPerLane | Mapping::ColumnPerLane, Step::Multiply { p }) => {
                // Invocations outside C returned at the top of the kernel.
                a.active = inside;
                if inside {
                    a.global_reads.push((Array::A, row * self.k + p));
                    a.global_reads.push((Array::B, p * self.n + col));
                }
            }
            (Mapping::Tiled { .. }, Step::LoadTile { t }) => {
                // Every invocation takes part in the tile loads and barriers.
                a.active = true;
                let tile = self.tile();
                let (lx, ly) = (ids.local[0], ids.local[1]);
                let ka = t * tile + lx;
                if row < self.m && ka < self.k {
                    a.global_reads.push((Array::A, row * self.k + ka));
                }
                a.shared_writes
                    .push((Array::TileA, self.tile_a_word(ly, lx)));
                let kb = t * tile + ly;
                if kb < self.k && col < self.n {
                    a.global_reads.push((Array::B, kb * self.n + col));
                }
                a.shared_writes.push((Array::TileB, ly * tile + lx));
            }
            (Mapping::Tiled { .. }, Step::ComputeTile { p, .. }) => {
                a.active = true;
                let tile = self.tile();
                let (lx, ly) = (ids.local[0], ids.local[1]);
                a.shared_reads.push((Array::TileA, self.tile_a_word(ly, p)));
                a.shared_reads.push((Array::TileB, p * tile + lx));
            }
            (_, Step::Store) => {
                a.active = inside;
                if inside {
                    a.global_writes.push((Array::C, row * self.n + col));
                }
            }
            _ => {}
        }
        a
    }
}

/// A traced launch: what the visualiser steps through. Each stage kind says its launch, its
/// steps and each lane's accesses; the costs follow from those the same way for every kind.
pub trait Traced {
    /// The dispatch this trace describes.
    fn launch(&self) -> Launch;

    /// All steps, in order.
    fn steps(&self) -> Vec<Step>;

    /// What the invocation `ids` (inside its workgroup) accesses at `step`.
    fn access(&self, step: Step, ids: InvocationIds) -> LaneAccess;

    /// Every lane of subgroup `subgroup` of `workgroup` at `step`; lanes past the end of the
    /// workgroup (a partial last subgroup) are idle.
    fn lanes(&self, step: Step, workgroup: [u32; 3], subgroup: u32) -> Vec<LaneAccess> {
        let launch = self.launch();
        let per_wg = launch.invocations_per_workgroup();
        let width = launch.subgroup_width;
        (0..width)
            .map(|lane| {
                let local_index = subgroup * width + lane;
                let ids = launch.ids(workgroup, local_index.min(per_wg.saturating_sub(1)));
                let ids = InvocationIds {
                    local_index,
                    lane,
                    subgroup,
                    ..ids
                };
                if local_index >= per_wg {
                    LaneAccess::idle(ids)
                } else {
                    self.access(step, ids)
                }
            })
            .collect()
    }

    /// What one subgroup's accesses at `step` cost.
    fn subgroup_cost(&self, step: Step, workgroup: [u32; 3], subgroup: u32) -> StepCost {
        lanes_cost(&self.lanes(step, workgroup, subgroup))
    }

    /// Costs of `step` summed over every subgroup of the launch.
    fn step_cost(&self, step: Step) -> StepCost {
        let launch = self.launch();
        let mut total = StepCost::default();
        for z in 0..launch.grid[2] {
            for y in 0..launch.grid[1] {
                for x in 0..launch.grid[0] {
                    for sg in 0..launch.subgroups_per_workgroup() {
                        total += self.subgroup_cost(step, [x, y, z], sg);
                    }
                }
            }
        }
        total
    }

    /// Running totals after each step (what the counters show while playing).
    fn running_totals(&self) -> Vec<StepCost> {
        let mut acc = StepCost::default();
        self.steps()
            .into_iter()
            .map(|s| {
                acc += self.step_cost(s);
                acc
            })
            .collect()
    }
}

/// What one subgroup's lanes cost together: per (kind of access, array) one memory
/// instruction, the lanes' addresses together — global sectors and lines, shared-memory
/// bank-conflict passes.
pub fn lanes_cost(lanes: &[LaneAccess]) -> StepCost {
    let mut cost = StepCost {
        active_lanes: lanes.iter().filter(|l| l.active).count() as u32,
        inactive_lanes: lanes.iter().filter(|l| !l.active).count() as u32,
        ..Default::default()
    };
    type Pick = fn(&LaneAccess) -> &[(Array, u32)];
    let global: [Pick; 2] = [|l| &l.global_reads, |l| &l.global_writes];
    let shared: [Pick; 2] = [|l| &l.shared_reads, |l| &l.shared_writes];
    let byte_addresses = |pick: Pick, arr: Array| -> Vec<u64> {
        lanes
            .iter()
            .flat_map(|l| pick(l).iter())
            .filter(|(a, _)| *a == arr)
            .map(|(_, i)| *i as u64 * 4)
            .collect()
    };
    for pick in global {
        for arr in Array::GLOBAL {
            let addrs = byte_addresses(pick, arr);
            if !addrs.is_empty() {
                let g = global_cost(&addrs, 4);
                cost.global_accesses += addrs.len() as u32;
                cost.sectors += g.sectors;
                cost.lines += g.lines;
            }
        }
    }
    for pick in shared {
        for arr in Array::SHARED {
            let addrs = byte_addresses(pick, arr);
            if !addrs.is_empty() {
                cost.shared_accesses += addrs.len() as u32;
                cost.bank_conflicts += bank_conflict_degree(&addrs).saturating_sub(1);
            }
        }
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(mapping: Mapping, m: u32, n: u32, k: u32, wg: [u32; 2]) -> MatmulTrace {
        MatmulTrace {
            m,
            n,
            k,
            workgroup: wg,
            subgroup_width: 32,
            mapping,
        }
    }

    #[test]
    fn naive_moves_many_more_sectors_than_coalesced() {
        // 64×64×64 with 32×8 workgroups: a subgroup is 32 consecutive x.
        let naive = trace(Mapping::RowPerLane, 64, 64, 64, [32, 8]);
        let coal = trace(Mapping::ColumnPerLane, 64, 64, 64, [32, 8]);
        let step = Step::Multiply { p: 5 };
        let n = naive.subgroup_cost(step, [0, 0, 0], 0);
        let c = coal.subgroup_cost(step, [0, 0, 0], 0);
        // Naive: A from 32 rows (32 sectors) + B one word (1 sector).
        assert_eq!(n.sectors, 33);
        // Coalesced: A one word (1) + B 32 consecutive words = 128 bytes (4 sectors).
        assert_eq!(c.sectors, 5);
        assert_eq!((n.global_accesses, c.global_accesses), (64, 64));
        // Over the whole launch and all steps the ratio is the same 33 : 5.
        let (tn, tc) = (naive.running_totals(), coal.running_totals());
        let (ln, lc) = (tn[63], tc[63]);
        assert_eq!(ln.sectors * 5, lc.sectors * 33);
    }

    #[test]
    fn edges_leave_lanes_idle() {
        // 40 columns with 32-wide subgroups: the second subgroup row-chunk has 8 active lanes.
        let t = trace(Mapping::ColumnPerLane, 1, 40, 3, [64, 1]);
        let c = t.subgroup_cost(Step::Multiply { p: 0 }, [0, 0, 0], 1);
        assert_eq!((c.active_lanes, c.inactive_lanes), (8, 24));
        let store = t.subgroup_cost(Step::Store, [0, 0, 0], 1);
        assert_eq!(store.global_accesses, 8);
    }

    #[test]
    fn tiled_steps_barriers_and_shared_reuse() {
        let t = trace(
            Mapping::Tiled {
                transpose_a: false,
                pad: 0,
            },
            32,
            32,
            40,
            [16, 16],
        );
        let steps = t.steps();
        // ceil(40/16) = 3 tiles × (1 load + 16 compute) + 1 store
        assert_eq!(steps.len(), 3 * 17 + 1);
        assert!(Step::LoadTile { t: 0 }.ends_with_barrier(16));
        assert!(Step::ComputeTile { t: 0, p: 15 }.ends_with_barrier(16));
        assert!(!Step::ComputeTile { t: 0, p: 3 }.ends_with_barrier(16));
        // The last tile only half overlaps K: lanes with k ≥ 40 load nothing from A.
        let last = t.lanes(Step::LoadTile { t: 2 }, [0, 0, 0], 0);
        assert_eq!(
            last.iter()
                .filter(|l| l.global_reads.iter().any(|r| r.0 == Array::A))
                .count(),
            16
        );
        // A compute step touches no global memory.
        let c = t.subgroup_cost(Step::ComputeTile { t: 0, p: 3 }, [0, 0, 0], 0);
        assert_eq!((c.global_accesses, c.shared_accesses), (0, 64));
        assert_eq!(c.bank_conflicts, 0);
    }

    #[test]
    fn transposed_tile_conflicts_and_padding_fixes_it() {
        let with_pad = |pad| {
            trace(
                Mapping::Tiled {
                    transpose_a: true,
                    pad,
                },
                32,
                32,
                32,
                [16, 16],
            )
            .subgroup_cost(Step::LoadTile { t: 0 }, [0, 0, 0], 0)
            .bank_conflicts
        };
        // A subgroup is two rows of 16 lanes; lane (x, y) writes word x·(16 + pad) + y.
        // pad 0: words 16x + y fall in 2 banks, 8 words each: 7 extra passes.
        assert_eq!(with_pad(0), 7);
        // pad 1: stride 17 spreads one row over 16 banks, but x = 15 of row 1 wraps onto
        // bank 0 of row 0: one extra pass.
        assert_eq!(with_pad(1), 1);
        // pad 2: stride 18 puts row 0 on the even banks and row 1 on the odd ones.
        assert_eq!(with_pad(2), 0);
    }

    #[test]
    fn tiles_hold_the_right_elements() {
        let t = trace(
            Mapping::Tiled {
                transpose_a: false,
                pad: 0,
            },
            20,
            20,
            20,
            [16, 16],
        );
        // Workgroup (1, 0), tile 1: A rows 0–15, k 16–31 (only 16–19 exist); B k 16–31, cols 16–31.
        let c = t.tile_contents(Step::ComputeTile { t: 1, p: 0 }, [1, 0, 0]);
        let (a, b) = (&c[0].1, &c[1].1);
        assert_eq!(a[0], Some(16)); // A[0][16]
        assert_eq!(a[3], Some(19)); // A[0][19]
        assert_eq!(a[4], None); // k = 20 is outside A: zero padding
        assert_eq!(b[0], Some(16 * 20 + 16)); // B[16][16]
        assert_eq!(b[4 * 16], None); // k = 20
        assert_eq!(b[4], None); // column 20 is outside B
        assert!(t.tile_contents(Step::Store, [0, 0, 0]).is_empty());
    }

    #[test]
    fn ids_carry_both_namings() {
        let t = trace(Mapping::ColumnPerLane, 64, 64, 1, [16, 16]);
        let lanes = t.lanes(Step::Store, [1, 2, 0], 3);
        let l = &lanes[5];
        // local index 3·32 + 5 = 101 → (5, 6) in a 16-wide workgroup
        assert_eq!(l.ids.local, [5, 6, 0]);
        assert_eq!(l.ids.global, [21, 38, 0]);
        assert_eq!((l.ids.subgroup, l.ids.lane), (3, 5));
    }
}
