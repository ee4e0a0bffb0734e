//! "Look inside" the CNN: the confusion matrix and the digits it gets wrong from an
//! evaluation's predictions, the first conv layer's filters and one digit's feature maps as
//! grey images, and a digit drawn on a canvas turned into the network's input the way MNIST's
//! digits were made.
//!
//! Images are [`Grey`]: rows of u8, each map scaled by its own minimum and maximum so a
//! filter of small weights is as visible as one of large weights (a constant map is mid grey:
//! nothing to scale). The component turns them into pixels; nothing here knows the DOM.

use ::cnn::net::{softmax_parts, ActLayout, Inspection, LayerKind, LayerView, Net};
use ::cnn::spec::INPUT_SIDE;

/// Counts of (true class, predicted class) pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confusion {
    pub classes: usize,
    /// Row = true class, column = predicted class, row-major.
    pub counts: Vec<u32>,
    /// Pairs left out because a label or prediction was not a class.
    pub ignored: usize,
}

impl Confusion {
    /// From each sample's predicted and true class (pairs beyond the shorter list are not
    /// pairs and are left out).
    pub fn new(predicted: &[u32], truth: &[u32], classes: usize) -> Self {
        let mut counts = vec![0u32; classes * classes];
        let mut ignored = 0;
        for (&p, &t) in predicted.iter().zip(truth) {
            let (p, t) = (p as usize, t as usize);
            if p < classes && t < classes {
                counts[t * classes + p] = counts[t * classes + p].saturating_add(1);
            } else {
                ignored += 1;
            }
        }
        Self {
            classes,
            counts,
            ignored,
        }
    }

    pub fn count(&self, truth: usize, predicted: usize) -> u32 {
        if truth < self.classes && predicted < self.classes {
            self.counts[truth * self.classes + predicted]
        } else {
            0
        }
    }

    /// Samples of class `truth`.
    pub fn row_total(&self, truth: usize) -> u32 {
        (0..self.classes).map(|p| self.count(truth, p)).sum()
    }

    /// Each class's accuracy (correct ÷ its samples); None for a class with no samples
    /// rather than a 0 % nobody measured.
    pub fn per_class_accuracy(&self) -> Vec<Option<f32>> {
        (0..self.classes)
            .map(|c| {
                let total = self.row_total(c);
                (total > 0).then(|| self.count(c, c) as f32 / total as f32)
            })
            .collect()
    }

    /// Overall accuracy; None without samples.
    pub fn accuracy(&self) -> Option<f32> {
        let total: u32 = self.counts.iter().sum();
        let right: u32 = (0..self.classes).map(|c| self.count(c, c)).sum();
        (total > 0).then(|| right as f32 / total as f32)
    }
}

/// A test digit the network gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mistake {
    /// Its index in the evaluated samples.
    pub index: usize,
    pub truth: u32,
    pub predicted: u32,
    /// The softmax probability of the predicted class.
    pub confidence: f32,
}

/// The misclassified samples from an evaluation's logits (rows × `classes`) and labels, the
/// most confident mistakes first (ties by index), at most `limit`. The prediction is the
/// first largest logit, as `cnn::net::Net::evaluate` picks it.
pub fn mistakes(logits: &[f32], truth: &[u32], classes: usize, limit: usize) -> Vec<Mistake> {
    if classes == 0 {
        return Vec::new();
    }
    let mut out: Vec<Mistake> = logits
        .chunks_exact(classes)
        .zip(truth)
        .enumerate()
        .filter_map(|(index, (z, &t))| {
            let mut best = 0;
            for (j, &v) in z.iter().enumerate().skip(1) {
                if v > z[best] {
                    best = j;
                }
            }
            if best as u32 == t {
                return None;
            }
            let (m, sum) = softmax_parts(z);
            Some(Mistake {
                index,
                truth: t,
                predicted: best as u32,
                confidence: (z[best] - m).exp() / sum,
            })
        })
        .collect();
    // total_cmp: a NaN confidence (diverged logits) sorts instead of panicking.
    out.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.index.cmp(&b.index))
    });
    out.truncate(limit);
    out
}

/// A grey-level image, rows of u8 (0 black, 255 white).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grey {
    pub width: usize,
    pub height: usize,
    pub rows: Vec<Vec<u8>>,
}

