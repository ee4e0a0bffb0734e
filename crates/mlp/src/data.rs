//! Seeded two-class datasets on the square [−6, 6]², in the spirit of TensorFlow Playground,
//! and the input features computed from a point.

use cpu_kernels::data::SplitMix64;

/// Half the side of the plotted square.
pub const EXTENT: f32 = 6.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    Circle,
    Xor,
    Gauss,
    Spiral,
    /// Regression: a tilted plane, t = (x + y) / 10.
    Plane,
    /// Regression: two hills and two valleys, t = Σ ±exp(−|p − c|² / 2σ²).
    Hills,
}

impl Dataset {
    pub const ALL: [Dataset; 4] = [
        Dataset::Circle,
        Dataset::Xor,
        Dataset::Gauss,
        Dataset::Spiral,
    ];

    /// The regression datasets: a continuous target per point instead of a class.
    pub const REGRESSION: [Dataset; 2] = [Dataset::Plane, Dataset::Hills];

    pub fn code(self) -> &'static str {
        match self {
            Dataset::Circle => "circle",
            Dataset::Xor => "xor",
            Dataset::Gauss => "gauss",
            Dataset::Spiral => "spiral",
            Dataset::Plane => "plane",
            Dataset::Hills => "hills",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain(Self::REGRESSION)
            .find(|d| d.code() == s)
    }

    pub fn is_regression(self) -> bool {
        Self::REGRESSION.contains(&self)
    }

    /// Features that make this dataset learnable in seconds by a small network, where x and y
    /// alone do not: the two arms of the spiral wind around the origin, so a few tanh units
    /// of x and y draw one straight-ish boundary for a long time, while sin x and sin y give
    /// the first layer the oscillation the arms have. The page suggests them.
    pub fn suggested_features(self) -> &'static [Feature] {
        match self {
            Dataset::Spiral => &[Feature::SinX, Feature::SinY],
            _ => &[],
        }
    }

    /// The clean regression target at (x, y), in [−1, 1]; 0 for classification datasets.
    pub fn target(self, x: f32, y: f32) -> f32 {
        match self {
            Dataset::Plane => ((x + y) / 10.0).clamp(-1.0, 1.0),
            Dataset::Hills => {
                let bump = |cx: f32, cy: f32| {
                    (-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (2.0 * 2.0 * 2.0)).exp()
                };
                (bump(2.5, 2.5) + bump(-2.5, -2.5) - bump(2.5, -2.5) - bump(-2.5, 2.5))
                    .clamp(-1.0, 1.0)
            }
            _ => 0.0,
        }
    }

    /// `n` points (half of each class, interleaved), reproducible from `seed`. `noise` (0 to
    /// 0.5) jitters the points; labels come from the clean shape, so noise makes the classes
    /// overlap.
    pub fn generate(self, n: usize, noise: f32, seed: u64) -> Points {
        let mut rng = SplitMix64::new(seed ^ (self as u64 + 1).wrapping_mul(0x9E37_79B9));
        let mut unit = move || (rng.next_signed_unit() + 1.0) * 0.5; // [0, 1)
        let mut pts = Points::default();
        const R: f32 = 5.0;
        if self.is_regression() {
            // Uniform over the square; the target gets noise, the positions do not.
            for _ in 0..n {
                let (x, y) = (R * (2.0 * unit() - 1.0), R * (2.0 * unit() - 1.0));
                let t = self.target(x, y) + noise * (2.0 * unit() - 1.0);
                pts.push(x, y, target_label(t));
            }
            return pts;
        }
        for i in 0..n {
            let label = (i % 2) as u32;
            let (x, y) = match self {
                Dataset::Circle => {
                    let r = if label == 1 {
                        R * 0.5 * unit()
                    } else {
                        R * (0.7 + 0.3 * unit())
                    };
                    let a = std::f32::consts::TAU * unit();
                    let jitter = noise * R;
                    (
                        r * a.cos() + jitter * (2.0 * unit() - 1.0),
                        r * a.sin() + jitter * (2.0 * unit() - 1.0),
                    )
                }
                Dataset::Xor => {
                    // Keep clean points away from the axes so the clean labels are clear.
                    let pad = 0.3;
                    let sx = unit() < 0.5;
                    // Class 1: same signs; class 0: opposite signs.
                    let sy = if label == 1 { sx } else { !sx };
                    let sign = |positive: bool| if positive { 1.0 } else { -1.0 };
                    let x = sign(sx) * (pad + (R - pad) * unit());
                    let y = sign(sy) * (pad + (R - pad) * unit());
                    let jitter = noise * R;
                    (
                        x + jitter * (2.0 * unit() - 1.0),
                        y + jitter * (2.0 * unit() - 1.0),
                    )
                }
                Dataset::Gauss => {
                    let c = if label == 1 { 2.0 } else { -2.0 };
                    let sd = 0.5 + 2.5 * noise;
                    let (g1, g2) = normal_pair(&mut unit);
                    (c + sd * g1, c + sd * g2)
                }
                Dataset::Spiral => {
                    let half = (n / 2).max(1) as f32;
                    let j = (i / 2) as f32;
                    let r = j / half * R;
                    let t = 1.75 * j / half * std::f32::consts::TAU
                        + if label == 1 {
                            0.0
                        } else {
                            std::f32::consts::PI
                        };
                    let jitter = noise * R * 0.5;
                    (
                        r * t.sin() + jitter * (2.0 * unit() - 1.0),
                        r * t.cos() + jitter * (2.0 * unit() - 1.0),
                    )
                }
                // Generated above.
                Dataset::Plane | Dataset::Hills => (0.0, 0.0),
            };
            pts.xy
                .push([x.clamp(-EXTENT, EXTENT), y.clamp(-EXTENT, EXTENT)]);
            pts.label.push(label);
        }
        pts
    }
}

