//! `#/gpt`'s model on the driver: the GPU session (`gpu_runtime::engine::gpt::GptSession`) and
//! the CPU twin (`gpt::train::Trainer`: the same starting parameters and the same seeded
//! batches). What to do comes from the page's model (`page_models::gpt_train::GptTrain`:
//! running or not, the learning rate, the temperature); what happened goes back as its
//! actions, each with this run's number.
//!
//! The GPU side queues one readback at a time, never waiting:
//! - **steps**: a chunk of steps in one submission, then a readback of the last batch's row
//!   losses. The readback is also how the driver learns the chunk is done: nothing more is
//!   sent until it arrives, so Pause (or leaving) stops the GPU within one chunk (submitted
//!   work cannot be taken back). The chunk grows or shrinks to take about [`CHUNK_MS`].
//! - **evaluation**: the validation loss (`GptSession::eval`) every [`EVAL_MS`] while training,
//!   and once where a pause left it;
//! - **samples**: every `SAMPLE_EVERY` evaluations (or when the temperature changes), texts
//!   written a character at a time at the page's temperature with seeded draws (`gpt::pick`),
//!   all of them together by a KV-cache decoder (`engine::decode::Decoder`, built once per run
//!   beside the session, the session's current parameters copied into it on the GPU before
//!   each set): the boundary token prefilled, then one decode step per character, each
//!   step's logits read back. Until the decoder is built (or where it cannot be), one text at
//!   a time by a full forward of the session per character (`request_logits`). Either way
//!   each text has its own draws, so the same model writes the same texts.
//!
//! The CPU twin takes its steps on the page's own thread, at most [`CPU_SHARE`] of the time
//! (a step at a large shape can take longer than a frame), and evaluates the same validation
//! texts a batch per tick. Without WebGPU it trains alone and writes the samples. The page
//! does not watch this session's device for a loss: a lost device fails its next readback.

use std::cell::RefCell;
use std::rc::Rc;

use cpu_kernels::data::SplitMix64;
use gpu_runtime::engine::buffer;
use gpu_runtime::engine::decode::{Decoder, Writing};
use gpu_runtime::engine::gpt::{pick, GptSession, Settings};
use gpu_runtime::gpt::bigram::Bigram;
use gpu_runtime::gpt::data::batch;
use gpu_runtime::gpt::ops::IGNORE;
use gpu_runtime::gpt::train::Trainer;
use gpu_runtime::gpt::{Config, Corpus, Model, ParamLayout};
use gpu_runtime::{Gpu, GpuError};
use page_models::gpt_train::{
    draw_seed, Action, GptTrain, Point, Samples, Side, Writer, SAMPLES, SAMPLE_EVERY,
};
use page_models::train::run::GpuSteps;

use super::{now_ms, slice, Driver, End, GpuSide, Session, TrainModel};

/// Validation texts evaluated (the first of the seeded split's held-out texts): enough for a
/// loss that moves by less than the curves do, few enough for a software adapter.
pub const VAL_DOCS: usize = 256;
/// The seed of the starting parameters and of the batch order (both sides).
pub const SEED: u64 = 39;
/// Milliseconds between evaluations while training.
pub const EVAL_MS: f64 = 1500.0;
/// What a chunk of GPU steps aims to take, readback included.
pub const CHUNK_MS: f64 = 150.0;
/// The largest chunk.
pub const MAX_CHUNK: u64 = 32;
/// The share of the page's thread the CPU twin may take.
pub const CPU_SHARE: f64 = 0.3;
/// Milliseconds of CPU steps per tick at most (at least one step).
pub const CPU_SLICE_MS: f64 = 6.0;

/// The corpus the page trains on: the asset's split, its validation part cut to
/// [`VAL_DOCS`].
pub fn page_corpus(full: &Corpus) -> Corpus {
    let mut c = full.clone();
    c.val.truncate(VAL_DOCS);
    c
}

/// What is built before the GPU session: (shape, settings, corpus).
pub type SessionParts = (Config, Settings, Rc<Corpus>);

