//! What a Run widget says before and during one run, honestly: how long the run will take on
//! this adapter (estimated before it starts, with the rate the estimate assumes, and a warning
//! when that is long), whose GPU work it is waiting for, how many pieces of its own work are
//! done, and, after Cancel, that the pieces already sent are still draining. Pure.
//!
//! Why: a learner who asked a software renderer for 8192³ saw no warning, then "waiting for
//! earlier GPU work" (there was none: it was the run's own first piece) and, after Cancel,
//! nothing until the submitted pieces had drained.

use gpu_runtime::Progress;

use crate::progress::{Left, ProgressClock};

/// A run whose slow estimate is above this is a long run, warned about before it starts.
pub const LONG_RUN_MS: f64 = 30_000.0;

/// Assumed GFLOP/s (slow, fast) before this page has timed a stage on this adapter. Software
/// renderers (SwiftShader on a few CPU cores) run the ladder's matmul kernels at about
/// 0.1–2 GFLOP/s: the naive kernel at 4096³ measured about 0.2 GFLOP/s on the test machine
/// (its B column reads miss every cache), small sizes and tiled kernels do better. Hardware
/// GPUs range from about 20 (an old integrated GPU, naive kernel) to hundreds. A range,
/// because one number would be wrong by ten times on someone's machine.
pub const SOFTWARE_GFLOPS: (f64, f64) = (0.1, 2.0);
pub const HARDWARE_GFLOPS: (f64, f64) = (20.0, 500.0);

/// Where an estimate's rate comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// Measured by an earlier run of the same stage on this page.
    Measured,
    /// The assumed rates of a software adapter.
    AssumedSoftware,
    /// The assumed rates of a hardware GPU.
    AssumedHardware,
}

/// A run's time before it starts: between `fast_ms` and `slow_ms` (equal when measured).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub fast_ms: f64,
    pub slow_ms: f64,
    /// The rates behind them, GFLOP/s (slow, fast).
    pub gflops: (f64, f64),
    pub basis: Basis,
}

impl Estimate {
    /// `flops` of work on an adapter (`software`), at `measured` GFLOP/s when an earlier run
    /// of this stage here measured one (ignored unless a positive number).
    pub fn new(flops: f64, software: bool, measured: Option<f64>) -> Self {
        let (gflops, basis) = match measured.filter(|g| g.is_finite() && *g > 0.0) {
            Some(g) => ((g, g), Basis::Measured),
            None if software => (SOFTWARE_GFLOPS, Basis::AssumedSoftware),
            None => (HARDWARE_GFLOPS, Basis::AssumedHardware),
        };
        let ms = |g: f64| {
            if flops.is_finite() && flops > 0.0 {
                flops / (g * 1e6)
            } else {
                0.0
            }
        };
        Estimate {
            fast_ms: ms(gflops.1),
            slow_ms: ms(gflops.0),
            gflops,
            basis,
        }
    }

    /// Long enough to warn about before starting (it may well take this long).
    pub fn is_long(&self) -> bool {
        self.slow_ms >= LONG_RUN_MS
    }
}

/// A finished run's rate, worth remembering for the next estimate: only from a run long enough
/// that fixed costs do not dominate it (else small runs would make large ones look slow).
pub fn rate_to_remember(flops: f64, kernel_ms: f64) -> Option<f64> {
    (kernel_ms >= 100.0 && flops > 0.0 && kernel_ms.is_finite()).then(|| flops / (kernel_ms * 1e6))
}

/// What the widget shows while a run is in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shown {
    /// Before the first report: making the inputs and compiling the kernel on this page.
    Preparing,
    /// Waiting for GPU work submitted before this run (another run's) to finish.
    WaitingForEarlierWork,
    /// Uploading the inputs and running this run's first piece (no piece finished yet).
    FirstPiece,
    /// `pieces` of this run's own submissions finished, `pct` % of its work.
    Running { pct: u32, pieces: u32, left: Left },
    /// Cancel pressed: nothing more is sent; the piece(s) already on the GPU are finishing,
    /// each about `piece_ms` (None: none finished yet to measure).
    Cancelling { piece_ms: Option<f64> },
}

