//! Every setting of the train view, read from and written to the URL
//! (`data=spiral&layers=8,8&act=tanh&lr=0.03&batch=32&opt=adam&features=x,y&noise=0.1&seed=1`).
//!
//! Parsing never fails: a bad value is replaced by its default and reported as a
//! [`SpecError`], which names the setting and the value so the page can say exactly what was
//! wrong (in the visitor's language: [`SpecError::key`] and [`SpecError::args`]).

use crate::data::{Dataset, Feature, Points};
use crate::net::{Activation, Hyper, LossKind, Net, Optimiser};

pub const MAX_HIDDEN_LAYERS: usize = 6;
pub const MAX_NEURONS: usize = 32;
pub const MAX_LR: f32 = 10.0;
pub const MAX_NOISE: f32 = 0.5;
pub const MIN_POINTS: usize = 20;
pub const MAX_POINTS: usize = 2000;
pub const MAX_ADDED: usize = 200;
/// Most micro-batches accumulated into one update.
pub const MAX_ACCUM: usize = 64;
pub const CLASSES: usize = 2;

/// Regularisation of the parameters, with its strength λ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Regularisation {
    None,
    L1(f32),
    L2(f32),
}

/// The strengths offered in the page (the URL accepts any in [0, `MAX_REG`]).
pub const REG_RATES: [f32; 8] = [0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3];
pub const MAX_REG: f32 = 1.0;

impl Regularisation {
    pub fn code(self) -> &'static str {
        match self {
            Regularisation::None => "none",
            Regularisation::L1(_) => "l1",
            Regularisation::L2(_) => "l2",
        }
    }

    pub fn rate(self) -> f32 {
        match self {
            Regularisation::None => 0.0,
            Regularisation::L1(r) | Regularisation::L2(r) => r,
        }
    }

    /// (l1, l2) for the optimiser.
    pub fn strengths(self) -> (f32, f32) {
        match self {
            Regularisation::None => (0.0, 0.0),
            Regularisation::L1(r) => (r, 0.0),
            Regularisation::L2(r) => (0.0, r),
        }
    }

    /// From the URL's `reg` code and `regrate` value.
    pub fn from_parts(code: &str, rate: f32) -> Option<Self> {
        match code {
            "none" => Some(Regularisation::None),
            "l1" => Some(Regularisation::L1(rate)),
            "l2" => Some(Regularisation::L2(rate)),
            _ => None,
        }
    }
}

/// The settings of one training setup.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub dataset: Dataset,
    pub noise: f32,
    pub seed: u64,
    /// Percentage of the points used for training; the rest is the test set.
    pub split: u32,
    /// Number of generated points.
    pub points: usize,
    /// Widths of the hidden layers.
    pub hidden: Vec<usize>,
    pub activation: Activation,
    pub lr: f32,
    /// Samples per micro-batch (per forward/backward pass).
    pub batch: usize,
    /// Micro-batches whose gradients are added before one update (gradient accumulation):
    /// the effective batch is `accum · batch`.
    pub accum: usize,
    pub optimiser: Optimiser,
    pub loss: LossKind,
    pub features: Vec<Feature>,
    pub reg: Regularisation,
    /// Points the learner added by clicking: (x, y, class). They join the training set.
    pub added: Vec<(f32, f32, u32)>,
}

impl Default for Spec {
    fn default() -> Self {
        Self {
            dataset: Dataset::Circle,
            noise: 0.0,
            seed: 1,
            split: 50,
            points: 400,
            hidden: vec![8, 8],
            activation: Activation::Tanh,
            lr: 0.03,
            batch: 16,
            accum: 1,
            optimiser: Optimiser::Adam,
            loss: LossKind::CrossEntropy,
            features: vec![Feature::X, Feature::Y],
            reg: Regularisation::None,
            added: Vec::new(),
        }
    }
}

