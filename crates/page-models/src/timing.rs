//! The editor's comparison of an edited kernel with its original: both timed the same way
//! (one untimed warm-up each, then [`rounds`] timed runs each, alternating in the order of
//! [`order`]), each side summed up as a [`Spread`] (median and range), and a [`Verdict`] that
//! says "faster" only when the two ranges do not overlap.
//!
//! Why disjoint ranges: with n runs a side, two kernels that take the same time put all of one
//! side's runs below all of the other's by chance with probability 2 / C(2n, n) (0.8 % for
//! n = 5: the extreme of a rank-sum test), so a claim made only then is seldom noise; one run
//! each, or medians alone, turn drift and a busy machine into "faster".

/// Timed runs per side, at least (the floor: a median of one or two runs is one run).
pub const MIN_ROUNDS: u32 = 5;
/// Timed runs per side, at most.
pub const MAX_ROUNDS: u32 = 15;
/// How long the timed rounds may take together on a hardware adapter when runs are quick;
/// more rounds only narrow the ranges, and the learner waits for them.
pub const ROUNDS_BUDGET_MS: f64 = 2_000.0;

/// Timed runs per side: [`MIN_ROUNDS`] on a software adapter (every run is CPU time the page
/// and the tests wait for), else as many as fit in [`ROUNDS_BUDGET_MS`] at `round_ms` for one
/// run of each side, between [`MIN_ROUNDS`] and [`MAX_ROUNDS`], and odd so the median is one
/// run's time.
pub fn rounds(software: bool, round_ms: f64) -> u32 {
    if software {
        return MIN_ROUNDS;
    }
    let fit = if round_ms.is_finite() && round_ms > 0.0 {
        (ROUNDS_BUDGET_MS / round_ms).floor()
    } else {
        f64::from(MAX_ROUNDS)
    };
    let n = fit.clamp(f64::from(MIN_ROUNDS), f64::from(MAX_ROUNDS)) as u32;
    if n.is_multiple_of(2) {
        n - 1
    } else {
        n
    }
}

/// One side of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Edited,
    Original,
}

/// Which side runs first in round `round` (from 0): they take turns, so a steady drift (a
/// machine warming up or getting busier) and whatever the first run of a pair pays fall on
/// both sides alike.
pub fn order(round: u32) -> [Side; 2] {
    if round.is_multiple_of(2) {
        [Side::Edited, Side::Original]
    } else {
        [Side::Original, Side::Edited]
    }
}

pub use numbers::median;

/// One side's timed runs, summed up: the median and the range it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Finite samples it was made from.
    pub runs: u32,
}

impl Spread {
    /// None when there is no finite sample.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        let median = median(samples)?;
        let finite = samples.iter().copied().filter(|x| x.is_finite());
        Some(Spread {
            median,
            min: finite.clone().fold(f64::INFINITY, f64::min),
            max: finite.clone().fold(f64::NEG_INFINITY, f64::max),
            runs: finite.count() as u32,
        })
    }

    /// Whether the two ranges share a point.
    pub fn overlaps(&self, other: &Spread) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

/// What the page may say about the edited kernel's time against the original's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The ranges overlap: the same within the noise of this run.
    Same,
    /// Every edited run was quicker than every original run.
    EditedFaster,
    /// Every edited run was slower than every original run.
    EditedSlower,
    /// A side has fewer than [`MIN_ROUNDS`] runs: nothing is claimed.
    TooFew,
}

impl Verdict {
    /// For `data-verdict`.
    pub fn code(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::EditedFaster => "faster",
            Verdict::EditedSlower => "slower",
            Verdict::TooFew => "too-few",
        }
    }
}

/// The rule of the module header: a side is faster only when the ranges are disjoint.
pub fn verdict(edited: &Spread, original: &Spread) -> Verdict {
    if edited.runs < MIN_ROUNDS || original.runs < MIN_ROUNDS {
        Verdict::TooFew
    } else if edited.overlaps(original) {
        Verdict::Same
    } else if edited.max < original.min {
        Verdict::EditedFaster
    } else {
        Verdict::EditedSlower
    }
}

