//! The train view's settings: read from the URL (every one has a query key; a bad one is a
//! named [`SpecError`] and its default is used), and the URL values each control writes. The
//! component reads a field's text and hands it here; what comes back goes to the URL, from
//! where it reaches both trainers.

use mlp::spec::{parse_batch, parse_lr, MAX_ADDED, REG_RATES};
use mlp::{Feature, Regularisation, Spec, SpecError};

/// The settings of one render: the spec the page runs and the errors of the values it could
/// not use.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub spec: Spec,
    pub errors: Vec<SpecError>,
}

impl Settings {
    /// From the URL's query (`get` answers a key); without a query, the defaults.
    pub fn from_query<'a>(get: Option<impl Fn(&str) -> Option<&'a str>>) -> Self {
        let (spec, errors) = match get {
            Some(get) => Spec::from_params(get),
            None => (Spec::default(), Vec::new()),
        };
        Self { spec, errors }
    }
}

/// The batch size to write beside a control's change that shrank the training set below the
/// batch the URL asks for (a smaller training share, fewer points): the new set's size. The
/// learner's own change is never answered with "the link's batch size is not usable", and the
/// URL never keeps a batch the page does not run; the restart notice names both changes.
/// `after` is the URL with the change; None when the batch still fits or the change set it.
pub fn refit_batch(pairs: &[(&str, String)], after: &Settings) -> Option<usize> {
    if pairs.iter().any(|(k, _)| *k == "batch") {
        return None;
    }
    after.errors.iter().find_map(|e| match e {
        SpecError::Batch { max, .. } => Some((*max).max(1)),
        _ => None,
    })
}

/// The settings that require a new network when they change (all but the learning rate).
pub fn structural(spec: &Spec) -> Spec {
    Spec {
        lr: 0.0,
        ..spec.clone()
    }
}

/// The settings (as `train.setting.*` keys) whose change from `old` to `new` needs a new
/// network and GPU buffers; the learning rate is applied live and is never among them.
pub fn structural_changes(old: &Spec, new: &Spec) -> Vec<&'static str> {
    let checks: [(&'static str, bool); 14] = [
        ("train.setting.data", old.dataset != new.dataset),
        ("train.setting.noise", old.noise != new.noise),
        ("train.setting.seed", old.seed != new.seed),
        ("train.setting.split", old.split != new.split),
        ("train.setting.points", old.points != new.points),
        ("train.setting.layers", old.hidden != new.hidden),
        ("train.setting.act", old.activation != new.activation),
        ("train.setting.batch", old.batch != new.batch),
        ("train.setting.accum", old.accum != new.accum),
        ("train.setting.opt", old.optimiser != new.optimiser),
        ("train.setting.loss", old.loss != new.loss),
        ("train.setting.features", old.features != new.features),
        ("train.setting.added", old.added != new.added),
        ("train.setting.reg", old.reg != new.reg),
    ];
    checks.into_iter().filter(|c| c.1).map(|c| c.0).collect()
}

/// The `features` value of a set, in the order of [`Feature::ALL`].
fn features_param(set: &[Feature]) -> String {
    let codes: Vec<&str> = Feature::ALL
        .iter()
        .filter(|a| set.contains(a))
        .map(|a| a.code())
        .collect();
    codes.join(",")
}

/// The `features` value with `f` switched on or off.
pub fn toggle_feature(current: &[Feature], f: Feature) -> String {
    let mut next: Vec<Feature> = current.to_vec();
    if next.contains(&f) {
        next.retain(|x| *x != f);
    } else {
        next.push(f);
    }
    features_param(&next)
}

/// The features that help this dataset and are not on (x and y alone learn it slowly).
pub fn missing_features(spec: &Spec) -> Vec<Feature> {
    spec.dataset
        .suggested_features()
        .iter()
        .filter(|f| !spec.features.contains(f))
        .copied()
        .collect()
}

/// The `features` value with the suggested ones added.
pub fn with_features(spec: &Spec, missing: &[Feature]) -> String {
    let all: Vec<Feature> = Feature::ALL
        .iter()
        .filter(|f| spec.features.contains(f) || missing.contains(f))
        .copied()
        .collect();
    features_param(&all)
}

