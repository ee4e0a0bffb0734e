//! The batch-size experiment: samples per second against batch size on the visitor's GPU and
//! on the CPU twin, for the network of the current settings. Small batches leave the GPU
//! waiting on launches; large ones keep it busy; the largest batch is capped by memory.

use std::rc::Rc;

use gpu_runtime::training::{max_batch, SessionConfig, TrainingSession};
use gpu_runtime::{Gpu, GpuError};
use mlp::net::batch_order;
use mlp::{CpuTrainer, Dataset, Spec};

use crate::train_driver::now_ms;
pub use page_models::train::experiment::{GpuCell, Row, BATCHES};

const POINTS: usize = 4096;
/// Main-thread time the CPU twin gets per batch size (ms).
const CPU_BUDGET_MS: f64 = 400.0;
/// Least time measured per side and batch size (ms).
const MIN_MS: f64 = 150.0;
/// Most rounds of `steps_for` GPU steps per batch size.
const MAX_ROUNDS: u32 = 50;

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
            batch,
            accum: 1,
            ..SessionConfig::from_spec(&net, spec, &pts, &params, &[])
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
