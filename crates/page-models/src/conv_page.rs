//! The conv page's logic, without DOM or GPU: its settings (parsed from the URL with named
//! errors), the classic filters, the bundled images (drawn here, so no third-party content),
//! a filter as the R×S×C×K tensor of a per-channel convolution, and the output as pixels.

use cpu_kernels::conv::{ConvShape, ConvShapeError};
use gpu_runtime::conv::ConvStage;

use crate::query::Query;

/// Side of the bundled images, and the longest side a learner's picture is scaled down to
/// (a 256×256 RGB image and a 5×5 filter: 5 M multiply-adds, quick even on the CPU path).
pub const BUNDLED_SIDE: u32 = 128;
pub const MAX_SIDE: u32 = 256;
pub const MAX_STRIDE: u32 = 16;
pub const MAX_PAD: u32 = 64;
pub const MAX_DILATION: u32 = 64;
/// Largest magnitude of a hand-typed weight.
pub const MAX_WEIGHT: f32 = 1000.0;

/// The stages the page offers (a 3×3 or 5×5 filter is never 1×1, so not the 1×1 stage).
pub const STAGES: [ConvStage; 4] = [
    ConvStage::Direct,
    ConvStage::Tiled,
    ConvStage::Im2colGemm,
    ConvStage::ImplicitGemm,
];

/// URL value of a stage: its id without the `conv-` prefix.
pub fn stage_param(stage: ConvStage) -> &'static str {
    stage.id().trim_start_matches("conv-")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Image {
    Checker,
    Rings,
    Shapes,
    Strokes,
}

impl Image {
    pub const ALL: [Image; 4] = [Image::Checker, Image::Rings, Image::Shapes, Image::Strokes];

    pub fn id(self) -> &'static str {
        match self {
            Image::Checker => "checker",
            Image::Rings => "rings",
            Image::Shapes => "shapes",
            Image::Strokes => "strokes",
        }
    }

    /// The image, RGB in [0, 1], H×W×3 (NHWC with N = 1).
    pub fn pixels(self) -> RgbImage {
        let n = BUNDLED_SIDE;
        let mut data = Vec::with_capacity((n * n * 3) as usize);
        for y in 0..n {
            for x in 0..n {
                let (u, v) = (x as f32 / n as f32, y as f32 / n as f32);
                data.extend_from_slice(&match self {
                    Image::Checker => checker(x, y),
                    Image::Rings => rings(u, v),
                    Image::Shapes => shapes(u, v),
                    Image::Strokes => strokes(u, v),
                });
            }
        }
        RgbImage {
            width: n,
            height: n,
            data,
        }
    }
}

fn checker(x: u32, y: u32) -> [f32; 3] {
    if ((x / 16) + (y / 16)).is_multiple_of(2) {
        [0.95, 0.9, 0.8]
    } else {
        [0.1, 0.2, 0.45]
    }
}

fn rings(u: f32, v: f32) -> [f32; 3] {
    let r = ((u - 0.5).powi(2) + (v - 0.5).powi(2)).sqrt();
    let band = 0.5 + 0.5 * (r * 60.0).cos();
    [band, 0.3 + 0.4 * band * u, 1.0 - band * 0.8]
}

fn shapes(u: f32, v: f32) -> [f32; 3] {
    let mut c = [0.2 + 0.6 * u, 0.3 + 0.4 * v, 0.8 - 0.5 * u];
    if (u - 0.32).powi(2) + (v - 0.35).powi(2) < 0.04 {
        c = [0.95, 0.8, 0.1];
    }
    if (0.55..0.85).contains(&u) && (0.55..0.8).contains(&v) {
        c = [0.8, 0.1, 0.2];
    }
    // A triangle: below the line from (0.1, 0.9) up to (0.3, 0.6) and down to (0.5, 0.9).
    if v < 0.9 && v > 0.6 && (u - 0.3).abs() < (v - 0.6) * 0.67 {
        c = [0.1, 0.6, 0.3];
    }
    c
}

/// Dark strokes on paper, like a few handwritten letters.
fn strokes(u: f32, v: f32) -> [f32; 3] {
    const SEGMENTS: [[f32; 4]; 9] = [
        [0.15, 0.2, 0.15, 0.8],
        [0.15, 0.2, 0.35, 0.2],
        [0.15, 0.5, 0.3, 0.5],
        [0.45, 0.2, 0.45, 0.8],
        [0.45, 0.8, 0.6, 0.8],
        [0.7, 0.2, 0.85, 0.8],
        [0.85, 0.2, 0.7, 0.8],
        [0.1, 0.9, 0.9, 0.88],
        [0.6, 0.1, 0.9, 0.12],
    ];
    let ink = SEGMENTS
        .iter()
        .any(|&[x0, y0, x1, y1]| segment_distance(u, v, x0, y0, x1, y1) < 0.025);
    if ink {
        [0.08, 0.08, 0.15]
    } else {
        [0.97, 0.95, 0.9]
    }
}

