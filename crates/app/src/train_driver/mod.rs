//! One driver for the training pages (`#/train`'s MLP, `#/cnn`, `#/gpt`'s training): a model's
//! GPU session and its CPU twin, driven from one timer on the main thread, neither ever
//! waiting. What is the same for every model lives here ([`Driver`]):
//!
//! - **The session's end.** A failed step or readback ends it. A lost device may never finish
//!   the steps in flight, so no step or readback would report it: each tick looks at the flag
//!   wgpu's lost callback sets. A session that failed with another error on a device that
//!   turns out to be lost a moment later (the browser may settle a failed readback before its
//!   lost promise) is reported as the loss, which Reset recovers from ([`End`]).
//! - **Step allowances.** Steps go one submission at a time, as many as the page allows (the
//!   steps it lets be in flight, Step presses) and for at most [`SLICE_MS`] of the thread,
//!   at least one ([`GpuSide::send`]); the CPU twin takes its steps in slices beside them
//!   ([`slice`]).
//! - **Readbacks**, queued and read one at a time: asked for, then collected on a later tick
//!   ([`GpuSide::readback`]).
//! - **The session's start**: built from owned parts after the page's device arrives, and
//!   attached only to the run it was made for ([`start_session`]).
//!
//! What differs (what a model reads back and when, what its page hears) is its adapter's
//! [`TrainModel`]: `mlp` (`#/train`), `cnn` (`#/cnn`) and `gpt` (`#/gpt`). Everything without
//! a GPU handle is pure and lives in `page_models`.

// The CNN and GPT pages ship in the whole app only.
#[cfg(feature = "cnn-page")]
pub mod cnn;
#[cfg(feature = "cnn-page")]
pub mod gpt;
pub mod mlp;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

pub use gpu_runtime::now_ms;
use gpu_runtime::{Gpu, GpuError};
use page_models::train::run::{GpuSteps, SLICE_MS};

/// A model's GPU session, as the driver sees it (each adapter implements it for its own).
pub trait Session {
    /// Steps submitted, and those the session knows the GPU has finished.
    fn steps(&self) -> GpuSteps;
    /// Sends one step (one submission; the GPU works on it asynchronously).
    fn step(&mut self) -> Result<(), GpuError>;
    /// The learning rate of the steps sent from now on.
    fn set_lr(&mut self, lr: f32) -> Result<(), GpuError>;
    /// The device, watched for a loss (None: this session's page does not watch it).
    fn device(&self) -> Option<&Rc<Gpu>>;
}

/// How a session ended: its device lost (the detail), or another failure (its message).
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    Lost(String),
    Failed(String),
}

impl End {
    fn of(e: GpuError) -> Self {
        match e {
            GpuError::DeviceLost(m) => End::Lost(m),
            e => End::Failed(e.to_string()),
        }
    }

    /// The message of the error that ended it.
    pub fn message(&self) -> String {
        match self {
            End::Lost(m) => GpuError::DeviceLost(m.clone()).to_string(),
            End::Failed(m) => m.clone(),
        }
    }
}

