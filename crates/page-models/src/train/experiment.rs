//! The batch-size experiment's rows and what they show: samples per second per batch size on
//! each side, the verdict (who was faster where) and the growth between the smallest and the
//! largest batch. The measuring itself needs the GPU and stays in the app
//! (`components/train/experiment.rs`).

/// The batch sizes measured, in order.
pub const BATCHES: [usize; 7] = [1, 4, 16, 64, 256, 1024, 4096];

#[derive(Clone, Debug, PartialEq)]
pub enum GpuCell {
    SamplesPerSecond(f64),
    /// The batch's activations exceed the device's largest storage buffer.
    TooLarge,
    Failed(String),
    NoGpu,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub batch: usize,
    pub gpu: GpuCell,
    pub cpu: f64,
}

/// Who was faster across the batch sizes measured, read from the rows shown.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// No batch size has both a GPU and a CPU number.
    NoGpu,
    /// The CPU twin was faster at every compared batch size; `largest` is the largest.
    CpuEverywhere { largest: usize },
    /// The GPU was faster at every compared batch size; `smallest` is the smallest.
    GpuEverywhere { smallest: usize },
    /// The CPU twin was faster below `from`, the GPU from `from` on.
    GpuFrom { from: usize },
    /// The lead changed more than once.
    Mixed,
}

impl Verdict {
    pub fn code(&self) -> &'static str {
        match self {
            Verdict::NoGpu => "no-gpu",
            Verdict::CpuEverywhere { .. } => "cpu-all",
            Verdict::GpuEverywhere { .. } => "gpu-all",
            Verdict::GpuFrom { .. } => "gpu-from",
            Verdict::Mixed => "mixed",
        }
    }
}

fn gpu_value(r: &Row) -> Option<f64> {
    match r.gpu {
        GpuCell::SamplesPerSecond(v) if v.is_finite() && v > 0.0 => Some(v),
        _ => None,
    }
}

pub fn verdict(rows: &[Row]) -> Verdict {
    // (batch, GPU faster?) where both sides have a number.
    let wins: Vec<(usize, bool)> = rows
        .iter()
        .filter_map(|r| gpu_value(r).map(|g| (r.batch, g > r.cpu)))
        .collect();
    let (Some(first), Some(last)) = (wins.first(), wins.last()) else {
        return Verdict::NoGpu;
    };
    let changes = wins.windows(2).filter(|w| w[0].1 != w[1].1).count();
    match (changes, first.1) {
        (0, false) => Verdict::CpuEverywhere { largest: last.0 },
        (0, true) => Verdict::GpuEverywhere { smallest: first.0 },
        (1, false) => Verdict::GpuFrom {
            from: wins.iter().find(|w| w.1).map_or(last.0, |w| w.0),
        },
        _ => Verdict::Mixed,
    }
}

/// How much each side's samples/s grew between the smallest and the largest batch with a GPU
/// number: (smallest, largest, GPU factor, CPU factor); `None` with fewer than two.
pub fn growth(rows: &[Row]) -> Option<(usize, usize, f64, f64)> {
    let with_gpu: Vec<(&Row, f64)> = rows
        .iter()
        .filter_map(|r| gpu_value(r).map(|g| (r, g)))
        .collect();
    let (&(a, ga), &(b, gb)) = (with_gpu.first()?, with_gpu.last()?);
    (a.batch != b.batch && a.cpu > 0.0).then(|| (a.batch, b.batch, gb / ga, b.cpu / a.cpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(batch: usize, gpu: Option<f64>, cpu: f64) -> Row {
        Row {
            batch,
            gpu: gpu.map_or(GpuCell::NoGpu, GpuCell::SamplesPerSecond),
            cpu,
        }
    }

    #[test]
    fn the_conclusion_follows_the_numbers() {
        // A run measured on SwiftShader: the CPU won at every batch size.
        let cpu_all = [
            row(1, Some(50.0), 9000.0),
            row(64, Some(3000.0), 90000.0),
            row(4096, Some(9000.0), 95000.0),
        ];
        assert_eq!(verdict(&cpu_all), Verdict::CpuEverywhere { largest: 4096 });
        let g = growth(&cpu_all).expect("two GPU numbers");
        assert_eq!((g.0, g.1), (1, 4096));
        assert!((g.2 - 180.0).abs() < 1e-9 && (g.3 - 95000.0 / 9000.0).abs() < 1e-9);
        let crossing = [
            row(1, Some(50.0), 9000.0),
            row(64, Some(8000.0), 9000.0),
            row(256, Some(20000.0), 9000.0),
            row(1024, Some(40000.0), 9000.0),
        ];
        assert_eq!(verdict(&crossing), Verdict::GpuFrom { from: 256 });
        let mixed = [
            row(1, Some(50.0), 90.0),
            row(4, Some(100.0), 90.0),
            row(16, Some(80.0), 90.0),
        ];
        assert_eq!(verdict(&mixed), Verdict::Mixed);
        assert_eq!(
            verdict(&[row(1, Some(10.0), 1.0), row(4, Some(40.0), 1.0)]),
            Verdict::GpuEverywhere { smallest: 1 }
        );
        // Rows without a GPU number (no WebGPU, too large, failed) are left out of the verdict.
        assert_eq!(verdict(&[row(1, None, 5.0)]), Verdict::NoGpu);
        let too_large = Row {
            batch: 4096,
            gpu: GpuCell::TooLarge,
            cpu: 10.0,
        };
        assert_eq!(
            verdict(&[row(1, Some(1.0), 5.0), too_large]),
            Verdict::CpuEverywhere { largest: 1 }
        );
        assert_eq!(growth(&[row(1, Some(1.0), 5.0)]), None);
    }
}
