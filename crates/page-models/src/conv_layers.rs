//! The conv page's teaching views, without DOM or GPU: a two-layer network over the picture
//! (K1 filters, ReLU, K2 filters), what one output pixel reads in every layer (its receptive
//! field and its multiply-adds written out), and a small 6×6 example for the im2col matrix and
//! the sliding-window animation. The components only draw what these functions return.

use std::collections::BTreeSet;

use cpu_kernels::conv::{receptive_field, ConvShape, ConvShapeError};

use crate::conv_page::{parse_in, BadParam, Preset, Settings};
use crate::query::Query;

/// Most filters per layer (each becomes a picture in the gallery).
pub const MAX_K: u32 = 8;
pub const MAX_SEED: u32 = 999_999;
/// Terms of a multiply-add sum written out in full; longer sums show the first
/// [`SHOWN_TERMS`] and the rest as one partial sum.
pub const ALL_TERMS_UP_TO: usize = 36;
pub const SHOWN_TERMS: usize = 12;
/// Side of the small example's input (im2col and animation).
pub const SMALL: u32 = 6;

/// How layer 1's filters are made (layer 2's are always seeded random).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// The classic filters (edges, blurs…), the same on every colour channel.
    Classic,
    /// Seeded random weights in [−1, 1].
    Random,
}

impl Init {
    pub const ALL: [Init; 2] = [Init::Classic, Init::Random];
    pub fn id(self) -> &'static str {
        match self {
            Init::Classic => "classic",
            Init::Random => "random",
        }
    }
}

/// The layer view's settings; all of them live in the URL (`k1`, `k2`, `init`, `seed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerSettings {
    pub k1: u32,
    pub k2: u32,
    pub init: Init,
    pub seed: u32,
}

impl Default for LayerSettings {
    fn default() -> Self {
        LayerSettings {
            k1: 4,
            k2: 4,
            init: Init::Classic,
            seed: 1,
        }
    }
}

impl LayerSettings {
    /// Reads the URL; each bad value is named and replaced by its default.
    pub fn from_query(q: &Query) -> (LayerSettings, Vec<BadParam>) {
        let d = LayerSettings::default();
        let mut bad = Vec::new();
        let mut read = |key: &'static str, default: String, lo: u32, hi: u32| {
            let v = q.get(key)?;
            let parsed = parse_in(v, lo, hi);
            if parsed.is_none() {
                bad.push(BadParam {
                    key,
                    value: v.to_string(),
                    default,
                });
            }
            parsed
        };
        let k1 = read("k1", d.k1.to_string(), 1, MAX_K).unwrap_or(d.k1);
        let k2 = read("k2", d.k2.to_string(), 1, MAX_K).unwrap_or(d.k2);
        let seed = read("seed", d.seed.to_string(), 0, MAX_SEED).unwrap_or(d.seed);
        let init = match q.get("init") {
            None => d.init,
            Some(v) => Init::ALL
                .into_iter()
                .find(|i| i.id() == v)
                .unwrap_or_else(|| {
                    bad.push(BadParam {
                        key: "init",
                        value: v.to_string(),
                        default: d.init.id().into(),
                    });
                    d.init
                }),
        };
        (LayerSettings { k1, k2, init, seed }, bad)
    }

    pub fn write(&self, q: &mut Query) {
        q.set("k1", &self.k1.to_string());
        q.set("k2", &self.k2.to_string());
        q.set("init", self.init.id());
        q.set("seed", &self.seed.to_string());
    }
}

/// The classic filters layer 1 cycles through (the blurs last: their maps look like the input).
pub const CLASSIC: [Preset; 7] = [
    Preset::SobelX,
    Preset::SobelY,
    Preset::Edge,
    Preset::Emboss,
    Preset::Sharpen,
    Preset::Gauss,
    Preset::Box,
];

/// The two layers: layer 1 reads the W×H RGB picture (C = 3) with K1 filters; layer 2 reads
/// layer 1's K1 maps (after ReLU) with K2 filters. Both use the page's filter side, stride,
/// padding and dilation. Layer 2 is an error when layer 1 is, or when its input is too small.
pub fn layer_shapes(
    s: &Settings,
    l: &LayerSettings,
    width: u32,
    height: u32,
) -> Result<[ConvShape; 2], ConvShapeError> {
    let one =
        ConvShape::new(1, 3, height, width, l.k1, s.side, s.side).with(s.stride, s.pad, s.dilation);
    let (p, q) = one.validate()?;
    let two = ConvShape::new(1, l.k1, p, q, l.k2, s.side, s.side).with(s.stride, s.pad, s.dilation);
    two.validate()?;
    Ok([one, two])
}

