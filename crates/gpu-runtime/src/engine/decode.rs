//! Decoding with a KV cache: the GPT of `engine::gpt` run as two named programs over one
//! arena, [`PREFILL`] (the prompt once, every position, writing each layer's keys and values
//! into the cache) and [`DECODE`] (one new token for each of `seqs` sequences at once,
//! attention over the cache only).
//!
//! # Layout
//! The prompt's forward is the training model's own ([`super::gpt::model`] compiled for
//! `seqs` windows, so its parameter layout is the training one and a session's parameters
//! load unchanged), its loss head left out. A decode step's tensors (one row per sequence)
//! are appended to the same activation layout. The cache is its own buffer ([`CACHE`]), one
//! range per layer of `seqs` × context rows [k | v]; the decode position lives on the GPU
//! ([`STATE`]), so steps chain in one submission and the host writes nothing between them.
//!
//! # A decode step
//! `gpt-embed-at` (the token's row plus the position's) → per block: LayerNorm, the qkv
//! projection, `gpt-kv-store` (this position's k and v into the cache), `attention-decode`
//! (the query against cache positions 0…p), the output projection, the residual add;
//! LayerNorm, the MLP, the add → the final LayerNorm and the head → logits, one row per
//! sequence; `gpt-decode-advance` moves p on. The LayerNorm, linear, GELU and add dispatches
//! are the full forward's kernels ([`super::layer`]'s recording) over the step's rows, so a
//! decoded row is computed by the same arithmetic as the full forward's row at p, and the CPU
//! twin's bound for the full forward covers it (`tests/gpt_decode.rs`).

use std::rc::Rc;

use cpu_kernels::data::SplitMix64;
use gpt::ops::IGNORE;
use gpt::Config;

use super::{buffer, layer, Layout, Net, Node, Range, Recorded, Tensor};
use crate::context::{Gpu, GpuError};
use crate::family::decode as kernels;
use crate::plan::{Binding, Op, ResidentBuffer, ResidentDispatch, ResidentPlan, Uniform};

/// The program that runs the prompt and fills the cache.
pub const PREFILL: &str = "prefill";
/// The program that decodes one token for every sequence.
pub const DECODE: &str = "decode";
/// The KV cache's buffer.
pub const CACHE: &str = "engine kv cache";
/// The decode position's buffer (one u32).
pub const STATE: &str = "engine decode state";
/// The longest context `attention-decode` keeps scores for (its workgroup array).
pub const MAX_CONTEXT: usize = 1024;

/// The GPT decoding on the GPU (see the module documentation).
pub struct Decoder {
    plan: ResidentPlan,
    net: Net,
    cfg: Config,
    seqs: usize,
    /// A step's tokens (u32, one per sequence) and logits (seqs × vocab), in the activations.
    tokens: Range,
    logits: Range,
    /// The prompt's logits (seqs × context rows × vocab), in the activations.
    prompt_logits: Range,
    cache: Layout,
    programs: Vec<(&'static str, Vec<Op>)>,
    /// The position the next decode step writes (the GPU's counter, mirrored).
    pos: usize,
    /// The length of the prompt just prefilled, until a decode step follows (where the next
    /// token's logits are).
    prefilled: Option<usize>,
}

struct Builder<'a> {
    acts: &'a mut Layout,
    cache: &'a mut Layout,
    seqs: usize,
    context: usize,
    decode: Vec<Recorded>,
    /// The prompt's cache stores (after its forward).
    stores: Vec<Recorded>,
}

fn decode_uniform(rows: usize, per_seq: usize, c: usize, cap: usize) -> Uniform {
    Uniform::new(&kernels::UNIFORM)
        .with("rows", rows as u32)
        .with("per_seq", per_seq as u32)
        .with("c", c as u32)
        .with("cap", cap as u32)
}

fn line_groups(n: usize) -> u32 {
    n.div_ceil(64).max(1) as u32
}