/// The `layers` value of these hidden widths.
pub fn layers_param(hidden: &[usize]) -> String {
    hidden
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The micro-batch counts offered, plus a linked one that is not among them.
pub fn accum_choices(current: usize) -> Vec<usize> {
    let mut choices = vec![1usize, 2, 4, 8, 16];
    if !choices.contains(&current) {
        choices.push(current);
        choices.sort_unstable();
    }
    choices
}

/// The regularisation strength shown (0.001 while there is none) and the strengths offered,
/// plus a linked one that is not among them.
pub fn reg_rates(reg: Regularisation) -> (f32, Vec<f32>) {
    let rate = match reg {
        Regularisation::None => 0.001,
        r => r.rate(),
    };
    let mut rates = REG_RATES.to_vec();
    if !rates.contains(&rate) {
        rates.push(rate);
        rates.sort_by(f32::total_cmp);
    }
    (rate, rates)
}

/// The URL pairs of a regularisation kind chosen in its select: none clears the rate, else it
/// keeps the one shown.
pub fn reg_kind_params(kind: String, shown_rate: f32) -> [(&'static str, String); 2] {
    let rate = if kind == "none" {
        String::new()
    } else {
        shown_rate.to_string()
    };
    [("reg", kind), ("regrate", rate)]
}

/// What is wrong with the learning-rate field's text (None: it is a rate).
pub fn lr_error(text: &str) -> Option<SpecError> {
    parse_lr(text).err()
}

/// What is wrong with the batch field's text (None: a batch size of at most `max`).
pub fn batch_error(text: &str, max: usize) -> Option<SpecError> {
    parse_batch(text, max).err()
}

/// The `lr` value of the typed text, if it is a learning rate (each valid keystroke applies).
pub fn lr_param(text: &str) -> Option<String> {
    parse_lr(text).ok().map(|_| text.trim().to_string())
}

/// The `batch` value of the typed text, if it is a batch size of at most `max`.
pub fn batch_param(text: &str, max: usize) -> Option<String> {
    parse_batch(text, max).ok().map(|b| b.to_string())
}

/// The batch field's key: Enter applies the typed value, the arrows step it within 1..=`max`;
/// `None` for any other key or a value that is not a batch size (the field names it).
pub fn batch_key(key: &str, text: &str, max: usize) -> Option<usize> {
    let delta: i64 = match key {
        "ArrowUp" => 1,
        "ArrowDown" => -1,
        "Enter" => 0,
        _ => return None,
    };
    let b = parse_batch(text, max).ok()?;
    Some((b as i64 + delta).clamp(1, max as i64) as usize)
}

/// The `add` value with a point of `class` added at plane coordinates (x, y); `None` once
/// [`MAX_ADDED`] are there.
pub fn add_point(spec: &Spec, x: f64, y: f64, class: u32) -> Option<String> {
    if spec.added.len() >= MAX_ADDED {
        return None;
    }
    let mut s = spec.clone();
    s.added.push((x as f32, y as f32, class));
    s.to_params()
        .into_iter()
        .find(|(k, _)| *k == "add")
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smaller_training_share_lowers_a_batch_that_no_longer_fits() {
        let parse = |q: &'static str| {
            let map: std::collections::HashMap<&str, &str> =
                q.split('&').filter_map(|p| p.split_once('=')).collect();
            Settings::from_query(Some(move |k: &str| map.get(k).copied()))
        };
        // 200 points at 50 % train: 100 in training; batch 100 fits.
        assert!(parse("n=200&split=50&batch=100").errors.is_empty());
        // The split goes to 20 %: 40 in training, so the batch becomes 40.
        let after = parse("n=200&split=20&batch=100");
        let pairs = [("split", "20".to_string())];
        assert_eq!(refit_batch(&pairs, &after), Some(after.spec.train_len()));
        assert_eq!(after.spec.train_len(), 40);
        // A batch that still fits, or one the change itself sets, is left alone.
        assert_eq!(refit_batch(&pairs, &parse("n=200&split=20&batch=8")), None);
        let typed = [("batch", "100".to_string())];
        assert_eq!(refit_batch(&typed, &after), None);
    }
    use mlp::Dataset;

    #[test]
    fn restarts_name_the_structural_settings_only() {
        let a = Spec::default();
        let lr_only = Spec {
            lr: 0.5,
            ..a.clone()
        };
        assert!(structural_changes(&a, &lr_only).is_empty());
        assert_eq!(structural(&a), structural(&lr_only));
        let b = Spec {
            batch: 64,
            hidden: vec![4],
            ..a.clone()
        };
        assert_eq!(
            structural_changes(&a, &b),
            vec!["train.setting.layers", "train.setting.batch"]
        );
    }

    #[test]
    fn bad_url_values_are_named_and_replaced_by_defaults() {
        let q = |k: &str| match k {
            "lr" => Some("abc"),
            "batch" => Some("16"),
            _ => None,
        };
        let s = Settings::from_query(Some(q));
        assert_eq!(s.spec.lr, Spec::default().lr);
        assert_eq!(s.spec.batch, 16);
        assert_eq!(s.errors, vec![SpecError::LearningRate("abc".into())]);
        let none: Option<fn(&str) -> Option<&'static str>> = None;
        assert_eq!(Settings::from_query(none).spec, Spec::default());
    }

    #[test]
    fn feature_edits_keep_the_canonical_order() {
        let on = toggle_feature(&[Feature::X], Feature::SinY);
        let (spec, errors) = Spec::from_params(|k| (k == "features").then_some(on.as_str()));
        assert!(errors.is_empty());
        assert_eq!(spec.features, vec![Feature::X, Feature::SinY]);
        assert_eq!(
            toggle_feature(&spec.features, Feature::SinY),
            Feature::X.code()
        );
        let spiral = Spec {
            dataset: Dataset::Spiral,
            features: vec![Feature::X, Feature::Y],
            ..Spec::default()
        };
        let missing = missing_features(&spiral);
        assert_eq!(missing, vec![Feature::SinX, Feature::SinY]);
        let all = with_features(&spiral, &missing);
        let (spec, _) = Spec::from_params(|k| (k == "features").then_some(all.as_str()));
        assert_eq!(
            spec.features,
            vec![Feature::X, Feature::Y, Feature::SinX, Feature::SinY]
        );
        assert!(missing_features(&spec).is_empty());
    }

    #[test]
    fn choices_include_a_linked_value() {
        assert_eq!(accum_choices(4), vec![1, 2, 4, 8, 16]);
        assert_eq!(accum_choices(3), vec![1, 2, 3, 4, 8, 16]);
        let (rate, rates) = reg_rates(Regularisation::None);
        assert_eq!(rate, 0.001);
        assert_eq!(rates, REG_RATES.to_vec());
        let (rate, rates) = reg_rates(Regularisation::L2(0.002));
        assert_eq!(rate, 0.002);
        assert_eq!(rates.len(), REG_RATES.len() + 1);
        assert!(rates.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            reg_kind_params("none".into(), 0.01),
            [("reg", "none".to_string()), ("regrate", String::new())]
        );
        assert_eq!(
            reg_kind_params("l1".into(), 0.01),
            [("reg", "l1".to_string()), ("regrate", "0.01".to_string())]
        );
        assert_eq!(layers_param(&[4, 2]), "4,2");
        assert_eq!(layers_param(&[]), "");
    }

    #[test]
    fn the_batch_field_steps_within_the_training_set() {
        assert_eq!(lr_param(" 0.3 ").as_deref(), Some("0.3"));
        assert_eq!(lr_param("0."), None, "zero is no rate");
        assert_eq!(lr_param("abc"), None);
        assert_eq!(batch_param("16", 200).as_deref(), Some("16"));
        assert_eq!(batch_param("201", 200), None);
        assert_eq!(batch_key("Enter", "16", 200), Some(16));
        assert_eq!(batch_key("ArrowUp", "200", 200), Some(200));
        assert_eq!(batch_key("ArrowDown", "1", 200), Some(1));
        assert_eq!(batch_key("ArrowDown", "16", 200), Some(15));
        assert_eq!(batch_key("a", "16", 200), None);
        assert_eq!(batch_key("Enter", "abc", 200), None);
    }

    #[test]
    fn clicked_points_go_to_the_url_up_to_the_limit() {
        let spec = Spec::default();
        let v = add_point(&spec, 0.5, -0.25, 1).expect("room for a point");
        let (back, errors) = Spec::from_params(|k| (k == "add").then_some(v.as_str()));
        assert!(errors.is_empty());
        assert_eq!(back.added, vec![(0.5, -0.25, 1)]);
        let full = Spec {
            added: vec![(0.0, 0.0, 0); MAX_ADDED],
            ..Spec::default()
        };
        assert_eq!(add_point(&full, 0.0, 0.0, 0), None);
    }
}