/// A bad setting, named, with the value as typed.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecError {
    UnknownDataset(String),
    /// A layer width that is not a whole number from 1 to [`MAX_NEURONS`].
    Neurons(String),
    TooManyLayers(usize),
    LearningRate(String),
    /// Batch size that is not a whole number from 1 to the training-set size (`max`).
    Batch {
        value: String,
        max: usize,
    },
    /// Micro-batches per update that are not a whole number from 1 to [`MAX_ACCUM`].
    Accum(String),
    UnknownActivation(String),
    UnknownOptimiser(String),
    UnknownLoss(String),
    UnknownReg(String),
    RegRate(String),
    UnknownFeature(String),
    NoFeatures,
    Noise(String),
    Seed(String),
    Split(String),
    Points(String),
    AddedPoint(String),
}

impl SpecError {
    /// Translation key of the message.
    pub fn key(&self) -> &'static str {
        match self {
            SpecError::UnknownDataset(_) => "train.err.dataset",
            SpecError::Neurons(_) => "train.err.neurons",
            SpecError::TooManyLayers(_) => "train.err.layers",
            SpecError::LearningRate(_) => "train.err.lr",
            SpecError::Batch { .. } => "train.err.batch",
            SpecError::Accum(_) => "train.err.accum",
            SpecError::UnknownActivation(_) => "train.err.act",
            SpecError::UnknownOptimiser(_) => "train.err.opt",
            SpecError::UnknownLoss(_) => "train.err.loss",
            SpecError::UnknownReg(_) => "train.err.reg",
            SpecError::RegRate(_) => "train.err.reg_rate",
            SpecError::UnknownFeature(_) => "train.err.feature",
            SpecError::NoFeatures => "train.err.no_features",
            SpecError::Noise(_) => "train.err.noise",
            SpecError::Seed(_) => "train.err.seed",
            SpecError::Split(_) => "train.err.split",
            SpecError::Points(_) => "train.err.points",
            SpecError::AddedPoint(_) => "train.err.added",
        }
    }

    /// Placeholder values of the message: always `value`, plus `max`/`min` where the message
    /// states a range.
    pub fn args(&self) -> Vec<(&'static str, String)> {
        let v = |s: &str| ("value", s.to_string());
        match self {
            SpecError::UnknownDataset(s)
            | SpecError::UnknownActivation(s)
            | SpecError::UnknownOptimiser(s)
            | SpecError::UnknownLoss(s)
            | SpecError::UnknownReg(s)
            | SpecError::UnknownFeature(s)
            | SpecError::Seed(s)
            | SpecError::AddedPoint(s) => vec![v(s)],
            SpecError::Neurons(s) => vec![v(s), ("max", MAX_NEURONS.to_string())],
            SpecError::TooManyLayers(n) => {
                vec![
                    ("value", n.to_string()),
                    ("max", MAX_HIDDEN_LAYERS.to_string()),
                ]
            }
            SpecError::LearningRate(s) => vec![v(s), ("max", MAX_LR.to_string())],
            SpecError::RegRate(s) => vec![v(s), ("max", MAX_REG.to_string())],
            SpecError::Batch { value, max } => vec![v(value), ("max", max.to_string())],
            SpecError::Accum(s) => vec![v(s), ("max", MAX_ACCUM.to_string())],
            SpecError::NoFeatures => vec![("value", String::new())],
            SpecError::Noise(s) => vec![v(s), ("max", MAX_NOISE.to_string())],
            SpecError::Split(s) => vec![v(s), ("max", "90".to_string())],
            SpecError::Points(s) => vec![
                v(s),
                ("min", MIN_POINTS.to_string()),
                ("max", MAX_POINTS.to_string()),
            ],
        }
    }
}

fn parse_list<T>(
    s: &str,
    item: impl Fn(&str) -> Option<T>,
    err: impl Fn(String) -> SpecError,
    errors: &mut Vec<SpecError>,
) -> Option<Vec<T>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match item(part) {
            Some(v) => out.push(v),
            None => {
                errors.push(err(part.to_string()));
                return None;
            }
        }
    }
    Some(out)
}

