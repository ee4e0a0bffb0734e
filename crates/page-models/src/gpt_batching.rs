//! The batching experiment of `#/gpt` ("why inference batches"): the GPT decoding with its
//! KV cache (`gpu_runtime::engine::decode`) for 1, 2, 4, … sequences at once on the visitor's
//! GPU, tokens per second against the batch, and the prompt's forward (prefill) and a decode
//! step placed on the roofline the device's probes measure. Pure: the page runs the GPU and
//! feeds the results to [`Batching`]; the arithmetic intensities come from the model's shape
//! ([`decode_cost`], [`prefill_cost`]).
//!
//! # The cost model
//! FLOPs count the multiply-adds (two each) of the matrix products and of attention;
//! LayerNorm, GELU and the residual adds do a few operations per value and are left out.
//! Bytes are the fewest a step must move between memory and the chip: every weight it uses
//! read once, every activation written once and read once, the keys and values of earlier
//! positions read once and its own written once (f32, 4 bytes each). Real kernels move more,
//! so a measured point may sit below the roof for that reason as well.

use gpu_runtime::engine::gpt as egpt;
use gpu_runtime::engine::twin::Twin;
use gpu_runtime::engine::{Net, Node};
use gpu_runtime::gpt::ops::IGNORE;
use gpu_runtime::gpt::Config;

use crate::conv_page::{parse_in, read, BadParam};
use crate::gpt_wall::{median_spread, powers_of_two};
use crate::query::Query;

/// The largest batch the page offers.
pub const MAX_BATCH: u32 = 64;
/// The largest batch a software adapter measures unless raised.
pub const SOFTWARE_BATCH: u32 = 8;
/// The vocabulary of the randomly initialised model (its speed needs no trained weights, nor
/// a particular text).
pub const VOCAB: usize = 64;
/// The seed of its parameters and of the checked sequence's tokens.
pub const SEED: u64 = 44;

/// The model measured: the page's default shape (2 layers, 4 heads, width 64, context 32)
/// over [`VOCAB`] tokens.
pub fn model() -> Config {
    Config::default_for(VOCAB)
}

/// Floating-point operations and bytes moved, and their ratio.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub flops: f64,
    pub bytes: f64,
}

impl Cost {
    /// FLOP per byte.
    pub fn intensity(&self) -> f64 {
        if self.bytes > 0.0 {
            self.flops / self.bytes
        } else {
            0.0
        }
    }

    fn add(self, o: Cost) -> Cost {
        Cost {
            flops: self.flops + o.flops,
            bytes: self.bytes + o.bytes,
        }
    }
}

/// Weights of one block (LayerNorms, qkv, proj, the MLP; biases included), in values.
fn block_weights(c: f64) -> f64 {
    12.0 * c * c + 13.0 * c
}

/// Values of the activations one row leaves per block (LayerNorm c, qkv 3c, attention c,
/// proj c, add c, LayerNorm c, fc 4c, GELU 4c, out c, add c).
fn block_acts(c: f64) -> f64 {
    18.0 * c
}

/// A decode step for `batch` sequences each attending to `attended` positions (its own
/// included).
pub fn decode_cost(cfg: &Config, batch: u64, attended: u64) -> Cost {
    let (b, a) = (batch as f64, attended as f64);
    let (c, v, l) = (cfg.width as f64, cfg.vocab as f64, cfg.layers as f64);
    let flops = 2.0 * b * (l * (12.0 * c * c + 2.0 * a * c) + c * v);
    // Weights: every block's, the final LayerNorm, the head; b token rows and one position
    // row of the embeddings.
    let weights = l * block_weights(c) + 2.0 * c + c * v + b * c + c;
    let acts = 2.0 * b * (c + l * block_acts(c) + c + v);
    // The earlier positions' keys and values read, this one's written (its own are read
    // with the qkv activations).
    let cache = l * b * ((a - 1.0).max(0.0) * 2.0 * c + 2.0 * c);
    Cost {
        flops,
        bytes: 4.0 * (weights + acts + cache),
    }
}

