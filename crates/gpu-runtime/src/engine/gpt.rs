//! The GPT of `gpt::model` on the engine: its layer list for any [`Config`], its parameters
//! moved into the arena, and a training session over a corpus whose windows live on the GPU.
//!
//! # The model
//! [`model`] is `gpt::model`'s layer list: token and position embeddings; per block a
//! residual around LayerNorm → qkv (c → 3c) → causal attention → proj (c → c), and a
//! residual around LayerNorm → fc (c → 4c) → GELU → out (4c → c); the final LayerNorm, the
//! head (c → vocab) and softmax cross-entropy. The engine's head has a bias where the model's
//! has none: it starts at zero and trains like the others (vocab more parameters).
//! [`params`] puts `gpt::model`'s flat parameters into the arena by walking the compiled
//! nodes (no layer names or offsets are assumed), transposing each weight from the model's
//! x·W (in × out) to the engine's W[out][in].
//!
//! # Data on the GPU
//! Every training document becomes one window (`gpt::data::window`: tokens and targets,
//! `context` each) and every validation document too; all of them are uploaded once into one
//! buffer, [`DATA`], laid out by an arena [`Layout`] (train tokens, train targets, validation
//! tokens, validation targets; the validation windows padded to whole batches with windows
//! whose targets are all IGNORE, which count nothing). A step's batch is *selected by
//! offset*: the seeded order ([`BatchOrder`], the same as `gpt::train::Trainer`'s for the same
//! seed, so a twin replays it) is drawn on the CPU, and each of the batch's windows is one
//! buffer-to-buffer copy into the model's token and target ranges, encoded before the step in
//! the same submission. So `step(n)` is one submit of n steps and no batch is ever uploaded
//! again; the only per-step CPU work is drawing indices and encoding 2·batch copies.
//!
//! # Evaluation
//! [`GptSession::eval`] runs the forward over every validation batch (windows copied in as
//! above) and copies each batch's per-row losses into one slot of a ring of [`SLOTS`] result
//! slots ([`RESULTS`]), all in one submission. [`GptSession::poll_eval`] reads the slots back
//! in order, one readback at a time, never blocking; up to [`SLOTS`] evaluations may be
//! pending at once. The loss is Σ row losses (f64, ascending rows) / rows counted.
//!
//! # Sampling
//! [`GptSession::request_logits`] runs the evaluation forward on a prompt (the first window of
//! a batch; no KV cache yet) and reads back the last position's logits; [`pick`] chooses the
//! next token from them on the CPU, greedily or at a temperature.
//!
//! # Programs
//! [`PROGRAMS`]: [`TRAIN`] (one step: its batch copied in, clear, forward, backward, Adam)
//! and [`EVAL`] (the validation loss into a result slot); [`ATTENTION`] (the forward
//! without its loss head: a prompt's attention maps, `attention.rs`).

mod attention;

use std::collections::VecDeque;
use std::rc::Rc;

use gpt::data::{window, BatchOrder};
use gpt::ops::IGNORE;
use gpt::{Config, Corpus};

use super::{buffer, Engine, Layer, Layout, Model, Net, Node, Range, EVAL_LOSS, TRAIN_STEP};
use crate::context::{Gpu, GpuError};
use crate::plan::{Init, Op, ResidentBuffer};

pub use attention::{Check, Maps, ATTENTION, LOSS_HEAD};

/// The buffer of every window, training and validation (u32 tokens and targets).
pub const DATA: &str = "gpt windows";
/// The ring of evaluation results (each row's loss of every validation batch, per slot).
pub const RESULTS: &str = "gpt eval results";
/// Evaluations that may be pending at once.
pub const SLOTS: usize = 4;
/// The program that trains one step on the next batch of the seeded order.
pub const TRAIN: &str = "train";
/// The program that computes the validation loss into a result slot.
pub const EVAL: &str = "eval";
/// The session's programs.
pub const PROGRAMS: [&str; 3] = [TRAIN, EVAL, ATTENTION];

