//! The `systolic` lesson: a cycle-by-cycle model of an output-stationary systolic array next to the same
//! multiply done by SIMT threads.
//!
//! The array has `n × n` processing elements (PEs). PE (i, j) owns C[i][j]. Row i of A enters
//! the left edge delayed by i cycles, column j of B enters the top edge delayed by j cycles
//! (the "skew"); every cycle each PE multiplies the A value arriving from its left by the B
//! value arriving from above, adds the product to its accumulator, and passes A to the right
//! and B down. So PE (i, j) does its k-th multiply-accumulate (MAC) at cycle i + j + k, and an
//! n × n array finishes an n × n × K product after 2n + K − 2 cycles (3n − 2 for K = n).
//!
//! The SIMT side gives the same n² multipliers to n² threads, one per element of C: each
//! thread reads a[i][k] and b[k][j] from its memory and does one MAC per cycle, so it finishes
//! in K cycles but reads 2·n²·K operands, where the array reads each of A's and B's 2·n·K
//! values once from its edges.

/// Smallest and largest array side the widget accepts.
pub const MIN_N: u32 = 2;
pub const MAX_N: u32 = 8;
/// Smallest and largest inner dimension K.
pub const MIN_K: u32 = 1;
pub const MAX_K: u32 = 16;

/// A small integer matrix multiply C = A·B with A n×k, B k×n (row-major), entries small whole
/// numbers so every sum is exact and can be checked by hand.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub n: usize,
    pub k: usize,
    pub a: Vec<i32>,
    pub b: Vec<i32>,
}

impl Problem {
    /// Seeded entries in −3..=3 (a fixed linear congruential sequence, so the page and its
    /// tests see the same numbers).
    pub fn seeded(n: u32, k: u32, seed: u64) -> Self {
        let (n, k) = (n as usize, k as usize);
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % 7) as i32 - 3
        };
        let a = (0..n * k).map(|_| next()).collect();
        let b = (0..k * n).map(|_| next()).collect();
        Problem { n, k, a, b }
    }

    pub fn a_at(&self, i: usize, kk: usize) -> i32 {
        self.a[i * self.k + kk]
    }

    pub fn b_at(&self, kk: usize, j: usize) -> i32 {
        self.b[kk * self.n + j]
    }

    /// C = A·B computed directly.
    pub fn product(&self) -> Vec<i32> {
        let n = self.n;
        (0..n * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                (0..self.k)
                    .map(|kk| self.a_at(i, kk) * self.b_at(kk, j))
                    .sum()
            })
            .collect()
    }

    /// Multiply-accumulates of the whole product: n·n·K.
    pub fn macs(&self) -> u64 {
        (self.n * self.n * self.k) as u64
    }

    /// Cycles the systolic array needs: 2n + K − 2 (the last PE starts at 2n − 2 and does K MACs).
    pub fn systolic_cycles(&self) -> u32 {
        (2 * self.n + self.k - 2) as u32
    }

    /// Cycles the SIMT threads need with one MAC per thread per cycle: K.
    pub fn simt_cycles(&self) -> u32 {
        self.k as u32
    }

    /// Operands read from memory by the array: each value of A and B once, at the edges.
    pub fn systolic_reads(&self) -> u64 {
        (2 * self.n * self.k) as u64
    }

    /// Operands read by the SIMT threads: two per MAC.
    pub fn simt_reads(&self) -> u64 {
        2 * self.macs()
    }
}

/// One processing element after a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pe {
    /// The A value it holds (received this cycle from the left) and its k, if any.
    pub a: Option<(i32, usize)>,
    /// The B value it holds (received this cycle from above) and its k, if any.
    pub b: Option<(i32, usize)>,
    /// The k of the MAC done this cycle, if one was done.
    pub k: Option<usize>,
    /// Its running sum: C[i][j] so far.
    pub acc: i32,
}

/// The array after `cycle` cycles (cycle 0 = nothing has entered yet).
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayState {
    pub cycle: u32,
    pub pes: Vec<Pe>,
    /// MACs done in the last cycle.
    pub macs_now: u32,
    /// MACs done so far.
    pub macs_total: u64,
    /// Operands read from memory so far (values entering at the edges).
    pub reads_total: u64,
}

/// A register-level simulation: values really move one PE per cycle.
pub fn simulate(p: &Problem, cycles: u32) -> ArrayState {
    let n = p.n;
    let mut pes = vec![Pe::default(); n * n];
    let mut macs_total = 0;
    let mut reads_total = 0;
    let mut macs_now = 0;
    for t in 0..cycles as usize {
        let old = pes.clone();
        macs_now = 0;
        for i in 0..n {
            for j in 0..n {
                // A arrives from the left neighbour, or from the skewed feed at column 0.
                let a = if j == 0 {
                    let kk = t.checked_sub(i).filter(|&kk| kk < p.k);
                    kk.map(|kk| (p.a_at(i, kk), kk))
                } else {
                    old[i * n + j - 1].a
                };
                let b = if i == 0 {
                    let kk = t.checked_sub(j).filter(|&kk| kk < p.k);
                    kk.map(|kk| (p.b_at(kk, j), kk))
                } else {
                    old[(i - 1) * n + j].b
                };
                if j == 0 && a.is_some() {
                    reads_total += 1;
                }
                if i == 0 && b.is_some() {
                    reads_total += 1;
                }
                let pe = &mut pes[i * n + j];
                pe.a = a;
                pe.b = b;
                pe.k = None;
                if let (Some((av, ka)), Some((bv, kb))) = (a, b) {
                    // The skew keeps A's and B's k aligned; a mismatch would be a wrong MAC.
                    debug_assert_eq!(ka, kb, "skew keeps k aligned");
                    pe.acc += av * bv;
                    pe.k = Some(ka);
                    macs_now += 1;
                    macs_total += 1;
                }
            }
        }
    }
    ArrayState {
        cycle: cycles,
        pes,
        macs_now,
        macs_total,
        reads_total,
    }
}

