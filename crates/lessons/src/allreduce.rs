//! The `multi-gpu` lesson's ring all-reduce time.
//!
//! In a ring all-reduce over `p` GPUs the gradient buffer of `S` bytes is cut into `p` chunks.
//! `p − 1` reduce-scatter steps and `p − 1` all-gather steps each send one chunk (`S/p`) to the
//! next GPU while receiving one from the previous, so every GPU sends `2·(p−1)/p · S` bytes.
//! With `B` the bandwidth of one link **in one direction** and `α` a fixed latency per step:
//!
//! `t = 2·(p−1)/p · S / B + 2·(p−1) · α`
//!
//! Vendors quote NVLink as the sum of both directions (A100: 600 GB/s = 300 each way), and
//! PCIe slots often the same way ("64 GB/s" for PCIe 4.0 x16 = 32 each way). The ring sends
//! and receives at once, so the per-direction figure is the one that limits it; the presets
//! below store that and keep the quoted total for display.

/// An interconnect preset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub id: &'static str,
    /// Shown as is.
    pub name: &'static str,
    /// GB/s (10⁹ bytes per second) in each direction.
    pub per_direction_gbs: f64,
    /// GB/s as usually quoted: both directions added.
    pub bidirectional_gbs: f64,
    /// Fact-check id of the figure.
    pub fc: &'static str,
}

/// PCIe: 16 GT/s (4.0) and 32 GT/s (5.0) per lane with 128b/130b coding, 16 lanes:
/// 31.5 and 63 GB/s each way, which the PCI-SIG and vendors round to 32 and 64 ("64 GB/s" and
/// "128 GB/s" bidirectional). NVLink: A100 12 links × 50 GB/s = 600 GB/s total; H100 SXM
/// 18 links × 50 GB/s = 900 GB/s total (NVIDIA A100 and H100 datasheets).
pub const LINKS: [Link; 4] = [
    Link {
        id: "pcie4",
        name: "PCIe 4.0 x16",
        per_direction_gbs: 32.0,
        bidirectional_gbs: 64.0,
        fc: "FC-37",
    },
    Link {
        id: "pcie5",
        name: "PCIe 5.0 x16",
        per_direction_gbs: 64.0,
        bidirectional_gbs: 128.0,
        fc: "FC-37",
    },
    Link {
        id: "nvlink3",
        name: "NVLink 3 (A100)",
        per_direction_gbs: 300.0,
        bidirectional_gbs: 600.0,
        fc: "FC-37",
    },
    Link {
        id: "nvlink4",
        name: "NVLink 4 (H100)",
        per_direction_gbs: 450.0,
        bidirectional_gbs: 900.0,
        fc: "FC-34",
    },
];

pub fn link(id: &str) -> Option<&'static Link> {
    LINKS.iter().find(|l| l.id == id)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// Bytes must be a finite number ≥ 0 and at most 10¹⁵.
    Bytes,
    /// GPUs: an integer from 1 to 100 000.
    Gpus,
    /// Bandwidth: above 0 and at most 10⁶ GB/s.
    Bandwidth,
    /// Latency: ≥ 0 and at most 10⁶ µs.
    Latency,
}

/// The parts of one all-reduce.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RingTime {
    /// Bytes each GPU sends (and receives).
    pub bytes_per_gpu: f64,
    /// Steps: 2·(p−1).
    pub steps: u64,
    /// Seconds spent moving data.
    pub transfer_s: f64,
    /// Seconds of per-step latency.
    pub latency_s: f64,
}

impl RingTime {
    pub fn total_s(&self) -> f64 {
        self.transfer_s + self.latency_s
    }
}