/// The layer list of `cfg` for batches of `windows` windows (rows = windows · context).
pub fn model(cfg: &Config, windows: usize) -> Model {
    let (c, t) = (cfg.width, cfg.context);
    let mut layers = vec![Layer::Embed {
        vocab: cfg.vocab,
        width: c,
        context: t,
    }];
    for _ in 0..cfg.layers {
        layers.push(Layer::Residual(vec![
            Layer::LayerNorm,
            Layer::Linear { out: 3 * c },
            Layer::Attention {
                heads: cfg.heads,
                context: t,
            },
            Layer::Linear { out: c },
        ]));
        layers.push(Layer::Residual(vec![
            Layer::LayerNorm,
            Layer::Linear { out: 4 * c },
            Layer::Gelu,
            Layer::Linear { out: c },
        ]));
    }
    layers.extend([
        Layer::LayerNorm,
        Layer::Linear { out: cfg.vocab },
        Layer::SoftmaxXent,
    ]);
    Model {
        batch: windows * t,
        input: 1,
        layers,
    }
}

/// `src` (k × m, row-major, the model's x·W) transposed into `dst` (m × k, W[out][in]).
fn put_transposed(dst: &mut [f32], src: &[f32], k: usize, m: usize) {
    for kk in 0..k {
        for n in 0..m {
            dst[n * k + kk] = src[kk * m + n];
        }
    }
}

/// `gpt::model`'s flat parameters `gp` (layout of `gpt::ParamLayout::new(cfg)`) in the
/// parameter layout of `net` (compiled from [`model`]`(cfg, _)`); padding and the head's
/// bias zero.
pub fn params(net: &Net, cfg: &Config, gp: &[f32]) -> Result<Vec<f32>, String> {
    let l = gpt::ParamLayout::new(cfg);
    if gp.len() != l.len {
        return Err(format!("{} parameters for a model of {}", gp.len(), l.len));
    }
    let c = cfg.width;
    let mut p = vec![0.0f32; net.param_words()];
    let copy =
        |p: &mut [f32], r: Range, at: usize| p[r.words()].copy_from_slice(&gp[at..][..r.len]);
    let linear = |p: &mut [f32], node: &Node, w: usize, b: Option<usize>, k: usize, m: usize| {
        let Node::Linear { w: rw, b: rb, .. } = node else {
            return Err("expected a linear layer".to_string());
        };
        if rw.len != k * m {
            return Err(format!(
                "a linear layer of {} weights, not {k} × {m}",
                rw.len
            ));
        }
        put_transposed(&mut p[rw.words()], &gp[w..w + k * m], k, m);
        if let Some(b) = b {
            copy(p, *rb, b);
        }
        Ok(())
    };
    let norm = |p: &mut [f32], node: &Node, g: usize, b: usize| {
        let Node::LayerNorm { gamma, beta, .. } = node else {
            return Err("expected a LayerNorm".to_string());
        };
        copy(p, *gamma, g);
        copy(p, *beta, b);
        Ok(())
    };
    let shape = || format!("the net is not the layer list of {cfg:?}");
    let nodes = &net.nodes;
    if nodes.len() != 1 + 2 * cfg.layers + 3 {
        return Err(shape());
    }
    let Node::Embed { wte, wpe, .. } = &nodes[0] else {
        return Err(shape());
    };
    copy(&mut p, *wte, l.wte);
    copy(&mut p, *wpe, l.wpe);
    for (i, bl) in l.blocks.iter().enumerate() {
        let (Node::Residual { branch: att, .. }, Node::Residual { branch: mlp, .. }) =
            (&nodes[1 + 2 * i], &nodes[2 + 2 * i])
        else {
            return Err(shape());
        };
        if att.len() != 4 || mlp.len() != 4 {
            return Err(shape());
        }
        norm(&mut p, &att[0], bl.ln1_g, bl.ln1_b)?;
        linear(&mut p, &att[1], bl.qkv_w, Some(bl.qkv_b), c, 3 * c)?;
        linear(&mut p, &att[3], bl.proj_w, Some(bl.proj_b), c, c)?;
        norm(&mut p, &mlp[0], bl.ln2_g, bl.ln2_b)?;
        linear(&mut p, &mlp[1], bl.fc_w, Some(bl.fc_b), c, 4 * c)?;
        linear(&mut p, &mlp[3], bl.out_w, Some(bl.out_b), 4 * c, c)?;
    }
    let k = 1 + 2 * cfg.layers;
    norm(&mut p, &nodes[k], l.lnf_g, l.lnf_b)?;
    linear(&mut p, &nodes[k + 1], l.head, None, c, cfg.vocab)?;
    Ok(p)
}

