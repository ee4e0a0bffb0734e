//! The train view (`#/train`) as a model: [`TrainPage`] is the page's state that controls and
//! the URL change (the typed text of the learning-rate and batch fields, the restart notice,
//! the class a click adds, the kernel shown, Reset, the batch-size experiment's rows), changed
//! only by [`TrainPage::reduce`]; [`rebuild`] decides what a new network keeps and says.
//!
//! - `settings`: the URL's settings with named errors, and the values each control writes.
//! - `run`: the run lifecycle (running, held, pausing with N steps finishing, paused), the
//!   rates and the status line, the loss curves and which side a number is from.
//! - `board`: one run without its GPU session: data, the CPU twin and what is shown of both.
//! - `experiment`: the batch-size experiment's rows and verdict.
//! - `picture`: pixels and chart geometry of the pictures.

pub mod board;
pub mod experiment;
pub mod picture;
pub mod run;
pub mod settings;

use mlp::spec::parse_lr;
use mlp::{Spec, SpecError};

use self::experiment::Row;
use self::settings::structural_changes;

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

/// The batch-size experiment.
#[derive(Clone, Debug, PartialEq)]
pub enum Experiment {
    Idle,
    Running(Vec<Row>),
    Done(Vec<Row>),
}

impl Experiment {
    pub fn rows(&self) -> &[Row] {
        match self {
            Experiment::Idle => &[],
            Experiment::Running(r) | Experiment::Done(r) => r,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self, Experiment::Running(_))
    }