impl Spec {
    /// Reads the settings from URL parameters (`get("lr")` → `Some("0.03")`). Missing ones take
    /// their defaults; bad ones too, each with an error.
    pub fn from_params<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (Spec, Vec<SpecError>) {
        let mut s = Spec::default();
        let mut errors = Vec::new();
        if let Some(v) = get("data") {
            match Dataset::from_code(v) {
                Some(d) => s.dataset = d,
                None => errors.push(SpecError::UnknownDataset(v.to_string())),
            }
        }
        if let Some(v) = get("layers") {
            let layers = parse_list(
                v,
                |p| {
                    p.parse::<usize>()
                        .ok()
                        .filter(|n| (1..=MAX_NEURONS).contains(n))
                },
                SpecError::Neurons,
                &mut errors,
            );
            match layers {
                Some(l) if l.len() > MAX_HIDDEN_LAYERS => {
                    errors.push(SpecError::TooManyLayers(l.len()))
                }
                Some(l) => s.hidden = l,
                None => {}
            }
        }
        if let Some(v) = get("act") {
            match Activation::from_code(v) {
                Some(a) => s.activation = a,
                None => errors.push(SpecError::UnknownActivation(v.to_string())),
            }
        }
        if let Some(v) = get("opt") {
            match Optimiser::from_code(v) {
                Some(o) => s.optimiser = o,
                None => errors.push(SpecError::UnknownOptimiser(v.to_string())),
            }
        }
        if let Some(v) = get("loss") {
            match LossKind::from_code(v) {
                Some(l) => s.loss = l,
                None => errors.push(SpecError::UnknownLoss(v.to_string())),
            }
        }
        if let Some(v) = get("lr") {
            match parse_lr(v) {
                Ok(lr) => s.lr = lr,
                Err(e) => errors.push(e),
            }
        }
        let mut rate = 0.001;
        // Empty when there is no regularisation (see `to_params`).
        if let Some(v) = get("regrate").filter(|v| !v.trim().is_empty()) {
            match v.trim().parse::<f32>() {
                Ok(r) if (0.0..=MAX_REG).contains(&r) => rate = r,
                _ => errors.push(SpecError::RegRate(v.to_string())),
            }
        }
        if let Some(v) = get("reg") {
            match Regularisation::from_parts(v, rate) {
                Some(r) => s.reg = r,
                None => errors.push(SpecError::UnknownReg(v.to_string())),
            }
        }
        if let Some(v) = get("noise") {
            match v.trim().parse::<f32>() {
                Ok(n) if (0.0..=MAX_NOISE).contains(&n) => s.noise = n,
                _ => errors.push(SpecError::Noise(v.to_string())),
            }
        }
        if let Some(v) = get("seed") {
            match v.trim().parse::<u64>() {
                Ok(n) => s.seed = n,
                _ => errors.push(SpecError::Seed(v.to_string())),
            }
        }
        if let Some(v) = get("split") {
            match v.trim().parse::<u32>() {
                Ok(n) if (10..=90).contains(&n) => s.split = n,
                _ => errors.push(SpecError::Split(v.to_string())),
            }
        }
        if let Some(v) = get("n") {
            match v.trim().parse::<usize>() {
                Ok(n) if (MIN_POINTS..=MAX_POINTS).contains(&n) => s.points = n,
                _ => errors.push(SpecError::Points(v.to_string())),
            }
        }
        if let Some(v) = get("features") {
            match parse_list(
                v,
                Feature::from_code,
                SpecError::UnknownFeature,
                &mut errors,
            ) {
                Some(f) if f.is_empty() => errors.push(SpecError::NoFeatures),
                Some(mut f) => {
                    f.dedup();
                    s.features = Feature::ALL.into_iter().filter(|a| f.contains(a)).collect();
                }
                None => {}
            }
        }
        if let Some(v) = get("add") {
            for part in v.split('~').filter(|p| !p.is_empty()) {
                match parse_point(part) {
                    Some(p) if s.added.len() < MAX_ADDED => s.added.push(p),
                    _ => {
                        errors.push(SpecError::AddedPoint(part.to_string()));
                        break;
                    }
                }
            }
        }
        // The batch is checked last: its ceiling is the training-set size.
        let max = s.train_len();
        if let Some(v) = get("batch") {
            match parse_batch(v, max) {
                Ok(b) => s.batch = b,
                Err(e) => errors.push(e),
            }
        }
        s.batch = s.batch.min(max).max(1);
        if let Some(v) = get("accum") {
            match parse_accum(v) {
                Ok(k) => s.accum = k,
                Err(e) => errors.push(e),
            }
        }
        (s, errors)
    }