impl Builder<'_> {
    /// A decode-step tensor: `seqs` rows (its delta unused: nothing runs backward here).
    fn tensor(&mut self, name: &str, width: usize) -> Tensor {
        Tensor {
            act: self.acts.push(format!("decode {name}"), self.seqs * width),
            delta: Range { at: 0, len: 0 },
            width,
        }
    }

    /// One layer of the prompt's model, recorded for a decode step from `h`.
    fn node(&mut self, node: &Node, h: Tensor) -> Result<Tensor, String> {
        let seqs = self.seqs;
        match node {
            Node::LayerNorm { y, gamma, beta, .. } => {
                let stats = self.acts.push("decode ln stats", 2 * seqs);
                let out = self.tensor("ln", y.width);
                let n = Node::LayerNorm {
                    x: h,
                    y: out,
                    stats,
                    gamma: *gamma,
                    beta: *beta,
                };
                layer::forward(&[n], seqs, &mut self.decode);
                Ok(out)
            }
            Node::Linear { y, w, b, .. } => {
                let out = self.tensor("linear", y.width);
                let n = Node::Linear {
                    x: h,
                    y: out,
                    w: *w,
                    b: *b,
                };
                layer::forward(&[n], seqs, &mut self.decode);
                Ok(out)
            }
            Node::Gelu { y, .. } => {
                let out = self.tensor("gelu", y.width);
                layer::forward(&[Node::Gelu { x: h, y: out }], seqs, &mut self.decode);
                Ok(out)
            }
            Node::Attention { qkv, y, heads, .. } => {
                let (c, t) = (y.width, self.context);
                let layer = self.cache.entries().len();
                let cache = self.cache.push(format!("layer {layer}"), seqs * t * 2 * c);
                let state = Binding::whole(STATE);
                let scale = 1.0 / ((c / heads) as f32).sqrt();
                // The prompt's keys and values: every row of its qkv, position row % t.
                let rows = seqs * t;
                self.stores.push(layer::grid3(
                    kernels::KV_STORE_ID,
                    [line_groups(rows * 2 * c), 1, 1],
                    64,
                    decode_uniform(rows, t, c, t).with("from_state", 0),
                    vec![qkv.act.bind(buffer::ACTS), cache.bind(CACHE), state.clone()],
                ));
                // This step's: one row per sequence, at the GPU's position.
                self.decode.push(layer::grid3(
                    kernels::KV_STORE_ID,
                    [line_groups(seqs * 2 * c), 1, 1],
                    64,
                    decode_uniform(seqs, 1, c, t).with("from_state", 1),
                    vec![h.act.bind(buffer::ACTS), cache.bind(CACHE), state.clone()],
                ));
                let out = self.tensor("attention", c);
                self.decode.push(layer::grid3(
                    kernels::ATTENTION_ID,
                    [*heads as u32, seqs as u32, 1],
                    64,
                    decode_uniform(seqs, 1, c, t)
                        .with("heads", *heads as u32)
                        .with_f32("scale", scale),
                    vec![
                        h.act.bind(buffer::ACTS),
                        cache.bind(CACHE),
                        state,
                        out.act.bind(buffer::ACTS),
                    ],
                ));
                Ok(out)
            }
            other => Err(format!("a decode step has no place for {other:?}")),
        }
    }
}

/// A decoder's dispatches, recorded without a GPU (what `tests/dispatch_interfaces.rs` checks
/// against the kernels' WGSL).
pub struct Recording {
    /// The prompt's model, a decode step's tensors appended to its activations.
    pub net: Net,
    /// The prompt's forward (no loss head), then its cache stores.
    pub prompt: Vec<Recorded>,
    pub stores: Vec<Recorded>,
    /// One decode step, the position's advance last.
    pub decode: Vec<Recorded>,
    pub tokens: Range,
    pub logits: Range,
    pub prompt_logits: Range,
    pub cache: Layout,
}

impl Recording {
    /// Every dispatch, in the plan's order.
    pub fn all(&self) -> impl Iterator<Item = &Recorded> {
        self.prompt.iter().chain(&self.stores).chain(&self.decode)
    }
}

