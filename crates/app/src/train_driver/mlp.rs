//! `#/train`'s model on the driver: the MLP's GPU session (`gpu_runtime::training`, the only
//! file of the app that names it) and the CPU twin in `page_models::train::board::Board`.
//! Each tick sends steps up to the page's in-flight limit
//! (`page_models::train::run::in_flight_limit`, at most a quarter second of work ahead) and
//! gives the twin the same slice; the session keeps its evaluation readbacks itself, asked for
//! whenever steps have been sent since the last. The page has no actions: the run's state is
//! the board, which the page reads.

use std::rc::Rc;

use gpu_runtime::training::{
    step_plan_with, PathOptions, PlannedDispatch, SessionConfig, StepOptions, TrainingSession,
};
use gpu_runtime::{Gpu, GpuError};
use mlp::Spec;
use page_models::train::board::{Board, SessionParts};
use page_models::train::run::{status, GpuSteps, Status};
pub use page_models::train::run::{GpuState, Sample, GRID};

use super::{Driver, End, GpuSide, Session, TrainModel};

impl Session for TrainingSession {
    fn steps(&self) -> GpuSteps {
        GpuSteps {
            submitted: self.steps_submitted(),
            completed: self.steps_completed(),
        }
    }
    fn step(&mut self) -> Result<(), GpuError> {
        TrainingSession::step(self)
    }
    fn set_lr(&mut self, lr: f32) -> Result<(), GpuError> {
        TrainingSession::set_lr(self, lr);
        Ok(())
    }
    fn device(&self) -> Option<&Rc<Gpu>> {
        Some(self.gpu())
    }
}

/// The MLP's run: its board (data, CPU twin, what is shown) and the GPU side's state.
pub struct Mlp {
    pub board: Board,
    pub gpu_state: GpuState,
    /// The dispatches the session runs (the kernels panel shows them).
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

/// The train page's run.
pub type Runner = Driver<Mlp>;

impl Mlp {
    /// Asks for an evaluation if the session can take one now.
    fn request_eval(&mut self, gpu: &mut GpuSide<Self>) -> Result<(), GpuError> {
        let Some(s) = gpu.session.as_mut() else {
            return Ok(());
        };
        if s.request_eval()? {
            self.last_requested = s.steps_submitted();
        }
        Ok(())
    }
}

impl TrainModel for Mlp {
    type Session = TrainingSession;
    type Job = ();
    type Parts = (Spec, SessionParts);
    type Page = ();
    type Out = ();

    fn take_parts(&mut self) -> Option<Self::Parts> {
        Some((self.board.spec.clone(), self.board.session_parts()))
    }

    async fn start(gpu: Rc<Gpu>, (spec, parts): Self::Parts) -> Result<TrainingSession, GpuError> {
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

    fn attached(&mut self, gpu: &mut GpuSide<Self>, ended: Option<End>, _software: bool) {
        match ended {
            None => {
                self.gpu_state = GpuState::Ready;
                // Evaluate once so the picture shows the GPU's untrained network.
                if let Err(e) = self.request_eval(gpu) {
                    let end = gpu.fail(e);
                    self.ended(end, &mut ());
                }
            }
            Some(end) => self.ended(end, &mut ()),
        }
        self.board.dirty = true;
    }

    fn set_lr(&mut self, lr: f32) {
        self.board.spec.lr = lr;
        self.board.cpu.hyper.lr = lr;
    }

    fn ended(&mut self, end: End, _: &mut ()) {
        self.gpu_state = match end {
            End::Lost(m) => GpuState::Lost(m),
            End::Failed(m) => GpuState::Failed(m),
        };
        self.board.dirty = true;
    }

    fn lost_late(&mut self, _: &mut ()) {
        if let GpuState::Failed(e) = &self.gpu_state {
            self.gpu_state = GpuState::Lost(e.clone());
            self.board.dirty = true;
        }
    }

    fn gpu_tick(
        &mut self,
        gpu: &mut GpuSide<Self>,
        _: &(),
        now: f64,
        _: &mut (),
    ) -> Result<(), GpuError> {
        if self.board.life.running() {
            let limit = self.board.life.in_flight_limit();
            let in_flight = gpu.steps().map_or(0, GpuSteps::in_flight);
            if gpu.send(limit.saturating_sub(in_flight))? > 0 {
                self.sent_under = Some(limit);
            }
        }
        let Some(s) = gpu.session.as_mut() else {
            return Ok(());
        };
        if self.board.life.running() {
            self.board.life.record_gpu(now, s.steps_completed());
        }
        if s.steps_submitted() > self.last_requested {
            self.request_eval(gpu)?;
        }
        let Some(s) = gpu.session.as_mut() else {
            return Ok(());
        };
        if let Some(r) = s.poll_eval()? {
            self.board.show_gpu_eval(r.step, &r.logits, r.params);
        }
        Ok(())
    }

    fn cpu_tick(&mut self, gpu: &GpuSide<Self>, _: &(), now: f64, _: &mut ()) {
        if self.board.life.running() {
            self.board.cpu_slice(super::now_ms);
            let step = self.board.cpu.step;
            self.board.life.record_cpu(now, step);
        }
        self.board.cpu_eval(now, false, gpu.session.is_some());
        let done = gpu.steps().map_or(0, |s| s.completed);
        if self.board.life.running() || done != self.seen_gpu_steps {
            self.seen_gpu_steps = done;
            self.board.dirty = true;
        }
    }
}

impl Driver<Mlp> {
    /// A run of `spec`; its session comes later if `gpu_available`.
    pub fn mlp(spec: Spec, gpu_available: bool) -> Self {
        let board = Board::new(spec);
        // The dispatches the session will run (with accumulation its gradient kernels and
        // optimiser stay separate).
        let opts = StepOptions {
            accum: board.spec.accum,
            pinned: &[],
            // The page runs the default paths; the session is made on the same.
            paths: PathOptions::default(),
        };
        let plan = step_plan_with(
            &board.net,
            &board.spec.hyper(),
            board.spec.batch,
            board.train.len(),
            opts,
        );
        Driver::new(Mlp {
            board,
            gpu_state: if gpu_available {
                GpuState::Starting
            } else {
                GpuState::Unavailable
            },
            plan,
            last_requested: 0,
            seen_gpu_steps: 0,
            sent_under: None,
        })
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

    /// Whether the run Pause ended has now finished (true once per Pause; never while
    /// training again).
    pub fn take_finished_run(&mut self) -> bool {
        let in_flight = self.gpu_steps().map_or(0, GpuSteps::in_flight);
        self.model.board.life.take_finished_run(in_flight)
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
        (self.gpu_steps().map(|s| s.completed), self.board.cpu.step)
    }

    /// One step of each side (the Step button).
    pub fn step_once(&mut self, now: f64) {
        let m = &mut self.model;
        let sent = self.gpu.session.as_mut().map_or(Ok(()), |s| s.step());
        if let Err(e) = sent {
            let end = self.gpu.fail(e);
            m.ended(end, &mut ());
        }
        m.board.cpu.step();
        if let Err(e) = m.request_eval(&mut self.gpu) {
            let end = self.gpu.fail(e);
            m.ended(end, &mut ());
        }
        m.board.cpu_eval(now, true, self.gpu.session.is_some());
        m.board.dirty = true;
    }
}