/// `steps` decode steps from position `from` (the first attends to `from` + 1 positions).
pub fn decode_run_cost(cfg: &Config, batch: u64, from: u64, steps: u64) -> Cost {
    (0..steps)
        .map(|s| decode_cost(cfg, batch, from + s + 1))
        .fold(
            Cost {
                flops: 0.0,
                bytes: 0.0,
            },
            Cost::add,
        )
}

/// The prompt's forward for `batch` sequences of `len` tokens: every position at once,
/// causal attention, the keys and values written to the cache.
pub fn prefill_cost(cfg: &Config, batch: u64, len: u64) -> Cost {
    let (b, p) = (batch as f64, len as f64);
    let (c, v, l) = (cfg.width as f64, cfg.vocab as f64, cfg.layers as f64);
    let n = b * p;
    let flops = 2.0 * n * (l * 12.0 * c * c + c * v) + l * 2.0 * b * c * p * (p + 1.0);
    let weights = l * block_weights(c) + 2.0 * c + c * v + n * c + p * c;
    let acts = 2.0 * n * (c + l * block_acts(c) + c + v);
    let cache = l * n * 2.0 * c;
    Cost {
        flops,
        bytes: 4.0 * (weights + acts + cache),
    }
}

/// The experiment's setting, in the URL (`bmax`): the largest batch measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchSettings {
    pub max_batch: u32,
}

impl BatchSettings {
    /// 64 on a GPU; [`SOFTWARE_BATCH`] on a software adapter (a CPU imitating a GPU takes
    /// seconds per run at the larger batches).
    pub fn default_for(software: bool) -> Self {
        Self {
            max_batch: if software { SOFTWARE_BATCH } else { MAX_BATCH },
        }
    }

    /// Reads the URL; a bad value is named and the default used.
    pub fn from_query(q: &Query, software: bool) -> (Self, Vec<BadParam>) {
        let d = Self::default_for(software);
        let mut bad = Vec::new();
        let pow2 = |v: &str| parse_in(v, 1, MAX_BATCH).filter(|n| n.is_power_of_two());
        let max_batch =
            read(q, &mut bad, "bmax", &d.max_batch.to_string(), pow2).unwrap_or(d.max_batch);
        (Self { max_batch }, bad)
    }

    pub fn write(&self, q: &mut Query) {
        q.set("bmax", &self.max_batch.to_string());
    }

    /// The batches measured, smallest first.
    pub fn batches(&self) -> Vec<u32> {
        powers_of_two(1, self.max_batch)
    }
}

/// One batch's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Waiting,
    /// Median and spread (max − min) of the timed runs' milliseconds per decode step, and
    /// whether the checked warm-up's logits agreed with the CPU twin.
    Ran {
        ms_per_step: f64,
        spread: f64,
        verified: bool,
    },
    Failed(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub batch: u32,
    pub cell: Cell,
}

impl Row {
    /// Tokens per second (the batch's sequences each decode one token a step), where the run
    /// agreed with the twin.
    pub fn tokens_per_s(&self) -> Option<f64> {
        match self.cell {
            Cell::Ran {
                ms_per_step,
                verified: true,
                ..
            } if ms_per_step > 0.0 => Some(self.batch as f64 * 1000.0 / ms_per_step),
            _ => None,
        }
    }
}

/// The device's roof from its probes: GB/s and GFLOP/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoofProbe {
    pub gb_per_s: f64,
    pub gflop_per_s: f64,
}

/// A point for the roofline: its intensity and the rate measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub intensity: f64,
    pub gflop_per_s: f64,
}

/// The experiment's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Batching {
    pub settings: BatchSettings,
    pub rows: Vec<Row>,
    pub roof: Option<RoofProbe>,
    /// The prompt's forward: median milliseconds for one sequence of the full context.
    pub prefill_ms: Option<f64>,
    pub running: bool,
    pub cancelled: bool,
    /// Why the run stopped before any batch (no device, the probes failed).
    pub failed: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BatchAction {
    Start(BatchSettings),
    Settings(BatchSettings),
    Roof(RoofProbe),
    Prefill { ms: f64 },
    Measured { batch: u32, cell: Cell },
    Failed(String),
    Finished,
    Cancelled,
}

/// Decode steps per timed run: positions 1 … context − 1 after a one-token prompt.
pub fn steps_per_run(cfg: &Config) -> u64 {
    cfg.context.saturating_sub(1) as u64
}