/// Mid grey: the shade of a map with nothing to scale.
pub const MID_GREY: u8 = 128;

/// `values` (width × height, row by row) scaled from their own minimum (black) to maximum
/// (white). A constant map, or one without finite values, is mid grey; a value that is not
/// finite is black.
pub fn grey(values: &[f32], width: usize, height: usize) -> Grey {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let range = hi - lo;
    let shade = |v: f32| -> u8 {
        if !v.is_finite() {
            0
        } else if !(range > 0.0 && range.is_finite()) {
            MID_GREY
        } else {
            ((v - lo) / range * 255.0).round().clamp(0.0, 255.0) as u8
        }
    };
    let rows = (0..height)
        .map(|y| {
            (0..width)
                .map(|x| values.get(y * width + x).map_or(0, |&v| shade(v)))
                .collect()
        })
        .collect();
    Grey {
        width,
        height,
        rows,
    }
}

/// The first conv layer's filters as images, one per output channel (its input is the one
/// grey channel, so each filter is one K×K image); empty if `params` is not this network's.
pub fn first_filters(net: &Net, params: &[f32]) -> Vec<Grey> {
    let (Some(shape), Some(off)) = (net.shapes.first(), net.param_layout().conv.first().copied())
    else {
        return Vec::new();
    };
    let b = shape.block;
    let taps = b.c_in * b.kernel * b.kernel;
    let Some(w) = params.get(off.w..off.w + b.c_out * taps) else {
        return Vec::new();
    };
    w.chunks_exact(taps)
        // Only the first input channel: block 1 reads the single grey channel.
        .map(|f| grey(&f[..b.kernel * b.kernel], b.kernel, b.kernel))
        .collect()
}

/// One layer's maps as images, one per channel.
pub fn feature_maps(layer: &LayerView) -> Vec<Grey> {
    let px = layer.side * layer.side;
    if px == 0 {
        return Vec::new();
    }
    layer
        .values
        .chunks(px)
        .take(layer.channels)
        .map(|m| grey(m, layer.side, layer.side))
        .collect()
}

/// The layers of image `row` of an evaluation's activations read back from the GPU (the whole
/// buffer of a batch laid out as `layout`), in `Net::inspect`'s order (input, then each
/// block's conv, ReLU and pool), so the GPU's maps draw like the twin's; None if the buffer is
/// shorter than the layout or `row` is outside the batch.
pub fn layers_from_acts(
    net: &Net,
    layout: &ActLayout,
    acts: &[f32],
    row: usize,
) -> Option<Vec<LayerView>> {
    if row >= layout.batch || acts.len() < layout.len {
        return None;
    }
    let px = net.side * net.side;
    let mut layers = vec![LayerView {
        kind: LayerKind::Input,
        block: 0,
        channels: 1,
        side: net.side,
        values: acts
            .get(layout.input + row * px..layout.input + (row + 1) * px)?
            .to_vec(),
    }];
    for (i, (s, a)) in net.shapes.iter().zip(&layout.blocks).enumerate() {
        let c = s.block.c_out;
        for (kind, side, off) in [
            (LayerKind::Conv, s.conv_side, a.conv),
            (LayerKind::Relu, s.conv_side, a.relu),
            (LayerKind::Pool, s.pool_side, a.pool),
        ] {
            let len = c * side * side;
            layers.push(LayerView {
                kind,
                block: i + 1,
                channels: c,
                side,
                values: acts.get(off + row * len..off + (row + 1) * len)?.to_vec(),
            });
        }
    }
    Some(layers)
}

/// How a canvas's pixels are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// 4 bytes a pixel; the ink is the alpha (the canvas starts transparent and strokes are
    /// opaque, whatever colour the theme draws them in).
    Rgba,
    /// 1 byte a pixel, the ink itself.
    Alpha,
}

/// A drawing that is not a digit yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrawError {
    /// No ink at all: the page says "nothing drawn", never a prediction.
    NothingDrawn,
    /// The bytes are not width × height pixels of that kind (or a side is 0).
    Size {
        width: usize,
        height: usize,
        bytes: usize,
    },
    /// The parameters are not this network's (a readback of a replaced network): nothing
    /// to classify with until the next one arrives.
    NoNetwork,
}

