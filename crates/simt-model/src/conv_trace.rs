//! Step-by-step traces of the first two conv ladder stages, with the same lanes and costs as
//! the matmul traces ([`crate::trace`]). The model mirrors the WGSL:
//!
//! - [`ConvMapping::Direct`] = `conv_direct.wgsl`: 16×16 workgroups, x along the filters k,
//!   y along the output pixels m = (n·P + p)·Q + q; one step per term (r, s, c) of the sums,
//!   each read straight from global memory (a tap in the padding reads nothing).
//! - [`ConvMapping::Tiled`] = `conv_tiled.wgsl`: 8×8 workgroups, each an 8×8 patch of output
//!   pixels for 8 filters; per chunk of channels, the input patch *with its halo* (th × tw ×
//!   chunk floats, th = 7·stride + dil·(R−1) + 1) is copied into workgroup memory by all 64
//!   invocations, 64 words per pass, then every term is read from there.

use crate::trace::{Array, LaneAccess, Step, Traced};
use crate::{InvocationIds, Launch};

/// Output patch side and filters per workgroup of the tiled stage, and its workgroup floats
/// (the shader's `TP`/`TQ`, `KT` and `TILE_FLOATS`).
pub const TILED_SIDE: u32 = 8;
pub const TILED_KT: u32 = 8;
pub const TILE_FLOATS: u32 = 3840;
/// The direct stage's workgroup side.
pub const DIRECT_SIDE: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvMapping {
    Direct,
    Tiled,
}

/// A convolution launch to trace (layouts of `cpu_kernels::conv`: NHWC, R×S×C×K, NPQK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvTrace {
    pub n: u32,
    pub c: u32,
    pub h: u32,
    pub w: u32,
    pub k: u32,
    pub r: u32,
    pub s: u32,
    pub stride: u32,
    pub pad: u32,
    pub dil: u32,
    pub subgroup_width: u32,
    pub mapping: ConvMapping,
}

impl ConvTrace {
    /// Output height and width (P, Q); 0 when the filter does not fit.
    pub fn out_hw(&self) -> (u32, u32) {
        let size = |len: u32, f: u32| {
            let span = self.dil * (f.max(1) - 1) + 1;
            let padded = len + 2 * self.pad;
            if padded < span {
                0
            } else {
                (padded - span) / self.stride.max(1) + 1
            }
        };
        (size(self.h, self.r), size(self.w, self.s))
    }

    fn pixels(&self) -> u32 {
        let (p, q) = self.out_hw();
        self.n * p * q
    }

    /// The tiled stage's patch rows and columns (tile plus halo) and channels per chunk.
    pub fn patch(&self) -> (u32, u32, u32) {
        let th = (TILED_SIDE - 1) * self.stride + self.dil * (self.r.max(1) - 1) + 1;
        let tw = (TILED_SIDE - 1) * self.stride + self.dil * (self.s.max(1) - 1) + 1;
        let chunk = 8.min(self.c).min(TILE_FLOATS / (th * tw)).max(1);
        (th, tw, chunk)
    }

    fn passes(&self) -> u32 {
        let (th, tw, chunk) = self.patch();
        (th * tw * chunk).div_ceil(TILED_SIDE * TILED_SIDE)
    }

    /// The input pixel a window tap reads: (row, column) inside the image, or None (padding).
    fn tap(&self, p: u32, q: u32, r: u32, s: u32) -> Option<(u32, u32)> {
        let ih = (p * self.stride + r * self.dil) as i64 - self.pad as i64;
        let iw = (q * self.stride + s * self.dil) as i64 - self.pad as i64;
        (ih >= 0 && iw >= 0 && ih < self.h as i64 && iw < self.w as i64)
            .then_some((ih as u32, iw as u32))
    }

    fn x_index(&self, n: u32, ih: u32, iw: u32, c: u32) -> u32 {
        ((n * self.h + ih) * self.w + iw) * self.c + c
    }

