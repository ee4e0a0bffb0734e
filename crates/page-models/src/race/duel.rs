//! The live race's page logic without yew or the DOM: what one race runs ([`Job`]), the
//! settings a result belongs to ([`DuelSettings`]), the phases and lanes the view shows, a
//! settings select applied to the URL's settings, and which text keys the status, winner and
//! lesson take. The component (`components/race/duel.rs`) renders these and dispatches.

use cpu_kernels::conv::ConvShape;
use cpu_kernels::conv_variants::CpuConvVariant;
use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::CpuVariant;
use gpu_runtime::conv::ConvStage;

use super::conv_params::ConvRaceParams;
use super::params::{RaceParams, Workload};
use crate::progress::{Left, ProgressClock};

/// What one race runs: the work, the CPU variant, the GPU side (if any).
#[derive(Clone, Copy, Debug)]
pub enum Job {
    Matmul {
        size: MatmulSize,
        variant: CpuVariant,
        kernel: Option<&'static gpu_runtime::KernelSpec>,
    },
    Conv {
        shape: ConvShape,
        variant: CpuConvVariant,
        stage: Option<ConvStage>,
    },
}

impl Job {
    pub fn work(&self) -> Workload {
        match self {
            Job::Matmul { size, .. } => Workload::Matmul(*size),
            Job::Conv { shape, .. } => Workload::Conv(*shape),
        }
    }

    /// The settings a race of this job runs with: N from the field, the rest from the URL.
    pub fn settings(
        &self,
        url: &RaceParams,
        conv: Option<(ConvRaceParams, Vec<String>)>,
    ) -> DuelSettings {
        let params = match self {
            Job::Matmul { size, .. } => RaceParams {
                n: size.n,
                ..url.clone()
            },
            Job::Conv { .. } => url.clone(),
        };
        DuelSettings { params, conv }
    }
}

/// What a race's result depends on: a change of either from outside makes a running race
/// stale (it is cancelled, so its result never shows beside the new settings).
#[derive(Clone, Debug, PartialEq)]
pub struct DuelSettings {
    pub params: RaceParams,
    /// A conv race's variant and stage, and its shape fields' text.
    pub conv: Option<(ConvRaceParams, Vec<String>)>,
}

impl DuelSettings {
    /// Whether the URL's matmul settings are no longer this race's. The URL catching up with
    /// the race's own settings (N typed, then Start at once) is no change.
    pub fn params_changed(&self, url: &RaceParams) -> bool {
        self.params != *url
    }

    /// Whether the URL's conv settings are no longer this conv race's.
    pub fn conv_changed(&self, url: &(ConvRaceParams, Vec<String>)) -> bool {
        self.conv.as_ref().is_some_and(|c| c != url)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Phase {
    #[default]
    Idle,
    Preparing,
    /// Waiting for GPU work submitted before this race (a cancelled run, another page).
    WaitingForGpu,
    Running,
    Checking,
    Done,
    Cancelled,
}

impl Phase {
    /// The status line's text key (None: no status).
    pub fn status_key(self) -> Option<&'static str> {
        Some(match self {
            Phase::Idle => return None,
            Phase::Preparing => "race.status.preparing",
            Phase::WaitingForGpu => "run.waiting_queue",
            Phase::Running => "race.status.running",
            Phase::Checking => "race.status.checking",
            Phase::Done => "race.status.done",
            Phase::Cancelled => "race.status.cancelled",
        })
    }

    /// The `data-phase` attribute.
    pub fn id(self) -> String {
        format!("{self:?}").to_lowercase()
    }
}

/// One side's progress in a race: its clock starts with the race (both sides at once).
#[derive(Clone, Debug, Default)]
pub struct Lane {
    pub progress: ProgressClock,
    pub finished_at: Option<f64>,
    pub error: Option<String>,
}

/// What a lane shows at `now`: its time so far, its progress in percent and its state.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneShown {
    pub elapsed_ms: Option<f64>,
    pub pct: f64,
    /// `error`, `finished`, `running` or `waiting` (a CSS class and `data-state`).
    pub state: &'static str,
    /// About how long a running lane has left (None when it is not running).
    pub left: Option<Left>,
}

impl Lane {
    pub fn shown(&self, phase: Phase, started_at: f64, now: f64) -> LaneShown {
        let elapsed_ms = match (phase, self.finished_at) {
            (Phase::Idle, _) => None,
            (_, Some(t)) => Some(t - started_at),
            // Nothing measured yet (the first frame after Start, on a coarse clock): no
            // time rather than "0 s".
            (Phase::Running, None) => Some(now - started_at).filter(|ms| *ms > 0.0),
            _ => None,
        };
        let state = if self.error.is_some() {
            "error"
        } else if self.finished_at.is_some() {
            "finished"
        } else if phase == Phase::Running {
            "running"
        } else {
            "waiting"
        };
        LaneShown {
            elapsed_ms,
            pct: f64::from(self.progress.pct()),
            state,
            left: (state == "running").then(|| self.progress.left()),
        }
    }
}