/// Lays out and records a decoder of `cfg` for `seqs` sequences (see the module
/// documentation).
pub fn record(cfg: &Config, seqs: usize) -> Result<Recording, String> {
    let mut net = Net::compile(&super::gpt::model(cfg, seqs))?;
    let prompt: Vec<Recorded> = net
        .forward()
        .into_iter()
        .filter(|r| r.planned.kernel_id != "gpt-softmax-xent")
        .collect();
    let prompt_logits = match net.nodes.iter().rev().nth(1) {
        Some(Node::Linear { y, .. }) => y.act,
        _ => return Err("the model does not end in its head".into()),
    };

    let mut acts = net.arena.acts.clone();
    let mut cache = Layout::default();
    let tokens = acts.push("decode tokens", seqs);
    let mut b = Builder {
        acts: &mut acts,
        cache: &mut cache,
        seqs,
        context: cfg.context,
        decode: Vec::new(),
        stores: Vec::new(),
    };
    let mut x: Option<Tensor> = None;
    for node in &net.nodes {
        match node {
            Node::Embed {
                x: ex,
                wte,
                wpe,
                vocab,
                ..
            } => {
                let y = b.tensor("embed", ex.width);
                let p = Range::span(&[*wte, *wpe]);
                b.decode.push(layer::grid3(
                    kernels::EMBED_AT_ID,
                    [line_groups(seqs * ex.width), 1, 1],
                    64,
                    decode_uniform(seqs, 1, ex.width, cfg.context)
                        .with("vocab", *vocab as u32)
                        .with("wte", p.offset_of(*wte))
                        .with("wpe", p.offset_of(*wpe)),
                    vec![
                        tokens.bind(buffer::ACTS),
                        p.bind(buffer::PARAMS),
                        y.act.bind(buffer::ACTS),
                        Binding::whole(STATE),
                    ],
                ));
                x = Some(y);
            }
            Node::Residual { branch, .. } => {
                let start = x.ok_or_else(|| "a block before the embeddings".to_string())?;
                let mut h = start;
                for inner in branch {
                    h = b.node(inner, h)?;
                }
                let y = b.tensor("residual", start.width);
                // A residual of no branch layers records just its add: y = x + h.
                let add = Node::Residual {
                    x: start,
                    branch: Vec::new(),
                    z: h,
                    y,
                };
                layer::forward(&[add], seqs, &mut b.decode);
                x = Some(y);
            }
            Node::SoftmaxXent { .. } => {}
            other => {
                let h = x.ok_or_else(|| "a layer before the embeddings".to_string())?;
                x = Some(b.node(other, h)?);
            }
        }
    }
    let logits = x.ok_or_else(|| "an empty model".to_string())?.act;
    b.decode.push(layer::grid3(
        kernels::ADVANCE_ID,
        [1, 1, 1],
        1,
        decode_uniform(seqs, 1, cfg.width, cfg.context),
        vec![Binding::whole(STATE)],
    ));
    let (decode, stores) = (std::mem::take(&mut b.decode), std::mem::take(&mut b.stores));
    net.arena.acts = acts;
    Ok(Recording {
        net,
        prompt,
        stores,
        decode,
        tokens,
        logits,
        prompt_logits,
        cache,
    })
}