/// Layer 1's filters, R×S×3×K1: filter k is a classic filter (`CLASSIC[k mod 7]`, divided by
/// 3 on each colour so it sees brightness), or seeded random weights.
pub fn filters1(s: &Settings, l: &LayerSettings) -> Vec<f32> {
    let (taps, k_len) = ((s.side * s.side) as usize, l.k1 as usize);
    match l.init {
        Init::Random => cpu_kernels::data::random_vec(taps * 3 * k_len, l.seed as u64),
        Init::Classic => {
            let mut f = vec![0.0; taps * 3 * k_len];
            for k in 0..k_len {
                let w = CLASSIC[k % CLASSIC.len()].weights(s.side);
                for (rs, &v) in w.iter().enumerate() {
                    for c in 0..3 {
                        f[(rs * 3 + c) * k_len + k] = v / 3.0;
                    }
                }
            }
            f
        }
    }
}

/// Layer 2's filters, R×S×K1×K2, seeded random in [−1, 1] (another stream than layer 1's).
pub fn filters2(s: &Settings, l: &LayerSettings) -> Vec<f32> {
    let len = (s.side * s.side * l.k1 * l.k2) as usize;
    cpu_kernels::data::random_vec(len, (l.seed as u64) ^ 0x2_0000_0000)
}

pub fn relu(v: &[f32]) -> Vec<f32> {
    v.iter().map(|&x| x.max(0.0)).collect()
}

/// One map of an NHWC output (N = 1): its P·Q values, row-major.
pub fn channel(y: &[f32], k_len: usize, k: usize) -> Vec<f32> {
    y.iter().skip(k).step_by(k_len.max(1)).copied().collect()
}

/// A map as grey RGBA: values scaled by the largest |value| of the map, 0 → mid-grey
/// (`signed`) or black (after ReLU, nothing is negative).
pub fn map_rgba(map: &[f32], signed: bool) -> Vec<u8> {
    let top = map.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = if top > 0.0 { 1.0 / top } else { 0.0 };
    map.iter()
        .flat_map(|&v| {
            let t = if signed {
                0.5 + 0.5 * v * scale
            } else {
                v * scale
            };
            let b = (t.clamp(0.0, 1.0) * 255.0).round() as u8;
            [b, b, b, 255]
        })
        .collect()
}

/// One multiply-add of an output value: filter tap (r, s), channel c, weight and input value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Term {
    pub r: u32,
    pub s: u32,
    pub c: u32,
    pub w: f32,
    pub x: f32,
}

/// The multiply-adds of output y[0, p, q, k] in (r, s, c) order — taps in the padding read 0
/// and are left out — and how many taps fell in the padding (× C multiply-adds by 0).
pub fn terms(shape: &ConvShape, x: &[f32], f: &[f32], p: u32, q: u32, k: u32) -> (Vec<Term>, u32) {
    let (c_len, k_len, w_len) = (shape.c as usize, shape.k as usize, shape.w as usize);
    let mut out = Vec::new();
    let mut padded = 0;
    for r in 0..shape.r {
        for s in 0..shape.s {
            let Some((ih, iw)) = shape.tap(p, q, r, s) else {
                padded += 1;
                continue;
            };
            for c in 0..shape.c {
                let xi = (ih * w_len + iw) * c_len + c as usize;
                let fi = ((r * shape.s + s) as usize * c_len + c as usize) * k_len + k as usize;
                if let (Some(&xv), Some(&wv)) = (x.get(xi), f.get(fi)) {
                    out.push(Term {
                        r,
                        s,
                        c,
                        w: wv,
                        x: xv,
                    });
                }
            }
        }
    }
    (out, padded)
}

/// A sum of terms in f64 (the written-out sum's own arithmetic).
pub fn sum(terms: &[Term]) -> f64 {
    terms.iter().map(|t| t.w as f64 * t.x as f64).sum()
}

/// How the page writes a sum out: every term when there are at most [`ALL_TERMS_UP_TO`],
/// else the first [`SHOWN_TERMS`] and the rest as (count, partial sum).
pub fn shown_terms(terms: &[Term]) -> (&[Term], Option<(usize, f64)>) {
    if terms.len() <= ALL_TERMS_UP_TO {
        (terms, None)
    } else {
        let (head, rest) = terms.split_at(SHOWN_TERMS);
        (head, Some((rest.len(), sum(rest))))
    }
}

/// A pixel picked in the layer view: which layer's output (1 or 2) and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    pub layer: u8,
    pub p: u32,
    pub q: u32,
}