/// MACs the array does in cycle `t` (1-based: the t-th cycle), from the formula: PE (i, j)
/// works in cycles i + j + 1 ..= i + j + K.
pub fn macs_in_cycle(n: usize, k: usize, t: u32) -> u32 {
    let t = t as usize;
    let mut c = 0;
    for i in 0..n {
        for j in 0..n {
            if t > i + j && t <= i + j + k {
                c += 1;
            }
        }
    }
    c
}

/// The SIMT threads after `cycle` cycles: thread (i, j) has added k = 0..cycle − 1.
#[derive(Clone, Debug, PartialEq)]
pub struct SimtState {
    pub cycle: u32,
    pub acc: Vec<i32>,
    pub macs_now: u32,
    pub macs_total: u64,
    pub reads_total: u64,
}

pub fn simt(p: &Problem, cycles: u32) -> SimtState {
    let n = p.n;
    let done = (cycles as usize).min(p.k);
    let acc = (0..n * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            (0..done).map(|kk| p.a_at(i, kk) * p.b_at(kk, j)).sum()
        })
        .collect();
    let macs_total = (n * n * done) as u64;
    SimtState {
        cycle: cycles,
        acc,
        macs_now: if cycles >= 1 && cycles as usize <= p.k {
            (n * n) as u32
        } else {
            0
        },
        macs_total,
        reads_total: 2 * macs_total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_by_four_finishes_in_ten_cycles() {
        // 3n − 2 = 10 for n = K = 4.
        let p = Problem::seeded(4, 4, 1);
        assert_eq!(p.systolic_cycles(), 10);
        assert_eq!(p.macs(), 64);
        let s = simulate(&p, 10);
        assert_eq!(s.macs_total, 64);
        let c: Vec<i32> = s.pes.iter().map(|pe| pe.acc).collect();
        assert_eq!(c, p.product());
        // Each of A's 16 and B's 16 values is read once.
        assert_eq!(s.reads_total, 32);
        assert_eq!(p.simt_reads(), 128);
        // One cycle fewer and the far corner still lacks its last MAC.
        let s9 = simulate(&p, 9);
        assert_eq!(s9.macs_total, 63);
        assert_eq!(s9.macs_now, 3);
        assert_eq!(s.macs_now, 1);
    }

    #[test]
    fn macs_per_cycle_by_hand() {
        // n = K = 4: PE (i, j) works in cycles i+j+1 ..= i+j+4. Counting the PEs on each
        // anti-diagonal: 1, 3, 6, 10, 12, 12, 10, 6, 3, 1 (sum 64).
        let want = [1, 3, 6, 10, 12, 12, 10, 6, 3, 1];
        let p = Problem::seeded(4, 4, 7);
        for (t, &w) in want.iter().enumerate() {
            let t = t as u32 + 1;
            assert_eq!(macs_in_cycle(4, 4, t), w, "cycle {t}");
            assert_eq!(simulate(&p, t).macs_now, w, "simulated cycle {t}");
        }
        assert_eq!(macs_in_cycle(4, 4, 11), 0);
        // A long K fills the array: n² MACs per cycle in the steady state.
        assert_eq!(macs_in_cycle(4, 16, 10), 16);
    }

    #[test]
    fn formula_for_other_shapes() {
        for n in MIN_N..=MAX_N {
            for k in [1, 2, 5, 16] {
                let p = Problem::seeded(n, k, n as u64 * 31 + k as u64);
                let cycles = p.systolic_cycles();
                assert_eq!(cycles, 2 * n + k - 2);
                let s = simulate(&p, cycles);
                let c: Vec<i32> = s.pes.iter().map(|pe| pe.acc).collect();
                assert_eq!(c, p.product(), "n {n} k {k}");
                assert_eq!(s.macs_total, p.macs());
                assert_eq!(s.reads_total, p.systolic_reads());
                let t = simt(&p, p.simt_cycles());
                assert_eq!(t.acc, p.product());
                assert_eq!(t.reads_total, p.simt_reads());
            }
        }
        // 2×2×2 by hand: A = [[1,2],[3,4]], B = [[5,6],[7,8]] → [[19,22],[43,50]], 4 cycles.
        let p = Problem {
            n: 2,
            k: 2,
            a: vec![1, 2, 3, 4],
            b: vec![5, 6, 7, 8],
        };
        assert_eq!(p.systolic_cycles(), 4);
        let s = simulate(&p, 4);
        assert_eq!(
            s.pes.iter().map(|pe| pe.acc).collect::<Vec<_>>(),
            vec![19, 22, 43, 50]
        );
        // After cycle 1 only PE (0,0) has worked: 1·5.
        assert_eq!(simulate(&p, 1).pes[0].acc, 5);
        assert_eq!(simulate(&p, 1).pes[3].acc, 0);
    }

    #[test]
    fn simt_progress() {
        let p = Problem::seeded(4, 4, 3);
        let s = simt(&p, 2);
        assert_eq!(s.macs_total, 32);
        assert_eq!(s.macs_now, 16);
        assert_eq!(simt(&p, 5).macs_now, 0);
        assert_eq!(simt(&p, 0).acc, vec![0; 16]);
    }

    #[test]
    fn seeded_values_are_small() {
        let p = Problem::seeded(8, 16, 99);
        assert!(p.a.iter().chain(&p.b).all(|v| (-3..=3).contains(v)));
        assert_eq!(Problem::seeded(8, 16, 99), p);
    }
}
