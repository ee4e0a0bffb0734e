//! The CNN page's engine: one network's GPU session (`gpu_runtime::cnn_training`) and tuned
//! CPU trainer (`cnn::tuned`), driven from one timer on the main thread. What to do comes from
//! the page's model (`page_models::cnn::board::CnnPage`: running or not, how many GPU steps
//! may be in flight, Step presses); what happened goes back as its actions, each carrying
//! this driver's network number so that a replaced network's reports are ignored.
//!
//! - The GPU side submits steps up to the page's allowance (each one submission; the GPU
//!   works on them asynchronously) and reads back one thing at a time, never waiting: the
//!   test split's logits a chunk at a time, the training sample's, the parameters (filters,
//!   the drawn digit), and a chosen test digit's activations at every layer. No step is sent
//!   while any of these is queued, so all of them see one network: "look inside" shows them
//!   together as one `page_models::cnn::snapshot::Snapshot`.
//! - The CPU side takes steps for [`SLICE_MS`] of each tick (at least one). Its rate counts
//!   only the time spent on its steps: the thread is shared with the page and the GPU's
//!   submissions, and a rate over wall time would charge it for their work.
//! - Each side is evaluated every `EVAL_EVERY_MS` while training (the GPU: that long after its
//!   last evaluation's readbacks ended), and once more when its step count changed while
//!   paused (after Pause, Step), so the curves end where training did. Step presses still to
//!   take come first (`EvalClock::wanted`): presses queued while a side evaluates are taken
//!   together and evaluated once where they end, not one evaluation per press.

use std::collections::VecDeque;
use std::rc::Rc;

use cnn::data::Samples;
use cnn::net::{Hyper, Net};
use cnn::tuned::TunedTrainer;
use cnn::Spec;
use cpu_kernels::gemm::Gemm;
use gpu_runtime::cnn_training::{CnnConfig, CnnSession, Part};
use gpu_runtime::{now_ms, Gpu, GpuError};
use page_models::cnn::board::{Action, CnnPage, Split};
use page_models::cnn::evals::{evaluation, images, score, EvalClock, EvalData, Gathering};
use page_models::cnn::inspect::layers_from_acts;
use page_models::cnn::snapshot::{add_layers, Pending, Snapshot};
use page_models::train::run::{GpuSteps, Side, SLICE_MS};

/// A readback the GPU side waits for.
#[derive(Clone, Debug, PartialEq)]
enum Job {
    Eval(Gathering),
    Params,
    /// The shown test image's activations at every layer: the image is the one shown when the
    /// readback is asked for (its index is set then), so a pick never waits behind another.
    Inspect(usize),
}

/// (network, hyper-parameters, batch, starting parameters, training images, order seed).
pub type SessionParts = (Net, Hyper, usize, Vec<f32>, Samples, u64);

pub struct Driver {
    pub network: u64,
    pub spec: Spec,
    pub net: Net,
    pub data: Rc<EvalData>,
    pub gpu: Option<CnnSession>,
    /// The device of a session that failed with another error, watched for a late loss.
    failed_device: Option<Rc<Gpu>>,
    /// The training images for the GPU session, until it takes them.
    gpu_train: Option<Samples>,
    jobs: VecDeque<Job>,
    /// Whether the front job's readback has been asked for.
    requested: bool,
    gpu_evals: EvalClock,
    /// The GPU network's parameters after `.0` steps (the last readback).
    pub gpu_params: Option<(u64, Vec<f32>)>,
    /// The test image whose layers the page shows.
    pub inspect: Option<usize>,
    /// The GPU's readbacks of the step being gathered.
    pending: Pending,
    pub cpu: TunedTrainer,
    /// Milliseconds the CPU spent on its steps: its rate's clock.
    cpu_busy_ms: f64,
    cpu_gathering: Option<Gathering>,
    cpu_evals: EvalClock,
    /// What "look inside" shows: one network (the GPU's when it has one, else the CPU's).
    pub inside: Option<Snapshot>,
    /// Step presses seen, and those each side has still to take (a side busy evaluating
    /// takes its steps after, and evaluates again only once none is left).
    step_presses: u64,
    gpu_presses: u64,
    cpu_presses: u64,
    was_running: bool,
    /// What [`Driver::attach`] has to tell the page, said at the next tick: the session may
    /// arrive while the page is away (kept, `components::cnn::keep`), and the page that comes
    /// back must still hear it.
    announce: Option<Action>,
}