/// What a model adds to the driver: its session's start, what it does with the GPU and the
/// CPU each tick, and what its page hears.
pub trait TrainModel: Sized + 'static {
    type Session: Session + 'static;
    /// A readback the GPU side queues.
    type Job;
    /// What the session is built from (owned, to cross an await).
    type Parts: 'static;
    /// The page as the driver reads it each tick.
    type Page: ?Sized;
    /// What a tick reports to the page.
    type Out: Default;

    /// The parts for the session; None once taken (what the twin keeps is not held twice).
    fn take_parts(&mut self) -> Option<Self::Parts>;
    /// Builds the session on `gpu`.
    fn start(
        gpu: Rc<Gpu>,
        parts: Self::Parts,
    ) -> impl Future<Output = Result<Self::Session, GpuError>>;
    /// The session arrived (it is in `gpu`), or did not (`ended`).
    fn attached(&mut self, gpu: &mut GpuSide<Self>, ended: Option<End>, software: bool);
    /// The twin's (and the page's copy of the) learning rate.
    fn set_lr(&mut self, lr: f32);
    /// Starts a tick: false when `page` has moved on to another run (the tick does nothing).
    fn begin(
        &mut self,
        _gpu: &mut GpuSide<Self>,
        _page: &Self::Page,
        _out: &mut Self::Out,
    ) -> Result<bool, GpuError> {
        Ok(true)
    }
    /// The session ended; the page hears why.
    fn ended(&mut self, end: End, out: &mut Self::Out);
    /// The device of a session that failed has been lost since: the failure was the loss.
    fn lost_late(&mut self, out: &mut Self::Out);
    /// The GPU side's tick (only with a session): steps, then readbacks.
    fn gpu_tick(
        &mut self,
        gpu: &mut GpuSide<Self>,
        page: &Self::Page,
        now: f64,
        out: &mut Self::Out,
    ) -> Result<(), GpuError>;
    /// The CPU twin's tick, after the GPU's.
    fn cpu_tick(&mut self, gpu: &GpuSide<Self>, page: &Self::Page, now: f64, out: &mut Self::Out);
}

/// The GPU side: the session, the readbacks it has queued, and the device of a session that
/// failed, watched for a late loss.
pub struct GpuSide<M: TrainModel> {
    pub session: Option<M::Session>,
    failed_device: Option<Rc<Gpu>>,
    /// An error outside a tick (setting the learning rate), which the next tick reports.
    held: Option<GpuError>,
    jobs: VecDeque<M::Job>,
    /// Whether the front job's readback has been asked for.
    requested: bool,
}

impl<M: TrainModel> GpuSide<M> {
    fn new() -> Self {
        Self {
            session: None,
            failed_device: None,
            held: None,
            jobs: VecDeque::new(),
            requested: false,
        }
    }

    /// The session's step counts (None without one).
    pub fn steps(&self) -> Option<GpuSteps> {
        self.session.as_ref().map(Session::steps)
    }

    /// Ends the session with `e`: any error on a device already lost is the loss (and the
    /// page's device is dropped, so the next run asks for a fresh one); another failure's
    /// device is watched for a late loss.
    fn fail(&mut self, e: GpuError) -> End {
        let session = self.session.take();
        self.jobs.clear();
        self.requested = false;
        let lost = session
            .as_ref()
            .and_then(Session::device)
            .is_some_and(|g| g.is_lost());
        let end = match e {
            e if lost => End::Lost(match e {
                GpuError::DeviceLost(m) => m,
                e => e.to_string(),
            }),
            e => End::of(e),
        };
        if let End::Failed(_) = end {
            self.failed_device = session.and_then(|s| s.device().cloned());
        } else {
            crate::session::forget();
        }
        end
    }

    /// The session's device lost while training: the session ends with the loss.
    fn lost_now(&mut self) -> Option<End> {
        let lost = self
            .session
            .as_ref()
            .and_then(Session::device)
            .is_some_and(|g| g.is_lost());
        lost.then(|| {
            self.fail(GpuError::DeviceLost(
                "reported by the browser while training".into(),
            ))
        })
    }

    /// Whether a failed session's device has been lost since (true once). The page's device
    /// is not dropped here: the page may hold a newer one by now, and `session::gpu` replaces
    /// a lost one by itself.
    fn lost_late(&mut self) -> bool {
        let lost = self.failed_device.as_ref().is_some_and(|g| g.is_lost());
        if lost {
            self.failed_device = None;
        }
        lost
    }

    /// Sends up to `wanted` steps, one submission each, for at most [`SLICE_MS`] (at least one
    /// when any is wanted); how many went.
    pub fn send(&mut self, wanted: u64) -> Result<u64, GpuError> {
        let Some(s) = self.session.as_mut() else {
            return Ok(0);
        };
        let start = now_ms();
        let mut sent = 0u64;
        while sent < wanted && (sent == 0 || now_ms() - start < SLICE_MS) {
            s.step()?;
            sent += 1;
        }
        Ok(sent)
    }

