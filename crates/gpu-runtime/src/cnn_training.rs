//! Training the CNN page's network (issue 24) on the GPU: its layer list
//! ([`crate::engine::cnn::model`]: per block a convolution with bias and ReLU and a 2 × 2
//! max-pool, then the dense layer and the loss head) on the training engine
//! ([`crate::engine::Engine`]), which lays every tensor out in its arena once, records each
//! layer's dispatches (the CNN family's kernels), and runs them as named programs with
//! `optim-sgd` or `optim-adam` (the optimiser family every model shares) over every
//! parameter. This module adds what the page's network needs around it: the seeded batch
//! order and its staging, the evaluation batch, and readbacks in `cnn::net`'s layouts
//! ([`crate::engine::cnn::Map`]), so what is read back compares with the twin's `Workspace`
//! element for element. Readbacks are requested and polled, never waited for (natively,
//! tests may block).
//!
//! Steps, up to [`CnnSession::steps_per_submit`] in one submission: the CPU gathers each step's
//! batch in the CPU twin's seeded order (`cnn::data::BatchOrder`, the twin's `gather`) and
//! writes all of them at once into a staging buffer; per step the submission copies its images
//! and labels into the arena, then runs the engine's train step. Adam's bias corrections come
//! from a table indexed by a step counter on the GPU, which Adam's dispatch advances, so
//! nothing is written per step but the batch. Uploading each batch (B·side² floats, 200 KB at
//! batch 64) keeps the session simple; a resident training set gathered on the GPU can
//! replace it.
//!
//! An evaluation runs the forward pass on up to `eval_batch` images (the same layers compiled
//! at that batch, in their own activation buffer) and reads back the logits (and, for the
//! page's "look inside", optionally every activation).

use std::rc::Rc;

use cnn::data::{BatchOrder, Samples};
use cnn::net::{Hyper, Net, Optimiser};

use crate::catalogue::KernelSpec;
use crate::context::{Gpu, GpuError};
use crate::engine::cnn::{model, Map};
use crate::engine::{buffer, Engine, Setup, EVAL_FORWARD, TRAIN_STEP};
use crate::family::cnn::{optim_hyper, optimiser_dispatch};
use crate::family::optim;
use crate::plan::{Init, LoopFlag, Op, PlannedDispatch, ReadRange, ResidentBuffer, LOOP_FLAG};

/// The staging buffer of a session's batches (images then labels, per step).
const BATCHES: &str = "cnn batches";

/// Bytes of batches one submission may stage (images and labels of its steps).
pub const STAGING_BYTES: u64 = 16 << 20;
/// Steps one submission carries at most.
pub const MAX_STEPS_PER_SUBMIT: u32 = 32;

/// What a session trains and on what.
#[derive(Clone, Debug)]
pub struct CnnConfig<'a> {
    pub net: Net,
    pub hyper: Hyper,
    /// Samples per step (at least 1).
    pub batch: usize,
    /// The starting parameters (`Net::init_params`, the twin's).
    pub params: &'a [f32],
    /// The training set (images of the net's side) and the seed of its batch order.
    pub train: Samples,
    pub order_seed: u64,
    /// Images per evaluation pass (`cnn::net::EVAL_CHUNK` on the page); 0: no evaluation.
    pub eval_batch: usize,
}

/// A buffer that can be read back after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Params,
    Grads,
    /// Momentum or Adam's first moment.
    M,
    /// Adam's second moment.
    V,
    /// Each sample's loss in the last step.
    Losses,
    /// The last step's activations, deltas and argmax (the twin's `Workspace`).
    Acts,
    Deltas,
    Argmax,
    /// The loop-budget flag's words ([`CnnSession::new_edited`]); nothing without one.
    LoopFlag,
}

/// What a readback brought; a part not asked for is empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Readout {
    /// Steps submitted when it was asked for (all of them done when it arrives).
    pub step: u64,
    pub params: Vec<f32>,
    pub grads: Vec<f32>,
    pub m: Vec<f32>,
    pub v: Vec<f32>,
    pub losses: Vec<f32>,
    /// The last step's mean loss, (Σ_n loss_n) / B with n ascending (the twin's
    /// `last_loss`); NaN when the losses were not read.
    pub loss: f32,
    pub acts: Vec<f32>,
    pub deltas: Vec<f32>,
    pub argmax: Vec<u32>,
    pub loop_flag: Vec<u32>,
}