impl Decoder {
    /// A decoder of `cfg` for `seqs` sequences at once, its parameters `gp` in `gpt::model`'s
    /// layout (a session's, or `gpt::Model::init_params`).
    pub async fn new(gpu: Rc<Gpu>, cfg: Config, seqs: usize, gp: &[f32]) -> Result<Self, GpuError> {
        let bad = GpuError::Dispatch;
        cfg.validate().map_err(|e| bad(e.to_string()))?;
        if seqs == 0 {
            return Err(bad("decoding needs at least one sequence".into()));
        }
        if cfg.context > MAX_CONTEXT {
            return Err(bad(format!(
                "a context of {} is past the decoder's {MAX_CONTEXT}",
                cfg.context
            )));
        }
        let Recording {
            net,
            prompt,
            stores,
            decode,
            tokens,
            logits,
            prompt_logits,
            cache,
        } = record(&cfg, seqs).map_err(bad)?;
        let params = super::gpt::params(&net, &cfg, gp).map_err(bad)?;
        net.arena.fits(&gpu.limits()).map_err(bad)?;
        let largest = gpu
            .limits()
            .max_storage_buffer_binding_size
            .min(gpu.limits().max_buffer_size);
        if cache.bytes() > largest {
            return Err(bad(format!(
                "the KV cache needs a buffer of {} bytes; this adapter binds at most {largest}",
                cache.bytes()
            )));
        }

        let a = &net.arena;
        let buffers = vec![
            ResidentBuffer {
                name: buffer::PARAMS,
                init: crate::plan::Init::Bytes(bytemuck::cast_slice(&params).to_vec().into()),
            },
            ResidentBuffer {
                name: buffer::ACTS,
                init: crate::plan::Init::Zeroed(a.acts.bytes()),
            },
            ResidentBuffer {
                name: buffer::DELTAS,
                init: crate::plan::Init::Zeroed(a.deltas.bytes()),
            },
            ResidentBuffer {
                name: CACHE,
                init: crate::plan::Init::Zeroed(cache.bytes()),
            },
            ResidentBuffer {
                name: STATE,
                init: crate::plan::Init::Zeroed(16),
            },
        ];
        let mut dispatches = Vec::new();
        for r in prompt.iter().chain(&stores).chain(&decode) {
            dispatches.push(ResidentDispatch {
                kernel: crate::kernel(r.planned.kernel_id).ok_or_else(|| {
                    GpuError::Shader(format!("no kernel {}", r.planned.kernel_id))
                })?,
                variants: vec![r.bindings.clone()],
                uniform: r.planned.uniform.to_vec(),
                workgroups: r.planned.workgroups,
                after_uniform: Vec::new(),
            });
        }
        let run = |range: std::ops::Range<usize>| -> Vec<Op> {
            range
                .map(|index| Op::Dispatch { index, variant: 0 })
                .collect()
        };
        let n_prefill = prompt.len() + stores.len();
        let mut prefill = run(0..n_prefill);
        prefill.push(Op::Pass);
        let mut step = run(n_prefill..n_prefill + decode.len());
        step.push(Op::Pass);
        let readback = (prompt_logits.len * 4) as u64;
        let plan = ResidentPlan::new(gpu, buffers, dispatches, readback).await?;
        Ok(Self {
            plan,
            net,
            cfg,
            seqs,
            tokens,
            logits,
            prompt_logits,
            cache,
            programs: vec![(PREFILL, prefill), (DECODE, step)],
            pos: 0,
            prefilled: None,
        })
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Sequences decoded at once.
    pub fn seqs(&self) -> usize {
        self.seqs
    }

    /// The prompt's model and, appended to its activations, a decode step's tensors.
    pub fn net(&self) -> &Net {
        &self.net
    }

    /// The cache's layout: one range per layer.
    pub fn cache(&self) -> &Layout {
        &self.cache
    }

    /// The names of the programs.
    pub fn programs(&self) -> Vec<&'static str> {
        self.programs.iter().map(|p| p.0).collect()
    }

    /// The position the next decode step writes.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The logits of the last step (seqs × vocab) and of the prompt (seqs × context × vocab;
    /// rows at and past the prompt's length are padding's).
    pub fn logits_ranges(&self) -> (Range, Range) {
        (self.logits, self.prompt_logits)
    }

    fn ops(&self, name: &str) -> Result<&[Op], GpuError> {
        self.programs
            .iter()
            .find(|p| p.0 == name)
            .map(|p| p.1.as_slice())
            .ok_or_else(|| GpuError::Dispatch(format!("no program `{name}`")))
    }

    fn check_tokens(&self, tokens: &[u32]) -> Result<(), GpuError> {
        if let Some(&k) = tokens.iter().find(|&&k| k as usize >= self.cfg.vocab) {
            return Err(GpuError::Dispatch(format!(
                "token {k} is outside the vocabulary of {}",
                self.cfg.vocab
            )));
        }
        Ok(())
    }

    /// Submits [`PREFILL`] of `prompts` (one per sequence, all of one length from 1 to the
    /// context), without waiting: the cache then holds their keys and values, and the next
    /// decode step writes position `len`.
    pub fn prefill(&mut self, prompts: &[Vec<u32>]) -> Result<(), GpuError> {
        let t = self.cfg.context;
        let len = prompts.first().map_or(0, Vec::len);
        if prompts.len() != self.seqs
            || len == 0
            || len > t
            || prompts.iter().any(|p| p.len() != len)
        {
            return Err(GpuError::Dispatch(format!(
                "{} prompts for {} sequences, each of one length from 1 to {t}",
                prompts.len(),
                self.seqs
            )));
        }
        let mut tokens = vec![0u32; self.seqs * t];
        for (s, p) in prompts.iter().enumerate() {
            self.check_tokens(p)?;
            tokens[s * t..s * t + len].copy_from_slice(p);
        }
        let net = &self.net;
        self.plan.write(
            buffer::ACTS,
            (net.input.act.at * 4) as u64,
            bytemuck::cast_slice(&tokens),
        )?;
        self.plan.write(
            buffer::ACTS,
            (net.targets.at * 4) as u64,
            bytemuck::cast_slice(&vec![IGNORE; net.targets.len]),
        )?;
        self.set_position(len)?;
        let ops = self.ops(PREFILL)?.to_vec();
        self.plan.submit(&ops, 0)?;
        self.prefilled = Some(len);
        Ok(())
    }