/// What a session trains with besides the model's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Windows per step (and per evaluation batch).
    pub batch: usize,
    /// Adam's learning rate.
    pub lr: f32,
}

impl Default for Settings {
    /// `gpt::train::Trainer`'s: 32 windows, 1e-2.
    fn default() -> Self {
        Self {
            batch: 32,
            lr: 1e-2,
        }
    }
}

/// A validation loss: the training steps done when it was asked for, and nats per character.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eval {
    pub steps: u64,
    pub loss: f64,
}

/// The GPT training on the GPU (see the module documentation).
pub struct GptSession {
    engine: Engine,
    cfg: Config,
    settings: Settings,
    order: BatchOrder,
    train_tokens: Range,
    train_targets: Range,
    val_tokens: Range,
    val_targets: Range,
    val_batches: usize,
    val_counted: usize,
    slots: [Range; SLOTS],
    /// Evaluations submitted and not yet collected: (slot, steps).
    pending: VecDeque<(usize, u64)>,
    /// Whether the front of `pending` is being read back.
    reading: bool,
    next_slot: usize,
    /// The prompt position whose logits are being read back, if any.
    logits_at: Option<usize>,
    /// The tokens and steps of the attention maps being read back, if any.
    maps_for: Option<(Vec<u32>, u64)>,
}

/// Windows of `docs` (each `context` long) padded with `pad` all-IGNORE windows, as the
/// tokens then the targets.
fn windows(docs: &[Vec<u32>], context: usize, pad: usize) -> (Vec<u32>, Vec<u32>) {
    let mut tokens = Vec::with_capacity((docs.len() + pad) * context);
    let mut targets = Vec::with_capacity(tokens.capacity());
    for d in docs {
        let (t, g) = window(d, context);
        tokens.extend(t);
        targets.extend(g);
    }
    tokens.resize((docs.len() + pad) * context, 0);
    targets.resize(tokens.len(), IGNORE);
    (tokens, targets)
}

/// What a session is made of before it has a device: the compiled layers and their
/// parameters, the windows' buffer ([`DATA`], laid out by `data`) and the result slots
/// ([`RESULTS`]). [`GptSession::with_settings`] builds on it; `bench dump-kernels --gpt`
/// describes it for the Dawn runner, so both train the same plan on the same data.
pub struct Parts {
    pub net: Net,
    /// In the arena's parameter layout.
    pub params: Vec<f32>,
    /// [`DATA`] and [`RESULTS`], with their contents.
    pub extra: Vec<ResidentBuffer<'static>>,
    /// Bytes of one result slot (the session's readback).
    pub readback: u64,
    pub data: Layout,
    pub results: Layout,
    pub train_tokens: Range,
    pub train_targets: Range,
    pub val_tokens: Range,
    pub val_targets: Range,
    /// Whole validation batches (the last padded with windows that count nothing).
    pub val_batches: usize,
    /// Validation targets that count (not IGNORE).
    pub val_counted: usize,
    pub slots: [Range; SLOTS],
}