impl DrawError {
    pub fn key(&self) -> &'static str {
        match self {
            DrawError::NothingDrawn => "cnn.draw.empty",
            DrawError::Size { .. } => "cnn.draw.size",
            DrawError::NoNetwork => "cnn.draw.no_network",
        }
    }
}

/// MNIST's digits were scaled to fit a 20×20 box, keeping their aspect, then placed in the
/// 28×28 image with their centre of mass at its centre.
pub const BOX: usize = 20;

/// One axis of an area-average resampling from `src` pixels to `dst`: for each target pixel,
/// the source pixels it covers and how much of each (the weights of a pixel sum to 1).
fn area_weights(src: usize, dst: usize) -> Vec<Vec<(usize, f32)>> {
    let scale = src as f64 / dst as f64;
    (0..dst)
        .map(|t| {
            let (a, b) = (t as f64 * scale, (t + 1) as f64 * scale);
            let first = a.floor() as usize;
            let last = (b.ceil() as usize).min(src);
            (first..last)
                .filter_map(|s| {
                    let cover = (b.min(s as f64 + 1.0) - a.max(s as f64)) / scale;
                    (cover > 0.0).then_some((s, cover as f32))
                })
                .collect()
        })
        .collect()
}

/// A drawn digit as the network's input: the ink's bounding box scaled (area average) to fit
/// [`BOX`]×[`BOX`] keeping its aspect, placed in a 28×28 image with its centre of mass at the
/// centre (shifted by whole pixels, as MNIST's were), values in [0, 1], row by row.
pub fn drawn_digit(
    bytes: &[u8],
    width: usize,
    height: usize,
    kind: Pixels,
) -> Result<Vec<f32>, DrawError> {
    let per = match kind {
        Pixels::Rgba => 4,
        Pixels::Alpha => 1,
    };
    let size_error = DrawError::Size {
        width,
        height,
        bytes: bytes.len(),
    };
    if width == 0
        || height == 0
        || width.checked_mul(height).and_then(|n| n.checked_mul(per)) != Some(bytes.len())
    {
        return Err(size_error);
    }
    let ink = |x: usize, y: usize| f32::from(bytes[(y * width + x) * per + per - 1]) / 255.0;
    // The ink's bounding box.
    let (mut x0, mut y0, mut x1, mut y1) = (width, height, 0, 0);
    for y in 0..height {
        for x in 0..width {
            if ink(x, y) > 0.0 {
                (x0, y0) = (x0.min(x), y0.min(y));
                (x1, y1) = (x1.max(x + 1), y1.max(y + 1));
            }
        }
    }
    if x1 == 0 {
        return Err(DrawError::NothingDrawn);
    }
    let (bw, bh) = (x1 - x0, y1 - y0);
    // The longer side becomes BOX; the other keeps the aspect (at least one pixel).
    let longest = bw.max(bh);
    let sw = ((bw * BOX) as f64 / longest as f64).round().max(1.0) as usize;
    let sh = ((bh * BOX) as f64 / longest as f64).round().max(1.0) as usize;
    let (wx, wy) = (area_weights(bw, sw), area_weights(bh, sh));
    let mut small = vec![0.0f32; sw * sh];
    for (ty, row_w) in wy.iter().enumerate() {
        for (tx, col_w) in wx.iter().enumerate() {
            let mut acc = 0.0f32;
            for &(sy, fy) in row_w {
                for &(sx, fx) in col_w {
                    acc += ink(x0 + sx, y0 + sy) * fy * fx;
                }
            }
            small[ty * sw + tx] = acc.clamp(0.0, 1.0);
        }
    }
    // Centre of mass, pixel centres at i + ½; the scaled box always has ink.
    let (mut mass, mut mx, mut my) = (0.0f64, 0.0f64, 0.0f64);
    for y in 0..sh {
        for x in 0..sw {
            let v = f64::from(small[y * sw + x]);
            mass += v;
            mx += v * (x as f64 + 0.5);
            my += v * (y as f64 + 0.5);
        }
    }
    if mass <= 0.0 {
        return Err(DrawError::NothingDrawn);
    }
    let centre = INPUT_SIDE as f64 / 2.0;
    let dx = (centre - mx / mass).round() as i64;
    let dy = (centre - my / mass).round() as i64;
    let mut out = vec![0.0f32; INPUT_SIDE * INPUT_SIDE];
    for y in 0..sh {
        for x in 0..sw {
            let (tx, ty) = (x as i64 + dx, y as i64 + dy);
            // A lopsided stroke's centring may push the box's edge out: that part is cut.
            if (0..INPUT_SIDE as i64).contains(&tx) && (0..INPUT_SIDE as i64).contains(&ty) {
                out[ty as usize * INPUT_SIDE + tx as usize] = small[y * sw + x];
            }
        }
    }
    Ok(out)
}

