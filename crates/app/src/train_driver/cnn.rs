//! `#/cnn`'s model on the driver: one network's GPU session (`gpu_runtime::cnn_training`) and
//! tuned CPU trainer (`cnn::tuned`). What to do comes from the page's model
//! (`page_models::cnn::board::CnnPage`: running or not, how many GPU steps may be in flight,
//! Step presses); what happened goes back as its actions, each carrying this run's network
//! number so that a replaced network's reports are ignored.
//!
//! - The GPU side sends steps up to the page's allowance and reads back one thing at a time:
//!   the test split's logits a chunk at a time, the training sample's, the parameters
//!   (filters, the drawn digit), and a chosen test digit's activations at every layer. No
//!   step is sent while any of these is queued, so all of them see one network: "look inside"
//!   shows them together as one `page_models::cnn::snapshot::Snapshot`.
//! - The CPU side takes steps for [`SLICE_MS`] of each tick (at least one). Its rate counts
//!   only the time spent on its steps: the thread is shared with the page and the GPU's
//!   submissions, and a rate over wall time would charge it for their work.
//! - Each side is evaluated every `EVAL_EVERY_MS` while training (the GPU: that long after its
//!   last evaluation's readbacks ended), and once more when its step count changed while
//!   paused (after Pause, Step), so the curves end where training did. Step presses still to
//!   take come first (`EvalClock::wanted`): presses queued while a side evaluates are taken
//!   together and evaluated once where they end, not one evaluation per press.

use std::rc::Rc;

use cnn::data::Samples;
use cnn::net::{Hyper, Net};
use cnn::tuned::TunedTrainer;
use cnn::Spec;
use cpu_kernels::gemm::Gemm;
use gpu_runtime::cnn_training::{CnnConfig, CnnSession, Part};
use gpu_runtime::{Gpu, GpuError};
use page_models::cnn::board::{Action, CnnPage, Split};
use page_models::cnn::evals::{evaluation, images, score, EvalClock, EvalData, Gathering};
use page_models::cnn::inspect::layers_from_acts;
use page_models::cnn::snapshot::{add_layers, Pending, Snapshot};
use page_models::train::run::{GpuSteps, Side, SLICE_MS};

use super::{now_ms, slice, Driver, End, GpuSide, Session, TrainModel};

impl Session for CnnSession {
    fn steps(&self) -> GpuSteps {
        GpuSteps {
            submitted: self.steps_submitted(),
            completed: self.steps_completed(),
        }
    }
    fn step(&mut self) -> Result<(), GpuError> {
        CnnSession::step(self)
    }
    fn set_lr(&mut self, lr: f32) -> Result<(), GpuError> {
        CnnSession::set_lr(self, lr);
        Ok(())
    }
    fn device(&self) -> Option<&Rc<Gpu>> {
        Some(self.gpu())
    }
}

/// A readback the GPU side waits for.
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    Eval(Gathering),
    Params,
    /// The shown test image's activations at every layer: the image is the one shown when the
    /// readback is asked for (its index is set then), so a pick never waits behind another.
    Inspect(usize),
}

/// (network, hyper-parameters, batch, starting parameters, training images, order seed).
pub type SessionParts = (Net, Hyper, usize, Vec<f32>, Samples, u64);

/// The CNN page's run.
pub type CnnDriver = Driver<Cnn>;

pub struct Cnn {
    pub network: u64,
    pub spec: Spec,
    pub net: Net,
    pub data: Rc<EvalData>,
    /// The training images for the GPU session, until it takes them.
    gpu_train: Option<Samples>,
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
    /// What the session's arrival has to tell the page, said at the next tick: it may arrive
    /// while the page is away (kept), and the page that comes back must still hear it.
    announce: Option<Action>,
}

/// The driver's report of one tick: the page's actions, and whether anything it shows
/// changed (the look inside, the parameters).
#[derive(Default)]
pub struct Tick {
    pub actions: Vec<Action>,
    pub changed: bool,
}

impl Driver<Cnn> {
    /// A new network for `page` (its spec and number) on `data`: the CPU trainer now, the GPU
    /// session later.
    pub fn cnn(page: &CnnPage, mut data: EvalData) -> Result<Self, cnn::SpecError> {
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
        Ok(Driver::new(Cnn {
            network: page.network,
            spec,
            net,
            data: Rc::new(data),
            gpu_train,
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
        }))
    }

