//! `bench gpt-decode [--batches 1,2,4,8,16,32,64] [--runs 3] [--vocab 64] [--context 32]
//! [--width 64] [--heads 4] [--layers 2]`: KV-cache decoding (`gpu_runtime::engine::decode`)
//! of a randomly initialised GPT (the `#/gpt` page's default shape; speed needs no trained
//! weights) for B sequences at once. Per batch: a warm-up run (prompt of one token, then
//! context − 1 steps in one submission) whose first sequence's last logits are checked
//! against the CPU twin's full forward within its derived bound, then `runs` timed runs of
//! the same steps (wall clock from an idle GPU to the queue reporting the run done). Prints a
//! Markdown table: milliseconds per step (median and spread over runs) and tokens per second.

use std::rc::Rc;
use std::time::Instant;

use gpu_runtime::engine::decode::Decoder;
use gpu_runtime::engine::gpt as egpt;
use gpu_runtime::engine::{twin::Twin, Net, Node};
use gpu_runtime::gpt::ops::IGNORE;
use gpu_runtime::gpt::Config;
use gpu_runtime::Gpu;

use crate::summary::median;

const SEED: u64 = 44;
const PROMPT: u32 = 1;
const FED: u32 = 7;

fn list(flag: &str, v: &str) -> Result<Vec<usize>, String> {
    v.split(',')
        .map(|x| {
            x.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=4096).contains(n))
                .ok_or_else(|| format!("{flag} wants numbers from 1 to 4096, not `{x}`"))
        })
        .collect()
}

/// Whether `row` is within the twin's bound of its full forward's last row for `tokens`.
fn agrees(cfg: &Config, gp: &[f32], tokens: &[u32], row: &[f32]) -> Result<bool, String> {
    let net = Net::compile(&egpt::model(cfg, 1))?;
    let mut twin = Twin::new(&net, egpt::params(&net, cfg, gp)?, 0.0);
    twin.set_tokens(&net, tokens);
    twin.set_targets(&net, &vec![IGNORE; tokens.len()]);
    twin.forward(&net);
    let Some(Node::Linear { y, .. }) = net.nodes.iter().rev().nth(1) else {
        return Err("the model does not end in its head".into());
    };
    let last = y.act.at + (cfg.context - 1) * cfg.vocab;
    Ok(row.iter().enumerate().all(|(i, &g)| {
        (f64::from(g) - f64::from(twin.acts[last + i])).abs() <= twin.bound.acts[last + i]
    }))
}

pub fn run(mut args: impl Iterator<Item = String>) -> Result<(), String> {
    let mut batches = vec![1, 2, 4, 8, 16, 32, 64];
    let mut runs = 3usize;
    let mut cfg = Config::default_for(64);
    while let Some(flag) = args.next() {
        let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let one = |v: &str| -> Result<usize, String> { Ok(list(&flag, v)?[0]) };
        match flag.as_str() {
            "--batches" => batches = list(&flag, &v)?,
            "--runs" => runs = one(&v)?,
            "--vocab" => cfg.vocab = one(&v)?,
            "--context" => cfg.context = one(&v)?,
            "--width" => cfg.width = one(&v)?,
            "--heads" => cfg.heads = one(&v)?,
            "--layers" => cfg.layers = one(&v)?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    cfg.validate().map_err(|e| e.to_string())?;
    if cfg.context < 2 {
        return Err("decoding needs a context of at least 2".into());
    }
    let gpu = Rc::new(Gpu::request_blocking().map_err(|e| e.to_string())?);
    let gp = gpu_runtime::gpt::Model::new(cfg)
        .map_err(|e| e.to_string())?
        .init_params(SEED);
    let steps = cfg.context - 1;
    let mut checked = vec![FED; cfg.context];
    checked[0] = PROMPT;
    println!(
        "GPT decode with a KV cache on {}: {} layers, {} heads, width {}, context {}, vocabulary {}; \
         {steps} steps per run, median of {runs} runs",
        gpu.adapter().name,
        cfg.layers,
        cfg.heads,
        cfg.width,
        cfg.context,
        cfg.vocab
    );
    println!();
    println!("| batch | ms / step (median) | spread | tokens/s | verified |");
    println!("|---:|---:|---:|---:|:---|");
    for b in batches {
        let mut d = pollster::block_on(Decoder::new(gpu.clone(), cfg, b, &gp))
            .map_err(|e| e.to_string())?;
        let e = |e: gpu_runtime::GpuError| e.to_string();
        d.prefill(&vec![vec![PROMPT]; b]).map_err(e)?;
        d.decode(&vec![FED; b]).map_err(e)?;
        d.chain(steps - 1).map_err(e)?;
        let (logits, _) = d.logits_ranges();
        let row = d
            .read_blocking(&[logits.read(gpu_runtime::engine::buffer::ACTS)])
            .map_err(e)?
            .remove(0);
        let ok = agrees(&cfg, &gp, &checked, &row[..cfg.vocab])?;
        let mut per_step = Vec::with_capacity(runs);
        for _ in 0..runs {
            d.wait().map_err(e)?;
            let t0 = Instant::now();
            d.rewind(1).map_err(e)?;
            d.chain(steps).map_err(e)?;
            d.wait().map_err(e)?;
            per_step.push(t0.elapsed().as_secs_f64() * 1e3 / steps as f64);
        }
        let ms = median(&per_step);
        let spread = per_step.iter().copied().fold(f64::MIN, f64::max)
            - per_step.iter().copied().fold(f64::MAX, f64::min);
        println!(
            "| {b} | {} | {} | {} | {} |",
            numbers::sig(ms, 3),
            numbers::sig(spread, 2),
            numbers::sig(b as f64 * 1e3 / ms, 3),
            if ok {
                "yes"
            } else {
                "NO (not within the twin's bound)"
            }
        );
    }
    Ok(())
}
