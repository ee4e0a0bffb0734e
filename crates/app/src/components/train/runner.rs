//! The train view's engine: the GPU training session and the CPU twin, driven from one timer
//! on the main thread. Each tick gives the GPU side up to [`SLICE_MS`] of main-thread time to
//! submit steps (each one command buffer; the GPU works on them asynchronously, at most
//! [`MAX_IN_FLIGHT`] ahead) and the CPU twin the same slice to compute steps; the page stays
//! responsive because neither ever blocks. Metrics come back from the GPU asynchronously (see
//! `gpu_runtime::training`).

use std::collections::VecDeque;

use gpu_runtime::mlp::data::grid_points;
use gpu_runtime::mlp::net::{batch_order, metrics};
use gpu_runtime::mlp::{CpuTrainer, Net, Points, Spec};
use gpu_runtime::training::{
    step_plan_with, PlannedDispatch, SessionConfig, StepOptions, TrainingSession,
};
use gpu_runtime::{Gpu, GpuError};

/// Side of the decision-boundary grid (GRID² points evaluated on the GPU).
pub const GRID: usize = 40;
/// Side of each neuron's small picture (computed on the CPU from the drawn weights).
pub const NEURON_GRID: usize = 20;
/// Main-thread milliseconds per tick for each side.
pub const SLICE_MS: f64 = 5.0;
/// Most steps the GPU may have queued but not finished.
pub const MAX_IN_FLIGHT: u64 = 24;
/// Fewest: the queue never runs dry between two ticks.
pub const MIN_IN_FLIGHT: u64 = 2;
/// How much GPU time may be queued ahead (ms at the measured rate). Submitted work cannot be
/// taken back, so this bounds how long Pause keeps finishing steps and how long a restarted
/// network waits behind the old one's: on a software adapter doing 4 steps/s, 24 queued steps
/// were 6 s of both.
pub const QUEUE_MS: f64 = 250.0;
/// How often the CPU twin evaluates itself (ms).
const CPU_EVAL_MS: f64 = 250.0;
/// Most points kept per loss curve (older ones are thinned).
const MAX_HISTORY: usize = 300;

pub use gpu_runtime::now_ms;

/// One point of a loss curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub step: u64,
    pub train: f32,
    pub test: f32,
    pub test_acc: f32,
}

/// Steps per second over the last couple of seconds.
#[derive(Default)]
pub struct Rate(VecDeque<(f64, u64)>);

impl Rate {
    pub fn record(&mut self, t: f64, count: u64) {
        self.0.push_back((t, count));
        while self.0.len() > 2 && self.0.front().is_some_and(|&(t0, _)| t - t0 > 2000.0) {
            self.0.pop_front();
        }
    }

    pub fn per_second(&self) -> Option<f64> {
        let (&(t0, c0), &(t1, c1)) = (self.0.front()?, self.0.back()?);
        (t1 - t0 > 300.0).then(|| (c1.saturating_sub(c0)) as f64 * 1000.0 / (t1 - t0))
    }

    /// Forgets the window (on Play/Pause), so a rate never spans time nothing ran.
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// What a rate shows: nothing is measured while paused, and "measuring" until the window
/// spans enough time after Play; a number only when one was measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateView {
    /// That side is not training at all (no GPU session).
    Off,
    Paused,
    Measuring,
    PerSecond(f64),
}

/// Steps that may be in flight at a measured GPU rate (steps/s): [`QUEUE_MS`] of work, within
/// [`MIN_IN_FLIGHT`]..=[`MAX_IN_FLIGHT`]; the minimum until a rate is known.
pub fn in_flight_limit(rate: Option<f64>) -> u64 {
    match rate {
        Some(r) if r.is_finite() && r > 0.0 => {
            ((r * QUEUE_MS / 1000.0).floor() as u64).clamp(MIN_IN_FLIGHT, MAX_IN_FLIGHT)
        }
        _ => MIN_IN_FLIGHT,
    }
}

