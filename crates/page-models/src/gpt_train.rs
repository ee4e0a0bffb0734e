//! Training the tiny GPT live on `#/gpt`: the settings with their notes, the run's lifecycle
//! (Train / Pause / Reset, held while the page is hidden or left), both sides' curves in nats
//! per character, the bigram baseline, and the samples with their temperature. Pure: the
//! driver (`app::train_driver::gpt`) runs the GPU session and the CPU twin and reports here as
//! [`Action`]s, each carrying the run number it belongs to so that a replaced run's late
//! reports are dropped.

use gpu_runtime::gpt::Config;

/// The choices the form offers for each shape setting.
pub const LAYERS: [usize; 4] = [1, 2, 3, 4];
pub const HEADS: [usize; 5] = [1, 2, 3, 4, 8];
pub const WIDTHS: [usize; 6] = [12, 16, 24, 32, 48, 64];
pub const CONTEXTS: [usize; 6] = [8, 12, 16, 24, 32, 48];
pub const BATCHES: [usize; 5] = [4, 8, 16, 32, 64];
/// Learning rates past this diverge within a few steps at every offered shape.
pub const MAX_LR: f64 = 0.1;
/// Points kept per curve: older ones are thinned to every other one.
pub const MAX_POINTS: usize = 200;
/// Samples drawn each time.
pub const SAMPLES: usize = 4;
/// Evaluations (GPU) between two sets of samples.
pub const SAMPLE_EVERY: u64 = 3;

/// Which side a report is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Gpu,
    Cpu,
}

/// What the model and its training take from the form.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainSettings {
    pub layers: usize,
    pub heads: usize,
    pub width: usize,
    pub context: usize,
    /// Windows (texts) per step.
    pub batch: usize,
    /// The learning rate as typed (a bad value is named, not replaced).
    pub lr_text: String,
}

impl TrainSettings {
    /// The defaults. On a software adapter (a CPU imitating a GPU) a shape that still shows
    /// the loss falling within a minute: the one `gpu_runtime`'s real-names test beats the
    /// bigram with (2 layers, 2 heads, width 16, 16 texts a step); on a GPU the issue's
    /// 2 layers, 4 heads, width 64. The context holds a whole name (the longest has 15
    /// characters, 16 with its end mark) or a whole quatrain (24 characters and its end mark:
    /// 32).
    pub fn default_for(software: bool, poems: bool) -> Self {
        let context = if poems { 32 } else { 16 };
        if software {
            Self {
                layers: 2,
                heads: 2,
                width: 16,
                context,
                batch: 16,
                lr_text: "0.01".into(),
            }
        } else {
            Self {
                layers: 2,
                heads: 4,
                width: 64,
                context: if poems { 32 } else { 16 },
                batch: 32,
                lr_text: "0.003".into(),
            }
        }
    }

    /// The learning rate, if the text is one the page trains with.
    pub fn lr(&self) -> Option<f32> {
        let v: f64 = self.lr_text.trim().parse().ok()?;
        (v.is_finite() && v > 0.0 && v <= MAX_LR).then_some(v as f32)
    }

    /// The model's shape for a vocabulary of `vocab`.
    pub fn config(&self, vocab: usize) -> Config {
        Config {
            vocab,
            context: self.context,
            width: self.width,
            heads: self.heads,
            layers: self.layers,
        }
    }

    /// The notes on these settings: those that stop training first, then warnings.
    /// `longest` is the longest text's length in characters.
    pub fn notes(&self, longest: usize) -> Vec<Note> {
        let mut notes = Vec::new();
        if !self.width.is_multiple_of(self.heads) {
            notes.push(Note::HeadsSplit {
                width: self.width,
                heads: self.heads,
            });
        }
        if self.lr().is_none() {
            notes.push(Note::Lr(self.lr_text.clone()));
        }
        if self.context < longest + 1 {
            notes.push(Note::ContextShort {
                context: self.context,
                longest,
            });
        }
        notes
    }