/// The slower median over the quicker one (≥ 1): "1.8×" in "the medians are 1.8× apart".
pub fn factor(edited: &Spread, original: &Spread) -> f64 {
    let (a, b) = (edited.median, original.median);
    if a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    a.max(b) / a.min(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(s: &[f64]) -> Spread {
        Spread::of(s).unwrap_or_else(|| panic!("no finite sample in {s:?}"))
    }

    #[test]
    fn spread_is_the_median_and_the_range_of_the_finite_runs() {
        let s = spread(&[12.0, 10.0, 30.0, 11.0, f64::NAN, 9.0]);
        assert_eq!(
            s,
            Spread {
                median: 11.0,
                min: 9.0,
                max: 30.0,
                runs: 5
            }
        );
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn overlapping_ranges_are_the_same_within_the_noise() {
        // Medians 10 and 12, but the ranges share 11–12: no claim.
        let e = spread(&[9.0, 10.0, 10.0, 11.0, 12.0]);
        let o = spread(&[11.0, 12.0, 12.0, 13.0, 14.0]);
        assert_eq!(verdict(&e, &o), Verdict::Same);
        assert_eq!(verdict(&o, &e), Verdict::Same);
        // Touching at one point is overlapping.
        let o = spread(&[12.0, 13.0, 13.0, 14.0, 15.0]);
        assert_eq!(verdict(&e, &o), Verdict::Same);
        // Identical runs (a coarse clock) are the same.
        let flat = spread(&[1.0; 5]);
        assert_eq!(verdict(&flat, &flat), Verdict::Same);
    }

    #[test]
    fn disjoint_ranges_name_the_quicker_side() {
        let e = spread(&[5.0, 5.5, 6.0, 5.2, 5.9]);
        let o = spread(&[7.0, 8.0, 7.5, 9.0, 7.1]);
        assert_eq!(verdict(&e, &o), Verdict::EditedFaster);
        assert_eq!(verdict(&o, &e), Verdict::EditedSlower);
        assert!((factor(&e, &o) - 7.5 / 5.5).abs() < 1e-12);
        assert_eq!(factor(&e, &o), factor(&o, &e));
    }

    #[test]
    fn fewer_than_five_runs_claim_nothing() {
        let e = spread(&[1.0, 1.0, 1.0, 1.0]);
        let o = spread(&[9.0, 9.0, 9.0, 9.0, 9.0]);
        assert_eq!(verdict(&e, &o), Verdict::TooFew);
        assert_eq!(verdict(&o, &e), Verdict::TooFew);
    }

    #[test]
    fn rounds_are_five_on_software_and_odd_within_bounds_on_hardware() {
        assert_eq!(rounds(true, 0.5), MIN_ROUNDS);
        assert_eq!(rounds(true, 5_000.0), MIN_ROUNDS);
        assert_eq!(rounds(false, 1_000.0), MIN_ROUNDS);
        assert_eq!(rounds(false, 1.0), MAX_ROUNDS);
        assert_eq!(rounds(false, 0.0), MAX_ROUNDS);
        assert_eq!(rounds(false, f64::NAN), MAX_ROUNDS);
        // 2000 / 250 = 8 → 7 (odd).
        assert_eq!(rounds(false, 250.0), 7);
        for ms in [0.1, 3.0, 100.0, 190.0, 333.0, 1e9] {
            let n = rounds(false, ms);
            assert!(
                (MIN_ROUNDS..=MAX_ROUNDS).contains(&n) && n % 2 == 1,
                "{ms}: {n}"
            );
        }
    }

    #[test]
    fn the_sides_take_turns_going_first() {
        assert_eq!(order(0), [Side::Edited, Side::Original]);
        assert_eq!(order(1), [Side::Original, Side::Edited]);
        assert_eq!(order(2), order(0));
        let firsts = (0..6).filter(|&r| order(r)[0] == Side::Edited).count();
        assert_eq!(firsts, 3);
    }
}
