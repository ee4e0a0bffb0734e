//! The `choosing` lesson's GPU table: vendor peak figures, each with its source and the fact-check ids
//! (docs/fact-check.md) that discuss it, plus the ranking the lesson's widget shows.
//!
//! Memory is the vendor's nominal size. The calculators read it as 10⁹ bytes per GB, which is
//! slightly conservative: most of these cards hold that many GiB (2³⁰ bytes), minus what the
//! driver reserves.

/// One GPU's peak figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gpu {
    pub id: &'static str,
    /// Shown as is (a product name).
    pub name: &'static str,
    pub memory_gb: f64,
    /// Peak memory bandwidth, GB/s.
    pub bandwidth_gbs: f64,
    /// Dense (no 2:4 sparsity) FP16/BF16 tensor peak with FP32 accumulation, TFLOPS.
    pub tensor_fp16_tflops: f64,
    /// FP32 peak on the ordinary (non-tensor) units, TFLOPS.
    pub fp32_tflops: f64,
    /// Board power / TDP, watts.
    pub tdp_w: f64,
    /// Where the row comes from (the document's English title, for the docs; the page shows
    /// the translated `lesson.choosing.source.<id>`, locales/{en,zh}/lesson-choosing.txt).
    pub source: &'static str,
    /// Fact-check ids.
    pub fc: &'static str,
}

pub const GPUS: [Gpu; 10] = [
    Gpu {
        id: "a100-40",
        name: "A100 40 GB SXM",
        memory_gb: 40.0,
        bandwidth_gbs: 1555.0,
        tensor_fp16_tflops: 312.0,
        fp32_tflops: 19.5,
        tdp_w: 400.0,
        source: "NVIDIA A100 Tensor Core GPU datasheet",
        fc: "FC-05, FC-20",
    },
    Gpu {
        id: "a100-80",
        name: "A100 80 GB SXM",
        memory_gb: 80.0,
        bandwidth_gbs: 2039.0,
        tensor_fp16_tflops: 312.0,
        fp32_tflops: 19.5,
        tdp_w: 400.0,
        source: "NVIDIA A100 Tensor Core GPU datasheet",
        fc: "FC-05, FC-20",
    },
    Gpu {
        id: "h100",
        name: "H100 SXM",
        memory_gb: 80.0,
        bandwidth_gbs: 3350.0,
        tensor_fp16_tflops: 989.4,
        fp32_tflops: 67.0,
        tdp_w: 700.0,
        source: "NVIDIA H100 Tensor Core GPU datasheet",
        fc: "FC-03, FC-13",
    },
    Gpu {
        id: "h200",
        name: "H200 SXM",
        memory_gb: 141.0,
        bandwidth_gbs: 4800.0,
        tensor_fp16_tflops: 989.4,
        fp32_tflops: 67.0,
        tdp_w: 700.0,
        source: "NVIDIA H200 Tensor Core GPU datasheet",
        fc: "",
    },
    Gpu {
        id: "mi300x",
        name: "AMD MI300X",
        memory_gb: 192.0,
        bandwidth_gbs: 5300.0,
        tensor_fp16_tflops: 1307.4,
        fp32_tflops: 163.4,
        tdp_w: 750.0,
        source: "AMD Instinct MI300X data sheet",
        fc: "FC-13, FC-25",
    },
    Gpu {
        id: "rtx3060",
        name: "RTX 3060 12 GB",
        memory_gb: 12.0,
        bandwidth_gbs: 360.0,
        tensor_fp16_tflops: 25.5,
        fp32_tflops: 12.7,
        tdp_w: 170.0,
        source: "NVIDIA GeForce RTX 3060 product page; GA102 whitepaper rates",
        fc: "FC-28, FC-98",
    },
    Gpu {
        id: "rtx3090",
        name: "RTX 3090",
        memory_gb: 24.0,
        bandwidth_gbs: 936.0,
        tensor_fp16_tflops: 71.0,
        fp32_tflops: 35.6,
        tdp_w: 350.0,
        source: "NVIDIA Ampere GA102 GPU Architecture whitepaper",
        fc: "FC-09, FC-98",
    },
    Gpu {
        id: "rtx4090",
        name: "RTX 4090",
        memory_gb: 24.0,
        bandwidth_gbs: 1008.0,
        tensor_fp16_tflops: 165.2,
        fp32_tflops: 82.6,
        tdp_w: 450.0,
        source: "NVIDIA Ada Lovelace GPU Architecture whitepaper",
        fc: "FC-27, FC-98",
    },
    Gpu {
        id: "t4",
        name: "T4",
        memory_gb: 16.0,
        bandwidth_gbs: 320.0,
        tensor_fp16_tflops: 65.0,
        fp32_tflops: 8.1,
        tdp_w: 70.0,
        source: "NVIDIA T4 Tensor Core GPU datasheet",
        fc: "",
    },
    Gpu {
        id: "v100",
        name: "V100 SXM2 32 GB",
        memory_gb: 32.0,
        bandwidth_gbs: 900.0,
        tensor_fp16_tflops: 125.0,
        fp32_tflops: 15.7,
        tdp_w: 300.0,
        source: "NVIDIA Tesla V100 GPU Architecture whitepaper",
        fc: "FC-07, FC-15",
    },
];

