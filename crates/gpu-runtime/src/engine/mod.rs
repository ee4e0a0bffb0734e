//! The training engine: a model is a list of [`Layer`]s over one arena, trained by one
//! optimiser dispatch, run as named programs on a [`ResidentPlan`].
//!
//! # Design
//! - **A model is a list of layers** ([`Model`]): linear (+ bias), GELU, LayerNorm, a residual
//!   around a branch of layers, the softmax cross-entropy head, token and position
//!   embeddings, and causal attention (the naive kernels); for the CNN (`cnn.rs`), a 2-D
//!   convolution with bias and ReLU, 2 × 2 max-pooling, a dense layer and a loss head that
//!   keeps the probabilities, on the CNN family's kernels (`conv.rs`). [`Net::compile`] places
//!   every parameter, activation, saved statistic and delta in the [`Arena`]
//!   (`arena.rs`) and records each layer's forward and backward dispatches as
//!   [`crate::plan::PlannedDispatch`]es whose uniforms are filled by the WGSL struct's member
//!   names, binding arena ranges (`layer.rs`). Each layer's CPU twin works on the same layout
//!   in the kernels' order, and carries a bound on |GPU − twin| composed from per-operation
//!   bounds (`twin.rs`).
//! - **One arena, laid out once.** Parameters, gradients and Adam's m and v share one layout
//!   (four buffers), so `optim-adam` steps the whole model in one dispatch over the flat
//!   range; activations (with what layers save) and deltas have their own. Every tensor is a
//!   256-byte-aligned range bound as a buffer range. [`Arena::fits`] says whether an adapter
//!   can hold it.
//! - **Named programs** ([`TRAIN_STEP`], [`EVAL_LOSS`], [`EVAL_FORWARD`] at another batch):
//!   op lists kept by name, not index. [`Setup`] picks the update (`optim-adam` or
//!   `optim-sgd`), edited kernels standing in for the catalogue's and their loop-budget flag.
//! - **Linear layers** reuse the MLP's register-tiled GEMMs (`mlp-forward-tiled`,
//!   `mlp-backward-input-tiled`, `mlp-grad-tiled` + `mlp-grad-reduce`) at arena offsets; the
//!   other layers reuse the GPT family's and the attention family's kernels, and the
//!   residual sum is `gpt-add` (backward, in place: `gpt-add-into`).
//!
//! # Invariants
//! - No offset is computed outside [`Net::compile`]: dispatches, readbacks, the twin and the
//!   bounds all index through its [`Range`]s.
//! - No dispatch binds a buffer read-only and writable at once (WebGPU forbids it within a
//!   dispatch): a kernel that reads one arena range and writes another of the same buffer
//!   declares both `read_write`.
//! - No optimiser kernel of its own: the update is `optim-adam` (its step counter on the GPU,
//!   double-buffered; a train step alternates the two bindings) or `optim-sgd` with momentum,
//!   over the parameter layout.
//! - No range a CNN kernel touches has its activations and its delta at different offsets
//!   (those kernels index both through one offset; `Net::compile` mirrors and checks them).
//! - No delta is read before it is complete, and none accumulates stale values: the train step
//!   clears deltas and gradients, and the gradient flow rule of `layer.rs` holds.

mod arena;
pub mod cnn;
pub mod decode;
pub mod gpt;
mod layer;
pub mod twin;

use std::rc::Rc;

pub use arena::{Arena, Layout, Range, ALIGN_BYTES, ALIGN_WORDS};
pub use layer::{Layer, Model, Net, Node, Recorded, Tensor};

use crate::catalogue::Replacements;
use crate::context::{Gpu, GpuError};
use crate::family::optim;
use crate::plan::{
    Binding, Init, LoopFlag, Op, ReadRange, ResidentBuffer, ResidentDispatch, ResidentPlan,
    Uniform, LOOP_FLAG,
};
use crate::KernelSpec;

