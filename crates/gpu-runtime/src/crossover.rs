//! The crossover experiment's GPU side, one loop for the train view and `bench crossover`:
//! training steps per second of the 2-w-w-2 network (`mlp::crossover`) at one width × batch.
//!
//! One warm-up step (pipelines, first submissions), then a two-step pilot on a drained queue
//! sizes a round; each of the timed runs starts on a drained queue, submits rounds until it
//! has lasted `min_ms`, and ends when every step has finished, so no run's time holds another
//! run's work. Cancel is looked at between runs (a round already submitted cannot be taken back,
//! and lasts about a quarter of `min_ms`).

use std::rc::Rc;

use mlp::crossover::{self, steps_for, Data};

use crate::clock::now_ms;
use crate::context::{Gpu, GpuError};
use crate::plan::CancelToken;
use crate::training::{PathOptions, SessionConfig, TrainingSession};

/// How many runs, and how long each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Runs {
    /// Timed runs (the caller reports their median and spread).
    pub count: usize,
    /// Least length of one run (ms): coarse clocks stay small beside it.
    pub min_ms: f64,
    /// Most steps in one round (they are all queued before waiting).
    pub cap: u32,
}

/// Steps per second of each timed run of the crossover network at `width` × `batch` on
/// `gpu`, trained on `d` along `paths` (the page: the defaults); `None` when `cancel` was set.
pub async fn gpu_runs(
    gpu: &Rc<Gpu>,
    d: &Data,
    width: usize,
    batch: usize,
    runs: Runs,
    paths: PathOptions,
    cancel: &CancelToken,
) -> Result<Option<Vec<f64>>, GpuError> {
    let net = crossover::net(width);
    let params = net.init_params(1);
    let mut s = TrainingSession::new(
        gpu.clone(),
        SessionConfig {
            net: net.clone(),
            hyper: crossover::hyper(),
            batch,
            accum: 1,
            params: &params,
            features: d.x.clone(),
            labels: d.labels.clone(),
            order: d.order.clone(),
            eval_features: &[],
            paths,
        },
    )
    .await?;
    s.step()?;
    s.drained().await?;
    let t0 = now_ms();
    for _ in 0..2 {
        s.step()?;
    }
    s.drained().await?;
    let n = steps_for(runs.min_ms / 4.0, (now_ms() - t0) / 2.0, runs.cap);
    let mut out = Vec::with_capacity(runs.count);
    for _ in 0..runs.count {
        if cancel.is_cancelled() {
            return Ok(None);
        }
        s.drained().await?;
        let t0 = now_ms();
        let mut done = 0u32;
        while done == 0 || now_ms() - t0 < runs.min_ms {
            for _ in 0..n {
                s.step()?;
            }
            s.drained().await?;
            done += n;
        }
        out.push(f64::from(done) * 1000.0 / (now_ms() - t0).max(1e-3));
    }
    Ok(Some(out))
}
