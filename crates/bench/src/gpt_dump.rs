//! `bench dump-kernels --dir DIR --gpt ASSET [--gpt-shape 2,4,64,16] [--gpt-batch 32]
//! [--gpt-lr 0.003] [--gpt-order-steps 60000] [--gpt-verify-steps 2]`: the `#/gpt` page's
//! training (its GPU defaults on the names: 2 layers, 4 heads, width 64, context 16, 32 texts
//! a step, Adam at 0.003; `page_models::gpt_train::TrainSettings::default_for`, seed 39 as
//! the page's driver) as the session makes it (`engine::gpt::Parts`: the layers, the windows'
//! buffer, the result slots) and the engine describes it, for `crates/bench/dawn/gpt.mjs`.
//!
//! Writes DIR/gpt/gpt.json — the engine's description (`engine_dump`), where the windows live
//! in the data buffer (byte offsets of the train and validation tokens and targets), the
//! model's token, target and loss ranges, the validation batches and the targets they count,
//! the first result slot, the bigram's validation loss on the same split (`gpt::bigram`, the
//! CPU reference the goal is stated against) — and `order.bin` (the documents of the first
//! `--gpt-order-steps` steps' batches, u32, `BatchOrder` of the seed as the session draws
//! them), plus the engine twin's first `--gpt-verify-steps` steps from the same start on the
//! same batches (`verify_after.bin`: per step the arena's parameters, m and v as f32;
//! `verify_bound.bin`: their bounds as f64; the JSON has each step's summed row losses and
//! bound). The twin is not re-synchronised between steps, so step k's bound is the
//! compounded first-order bound of the twin (`engine::twin`).

use gpu_runtime::engine::gpt::{Parts, Settings, DATA, RESULTS};
use gpu_runtime::engine::twin::Twin;
use gpu_runtime::engine::{buffer, Setup};
use gpu_runtime::gpt::asset::CorpusAsset;
use gpu_runtime::gpt::bigram::Bigram;
use gpu_runtime::gpt::data::{batch, BatchOrder};
use gpu_runtime::gpt::{Config, Corpus};

use crate::engine_dump;
use crate::json::{js, num_list};

/// The page driver's seed (`app::train_driver::gpt::SEED`): parameters and batch order.
const SEED: u64 = 39;

pub struct Args {
    pub asset: String,
    /// layers, heads, width, context.
    pub shape: [usize; 4],
    pub batch: usize,
    pub lr: f32,
    pub order_steps: usize,
    pub verify_steps: usize,
}

impl Args {
    pub fn new(asset: String) -> Self {
        Self {
            asset,
            shape: [2, 4, 64, 16],
            batch: 32,
            lr: 0.003,
            order_steps: 60_000,
            verify_steps: 2,
        }
    }