impl Gpu {
    /// The fact-check ids one by one (`"FC-05, FC-20"` → `FC-05`, `FC-20`); none when empty.
    /// The page labels each with what it checked (`lesson.choosing.checked.<id>`).
    pub fn fc_ids(&self) -> impl Iterator<Item = &'static str> {
        self.fc
            .split(',')
            .map(str::trim)
            .filter(|id| !id.is_empty())
    }
}

pub fn gpu(id: &str) -> Option<&'static Gpu> {
    GPUS.iter().find(|g| g.id == id)
}

/// The GPUs whose memory holds `bytes` (on one card), fastest memory first; then the ones that
/// do not, also by bandwidth. Returns (gpu, fits) pairs. Non-finite or negative bytes fit
/// nowhere.
pub fn rank_by_bandwidth(bytes: f64) -> Vec<(&'static Gpu, bool)> {
    let mut v: Vec<(&'static Gpu, bool)> = GPUS
        .iter()
        .map(|g| {
            (
                g,
                bytes.is_finite() && bytes >= 0.0 && bytes <= g.memory_gb * 1e9,
            )
        })
        .collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(b.0.bandwidth_gbs.total_cmp(&a.0.bandwidth_gbs))
    });
    v
}

/// Upper bound on tokens per second when generating one token at a time (batch 1): every
/// weight is read once per token, so the time per token is at least weight bytes ÷ bandwidth.
/// None for weights of zero or less, or non-finite input.
pub fn decode_tokens_per_s_bound(weight_bytes: f64, bandwidth_gbs: f64) -> Option<f64> {
    if weight_bytes.is_finite()
        && weight_bytes > 0.0
        && bandwidth_gbs.is_finite()
        && bandwidth_gbs > 0.0
    {
        Some(bandwidth_gbs * 1e9 / weight_bytes)
    } else {
        None
    }
}

/// Bytes a matmul-like kernel must do per byte read to be compute-bound: peak FLOP/s ÷ peak
/// bytes/s (the roofline's ridge point).
pub fn ridge_flops_per_byte(g: &Gpu) -> f64 {
    g.tensor_fp16_tflops * 1e12 / (g.bandwidth_gbs * 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_check_ids_split_one_by_one() {
        let a = gpu("a100-40").unwrap();
        assert_eq!(a.fc_ids().collect::<Vec<_>>(), ["FC-05", "FC-20"]);
        assert_eq!(gpu("h200").unwrap().fc_ids().count(), 0);
        assert!(GPUS
            .iter()
            .flat_map(|g| g.fc_ids())
            .all(|id| id.starts_with("FC-") && id.len() > 3));
    }

    #[test]
    fn corrected_figures() {
        let a = gpu("a100-40").unwrap();
        assert_eq!((a.bandwidth_gbs, a.tensor_fp16_tflops), (1555.0, 312.0));
        assert_eq!(gpu("h100").unwrap().tensor_fp16_tflops, 989.4);
        assert!(gpu("nope").is_none());
        let mut ids: Vec<_> = GPUS.iter().map(|g| g.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), GPUS.len());
    }

    #[test]
    fn ranking_puts_fitting_cards_first_by_bandwidth() {
        // 14 GB (7B in FP16) fits every card with ≥ 16 GB.
        let r = rank_by_bandwidth(14e9);
        let names: Vec<_> = r.iter().map(|(g, f)| (g.id, *f)).collect();
        assert_eq!(names[0], ("mi300x", true));
        assert_eq!(names[1], ("h200", true));
        assert_eq!(names[2], ("h100", true));
        assert_eq!(names.last(), Some(&("rtx3060", false)));
        assert_eq!(r.iter().filter(|(_, f)| *f).count(), 9);
        // 112 GB: only H200 and MI300X.
        let big: Vec<_> = rank_by_bandwidth(112e9)
            .into_iter()
            .filter(|(_, f)| *f)
            .map(|(g, _)| g.id)
            .collect();
        assert_eq!(big, vec!["mi300x", "h200"]);
        assert!(rank_by_bandwidth(f64::NAN).iter().all(|(_, f)| !f));
    }

    #[test]
    fn decode_bound() {
        // 14 GB of weights at 1,008 GB/s: at most 72 tokens/s.
        assert_eq!(decode_tokens_per_s_bound(14e9, 1008.0), Some(72.0));
        assert_eq!(decode_tokens_per_s_bound(0.0, 1008.0), None);
        assert_eq!(decode_tokens_per_s_bound(1.0, f64::NAN), None);
    }

    #[test]
    fn ridge_point() {
        // A100 40 GB: 312e12 / 1555e9 ≈ 200.6 FLOPs per byte.
        let r = ridge_flops_per_byte(gpu("a100-40").unwrap());
        assert!((r - 200.643).abs() < 0.01, "{r}");
    }
}
