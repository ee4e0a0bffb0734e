//! Geometry of the ladder's GFLOP/s bar chart (pure; the component only draws it as SVG).

/// One bar, in chart units (the SVG's viewBox).
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// Layout constants of the chart's viewBox.
pub const WIDTH: f64 = 640.0;
pub const LABEL_WIDTH: f64 = 200.0;
pub const VALUE_WIDTH: f64 = 110.0;
pub const ROW_HEIGHT: f64 = 30.0;
pub const BAR_HEIGHT: f64 = 20.0;

/// Horizontal bars for `values` (non-finite or negative values get no bar), scaled so the
/// largest fills the space between the labels and the value column.
pub fn bars(values: &[f64]) -> Vec<Bar> {
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(0.0, f64::max);
    let span = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| Bar {
            y: i as f64 * ROW_HEIGHT + (ROW_HEIGHT - BAR_HEIGHT) / 2.0,
            width: if max > 0.0 && v.is_finite() && v > 0.0 {
                (v / max * span).max(1.0)
            } else {
                0.0
            },
            height: BAR_HEIGHT,
        })
        .collect()
}

/// Total height of a chart with `rows` rows.
pub fn height(rows: usize) -> f64 {
    rows.max(1) as f64 * ROW_HEIGHT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_fills_the_span_and_bad_values_get_nothing() {
        let b = bars(&[1.0, 4.0, f64::NAN, -2.0, 2.0]);
        let span = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
        assert_eq!(b[1].width, span);
        assert_eq!(b[0].width, span / 4.0);
        assert_eq!(b[2].width, 0.0);
        assert_eq!(b[3].width, 0.0);
        assert_eq!(b[4].y, 4.0 * ROW_HEIGHT + 5.0);
        assert!(bars(&[]).is_empty());
        assert_eq!(bars(&[0.0])[0].width, 0.0);
    }
}