    /// Whether these settings can train (no blocking note).
    pub fn trainable(&self) -> bool {
        self.width.is_multiple_of(self.heads) && self.lr().is_some()
    }
}

/// A note on the settings.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// The width does not split into the heads: nothing trains.
    HeadsSplit { width: usize, heads: usize },
    /// The learning rate is not a number in (0, MAX_LR]: nothing trains.
    Lr(String),
    /// Texts longer than the context are cut (training goes on).
    ContextShort { context: usize, longest: usize },
}

impl Note {
    pub fn key(&self) -> &'static str {
        match self {
            Note::HeadsSplit { .. } => "gpt.train.note.heads",
            Note::Lr(_) => "gpt.train.note.lr",
            Note::ContextShort { .. } => "gpt.train.note.context",
        }
    }

    pub fn blocks(&self) -> bool {
        !matches!(self, Note::ContextShort { .. })
    }

    pub fn args(&self) -> Vec<(&'static str, String)> {
        match self {
            Note::HeadsSplit { width, heads } => {
                vec![("width", width.to_string()), ("heads", heads.to_string())]
            }
            Note::Lr(t) => vec![("value", t.clone()), ("max", MAX_LR.to_string())],
            Note::ContextShort { context, longest } => vec![
                ("context", context.to_string()),
                ("longest", longest.to_string()),
                ("need", (longest + 1).to_string()),
            ],
        }
    }

    /// The setting's element id the note belongs to.
    pub fn field(&self) -> &'static str {
        match self {
            Note::HeadsSplit { .. } => "heads",
            Note::Lr(_) => "lr",
            Note::ContextShort { .. } => "context",
        }
    }
}

/// A setting the form changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Layers,
    Heads,
    Width,
    Context,
    Batch,
    Lr,
}

/// The GPU side's state.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuState {
    /// WebGPU is being probed, or the session is being built.
    Starting,
    Ready {
        software: bool,
    },
    /// No WebGPU here: the CPU trains alone.
    None,
    /// The session failed (the error's text).
    Failed(String),
}

/// One evaluation on the curve: the step and the losses in nats per character.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub step: u64,
    pub val: f64,
    /// The training loss of the batches since the last point (the last batch on the GPU).
    pub train: Option<f64>,
}

/// Samples the model wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    pub step: u64,
    pub temperature: f32,
    pub texts: Vec<String>,
    pub writer: Writer,
}

/// How a set of samples was written (the same texts either way: the same model, draws and
/// picks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// On the GPU, all texts together with a key/value cache: each new character's query
    /// attends to the keys and values cached for the characters before it.
    KvCache,
    /// On the GPU, one text at a time, a full forward over the text so far per character
    /// (while the cached decoder is being built, or where it could not be).
    FullForward,
    /// By the CPU twin (no WebGPU), a full forward per character.
    Cpu,
}

