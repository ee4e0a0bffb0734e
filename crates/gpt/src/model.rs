//! The model's shape, its flat parameter layout, seeded initialisation, and the forward and
//! backward pass over a batch of windows.
//!
//! # Layers, in order
//! 1. **embed**: x = wte[token] + wpe[position] (n = b·t rows of width c).
//! 2. per block ℓ: **ln1** → **qkv** (linear c → 3c) → **attention** (causal, h heads) →
//!    **proj** (linear c → c) → **residual** x += …; then **ln2** → **fc** (linear c → 4c) →
//!    **gelu** → **out** (linear 4c → c) → **residual** x += ….
//! 3. **lnf** → **head** (linear c → vocab, no bias) → **loss** (softmax cross-entropy).
//!
//! The backward runs the list in reverse; each residual passes its gradient to both branches.
//! Every parameter lives in one flat buffer ([`ParamLayout`]), the gradients in a buffer of
//! the same layout, Adam's moments in two more: the arena the GPU session will bind.

use std::fmt;

use cpu_kernels::data::SplitMix64;

use crate::ops::{self, AttnShape};
use crate::real::Real;

/// The model's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Characters in the vocabulary (the boundary token included).
    pub vocab: usize,
    /// Positions a window holds (the attention span).
    pub context: usize,
    /// Width of the residual stream, c.
    pub width: usize,
    pub heads: usize,
    pub layers: usize,
}

/// A shape the model cannot take, named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A size that must be at least 1 is 0: which one.
    Zero(&'static str),
    /// The width does not split evenly into the heads.
    WidthNotDivisible { width: usize, heads: usize },
    /// A size past what the page allows: which, the value, the largest allowed.
    TooLarge(&'static str, usize, usize),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Zero(what) => write!(f, "{what} must be at least 1"),
            Self::WidthNotDivisible { width, heads } => {
                write!(f, "width {width} does not divide into {heads} heads")
            }
            Self::TooLarge(what, v, max) => write!(f, "{what} {v} is more than {max}"),
        }
    }
}

impl Config {
    /// The page's default: 2 layers, 4 heads, width 64, context 32.
    pub fn default_for(vocab: usize) -> Self {
        Self {
            vocab,
            context: 32,
            width: 64,
            heads: 4,
            layers: 2,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        for (v, name) in [
            (self.vocab, "vocabulary"),
            (self.context, "context"),
            (self.width, "width"),
            (self.heads, "heads"),
            (self.layers, "layers"),
        ] {
            if v == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        for (v, name, max) in [
            (self.context, "context", 1024),
            (self.width, "width", 1024),
            (self.heads, "heads", 64),
            (self.layers, "layers", 48),
            (self.vocab, "vocabulary", 65_536),
        ] {
            if v > max {
                return Err(ConfigError::TooLarge(name, v, max));
            }
        }
        if !self.width.is_multiple_of(self.heads) {
            return Err(ConfigError::WidthNotDivisible {
                width: self.width,
                heads: self.heads,
            });
        }
        Ok(())
    }

    pub fn head_size(&self) -> usize {
        self.width / self.heads
    }
}

/// Where one block's parameters start in the flat buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockParams {
    pub ln1_g: usize,
    pub ln1_b: usize,
    /// c × 3c, then its bias (3c).
    pub qkv_w: usize,
    pub qkv_b: usize,
    /// c × c, then c.
    pub proj_w: usize,
    pub proj_b: usize,
    pub ln2_g: usize,
    pub ln2_b: usize,
    /// c × 4c, then 4c.
    pub fc_w: usize,
    pub fc_b: usize,
    /// 4c × c, then c.
    pub out_w: usize,
    pub out_b: usize,
}

/// Every parameter's offset in the one flat buffer, in this order: wte (vocab × c), wpe
/// (context × c), the blocks, lnf γ and β, the head (c × vocab).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    pub wte: usize,
    pub wpe: usize,
    pub blocks: Vec<BlockParams>,
    pub lnf_g: usize,
    pub lnf_b: usize,
    pub head: usize,
    pub len: usize,
}

