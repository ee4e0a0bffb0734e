//! The train view's engine: the GPU training session and the CPU twin, driven from one timer
//! on the main thread. Each tick gives the GPU side up to [`SLICE_MS`] of main-thread time to
//! submit steps (each one command buffer; the GPU works on them asynchronously, at most a
//! quarter second of work ahead: `page_models::train::run::in_flight_limit`) and the CPU twin
//! the same slice to compute steps; the page stays responsive because neither ever blocks.
//! Metrics come back from the GPU asynchronously (see `gpu_runtime::training`). Everything
//! without a GPU handle is pure and lives in `page_models::train`: the run's data, CPU twin
//! and what is shown (`board::Board`), its lifecycle, rates and status line (`run`); this
//! file holds the GPU session and drives both.

use gpu_runtime::training::{
    step_plan_with, PathOptions, PlannedDispatch, SessionConfig, StepOptions, TrainingSession,
};
use gpu_runtime::{Gpu, GpuError};
use mlp::Spec;
use page_models::train::board::{Board, SessionParts};
use page_models::train::run::{status, GpuSteps, Status, SLICE_MS};
pub use page_models::train::run::{GpuState, Sample, GRID};

pub use gpu_runtime::now_ms;

/// A run ([`Board`]: data, CPU twin, what is shown) and its GPU session.
pub struct Runner {
    pub board: Board,
    pub gpu: Option<TrainingSession>,
    pub gpu_state: GpuState,
    /// The device of a session that failed with another error: if it turns out to be lost
    /// (the browser may settle a failed readback before its lost promise), the page says
    /// "lost", which Reset can recover from, instead of the error.
    failed_device: Option<std::rc::Rc<gpu_runtime::Gpu>>,
    pub plan: Vec<PlannedDispatch>,
    last_requested: u64,
    /// GPU steps completed at the last tick: a change redraws the counters even while the
    /// page is hidden (steps submitted before it was hidden still finish).
    seen_gpu_steps: u64,
    /// The queue's limit when steps were last sent: until the next sending, no more than
    /// this many are in flight (the status line says it, so a test checks the queue against
    /// the page's own limit instead of a rate it measures).
    sent_under: Option<u64>,
}

impl Runner {
    pub fn new(spec: Spec, gpu_available: bool) -> Self {
        let board = Board::new(spec);
        // The dispatches the session will run (with accumulation its gradient kernels and
        // optimiser stay separate).
        let opts = StepOptions {
            accum: board.spec.accum,
            pinned: &[],
            // The page runs the default paths; the session below is made on the same.
            paths: PathOptions::default(),
        };
        let plan = step_plan_with(
            &board.net,
            &board.spec.hyper(),
            board.spec.batch,
            board.train.len(),
            opts,
        );
        Self {
            board,
            gpu: None,
            failed_device: None,
            gpu_state: if gpu_available {
                GpuState::Starting
            } else {
                GpuState::Unavailable
            },
            plan,
            last_requested: 0,
            seen_gpu_steps: 0,
            sent_under: None,
        }
    }

    /// What the GPU session is built from (owned, so it can cross an await).
    pub fn session_parts(&self) -> SessionParts {
        self.board.session_parts()
    }

    pub async fn start_gpu(
        gpu: std::rc::Rc<Gpu>,
        spec: &Spec,
        parts: SessionParts,
    ) -> Result<TrainingSession, GpuError> {
        let (net, params, features, labels, order, eval) = parts;
        TrainingSession::new(
            gpu,
            SessionConfig {
                net,
                hyper: spec.hyper(),
                batch: spec.batch,
                accum: spec.accum,
                params: &params,
                features,
                labels,
                order,
                eval_features: &eval,
                paths: PathOptions::default(),
            },
        )
        .await
    }

    pub fn attach(&mut self, result: Result<TrainingSession, GpuError>) {
        self.failed_device = None;
        match result {
            Ok(s) => {
                self.gpu = Some(s);
                self.gpu_state = GpuState::Ready;
                // Evaluate once so the picture shows the GPU's untrained network.
                self.request_gpu_eval();
            }
            Err(GpuError::DeviceLost(e)) => self.gpu_state = GpuState::Lost(e),
            Err(e) => self.gpu_state = GpuState::Failed(e.to_string()),
        }
        self.board.dirty = true;
    }

    fn fail(&mut self, e: GpuError) {
        let session = self.gpu.take();
        // Any error on a device already lost is the loss.
        let lost = session.as_ref().is_some_and(|s| s.device_lost());
        self.gpu_state = match e {
            GpuError::DeviceLost(m) => GpuState::Lost(m),
            e if lost => GpuState::Lost(e.to_string()),
            e => {
                self.failed_device = session.map(|s| s.gpu().clone());
                GpuState::Failed(e.to_string())
            }
        };
        if matches!(self.gpu_state, GpuState::Lost(_)) {
            crate::session::forget();
        }
        self.board.dirty = true;
    }