impl Parts {
    /// See [`Parts`]; the arguments are [`GptSession::with_settings`]'s.
    pub fn new(
        cfg: Config,
        corpus: &Corpus,
        seed: u64,
        settings: Settings,
        start: Option<&[f32]>,
    ) -> Result<Self, String> {
        let gpt_model = gpt::Model::new(cfg).map_err(|e| e.to_string())?;
        if cfg.vocab != corpus.vocab.len() {
            return Err(format!(
                "a vocabulary of {} for a corpus of {}",
                cfg.vocab,
                corpus.vocab.len()
            ));
        }
        if corpus.train.is_empty() || settings.batch == 0 {
            return Err("no training documents, or batches of none".into());
        }
        let t = cfg.context;
        let b = settings.batch;
        let net = Net::compile(&model(&cfg, b))?;
        let gp = match start {
            Some(p) => p.to_vec(),
            None => gpt_model.init_params(seed),
        };
        let params = params(&net, &cfg, &gp)?;
        let val_batches = corpus.val.len().div_ceil(b);
        let (tt, tg) = windows(&corpus.train, t, 0);
        let (vt, vg) = windows(&corpus.val, t, val_batches * b - corpus.val.len());
        let val_counted = vg.iter().filter(|&&k| k != IGNORE).count();
        let mut data = Layout::default();
        let train_tokens = data.push("train tokens", tt.len());
        let train_targets = data.push("train targets", tg.len());
        let val_tokens = data.push("val tokens", vt.len());
        let val_targets = data.push("val targets", vg.len());
        let mut words = vec![0u32; data.words()];
        for (r, v) in [
            (train_tokens, &tt),
            (train_targets, &tg),
            (val_tokens, &vt),
            (val_targets, &vg),
        ] {
            words[r.words()].copy_from_slice(v);
        }
        let mut results = Layout::default();
        let slots = [0, 1, 2, 3].map(|i| results.push(format!("slot {i}"), val_batches * b * t));
        let extra = vec![
            ResidentBuffer {
                name: DATA,
                init: Init::Bytes(bytemuck::cast_slice(&words).to_vec().into()),
            },
            ResidentBuffer {
                name: RESULTS,
                init: Init::Zeroed(results.bytes()),
            },
        ];
        Ok(Self {
            net,
            params,
            extra,
            readback: (slots[0].len * 4) as u64,
            data,
            results,
            train_tokens,
            train_targets,
            val_tokens,
            val_targets,
            val_batches,
            val_counted,
            slots,
        })
    }
}

impl GptSession {
    /// A session of `cfg` (its vocabulary the corpus's) on `corpus` with the default
    /// [`Settings`], parameters from `gpt::Model::init_params(seed)` and the batch order
    /// of `seed`: `gpt::train::Trainer::new(model, train, 32, 1e-2, seed)`'s.
    pub async fn new(
        gpu: Rc<Gpu>,
        cfg: Config,
        corpus: &Corpus,
        seed: u64,
    ) -> Result<Self, GpuError> {
        Self::with_settings(gpu, cfg, corpus, seed, Settings::default(), None).await
    }

