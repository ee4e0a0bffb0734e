//! The `thermal` lesson: a sustained load's GFLOP/s over time and the throttling verdict. Pure: the
//! component runs the chunks and hands the points here.
//!
//! The early median is the median of the first [`early_count`] points (the first fifth, at
//! least 3). A point is "low" when it is more than [`DROP`] below it; the run slowed down when
//! the median of the last fifth (at least 3 points) is more than [`DROP`] below it.
//!
//! A slowdown is called throttling only when nothing else explains it ([`verdict`]): on a
//! software adapter the CPU runs the kernels, so the chart shows the CPU's load; when a fixed
//! piece of CPU work (the control) also took longer at the end, other programs were competing
//! for the machine; when the first points already varied by more than [`DROP`], a 10 % drop is
//! inside the noise. Each of those is "can't tell here", with its reason.

/// A drop larger than this fraction of the early median counts as throttling.
pub const DROP: f64 = 0.10;
/// Shortest and longest sustained run the widget accepts, in seconds.
pub const MIN_SECONDS: u32 = 2;
pub const MAX_SECONDS: u32 = 300;
/// Fewest points before a verdict is given.
pub const MIN_POINTS: usize = 6;

/// One timed chunk: when it ended (s since the start) and its rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub t_s: f64,
    pub gflops: f64,
}

pub use numbers::median;

/// Points in the early (and late) window: a fifth of them, at least 3, at most all.
pub fn early_count(n: usize) -> usize {
    (n / 5).max(3).min(n)
}

/// What the series says.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub early_median: f64,
    /// Median of the last window; None until [`MIN_POINTS`] points exist.
    pub late_median: Option<f64>,
    /// 1 − late / early (positive = slower at the end).
    pub drop: Option<f64>,
    pub throttled: bool,
    /// Indices of points more than [`DROP`] below the early median.
    pub low: Vec<usize>,
}

pub fn analyse(points: &[Point]) -> Option<Analysis> {
    let rates: Vec<f64> = points.iter().map(|p| p.gflops).collect();
    let e = early_count(rates.len());
    let early_median = median(&rates[..e])?;
    if early_median <= 0.0 {
        return None;
    }
    let late_median = (rates.len() >= MIN_POINTS)
        .then(|| median(&rates[rates.len() - e..]))
        .flatten();
    let drop = late_median.map(|l| 1.0 - l / early_median);
    let threshold = early_median * (1.0 - DROP);
    Some(Analysis {
        early_median,
        late_median,
        drop,
        throttled: drop.is_some_and(|d| d > DROP),
        low: rates
            .iter()
            .enumerate()
            .filter(|(_, r)| **r < threshold)
            .map(|(i, _)| i)
            .collect(),
    })
}

/// Why a slowdown cannot be called throttling here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Doubt {
    /// The adapter is a software renderer: the CPU ran the kernels.
    SoftwareAdapter,
    /// The control (fixed CPU work timed before and after the load) took this fraction
    /// longer at the end: the machine was busy with something else.
    CpuBusy { control_slowdown: f64 },
    /// The early points varied by this fraction of their median (max − min): more than the
    /// drop a verdict needs.
    NoisyStart { spread: f64 },
}

/// The lesson's conclusion about a finished run; `drop` as in [`Analysis`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    Steady { drop: f64 },
    Throttled { drop: f64 },
    CantTell { drop: f64, doubt: Doubt },
}

/// The verdict on a finished run, None before [`MIN_POINTS`] points. `control_ms` is the
/// control's time before and after the load, when it was measured.
pub fn verdict(
    points: &[Point],
    software: bool,
    control_ms: Option<(f64, f64)>,
) -> Option<Verdict> {
    let a = analyse(points)?;
    let drop = a.drop?;
    if software {
        return Some(Verdict::CantTell {
            drop,
            doubt: Doubt::SoftwareAdapter,
        });
    }
    if !a.throttled {
        return Some(Verdict::Steady { drop });
    }
    if let Some((before, after)) = control_ms.filter(|(b, a)| *b > 0.0 && a.is_finite()) {
        let control_slowdown = after / before - 1.0;
        if control_slowdown > DROP {
            return Some(Verdict::CantTell {
                drop,
                doubt: Doubt::CpuBusy { control_slowdown },
            });
        }
    }
    let early: Vec<f64> = points[..early_count(points.len())]
        .iter()
        .map(|p| p.gflops)
        .collect();
    let (lo, hi) = early.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &g| {
        (lo.min(g), hi.max(g))
    });
    let spread = (hi - lo) / a.early_median;
    if spread > DROP {
        return Some(Verdict::CantTell {
            drop,
            doubt: Doubt::NoisyStart { spread },
        });
    }
    Some(Verdict::Throttled { drop })
}