impl Pick {
    /// The pick moved by an arrow key (dp, dq), kept inside the layer's P×Q output.
    pub fn moved(self, dp: i32, dq: i32, shapes: &[ConvShape; 2]) -> Pick {
        let (p_len, q_len) = shapes[(self.layer as usize).clamp(1, 2) - 1].out_hw();
        let clamp =
            |v: u32, d: i32, len: u32| (v as i64 + d as i64).clamp(0, len as i64 - 1) as u32;
        Pick {
            p: clamp(self.p, dp, p_len),
            q: clamp(self.q, dq, q_len),
            ..self
        }
    }
}

/// The in-image cells of `shape`'s input that output (p, q) reads (one per tap).
pub fn window(shape: &ConvShape, p: u32, q: u32) -> BTreeSet<(u32, u32)> {
    let mut cells = BTreeSet::new();
    for r in 0..shape.r {
        for s in 0..shape.s {
            if let Some((ih, iw)) = shape.tap(p, q, r, s) {
                cells.insert((ih as u32, iw as u32));
            }
        }
    }
    cells
}

/// What lights up for a pick: the cells of layer 1's output (only for a layer-2 pick) and of
/// the picture that it depends on, exactly (dilated taps leave gaps).
pub struct Lit {
    pub layer1: BTreeSet<(u32, u32)>,
    pub input: BTreeSet<(u32, u32)>,
    /// The receptive field's bounding rows and columns in the picture (clipped), and its
    /// size without clipping (what the arithmetic says).
    pub field: Option<((u32, u32), (u32, u32))>,
    pub extent: (u64, u64),
}

pub fn lit(shapes: &[ConvShape; 2], pick: Pick) -> Lit {
    let (layer1, input) = if pick.layer == 2 {
        let l1 = window(&shapes[1], pick.p, pick.q);
        let input = l1
            .iter()
            .flat_map(|&(a, b)| window(&shapes[0], a, b))
            .collect();
        (l1, input)
    } else {
        (BTreeSet::new(), window(&shapes[0], pick.p, pick.q))
    };
    let layers = &shapes[..pick.layer.clamp(1, 2) as usize];
    Lit {
        layer1,
        input,
        field: receptive_field(layers, pick.p, pick.q),
        extent: receptive_extent(layers),
    }
}

/// The receptive field's size through stacked layers, before clipping to the image:
/// 1 + Σ_l (R_l − 1)·dil_l·Π_{j<l} stride_j along each axis (two 3×3 layers: 5×5).
pub fn receptive_extent(layers: &[ConvShape]) -> (u64, u64) {
    let (mut rows, mut cols, mut jump) = (1u64, 1u64, 1u64);
    for l in layers {
        rows += (l.r as u64 - 1) * l.dilation as u64 * jump;
        cols += (l.s as u64 - 1) * l.dilation as u64 * jump;
        jump *= l.stride as u64;
    }
    (rows, cols)
}

// ---------------------------------------------------------------- the small example

/// The small example: a 6×6 single-channel input of digits 0–9, so every product can be read.
pub fn small_input() -> Vec<f32> {
    (0..SMALL * SMALL)
        .map(|i| ((i / SMALL * 3 + i % SMALL * 5 + i / 7) % 10) as f32)
        .collect()
}

/// The small example's convolution: the page's filter side, stride, padding and dilation on
/// the 6×6 input, one channel, one filter (the page's grid).
pub fn small_shape(s: &Settings) -> ConvShape {
    ConvShape::new(1, 1, SMALL, SMALL, 1, s.side, s.side).with(s.stride, s.pad, s.dilation)
}

/// The example drawn: the im2col matrix (P·Q rows × R·S columns), the filter as a column, and
/// the output (the matrix times the column), or the shape error.
#[derive(Debug, PartialEq)]
pub struct Small {
    pub shape: ConvShape,
    pub input: Vec<f32>,
    pub matrix: Vec<f32>,
    pub column: Vec<f32>,
    pub output: Vec<f64>,
}

pub fn small(s: &Settings) -> Result<Small, ConvShapeError> {
    let shape = small_shape(s);
    shape.validate()?;
    let input = small_input();
    let cols = shape.reduction_len() as usize;
    let matrix = cpu_kernels::conv::im2col(&shape, &input, cols);
    let column = s.weights.clone();
    let output = matrix
        .chunks_exact(cols)
        .map(|row| {
            row.iter()
                .zip(&column)
                .map(|(&a, &b)| a as f64 * b as f64)
                .sum()
        })
        .collect();
    Ok(Small {
        shape,
        input,
        matrix,
        column,
        output,
    })
}

/// Animation step `i` (0-based, P·Q of them, row by row) as the output pixel (p, q).
pub fn step_pixel(shape: &ConvShape, i: u32) -> (u32, u32) {
    let (p_len, q_len) = shape.out_hw();
    let i = i.min(p_len * q_len - 1);
    (i / q_len, i % q_len)
}

