//! Geometry of the sweep's log-log chart of time against N (pure; the component draws SVG).
//! The chart is drawn at its rendered width (one viewBox unit = one CSS px), so its 13 px
//! ticks stay 13 px on a phone; x ticks that would touch there are left out.

use crate::diagram::{text_width, thin_ticks};

/// Chart width before the page has measured it, the narrowest drawn, the height, and the
/// margins (room for the axis labels), in viewBox units.
pub const WIDTH: f64 = 640.0;
pub const MIN_WIDTH: f64 = 260.0;
pub const HEIGHT: f64 = 360.0;
pub const LEFT: f64 = 64.0;
pub const RIGHT: f64 = 16.0;
pub const TOP: f64 = 16.0;
pub const BOTTOM: f64 = 44.0;

/// Maps N (x) and milliseconds (y) to chart coordinates, both on log scales.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLog {
    width: f64,
    x_min: f64,
    x_max: f64,
    /// Whole decades around the data.
    y_min: f64,
    y_max: f64,
}

impl LogLog {
    /// A plot spanning `xs` (sizes) and the finite positive values of `ys` (times).
    pub fn new(xs: &[f64], ys: &[f64]) -> Self {
        let pos = |v: &&f64| v.is_finite() && **v > 0.0;
        let x_min = xs.iter().filter(pos).copied().fold(f64::INFINITY, f64::min);
        let x_max = xs.iter().filter(pos).copied().fold(0.0, f64::max);
        let y_lo = ys.iter().filter(pos).copied().fold(f64::INFINITY, f64::min);
        let y_hi = ys.iter().filter(pos).copied().fold(0.0, f64::max);
        let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
            (x_min, x_max)
        } else if x_min.is_finite() {
            (x_min / 2.0, x_min * 2.0)
        } else {
            (1.0, 10.0)
        };
        let (y_min, y_max) = if y_lo.is_finite() && y_hi > 0.0 {
            let lo = 10f64.powf(y_lo.log10().floor());
            let hi = 10f64.powf(y_hi.log10().ceil());
            (lo, if hi > lo { hi } else { lo * 10.0 })
        } else {
            (0.01, 1000.0)
        };
        Self {
            width: WIDTH,
            x_min,
            x_max,
            y_min,
            y_max,
        }
    }

    /// The same plot drawn `width` wide (the rendered width; `None` until measured).
    pub fn at_width(mut self, width: Option<f64>) -> Self {
        self.width = crate::diagram::drawn_width(width, WIDTH, MIN_WIDTH);
        self
    }

    pub fn width(&self) -> f64 {
        self.width
    }

    /// Right end of the plot area.
    pub fn right(&self) -> f64 {
        self.width - RIGHT
    }

    pub fn x(&self, n: f64) -> f64 {
        let t = (n.ln() - self.x_min.ln()) / (self.x_max.ln() - self.x_min.ln());
        LEFT + t * (self.right() - LEFT)
    }

    /// Which sizes' tick labels to draw, at `font_px`, so that none touch.
    pub fn x_tick_labels(&self, sizes: &[u32], font_px: f64) -> Vec<bool> {
        let xs: Vec<f64> = sizes.iter().map(|&n| self.x(n as f64)).collect();
        let ws: Vec<f64> = sizes
            .iter()
            .map(|n| text_width(&n.to_string(), font_px))
            .collect();
        thin_ticks(&xs, &ws, font_px / 2.0)
    }

    /// Where a label `label_w` wide goes beside the vertical line at `x`: right of it, or
    /// left of it (`true`: anchored at its end) where it would run past the plot.
    pub fn beside(&self, x: f64, label_w: f64) -> (f64, bool) {
        if x + 4.0 + label_w > self.width - 2.0 && x - 4.0 - label_w >= LEFT {
            (x - 4.0, true)
        } else {
            (x + 4.0, false)
        }
    }

    pub fn y(&self, ms: f64) -> f64 {
        let t = (ms.ln() - self.y_min.ln()) / (self.y_max.ln() - self.y_min.ln());
        HEIGHT - BOTTOM - t * (HEIGHT - TOP - BOTTOM)
    }

    /// Gridlines: every decade of the y range (0.01, 0.1, 1, … ms).
    pub fn y_ticks(&self) -> Vec<f64> {
        let (a, b) = (
            self.y_min.log10().round() as i32,
            self.y_max.log10().round() as i32,
        );
        (a..=b).map(|e| 10f64.powi(e)).collect()
    }

    /// A point's dot, None where the path has a gap (a missing or non-positive time: a run
    /// the timer measured as 0 ms has no place on a log scale).
    pub fn dot(&self, n: f64, ms: Option<f64>) -> Option<(f64, f64)> {
        ms.filter(|v| v.is_finite() && *v > 0.0)
            .map(|v| (self.x(n), self.y(v)))
    }

    /// The SVG path through the points, skipping gaps (missing or non-positive values).
    pub fn path(&self, points: &[(f64, Option<f64>)]) -> String {
        let mut d = String::new();
        let mut pen_down = false;
        for &(n, ms) in points {
            match ms.filter(|v| v.is_finite() && *v > 0.0) {
                Some(v) => {
                    let cmd = if pen_down { 'L' } else { 'M' };
                    d.push_str(&format!("{cmd}{:.1},{:.1} ", self.x(n), self.y(v)));
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        d.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_ranges_hit_the_plot_edges() {
        let p = LogLog::new(&[16.0, 2048.0], &[0.05, 3000.0]);
        assert!((p.x(16.0) - LEFT).abs() < 1e-9);
        assert!((p.x(2048.0) - (WIDTH - RIGHT)).abs() < 1e-9);
        assert_eq!(p.y_ticks(), [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert!((p.y(0.01) - (HEIGHT - BOTTOM)).abs() < 1e-9);
        assert!((p.y(10000.0) - TOP).abs() < 1e-9);
        // Log scale: each doubling of N is the same distance.
        let d1 = p.x(32.0) - p.x(16.0);
        let d2 = p.x(1024.0) - p.x(512.0);
        assert!((d1 - d2).abs() < 1e-9);
    }

    #[test]
    fn a_phone_width_keeps_the_plot_inside_and_thins_the_ticks() {
        let sizes: Vec<u32> = (4..=12).map(|p| 1u32 << p).collect();
        let xs: Vec<f64> = sizes.iter().map(|&n| n as f64).collect();
        let wide = LogLog::new(&xs, &[1.0, 10.0]);
        assert_eq!(wide.width(), WIDTH);
        assert!(wide.x_tick_labels(&sizes, 13.0).iter().all(|&k| k));
        let phone = LogLog::new(&xs, &[1.0, 10.0]).at_width(Some(330.0));
        assert!((phone.x(4096.0) - (330.0 - RIGHT)).abs() < 1e-9);
        let keep = phone.x_tick_labels(&sizes, 13.0);
        assert!(keep[0] && keep[sizes.len() - 1]);
        assert!(keep.iter().filter(|&&k| k).count() < sizes.len());
        // Never narrower than the narrowest drawn.
        assert_eq!(wide.clone().at_width(Some(100.0)).width(), MIN_WIDTH);
        // A label near the right edge goes left of its line.
        assert_eq!(phone.beside(300.0, 100.0), (296.0, true));
        assert_eq!(phone.beside(100.0, 100.0), (104.0, false));
    }

    #[test]
    fn paths_break_at_gaps_and_degenerate_input_is_safe() {
        let p = LogLog::new(&[16.0, 32.0, 64.0], &[1.0, 2.0]);
        let d = p.path(&[(16.0, Some(1.0)), (32.0, None), (64.0, Some(2.0))]);
        assert_eq!(d.matches('M').count(), 2);
        assert_eq!(d.matches('L').count(), 0);
        let empty = LogLog::new(&[], &[]);
        assert!(empty.x(5.0).is_finite() && empty.y(1.0).is_finite());
        let one = LogLog::new(&[64.0], &[f64::NAN, 0.0, 3.0]);
        assert!(one.x(64.0).is_finite() && one.y(3.0).is_finite());
    }

    #[test]
    fn dots_skip_what_the_path_skips() {
        let p = LogLog::new(&[16.0, 64.0], &[0.0, 2.0]);
        assert_eq!(
            p.dot(16.0, Some(0.0)),
            None,
            "0 ms has no place on a log scale"
        );
        assert_eq!(p.dot(16.0, None), None);
        assert_eq!(p.dot(16.0, Some(f64::INFINITY)), None);
        let (x, y) = p.dot(64.0, Some(2.0)).expect("a positive time has a dot");
        assert!(x.is_finite() && y.is_finite());
    }
}