/// A drawn digit classified by `net` with `params` (the GPU's last readback, or the CPU
/// trainer's): the class, every probability and each layer's maps; the drawing's own error
/// (nothing drawn) passes through, so an empty canvas is never a prediction.
pub fn classify(
    net: &Net,
    params: &[f32],
    drawn: Result<Vec<f32>, DrawError>,
) -> Result<Inspection, DrawError> {
    let image = drawn?;
    // The twin indexes the parameters by its layout: a shorter buffer would be out of range.
    if params.len() != net.param_layout().len {
        return Err(DrawError::NoNetwork);
    }
    net.inspect(params, &image).ok_or(DrawError::Size {
        width: INPUT_SIDE,
        height: INPUT_SIDE,
        bytes: image.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::cnn::Spec;

    #[test]
    fn a_three_class_confusion_matrix_counts_by_hand() {
        // truth:     0 0 0 1 1 2 2 2 2
        // predicted: 0 0 1 1 2 2 2 0 2
        let truth = [0, 0, 0, 1, 1, 2, 2, 2, 2];
        let predicted = [0, 0, 1, 1, 2, 2, 2, 0, 2];
        let c = Confusion::new(&predicted, &truth, 3);
        assert_eq!(c.counts, vec![2, 1, 0, 0, 1, 1, 1, 0, 3]);
        assert_eq!((c.count(2, 0), c.count(0, 2), c.count(9, 0)), (1, 0, 0));
        assert_eq!(c.row_total(2), 4);
        assert_eq!(
            c.per_class_accuracy(),
            vec![Some(2.0 / 3.0), Some(0.5), Some(0.75)]
        );
        assert_eq!(c.accuracy(), Some(6.0 / 9.0));
        // A class with no samples has no accuracy; bad labels are counted apart.
        let c = Confusion::new(&[0, 1, 7], &[0, 0, 1, 1], 3);
        assert_eq!(c.per_class_accuracy(), vec![Some(0.5), None, None]);
        assert_eq!(c.ignored, 1);
        assert_eq!(Confusion::new(&[], &[], 10).accuracy(), None);
    }

    #[test]
    fn mistakes_are_listed_most_confident_first() {
        // Three classes. Row 0: right. Row 1: truth 0, logits (0, ln 3, 0) → class 1 with
        // 3/(1+3+1) = 0.6. Row 2: truth 2, logits (ln 8, 0, 0) → class 0 with 8/10 = 0.8.
        // Row 3: truth 1, a tie (0, 0, 0) → the first, class 0, at 1/3.
        let l3 = 3f32.ln();
        let l8 = 8f32.ln();
        let logits = [5.0, 0.0, 0.0, 0.0, l3, 0.0, l8, 0.0, 0.0, 0.0, 0.0, 0.0];
        let m = mistakes(&logits, &[0, 0, 2, 1], 3, 10);
        let got: Vec<(usize, u32, u32)> =
            m.iter().map(|m| (m.index, m.truth, m.predicted)).collect();
        assert_eq!(got, vec![(2, 2, 0), (1, 0, 1), (3, 1, 0)]);
        assert!((m[0].confidence - 0.8).abs() < 1e-6);
        assert!((m[1].confidence - 0.6).abs() < 1e-6);
        assert!((m[2].confidence - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(mistakes(&logits, &[0, 0, 2, 1], 3, 1).len(), 1);
        assert!(mistakes(&logits, &[0, 0, 2, 1], 0, 5).is_empty());
    }

    #[test]
    fn a_map_is_scaled_by_its_own_range_and_a_constant_one_is_mid_grey() {
        // −1, 0, 1, 3 → 0, 63.75 → 64, 127.5 → 128, 255.
        let g = grey(&[-1.0, 0.0, 1.0, 3.0], 2, 2);
        assert_eq!(g.rows, vec![vec![0, 64], vec![128, 255]]);
        assert_eq!((g.width, g.height), (2, 2));
        let flat = grey(&[0.25; 9], 3, 3);
        assert!(flat.rows.iter().flatten().all(|&p| p == MID_GREY));
        // A NaN is black and does not spoil the others' scale.
        let g = grey(&[f32::NAN, 1.0, 2.0], 3, 1);
        assert_eq!(g.rows, vec![vec![0, 0, 255]]);
        assert!(grey(&[f32::NAN], 1, 1).rows == vec![vec![0]]);
    }

    #[test]
    fn first_layer_filters_are_one_image_each() {
        let spec = Spec::default();
        let net = spec.net().expect("default builds");
        let mut params = net.init_params(1);
        // Filter 0 constant, filter 1 a ramp 0..25.
        let w = net.param_layout().conv[0].w;
        for i in 0..25 {
            params[w + i] = 0.5;
            params[w + 25 + i] = i as f32;
        }
        let f = first_filters(&net, &params);
        assert_eq!(f.len(), 6);
        assert!(f.iter().all(|g| (g.width, g.height) == (5, 5)));
        assert!(f[0].rows.iter().flatten().all(|&p| p == MID_GREY));
        assert_eq!(f[1].rows[0][0], 0);
        assert_eq!(f[1].rows[4][4], 255);
        // 12/24 of the range: 127.5 rounds to 128.
        assert_eq!(f[1].rows[2][2], 128);
        assert!(first_filters(&net, &params[..10]).is_empty());
    }

    #[test]
    fn the_gpu_s_activations_draw_like_the_twin_s_maps() {
        let net = Spec::default().net().expect("builds");
        let params = net.init_params(3);
        let image: Vec<f32> = (0..784).map(|i| (i % 29) as f32 / 28.0).collect();
        let twin = net.inspect(&params, &image).expect("784 values");
        // Row 1 of a batch of 2 (row 0 all zeros), through the twin's forward.
        let mut ws = net.workspace(2);
        let mut x = vec![0.0; 784];
        x.extend_from_slice(&image);
        net.forward(&params, &x, &mut ws);
        let layers = layers_from_acts(&net, &ws.layout, &ws.acts, 1).expect("row 1");
        assert_eq!(layers, twin.layers);
        let maps = feature_maps(&layers[1]);
        assert_eq!(maps.len(), 6);
        assert_eq!((maps[0].width, maps[0].height), (24, 24));
        assert_eq!(layers_from_acts(&net, &ws.layout, &ws.acts, 2), None);
        assert_eq!(layers_from_acts(&net, &ws.layout, &ws.acts[1..], 0), None);
    }

    /// An alpha canvas of `w`×`h` with the rectangle [x0, x1) × [y0, y1) inked.
    fn canvas(w: usize, h: usize, (x0, x1): (usize, usize), (y0, y1): (usize, usize)) -> Vec<u8> {
        let mut c = vec![0u8; w * h];
        for y in y0..y1 {
            for x in x0..x1 {
                c[y * w + x] = 255;
            }
        }
        c
    }

    /// The inked region of a 28×28 result as (columns, rows) of values above ½.
    fn inked(img: &[f32]) -> ((usize, usize), (usize, usize)) {
        let on: Vec<(usize, usize)> = (0..784)
            .filter(|&i| img[i] > 0.5)
            .map(|i| (i % 28, i / 28))
            .collect();
        let xs = on.iter().map(|p| p.0);
        let ys = on.iter().map(|p| p.1);
        (
            (xs.clone().min().unwrap_or(0), xs.max().unwrap_or(0) + 1),
            (ys.clone().min().unwrap_or(0), ys.max().unwrap_or(0) + 1),
        )
    }

    #[test]
    fn a_drawn_square_is_scaled_into_the_box_and_centred() {
        // A 20×20 square anywhere on a 100×100 canvas: scale 1, centre of mass (10, 10) of
        // the box → shifted by 14 − 10 = 4: columns and rows 4..24, exactly 1 inside, 0 out.
        let img = drawn_digit(
            &canvas(100, 100, (10, 30), (60, 80)),
            100,
            100,
            Pixels::Alpha,
        )
        .expect("ink");
        assert_eq!(img.len(), 784);
        for y in 0..28 {
            for x in 0..28 {
                let want = if (4..24).contains(&x) && (4..24).contains(&y) {
                    1.0
                } else {
                    0.0
                };
                assert_eq!(img[y * 28 + x], want, "({x}, {y})");
            }
        }
        // A 40×40 square on a 280×280 canvas halves to the same 20×20.
        let big = drawn_digit(
            &canvas(280, 280, (200, 240), (0, 40)),
            280,
            280,
            Pixels::Alpha,
        )
        .expect("ink");
        assert_eq!(big, img);
        // A 40 wide × 20 tall bar becomes 20 × 10, its centre (10, 5) moved to 14: columns
        // 4..24, rows 9..19.
        let bar = drawn_digit(
            &canvas(100, 100, (0, 40), (50, 70)),
            100,
            100,
            Pixels::Alpha,
        )
        .expect("ink");
        assert_eq!(inked(&bar), ((4, 24), (9, 19)));
        // A 10×10 square is enlarged to 20×20.
        let small =
            drawn_digit(&canvas(50, 50, (5, 15), (5, 15)), 50, 50, Pixels::Alpha).expect("ink");
        assert_eq!(small, img);
    }

    #[test]
    fn rgba_ink_is_the_alpha_and_half_covered_pixels_average() {
        // A 4×2 RGBA canvas whose left 2×2 pixels are opaque black: that box is enlarged
        // to 20×20 and centred like the square above.
        let mut rgba = vec![0u8; 4 * 2 * 4];
        for y in 0..2 {
            for x in 0..2 {
                rgba[(y * 4 + x) * 4 + 3] = 255;
            }
        }
        let img = drawn_digit(&rgba, 4, 2, Pixels::Rgba).expect("ink");
        assert_eq!(inked(&img), ((4, 24), (4, 24)));
        // Half-grey ink stays half: 3 source pixels onto 20 target ones cover fractions.
        let w = area_weights(3, 2);
        assert_eq!(
            w,
            vec![
                vec![(0, 2.0 / 3.0), (1, 1.0 / 3.0)],
                vec![(1, 1.0 / 3.0), (2, 2.0 / 3.0)]
            ]
        );
        let half = vec![128u8; 9];
        let img = drawn_digit(&half, 3, 3, Pixels::Alpha).expect("ink");
        assert!(img
            .iter()
            .all(|&v| v == 0.0 || (v - 128.0 / 255.0).abs() < 1e-6));
    }

    #[test]
    fn an_empty_or_misshapen_canvas_is_named_never_predicted() {
        assert_eq!(
            drawn_digit(&[0u8; 100 * 100], 100, 100, Pixels::Alpha),
            Err(DrawError::NothingDrawn)
        );
        // White opaque-free RGBA: colour without alpha is no ink.
        let mut rgba = vec![0u8; 4 * 4 * 4];
        for (i, b) in rgba.iter_mut().enumerate() {
            if i % 4 != 3 {
                *b = 255;
            }
        }
        assert_eq!(
            drawn_digit(&rgba, 4, 4, Pixels::Rgba).map_err(|e| e.key()),
            Err("cnn.draw.empty")
        );
        assert_eq!(
            drawn_digit(&[0u8; 15], 2, 2, Pixels::Rgba),
            Err(DrawError::Size {
                width: 2,
                height: 2,
                bytes: 15
            })
        );
        assert!(drawn_digit(&[], 0, 0, Pixels::Alpha).is_err());
        // Classifying passes the empty canvas's state through, and refuses another net's
        // parameters.
        let net = Spec::default().net().expect("builds");
        let params = net.init_params(1);
        let empty = drawn_digit(&[0u8; 16], 4, 4, Pixels::Alpha);
        assert_eq!(classify(&net, &params, empty), Err(DrawError::NothingDrawn));
        let digit = drawn_digit(&canvas(28, 28, (4, 24), (4, 24)), 28, 28, Pixels::Alpha);
        assert_eq!(
            classify(&net, &params[1..], digit.clone()),
            Err(DrawError::NoNetwork)
        );
        let seen = classify(&net, &params, digit).expect("a digit");
        assert_eq!(seen.probs.len(), 10);
        assert!(seen.class < 10);
        assert_eq!(seen.layers.len(), 1 + 3 * 2);
        assert!(drawn_digit(&[1], usize::MAX, 2, Pixels::Rgba).is_err());
    }
}
