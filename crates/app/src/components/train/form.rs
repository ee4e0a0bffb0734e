//! The train view's page state that several controls and the URL change: the typed text of the
//! learning-rate and batch fields (kept as typed, so a render never snaps them back; only valid
//! values go to the URL) and the announcement of the last restart. A reducer, unit-tested
//! natively; the component only dispatches.

use std::rc::Rc;

use gpu_runtime::mlp::spec::{parse_batch, parse_lr};
use gpu_runtime::mlp::{Spec, SpecError};
use yew::Reducible;

/// Why the network was rebuilt while the learner was using it.
#[derive(Clone, Debug, PartialEq)]
pub struct Restart {
    /// Translation keys of the settings that changed (`train.setting.*`).
    pub settings: Vec<&'static str>,
    /// The steps the GPU had completed (None: its session had not started yet) and the CPU
    /// twin had taken: each side is named with its own count, never one for the other.
    pub gpu_step: Option<u64>,
    pub cpu_step: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub lr: String,
    pub batch: String,
    pub restarted: Option<Restart>,
}

pub enum FormAction {
    /// The URL's values (a link, Back, a valid edit): the fields follow unless they already
    /// hold text meaning the same value (so "0.20" is not rewritten as "0.2" while typing).
    Sync {
        lr: f32,
        batch: usize,
    },
    TypeLr(String),
    TypeBatch(String),
    Restarted(Option<Restart>),
}

impl Form {
    pub fn new(spec: &Spec) -> Self {
        Self {
            lr: spec.lr.to_string(),
            batch: spec.batch.to_string(),
            restarted: None,
        }
    }

    pub fn lr_error(&self) -> Option<SpecError> {
        parse_lr(&self.lr).err()
    }

    pub fn batch_error(&self, max: usize) -> Option<SpecError> {
        parse_batch(&self.batch, max).err()
    }
}

impl Reducible for Form {
    type Action = FormAction;

    fn reduce(self: Rc<Self>, action: FormAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            FormAction::Sync { lr, batch } => {
                if parse_lr(&next.lr).ok() != Some(lr) {
                    next.lr = lr.to_string();
                }
                if next.batch.trim().parse::<usize>().ok() != Some(batch) {
                    next.batch = batch.to_string();
                }
            }
            FormAction::TypeLr(t) => next.lr = t,
            FormAction::TypeBatch(t) => next.batch = t,
            FormAction::Restarted(r) => next.restarted = r,
        }
        if next == *self {
            self
        } else {
            Rc::new(next)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(f: Form, a: FormAction) -> Form {
        (*Rc::new(f).reduce(a)).clone()
    }

    #[test]
    fn typing_keeps_the_text_and_names_bad_values() {
        let spec = Spec::default();
        let mut f = Form::new(&spec);
        for t in ["0", "0.", "0.2"] {
            f = reduce(f, FormAction::TypeLr(t.into()));
            assert_eq!(f.lr, t);
        }
        assert_eq!(f.lr_error(), None);
        for bad in ["abc", "-1", "1e99", ""] {
            let g = reduce(f.clone(), FormAction::TypeLr(bad.into()));
            assert_eq!(g.lr, bad);
            assert_eq!(g.lr_error(), Some(SpecError::LearningRate(bad.into())));
        }
        let g = reduce(f.clone(), FormAction::TypeBatch("abc".into()));
        assert_eq!(
            g.batch_error(200),
            Some(SpecError::Batch {
                value: "abc".into(),
                max: 200
            })
        );
        assert_eq!(
            reduce(g, FormAction::TypeBatch("200".into())).batch_error(200),
            None
        );
    }

    #[test]
    fn the_url_rewrites_a_field_only_when_its_value_differs() {
        let f = reduce(
            Form::new(&Spec::default()),
            FormAction::TypeLr("0.20".into()),
        );
        let g = reduce(f.clone(), FormAction::Sync { lr: 0.2, batch: 16 });
        assert_eq!(g.lr, "0.20", "same value: the typed text stays");
        let g = reduce(f, FormAction::Sync { lr: 0.5, batch: 64 });
        assert_eq!((g.lr.as_str(), g.batch.as_str()), ("0.5", "64"));
    }

    #[test]
    fn restarts_name_the_structural_settings_only() {
        let a = Spec::default();
        let lr_only = Spec {
            lr: 0.5,
            ..a.clone()
        };
        assert!(structural_changes(&a, &lr_only).is_empty());
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
}