    /// Loads parameters `gp` in `gpt::model`'s layout (as [`Decoder::new`] takes them), queued
    /// before the next submission: one decoder serves a model whose parameters change.
    pub fn load_params(&mut self, gp: &[f32]) -> Result<(), GpuError> {
        let p = super::gpt::params(&self.net, &self.cfg, gp).map_err(GpuError::Dispatch)?;
        self.plan.write(buffer::PARAMS, 0, bytemuck::cast_slice(&p))
    }

    /// Copies a training engine's current parameters (a `GptSession`'s of this shape: the
    /// same parameter layout) into this decoder on the GPU, after everything both have
    /// submitted: the model as its last submitted step left it, with no readback.
    pub fn load_params_from(&mut self, engine: &super::Engine) -> Result<(), GpuError> {
        let (ours, theirs) = (&self.net.arena.params, &engine.net().arena.params);
        if ours != theirs {
            return Err(GpuError::Dispatch(format!(
                "parameters of {} words in another layout than the decoder's {}",
                theirs.words(),
                ours.words()
            )));
        }
        self.plan
            .copy_from(engine.plan(), buffer::PARAMS, ours.bytes())
    }

    fn set_position(&mut self, pos: usize) -> Result<(), GpuError> {
        self.plan
            .write(STATE, 0, bytemuck::cast_slice(&[pos as u32, 0, 0, 0]))?;
        self.pos = pos;
        Ok(())
    }

    /// Submits one [`DECODE`] step of `tokens` (one per sequence), without waiting.
    pub fn decode(&mut self, tokens: &[u32]) -> Result<(), GpuError> {
        if tokens.len() != self.seqs {
            return Err(GpuError::Dispatch(format!(
                "{} tokens for {} sequences",
                tokens.len(),
                self.seqs
            )));
        }
        self.check_tokens(tokens)?;
        self.plan.write(
            buffer::ACTS,
            (self.tokens.at * 4) as u64,
            bytemuck::cast_slice(tokens),
        )?;
        self.chain(1)
    }

    /// Submits `steps` [`DECODE`] steps in one submission, each on the tokens the last
    /// [`Decoder::decode`] wrote (what a throughput measurement needs: a step's work does not
    /// depend on which tokens it decodes), without waiting. The positions must stay inside
    /// the context.
    pub fn chain(&mut self, steps: usize) -> Result<(), GpuError> {
        let t = self.cfg.context;
        if self.pos == 0 || self.pos + steps > t {
            return Err(GpuError::Dispatch(format!(
                "{steps} steps from position {} pass the context of {t} (or nothing was prefilled)",
                self.pos
            )));
        }
        let one = self.ops(DECODE)?;
        let ops: Vec<Op> = (0..steps).flat_map(|_| one.iter().copied()).collect();
        self.plan.submit(&ops, steps as u64)?;
        self.pos += steps;
        self.prefilled = None;
        Ok(())
    }

    /// Goes back to position `pos` (at least 1, at most the current one): the cache before it
    /// is kept, the steps after it are decoded again (a measurement's next run).
    pub fn rewind(&mut self, pos: usize) -> Result<(), GpuError> {
        if pos == 0 || pos > self.pos {
            return Err(GpuError::Dispatch(format!(
                "rewind to {pos} from {}",
                self.pos
            )));
        }
        self.set_position(pos)
    }

    /// Asks for the next token's logits of every sequence (seqs × vocab) after everything
    /// submitted: the prompt's last row of each after a prefill, else the last step's;
    /// false while an earlier readback is uncollected.
    pub fn request_next_logits(&mut self) -> Result<bool, GpuError> {
        let Some(len) = self.prefilled else {
            return self.request_logits();
        };
        let (t, v) = (self.cfg.context, self.cfg.vocab);
        let ranges: Vec<_> = (0..self.seqs)
            .map(|s| {
                Range {
                    at: self.prompt_logits.at + (s * t + len - 1) * v,
                    len: v,
                }
                .read(buffer::ACTS)
            })
            .collect();
        self.plan.request_read(&[], &ranges)
    }