/// The driver's report of one tick: the page's actions, and whether anything it shows
/// changed (the look inside, the parameters).
pub struct Tick {
    pub actions: Vec<Action>,
    pub changed: bool,
}

impl Driver {
    /// A new network for `page` (its spec and number) on `data`: the CPU trainer now, the GPU
    /// session later ([`Driver::attach`]).
    pub fn new(page: &CnnPage, mut data: EvalData) -> Result<Self, cnn::SpecError> {
        let spec = page.spec.clone();
        let net = spec.net()?;
        let params = net.init_params(spec.seed);
        let train = std::mem::take(&mut data.train);
        let gpu_train = Some(train.clone());
        let cpu = TunedTrainer::new(
            net.clone(),
            spec.hyper(),
            params,
            spec.batch,
            train,
            spec.seed,
            Gemm::best(),
        );
        Ok(Self {
            network: page.network,
            spec,
            net,
            data: Rc::new(data),
            gpu: None,
            failed_device: None,
            gpu_train,
            jobs: VecDeque::new(),
            requested: false,
            gpu_evals: EvalClock::default(),
            gpu_params: None,
            // The first test digit is shown until the learner picks another.
            inspect: Some(0),
            pending: Pending::default(),
            cpu,
            cpu_busy_ms: 0.0,
            cpu_gathering: None,
            cpu_evals: EvalClock::default(),
            inside: None,
            step_presses: page.step_presses,
            gpu_presses: 0,
            cpu_presses: 0,
            was_running: false,
            announce: None,
        })
    }

    /// What the GPU session is built from (owned, to cross an await); None after the first
    /// call (the training images are handed over, not kept twice).
    pub fn take_session_parts(&mut self) -> Option<SessionParts> {
        let train = self.gpu_train.take()?;
        Some((
            self.net.clone(),
            self.spec.hyper(),
            self.spec.batch,
            self.net.init_params(self.spec.seed),
            train,
            self.spec.seed,
        ))
    }

    pub async fn start_gpu(gpu: Rc<Gpu>, parts: SessionParts) -> Result<CnnSession, GpuError> {
        let (net, hyper, batch, params, train, order_seed) = parts;
        CnnSession::new(
            gpu,
            CnnConfig {
                net,
                hyper,
                batch,
                params: &params,
                train,
                order_seed,
                eval_batch: cnn::net::EVAL_CHUNK,
            },
        )
        .await
    }

    /// Takes the session (or its failure); the page hears of it at the next tick.
    pub fn attach(&mut self, result: Result<CnnSession, GpuError>, software: bool) {
        self.announce = Some(match result {
            Ok(s) => {
                self.gpu = Some(s);
                Action::GpuReady {
                    network: self.network,
                    software,
                }
            }
            Err(GpuError::DeviceLost(e)) => Action::DeviceLost(e),
            Err(e) => Action::GpuFailed {
                network: self.network,
                error: e.to_string(),
            },
        });
    }

    pub fn set_lr(&mut self, lr: f32) {
        self.spec.lr = lr;
        self.cpu.hyper.lr = lr;
        if let Some(s) = self.gpu.as_mut() {
            s.set_lr(lr);
        }
    }