/// The engine's buffer names.
pub mod buffer {
    pub const PARAMS: &str = "engine params";
    pub const GRADS: &str = "engine grads";
    pub const M: &str = "engine m";
    pub const V: &str = "engine v";
    pub const ACTS: &str = "engine acts";
    pub const DELTAS: &str = "engine deltas";
    pub const SCRATCH: &str = "engine scratch";
    pub const CORRECTIONS: &str = "engine corrections";
    /// Adam's step state, double-buffered: a step reads one and writes the other.
    pub const STATES: [&str; 2] = ["engine state a", "engine state b"];
    /// The activations of [`super::EVAL_FORWARD`]'s batch (its own layout).
    pub const EVAL_ACTS: &str = "engine eval acts";
    /// A training set resident on the GPU, in batch order, that a [`super::Layer::Gather`]
    /// reads (the model's own, made with [`super::Setup::extra`]): features and labels.
    pub const DATA_X: &str = "engine data x";
    pub const DATA_Y: &str = "engine data y";
}

/// The program that runs one training step: clear, forward, backward, Adam.
pub const TRAIN_STEP: &str = "train_step";
/// The program that runs the forward and the loss head only.
pub const EVAL_LOSS: &str = "eval_loss";
/// The program that runs the forward without the loss head at the evaluation batch
/// ([`Setup::eval`]), in its own activation buffer ([`buffer::EVAL_ACTS`]).
pub const EVAL_FORWARD: &str = "eval_forward";

/// How an engine is made beyond its net and parameters.
pub struct Setup<'a> {
    /// The update (`optim-adam` or `optim-sgd`) and its learning rate.
    pub optimiser: optim::Hyper,
    /// A model's own buffers beside the arena's (its training data, say, which the ops of
    /// [`Engine::run_around`] copy from).
    pub extra: Vec<ResidentBuffer<'static>>,
    /// Bytes the readback staging holds at least.
    pub readback: u64,
    /// The same layer list compiled at the evaluation batch: [`EVAL_FORWARD`] runs its forward
    /// (the parameter layouts must be equal).
    pub eval: Option<Net>,
    /// Edited kernels standing in for the catalogue's (each must be one a dispatch runs).
    pub replacements: &'a [&'a KernelSpec],
    /// A loop-budget flag the replacements bind after their uniform ([`LOOP_FLAG`]).
    pub flag: Option<LoopFlag>,
    /// A rewrite of the train step: dispatches that do the whole step's work in place of the
    /// ones the layers recorded (the MLP's whole-step kernels, `mlp::fused_step`).
    pub rewrite: Option<Rewrite>,
}

/// The train step of a model done by other dispatches than its layers' (a rewrite rule of
/// the plan, chosen by whoever makes the engine): they gather, step and update themselves,
/// so [`TRAIN_STEP`] runs just them, the step state's two copies swapped per micro-batch as
/// for the layers' own. With a rewrite the layers' own dispatches are not made.
#[derive(Clone, Debug, Default)]
pub struct Rewrite {
    pub dispatches: Vec<Recorded>,
    /// Words of [`buffer::SCRATCH`] they need (zeroed at the start).
    pub scratch_words: usize,
    /// Micro-batches per update: the dispatches run this many times a step, the last (the
    /// update) only in the last micro-batch, and one whose uniform places its losses
    /// (`loss_off`) once per micro-batch with its losses from row j·batch (0 or 1: none).
    pub accum: usize,
    /// Whether the gradients are summed into (cleared once per step).
    pub clear_grads: bool,
    /// The evaluation's forward ([`EVAL_FORWARD`]) in place of the evaluation net's layers'.
    pub eval: Option<Vec<Recorded>>,
}

impl Setup<'_> {
    /// Adam at `lr`, nothing else.
    pub fn adam(lr: f32) -> Self {
        Setup {
            optimiser: optim::Hyper {
                rule: optim::Rule::Adam,
                lr,
                l1: 0.0,
                l2: 0.0,
                advance: true,
            },
            extra: Vec::new(),
            readback: 0,
            eval: None,
            replacements: &[],
            flag: None,
            rewrite: None,
        }
    }
}