fn segment_distance(u: f32, v: f32, x0: f32, y0: f32, x1: f32, y1: f32) -> f32 {
    let (dx, dy) = (x1 - x0, y1 - y0);
    let t = (((u - x0) * dx + (v - y0) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
    ((u - x0 - t * dx).powi(2) + (v - y0 - t * dy).powi(2)).sqrt()
}

/// An RGB image, H×W×3 floats in [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct RgbImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<f32>,
}

impl RgbImage {
    /// From canvas RGBA bytes (alpha dropped: the page draws on white first).
    pub fn from_rgba(width: u32, height: u32, rgba: &[u8]) -> Option<RgbImage> {
        if rgba.len() != (width as usize) * (height as usize) * 4 || width == 0 || height == 0 {
            return None;
        }
        let data = rgba
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]].map(|b| b as f32 / 255.0))
            .collect();
        Some(RgbImage {
            width,
            height,
            data,
        })
    }

    pub fn to_rgba(&self) -> Vec<u8> {
        to_rgba(&self.data, 0.0)
    }
}

/// Floats (three per pixel) → canvas RGBA bytes, `offset` added (filters whose sum is 0 are
/// shown around mid-grey), clamped to [0, 1].
pub fn to_rgba(rgb: &[f32], offset: f32) -> Vec<u8> {
    rgb.chunks_exact(3)
        .flat_map(|p| {
            let b = |v: f32| ((v + offset).clamp(0.0, 1.0) * 255.0).round() as u8;
            [b(p[0]), b(p[1]), b(p[2]), 255]
        })
        .collect()
}

/// The size a picture is drawn at: scaled down (aspect kept) so its longest side is at most
/// [`MAX_SIDE`]; `None` for an empty picture.
pub fn fit_size(width: u32, height: u32) -> Option<(u32, u32)> {
    if width == 0 || height == 0 {
        return None;
    }
    let longest = width.max(height);
    if longest <= MAX_SIDE {
        return Some((width, height));
    }
    let scale =
        |v: u32| ((v as u64 * MAX_SIDE as u64 + longest as u64 / 2) / longest as u64).max(1) as u32;
    Some((scale(width), scale(height)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Box,
    Gauss,
    Sharpen,
    SobelX,
    SobelY,
    Edge,
    Emboss,
    Custom,
}

impl Preset {
    pub const ALL: [Preset; 8] = [
        Preset::Box,
        Preset::Gauss,
        Preset::Sharpen,
        Preset::SobelX,
        Preset::SobelY,
        Preset::Edge,
        Preset::Emboss,
        Preset::Custom,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Preset::Box => "box",
            Preset::Gauss => "gauss",
            Preset::Sharpen => "sharpen",
            Preset::SobelX => "sobelx",
            Preset::SobelY => "sobely",
            Preset::Edge => "edge",
            Preset::Emboss => "emboss",
            Preset::Custom => "custom",
        }
    }

    /// Added to the output before display: derivative filters sum to 0, so grey is "no change".
    pub fn offset(self) -> f32 {
        match self {
            Preset::SobelX | Preset::SobelY => 0.5,
            _ => 0.0,
        }
    }

    /// Its weights for a `side`×`side` grid (3 or 5), row-major. The blurs have true 5×5
    /// forms; the others are their 3×3 form in the middle of a zero border.
    pub fn weights(self, side: u32) -> Vec<f32> {
        let three: [f32; 9] = match self {
            Preset::Box | Preset::Custom => [1.0 / 9.0; 9],
            Preset::Gauss => [1., 2., 1., 2., 4., 2., 1., 2., 1.].map(|v| v / 16.0),
            Preset::Sharpen => [0., -1., 0., -1., 5., -1., 0., -1., 0.],
            Preset::SobelX => [-1., 0., 1., -2., 0., 2., -1., 0., 1.],
            Preset::SobelY => [-1., -2., -1., 0., 0., 0., 1., 2., 1.],
            Preset::Edge => [-1., -1., -1., -1., 8., -1., -1., -1., -1.],
            Preset::Emboss => [-2., -1., 0., -1., 1., 1., 0., 1., 2.],
        };
        if side != 5 {
            return three.to_vec();
        }
        match self {
            Preset::Box | Preset::Custom => vec![1.0 / 25.0; 25],
            Preset::Gauss => {
                let row = [1., 4., 6., 4., 1.];
                (0..25).map(|i| row[i / 5] * row[i % 5] / 256.0).collect()
            }
            _ => (0..25)
                .map(|i| {
                    let (r, c) = (i / 5, i % 5);
                    if (1..4).contains(&r) && (1..4).contains(&c) {
                        three[(r - 1) * 3 + c - 1]
                    } else {
                        0.0
                    }
                })
                .collect(),
        }
    }
}

/// A weight as the grid shows it and the URL stores it: short, exact for the presets' fractions
/// to the shown digits.
pub fn format_weight(w: f32) -> String {
    let s = format!("{:.4}", w);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// A typed weight: a finite number within ±[`MAX_WEIGHT`], or a fraction `a/b`.
pub fn parse_weight(s: &str) -> Option<f32> {
    let s = s.trim();
    let v = match s.split_once('/') {
        Some((a, b)) => {
            let (a, b): (f32, f32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            if b == 0.0 {
                return None;
            }
            a / b
        }
        None => s.parse().ok()?,
    };
    (v.is_finite() && v.abs() <= MAX_WEIGHT).then_some(v)
}

/// A URL value that was not valid, named for the page's message: the parameter, what was
/// typed, and the default used instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadParam {
    pub key: &'static str,
    pub value: String,
    pub default: String,
}

/// Every setting of the page; all of them live in the URL.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub image: Image,
    pub preset: Preset,
    pub side: u32,
    /// side² weights, row-major.
    pub weights: Vec<f32>,
    pub stage: ConvStage,
    pub stride: u32,
    pub pad: u32,
    pub dilation: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            image: Image::Shapes,
            preset: Preset::Gauss,
            side: 3,
            weights: Preset::Gauss.weights(3),
            stage: ConvStage::Direct,
            stride: 1,
            pad: 1,
            dilation: 1,
        }
    }
}