/// The filter's taps at output (p, q) in the padded grid's coordinates (0 … H + 2·pad − 1):
/// row p·stride + r·dil, column q·stride + s·dil.
pub fn padded_taps(shape: &ConvShape, p: u32, q: u32) -> Vec<(u32, u32)> {
    let mut taps = Vec::new();
    for r in 0..shape.r {
        for s in 0..shape.s {
            taps.push((
                p * shape.stride + r * shape.dilation,
                q * shape.stride + s * shape.dilation,
            ));
        }
    }
    taps
}

/// The animation step an arrow key (dp, dq) leads to from output (p, q), kept inside the
/// P×Q output.
pub fn arrow_step(shape: &ConvShape, (p, q): (u32, u32), dp: i64, dq: i64) -> usize {
    let (p_len, q_len) = shape.out_hw();
    let np = (p as i64 + dp).clamp(0, p_len as i64 - 1);
    let nq = (q as i64 + dq).clamp(0, q_len as i64 - 1);
    (np * q_len as i64 + nq) as usize
}

/// The arguments of the small example's "now" line at step `i` (0-based) of `steps`: the
/// output pixel, the window's rows and columns in the padded grid, and the value `value`.
pub fn small_now_args(
    shape: &ConvShape,
    i: usize,
    steps: usize,
    value: String,
) -> Vec<(&'static str, String)> {
    let (p, q) = step_pixel(shape, i as u32);
    let r0 = p * shape.stride;
    let c0 = q * shape.stride;
    let span = shape.dilation * (shape.r - 1);
    vec![
        ("i", (i + 1).to_string()),
        ("n", steps.to_string()),
        ("p", p.to_string()),
        ("q", q.to_string()),
        ("r0", r0.to_string()),
        ("r1", (r0 + span).to_string()),
        ("c0", c0.to_string()),
        ("c1", (c0 + span).to_string()),
        ("stride", shape.stride.to_string()),
        ("value", value),
    ]
}

