//! The `#/gpt` page's samples written with the KV cache (`engine::decode::Decoder` and
//! `Writing`) against the way they were written before, a full forward per character on the
//! training session (`GptSession::request_logits`), on a real wgpu device (lavapipe under
//! `cargo xtask test`), at odd sizes (context 9, 3 heads of width 5, 2 blocks, 4 texts),
//! seeded:
//! - a decoder built with other parameters, loaded on the GPU from a session three steps into
//!   training (`Decoder::load_params_from`), writes the same texts, token for token, as the
//!   session's full forwards with the same seeded draws, at temperature 0 and at 0.8. The
//!   picks agree while the two paths' logits differ by less than what separates a pick from
//!   its neighbour (the top two logits at temperature 0; at 0.8 the draw's distance to a
//!   boundary of the cumulative weights, in logit units): the smallest margin, measured on the
//!   full forward's logits, must be ten times the largest difference between the two paths'
//!   logits where they picked from the same prefix (itself below 1e-4; `gpt_decode.rs` bounds
//!   it by the CPU twin's derived bound), so equality here is not luck;
//! - parameters loaded into a built decoder (`Decoder::load_params`) give bit for bit the
//!   logits of a decoder built with them (the same dispatches on the same bytes), and not
//!   those it was built with.
//!
//! Skipping the load from the session, or loading the other parameters, turns these red.
use std::rc::Rc;

use gpu_runtime::cpu_kernels::data::{random_vec, SplitMix64};
use gpu_runtime::engine::decode::{Decoder, Writing};
use gpu_runtime::engine::gpt::{pick, GptSession, Settings};
use gpu_runtime::gpt::{Config, Corpus, Model};
use gpu_runtime::Gpu;

fn gpu() -> Rc<Gpu> {
    Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ))
}

const SEED: u64 = 11;
const TEXTS: usize = 4;
/// Training steps before the samples.
const STEPS: u64 = 40;

const NAMES: [&str; 16] = [
    "emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail",
    "emily", "ella", "luna", "sofia", "avery", "mila",
];

fn corpus() -> Corpus {
    let docs: Vec<String> = NAMES
        .iter()
        .flat_map(|n| [n.to_string(), n.chars().rev().collect()])
        .collect();
    Corpus::new(docs.iter().map(String::as_str), 5)
}

fn cfg(vocab: usize) -> Config {
    Config {
        vocab,
        context: 9,
        width: 15,
        heads: 3,
        layers: 2,
    }
}

/// Seeded parameters with unit-spread embeddings and perturbed LayerNorms and biases (logits
/// spread wide enough that the picks have margins; GPT-2's tiny embeddings give logits near 0).
fn params(cfg: &Config, seed: u64) -> Vec<f32> {
    let m = Model::new(*cfg).expect("a valid shape");
    let mut p = m.init_params(seed);
    let noise = random_vec(p.len(), seed + 1);
    for (x, n) in p.iter_mut().zip(&noise) {
        *x += 0.3 * n;
    }
    let l = &m.layout;
    let e = l.wpe + cfg.context * cfg.width;
    p[l.wte..e].copy_from_slice(&random_vec(e - l.wte, seed + 2));
    p
}

fn seeds() -> Vec<u64> {
    (0..TEXTS as u64).map(|k| 1000 + 7 * k).collect()
}