impl Shown {
    /// The `data-progress` attribute: a percentage, or what it waits for.
    pub fn id(&self) -> String {
        match self {
            Shown::Preparing => "preparing".into(),
            Shown::WaitingForEarlierWork => "waiting".into(),
            Shown::FirstPiece => "first-piece".into(),
            Shown::Running { pct, .. } => pct.to_string(),
            Shown::Cancelling { .. } => "cancelling".into(),
        }
    }
}

/// One run's reports, in order. Times in ms from any fixed origin.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStatus {
    /// The page drained earlier GPU work itself before starting (so a later "waiting for the
    /// queue" report of the runtime is this run's own start, not someone else's work).
    earlier_drained: bool,
    waiting: bool,
    reports: u32,
    clock: ProgressClock,
    last_at: Option<f64>,
    piece_ms: Option<f64>,
    cancelling: bool,
}

impl RunStatus {
    /// The page starts waiting for work submitted before this run.
    pub fn waiting_for_earlier_work(&mut self) {
        self.waiting = true;
    }

    /// Earlier work has finished: from now on the queue holds only this run's work.
    pub fn earlier_work_done(&mut self, now: f64) {
        self.waiting = false;
        self.earlier_drained = true;
        self.last_at = Some(now);
    }

    /// A report from the runtime at `now`.
    pub fn report(&mut self, p: Progress, now: f64) {
        match p {
            Progress::WaitingForQueue => {
                // After the page's own drain the queue is empty: the runtime's wait is over
                // at once and what follows is this run's upload and first piece.
                self.waiting = !self.earlier_drained;
                if self.last_at.is_none() || self.waiting {
                    self.last_at = Some(now);
                }
            }
            Progress::Running { done, total } if total > 0.0 => {
                self.waiting = false;
                // The time left is measured from the first piece's end: the first piece also
                // made and uploaded the inputs, which would make the rest look slower.
                if let Some(t) = self.last_at {
                    if now > t {
                        self.piece_ms = Some(now - t);
                    }
                }
                self.last_at = Some(now);
                self.reports += 1;
                self.clock.report(now, done / total);
            }
            Progress::Running { .. } => {}
        }
    }

    /// Cancel was pressed.
    pub fn cancel(&mut self) {
        self.cancelling = true;
    }

    pub fn is_cancelling(&self) -> bool {
        self.cancelling
    }