/// One evaluation pass read back.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalReadout {
    /// Images evaluated and their logits (rows × classes).
    pub rows: usize,
    pub logits: Vec<f32>,
    /// The whole evaluation activation buffer (the eval batch's layout), when asked for.
    pub acts: Vec<f32>,
}

/// Loss, accuracy and each sample's class from an evaluation's logits, with the twin's
/// formulas (one function in `cnn::net`, shared with the tuned CPU trainer).
pub use cnn::net::evaluation;

enum Pending {
    None,
    Read(Vec<Part>, u64),
    Eval { rows: usize, acts: bool },
}

/// The CNN being trained on the GPU; dropping it destroys its buffers.
pub struct CnnSession {
    net: Net,
    hyper: Hyper,
    batch: usize,
    /// The train step's dispatches, for showing.
    plan: Vec<PlannedDispatch>,
    engine: Engine,
    /// The arena's places of `cnn::net`'s regions, for the training batch and the evaluation's.
    map: Map,
    eval_map: Option<Map>,
    /// Bytes of the evaluation's activation buffer.
    eval_acts_bytes: u64,
    /// Steps whose batches fit the staging buffer: the most one submission carries.
    per_submit: u32,
    eval_batch: usize,
    train: Samples,
    order: BatchOrder,
    indices: Vec<u32>,
    x: Vec<f32>,
    y: Vec<u32>,
    pending: Pending,
    /// Words of the loop-budget flag buffer, 0 without one.
    flag_words: usize,
}

/// Little-endian words of a readback (a byte vector need not be aligned for a cast).
fn u32s(floats: &[f32]) -> Vec<u32> {
    floats.iter().map(|f| f.to_bits()).collect()
}

/// The dispatches of one training step of `net` at `batch` as the engine records them (kernel,
/// conv block, grid, uniform), the optimiser's last: what the page lists and the interface
/// checks read.
pub fn step_plan(net: &Net, hyper: &Hyper, batch: usize) -> Result<Vec<PlannedDispatch>, GpuError> {
    Ok(train_step(&compile(net, batch.max(1))?.0, hyper))
}

/// The evaluation's forward dispatches of `net` at `batch` (no loss head).
pub fn forward_plan(net: &Net, batch: usize) -> Result<Vec<PlannedDispatch>, GpuError> {
    let (compiled, _) = compile(net, batch.max(1))?;
    Ok(compiled
        .forward_only()
        .into_iter()
        .map(|r| r.planned)
        .collect())
}

/// The engine's arena for `net` at `batch`: the one layout of every buffer a session makes
/// (the page's limit check reads it; nothing sizes a buffer again).
pub fn arena(net: &Net, batch: usize) -> Result<crate::engine::Arena, GpuError> {
    Ok(compile(net, batch.max(1))?.0.arena)
}

fn train_step(compiled: &crate::engine::Net, hyper: &Hyper) -> Vec<PlannedDispatch> {
    let mut plan: Vec<PlannedDispatch> = compiled
        .forward()
        .into_iter()
        .chain(compiled.backward())
        .map(|r| r.planned)
        .collect();
    plan.push(optimiser_dispatch(
        hyper,
        compiled.param_words(),
        optim::MAX_GROUPS_X,
    ));
    plan
}

fn compile(net: &Net, batch: usize) -> Result<(crate::engine::Net, Map), GpuError> {
    let compiled = crate::engine::Net::compile(&model(net, batch)).map_err(GpuError::Dispatch)?;
    let map = Map::new(net, &compiled)
        .ok_or_else(|| GpuError::Dispatch("the CNN's layers do not map onto its layout".into()))?;
    Ok((compiled, map))
}

