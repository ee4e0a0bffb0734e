//! Pure geometry and pixels of the train view's pictures: the decision-boundary image (a tiny
//! BMP in a data URL, so the heatmap is one SVG element however fine the grid), chart paths
//! and colours. No DOM here, so it is unit-tested natively.

use crate::diagram::{text_width, thin_ticks};

/// Class colours (class 0 orange, class 1 blue), as in the points and the heatmap.
pub const CLASS0: [u8; 3] = [0xe8, 0x7d, 0x1e];
pub const CLASS1: [u8; 3] = [0x1f, 0x6f, 0xb5];

pub fn css(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// Colour of probability `p` of class 1: white at ½, towards a class colour as the network
/// becomes sure.
pub fn heat_colour(p: f32) -> [u8; 3] {
    let p = if p.is_finite() {
        p.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let t = (p * 2.0 - 1.0).abs() * 0.85;
    let target = if p >= 0.5 { CLASS1 } else { CLASS0 };
    let mix = |w: u8, c: u8| (w as f32 + (c as f32 - w as f32) * t).round() as u8;
    [
        mix(255, target[0]),
        mix(255, target[1]),
        mix(255, target[2]),
    ]
}

/// Where a network output falls on the heat colours: two logits → the class-1 probability;
/// one regression output z → (z + 1) / 2, so −1 is orange, 0 white and +1 blue.
pub fn output_shade(z: &[f32]) -> f32 {
    match z {
        [a, b] => mlp::net::prob_class1(*a, *b),
        [v] => (v + 1.0) / 2.0,
        _ => 0.5,
    }
}

/// A 24-bit BMP of a `side` × `side` picture given row by row from the top.
pub fn bmp(side: usize, pixels: &[[u8; 3]]) -> Vec<u8> {
    let row_bytes = (side * 3).div_ceil(4) * 4;
    let data_len = row_bytes * side;
    let file_len = 54 + data_len;
    let mut out = Vec::with_capacity(file_len);
    out.extend_from_slice(b"BM");
    out.extend_from_slice(&(file_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&54u32.to_le_bytes());
    out.extend_from_slice(&40u32.to_le_bytes());
    out.extend_from_slice(&(side as i32).to_le_bytes());
    // Negative height: rows stored top-down.
    out.extend_from_slice(&(-(side as i32)).to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&24u16.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(data_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 16]);
    for row in 0..side {
        for col in 0..side {
            let c = pixels.get(row * side + col).copied().unwrap_or([255; 3]);
            out.extend_from_slice(&[c[2], c[1], c[0]]);
        }
        out.resize(out.len() + row_bytes - side * 3, 0);
    }
    out
}

pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The heatmap of class-1 probabilities (row by row from the top) as a data URL.
pub fn heat_url(side: usize, probs: &[f32]) -> String {
    let px: Vec<[u8; 3]> = probs.iter().map(|&p| heat_colour(p)).collect();
    format!("data:image/bmp;base64,{}", base64(&bmp(side, &px)))
}

/// The point of the input plane (±`extent` on both axes, y up) under a click at client
/// coordinates (`cx`, `cy`) on a picture whose own box on the page is (`left`, `top`, `width`,
/// `height`) — `getBoundingClientRect`, which already includes CSS zoom and scrolling. The
/// picture is a square viewBox drawn "meet": a box that is not square shows it centred, so the
/// square's side is the shorter edge. `None` for an empty box or a click outside the square.
pub fn plane_point(
    (left, top, width, height): (f64, f64, f64, f64),
    (cx, cy): (f64, f64),
    extent: f64,
) -> Option<(f64, f64)> {
    let side = width.min(height);
    if !(side.is_finite() && side > 0.0 && cx.is_finite() && cy.is_finite()) {
        return None;
    }
    let fx = (cx - left - (width - side) / 2.0) / side;
    let fy = (cy - top - (height - side) / 2.0) / side;
    if !((0.0..=1.0).contains(&fx) && (0.0..=1.0).contains(&fy)) {
        return None;
    }
    Some(((fx * 2.0 - 1.0) * extent, (1.0 - fy * 2.0) * extent))
}

/// Where a neuron's output `v` falls on the heat colours (0 orange … ½ white … 1 blue): tanh
/// and linear/ReLU outputs around 0, sigmoid's around ½. Linear and ReLU outputs are unbounded,
/// so they are scaled by the largest |v| the neuron reaches on the plane (`scale`).
pub fn neuron_shade(act: mlp::Activation, v: f32, scale: f32) -> f32 {
    use mlp::Activation;
    match act {
        Activation::Sigmoid => v,
        Activation::Tanh => (v + 1.0) / 2.0,
        Activation::Relu | Activation::Linear => 0.5 + 0.5 * v / scale.max(1e-6),
    }
}

/// Every input and hidden neuron's output over a `side` × `side` grid of the plane (`grid_x`,
/// rows from the top, the network's input features), as heat pictures: index 0 holds the
/// inputs, then one entry per hidden layer. `params` are the weights drawn in the network.
pub fn neuron_pictures(
    net: &mlp::Net,
    params: &[f32],
    grid_x: &[f32],
    side: usize,
) -> Vec<Vec<String>> {
    let rows = side * side;
    if params.len() < net.layout().param_count || grid_x.len() < rows * net.inputs() {
        return Vec::new();
    }
    let acts = net.forward_all(params, grid_x, rows);
    let (offs, _) = net.act_offsets(rows);
    let hidden = net.sizes.len().saturating_sub(1);
    (0..hidden)
        .map(|l| {
            let width = net.sizes[l];
            // Inputs are drawn like linear outputs, scaled to their own range.
            let act = if l == 0 {
                mlp::Activation::Linear
            } else {
                net.activation
            };
            (0..width)
                .map(|n| {
                    let value = |b: usize| acts[offs[l] + b * width + n];
                    let scale = (0..rows).map(|b| value(b).abs()).fold(0.0f32, f32::max);
                    let px: Vec<[u8; 3]> = (0..rows)
                        .map(|b| heat_colour(neuron_shade(act, value(b), scale)))
                        .collect();
                    format!("data:image/bmp;base64,{}", base64(&bmp(side, &px)))
                })
                .collect()
        })
        .collect()
}

/// An SVG polyline through (x, y) points mapped into a box.
pub struct Frame {
    pub x0: f64,
    pub y0: f64,
    pub w: f64,
    pub h: f64,
    pub x_min: f64,
    pub x_max: f64,
    pub y_min: f64,
    pub y_max: f64,
}

impl Frame {
    pub fn x(&self, v: f64) -> f64 {
        let span = (self.x_max - self.x_min).max(1e-12);
        self.x0 + (v - self.x_min) / span * self.w
    }

    pub fn y(&self, v: f64) -> f64 {
        let span = (self.y_max - self.y_min).max(1e-12);
        self.y0 + self.h - (v - self.y_min) / span * self.h
    }

    /// Labels for `values` on a log₂ x axis at `font_px`: (x, value) for those that fit
    /// without touching (the first and the largest always).
    pub fn log2_ticks(&self, values: &[usize], font_px: f64) -> Vec<(f64, usize)> {
        let xs: Vec<f64> = values.iter().map(|&v| self.x((v as f64).log2())).collect();
        let ws: Vec<f64> = values
            .iter()
            .map(|v| text_width(&v.to_string(), font_px))
            .collect();
        let keep = thin_ticks(&xs, &ws, font_px / 2.0);
        xs.into_iter()
            .zip(values.iter().copied())
            .zip(keep)
            .filter_map(|(xv, k)| k.then_some(xv))
            .collect()
    }

    /// `points` for an SVG polyline; non-finite values are skipped.
    pub fn path(&self, pts: impl Iterator<Item = (f64, f64)>) -> String {
        pts.filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| format!("{:.1},{:.1}", self.x(x), self.y(y)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A "nice" upper bound for an axis: 1, 2 or 5 × 10ⁿ at or above `v`.
pub fn nice_ceiling(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|c| *c >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_ticks_drop_labels_that_would_touch() {
        let frame = |w: f64| Frame {
            x0: 56.0,
            y0: 10.0,
            w,
            h: 160.0,
            x_min: 0.0,
            x_max: 12.0,
            y_min: 0.0,
            y_max: 1.0,
        };
        let batches = [1, 4, 16, 64, 256, 1024, 4096];
        assert_eq!(frame(380.0).log2_ticks(&batches, 11.0).len(), 7);
        let narrow = frame(120.0).log2_ticks(&batches, 11.0);
        assert!(narrow.len() < 7);
        assert_eq!(narrow.first(), Some(&(56.0, 1)));
        assert_eq!(narrow.last(), Some(&(176.0, 4096)));
    }

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn bmp_has_header_and_padded_rows() {
        let b = bmp(3, &[[1, 2, 3]; 9]);
        assert_eq!(&b[..2], b"BM");
        assert_eq!(b.len(), 54 + 12 * 3);
        assert_eq!(&b[54..57], &[3, 2, 1]);
    }

    #[test]
    fn clicks_map_through_the_pictures_own_box() {
        let close = |a: Option<(f64, f64)>, b: (f64, f64)| {
            let a = a.expect("inside");
            assert!(
                (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9,
                "{a:?} vs {b:?}"
            );
        };
        // A 300 px square at (100, 50): centre, corners, y up.
        let r = (100.0, 50.0, 300.0, 300.0);
        close(plane_point(r, (250.0, 200.0), 6.0), (0.0, 0.0));
        close(plane_point(r, (100.0, 50.0), 6.0), (-6.0, 6.0));
        close(plane_point(r, (400.0, 350.0), 6.0), (6.0, -6.0));
        close(plane_point(r, (175.0, 275.0), 6.0), (-3.0, -3.0));
        // A wider box draws the square centred: 100 px of margin either side.
        let wide = (0.0, 0.0, 500.0, 300.0);
        close(plane_point(wide, (250.0, 150.0), 6.0), (0.0, 0.0));
        close(plane_point(wide, (100.0, 0.0), 6.0), (-6.0, 6.0));
        assert_eq!(plane_point(wide, (50.0, 150.0), 6.0), None);
        assert_eq!(plane_point((0.0, 0.0, 0.0, 0.0), (0.0, 0.0), 6.0), None);
        assert_eq!(plane_point(r, (f64::NAN, 0.0), 6.0), None);
    }

    #[test]
    fn neuron_pictures_show_each_neurons_output() {
        use mlp::data::grid_points;
        use mlp::{Activation, Feature, LossKind, Net};
        let net = Net {
            sizes: vec![2, 3, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
        };
        let side = 4;
        let grid = grid_points(side).features(&[Feature::X, Feature::Y]);
        let params = net.init_params(3);
        let pics = neuron_pictures(&net, &params, &grid, side);
        assert_eq!(pics.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 3]);
        assert!(pics[1][0].starts_with("data:image/bmp;base64,"));
        // Input x runs from orange on the left to blue on the right.
        assert_eq!(neuron_shade(Activation::Linear, -6.0, 6.0), 0.0);
        assert_eq!(neuron_shade(Activation::Linear, 6.0, 6.0), 1.0);
        assert_eq!(neuron_shade(Activation::Tanh, 0.0, 1.0), 0.5);
        assert_eq!(neuron_shade(Activation::Sigmoid, 0.25, 1.0), 0.25);
        // Too few parameters: nothing drawn rather than a panic.
        assert!(neuron_pictures(&net, &params[..3], &grid, side).is_empty());
    }

    #[test]
    fn colours_and_axes() {
        assert_eq!(heat_colour(0.5), [255, 255, 255]);
        assert_eq!(output_shade(&[0.0]), 0.5);
        assert_eq!(output_shade(&[-1.0]), 0.0);
        assert_eq!(output_shade(&[0.3, 0.3]), 0.5);
        assert_eq!(heat_colour(output_shade(&[1.0])), heat_colour(1.0));
        assert_eq!(heat_colour(f32::NAN), [255, 255, 255]);
        assert_ne!(heat_colour(1.0), heat_colour(0.0));
        assert_eq!(nice_ceiling(0.69), 1.0);
        assert_eq!(nice_ceiling(1.3), 2.0);
        assert_eq!(nice_ceiling(0.0), 1.0);
        let f = Frame {
            x0: 0.0,
            y0: 0.0,
            w: 100.0,
            h: 50.0,
            x_min: 0.0,
            x_max: 10.0,
            y_min: 0.0,
            y_max: 1.0,
        };
        assert_eq!(
            f.path([(0.0, 0.0), (10.0, 1.0), (5.0, f64::NAN)].into_iter()),
            "0.0,50.0 100.0,0.0"
        );
    }
}