impl Batching {
    pub fn new(settings: BatchSettings) -> Self {
        Self {
            settings,
            rows: Vec::new(),
            roof: None,
            prefill_ms: None,
            running: false,
            cancelled: false,
            failed: None,
        }
    }

    pub fn reduce(&self, action: BatchAction) -> Self {
        let mut next = self.clone();
        match action {
            BatchAction::Start(s) => {
                next = Batching::new(s);
                next.running = true;
                next.rows = s
                    .batches()
                    .into_iter()
                    .map(|batch| Row {
                        batch,
                        cell: Cell::Waiting,
                    })
                    .collect();
            }
            BatchAction::Settings(s) => {
                if s != next.settings {
                    next = Batching::new(s);
                }
            }
            BatchAction::Roof(r) => next.roof = Some(r),
            BatchAction::Prefill { ms } => next.prefill_ms = Some(ms),
            BatchAction::Measured { batch, cell } => {
                if let Some(row) = next.rows.iter_mut().find(|r| r.batch == batch) {
                    row.cell = cell;
                }
            }
            BatchAction::Failed(m) => {
                next.running = false;
                next.failed = Some(m);
            }
            BatchAction::Finished => next.running = false,
            BatchAction::Cancelled => {
                next.running = false;
                next.cancelled = true;
            }
        }
        next
    }

    /// The smallest and the largest batch that ran and agreed: (batch, tokens/s) each.
    pub fn span(&self) -> Option<((u32, f64), (u32, f64))> {
        let ran: Vec<(u32, f64)> = self
            .rows
            .iter()
            .filter_map(|r| r.tokens_per_s().map(|t| (r.batch, t)))
            .collect();
        match (ran.first(), ran.last()) {
            (Some(&a), Some(&b)) if a.0 < b.0 => Some((a, b)),
            _ => None,
        }
    }

    /// Whether a warm-up's logits disagreed with the twin.
    pub fn any_wrong(&self) -> bool {
        self.rows.iter().any(|r| {
            matches!(
                r.cell,
                Cell::Ran {
                    verified: false,
                    ..
                }
            )
        })
    }

    /// The prompt's forward on the roofline: its intensity, and the rate measured once it
    /// ran (one sequence of the full context).
    pub fn prefill_point(&self, cfg: &Config) -> (f64, Option<f64>) {
        let cost = prefill_cost(cfg, 1, cfg.context as u64);
        let rate = self
            .prefill_ms
            .filter(|ms| *ms > 0.0)
            .map(|ms| cost.flops / (ms * 1e6));
        (cost.intensity(), rate)
    }

    /// A decode run at `batch` on the roofline: its intensity (over the run's steps), and the
    /// rate measured if that batch ran and agreed.
    pub fn decode_point(&self, cfg: &Config, batch: u32) -> (f64, Option<f64>) {
        let steps = steps_per_run(cfg);
        let cost = decode_run_cost(cfg, batch as u64, 1, steps);
        let rate = self.rows.iter().find(|r| r.batch == batch).and_then(|r| {
            r.tokens_per_s()
                .map(|t| cost.flops / steps as f64 * t / batch as f64 / 1e9)
        });
        (cost.intensity(), rate)
    }
}

/// Milliseconds per step from timed runs' milliseconds of `steps` steps each: median and
/// spread.
pub fn per_step(run_ms: &[f64], steps: u64) -> Option<(f64, f64)> {
    let per: Vec<f64> = run_ms.iter().map(|ms| ms / steps.max(1) as f64).collect();
    median_spread(&per)
}

/// The tokens of the sequence a warm-up checks: `prompt`, then `fed` at every later position.
pub fn checked_sequence(cfg: &Config, prompt: u32, fed: u32) -> Vec<u32> {
    let mut t = vec![fed; cfg.context];
    if let Some(first) = t.first_mut() {
        *first = prompt;
    }
    t
}