/// The parsed value of `key`, or `None` when absent or bad; a bad value is added to `bad`.
pub(crate) fn read<T>(
    q: &Query,
    bad: &mut Vec<BadParam>,
    key: &'static str,
    default: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let v = q.get(key)?;
    let parsed = parse(v);
    if parsed.is_none() {
        bad.push(BadParam {
            key,
            value: v.to_string(),
            default: default.to_string(),
        });
    }
    parsed
}

/// Parses a whole number in `lo..=hi`.
pub fn parse_in(s: &str, lo: u32, hi: u32) -> Option<u32> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| (lo..=hi).contains(v))
}

impl Settings {
    /// Reads the URL; each bad value is named and replaced by its default.
    pub fn from_query(q: &Query) -> (Settings, Vec<BadParam>) {
        let d = Settings::default();
        let mut bad = Vec::new();
        let mut s = d.clone();
        let b = &mut bad;
        let img = |v: &str| Image::ALL.into_iter().find(|i| i.id() == v);
        let preset = |v: &str| Preset::ALL.into_iter().find(|p| p.id() == v);
        let stage = |v: &str| STAGES.into_iter().find(|st| stage_param(*st) == v);
        let side = |v: &str| parse_in(v, 3, 5).filter(|n| n % 2 == 1);
        s.image = read(q, b, "img", d.image.id(), img).unwrap_or(d.image);
        s.preset = read(q, b, "filter", d.preset.id(), preset).unwrap_or(d.preset);
        s.side = read(q, b, "size", &d.side.to_string(), side).unwrap_or(d.side);
        s.stage = read(q, b, "stage", stage_param(d.stage), stage).unwrap_or(d.stage);
        let int = |lo, hi| move |v: &str| parse_in(v, lo, hi);
        s.stride = read(q, b, "stride", "1", int(1, MAX_STRIDE)).unwrap_or(d.stride);
        s.pad = read(q, b, "pad", "1", int(0, MAX_PAD)).unwrap_or(d.pad);
        s.dilation = read(q, b, "dil", "1", int(1, MAX_DILATION)).unwrap_or(d.dilation);
        s.weights = s.preset.weights(s.side);
        if s.preset == Preset::Custom {
            let n = (s.side * s.side) as usize;
            let weights = |v: &str| {
                let w: Option<Vec<f32>> = v.split(',').map(parse_weight).collect();
                w.filter(|w| w.len() == n)
            };
            let default = format_weights(&s.weights);
            if let Some(w) = read(q, b, "w", &default, weights) {
                s.weights = w;
            }
        }
        (s, bad)
    }

    /// Writes every setting into `q` (the weights only for a hand-made filter).
    pub fn write(&self, q: &mut Query) {
        q.set("img", self.image.id());
        q.set("filter", self.preset.id());
        q.set("size", &self.side.to_string());
        q.set("stage", stage_param(self.stage));
        q.set("stride", &self.stride.to_string());
        q.set("pad", &self.pad.to_string());
        q.set("dil", &self.dilation.to_string());
        if self.preset == Preset::Custom {
            q.set("w", &format_weights(&self.weights));
        }
    }

