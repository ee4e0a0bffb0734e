//! A prompt's attention maps, from the session's own model as it stands: [`ATTENTION`] is
//! the evaluation forward without its loss head (the softmax cross-entropy would overwrite
//! the row losses a training chunk's readback is about to take), run on the prompt in the
//! first window of a batch; the readback takes every attention layer's probabilities of that
//! window (the first `heads` problems: problem z is window z / heads, head z % heads) and the
//! parameters they came from, so the CPU twin ([`Maps::check`]) recomputes them from the
//! very same numbers and says how far apart the two are against its derived bound.

use gpt::ops::IGNORE;
use gpt::Config;

use super::{model, GptSession};
use crate::context::GpuError;
use crate::engine::twin::Twin;
use crate::engine::{buffer, Net, Node, Range};

/// The program behind the maps: the forward without the loss head.
pub const ATTENTION: &str = "attention maps";

/// The kernel the maps' forward leaves out (the loss head).
pub const LOSS_HEAD: &str = "gpt-softmax-xent";

/// Attention probabilities of one prompt, every layer and head, as the GPU computed them.
#[derive(Clone, Debug, PartialEq)]
pub struct Maps {
    pub cfg: Config,
    /// The positions: the boundary token 0, then the prompt's.
    pub tokens: Vec<u32>,
    /// Training steps submitted when the maps were asked for.
    pub steps: u64,
    /// Per layer, heads × context × context (row i: where position i looks); rows and
    /// columns past `tokens.len()` belong to the padding.
    pub probs: Vec<Vec<f32>>,
    /// The parameters the maps came from (the engine's layout).
    pub params: Vec<f32>,
}

/// The CPU twin's maps beside the GPU's.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The twin's probabilities, laid out as [`Maps::probs`].
    pub twin: Vec<Vec<f32>>,
    /// The largest |GPU − twin| over the prompt's positions, and the largest bound.
    pub max_diff: f64,
    pub max_bound: f64,
    /// Whether every |GPU − twin| is within its own bound.
    pub within: bool,
}

/// Every attention node of `nodes`, in order (they sit in residual branches).
fn attention_nodes(nodes: &[Node], out: &mut Vec<Range>) {
    for n in nodes {
        match n {
            Node::Attention { probs, .. } => out.push(*probs),
            Node::Residual { branch, .. } => attention_nodes(branch, out),
            _ => {}
        }
    }
}

/// The attention probabilities' ranges of `net`, cut to its first window's heads.
fn first_window(net: &Net, heads: usize, context: usize) -> Vec<Range> {
    let mut all = Vec::new();
    attention_nodes(&net.nodes, &mut all);
    all.into_iter()
        .map(|r| Range {
            at: r.at,
            len: (heads * context * context).min(r.len),
        })
        .collect()
}

impl Maps {
    /// Where position `i` of head `head` of layer `layer` looks at position `j` (0 outside).
    pub fn prob(&self, layer: usize, head: usize, i: usize, j: usize) -> f32 {
        let t = self.cfg.context;
        self.probs
            .get(layer)
            .and_then(|p| p.get((head * t + i) * t + j))
            .copied()
            .unwrap_or(0.0)
    }

    /// The twin's forward from the same parameters on the same tokens (a net of one window:
    /// the parameter layout does not depend on the batch), compared over the prompt's rows.
    pub fn check(&self) -> Result<Check, String> {
        let (t, h) = (self.cfg.context, self.cfg.heads);
        let net = Net::compile(&model(&self.cfg, 1))?;
        if net.arena.params.words() != self.params.len() {
            return Err("parameters of another shape".into());
        }
        let mut twin = Twin::new(&net, self.params.clone(), 0.0);
        let mut tokens = self.tokens.clone();
        tokens.resize(t, 0);
        twin.set_tokens(&net, &tokens);
        twin.set_targets(&net, &vec![IGNORE; t]);
        twin.forward(&net);
        let ranges = first_window(&net, h, t);
        if ranges.len() != self.probs.len() {
            return Err("a different number of layers".into());
        }
        let n = self.tokens.len();
        let (mut max_diff, mut max_bound, mut within) = (0.0f64, 0.0f64, true);
        let mut out = Vec::with_capacity(ranges.len());
        for (r, gpu) in ranges.iter().zip(&self.probs) {
            let cpu = &twin.deltas[r.words()];
            let bound = &twin.bound.deltas[r.words()];
            for head in 0..h {
                for i in 0..n {
                    for j in 0..n {
                        let k = (head * t + i) * t + j;
                        let (g, c, b) = (gpu[k], cpu[k], bound[k]);
                        let e = (f64::from(g) - f64::from(c)).abs();
                        max_diff = max_diff.max(e);
                        max_bound = max_bound.max(b);
                        within &= e <= b;
                    }
                }
            }
            out.push(cpu.to_vec());
        }
        Ok(Check {
            twin: out,
            max_diff,
            max_bound,
            within,
        })
    }
}

impl GptSession {
    /// Submits the forward of `tokens` (the boundary 0 first, at most `context` of them,
    /// each below the vocabulary) in the first window of a batch and asks for its attention
    /// maps; false (nothing submitted) while a readback is on its way. Only activations and
    /// the probabilities change: the last training chunk's row losses stay readable, and the
    /// next step copies its own tokens in.
    pub fn request_attention(&mut self, tokens: &[u32]) -> Result<bool, GpuError> {
        let t = self.cfg.context;
        if tokens.is_empty()
            || tokens.len() > t
            || tokens.iter().any(|&k| k as usize >= self.cfg.vocab)
        {
            return Err(GpuError::Dispatch(format!(
                "a prompt of {} tokens: 1 to {t}, each below {}",
                tokens.len(),
                self.cfg.vocab
            )));
        }
        if self.reading || self.logits_at.is_some() || self.engine.read_pending() {
            return Ok(false);
        }
        let rows = self.engine.net().batch;
        let mut all = vec![0u32; rows];
        all[..tokens.len()].copy_from_slice(tokens);
        self.engine.write_tokens(&all)?;
        self.engine.run(ATTENTION, 1)?;
        let net = self.engine.net();
        let mut reads = vec![net.arena.params.all().read(buffer::PARAMS)];
        reads.extend(
            first_window(net, self.cfg.heads, t)
                .iter()
                .map(|r| r.read(buffer::DELTAS)),
        );
        if !self.engine.request_read(&reads)? {
            return Ok(false);
        }
        self.maps_for = Some((tokens.to_vec(), self.engine.steps()));
        Ok(true)
    }

    /// Whether attention maps are on their way.
    pub fn attention_pending(&self) -> bool {
        self.maps_for.is_some()
    }

    /// The requested maps once they have arrived; never waits.
    pub fn poll_attention(&mut self) -> Result<Option<Maps>, GpuError> {
        if self.maps_for.is_none() {
            return Ok(None);
        }
        let Some(all) = self.engine.poll_read()? else {
            return Ok(None);
        };
        let Some((tokens, steps)) = self.maps_for.take() else {
            return Ok(None);
        };
        let t = self.cfg.context;
        let p = self.engine.net().arena.params.words();
        let per = self.cfg.heads * t * t;
        let layers = (all.len().saturating_sub(p)) / per.max(1);
        Ok(Some(Maps {
            cfg: self.cfg,
            tokens,
            steps,
            probs: (0..layers)
                .map(|l| all[p + l * per..p + (l + 1) * per].to_vec())
                .collect(),
            params: all[..p.min(all.len())].to_vec(),
        }))
    }
}
