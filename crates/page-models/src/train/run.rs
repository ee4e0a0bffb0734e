//! The train view's run lifecycle and what its status line shows, without the GPU: Play and
//! Pause, a hidden page holding training, steps the GPU was sent and is still finishing after
//! Pause, the run report an embed gets once they are done, the step rates ("measuring…" until
//! a window of time is measured), the loss curves' samples and which side a number is from.
//! The app's `components/train/runner.rs` owns the GPU session and the CPU twin and keeps one
//! [`Lifecycle`]; the component renders [`Status`].

use std::collections::VecDeque;

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
pub const CPU_EVAL_MS: f64 = 250.0;
/// Most points kept per loss curve (older ones are thinned).
pub const MAX_HISTORY: usize = 300;

/// One point of a loss curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub step: u64,
    pub train: f32,
    pub test: f32,
    pub test_acc: f32,
}

impl Sample {
    /// The loss is no longer a number (NaN or infinite): the weights grew until they
    /// overflowed, and no later step can bring them back. The page says so instead of
    /// showing "–".
    pub fn diverged(&self) -> bool {
        !(self.train.is_finite() && self.test.is_finite())
    }
}

/// Adds a sample to a loss curve (once per step), thinning the curve past [`MAX_HISTORY`]:
/// the first point and every other one after it are kept, and the newest.
pub fn push_sample(hist: &mut Vec<Sample>, s: Sample) {
    if hist.last().is_some_and(|l| l.step == s.step) {
        return;
    }
    hist.push(s);
    if hist.len() > MAX_HISTORY {
        let kept: Vec<Sample> = hist
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 0 || *i == hist.len() - 1)
            .map(|(_, s)| *s)
            .collect();
        *hist = kept;
    }
}

/// Which trainer a number came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Gpu,
    Cpu,
}

impl Side {
    pub fn code(self) -> &'static str {
        match self {
            Side::Gpu => "gpu",
            Side::Cpu => "cpu",
        }
    }
}

/// The latest evaluation, named by the side it came from: before the GPU has evaluated its
/// network the numbers are the CPU twin's, and the line says so.
pub fn latest<'a>(gpu: &'a [Sample], cpu: &'a [Sample]) -> Option<(&'a Sample, Side)> {
    gpu.last()
        .map(|s| (s, Side::Gpu))
        .or(cpu.last().map(|s| (s, Side::Cpu)))
}

/// The loss chart's extent: the last step both curves have reached (so they can be compared;
/// the faster side's later steps are left out) and the largest finite loss up to it.
pub fn loss_extent(gpu: &[Sample], cpu: &[Sample]) -> (u64, f32) {
    let reached = |h: &[Sample]| h.last().map(|s| s.step);
    let max_step = match (reached(gpu), reached(cpu)) {
        (Some(g), Some(c)) if gpu.len() > 1 => g.min(c),
        (g, c) => g.or(c).unwrap_or(1),
    }
    .max(1);
    let max_loss = gpu
        .iter()
        .chain(cpu)
        .filter(|s| s.step <= max_step)
        .flat_map(|s| [s.train, s.test])
        .filter(|v| v.is_finite())
        .fold(0.0f32, f32::max);
    (max_step, max_loss)
}

/// Steps per second over the last couple of seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rate(VecDeque<(f64, u64)>);

/// The fewest steps a rate's window spans once it is older than 2 s ([`Rate::record`]).
pub const MIN_WINDOW_STEPS: u64 = 8;

impl Rate {
    pub fn record(&mut self, t: f64, count: u64) {
        self.0.push_back((t, count));
        // The window is the last 2 s, but never fewer than MIN_WINDOW_STEPS steps: at a step or
        // two a second (a slow GPU, a large network) 2 s hold 0–2 steps and the rate would
        // flicker between "measuring" and a number that doubles from one reading to the next.
        while self.0.len() > 2
            && self.0.front().is_some_and(|&(t0, _)| t - t0 > 2000.0)
            && self
                .0
                .get(1)
                .is_some_and(|&(_, c1)| count - c1 >= MIN_WINDOW_STEPS)
        {
            self.0.pop_front();
        }
    }