    /// The convolution of an `w`×`h` RGB image with this filter, each channel on its own
    /// (C = K = 3).
    pub fn shape(&self, width: u32, height: u32) -> ConvShape {
        ConvShape::new(1, 3, height, width, 3, self.side, self.side).with(
            self.stride,
            self.pad,
            self.dilation,
        )
    }

    /// The filter as R×S×C×K (HWIO): weight w[r][s] from channel c to output k = c, zero
    /// across channels, so each colour is filtered on its own.
    pub fn filter_tensor(&self) -> Vec<f32> {
        let mut f = vec![0.0; self.weights.len() * 9];
        for (rs, &w) in self.weights.iter().enumerate() {
            for c in 0..3 {
                f[rs * 9 + c * 3 + c] = w;
            }
        }
        f
    }
}

pub fn format_weights(w: &[f32]) -> String {
    w.iter()
        .map(|&v| format_weight(v))
        .collect::<Vec<_>>()
        .join(",")
}

/// The output-size formula along one axis with the numbers in: the terms, and the result or
/// the shape error.
pub fn out_size(input: u32, pad: u32, dilation: u32, side: u32, stride: u32) -> Option<u32> {
    let extent = dilation as u64 * (side as u64 - 1) + 1;
    let padded = input as u64 + 2 * pad as u64;
    (stride > 0 && padded >= extent).then(|| ((padded - extent) / stride as u64 + 1) as u32)
}