impl Writer {
    /// The name a test reads (`data-decoder`).
    pub fn name(self) -> &'static str {
        match self {
            Writer::KvCache => "kv-cache",
            Writer::FullForward => "full-forward",
            Writer::Cpu => "cpu",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Train,
    Pause,
    Reset,
    Set(Setting, String),
    Temperature(f32),
    Hidden(bool),
    GpuReady {
        run: u64,
        software: bool,
    },
    GpuFailed {
        run: u64,
        error: String,
    },
    NoGpu,
    /// A side's completed steps; `in_flight`, the GPU's sent and not finished (the CPU's: 0).
    Steps {
        run: u64,
        side: Side,
        steps: u64,
        in_flight: u64,
        ms_per_step: Option<f64>,
    },
    Evaluated {
        run: u64,
        side: Side,
        point: Point,
    },
    Baseline {
        run: u64,
        loss: f64,
    },
    Sampled {
        run: u64,
        samples: Samples,
    },
}

/// The training section's state.
#[derive(Clone, Debug, PartialEq)]
pub struct GptTrain {
    pub settings: TrainSettings,
    /// The run's number: a new one on Reset and on any shape or batch change.
    pub run: u64,
    pub playing: bool,
    pub hidden: bool,
    pub gpu: GpuState,
    pub gpu_steps: u64,
    /// GPU steps sent and not finished: a pause stops the GPU once they are done (submitted
    /// work cannot be taken back).
    pub gpu_in_flight: u64,
    /// The GPU's milliseconds a step (the last chunk's, its readback's wait included).
    pub gpu_ms: Option<f64>,
    pub cpu_steps: u64,
    /// The CPU's milliseconds a step (its own time, not the page's).
    pub cpu_ms: Option<f64>,
    pub gpu_curve: Vec<Point>,
    pub cpu_curve: Vec<Point>,
    /// The bigram's validation loss on the same split.
    pub baseline: Option<f64>,
    pub temperature: f32,
    pub samples: Option<Samples>,
}

impl GptTrain {
    pub fn new(settings: TrainSettings) -> Self {
        Self {
            settings,
            run: 1,
            playing: false,
            hidden: false,
            gpu: GpuState::Starting,
            gpu_steps: 0,
            gpu_in_flight: 0,
            gpu_ms: None,
            cpu_steps: 0,
            cpu_ms: None,
            gpu_curve: Vec::new(),
            cpu_curve: Vec::new(),
            baseline: None,
            temperature: 0.8,
            samples: None,
        }
    }

    /// Whether steps may be sent now.
    pub fn running(&self) -> bool {
        self.playing && !self.hidden && self.settings.trainable()
    }

    /// The untrained model's validation loss (the first point, either side).
    pub fn untrained(&self) -> Option<f64> {
        self.gpu_curve
            .first()
            .or(self.cpu_curve.first())
            .filter(|p| p.step == 0)
            .map(|p| p.val)
    }