fn u(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// How far a pick at `temperature` by draw `u` is from picking another token: the gap between
/// the top two logits at 0, else the distance of u·Σw to the nearest boundary of the
/// cumulative weights (as a share of Σw, in logit-like units: times the temperature).
fn margin(logits: &[f32], temperature: f32, u: f64) -> f64 {
    let mut sorted: Vec<f64> = logits.iter().map(|&x| f64::from(x)).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    if temperature <= 0.0 {
        return sorted[0] - sorted[1];
    }
    let m = sorted[0];
    let w: Vec<f64> = logits
        .iter()
        .map(|&x| ((f64::from(x) - m) / f64::from(temperature)).exp())
        .collect();
    let total: f64 = w.iter().sum();
    let r = u * total;
    let mut acc = 0.0;
    let mut nearest = f64::INFINITY;
    for wi in &w {
        acc += wi;
        nearest = nearest.min((acc - r).abs());
    }
    nearest / total * f64::from(temperature)
}

/// The texts as the page wrote them before: one at a time, a full forward of the session per
/// character, each text with its own seeded draws; the logits of each pick (by text), and the
/// smallest pick margin.
type Written = (Vec<Vec<u32>>, Vec<Vec<Vec<f32>>>, f64);

fn full_forward(s: &mut GptSession, temperature: f32) -> Written {
    let ctx = s.config().context;
    let mut least = f64::INFINITY;
    let mut rows = vec![Vec::new(); TEXTS];
    let texts = seeds()
        .iter()
        .zip(&mut rows)
        .map(|(&seed, rows)| {
            let mut rng = SplitMix64::new(seed);
            let mut text: Vec<u32> = Vec::new();
            loop {
                let mut prompt = vec![0u32];
                prompt.extend(&text);
                assert!(s.request_logits(&prompt).expect("a forward runs"));
                let logits = loop {
                    if let Some(l) = s.poll_logits().expect("logits") {
                        break l;
                    }
                    s.engine().wait().expect("idle");
                };
                rows.push(logits.clone());
                let draw = u(&mut rng);
                least = least.min(margin(&logits, temperature, draw));
                let token = pick(&logits, temperature, draw);
                if token == 0 || text.len() + 2 > ctx {
                    return text;
                }
                text.push(token);
            }
        })
        .collect();
    (texts, rows, least)
}

fn next_logits(d: &mut Decoder) -> Vec<f32> {
    assert!(d.request_next_logits().expect("a readback"));
    loop {
        if let Some(l) = d.poll_logits().expect("logits") {
            return l;
        }
        d.wait().expect("idle");
    }
}

/// The texts written together with the cache, from the boundary token, and every step's
/// logits (texts × vocab).
fn with_cache(d: &mut Decoder, cfg: &Config, temperature: f32) -> (Vec<Vec<u32>>, Vec<Vec<f32>>) {
    let mut w = Writing::new(&seeds(), temperature, cfg);
    let mut steps = Vec::new();
    d.prefill(&vec![vec![0u32]; TEXTS]).expect("prefill");
    loop {
        steps.push(next_logits(d));
        let Some(next) = w
            .take(&steps[steps.len() - 1])
            .expect("logits of every text")
        else {
            break;
        };
        d.decode(&next).expect("a decode step");
    }
    (w.texts().to_vec(), steps)
}

#[test]
fn samples_written_with_the_cache_are_the_full_forwards_samples() {
    let corpus = corpus();
    let cfg = cfg(corpus.vocab.len());
    let gpu = gpu();
    let settings = Settings { batch: 3, lr: 0.05 };
    let start = params(&cfg, SEED);
    let mut s = pollster::block_on(GptSession::with_settings(
        gpu.clone(),
        cfg,
        &corpus,
        SEED,
        settings,
        Some(&start),
    ))
    .expect("the session builds");
    s.step(STEPS).expect("training steps");
    // Built once, with parameters other than the session's; loaded from it before each set.
    let mut d = pollster::block_on(Decoder::new(gpu, cfg, TEXTS, &params(&cfg, SEED + 100)))
        .expect("the decoder builds");
    for temperature in [0.0f32, 0.8] {
        let (want, rows, least) = full_forward(&mut s, temperature);
        d.load_params_from(s.engine())
            .expect("the session's parameters");
        let (got, steps) = with_cache(&mut d, &cfg, temperature);
        // Where both paths picked from the same prefix, how far their logits are apart.
        let v = cfg.vocab;
        let mut apart = 0.0f64;
        for (k, rows) in rows.iter().enumerate() {
            for (row, step) in rows.iter().zip(&steps) {
                for (a, b) in row.iter().zip(&step[k * v..(k + 1) * v]) {
                    apart = apart.max(f64::from((a - b).abs()));
                }
            }
        }
        println!(
            "T = {temperature}: full forward {want:?}, smallest margin {least:e}, logits apart {apart:e}"
        );
        assert!(apart < 1e-4, "T = {temperature}: logits {apart:e} apart");
        assert!(
            least > 10.0 * apart,
            "T = {temperature}: a pick {least:e} from another, the paths {apart:e} apart: float differences could decide it"
        );
        assert_eq!(got, want, "T = {temperature}: KV cache vs full forward");
        assert!(
            want.iter().map(Vec::len).sum::<usize>() >= TEXTS,
            "texts that say nothing test nothing: {want:?}"
        );
    }
}

#[test]
fn parameters_loaded_into_a_decoder_give_a_fresh_decoders_logits() {
    let corpus = corpus();
    let cfg = cfg(corpus.vocab.len());
    let gpu = gpu();
    let (a, b) = (params(&cfg, 1), params(&cfg, 2));
    let build = |p: &[f32]| {
        pollster::block_on(Decoder::new(gpu.clone(), cfg, TEXTS, p)).expect("the decoder builds")
    };
    let (mut loaded, mut fresh, mut old) = (build(&a), build(&b), build(&a));
    loaded.load_params(&b).expect("parameters of the shape");
    let prompts: Vec<Vec<u32>> = (0..TEXTS as u32).map(|k| vec![0, 1 + k, 2 + k]).collect();
    let run = |d: &mut Decoder| {
        d.prefill(&prompts).expect("prefill");
        let mut all = next_logits(d);
        for step in 0..3u32 {
            let tokens: Vec<u32> = (0..TEXTS as u32).map(|k| (k + step) % 5).collect();
            d.decode(&tokens).expect("a decode step");
            all.extend(next_logits(d));
        }
        all
    };
    let (l, f, o) = (run(&mut loaded), run(&mut fresh), run(&mut old));
    assert_eq!(l, f, "loaded parameters vs a decoder built with them");
    assert_ne!(l, o, "the load changed nothing");
    assert!(
        loaded.load_params(&a[1..]).is_err(),
        "a vector of another shape"
    );
}
