//! `bench gpt-cpu [--asset target/gpt-names.txt] [--shape 2,4,64,16] [--batch 32]
//! [--lr 0.003] [--runs 3] [--min-ms 1000] [--no-twin] [--out FILE]`: the `#/gpt` page's
//! training step on one CPU core — the CPU side of issue 39's "training step ≥ 20× the tuned
//! CPU". Defaults are the page's GPU defaults on the names (2 layers, 4 heads, width 64,
//! context 16, 32 windows a step, Adam at 0.003: `page_models::gpt_train::TrainSettings::
//! default_for`, seed 39 as the page's driver), as `bench dump-kernels --gpt` dumps them for
//! `dawn/gpt.mjs`.
//!
//! 1. **Tuned CPU** (`gpt::tuned::TunedTrainer`: every product a `matrixmultiply` sgemm,
//!    single-threaded, this thread only): per run a fresh trainer from the seed, one warm-up
//!    step, then steps until `--min-ms` have passed (at least 3); ms per step (wall clock).
//! 2. **The twin** (`gpt::train::Trainer`, the plain loops every kernel is checked against):
//!    the same, for comparison (`--no-twin` skips it).
//!
//! Each is the median of `--runs` runs with the spread (min–max). `tests/tuned.rs` in the gpt
//! crate holds the tuned trainer to the twin; a run whose loss is not finite is an error.
//! Rows go to `--out` as TSV (`what batch runs median min max unit extra`, as `bench cnn`).

use std::time::Instant;

use gpu_runtime::gpt::train::Trainer;
use gpu_runtime::gpt::tuned::{flops_per_step, Gemm, TunedTrainer};
use gpu_runtime::gpt::Model;

use crate::summary::{median, min_max};

/// The page driver's seed (`app::train_driver::gpt::SEED`): parameters and batch order.
const SEED: u64 = 39;

#[derive(Debug)]
struct Args {
    asset: String,
    /// layers, heads, width, context.
    shape: [usize; 4],
    batch: usize,
    lr: f32,
    runs: usize,
    min_ms: f64,
    twin: bool,
    out: Option<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        asset: "target/gpt-names.txt".into(),
        shape: [2, 4, 64, 16],
        batch: 32,
        lr: 0.003,
        runs: 3,
        min_ms: 1000.0,
        twin: true,
        out: None,
    };
    while let Some(flag) = args.next() {
        if flag == "--no-twin" {
            a.twin = false;
            continue;
        }
        let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |lo: usize, hi: usize| {
            v.parse::<usize>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| format!("{flag} wants {lo} to {hi}, not `{v}`"))
        };
        match flag.as_str() {
            "--asset" => a.asset = v,
            "--shape" => {
                let s: Vec<usize> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
                a.shape = s
                    .try_into()
                    .map_err(|_| format!("--shape wants layers,heads,width,context, not `{v}`"))?;
            }
            "--batch" => a.batch = num(1, 4096)?,
            "--runs" => a.runs = num(1, 100)?,
            "--lr" => {
                a.lr = v
                    .parse::<f32>()
                    .ok()
                    .filter(|x| *x > 0.0 && *x <= 1.0)
                    .ok_or_else(|| format!("--lr wants (0, 1], not `{v}`"))?
            }
            "--min-ms" => {
                a.min_ms = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| (1.0..=600_000.0).contains(x))
                    .ok_or_else(|| format!("--min-ms wants 1 to 600000, not `{v}`"))?
            }
            "--out" => a.out = Some(v),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// One whole run of `step` (this thread): one warm-up step, then steps until `min_ms` have
/// passed (at least 3); (ms per step, steps timed, last loss).
fn timed(min_ms: f64, mut step: impl FnMut() -> f32) -> Result<(f64, usize, f32), String> {
    step();
    let clock = Instant::now();
    let (mut n, mut loss) = (0usize, 0.0f32);
    while n < 3 || clock.elapsed().as_secs_f64() * 1e3 < min_ms {
        loss = step();
        n += 1;
    }
    let ms = clock.elapsed().as_secs_f64() * 1e3 / n as f64;
    if !loss.is_finite() {
        return Err(format!("the loss is {loss}"));
    }
    Ok((ms, n, loss))
}