/// The KV-cache decoder of a run, built beside its session: None while it is built, then
/// the decoder or why it could not be built.
type DecoderSlot = Rc<RefCell<Option<Result<Decoder, GpuError>>>>;

/// The GPT's session, the steps it has finished (known from each chunk's loss readback), and
/// the decoder that writes its samples.
pub struct GptGpu {
    session: GptSession,
    done: u64,
    decoder: DecoderSlot,
}

impl GptGpu {
    /// Whether the samples can be written with the KV cache now.
    fn decoder_ready(&self) -> bool {
        matches!(&*self.decoder.borrow(), Some(Ok(_)))
    }
}

/// The session itself, for what the page asks of it between the driver's chunks (a
/// prompt's attention maps, the model's shape).
impl std::ops::Deref for GptGpu {
    type Target = GptSession;
    fn deref(&self) -> &GptSession {
        &self.session
    }
}

impl std::ops::DerefMut for GptGpu {
    fn deref_mut(&mut self) -> &mut GptSession {
        &mut self.session
    }
}

impl Session for GptGpu {
    fn steps(&self) -> GpuSteps {
        GpuSteps {
            submitted: self.session.steps(),
            completed: self.done,
        }
    }
    fn step(&mut self) -> Result<(), GpuError> {
        self.session.step(1)
    }
    fn set_lr(&mut self, lr: f32) -> Result<(), GpuError> {
        self.session.set_lr(lr)
    }
    fn device(&self) -> Option<&Rc<Gpu>> {
        None
    }
}

/// A readback the GPU side waits for.
pub enum Job {
    /// `k` steps sent at `started`; `counted` targets in the last batch.
    Steps {
        k: u64,
        started: f64,
        counted: usize,
    },
    Eval,
    Sample(Sampling),
    /// Samples written together with the KV cache.
    Write(KvSampling),
}

/// Samples being written with the KV cache: the texts, and the tokens of the next decode
/// step (None before the prefill); `sent` once its work is submitted and its logits asked for.
pub struct KvSampling {
    step: u64,
    temperature: f32,
    writing: Writing,
    next: Option<Vec<u32>>,
    sent: bool,
}

impl KvSampling {
    fn new(step: u64, temperature: f32, cfg: &Config) -> Self {
        let seeds: Vec<u64> = (0..SAMPLES).map(|k| draw_seed(step, k)).collect();
        Self {
            step,
            temperature,
            writing: Writing::new(&seeds, temperature, cfg),
            next: None,
            sent: false,
        }
    }
}

/// Samples being written: the finished texts and the one under way.
pub struct Sampling {
    step: u64,
    temperature: f32,
    texts: Vec<String>,
    tokens: Vec<u32>,
    rng: SplitMix64,
}

impl Sampling {
    fn new(step: u64, temperature: f32) -> Self {
        Self {
            step,
            temperature,
            texts: Vec::new(),
            tokens: Vec::new(),
            rng: SplitMix64::new(draw_seed(step, 0)),
        }
    }

