//! A long run's progress and the time it has left, estimated from the progress so far: what a
//! row shows while its CPU workers or GPU submissions report chunks. Pure.

/// What a running row says about the time it has left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Left {
    /// Not enough progress yet to estimate (no chunk reported, or no time measured).
    Estimating,
    /// About this many milliseconds, at the rate seen since the clock started.
    Ms(f64),
    /// All the work is done; copying the result back and checking it remain.
    Finishing,
}

impl Left {
    /// The `data-left` attribute: `estimating`, `ms` or `finishing`.
    pub fn id(self) -> &'static str {
        match self {
            Left::Estimating => "estimating",
            Left::Ms(_) => "ms",
            Left::Finishing => "finishing",
        }
    }
}

/// A run's reports: the first starts the clock (with the fraction it says), the later ones
/// move the fraction on. Times are in ms from any fixed origin (`performance.now()`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProgressClock {
    /// When the clock started and the fraction done then.
    start: Option<(f64, f64)>,
    /// The latest report: its time and the largest fraction reported so far.
    last: Option<(f64, f64)>,
}

impl ProgressClock {
    /// A clock started at `now` with nothing done.
    pub fn started(now: f64) -> Self {
        let mut c = Self::default();
        c.report(now, 0.0);
        c
    }

    /// A report: `fraction` of the work done at `now`. A fraction below an earlier one (a late
    /// message from one of several workers) or a time before the latest does not move the
    /// clock back; a value that is not a number is ignored.
    pub fn report(&mut self, now: f64, fraction: f64) {
        if !now.is_finite() || fraction.is_nan() {
            return;
        }
        let f = fraction.clamp(0.0, 1.0);
        match self.last {
            None => {
                self.start = Some((now, f));
                self.last = Some((now, f));
            }
            Some((t, g)) => self.last = Some((t.max(now), g.max(f))),
        }
    }

    /// The fraction done, 0 to 1.
    pub fn fraction(&self) -> f64 {
        self.last.map_or(0.0, |(_, f)| f)
    }

    /// Whole percent done, rounded down: 100 only when everything is.
    pub fn pct(&self) -> u32 {
        (self.fraction() * 100.0).floor() as u32
    }

    /// The time left at the latest report: the time so far times the work left over the work
    /// done since the clock started (from nothing done: elapsed / fraction − elapsed).
    pub fn left(&self) -> Left {
        let (Some((t0, f0)), Some((t, f))) = (self.start, self.last) else {
            return Left::Estimating;
        };
        if f >= 1.0 {
            return Left::Finishing;
        }
        let (elapsed, gained) = (t - t0, f - f0);
        if elapsed <= 0.0 || gained <= 0.0 {
            return Left::Estimating;
        }
        let ms = elapsed * (1.0 - f) / gained;
        if ms.is_finite() {
            Left::Ms(ms)
        } else {
            Left::Estimating
        }
    }
}

/// A time left as whole minutes and seconds, rounded up to the next second (an estimate that
/// says "0 s" while work remains would be wrong).
pub fn minutes_seconds(ms: f64) -> (u64, u64) {
    let s = if ms.is_finite() && ms > 0.0 {
        (ms / 1000.0).ceil() as u64
    } else {
        0
    };
    (s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn about(left: Left, ms: f64) {
        match left {
            Left::Ms(x) => assert!((x - ms).abs() < 1e-6, "{x} ≠ {ms}"),
            other => panic!("{other:?}, not about {ms} ms"),
        }
    }

    #[test]
    fn no_progress_yet_is_estimating() {
        assert_eq!(ProgressClock::default().left(), Left::Estimating);
        assert_eq!(ProgressClock::default().pct(), 0);
        let mut c = ProgressClock::started(1000.0);
        assert_eq!(c.left(), Left::Estimating);
        // Time passes, nothing reported done.
        c.report(5000.0, 0.0);
        assert_eq!(c.left(), Left::Estimating);
        assert_eq!(c.pct(), 0);
    }

    #[test]
    fn the_first_chunk_gives_elapsed_over_fraction_minus_elapsed() {
        let mut c = ProgressClock::started(1000.0);
        c.report(3000.0, 0.25);
        // 2 s for a quarter: 8 s in all, 6 s left.
        about(c.left(), 6000.0);
        assert_eq!(c.pct(), 25);
        c.report(5000.0, 0.5);
        about(c.left(), 4000.0);
    }

    #[test]
    fn a_clock_started_by_a_report_with_progress_uses_the_rate_since() {
        // The GPU's first report may already say some work is done: the rate is measured from
        // there, not from nothing.
        let mut c = ProgressClock::default();
        c.report(0.0, 0.2);
        assert_eq!(c.left(), Left::Estimating);
        c.report(1000.0, 0.3);
        // 0.1 per second, 0.7 left.
        about(c.left(), 7000.0);
    }

    #[test]
    fn all_done_is_finishing_at_100_percent() {
        let mut c = ProgressClock::started(0.0);
        c.report(10.0, 0.999);
        assert_eq!(c.pct(), 99, "never 100 % before it is");
        c.report(20.0, 1.0);
        assert_eq!(c.left(), Left::Finishing);
        assert_eq!(c.pct(), 100);
        // Over 100 % is 100 %.
        c.report(30.0, 1.7);
        assert_eq!(c.fraction(), 1.0);
        // Everything done in no time at all is still finishing, not a division by zero.
        let mut c = ProgressClock::started(5.0);
        c.report(5.0, 1.0);
        assert_eq!(c.left(), Left::Finishing);
    }

    #[test]
    fn zero_elapsed_is_estimating() {
        let mut c = ProgressClock::started(100.0);
        c.report(100.0, 0.5);
        assert_eq!(c.left(), Left::Estimating);
        assert_eq!(c.pct(), 50);
    }

    #[test]
    fn reports_out_of_order_never_move_the_clock_back() {
        let mut c = ProgressClock::started(0.0);
        c.report(2000.0, 0.4);
        // A late, smaller fraction (one worker of several) and an earlier time.
        c.report(1000.0, 0.1);
        assert_eq!(c.fraction(), 0.4);
        about(c.left(), 3000.0);
        // A time before the clock started: nothing measured, no estimate, no panic.
        let mut c = ProgressClock::started(1000.0);
        c.report(500.0, 0.5);
        assert_eq!(c.left(), Left::Estimating);
        // Not a number: ignored.
        let mut c = ProgressClock::started(0.0);
        c.report(1000.0, f64::NAN);
        c.report(f64::NAN, 0.5);
        assert_eq!(c.fraction(), 0.0);
        c.report(1000.0, -3.0);
        assert_eq!(c.left(), Left::Estimating);
    }

    #[test]
    fn minutes_and_seconds_round_up() {
        assert_eq!(minutes_seconds(0.0), (0, 0));
        assert_eq!(minutes_seconds(1.0), (0, 1));
        assert_eq!(minutes_seconds(59_000.0), (0, 59));
        assert_eq!(minutes_seconds(59_001.0), (1, 0));
        assert_eq!(minutes_seconds(125_000.0), (2, 5));
        assert_eq!(minutes_seconds(f64::INFINITY), (0, 0));
        assert_eq!(minutes_seconds(-5.0), (0, 0));
    }
}