/// Repetitions of the matmul per point so that a point takes about `target_ms`, from the time
/// of one: at least 1, at most 10,000.
pub fn reps_for(one_ms: f64, target_ms: f64) -> u32 {
    if !(one_ms.is_finite() && one_ms > 0.0) {
        return 1;
    }
    (target_ms / one_ms).ceil().clamp(1.0, 10_000.0) as u32
}

/// Chart geometry in a `w × h` box with a margin for the axes: the polyline's points, the
/// y of the early median and of the throttling threshold, and the axis maxima.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub points: Vec<(f64, f64)>,
    pub median_y: Option<f64>,
    pub threshold_y: Option<f64>,
    pub max_gflops: f64,
    pub max_s: f64,
}

/// Plot area: x from `left` to `w − 8`, y from 8 to `h − bottom`.
pub fn chart(points: &[Point], seconds: f64, w: f64, h: f64, left: f64, bottom: f64) -> Chart {
    let max_rate = points
        .iter()
        .map(|p| p.gflops)
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max);
    let max_gflops = nice_ceiling(max_rate * 1.1);
    let max_s = seconds.max(points.last().map_or(0.0, |p| p.t_s)).max(1e-9);
    let (x0, x1, y0, y1) = (left, w - 8.0, h - bottom, 8.0);
    let x = |t: f64| x0 + (x1 - x0) * (t / max_s).clamp(0.0, 1.0);
    let y = |r: f64| y0 - (y0 - y1) * (r / max_gflops).clamp(0.0, 1.0);
    let a = analyse(points);
    Chart {
        points: points.iter().map(|p| (x(p.t_s), y(p.gflops))).collect(),
        median_y: a.as_ref().map(|a| y(a.early_median)),
        threshold_y: a.as_ref().map(|a| y(a.early_median * (1.0 - DROP))),
        max_gflops,
        max_s,
    }
}