    fn u(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Takes the picked token: the end mark ends the text, as does a full context (what the
    /// model can see); each text has its own seeded draws.
    fn next(&mut self, token: u32, corpus: &Corpus, ctx: usize) {
        if token == 0 || self.tokens.len() + 2 > ctx {
            self.texts.push(corpus.vocab.decode(&self.tokens));
            self.tokens.clear();
            self.rng = SplitMix64::new(draw_seed(self.step, self.texts.len()));
        } else {
            self.tokens.push(token);
        }
    }
}

/// The CPU twin's evaluation under way: the next validation text, the sum and count so far.
struct CpuEval {
    step: u64,
    next: usize,
    total: f64,
    counted: usize,
}

/// The GPT page's run.
pub type GptDriver = Driver<Gpt>;

pub struct Gpt {
    pub run: u64,
    corpus: Rc<Corpus>,
    cfg: Config,
    settings: Settings,
    baseline: f64,
    announce: Vec<Action>,
    parts: Option<SessionParts>,
    chunk: u64,
    /// Milliseconds a GPU step in the last chunk, its readback's wait included.
    gpu_ms: Option<f64>,
    gpu_losses: (f64, usize),
    gpu_last_eval: Option<(u64, f64)>,
    gpu_evals: u64,
    samples_at: Option<(u64, f32)>,
    cpu: Trainer,
    cpu_losses: (f64, usize),
    cpu_eval: Option<CpuEval>,
    cpu_last_eval: Option<(u64, f64)>,
    cpu_evals: u64,
    cpu_next_ms: f64,
    cpu_ms: Option<f64>,
}

impl Driver<Gpt> {
    /// A new run of `page`'s settings on `corpus` (the page's, [`page_corpus`]); None if the
    /// settings cannot train.
    pub fn gpt(page: &GptTrain, corpus: Rc<Corpus>) -> Option<Self> {
        let s = &page.settings;
        let lr = s.lr()?;
        let cfg = s.config(corpus.vocab.len());
        let model = Model::new(cfg).ok()?;
        let baseline =
            Bigram::fit(&corpus.train, cfg.vocab, cfg.context).loss(&corpus.val, cfg.context);
        let settings = Settings { batch: s.batch, lr };
        let cpu = Trainer::new(model, corpus.train.len(), s.batch, lr, SEED);
        Some(Driver::new(Gpt {
            run: page.run,
            corpus: corpus.clone(),
            cfg,
            settings,
            baseline,
            announce: vec![Action::Baseline {
                run: page.run,
                loss: baseline,
            }],
            parts: Some((cfg, settings, corpus)),
            chunk: 1,
            gpu_ms: None,
            gpu_losses: (0.0, 0),
            gpu_last_eval: None,
            gpu_evals: 0,
            samples_at: None,
            cpu,
            cpu_losses: (0.0, 0),
            cpu_eval: None,
            cpu_last_eval: None,
            cpu_evals: 0,
            cpu_next_ms: 0.0,
            cpu_ms: None,
        }))
    }
}

impl TrainModel for Gpt {
    type Session = GptGpu;
    type Job = Job;
    type Parts = SessionParts;
    type Page = GptTrain;
    type Out = Vec<Action>;

    fn take_parts(&mut self) -> Option<SessionParts> {
        self.parts.take()
    }

    async fn start(gpu: Rc<Gpu>, parts: SessionParts) -> Result<GptGpu, GpuError> {
        let (cfg, settings, corpus) = parts;
        let session =
            GptSession::with_settings(gpu.clone(), cfg, &corpus, SEED, settings, None).await?;
        // The decoder compiles its own pipelines: built beside the session, which trains (and
        // samples with full forwards) meanwhile. Its parameters come from the session before
        // each set of samples.
        let decoder = DecoderSlot::default();
        let slot = decoder.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let zeros = vec![0.0; ParamLayout::new(&cfg).len];
            let built = Decoder::new(gpu, cfg, SAMPLES, &zeros).await;
            *slot.borrow_mut() = Some(built);
        });
        Ok(GptGpu {
            session,
            done: 0,
            decoder,
        })
    }

    fn attached(&mut self, _: &mut GpuSide<Self>, ended: Option<End>, software: bool) {
        let run = self.run;
        self.announce.push(match ended {
            None => Action::GpuReady { run, software },
            Some(end) => Action::GpuFailed {
                run,
                error: end.message(),
            },
        });
    }

    fn set_lr(&mut self, lr: f32) {
        self.settings.lr = lr;
        self.cpu.lr = lr;
    }

    fn begin(
        &mut self,
        gpu: &mut GpuSide<Self>,
        page: &GptTrain,
        out: &mut Vec<Action>,
    ) -> Result<bool, GpuError> {
        out.append(&mut self.announce);
        if page.run != self.run {
            return Ok(false);
        }
        match page.settings.lr() {
            Some(lr) if lr != self.settings.lr => {
                self.set_lr(lr);
                gpu.session.as_mut().map_or(Ok(()), |s| s.set_lr(lr))?;
            }
            _ => {}
        }
        Ok(true)
    }