/// The key and arguments of a shape error's message.
pub fn shape_error_args(e: &ConvShapeError) -> (&'static str, Vec<(&'static str, String)>) {
    match e {
        ConvShapeError::FilterLargerThanInput {
            axis,
            extent,
            padded,
        } => (
            "conv.error.filter_larger",
            vec![
                ("axis", axis.to_string()),
                ("extent", extent.to_string()),
                ("padded", padded.to_string()),
            ],
        ),
        ConvShapeError::ZeroSize(_) | ConvShapeError::ZeroStep(_) => ("conv.error.zero", vec![]),
        ConvShapeError::TooLarge => ("conv.error.too_large", vec![]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_through_the_url() {
        let s = Settings {
            image: Image::Strokes,
            preset: Preset::Custom,
            side: 5,
            weights: (0..25).map(|i| i as f32 - 12.0).collect(),
            stage: ConvStage::ImplicitGemm,
            stride: 2,
            pad: 3,
            dilation: 2,
        };
        let mut q = Query::default();
        s.write(&mut q);
        assert_eq!(Settings::from_query(&q), (s, vec![]));
        assert_eq!(
            Settings::from_query(&Query::default()),
            (Settings::default(), vec![])
        );
    }

    #[test]
    fn bad_url_values_are_named_and_replaced() {
        let q = Query::parse("img=cat&filter=blur&size=4&stage=fft&stride=0&pad=999&dil=x");
        let (s, bad) = Settings::from_query(&q);
        assert_eq!(s, Settings::default());
        let keys: Vec<_> = bad
            .iter()
            .map(|b| (b.key, b.value.as_str(), b.default.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("img", "cat", "shapes"),
                ("filter", "blur", "gauss"),
                ("size", "4", "3"),
                ("stage", "fft", "direct"),
                ("stride", "0", "1"),
                ("pad", "999", "1"),
                ("dil", "x", "1"),
            ]
        );
        // Custom weights: too few, not numbers, or huge → the box filter, named.
        for w in [
            "1,2,3",
            "a,b,c,d,e,f,g,h,i",
            "1e9,0,0,0,0,0,0,0,0",
            "1/0,0,0,0,0,0,0,0,0",
        ] {
            let (s, bad) = Settings::from_query(&Query::parse(&format!("filter=custom&w={w}")));
            assert_eq!(s.weights, vec![1.0 / 9.0; 9]);
            assert_eq!(bad.len(), 1, "{w}");
            assert_eq!(bad[0].key, "w");
        }
        let (s, _) = Settings::from_query(&Query::parse("filter=custom&w=1/4,0,0,0,-2,0,0,0,0.5"));
        assert_eq!(s.weights, vec![0.25, 0., 0., 0., -2., 0., 0., 0., 0.5]);
    }

    #[test]
    fn presets_have_their_textbook_sums() {
        for side in [3, 5] {
            let sum = |p: Preset| p.weights(side).iter().sum::<f32>();
            for p in [Preset::Box, Preset::Gauss, Preset::Sharpen, Preset::Emboss] {
                assert!((sum(p) - 1.0).abs() < 1e-5, "{p:?} {side}");
            }
            for p in [Preset::SobelX, Preset::SobelY, Preset::Edge] {
                assert_eq!(sum(p), 0.0, "{p:?} {side}");
            }
            assert_eq!(Preset::Edge.weights(side).len() as u32, side * side);
        }
        assert_eq!(Preset::Gauss.weights(5)[12], 36.0 / 256.0);
        assert_eq!(Preset::SobelX.weights(5)[6..9], [-1.0, 0.0, 1.0]);
    }

    #[test]
    fn filter_tensor_keeps_colours_apart() {
        let s = Settings {
            weights: (1..=9).map(|v| v as f32).collect(),
            ..Settings::default()
        };
        let f = s.filter_tensor();
        assert_eq!(f.len(), 3 * 3 * 3 * 3);
        // tap (1, 2) = index 5: red→red, green→green, blue→blue hold 6, the rest 0.
        assert_eq!(&f[45..54], &[6., 0., 0., 0., 6., 0., 0., 0., 6.]);
        // The CPU reference of that filter on a one-pixel-wide image: the centre tap times the pixel.
        let shape = ConvShape::new(1, 3, 1, 1, 3, 3, 3).with(1, 1, 1);
        let y = cpu_kernels::conv::reference(&shape, &[0.5, 0.25, 1.0], &f).value;
        assert_eq!(y, vec![2.5, 1.25, 5.0]);
    }

    #[test]
    fn output_size_formula_and_errors() {
        assert_eq!(out_size(128, 1, 1, 3, 1), Some(128));
        assert_eq!(out_size(128, 0, 1, 5, 2), Some(62));
        assert_eq!(out_size(7, 0, 3, 3, 1), Some(1));
        assert_eq!(out_size(6, 0, 3, 3, 1), None);
        let mut s = Settings {
            side: 5,
            dilation: 40,
            pad: 0,
            ..Settings::default()
        };
        let e = s.shape(128, 128).validate().unwrap_err();
        assert_eq!(shape_error_args(&e).0, "conv.error.filter_larger");
        s.dilation = 1;
        assert_eq!(s.shape(100, 60).validate(), Ok((56, 96)));
    }

    #[test]
    fn images_and_pixels() {
        for img in Image::ALL {
            let p = img.pixels();
            assert_eq!(p.data.len(), 128 * 128 * 3);
            assert!(p.data.iter().all(|v| (0.0..=1.0).contains(v)), "{img:?}");
            let distinct: std::collections::BTreeSet<u32> =
                p.data.iter().map(|v| v.to_bits()).collect();
            assert!(distinct.len() > 3, "{img:?} is not flat");
        }
        assert_eq!(to_rgba(&[-0.2, 0.5, 2.0], 0.0), vec![0, 128, 255, 255]);
        assert_eq!(to_rgba(&[-0.5, 0.0, 0.25], 0.5), vec![0, 128, 191, 255]);
        let img = RgbImage::from_rgba(1, 1, &[255, 0, 51, 7]).expect("one pixel");
        assert_eq!(img.data, vec![1.0, 0.0, 0.2]);
        assert_eq!(RgbImage::from_rgba(2, 1, &[0; 4]), None);
        assert_eq!(fit_size(4000, 3000), Some((256, 192)));
        assert_eq!(fit_size(100, 30), Some((100, 30)));
        assert_eq!(fit_size(10000, 1), Some((256, 1)));
        assert_eq!(fit_size(0, 5), None);
        assert_eq!(format_weight(1.0 / 16.0), "0.0625");
        assert_eq!(format_weight(-2.0), "-2");
        assert_eq!(parse_weight(" 1/9 "), Some(1.0 / 9.0));
    }
}

/// What the page's controls change, as typed: one reducer holds it, so the filter grid, the
/// presets and the arithmetic fields stay consistent.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub settings: Settings,
    /// The grid's cells as typed (side² of them).
    pub cells: Vec<String>,
    /// Stride, padding, dilation as typed.
    pub fields: [String; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Image(Image),
    Preset(Preset),
    Side(u32),
    Stage(ConvStage),
    /// A grid cell typed: the filter becomes hand-made.
    Cell(usize, String),
    /// Stride (0), padding (1) or dilation (2) typed.
    Field(usize, String),
}

/// Names, limits of the three arithmetic fields, in [`Form::fields`] order.
pub const FIELDS: [(&str, u32, u32); 3] = [
    ("stride", 1, MAX_STRIDE),
    ("pad", 0, MAX_PAD),
    ("dil", 1, MAX_DILATION),
];

/// Why the typed form cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormError {
    /// Grid cell (row-major index) is not a number within ±MAX_WEIGHT.
    Cell(usize),
    /// Arithmetic field (index into [`FIELDS`]) is not a whole number in its range.
    Field(usize),
}

impl Form {
    pub fn new(settings: Settings) -> Form {
        Form {
            cells: settings.weights.iter().map(|&w| format_weight(w)).collect(),
            fields: [settings.stride, settings.pad, settings.dilation].map(|v| v.to_string()),
            settings,
        }
    }

    pub fn apply(&self, action: Action) -> Form {
        let mut s = self.settings.clone();
        match action {
            Action::Image(i) => s.image = i,
            Action::Stage(st) => s.stage = st,
            Action::Preset(p) => {
                s.preset = p;
                if p != Preset::Custom {
                    s.weights = p.weights(s.side);
                }
            }
            Action::Side(side) if side == 3 || side == 5 => {
                s.side = side;
                s.weights = s.preset.weights(side);
                // A hand-made 3×3 keeps its weights in the middle of the 5×5 (and back).
                if s.preset == Preset::Custom && side != self.settings.side {
                    s.weights = resize_weights(&self.settings.weights, self.settings.side, side);
                }
            }
            Action::Side(_) => {}
            Action::Cell(i, text) => {
                let mut next = self.clone();
                if i < next.cells.len() {
                    next.cells[i] = text;
                    next.settings.preset = Preset::Custom;
                    if let Some(w) = next.cells.iter().map(|c| parse_weight(c)).collect() {
                        next.settings.weights = w;
                    }
                }
                return next;
            }
            Action::Field(i, text) => {
                let mut next = self.clone();
                if let (Some(slot), Some(&(_, lo, hi))) = (next.fields.get_mut(i), FIELDS.get(i)) {
                    if let Some(v) = parse_in(&text, lo, hi) {
                        *[
                            &mut next.settings.stride,
                            &mut next.settings.pad,
                            &mut next.settings.dilation,
                        ][i] = v;
                    }
                    *slot = text;
                }
                return next;
            }
        }
        let mut next = Form::new(s);
        next.fields = self.fields.clone();
        next
    }

    /// The settings when every typed value is valid, else each bad one.
    pub fn parsed(&self) -> Result<&Settings, Vec<FormError>> {
        let mut errors: Vec<FormError> = self
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| parse_weight(c).is_none())
            .map(|(i, _)| FormError::Cell(i))
            .collect();
        for (i, (f, &(_, lo, hi))) in self.fields.iter().zip(&FIELDS).enumerate() {
            if parse_in(f, lo, hi).is_none() {
                errors.push(FormError::Field(i));
            }
        }
        if errors.is_empty() {
            Ok(&self.settings)
        } else {
            Err(errors)
        }
    }
}

