//! The twin on the real corpora: a small slice of each asset `cargo xtask gpt-data` writes
//! (English first names, Tang five-character quatrains), split with the assets' seed, trained
//! for a bounded number of steps; its validation loss must fall below the bigram's on the same
//! split (the counting baseline the page compares against).
//!
//! Needs the assets in `$GPT_DATA_DIR` or `target/` (`cargo xtask gpt-data --out target`);
//! without them each test reports itself skipped (see [`skipped`]) and passes. `cargo xtask
//! test` writes them first, so there they run.

use gpt::asset::{CorpusAsset, Dataset, SPLIT_SEED};
use gpt::bigram::Bigram;
use gpt::train::Trainer;
use gpt::{Config, Corpus, Model};
use std::io::Write;
use std::path::PathBuf;

/// Says that a check did not run, written to the process's stdout directly: the test harness
/// captures `print!`, and `cargo xtask test` counts `SKIPPED:` lines as skips.
fn skipped(what: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "SKIPPED: {what}");
    let _ = out.flush();
}

/// The asset of `d`, decoded, or `None` after reporting `test` skipped.
fn asset_or_skip(d: Dataset, test: &str) -> Option<CorpusAsset> {
    let dir = std::env::var_os("GPT_DATA_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    let path = dir.join(format!("{}.txt", d.key()));
    match std::fs::read(&path) {
        Ok(bytes) => Some(CorpusAsset::decode(&bytes).expect("the built asset decodes")),
        Err(e) => {
            skipped(&format!(
                "{test}: no corpus at {} ({e}; write it with `cargo xtask gpt-data --out {}`)",
                path.display(),
                dir.display()
            ));
            None
        }
    }
}

/// Trains on `docs` documents of `asset`, evenly spaced through it (the names are sorted: a
/// prefix would be names from A to C), split with [`SPLIT_SEED`], for `steps` steps; returns
/// (bigram, model at start, model at end), validation nats per character.
fn train_slice(asset: &CorpusAsset, docs: usize, cfg: Config, steps: usize) -> (f64, f64, f64) {
    let stride = (asset.docs.len() / docs).max(1);
    let slice = asset.docs.iter().step_by(stride).take(docs);
    let corpus = Corpus::new(slice.map(String::as_str), SPLIT_SEED);
    let cfg = Config {
        vocab: corpus.vocab.len(),
        ..cfg
    };
    let bigram = Bigram::fit(&corpus.train, cfg.vocab, cfg.context).loss(&corpus.val, cfg.context);
    let model = Model::new(cfg).expect("valid configuration");
    let mut t = Trainer::new(model, corpus.train.len(), 32, 1e-2, 5);
    let start = t.eval(&corpus.val, 64);
    for _ in 0..steps {
        let loss = t.step(&corpus.train);
        assert!(loss.is_finite(), "loss {loss} at step {}", t.step);
    }
    let end = t.eval(&corpus.val, 64);
    let mut rng = cpu_kernels::data::SplitMix64::new(1);
    let samples: Vec<String> = (0..5)
        .map(|_| corpus.vocab.decode(&t.sample(0.8, &mut rng)))
        .collect();
    println!(
        "{}: {} train / {} val documents, vocabulary {}: bigram {bigram:.3}, model {start:.3} \
         → {end:.3} nats/char after {steps} steps; samples {samples:?}",
        asset.name,
        corpus.train.len(),
        corpus.val.len(),
        cfg.vocab,
    );
    (bigram, start, end)
}

#[test]
fn names_beat_the_bigram() {
    let Some(asset) = asset_or_skip(Dataset::Names, "names_beat_the_bigram") else {
        return;
    };
    assert_eq!(asset.vocab_len(), 28, "a–z, '-' and the boundary");
    let cfg = Config {
        vocab: 0,
        context: 16,
        width: 32,
        heads: 4,
        layers: 2,
    };
    let (bigram, start, end) = train_slice(&asset, 2000, cfg, 200);
    assert!(start > bigram, "untrained {start:.3} vs bigram {bigram:.3}");
    assert!(end < bigram, "model {end:.3} vs bigram {bigram:.3}");
}

#[test]
fn quatrains_beat_the_bigram() {
    let Some(asset) = asset_or_skip(Dataset::Poems, "quatrains_beat_the_bigram") else {
        return;
    };
    assert_eq!(asset.vocab_len(), 3730);
    // 24 characters and the boundary fill the context.
    let cfg = Config {
        vocab: 0,
        context: 25,
        width: 32,
        heads: 4,
        layers: 2,
    };
    let (bigram, start, end) = train_slice(&asset, 400, cfg, 100);
    assert!(start > bigram, "untrained {start:.3} vs bigram {bigram:.3}");
    assert!(end < bigram, "model {end:.3} vs bigram {bigram:.3}");
}
