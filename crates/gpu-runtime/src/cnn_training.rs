//! Training the CNN page's network (issue 24) on the GPU: a session on a [`ResidentPlan`]
//! whose pipelines, buffers and bind groups are made once, whose step is recorded once as a
//! list of dispatches ([`crate::family::cnn::step_plan`]) and submitted as often as asked, and
//! whose readbacks are requested and polled, never waited for (natively, tests may block).
//!
//! Steps, up to [`CnnSession::steps_per_submit`] in one submission: the CPU gathers each step's
//! batch in the CPU twin's seeded order (`cnn::data::BatchOrder`, the twin's `gather`) and
//! writes all of them at once into a staging buffer; per step the submission copies its images
//! into the start of the activations and its labels, then one compute pass runs, per block,
//! `cnn-conv-forward` (bias and ReLU in its epilogue) and `cnn-pool-forward`, then
//! `cnn-dense-forward`, `cnn-softmax-xent`, `cnn-dense-grad`, `cnn-dense-backward-input`, per
//! block last first `cnn-pool-backward`, `cnn-relu-backward`, `cnn-conv-filter-partials`,
//! `cnn-conv-filter-reduce`, `cnn-conv-bias-grad` and `cnn-conv-input-grad`, and `optim-sgd` or
//! `optim-adam` (the optimiser family every model shares) over every parameter. Adam's bias
//! corrections come from a table indexed by a step counter on the GPU, which Adam's dispatch
//! advances (double-buffered: even steps read the first state buffer), so nothing is written
//! per step but the batch. Uploading each batch (B·side² floats, 200 KB at batch 64) keeps the
//! session simple; a resident training set gathered on the GPU can replace it.
//!
//! An evaluation runs the forward pass on up to `eval_batch` images in its own activation
//! buffer (its own layout) and reads back the logits (and, for the page's "look inside",
//! optionally every activation). Every buffer has `cnn::net`'s layout, so what is read back
//! compares with the twin's `Workspace` element for element.

use std::rc::Rc;

use cnn::data::{BatchOrder, Samples};
use cnn::net::{Hyper, Net, Optimiser};

use crate::catalogue::{KernelSpec, Replacements};
use crate::context::{Gpu, GpuError};
use crate::family::cnn::{
    bound_buffers_at, buffer, forward_plan, optim_hyper, partials_len, step_plan, PlannedDispatch,
};
use crate::family::optim;
use crate::plan::{
    Init, LoopFlag, Op, ReadRange, ResidentBuffer, ResidentDispatch, ResidentPlan, LOOP_FLAG,
};

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
    plan: Vec<PlannedDispatch>,
    resident: ResidentPlan,
    /// The optimiser's dispatch number (its uniform holds the learning rate).
    opt_index: usize,
    /// Steps whose batches fit the staging buffer: the most one submission carries.
    per_submit: u32,
    /// Dispatch numbers of the evaluation's forward pass.
    eval_first: usize,
    eval_count: usize,
    eval_batch: usize,
    train: Samples,
    order: BatchOrder,
    indices: Vec<u32>,
    x: Vec<f32>,
    y: Vec<u32>,
    steps: u64,
    pending: Pending,
    /// Words of the loop-budget flag buffer, 0 without one.
    flag_words: usize,
}

/// Little-endian words of a readback (a byte vector need not be aligned for a cast).
fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    u32s(bytes).into_iter().map(f32::from_bits).collect()
}

