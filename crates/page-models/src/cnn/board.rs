//! The CNN page's state as a reducer: [`CnnPage`] changes only through [`CnnPage::reduce`].
//!
//! The app's training driver owns the GPU session (`gpu_runtime::cnn_training::CnnSession`)
//! and the tuned CPU trainer; it reads from the page what to do (run or not, how many GPU
//! steps it may have in flight, the network number to build, the learning rate, Step presses)
//! and hands back what happened as actions: each side's step counts, evaluations, a lost
//! device. Every such action carries the network number it belongs to, so a report from a
//! network the learner has replaced is ignored instead of drawn on the new one's curves.
//!
//! Pause is immediate for what the page controls: nothing more is sent, the CPU stops, the
//! rates stop measuring. Steps the GPU was already sent cannot be taken back: they are shown
//! as finishing, the GPU's count stops where they end, and only then does the run count as
//! finished (an embed's `run-finished`, [`run_report`]).

use ::cnn::spec::parse_lr;
use ::cnn::Spec;

use super::settings::{batch_param, change, Change};
use crate::embed::{Field, Report};
use crate::train::run::{in_flight_limit, GpuState, GpuSteps, Phase, Rate, RateView, Side};

/// Most points kept per curve (older ones are thinned).
pub const MAX_POINTS: usize = 300;
/// The article's claim: GPUs trained AlexNet "tens of times" faster than CPUs would have.
/// A measured ratio of at least this reproduces it here.
pub const CLAIM_RATIO: f64 = 10.0;

/// A loss and an accuracy over one split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    pub loss: f32,
    pub accuracy: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    Train,
    Test,
}

/// One step's point on a side's curves; a split not evaluated at that step is None.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub step: u64,
    pub train: Option<Score>,
    pub test: Option<Score>,
}

/// Adds `score` of `split` at `step` to a curve: into the last point if it is that step's
/// (train and test of one step arrive separately), else as a new point; an older step than
/// the last is a late report and is dropped. Past [`MAX_POINTS`] the curve is thinned: the
/// first point and every other one after it are kept, and the newest.
pub fn push_point(curve: &mut Vec<Point>, step: u64, split: Split, score: Score) {
    let set = |p: &mut Point| match split {
        Split::Train => p.train = Some(score),
        Split::Test => p.test = Some(score),
    };
    match curve.last_mut() {
        Some(last) if last.step == step => {
            set(last);
            return;
        }
        Some(last) if last.step > step => return,
        _ => {}
    }
    let mut p = Point {
        step,
        train: None,
        test: None,
    };
    set(&mut p);
    curve.push(p);
    if curve.len() > MAX_POINTS {
        thin(curve);
    }
}

/// Halves a curve: the first point and every other one after it, and the last, so the curve
/// still starts where training started and ends where it is now.
pub fn thin<T: Copy>(curve: &mut Vec<T>) {
    let Some(last) = curve.len().checked_sub(1) else {
        return;
    };
    let kept: Vec<T> = curve
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0 || *i == last)
        .map(|(_, p)| *p)
        .collect();
    *curve = kept;
}

/// What the charts span: every point of both sides' curves on one x axis, from step 0 to the
/// further side's last step (at least 1), and the largest finite loss on them (0 with none).
/// A side far ahead (the CPU takes thousands of steps while a software GPU takes a hundred)
/// shows how far ahead by where the other side's lines stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub max_step: u64,
    pub max_loss: f32,
    /// Each side's last evaluated step (None: no point yet).
    pub gpu_end: Option<u64>,
    pub cpu_end: Option<u64>,
}

/// Which side's lines go further, and by how many steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lead {
    /// Both end at the same step (or neither has a point).
    Even,
    /// Only this side has points.
    Alone(Side),
    /// `side` ends `by` steps past the other side's last step `behind_at`.
    Ahead { side: Side, by: u64, behind_at: u64 },
}

impl Lead {
    /// Its translation key (with `{ahead}`, `{behind}`, `{by}` for `Ahead`); None for `Even`.
    pub fn key(self) -> Option<&'static str> {
        match self {
            Lead::Even => None,
            Lead::Alone(Side::Cpu) => Some("cnn.chart.cpu_alone"),
            Lead::Alone(Side::Gpu) => Some("cnn.chart.gpu_alone"),
            Lead::Ahead {
                side: Side::Cpu, ..
            } => Some("cnn.chart.cpu_ahead"),
            Lead::Ahead {
                side: Side::Gpu, ..
            } => Some("cnn.chart.gpu_ahead"),
        }
    }
}

impl Span {
    pub fn lead(&self) -> Lead {
        match (self.gpu_end, self.cpu_end) {
            (Some(g), Some(c)) if c > g => Lead::Ahead {
                side: Side::Cpu,
                by: c - g,
                behind_at: g,
            },
            (Some(g), Some(c)) if g > c => Lead::Ahead {
                side: Side::Gpu,
                by: g - c,
                behind_at: c,
            },
            (Some(_), None) => Lead::Alone(Side::Gpu),
            (None, Some(_)) => Lead::Alone(Side::Cpu),
            _ => Lead::Even,
        }
    }
}

/// The charts' [`Span`] over both curves.
pub fn extent(c: &Curves) -> Span {
    let reached = |v: &[Point]| v.last().map(|p| p.step);
    let (gpu_end, cpu_end) = (reached(&c.gpu), reached(&c.cpu));
    let max_step = gpu_end.max(cpu_end).unwrap_or(1).max(1);
    let max_loss = c
        .gpu
        .iter()
        .chain(&c.cpu)
        .flat_map(|p| [p.train, p.test])
        .flatten()
        .map(|s| s.loss)
        .filter(|l| l.is_finite())
        .fold(0.0f32, f32::max);
    Span {
        max_step,
        max_loss,
        gpu_end,
        cpu_end,
    }
}

/// How many test scores at chance, over how many steps, make a stall ([`Curves::stalled`]).
pub const STALL_EVALS: usize = 4;
pub const STALL_STEPS: u64 = 40;
/// Within this of ln 10 (2.303), with at most this accuracy (chance is 10 %).
pub const STALL_BAND: f32 = 0.15;
pub const STALL_ACCURACY: f32 = 0.2;
/// A test loss this far below ln 10 is learning again (twice the band: not noise at chance).
pub const STALL_RECOVERED: f32 = 2.0 * STALL_BAND;

/// A collapse ([`Curves::collapsed`]): a side's best test accuracy was at least this…
pub const COLLAPSE_FROM: f32 = 0.5;
/// …and its latest one is below this share of that best.
pub const COLLAPSE_SHARE: f32 = 0.5;

/// A blown-up loss ([`Curves::collapsed`]): a side's latest test loss above this (twice ln 10,
/// the loss of a network that gives every digit the same probability, so it is more
/// confidently wrong than an even guess)…
pub const BLOWN_UP_LOSS: f32 = 2.0 * std::f32::consts::LN_10;
/// …and above this many times its lowest earlier test loss.
pub const BLOWN_UP_FACTOR: f32 = 2.0;

/// A side's network that had learned and then lost it: its best test score before the latest
/// (the best accuracy; the lowest loss when `by_loss`) and the latest, each with its step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collapse {
    pub side: Side,
    pub best: (u64, Score),
    pub now: (u64, Score),
    /// The loss blew up while accuracy had not (yet) fallen to half its best: the page says
    /// the loss rose, not that accuracy fell.
    pub by_loss: bool,
}

/// The last blow-up of a side's test losses ([`Curves::collapsed`]) that no later score has
/// recovered from: the lowest loss before it and the blown-up score, each with its step.
fn blown_up(tests: &[(u64, Score)]) -> Option<((u64, Score), (u64, Score))> {
    let recovered = std::f32::consts::LN_10 - STALL_RECOVERED;
    let k = (1..tests.len()).rev().find(|&k| {
        let lowest = tests[..k]
            .iter()
            .map(|t| t.1.loss)
            .fold(f32::INFINITY, f32::min);
        let loss = tests[k].1.loss;
        loss > BLOWN_UP_LOSS && loss > BLOWN_UP_FACTOR * lowest
    })?;
    if tests[k + 1..].iter().any(|t| t.1.loss < recovered) {
        return None;
    }
    let lowest = tests[..k]
        .iter()
        .copied()
        .reduce(|b, t| if t.1.loss < b.1.loss { t } else { b })?;
    Some((lowest, tests[k]))
}