    /// Shows test image `index`'s layers: in the network "look inside" shows now (through
    /// its parameters), and from the GPU's own reading at the next snapshot.
    pub fn set_inspect(&mut self, index: usize) {
        if index >= self.data.test.len() {
            return;
        }
        self.inspect = Some(index);
        // Still at the snapshot's step (paused): the GPU reads this image's maps back from
        // that same network.
        let same = match (&self.gpu, &self.inside) {
            (Some(s), Some(snap)) => snap.side == Side::Gpu && s.steps_submitted() == snap.step,
            _ => false,
        };
        if same && !self.jobs.iter().any(|j| matches!(j, Job::Inspect(_))) {
            self.jobs.push_back(Job::Inspect(index));
        }
    }

    /// The parameters to look inside with: the GPU's last readback, else the CPU's.
    pub fn params(&self) -> (Side, &[f32]) {
        match &self.gpu_params {
            Some((_, p)) => (Side::Gpu, p),
            None => (Side::Cpu, &self.cpu.params),
        }
    }

    fn fail(&mut self, e: GpuError, out: &mut Vec<Action>) {
        let lost = self.gpu.as_ref().is_some_and(|s| s.device_lost());
        // A failure on a device that turns out to be lost a moment later (the browser may
        // settle a failed readback before its lost promise) is reported as the loss, which
        // Reset recovers from.
        self.failed_device = self.gpu.as_ref().filter(|_| !lost).map(|s| s.gpu().clone());
        self.gpu = None;
        self.jobs.clear();
        self.requested = false;
        out.push(match e {
            GpuError::DeviceLost(m) => Action::DeviceLost(m),
            e if lost => Action::DeviceLost(e.to_string()),
            e => Action::GpuFailed {
                network: self.network,
                error: e.to_string(),
            },
        });
        if lost {
            crate::session::forget();
        }
    }

