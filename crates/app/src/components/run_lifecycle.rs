//! The one run-lifecycle hook of every view that starts runs (the race's duel, sweep and claim
//! views, the Run widget, Run all, the conv page and its layers, the crossover experiment, the
//! editor, puzzles and scratch mode, the lessons' measurements through `learn::kit::use_measure`):
//! [`use_run`] keeps which run is current
//! (`page_models::run_lifecycle`) and the cancel token of its GPU side, and stops a run on
//! Cancel, on new settings and when the view goes away. (Training is one long run with its own
//! model, `page_models::train::run`.)

use std::cell::RefCell;
use std::rc::Rc;

use gpu_runtime::{CancelToken, Progress, RunControl};
use page_models::run_lifecycle::{RunLifecycle, Ticket};
use yew::prelude::*;

/// A cancel token for runs started by a component, cancelled when the component goes away
/// (leaving a page mid-run must not leave GPU work queued for the next page).
#[hook]
fn use_cancel_on_unmount() -> Rc<RefCell<CancelToken>> {
    let token = use_mut_ref(CancelToken::new);
    {
        let token = token.clone();
        use_effect_with((), move |_| move || token.borrow().cancel());
    }
    token
}

/// A view's runs, for its callbacks and tasks; `S` is what a run's result depends on.
pub struct RunHandle<S> {
    life: Rc<RefCell<RunLifecycle<S>>>,
    token: Rc<RefCell<CancelToken>>,
    /// Stops what a run does beside its GPU token (the race's workers, a redraw ticker).
    on_stop: Rc<dyn Fn()>,
}

impl<S> Clone for RunHandle<S> {
    fn clone(&self) -> Self {
        Self {
            life: self.life.clone(),
            token: self.token.clone(),
            on_stop: self.on_stop.clone(),
        }
    }
}

impl<S: 'static> RunHandle<S> {
    /// Starts a run with these settings. A run before it becomes stale and its GPU side is
    /// cancelled: it is stopped, not raced against.
    pub fn start(&self, settings: S) -> Run<S> {
        let token = CancelToken::new();
        std::mem::replace(&mut *self.token.borrow_mut(), token.clone()).cancel();
        let ticket = self.life.borrow_mut().start(settings);
        Run {
            handle: self.clone(),
            ticket,
            token,
        }
    }

    /// Cancel: the run in progress becomes stale at once, its GPU side stops at its next
    /// submission and the rest of its work is stopped (true if one was in progress).
    pub fn cancel(&self) -> bool {
        let was = self.life.borrow_mut().cancel();
        self.token.borrow().cancel();
        if was {
            (self.on_stop)();
        }
        was
    }

    /// Cancels the run in progress when `changed` says its settings are no longer the page's
    /// (the URL, the embed API, Back): its result must never show beside the new settings.
    pub fn cancel_if_stale(&self, changed: impl FnOnce(&S) -> bool) -> bool {
        let stale = self.life.borrow().stale_by(changed);
        stale && self.cancel()
    }

    /// The current run's token: cancelling it alone lets the run end itself (as Cancelled) at
    /// its next submission.
    pub fn token(&self) -> CancelToken {
        self.token.borrow().clone()
    }

    pub fn is_running(&self) -> bool {
        self.life.borrow().is_running()
    }

    /// The last run was cancelled (until the next start).
    pub fn was_cancelled(&self) -> bool {
        self.life.borrow().was_cancelled()
    }

    /// Runs started so far.
    pub fn started(&self) -> u32 {
        self.life.borrow().started()
    }
}

impl<S: Clone + 'static> RunHandle<S> {
    /// The settings of the last run started (what a result on screen belongs to).
    pub fn last_settings(&self) -> Option<S> {
        self.life.borrow().last_settings().cloned()
    }
}

/// One started run, for its task: whether it still counts, its GPU control, its end.
pub struct Run<S> {
    handle: RunHandle<S>,
    ticket: Ticket,
    token: CancelToken,
}

impl<S> Clone for Run<S> {
    fn clone(&self) -> Self {
        Self {
            handle: self.handle.clone(),
            ticket: self.ticket,
            token: self.token.clone(),
        }
    }
}

impl<S: 'static> Run<S> {
    /// Whether this run's results still count (no start, cancel or leaving the page since).
    pub fn is_current(&self) -> bool {
        self.handle.life.borrow().is_current(self.ticket)
    }

    /// This run's cancel token.
    pub fn token(&self) -> &CancelToken {
        &self.token
    }

    /// Cancel and progress for this run's GPU work.
    pub fn control(&self, progress: Option<Rc<dyn Fn(Progress)>>) -> RunControl {
        RunControl {
            cancel: self.token.clone(),
            progress,
            ..Default::default()
        }
    }

    /// The run's GPU and worker parts are over; only checking results remains, which leaving
    /// the page lets finish.
    pub fn settle(&self) {
        self.handle.life.borrow_mut().settle(self.ticket);
    }

    /// The run ended by itself; false if it had become stale.
    pub fn finish(&self) -> bool {
        self.handle.life.borrow_mut().finish(self.ticket)
    }
}

/// The run lifecycle of a view: `on_stop` stops what a run does beside its GPU token when it is
/// cancelled or the view goes away mid-run (it is the first render's; later ones are ignored).
#[hook]
pub fn use_run<S: 'static>(on_stop: impl Fn() + 'static) -> RunHandle<S> {
    // The token is cancelled when the view goes away, whatever the lifecycle says.
    let token = use_cancel_on_unmount();
    let life = use_mut_ref(RunLifecycle::<S>::default);
    let on_stop = use_mut_ref(move || -> Rc<dyn Fn()> { Rc::new(on_stop) })
        .borrow()
        .clone();
    {
        let (life, on_stop) = (life.clone(), on_stop.clone());
        use_effect_with((), move |_| {
            move || {
                let stop = life.borrow_mut().leave();
                if stop {
                    on_stop();
                }
            }
        });
    }
    RunHandle {
        life,
        token,
        on_stop,
    }
}