    /// None until the window spans 300 ms and at least one step finished in it: before the
    /// first step of a loaded GPU finishes, "0.00 steps/s" would be a number nobody measured
    /// (only that the rate is below one step per window).
    pub fn per_second(&self) -> Option<f64> {
        let (&(t0, c0), &(t1, c1)) = (self.0.front()?, self.0.back()?);
        (t1 - t0 > 300.0 && c1 > c0).then(|| (c1 - c0) as f64 * 1000.0 / (t1 - t0))
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
    /// Paused, with this many GPU steps already sent and still finishing (they cannot be
    /// taken back; the count stops once they are done).
    Finishing(u64),
}

pub fn rate_view(playing: bool, rate: &Rate) -> RateView {
    match (playing, rate.per_second()) {
        (false, _) => RateView::Paused,
        (true, None) => RateView::Measuring,
        (true, Some(v)) => RateView::PerSecond(v),
    }
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

/// Where the GPU side stands.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuState {
    /// No WebGPU: the CPU twin trains alone.
    Unavailable,
    Starting,
    Ready,
    /// The device was lost (the message); Reset asks for a new one.
    Lost(String),
    /// The session failed with this error (in words).
    Failed(String),
}

impl GpuState {
    /// The status line's `data-gpu`.
    pub fn code(&self) -> &'static str {
        match self {
            GpuState::Ready => "ready",
            GpuState::Starting => "starting",
            GpuState::Unavailable => "unavailable",
            GpuState::Lost(_) => "lost",
            GpuState::Failed(_) => "failed",
        }
    }
}

/// The GPU session's step counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuSteps {
    pub submitted: u64,
    pub completed: u64,
}

impl GpuSteps {
    /// Sent but not finished.
    pub fn in_flight(self) -> u64 {
        self.submitted.saturating_sub(self.completed)
    }
}

/// Where a training run is, as the page names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Play is on and the page is in view: steps are being taken.
    Running,
    /// Play is on but the page is hidden: training holds and resumes when shown.
    Held,
    /// Paused, the GPU still finishing this many steps it was sent.
    Pausing {
        finishing: u64,
    },
    Paused,
}

/// Play/Pause, the hidden page, the rates and the run report after Pause.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lifecycle {
    pub playing: bool,
    /// The page is hidden: training holds (Play stays on) and resumes when shown, as a
    /// video would; a rate never spans the hidden time.
    pub hidden: bool,
    pub gpu_rate: Rate,
    pub cpu_rate: Rate,
    /// The last GPU rate measured (kept across Pause, which clears `gpu_rate`): it sizes the
    /// queue ([`in_flight_limit`]).
    last_gpu_rate: Option<f64>,
    /// Pause was pressed: `run-finished` goes out once the steps already sent have finished,
    /// so it carries the count the widget ends on.
    report_pending: bool,
}

impl Lifecycle {
    /// Starts or stops training; the rates start measuring afresh.
    pub fn set_playing(&mut self, playing: bool) {
        self.playing = playing;
        self.gpu_rate.clear();
        self.cpu_rate.clear();
    }

    /// The page was hidden or shown again (true if that changed); the rates start measuring
    /// afresh.
    pub fn set_hidden(&mut self, hidden: bool) -> bool {
        if self.hidden == hidden {
            return false;
        }
        self.hidden = hidden;
        self.gpu_rate.clear();
        self.cpu_rate.clear();
        true
    }

    /// Whether steps are being taken now: Play is on and the page is in view.
    pub fn running(&self) -> bool {
        self.playing && !self.hidden
    }

    /// Play pressed: Pause if playing (which ends a run: it is reported once the steps
    /// already sent have finished), else Play.
    pub fn toggle(&mut self) {
        let pausing = self.playing;
        self.set_playing(!self.playing);
        if pausing {
            self.report_pending = true;
        }
    }

    /// Whether the run Pause ended has now finished, with `in_flight` GPU steps still sent
    /// but not done (true once per Pause; never while training again).
    pub fn take_finished_run(&mut self, in_flight: u64) -> bool {
        if !self.report_pending || self.playing {
            self.report_pending = false;
            return false;
        }
        if in_flight > 0 {
            return false;
        }
        self.report_pending = false;
        true
    }

    /// A tick's GPU count, while running; it updates the rate that sizes the queue.
    pub fn record_gpu(&mut self, now: f64, completed: u64) {
        self.gpu_rate.record(now, completed);
        if let Some(v) = self.gpu_rate.per_second() {
            self.last_gpu_rate = Some(v);
        }
    }

    pub fn record_cpu(&mut self, now: f64, step: u64) {
        self.cpu_rate.record(now, step);
    }

    /// GPU steps that may be sent ahead now.
    pub fn in_flight_limit(&self) -> u64 {
        in_flight_limit(self.last_gpu_rate)
    }

    pub fn phase(&self, in_flight: u64) -> Phase {
        match (self.playing, self.hidden) {
            (true, false) => Phase::Running,
            (true, true) => Phase::Held,
            (false, _) if in_flight > 0 => Phase::Pausing {
                finishing: in_flight,
            },
            (false, _) => Phase::Paused,
        }
    }
}