    /// [`GptSession::new`] with `settings`, and starting parameters (in `gpt::model`'s
    /// layout) other than the seed's if `start` is given.
    pub async fn with_settings(
        gpu: Rc<Gpu>,
        cfg: Config,
        corpus: &Corpus,
        seed: u64,
        settings: Settings,
        start: Option<&[f32]>,
    ) -> Result<Self, GpuError> {
        let bad = |e: String| GpuError::Dispatch(e);
        let parts = Parts::new(cfg, corpus, seed, settings, start).map_err(bad)?;
        let limits = gpu.limits();
        let largest = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if parts.data.bytes() > largest || parts.results.bytes() > largest {
            return Err(bad(format!(
                "the corpus needs a buffer of {} bytes; this adapter binds at most {largest}",
                parts.data.bytes().max(parts.results.bytes())
            )));
        }
        let Parts {
            net,
            params: p,
            extra,
            readback,
            train_tokens,
            train_targets,
            val_tokens,
            val_targets,
            val_batches,
            val_counted,
            slots,
            ..
        } = parts;
        let mut engine = Engine::with_buffers(gpu, net, settings.lr, &p, extra, readback).await?;
        engine.derive_program(ATTENTION, EVAL_LOSS, |id| id != LOSS_HEAD)?;
        Ok(Self {
            engine,
            cfg,
            settings,
            order: BatchOrder::new(corpus.train.len(), seed),
            train_tokens,
            train_targets,
            val_tokens,
            val_targets,
            val_batches,
            val_counted,
            slots,
            pending: VecDeque::new(),
            reading: false,
            next_slot: 0,
            logits_at: None,
            maps_for: None,
        })
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The engine beneath (its net, its buffers for tests and the page's tallies).
    pub fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }

    pub fn net(&self) -> &Net {
        self.engine.net()
    }

    /// The names of the session's programs.
    pub fn programs(&self) -> [&'static str; 3] {
        PROGRAMS
    }

    /// Training steps submitted.
    pub fn steps(&self) -> u64 {
        self.engine.steps()
    }

    /// Copies the windows `idx` of `tokens` and `targets` (ranges of [`DATA`]) one after
    /// another into the model's input and target ranges.
    fn copies(&self, tokens: Range, targets: Range, idx: &[usize]) -> Vec<Op> {
        let net = self.engine.net();
        let t = self.cfg.context;
        let mut ops = Vec::with_capacity(2 * idx.len());
        for (from, dst) in [(tokens, net.input.act), (targets, net.targets)] {
            for (j, &i) in idx.iter().enumerate() {
                ops.push(Op::Copy {
                    from: DATA,
                    from_offset: ((from.at + i * t) * 4) as u64,
                    to: buffer::ACTS,
                    to_offset: ((dst.at + j * t) * 4) as u64,
                    bytes: (t * 4) as u64,
                });
            }
        }
        ops
    }

    /// Submits `n` training steps in one submission, each on the next batch of the seeded
    /// order; never waits.
    pub fn step(&mut self, n: u64) -> Result<(), GpuError> {
        let mut around = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let idx = self.order.next(self.settings.batch);
            around.push((
                self.copies(self.train_tokens, self.train_targets, &idx),
                Vec::new(),
            ));
        }
        self.engine.run_around(TRAIN_STEP, &around)
    }

    /// The document indices of the next `n` steps' batches, without taking them (what a twin
    /// feeds itself).
    pub fn peek_batches(&self, n: usize) -> Vec<Vec<usize>> {
        let mut o = self.order.clone();
        (0..n).map(|_| o.next(self.settings.batch)).collect()
    }

    /// Sets Adam's learning rate for the steps submitted from now on.
    pub fn set_lr(&mut self, lr: f32) -> Result<(), GpuError> {
        self.settings.lr = lr;
        self.engine.set_lr(lr)
    }

    /// Submits an evaluation of the validation loss with the parameters as they will be after
    /// the steps submitted so far; false (nothing submitted) while [`SLOTS`] are pending.
    pub fn eval(&mut self) -> Result<bool, GpuError> {
        if self.pending.len() == SLOTS {
            return Ok(false);
        }
        let slot = self.next_slot;
        let (b, t) = (self.settings.batch, self.cfg.context);
        let losses = self.engine.net().losses;
        let around: Vec<(Vec<Op>, Vec<Op>)> = (0..self.val_batches)
            .map(|k| {
                let idx: Vec<usize> = (k * b..(k + 1) * b).collect();
                let copy_out = Op::Copy {
                    from: buffer::DELTAS,
                    from_offset: (losses.at * 4) as u64,
                    to: RESULTS,
                    to_offset: ((self.slots[slot].at + k * b * t) * 4) as u64,
                    bytes: (b * t * 4) as u64,
                };
                (
                    self.copies(self.val_tokens, self.val_targets, &idx),
                    vec![copy_out],
                )
            })
            .collect();
        self.engine.run_around(EVAL_LOSS, &around)?;
        self.pending.push_back((slot, self.engine.steps()));
        self.next_slot = (slot + 1) % SLOTS;
        Ok(true)
    }

    /// Evaluations submitted and not yet returned by [`GptSession::poll_eval`].
    pub fn evals_pending(&self) -> usize {
        self.pending.len()
    }

