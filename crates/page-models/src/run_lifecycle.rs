//! The lifecycle of a view's one-shot runs (a race, a sweep, a claim check, a stage run),
//! without the GPU: which run is current, whether one is in progress, whether the last one was
//! cancelled, and the settings it runs with. Every start and every cancel makes the runs before
//! it stale, so a result that comes late is ignored rather than shown beside newer settings.

/// Names one started run; [`RunLifecycle::is_current`] says whether it still counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u32);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Idle,
    /// Running: its outside work (GPU, workers) may still be going.
    Running,
    /// Its outside work is over and only the page's own (checking results) remains: leaving
    /// the page lets it finish, a change of settings still makes it stale.
    Settling,
}

/// One view's runs; `S` is what a run's result depends on (its settings).
#[derive(Clone, Debug, PartialEq)]
pub struct RunLifecycle<S> {
    /// Bumped by every start, cancel and leave: a ticket of an older run no longer counts.
    generation: u32,
    state: State,
    cancelled: bool,
    started: u32,
    settings: Option<S>,
}

impl<S> Default for RunLifecycle<S> {
    fn default() -> Self {
        Self {
            generation: 0,
            state: State::Idle,
            cancelled: false,
            started: 0,
            settings: None,
        }
    }
}

impl<S> RunLifecycle<S> {
    /// Starts a run with these settings; any run before it becomes stale.
    pub fn start(&mut self, settings: S) -> Ticket {
        self.generation = self.generation.wrapping_add(1);
        self.state = State::Running;
        self.cancelled = false;
        self.started += 1;
        self.settings = Some(settings);
        Ticket(self.generation)
    }

    /// Whether results of this run still count (no start, cancel or leave since).
    pub fn is_current(&self, t: Ticket) -> bool {
        t.0 == self.generation
    }

    /// The run's outside work is over; only checking its results remains.
    pub fn settle(&mut self, t: Ticket) {
        if self.is_current(t) && self.state == State::Running {
            self.state = State::Settling;
        }
    }

    /// The run ended by itself; false (and no change) if it was stale.
    pub fn finish(&mut self, t: Ticket) -> bool {
        if !self.is_current(t) {
            return false;
        }
        self.state = State::Idle;
        true
    }

    /// Cancel pressed, or settings changed under a run: the run in progress becomes stale.
    /// True if one was in progress (its outside work must then be stopped).
    pub fn cancel(&mut self) -> bool {
        let was = self.is_running();
        self.generation = self.generation.wrapping_add(1);
        self.state = State::Idle;
        self.cancelled = true;
        was
    }

    /// The view goes away: a run whose outside work may still be going becomes stale (true:
    /// stop that work); one only checking its results is left to finish.
    pub fn leave(&mut self) -> bool {
        if self.state != State::Running {
            return false;
        }
        self.generation = self.generation.wrapping_add(1);
        self.state = State::Idle;
        true
    }

    /// A run is in progress (settling included).
    pub fn is_running(&self) -> bool {
        self.state != State::Idle
    }

    /// The last run was cancelled (until the next start).
    pub fn was_cancelled(&self) -> bool {
        self.cancelled
    }

    /// Runs started so far.
    pub fn started(&self) -> u32 {
        self.started
    }

    /// The settings of the run in progress, None when none is.
    pub fn running_with(&self) -> Option<&S> {
        self.settings.as_ref().filter(|_| self.is_running())
    }

    /// The settings of the last run started, finished or not.
    pub fn last_settings(&self) -> Option<&S> {
        self.settings.as_ref()
    }

    /// Whether the run in progress is stale by `changed` (true when its settings differ from
    /// what the page now says); false when none is running.
    pub fn stale_by(&self, changed: impl FnOnce(&S) -> bool) -> bool {
        self.running_with().is_some_and(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_start_makes_the_earlier_run_stale() {
        let mut life = RunLifecycle::default();
        let first = life.start(1);
        let second = life.start(2);
        assert!(!life.is_current(first));
        assert!(life.is_current(second));
        assert!(
            !life.finish(first),
            "a stale run cannot end the current one"
        );
        assert!(life.is_running());
        assert!(life.finish(second));
        assert!(!life.is_running());
        assert_eq!(life.started(), 2);
    }

    #[test]
    fn cancel_stops_the_run_and_says_so_until_the_next_start() {
        let mut life = RunLifecycle::default();
        let t = life.start("a");
        assert!(life.cancel(), "a run was in progress");
        assert!(!life.is_current(t));
        assert!(life.was_cancelled());
        assert!(!life.is_running());
        assert!(!life.cancel(), "nothing left to stop");
        life.start("b");
        assert!(!life.was_cancelled());
    }

    #[test]
    fn leaving_stops_a_running_run_but_lets_one_settling_finish() {
        let mut life = RunLifecycle::default();
        let t = life.start(());
        assert!(life.leave());
        assert!(!life.is_current(t));
        assert!(
            !life.was_cancelled(),
            "leaving is not a cancel the page shows"
        );

        let t = life.start(());
        life.settle(t);
        assert!(life.is_running());
        assert!(!life.leave());
        assert!(life.is_current(t));
        assert!(life.finish(t));
        assert!(!life.leave(), "nothing runs after the finish");
    }

    #[test]
    fn a_run_is_stale_only_while_running_with_other_settings() {
        let mut life = RunLifecycle::default();
        assert!(!life.stale_by(|_: &u32| true), "nothing runs yet");
        let t = life.start(64u32);
        assert!(!life.stale_by(|s| *s != 64));
        assert!(life.stale_by(|s| *s != 128));
        life.settle(t);
        assert!(
            life.stale_by(|s| *s != 128),
            "checking results still counts"
        );
        life.finish(t);
        assert!(
            !life.stale_by(|s| *s != 128),
            "a finished run's result stays"
        );
        assert_eq!(life.last_settings(), Some(&64));
        assert_eq!(life.running_with(), None);
    }

    #[test]
    fn settling_a_stale_run_changes_nothing() {
        let mut life = RunLifecycle::default();
        let old = life.start(1);
        let new = life.start(2);
        life.settle(old);
        assert!(life.leave(), "the current run was still running");
        assert!(!life.is_current(new));
    }
}