/// A value as the small grids show it: whole numbers plainly, others to two decimals.
pub fn trim(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod small_view_tests {
    use super::*;

    #[test]
    fn arrows_stay_inside_the_output_and_now_names_the_window() {
        let s = Settings {
            stride: 2,
            pad: 0,
            ..Settings::default()
        };
        let shape = small_shape(&s);
        assert_eq!(shape.out_hw(), (2, 2));
        assert_eq!(arrow_step(&shape, (0, 0), 0, 1), 1);
        assert_eq!(arrow_step(&shape, (0, 1), 0, 1), 1);
        assert_eq!(arrow_step(&shape, (0, 1), 1, 0), 3);
        assert_eq!(arrow_step(&shape, (0, 0), -1, -1), 0);
        let args = small_now_args(&shape, 3, 4, "7".into());
        let get = |k: &str| args.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(
            (get("i"), get("p"), get("q")),
            (Some("4"), Some("1"), Some("1"))
        );
        assert_eq!(
            (get("r0"), get("r1"), get("c1")),
            (Some("2"), Some("4"), Some("4"))
        );
        assert_eq!(trim(3.0), "3");
        assert_eq!(trim(-0.126), "-0.13");
        assert_eq!(trim(2e6), "2000000.00");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(side: u32, stride: u32, pad: u32, dil: u32) -> Settings {
        Settings {
            side,
            stride,
            pad,
            dilation: dil,
            weights: Preset::Gauss.weights(side),
            ..Settings::default()
        }
    }

    #[test]
    fn layer_settings_round_trip_and_bad_values_are_named() {
        let l = LayerSettings {
            k1: 8,
            k2: 1,
            init: Init::Random,
            seed: 42,
        };
        let mut q = Query::default();
        l.write(&mut q);
        assert_eq!(LayerSettings::from_query(&q), (l, vec![]));
        let (l, bad) = LayerSettings::from_query(&Query::parse("k1=0&k2=9&init=magic&seed=-1"));
        assert_eq!(l, LayerSettings::default());
        let keys: Vec<_> = bad.iter().map(|b| b.key).collect();
        assert_eq!(keys, ["k1", "k2", "seed", "init"]);
    }

    #[test]
    fn shapes_chain_and_fail_by_name() {
        let l = LayerSettings::default();
        let [a, b] = layer_shapes(&settings(3, 1, 1, 1), &l, 128, 96).expect("valid");
        assert_eq!((a.c, a.k, a.h, a.w), (3, 4, 96, 128));
        assert_eq!((b.c, b.k, b.h, b.w), (4, 4, 96, 128));
        // Stride 2 twice: 128 → 64 → 32.
        let [_, b] = layer_shapes(&settings(3, 2, 1, 1), &l, 128, 128).expect("valid");
        assert_eq!(b.out_hw(), (32, 32));
        // A 5×5 dilated by 8 spans 33: 128 → 96 → 64. Dilated by 16 it spans 65: at stride 2
        // it fits the picture (→ 32) but not layer 1's 32-wide output.
        let [_, b] = layer_shapes(&settings(5, 1, 0, 8), &l, 128, 128).expect("valid");
        assert_eq!(b.out_hw(), (64, 64));
        let e = layer_shapes(&settings(5, 2, 0, 16), &l, 128, 128).unwrap_err();
        assert!(
            matches!(e, ConvShapeError::FilterLargerThanInput { .. }),
            "{e:?}"
        );
    }

    #[test]
    fn classic_filters_see_brightness() {
        let s = settings(3, 1, 1, 1);
        let l = LayerSettings::default();
        let f = filters1(&s, &l);
        assert_eq!(f.len(), 9 * 3 * 4);
        // Filter 0 is Sobel x: tap (0, 0) = −1, split over three colours.
        for c in 0..3 {
            assert!((f[c * 4] + 1.0 / 3.0).abs() < 1e-7);
        }
        // A one-pixel grey picture (every channel 0.6), padded by 1: only the centre tap reads it.
        let shape = ConvShape::new(1, 3, 1, 1, 4, 3, 3).with(1, 1, 1);
        let y = cpu_kernels::conv::reference(&shape, &[0.6; 3], &f).value;
        // The one pixel sits under the centre tap: Sobel x's centre is 0, Edge's is 8.
        assert!(y[0].abs() < 1e-9);
        assert!((y[2] - 8.0 * 0.6).abs() < 1e-6);
        let r = LayerSettings {
            init: Init::Random,
            ..l
        };
        assert_eq!(filters1(&s, &r), filters1(&s, &r));
        assert_ne!(filters1(&s, &r)[..9], filters2(&s, &r)[..9]);
        assert_eq!(filters2(&s, &r).len(), 9 * 4 * 4);
    }

    #[test]
    fn terms_add_up_to_the_reference() {
        let shape = ConvShape::new(1, 3, 5, 4, 2, 3, 3).with(1, 1, 1);
        let (x, f) = shape.inputs(3);
        let y = cpu_kernels::conv::reference(&shape, &x, &f).value;
        let (q_len, k_len) = (shape.out_hw().1, shape.k);
        for (p, q, k) in [(0, 0, 0), (2, 1, 1), (4, 3, 0)] {
            let (t, padded) = terms(&shape, &x, &f, p, q, k);
            let idx = ((p * q_len + q) * k_len + k) as usize;
            assert!((sum(&t) - y[idx]).abs() < 1e-12, "{p} {q} {k}");
            assert_eq!(t.len() as u32 + padded * 3, 27);
        }
        // The corner (0, 0) has 5 of its 9 taps in the padding.
        assert_eq!(terms(&shape, &x, &f, 0, 0, 0).1, 5);
        // Long sums: 12 shown, the rest summed.
        let big = ConvShape::new(1, 8, 4, 4, 1, 3, 3).with(1, 1, 1);
        let (x, f) = big.inputs(1);
        let (t, _) = terms(&big, &x, &f, 1, 1, 0);
        assert_eq!(t.len(), 72);
        let (head, rest) = shown_terms(&t);
        let (n, partial) = rest.expect("truncated");
        assert_eq!((head.len(), n), (12, 60));
        assert!((sum(head) + partial - sum(&t)).abs() < 1e-9);
    }

    #[test]
    fn receptive_field_grows_by_the_arithmetic() {
        let l = LayerSettings::default();
        let ext = |side, stride, pad, dil| {
            let shapes = layer_shapes(&settings(side, stride, pad, dil), &l, 64, 64).expect("ok");
            (
                receptive_extent(&shapes[..1]).0,
                receptive_extent(&shapes).0,
            )
        };
        assert_eq!(ext(3, 1, 1, 1), (3, 5));
        assert_eq!(ext(3, 2, 1, 1), (3, 7));
        assert_eq!(ext(3, 1, 2, 2), (5, 9));
        assert_eq!(ext(5, 1, 2, 1), (5, 9));
        // An inner layer-2 pixel of two 3×3 layers lights 3×3 of layer 1 and 5×5 of the picture.
        let shapes = layer_shapes(&settings(3, 1, 1, 1), &l, 64, 64).expect("ok");
        let lit2 = lit(
            &shapes,
            Pick {
                layer: 2,
                p: 10,
                q: 20,
            },
        );
        assert_eq!(lit2.layer1.len(), 9);
        assert_eq!(lit2.input.len(), 25);
        assert_eq!(lit2.field, Some(((8, 12), (18, 22))));
        // Dilation 2 twice: taps spread, the field is 9×9 but only its even offsets are read.
        let shapes = layer_shapes(&settings(3, 1, 2, 2), &l, 64, 64).expect("ok");
        let lit2 = lit(
            &shapes,
            Pick {
                layer: 2,
                p: 20,
                q: 20,
            },
        );
        assert_eq!(lit2.extent, (9, 9));
        assert_eq!(lit2.input.len(), 25);
        // At the corner the field is clipped to the image.
        let shapes = layer_shapes(&settings(3, 1, 1, 1), &l, 64, 64).expect("ok");
        let corner = lit(
            &shapes,
            Pick {
                layer: 2,
                p: 0,
                q: 0,
            },
        );
        assert_eq!(corner.field, Some(((0, 2), (0, 2))));
        assert_eq!(corner.input.len(), 9);
        let moved = Pick {
            layer: 2,
            p: 0,
            q: 63,
        }
        .moved(-1, 1, &shapes);
        assert_eq!((moved.p, moved.q), (0, 63));
    }

    #[test]
    fn small_example_is_a_matmul() {
        let s = settings(3, 1, 1, 1);
        let ex = small(&s).expect("valid");
        assert_eq!(ex.input.len(), 36);
        assert!(ex
            .input
            .iter()
            .all(|v| (0.0..=9.0).contains(v) && v.fract() == 0.0));
        assert_eq!(ex.matrix.len(), 36 * 9);
        // One channel, one filter: the R×S×1×1 tensor is the grid itself.
        let reference = cpu_kernels::conv::reference(&ex.shape, &ex.input, &s.weights).value;
        for (a, b) in ex.output.iter().zip(&reference) {
            assert!((a - b).abs() < 1e-9);
        }
        // Stride 2, no padding: (6 − 3)/2 + 1 = 2 → 4 steps; step 3 is (1, 1), window from (2, 2).
        let s2 = settings(3, 2, 0, 1);
        let ex2 = small(&s2).expect("valid");
        assert_eq!(ex2.shape.out_hw(), (2, 2));
        assert_eq!(step_pixel(&ex2.shape, 3), (1, 1));
        assert_eq!(padded_taps(&ex2.shape, 1, 1)[0], (2, 2));
        assert_eq!(padded_taps(&ex2.shape, 1, 1)[8], (4, 4));
        // Dilation 2, pad 1: taps two apart; 6 + 2 − 5 + 1 = 4 outputs per axis.
        let d = small_shape(&settings(3, 1, 1, 2));
        assert_eq!(d.out_hw(), (4, 4));
        assert_eq!(padded_taps(&d, 0, 0)[1], (0, 2));
        // A 5×5 dilated 2 spans 9 > 6 + 2: the named error.
        assert!(small(&settings(5, 1, 1, 2)).is_err());
    }

    #[test]
    fn maps_are_drawn_around_zero() {
        assert_eq!(
            map_rgba(&[-2.0, 0.0, 2.0], true),
            vec![0, 0, 0, 255, 128, 128, 128, 255, 255, 255, 255, 255]
        );
        assert_eq!(map_rgba(&[0.0, 1.0], false)[..4], [0, 0, 0, 255]);
        assert_eq!(map_rgba(&[0.0, 0.0], true)[0], 128);
        assert_eq!(channel(&[1., 2., 3., 4., 5., 6.], 3, 1), vec![2., 5.]);
        assert_eq!(relu(&[-1.0, 0.5]), vec![0.0, 0.5]);
    }
}

// ---------------------------------------------------------------- the layer view's state

/// One layer's result.
#[derive(Debug, PartialEq)]
pub struct LayerOut {
    pub shape: ConvShape,
    /// Its input (the picture, or layer 1's maps after ReLU), filters and raw output.
    pub x: std::rc::Rc<Vec<f32>>,
    pub f: Vec<f32>,
    pub y: Vec<f32>,
    pub ms: f64,
    /// `None` on the CPU path; else the verdict and how many values were checked.
    pub verified: Option<(bool, usize)>,
}

/// Both layers' results.
#[derive(Debug, PartialEq)]
pub struct LayersDone {
    pub layers: [LayerOut; 2],
    pub stage: gpu_runtime::conv::ConvStage,
}

impl LayersDone {
    pub fn shapes(&self) -> [ConvShape; 2] {
        [self.layers[0].shape, self.layers[1].shape]
    }

    /// Both layers verified on the GPU (`Some`), or `None` when the CPU made them.
    pub fn verified(&self) -> Option<bool> {
        match (self.layers[0].verified, self.layers[1].verified) {
            (Some((a, _)), Some((b, _))) => Some(a && b),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum LayersOutcome {
    Idle,
    Running,
    Done(std::rc::Rc<LayersDone>),
    /// The error, as the page shows it.
    Failed(String),
}

/// The layer view's own state (its settings are the page's): the run, the picked pixel with
/// the picked map (filter k), and the seed as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerView {
    pub outcome: LayersOutcome,
    /// Finished runs (the status's `data-runs`).
    pub runs: u32,
    pub pick: Option<(Pick, u32)>,
    pub seed_text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LayerAction {
    /// The picture or a setting changed: the shown result is stale.
    Stale,
    Started,
    Finished(Result<std::rc::Rc<LayersDone>, String>),
    /// A pixel pointed at in map k.
    Point(Pick, u32),
    /// An arrow key (dp, dq) on map k of a layer (1 or 2).
    Arrow {
        layer: u8,
        k: u32,
        dp: i32,
        dq: i32,
    },
    /// Map k of a layer focused.
    Focus {
        layer: u8,
        k: u32,
    },
    SeedTyped(String),
}

impl LayerView {
    pub fn new(seed: u32) -> LayerView {
        LayerView {
            outcome: LayersOutcome::Idle,
            runs: 0,
            pick: None,
            seed_text: seed.to_string(),
        }
    }

    pub fn apply(&self, action: LayerAction) -> LayerView {
        let mut next = self.clone();
        match action {
            LayerAction::Stale => {
                next.outcome = LayersOutcome::Idle;
                next.pick = None;
            }
            LayerAction::Started => next.outcome = LayersOutcome::Running,
            LayerAction::Finished(Ok(d)) => {
                // Start with the middle pixel of layer 2 picked.
                let (p, q) = d.layers[1].shape.out_hw();
                next.pick = Some((
                    Pick {
                        layer: 2,
                        p: p / 2,
                        q: q / 2,
                    },
                    0,
                ));
                next.outcome = LayersOutcome::Done(d);
                next.runs += 1;
            }
            LayerAction::Finished(Err(m)) => {
                next.outcome = LayersOutcome::Failed(m);
                next.runs += 1;
            }
            LayerAction::Point(p, k) => next.pick = Some((p, k)),
            LayerAction::Arrow { layer, k, dp, dq } => {
                if let LayersOutcome::Done(d) = &self.outcome {
                    let start = self.pick_in(layer, d);
                    next.pick = Some((start.moved(dp, dq, &d.shapes()), k));
                }
            }
            LayerAction::Focus { layer, k } => {
                let keep = matches!(self.pick, Some((p, kk)) if p.layer == layer && kk == k);
                if let (false, LayersOutcome::Done(d)) = (keep, &self.outcome) {
                    next.pick = Some((self.pick_in(layer, d), k));
                }
            }
            LayerAction::SeedTyped(text) => next.seed_text = text,
        }
        next
    }

    /// The pick when it is in `layer`, else that layer's middle pixel.
    fn pick_in(&self, layer: u8, d: &LayersDone) -> Pick {
        match self.pick {
            Some((p, _)) if p.layer == layer => p,
            _ => {
                let (p_len, q_len) = d.layers[(layer as usize).clamp(1, 2) - 1].shape.out_hw();
                Pick {
                    layer,
                    p: p_len / 2,
                    q: q_len / 2,
                }
            }
        }
    }

    pub fn seed_ok(&self) -> bool {
        parse_in(&self.seed_text, 0, MAX_SEED).is_some()
    }

    /// Whether Run can start: the page's form valid (`valid`), both shapes possible
    /// (`shapes_ok`), the seed valid, the GPU check over and no run going.
    pub fn can_run(&self, valid: bool, shapes_ok: bool, checking: bool) -> bool {
        valid && shapes_ok && self.seed_ok() && !checking && self.outcome != LayersOutcome::Running
    }

    /// The status's `data-verified`: the GPU verdict, "cpu", "error", or empty before a run.
    pub fn verified_attr(&self) -> String {
        match &self.outcome {
            LayersOutcome::Done(d) => d
                .verified()
                .map_or_else(|| "cpu".into(), |ok| ok.to_string()),
            LayersOutcome::Failed(_) => "error".into(),
            LayersOutcome::Idle | LayersOutcome::Running => String::new(),
        }
    }
}

/// A number as the written-out sum shows it: 4 decimals, negative ones in parentheses.
pub fn sum_number(v: f64) -> String {
    let s = format!("{v:.4}");
    if v < 0.0 {
        format!("({s})")
    } else {
        s
    }
}

#[cfg(test)]
mod view_tests {
    use std::rc::Rc;

    use super::*;

    fn done(verified: [Option<(bool, usize)>; 2]) -> Rc<LayersDone> {
        let s = Settings::default();
        let shapes = layer_shapes(&s, &LayerSettings::default(), 8, 6).expect("valid");
        let out = |i: usize| LayerOut {
            shape: shapes[i],
            x: Rc::new(vec![]),
            f: vec![],
            y: vec![],
            ms: 1.0,
            verified: verified[i],
        };
        Rc::new(LayersDone {
            layers: [out(0), out(1)],
            stage: gpu_runtime::conv::ConvStage::Direct,
        })
    }

    #[test]
    fn a_finished_run_picks_layer_two_s_middle_and_a_change_clears_it() {
        let v = LayerView::new(1).apply(LayerAction::Started);
        assert!(!v.can_run(true, true, false));
        let v = v.apply(LayerAction::Finished(Ok(done([Some((true, 3)); 2]))));
        assert_eq!(v.runs, 1);
        assert_eq!(
            v.pick,
            Some((
                Pick {
                    layer: 2,
                    p: 3,
                    q: 4
                },
                0
            ))
        );
        assert_eq!(v.verified_attr(), "true");
        let stale = v.apply(LayerAction::Stale);
        assert_eq!(
            (stale.outcome.clone(), stale.pick),
            (LayersOutcome::Idle, None)
        );
        assert_eq!(stale.verified_attr(), "");
        let v = v.apply(LayerAction::Finished(Ok(done([
            Some((true, 3)),
            Some((false, 3)),
        ]))));
        assert_eq!((v.runs, v.verified_attr().as_str()), (2, "false"));
        let v = v.apply(LayerAction::Finished(Ok(done([None, None]))));
        assert_eq!(v.verified_attr(), "cpu");
        let v = v.apply(LayerAction::Finished(Err("lost".into())));
        assert_eq!((v.runs, v.verified_attr().as_str()), (4, "error"));
    }

    #[test]
    fn keys_and_focus_move_the_pick_inside_its_map() {
        let v = LayerView::new(1).apply(LayerAction::Finished(Ok(done([None, None]))));
        // An arrow on layer 1 starts from its middle; on layer 2 from the pick.
        let one = v.apply(LayerAction::Arrow {
            layer: 1,
            k: 2,
            dp: -1,
            dq: 0,
        });
        assert_eq!(
            one.pick,
            Some((
                Pick {
                    layer: 1,
                    p: 2,
                    q: 4
                },
                2
            ))
        );
        let two = v.apply(LayerAction::Arrow {
            layer: 2,
            k: 1,
            dp: 0,
            dq: 1,
        });
        assert_eq!(
            two.pick,
            Some((
                Pick {
                    layer: 2,
                    p: 3,
                    q: 5
                },
                1
            ))
        );
        // Focusing another map of the same layer keeps the pixel; another layer's, its middle.
        let moved = v.apply(LayerAction::Point(
            Pick {
                layer: 2,
                p: 0,
                q: 0,
            },
            0,
        ));
        let f = moved.apply(LayerAction::Focus { layer: 2, k: 3 });
        assert_eq!(
            f.pick,
            Some((
                Pick {
                    layer: 2,
                    p: 0,
                    q: 0
                },
                3
            ))
        );
        assert_eq!(f.apply(LayerAction::Focus { layer: 2, k: 3 }), f);
        let f1 = moved.apply(LayerAction::Focus { layer: 1, k: 0 });
        assert_eq!(
            f1.pick,
            Some((
                Pick {
                    layer: 1,
                    p: 3,
                    q: 4
                },
                0
            ))
        );
        // Without a result there is nothing to move.
        let idle = LayerView::new(1);
        assert_eq!(
            idle.apply(LayerAction::Arrow {
                layer: 1,
                k: 0,
                dp: 1,
                dq: 0
            }),
            idle
        );
    }

    #[test]
    fn the_seed_is_checked_as_typed() {
        let v = LayerView::new(7);
        assert_eq!(v.seed_text, "7");
        assert!(v.can_run(true, true, false));
        assert!(!v.can_run(false, true, false) && !v.can_run(true, false, false));
        assert!(!v.can_run(true, true, true));
        let bad = v.apply(LayerAction::SeedTyped("1000000".into()));
        assert!(!bad.seed_ok() && !bad.can_run(true, true, false));
        assert_eq!(sum_number(-0.5), "(-0.5000)");
        assert_eq!(sum_number(2.0), "2.0000");
    }
}