/// Both sides' curves, each from its own evaluations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curves {
    pub gpu: Vec<Point>,
    pub cpu: Vec<Point>,
}

impl Curves {
    fn side_mut(&mut self, side: Side) -> &mut Vec<Point> {
        match side {
            Side::Gpu => &mut self.gpu,
            Side::Cpu => &mut self.cpu,
        }
    }

    /// The latest test score and the step and side it is from: the GPU's once it has one
    /// (it trains the network the page is about), else the CPU's, named as such.
    pub fn latest_test(&self) -> Option<(Side, u64, Score)> {
        let last = |c: &[Point]| c.iter().rev().find_map(|p| p.test.map(|s| (p.step, s)));
        last(&self.gpu)
            .map(|(step, s)| (Side::Gpu, step, s))
            .or_else(|| last(&self.cpu).map(|(step, s)| (Side::Cpu, step, s)))
    }

    /// Training has stalled at chance on some side: its last [`STALL_EVALS`] test scores,
    /// spanning at least [`STALL_STEPS`] steps, all have a loss within [`STALL_BAND`] of
    /// ln 10 (what a network scores that gives all ten digits the same probability) and an
    /// accuracy of at most [`STALL_ACCURACY`]. A learning rate far too high does this: after
    /// a few large steps the ReLUs never fire and the output no longer depends on the digit
    /// (Adam at 0.1–1 and SGD at 0.5–1 sat at 2.30–2.40 from step 40 to 120 on the default
    /// network; a network still learning falls through that band instead of staying in it).
    /// The steps it spans.
    pub fn stalled(&self) -> Option<u64> {
        [&self.gpu, &self.cpu].into_iter().find_map(|c| {
            let tests: Vec<(u64, Score)> = c
                .iter()
                .filter_map(|p| p.test.map(|s| (p.step, s)))
                .collect();
            let recent = tests.get(tests.len().checked_sub(STALL_EVALS)?..)?;
            let span = recent.last()?.0 - recent.first()?.0;
            let at_chance = |s: &Score| {
                (s.loss - std::f32::consts::LN_10).abs() <= STALL_BAND
                    && s.accuracy <= STALL_ACCURACY
            };
            (span >= STALL_STEPS && recent.iter().all(|(_, s)| at_chance(s))).then_some(span)
        })
    }

    /// Training diverged after it had learned, on some side (the GPU's first): its latest test
    /// accuracy is below [`COLLAPSE_SHARE`] of its best earlier one, which was at least
    /// [`COLLAPSE_FROM`]. A learning rate raised too far does this within a few steps (lr 1
    /// on a network at 91 % took it to 9 % in 16 s): each step jumps past the minimum it
    /// aims for and the loss climbs instead of falling. Seen at the first test score after
    /// the fall, so the page can say so at once instead of waiting for a stall at chance; a
    /// latest loss that is not a number is [`Curves::diverged`]'s, not this.
    /// The loss can blow up with accuracy not (yet) halved, or in a network that never
    /// learned (Adam at lr 1 from the start: 2.99 → 89 at its first step on the browser
    /// tests' network, then 2.6–2.9, outside the stall's band; SGD at lr 1 after 30 steps at
    /// 0.01, 40 %: 68, then 2.5–3.1): a test loss above [`BLOWN_UP_LOSS`] and
    /// [`BLOWN_UP_FACTOR`] × the side's lowest earlier one is said at that first score, and
    /// stays said (the loss falls back to around ln 10 at once) until a later test loss
    /// shows learning again ([`STALL_RECOVERED`] below ln 10), as a stall does.
    pub fn collapsed(&self) -> Option<Collapse> {
        [(Side::Gpu, &self.gpu), (Side::Cpu, &self.cpu)]
            .into_iter()
            .find_map(|(side, c)| {
                let tests: Vec<(u64, Score)> = c
                    .iter()
                    .filter_map(|p| p.test.map(|s| (p.step, s)))
                    .collect();
                let (&now, earlier) = tests.split_last()?;
                if !now.1.loss.is_finite() {
                    return None;
                }
                let best = earlier
                    .iter()
                    .copied()
                    .fold(None::<(u64, Score)>, |b, t| match b {
                        Some(b) if b.1.accuracy >= t.1.accuracy => Some(b),
                        _ => Some(t),
                    })?;
                if best.1.accuracy >= COLLAPSE_FROM
                    && now.1.accuracy < COLLAPSE_SHARE * best.1.accuracy
                {
                    return Some(Collapse {
                        side,
                        best,
                        now,
                        by_loss: false,
                    });
                }
                blown_up(&tests).map(|(best, now)| Collapse {
                    side,
                    best,
                    now,
                    by_loss: true,
                })
            })
    }

    /// The loss is no longer a number on some side: the weights overflowed and no later step
    /// can bring them back; the page says so instead of drawing nothing.
    pub fn diverged(&self) -> bool {
        self.gpu.iter().chain(&self.cpu).any(|p| {
            [p.train, p.test]
                .iter()
                .flatten()
                .any(|s| !s.loss.is_finite())
        })
    }
}

/// How the article's claim fares on this machine, from the measured GPU/CPU step ratio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// At least [`CLAIM_RATIO`]×: "tens of times" reproduced.
    Reproduced,
    /// Faster, but by less than the claim.
    Faster,
    /// Not faster (a small network or batch, a software adapter).
    NotFaster,
}

impl Claim {
    pub fn key(self) -> &'static str {
        match self {
            Claim::Reproduced => "cnn.claim.reproduced",
            Claim::Faster => "cnn.claim.faster",
            Claim::NotFaster => "cnn.claim.not_faster",
        }
    }
}

/// What the ratio line says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// No GPU trains: there is nothing to compare.
    NoGpu,
    /// A side has no rate yet (too few samples or too short a window): which ones.
    Measuring { gpu: bool, cpu: bool },
    /// GPU steps/s ÷ CPU steps/s, both measured at the page's batch.
    Ratio { ratio: f64, claim: Claim },
}

impl Verdict {
    pub fn key(&self) -> &'static str {
        match self {
            Verdict::NoGpu => "cnn.ratio.no_gpu",
            Verdict::Measuring { .. } => "cnn.ratio.measuring",
            Verdict::Ratio { claim, .. } => claim.key(),
        }
    }
}

/// The verdict of two rates (steps/s; None: not measured yet). A rate that is not a positive
/// finite number counts as not measured: a ratio of it would be a number nobody measured.
pub fn verdict(gpu_available: bool, gpu: Option<f64>, cpu: Option<f64>) -> Verdict {
    if !gpu_available {
        return Verdict::NoGpu;
    }
    let ok = |r: Option<f64>| r.filter(|v| v.is_finite() && *v > 0.0);
    match (ok(gpu), ok(cpu)) {
        (Some(g), Some(c)) => {
            let ratio = g / c;
            let claim = if ratio >= CLAIM_RATIO {
                Claim::Reproduced
            } else if ratio > 1.0 {
                Claim::Faster
            } else {
                Claim::NotFaster
            };
            Verdict::Ratio { ratio, claim }
        }
        (g, c) => Verdict::Measuring {
            gpu: g.is_none(),
            cpu: c.is_none(),
        },
    }
}

/// The caveats printed under the ratio (`cnn.caveat.*` keys): always that the CPU side is one
/// core of this machine and that the batch decides the ratio; a software adapter is a CPU
/// too; a small batch gives the GPU too little work per step to fill it.
pub fn caveats(spec: &Spec, software_adapter: bool) -> Vec<&'static str> {
    let mut out = vec!["cnn.caveat.one_core", "cnn.caveat.batch"];
    if spec.batch < 64 {
        out.push("cnn.caveat.small_batch");
    }
    if software_adapter {
        out.push("cnn.caveat.software");
    }
    out
}