/// A regression target stored in the `u32` label slot (its bits), so labels keep one buffer
/// type; `mlp_loss.wgsl` reads it back with `bitcast<f32>`.
pub fn target_label(t: f32) -> u32 {
    t.to_bits()
}

/// The regression target stored by [`target_label`].
pub fn label_target(label: u32) -> f32 {
    f32::from_bits(label)
}

/// Two independent standard normal numbers (Box–Muller).
fn normal_pair(unit: &mut impl FnMut() -> f32) -> (f32, f32) {
    let u1 = unit().max(1e-7);
    let u2 = unit();
    let r = (-2.0 * u1.ln()).sqrt();
    let a = std::f32::consts::TAU * u2;
    (r * a.cos(), r * a.sin())
}

/// Labelled points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Points {
    pub xy: Vec<[f32; 2]>,
    pub label: Vec<u32>,
}

impl Points {
    pub fn len(&self) -> usize {
        self.label.len()
    }

    pub fn is_empty(&self) -> bool {
        self.label.is_empty()
    }

    pub fn push(&mut self, x: f32, y: f32, label: u32) {
        self.xy.push([x, y]);
        self.label.push(label);
    }

    /// Splits into (train, test): a seeded shuffle, then the first `train_percent` % train.
    pub fn split(&self, train_percent: u32, seed: u64) -> (Points, Points) {
        let order = batch_order(self.len(), seed ^ 0x5B17);
        let n_train = (self.len() * train_percent as usize).div_ceil(100);
        let (mut train, mut test) = (Points::default(), Points::default());
        for (pos, &i) in order.iter().enumerate() {
            let i = i as usize;
            let dst = if pos < n_train { &mut train } else { &mut test };
            dst.push(self.xy[i][0], self.xy[i][1], self.label[i]);
        }
        (train, test)
    }

    /// Feature rows (len × features.len()), row-major.
    pub fn features(&self, features: &[Feature]) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.len() * features.len());
        for p in &self.xy {
            out.extend(features.iter().map(|f| f.value(p[0], p[1])));
        }
        out
    }
}

/// Input features, each scaled into about [−1, 1].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    X,
    Y,
    XSquared,
    YSquared,
    XTimesY,
    SinX,
    SinY,
}

