//! Geometry of the ladder's GFLOP/s bar chart (pure; the component only draws it as SVG).
//! The chart is drawn at its rendered width, so its 12 px text stays 12 px on a phone; below
//! [`STACK_BELOW`] a row's label goes above its bar instead of beside it.

/// One row, in chart units (the SVG's viewBox, = CSS px).
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The bar.
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// Baseline of the row's label and of its value.
    pub label_y: f64,
    pub value_y: f64,
}

/// Chart width before the page has measured it, and the narrowest drawn.
pub const WIDTH: f64 = 640.0;
pub const MIN_WIDTH: f64 = 240.0;
/// Narrower than this, labels go above the bars.
pub const STACK_BELOW: f64 = 560.0;
pub const LABEL_WIDTH: f64 = 200.0;
pub const VALUE_WIDTH: f64 = 150.0;
pub const ROW_HEIGHT: f64 = 30.0;
pub const STACKED_ROW_HEIGHT: f64 = 42.0;
pub const BAR_HEIGHT: f64 = 20.0;
pub const STACKED_BAR_HEIGHT: f64 = 14.0;

/// How the rows are laid out at one width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    /// Label above the bar, value right-aligned on the label's line.
    pub stacked: bool,
}

impl Layout {
    /// The layout at a rendered width (`None` until measured).
    pub fn at(width: Option<f64>) -> Self {
        let width = width.unwrap_or(WIDTH).max(MIN_WIDTH);
        Layout {
            width,
            stacked: width < STACK_BELOW,
        }
    }

    fn row_height(&self) -> f64 {
        if self.stacked {
            STACKED_ROW_HEIGHT
        } else {
            ROW_HEIGHT
        }
    }

    /// Where the bars start and how long the longest is.
    fn span(&self) -> (f64, f64) {
        if self.stacked {
            (0.0, self.width)
        } else {
            (LABEL_WIDTH, self.width - LABEL_WIDTH - VALUE_WIDTH)
        }
    }

    /// Where the value text starts (wide) or ends (stacked, `text-anchor: end`).
    pub fn value_x(&self) -> f64 {
        if self.stacked {
            self.width
        } else {
            self.width - VALUE_WIDTH + 6.0
        }
    }

    /// Total height of a chart with `rows` rows.
    pub fn height(&self, rows: usize) -> f64 {
        rows.max(1) as f64 * self.row_height()
    }
}

/// Rows for `values` (non-finite or negative values get no bar), scaled so the largest fills
/// the space the layout leaves for bars.
pub fn bars(values: &[f64], layout: &Layout) -> Vec<Bar> {
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(0.0, f64::max);
    let (x, span) = layout.span();
    let row = layout.row_height();
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let top = i as f64 * row;
            let width = if max > 0.0 && v.is_finite() && v > 0.0 {
                (v / max * span).max(1.0)
            } else {
                0.0
            };
            if layout.stacked {
                Bar {
                    x,
                    y: top + 20.0,
                    width,
                    height: STACKED_BAR_HEIGHT,
                    label_y: top + 15.0,
                    value_y: top + 15.0,
                }
            } else {
                let label_y = top + (ROW_HEIGHT - BAR_HEIGHT) / 2.0 + BAR_HEIGHT * 0.75;
                Bar {
                    x,
                    y: top + (ROW_HEIGHT - BAR_HEIGHT) / 2.0,
                    width,
                    height: BAR_HEIGHT,
                    label_y,
                    value_y: label_y,
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_fills_the_span_and_bad_values_get_nothing() {
        let wide = Layout::at(None);
        assert!(!wide.stacked);
        let b = bars(&[1.0, 4.0, f64::NAN, -2.0, 2.0], &wide);
        let span = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
        assert_eq!(b[1].width, span);
        assert_eq!(b[0].width, span / 4.0);
        assert_eq!(b[2].width, 0.0);
        assert_eq!(b[3].width, 0.0);
        assert_eq!(b[4].y, 4.0 * ROW_HEIGHT + 5.0);
        assert!(bars(&[], &wide).is_empty());
        assert_eq!(bars(&[0.0], &wide)[0].width, 0.0);
    }

    #[test]
    fn a_phone_width_stacks_labels_above_full_width_bars() {
        let phone = Layout::at(Some(350.0));
        assert!(phone.stacked);
        let b = bars(&[2.0, 1.0], &phone);
        assert_eq!((b[0].x, b[0].width), (0.0, 350.0));
        assert_eq!(b[1].width, 175.0);
        // The label sits above its bar, inside its own row.
        assert!(b[1].label_y < b[1].y && b[1].y + b[1].height <= phone.height(2));
        assert_eq!(phone.value_x(), 350.0);
        // Never narrower than the narrowest drawn.
        assert_eq!(Layout::at(Some(10.0)).width, MIN_WIDTH);
    }
}

/// How much a chart's text must grow, in viewBox units, to render at its CSS size when a
/// viewBox `view_w` wide is shown `css_w` px wide (1 when not scaled down or not measured).
pub fn text_scale(view_w: f64, css_w: Option<f64>) -> f64 {
    match css_w {
        Some(c) if c > 0.0 && view_w.is_finite() => (view_w / c).max(1.0),
        _ => 1.0,
    }
}

#[cfg(test)]
mod scale_tests {
    use super::text_scale;

    #[test]
    fn text_grows_only_when_the_chart_is_scaled_down() {
        assert_eq!(text_scale(476.0, Some(340.0)), 1.4);
        assert_eq!(text_scale(476.0, Some(600.0)), 1.0);
        assert_eq!(text_scale(476.0, None), 1.0);
        assert_eq!(text_scale(476.0, Some(0.0)), 1.0);
    }
}