    /// The URL parameters of these settings (only the train view's own).
    pub fn to_params(&self) -> Vec<(&'static str, String)> {
        let join = |v: Vec<String>| v.join(",");
        let mut p = vec![
            ("data", self.dataset.code().to_string()),
            (
                "layers",
                join(self.hidden.iter().map(|n| n.to_string()).collect()),
            ),
            ("act", self.activation.code().to_string()),
            ("lr", format!("{}", self.lr)),
            ("batch", self.batch.to_string()),
            ("accum", self.accum.to_string()),
            ("opt", self.optimiser.code().to_string()),
            ("loss", self.loss.code().to_string()),
            (
                "features",
                join(self.features.iter().map(|f| f.code().to_string()).collect()),
            ),
            ("reg", self.reg.code().to_string()),
            (
                "regrate",
                match self.reg {
                    Regularisation::None => String::new(),
                    r => format!("{}", r.rate()),
                },
            ),
            ("noise", format!("{}", self.noise)),
            ("seed", self.seed.to_string()),
            ("split", self.split.to_string()),
            ("n", self.points.to_string()),
        ];
        p.push((
            "add",
            self.added
                .iter()
                .map(|(x, y, c)| format!("{x:.2}_{y:.2}_{c}"))
                .collect::<Vec<_>>()
                .join("~"),
        ));
        p
    }

    /// Size of the training set: the split of the generated points plus the added ones.
    pub fn train_len(&self) -> usize {
        (self.points * self.split as usize).div_ceil(100) + self.added.len()
    }

    pub fn net(&self) -> Net {
        let mut sizes = vec![self.features.len()];
        sizes.extend(&self.hidden);
        let regression = self.dataset.is_regression();
        // A regression dataset has one output and its own loss; the loss setting is for classes.
        sizes.push(if regression { 1 } else { CLASSES });
        Net {
            sizes,
            activation: self.activation,
            loss: if regression {
                LossKind::Regression
            } else {
                self.loss
            },
        }
    }

    pub fn hyper(&self) -> Hyper {
        let (l1, l2) = self.reg.strengths();
        Hyper {
            lr: self.lr,
            optimiser: self.optimiser,
            l1,
            l2,
        }
    }

    /// (train, test) points: generated, split, then the learner's points added to training.
    pub fn data(&self) -> (Points, Points) {
        let all = self.dataset.generate(self.points, self.noise, self.seed);
        let (mut train, test) = all.split(self.split, self.seed);
        for &(x, y, c) in &self.added {
            // For regression a learner's point is a low (−1) or high (+1) value.
            let label = if self.dataset.is_regression() {
                crate::data::target_label(if c == 1 { 1.0 } else { -1.0 })
            } else {
                c
            };
            train.push(x, y, label);
        }
        (train, test)
    }
}

/// A learning rate as typed (in the URL or the field): a number in (0, [`MAX_LR`]].
pub fn parse_lr(v: &str) -> Result<f32, SpecError> {
    match v.trim().parse::<f32>() {
        Ok(lr) if lr.is_finite() && lr > 0.0 && lr <= MAX_LR => Ok(lr),
        _ => Err(SpecError::LearningRate(v.to_string())),
    }
}