/// Why the network was rebuilt while the learner was using it.
#[derive(Clone, Debug, PartialEq)]
pub struct Restart {
    /// `cnn.setting.*` keys of what changed.
    pub settings: Vec<&'static str>,
    /// The GPU's completed steps (None: its session had not started) and the CPU's: each
    /// side named with its own count.
    pub gpu_step: Option<u64>,
    pub cpu_step: u64,
    /// The last test score reached, its side and step (None: never evaluated).
    pub reached: Option<(Side, u64, Score)>,
}

/// Where a run ended, for the embed's `run-finished`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFinished {
    pub gpu_steps: Option<u64>,
    pub cpu_steps: u64,
    pub test: Option<(Side, u64, Score)>,
    pub ratio: Option<f64>,
}

/// `run-finished`'s results: the steps of each side, the test accuracy and loss with the
/// side and step they are from, the accuracy that completes the run, and the measured ratio;
/// what was not measured is left out.
pub fn run_report(r: &RunFinished) -> Report {
    let mut out: Report = Vec::new();
    if let Some(g) = r.gpu_steps {
        out.push(("gpuSteps", Field::Num(g as f64)));
    }
    out.push(("cpuSteps", Field::Num(r.cpu_steps as f64)));
    if let Some((side, step, s)) = r.test {
        out.push(("accuracy", Field::Num(f64::from(s.accuracy))));
        out.push(("loss", Field::Num(f64::from(s.loss))));
        out.push(("from", Field::Str(side.code().into())));
        out.push(("step", Field::Num(step as f64)));
    }
    out.push((
        "targetAccuracy",
        Field::Num(crate::outcome::TARGET_ACCURACY),
    ));
    if let Some(x) = r.ratio {
        out.push(("ratio", Field::Num(x)));
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
pub struct CnnPage {
    /// The settings the page runs (the URL's, through `settings::Settings`).
    pub spec: Spec,
    /// The learning-rate and batch fields' text, kept as typed (only valid values reach the
    /// URL, and a render never snaps a field back while typing).
    pub lr_text: String,
    pub batch_text: String,
    /// The network's number: a new one on every restart and Reset. The driver builds a new
    /// session and trainer when it changes; reports carry it.
    pub network: u64,
    pub playing: bool,
    /// The page is hidden: training holds (Play stays on) and resumes when shown.
    pub hidden: bool,
    pub gpu_state: GpuState,
    /// A software adapter (SwiftShader, lavapipe): a caveat of the ratio.
    pub software_adapter: bool,
    /// This network's GPU steps sent and done (zero until its session runs).
    pub gpu: GpuSteps,
    /// Whether this network's GPU session has reported (else the GPU count is shown as none).
    pub gpu_started: bool,
    pub cpu_steps: u64,
    gpu_rate: Rate,
    cpu_rate: Rate,
    /// The last GPU rate measured (kept across Pause): it sizes the queue.
    last_gpu_rate: Option<f64>,
    /// The last pair of rates measured together (kept across Pause, so the ratio stays).
    last_pair: (Option<f64>, Option<f64>),
    pub curves: Curves,
    pub restarted: Option<Restart>,
    /// The learner left the page and came back: the network was kept (the GPU's and the
    /// CPU's steps when they left). Cleared by the next press and by a new network.
    pub returned: Option<(Option<u64>, u64)>,
    /// This network stalled at chance ([`Curves::stalled`], the steps it spanned): said until
    /// a test loss shows it learning again (below ln 10 − [`STALL_RECOVERED`]) or a new
    /// network, so one noisy score at 2.46 does not take the note away and bring it back.
    pub stalled: Option<u64>,
    /// Step presses: each asks the driver for one step on each side (while paused).
    pub step_presses: u64,
    /// Pause ended a run: it is reported once the steps already sent have finished.
    report_pending: bool,
    /// Pause was pressed and no driver tick that saw it has reported the counts yet: until
    /// one has, the counts shown may miss steps sent just before it (they are reported a few
    /// times a second), so the page says Pausing, not Paused.
    counts_after_pause: bool,
    /// The finished run to report (the component sends it and answers `ReportSent`).
    pub finished: Option<RunFinished>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Play,
    Pause,
    /// One step on each side, while paused.
    Step,
    /// A fresh network of the same settings; recovers a lost device.
    Reset,
    Hidden(bool),
    TypeLr(String),
    TypeBatch(String),
    /// The URL's settings changed (a control, a link, Back, `setParams`).
    SettingsChanged(Spec),
    /// This network's GPU session is ready on an adapter (software or not).
    GpuReady {
        network: u64,
        software: bool,
    },
    /// No WebGPU here: the CPU trains alone.
    GpuUnavailable,
    /// This network's session could not be made or failed (in words).
    GpuFailed {
        network: u64,
        error: String,
    },
    /// The GPU session's counts at `now_ms`.
    GpuSteps {
        network: u64,
        submitted: u64,
        completed: u64,
        now_ms: f64,
    },
    /// The CPU trainer's step at `now_ms`, reported by a driver tick that saw the page
    /// `running` or not (a tick that saw it paused sends no more steps on either side).
    CpuSteps {
        network: u64,
        step: u64,
        now_ms: f64,
        running: bool,
    },
    /// An evaluation of `side`'s network after `step` steps.
    Evaluated {
        network: u64,
        side: Side,
        step: u64,
        split: Split,
        score: Score,
    },
    /// The device was lost (its message); Reset asks for a new one.
    DeviceLost(String),
    /// The run report was sent.
    ReportSent,
}

impl CnnPage {
    pub fn new(spec: Spec) -> Self {
        Self {
            lr_text: spec.lr.to_string(),
            batch_text: spec.batch.to_string(),
            spec,
            network: 0,
            playing: false,
            hidden: false,
            gpu_state: GpuState::Starting,
            software_adapter: false,
            gpu: GpuSteps::default(),
            gpu_started: false,
            cpu_steps: 0,
            gpu_rate: Rate::default(),
            cpu_rate: Rate::default(),
            last_gpu_rate: None,
            last_pair: (None, None),
            curves: Curves::default(),
            restarted: None,
            returned: None,
            stalled: None,
            step_presses: 0,
            report_pending: false,
            counts_after_pause: false,
            finished: None,
        }
    }

    /// Steps are being taken: Play is on and the page is in view.
    pub fn running(&self) -> bool {
        self.playing && !self.hidden
    }

    /// Whether a GPU session can train now.
    pub fn gpu_live(&self) -> bool {
        matches!(self.gpu_state, GpuState::Starting | GpuState::Ready)
    }

    /// GPU steps the driver may send now: up to the queue's limit while running, none
    /// otherwise (Pause sends nothing more).
    pub fn gpu_allowance(&self) -> u64 {
        self.gpu_allowance_with(self.gpu)
    }

    /// [`CnnPage::gpu_allowance`] with the session's own counts, newer than the page's (the
    /// driver reports counts a few times a second, but sends steps every tick).
    pub fn gpu_allowance_with(&self, live: GpuSteps) -> u64 {
        if !self.running() || self.gpu_state != GpuState::Ready {
            return 0;
        }
        in_flight_limit(self.last_gpu_rate).saturating_sub(live.in_flight())
    }

    pub fn phase(&self) -> Phase {
        match (self.playing, self.hidden) {
            (true, false) => Phase::Running,
            (true, true) => Phase::Held,
            (false, _) if self.gpu.in_flight() > 0 || self.counts_after_pause => Phase::Pausing {
                finishing: self.gpu.in_flight(),
            },
            (false, _) => Phase::Paused,
        }
    }

    /// The GPU's completed steps (None: no session of this network has reported).
    pub fn gpu_steps(&self) -> Option<u64> {
        self.gpu_started.then_some(self.gpu.completed)
    }

    pub fn gpu_rate(&self) -> Option<f64> {
        self.gpu_rate.per_second()
    }

    pub fn cpu_rate(&self) -> Option<f64> {
        self.cpu_rate.per_second()
    }

    /// What the GPU's rate shows: off without a GPU, the steps still finishing after Pause.
    pub fn gpu_view(&self) -> RateView {
        if !self.gpu_live() {
            return RateView::Off;
        }
        match (self.running(), self.gpu_rate()) {
            (false, _) if self.gpu.in_flight() > 0 => RateView::Finishing(self.gpu.in_flight()),
            (false, _) => RateView::Paused,
            (true, None) => RateView::Measuring,
            (true, Some(v)) => RateView::PerSecond(v),
        }
    }

    pub fn cpu_view(&self) -> RateView {
        match (self.running(), self.cpu_rate()) {
            (false, _) => RateView::Paused,
            (true, None) => RateView::Measuring,
            (true, Some(v)) => RateView::PerSecond(v),
        }
    }

    /// The ratio line: the rates measured now, or while paused the last pair measured.
    pub fn verdict(&self) -> Verdict {
        let (g, c) = if self.running() {
            (self.gpu_rate(), self.cpu_rate())
        } else {
            self.last_pair
        };
        verdict(self.gpu_live(), g, c)
    }

    pub fn lr_error(&self) -> Option<::cnn::SpecError> {
        parse_lr(&self.lr_text).err()
    }

    /// What is wrong with the batch field's text, given the largest batch this device holds
    /// (`settings::largest_batch`).
    pub fn batch_error(&self, max: usize) -> Option<::cnn::SpecError> {
        batch_param(&self.batch_text, max).err()
    }

    fn clear_rates(&mut self) {
        self.gpu_rate.clear();
        self.cpu_rate.clear();
    }

    /// A new network: counts, curves, rates and any pending report start afresh; a session
    /// that can be rebuilt is (a lost device stays lost until Reset, no WebGPU stays none).
    fn new_network(&mut self) {
        self.network = self.network.wrapping_add(1);
        self.returned = None;
        self.stalled = None;
        self.gpu = GpuSteps::default();
        self.gpu_started = false;
        self.cpu_steps = 0;
        self.curves = Curves::default();
        self.clear_rates();
        self.last_pair = (None, None);
        self.report_pending = false;
        self.finished = None;
        if matches!(self.gpu_state, GpuState::Ready | GpuState::Failed(_)) {
            self.gpu_state = GpuState::Starting;
        }
    }

    /// The latest test score and its side and step: the GPU's while it trains (and has one),
    /// else the CPU's, so a lost GPU's early score never stands for the run.
    pub fn latest_test(&self) -> Option<(Side, u64, Score)> {
        if self.gpu_live() {
            self.curves.latest_test()
        } else {
            let cpu = Curves {
                gpu: Vec::new(),
                cpu: self.curves.cpu.clone(),
            };
            cpu.latest_test()
        }
    }

    /// How far this network's training got, as an embed's `getState` carries it in `work`:
    /// `training` (`playing` or `paused`), then the fields of `run-finished` without the
    /// ratio (each side's steps, the latest test score with its side and step, the target).
    pub fn work(&self) -> Report {
        let mut out = run_report(&RunFinished {
            gpu_steps: self.gpu_steps(),
            cpu_steps: self.cpu_steps,
            test: self.latest_test(),
            ratio: None,
        });
        let training = if self.playing { "playing" } else { "paused" };
        out.insert(0, ("training", Field::Str(training.into())));
        out
    }

    /// Whether the side the report's score comes from has been evaluated where it stopped
    /// (the driver evaluates each side once more after Pause).
    fn evaluated_where_stopped(&self) -> bool {
        let last = |c: &[Point]| c.iter().rev().find_map(|p| p.test.map(|_| p.step));
        if self.gpu_live() && self.gpu_started {
            last(&self.curves.gpu) == Some(self.gpu.completed)
        } else {
            last(&self.curves.cpu) == Some(self.cpu_steps)
        }
    }

    /// Once Pause's steps have finished (or the GPU can finish none) and the side it reports
    /// has been evaluated at its last step, the run is reported.
    fn settle_report(&mut self) {
        let waiting = self.counts_after_pause || (self.gpu_live() && self.gpu.in_flight() > 0);
        if !self.report_pending || self.playing || waiting || !self.evaluated_where_stopped() {
            return;
        }
        self.report_pending = false;
        let ratio = match verdict(self.gpu_live(), self.last_pair.0, self.last_pair.1) {
            Verdict::Ratio { ratio, .. } => Some(ratio),
            _ => None,
        };
        self.finished = Some(RunFinished {
            gpu_steps: self.gpu_steps(),
            cpu_steps: self.cpu_steps,
            test: self.latest_test(),
            ratio,
        });
    }

    /// Keeps the rates once both are measured in the same window of running, so the ratio
    /// shown after Pause never pairs one run's GPU rate with another's CPU rate.
    fn remember_pair(&mut self) {
        if let (Some(g), Some(c)) = (self.gpu_rate(), self.cpu_rate()) {
            self.last_pair = (Some(g), Some(c));
        }
    }

    /// After a test score: a stall is noted once seen, and forgotten once a score shows the
    /// network learning again.
    fn note_stall(&mut self, score: Score) {
        if score.loss < std::f32::consts::LN_10 - STALL_RECOVERED {
            self.stalled = None;
        } else if let Some(span) = self.curves.stalled() {
            self.stalled = Some(self.stalled.map_or(span, |s| s.max(span)));
        }
    }

    /// The page as kept when the learner leaves it: training holds as for a hidden tab (and
    /// resumes when the page is shown again), and the page will say it was kept.
    pub fn left(&self) -> Self {
        let mut next = self.reduce(Action::Hidden(true));
        next.returned = Some((next.gpu_steps(), next.cpu_steps));
        next
    }

    /// Whether leaving now would lose anything worth keeping.
    pub fn worth_keeping(&self) -> bool {
        self.gpu.submitted > 0 || self.cpu_steps > 0 || self.playing
    }

    /// The page after `action`.
    pub fn reduce(&self, action: Action) -> Self {
        let mut next = self.clone();
        if matches!(action, Action::Play | Action::Pause | Action::Step) {
            next.returned = None;
        }
        match action {
            Action::Play => {
                if !next.playing {
                    next.playing = true;
                    next.report_pending = false;
                    next.counts_after_pause = false;
                    next.clear_rates();
                }
            }
            Action::Pause => {
                if next.playing {
                    next.playing = false;
                    next.report_pending = true;
                    next.counts_after_pause = true;
                    next.clear_rates();
                    next.settle_report();
                }
            }
            Action::Step => {
                if !next.playing {
                    next.step_presses = next.step_presses.wrapping_add(1);
                }
            }
            Action::Reset => {
                if matches!(next.gpu_state, GpuState::Lost(_)) {
                    next.gpu_state = GpuState::Starting;
                }
                next.new_network();
                next.playing = false;
                next.restarted = None;
            }
            Action::Hidden(h) => {
                if next.hidden != h {
                    next.hidden = h;
                    next.clear_rates();
                }
            }
            Action::TypeLr(t) => next.lr_text = t,
            Action::TypeBatch(t) => next.batch_text = t,
            Action::SettingsChanged(spec) => {
                if parse_lr(&next.lr_text).ok() != Some(spec.lr) {
                    next.lr_text = spec.lr.to_string();
                }
                if next.batch_text.trim().parse::<usize>().ok() != Some(spec.batch) {
                    next.batch_text = spec.batch.to_string();
                }
                match change(&next.spec, &spec) {
                    Change::None => {}
                    Change::Live { .. } => next.spec = spec,
                    Change::Restart(settings) => {
                        let stepped = next.gpu.completed > 0 || next.cpu_steps > 0;
                        if stepped || next.playing {
                            next.restarted = Some(Restart {
                                settings,
                                gpu_step: next.gpu_steps(),
                                cpu_step: next.cpu_steps,
                                reached: next.latest_test(),
                            });
                        } else if let Some(r) = next.restarted.as_mut() {
                            // Nothing new was lost, but the notice still on screen must name
                            // every setting now different from the network it describes.
                            for k in settings {
                                if !r.settings.contains(&k) {
                                    r.settings.push(k);
                                }
                            }
                        }
                        next.spec = spec;
                        next.new_network();
                    }
                }
            }
            Action::GpuReady { network, software } => {
                if network == next.network && next.gpu_state == GpuState::Starting {
                    next.gpu_state = GpuState::Ready;
                    next.software_adapter = software;
                }
            }
            Action::GpuUnavailable => {
                next.gpu_state = GpuState::Unavailable;
                next.settle_report();
            }
            Action::GpuFailed { network, error } => {
                if network == next.network {
                    next.gpu_state = GpuState::Failed(error);
                    next.settle_report();
                }
            }
            Action::GpuSteps {
                network,
                submitted,
                completed,
                now_ms,
            } => {
                if network == next.network && next.gpu_live() {
                    next.gpu = GpuSteps {
                        submitted,
                        completed: completed.min(submitted),
                    };
                    next.gpu_started = true;
                    if next.running() {
                        next.gpu_rate.record(now_ms, completed);
                        if let Some(v) = next.gpu_rate.per_second() {
                            next.last_gpu_rate = Some(v);
                        }
                        next.remember_pair();
                    }
                    next.settle_report();
                }
            }
            Action::CpuSteps {
                network,
                step,
                now_ms,
                running,
            } => {
                if network == next.network {
                    next.cpu_steps = step;
                    if !running {
                        next.counts_after_pause = false;
                    }
                    if next.running() {
                        next.cpu_rate.record(now_ms, step);
                        next.remember_pair();
                    }
                    next.settle_report();
                }
            }
            Action::Evaluated {
                network,
                side,
                step,
                split,
                score,
            } => {
                if network == next.network {
                    push_point(next.curves.side_mut(side), step, split, score);
                    next.settle_report();
                    if split == Split::Test {
                        next.note_stall(score);
                    }
                }
            }
            Action::DeviceLost(message) => {
                next.gpu_state = GpuState::Lost(message);
                // Its queued steps will never finish: nothing is shown as finishing.
                next.gpu.submitted = next.gpu.completed;
                next.gpu_rate.clear();
                next.settle_report();
            }
            Action::ReportSent => next.finished = None,
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(loss: f32, accuracy: f32) -> Score {
        Score { loss, accuracy }
    }

    #[test]
    fn leaving_keeps_the_network_held_and_coming_back_resumes_it() {
        let p = gpu(&ready().reduce(Action::Play), 5, 3, 100.0).reduce(Action::CpuSteps {
            network: 0,
            step: 7,
            now_ms: 100.0,
            running: true,
        });
        assert!(p.worth_keeping());
        assert!(!CnnPage::new(Spec::default()).worth_keeping());
        let kept = p.left();
        assert_eq!(kept.phase(), Phase::Held);
        assert_eq!(kept.returned, Some((Some(3), 7)));
        assert_eq!((kept.network, kept.cpu_steps), (p.network, 7));
        let back = kept.reduce(Action::Hidden(false));
        assert_eq!(back.phase(), Phase::Running);
        assert_eq!(
            back.returned,
            Some((Some(3), 7)),
            "said until the next press"
        );
        assert_eq!(back.reduce(Action::Pause).returned, None);
        assert_eq!(back.reduce(Action::Reset).returned, None);
    }

    #[test]
    fn a_stall_is_said_until_the_network_learns_again_or_restarts() {
        let eval = |p: &CnnPage, step: u64, loss: f32, acc: f32| {
            p.reduce(Action::Evaluated {
                network: p.network,
                side: Side::Cpu,
                step,
                split: Split::Test,
                score: score(loss, acc),
            })
        };
        let mut p = ready();
        for (step, loss) in [(0, 2.87), (20, 2.36), (40, 2.37), (60, 2.38), (80, 2.40)] {
            p = eval(&p, step, loss, 0.1);
        }
        assert_eq!(p.stalled, Some(60));
        // One noisy score out of the band keeps the note; a learning one ends it.
        let noisy = eval(&p, 100, 2.46, 0.1);
        assert_eq!(noisy.stalled, Some(60));
        assert_eq!(eval(&noisy, 120, 1.9, 0.4).stalled, None);
        assert_eq!(p.reduce(Action::Reset).stalled, None);
    }

    #[test]
    fn a_network_at_chance_for_long_enough_has_stalled_and_a_learning_one_has_not() {
        let curve = |points: &[(u64, f32, f32)]| {
            let mut c = Curves::default();
            for &(step, loss, acc) in points {
                push_point(&mut c.cpu, step, Split::Test, score(loss, acc));
            }
            c
        };
        // Adam at lr 1 on the default network (the probe behind `stalled`'s numbers).
        let high = [
            (0, 2.87, 0.09),
            (20, 2.52, 0.11),
            (40, 2.36, 0.12),
            (60, 2.37, 0.11),
        ];
        let more = [high.as_slice(), &[(80, 2.38, 0.08)]].concat();
        assert_eq!(
            curve(&more).stalled(),
            None,
            "three at chance are not yet four"
        );
        let more = [more.as_slice(), &[(100, 2.40, 0.12)]].concat();
        assert_eq!(curve(&more).stalled(), Some(60));
        // Four at chance within too few steps, and a slow learner falling through the band.
        let brief = [
            (10, 2.30, 0.1),
            (20, 2.31, 0.1),
            (30, 2.29, 0.1),
            (40, 2.30, 0.1),
        ];
        assert_eq!(curve(&brief).stalled(), None);
        let slow = [
            (0, 2.87, 0.09),
            (40, 2.42, 0.15),
            (80, 2.30, 0.19),
            (120, 2.19, 0.25),
        ];
        assert_eq!(curve(&slow).stalled(), None);
        // Learning but still near chance accuracy-wise is not a stall, nor is a good network.
        let fine = [
            (0, 2.87, 0.09),
            (20, 1.97, 0.34),
            (40, 1.38, 0.67),
            (60, 0.89, 0.76),
        ];
        assert_eq!(curve(&fine).stalled(), None);
        let mut gpu = curve(&more);
        std::mem::swap(&mut gpu.gpu, &mut gpu.cpu);
        assert_eq!(gpu.stalled(), Some(60), "either side");
    }

    fn ready() -> CnnPage {
        CnnPage::new(Spec::default()).reduce(Action::GpuReady {
            network: 0,
            software: false,
        })
    }

    fn gpu(p: &CnnPage, submitted: u64, completed: u64, now_ms: f64) -> CnnPage {
        p.reduce(Action::GpuSteps {
            network: p.network,
            submitted,
            completed,
            now_ms,
        })
    }

    fn cpu(p: &CnnPage, step: u64, now_ms: f64) -> CnnPage {
        p.reduce(Action::CpuSteps {
            network: p.network,
            step,
            now_ms,
            running: p.running(),
        })
    }

    #[test]
    fn a_curve_merges_a_step_s_splits_and_thins_keeping_first_and_last() {
        let mut c = Vec::new();
        push_point(&mut c, 0, Split::Test, score(2.3, 0.1));
        push_point(&mut c, 0, Split::Train, score(2.2, 0.12));
        assert_eq!(
            c,
            vec![Point {
                step: 0,
                train: Some(score(2.2, 0.12)),
                test: Some(score(2.3, 0.1)),
            }]
        );
        push_point(&mut c, 10, Split::Test, score(1.0, 0.7));
        push_point(&mut c, 5, Split::Test, score(9.0, 0.0));
        assert_eq!(c.len(), 2, "a late report of an older step is dropped");
        // 301 points: thinned to the even indices 0, 2, …, 300 (151 of them), ends kept.
        let mut c = Vec::new();
        for step in 0..=MAX_POINTS as u64 {
            push_point(&mut c, step, Split::Test, score(1.0, 0.5));
        }
        assert_eq!(c.len(), 151);
        assert_eq!(c.first().map(|p| p.step), Some(0));
        assert_eq!(c.last().map(|p| p.step), Some(MAX_POINTS as u64));
        assert_eq!(c[1].step, 2);
        // An odd count keeps the last by parity, an even one by the rule: 0 1 2 3 → 0 2 3.
        let mut v = vec![0, 1, 2, 3];
        thin(&mut v);
        assert_eq!(v, vec![0, 2, 3]);
        let mut v = vec![0, 1, 2, 3, 4];
        thin(&mut v);
        assert_eq!(v, vec![0, 2, 4]);
        let mut v: Vec<u8> = Vec::new();
        thin(&mut v);
        assert!(v.is_empty());
        // 300 points exactly: none thinned.
        let mut c = Vec::new();
        for step in 0..MAX_POINTS as u64 {
            push_point(&mut c, step, Split::Train, score(1.0, 0.5));
        }
        assert_eq!(c.len(), MAX_POINTS);
    }

    #[test]
    fn the_ratio_is_measuring_until_both_sides_have_a_rate() {
        assert_eq!(verdict(false, Some(100.0), Some(1.0)), Verdict::NoGpu);
        assert_eq!(
            verdict(true, None, Some(5.0)),
            Verdict::Measuring {
                gpu: true,
                cpu: false
            }
        );
        assert_eq!(
            verdict(true, Some(f64::NAN), Some(0.0)),
            Verdict::Measuring {
                gpu: true,
                cpu: true
            }
        );
        assert_eq!(
            verdict(true, Some(200.0), Some(10.0)),
            Verdict::Ratio {
                ratio: 20.0,
                claim: Claim::Reproduced
            }
        );
        assert_eq!(
            verdict(true, Some(100.0), Some(10.0)).key(),
            "cnn.claim.reproduced",
            "exactly 10× reproduces it"
        );
        assert_eq!(
            verdict(true, Some(30.0), Some(10.0)).key(),
            "cnn.claim.faster"
        );
        assert_eq!(
            verdict(true, Some(10.0), Some(10.0)).key(),
            "cnn.claim.not_faster"
        );
        // One sample per side: no window, so no rate, so "measuring".
        let p = ready().reduce(Action::Play);
        let p = cpu(&gpu(&p, 2, 0, 0.0), 0, 0.0);
        assert_eq!(
            p.verdict(),
            Verdict::Measuring {
                gpu: true,
                cpu: true
            }
        );
        assert_eq!(p.verdict().key(), "cnn.ratio.measuring");
    }

    #[test]
    fn caveats_follow_the_batch_and_the_adapter() {
        let s = Spec::default();
        assert_eq!(
            caveats(&s, false),
            vec!["cnn.caveat.one_core", "cnn.caveat.batch"]
        );
        let small = Spec { batch: 8, ..s };
        assert_eq!(
            caveats(&small, true),
            vec![
                "cnn.caveat.one_core",
                "cnn.caveat.batch",
                "cnn.caveat.small_batch",
                "cnn.caveat.software"
            ]
        );
    }

    #[test]
    fn both_rates_are_measured_side_by_side_and_their_ratio_stays_after_pause() {
        let mut p = ready().reduce(Action::Play);
        assert_eq!(
            (p.gpu_view(), p.cpu_view()),
            (RateView::Measuring, RateView::Measuring)
        );
        p = gpu(&p, 2, 0, 0.0);
        p = cpu(&p, 0, 0.0);
        p = gpu(&p, 400, 390, 1000.0);
        p = cpu(&p, 13, 1000.0);
        assert_eq!(p.gpu_view(), RateView::PerSecond(390.0));
        assert_eq!(p.cpu_view(), RateView::PerSecond(13.0));
        assert_eq!(
            p.verdict(),
            Verdict::Ratio {
                ratio: 30.0,
                claim: Claim::Reproduced
            }
        );
        let paused = p.reduce(Action::Pause);
        assert_eq!(paused.cpu_view(), RateView::Paused);
        assert_eq!(paused.verdict(), p.verdict(), "the measured pair is kept");
        // Play again: the rates measure afresh (no window spans the paused time).
        let again = paused.reduce(Action::Play);
        assert_eq!(again.gpu_view(), RateView::Measuring);
        // Once the ten steps in flight finish and the GPU is evaluated where it stopped, the
        // report carries the measured ratio.
        let done = cpu(&gpu(&paused, 400, 400, 1100.0), 13, 1100.0);
        assert_eq!(done.finished, None, "not before the last evaluation");
        let done = done.reduce(Action::Evaluated {
            network: 0,
            side: Side::Gpu,
            step: 400,
            split: Split::Test,
            score: score(0.2, 0.95),
        });
        let r = run_report(done.finished.as_ref().expect("reported"));
        assert!(r.contains(&("ratio", Field::Num(30.0))));
        assert!(r.contains(&("cpuSteps", Field::Num(13.0))));
        assert!(r.contains(&("step", Field::Num(400.0))));
    }

    #[test]
    fn pause_shows_the_sent_steps_finishing_and_reports_when_they_are_done() {
        let mut p = ready().reduce(Action::Play);
        p = gpu(&p, 20, 12, 0.0);
        p = cpu(&p, 3, 0.0);
        p = p.reduce(Action::Evaluated {
            network: 0,
            side: Side::Gpu,
            step: 10,
            split: Split::Test,
            score: score(0.3, 0.91),
        });
        p = p.reduce(Action::Pause);
        assert_eq!(p.phase(), Phase::Pausing { finishing: 8 });
        assert_eq!(p.gpu_view(), RateView::Finishing(8));
        assert_eq!(p.gpu_allowance(), 0, "Pause sends nothing more");
        assert_eq!(p.finished, None, "not until the sent steps are done");
        p = gpu(&p, 20, 16, 50.0);
        assert_eq!(p.gpu_view(), RateView::Finishing(4));
        p = gpu(&p, 20, 20, 90.0);
        // The counts may still lag the driver (reported a few times a second while running):
        // Paused only once a tick that saw the Pause has reported, its CPU count last.
        assert_eq!(p.phase(), Phase::Pausing { finishing: 0 });
        assert_eq!(p.finished, None, "not before the final counts");
        p = cpu(&p, 3, 90.0);
        assert_eq!(p.phase(), Phase::Paused);
        assert_eq!(p.gpu_steps(), Some(20), "the count stops at what was sent");
        // The score of step 10 would be stale: the report waits for step 20's evaluation.
        assert_eq!(
            p.finished, None,
            "not before the GPU is evaluated where it stopped"
        );
        p = p.reduce(Action::Evaluated {
            network: 0,
            side: Side::Gpu,
            step: 20,
            split: Split::Test,
            score: score(0.25, 0.93),
        });
        let done = p.finished.clone().expect("reported once done");
        assert_eq!(done.gpu_steps, Some(20));
        assert_eq!(done.cpu_steps, 3);
        assert_eq!(done.test, Some((Side::Gpu, 20, score(0.25, 0.93))));
        let r = run_report(&done);
        assert_eq!(r[0], ("gpuSteps", Field::Num(20.0)));
        assert!(r.contains(&("accuracy", Field::Num(f64::from(0.93f32)))));
        assert!(r.contains(&("from", Field::Str("gpu".into()))));
        assert!(!r.iter().any(|(k, _)| *k == "ratio"), "never measured");
        let p = p.reduce(Action::ReportSent);
        assert_eq!(p.finished, None);
        // A later count does not report again; Play then Pause with nothing in flight does.
        assert_eq!(gpu(&p, 20, 20, 99.0).finished, None);
        let p = p.reduce(Action::Play).reduce(Action::Pause);
        assert!(
            p.finished.is_none(),
            "not before a tick that saw the Pause reports"
        );
        assert!(cpu(&p, 3, 100.0).finished.is_some());
    }

    #[test]
    fn the_queue_and_step_follow_play_and_pause() {
        let p = CnnPage::new(Spec::default());
        assert_eq!(p.gpu_allowance(), 0, "no session yet");
        let p = ready();
        assert_eq!(p.gpu_allowance(), 0, "paused");
        assert_eq!(p.reduce(Action::Step).step_presses, 1);
        let p = p.reduce(Action::Play);
        assert_eq!(p.gpu_allowance(), 2, "the minimum until a rate is known");
        assert_eq!(gpu(&p, 2, 0, 0.0).gpu_allowance(), 0);
        assert_eq!(
            p.reduce(Action::Step).step_presses,
            0,
            "Step only while paused"
        );
        let held = p.reduce(Action::Hidden(true));
        assert_eq!((held.phase(), held.gpu_allowance()), (Phase::Held, 0));
        assert_eq!(held.reduce(Action::Hidden(false)).phase(), Phase::Running);
    }

    #[test]
    fn the_learning_rate_applies_live_and_other_settings_restart_saying_so() {
        let mut p = ready().reduce(Action::Play);
        p = gpu(&p, 60, 50, 0.0);
        p = cpu(&p, 4, 0.0);
        p = p.reduce(Action::Evaluated {
            network: 0,
            side: Side::Cpu,
            step: 4,
            split: Split::Test,
            score: score(1.5, 0.6),
        });
        let lr = Spec {
            lr: 0.01,
            ..p.spec.clone()
        };
        let live = p.reduce(Action::SettingsChanged(lr));
        assert_eq!((live.network, live.spec.lr), (0, 0.01));
        assert_eq!(live.lr_text, "0.01");
        assert_eq!(live.gpu_steps(), Some(50), "nothing restarted");
        assert_eq!(live.restarted, None);
        let batch = Spec {
            batch: 32,
            ..p.spec.clone()
        };
        let r = p.reduce(Action::SettingsChanged(batch));
        assert_eq!(r.network, 1);
        assert!(r.playing, "a restart keeps playing");
        assert_eq!(r.gpu_state, GpuState::Starting, "a new session");
        assert_eq!((r.gpu_steps(), r.cpu_steps), (None, 0));
        assert!(r.curves.gpu.is_empty() && r.curves.cpu.is_empty());
        assert_eq!(r.batch_text, "32");
        assert_eq!(
            r.restarted,
            Some(Restart {
                settings: vec!["cnn.setting.batch"],
                gpu_step: Some(50),
                cpu_step: 4,
                reached: Some((Side::Cpu, 4, score(1.5, 0.6))),
            })
        );
        // Reports of the old network are ignored.
        let stale = r.reduce(Action::GpuSteps {
            network: 0,
            submitted: 70,
            completed: 70,
            now_ms: 10.0,
        });
        assert_eq!(stale.gpu_steps(), None);
        let stale = r.reduce(Action::Evaluated {
            network: 0,
            side: Side::Gpu,
            step: 70,
            split: Split::Test,
            score: score(0.1, 0.99),
        });
        assert!(stale.curves.gpu.is_empty());
        // Another change while paused before a step keeps the notice, naming both.
        let r2 = r
            .reduce(Action::Pause)
            .reduce(Action::SettingsChanged(Spec {
                batch: 32,
                seed: 5,
                ..p.spec.clone()
            }));
        assert_eq!(r2.network, 2);
        assert_eq!(
            r2.restarted.map(|n| (n.settings, n.cpu_step)),
            Some((vec!["cnn.setting.batch", "cnn.setting.seed"], 4))
        );
        // A change before anything ran, while paused, says nothing.
        let fresh = ready().reduce(Action::SettingsChanged(Spec {
            seed: 9,
            ..Spec::default()
        }));
        assert_eq!((fresh.network, fresh.restarted.clone()), (1, None));
        // Typing keeps the text; an equal value from the URL does not rewrite it.
        let typed = fresh.reduce(Action::TypeLr("0.0010".into()));
        let synced = typed.reduce(Action::SettingsChanged(typed.spec.clone()));
        assert_eq!(synced.lr_text, "0.0010");
        assert_eq!(
            typed
                .reduce(Action::TypeLr("x".into()))
                .lr_error()
                .map(|e| e.key()),
            Some("cnn.err.lr")
        );
        let b = typed.reduce(Action::TypeBatch("128".into()));
        assert_eq!(b.batch_error(256), None);
        assert_eq!(b.batch_error(100).map(|e| e.key()), Some("cnn.err.batch"));
    }

    #[test]
    fn a_lost_device_says_so_and_reset_recovers() {
        let mut p = ready().reduce(Action::Play);
        p = gpu(&p, 30, 20, 0.0);
        p = p.reduce(Action::DeviceLost("gone".into()));
        assert_eq!(p.gpu_state, GpuState::Lost("gone".into()));
        assert_eq!(p.gpu_view(), RateView::Off);
        assert_eq!(p.gpu_allowance(), 0);
        assert_eq!(p.verdict(), Verdict::NoGpu);
        // Pause does not wait for the lost steps (they will never finish), only for the CPU's
        // evaluation where it stopped: the score of a lost GPU never stands for the run.
        let paused = cpu(&p.reduce(Action::Pause), 0, 10.0);
        assert_eq!(paused.phase(), Phase::Paused);
        assert!(paused.finished.is_none());
        let paused = paused.reduce(Action::Evaluated {
            network: 0,
            side: Side::Cpu,
            step: 0,
            split: Split::Test,
            score: score(2.3, 0.1),
        });
        assert_eq!(
            paused.finished.as_ref().and_then(|f| f.test),
            Some((Side::Cpu, 0, score(2.3, 0.1)))
        );
        // A restart keeps the device lost; Reset asks for a new one.
        let restarted = p.reduce(Action::SettingsChanged(Spec {
            batch: 8,
            ..Spec::default()
        }));
        assert_eq!(restarted.gpu_state, GpuState::Lost("gone".into()));
        let reset = p.reduce(Action::Reset);
        assert_eq!(reset.gpu_state, GpuState::Starting);
        assert!(!reset.playing);
        assert_eq!(
            (reset.network, reset.gpu_steps(), reset.restarted),
            (1, None, None)
        );
        // Without WebGPU the CPU trains alone, and a Pause reports once the CPU's network is
        // evaluated where it stopped.
        let alone = CnnPage::new(Spec::default())
            .reduce(Action::GpuUnavailable)
            .reduce(Action::Play);
        assert_eq!(alone.gpu_view(), RateView::Off);
        let alone = cpu(&cpu(&alone, 5, 0.0).reduce(Action::Pause), 5, 10.0);
        assert_eq!(alone.finished, None);
        let alone = alone.reduce(Action::Evaluated {
            network: 0,
            side: Side::Cpu,
            step: 5,
            split: Split::Test,
            score: score(1.0, 0.6),
        });
        assert_eq!(
            alone.finished.map(|f| (f.gpu_steps, f.cpu_steps)),
            Some((None, 5))
        );
        // A failed session is named, and a new network tries again.
        let failed = ready().reduce(Action::GpuFailed {
            network: 0,
            error: "oom".into(),
        });
        assert_eq!(failed.gpu_state.code(), "failed");
        assert_eq!(failed.reduce(Action::Reset).gpu_state, GpuState::Starting);
    }

    #[test]
    fn the_chart_spans_both_sides_curves_and_says_which_is_ahead() {
        let mut c = Curves::default();
        let e = extent(&c);
        assert_eq!((e.max_step, e.max_loss, e.lead()), (1, 0.0, Lead::Even));
        push_point(&mut c.cpu, 0, Split::Test, score(2.3, 0.1));
        push_point(&mut c.cpu, 40, Split::Train, score(0.9, 0.7));
        let e = extent(&c);
        assert_eq!((e.max_step, e.max_loss), (40, 2.3), "the CPU alone");
        assert_eq!(e.lead(), Lead::Alone(Side::Cpu));
        assert_eq!(e.lead().key(), Some("cnn.chart.cpu_alone"));
        push_point(&mut c.gpu, 0, Split::Test, score(2.4, 0.1));
        push_point(&mut c.gpu, 30, Split::Test, score(f32::INFINITY, 0.1));
        // The CPU's step 40 stays on the chart, 10 steps past the GPU's 30; the infinite
        // loss is left out of the scale.
        let e = extent(&c);
        assert_eq!((e.max_step, e.max_loss), (40, 2.4));
        assert_eq!((e.gpu_end, e.cpu_end), (Some(30), Some(40)));
        assert_eq!(
            e.lead(),
            Lead::Ahead {
                side: Side::Cpu,
                by: 10,
                behind_at: 30
            }
        );
        // A loss only past the GPU's last step still sets the scale.
        push_point(&mut c.cpu, 9_569, Split::Test, score(3.1, 0.9));
        assert_eq!(extent(&c).max_loss, 3.1);
        push_point(&mut c.gpu, 10_000, Split::Test, score(0.5, 0.9));
        let e = extent(&c);
        assert_eq!(e.max_step, 10_000);
        assert_eq!(
            e.lead(),
            Lead::Ahead {
                side: Side::Gpu,
                by: 431,
                behind_at: 9_569
            }
        );
        assert_eq!(e.lead().key(), Some("cnn.chart.gpu_ahead"));
        push_point(&mut c.cpu, 10_000, Split::Test, score(0.5, 0.9));
        assert_eq!(extent(&c).lead(), Lead::Even);
        assert_eq!(Lead::Even.key(), None);
    }

    #[test]
    fn divergence_is_named_and_the_latest_test_score_says_its_side() {
        let mut c = Curves::default();
        assert_eq!(c.latest_test(), None);
        push_point(&mut c.cpu, 8, Split::Test, score(0.9, 0.7));
        assert_eq!(c.latest_test(), Some((Side::Cpu, 8, score(0.9, 0.7))));
        push_point(&mut c.gpu, 2, Split::Test, score(1.9, 0.3));
        push_point(&mut c.gpu, 3, Split::Train, score(1.8, 0.35));
        assert_eq!(c.latest_test(), Some((Side::Gpu, 2, score(1.9, 0.3))));
        assert!(!c.diverged());
        push_point(&mut c.gpu, 4, Split::Train, score(f32::NAN, 0.1));
        assert!(c.diverged());
    }

    #[test]
    fn a_collapse_after_learning_is_seen_at_the_first_score_after_it() {
        let curve = |side: Side, points: &[(u64, f32, f32)]| {
            let mut c = Curves::default();
            for &(step, loss, acc) in points {
                push_point(c.side_mut(side), step, Split::Test, score(loss, acc));
            }
            c
        };
        // The run: 91.3 % at lr 0.01, then lr 1 typed live.
        let learned = [(0, 2.9, 0.09), (200, 0.4, 0.88), (240, 0.3, 0.913)];
        assert_eq!(curve(Side::Gpu, &learned).collapsed(), None);
        let fell = [learned.as_slice(), &[(260, 9.7, 0.088)]].concat();
        assert_eq!(
            curve(Side::Gpu, &fell).collapsed(),
            Some(Collapse {
                side: Side::Gpu,
                best: (240, score(0.3, 0.913)),
                now: (260, score(9.7, 0.088)),
                by_loss: false,
            })
        );
        assert_eq!(
            curve(Side::Cpu, &fell).collapsed().map(|c| c.side),
            Some(Side::Cpu),
            "either side"
        );
        // Noise on a good network, a network that never learned (a stall is its own note),
        // learning back, and a loss that is no longer a number (`diverged`) are not collapses.
        let noisy = [learned.as_slice(), &[(260, 0.5, 0.84)]].concat();
        assert_eq!(curve(Side::Gpu, &noisy).collapsed(), None);
        let never = [(0, 2.9, 0.09), (40, 2.4, 0.3), (80, 2.36, 0.1)];
        assert_eq!(curve(Side::Gpu, &never).collapsed(), None);
        let back = [fell.as_slice(), &[(300, 0.6, 0.8)]].concat();
        assert_eq!(curve(Side::Gpu, &back).collapsed(), None);
        let nan = [learned.as_slice(), &[(260, f32::NAN, 0.098)]].concat();
        assert_eq!(curve(Side::Gpu, &nan).collapsed(), None);
    }

    #[test]
    fn a_loss_that_blows_up_is_seen_at_the_first_score_after_it_before_accuracy_falls() {
        let curve = |points: &[(u64, f32, f32)]| {
            let mut c = Curves::default();
            for &(step, loss, acc) in points {
                push_point(&mut c.gpu, step, Split::Test, score(loss, acc));
            }
            c
        };
        // Learned to 91 %, then lr raised: the logits grow huge, the arg-max still mostly
        // right (80 % is more than half of 91 %), the loss 40 times its lowest (0.3 at 200).
        let learned = [(0, 2.9, 0.09), (200, 0.3, 0.88), (240, 0.4, 0.913)];
        let up = [learned.as_slice(), &[(250, 12.0, 0.80)]].concat();
        let said = Some(Collapse {
            side: Side::Gpu,
            best: (200, score(0.3, 0.88)),
            now: (250, score(12.0, 0.80)),
            by_loss: true,
        });
        assert_eq!(curve(&up).collapsed(), said);
        // Still said while the loss sits back around ln 10 (the blow-up's step and loss), and
        // gone once a loss shows learning again or accuracy's own fall says it.
        let after = [up.as_slice(), &[(260, 2.5, 0.6), (270, 2.2, 0.55)]].concat();
        assert_eq!(curve(&after).collapsed(), said);
        let back = [after.as_slice(), &[(280, 1.9, 0.7)]].concat();
        assert_eq!(curve(&back).collapsed(), None);
        let fell = [after.as_slice(), &[(280, 2.4, 0.1)]].concat();
        assert_eq!(curve(&fell).collapsed().map(|c| c.by_loss), Some(false));
        // Adam at lr 1 from the start, the probe's losses (`collapsed`'s header): said at the
        // first score and still at the last.
        let mut early = vec![(0, 2.991, 0.09), (1, 89.0, 0.093)];
        assert_eq!(
            curve(&early)
                .collapsed()
                .map(|c| (c.best.0, c.now.0, c.by_loss)),
            Some((0, 1, true))
        );
        early.extend([(2, 4.576, 0.113), (3, 2.836, 0.097), (8, 2.694, 0.105)]);
        assert_eq!(
            curve(&early)
                .collapsed()
                .map(|c| (c.best.0, c.now.0, c.by_loss)),
            Some((0, 1, true))
        );
        // Not blown up: the starting loss (above ln 10, but the first score), a loss at
        // chance after learning little (the stall's), a bump to less than twice ln 10, and a
        // learned network's loss that doubles but stays under twice ln 10.
        assert_eq!(curve(&[(0, 9.0, 0.1)]).collapsed(), None);
        assert_eq!(curve(&[(0, 2.9, 0.09), (40, 2.4, 0.1)]).collapsed(), None);
        assert_eq!(curve(&[(0, 2.9, 0.09), (10, 4.5, 0.1)]).collapsed(), None);
        let doubled = [learned.as_slice(), &[(260, 0.7, 0.85)]].concat();
        assert_eq!(curve(&doubled).collapsed(), None);
        // SGD at lr 1 from the start (the probe): 2.99, then 2.33–2.41, never blown up.
        let sgd = [(0, 2.991, 0.09), (1, 2.331, 0.087), (8, 2.414, 0.105)];
        assert_eq!(curve(&sgd).collapsed(), None);
        // Twice ln 10 but not twice the lowest earlier loss (a network that never got below
        // 2.9): the rise is not a blow-up.
        assert_eq!(curve(&[(0, 2.9, 0.09), (10, 4.8, 0.1)]).collapsed(), None);
    }
}