    /// The readbacks queued, the front one being read.
    pub fn jobs(&self) -> &VecDeque<M::Job> {
        &self.jobs
    }

    pub fn queue(&mut self, job: M::Job) {
        self.jobs.push_back(job);
    }

    /// Moves the front job on (with `cx`, what the two steps change): asks for its readback (`request`: whether it was asked; false
    /// asks again next time), or collects it (`collect`: None until it arrives, then whether
    /// the job is done; a job not done asks for its next readback next time).
    pub fn readback<C>(
        &mut self,
        cx: &mut C,
        request: impl FnOnce(&mut C, &mut M::Session, &mut M::Job) -> Result<bool, GpuError>,
        collect: impl FnOnce(&mut C, &mut M::Session, &mut M::Job) -> Result<Option<bool>, GpuError>,
    ) -> Result<(), GpuError> {
        let (Some(s), Some(job)) = (self.session.as_mut(), self.jobs.front_mut()) else {
            return Ok(());
        };
        if !self.requested {
            self.requested = request(cx, s, job)?;
        } else if let Some(done) = collect(cx, s, job)? {
            self.requested = false;
            if done {
                self.jobs.pop_front();
            }
        }
        Ok(())
    }
}

/// Runs `step` up to `wanted` times for at most `slice_ms` (at least once when any is
/// wanted): how many ran, and the milliseconds they took.
pub fn slice(wanted: u64, slice_ms: f64, mut step: impl FnMut()) -> (u64, f64) {
    let start = now_ms();
    let mut taken = 0u64;
    while taken < wanted && (taken == 0 || now_ms() - start < slice_ms) {
        step();
        taken += 1;
    }
    (taken, now_ms() - start)
}

/// A model's run: its adapter (the twin, what the page is shown) and its GPU side.
pub struct Driver<M: TrainModel> {
    pub model: M,
    pub gpu: GpuSide<M>,
}

impl<M: TrainModel> Deref for Driver<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.model
    }
}

impl<M: TrainModel> DerefMut for Driver<M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.model
    }
}

impl<M: TrainModel> Driver<M> {
    /// A run of `model`, its session to come ([`start_session`]).
    pub fn new(model: M) -> Self {
        Self {
            model,
            gpu: GpuSide::new(),
        }
    }

    /// Takes the session, or its failure.
    pub fn attach(&mut self, result: Result<M::Session, GpuError>, software: bool) {
        self.gpu.failed_device = None;
        let ended = match result {
            Ok(s) => {
                self.gpu.session = Some(s);
                None
            }
            Err(e) => Some(End::of(e)),
        };
        self.model.attached(&mut self.gpu, ended, software);
    }

    /// The learning rate changes without starting over: both sides take it at their next
    /// step (a session's refusal ends it at the next tick).
    pub fn set_lr(&mut self, lr: f32) {
        self.model.set_lr(lr);
        if let Some(Err(e)) = self.gpu.session.as_mut().map(|s| s.set_lr(lr)) {
            self.gpu.held = Some(e);
        }
    }

    /// The GPU session's step counts (None without one).
    pub fn gpu_steps(&self) -> Option<GpuSteps> {
        self.gpu.steps()
    }

    fn fail(&mut self, e: GpuError, out: &mut M::Out) {
        let end = self.gpu.fail(e);
        self.model.ended(end, out);
    }

    /// One tick at `now` for the page as it is.
    pub fn tick(&mut self, page: &M::Page, now: f64) -> M::Out {
        let mut out = M::Out::default();
        match self.model.begin(&mut self.gpu, page, &mut out) {
            Ok(true) => {}
            Ok(false) => return out,
            Err(e) => self.fail(e, &mut out),
        }
        if let Some(e) = self.gpu.held.take() {
            self.fail(e, &mut out);
        }
        if let Some(end) = self.gpu.lost_now() {
            self.model.ended(end, &mut out);
        }
        if self.gpu.lost_late() {
            self.model.lost_late(&mut out);
        }
        if self.gpu.session.is_some() {
            if let Err(e) = self.model.gpu_tick(&mut self.gpu, page, now, &mut out) {
                self.fail(e, &mut out);
            }
        }
        self.model.cpu_tick(&self.gpu, page, now, &mut out);
        out
    }
}