/// Whether `gpu_row` (the logits a decode run left for its first sequence at the last
/// position) is within the CPU twin's derived bound of the twin's full forward of `tokens`
/// (one sequence of the context) with parameters `gp` (`gpt::model`'s layout).
pub fn agrees_with_twin(
    cfg: &Config,
    gp: &[f32],
    tokens: &[u32],
    gpu_row: &[f32],
) -> Result<bool, String> {
    let net = Net::compile(&egpt::model(cfg, 1))?;
    let p = egpt::params(&net, cfg, gp)?;
    if tokens.len() != cfg.context || gpu_row.len() != cfg.vocab {
        return Err("a checked row needs one sequence of the context and a row of logits".into());
    }
    let mut twin = Twin::new(&net, p, 0.0);
    twin.set_tokens(&net, tokens);
    twin.set_targets(&net, &vec![IGNORE; tokens.len()]);
    twin.forward(&net);
    let r = match net.nodes.iter().rev().nth(1) {
        Some(Node::Linear { y, .. }) => y.act,
        _ => return Err("the model does not end in its head".into()),
    };
    let last = r.at + (cfg.context - 1) * cfg.vocab;
    Ok(gpu_row.iter().enumerate().all(|(i, &g)| {
        let (t, b) = (twin.acts[last + i], twin.bound.acts[last + i]);
        (f64::from(g) - f64::from(t)).abs() <= b
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config {
            vocab: 10,
            context: 4,
            width: 6,
            heads: 2,
            layers: 1,
        }
    }

    #[test]
    fn decode_costs_count_by_hand() {
        // One block of width 6, vocabulary 10, one sequence attending to 3 positions.
        let c = decode_cost(&cfg(), 1, 3);
        // 2 · (12·36 + 2·3·6 + 6·10) = 2 · 528.
        assert_eq!(c.flops, 1056.0);
        // Weights 12·36 + 13·6 + 12 + 60 + 6 + 6 = 594; activations 2·(6 + 108 + 6 + 10)
        // = 260; cache 2·12 read + 12 written = 36; 890 values of 4 bytes.
        assert_eq!(c.bytes, 3560.0);
        // Twice the batch: twice the FLOPs, the weights read once.
        let two = decode_cost(&cfg(), 2, 3);
        assert_eq!(two.flops, 2.0 * c.flops);
        assert!(two.bytes < 2.0 * c.bytes);
        assert!(two.intensity() > c.intensity());
        // The run: positions 1, 2, 3 after the prompt attend to 2, 3, 4.
        let run = decode_run_cost(&cfg(), 1, 1, 3);
        let each: f64 = (2..=4).map(|a| decode_cost(&cfg(), 1, a).flops).sum();
        assert_eq!(run.flops, each);
    }

    #[test]
    fn prefill_costs_count_by_hand_and_one_token_matches_a_step() {
        // One sequence of 4: 2·4·(12·36 + 60) + 2·6·4·5 = 3936 + 240.
        let p = prefill_cost(&cfg(), 1, 4);
        assert_eq!(p.flops, 4176.0);
        // A prompt of one token is one decode step at position 0: the same work.
        let one = prefill_cost(&cfg(), 1, 1);
        let step = decode_cost(&cfg(), 1, 1);
        assert_eq!(one.flops, step.flops);
        assert_eq!(one.bytes, step.bytes);
        // At the page's shape the prompt is far more intense than one decode step, and a
        // batch of 64 moves decoding towards it.
        let m = model();
        let prefill = prefill_cost(&m, 1, m.context as u64).intensity();
        let d1 = decode_run_cost(&m, 1, 1, steps_per_run(&m)).intensity();
        let d64 = decode_run_cost(&m, 64, 1, steps_per_run(&m)).intensity();
        assert!(d1 < 1.0, "decode at batch 1: {d1}");
        assert!(prefill > 5.0 * d1, "prefill {prefill} vs decode {d1}");
        assert!(d64 > 5.0 * d1, "batch 64 {d64} vs batch 1 {d1}");
    }

    #[test]
    fn settings_read_the_url_and_name_bad_values() {
        let (s, bad) = BatchSettings::from_query(&Query::parse("bmax=16"), false);
        assert_eq!(s.batches(), [1, 2, 4, 8, 16]);
        assert!(bad.is_empty());
        let (s, bad) = BatchSettings::from_query(&Query::parse("bmax=12"), true);
        assert_eq!(s, BatchSettings::default_for(true));
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].default, "8");
        assert_eq!(
            BatchSettings::default_for(false).batches(),
            [1, 2, 4, 8, 16, 32, 64]
        );
        let mut q = Query::default();
        s.write(&mut q);
        assert_eq!(BatchSettings::from_query(&q, false).0, s);
    }

    #[test]
    fn a_run_fills_its_rows_and_compares_the_ends() {
        let s = BatchSettings { max_batch: 4 };
        let mut b = Batching::new(s).reduce(BatchAction::Start(s));
        assert!(b.running);
        assert_eq!(b.rows.len(), 3);
        let ran = |ms| Cell::Ran {
            ms_per_step: ms,
            spread: 0.1,
            verified: true,
        };
        b = b.reduce(BatchAction::Measured {
            batch: 1,
            cell: ran(2.0),
        });
        assert_eq!(b.span(), None, "one batch compares with nothing");
        b = b.reduce(BatchAction::Measured {
            batch: 2,
            cell: ran(2.5),
        });
        // 1 token per 2 ms = 500/s; 2 per 2.5 ms = 800/s.
        assert_eq!(b.span(), Some(((1, 500.0), (2, 800.0))));
        let cancelled = b.reduce(BatchAction::Cancelled);
        assert!(!cancelled.running && cancelled.cancelled);
        assert_eq!(cancelled.rows[2].cell, Cell::Waiting);
        // A disagreeing run gives no rate.
        let wrong = b.reduce(BatchAction::Measured {
            batch: 4,
            cell: Cell::Ran {
                ms_per_step: 1.0,
                spread: 0.0,
                verified: false,
            },
        });
        assert!(wrong.any_wrong());
        assert_eq!(wrong.span(), Some(((1, 500.0), (2, 800.0))));
        // The roofline's points: decode's rate from its tokens/s.
        let m = model();
        let (ai, rate) = b.decode_point(&m, 1);
        let steps = steps_per_run(&m) as f64;
        let flops = decode_run_cost(&m, 1, 1, steps_per_run(&m)).flops;
        assert!(ai > 0.0);
        assert_eq!(rate, Some(flops / steps * 500.0 / 1e9));
        assert_eq!(b.decode_point(&m, 4).1, None);
        let (pai, prate) = b.prefill_point(&m);
        assert!(pai > ai && prate.is_none());
        let b = b.reduce(BatchAction::Prefill { ms: 2.0 });
        let want = prefill_cost(&m, 1, m.context as u64).flops / 2e6;
        assert_eq!(b.prefill_point(&m).1, Some(want));
        // New settings clear; the same keep.
        assert_eq!(b.reduce(BatchAction::Settings(s)), b);
        let other = BatchSettings { max_batch: 64 };
        assert!(b.reduce(BatchAction::Settings(other)).rows.is_empty());
        assert_eq!(per_step(&[30.0, 60.0, 45.0], 3), Some((15.0, 10.0)));
    }

    #[test]
    fn the_twin_check_accepts_its_own_row_and_refuses_a_moved_one() {
        let m = cfg();
        let gp = gpu_runtime::gpt::Model::new(m)
            .expect("a valid shape")
            .init_params(SEED);
        let tokens = checked_sequence(&m, 1, 7);
        assert_eq!(tokens, [1, 7, 7, 7]);
        // The twin's own row, from the same forward, is within its bound.
        let net = Net::compile(&egpt::model(&m, 1)).expect("compiles");
        let mut twin = Twin::new(&net, egpt::params(&net, &m, &gp).expect("layout"), 0.0);
        twin.set_tokens(&net, &tokens);
        twin.set_targets(&net, &[IGNORE; 4]);
        twin.forward(&net);
        let r = match net.nodes.iter().rev().nth(1) {
            Some(Node::Linear { y, .. }) => y.act,
            _ => unreachable!(),
        };
        let last = r.at + 3 * m.vocab;
        let mut row = twin.acts[last..last + m.vocab].to_vec();
        assert_eq!(agrees_with_twin(&m, &gp, &tokens, &row), Ok(true));
        row[3] += 0.01;
        assert_eq!(agrees_with_twin(&m, &gp, &tokens, &row), Ok(false));
        assert!(agrees_with_twin(&m, &gp, &tokens[..3], &row).is_err());
    }
}