    /// Takes `flag value` if it is one of this dump's; Ok(false) if not.
    pub fn take(&mut self, flag: &str, value: &str) -> Result<bool, String> {
        let num = |lo: usize, hi: usize| {
            value
                .parse::<usize>()
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .ok_or_else(|| format!("{flag} wants {lo} to {hi}: `{value}`"))
        };
        match flag {
            "--gpt-shape" => {
                let v: Vec<usize> = value.split(',').filter_map(|x| x.parse().ok()).collect();
                self.shape = v.try_into().map_err(|_| {
                    format!("--gpt-shape wants layers,heads,width,context: `{value}`")
                })?;
            }
            "--gpt-batch" => self.batch = num(1, 1024)?,
            "--gpt-lr" => {
                self.lr = value
                    .parse::<f32>()
                    .ok()
                    .filter(|v| *v > 0.0 && *v <= 1.0)
                    .ok_or_else(|| format!("--gpt-lr wants (0, 1]: `{value}`"))?
            }
            "--gpt-order-steps" => self.order_steps = num(1, 1_000_000)?,
            "--gpt-verify-steps" => self.verify_steps = num(1, 10)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn bytes<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// The asset at `path` (`cargo xtask gpt-data` makes it), its corpus and the model of `shape`
/// (layers, heads, width, context) over its vocabulary: what every GPT bench loads.
pub fn load(path: &str, shape: [usize; 4]) -> Result<(CorpusAsset, Corpus, Config), String> {
    let raw = std::fs::read(path)
        .map_err(|e| format!("{path}: {e} (make it with `cargo xtask gpt-data --out target`)"))?;
    let asset = CorpusAsset::decode(&raw).map_err(|e| format!("{path}: {e}"))?;
    let corpus = asset.corpus();
    let [layers, heads, width, context] = shape;
    let cfg = Config {
        vocab: corpus.vocab.len(),
        context,
        width,
        heads,
        layers,
    };
    Ok((asset, corpus, cfg))
}

pub fn dump(dir: &str, a: &Args) -> Result<(), String> {
    let (asset, corpus, cfg) = load(&a.asset, a.shape)?;
    let [layers, heads, width, context] = a.shape;
    let settings = Settings {
        batch: a.batch,
        lr: a.lr,
    };
    let parts = Parts::new(cfg, &corpus, SEED, settings, None)?;
    let d = format!("{dir}/gpt");
    std::fs::create_dir_all(&d).map_err(|e| format!("{d}: {e}"))?;
    let write = |name: &str, b: Vec<u8>| {
        std::fs::write(format!("{d}/{name}"), b).map_err(|e| format!("{name}: {e}"))
    };
    let net = &parts.net;
    let mut order = BatchOrder::new(corpus.train.len(), SEED);
    let mut drawn: Vec<u32> = Vec::with_capacity(a.order_steps * a.batch);
    let mut first = Vec::new();
    for s in 0..a.order_steps {
        let idx = order.next(a.batch);
        if s < a.verify_steps {
            first.push(idx.clone());
        }
        drawn.extend(idx.iter().map(|&i| i as u32));
    }
    write("order.bin", bytes(&drawn))?;

    // The twin from the same start on the same batches.
    let mut twin = Twin::new(net, parts.params.clone(), a.lr);
    let (mut after, mut bound, mut losses) = (Vec::new(), Vec::new(), Vec::new());
    for idx in &first {
        let (tokens, targets) = batch(&corpus.train, idx, context);
        twin.set_tokens(net, &tokens);
        twin.set_targets(net, &targets);
        twin.step(net);
        after.extend_from_slice(&twin.params);
        after.extend_from_slice(&twin.m);
        after.extend_from_slice(&twin.v);
        bound.extend_from_slice(&twin.bound.params);
        bound.extend_from_slice(&twin.bound.m);
        bound.extend_from_slice(&twin.bound.v);
        let (l, lb) = twin.losses(net);
        let sum: f64 = l.iter().map(|&x| f64::from(x)).sum();
        let sum_bound: f64 = lb.iter().sum::<f64>() + 2.0 * l.len() as f64 * f64::EPSILON * sum;
        losses.push((sum, sum_bound));
    }
    write("verify_after.bin", bytes(&after))?;
    write("verify_bound.bin", bytes(&bound))?;
    let bigram = Bigram::fit(&corpus.train, cfg.vocab, context).loss(&corpus.val, context);

    let words = net.param_words();
    let desc = engine_dump::describe(
        net,
        &parts.params,
        Setup {
            extra: parts.extra,
            readback: parts.readback,
            ..Setup::adam(a.lr)
        },
    )?;
    let engine = engine_dump::description_json(&d, &desc)?;
    let at = |r: gpu_runtime::engine::Range| r.at * 4;
    let json = format!(
        "{{\"asset\":{},\"config\":{{\"vocab\":{},\"layers\":{layers},\"heads\":{heads},\"width\":{width},\"context\":{context}}},\
         \"batch\":{},\"lr\":{:e},\"seed\":{SEED},\"train_docs\":{},\"val_docs\":{},\"param_words\":{words},\
         \"data\":{},\"results\":{},\"acts\":{},\"deltas\":{},\"params\":{},\"m\":{},\"v\":{},\
         \"train_tokens\":{},\"train_targets\":{},\"val_tokens\":{},\"val_targets\":{},\
         \"tokens_at\":{},\"targets_at\":{},\"losses_at\":{},\"rows\":{},\"val_batches\":{},\"val_counted\":{},\"slot_at\":{},\
         \"order_steps\":{},\"bigram\":{:e},\
         \"verify\":{{\"steps\":{},\"loss_sums\":{},\"loss_bounds\":{}}},\"engine\":{engine}}}\n",
        js(&asset.name),
        cfg.vocab,
        a.batch,
        a.lr,
        corpus.train.len(),
        corpus.val.len(),
        js(DATA),
        js(RESULTS),
        js(buffer::ACTS),
        js(buffer::DELTAS),
        js(buffer::PARAMS),
        js(buffer::M),
        js(buffer::V),
        at(parts.train_tokens),
        at(parts.train_targets),
        at(parts.val_tokens),
        at(parts.val_targets),
        at(net.input.act),
        at(net.targets),
        at(net.losses),
        net.batch,
        parts.val_batches,
        parts.val_counted,
        at(parts.slots[0]),
        a.order_steps,
        bigram,
        first.len(),
        num_list(losses.iter().map(|l| format!("{:e}", l.0))),
        num_list(losses.iter().map(|l| format!("{:e}", l.1))),
    );
    write("gpt.json", json.into_bytes())?;
    println!(
        "wrote {d}/gpt.json: {} ({} train / {} val texts, vocabulary {}), shape {:?}, batch {}, \
         {} parameters, bigram {bigram:.4} nats/char, {} steps of order, twin after {} steps",
        asset.name,
        corpus.train.len(),
        corpus.val.len(),
        cfg.vocab,
        a.shape,
        a.batch,
        words,
        a.order_steps,
        first.len()
    );
    Ok(())
}