    fn direct(&self, step: Step, a: &mut LaneAccess) {
        let (k, m) = (a.ids.global[0], a.ids.global[1]);
        // Invocations past the last filter or pixel returned at the top of the kernel.
        a.active = k < self.k && m < self.pixels();
        if !a.active {
            return;
        }
        let (_, q_len) = self.out_hw();
        let (p_len, _) = self.out_hw();
        let (q, p, n) = (m % q_len, (m / q_len) % p_len, m / (q_len * p_len));
        match step {
            Step::ConvTap { r, s, c } => {
                if let Some((ih, iw)) = self.tap(p, q, r, s) {
                    a.global_reads.push((Array::X, self.x_index(n, ih, iw, c)));
                    a.global_reads
                        .push((Array::F, ((r * self.s + s) * self.c + c) * self.k + k));
                }
            }
            Step::Store => a.global_writes.push((Array::Y, m * self.k + k)),
            _ => {}
        }
    }

    /// The tiled stage's workgroup position: first output row and column, first filter, image.
    fn tile_origin(&self, wg: [u32; 3]) -> (u32, u32, u32, u32) {
        let (_, q) = self.out_hw();
        let tiles_q = q.div_ceil(TILED_SIDE).max(1);
        (
            (wg[0] / tiles_q) * TILED_SIDE,
            (wg[0] % tiles_q) * TILED_SIDE,
            wg[1] * TILED_KT,
            wg[2],
        )
    }

    /// The input element staged at word `i` of the patch for channels c0…, if any (None:
    /// padding, or past the last channel — the shader stores a zero there).
    fn staged(&self, wg: [u32; 3], c0: u32, i: u32) -> Option<u32> {
        let (th, tw, chunk) = self.patch();
        if i >= th * tw * chunk {
            return None;
        }
        let (p0, q0, _, n) = self.tile_origin(wg);
        let (cc, col, row) = (i % chunk, (i / chunk) % tw, i / (chunk * tw));
        let ih = (p0 * self.stride + row) as i64 - self.pad as i64;
        let iw = (q0 * self.stride + col) as i64 - self.pad as i64;
        let inside = ih >= 0 && iw >= 0 && ih < self.h as i64 && iw < self.w as i64;
        (inside && c0 + cc < self.c).then(|| self.x_index(n, ih as u32, iw as u32, c0 + cc))
    }

