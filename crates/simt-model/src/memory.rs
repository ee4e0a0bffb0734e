//! The cost of one subgroup-wide memory access.
//!
//! Global memory is moved in 32-byte sectors, grouped in 128-byte cache lines (NVIDIA's
//! terms; other GPUs are similar). A subgroup whose lanes read neighbouring 4-byte words
//! touches one line; lanes reading addresses far apart touch one sector each — up to 8×
//! the traffic for the same useful bytes.
//!
//! Shared (workgroup) memory is split into 32 banks of 4 bytes. Lanes hitting different
//! words in the same bank are serialised; lanes reading the same word get a broadcast.

use std::collections::{BTreeMap, BTreeSet};

pub const SECTOR_BYTES: u64 = 32;
pub const LINE_BYTES: u64 = 128;
pub const BANKS: u64 = 32;
pub const BANK_WIDTH_BYTES: u64 = 4;

/// Global-memory cost of one access by the active lanes of a subgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalCost {
    /// Distinct 32-byte sectors touched.
    pub sectors: u32,
    /// Distinct 128-byte lines touched.
    pub lines: u32,
    /// Bytes the lanes asked for.
    pub useful_bytes: u64,
}

impl GlobalCost {
    /// Useful bytes over bytes moved (1.0 = perfectly coalesced).
    pub fn efficiency(&self) -> f64 {
        if self.sectors == 0 {
            return 1.0;
        }
        self.useful_bytes as f64 / (self.sectors as u64 * SECTOR_BYTES) as f64
    }
}

/// Cost of the lanes' accesses of `width` bytes at byte addresses `addresses` (inactive lanes
/// are simply left out).
pub fn global_cost(addresses: &[u64], width: u64) -> GlobalCost {
    let mut sectors = BTreeSet::new();
    let mut lines = BTreeSet::new();
    for &a in addresses {
        for byte in [a, a + width.max(1) - 1] {
            sectors.insert(byte / SECTOR_BYTES);
            lines.insert(byte / LINE_BYTES);
        }
    }
    GlobalCost {
        sectors: sectors.len() as u32,
        lines: lines.len() as u32,
        useful_bytes: addresses.len() as u64 * width,
    }
}

/// The bank-conflict degree of one shared-memory access: how many serialised passes it takes
/// (1 = conflict-free). Lanes reading the same word are served by one broadcast.
pub fn bank_conflict_degree(byte_addresses: &[u64]) -> u32 {
    let mut words_per_bank: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for &a in byte_addresses {
        let word = a / BANK_WIDTH_BYTES;
        words_per_bank.entry(word % BANKS).or_default().insert(word);
    }
    words_per_bank
        .values()
        .map(|w| w.len() as u32)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte addresses read from A by the 32 lanes of subgroup 0 at step p of a K×… row-major
    /// matmul, for the two thread → output mappings of the ladder's first stages.
    fn a_reads(row_per_lane: bool, k: u64, p: u64) -> Vec<u64> {
        (0..32)
            .map(|lane| {
                // Naive: lane → row (x → row), so each lane reads a different row of A.
                // Coalesced: lane → column, so all lanes share one row: the same word.
                let row = if row_per_lane { lane } else { 0 };
                (row * k + p) * 4
            })
            .collect()
    }

    fn b_reads(row_per_lane: bool, n: u64, p: u64) -> Vec<u64> {
        (0..32)
            .map(|lane| {
                let col = if row_per_lane { 0 } else { lane };
                (p * n + col) * 4
            })
            .collect()
    }

    #[test]
    fn naive_vs_coalesced_transactions_per_load() {
        let (k, n) = (256, 256);
        // Naive mapping: 32 lanes read 32 different rows of A → 32 sectors (and 32 lines)
        // for 128 useful bytes. Coalesced: one word broadcast → 1 sector.
        let naive_a = global_cost(&a_reads(true, k, 3), 4);
        let coal_a = global_cost(&a_reads(false, k, 3), 4);
        assert_eq!((naive_a.sectors, naive_a.lines), (32, 32));
        assert_eq!(coal_a.sectors, 1);
        // B: naive lanes all read the same word (1 sector); coalesced lanes read 32
        // neighbouring words = 128 bytes = 4 sectors in 1 line.
        let naive_b = global_cost(&b_reads(true, n, 3), 4);
        let coal_b = global_cost(&b_reads(false, n, 3), 4);
        assert_eq!(naive_b.sectors, 1);
        assert_eq!((coal_b.sectors, coal_b.lines), (4, 1));
        // Per step, naive moves 33 sectors, coalesced 5: the factor the visualiser shows.
        assert_eq!(naive_a.sectors + naive_b.sectors, 33);
        assert_eq!(coal_a.sectors + coal_b.sectors, 5);
        assert!((coal_b.efficiency() - 1.0).abs() < 1e-12);
        assert!((naive_a.efficiency() - 4.0 / 32.0).abs() < 1e-12);
    }

    #[test]
    fn padding_a_shared_tile_removes_bank_conflicts() {
        // A 32×32 f32 tile read column-wise: lane i reads tile[i][c].
        let column = |stride_words: u64| -> Vec<u64> {
            (0..32).map(|lane| (lane * stride_words + 5) * 4).collect()
        };
        assert_eq!(bank_conflict_degree(&column(32)), 32); // every lane in one bank
        assert_eq!(bank_conflict_degree(&column(33)), 1); // padded: one lane per bank
                                                          // A row read is conflict-free, and a broadcast is too.
        let row: Vec<u64> = (0..32).map(|lane| lane * 4).collect();
        assert_eq!(bank_conflict_degree(&row), 1);
        assert_eq!(bank_conflict_degree(&[64; 32]), 1);
    }
}