    fn ended(&mut self, end: End, out: &mut Vec<Action>) {
        out.push(Action::GpuFailed {
            run: self.run,
            error: end.message(),
        });
    }

    /// Never: the session does not give its device to watch.
    fn lost_late(&mut self, _: &mut Vec<Action>) {}

    fn gpu_tick(
        &mut self,
        gpu: &mut GpuSide<Self>,
        page: &GptTrain,
        now: f64,
        out: &mut Vec<Action>,
    ) -> Result<(), GpuError> {
        let idle = gpu.jobs().is_empty();
        if let Some(s) = gpu.session.as_mut().filter(|_| idle) {
            let step = s.session.steps();
            let next = if Self::eval_due(self.gpu_last_eval, step, page.running(), now) {
                Some(Job::Eval)
            } else if Self::samples_due(self.samples_at, page, step, self.gpu_evals) {
                Some(if s.decoder_ready() {
                    Job::Write(KvSampling::new(step, page.temperature, &self.cfg))
                } else {
                    Job::Sample(Sampling::new(step, page.temperature))
                })
            } else if page.running() {
                let k = self.chunk;
                let last = s.session.peek_batches(k as usize).pop().unwrap_or_default();
                let ctx = self.cfg.context;
                let counted = last
                    .iter()
                    .map(|&i| {
                        self.corpus
                            .train
                            .get(i)
                            .map_or(0, |d| (d.len() + 1).min(ctx))
                    })
                    .sum();
                s.session.step(k)?;
                Some(Job::Steps {
                    k,
                    started: now_ms(),
                    counted,
                })
            } else {
                None
            };
            if let Some(job) = next {
                gpu.queue(job);
            }
        }
        gpu.readback(
            &mut (&mut *self, out, now),
            |_, s, job| request(s, job),
            |(m, out, now), s, job| m.collect(s, job, out, *now),
        )
    }

    fn cpu_tick(&mut self, gpu: &GpuSide<Self>, page: &GptTrain, now: f64, out: &mut Vec<Action>) {
        self.cpu_side(gpu, page, now, out);
        // The counts every tick (the page drops those it does not need while training): after
        // Pause the last ones must arrive.
        if let Some(s) = gpu.steps() {
            out.push(Action::Steps {
                run: self.run,
                side: Side::Gpu,
                steps: s.completed,
                in_flight: s.in_flight(),
                ms_per_step: self.gpu_ms,
            });
        }
        out.push(Action::Steps {
            run: self.run,
            side: Side::Cpu,
            steps: self.cpu.step,
            in_flight: 0,
            ms_per_step: self.cpu_ms,
        });
    }
}

/// Asks for the front job's readback: the chunk's losses, the evaluation, or the next
/// character's logits.
fn request(s: &mut GptGpu, job: &mut Job) -> Result<bool, GpuError> {
    match job {
        Job::Steps { .. } => {
            let losses = s.session.net().losses.read(buffer::DELTAS);
            s.session.engine().request_read(&[losses])
        }
        Job::Eval => s.session.eval(),
        Job::Sample(w) => {
            let mut prompt = vec![0u32];
            prompt.extend(&w.tokens);
            s.session.request_logits(&prompt)
        }
        Job::Write(w) => request_kv(s, w),
    }
}

/// The next characters' logits from the decoder: first the session's current parameters and
/// the boundary token's prefill, then a decode step of the characters just picked.
fn request_kv(s: &mut GptGpu, w: &mut KvSampling) -> Result<bool, GpuError> {
    let mut slot = s.decoder.borrow_mut();
    let Some(Ok(d)) = slot.as_mut() else {
        return Err(GpuError::Dispatch("the KV-cache decoder went away".into()));
    };
    if !w.sent {
        match &w.next {
            None => {
                d.load_params_from(s.session.engine())?;
                d.prefill(&vec![vec![0u32]; SAMPLES])?;
            }
            Some(tokens) => d.decode(tokens)?,
        }
        w.sent = true;
    }
    d.request_next_logits()
}