fn bytes_of(v: &[f32]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
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
        let pl = net.param_layout();
        let px = net.side * net.side;
        if cfg.params.len() != pl.len
            || cfg.train.is_empty()
            || cfg.train.side != net.side
            || cfg.train.x.len() != cfg.train.len() * px
        {
            return Err(GpuError::WrongJob);
        }
        let layout = net.act_layout(batch);
        let eval_batch = cfg.eval_batch;
        let eval_layout = net.act_layout(eval_batch.max(1));
        let limits = gpu.buffer_limits();
        let ceiling = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let largest = [layout.len, eval_layout.len, partials_len(&net, batch)]
            .into_iter()
            .max()
            .unwrap_or(0) as u64
            * 4;
        if largest > ceiling {
            return Err(GpuError::Dispatch(format!(
                "the batch needs a {largest}-byte buffer, more than this device's \
                 {ceiling}-byte storage buffer limit"
            )));
        }
        let plan = step_plan(&net, &cfg.hyper, batch);
        let eval_plan = if eval_batch > 0 {
            forward_plan(&net, eval_batch)
        } else {
            Vec::new()
        };
        let chosen = Replacements::checked(replacements, |id| {
            plan.iter().chain(&eval_plan).any(|p| p.kernel_id == id)
        })?;
        let spec_of = |id: &'static str| chosen.spec(id);
        let p_bytes = pl.len as u64 * 4;
        // Storage buffers may not be empty: at least one word each.
        let words = |n: usize| n.max(1) as u64 * 4;
        // Each step's batch (images, then labels) waits in the staging buffer; as many steps
        // as fit STAGING_BYTES, at most MAX_STEPS_PER_SUBMIT, at least one.
        let step_words = batch * (px + 1);
        let per_submit =
            (STAGING_BYTES / (step_words as u64 * 4)).clamp(1, MAX_STEPS_PER_SUBMIT as u64) as u32;
        if step_words as u64 * 4 > ceiling {
            return Err(GpuError::Dispatch(format!(
                "a batch of {batch} images needs more than this device's {ceiling}-byte buffers"
            )));
        }
        let buffers = vec![
            (buffer::PARAMS, Init::Bytes(bytes_of(cfg.params).into())),
            (buffer::GRADS, Init::Zeroed(p_bytes)),
            (buffer::M, Init::Zeroed(p_bytes)),
            (buffer::V, Init::Zeroed(p_bytes)),
            (buffer::ACTS, Init::Zeroed(words(layout.len))),
            (buffer::DELTAS, Init::Zeroed(words(layout.len))),
            (buffer::ARGMAX, Init::Zeroed(words(layout.argmax_len))),
            (buffer::LABELS, Init::Zeroed(words(batch))),
            (buffer::LOSSES, Init::Zeroed(words(batch))),
            (
                buffer::PARTIALS,
                Init::Zeroed(words(partials_len(&net, batch))),
            ),
            (buffer::EVAL_ACTS, Init::Zeroed(words(eval_layout.len))),
            (
                buffer::EVAL_ARGMAX,
                Init::Zeroed(words(eval_layout.argmax_len)),
            ),
            (
                buffer::CORRECTIONS,
                Init::Bytes(
                    bytemuck::cast_slice(&optim::correction_table())
                        .to_vec()
                        .into(),
                ),
            ),
            // The step state {0, t, 0, 0}: step 1 reads the first (t = 0), writes the second.
            (buffer::STATES[0], Init::Zeroed(16)),
            (buffer::STATES[1], Init::Zeroed(16)),
            (
                buffer::BATCHES,
                Init::Zeroed(words(per_submit as usize * step_words)),
            ),
        ]
        .into_iter()
        .chain(flag.map(|f| (LOOP_FLAG, Init::Zeroed(words(f.words)))))
        .map(|(name, init)| ResidentBuffer { name, init })
        .collect();
        let mut dispatches = Vec::with_capacity(plan.len() + eval_plan.len());
        for (p, eval) in plan
            .iter()
            .map(|p| (p, false))
            .chain(eval_plan.iter().map(|p| (p, true)))
        {
            // Both parities' bindings (the same but for Adam's step state).
            let variants: Vec<Vec<&'static str>> = (0..2)
                .map(|parity| bound_buffers_at(p.kernel_id, eval, parity))
                .collect();
            let after_uniform = chosen.after_uniform(flag, p.kernel_id, variants[0].len())?;
            dispatches.push(ResidentDispatch {
                kernel: spec_of(p.kernel_id)?,
                variants: ResidentDispatch::whole(variants),
                uniform: p.uniform.to_vec(),
                workgroups: p.workgroups,
                after_uniform,
            });
        }
        let opt_index = plan
            .iter()
            .position(|p| matches!(p.kernel_id, optim::SGD_ID | optim::ADAM_ID))
            .ok_or_else(|| GpuError::Dispatch("no optimiser dispatch".into()))?;
        // The largest readback: every part of a step, or an evaluation's activations.
        let flag_words = flag.map_or(0, |f| f.words.max(1));
        let step_bytes =
            4 * (4 * pl.len + batch + 2 * layout.len + layout.argmax_len + flag_words) as u64;
        let readback = step_bytes.max(eval_layout.len as u64 * 4);
        let resident = ResidentPlan::new(gpu, buffers, dispatches, readback).await?;
        Ok(Self {
            order: BatchOrder::new(cfg.train.len(), cfg.order_seed),
            train: cfg.train,
            net,
            hyper: cfg.hyper,
            batch,
            eval_first: plan.len(),
            eval_count: eval_plan.len(),
            plan,
            resident,
            opt_index,
            per_submit,
            eval_batch,
            indices: Vec::new(),
            x: Vec::new(),
            y: Vec::new(),
            steps: 0,
            pending: Pending::None,
            flag_words,
        })
    }

    /// The dispatches of one step, for showing (kernel id, block, workgroups).
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
        self.resident.gpu()
    }

    /// Whether the session's device has been lost: a lost device may never report the steps
    /// in flight as done, so the page asks this as well as counting them.
    pub fn device_lost(&self) -> bool {
        self.resident.gpu().is_lost()
    }

    /// Changes the learning rate from the next step on (the only uniform word a step's
    /// kernels get from the CPU after the session is made).
    pub fn set_lr(&mut self, lr: f32) {
        self.hyper.lr = lr;
        let params = self.net.param_layout().len;
        let uniform = optim::uniform(&optim_hyper(&self.hyper), params, optim::MAX_GROUPS_X);
        // The index is the plan's own optimiser dispatch, so it is always in range.
        let _ = self.resident.write_uniform(self.opt_index, uniform.words());
    }

    /// The most steps one submission carries ([`CnnSession::steps`] cuts longer runs).
    pub fn steps_per_submit(&self) -> u32 {
        self.per_submit
    }

    /// Steps submitted so far.
    pub fn steps_submitted(&self) -> u64 {
        self.steps
    }

    /// Steps the GPU has finished.
    pub fn steps_completed(&self) -> u64 {
        self.resident.units_completed()
    }

    /// Overwrites the parameters and the optimiser's two states (queued before the next
    /// submission): a restart from saved values, or a test putting the GPU where the twin
    /// is. Each slice has the parameter layout's length.
    pub fn write_state(&self, params: &[f32], m: &[f32], v: &[f32]) -> Result<(), GpuError> {
        let n = self.net.param_layout().len;
        if params.len() != n || m.len() != n || v.len() != n {
            return Err(GpuError::WrongJob);
        }
        self.resident
            .write(buffer::PARAMS, 0, bytemuck::cast_slice(params))?;
        self.resident.write(buffer::M, 0, bytemuck::cast_slice(m))?;
        self.resident.write(buffer::V, 0, bytemuck::cast_slice(v))
    }

    /// Submits one training step (see the module documentation); never waits.
    pub fn step(&mut self) -> Result<(), GpuError> {
        self.steps(1)
    }

    /// Submits `count` steps, [`CnnSession::steps_per_submit`] to a submission: their batches
    /// are written to the staging buffer at once, and each step copies its own before its
    /// pass. Never waits.
    pub fn steps(&mut self, count: u32) -> Result<(), GpuError> {
        if self.resident.gpu().is_lost() {
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
        self.x.clear();
        for s in 0..n as u64 {
            self.order.batch(self.steps + s, b, &mut self.indices);
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
        self.resident
            .write(buffer::BATCHES, 0, bytemuck::cast_slice(&self.x))?;
        let input = self.net.act_layout(b).input as u64 * 4;
        let mut ops = Vec::with_capacity(n as usize * (self.plan.len() + 2));
        for s in 0..n as u64 {
            let at = s * step_bytes;
            ops.push(Op::Copy {
                from: buffer::BATCHES,
                from_offset: at,
                to: buffer::ACTS,
                to_offset: input,
                bytes: image_bytes,
            });
            ops.push(Op::Copy {
                from: buffer::BATCHES,
                from_offset: at + image_bytes,
                to: buffer::LABELS,
                to_offset: 0,
                bytes: b as u64 * 4,
            });
            // Adam's step state: even steps read the first buffer and write the second.
            let variant = ((self.steps + s) % 2) as usize;
            ops.extend((0..self.plan.len()).map(|index| Op::Dispatch { index, variant }));
        }
        self.resident.submit(&ops, n as u64)?;
        self.steps += n as u64;
        Ok(())
    }

    /// Whether a readback or an evaluation is on its way.
    pub fn read_pending(&self) -> bool {
        !matches!(self.pending, Pending::None)
    }

    fn range(&self, part: Part) -> ReadRange {
        let pl = self.net.param_layout().len as u64 * 4;
        let l = self.net.act_layout(self.batch);
        let (buffer, bytes) = match part {
            Part::Params => (buffer::PARAMS, pl),
            Part::Grads => (buffer::GRADS, pl),
            Part::M => (buffer::M, pl),
            Part::V => (buffer::V, pl),
            Part::Losses => (buffer::LOSSES, self.batch as u64 * 4),
            Part::Acts => (buffer::ACTS, l.len as u64 * 4),
            Part::Deltas => (buffer::DELTAS, l.len as u64 * 4),
            Part::Argmax => (buffer::ARGMAX, l.argmax_len as u64 * 4),
            Part::LoopFlag => (LOOP_FLAG, self.flag_words as u64 * 4),
        };
        ReadRange {
            buffer,
            offset: 0,
            bytes,
        }
    }

    /// Asks for `parts` after everything submitted so far; false, doing nothing, while an
    /// earlier readback or evaluation has not been collected.
    pub fn request_read(&mut self, parts: &[Part]) -> Result<bool, GpuError> {
        if self.read_pending() {
            return Ok(false);
        }
        let ranges: Vec<ReadRange> = parts.iter().map(|&p| self.range(p)).collect();
        let started = self.resident.request_read(&[], &ranges)?;
        if started {
            self.pending = Pending::Read(parts.to_vec(), self.steps);
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
        if self.eval_count == 0 || rows == 0 || rows > self.eval_batch || images.len() != rows * px
        {
            return Err(GpuError::WrongJob);
        }
        if self.read_pending() {
            return Ok(false);
        }
        self.resident
            .write(buffer::EVAL_ACTS, 0, bytemuck::cast_slice(images))?;
        let l = self.net.act_layout(self.eval_batch);
        let ops: Vec<Op> = (self.eval_first..self.eval_first + self.eval_count)
            .map(|index| Op::Dispatch { index, variant: 0 })
            .collect();
        let range = if with_acts {
            ReadRange {
                buffer: buffer::EVAL_ACTS,
                offset: 0,
                bytes: l.len as u64 * 4,
            }
        } else {
            ReadRange {
                buffer: buffer::EVAL_ACTS,
                offset: l.logits as u64 * 4,
                bytes: (rows * self.net.classes) as u64 * 4,
            }
        };
        let started = self.resident.request_read(&ops, &[range])?;
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
        let Some(bytes) = self.resident.poll_read()? else {
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
            let len = self.range(part).bytes as usize;
            let chunk = bytes
                .get(at..at + len)
                .ok_or_else(|| GpuError::Readback("short readback".into()))?;
            at += len;
            let floats = f32s(chunk);
            match part {
                Part::Params => out.params = floats,
                Part::Grads => out.grads = floats,
                Part::M => out.m = floats,
                Part::V => out.v = floats,
                Part::Losses => {
                    // The twin's order: n ascending from 0, then one division.
                    let mut sum = 0.0f32;
                    for &l in &floats {
                        sum += l;
                    }
                    out.loss = sum / self.batch as f32;
                    out.losses = floats;
                }
                Part::Acts => out.acts = floats,
                Part::Deltas => out.deltas = floats,
                Part::Argmax => out.argmax = u32s(chunk),
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
        let Some(bytes) = self.resident.poll_read()? else {
            return Ok(None);
        };
        self.pending = Pending::None;
        let floats = f32s(&bytes);
        let k = self.net.classes;
        let logits = if acts {
            let at = self.net.act_layout(self.eval_batch).logits;
            floats
                .get(at..at + rows * k)
                .ok_or_else(|| GpuError::Readback("short readback".into()))?
                .to_vec()
        } else {
            floats.clone()
        };
        Ok(Some(EvalReadout {
            rows,
            logits,
            acts: if acts { floats } else { Vec::new() },
        }))
    }

    /// Resolves when everything submitted so far has finished (Cancel awaits this).
    pub fn finished(&self) -> impl std::future::Future<Output = Result<(), GpuError>> {
        self.resident.finished()
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
        self.resident.wait()?;
        loop {
            if let Some(r) = self.poll_read()? {
                return Ok(r);
            }
            self.resident.wait()?;
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
        self.resident.wait()?;
        loop {
            if let Some(r) = self.poll_eval()? {
                return Ok(r);
            }
            self.resident.wait()?;
        }
    }
}
