//! Which of the sweep's times make no sense, and so are marked "can't tell" (as the thermal
//! lesson says of a slowdown it cannot explain) rather than read as a kernel's speed.
//!
//! A point is one contender at one N: its fastest verified run of up to a few, and its slowest.
//! Two things mark it:
//! - **Spread**: its runs differed by more than [`SPREAD`] (the slowest over twice the
//!   fastest). The same work on the same data took that much longer once, so the machine, not
//!   the kernel, set the time.
//! - **Order**: it took longer than the same contender at a larger N, by more than
//!   [`ORDER_SLACK`]. A larger N is N³ more multiply-adds on top of the same fixed costs, so its
//!   time can only be longer; a smaller problem that took longer met a cold start, a busy
//!   machine or a timer's jitter (the sweep once showed 317 ms at N = 64 against 18.9 ms at
//!   128). The smaller N's point is the one marked: a run is slowed by such things, never sped
//!   up.

/// The slowest run may be this fraction above the fastest before the point is doubted.
pub const SPREAD: f64 = 1.0;
/// A smaller N may take this fraction longer than a larger N (jitter on the fixed costs,
/// which dominate at the smallest sizes) before the point is doubted.
pub const ORDER_SLACK: f64 = 0.25;

/// One measured point: the fastest and the slowest of its verified runs, in ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Runs {
    pub fastest: f64,
    pub slowest: f64,
}

/// Why a point's time cannot be read as its kernel's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Doubt {
    /// Its runs differed by this fraction of the fastest.
    Spread { spread: f64 },
    /// It took longer than the same contender at the larger `n`, which took `ms`.
    Order { n: u32, ms: f64 },
}

impl Doubt {
    /// The translation key of its explanation (`{spread}` in %, or `{n}` and `{ms}`).
    pub fn key(self) -> &'static str {
        match self {
            Doubt::Spread { .. } => "race.sweep.doubt.spread",
            Doubt::Order { .. } => "race.sweep.doubt.order",
        }
    }
}

/// Each point's doubt, for one contender's points in order of N (`sizes` ascending, None
/// where nothing verified was measured). Spread first: a point that varied is doubted for
/// that, whatever its order.
pub fn doubts(sizes: &[u32], points: &[Option<Runs>]) -> Vec<Option<Doubt>> {
    (0..points.len())
        .map(|i| {
            let (p, n_i) = (points[i]?, *sizes.get(i)?);
            if !(p.fastest > 0.0 && p.slowest.is_finite()) {
                return None;
            }
            let spread = p.slowest / p.fastest - 1.0;
            if spread > SPREAD {
                return Some(Doubt::Spread { spread });
            }
            // The fastest larger N this point took longer than, beyond the slack.
            sizes
                .iter()
                .zip(points)
                .skip(i + 1)
                .filter(|(&n, _)| n > n_i)
                .filter_map(|(&n, q)| q.map(|q| (n, q.fastest)))
                .filter(|&(_, ms)| ms > 0.0 && p.fastest > ms * (1.0 + ORDER_SLACK))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(n, ms)| Doubt::Order { n, ms })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn runs(fastest: f64, slowest: f64) -> Option<Runs> {
        Some(Runs { fastest, slowest })
    }

    #[test]
    fn the_sweeps_317_ms_at_64_against_18_9_at_128_is_marked() {
        // What a learner saw: cache-blocked ×1, one run each at 64 (over the repeat budget)
        // and the sizes after it in order.
        let sizes = [16, 32, 64, 128, 256];
        let points = [
            runs(0.9, 1.0),
            runs(1.4, 1.6),
            runs(317.0, 317.0),
            runs(18.9, 19.5),
            runs(140.0, 150.0),
        ];
        let d = doubts(&sizes, &points);
        assert_eq!(d[2], Some(Doubt::Order { n: 128, ms: 18.9 }));
        // The others make sense: each longer than the one before.
        assert_eq!(
            d.iter().enumerate().filter(|(_, d)| d.is_some()).count(),
            1,
            "{d:?}"
        );
    }

    #[test]
    fn runs_that_differ_by_more_than_twice_are_marked_for_their_spread() {
        let sizes = [64, 128];
        // 2.0 ms against 4.5: 125 % apart.
        let d = doubts(&sizes, &[runs(2.0, 4.5), runs(15.0, 16.0)]);
        match d[0] {
            Some(Doubt::Spread { spread }) => assert!((spread - 1.25).abs() < 1e-12),
            other => panic!("{other:?}"),
        }
        // Exactly twice: the bound itself is not doubted.
        assert_eq!(doubts(&sizes, &[runs(2.0, 4.0), runs(15.0, 16.0)])[0], None);
        assert_eq!(
            Doubt::Spread { spread: 1.5 }.key(),
            "race.sweep.doubt.spread"
        );
        assert_eq!(
            Doubt::Order { n: 1, ms: 1.0 }.key(),
            "race.sweep.doubt.order"
        );
    }

    #[test]
    fn a_small_inversion_within_the_slack_is_jitter_not_a_doubt() {
        let sizes = [16, 32, 64];
        // Fixed costs dominate: 0.50 ms at 16, 0.45 at 32 (11 % inverted) is timer jitter.
        let d = doubts(&sizes, &[runs(0.50, 0.55), runs(0.45, 0.5), runs(0.9, 1.0)]);
        assert_eq!(d, vec![None, None, None]);
        // 0.60 against 0.45 (33 %) is past the slack; and against the fastest larger N.
        let d = doubts(
            &sizes,
            &[runs(0.60, 0.61), runs(0.45, 0.5), runs(0.46, 0.5)],
        );
        assert_eq!(d[0], Some(Doubt::Order { n: 32, ms: 0.45 }));
    }

    #[test]
    fn missing_points_and_odd_numbers_are_no_doubt_and_no_panic() {
        let sizes = [16, 32, 64];
        let d = doubts(&sizes, &[None, runs(5.0, 5.0), None]);
        assert_eq!(d, vec![None, None, None]);
        // A zero, NaN or infinite time says nothing either way.
        let d = doubts(
            &sizes,
            &[
                runs(0.0, 1.0),
                runs(f64::NAN, 1.0),
                runs(1.0, f64::INFINITY),
            ],
        );
        assert_eq!(d, vec![None, None, None]);
        assert!(doubts(&[], &[]).is_empty());
        // More points than sizes: the extra ones have no N to compare with.
        assert_eq!(
            doubts(&[16], &[runs(9.0, 9.0), runs(1.0, 1.0)]),
            vec![None, None]
        );
    }
}