/// Ring all-reduce of `bytes` over `gpus` GPUs, `per_direction_gbs` GB/s each way per link and
/// `latency_us` microseconds per step. One GPU needs no communication (time 0).
pub fn ring_allreduce(
    bytes: f64,
    gpus: u64,
    per_direction_gbs: f64,
    latency_us: f64,
) -> Result<RingTime, RingError> {
    if !(bytes.is_finite() && (0.0..=1e15).contains(&bytes)) {
        return Err(RingError::Bytes);
    }
    if !(1..=100_000).contains(&gpus) {
        return Err(RingError::Gpus);
    }
    if !(per_direction_gbs.is_finite() && per_direction_gbs > 0.0 && per_direction_gbs <= 1e6) {
        return Err(RingError::Bandwidth);
    }
    if !(latency_us.is_finite() && (0.0..=1e6).contains(&latency_us)) {
        return Err(RingError::Latency);
    }
    let p = gpus as f64;
    let bytes_per_gpu = 2.0 * (p - 1.0) / p * bytes;
    let steps = 2 * (gpus - 1);
    Ok(RingTime {
        bytes_per_gpu,
        steps,
        transfer_s: bytes_per_gpu / (per_direction_gbs * 1e9),
        latency_s: steps as f64 * latency_us * 1e-6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn seven_billion_bf16_gradients_on_eight_gpus() {
        // S = 7e9 × 2 bytes = 14e9. p = 8: each GPU sends 2·7/8·14e9 = 24.5e9 bytes.
        // NVLink 3 at 300 GB/s each way: 24.5e9 / 300e9 = 0.081666… s.
        let t = ring_allreduce(14e9, 8, 300.0, 0.0).unwrap();
        assert_eq!(t.bytes_per_gpu, 24.5e9);
        assert_eq!(t.steps, 14);
        assert!(close(t.transfer_s, 24.5 / 300.0));
        // PCIe 4.0 x16 at 32 GB/s each way: 24.5 / 32 = 0.765625 s.
        assert!(close(
            ring_allreduce(14e9, 8, 32.0, 0.0).unwrap().total_s(),
            0.765625
        ));
        // 5 µs per step adds 14 × 5 µs = 70 µs.
        let l = ring_allreduce(14e9, 8, 300.0, 5.0).unwrap();
        assert!(close(l.latency_s, 70e-6));
        assert!(close(l.total_s(), 24.5 / 300.0 + 70e-6));
    }

    #[test]
    fn two_gpus_and_one() {
        // p = 2: 2·1/2·S = S bytes per GPU. 1 GB at 450 GB/s = 1/450 s, 2 steps.
        let t = ring_allreduce(1e9, 2, 450.0, 1.0).unwrap();
        assert_eq!(t.bytes_per_gpu, 1e9);
        assert_eq!(t.steps, 2);
        assert!(close(t.total_s(), 1.0 / 450.0 + 2e-6));
        let one = ring_allreduce(1e9, 1, 450.0, 1.0).unwrap();
        assert_eq!(one.total_s(), 0.0);
    }

    #[test]
    fn large_rings_approach_twice_the_buffer() {
        let t = ring_allreduce(1e9, 1000, 1.0, 0.0).unwrap();
        assert!(close(t.bytes_per_gpu, 1.998e9));
    }

    #[test]
    fn presets_are_half_the_quoted_totals() {
        for l in LINKS {
            assert_eq!(l.per_direction_gbs * 2.0, l.bidirectional_gbs, "{}", l.id);
        }
        assert_eq!(link("nvlink3").map(|l| l.per_direction_gbs), Some(300.0));
        assert!(link("nope").is_none());
    }

    #[test]
    fn bad_input() {
        assert_eq!(ring_allreduce(-1.0, 8, 1.0, 0.0), Err(RingError::Bytes));
        assert_eq!(ring_allreduce(f64::NAN, 8, 1.0, 0.0), Err(RingError::Bytes));
        assert_eq!(ring_allreduce(1.0, 0, 1.0, 0.0), Err(RingError::Gpus));
        assert_eq!(ring_allreduce(1.0, 8, 0.0, 0.0), Err(RingError::Bandwidth));
        assert_eq!(
            ring_allreduce(1.0, 8, f64::INFINITY, 0.0),
            Err(RingError::Bandwidth)
        );
        assert_eq!(ring_allreduce(1.0, 8, 1.0, -1.0), Err(RingError::Latency));
    }
}