    /// Asks for the last step's logits (seqs × vocab) after everything submitted; false
    /// while an earlier readback is uncollected.
    pub fn request_logits(&mut self) -> Result<bool, GpuError> {
        let r = self.logits.read(buffer::ACTS);
        self.plan.request_read(&[], &[r])
    }

    /// The requested logits once they have arrived; never waits.
    pub fn poll_logits(&mut self) -> Result<Option<Vec<f32>>, GpuError> {
        Ok(self
            .plan
            .poll_read()?
            .map(|b| bytemuck::pod_collect_to_vec(&b)))
    }

    /// Decode steps the GPU has finished.
    pub fn steps_completed(&self) -> u64 {
        self.plan.units_completed()
    }

    /// Resolves when everything submitted so far has finished (a timing's end).
    pub fn finished(&self) -> impl std::future::Future<Output = Result<(), GpuError>> {
        self.plan.finished()
    }

    /// Natively: reads `ranges` now, each as its own vector (tests and benchmarks).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_blocking(
        &mut self,
        ranges: &[crate::plan::ReadRange],
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        if !self.plan.request_read(&[], ranges)? {
            return Err(GpuError::Readback("a readback is already pending".into()));
        }
        loop {
            self.plan.wait()?;
            if let Some(all) = self.plan.poll_read()? {
                let all: Vec<f32> = bytemuck::pod_collect_to_vec(&all);
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

    /// Natively: waits until everything submitted has finished.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<(), GpuError> {
        self.plan.wait()
    }
}

/// Texts written together by a [`Decoder`], one per sequence, each from the boundary token 0:
/// every step's logits give each unfinished text its next token, picked by
/// [`super::gpt::pick`] at the temperature with the text's own seeded draws (one draw per pick,
/// as a text written alone draws them, so its seed alone decides it). A text ends at the
/// boundary token or where the context is full (the token that would pass it is dropped).
pub struct Writing {
    temperature: f32,
    context: usize,
    vocab: usize,
    texts: Vec<Vec<u32>>,
    ended: Vec<bool>,
    draws: Vec<SplitMix64>,
}

impl Writing {
    /// One text per seed, at `temperature`, for a model of `cfg`.
    pub fn new(seeds: &[u64], temperature: f32, cfg: &Config) -> Self {
        Self {
            temperature,
            context: cfg.context,
            vocab: cfg.vocab,
            texts: vec![Vec::new(); seeds.len()],
            ended: vec![false; seeds.len()],
            draws: seeds.iter().map(|&s| SplitMix64::new(s)).collect(),
        }
    }

    /// Takes the next token's logits of every text (texts × vocab, [`Decoder::request_next_logits`]'s):
    /// the tokens to decode next (an ended text's a 0, its row ignored from then on), or None
    /// once every text has ended.
    pub fn take(&mut self, logits: &[f32]) -> Result<Option<Vec<u32>>, GpuError> {
        let v = self.vocab;
        if logits.len() != self.texts.len() * v {
            return Err(GpuError::Readback(format!(
                "{} logits for {} texts of a vocabulary of {v}",
                logits.len(),
                self.texts.len()
            )));
        }
        for (s, row) in logits.chunks_exact(v).enumerate() {
            if self.ended[s] {
                continue;
            }
            let u = (self.draws[s].next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let token = super::gpt::pick(row, self.temperature, u);
            if token == 0 || self.texts[s].len() + 2 > self.context {
                self.ended[s] = true;
            } else {
                self.texts[s].push(token);
            }
        }
        if self.done() {
            return Ok(None);
        }
        Ok(Some(
            self.texts
                .iter()
                .zip(&self.ended)
                .map(|(t, &e)| if e { 0 } else { t.last().copied().unwrap_or(0) })
                .collect(),
        ))
    }

    /// Whether every text has ended.
    pub fn done(&self) -> bool {
        self.ended.iter().all(|&e| e)
    }

    /// The texts' tokens so far (the boundary token left out).
    pub fn texts(&self) -> &[Vec<u32>] {
        &self.texts
    }
}
