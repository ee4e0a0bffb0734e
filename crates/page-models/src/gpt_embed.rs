//! The GPT page's training run inside an embed (`#/embed/gpt`): what `run-finished` reports
//! when Pause ends a run, and the learner's work `getState` returns. Pure: the component
//! notes the work on every render and asks [`PauseWatch`] when to report.
//!
//! The run is judged on the side that trains it: the GPU's while its session runs (a software
//! adapter's too: it is named in `adapter`), else the CPU twin's (no WebGPU, or the GPU lost).
//! Its latest validation loss is set against the bigram's on the same split
//! (`targetValLoss`): a transformer that cannot beat a table of character pairs has learned
//! nothing a bigram would not, so only a pause below it is `completed` (see
//! `outcome::of_report`).

use crate::embed::{Field, Report};
use crate::gpt_train::{GptTrain, GpuState, Point, Side};

/// The side whose numbers stand for the run, its curve and its step count.
fn judged(p: &GptTrain) -> (Side, &[Point], u64) {
    match p.gpu {
        GpuState::Ready { .. } => (Side::Gpu, &p.gpu_curve, p.gpu_steps),
        _ => (Side::Cpu, &p.cpu_curve, p.cpu_steps),
    }
}

/// What WebGPU was here, in one word: `gpu`, `software` (a CPU imitating a GPU), `none` (no
/// WebGPU: the CPU twin trains alone), `failed` (the session failed: the CPU alone), or
/// `starting`.
pub fn adapter(p: &GptTrain) -> &'static str {
    match p.gpu {
        GpuState::Ready { software: false } => "gpu",
        GpuState::Ready { software: true } => "software",
        GpuState::None => "none",
        GpuState::Failed(_) => "failed",
        GpuState::Starting => "starting",
    }
}

/// `run-finished`'s results: the data set, the adapter, each side's steps (the GPU's only
/// while it trains), the judged side's latest validation loss with its side and step, and the
/// bigram's as the target; what was not measured yet is left out.
pub fn run_report(p: &GptTrain, data: &str) -> Report {
    let mut out: Report = vec![
        ("data", Field::Str(data.into())),
        ("adapter", Field::Str(adapter(p).into())),
    ];
    if matches!(p.gpu, GpuState::Ready { .. }) {
        out.push(("gpuSteps", Field::Num(p.gpu_steps as f64)));
    }
    out.push(("cpuSteps", Field::Num(p.cpu_steps as f64)));
    let (side, curve, _) = judged(p);
    if let Some(q) = curve.last().filter(|q| q.val.is_finite()) {
        out.push(("valLoss", Field::Num(q.val)));
        let from = match side {
            Side::Gpu => "gpu",
            Side::Cpu => "cpu",
        };
        out.push(("from", Field::Str(from.into())));
        out.push(("step", Field::Num(q.step as f64)));
    }
    if let Some(b) = p.baseline.filter(|b| b.is_finite()) {
        out.push(("targetValLoss", Field::Num(b)));
    }
    out
}

/// The learner's work for `getState`: `training` (`playing` or `paused`), the model's shape
/// and learning rate as set (the rate left out while it is not a number the page trains
/// with), then `run-finished`'s fields.
pub fn work(p: &GptTrain, data: &str) -> Report {
    let s = &p.settings;
    let training = if p.playing { "playing" } else { "paused" };
    let mut out: Report = vec![
        ("training", Field::Str(training.into())),
        ("layers", Field::Num(s.layers as f64)),
        ("heads", Field::Num(s.heads as f64)),
        ("width", Field::Num(s.width as f64)),
        ("context", Field::Num(s.context as f64)),
        ("batch", Field::Num(s.batch as f64)),
    ];
    // As typed (0.01, not the f32 it trains with, 0.009999999776…).
    let typed = s.lr_text.trim().parse::<f64>().ok();
    if let (Some(_), Some(lr)) = (s.lr(), typed) {
        out.push(("lr", Field::Num(lr)));
    }
    out.extend(run_report(p, data));
    out
}

/// Watches the page for a Pause that ends a run, and says when to report it: once each side
/// that trains has been evaluated where it stopped (the driver evaluates each once more after
/// Pause, after its last step count), so the report's loss is the model as it was left and
/// its step counts are final. A Reset or a new shape (a new run) forgets a
/// Pause not yet reported; hiding the page holds the run and is no Pause.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PauseWatch {
    /// The run and whether it was playing, as last seen.
    seen: Option<(u64, bool)>,
    /// A run paused and not reported yet.
    pending: Option<u64>,
}

