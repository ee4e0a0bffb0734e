//! A prompt's attention maps from a GPT session (`engine::gpt::attention`), on a real wgpu
//! device (lavapipe under `cargo xtask test`), at odd sizes (context 7, 3 heads of width 4,
//! 2 blocks, batches of 3 windows) after two training steps:
//! - every probability of every layer and head over the prompt's positions is within the CPU
//!   twin's derived bound of the twin's (recomputed from the parameters read back with
//!   them), each row sums to 1 within that bound and nothing falls after its own position;
//! - the maps' forward leaves the last step's row losses as they were (the page's training
//!   chunk reads them after it), and the next step trains on its own batch;
//! - a prompt that is empty, longer than the context or outside the vocabulary is refused.
use std::rc::Rc;

use gpu_runtime::engine::buffer;
use gpu_runtime::engine::gpt::{GptSession, Maps, Settings};
use gpu_runtime::gpt::{Config, Corpus};
use gpu_runtime::Gpu;

const NAMES: [&str; 12] = [
    "emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail",
    "emily", "ella",
];

fn session() -> GptSession {
    let gpu = Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ));
    let docs: Vec<String> = NAMES
        .iter()
        .flat_map(|n| [n.to_string(), n.chars().rev().collect()])
        .collect();
    let corpus = Corpus::new(docs.iter().map(String::as_str), 11);
    let cfg = Config {
        vocab: corpus.vocab.len(),
        context: 7,
        width: 12,
        heads: 3,
        layers: 2,
    };
    let settings = Settings { batch: 3, lr: 0.05 };
    pollster::block_on(GptSession::with_settings(
        gpu, cfg, &corpus, 3, settings, None,
    ))
    .expect("the session builds")
}

fn maps(s: &mut GptSession, tokens: &[u32]) -> Maps {
    assert!(s.request_attention(tokens).expect("a forward runs"));
    assert!(s.attention_pending());
    loop {
        if let Some(m) = s.poll_attention().expect("maps") {
            return m;
        }
        s.engine().wait().expect("idle");
    }
}

fn losses(s: &mut GptSession) -> Vec<f32> {
    let r = s.net().losses.read(buffer::DELTAS);
    s.engine().read_blocking(&[r]).expect("read back").remove(0)
}

#[test]
fn attention_maps_match_the_twin_and_leave_training_alone() {
    let mut s = session();
    s.step(2).expect("steps run");
    let before = losses(&mut s);
    let tokens = [0u32, 5, 1, 9, 2];
    let m = maps(&mut s, &tokens);
    assert_eq!((m.steps, m.tokens.as_slice()), (2, &tokens[..]));
    assert_eq!(m.probs.len(), 2, "one map per layer");
    let c = m.check().expect("the twin runs");
    println!(
        "largest |GPU - twin| {:e}, largest bound {:e}",
        c.max_diff, c.max_bound
    );
    assert!(c.within, "GPU maps outside the twin's bound");
    // Probabilities of a few positions are tenths: a bound of hundredths still sees a wrong map.
    assert!(c.max_bound < 1e-2, "a bound too wide to see anything");
    let n = tokens.len();
    for layer in 0..2 {
        for head in 0..3 {
            for i in 0..n {
                let row: f64 = (0..n).map(|j| f64::from(m.prob(layer, head, i, j))).sum();
                assert!((row - 1.0).abs() <= 1e-5, "row {i} sums to {row}");
                for j in i + 1..n {
                    assert_eq!(m.prob(layer, head, i, j), 0.0, "({i}, {j}) looks ahead");
                }
            }
        }
    }
    assert_eq!(
        losses(&mut s),
        before,
        "the maps' forward touched the row losses"
    );

    // The next step copies its own batch in: its losses are a real batch's, not zeros.
    s.step(1).expect("a step runs");
    assert!(losses(&mut s).iter().any(|&l| l > 0.0));
}

#[test]
fn bad_prompts_are_refused() {
    let mut s = session();
    let v = s.config().vocab as u32;
    assert!(s.request_attention(&[]).is_err());
    assert!(s.request_attention(&[0; 8]).is_err());
    assert!(s.request_attention(&[0, v]).is_err());
    assert!(!s.attention_pending());
}