    /// Shows test image `index`'s layers: in the network "look inside" shows now (through
    /// its parameters), and from the GPU's own reading at the next snapshot.
    pub fn set_inspect(&mut self, index: usize) {
        if index >= self.data.test.len() {
            return;
        }
        self.model.inspect = Some(index);
        // Still at the snapshot's step (paused): the GPU reads this image's maps back from
        // that same network.
        let same = match (self.gpu.steps(), &self.model.inside) {
            (Some(s), Some(snap)) => snap.side == Side::Gpu && s.submitted == snap.step,
            _ => false,
        };
        if same && !self.gpu.jobs().iter().any(|j| matches!(j, Job::Inspect(_))) {
            self.gpu.queue(Job::Inspect(index));
        }
    }
}

impl Cnn {
    /// The parameters to look inside with: the GPU's last readback, else the CPU's.
    pub fn params(&self) -> (Side, &[f32]) {
        match &self.gpu_params {
            Some((_, p)) => (Side::Gpu, p),
            None => (Side::Cpu, &self.cpu.params),
        }
    }

    /// Asks for the front job's readback.
    fn request(&self, s: &mut CnnSession, job: &mut Job) -> Result<bool, GpuError> {
        Ok(match job {
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
        })
    }

    /// Collects the front job's readback once it has come: whether the job is done.
    fn collect(
        &mut self,
        s: &mut CnnSession,
        job: &mut Job,
        out: &mut Tick,
    ) -> Result<Option<bool>, GpuError> {
        match job {
            Job::Eval(g) => {
                let Some(r) = s.poll_eval()? else {
                    return Ok(None);
                };
                g.add(r.rows, &r.logits);
                let samples = self.data.samples(g.split);
                if !g.complete(samples) {
                    return Ok(Some(false));
                }
                let g = std::mem::replace(g, Gathering::new(g.split, g.step));
                let step = g.step;
                let (action, look) = completed(self.network, &self.net, samples, Side::Gpu, g);
                out.actions.push(action);
                if let Some((logits, predicted)) = look {
                    if let Some(snapshot) = self.pending.eval(step, logits, predicted) {
                        self.inside = Some(snapshot);
                    }
                    out.changed = true;
                }
            }
            Job::Params => {
                let Some(r) = s.poll_read()? else {
                    return Ok(None);
                };
                self.gpu_params = Some((r.step, r.params.clone()));
                out.changed = true;
                if let Some(snapshot) = self.pending.params(r.step, r.params) {
                    self.inside = Some(snapshot);
                }
            }
            Job::Inspect(i) => {
                let i = *i;
                let Some(r) = s.poll_eval()? else {
                    return Ok(None);
                };
                let layout = self.net.act_layout(cnn::net::EVAL_CHUNK);
                if let Some(layers) = layers_from_acts(&self.net, &layout, &r.acts, 0) {
                    add_layers(&mut self.inside, s.steps_submitted(), i, layers);
                    out.changed = true;
                }
            }
        }
        Ok(Some(true))
    }
}

impl TrainModel for Cnn {
    type Session = CnnSession;
    type Job = Job;
    type Parts = SessionParts;
    type Page = CnnPage;
    type Out = Tick;