impl PauseWatch {
    /// Looks at the page as rendered now; true when its paused run is to be reported now.
    pub fn see(&mut self, p: &GptTrain) -> bool {
        if self.seen == Some((p.run, true)) && !p.playing {
            self.pending = Some(p.run);
        }
        self.seen = Some((p.run, p.playing));
        if self.pending != Some(p.run) || p.playing {
            self.pending = None;
            return false;
        }
        let at_stop =
            |curve: &[Point], steps: u64| curve.last().map_or(steps == 0, |q| q.step == steps);
        // Steps still in flight finish after the pause: the GPU stops once they are done.
        let gpu = !matches!(p.gpu, GpuState::Ready { .. })
            || (p.gpu_in_flight == 0 && at_stop(&p.gpu_curve, p.gpu_steps));
        let evaluated = gpu && at_stop(&p.cpu_curve, p.cpu_steps);
        if evaluated {
            self.pending = None;
        }
        evaluated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpt_train::{Action, TrainSettings};

    fn page() -> GptTrain {
        GptTrain::new(TrainSettings::default_for(true, false))
    }

    fn eval(p: &GptTrain, side: Side, step: u64, val: f64) -> GptTrain {
        p.reduce(Action::Evaluated {
            run: p.run,
            side,
            point: Point {
                step,
                val,
                train: None,
            },
        })
    }

    fn steps(p: &GptTrain, side: Side, steps: u64) -> GptTrain {
        sent(p, side, steps, 0)
    }

    /// `steps` done and `in_flight` more sent.
    fn sent(p: &GptTrain, side: Side, steps: u64, in_flight: u64) -> GptTrain {
        p.reduce(Action::Steps {
            run: p.run,
            side,
            steps,
            in_flight,
            ms_per_step: None,
        })
    }

    fn get<'a>(r: &'a Report, k: &str) -> Option<&'a Field> {
        r.iter().find(|(n, _)| *n == k).map(|(_, v)| v)
    }

    #[test]
    fn a_pause_is_reported_once_evaluated_where_it_stopped() {
        let mut w = PauseWatch::default();
        let mut p = page();
        p = p.reduce(Action::GpuReady {
            run: p.run,
            software: true,
        });
        assert!(!w.see(&p), "never played");
        p = p.reduce(Action::Train);
        assert!(!w.see(&p));
        p = eval(&steps(&p, Side::Gpu, 40), Side::Gpu, 40, 2.5);
        assert!(!w.see(&p), "playing");
        p = sent(&p.reduce(Action::Pause), Side::Gpu, 40, 7);
        assert!(
            !w.see(&p),
            "steps 41–47 still in flight, though step 40 is evaluated"
        );
        p = steps(&p, Side::Gpu, 47);
        assert!(!w.see(&p), "steps 41–47 not evaluated yet");
        assert!(!w.see(&p), "still not");
        p = eval(&p, Side::Gpu, 47, 2.4);
        assert!(
            w.see(&p),
            "evaluated where it stopped (the CPU made no step)"
        );
        assert!(!w.see(&p), "reported once");
        // The CPU twin's count must be final too: its evaluation where it stopped says so.
        p = p.reduce(Action::Train);
        w.see(&p);
        p = steps(&p, Side::Cpu, 30).reduce(Action::Pause);
        p = eval(&steps(&p, Side::Gpu, 50), Side::Gpu, 50, 2.3);
        assert!(!w.see(&p), "the CPU's 30 steps are not evaluated yet");
        p = eval(&steps(&p, Side::Cpu, 31), Side::Cpu, 31, 2.9);
        assert!(w.see(&p), "both where they stopped");
        // Hidden holds the run: no report.
        p = p.reduce(Action::Train);
        w.see(&p);
        p = p.reduce(Action::Hidden(true));
        assert!(!w.see(&p));
        // A Reset while playing is a new run, no pause of it.
        p = p.reduce(Action::Reset);
        assert!(!w.see(&p));
        // Paused before any step: the untrained evaluation (or none) is where it stopped.
        let mut w = PauseWatch::default();
        let q = page().reduce(Action::NoGpu).reduce(Action::Train);
        w.see(&q);
        assert!(w.see(&q.reduce(Action::Pause)));
    }

    #[test]
    fn reports_name_the_side_that_trains_and_the_bigram_target() {
        let mut p = page().reduce(Action::NoGpu).reduce(Action::Train);
        p = p.reduce(Action::Baseline {
            run: p.run,
            loss: 2.45,
        });
        p = eval(
            &eval(&steps(&p, Side::Cpu, 30), Side::Cpu, 0, 3.3),
            Side::Cpu,
            30,
            2.6,
        );
        let r = run_report(&p, "names");
        assert_eq!(
            r,
            vec![
                ("data", Field::Str("names".into())),
                ("adapter", Field::Str("none".into())),
                ("cpuSteps", Field::Num(30.0)),
                ("valLoss", Field::Num(2.6)),
                ("from", Field::Str("cpu".into())),
                ("step", Field::Num(30.0)),
                ("targetValLoss", Field::Num(2.45)),
            ]
        );
        // With the GPU's session running, its curve stands for the run (not the CPU's).
        let mut g = p.reduce(Action::GpuReady {
            run: p.run,
            software: false,
        });
        g = eval(&steps(&g, Side::Gpu, 200), Side::Gpu, 200, 2.1);
        let r = run_report(&g, "poems");
        assert_eq!(get(&r, "adapter"), Some(&Field::Str("gpu".into())));
        assert_eq!(get(&r, "gpuSteps"), Some(&Field::Num(200.0)));
        assert_eq!(get(&r, "valLoss"), Some(&Field::Num(2.1)));
        assert_eq!(get(&r, "from"), Some(&Field::Str("gpu".into())));
        // The work: playing, the shape, the rate, then the report.
        let w = work(&g, "poems");
        assert_eq!(w[0], ("training", Field::Str("playing".into())));
        assert_eq!(get(&w, "width"), Some(&Field::Num(16.0)));
        assert_eq!(get(&w, "lr"), Some(&Field::Num(0.01)), "as typed");
        assert_eq!(&w[w.len() - r.len()..], &r[..]);
        // A rate the page does not train with is left out, not made up.
        let bad = g.reduce(Action::Set(crate::gpt_train::Setting::Lr, "x".into()));
        assert_eq!(get(&work(&bad, "poems"), "lr"), None);
        // Nothing measured: no loss, no target.
        let r = run_report(&page(), "names");
        assert_eq!(get(&r, "valLoss"), None);
        assert_eq!(get(&r, "targetValLoss"), None);
        assert_eq!(get(&r, "adapter"), Some(&Field::Str("starting".into())));
    }
}