/// The cell a page keeps its run in (the timer and the session's arrival share it).
pub type Cell<M> = Rc<RefCell<Option<Driver<M>>>>;

/// Asks for the page's device and builds the run's session on it; it attaches to the run in
/// `cell` if that is still the one it was made for (`ours`), and then `attached` runs.
pub fn start_session<M: TrainModel>(
    cell: &Cell<M>,
    software: bool,
    ours: impl Fn(&M) -> bool + 'static,
    attached: impl FnOnce() + 'static,
) {
    let parts = cell
        .borrow_mut()
        .as_mut()
        .and_then(|d| d.model.take_parts());
    let cell = cell.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let Some(parts) = parts else { return };
        let result = match crate::session::gpu(software).await {
            Ok((gpu, _)) => M::start(gpu, parts).await,
            Err(e) => Err(e),
        };
        // The run may be away (kept) now: it hears of the session at its next tick.
        let mut guard = cell.borrow_mut();
        if let Some(d) = guard.as_mut().filter(|d| ours(&d.model)) {
            d.attach(result, software);
            drop(guard);
            attached();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session without a GPU: counts its steps, fails the step numbered `fail_at`, and
    /// refuses a learning rate when told to.
    #[derive(Default)]
    struct Fake {
        sent: u64,
        fail_at: Option<u64>,
        refuse_lr: bool,
        lr: f32,
    }

    impl Session for Fake {
        fn steps(&self) -> GpuSteps {
            GpuSteps {
                submitted: self.sent,
                completed: 0,
            }
        }
        fn step(&mut self) -> Result<(), GpuError> {
            if self.fail_at == Some(self.sent) {
                return Err(GpuError::Dispatch("planted".into()));
            }
            self.sent += 1;
            Ok(())
        }
        fn set_lr(&mut self, lr: f32) -> Result<(), GpuError> {
            if self.refuse_lr {
                return Err(GpuError::Dispatch("no".into()));
            }
            self.lr = lr;
            Ok(())
        }
        fn device(&self) -> Option<&Rc<Gpu>> {
            None
        }
    }

    /// A model that sends what the page (a number of steps) allows and logs what it hears.
    #[derive(Default)]
    struct Log {
        lr: f32,
        twin_steps: u64,
        current: bool,
    }

    impl TrainModel for Log {
        type Session = Fake;
        type Job = u32;
        type Parts = ();
        type Page = u64;
        type Out = Vec<String>;
        fn take_parts(&mut self) -> Option<()> {
            None
        }
        async fn start(_: Rc<Gpu>, _: ()) -> Result<Fake, GpuError> {
            Ok(Fake::default())
        }
        fn attached(&mut self, _: &mut GpuSide<Self>, ended: Option<End>, _: bool) {
            self.current = ended.is_none();
        }
        fn set_lr(&mut self, lr: f32) {
            self.lr = lr;
        }
        fn begin(
            &mut self,
            _: &mut GpuSide<Self>,
            _: &u64,
            _: &mut Vec<String>,
        ) -> Result<bool, GpuError> {
            Ok(self.current)
        }
        fn ended(&mut self, end: End, out: &mut Vec<String>) {
            out.push(format!("ended {end:?}"));
        }
        fn lost_late(&mut self, out: &mut Vec<String>) {
            out.push("late".into());
        }
        fn gpu_tick(
            &mut self,
            gpu: &mut GpuSide<Self>,
            page: &u64,
            _: f64,
            out: &mut Vec<String>,
        ) -> Result<(), GpuError> {
            let sent = gpu.send(*page)?;
            out.push(format!("sent {sent}"));
            Ok(())
        }
        fn cpu_tick(&mut self, gpu: &GpuSide<Self>, page: &u64, _: f64, out: &mut Vec<String>) {
            let (taken, _) = slice(*page, SLICE_MS, || self.twin_steps += 1);
            out.push(format!("twin {taken} gpu {}", gpu.session.is_some()));
        }
    }

    fn driver(session: Fake) -> Driver<Log> {
        let mut d = Driver::new(Log::default());
        d.attach(Ok(session), false);
        d
    }

    #[test]
    fn a_tick_sends_the_allowance_and_steps_the_twin_beside_it() {
        let mut d = driver(Fake::default());
        assert_eq!(d.tick(&3, 0.0), ["sent 3", "twin 3 gpu true"]);
        assert_eq!(d.tick(&0, 0.0), ["sent 0", "twin 0 gpu true"]);
        assert_eq!(d.gpu_steps().map(|s| s.submitted), Some(3));
        assert_eq!(d.twin_steps, 3);
    }

    #[test]
    fn a_failed_step_ends_the_session_and_the_twin_trains_on() {
        let mut d = driver(Fake {
            fail_at: Some(2),
            ..Fake::default()
        });
        let out = d.tick(&5, 0.0);
        let planted = GpuError::Dispatch("planted".into()).to_string();
        assert_eq!(
            out,
            [
                format!("ended Failed({planted:?})"),
                "twin 5 gpu false".into()
            ],
            "{out:?}"
        );
        assert!(d.gpu.session.is_none());
        assert_eq!(d.tick(&1, 0.0), ["twin 1 gpu false"], "no second report");
    }

    #[test]
    fn a_run_the_page_has_left_does_nothing() {
        let mut d = driver(Fake::default());
        d.current = false;
        assert!(d.tick(&3, 0.0).is_empty());
        assert_eq!(d.gpu_steps().map(|s| s.submitted), Some(0));
    }

    #[test]
    fn a_refused_learning_rate_ends_the_session_at_the_next_tick() {
        let mut d = driver(Fake::default());
        d.set_lr(0.5);
        assert_eq!(
            (d.lr, d.gpu.session.as_ref().map(|s| s.lr)),
            (0.5, Some(0.5))
        );
        if let Some(s) = d.gpu.session.as_mut() {
            s.refuse_lr = true;
        }
        d.set_lr(0.25);
        assert_eq!(d.lr, 0.25, "the twin takes it");
        let out = d.tick(&1, 0.0);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].starts_with("ended Failed"), "{out:?}");
        assert!(d.gpu.session.is_none());
    }

    #[test]
    fn readbacks_are_asked_for_then_collected_one_at_a_time() {
        let mut d = driver(Fake::default());
        d.gpu.queue(1);
        d.gpu.queue(2);
        let mut log = Vec::new();
        // Each call: ask (refused once), then collect (not there yet, then a part, then all).
        let asks = [false, true];
        let collects = [None, Some(false), Some(true)];
        let (mut a, mut c) = (0, 0);
        while !d.gpu.jobs().is_empty() && log.len() < 20 {
            d.gpu
                .readback(
                    &mut log,
                    |log, _, job| {
                        let ok = asks.get(a).copied().unwrap_or(true);
                        a += 1;
                        log.push(format!("ask {job} {ok}"));
                        Ok(ok)
                    },
                    |log, _, job| {
                        let got = collects.get(c).copied().unwrap_or(Some(true));
                        c += 1;
                        log.push(format!("collect {job} {got:?}"));
                        Ok(got)
                    },
                )
                .expect("fake readbacks do not fail");
        }
        assert_eq!(
            log,
            [
                "ask 1 false",
                "ask 1 true",
                "collect 1 None",
                "collect 1 Some(false)",
                "ask 1 true",
                "collect 1 Some(true)",
                "ask 2 true",
                "collect 2 Some(true)",
            ]
        );
    }

    #[test]
    fn an_end_says_what_ended_it() {
        assert_eq!(
            End::of(GpuError::DeviceLost("gone".into())),
            End::Lost("gone".into())
        );
        assert_eq!(
            End::Lost("gone".into()).message(),
            GpuError::DeviceLost("gone".into()).to_string()
        );
        let e = GpuError::Readback("late".into());
        assert_eq!(End::of(e.clone()).message(), e.to_string());
    }
}
