//! The GPT page's timing of "attention is at heart matrix multiplication": one training step
//! of the page's model, its dispatches split by class (`page_models::gpt_inside::class_of`)
//! into programs of the engine (`Engine::derive_program` over the step program), each class
//! run alone with the queue drained before and after, timed by the wall clock. It runs on a
//! session of its own, made for the measurement and dropped after it: the step's Adam would
//! otherwise move the learner's model, and its readbacks would queue behind the page's.
//! Cancel is checked between submissions.

use std::rc::Rc;

use gpu_runtime::engine::gpt::{GptSession, Settings};
use gpu_runtime::engine::TRAIN_STEP;
use gpu_runtime::gpt::{Config, Corpus};
use gpu_runtime::{now_ms, CancelToken, Gpu, GpuError};
use page_models::gpt_inside::{class_of, steps_per_run, Class, REPS};

use crate::train_driver::gpt::SEED;

/// The programs of each class, in `Class::ALL`'s order.
const PROGRAMS: [&str; 3] = ["time matmul", "time attention", "time other"];

/// Each class's per-step milliseconds and the whole step's, `REPS` samples each.
pub struct Samples {
    pub class_ms: [Vec<f64>; 3],
    pub step_ms: Vec<f64>,
    pub steps_per_run: u64,
}

/// Milliseconds per step of `times` runs of `program`, the queue drained first.
async fn timed(s: &mut GptSession, program: &str, times: u64) -> Result<f64, GpuError> {
    s.engine().finished().await?;
    let start = now_ms();
    s.engine().run(program, times)?;
    s.engine().finished().await?;
    Ok((now_ms() - start) / times as f64)
}

/// Times one training step of `cfg` at `settings` on `corpus` by class; `Ok(None)` when
/// cancelled. `progress(done, total)` after each timed submission.
pub async fn measure(
    gpu: Rc<Gpu>,
    cfg: Config,
    settings: Settings,
    corpus: &Corpus,
    cancel: &CancelToken,
    progress: impl Fn(usize, usize),
) -> Result<Option<Samples>, GpuError> {
    let mut s = GptSession::with_settings(gpu, cfg, corpus, SEED, settings, None).await?;
    for (class, name) in Class::ALL.into_iter().zip(PROGRAMS) {
        s.engine()
            .derive_program(name, TRAIN_STEP, |id| class_of(id) == class)?;
    }
    // One untimed run of each (first use of every pipeline and buffer), and the step's time
    // for the number of steps per timed submission.
    for name in PROGRAMS {
        timed(&mut s, name, 1).await?;
    }
    let step = timed(&mut s, TRAIN_STEP, 1).await?;
    let k = steps_per_run(step);
    let total = REPS * (PROGRAMS.len() + 1);
    let mut out = Samples {
        class_ms: Default::default(),
        step_ms: Vec::with_capacity(REPS),
        steps_per_run: k,
    };
    let mut done = 0;
    for _ in 0..REPS {
        // The classes and the whole step interleaved, so a drift of the machine's speed
        // touches each alike.
        for (i, name) in PROGRAMS.into_iter().chain([TRAIN_STEP]).enumerate() {
            if cancel.is_cancelled() {
                return Ok(None);
            }
            let ms = timed(&mut s, name, k).await?;
            match out.class_ms.get_mut(i) {
                Some(v) => v.push(ms),
                None => out.step_ms.push(ms),
            }
            done += 1;
            progress(done, total);
        }
    }
    Ok(Some(out))
}