    /// The lowest validation loss either side reached, with its side.
    pub fn best(&self) -> Option<(f64, Side)> {
        let g = self.gpu_curve.iter().map(|p| (p.val, Side::Gpu));
        let c = self.cpu_curve.iter().map(|p| (p.val, Side::Cpu));
        g.chain(c).min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// What leaving keeps: the same run, held (it resumes when the page is shown again).
    pub fn left(&self) -> Self {
        self.reduce(Action::Hidden(true))
    }

    /// Whether leaving now would lose anything.
    pub fn worth_keeping(&self) -> bool {
        self.gpu_steps > 0 || self.cpu_steps > 0 || self.playing
    }

    fn restart(&mut self) {
        self.run += 1;
        self.playing = false;
        self.gpu_steps = 0;
        self.gpu_in_flight = 0;
        self.gpu_ms = None;
        self.cpu_steps = 0;
        self.cpu_ms = None;
        self.gpu_curve.clear();
        self.cpu_curve.clear();
        self.baseline = None;
        self.samples = None;
        if !matches!(self.gpu, GpuState::None) {
            self.gpu = GpuState::Starting;
        }
    }

    pub fn reduce(&self, action: Action) -> Self {
        let mut next = self.clone();
        let ours = |run: u64| run == self.run;
        match action {
            Action::Train => next.playing = self.settings.trainable(),
            Action::Pause => next.playing = false,
            Action::Reset => next.restart(),
            Action::Set(which, text) => {
                let s = &mut next.settings;
                let n: Option<usize> = text.trim().parse().ok();
                let changed = match (which, n) {
                    (Setting::Lr, _) => {
                        // The learning rate changes live: the run goes on.
                        s.lr_text = text;
                        false
                    }
                    (Setting::Layers, Some(v)) if LAYERS.contains(&v) => replace(&mut s.layers, v),
                    (Setting::Heads, Some(v)) if HEADS.contains(&v) => replace(&mut s.heads, v),
                    (Setting::Width, Some(v)) if WIDTHS.contains(&v) => replace(&mut s.width, v),
                    (Setting::Context, Some(v)) if CONTEXTS.contains(&v) => {
                        replace(&mut s.context, v)
                    }
                    (Setting::Batch, Some(v)) if BATCHES.contains(&v) => replace(&mut s.batch, v),
                    _ => false,
                };
                if changed {
                    next.restart();
                }
                if !next.settings.trainable() {
                    next.playing = false;
                }
            }
            Action::Temperature(t) => next.temperature = t.clamp(0.0, 2.0),
            Action::Hidden(h) => next.hidden = h,
            Action::GpuReady { run, software } if ours(run) => {
                next.gpu = GpuState::Ready { software }
            }
            Action::GpuFailed { run, error } if ours(run) => next.gpu = GpuState::Failed(error),
            Action::NoGpu => next.gpu = GpuState::None,
            Action::Steps {
                run,
                side,
                steps,
                in_flight,
                ms_per_step,
            } if ours(run) => match side {
                Side::Gpu => {
                    next.gpu_steps = steps;
                    next.gpu_in_flight = in_flight;
                    next.gpu_ms = ms_per_step.or(next.gpu_ms);
                }
                Side::Cpu => {
                    next.cpu_steps = steps;
                    next.cpu_ms = ms_per_step.or(next.cpu_ms);
                }
            },
            Action::Evaluated { run, side, point } if ours(run) => {
                let curve = match side {
                    Side::Gpu => &mut next.gpu_curve,
                    Side::Cpu => &mut next.cpu_curve,
                };
                push_point(curve, point);
            }
            Action::Baseline { run, loss } if ours(run) => next.baseline = Some(loss),
            Action::Sampled { run, samples } if ours(run) => next.samples = Some(samples),
            _ => {}
        }
        next
    }
}

/// Sets `slot` to `v`; whether it changed.
fn replace(slot: &mut usize, v: usize) -> bool {
    std::mem::replace(slot, v) != v
}

/// Adds `p` (replacing a point at the same step: an evaluation after Pause at a step already
/// shown), thinning the older half when the curve is full: the first point (the untrained
/// loss) and the newest always stay.
pub fn push_point(curve: &mut Vec<Point>, p: Point) {
    if let Some(last) = curve.last_mut().filter(|l| l.step == p.step) {
        *last = p;
        return;
    }
    curve.push(p);
    if curve.len() > MAX_POINTS {
        let mut i = 0;
        curve.retain(|_| {
            i += 1;
            i == 1 || i % 2 == 0 || i > MAX_POINTS / 2
        });
    }
}

/// The chart's extent: the furthest step and the largest loss shown (the baseline included).
pub fn extent(page: &GptTrain) -> (u64, f64) {
    let pts = page.gpu_curve.iter().chain(&page.cpu_curve);
    let steps = pts.clone().map(|p| p.step).max().unwrap_or(0).max(1);
    let top = pts
        .flat_map(|p| [Some(p.val), p.train])
        .flatten()
        .chain(page.baseline)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    (steps, top)
}

/// Seeded draws in [0, 1) for sample `k` of a set taken at `step`: the same network and
/// temperature write the same samples.
pub fn draw_seed(step: u64, k: usize) -> u64 {
    step.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (k as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> GptTrain {
        GptTrain::new(TrainSettings::default_for(true, false))
    }

    fn point(step: u64, val: f64) -> Point {
        Point {
            step,
            val,
            train: None,
        }
    }

    #[test]
    fn bad_settings_are_named_and_stop_training() {
        let p = page().reduce(Action::Train);
        assert!(p.running());
        // Width 16 does not split into 3 heads: named, and training stops.
        let q = p.reduce(Action::Set(Setting::Heads, "3".into()));
        assert_eq!(
            q.settings.notes(8),
            vec![Note::HeadsSplit {
                width: 16,
                heads: 3
            }]
        );
        assert!(!q.running() && !q.playing);
        assert!(!q.reduce(Action::Train).playing, "Train does nothing");
        assert_eq!(q.run, p.run + 1, "a new shape is a new run");
        for bad in ["0", "-1", "abc", "0.5", "NaN", "inf"] {
            let r = p.reduce(Action::Set(Setting::Lr, bad.into()));
            assert_eq!(r.settings.notes(8), vec![Note::Lr(bad.into())], "{bad}");
            assert!(!r.running());
            assert_eq!(r.run, p.run, "the learning rate changes live");
        }
        let r = p.reduce(Action::Set(Setting::Lr, " 0.1 ".into()));
        assert_eq!(r.settings.lr(), Some(0.1));
        assert!(r.running(), "still training: the rate changes live");
        // A name of 16 characters needs 17 positions with its end mark: a warning only.
        let n = p.settings.notes(16);
        assert_eq!(n.len(), 1);
        assert!(!n[0].blocks());
        assert!(p.settings.notes(15).is_empty());
        // A value the form does not offer changes nothing.
        assert_eq!(p.reduce(Action::Set(Setting::Width, "17".into())), p);
        assert_eq!(
            p.reduce(Action::Set(Setting::Width, "16".into())),
            p,
            "same value"
        );
    }

    #[test]
    fn reset_clears_and_late_reports_of_old_runs_are_dropped() {
        let mut p = page().reduce(Action::Train);
        let run = p.run;
        p = p.reduce(Action::GpuReady {
            run,
            software: true,
        });
        for (side, s) in [(Side::Gpu, 0), (Side::Cpu, 0), (Side::Gpu, 10)] {
            p = p.reduce(Action::Evaluated {
                run,
                side,
                point: point(s, 3.0 - s as f64 / 10.0),
            });
        }
        p = p.reduce(Action::Steps {
            run,
            side: Side::Gpu,
            steps: 12,
            in_flight: 0,
            ms_per_step: None,
        });
        assert_eq!(p.untrained(), Some(3.0));
        assert_eq!(p.best(), Some((2.0, Side::Gpu)));
        assert_eq!(extent(&p), (10, 3.0));
        let r = p.reduce(Action::Reset);
        assert!(r.gpu_curve.is_empty() && r.cpu_curve.is_empty() && r.gpu_steps == 0);
        assert!(!r.playing);
        assert_eq!(r.gpu, GpuState::Starting, "a new session is built");
        let late = r.reduce(Action::Evaluated {
            run,
            side: Side::Gpu,
            point: point(20, 1.0),
        });
        assert_eq!(late, r, "the old run's evaluation is dropped");
        // Without WebGPU, Reset keeps saying so.
        let none = page().reduce(Action::NoGpu).reduce(Action::Reset);
        assert_eq!(none.gpu, GpuState::None);
    }

    #[test]
    fn hidden_holds_the_run_and_curves_thin_keeping_the_ends() {
        let p = page().reduce(Action::Train);
        let away = p.left();
        assert!(away.playing && !away.running(), "held, not stopped");
        assert!(away.reduce(Action::Hidden(false)).running());
        let mut c = Vec::new();
        for s in 0..=(3 * MAX_POINTS as u64) {
            push_point(&mut c, point(s, 1.0));
        }
        assert!(c.len() <= MAX_POINTS);
        assert_eq!(c[0].step, 0);
        assert_eq!(c.last().map(|p| p.step), Some(3 * MAX_POINTS as u64));
        assert!(c.windows(2).all(|w| w[0].step < w[1].step));
        // A second evaluation at one step replaces the first.
        push_point(&mut c, point(3 * MAX_POINTS as u64, 0.5));
        assert_eq!(c.last().map(|p| p.val), Some(0.5));
    }

    #[test]
    fn draws_are_seeded_and_distinct() {
        assert_eq!(draw_seed(5, 1), draw_seed(5, 1));
        assert_ne!(draw_seed(5, 1), draw_seed(5, 2));
        assert_ne!(draw_seed(5, 1), draw_seed(6, 1));
    }
}