/// A batch size as typed: a whole number from 1 to `max` (the training-set size).
pub fn parse_batch(v: &str, max: usize) -> Result<usize, SpecError> {
    match v.trim().parse::<usize>() {
        Ok(b) if (1..=max).contains(&b) => Ok(b),
        _ => Err(SpecError::Batch {
            value: v.to_string(),
            max,
        }),
    }
}

/// Micro-batches per update as typed: a whole number from 1 to [`MAX_ACCUM`].
pub fn parse_accum(v: &str) -> Result<usize, SpecError> {
    match v.trim().parse::<usize>() {
        Ok(k) if (1..=MAX_ACCUM).contains(&k) => Ok(k),
        _ => Err(SpecError::Accum(v.to_string())),
    }
}

impl Spec {
    /// The effective batch: samples whose gradients one update averages.
    pub fn effective_batch(&self) -> usize {
        self.accum.max(1) * self.batch
    }
}

fn parse_point(s: &str) -> Option<(f32, f32, u32)> {
    let mut it = s.split('_');
    let x = it.next()?.parse::<f32>().ok()?;
    let y = it.next()?.parse::<f32>().ok()?;
    let c = it.next()?.parse::<u32>().ok()?;
    let inside = |v: f32| v.is_finite() && v.abs() <= crate::data::EXTENT;
    (it.next().is_none() && inside(x) && inside(y) && c < CLASSES as u32).then_some((x, y, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(q: &str) -> (Spec, Vec<SpecError>) {
        let map: HashMap<&str, &str> = q.split('&').filter_map(|p| p.split_once('=')).collect();
        Spec::from_params(|k| map.get(k).copied())
    }

    #[test]
    fn teacher_link_parses() {
        let (s, e) = parse(
            "data=spiral&layers=8,8&act=tanh&lr=0.03&batch=32&opt=adam&features=x,y&noise=0.1&seed=1",
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s.dataset, Dataset::Spiral);
        assert_eq!(s.hidden, vec![8, 8]);
        assert_eq!(s.net().sizes, vec![2, 8, 8, 2]);
        assert_eq!(s.batch, 32);
        assert_eq!(s.noise, 0.1);
    }

    #[test]
    fn regression_datasets_have_one_output_and_real_targets() {
        let (s, e) = parse("data=hills&add=2.50_2.50_0");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s.net().sizes, vec![2, 8, 8, 1]);
        assert_eq!(s.net().loss, LossKind::Regression);
        let (train, test) = s.data();
        let t = |p: &Points, i: usize| crate::data::label_target(p.label[i]);
        assert!((0..test.len()).all(|i| t(&test, i).abs() <= 1.0));
        // The learner's point is a low value, whatever the hill there says.
        assert_eq!(t(&train, train.len() - 1), -1.0);
        assert!(Dataset::Hills.target(2.5, 2.5) > 0.9 && Dataset::Hills.target(2.5, -2.5) < -0.9);
        assert_eq!(Dataset::Plane.target(5.0, 5.0), 1.0);
        // Noise moves the target, not the point.
        let (clean, noisy) = (
            Dataset::Plane.generate(50, 0.0, 3),
            Dataset::Plane.generate(50, 0.3, 3),
        );
        assert_eq!(clean.xy.len(), noisy.xy.len());
        assert!((0..50).all(|i| {
            let [x, y] = clean.xy[i];
            crate::data::label_target(clean.label[i]) == Dataset::Plane.target(x, y)
        }));
    }

    #[test]
    fn round_trip() {
        let (s, _) =
            parse("data=xor&layers=4&features=x,xy,sinx&opt=momentum&reg=l2&regrate=0.003&accum=4&add=1.50_-2.00_1~0.00_0.00_0");
        let params = s.to_params();
        let map: HashMap<&str, &str> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (t, e) = Spec::from_params(|k| map.get(k).copied());
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s, t);
        assert_eq!(t.added.len(), 2);
        assert_eq!(t.reg, Regularisation::L2(0.003));
        assert_eq!(t.hyper().l2, 0.003);
        assert_eq!(t.train_len(), 202);
        assert_eq!((t.accum, t.effective_batch()), (4, 64));
    }

    #[test]
    fn bad_settings_are_named_and_replaced_by_defaults() {
        let cases: &[(&str, SpecError)] = &[
            ("layers=8,0", SpecError::Neurons("0".into())),
            ("layers=8,x", SpecError::Neurons("x".into())),
            ("layers=64", SpecError::Neurons("64".into())),
            (
                &format!("layers={}", vec!["2"; 100].join(",")),
                SpecError::TooManyLayers(100),
            ),
            ("lr=NaN", SpecError::LearningRate("NaN".into())),
            ("lr=-0.1", SpecError::LearningRate("-0.1".into())),
            ("lr=0", SpecError::LearningRate("0".into())),
            ("lr=inf", SpecError::LearningRate("inf".into())),
            ("lr=abc", SpecError::LearningRate("abc".into())),
            ("lr=1e99", SpecError::LearningRate("1e99".into())),
            ("lr=11", SpecError::LearningRate("11".into())),
            (
                "batch=0",
                SpecError::Batch {
                    value: "0".into(),
                    max: 200,
                },
            ),
            (
                "batch=201",
                SpecError::Batch {
                    value: "201".into(),
                    max: 200,
                },
            ),
            ("accum=0", SpecError::Accum("0".into())),
            ("accum=65", SpecError::Accum("65".into())),
            ("accum=2.5", SpecError::Accum("2.5".into())),
            ("accum=x", SpecError::Accum("x".into())),
            ("data=moons", SpecError::UnknownDataset("moons".into())),
            ("act=gelu", SpecError::UnknownActivation("gelu".into())),
            ("opt=lion", SpecError::UnknownOptimiser("lion".into())),
            ("loss=hinge", SpecError::UnknownLoss("hinge".into())),
            ("reg=l3", SpecError::UnknownReg("l3".into())),
            ("reg=l2&regrate=2", SpecError::RegRate("2".into())),
            ("reg=l2&regrate=-1", SpecError::RegRate("-1".into())),
            ("features=x,z", SpecError::UnknownFeature("z".into())),
            ("features=", SpecError::NoFeatures),
            ("noise=2", SpecError::Noise("2".into())),
            ("seed=-1", SpecError::Seed("-1".into())),
            ("split=100", SpecError::Split("100".into())),
            ("n=5", SpecError::Points("5".into())),
            ("add=9_0_1", SpecError::AddedPoint("9_0_1".into())),
            ("add=1_1_2", SpecError::AddedPoint("1_1_2".into())),
        ];
        for (q, want) in cases {
            let (s, e) = parse(q);
            assert_eq!(e, vec![want.clone()], "{q}");
            assert!(!e[0].key().is_empty());
            assert!(e[0].args().iter().any(|(k, _)| *k == "value"));
            // The settings stay usable: every value is within its limits.
            assert!(!s.hidden.is_empty() && s.hidden.len() <= MAX_HIDDEN_LAYERS);
            assert!(s.hidden.iter().all(|&n| (1..=MAX_NEURONS).contains(&n)));
            assert!(s.lr.is_finite() && s.lr > 0.0);
            assert!(s.batch >= 1 && s.batch <= s.train_len());
            assert!(!s.features.is_empty());
        }
        // Several at once are all reported.
        assert_eq!(parse("data=x&lr=nan&batch=0").1.len(), 3);
        // Zero hidden layers is a valid (linear) model.
        let (s, e) = parse("layers=");
        assert!(e.is_empty());
        assert_eq!(s.net().sizes, vec![2, 2]);
    }
}