impl Feature {
    pub const ALL: [Feature; 7] = [
        Feature::X,
        Feature::Y,
        Feature::XSquared,
        Feature::YSquared,
        Feature::XTimesY,
        Feature::SinX,
        Feature::SinY,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Feature::X => "x",
            Feature::Y => "y",
            Feature::XSquared => "x2",
            Feature::YSquared => "y2",
            Feature::XTimesY => "xy",
            Feature::SinX => "sinx",
            Feature::SinY => "siny",
        }
    }

    /// How it is written on the page (mathematics, the same in every language).
    pub fn label(self) -> &'static str {
        match self {
            Feature::X => "x",
            Feature::Y => "y",
            Feature::XSquared => "x²",
            Feature::YSquared => "y²",
            Feature::XTimesY => "xy",
            Feature::SinX => "sin x",
            Feature::SinY => "sin y",
        }
    }

    pub fn from_code(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.code() == s)
    }

    /// The feature of point (x, y) of the [−6, 6]² square: x and y are divided by 6 first
    /// (so x² and xy stay within [−1, 1]); sin uses the raw coordinate.
    pub fn value(self, x: f32, y: f32) -> f32 {
        let (u, v) = (x / EXTENT, y / EXTENT);
        match self {
            Feature::X => u,
            Feature::Y => v,
            Feature::XSquared => u * u,
            Feature::YSquared => v * v,
            Feature::XTimesY => u * v,
            Feature::SinX => x.sin(),
            Feature::SinY => y.sin(),
        }
    }
}

/// The centres of a `g` × `g` grid over the square, row by row from the top (y = +6) — the
/// points the decision-boundary picture is computed at.
pub fn grid_points(g: usize) -> Points {
    let mut p = Points::default();
    let step = 2.0 * EXTENT / g as f32;
    for row in 0..g {
        let y = EXTENT - (row as f32 + 0.5) * step;
        for col in 0..g {
            let x = -EXTENT + (col as f32 + 0.5) * step;
            p.push(x, y, 0);
        }
    }
    p
}

/// A seeded permutation of 0…n−1 (Fisher–Yates): the order batches are drawn in.
pub fn batch_order(n: usize, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = SplitMix64::new(seed ^ 0xBA7C_0DE5);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_are_seeded_balanced_and_inside() {
        for d in Dataset::ALL {
            let a = d.generate(200, 0.2, 5);
            assert_eq!(a, d.generate(200, 0.2, 5), "{d:?}");
            assert_ne!(a, d.generate(200, 0.2, 6), "{d:?}");
            assert_eq!(a.label.iter().filter(|&&l| l == 1).count(), 100);
            assert!(a
                .xy
                .iter()
                .all(|p| p[0].abs() <= EXTENT && p[1].abs() <= EXTENT));
        }
    }

    #[test]
    fn clean_shapes_have_their_labels() {
        let c = Dataset::Circle.generate(100, 0.0, 1);
        for (p, &l) in c.xy.iter().zip(&c.label) {
            let r = (p[0] * p[0] + p[1] * p[1]).sqrt();
            assert_eq!(l == 1, r <= 2.5 + 1e-4, "{p:?}");
        }
        let x = Dataset::Xor.generate(100, 0.0, 1);
        for (p, &l) in x.xy.iter().zip(&x.label) {
            assert_eq!(l == 1, p[0] * p[1] > 0.0);
        }
    }

    #[test]
    fn split_keeps_every_point_once() {
        let d = Dataset::Spiral.generate(101, 0.1, 2);
        let (tr, te) = d.split(50, 9);
        assert_eq!(tr.len(), 51);
        assert_eq!(te.len(), 50);
        let mut all: Vec<_> = tr.xy.iter().chain(&te.xy).map(|p| p[0].to_bits()).collect();
        let mut orig: Vec<_> = d.xy.iter().map(|p| p[0].to_bits()).collect();
        all.sort();
        orig.sort();
        assert_eq!(all, orig);
    }

    #[test]
    fn features_are_scaled() {
        let f = Feature::ALL.map(|f| f.value(6.0, -3.0));
        assert_eq!(&f[..5], &[1.0, -0.5, 1.0, 0.25, -0.5]);
        assert_eq!(grid_points(4).len(), 16);
        assert_eq!(grid_points(2).xy[0], [-3.0, 3.0]);
    }
}