    /// Whether readbacks of one step are queued: no step may be sent until they are done,
    /// so the evaluation, the parameters and the activations all see the same network.
    fn gathering(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// One tick at `now` for the page as it is.
    pub fn tick(&mut self, page: &CnnPage, now: f64) -> Tick {
        let mut actions = Vec::new();
        let mut changed = false;
        if page.network != self.network {
            return Tick { actions, changed };
        }
        actions.extend(self.announce.take());
        if self.gpu.as_ref().is_some_and(|s| s.device_lost()) {
            self.fail(
                GpuError::DeviceLost("reported by the browser while training".into()),
                &mut actions,
            );
        }
        if self.failed_device.as_ref().is_some_and(|g| g.is_lost()) {
            self.failed_device = None;
            crate::session::forget();
            actions.push(Action::DeviceLost(
                "reported by the browser after a failed readback".into(),
            ));
        }
        let running = page.running();
        if self.was_running && !running {
            // Pause: one more evaluation of where each side stopped.
            self.gpu_evals.last_ms = None;
            self.cpu_evals.last_ms = None;
        }
        self.was_running = running;
        let presses = page.step_presses.wrapping_sub(self.step_presses);
        self.step_presses = page.step_presses;
        if self.gpu.is_some() {
            self.gpu_presses += presses;
        }
        self.cpu_presses += presses;

        self.gpu_side(page, now, &mut actions, &mut changed);
        self.cpu_side(page, now, &mut actions, &mut changed);
        Tick { actions, changed }
    }

    fn gpu_side(&mut self, page: &CnnPage, now: f64, out: &mut Vec<Action>, changed: &mut bool) {
        if self.gpu.is_none() {
            return;
        }
        // Steps: the page's allowance while running, one per Step press (all presses still
        // to take, as many as fit in a slice: none is evaluated until they are taken).
        if !self.gathering() {
            let start = now_ms();
            let mut sent = 0u64;
            let pressed = self.gpu_presses > 0;
            let live = self.gpu.as_ref().map_or(GpuSteps::default(), |s| GpuSteps {
                submitted: s.steps_submitted(),
                completed: s.steps_completed(),
            });
            let wanted = if pressed {
                self.gpu_presses
            } else {
                page.gpu_allowance_with(live)
            };
            let mut failed = None;
            if let Some(s) = self.gpu.as_mut() {
                while sent < wanted && (sent == 0 || now_ms() - start < SLICE_MS) {
                    if let Err(e) = s.step() {
                        failed = Some(e);
                        break;
                    }
                    sent += 1;
                }
            }
            if let Some(e) = failed {
                return self.fail(e, out);
            }
            if pressed {
                self.gpu_presses -= sent;
            }
        }
        let Some(s) = self.gpu.as_ref() else { return };
        let (submitted, completed) = (s.steps_submitted(), s.steps_completed());
        out.push(Action::GpuSteps {
            network: self.network,
            submitted,
            completed,
            now_ms: now,
        });
        // Evaluations: the test split, the training sample, then the parameters.
        if self
            .gpu_evals
            .wanted(page.running(), submitted, self.gpu_presses, now)
            && !self.jobs.iter().any(|j| matches!(j, Job::Eval(_)))
        {
            self.gpu_evals.started(submitted, now);
            self.jobs
                .push_back(Job::Eval(Gathering::new(Split::Test, submitted)));
            self.jobs
                .push_back(Job::Eval(Gathering::new(Split::Train, submitted)));
            self.jobs.push_back(Job::Params);
            if let Some(i) = self.inspect {
                self.jobs.push_back(Job::Inspect(i));
            }
        }
        let reading = !self.jobs.is_empty();
        if let Err(e) = self.gpu_readback(out, changed) {
            self.fail(e, out);
        } else if reading && self.jobs.is_empty() {
            // No step is sent while an evaluation's readbacks are queued: the next one is due
            // an interval after this one ended, so a slow adapter (a software one, where an
            // evaluation takes about as long as the interval) still trains between them.
            self.gpu_evals.last_ms = Some(now_ms());
        }
    }

    /// Asks for the front job's readback, or collects it.
    fn gpu_readback(&mut self, out: &mut Vec<Action>, changed: &mut bool) -> Result<(), GpuError> {
        let (Some(s), Some(job)) = (self.gpu.as_mut(), self.jobs.front_mut()) else {
            return Ok(());
        };
        if !self.requested {
            self.requested = match job {
                Job::Eval(g) => {
                    let samples = self.data.samples(g.split);
                    match g.next(samples) {
                        Some(r) => s.request_eval(images(samples, r), false)?,
                        None => false,
                    }
                }
                Job::Params => s.request_read(&[Part::Params])?,
                Job::Inspect(i) => {
                    *i = self.inspect.unwrap_or(0);
                    let i = *i;
                    s.request_eval(images(&self.data.test, i..i + 1), true)?
                }
            };
            return Ok(());
        }
        match job {
            Job::Eval(g) => {
                let Some(r) = s.poll_eval()? else {
                    return Ok(());
                };
                self.requested = false;
                g.add(r.rows, &r.logits);
                let samples = self.data.samples(g.split);
                if g.complete(samples) {
                    let g = std::mem::replace(g, Gathering::new(g.split, g.step));
                    let step = g.step;
                    let (action, look) = completed(self.network, &self.net, samples, Side::Gpu, g);
                    out.push(action);
                    if let Some((logits, predicted)) = look {
                        if let Some(snapshot) = self.pending.eval(step, logits, predicted) {
                            self.inside = Some(snapshot);
                        }
                        *changed = true;
                    }
                    self.jobs.pop_front();
                }
            }
            Job::Params => {
                let Some(r) = s.poll_read()? else {
                    return Ok(());
                };
                self.requested = false;
                self.gpu_params = Some((r.step, r.params.clone()));
                *changed = true;
                self.jobs.pop_front();
                if let Some(snapshot) = self.pending.params(r.step, r.params) {
                    self.inside = Some(snapshot);
                }
            }
            Job::Inspect(i) => {
                let i = *i;
                let Some(r) = s.poll_eval()? else {
                    return Ok(());
                };
                self.requested = false;
                let layout = self.net.act_layout(cnn::net::EVAL_CHUNK);
                if let Some(layers) = layers_from_acts(&self.net, &layout, &r.acts, 0) {
                    add_layers(&mut self.inside, s.steps_submitted(), i, layers);
                    *changed = true;
                }
                self.jobs.pop_front();
            }
        }
        Ok(())
    }

    fn cpu_side(&mut self, page: &CnnPage, now: f64, out: &mut Vec<Action>, changed: &mut bool) {
        // An evaluation under way takes this tick (one chunk): the network must not move.
        if let Some(mut g) = self.cpu_gathering.take() {
            let samples = self.data.samples(g.split);
            if let Some(r) = g.next(samples) {
                let chunk = Samples {
                    side: samples.side,
                    x: images(samples, r.clone()).to_vec(),
                    y: samples.y[r.clone()].to_vec(),
                };
                g.add(r.len(), &self.cpu.logits(&chunk));
            }
            if g.complete(samples) {
                let (split, step) = (g.split, g.step);
                let (action, look) = completed(self.network, &self.net, samples, Side::Cpu, g);
                out.push(action);
                // The CPU's test evaluation is what "look inside" shows only without a GPU;
                // the CPU's network does not move while it is evaluated.
                if let Some((logits, predicted)) = look.filter(|_| self.gpu.is_none()) {
                    self.inside = Some(Snapshot {
                        side: Side::Cpu,
                        step,
                        params: self.cpu.params.clone(),
                        logits,
                        predicted,
                        layers: None,
                    });
                    *changed = true;
                }
                if split == Split::Test {
                    self.cpu_gathering = Some(Gathering::new(Split::Train, step));
                }
            } else {
                self.cpu_gathering = Some(g);
            }
            self.report_cpu_steps(page, out);
            return;
        }
        let pressed = self.cpu_presses > 0;
        let steps = if pressed {
            self.cpu_presses
        } else if page.running() {
            u64::MAX
        } else {
            0
        };
        if steps > 0 {
            let start = now_ms();
            let mut taken = 0;
            while taken < steps && (taken == 0 || now_ms() - start < SLICE_MS) {
                self.cpu.step();
                taken += 1;
            }
            self.cpu_busy_ms += now_ms() - start;
            if pressed {
                self.cpu_presses -= taken;
            }
        }
        self.report_cpu_steps(page, out);
        if self
            .cpu_evals
            .wanted(page.running(), self.cpu.step, self.cpu_presses, now)
        {
            self.cpu_evals.started(self.cpu.step, now);
            self.cpu_gathering = Some(Gathering::new(Split::Test, self.cpu.step));
        }
    }
}

impl Driver {
    /// Every tick, evaluating or not: after Pause the page waits for a tick that saw it
    /// paused to report, so the counts it shows are final.
    fn report_cpu_steps(&self, page: &CnnPage, out: &mut Vec<Action>) {
        out.push(Action::CpuSteps {
            network: self.network,
            step: self.cpu.step,
            now_ms: self.cpu_busy_ms,
            running: page.running(),
        });
    }
}

/// A test evaluation's logits and each image's predicted class.
type TestLook = (Vec<f32>, Vec<u32>);

/// A side's evaluation of one split, gathered: its score for the page, and for the test
/// split what "look inside" shows (its logits and classes).
fn completed(
    network: u64,
    net: &Net,
    samples: &Samples,
    side: Side,
    g: Gathering,
) -> (Action, Option<TestLook>) {
    let e = evaluation(&g.logits, &samples.y, net.classes);
    let action = Action::Evaluated {
        network,
        side,
        step: g.step,
        split: g.split,
        score: score(&e),
    };
    let look = (g.split == Split::Test).then_some((g.logits, e.predicted));
    (action, look)
}