    pub fn done(&self) -> bool {
        matches!(self, Experiment::Done(_))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrainPage {
    /// The learning-rate field's text, kept as typed (so a render never snaps it back; only
    /// valid values go to the URL).
    pub lr: String,
    /// The batch field's text, likewise (it applies on Enter, an arrow or leaving the field).
    pub batch: String,
    /// The last restart's notice (None: nothing to say).
    pub restarted: Option<Restart>,
    /// A change of the data shrank the training set below the batch, which was lowered with
    /// it (from, to): said even when no restart notice is (a paused network not yet stepped).
    pub batch_lowered: Option<(usize, usize)>,
    /// The class (regression: low or high value) a click on the picture adds.
    pub add_class: u32,
    /// The kernel whose WGSL is shown (None: the step's first).
    pub selected_kernel: Option<&'static str>,
    /// Reset presses: a new one builds a new network.
    pub resets: u32,
    pub experiment: Experiment,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// The URL's values (a link, Back, a valid edit): the fields follow unless they already
    /// hold text meaning the same value (so "0.20" is not rewritten as "0.2" while typing).
    Sync {
        lr: f32,
        batch: usize,
    },
    TypeLr(String),
    TypeBatch(String),
    Restarted(Option<Restart>),
    /// The batch was lowered with a smaller training set (from, to).
    BatchLowered {
        from: usize,
        to: usize,
    },
    AddClass(u32),
    SelectKernel(&'static str),
    Reset,
    /// The experiment started (no rows yet), or measured another batch size.
    ExperimentRows(Vec<Row>),
    /// A second press cancelled it.
    ExperimentCancelled,
    /// Its task ended with these rows.
    ExperimentDone(Vec<Row>),
}

impl TrainPage {
    pub fn new(spec: &Spec) -> Self {
        Self {
            lr: spec.lr.to_string(),
            batch: spec.batch.to_string(),
            restarted: None,
            batch_lowered: None,
            add_class: 1,
            selected_kernel: None,
            resets: 0,
            experiment: Experiment::Idle,
        }
    }

    pub fn lr_error(&self) -> Option<SpecError> {
        settings::lr_error(&self.lr)
    }

    pub fn batch_error(&self, max: usize) -> Option<SpecError> {
        settings::batch_error(&self.batch, max)
    }

    /// The page after `action`.
    pub fn reduce(&self, action: Action) -> Self {
        let mut next = self.clone();
        match action {
            Action::Sync { lr, batch } => {
                if parse_lr(&next.lr).ok() != Some(lr) {
                    next.lr = lr.to_string();
                }
                if next.batch.trim().parse::<usize>().ok() != Some(batch) {
                    next.batch = batch.to_string();
                }
                // Another batch than the lowered one (the learner's, a link's): not news now.
                if next.batch_lowered.is_some_and(|(_, to)| to != batch) {
                    next.batch_lowered = None;
                }
            }
            Action::BatchLowered { from, to } => next.batch_lowered = Some((from, to)),
            Action::TypeLr(t) => next.lr = t,
            Action::TypeBatch(t) => next.batch = t,
            Action::Restarted(r) => next.restarted = r,
            Action::AddClass(c) => next.add_class = c,
            Action::SelectKernel(id) => next.selected_kernel = Some(id),
            Action::Reset => {
                next.resets = next.resets.wrapping_add(1);
                next.batch_lowered = None;
            }
            Action::ExperimentRows(rows) => next.experiment = Experiment::Running(rows),
            Action::ExperimentCancelled => next.experiment = Experiment::Idle,
            Action::ExperimentDone(rows) => next.experiment = Experiment::Done(rows),
        }
        next
    }
}

/// The network being replaced: its settings, the step each side had reached, and whether it
/// was training.
pub struct Previous<'a> {
    pub spec: &'a Spec,
    pub gpu_step: Option<u64>,
    pub cpu_step: u64,
    pub playing: bool,
}

/// What a new network keeps from the one it replaces.
#[derive(Clone, Debug, PartialEq)]
pub struct Rebuild {
    /// Keep training (it was, and a setting changed).
    pub playing: bool,
    /// What restarted and what each side had reached.
    pub notice: Option<Restart>,
}

/// A new network for `new`: after a structural change while the learner was using the old
/// one, say what restarted and keep playing if it was; Reset and the first build say nothing,
/// and nor does a change before the first step of a paused network (nothing was lost).
pub fn rebuild(previous: Option<Previous>, new: &Spec) -> Rebuild {
    let quiet = Rebuild {
        playing: false,
        notice: None,
    };
    let Some(p) = previous else { return quiet };
    let settings = structural_changes(p.spec, new);
    if settings.is_empty() {
        return quiet;
    }
    let stepped = p.gpu_step.unwrap_or(0) > 0 || p.cpu_step > 0;
    Rebuild {
        playing: p.playing,
        notice: (stepped || p.playing).then_some(Restart {
            settings,
            gpu_step: p.gpu_step,
            cpu_step: p.cpu_step,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::experiment::GpuCell;
    use super::*;

    #[test]
    fn typing_keeps_the_text_and_names_bad_values() {
        let spec = Spec::default();
        let mut f = TrainPage::new(&spec);
        for t in ["0", "0.", "0.2"] {
            f = f.reduce(Action::TypeLr(t.into()));
            assert_eq!(f.lr, t);
        }
        assert_eq!(f.lr_error(), None);
        for bad in ["abc", "-1", "1e99", ""] {
            let g = f.reduce(Action::TypeLr(bad.into()));
            assert_eq!(g.lr, bad);
            assert_eq!(g.lr_error(), Some(SpecError::LearningRate(bad.into())));
        }
        let g = f.reduce(Action::TypeBatch("abc".into()));
        assert_eq!(
            g.batch_error(200),
            Some(SpecError::Batch {
                value: "abc".into(),
                max: 200
            })
        );
        assert_eq!(
            g.reduce(Action::TypeBatch("200".into())).batch_error(200),
            None
        );
    }

    #[test]
    fn the_url_rewrites_a_field_only_when_its_value_differs() {
        let f = TrainPage::new(&Spec::default()).reduce(Action::TypeLr("0.20".into()));
        let g = f.reduce(Action::Sync { lr: 0.2, batch: 16 });
        assert_eq!(g.lr, "0.20", "same value: the typed text stays");
        assert_eq!(g, f.reduce(Action::Sync { lr: 0.2, batch: 16 }));
        let g = f.reduce(Action::Sync { lr: 0.5, batch: 64 });
        assert_eq!((g.lr.as_str(), g.batch.as_str()), ("0.5", "64"));
    }

    #[test]
    fn a_lowered_batch_is_said_until_another_batch_or_reset() {
        let f = TrainPage::new(&Spec::default()).reduce(Action::BatchLowered { from: 100, to: 40 });
        assert_eq!(f.batch_lowered, Some((100, 40)));
        // The URL's own echo of the lowered batch keeps it; another batch or Reset ends it.
        let g = f.reduce(Action::Sync {
            lr: 0.03,
            batch: 40,
        });
        assert_eq!(g.batch_lowered, Some((100, 40)));
        assert_eq!(
            g.reduce(Action::Sync {
                lr: 0.03,
                batch: 16
            })
            .batch_lowered,
            None
        );
        assert_eq!(g.reduce(Action::Reset).batch_lowered, None);
    }

    #[test]
    fn controls_change_only_their_own_state() {
        let f = TrainPage::new(&Spec::default());
        assert_eq!((f.add_class, f.selected_kernel, f.resets), (1, None, 0));
        let g = f.reduce(Action::AddClass(0));
        assert_eq!(g.add_class, 0);
        assert_eq!(g.reduce(Action::AddClass(0)), g, "no change, equal page");
        let g = g.reduce(Action::SelectKernel("mlp-forward"));
        assert_eq!(g.selected_kernel, Some("mlp-forward"));
        let g = g.reduce(Action::Reset).reduce(Action::Reset);
        assert_eq!((g.resets, g.add_class), (2, 0));
    }

    #[test]
    fn the_experiment_shows_its_rows_as_they_come() {
        let row = |batch| Row {
            batch,
            gpu: GpuCell::NoGpu,
            cpu: 10.0,
        };
        let f = TrainPage::new(&Spec::default());
        assert!(f.experiment.rows().is_empty() && !f.experiment.running());
        let g = f.reduce(Action::ExperimentRows(Vec::new()));
        assert!(g.experiment.running());
        let g = g.reduce(Action::ExperimentRows(vec![row(1), row(4)]));
        assert_eq!(g.experiment.rows().len(), 2);
        assert!(!g.experiment.done());
        let d = g.reduce(Action::ExperimentDone(vec![row(1), row(4)]));
        assert!(d.experiment.done() && !d.experiment.running());
        assert_eq!(
            g.reduce(Action::ExperimentCancelled).experiment,
            Experiment::Idle
        );
    }

    #[test]
    fn a_restart_says_what_changed_and_what_each_side_had_reached() {
        let old = Spec::default();
        let new = Spec {
            hidden: vec![3],
            ..old.clone()
        };
        let was = |gpu_step, cpu_step, playing| Previous {
            spec: &old,
            gpu_step,
            cpu_step,
            playing,
        };
        // The first build and Reset (same settings) say nothing and start paused.
        let quiet = Rebuild {
            playing: false,
            notice: None,
        };
        assert_eq!(rebuild(None, &new), quiet);
        assert_eq!(rebuild(Some(was(Some(9), 40, true)), &old), quiet);
        // A change before anything ran: nothing was lost.
        assert_eq!(rebuild(Some(was(Some(0), 0, false)), &new), quiet);
        // While playing: keep playing, and name the GPU's own count, or none before it started.
        let r = rebuild(Some(was(None, 120, true)), &new);
        assert!(r.playing);
        assert_eq!(
            r.notice,
            Some(Restart {
                settings: vec!["train.setting.layers"],
                gpu_step: None,
                cpu_step: 120,
            })
        );
        let r = rebuild(Some(was(Some(7), 300, false)), &new);
        assert!(!r.playing);
        assert_eq!(
            r.notice.map(|n| (n.gpu_step, n.cpu_step)),
            Some((Some(7), 300))
        );
    }
}