impl Gpt {
    pub fn baseline(&self) -> f64 {
        self.baseline
    }

    /// Collects the front job's readback once it has come: whether the job is done (the
    /// samples are, once all are written).
    fn collect(
        &mut self,
        s: &mut GptGpu,
        job: &mut Job,
        out: &mut Vec<Action>,
        now: f64,
    ) -> Result<Option<bool>, GpuError> {
        match job {
            Job::Steps {
                k,
                started,
                counted,
            } => {
                let Some(l) = s.session.engine().poll_read()? else {
                    return Ok(None);
                };
                let total: f64 = l.iter().map(|&x| f64::from(x)).sum();
                self.gpu_losses.0 += total / (*counted).max(1) as f64;
                self.gpu_losses.1 += 1;
                let per_step = (now_ms() - *started) / *k as f64;
                // The next chunk: about CHUNK_MS of steps.
                self.chunk = ((CHUNK_MS / per_step.max(0.1)) as u64).clamp(1, MAX_CHUNK);
                s.done += *k;
                self.gpu_ms = Some(per_step);
            }
            Job::Eval => {
                let Some(e) = s.session.poll_eval()? else {
                    return Ok(None);
                };
                let (sum, n) = std::mem::take(&mut self.gpu_losses);
                self.gpu_last_eval = Some((e.steps, now));
                self.gpu_evals += 1;
                out.push(Action::Evaluated {
                    run: self.run,
                    side: Side::Gpu,
                    point: Point {
                        step: e.steps,
                        val: e.loss,
                        train: (n > 0).then(|| sum / n as f64),
                    },
                });
            }
            Job::Sample(w) => {
                let Some(logits) = s.session.poll_logits()? else {
                    return Ok(None);
                };
                let u = w.u();
                w.next(
                    pick(&logits, w.temperature, u),
                    &self.corpus,
                    self.cfg.context,
                );
                if w.texts.len() < SAMPLES {
                    return Ok(Some(false));
                }
                self.samples_at = Some((w.step, w.temperature));
                out.push(Action::Sampled {
                    run: self.run,
                    samples: Samples {
                        step: w.step,
                        temperature: w.temperature,
                        texts: std::mem::take(&mut w.texts),
                        writer: Writer::FullForward,
                    },
                });
            }
            Job::Write(w) => {
                let logits = {
                    let mut slot = s.decoder.borrow_mut();
                    let Some(Ok(d)) = slot.as_mut() else {
                        return Err(GpuError::Dispatch("the KV-cache decoder went away".into()));
                    };
                    let Some(logits) = d.poll_logits()? else {
                        return Ok(None);
                    };
                    logits
                };
                w.sent = false;
                w.next = w.writing.take(&logits)?;
                if w.next.is_some() {
                    return Ok(Some(false));
                }
                self.samples_at = Some((w.step, w.temperature));
                let texts = w
                    .writing
                    .texts()
                    .iter()
                    .map(|t| self.corpus.vocab.decode(t))
                    .collect();
                out.push(Action::Sampled {
                    run: self.run,
                    samples: Samples {
                        step: w.step,
                        temperature: w.temperature,
                        texts,
                        writer: Writer::KvCache,
                    },
                });
            }
        }
        Ok(Some(true))
    }

    /// Whether a side whose last evaluation was `last` (step, time) and which stands at
    /// `step` evaluates now: first at step 0, then every [`EVAL_MS`] while training, and
    /// where a pause left it.
    fn eval_due(last: Option<(u64, f64)>, step: u64, running: bool, now: f64) -> bool {
        match last {
            None => true,
            Some((s, _)) if s == step => false,
            Some((_, t)) => !running || now - t >= EVAL_MS,
        }
    }