/// What a session of `net` at `batch` hands the engine: the compiled layers, their map to
/// `cnn::net`'s layouts, the parameters in the arena's layout and the [`Setup`] (the
/// optimiser, the staging buffer of [`Described::per_submit`] steps' batches, the evaluation's
/// layers). [`CnnSession::new_edited`] builds from it; `bench dump-kernels --cnn` describes it
/// for the Dawn runner, so both run one plan.
pub struct Described<'a> {
    pub net: crate::engine::Net,
    pub map: Map,
    pub eval: Option<crate::engine::Net>,
    pub eval_map: Option<Map>,
    pub params: Vec<f32>,
    /// Steps whose batches one submission stages (images then labels as bits, per step).
    pub per_submit: u32,
    pub setup: Setup<'a>,
}

/// The staging buffer's name ([`Described::per_submit`] steps' batches).
pub const STAGING: &str = BATCHES;

/// See [`Described`]; `params` in `cnn::net`'s layout.
pub fn described<'a>(
    net: &Net,
    hyper: &Hyper,
    batch: usize,
    eval_batch: usize,
    params: &[f32],
    replacements: &'a [&'a KernelSpec],
    flag: Option<LoopFlag>,
) -> Result<Described<'a>, GpuError> {
    let batch = batch.max(1);
    let px = net.side * net.side;
    let (compiled, map) = compile(net, batch)?;
    let (eval, eval_map) = if eval_batch > 0 {
        let (e, m) = compile(net, eval_batch)?;
        (Some(e), Some(m))
    } else {
        (None, None)
    };
    // Each step's batch (images, then labels) waits in the staging buffer; as many steps as
    // fit STAGING_BYTES, at most MAX_STEPS_PER_SUBMIT, at least one.
    let step_words = batch * (px + 1);
    let per_submit =
        (STAGING_BYTES / (step_words as u64 * 4)).clamp(1, MAX_STEPS_PER_SUBMIT as u64) as u32;
    let params = map.to_arena(params, compiled.param_words());
    let setup = Setup {
        optimiser: optim_hyper(hyper),
        extra: vec![ResidentBuffer {
            name: BATCHES,
            init: Init::Zeroed((per_submit as usize * step_words).max(1) as u64 * 4),
        }],
        readback: 0,
        eval: eval.clone(),
        replacements,
        flag,
        rewrite: None,
    };
    Ok(Described {
        net: compiled,
        map,
        eval,
        eval_map,
        params,
        per_submit,
        setup,
    })
}

impl CnnSession {
    /// Compiles the pipelines, creates the buffers and records the dispatches.
    pub async fn new(gpu: Rc<Gpu>, cfg: CnnConfig<'_>) -> Result<Self, GpuError> {
        Self::new_with(gpu, cfg, &[]).await
    }

    /// [`CnnSession::new`] where a dispatch of a kernel whose id matches one of
    /// `replacements` runs it instead of the catalogue's (an edited kernel, or a test's
    /// planted mistake). A replacement no dispatch runs is refused by name.
    pub async fn new_with(
        gpu: Rc<Gpu>,
        cfg: CnnConfig<'_>,
        replacements: &[&KernelSpec],
    ) -> Result<Self, GpuError> {
        Self::new_edited(gpu, cfg, replacements, None).await
    }