fn resize_weights(w: &[f32], from: u32, to: u32) -> Vec<f32> {
    let (from, to) = (from as usize, to as usize);
    let mut out = vec![0.0; to * to];
    let off = |a: usize, b: usize| (a.max(b) - a.min(b)) / 2;
    let o = off(from, to);
    for r in 0..from.min(to) {
        for c in 0..from.min(to) {
            if from < to {
                out[(r + o) * to + c + o] = w[r * from + c];
            } else {
                out[r * to + c] = w[(r + o) * from + c + o];
            }
        }
    }
    out
}

#[cfg(test)]
mod form_tests {
    use super::*;

    #[test]
    fn typing_in_the_grid_makes_a_custom_filter_and_names_bad_cells() {
        let f = Form::new(Settings::default()).apply(Action::Cell(4, "2".into()));
        assert_eq!(f.settings.preset, Preset::Custom);
        assert_eq!(f.settings.weights[4], 2.0);
        assert_eq!(f.settings.weights[0], 1.0 / 16.0);
        let bad = f.apply(Action::Cell(0, "abc".into()));
        assert_eq!(bad.parsed(), Err(vec![FormError::Cell(0)]));
        let fixed = bad.apply(Action::Cell(0, "1/2".into()));
        assert_eq!(fixed.parsed().map(|s| s.weights[0]), Ok(0.5));
        // 3×3 → 5×5 keeps the hand-made weights in the middle, and back.
        let five = fixed.apply(Action::Side(5));
        assert_eq!(five.cells.len(), 25);
        assert_eq!(five.settings.weights[12], 2.0);
        assert_eq!(five.settings.weights[0], 0.0);
        assert_eq!(
            five.apply(Action::Side(3)).settings.weights,
            fixed.settings.weights
        );
        // A preset overwrites the grid.
        let sobel = five.apply(Action::Preset(Preset::SobelX));
        assert_eq!(sobel.settings.weights, Preset::SobelX.weights(5));
        assert_eq!(sobel.cells[6], "-1");
    }

    #[test]
    fn arithmetic_fields_are_checked_as_typed() {
        let f = Form::new(Settings::default());
        let f = f
            .apply(Action::Field(0, "2".into()))
            .apply(Action::Field(2, "3".into()));
        assert_eq!((f.settings.stride, f.settings.dilation), (2, 3));
        for (i, text) in [(0, "0"), (1, "65"), (2, "x"), (1, "-1"), (0, "")] {
            let bad = f.apply(Action::Field(i, text.into()));
            assert_eq!(bad.parsed(), Err(vec![FormError::Field(i)]), "{i} {text}");
        }
        // Later changes keep what was typed.
        let bad = f
            .apply(Action::Field(1, "abc".into()))
            .apply(Action::Stage(ConvStage::Tiled));
        assert_eq!(bad.fields[1], "abc");
        assert!(bad.parsed().is_err());
    }
}