/// A settings select changed: the URL settings to write.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingsChange {
    Race(RaceParams),
    Conv(ConvRaceParams),
}

/// Applies select `key` (`cpu`, `workers`, `gpu`, `ccpu`, `cgpu`) set to `value` to the URL's
/// settings; a value that does not parse leaves the setting as it was.
pub fn apply_select(
    key: &str,
    value: &str,
    p: &RaceParams,
    conv: ConvRaceParams,
) -> SettingsChange {
    if key == "ccpu" || key == "cgpu" {
        let mut c = conv;
        if let Some(x) = CpuConvVariant::from_id(value) {
            c.cpu = x;
        }
        if let Some(x) = ConvStage::from_id(value) {
            c.gpu = x;
        }
        return SettingsChange::Conv(c);
    }
    let mut p = p.clone();
    match key {
        "cpu" => {
            if let Some(c) = CpuVariant::from_id(value) {
                p.cpu = c;
            }
        }
        "workers" => {
            if let Ok(w) = value.parse() {
                p.workers = w;
            }
        }
        _ => p.gpu = value.to_string(),
    }
    SettingsChange::Race(p)
}

/// The winner (`gpu` or `cpu`) and by how many times, from the two end-to-end times.
pub fn winner(cpu_ms: f64, gpu_ms: f64) -> (&'static str, f64) {
    if gpu_ms < cpu_ms {
        ("gpu", cpu_ms / gpu_ms)
    } else {
        ("cpu", gpu_ms / cpu_ms)
    }
}