/// What the status line shows and says in its attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    pub running: bool,
    pub gpu_state: &'static str,
    /// Completed GPU steps (None: no session).
    pub gpu_steps: Option<u64>,
    pub gpu_submitted: u64,
    pub gpu_in_flight: u64,
    /// How many steps may be in flight ([`Lifecycle::in_flight_limit`]; the page shows the
    /// one its last sending obeyed).
    pub gpu_queue_limit: u64,
    pub gpu_rate: Option<f64>,
    pub cpu_rate: Option<f64>,
    pub gpu_view: RateView,
    pub cpu_view: RateView,
}

/// The status line of a run: `gpu` is the session's counts (None without one).
pub fn status(life: &Lifecycle, gpu: Option<GpuSteps>, state: &GpuState) -> Status {
    let running = life.running();
    // Without a session there is no GPU rate: "measuring"/"paused" while it starts, else none.
    let gpu_view = match (gpu, state) {
        (Some(_), _) => rate_view(running, &life.gpu_rate),
        (None, GpuState::Starting) if life.playing => RateView::Measuring,
        (None, GpuState::Starting) => RateView::Paused,
        (None, _) => RateView::Off,
    };
    // After Pause the GPU still finishes what was sent: say so.
    let finishing = gpu.map_or(0, GpuSteps::in_flight);
    let gpu_view = match gpu_view {
        RateView::Paused if finishing > 0 => RateView::Finishing(finishing),
        v => v,
    };
    Status {
        running,
        gpu_state: state.code(),
        gpu_steps: gpu.map(|g| g.completed),
        gpu_submitted: gpu.map_or(0, |g| g.submitted),
        gpu_in_flight: finishing,
        gpu_queue_limit: life.in_flight_limit(),
        gpu_rate: gpu.and(life.gpu_rate.per_second()),
        cpu_rate: life.cpu_rate.per_second(),
        gpu_view,
        cpu_view: rate_view(running, &life.cpu_rate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_loss_that_is_not_a_number_is_divergence() {
        let s = |train: f32, test: f32| Sample {
            step: 9,
            train,
            test,
            test_acc: 0.5,
        };
        assert!(!s(0.7, 0.69).diverged());
        assert!(s(f32::NAN, 0.69).diverged());
        assert!(s(0.7, f32::INFINITY).diverged());
    }

    fn sample(step: u64, train: f32) -> Sample {
        Sample {
            step,
            train,
            test: train,
            test_acc: 0.5,
        }
    }

    #[test]
    fn a_slow_side_keeps_a_steady_rate() {
        // One step every 1.5 s, reported every 100 ms: a 2-s window would hold one step or
        // none and flicker; with at least MIN_WINDOW_STEPS steps it stays near 1/1.5 s.
        let mut r = Rate::default();
        let mut readings = Vec::new();
        for tick in 0..=300u64 {
            let t = tick as f64 * 100.0;
            r.record(t, tick / 15);
            if tick >= 90 {
                readings.push(r.per_second());
            }
        }
        // The window's ends fall anywhere within a step, so it holds k ≥ MIN_WINDOW_STEPS steps
        // in between (k − 1) and (k + 1) intervals: at most 1/(k − 1) off, relatively.
        let bound = (1.0 / 1.5) / (MIN_WINDOW_STEPS - 1) as f64;
        for v in readings {
            let v = v.expect("measured after six steps");
            assert!((v - 1.0 / 1.5).abs() <= bound, "{v}");
        }
    }

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
        // A side whose first step has not finished (a loaded GPU compiling its pipelines)
        // has no rate yet, however long the window.
        let mut first = Rate::default();
        first.record(0.0, 0);
        first.record(1500.0, 0);
        assert_eq!(rate_view(true, &first), RateView::Measuring);
        first.record(1800.0, 1);
        assert_eq!(
            rate_view(true, &first),
            RateView::PerSecond(1000.0 / 1800.0)
        );
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
        // The measured rate sizes the queue, and Pause (which clears the window) keeps it.
        let mut life = Lifecycle::default();
        life.set_playing(true);
        life.record_gpu(0.0, 0);
        life.record_gpu(1000.0, 40);
        assert_eq!(life.in_flight_limit(), 10);
        life.toggle();
        assert_eq!(life.gpu_rate.per_second(), None);
        assert_eq!(life.in_flight_limit(), 10);
    }

    #[test]
    fn pause_finishes_the_steps_sent_and_reports_once() {
        let mut life = Lifecycle::default();
        life.toggle();
        assert_eq!(life.phase(0), Phase::Running);
        life.set_hidden(true);
        assert_eq!(life.phase(0), Phase::Held);
        assert!(!life.running());
        assert!(!life.set_hidden(true), "no change");
        assert!(life.set_hidden(false));
        life.toggle();
        assert_eq!(life.phase(12), Phase::Pausing { finishing: 12 });
        assert!(!life.take_finished_run(12), "steps still finishing");
        assert!(!life.take_finished_run(3));
        assert_eq!(life.phase(0), Phase::Paused);
        assert!(life.take_finished_run(0));
        assert!(!life.take_finished_run(0), "once per Pause");
        // Play again before the report went out: training goes on, nothing is reported.
        life.toggle();
        life.toggle();
        life.toggle();
        assert!(!life.take_finished_run(0), "training again");
        life.toggle();
        assert!(life.take_finished_run(0), "the next Pause reports");
    }

    #[test]
    fn the_status_line_names_what_each_side_is_doing() {
        let mut life = Lifecycle::default();
        // Starting a session: "paused" until Play, then "measuring"; no GPU count.
        let s = status(&life, None, &GpuState::Starting);
        assert_eq!(
            (s.gpu_view, s.gpu_steps, s.gpu_state),
            (RateView::Paused, None, "starting")
        );
        life.set_playing(true);
        let s = status(&life, None, &GpuState::Starting);
        assert_eq!(s.gpu_view, RateView::Measuring);
        assert_eq!(
            status(&life, None, &GpuState::Unavailable).gpu_view,
            RateView::Off
        );
        assert_eq!(
            status(&life, None, &GpuState::Lost("gone".into())).gpu_state,
            "lost"
        );
        // Running with a session, then measured.
        let steps = GpuSteps {
            submitted: 30,
            completed: 20,
        };
        life.record_gpu(0.0, 0);
        life.record_gpu(1000.0, 20);
        life.record_cpu(0.0, 0);
        life.record_cpu(1000.0, 500);
        let s = status(&life, Some(steps), &GpuState::Ready);
        assert_eq!(s.gpu_view, RateView::PerSecond(20.0));
        assert_eq!(s.cpu_view, RateView::PerSecond(500.0));
        assert_eq!((s.gpu_rate, s.cpu_rate), (Some(20.0), Some(500.0)));
        assert_eq!(
            (s.gpu_steps, s.gpu_submitted, s.gpu_in_flight),
            (Some(20), 30, 10)
        );
        // A quarter second at 20 steps/s.
        assert_eq!(s.gpu_queue_limit, 5);
        assert!(s.running);
        // Paused with ten steps still finishing, then done.
        life.toggle();
        let s = status(&life, Some(steps), &GpuState::Ready);
        assert_eq!(s.gpu_view, RateView::Finishing(10));
        assert_eq!(s.cpu_view, RateView::Paused);
        assert!(!s.running);
        let done = GpuSteps {
            submitted: 30,
            completed: 30,
        };
        assert_eq!(
            status(&life, Some(done), &GpuState::Ready).gpu_view,
            RateView::Paused
        );
    }

    #[test]
    fn numbers_are_named_by_their_side() {
        let cpu = [sample(0, 0.7), sample(40, 0.5)];
        assert_eq!(
            latest(&[], &cpu).map(|(s, side)| (s.step, side)),
            Some((40, Side::Cpu))
        );
        let gpu = [sample(0, 0.7)];
        assert_eq!(
            latest(&gpu, &cpu).map(|(s, side)| (s.step, side)),
            Some((0, Side::Gpu))
        );
        assert_eq!(latest(&[], &[]), None);
        // One GPU point (the untrained network): the GPU's step sets the extent (at least 1).
        assert_eq!(loss_extent(&gpu, &cpu), (1, 0.7));
        let gpu = [sample(0, 0.9), sample(10, 0.6)];
        assert_eq!(loss_extent(&gpu, &cpu), (10, 0.9));
        assert_eq!(loss_extent(&[], &[]), (1, 0.0));
        assert_eq!(loss_extent(&[], &[sample(0, f32::NAN)]).1, 0.0);
    }

    #[test]
    fn long_curves_are_thinned_keeping_the_ends() {
        let mut h = Vec::new();
        push_sample(&mut h, sample(0, 1.0));
        push_sample(&mut h, sample(0, 2.0));
        assert_eq!(h.len(), 1, "one point per step");
        for step in 1..=MAX_HISTORY as u64 {
            push_sample(&mut h, sample(step, 1.0));
        }
        assert!(h.len() <= MAX_HISTORY);
        assert_eq!(h.first().map(|s| s.step), Some(0));
        assert_eq!(h.last().map(|s| s.step), Some(MAX_HISTORY as u64));
    }
}