pub fn run(args: impl Iterator<Item = String>) -> Result<(), String> {
    let a = parse(args)?;
    let (_, corpus, cfg) = crate::gpt_dump::load(&a.asset, a.shape)?;
    let [layers, heads, width, context] = a.shape;
    let model = Model::new(cfg).map_err(|e| e.to_string())?;
    let docs = &corpus.train;
    let gemm = Gemm::best();
    let flops = flops_per_step(&model, a.batch);
    println!(
        "GPT step on one CPU core ({} available to this process): {layers} layers, {heads} heads, \
         width {width}, context {context}, vocabulary {}, {} windows a step, Adam {}; \
         {} train names; median of {} runs, each ≥ {} ms of steps",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cfg.vocab,
        a.batch,
        a.lr,
        docs.len(),
        a.runs,
        a.min_ms
    );
    let mut tsv = vec!["what\tbatch\truns\tmedian\tmin\tmax\tunit\textra".to_string()];
    let mut rows = Vec::new();
    let mut tuned_ms = Vec::new();
    for run in 0..a.runs {
        let mut t = TunedTrainer::new(model.clone(), docs.len(), a.batch, a.lr, SEED, gemm);
        let (ms, n, loss) = timed(a.min_ms, || t.step(docs))?;
        println!(
            "tuned CPU ({}) run {}: {ms:.3} ms/step ({n} steps, last loss {loss:.4})",
            gemm.code(),
            run + 1
        );
        tuned_ms.push(ms);
    }
    rows.push((
        format!("tuned CPU ({}), one core", gemm.code()),
        "gpt-cpu-tuned-step",
        tuned_ms,
    ));
    if a.twin {
        let mut twin_ms = Vec::new();
        for run in 0..a.runs {
            let mut t = Trainer::new(model.clone(), docs.len(), a.batch, a.lr, SEED);
            let (ms, n, loss) = timed(a.min_ms, || t.step(docs))?;
            println!(
                "twin run {}: {ms:.3} ms/step ({n} steps, last loss {loss:.4})",
                run + 1
            );
            twin_ms.push(ms);
        }
        rows.push(("CPU twin, one core".into(), "gpt-cpu-twin-step", twin_ms));
    }
    let tuned_med = median(&rows[0].2);
    println!();
    println!("| trainer | ms / step (median) | spread | steps/s | GFLOP/s (products) | vs the tuned CPU |");
    println!("|:---|---:|---:|---:|---:|---:|");
    for (name, what, ms) in &rows {
        let med = median(ms);
        let (lo, hi) = min_max(ms);
        println!(
            "| {name} | {med:.3} | {lo:.3}–{hi:.3} | {:.1} | {:.2} | {:.2}× |",
            1e3 / med,
            flops / (med * 1e6),
            med / tuned_med
        );
        tsv.push(format!(
            "{what}\t{}\t{}\t{med}\t{lo}\t{hi}\tms\tshape {layers},{heads},{width},{context} vocab {} gflops {:.3}",
            a.batch,
            ms.len(),
            cfg.vocab,
            flops / (med * 1e6)
        ));
    }
    if let Some(path) = &a.out {
        std::fs::write(path, tsv.join("\n") + "\n").map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_pages_gpu_defaults_on_the_names() {
        let p = |v: &[&str]| parse(v.iter().map(|s| s.to_string()));
        let a = p(&[]).expect("valid");
        assert_eq!(
            (a.shape, a.batch, a.lr, a.twin),
            ([2, 4, 64, 16], 32, 0.003, true)
        );
        let a = p(&["--no-twin", "--shape", "1,2,16,8", "--runs", "5"]).expect("valid");
        assert_eq!((a.shape, a.runs, a.twin), ([1, 2, 16, 8], 5, false));
        assert!(p(&["--shape", "1,2"]).is_err());
        assert!(p(&["--runs", "0"]).is_err());
    }
}