    pub fn shown(&self) -> Shown {
        if self.cancelling {
            return Shown::Cancelling {
                piece_ms: self.piece_ms,
            };
        }
        if self.waiting {
            return Shown::WaitingForEarlierWork;
        }
        match (self.reports, self.last_at) {
            (0, None) => Shown::Preparing,
            (0, Some(_)) => Shown::FirstPiece,
            _ => Shown::Running {
                pct: self.clock.pct(),
                pieces: self.reports,
                left: self.clock.left(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_software_adapter_gets_a_range_of_minutes_to_hours_for_8192_cubed_and_a_warning() {
        let flops = 2.0 * 8192f64.powi(3);
        let e = Estimate::new(flops, true, None);
        assert_eq!(e.basis, Basis::AssumedSoftware);
        // 1.1 TFLOP at 2 and at 0.1 GFLOP/s: about 9 min and 3 h.
        assert!((e.fast_ms - flops / 2e6).abs() < 1e-3);
        assert!((e.slow_ms - flops / 1e5).abs() < 1e-3);
        assert!(e.fast_ms > 500_000.0 && e.slow_ms > 10_000_000.0 && e.is_long());
        // On a hardware GPU it may take about a minute (a slow GPU at 20 GFLOP/s): long too;
        // 4096³ (7 s at worst) is not.
        assert!(Estimate::new(flops, false, None).is_long());
        assert!(!Estimate::new(2.0 * 4096f64.powi(3), false, None).is_long());
        // 2048³ may take minutes on a software adapter; 1024³ (the progress tests' size)
        // and the default 256³ are not long.
        assert!(Estimate::new(2.0 * 2048f64.powi(3), true, None).is_long());
        assert!(!Estimate::new(2.0 * 1024f64.powi(3), true, None).is_long());
        assert!(!Estimate::new(2.0 * 256f64.powi(3), true, None).is_long());
    }

    #[test]
    fn a_measured_rate_replaces_the_assumed_range() {
        let flops = 2.0 * 4096f64.powi(3);
        let e = Estimate::new(flops, true, Some(400.0));
        assert_eq!(e.basis, Basis::Measured);
        assert_eq!(e.gflops, (400.0, 400.0));
        assert_eq!(e.fast_ms, e.slow_ms);
        assert!(!e.is_long());
        assert!(Estimate::new(flops, true, Some(1.0)).is_long());
        // Nonsense measured rates are ignored.
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                Estimate::new(flops, true, Some(bad)).basis,
                Basis::AssumedSoftware
            );
        }
        // Nothing to do is no time, not a division by zero.
        assert_eq!(Estimate::new(0.0, true, None).slow_ms, 0.0);
    }

    #[test]
    fn only_runs_long_enough_are_remembered() {
        assert_eq!(rate_to_remember(2e9, 50.0), None);
        assert_eq!(rate_to_remember(2e9, 1000.0), Some(2.0));
        assert_eq!(rate_to_remember(0.0, 1000.0), None);
        assert_eq!(rate_to_remember(2e9, f64::INFINITY), None);
    }

    #[test]
    fn a_runtime_wait_after_the_pages_own_drain_is_this_runs_first_piece() {
        let mut s = RunStatus::default();
        assert_eq!(s.shown(), Shown::Preparing);
        s.waiting_for_earlier_work();
        assert_eq!(s.shown(), Shown::WaitingForEarlierWork);
        s.earlier_work_done(100.0);
        s.report(Progress::WaitingForQueue, 150.0);
        // Not "waiting for earlier work": the queue was empty; this is its own start.
        assert_eq!(s.shown(), Shown::FirstPiece);
        assert_eq!(s.shown().id(), "first-piece");
    }

    #[test]
    fn without_the_pages_drain_a_runtime_wait_is_for_earlier_work() {
        let mut s = RunStatus::default();
        s.report(Progress::WaitingForQueue, 0.0);
        assert_eq!(s.shown(), Shown::WaitingForEarlierWork);
        s.report(
            Progress::Running {
                done: 1.0,
                total: 4.0,
            },
            1000.0,
        );
        assert!(matches!(
            s.shown(),
            Shown::Running {
                pct: 25,
                pieces: 1,
                ..
            }
        ));
    }

    #[test]
    fn pieces_count_up_and_the_time_left_follows_the_rate() {
        let mut s = RunStatus::default();
        s.earlier_work_done(0.0);
        s.report(Progress::WaitingForQueue, 0.0);
        for (i, t) in [1000.0, 2000.0, 3000.0].into_iter().enumerate() {
            s.report(
                Progress::Running {
                    done: (i + 1) as f64,
                    total: 40.0,
                },
                t,
            );
        }
        match s.shown() {
            Shown::Running { pct, pieces, left } => {
                assert_eq!((pct, pieces), (7, 3));
                // 3 of 40 in 3 s: 37 s left.
                match left {
                    Left::Ms(ms) => assert!((ms - 37_000.0).abs() < 1e-6, "{ms}"),
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(s.shown().id(), "7");
    }

    #[test]
    fn cancel_shows_cancelling_with_the_last_pieces_time_until_the_run_ends() {
        let mut s = RunStatus::default();
        s.earlier_work_done(0.0);
        s.cancel();
        // Cancelled before any piece finished: no piece time to quote.
        assert_eq!(s.shown(), Shown::Cancelling { piece_ms: None });
        let mut s = RunStatus::default();
        s.earlier_work_done(0.0);
        let running = |done| Progress::Running { done, total: 10.0 };
        s.report(running(1.0), 4000.0);
        s.report(running(2.0), 6500.0);
        s.cancel();
        assert!(s.is_cancelling());
        assert_eq!(
            s.shown(),
            Shown::Cancelling {
                piece_ms: Some(2500.0)
            }
        );
        // Reports of the draining piece keep it cancelling.
        s.report(running(3.0), 9000.0);
        assert_eq!(s.shown().id(), "cancelling");
    }
}
