//! The batch-size experiment: samples per second against batch size on the visitor's GPU and
//! on the CPU twin, for the network of the current settings. Small batches leave the GPU
//! waiting on launches; large ones keep it busy; the largest batch is capped by memory.

use std::rc::Rc;

use gpu_runtime::mlp::net::batch_order;
use gpu_runtime::mlp::{CpuTrainer, Dataset, Spec};
use gpu_runtime::training::{max_batch, SessionConfig, TrainingSession};
use gpu_runtime::{Gpu, GpuError};

use super::runner::now_ms;

pub const BATCHES: [usize; 7] = [1, 4, 16, 64, 256, 1024, 4096];
const POINTS: usize = 4096;
/// Main-thread time the CPU twin gets per batch size (ms).
const CPU_BUDGET_MS: f64 = 400.0;
/// Least time measured per side and batch size (ms).
const MIN_MS: f64 = 150.0;
/// Most rounds of `steps_for` GPU steps per batch size.
const MAX_ROUNDS: u32 = 50;

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

/// Steps timed at this batch size: enough samples to measure, few enough for a software GPU.
fn steps_for(batch: usize) -> u32 {
    (4096 / batch).clamp(4, 48) as u32
}

async fn gpu_rate(gpu: &Rc<Gpu>, spec: &Spec, batch: usize) -> Result<f64, GpuError> {
    let net = spec.net();
    let pts = Dataset::Spiral.generate(POINTS, 0.1, spec.seed);
    let params = net.init_params(spec.seed);
    let mut session = TrainingSession::new(
        gpu.clone(),
        SessionConfig {
            net: net.clone(),
            hyper: spec.hyper(),
            batch,
            accum: 1,
            params: &params,
            features: pts.features(&spec.features),
            labels: pts.label.clone(),
            order: batch_order(POINTS, spec.seed),
            eval_features: &[],
        },
    )
    .await?;
    for _ in 0..2 {
        session.step()?;
    }
    session.finished().await?;
    // At least MIN_MS of work, so coarse browser clocks do not dominate.
    let steps = steps_for(batch);
    let t0 = now_ms();
    let mut done = 0u32;
    for _ in 0..MAX_ROUNDS {
        for _ in 0..steps {
            session.step()?;
        }
        session.finished().await?;
        done += steps;
        if now_ms() - t0 >= MIN_MS {
            break;
        }
    }
    let ms = (now_ms() - t0).max(1e-3);
    Ok(done as f64 * batch as f64 * 1000.0 / ms)
}

async fn cpu_rate(spec: &Spec, batch: usize) -> f64 {
    let net = spec.net();
    let pts = Dataset::Spiral.generate(POINTS, 0.1, spec.seed);
    let mut cpu = CpuTrainer::new(
        net.clone(),
        spec.hyper(),
        net.init_params(spec.seed),
        batch,
        pts.features(&spec.features),
        pts.label.clone(),
        batch_order(POINTS, spec.seed),
    );
    let steps = steps_for(batch);
    let mut busy = 0.0;
    let mut done = 0u32;
    // At least `steps` steps and MIN_MS of work, at most CPU_BUDGET_MS.
    while (done < steps || busy < MIN_MS) && (done == 0 || busy < CPU_BUDGET_MS) {
        let t0 = now_ms();
        // Short slices, yielding between them, so the page keeps responding.
        while now_ms() - t0 < 20.0 {
            cpu.step();
            done += 1;
        }
        busy += now_ms() - t0;
        gloo::timers::future::TimeoutFuture::new(0).await;
    }
    done as f64 * batch as f64 * 1000.0 / busy.max(1e-3)
}

/// Runs every batch size, reporting each row as it finishes; stops early when `cancelled`.
pub async fn run(
    gpu: Option<Rc<Gpu>>,
    spec: Spec,
    on_row: impl Fn(Row),
    cancelled: impl Fn() -> bool,
) {
    for batch in BATCHES {
        if cancelled() {
            return;
        }
        let gpu_cell = match &gpu {
            None => GpuCell::NoGpu,
            Some(g) if max_batch(&spec.net(), &g.buffer_limits()) < batch as u64 => {
                GpuCell::TooLarge
            }
            Some(g) => match gpu_rate(g, &spec, batch).await {
                Ok(r) => GpuCell::SamplesPerSecond(r),
                Err(e) => GpuCell::Failed(e.to_string()),
            },
        };
        gloo::timers::future::TimeoutFuture::new(0).await;
        let cpu = cpu_rate(&spec, batch).await;
        on_row(Row {
            batch,
            gpu: gpu_cell,
            cpu,
        });
    }
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
        // The run from issue 11: the CPU won at every batch size.
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
