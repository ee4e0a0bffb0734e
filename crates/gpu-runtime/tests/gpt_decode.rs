//! KV-cache decoding (`engine::decode`) against the CPU twin's full forward, on a real wgpu
//! device (lavapipe under `cargo xtask test`), at odd sizes (context 13, 3 heads of width 5,
//! 2 blocks, vocabulary 11, 3 sequences), seeded:
//! - a prompt of length P is prefilled, then positions P…12 are decoded one step at a time,
//!   each fed the sequence's own next token: the logits of every position (the prompt's from
//!   the prefill, the rest from the decode steps) are within the twin's derived bound of the
//!   twin's full forward over the whole sequences, for P = 1 and P = 6;
//! - steps chained in one submission (the position advanced on the GPU, every step fed the
//!   same token) end at the twin's logits for that sequence;
//! - the bound is not vacuous: its widest is below a tenth of the largest
//!   logit; planted bugs (the decode step's cache write one position late, attention over
//!   one key too few) turn this test red.
use std::rc::Rc;

use gpu_runtime::engine::decode::Decoder;
use gpu_runtime::engine::gpt as egpt;
use gpu_runtime::engine::{buffer, twin::Twin, Net};
use gpu_runtime::gpt::ops::IGNORE;
use gpu_runtime::gpt::Config;
use gpu_runtime::Gpu;

fn gpu() -> Rc<Gpu> {
    Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ))
}

const SEED: u64 = 7;
const SEQS: usize = 3;

fn cfg() -> Config {
    Config {
        vocab: 11,
        context: 13,
        width: 15,
        heads: 3,
        layers: 2,
    }
}

/// Seeded parameters with unit-spread embeddings and perturbed LayerNorms and biases, as
/// `gpt_engine.rs` starts (GPT-2's tiny embeddings would widen every bound by 1/σ).
fn start(cfg: &Config) -> Vec<f32> {
    let m = gpu_runtime::gpt::Model::new(*cfg).expect("a valid shape");
    let mut p = m.init_params(SEED);
    let noise = gpu_runtime::cpu_kernels::data::random_vec(p.len(), 8);
    for (x, n) in p.iter_mut().zip(&noise) {
        *x += 0.1 * n;
    }
    let l = &m.layout;
    let e = l.wpe + cfg.context * cfg.width;
    let unit = gpu_runtime::cpu_kernels::data::random_vec(e - l.wte, 9);
    p[l.wte..e].copy_from_slice(&unit);
    p
}

/// Seeded tokens below `vocab` (a 64-bit LCG's high bits).
fn tokens(n: usize, vocab: usize, seed: u64) -> Vec<u32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % vocab as u64) as u32
        })
        .collect()
}

/// The twin's full forward over `seqs` sequences of `context` tokens: its logits and their
/// bounds (rows seq·context + position).
fn twin_logits(cfg: &Config, gp: &[f32], toks: &[u32]) -> (Vec<f32>, Vec<f64>) {
    let net = Net::compile(&egpt::model(cfg, SEQS)).expect("compiles");
    let p = egpt::params(&net, cfg, gp).expect("the layouts match");
    let mut twin = Twin::new(&net, p, 0.0);
    twin.set_tokens(&net, toks);
    twin.set_targets(&net, &vec![IGNORE; toks.len()]);
    twin.forward(&net);
    let r = match net.nodes.iter().rev().nth(1) {
        Some(gpu_runtime::engine::Node::Linear { y, .. }) => y.act,
        _ => panic!("the model ends in its head"),
    };
    (
        twin.acts[r.words()].to_vec(),
        twin.bound.acts[r.words()].to_vec(),
    )
}

/// |gpu − twin| ≤ bound for a row of logits.
fn row_within(what: &str, gpu: &[f32], twin: &[f32], bound: &[f64]) {
    assert_eq!(gpu.len(), twin.len(), "{what}: length");
    for (i, ((&g, &t), &b)) in gpu.iter().zip(twin).zip(bound).enumerate() {
        let e = (g as f64 - t as f64).abs();
        assert!(
            e <= b,
            "{what}[{i}]: GPU {g}, twin {t}, apart {e:e}, bound {b:e}"
        );
    }
}