/// The lesson under the results: who won, of a matmul or a conv race.
pub fn lesson_key(cpu_ms: Option<f64>, gpu_ms: Option<f64>, conv: bool) -> &'static str {
    match (cpu_ms, gpu_ms, conv) {
        (Some(c), Some(g), false) if g >= c => "race.lesson.cpu_won",
        (Some(c), Some(g), true) if g >= c => "race.conv.lesson.cpu_won",
        (Some(_), Some(_), false) => "race.lesson.gpu_won",
        (Some(_), Some(_), true) => "race.conv.lesson.gpu_won",
        (_, _, false) => "race.lesson.no_gpu",
        (_, _, true) => "race.conv.lesson.no_gpu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;

    fn url() -> RaceParams {
        RaceParams::parse(&Query::default(), 4, false).0
    }

    fn conv() -> ConvRaceParams {
        super::super::conv_params::parse(&Query::default()).0
    }

    #[test]
    fn a_matmul_race_runs_with_the_fields_n_and_the_urls_rest() {
        let p = url();
        let job = Job::Matmul {
            size: MatmulSize::new(77, 77, 77),
            variant: p.cpu,
            kernel: None,
        };
        let s = job.settings(&p, None);
        assert_eq!(s.params.n, 77);
        assert_eq!(s.params.workers, p.workers);
        assert_eq!(job.work(), Workload::Matmul(MatmulSize::new(77, 77, 77)));
        // The URL catching up with the typed N is no change; another N is.
        let caught_up = RaceParams { n: 77, ..p.clone() };
        assert!(!s.params_changed(&caught_up));
        assert!(s.params_changed(&RaceParams { n: 78, ..p }));
    }

    #[test]
    fn a_conv_race_is_stale_when_its_conv_settings_change() {
        let fields = vec!["1".to_string(); 10];
        let s = DuelSettings {
            params: url(),
            conv: Some((conv(), fields.clone())),
        };
        assert!(!s.conv_changed(&(conv(), fields.clone())));
        let mut other = fields;
        other[1] = "64".into();
        assert!(s.conv_changed(&(conv(), other.clone())));
        let matmul = DuelSettings {
            params: url(),
            conv: None,
        };
        assert!(
            !matmul.conv_changed(&(conv(), other)),
            "a matmul race has none"
        );
    }

    #[test]
    fn a_lane_shows_its_time_only_once_the_race_has_started() {
        let lane = Lane::default();
        let idle = lane.shown(Phase::Idle, 100.0, 250.0);
        assert_eq!((idle.elapsed_ms, idle.state), (None, "waiting"));
        let running = lane.shown(Phase::Running, 100.0, 250.0);
        assert_eq!(
            (running.elapsed_ms, running.state),
            (Some(150.0), "running")
        );
        // The frame of the start itself: nothing measured, so no "0 s".
        let start = lane.shown(Phase::Running, 100.0, 100.0);
        assert_eq!((start.elapsed_ms, start.state), (None, "running"));
        let preparing = lane.shown(Phase::Preparing, 100.0, 250.0);
        assert_eq!(preparing.elapsed_ms, None);
        let mut progress = ProgressClock::started(100.0);
        progress.report(180.0, 1.4);
        let done = Lane {
            progress,
            finished_at: Some(180.0),
            error: None,
        }
        .shown(Phase::Checking, 100.0, 250.0);
        assert_eq!(
            (done.elapsed_ms, done.pct, done.state, done.left),
            (Some(80.0), 100.0, "finished", None)
        );
        let failed = Lane {
            error: Some("lost".into()),
            ..Lane::default()
        };
        assert_eq!(failed.shown(Phase::Running, 0.0, 1.0).state, "error");
        // A third done in 1 s: about 2 s left.
        let mut progress = ProgressClock::started(0.0);
        let fresh = Lane {
            progress,
            ..Lane::default()
        }
        .shown(Phase::Running, 0.0, 1.0);
        assert_eq!((fresh.pct, fresh.left), (0.0, Some(Left::Estimating)));
        progress.report(1000.0, 1.0 / 3.0);
        let shown = Lane {
            progress,
            ..Lane::default()
        }
        .shown(Phase::Running, 0.0, 1000.0);
        assert_eq!(shown.pct, 33.0);
        match shown.left {
            Some(Left::Ms(ms)) => assert!((ms - 2000.0).abs() < 1e-6, "{ms}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn phases_name_their_status_and_attribute() {
        assert_eq!(Phase::Idle.status_key(), None);
        assert_eq!(Phase::WaitingForGpu.status_key(), Some("run.waiting_queue"));
        assert_eq!(Phase::WaitingForGpu.id(), "waitingforgpu");
        assert_eq!(Phase::Done.id(), "done");
    }

    #[test]
    fn a_select_changes_only_its_own_setting() {
        let p = url();
        let c = conv();
        match apply_select("workers", "2", &p, c) {
            SettingsChange::Race(q) => assert_eq!(
                q,
                RaceParams {
                    workers: 2,
                    ..p.clone()
                }
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            apply_select("workers", "many", &p, c),
            SettingsChange::Race(p.clone()),
            "a value that does not parse changes nothing"
        );
        match apply_select("gpu", "matmul-tiled", &p, c) {
            SettingsChange::Race(q) => assert_eq!(q.gpu, "matmul-tiled"),
            other => panic!("{other:?}"),
        }
        let simd = CpuVariant::ALL[CpuVariant::ALL.len() - 1];
        match apply_select("cpu", simd.id(), &p, c) {
            SettingsChange::Race(q) => assert_eq!(q.cpu, simd),
            other => panic!("{other:?}"),
        }
        let stage = ConvStage::ALL[0];
        assert_eq!(
            apply_select("cgpu", stage.id(), &p, c),
            SettingsChange::Conv(ConvRaceParams { gpu: stage, ..c })
        );
        let variant = CpuConvVariant::ALL[0];
        assert_eq!(
            apply_select("ccpu", variant.id(), &p, c),
            SettingsChange::Conv(ConvRaceParams { cpu: variant, ..c })
        );
    }

    #[test]
    fn the_winner_is_the_faster_side_and_a_tie_goes_to_the_cpu() {
        assert_eq!(winner(10.0, 2.0), ("gpu", 5.0));
        assert_eq!(winner(2.0, 10.0), ("cpu", 5.0));
        assert_eq!(winner(3.0, 3.0), ("cpu", 1.0));
    }

    #[test]
    fn the_lesson_follows_the_winner_and_the_work() {
        assert_eq!(
            lesson_key(Some(1.0), Some(2.0), false),
            "race.lesson.cpu_won"
        );
        assert_eq!(
            lesson_key(Some(2.0), Some(1.0), false),
            "race.lesson.gpu_won"
        );
        assert_eq!(
            lesson_key(Some(2.0), Some(2.0), true),
            "race.conv.lesson.cpu_won"
        );
        assert_eq!(
            lesson_key(Some(2.0), Some(1.0), true),
            "race.conv.lesson.gpu_won"
        );
        assert_eq!(lesson_key(Some(2.0), None, false), "race.lesson.no_gpu");
        assert_eq!(lesson_key(None, None, true), "race.conv.lesson.no_gpu");
    }
}