pub fn rate_view(playing: bool, rate: &Rate) -> RateView {
    match (playing, rate.per_second()) {
        (false, _) => RateView::Paused,
        (true, None) => RateView::Measuring,
        (true, Some(v)) => RateView::PerSecond(v),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum GpuState {
    /// No WebGPU: the CPU twin trains alone.
    Unavailable,
    Starting,
    Ready,
    Lost(String),
    Failed(GpuError),
}

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
    pub playing: bool,
    /// The page is hidden: training holds (Play stays on) and resumes when shown, as a
    /// video would; a rate never spans the hidden time.
    pub hidden: bool,
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
    pub gpu_rate: Rate,
    pub cpu_rate: Rate,
    /// The last GPU rate measured (kept across Pause, which clears `gpu_rate`): it sizes the
    /// queue ([`in_flight_limit`]).
    last_gpu_rate: Option<f64>,
    /// Pause was pressed in an embed: `run-finished` goes out once the steps already sent have
    /// finished, so it carries the count the widget ends on.
    report_pending: bool,
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
            playing: false,
            hidden: false,
            gpu_hist: Vec::new(),
            cpu_hist: Vec::new(),
            heat: Vec::new(),
            heat_from_gpu: false,
            heat_version: 0,
            gpu_rate: Rate::default(),
            cpu_rate: Rate::default(),
            last_gpu_rate: None,
            report_pending: false,
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
            Err(e) => self.gpu_state = GpuState::Failed(e),
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
                GpuState::Failed(e)
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
            self.gpu_state = GpuState::Lost(e.to_string());
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
        self.playing = playing;
        self.gpu_rate.clear();
        self.cpu_rate.clear();
        self.dirty = true;
    }

    /// The page was hidden or shown again; the rates start measuring afresh.
    pub fn set_hidden(&mut self, hidden: bool) {
        if self.hidden != hidden {
            self.hidden = hidden;
            self.gpu_rate.clear();
            self.cpu_rate.clear();
            self.dirty = true;
        }
    }

    /// GPU steps sent but not finished: after Pause, the page says it is finishing them.
    pub fn gpu_in_flight(&self) -> u64 {
        self.gpu
            .as_ref()
            .map_or(0, |s| s.steps_submitted() - s.steps_completed())
    }

    /// Pause ended a training run: report it once the steps already sent have finished.
    pub fn report_when_finished(&mut self) {
        self.report_pending = true;
    }

    /// Whether the run Pause ended has now finished (true once per Pause; never while
    /// training again).
    pub fn take_finished_run(&mut self) -> bool {
        if !self.report_pending || self.playing {
            self.report_pending = false;
            return false;
        }
        if self.gpu_in_flight() > 0 {
            return false;
        }
        self.report_pending = false;
        true
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
        self.playing && !self.hidden
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
                let limit = in_flight_limit(self.last_gpu_rate);
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
            if self.running() {
                self.gpu_rate.record(now, s.steps_completed());
                if let Some(v) = self.gpu_rate.per_second() {
                    self.last_gpu_rate = Some(v);
                }
            }
            if s.steps_submitted() > self.last_requested {
                self.request_gpu_eval();
            }
        }
        if self.running() {
            self.cpu_rate.record(now, self.cpu.step);
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
            .map(super::picture::output_shade)
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
        push(
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
        self.neurons =
            super::picture::neuron_pictures(&self.net, &self.weights, &self.neuron_x, NEURON_GRID);
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
        push(
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
            self.heat = z
                .chunks_exact(c)
                .map(super::picture::output_shade)
                .collect();
            self.heat_from_gpu = false;
            self.heat_version += 1;
            self.weights = self.cpu.params.clone();
            self.draw_neurons();
        }
        self.dirty = true;
    }
}

fn push(hist: &mut Vec<Sample>, s: Sample) {
    if hist.last().is_some_and(|l| l.step == s.step) {
        return;
    }
    hist.push(s);
    if hist.len() > MAX_HISTORY {
        // Keep the first point and every other one after it.
        let kept: Vec<Sample> = hist
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 0 || *i == hist.len() - 1)
            .map(|(_, s)| *s)
            .collect();
        *hist = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_shown_only_once_measured() {
        let mut r = Rate::default();
        assert_eq!(rate_view(false, &r), RateView::Paused);
        assert_eq!(rate_view(true, &r), RateView::Measuring);
        r.record(0.0, 0);
        r.record(200.0, 10);
        assert_eq!(
            rate_view(true, &r),
            RateView::Measuring,
            "too short a window"
        );
        r.record(1000.0, 50);
        assert_eq!(rate_view(true, &r), RateView::PerSecond(50.0));
        assert_eq!(rate_view(false, &r), RateView::Paused);
        r.clear();
        assert_eq!(rate_view(true, &r), RateView::Measuring);
    }

    #[test]
    fn the_queue_holds_a_quarter_second_of_steps() {
        assert_eq!(in_flight_limit(None), MIN_IN_FLIGHT, "until measured");
        assert_eq!(
            in_flight_limit(Some(4.0)),
            MIN_IN_FLIGHT,
            "a slow software adapter"
        );
        assert_eq!(in_flight_limit(Some(40.0)), 10);
        assert_eq!(in_flight_limit(Some(1e6)), MAX_IN_FLIGHT);
        assert_eq!(in_flight_limit(Some(f64::NAN)), MIN_IN_FLIGHT);
        assert_eq!(in_flight_limit(Some(0.0)), MIN_IN_FLIGHT);
    }
}