// ---------------------------------------------------------------- the page's state

/// Where the input picture came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Bundled(Image),
    /// The learner's file: its name, the picture as decoded, and its original size when it was
    /// scaled down.
    Own {
        name: String,
        image: std::rc::Rc<RgbImage>,
        scaled: Option<(u32, u32)>,
    },
}

/// The filter run's state.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Idle,
    Running,
    Done(std::rc::Rc<Done>),
    /// The error, as the page shows it.
    Failed(String),
}

/// A finished filter run.
#[derive(Debug, PartialEq)]
pub struct Done {
    pub image: RgbImage,
    /// Added before display (see [`Preset::offset`]).
    pub offset: f32,
    pub ms: f64,
    /// `None` on the CPU path (the reference itself made the output); else the verdict and
    /// how many values were checked.
    pub verified: Option<(bool, usize)>,
    pub stage: ConvStage,
}

impl Outcome {
    /// The status's `data-verified`: the GPU verdict, "cpu", "error", or empty before a run.
    pub fn verified_attr(&self) -> String {
        match self {
            Outcome::Done(d) => match d.verified {
                Some((ok, _)) => ok.to_string(),
                None => "cpu".into(),
            },
            Outcome::Failed(_) => "error".into(),
            Outcome::Idle | Outcome::Running => String::new(),
        }
    }
}

/// What the conv page's filter controls change, in one reducer: the typed form, the picture
/// and the filter run. (The layer view's settings are `conv_layers`', which reads this
/// module: kept beside this state, not in it, so neither module names the other back.)
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub form: Form,
    pub source: Source,
    /// The name of a file that was not a picture.
    pub upload_error: Option<String>,
    pub outcome: Outcome,
    /// Finished runs (the status's `data-runs`, which tests wait on).
    pub runs: u32,
}

/// An edit of the page.
#[derive(Clone, Debug, PartialEq)]
pub enum PageAction {
    /// A form edit (grid, fields, presets, stage).
    Form(Action),
    /// A bundled picture picked.
    Bundled(Image),
    /// The learner's picture decoded.
    Own {
        name: String,
        image: std::rc::Rc<RgbImage>,
        scaled: Option<(u32, u32)>,
    },
    /// A dropped, pasted or chosen file that is not a picture (its name).
    NotImage(String),
    Started,
    Finished(Result<std::rc::Rc<Done>, String>),
}

impl Page {
    pub fn new(settings: Settings) -> Page {
        Page {
            source: Source::Bundled(settings.image),
            form: Form::new(settings),
            upload_error: None,
            outcome: Outcome::Idle,
            runs: 0,
        }
    }

    pub fn apply(&self, action: PageAction) -> Page {
        let mut next = self.clone();
        match action {
            PageAction::Form(a) => next.form = self.form.apply(a),
            PageAction::Bundled(i) => {
                next.source = Source::Bundled(i);
                next.outcome = Outcome::Idle;
                next.form = self.form.apply(Action::Image(i));
            }
            PageAction::Own {
                name,
                image,
                scaled,
            } => {
                next.source = Source::Own {
                    name,
                    image,
                    scaled,
                };
                next.upload_error = None;
                next.outcome = Outcome::Idle;
            }
            PageAction::NotImage(name) => next.upload_error = Some(name),
            PageAction::Started => next.outcome = Outcome::Running,
            PageAction::Finished(r) => {
                next.outcome = match r {
                    Ok(d) => Outcome::Done(d),
                    Err(m) => Outcome::Failed(m),
                };
                next.runs = self.runs + 1;
            }
        }
        // An output made with other settings would be mislabelled.
        if next.form.settings != self.form.settings {
            next.outcome = Outcome::Idle;
        }
        next
    }

    /// The picture filtered: the learner's, else the bundled one the settings name.
    pub fn input(&self) -> std::rc::Rc<RgbImage> {
        match &self.source {
            Source::Own { image, .. } => image.clone(),
            Source::Bundled(_) => std::rc::Rc::new(self.form.settings.image.pixels()),
        }
    }

    /// The picture select's value.
    pub fn image_value(&self) -> &'static str {
        match &self.source {
            Source::Bundled(i) => i.id(),
            Source::Own { .. } => "own",
        }
    }

    /// The settings as the URL keeps them (the image is the last bundled one).
    pub fn url_settings(&self) -> Settings {
        let mut s = self.form.settings.clone();
        if let Source::Bundled(i) = &self.source {
            s.image = *i;
        }
        s
    }

    /// Whether Run can start: every typed value valid, the shape possible for `input`, the
    /// GPU check over (`checking` false) and no run going.
    pub fn can_run(&self, input: &RgbImage, checking: bool) -> bool {
        self.form.parsed().is_ok()
            && self
                .form
                .settings
                .shape(input.width, input.height)
                .validate()
                .is_ok()
            && !checking
            && self.outcome != Outcome::Running
    }
}