#[test]
fn decoding_with_the_cache_matches_the_full_forward_at_every_position() {
    let cfg = cfg();
    let (t, v) = (cfg.context, cfg.vocab);
    let gp = start(&cfg);
    let toks = tokens(SEQS * t, v, SEED);
    let (want, bound) = twin_logits(&cfg, &gp, &toks);
    let spread = want.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let widest = bound.iter().fold(0.0f64, |m, &x| m.max(x));
    println!("logits up to {spread}, bounds up to {widest:e}");
    assert!(
        widest < 0.1 * f64::from(spread),
        "a bound of {widest:e} is too wide for logits up to {spread}"
    );
    let gpu = gpu();
    for prompt_len in [1, 6] {
        let mut d = pollster::block_on(Decoder::new(gpu.clone(), cfg, SEQS, &gp))
            .expect("the decoder builds");
        let prompts: Vec<Vec<u32>> = (0..SEQS)
            .map(|s| toks[s * t..s * t + prompt_len].to_vec())
            .collect();
        d.prefill(&prompts).expect("prefill");
        let (step_logits, prompt_logits) = d.logits_ranges();
        let got = d
            .read_blocking(&[prompt_logits.read(buffer::ACTS)])
            .expect("read")
            .remove(0);
        for s in 0..SEQS {
            for p in 0..prompt_len {
                let row = (s * t + p) * v..(s * t + p + 1) * v;
                row_within(
                    &format!("P={prompt_len}: prompt seq {s} pos {p}"),
                    &got[row.clone()],
                    &want[row.clone()],
                    &bound[row],
                );
            }
        }
        for p in prompt_len..t {
            let step: Vec<u32> = (0..SEQS).map(|s| toks[s * t + p]).collect();
            d.decode(&step).expect("decode");
            let got = d
                .read_blocking(&[step_logits.read(buffer::ACTS)])
                .expect("read")
                .remove(0);
            for s in 0..SEQS {
                let row = (s * t + p) * v..(s * t + p + 1) * v;
                row_within(
                    &format!("P={prompt_len}: decoded seq {s} pos {p}"),
                    &got[s * v..(s + 1) * v],
                    &want[row.clone()],
                    &bound[row],
                );
            }
        }
        assert_eq!(d.position(), t);
        assert!(d.decode(&[0; SEQS]).is_err(), "a step past the context");
    }
}

#[test]
fn steps_chained_in_one_submission_advance_the_position_on_the_gpu() {
    let cfg = cfg();
    let (t, v) = (cfg.context, cfg.vocab);
    let gp = start(&cfg);
    let prompt_len = 4;
    let fed = [3u32, 9, 0];
    // Each sequence: its prompt, then the one token it is fed at every step.
    let mut toks = tokens(SEQS * t, v, SEED + 1);
    for s in 0..SEQS {
        for p in prompt_len..t {
            toks[s * t + p] = fed[s];
        }
    }
    let (want, bound) = twin_logits(&cfg, &gp, &toks);
    let mut d =
        pollster::block_on(Decoder::new(gpu(), cfg, SEQS, &gp)).expect("the decoder builds");
    let prompts: Vec<Vec<u32>> = (0..SEQS)
        .map(|s| toks[s * t..s * t + prompt_len].to_vec())
        .collect();
    d.prefill(&prompts).expect("prefill");
    d.decode(&fed).expect("the first step writes the tokens");
    d.chain(t - prompt_len - 1)
        .expect("the rest in one submission");
    let got = d
        .read_blocking(&[d.logits_ranges().0.read(buffer::ACTS)])
        .expect("read")
        .remove(0);
    for s in 0..SEQS {
        let row = (s * t + t - 1) * v..(s * t + t) * v;
        row_within(
            &format!("chained seq {s}"),
            &got[s * v..(s + 1) * v],
            &want[row.clone()],
            &bound[row],
        );
    }
    // Rewound, the same steps again give the same numbers (a measurement's runs).
    d.rewind(prompt_len + 1).expect("rewind");
    d.chain(t - prompt_len - 1).expect("again");
    let again = d
        .read_blocking(&[d.logits_ranges().0.read(buffer::ACTS)])
        .expect("read")
        .remove(0);
    assert_eq!(got, again);
}
