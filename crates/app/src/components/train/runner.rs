//! The train view's engine: the GPU training session and the CPU twin, driven from one timer
//! on the main thread. Each tick gives the GPU side up to [`SLICE_MS`] of main-thread time to
//! submit steps (each one command buffer; the GPU works on them asynchronously, at most a
//! quarter second of work ahead: `page_models::train::run::in_flight_limit`) and the CPU twin
//! the same slice to compute steps; the page stays responsive because neither ever blocks.
//! Metrics come back from the GPU asynchronously (see `gpu_runtime::training`). The run's
//! lifecycle, rates and status line are pure and live in `page_models::train::run`; this
//! file holds what needs the GPU session.

use gpu_runtime::mlp::data::grid_points;
use gpu_runtime::mlp::net::{batch_order, metrics};
use gpu_runtime::mlp::{CpuTrainer, Net, Points, Spec};
use gpu_runtime::training::{
    step_plan_with, PlannedDispatch, SessionConfig, StepOptions, TrainingSession,
};
use gpu_runtime::{Gpu, GpuError};
use page_models::train::picture::{neuron_pictures, output_shade};
use page_models::train::run::{
    push_sample, status, GpuSteps, Lifecycle, Status, CPU_EVAL_MS, NEURON_GRID, SLICE_MS,
};
pub use page_models::train::run::{GpuState, Sample, GRID};

pub use gpu_runtime::now_ms;

/// Owned copies of what a GPU session is built from: network, initial parameters, training
/// features, labels, batch order, evaluation rows.
pub type SessionParts = (Net, Vec<f32>, Vec<f32>, Vec<u32>, Vec<u32>, Vec<f32>);

pub struct Runner {
    pub spec: Spec,
    pub net: Net,
    pub train: Points,
    pub test: Points,
    train_x: Vec<f32>,
    test_x: Vec<f32>,
    grid_x: Vec<f32>,
    neuron_x: Vec<f32>,
    order: Vec<u32>,
    init: Vec<f32>,
    pub gpu: Option<TrainingSession>,
    pub gpu_state: GpuState,
    /// The device of a session that failed with another error: if it turns out to be lost
    /// (the browser may settle a failed readback before its lost promise), the page says
    /// "lost", which Reset can recover from, instead of the error.
    failed_device: Option<std::rc::Rc<gpu_runtime::Gpu>>,
    pub cpu: CpuTrainer,
    /// Play/Pause, the hidden page, the rates and the report after Pause.
    pub life: Lifecycle,
    pub gpu_hist: Vec<Sample>,
    pub cpu_hist: Vec<Sample>,
    /// Class-1 probability (regression: the output mapped from [−1, 1] to [0, 1]) on the
    /// grid, row by row from the top.
    pub heat: Vec<f32>,
    /// Whether `heat` came from the GPU (else from the CPU twin).
    pub heat_from_gpu: bool,
    /// Heatmaps drawn so far (tests wait for a new one).
    pub heat_version: u64,
    /// Parameters to draw the weights with.
    pub weights: Vec<f32>,
    /// Each input's and hidden neuron's output over the plane (see `picture::neuron_pictures`),
    /// from `weights`: the GPU's when it trains, else the CPU twin's.
    pub neurons: Vec<Vec<String>>,
    pub plan: Vec<PlannedDispatch>,
    last_requested: u64,
    last_cpu_eval: f64,
    last_cpu_step_evaluated: u64,
    /// GPU steps completed at the last tick: a change redraws the counters even while the
    /// page is hidden (steps submitted before it was hidden still finish).
    seen_gpu_steps: u64,
    /// Something changed since the last render.
    pub dirty: bool,
}

impl Runner {
    pub fn new(spec: Spec, gpu_available: bool) -> Self {
        let net = spec.net();
        let (train, test) = spec.data();
        let train_x = train.features(&spec.features);
        let test_x = test.features(&spec.features);
        let grid_x = grid_points(GRID).features(&spec.features);
        let neuron_x = grid_points(NEURON_GRID).features(&spec.features);
        let order = batch_order(train.len(), spec.seed);
        let init = net.init_params(spec.seed);
        let mut cpu = CpuTrainer::new(
            net.clone(),
            spec.hyper(),
            init.clone(),
            spec.batch,
            train_x.clone(),
            train.label.clone(),
            order.clone(),
        );
        cpu.accum = spec.accum;
        // The dispatches the session will run (with accumulation its gradient kernels and
        // optimiser stay separate).
        let opts = StepOptions {
            accum: spec.accum,
            pinned: &[],
        };
        let plan = step_plan_with(&net, &spec.hyper(), spec.batch, train.len(), opts);
        let mut r = Self {
            net,
            train,
            test,
            train_x,
            test_x,
            grid_x,
            neuron_x,
            order,
            neurons: Vec::new(),
            weights: init.clone(),
            init,
            gpu: None,
            failed_device: None,
            gpu_state: if gpu_available {
                GpuState::Starting
            } else {
                GpuState::Unavailable
            },
            cpu,
            life: Lifecycle::default(),
            gpu_hist: Vec::new(),
            cpu_hist: Vec::new(),
            heat: Vec::new(),
            heat_from_gpu: false,
            heat_version: 0,
            plan,
            last_requested: 0,
            last_cpu_eval: f64::NEG_INFINITY,
            last_cpu_step_evaluated: u64::MAX,
            seen_gpu_steps: 0,
            dirty: true,
            spec,
        };
        r.cpu_eval(0.0, true);
        r
    }