/// A program's ops for each parity of the steps done (only a train step's differ: Adam reads
/// the step state the previous step wrote).
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub name: &'static str,
    pub ops: [Vec<Op>; 2],
    /// Whether a run of it is a training step (advances the parity).
    pub steps: bool,
}

/// An engine as data ([`Engine::describe`]): what [`ResidentPlan::new`] is given, and the
/// programs over its dispatches.
pub struct Description<'s> {
    pub buffers: Vec<ResidentBuffer<'static>>,
    pub dispatches: Vec<ResidentDispatch<'s>>,
    pub programs: Vec<Program>,
    /// Index of the optimiser's dispatch.
    pub adam: usize,
    /// A rewrite's dispatches whose uniform names the learning rate (`lr`), and that uniform.
    pub lr_uniforms: Vec<(usize, Uniform)>,
    pub hyper: optim::Hyper,
    /// Bytes the readback staging holds.
    pub readback: u64,
}

/// Words of [`buffer::SCRATCH`]: a rewrite's own need, else the layers'.
fn scratch_of(net: &Net, setup: &Setup<'_>) -> usize {
    setup
        .rewrite
        .as_ref()
        .map_or(net.arena.scratch_words, |r| r.scratch_words)
}

/// A model on the GPU: its arena's buffers, its recorded dispatches and its programs.
pub struct Engine {
    plan: ResidentPlan,
    net: Net,
    programs: Vec<Program>,
    /// Index of the optimiser's dispatch (for the learning rate).
    adam: usize,
    /// A rewrite's dispatches whose uniform names the learning rate (`lr`), and that uniform.
    lr_uniforms: Vec<(usize, Uniform)>,
    hyper: optim::Hyper,
    steps: u64,
}

impl Engine {
    /// Makes the buffers (parameters from `params`, in the parameter layout; everything else
    /// zeroed), compiles and records every dispatch, and names the programs.
    pub async fn new(gpu: Rc<Gpu>, net: Net, lr: f32, params: &[f32]) -> Result<Self, GpuError> {
        Self::with_buffers(gpu, net, lr, params, Vec::new(), 0).await
    }

    /// [`Engine::new`] with a model's own buffers beside the arena's (its training data, say,
    /// which the ops of [`Engine::run_around`] copy from), and a readback staging of at
    /// least `readback` bytes.
    pub async fn with_buffers(
        gpu: Rc<Gpu>,
        net: Net,
        lr: f32,
        params: &[f32],
        extra: Vec<ResidentBuffer<'static>>,
        readback: u64,
    ) -> Result<Self, GpuError> {
        let setup = Setup {
            extra,
            readback,
            ..Setup::adam(lr)
        };
        Self::build(gpu, net, params, setup).await
    }

    /// Makes the buffers (parameters from `params`, in the parameter layout; everything else
    /// zeroed), compiles and records every dispatch, and names the programs, as `setup` says.
    pub async fn build(
        gpu: Rc<Gpu>,
        net: Net,
        params: &[f32],
        setup: Setup<'_>,
    ) -> Result<Self, GpuError> {
        // A rewrite's dispatches need its scratch, not the layers' (which it does not make).
        let scratch_words = scratch_of(&net, &setup);
        let fits = |arena: &Arena| {
            Arena {
                scratch_words,
                ..arena.clone()
            }
            .fits(&gpu.limits())
            .map_err(GpuError::Dispatch)
        };
        fits(&net.arena)?;
        if let Some(e) = &setup.eval {
            fits(&e.arena)?;
        }
        let d = Self::describe(&net, params, setup)?;
        let plan = ResidentPlan::new(gpu, d.buffers, d.dispatches, d.readback).await?;
        Ok(Self {
            plan,
            net,
            programs: d.programs,
            adam: d.adam,
            lr_uniforms: d.lr_uniforms,
            hyper: d.hyper,
            steps: 0,
        })
    }