    /// The oldest pending evaluation's result once it has arrived; never waits. Call it
    /// until it returns `None` to collect every one that has.
    pub fn poll_eval(&mut self) -> Result<Option<Eval>, GpuError> {
        let Some(&(slot, steps)) = self.pending.front() else {
            return Ok(None);
        };
        if !self.reading {
            if self.logits_at.is_some()
                || self.maps_for.is_some()
                || !self
                    .engine
                    .request_read(&[self.slots[slot].read(RESULTS)])?
            {
                // The staging is the logits' or someone else's (a test's read): later.
                return Ok(None);
            }
            self.reading = true;
        }
        let Some(losses) = self.engine.poll_read()? else {
            return Ok(None);
        };
        self.reading = false;
        self.pending.pop_front();
        let total: f64 = losses.iter().map(|&x| f64::from(x)).sum();
        Ok(Some(Eval {
            steps,
            loss: total / self.val_counted.max(1) as f64,
        }))
    }

    /// The logits' range of the model (the head's output, rows × vocab, in the activations).
    pub fn logits_range(&self) -> Range {
        let net = self.engine.net();
        match net.nodes.iter().rev().nth(1) {
            Some(Node::Linear { y, .. }) => y.act,
            _ => net.losses,
        }
    }

    /// Submits a forward of `prompt` (its last `context` tokens, the boundary 0 first for a
    /// new document) in the first window of a batch, and asks for the next token's logits
    /// (the last prompt position's row); false (nothing submitted) while a readback is on
    /// its way. The training batch's tokens are overwritten: the next step copies its own.
    pub fn request_logits(&mut self, prompt: &[u32]) -> Result<bool, GpuError> {
        if self.reading
            || self.logits_at.is_some()
            || self.maps_for.is_some()
            || self.engine.read_pending()
        {
            return Ok(false);
        }
        let t = self.cfg.context;
        let prompt = &prompt[prompt.len().saturating_sub(t)..];
        if prompt.is_empty() || prompt.iter().any(|&k| k as usize >= self.cfg.vocab) {
            return Err(GpuError::Dispatch(format!(
                "a prompt of {} tokens, each below {}",
                prompt.len(),
                self.cfg.vocab
            )));
        }
        let rows = self.engine.net().batch;
        let mut tokens = vec![0u32; rows];
        tokens[..prompt.len()].copy_from_slice(prompt);
        self.engine.write_tokens(&tokens)?;
        self.engine.write_targets(&vec![IGNORE; rows])?;
        self.engine.run(EVAL_LOSS, 1)?;
        let v = self.cfg.vocab;
        let r = self.logits_range();
        let row = Range {
            at: r.at + (prompt.len() - 1) * v,
            len: v,
        };
        if !self.engine.request_read(&[row.read(buffer::ACTS)])? {
            return Ok(false);
        }
        self.logits_at = Some(prompt.len() - 1);
        Ok(true)
    }

    /// The requested logits once they have arrived; never waits.
    pub fn poll_logits(&mut self) -> Result<Option<Vec<f32>>, GpuError> {
        if self.logits_at.is_none() {
            return Ok(None);
        }
        let got = self.engine.poll_read()?;
        if got.is_some() {
            self.logits_at = None;
        }
        Ok(got)
    }

    /// Natively: the oldest pending evaluation (one submitted now if none is), waiting for it (tests and benchmarks).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn eval_blocking(&mut self) -> Result<Eval, GpuError> {
        if self.pending.is_empty() && !self.eval()? {
            return Err(GpuError::Readback("no evaluation to wait for".into()));
        }
        loop {
            if let Some(e) = self.poll_eval()? {
                return Ok(e);
            }
            self.engine.wait()?;
        }
    }
}

/// The next token from a row of logits: the largest (the lowest token among equals) at
/// `temperature` 0, else drawn from softmax(logits / temperature) by `u` in [0, 1) (inverse
/// CDF, tokens ascending; f64, the maximum subtracted first).
pub fn pick(logits: &[f32], temperature: f32, u: f64) -> u32 {
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] {
            best = i;
        }
    }
    if temperature <= 0.0 {
        return best as u32;
    }
    let m = f64::from(logits[best]);
    let w: Vec<f64> = logits
        .iter()
        .map(|&x| ((f64::from(x) - m) / f64::from(temperature)).exp())
        .collect();
    let mut r = u * w.iter().sum::<f64>();
    for (i, &wi) in w.iter().enumerate() {
        if r < wi {
            return i as u32;
        }
        r -= wi;
    }
    best as u32
}