    /// What the GPU session is built from (owned, so it can cross an await).
    pub fn session_parts(&self) -> SessionParts {
        let eval: Vec<f32> = self
            .grid_x
            .iter()
            .chain(&self.train_x)
            .chain(&self.test_x)
            .copied()
            .collect();
        (
            self.net.clone(),
            self.init.clone(),
            self.train_x.clone(),
            self.train.label.clone(),
            self.order.clone(),
            eval,
        )
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
        self.dirty = true;
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
        self.dirty = true;
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
            self.dirty = true;
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
        self.life.set_playing(playing);
        self.dirty = true;
    }

    /// Play or Pause (the Play button). Pausing ends a training run: an embed reports where it
    /// got to once the steps already sent have finished (the timer sends it).
    pub fn toggle_playing(&mut self) {
        self.life.toggle();
        self.dirty = true;
    }

    /// The page was hidden or shown again; the rates start measuring afresh.
    pub fn set_hidden(&mut self, hidden: bool) {
        if self.life.set_hidden(hidden) {
            self.dirty = true;
        }
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
        self.life.take_finished_run(in_flight)
    }

    /// What the status line shows.
    pub fn status(&self) -> Status {
        status(&self.life, self.gpu_steps(), &self.gpu_state)
    }

    /// The step each side had reached (the GPU's: completed steps; None without a session).
    pub fn reached(&self) -> (Option<u64>, u64) {
        (
            self.gpu.as_ref().map(|g| g.steps_completed()),
            self.cpu.step,
        )
    }

    /// Whether steps are being taken now: Play is on and the page is in view.
    pub fn running(&self) -> bool {
        self.life.running()
    }

    /// One step of each side (the Step button).
    pub fn step_once(&mut self, now: f64) {
        if let Some(s) = self.gpu.as_mut() {
            if let Err(e) = s.step() {
                self.fail(e);
            }
        }
        self.cpu.step();
        self.request_gpu_eval();
        self.cpu_eval(now, true);
        self.dirty = true;
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
                let limit = self.life.in_flight_limit();
                while s.steps_submitted() - s.steps_completed() < limit
                    && now_ms() - start < SLICE_MS
                {
                    if let Err(e) = s.step() {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                self.fail(e);
            }
            let start = now_ms();
            let mut n = 0;
            while now_ms() - start < SLICE_MS && n < 2000 {
                self.cpu.step();
                n += 1;
            }
        }
        if let Some(s) = self.gpu.as_ref() {
            if self.life.running() {
                self.life.record_gpu(now, s.steps_completed());
            }
            if s.steps_submitted() > self.last_requested {
                self.request_gpu_eval();
            }
        }
        if self.running() {
            self.life.record_cpu(now, self.cpu.step);
        }
        self.collect_gpu_eval();
        self.cpu_eval(now, false);
        let done = self.gpu.as_ref().map_or(0, |s| s.steps_completed());
        if self.running() || done != self.seen_gpu_steps {
            self.seen_gpu_steps = done;
            self.dirty = true;
        }
    }

    fn collect_gpu_eval(&mut self) {
        let Some(s) = self.gpu.as_mut() else { return };
        let r = match s.poll_eval() {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => return self.fail(e),
        };
        let c = self.net.classes();
        let g = GRID * GRID;
        let n_train = self.train.len();
        if r.logits.len() < (g + n_train + self.test.len()) * c {
            return;
        }
        self.heat = r.logits[..g * c]
            .chunks_exact(c)
            .map(output_shade)
            .collect();
        self.heat_from_gpu = true;
        self.heat_version += 1;
        let loss = self.net.loss;
        let (train, _) = metrics(
            loss,
            &r.logits[g * c..(g + n_train) * c],
            &self.train.label,
            c,
        );
        let (test, acc) = metrics(loss, &r.logits[(g + n_train) * c..], &self.test.label, c);
        push_sample(
            &mut self.gpu_hist,
            Sample {
                step: r.step,
                train,
                test,
                test_acc: acc,
            },
        );
        self.weights = r.params;
        self.draw_neurons();
        self.dirty = true;
    }

    fn draw_neurons(&mut self) {
        self.neurons = neuron_pictures(&self.net, &self.weights, &self.neuron_x, NEURON_GRID);
    }

    fn cpu_eval(&mut self, now: f64, force: bool) {
        if !force && now - self.last_cpu_eval < CPU_EVAL_MS {
            return;
        }
        if self.cpu.step == self.last_cpu_step_evaluated {
            return;
        }
        self.last_cpu_eval = now;
        self.last_cpu_step_evaluated = self.cpu.step;
        let (train, _) = self.cpu.evaluate(&self.train_x, &self.train.label);
        let (test, acc) = self.cpu.evaluate(&self.test_x, &self.test.label);
        push_sample(
            &mut self.cpu_hist,
            Sample {
                step: self.cpu.step,
                train,
                test,
                test_acc: acc,
            },
        );
        if self.gpu.is_none() {
            let z = self.net.logits(&self.cpu.params, &self.grid_x, GRID * GRID);
            let c = self.net.classes().max(1);
            self.heat = z.chunks_exact(c).map(output_shade).collect();
            self.heat_from_gpu = false;
            self.heat_version += 1;
            self.weights = self.cpu.params.clone();
            self.draw_neurons();
        }
        self.dirty = true;
    }
}