    /// A session that failed on a device that has since been lost: reported as the loss.
    fn notice_late_loss(&mut self) {
        if !self.failed_device.as_ref().is_some_and(|g| g.is_lost()) {
            return;
        }
        self.failed_device = None;
        // (No session::forget here: the page may hold a newer device by now, and
        // session::gpu replaces a lost one by itself.)
        if let GpuState::Failed(e) = &self.gpu_state {
            self.gpu_state = GpuState::Lost(e.clone());
            self.board.dirty = true;
        }
    }

    fn request_gpu_eval(&mut self) {
        let Some(s) = self.gpu.as_mut() else { return };
        match s.request_eval() {
            Ok(true) => self.last_requested = s.steps_submitted(),
            Ok(false) => {}
            Err(e) => self.fail(e),
        }
    }

    /// Starts or stops training; the rates start measuring afresh.
    pub fn set_playing(&mut self, playing: bool) {
        self.board.set_playing(playing);
    }

    /// Play or Pause (the Play button). Pausing ends a training run: an embed reports where it
    /// got to once the steps already sent have finished (the timer sends it).
    pub fn toggle_playing(&mut self) {
        self.board.toggle_playing();
    }

    /// The GPU session's step counts (None without one).
    pub fn gpu_steps(&self) -> Option<GpuSteps> {
        self.gpu.as_ref().map(|s| GpuSteps {
            submitted: s.steps_submitted(),
            completed: s.steps_completed(),
        })
    }

    /// GPU steps sent but not finished: after Pause, the page says it is finishing them.
    pub fn gpu_in_flight(&self) -> u64 {
        self.gpu_steps().map_or(0, GpuSteps::in_flight)
    }

    /// Whether the run Pause ended has now finished (true once per Pause; never while
    /// training again).
    pub fn take_finished_run(&mut self) -> bool {
        let in_flight = self.gpu_in_flight();
        self.board.life.take_finished_run(in_flight)
    }

    /// What the status line shows.
    pub fn status(&self) -> Status {
        let s = status(&self.board.life, self.gpu_steps(), &self.gpu_state);
        Status {
            gpu_queue_limit: self.sent_under.unwrap_or(s.gpu_queue_limit),
            ..s
        }
    }

    /// The step each side had reached (the GPU's: completed steps; None without a session).
    pub fn reached(&self) -> (Option<u64>, u64) {
        (
            self.gpu.as_ref().map(|g| g.steps_completed()),
            self.board.cpu.step,
        )
    }

    /// Whether steps are being taken now: Play is on and the page is in view.
    pub fn running(&self) -> bool {
        self.board.life.running()
    }

    /// One step of each side (the Step button).
    pub fn step_once(&mut self, now: f64) {
        if let Some(s) = self.gpu.as_mut() {
            if let Err(e) = s.step() {
                self.fail(e);
            }
        }
        self.board.cpu.step();
        self.request_gpu_eval();
        self.board.cpu_eval(now, true, self.gpu.is_some());
        self.board.dirty = true;
    }

    /// Called by the page's timer.
    pub fn tick(&mut self, now: f64) {
        // A lost device may never finish the steps in flight, so no step or readback would
        // ever report it: look at the flag wgpu's lost callback sets.
        if self.gpu.as_ref().is_some_and(|s| s.device_lost()) {
            self.fail(GpuError::DeviceLost("lost while training".into()));
        }
        self.notice_late_loss();
        if self.running() {
            let start = now_ms();
            let mut failed = None;
            if let Some(s) = self.gpu.as_mut() {
                let limit = self.board.life.in_flight_limit();
                while s.steps_submitted() - s.steps_completed() < limit
                    && now_ms() - start < SLICE_MS
                {
                    self.sent_under = Some(limit);
                    if let Err(e) = s.step() {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                self.fail(e);
            }
            self.board.cpu_slice(now_ms);
        }
        if let Some(s) = self.gpu.as_ref() {
            if self.board.life.running() {
                self.board.life.record_gpu(now, s.steps_completed());
            }
            if s.steps_submitted() > self.last_requested {
                self.request_gpu_eval();
            }
        }
        if self.running() {
            let step = self.board.cpu.step;
            self.board.life.record_cpu(now, step);
        }
        self.collect_gpu_eval();
        self.board.cpu_eval(now, false, self.gpu.is_some());
        let done = self.gpu.as_ref().map_or(0, |s| s.steps_completed());
        if self.running() || done != self.seen_gpu_steps {
            self.seen_gpu_steps = done;
            self.board.dirty = true;
        }
    }

    fn collect_gpu_eval(&mut self) {
        let Some(s) = self.gpu.as_mut() else { return };
        match s.poll_eval() {
            Ok(Some(r)) => self.board.show_gpu_eval(r.step, &r.logits, r.params),
            Ok(None) => {}
            Err(e) => self.fail(e),
        }
    }
}