    /// None after the first call (the training images are handed over, not kept twice).
    fn take_parts(&mut self) -> Option<SessionParts> {
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

    async fn start(gpu: Rc<Gpu>, parts: SessionParts) -> Result<CnnSession, GpuError> {
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

    fn attached(&mut self, _: &mut GpuSide<Self>, ended: Option<End>, software: bool) {
        self.announce = Some(match ended {
            None => Action::GpuReady {
                network: self.network,
                software,
            },
            Some(End::Lost(e)) => Action::DeviceLost(e),
            Some(End::Failed(error)) => Action::GpuFailed {
                network: self.network,
                error,
            },
        });
    }

    fn set_lr(&mut self, lr: f32) {
        self.spec.lr = lr;
        self.cpu.hyper.lr = lr;
    }

    fn begin(
        &mut self,
        gpu: &mut GpuSide<Self>,
        page: &CnnPage,
        out: &mut Tick,
    ) -> Result<bool, GpuError> {
        if page.network != self.network {
            return Ok(false);
        }
        out.actions.extend(self.announce.take());
        let running = page.running();
        if self.was_running && !running {
            // Pause: one more evaluation of where each side stopped.
            self.gpu_evals.last_ms = None;
            self.cpu_evals.last_ms = None;
        }
        self.was_running = running;
        let presses = page.step_presses.wrapping_sub(self.step_presses);
        self.step_presses = page.step_presses;
        if gpu.session.is_some() {
            self.gpu_presses += presses;
        }
        self.cpu_presses += presses;
        Ok(true)
    }

    fn ended(&mut self, end: End, out: &mut Tick) {
        out.actions.push(match end {
            End::Lost(m) => Action::DeviceLost(m),
            End::Failed(error) => Action::GpuFailed {
                network: self.network,
                error,
            },
        });
    }

    fn lost_late(&mut self, out: &mut Tick) {
        out.actions.push(Action::DeviceLost(
            "reported by the browser after a failed readback".into(),
        ));
    }

    fn gpu_tick(
        &mut self,
        gpu: &mut GpuSide<Self>,
        page: &CnnPage,
        now: f64,
        out: &mut Tick,
    ) -> Result<(), GpuError> {
        // Steps: the page's allowance while running, one per Step press (all presses still
        // to take, as many as fit in a slice: none is evaluated until they are taken). No step
        // is sent while readbacks of one step are queued, so the evaluation, the parameters
        // and the activations all see the same network.
        if gpu.jobs().is_empty() {
            let pressed = self.gpu_presses > 0;
            let wanted = if pressed {
                self.gpu_presses
            } else {
                page.gpu_allowance_with(gpu.steps().unwrap_or_default())
            };
            let sent = gpu.send(wanted)?;
            if pressed {
                self.gpu_presses -= sent;
            }
        }
        let Some(GpuSteps {
            submitted,
            completed,
        }) = gpu.steps()
        else {
            return Ok(());
        };
        out.actions.push(Action::GpuSteps {
            network: self.network,
            submitted,
            completed,
            now_ms: now,
        });
        // Evaluations: the test split, the training sample, then the parameters.
        if self
            .gpu_evals
            .wanted(page.running(), submitted, self.gpu_presses, now)
            && !gpu.jobs().iter().any(|j| matches!(j, Job::Eval(_)))
        {
            self.gpu_evals.started(submitted, now);
            gpu.queue(Job::Eval(Gathering::new(Split::Test, submitted)));
            gpu.queue(Job::Eval(Gathering::new(Split::Train, submitted)));
            gpu.queue(Job::Params);
            if let Some(i) = self.inspect {
                gpu.queue(Job::Inspect(i));
            }
        }
        let reading = !gpu.jobs().is_empty();
        gpu.readback(
            &mut (&mut *self, &mut *out),
            |(m, _), s, job| m.request(s, job),
            |(m, out), s, job| m.collect(s, job, out),
        )?;
        if reading && gpu.jobs().is_empty() {
            // The next evaluation is due an interval after this one ended, so a slow adapter
            // (a software one, where an evaluation takes about as long as the interval) still
            // trains between them.
            self.gpu_evals.last_ms = Some(now_ms());
        }
        Ok(())
    }

    fn cpu_tick(&mut self, gpu: &GpuSide<Self>, page: &CnnPage, now: f64, out: &mut Tick) {
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
                out.actions.push(action);
                // The CPU's test evaluation is what "look inside" shows only without a GPU;
                // the CPU's network does not move while it is evaluated.
                if let Some((logits, predicted)) = look.filter(|_| gpu.session.is_none()) {
                    self.inside = Some(Snapshot {
                        side: Side::Cpu,
                        step,
                        params: self.cpu.params.clone(),
                        logits,
                        predicted,
                        layers: None,
                    });
                    out.changed = true;
                }
                if split == Split::Test {
                    self.cpu_gathering = Some(Gathering::new(Split::Train, step));
                }
            } else {
                self.cpu_gathering = Some(g);
            }
            self.report_cpu_steps(page, &mut out.actions);
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
            let cpu = &mut self.cpu;
            let (taken, spent) = slice(steps, SLICE_MS, || cpu.step());
            self.cpu_busy_ms += spent;
            if pressed {
                self.cpu_presses -= taken;
            }
        }
        self.report_cpu_steps(page, &mut out.actions);
        if self
            .cpu_evals
            .wanted(page.running(), self.cpu.step, self.cpu_presses, now)
        {
            self.cpu_evals.started(self.cpu.step, now);
            self.cpu_gathering = Some(Gathering::new(Split::Test, self.cpu.step));
        }
    }
}

impl Cnn {
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