/// 1, 2 or 5 times a power of ten, at least `x` (1 for x ≤ 0).
pub fn nice_ceiling(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= x * (1.0 - 1e-12) {
            return m * p;
        }
    }
    10.0 * p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(rates: &[f64]) -> Vec<Point> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &g)| Point {
                t_s: (i + 1) as f64,
                gflops: g,
            })
            .collect()
    }

    #[test]
    fn windows() {
        assert_eq!(early_count(2), 2);
        assert_eq!(early_count(6), 3);
        assert_eq!(early_count(20), 4);
        assert_eq!(early_count(60), 12);
    }

    #[test]
    fn steady_run_does_not_throttle() {
        // Early median of 100, 102, 98 is 100; the last three 97, 99, 101 → 99: a 1 % drop.
        let a = analyse(&series(&[100.0, 102.0, 98.0, 97.0, 99.0, 101.0])).expect("points");
        assert_eq!(a.early_median, 100.0);
        assert_eq!(a.late_median, Some(99.0));
        assert!((a.drop.unwrap_or(0.0) - 0.01).abs() < 1e-12);
        assert!(!a.throttled);
        assert!(a.low.is_empty());
    }

    #[test]
    fn drop_of_more_than_ten_percent_throttles() {
        // Early 100; late median 85: a 15 % drop. Points below 90 are flagged.
        let a = analyse(&series(&[
            100.0, 100.0, 100.0, 95.0, 85.0, 84.0, 85.0, 86.0,
        ]))
        .expect("points");
        assert_eq!(a.late_median, Some(85.0));
        assert!(a.throttled);
        assert_eq!(a.low, vec![4, 5, 6, 7]);
        // Exactly 10 % is not more than 10 %.
        let b = analyse(&series(
            &[100.0; 3]
                .iter()
                .chain(&[90.0; 3])
                .copied()
                .collect::<Vec<_>>(),
        ))
        .expect("points");
        assert!(!b.throttled);
        assert!(b.low.is_empty());
    }

    #[test]
    fn too_few_points_give_no_verdict() {
        let a = analyse(&series(&[100.0, 50.0])).expect("points");
        assert_eq!(a.early_median, 75.0);
        assert_eq!(a.late_median, None);
        assert!(!a.throttled);
        assert!(analyse(&[]).is_none());
        assert!(analyse(&series(&[0.0, 0.0, 0.0])).is_none());
    }

    #[test]
    fn a_slowdown_is_throttling_only_when_nothing_else_explains_it() {
        // 100 → 80: a 20 % drop, early points within 2 %.
        let slow = series(&[100.0, 101.0, 99.0, 90.0, 85.0, 80.0, 80.0, 80.0]);
        let drop = 0.2;
        let near = |v: Option<Verdict>, want: Verdict| match (v, want) {
            (Some(Verdict::Throttled { drop: d }), Verdict::Throttled { .. }) => {
                (d - drop).abs() < 1e-9
            }
            (Some(Verdict::CantTell { doubt, .. }), Verdict::CantTell { doubt: w, .. }) => {
                std::mem::discriminant(&doubt) == std::mem::discriminant(&w)
            }
            _ => false,
        };
        let tell = |doubt| Verdict::CantTell { drop, doubt };
        assert!(near(
            verdict(&slow, false, Some((10.0, 10.5))),
            Verdict::Throttled { drop }
        ));
        assert!(near(
            verdict(&slow, false, None),
            Verdict::Throttled { drop }
        ));
        // The same series on a software adapter, or with the CPU control 30 % slower.
        assert!(near(
            verdict(&slow, true, None),
            tell(Doubt::SoftwareAdapter)
        ));
        assert!(matches!(
            verdict(&slow, false, Some((10.0, 13.0))),
            Some(Verdict::CantTell {
                doubt: Doubt::CpuBusy { control_slowdown },
                ..
            }) if (control_slowdown - 0.3).abs() < 1e-9
        ));
        // Early points spread by 30 %: a 20 % drop is inside the noise.
        let noisy = series(&[100.0, 130.0, 100.0, 90.0, 85.0, 80.0, 80.0, 80.0]);
        assert!(matches!(
            verdict(&noisy, false, None),
            Some(Verdict::CantTell {
                doubt: Doubt::NoisyStart { spread },
                ..
            }) if (spread - 0.3).abs() < 1e-9
        ));
        // Steady stays steady on hardware, and is "can't tell" on a software adapter.
        let steady = series(&[100.0; 8]);
        assert_eq!(
            verdict(&steady, false, Some((10.0, 20.0))),
            Some(Verdict::Steady { drop: 0.0 })
        );
        assert!(matches!(
            verdict(&steady, true, None),
            Some(Verdict::CantTell {
                doubt: Doubt::SoftwareAdapter,
                ..
            })
        ));
        assert_eq!(verdict(&slow[..5], false, None), None, "too few points");
    }

    #[test]
    fn reps() {
        assert_eq!(reps_for(10.0, 500.0), 50);
        assert_eq!(reps_for(600.0, 500.0), 1);
        assert_eq!(reps_for(0.0, 500.0), 1);
        assert_eq!(reps_for(1e-6, 500.0), 10_000);
    }

    #[test]
    fn chart_geometry() {
        assert_eq!(nice_ceiling(110.0), 200.0);
        assert_eq!(nice_ceiling(45.0), 50.0);
        assert_eq!(nice_ceiling(1.0), 1.0);
        let c = chart(
            &series(&[100.0, 100.0, 100.0]),
            10.0,
            600.0,
            300.0,
            50.0,
            30.0,
        );
        assert_eq!(c.max_gflops, 200.0);
        // x: 50 + 542 · t/10; y: 270 − 262 · r/200.
        assert_eq!(c.points[0], (50.0 + 54.2, 270.0 - 131.0));
        assert_eq!(c.median_y, Some(139.0));
        assert!((c.threshold_y.unwrap_or(0.0) - (270.0 - 262.0 * 0.45)).abs() < 1e-9);
    }
}
