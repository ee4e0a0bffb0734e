//! The `data-movement` lesson's arithmetic: the learner's measured host ↔ GPU transfers (median of repeated
//! runs, GB/s) and the links a browser cannot measure, whose times come from
//! [`crate::allreduce`].

use crate::allreduce::{self, Link, RingError, RingTime};

/// The median of some times (the mean of the middle two for an even count); None when empty
/// or when any is not a finite number ≥ 0.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return None;
    }
    numbers::median(values)
}

/// GB/s (10⁹ bytes per second) for `bytes` moved in `ms` milliseconds; None for a time ≤ 0.
pub fn gb_per_s(bytes: f64, ms: f64) -> Option<f64> {
    (ms > 0.0 && ms.is_finite() && bytes.is_finite() && bytes >= 0.0).then(|| bytes / ms / 1e6)
}

/// Network links between machines, per direction: InfiniBand HDR 200 Gb/s and NDR 400 Gb/s
/// per port (8 bits per byte: 25 and 50 GB/s), the NIC usually given to each GPU in an
/// H100 cluster. InfiniBand Trade Association roadmap; NVIDIA ConnectX-7 datasheet.
pub const NETWORK: [Link; 2] = [
    Link {
        id: "ib-hdr",
        name: "InfiniBand HDR (200 Gb/s)",
        per_direction_gbs: 25.0,
        bidirectional_gbs: 50.0,
        fc: "FC-133",
    },
    Link {
        id: "ib-ndr",
        name: "InfiniBand NDR (400 Gb/s)",
        per_direction_gbs: 50.0,
        bidirectional_gbs: 100.0,
        fc: "FC-133",
    },
];

/// The links the lesson compares: PCIe 4.0 and 5.0 x16, NVLink 4 (from the `multi-gpu` lesson's presets),
/// then InfiniBand.
pub fn links() -> Vec<&'static Link> {
    ["pcie4", "pcie5", "nvlink4"]
        .iter()
        .filter_map(|id| allreduce::link(id))
        .chain(NETWORK.iter())
        .collect()
}

/// Seconds to move `bytes` one way at `gbs` GB/s (no latency).
pub fn copy_seconds(bytes: f64, gbs: f64) -> Option<f64> {
    (gbs > 0.0 && gbs.is_finite() && bytes.is_finite() && bytes >= 0.0).then(|| bytes / (gbs * 1e9))
}

/// One row of the comparison: a link, the one-way copy of `bytes`, and a ring all-reduce of
/// `bytes` over `gpus` GPUs joined by it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkRow {
    pub link: &'static Link,
    pub copy_s: f64,
    pub allreduce: RingTime,
}

pub fn compare_links(bytes: f64, gpus: u64) -> Result<Vec<LinkRow>, RingError> {
    links()
        .into_iter()
        .map(|link| {
            let allreduce = allreduce::ring_allreduce(bytes, gpus, link.per_direction_gbs, 0.0)?;
            Ok(LinkRow {
                link,
                copy_s: copy_seconds(bytes, link.per_direction_gbs).ok_or(RingError::Bandwidth)?,
                allreduce,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_by_hand() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN, 2.0]), None);
        assert_eq!(median(&[1.0, -1.0, 2.0]), None);
        // One slow outlier does not move it.
        assert_eq!(median(&[1.0, 1.1, 900.0]), Some(1.1));
    }

    #[test]
    fn bandwidth_by_hand() {
        // 64 MiB in 10 ms: 67,108,864 B / 0.01 s = 6.7108864 GB/s.
        assert!((gb_per_s(67_108_864.0, 10.0).unwrap() - 6.710_886_4).abs() < 1e-12);
        assert_eq!(gb_per_s(1.0, 0.0), None);
        // 14 GB (7B parameters in BF16) over PCIe 4.0 x16 one way: 14e9 / 32e9 = 0.4375 s.
        assert_eq!(copy_seconds(14e9, 32.0), Some(0.4375));
        assert_eq!(copy_seconds(1.0, 0.0), None);
    }

    #[test]
    fn links_and_ring_by_hand() {
        let ids: Vec<&str> = links().iter().map(|l| l.id).collect();
        assert_eq!(ids, ["pcie4", "pcie5", "nvlink4", "ib-hdr", "ib-ndr"]);
        // 14 GB of gradients over 8 GPUs on NDR (50 GB/s): 2·7/8·14e9 / 50e9 = 0.49 s.
        let rows = compare_links(14e9, 8).unwrap();
        let ndr = rows.iter().find(|r| r.link.id == "ib-ndr").unwrap();
        assert!((ndr.allreduce.total_s() - 0.49).abs() < 1e-12);
        assert!((ndr.copy_s - 0.28).abs() < 1e-12);
        // NVLink 4 (450 GB/s each way) is 9× NDR.
        let nv = rows.iter().find(|r| r.link.id == "nvlink4").unwrap();
        assert!((ndr.allreduce.total_s() / nv.allreduce.total_s() - 9.0).abs() < 1e-9);
        assert!(compare_links(-1.0, 8).is_err());
        assert!(compare_links(1e9, 0).is_err());
    }
}