    /// What [`Engine::build`] makes, without a device: every buffer with its initial
    /// contents, every dispatch as recorded, and the programs' ops (the Dawn runner of
    /// `crates/bench` replays exactly this; the adapter's limits are `build`'s to check).
    pub fn describe<'s>(
        net: &Net,
        params: &[f32],
        setup: Setup<'s>,
    ) -> Result<Description<'s>, GpuError> {
        use buffer::*;
        let a = &net.arena;
        let scratch_words = scratch_of(net, &setup);
        if let Some(e) = &setup.eval {
            if e.arena.params != a.params {
                return Err(GpuError::Dispatch(
                    "the evaluation's layers are not the training's".into(),
                ));
            }
        }
        if params.len() != a.params.words() {
            return Err(GpuError::Dispatch(format!(
                "{} parameters for a layout of {}",
                params.len(),
                a.params.words()
            )));
        }
        let hyper = setup.optimiser;
        let corrections: Vec<f32> = optim::correction_table().into_iter().flatten().collect();
        let pbytes = a.params.bytes();
        let mut buffers = vec![
            ResidentBuffer {
                name: PARAMS,
                init: Init::Bytes(bytemuck::cast_slice(params).to_vec().into()),
            },
            ResidentBuffer {
                name: GRADS,
                init: Init::Zeroed(pbytes),
            },
            ResidentBuffer {
                name: M,
                init: Init::Zeroed(pbytes),
            },
            ResidentBuffer {
                name: V,
                init: Init::Zeroed(pbytes),
            },
            ResidentBuffer {
                name: ACTS,
                init: Init::Zeroed(a.acts.bytes()),
            },
            ResidentBuffer {
                name: DELTAS,
                init: Init::Zeroed(a.deltas.bytes()),
            },
            ResidentBuffer {
                name: SCRATCH,
                init: Init::Zeroed((scratch_words.max(1) * 4) as u64),
            },
            ResidentBuffer {
                name: CORRECTIONS,
                init: Init::Bytes(bytemuck::cast_slice(&corrections).to_vec().into()),
            },
            ResidentBuffer {
                name: STATES[0],
                init: Init::Zeroed(16),
            },
            ResidentBuffer {
                name: STATES[1],
                init: Init::Zeroed(16),
            },
        ];
        if let Some(e) = &setup.eval {
            buffers.push(ResidentBuffer {
                name: EVAL_ACTS,
                init: Init::Zeroed(e.arena.acts.bytes()),
            });
        }
        if let Some(f) = setup.flag {
            buffers.push(ResidentBuffer {
                name: LOOP_FLAG,
                init: Init::Zeroed((f.words.max(1) * 4) as u64),
            });
        }
        buffers.extend(setup.extra);
        let rewritten = setup.rewrite.is_some();
        let (forward, backward) = if rewritten {
            (Vec::new(), Vec::new())
        } else {
            (net.forward(), net.backward())
        };
        let rewrite_eval = setup.rewrite.as_ref().and_then(|r| r.eval.clone());
        // The evaluation's forward binds its own activations where the training's bind theirs.
        let eval: Vec<Recorded> = rewrite_eval.unwrap_or_else(|| {
            setup.eval.as_ref().map_or(Vec::new(), |e| {
                e.forward_only()
                    .into_iter()
                    .map(|mut r| {
                        for b in &mut r.bindings {
                            if let Binding::Buffer { name, .. } = b {
                                if *name == ACTS {
                                    *name = EVAL_ACTS;
                                }
                            }
                        }
                        r
                    })
                    .collect()
            })
        });
        let rewrite: &[Recorded] = setup.rewrite.as_ref().map_or(&[], |r| &r.dispatches);
        let recorded: Vec<&Recorded> = forward
            .iter()
            .chain(&backward)
            .chain(&eval)
            .chain(rewrite)
            .collect();
        let optimiser_id = hyper.kernel_id();
        let chosen = Replacements::checked(setup.replacements, |id| {
            (id == optimiser_id && !rewritten) || recorded.iter().any(|r| r.planned.kernel_id == id)
        })?;
        let count = a.params.words();
        let mut dispatches = Vec::new();
        // A dispatch that binds the step state (a gathering layer's) reads one copy and writes
        // the other, as Adam does: a second variant with the two swapped, run on odd steps.
        let mut two_variants = Vec::new();
        for r in &recorded {
            let id = r.planned.kernel_id;
            let swapped: Vec<Binding> = r
                .bindings
                .iter()
                .map(|b| match b {
                    Binding::Buffer { name, offset, size } if STATES.contains(name) => {
                        Binding::Buffer {
                            name: if *name == STATES[0] {
                                STATES[1]
                            } else {
                                STATES[0]
                            },
                            offset: *offset,
                            size: *size,
                        }
                    }
                    other => other.clone(),
                })
                .collect();
            let mut variants = vec![r.bindings.clone()];
            if swapped != r.bindings {
                variants.push(swapped);
            }
            two_variants.push(variants.len() == 2);
            dispatches.push(ResidentDispatch {
                kernel: chosen.spec(id)?,
                variants,
                uniform: r.planned.uniform.to_vec(),
                workgroups: r.planned.workgroups,
                after_uniform: chosen.after_uniform(setup.flag, id, r.bindings.len())?,
            });
        }
        let adam = dispatches.len();
        let variants: Vec<Vec<Binding>> = match hyper.rule {
            optim::Rule::Adam => (0..2)
                .map(|parity| {
                    [
                        PARAMS,
                        GRADS,
                        M,
                        V,
                        CORRECTIONS,
                        STATES[parity],
                        STATES[1 - parity],
                    ]
                    .into_iter()
                    .map(Binding::whole)
                    .collect()
                })
                .collect(),
            optim::Rule::Sgd { .. } => {
                let v: Vec<Binding> = [PARAMS, GRADS, M].into_iter().map(Binding::whole).collect();
                vec![v.clone(), v]
            }
        };
        let bound = variants[0].len();
        dispatches.push(ResidentDispatch {
            kernel: chosen.spec(optimiser_id)?,
            variants,
            uniform: optim::uniform(&hyper, count, optim::MAX_GROUPS_X).to_vec(),
            workgroups: optim::grid(count, optim::MAX_GROUPS_X).0,
            after_uniform: chosen.after_uniform(setup.flag, optimiser_id, bound)?,
        });
        // Gradient accumulation: the train step runs the forward and backward once per
        // micro-batch, and the loss head's dispatch (the one whose uniform places its losses,
        // `loss_off`) once per micro-batch with its losses from row j·batch: k copies follow
        // the optimiser's dispatch (each its own uniform; the recorded one then stands unused).
        let n_forward = forward.len();
        let n_all = n_forward + backward.len();
        let n_rewrite = n_all + eval.len();
        let accum = setup
            .rewrite
            .as_ref()
            .map_or(net.accum(), |r| r.accum.max(1));
        // The dispatches a micro-batch runs (the layers' forward and backward, or the rewrite's).
        let step_range = if rewritten {
            n_rewrite..n_rewrite + rewrite.len()
        } else {
            0..n_all
        };
        let mut micro: Vec<(usize, Vec<usize>)> = Vec::new();
        if accum > 1 {
            for index in step_range.clone() {
                let r = recorded[index];
                if !r.planned.uniform.has("loss_off") {
                    continue;
                }
                let mut copies = Vec::new();
                for j in 0..accum {
                    let mut u = r.planned.uniform.clone();
                    u.set("loss_off", (j * net.batch) as u32);
                    let id = r.planned.kernel_id;
                    copies.push(dispatches.len());
                    dispatches.push(ResidentDispatch {
                        kernel: chosen.spec(id)?,
                        variants: vec![r.bindings.clone()],
                        uniform: u.to_vec(),
                        workgroups: r.planned.workgroups,
                        after_uniform: chosen.after_uniform(setup.flag, id, r.bindings.len())?,
                    });
                }
                micro.push((index, copies));
            }
        }
        let eval_bytes = setup.eval.as_ref().map_or(0, |e| e.arena.acts.bytes());
        let flag_bytes = setup.flag.map_or(0, |f| (f.words.max(1) * 4) as u64);
        let readback = setup
            .readback
            .max(4 * (4 * count + 2 * (a.acts.words() + a.deltas.words())) as u64 + flag_bytes)
            .max(eval_bytes);

        let run = |range: std::ops::Range<usize>| -> Vec<Op> {
            range
                .map(|index| Op::Dispatch { index, variant: 0 })
                .collect()
        };
        let by_parity = |parity: usize, range: std::ops::Range<usize>| -> Vec<Op> {
            range
                .map(|index| Op::Dispatch {
                    index,
                    variant: if two_variants[index] { parity } else { 0 },
                })
                .collect()
        };
        let copy = |index: usize, j: usize| {
            micro
                .iter()
                .find(|(i, _)| *i == index)
                .map_or(index, |(_, copies)| copies[j])
        };
        let clear_grads = setup.rewrite.as_ref().is_some_and(|r| r.clear_grads);
        let train = |parity: usize| {
            if rewritten {
                // As the layers' own below, the last dispatch (the update) in the last
                // micro-batch only.
                let mut ops = Vec::new();
                if clear_grads {
                    ops.push(Op::Clear(GRADS));
                }
                let last = step_range.end.saturating_sub(1);
                for j in 0..accum {
                    let micro_parity = (parity * accum + j) % 2;
                    for op in by_parity(micro_parity, step_range.clone()) {
                        if let Op::Dispatch { index, variant } = op {
                            if index == last && j + 1 < accum {
                                continue;
                            }
                            ops.push(Op::Dispatch {
                                index: copy(index, j),
                                variant,
                            });
                        }
                    }
                }
                ops.push(Op::Pass);
                return ops;
            }
            // The gradients are summed over the micro-batches: cleared once per update. Each
            // micro-batch's gathering advances the step state, so micro-batch j of a step of
            // this parity reads copy (parity·k + j) mod 2, and the optimiser reads the copy the
            // last one read (its t: updates done before this one).
            let mut ops = vec![Op::Clear(GRADS), Op::Clear(DELTAS)];
            let mut micro_parity = parity;
            for j in 0..accum {
                micro_parity = (parity * accum + j) % 2;
                ops.extend(
                    by_parity(micro_parity, 0..n_all)
                        .into_iter()
                        .map(|op| match op {
                            Op::Dispatch { index, variant } => Op::Dispatch {
                                index: copy(index, j),
                                variant,
                            },
                            other => other,
                        }),
                );
            }
            ops.push(Op::Dispatch {
                index: adam,
                variant: micro_parity,
            });
            ops.push(Op::Pass);
            ops
        };
        let lr_uniforms: Vec<(usize, Uniform)> = rewrite
            .iter()
            .enumerate()
            .filter(|(_, r)| r.planned.uniform.has("lr"))
            .map(|(i, r)| (n_rewrite + i, r.planned.uniform.clone()))
            .collect();
        let eval_loss = run(0..n_forward);
        let mut programs = vec![
            Program {
                name: TRAIN_STEP,
                ops: [train(0), train(1)],
                steps: true,
            },
            Program {
                name: EVAL_LOSS,
                ops: [eval_loss.clone(), eval_loss],
                steps: false,
            },
        ];
        if !eval.is_empty() {
            let ops = run(n_all..n_all + eval.len());
            programs.push(Program {
                name: EVAL_FORWARD,
                ops: [ops.clone(), ops],
                steps: false,
            });
        }
        Ok(Description {
            buffers,
            dispatches,
            programs,
            adam,
            lr_uniforms,
            hyper,
            readback,
        })
    }

    pub fn net(&self) -> &Net {
        &self.net
    }

    /// The plan beneath (another plan on the device copies from its buffers).
    pub(crate) fn plan(&self) -> &ResidentPlan {
        &self.plan
    }

    /// Training steps submitted.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The names of the programs.
    pub fn programs(&self) -> Vec<&'static str> {
        self.programs.iter().map(|p| p.name).collect()
    }

    /// The kernel id of each of the plan's dispatches, by index (the optimiser's last).
    pub fn kernel_ids(&self) -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = self
            .net
            .forward()
            .iter()
            .chain(&self.net.backward())
            .map(|r| r.planned.kernel_id)
            .collect();
        // An evaluation net's dispatches sit between the backward and the optimiser.
        ids.resize(self.adam, "eval");
        ids.push(self.hyper.kernel_id());
        ids
    }

    /// Names a program `name` made of the program `from`'s ops whose kernel `keep` accepts
    /// (a clear is `"clear"`; pass boundaries and copies always stay); it never counts as a
    /// training step. What a class of a step's kernels costs is timed with one of these, and
    /// the GPT's attention maps come from its forward without the loss head.
    pub fn derive_program(
        &mut self,
        name: &'static str,
        from: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Result<(), GpuError> {
        let ids = self.kernel_ids();
        let p = self
            .programs
            .iter()
            .find(|p| p.name == from)
            .ok_or_else(|| GpuError::Dispatch(format!("no program `{from}`")))?;
        let kept = |ops: &[Op]| -> Vec<Op> {
            ops.iter()
                .filter(|op| match op {
                    Op::Dispatch { index, .. } => keep(ids.get(*index).copied().unwrap_or("")),
                    Op::Clear(_) => keep("clear"),
                    Op::Pass | Op::Copy { .. } => true,
                })
                .cloned()
                .collect()
        };
        let ops = [kept(&p.ops[0]), kept(&p.ops[1])];
        self.programs.retain(|p| p.name != name);
        self.programs.push(Program {
            name,
            ops,
            steps: false,
        });
        Ok(())
    }

    /// Submits `times` runs of the program called `name` in one submission, without waiting.
    pub fn run(&mut self, name: &str, times: u64) -> Result<(), GpuError> {
        let none = (Vec::new(), Vec::new());
        self.run_around(name, &vec![none; times as usize])
    }

    /// Submits one run of the program called `name` per entry of `around`, each between its
    /// (before, after) ops — a step's batch copied in, an evaluation's losses copied out —
    /// all in one submission, without waiting.
    pub fn run_around(
        &mut self,
        name: &str,
        around: &[(Vec<Op>, Vec<Op>)],
    ) -> Result<(), GpuError> {
        let p = self
            .programs
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| GpuError::Dispatch(format!("no program `{name}`")))?;
        let mut ops = Vec::new();
        let mut steps = self.steps;
        for (before, after) in around {
            ops.extend_from_slice(before);
            ops.extend_from_slice(&p.ops[(steps % 2) as usize]);
            ops.extend_from_slice(after);
            if p.steps {
                steps += 1;
            }
        }
        let units = if p.steps {
            steps - self.steps
        } else {
            around.len() as u64
        };
        self.plan.submit(&ops, units)?;
        self.steps = steps;
        Ok(())
    }

    /// Writes the batch's input rows (batch × input features).
    pub fn write_input(&self, x: &[f32]) -> Result<(), GpuError> {
        self.write_words(buffer::ACTS, self.net.input.act, bytemuck::cast_slice(x))
    }

    /// Writes the batch's tokens (one per row) for a model that starts with embeddings.
    pub fn write_tokens(&self, tokens: &[u32]) -> Result<(), GpuError> {
        self.write_words(
            buffer::ACTS,
            self.net.input.act,
            bytemuck::cast_slice(tokens),
        )
    }

    /// Writes the batch's targets (one class per row, or `gpt::ops::IGNORE`).
    pub fn write_targets(&self, targets: &[u32]) -> Result<(), GpuError> {
        self.write_words(
            buffer::ACTS,
            self.net.targets,
            bytemuck::cast_slice(targets),
        )
    }

    fn write_words(&self, buffer: &str, r: Range, bytes: &[u8]) -> Result<(), GpuError> {
        if bytes.len() != r.len * 4 {
            return Err(GpuError::Dispatch(format!(
                "{} bytes for a tensor of {} words",
                bytes.len(),
                r.len
            )));
        }
        self.plan.write(buffer, (r.at * 4) as u64, bytes)
    }

    /// Sets the learning rate of the steps submitted from now on.
    pub fn set_lr(&mut self, lr: f32) -> Result<(), GpuError> {
        self.hyper.lr = lr;
        let count = self.net.arena.params.words();
        let u = optim::uniform(&self.hyper, count, optim::MAX_GROUPS_X);
        self.plan.write_uniform(self.adam, &u)?;
        for (index, u) in &mut self.lr_uniforms {
            u.set_f32("lr", lr);
            self.plan.write_uniform(*index, u)?;
        }
        Ok(())
    }

    /// Writes `bytes` at byte `offset` of the buffer called `name` (an arena buffer or one of
    /// [`Setup::extra`]), queued before the next submission.
    pub fn write(&self, name: &str, offset: u64, bytes: &[u8]) -> Result<(), GpuError> {
        self.plan.write(name, offset, bytes)
    }

    /// Runs of training programs the GPU has finished.
    pub fn units_completed(&self) -> u64 {
        self.plan.units_completed()
    }

    /// The device the engine runs on.
    pub fn gpu(&self) -> &Rc<Gpu> {
        self.plan.gpu()
    }

    /// Resolves when everything submitted so far has finished.
    pub fn finished(&self) -> impl std::future::Future<Output = Result<(), GpuError>> {
        self.plan.finished()
    }

    /// The update the optimiser dispatch applies.
    pub fn optimiser(&self) -> optim::Hyper {
        self.hyper
    }

    /// Runs the program called `name` once, then asks for `ranges` (an evaluation and its
    /// result in one go; not counted as a step); false, doing nothing, while an earlier
    /// readback is uncollected.
    pub fn request_read_after(
        &mut self,
        name: &str,
        ranges: &[ReadRange],
    ) -> Result<bool, GpuError> {
        let p = self
            .programs
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| GpuError::Dispatch(format!("no program `{name}`")))?;
        let ops = p.ops[(self.steps % 2) as usize].clone();
        self.plan.request_read(&ops, ranges)
    }

    /// Whether a readback is requested and not yet collected.
    pub fn read_pending(&self) -> bool {
        self.plan.read_pending()
    }

    /// Asks for `ranges` (e.g. [`Range::read`] of a layout's range) after everything
    /// submitted; false while an earlier readback is uncollected.
    pub fn request_read(&mut self, ranges: &[ReadRange]) -> Result<bool, GpuError> {
        self.plan.request_read(&[], ranges)
    }

    /// The requested ranges back to back, as f32, once they have arrived.
    pub fn poll_read(&mut self) -> Result<Option<Vec<f32>>, GpuError> {
        Ok(self
            .plan
            .poll_read()?
            .map(|b| bytemuck::pod_collect_to_vec(&b)))
    }

    /// Natively, lets wgpu run finished callbacks without waiting (in the browser they run
    /// on their own).
    pub fn poll(&self) {
        self.plan.poll();
    }

    /// Natively: waits until everything submitted has finished.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<(), GpuError> {
        self.plan.wait()
    }

    /// Natively: reads `ranges` now, each as its own vector (tests and benchmarks).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_blocking(&mut self, ranges: &[ReadRange]) -> Result<Vec<Vec<f32>>, GpuError> {
        if !self.request_read(ranges)? {
            return Err(GpuError::Readback("a readback is already pending".into()));
        }
        loop {
            self.plan.wait()?;
            if let Some(all) = self.poll_read()? {
                let mut at = 0;
                return Ok(ranges
                    .iter()
                    .map(|r| {
                        let n = (r.bytes / 4) as usize;
                        at += n;
                        all[at - n..at].to_vec()
                    })
                    .collect());
            }
        }
    }
}