    /// [`CnnSession::new_with`] where the replacements are a learner's kernels rewritten with
    /// a loop budget: every dispatch of a replaced kernel also binds the [`LOOP_FLAG`] buffer
    /// at `flag.binding`, just after its uniform (refused elsewhere: it would alias a binding
    /// or be dropped, and a stopped loop would go unreported); [`Part::LoopFlag`] reads it.
    pub async fn new_edited(
        gpu: Rc<Gpu>,
        cfg: CnnConfig<'_>,
        replacements: &[&KernelSpec],
        flag: Option<LoopFlag>,
    ) -> Result<Self, GpuError> {
        if gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost before training started".into()));
        }
        let net = cfg.net;
        let batch = cfg.batch.max(1);
        let px = net.side * net.side;
        if cfg.params.len() != net.param_layout().len
            || cfg.train.is_empty()
            || cfg.train.side != net.side
            || cfg.train.x.len() != cfg.train.len() * px
        {
            return Err(GpuError::WrongJob);
        }
        let limits = gpu.buffer_limits();
        let ceiling = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let step_bytes = (batch * (px + 1)) as u64 * 4;
        if step_bytes > ceiling {
            return Err(GpuError::Dispatch(format!(
                "a batch of {batch} images needs more than this device's {ceiling}-byte buffers"
            )));
        }
        let eval_batch = cfg.eval_batch;
        let d = described(
            &net,
            &cfg.hyper,
            batch,
            eval_batch,
            cfg.params,
            replacements,
            flag,
        )?;
        let eval_acts_bytes = d.eval.as_ref().map_or(0, |e| e.arena.acts.bytes());
        let plan = train_step(&d.net, &cfg.hyper);
        let engine = Engine::build(gpu, d.net, &d.params, d.setup).await?;
        let (map, eval_map, per_submit) = (d.map, d.eval_map, d.per_submit);
        Ok(Self {
            order: BatchOrder::new(cfg.train.len(), cfg.order_seed),
            train: cfg.train,
            net,
            hyper: cfg.hyper,
            batch,
            plan,
            engine,
            map,
            eval_map,
            eval_acts_bytes,
            per_submit,
            eval_batch,
            indices: Vec::new(),
            x: Vec::new(),
            y: Vec::new(),
            pending: Pending::None,
            flag_words: flag.map_or(0, |f| f.words.max(1)),
        })
    }

    /// The dispatches of one step, for showing (kernel id, workgroups).
    pub fn plan(&self) -> &[PlannedDispatch] {
        &self.plan
    }

    pub fn net(&self) -> &Net {
        &self.net
    }

    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The device the session runs on.
    pub fn gpu(&self) -> &Rc<Gpu> {
        self.engine.gpu()
    }

    /// Whether the session's device has been lost: a lost device may never report the steps
    /// in flight as done, so the page asks this as well as counting them.
    pub fn device_lost(&self) -> bool {
        self.engine.gpu().is_lost()
    }

    /// Changes the learning rate from the next step on (the only uniform word a step's
    /// kernels get from the CPU after the session is made).
    pub fn set_lr(&mut self, lr: f32) {
        self.hyper.lr = lr;
        // The engine's own optimiser dispatch, so always in range.
        let _ = self.engine.set_lr(lr);
    }

    /// The most steps one submission carries ([`CnnSession::steps`] cuts longer runs).
    pub fn steps_per_submit(&self) -> u32 {
        self.per_submit
    }

    /// Steps submitted so far.
    pub fn steps_submitted(&self) -> u64 {
        self.engine.steps()
    }

    /// Steps the GPU has finished.
    pub fn steps_completed(&self) -> u64 {
        self.engine.units_completed()
    }

    /// Overwrites the parameters and the optimiser's two states (queued before the next
    /// submission): a restart from saved values, or a test putting the GPU where the twin
    /// is. Each slice has the parameter layout's length.
    pub fn write_state(&self, params: &[f32], m: &[f32], v: &[f32]) -> Result<(), GpuError> {
        let n = self.map.param_len;
        if params.len() != n || m.len() != n || v.len() != n {
            return Err(GpuError::WrongJob);
        }
        let words = self.engine.net().param_words();
        for (name, values) in [(buffer::PARAMS, params), (buffer::M, m), (buffer::V, v)] {
            let arena = self.map.to_arena(values, words);
            self.engine.write(name, 0, bytemuck::cast_slice(&arena))?;
        }
        Ok(())
    }

    /// Submits one training step (see the module documentation); never waits.
    pub fn step(&mut self) -> Result<(), GpuError> {
        self.steps(1)
    }

    /// Submits `count` steps, [`CnnSession::steps_per_submit`] to a submission: their batches
    /// are written to the staging buffer at once, and each step copies its own before its
    /// pass. Never waits.
    pub fn steps(&mut self, count: u32) -> Result<(), GpuError> {
        if self.engine.gpu().is_lost() {
            return Err(GpuError::DeviceLost("lost while training".into()));
        }
        let mut left = count;
        while left > 0 {
            let n = left.min(self.per_submit);
            self.submit_steps(n)?;
            left -= n;
        }
        Ok(())
    }

    /// `n` (≤ `per_submit`) steps in one submission.
    fn submit_steps(&mut self, n: u32) -> Result<(), GpuError> {
        let px = self.net.side * self.net.side;
        let b = self.batch;
        let image_bytes = (b * px) as u64 * 4;
        let step_bytes = (b * (px + 1)) as u64 * 4;
        let done = self.engine.steps();
        self.x.clear();
        for s in 0..n as u64 {
            self.order.batch(done + s, b, &mut self.indices);
            self.y.clear();
            for &i in &self.indices {
                let i = i as usize;
                let (Some(img), Some(&label)) =
                    (self.train.x.get(i * px..(i + 1) * px), self.train.y.get(i))
                else {
                    return Err(GpuError::WrongJob);
                };
                self.x.extend_from_slice(img);
                self.y.push(label);
            }
            // Labels as their bits, after the step's images.
            self.x.extend(self.y.iter().map(|&l| f32::from_bits(l)));
        }
        self.engine
            .write(BATCHES, 0, bytemuck::cast_slice(&self.x))?;
        let input = self.map.input.at as u64 * 4;
        let targets = self.engine.net().targets.at as u64 * 4;
        let around: Vec<(Vec<Op>, Vec<Op>)> = (0..n as u64)
            .map(|s| {
                let at = s * step_bytes;
                let copies = vec![
                    Op::Copy {
                        from: BATCHES,
                        from_offset: at,
                        to: buffer::ACTS,
                        to_offset: input,
                        bytes: image_bytes,
                    },
                    Op::Copy {
                        from: BATCHES,
                        from_offset: at + image_bytes,
                        to: buffer::ACTS,
                        to_offset: targets,
                        bytes: b as u64 * 4,
                    },
                ];
                (copies, Vec::new())
            })
            .collect();
        self.engine.run_around(TRAIN_STEP, &around)
    }

    /// Whether a readback or an evaluation is on its way.
    pub fn read_pending(&self) -> bool {
        !matches!(self.pending, Pending::None)
    }

    fn range(&self, part: Part) -> ReadRange {
        let n = self.engine.net();
        let params = n.arena.params.all();
        match part {
            Part::Params => params.read(buffer::PARAMS),
            Part::Grads => params.read(buffer::GRADS),
            Part::M => params.read(buffer::M),
            Part::V => params.read(buffer::V),
            Part::Losses => n.losses.read(buffer::DELTAS),
            Part::Acts | Part::Argmax => n.arena.acts.all().read(buffer::ACTS),
            Part::Deltas => n.arena.deltas.all().read(buffer::DELTAS),
            Part::LoopFlag => ReadRange {
                buffer: LOOP_FLAG,
                offset: 0,
                bytes: self.flag_words as u64 * 4,
            },
        }
    }

    /// Asks for `parts` after everything submitted so far; false, doing nothing, while an
    /// earlier readback or evaluation has not been collected.
    pub fn request_read(&mut self, parts: &[Part]) -> Result<bool, GpuError> {
        if self.read_pending() {
            return Ok(false);
        }
        let ranges: Vec<ReadRange> = parts.iter().map(|&p| self.range(p)).collect();
        let started = self.engine.request_read(&ranges)?;
        if started {
            self.pending = Pending::Read(parts.to_vec(), self.engine.steps());
        }
        Ok(started)
    }

    /// Runs the forward pass on `images` (up to the session's `eval_batch` images of side²,
    /// after the steps submitted so far) and asks for their logits, and for the whole
    /// evaluation activation buffer with `with_acts`. False, doing nothing, while an earlier
    /// readback has not been collected.
    pub fn request_eval(&mut self, images: &[f32], with_acts: bool) -> Result<bool, GpuError> {
        let px = self.net.side * self.net.side;
        let rows = images.len() / px.max(1);
        let Some(map) = &self.eval_map else {
            return Err(GpuError::WrongJob);
        };
        if rows == 0 || rows > self.eval_batch || images.len() != rows * px {
            return Err(GpuError::WrongJob);
        }
        if self.read_pending() {
            return Ok(false);
        }
        self.engine.write(
            buffer::EVAL_ACTS,
            map.input.at as u64 * 4,
            bytemuck::cast_slice(images),
        )?;
        let range = if with_acts {
            // The whole evaluation activation buffer.
            ReadRange {
                buffer: buffer::EVAL_ACTS,
                offset: 0,
                bytes: self.eval_acts_bytes,
            }
        } else {
            map.logits.read(buffer::EVAL_ACTS)
        };
        let range = ReadRange {
            bytes: if with_acts {
                range.bytes
            } else {
                (rows * self.net.classes) as u64 * 4
            },
            ..range
        };
        let started = self.engine.request_read_after(EVAL_FORWARD, &[range])?;
        if started {
            self.pending = Pending::Eval {
                rows,
                acts: with_acts,
            };
        }
        Ok(started)
    }

    /// The readback asked for with [`CnnSession::request_read`], once it has arrived.
    pub fn poll_read(&mut self) -> Result<Option<Readout>, GpuError> {
        let Pending::Read(parts, step) = &self.pending else {
            return Ok(None);
        };
        let (parts, step) = (parts.clone(), *step);
        let Some(floats) = self.engine.poll_read()? else {
            return Ok(None);
        };
        self.pending = Pending::None;
        let mut out = Readout {
            step,
            loss: f32::NAN,
            ..Readout::default()
        };
        let mut at = 0usize;
        for part in parts {
            let len = (self.range(part).bytes / 4) as usize;
            let chunk = floats
                .get(at..at + len)
                .ok_or_else(|| GpuError::Readback("short readback".into()))?;
            at += len;
            match part {
                Part::Params => out.params = self.map.params_of(chunk),
                Part::Grads => out.grads = self.map.params_of(chunk),
                Part::M => out.m = self.map.params_of(chunk),
                Part::V => out.v = self.map.params_of(chunk),
                Part::Losses => {
                    // The twin's order: n ascending from 0, then one division.
                    let mut sum = 0.0f32;
                    for &l in chunk {
                        sum += l;
                    }
                    out.loss = sum / self.batch as f32;
                    out.losses = chunk.to_vec();
                }
                Part::Acts => out.acts = self.map.acts_of(chunk),
                Part::Deltas => out.deltas = self.map.acts_of(chunk),
                Part::Argmax => out.argmax = self.map.argmax_of(chunk),
                Part::LoopFlag => out.loop_flag = u32s(chunk),
            }
        }
        Ok(Some(out))
    }

    /// The evaluation asked for with [`CnnSession::request_eval`], once it has arrived.
    pub fn poll_eval(&mut self) -> Result<Option<EvalReadout>, GpuError> {
        let Pending::Eval { rows, acts } = self.pending else {
            return Ok(None);
        };
        let Some(map) = &self.eval_map else {
            return Ok(None);
        };
        let Some(floats) = self.engine.poll_read()? else {
            return Ok(None);
        };
        self.pending = Pending::None;
        let k = self.net.classes;
        let (logits, all) = if acts {
            let r = map.logits;
            let logits = floats
                .get(r.at..r.at + rows * k)
                .ok_or_else(|| GpuError::Readback("short readback".into()))?
                .to_vec();
            (logits, map.acts_of(&floats))
        } else {
            (floats, Vec::new())
        };
        Ok(Some(EvalReadout {
            rows,
            logits,
            acts: all,
        }))
    }

    /// Resolves when everything submitted so far has finished (Cancel awaits this).
    pub fn finished(&self) -> impl std::future::Future<Output = Result<(), GpuError>> {
        self.engine.finished()
    }

    /// The optimiser this session runs.
    pub fn optimiser(&self) -> Optimiser {
        self.hyper.optimiser
    }

    /// Natively: waits for the readback asked for, for tests and benchmarks.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_blocking(&mut self, parts: &[Part]) -> Result<Readout, GpuError> {
        if !self.request_read(parts)? {
            return Err(GpuError::Readback("a readback is already pending".into()));
        }
        self.engine.wait()?;
        loop {
            if let Some(r) = self.poll_read()? {
                return Ok(r);
            }
            self.engine.wait()?;
        }
    }

    /// Natively: evaluates `images` and waits for the result.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn eval_blocking(
        &mut self,
        images: &[f32],
        with_acts: bool,
    ) -> Result<EvalReadout, GpuError> {
        if !self.request_eval(images, with_acts)? {
            return Err(GpuError::Readback("a readback is already pending".into()));
        }
        self.engine.wait()?;
        loop {
            if let Some(r) = self.poll_eval()? {
                return Ok(r);
            }
            self.engine.wait()?;
        }
    }
}