impl ParamLayout {
    pub fn new(cfg: &Config) -> Self {
        let c = cfg.width;
        let mut at = 0;
        let mut take = |n: usize| {
            let o = at;
            at += n;
            o
        };
        let wte = take(cfg.vocab * c);
        let wpe = take(cfg.context * c);
        let blocks = (0..cfg.layers)
            .map(|_| BlockParams {
                ln1_g: take(c),
                ln1_b: take(c),
                qkv_w: take(c * 3 * c),
                qkv_b: take(3 * c),
                proj_w: take(c * c),
                proj_b: take(c),
                ln2_g: take(c),
                ln2_b: take(c),
                fc_w: take(c * 4 * c),
                fc_b: take(4 * c),
                out_w: take(4 * c * c),
                out_b: take(c),
            })
            .collect();
        let lnf_g = take(c);
        let lnf_b = take(c);
        let head = take(c * cfg.vocab);
        Self {
            wte,
            wpe,
            blocks,
            lnf_g,
            lnf_b,
            head,
            len: at,
        }
    }
}

/// The model: its shape and layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub cfg: Config,
    pub layout: ParamLayout,
}

/// What the forward saves for the backward, per block (n = b·t rows).
#[derive(Clone, Debug, Default)]
struct BlockActs<R> {
    x_in: Vec<R>,
    ln1: Vec<R>,
    ln1_mean: Vec<R>,
    ln1_rstd: Vec<R>,
    qkv: Vec<R>,
    probs: Vec<R>,
    att: Vec<R>,
    x_mid: Vec<R>,
    ln2: Vec<R>,
    ln2_mean: Vec<R>,
    ln2_rstd: Vec<R>,
    fc: Vec<R>,
    gelu: Vec<R>,
}

/// One forward's results: the loss, the rows it counted, and every activation saved.
#[derive(Clone, Debug)]
pub struct Forward<R> {
    pub loss: R,
    pub counted: usize,
    /// Logits' probabilities, n × vocab.
    pub probs: Vec<R>,
    /// Every block's attention probabilities, b × h × t × t each (the page's attention maps).
    pub attention: Vec<Vec<R>>,
    blocks: Vec<BlockActs<R>>,
    x_out: Vec<R>,
    lnf: Vec<R>,
    lnf_mean: Vec<R>,
    lnf_rstd: Vec<R>,
}