/// The output-size formula's arguments along one axis (`axis`, input length `input_len`),
/// with "—" for an output that cannot be made.
pub fn formula_args(s: &Settings, axis: &str, input_len: u32) -> Vec<(&'static str, String)> {
    vec![
        ("axis", axis.to_string()),
        ("in", input_len.to_string()),
        ("pad", s.pad.to_string()),
        ("dil", s.dilation.to_string()),
        ("r", s.side.to_string()),
        ("stride", s.stride.to_string()),
        (
            "out",
            out_size(input_len, s.pad, s.dilation, s.side, s.stride)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "—".into()),
        ),
    ]
}

#[cfg(test)]
mod page_tests {
    use std::rc::Rc;

    use super::*;

    fn done() -> Rc<Done> {
        Rc::new(Done {
            image: RgbImage {
                width: 1,
                height: 1,
                data: vec![0.0; 3],
            },
            offset: 0.0,
            ms: 1.0,
            verified: Some((true, 3)),
            stage: ConvStage::Direct,
        })
    }

    #[test]
    fn a_run_counts_and_a_settings_change_makes_it_stale() {
        let p = Page::new(Settings::default());
        assert_eq!(p.outcome.verified_attr(), "");
        let p = p.apply(PageAction::Started);
        assert!(
            !p.can_run(&p.input(), false),
            "no second run while one goes"
        );
        let p = p.apply(PageAction::Finished(Ok(done())));
        assert_eq!((p.runs, p.outcome.verified_attr().as_str()), (1, "true"));
        // An edit that leaves the settings as they were keeps the output.
        let same = p.apply(PageAction::Form(Action::Stage(ConvStage::Direct)));
        assert!(matches!(same.outcome, Outcome::Done(_)));
        let stale = p.apply(PageAction::Form(Action::Stage(ConvStage::Tiled)));
        assert_eq!(stale.outcome, Outcome::Idle);
        let failed = stale.apply(PageAction::Finished(Err("lost".into())));
        assert_eq!(
            (failed.runs, failed.outcome.verified_attr().as_str()),
            (2, "error")
        );
    }

    #[test]
    fn own_pictures_replace_the_bundled_one_until_one_is_picked() {
        let p = Page::new(Settings::default());
        assert_eq!(p.image_value(), "shapes");
        assert_eq!(p.input().width, BUNDLED_SIDE);
        let p = p.apply(PageAction::NotImage("notes.txt".into()));
        assert_eq!(p.upload_error.as_deref(), Some("notes.txt"));
        let own = Rc::new(RgbImage {
            width: 2,
            height: 1,
            data: vec![0.5; 6],
        });
        let p = p
            .apply(PageAction::Finished(Ok(done())))
            .apply(PageAction::Own {
                name: "cat.png".into(),
                image: own.clone(),
                scaled: Some((4000, 2000)),
            });
        assert_eq!(
            (p.upload_error.clone(), p.outcome.clone()),
            (None, Outcome::Idle)
        );
        assert_eq!((p.image_value(), p.input()), ("own", own));
        // The URL keeps the last bundled picture.
        assert_eq!(p.url_settings().image, Image::Shapes);
        let p = p.apply(PageAction::Bundled(Image::Rings));
        assert_eq!(
            (p.image_value(), p.url_settings().image),
            ("rings", Image::Rings)
        );
        assert_eq!(p.input().width, BUNDLED_SIDE);
    }

    #[test]
    fn run_needs_valid_fields_a_possible_shape_and_a_finished_check() {
        let p = Page::new(Settings::default());
        let input = p.input();
        assert!(p.can_run(&input, false));
        assert!(!p.can_run(&input, true));
        let bad = p.apply(PageAction::Form(Action::Field(0, "x".into())));
        assert!(!bad.can_run(&input, false));
        let tiny = RgbImage {
            width: 1,
            height: 1,
            data: vec![0.0; 3],
        };
        let no_pad = p.apply(PageAction::Form(Action::Field(1, "0".into())));
        assert!(!no_pad.can_run(&tiny, false));
    }

    #[test]
    fn formula_args_name_the_output_or_a_dash() {
        let s = Settings::default();
        let args = formula_args(&s, "H", 128);
        assert_eq!(args.last(), Some(&("out", "128".to_string())));
        let s = Settings {
            pad: 0,
            dilation: 64,
            ..s
        };
        assert_eq!(
            formula_args(&s, "W", 6).last(),
            Some(&("out", "—".to_string()))
        );
    }
}