    fn tiled(&self, step: Step, a: &mut LaneAccess) {
        let (th, tw, chunk) = self.patch();
        let [lx, ly, _] = a.ids.local;
        let wg = a.ids.workgroup;
        let (p0, q0, k0, n) = self.tile_origin(wg);
        let (p_len, q_len) = self.out_hw();
        let (p, q) = (p0 + ly, q0 + lx);
        // Every invocation stages and waits at the barriers; only the store is guarded.
        a.active = true;
        match step {
            Step::ConvStage { c0, pass, .. } => {
                let i = a.ids.local_index + pass * TILED_SIDE * TILED_SIDE;
                if i < th * tw * chunk {
                    if let Some(x) = self.staged(wg, c0, i) {
                        a.global_reads.push((Array::X, x));
                    }
                    a.shared_writes.push((Array::TileX, i));
                }
            }
            Step::ConvTileTap { c0, r, s, cc, .. } => {
                let row = ly * self.stride + r * self.dil;
                let col = lx * self.stride + s * self.dil;
                a.shared_reads
                    .push((Array::TileX, (row * tw + col) * chunk + cc));
                let fb = ((r * self.s + s) * self.c + c0 + cc) * self.k + k0;
                for j in 0..TILED_KT {
                    if k0 + j < self.k {
                        a.global_reads.push((Array::F, fb + j));
                    }
                }
            }
            Step::Store => {
                a.active = p < p_len && q < q_len && n < self.n;
                if a.active {
                    let out = ((n * p_len + p) * q_len + q) * self.k;
                    for j in 0..TILED_KT {
                        if k0 + j < self.k {
                            a.global_writes.push((Array::Y, out + k0 + j));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// What workgroup memory holds during `step` (tiled only): per word of the patch, the
    /// input element staged there, or None (a zero, or not loaded yet).
    pub fn tile_contents(&self, step: Step, workgroup: [u32; 3]) -> Vec<(Array, Vec<Option<u32>>)> {
        if self.mapping != ConvMapping::Tiled {
            return Vec::new();
        }
        let (th, tw, chunk) = self.patch();
        let len = th * tw * chunk;
        let (c0, loaded) = match step {
            Step::ConvStage { c0, pass, .. } => (c0, (pass + 1) * TILED_SIDE * TILED_SIDE),
            Step::ConvTileTap { c0, .. } => (c0, len),
            _ => return Vec::new(),
        };
        let words = (0..len)
            .map(|i| {
                (i < loaded)
                    .then(|| self.staged(workgroup, c0, i))
                    .flatten()
            })
            .collect();
        vec![(Array::TileX, words)]
    }

    /// Input reuse over the whole launch: (global reads of the input, distinct input elements
    /// read). Their ratio is how often each value is fetched from global memory.
    pub fn x_reuse(&self) -> (u64, u64) {
        let launch = self.launch();
        let mut reads = 0u64;
        let mut seen = std::collections::BTreeSet::new();
        for step in self.steps() {
            for z in 0..launch.grid[2] {
                for y in 0..launch.grid[1] {
                    for x in 0..launch.grid[0] {
                        for sg in 0..launch.subgroups_per_workgroup() {
                            for lane in self.lanes(step, [x, y, z], sg) {
                                for (arr, i) in lane.global_reads {
                                    if arr == Array::X {
                                        reads += 1;
                                        seen.insert(i);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (reads, seen.len() as u64)
    }
}

impl Traced for ConvTrace {
    fn launch(&self) -> Launch {
        let width = self.subgroup_width.max(1);
        match self.mapping {
            ConvMapping::Direct => Launch {
                grid: [
                    self.k.div_ceil(DIRECT_SIDE),
                    self.pixels().div_ceil(DIRECT_SIDE),
                    1,
                ],
                workgroup: [DIRECT_SIDE, DIRECT_SIDE, 1],
                subgroup_width: width,
            },
            ConvMapping::Tiled => {
                let (p, q) = self.out_hw();
                Launch {
                    grid: [
                        q.div_ceil(TILED_SIDE) * p.div_ceil(TILED_SIDE),
                        self.k.div_ceil(TILED_KT),
                        self.n,
                    ],
                    workgroup: [TILED_SIDE, TILED_SIDE, 1],
                    subgroup_width: width,
                }
            }
        }
    }

    fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        match self.mapping {
            ConvMapping::Direct => {
                for r in 0..self.r {
                    for s in 0..self.s {
                        steps.extend((0..self.c).map(|c| Step::ConvTap { r, s, c }));
                    }
                }
            }
            ConvMapping::Tiled => {
                let (_, _, chunk) = self.patch();
                let passes = self.passes();
                for c0 in (0..self.c).step_by(chunk as usize) {
                    steps.extend((0..passes).map(|pass| Step::ConvStage {
                        c0,
                        pass,
                        last: pass + 1 == passes,
                    }));
                    let cn = chunk.min(self.c - c0);
                    for r in 0..self.r {
                        for s in 0..self.s {
                            for cc in 0..cn {
                                let last = r + 1 == self.r && s + 1 == self.s && cc + 1 == cn;
                                steps.push(Step::ConvTileTap { c0, r, s, cc, last });
                            }
                        }
                    }
                }
            }
        }
        steps.push(Step::Store);
        steps
    }

    fn access(&self, step: Step, ids: InvocationIds) -> LaneAccess {
        let mut a = LaneAccess::idle(ids);
        match self.mapping {
            ConvMapping::Direct => self.direct(step, &mut a),
            ConvMapping::Tiled => self.tiled(step, &mut a),
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 image 4×4, one channel, one 3×3 filter, no padding: a 2×2 output.
    fn small(mapping: ConvMapping) -> ConvTrace {
        ConvTrace {
            n: 1,
            c: 1,
            h: 4,
            w: 4,
            k: 1,
            r: 3,
            s: 3,
            stride: 1,
            pad: 0,
            dil: 1,
            subgroup_width: 32,
            mapping,
        }
    }

    #[test]
    fn direct_reads_every_term_from_global_memory() {
        let t = small(ConvMapping::Direct);
        assert_eq!(t.out_hw(), (2, 2));
        assert_eq!(t.launch().grid, [1, 1, 1]);
        // R·S·C taps + the store.
        assert_eq!(t.steps().len(), 10);
        // Subgroup 0 = rows y 0 and 1 of the 16×16 workgroup; only x = k = 0 is a filter, and
        // y = m = 0, 1 are pixels (0,0) and (0,1): 2 active lanes.
        let c = t.subgroup_cost(Step::ConvTap { r: 0, s: 0, c: 0 }, [0, 0, 0], 0);
        assert_eq!((c.active_lanes, c.inactive_lanes), (2, 30));
        // x[0], x[1] (one sector, one line) and f[0] twice (one sector, one line).
        assert_eq!((c.global_accesses, c.sectors, c.lines), (4, 2, 2));
        assert_eq!((c.shared_accesses, c.bank_conflicts), (0, 0));
        // 4 outputs × 9 taps = 36 reads of 16 input values: each fetched 2.25 times.
        assert_eq!(t.x_reuse(), (36, 16));
        // The whole launch: 36 x + 36 f reads + 4 stores.
        let total = t.running_totals().last().copied().unwrap_or_default();
        assert_eq!(total.global_accesses, 36 + 36 + 4);
    }

    #[test]
    fn tiled_stages_the_halo_once_and_reads_from_workgroup_memory() {
        let t = small(ConvMapping::Tiled);
        // Patch: (8−1)·1 + 1·2 + 1 = 10 rows and columns, one channel: 100 words, 2 passes.
        assert_eq!(t.patch(), (10, 10, 1));
        assert_eq!(t.launch().grid, [1, 1, 1]);
        assert_eq!(t.steps().len(), 2 + 9 + 1);
        // Pass 0, subgroup 0 copies words 0..32 = rows 0–3 of the patch; inside the 4×4 image:
        // columns 0–3 of rows 0, 1, 2 and columns 0, 1 of row 3 = 14 reads of x[0..14] (56
        // bytes: two sectors, one line); 32 consecutive words written, conflict-free.
        let stage = Step::ConvStage {
            c0: 0,
            pass: 0,
            last: false,
        };
        let c = t.subgroup_cost(stage, [0, 0, 0], 0);
        assert_eq!((c.global_accesses, c.sectors, c.lines), (14, 2, 1));
        assert_eq!((c.shared_accesses, c.bank_conflicts), (32, 0));
        assert_eq!(c.active_lanes, 32);
        // Subgroup 1 (words 32..64): row 3, columns 2 and 3 only.
        assert_eq!(t.subgroup_cost(stage, [0, 0, 0], 1).global_accesses, 2);
        // Each input value comes from global memory once (against 2.25 times for direct).
        assert_eq!(t.x_reuse(), (16, 16));
        // Tap (0, 0): subgroup 0 = output rows 0–3 × columns 0–7 reads patch words
        // 10·row + col: 0–7, 10–17, 20–27, 30–37. Words 32–37 share banks 0–5 with
        // words 0–5: two passes, one extra. Every lane also reads f[0] (one sector).
        let tap = t.subgroup_cost(
            Step::ConvTileTap {
                c0: 0,
                r: 0,
                s: 0,
                cc: 0,
                last: false,
            },
            [0, 0, 0],
            0,
        );
        assert_eq!((tap.shared_accesses, tap.bank_conflicts), (32, 1));
        assert_eq!((tap.global_accesses, tap.sectors), (32, 1));
        // Only the 2×2 outputs store: subgroup 0 holds output rows 0–3, so all four of them.
        let store = t.subgroup_cost(Step::Store, [0, 0, 0], 0);
        assert_eq!((store.active_lanes, store.global_accesses), (4, 4));
        assert_eq!(t.subgroup_cost(Step::Store, [0, 0, 0], 1).active_lanes, 0);
    }

    #[test]
    fn tile_contents_follow_the_passes_and_the_padding() {
        let mut t = small(ConvMapping::Tiled);
        t.pad = 1;
        // The patch starts at row −1, column −1: word 0 is padding, word 11 is x[0][0].
        let after_first = t.tile_contents(
            Step::ConvStage {
                c0: 0,
                pass: 0,
                last: false,
            },
            [0, 0, 0],
        );
        let words = &after_first[0].1;
        assert_eq!(words.len(), 100);
        assert_eq!(words[0], None);
        assert_eq!(words[11], Some(0));
        assert_eq!(words[12], Some(1));
        // Patch row 4 = image row 3: x[3][0] = 12 at word 41. The 16 image values all lie in
        // words 11–44, staged by pass 0; words from 64 on come with pass 1 (all padding here).
        assert_eq!(words[41], Some(12));
        assert_eq!(words.iter().flatten().count(), 16);
        let all = t.tile_contents(
            Step::ConvTileTap {
                c0: 0,
                r: 0,
                s: 0,
                cc: 0,
                last: false,
            },
            [0, 0, 0],
        );
        assert_eq!(all[0].1[44], Some(15));
        assert!(small(ConvMapping::Direct)
            .tile_contents(Step::Store, [0, 0, 0])
            .is_empty());
    }

    /// The visualiser's conv at size 4: 4×4×3, 8 filters 3×3, padding 1 (its browser test
    /// checks the page shows these same numbers).
    #[test]
    fn the_visualisers_small_convolution() {
        let t = |mapping| ConvTrace {
            n: 1,
            c: 3,
            h: 4,
            w: 4,
            k: 8,
            r: 3,
            s: 3,
            stride: 1,
            pad: 1,
            dil: 1,
            subgroup_width: 32,
            mapping,
        };
        let direct = t(ConvMapping::Direct);
        // Centre tap: pixels 0 and 1 read x[0] and x[3]; 8 filters read f[96..104].
        let c = direct.subgroup_cost(Step::ConvTap { r: 1, s: 1, c: 0 }, [0, 0, 0], 0);
        assert_eq!(
            (c.global_accesses, c.sectors, c.lines, c.inactive_lanes),
            (32, 2, 2, 16)
        );
        // (2+3+3+2)² taps inside × 3 channels × 8 filters.
        assert_eq!(direct.x_reuse(), (2400, 48));
        let tiled = t(ConvMapping::Tiled);
        assert_eq!(tiled.patch(), (10, 10, 3));
        assert_eq!(tiled.steps().len(), 5 + 27 + 1);
        let stage = Step::ConvStage {
            c0: 0,
            pass: 0,
            last: false,
        };
        // Subgroup 0 (words 0–31) lies in the padding row; subgroup 1 (words 32–63): image row
        // 0, columns 0–3 (words 33–44 = x[0..12]) and word 63 = x[12].
        assert_eq!(tiled.subgroup_cost(stage, [0, 0, 0], 0).global_accesses, 0);
        let c = tiled.subgroup_cost(stage, [0, 0, 0], 1);
        assert_eq!(
            (
                c.global_accesses,
                c.sectors,
                c.lines,
                c.shared_accesses,
                c.bank_conflicts
            ),
            (13, 2, 1, 32, 0)
        );
        assert_eq!(tiled.x_reuse(), (48, 48));
    }

    #[test]
    fn channels_are_staged_in_chunks() {
        // C = 10: chunks of 8 and 2; 3×3 "same" over 6×6, 12 filters → 2 filter blocks.
        let t = ConvTrace {
            n: 1,
            c: 10,
            h: 6,
            w: 6,
            k: 12,
            r: 3,
            s: 3,
            stride: 1,
            pad: 1,
            dil: 1,
            subgroup_width: 32,
            mapping: ConvMapping::Tiled,
        };
        // 10×10×8 = 800 words: 13 passes per chunk; 9·8 then 9·2 taps; the store.
        assert_eq!(t.patch(), (10, 10, 8));
        assert_eq!(t.steps().len(), 13 + 72 + 13 + 18 + 1);
        assert_eq!(t.launch().grid, [1, 2, 1]);
        // Filter block 1 (k 8..12) reads 4 filter values per lane and term.
        let tap = Step::ConvTileTap {
            c0: 0,
            r: 1,
            s: 1,
            cc: 0,
            last: false,
        };
        assert_eq!(t.lanes(tap, [0, 1, 0], 0)[0].global_reads.len(), 4);
        // Every input value is staged once per filter block: 2 × 6·6·10 reads.
        assert_eq!(t.x_reuse(), (2 * 360, 360));
        assert!(t.steps().iter().filter(|s| s.ends_with_barrier(0)).count() == 4);
    }
}