impl Model {
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Self {
            layout: ParamLayout::new(&cfg),
            cfg,
        })
    }

    /// Seeded initialisation, GPT-2's scheme with uniform draws of the same spread: weights
    /// with standard deviation 0.02 (uniform on ±0.02·√3), the two projections back onto the
    /// residual stream scaled by 1/√(2·layers), biases 0, LayerNorm γ = 1 and β = 0.
    pub fn init_params(&self, seed: u64) -> Vec<f32> {
        let l = &self.layout;
        let c = self.cfg.width;
        let mut p = vec![0.0f32; l.len];
        let mut rng = SplitMix64::new(seed ^ 0x6E7_0000_5EED);
        let spread = 0.02 * 3f32.sqrt();
        let mut fill = |p: &mut [f32], scale: f32| {
            for v in p {
                *v = rng.next_signed_unit() * spread * scale;
            }
        };
        let resid = 1.0 / (2.0 * self.cfg.layers as f32).sqrt();
        fill(&mut p[l.wte..l.wte + self.cfg.vocab * c], 1.0);
        fill(&mut p[l.wpe..l.wpe + self.cfg.context * c], 1.0);
        for b in &l.blocks {
            fill(&mut p[b.qkv_w..b.qkv_w + 3 * c * c], 1.0);
            fill(&mut p[b.proj_w..b.proj_w + c * c], resid);
            fill(&mut p[b.fc_w..b.fc_w + 4 * c * c], 1.0);
            fill(&mut p[b.out_w..b.out_w + 4 * c * c], resid);
            p[b.ln1_g..b.ln1_g + c].fill(1.0);
            p[b.ln2_g..b.ln2_g + c].fill(1.0);
        }
        p[l.lnf_g..l.lnf_g + c].fill(1.0);
        fill(&mut p[l.head..l.head + c * self.cfg.vocab], 1.0);
        p
    }

    /// The forward pass over `b` windows of `t` positions (t ≤ context): `tokens` and
    /// `targets` are b·t each, a target of [`ops::IGNORE`] counting nothing.
    pub fn forward<R: Real>(
        &self,
        p: &[R],
        tokens: &[u32],
        targets: &[u32],
        b: usize,
    ) -> Forward<R> {
        let (cfg, l) = (&self.cfg, &self.layout);
        let c = cfg.width;
        let n = tokens.len();
        let t = n / b.max(1);
        let shape = AttnShape {
            b,
            t,
            h: cfg.heads,
            hs: cfg.head_size(),
        };
        let zeros = |len: usize| vec![R::zero(); len];
        let mut x = zeros(n * c);
        for (r, &tok) in tokens.iter().enumerate() {
            let pos = r % t;
            let (e, q) = (l.wte + tok as usize * c, l.wpe + pos * c);
            for i in 0..c {
                x[r * c + i] = p[e + i] + p[q + i];
            }
        }
        let mut blocks = Vec::with_capacity(cfg.layers);
        for bp in &l.blocks {
            let mut a = BlockActs {
                x_in: x.clone(),
                ln1: zeros(n * c),
                ln1_mean: zeros(n),
                ln1_rstd: zeros(n),
                qkv: zeros(n * 3 * c),
                probs: zeros(shape.probs_len()),
                att: zeros(n * c),
                x_mid: zeros(n * c),
                ln2: zeros(n * c),
                ln2_mean: zeros(n),
                ln2_rstd: zeros(n),
                fc: zeros(n * 4 * c),
                gelu: zeros(n * 4 * c),
            };
            ops::layernorm(
                &x,
                &p[bp.ln1_g..][..c],
                &p[bp.ln1_b..][..c],
                c,
                &mut a.ln1,
                &mut a.ln1_mean,
                &mut a.ln1_rstd,
            );
            ops::linear(
                &a.ln1,
                &p[bp.qkv_w..][..3 * c * c],
                &p[bp.qkv_b..][..3 * c],
                n,
                c,
                3 * c,
                &mut a.qkv,
            );
            ops::attention(&a.qkv, shape, &mut a.att, &mut a.probs);
            let mut y = zeros(n * c);
            ops::linear(
                &a.att,
                &p[bp.proj_w..][..c * c],
                &p[bp.proj_b..][..c],
                n,
                c,
                c,
                &mut y,
            );
            for (xv, &yv) in x.iter_mut().zip(&y) {
                *xv += yv;
            }
            a.x_mid.copy_from_slice(&x);
            ops::layernorm(
                &x,
                &p[bp.ln2_g..][..c],
                &p[bp.ln2_b..][..c],
                c,
                &mut a.ln2,
                &mut a.ln2_mean,
                &mut a.ln2_rstd,
            );
            ops::linear(
                &a.ln2,
                &p[bp.fc_w..][..4 * c * c],
                &p[bp.fc_b..][..4 * c],
                n,
                c,
                4 * c,
                &mut a.fc,
            );
            ops::gelu(&a.fc, &mut a.gelu);
            ops::linear(
                &a.gelu,
                &p[bp.out_w..][..4 * c * c],
                &p[bp.out_b..][..c],
                n,
                4 * c,
                c,
                &mut y,
            );
            for (xv, &yv) in x.iter_mut().zip(&y) {
                *xv += yv;
            }
            blocks.push(a);
        }
        let mut lnf = zeros(n * c);
        let (mut lnf_mean, mut lnf_rstd) = (zeros(n), zeros(n));
        ops::layernorm(
            &x,
            &p[l.lnf_g..][..c],
            &p[l.lnf_b..][..c],
            c,
            &mut lnf,
            &mut lnf_mean,
            &mut lnf_rstd,
        );
        let v = cfg.vocab;
        let mut logits = zeros(n * v);
        ops::linear(&lnf, &p[l.head..][..c * v], &[], n, c, v, &mut logits);
        let mut probs = zeros(n * v);
        let (loss, counted) = ops::softmax_xent(&logits, targets, v, &mut probs);
        Forward {
            loss,
            counted,
            probs,
            attention: blocks.iter().map(|a| a.probs.clone()).collect(),
            blocks,
            x_out: x,
            lnf,
            lnf_mean,
            lnf_rstd,
        }
    }

    /// The loss and its gradient with respect to every parameter (same layout as `p`).
    pub fn loss_and_grad<R: Real>(
        &self,
        p: &[R],
        tokens: &[u32],
        targets: &[u32],
        b: usize,
    ) -> (R, Vec<R>) {
        let f = self.forward(p, tokens, targets, b);
        let g = self.backward(p, tokens, targets, b, &f);
        (f.loss, g)
    }

    /// The backward pass: the list of layers in reverse.
    pub fn backward<R: Real>(
        &self,
        p: &[R],
        tokens: &[u32],
        targets: &[u32],
        b: usize,
        f: &Forward<R>,
    ) -> Vec<R> {
        let (cfg, l) = (&self.cfg, &self.layout);
        let c = cfg.width;
        let v = cfg.vocab;
        let n = tokens.len();
        let t = n / b.max(1);
        let shape = AttnShape {
            b,
            t,
            h: cfg.heads,
            hs: cfg.head_size(),
        };
        let zeros = |len: usize| vec![R::zero(); len];
        let mut g = zeros(l.len);
        let mut dlogits = zeros(n * v);
        ops::softmax_xent_backward(&f.probs, targets, v, f.counted, &mut dlogits);
        let mut dlnf = zeros(n * c);
        ops::linear_backward(
            &f.lnf,
            &p[l.head..][..c * v],
            &dlogits,
            n,
            c,
            v,
            &mut dlnf,
            &mut g[l.head..][..c * v],
            &mut [],
        );
        let mut dx = zeros(n * c);
        {
            let (gg, gb) = two(&mut g, l.lnf_g, l.lnf_b, c);
            ops::layernorm_backward(
                &f.x_out,
                &p[l.lnf_g..][..c],
                &f.lnf_mean,
                &f.lnf_rstd,
                &dlnf,
                c,
                &mut dx,
                gg,
                gb,
            );
        }
        for (bp, a) in l.blocks.iter().zip(&f.blocks).rev() {
            // MLP branch: x_out = x_mid + out(gelu(fc(ln2(x_mid)))).
            let mut dgelu = zeros(n * 4 * c);
            {
                let (dw, db) = two(&mut g, bp.out_w, bp.out_b, 4 * c * c);
                ops::linear_backward(
                    &a.gelu,
                    &p[bp.out_w..][..4 * c * c],
                    &dx,
                    n,
                    4 * c,
                    c,
                    &mut dgelu,
                    dw,
                    &mut db[..c],
                );
            }
            let mut dfc = zeros(n * 4 * c);
            ops::gelu_backward(&a.fc, &dgelu, &mut dfc);
            let mut dln2 = zeros(n * c);
            {
                let (dw, db) = two(&mut g, bp.fc_w, bp.fc_b, 4 * c * c);
                ops::linear_backward(
                    &a.ln2,
                    &p[bp.fc_w..][..4 * c * c],
                    &dfc,
                    n,
                    c,
                    4 * c,
                    &mut dln2,
                    dw,
                    &mut db[..4 * c],
                );
            }
            {
                let (gg, gb) = two(&mut g, bp.ln2_g, bp.ln2_b, c);
                // dx already holds the residual's share; the branch adds its own.
                ops::layernorm_backward(
                    &a.x_mid,
                    &p[bp.ln2_g..][..c],
                    &a.ln2_mean,
                    &a.ln2_rstd,
                    &dln2,
                    c,
                    &mut dx,
                    gg,
                    gb,
                );
            }
            // Attention branch: x_mid = x_in + proj(attention(qkv(ln1(x_in)))).
            let mut datt = zeros(n * c);
            {
                let (dw, db) = two(&mut g, bp.proj_w, bp.proj_b, c * c);
                ops::linear_backward(
                    &a.att,
                    &p[bp.proj_w..][..c * c],
                    &dx,
                    n,
                    c,
                    c,
                    &mut datt,
                    dw,
                    &mut db[..c],
                );
            }
            let mut dqkv = zeros(n * 3 * c);
            ops::attention_backward(&a.qkv, &a.probs, &datt, shape, &mut dqkv);
            let mut dln1 = zeros(n * c);
            {
                let (dw, db) = two(&mut g, bp.qkv_w, bp.qkv_b, 3 * c * c);
                ops::linear_backward(
                    &a.ln1,
                    &p[bp.qkv_w..][..3 * c * c],
                    &dqkv,
                    n,
                    c,
                    3 * c,
                    &mut dln1,
                    dw,
                    &mut db[..3 * c],
                );
            }
            {
                let (gg, gb) = two(&mut g, bp.ln1_g, bp.ln1_b, c);
                ops::layernorm_backward(
                    &a.x_in,
                    &p[bp.ln1_g..][..c],
                    &a.ln1_mean,
                    &a.ln1_rstd,
                    &dln1,
                    c,
                    &mut dx,
                    gg,
                    gb,
                );
            }
        }
        // Embeddings: scatter-add by token, and by position.
        for (r, &tok) in tokens.iter().enumerate() {
            let pos = r % t;
            for i in 0..c {
                let d = dx[r * c + i];
                g[l.wte + tok as usize * c + i] += d;
                g[l.wpe + pos * c + i] += d;
            }
        }
        g
    }
}

/// Two disjoint mutable regions of `g`: `first..first + len_first` and `second..` (to the end
/// of the buffer; callers cut it), where first < second.
fn two<R>(g: &mut [R], first: usize, second: usize, len_first: usize) -> (&mut [R], &mut [R]) {
    let (lo, hi) = g.split_at_mut(second);
    (&mut lo[first..first + len_first], hi)
}