    fn samples_due(at: Option<(u64, f32)>, page: &GptTrain, step: u64, evals: u64) -> bool {
        match at {
            None => evals > 0,
            Some((s, t)) => {
                t != page.temperature
                    || (s != step && (!page.running() || evals.is_multiple_of(SAMPLE_EVERY)))
            }
        }
    }

    fn cpu_side(&mut self, gpu: &GpuSide<Self>, page: &GptTrain, now: f64, out: &mut Vec<Action>) {
        let run = self.run;
        if let Some(e) = self.cpu_eval.as_mut() {
            // One batch of validation texts a tick: the twin does not move meanwhile.
            let (b, ctx) = (self.settings.batch, self.cfg.context);
            let end = (e.next + b).min(self.corpus.val.len());
            let idx: Vec<usize> = (e.next..end).collect();
            if !idx.is_empty() {
                let (tokens, targets) = batch(&self.corpus.val, &idx, ctx);
                let f = self
                    .cpu
                    .model
                    .forward(&self.cpu.params, &tokens, &targets, idx.len());
                e.total += f64::from(f.loss) * f.counted as f64;
                e.counted += f.counted;
            }
            e.next = end;
            if end >= self.corpus.val.len() {
                let (sum, n) = std::mem::take(&mut self.cpu_losses);
                let point = Point {
                    step: e.step,
                    val: e.total / e.counted.max(1) as f64,
                    train: (n > 0).then(|| sum / n as f64),
                };
                self.cpu_last_eval = Some((e.step, now));
                self.cpu_evals += 1;
                self.cpu_eval = None;
                out.push(Action::Evaluated {
                    run,
                    side: Side::Cpu,
                    point,
                });
            }
            return;
        }
        let step = self.cpu.step;
        if Self::eval_due(self.cpu_last_eval, step, page.running(), now) {
            self.cpu_eval = Some(CpuEval {
                step,
                next: 0,
                total: 0.0,
                counted: 0,
            });
            return;
        }
        if gpu.session.is_none() && Self::samples_due(self.samples_at, page, step, self.cpu_evals) {
            let samples = self.sample_cpu(step, page.temperature);
            self.samples_at = Some((step, page.temperature));
            out.push(Action::Sampled { run, samples });
            return;
        }
        if !page.running() || now < self.cpu_next_ms {
            return;
        }
        let (cpu, losses, train) = (&mut self.cpu, &mut self.cpu_losses, &self.corpus.train);
        let (taken, spent) = slice(u64::MAX, CPU_SLICE_MS, || {
            losses.0 += f64::from(cpu.step(train));
            losses.1 += 1;
        });
        // At most CPU_SHARE of the thread: a step longer than a frame waits its share.
        self.cpu_next_ms = now + spent * (1.0 / CPU_SHARE - 1.0);
        let per = spent / taken as f64;
        self.cpu_ms = Some(self.cpu_ms.map_or(per, |m| 0.8 * m + 0.2 * per));
    }

    /// Samples written by the twin (no GPU here), with the GPU's seeded draws and its `pick`
    /// (on the log-probabilities: the same choice as on the logits).
    fn sample_cpu(&self, step: u64, temperature: f32) -> Samples {
        let mut w = Sampling::new(step, temperature);
        let (v, ctx) = (self.cfg.vocab, self.cfg.context);
        while w.texts.len() < SAMPLES {
            let mut tokens = vec![0u32];
            tokens.extend(&w.tokens);
            let t = tokens.len();
            let f = self
                .cpu
                .model
                .forward(&self.cpu.params, &tokens, &vec![IGNORE; t], 1);
            let logp: Vec<f32> = f.probs[(t - 1) * v..t * v]
                .iter()
                .map(|&p| p.max(1e-30).ln())
                .collect();
            let u = w.u();
            w.next(pick(&logp, temperature, u), &self.corpus, ctx);
        }
        Samples {
            step,
            temperature,
            texts: w.texts,
            writer: Writer::Cpu,
        }
    }
}
