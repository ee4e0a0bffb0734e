//! `bench crossover [--widths 16,64,256,512] [--batches 1,16,256,1024,4096] [--runs 3]
//! [--min-ms 40] [--twin-max-gflop 4] [--wide auto|on|off]`: training steps per second of the 2-w-w-2 MLP (ReLU,
//! Adam, spiral; `mlp::crossover`) over widths × batch sizes, on the GPU (wgpu,
//! `gpu_runtime::crossover`: the train view's own loop), on the tuned CPU (`mlp::TunedTrainer`, `matrixmultiply` sgemm, one core)
//! and on the CPU twin (same formulas as the kernels, one core). Every figure is the median of
//! `--runs` whole runs, each at least `--min-ms` long (at least one step), with the spread
//! (max − min) / median. GPU runs start on a drained queue and end when every step has
//! finished. The twin is skipped where one of its steps would exceed `--twin-max-gflop`.
//! Prints a Markdown table and, per width, the batch size from which the GPU wins, and the
//! goal: GPU ÷ tuned CPU for 2-256-256-2 at batch 4,096 (≥ 20×). `--wide` pins the GPU's
//! wide-layer path (`training::PathOptions::tiled`: `auto` tiles layers of ≥ 64 × 64, `off` keeps
//! every layer on the per-element kernels, `on` tiles every layer) to compare them.

use std::rc::Rc;
use std::time::Instant;

use gpu_runtime::crossover::Runs;
use gpu_runtime::mlp::crossover::{self, median_spread, steps_for, Crossover, Point};
use gpu_runtime::mlp::tuned::flops_per_step;
use gpu_runtime::mlp::{CpuTrainer, Gemm, TunedTrainer};
use gpu_runtime::training::max_batch;
use gpu_runtime::{CancelToken, Gpu};

const POINTS: usize = 8192;
/// Most steps in one round of a timed GPU run (they are all queued before waiting).
const GPU_CAP: u32 = 4000;

struct Args {
    widths: Vec<usize>,
    batches: Vec<usize>,
    runs: usize,
    min_ms: f64,
    twin_max_gflop: f64,
    /// `--wide`: None = by width, Some(on) = forced.
    wide: Option<bool>,
}

fn list(value: &str, flag: &str, max: usize) -> Result<Vec<usize>, String> {
    value
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=max).contains(n))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("{flag} wants numbers from 1 to {max}, not `{value}`"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        widths: vec![16, 64, 256, 512],
        batches: vec![1, 16, 256, 1024, 4096],
        runs: crossover::RUNS,
        min_ms: 40.0,
        twin_max_gflop: 4.0,
        wide: None,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |lo: f64, hi: f64| {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .ok_or_else(|| format!("{flag} wants {lo} to {hi}, not `{value}`"))
        };
        match flag.as_str() {
            "--widths" => a.widths = list(&value, &flag, 2048)?,
            "--batches" => a.batches = list(&value, &flag, POINTS)?,
            "--runs" => a.runs = number(1.0, 20.0)? as usize,
            "--min-ms" => a.min_ms = number(1.0, 5000.0)?,
            "--twin-max-gflop" => a.twin_max_gflop = number(0.0, 1000.0)?,
            "--wide" => {
                a.wide = match value.as_str() {
                    "auto" => None,
                    "on" => Some(true),
                    "off" => Some(false),
                    _ => return Err(format!("--wide wants auto, on or off, not `{value}`")),
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// Steps/s of `runs` timed runs of `step`, each ≈ `min_ms` or one step (a pilot step sizes
/// them).
fn cpu_runs(runs: usize, min_ms: f64, mut step: impl FnMut()) -> Vec<f64> {
    // The first step allocates; the second is the pilot.
    step();
    let t = Instant::now();
    step();
    let n = steps_for(min_ms, t.elapsed().as_secs_f64() * 1e3, 100_000);
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                step();
            }
            n as f64 / t.elapsed().as_secs_f64()
        })
        .collect()
}

fn gpu_runs(
    gpu: &Rc<Gpu>,
    d: &crossover::Data,
    width: usize,
    batch: usize,
    a: &Args,
) -> Result<Vec<f64>, String> {
    let runs = Runs {
        count: a.runs,
        min_ms: a.min_ms,
        cap: GPU_CAP,
    };
    pollster::block_on(gpu_runtime::crossover::gpu_runs(
        gpu,
        d,
        width,
        batch,
        runs,
        gpu_runtime::training::PathOptions::tiled(a.wide),
        &CancelToken::default(),
    ))
    .map_err(|e| e.to_string())?
    .ok_or_else(|| "cancelled".to_string())
}

fn cell(runs: &[f64]) -> String {
    match median_spread(runs) {
        Some((m, s)) if m >= 100.0 => format!("{m:.0} ± {:.0} %", s * 100.0),
        Some((m, s)) => format!("{m:.2} ± {:.0} %", s * 100.0),
        None => "—".into(),
    }
}

pub fn run(args: impl Iterator<Item = String>) -> Result<(), String> {
    let a = parse(args)?;
    let start = Instant::now();
    let gpu = Rc::new(Gpu::request_blocking().map_err(|e| e.to_string())?);
    let ad = gpu.adapter().clone();
    println!(
        "adapter: {} ({}, {}, driver {})",
        ad.name, ad.device_type, ad.backend, ad.driver
    );
    if ad.is_software {
        println!("NOTE: software adapter — the GPU column is a CPU emulating a GPU.");
    }
    println!(
        "\nMLP 2-w-w-2, ReLU, Adam, spiral. Steps/s, median of {} runs ± (max − min)/median; each run ≥ {} ms.\n\
         tuned CPU: mlp::TunedTrainer on `matrixmultiply` sgemm, one thread; twin: mlp::CpuTrainer (the kernels' formulas and order), one thread.\n\
         GPU wide layers (fan-in and fan-out ≥ {}) as tiled matmuls: {}.\n",
        a.runs,
        a.min_ms,
        gpu_runtime::training::WIDE_MIN,
        match a.wide {
            None => "by width (default)",
            Some(true) => "every layer (--wide on)",
            Some(false) => "none (--wide off)",
        }
    );
    println!("| width | batch | MFLOP/step | GPU steps/s | tuned CPU steps/s | twin steps/s | GPU / tuned | GPU / twin | GPU GFLOP/s | tuned GFLOP/s |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let d = crossover::data(POINTS);
    let mut points = Vec::new();
    for &width in &a.widths {
        let net = crossover::net(width);
        for &batch in &a.batches {
            let gflop = flops_per_step(&net, batch) / 1e9;
            let gpu_r = if max_batch(&net, &gpu.buffer_limits()) < batch as u64 {
                Err("too large for this device's buffers".to_string())
            } else {
                gpu_runs(&gpu, &d, width, batch, &a)
            };
            let mut tuned = TunedTrainer::new(
                net.clone(),
                crossover::hyper(),
                net.init_params(1),
                batch,
                d.x.clone(),
                d.labels.clone(),
                d.order.clone(),
                Gemm::best(),
            );
            let cpu_r = cpu_runs(a.runs, a.min_ms, || tuned.step());
            let twin_r = if gflop <= a.twin_max_gflop {
                let mut twin = CpuTrainer::new(
                    net.clone(),
                    crossover::hyper(),
                    net.init_params(1),
                    batch,
                    d.x.clone(),
                    d.labels.clone(),
                    d.order.clone(),
                );
                cpu_runs(a.runs, a.min_ms, || twin.step())
            } else {
                Vec::new()
            };
            let g = gpu_r
                .as_ref()
                .ok()
                .and_then(|r| median_spread(r))
                .map(|m| m.0);
            let c = median_spread(&cpu_r).map_or(f64::NAN, |m| m.0);
            let t = median_spread(&twin_r).map(|m| m.0);
            let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) => format!("{:.2}×", x / y),
                _ => "—".into(),
            };
            println!(
                "| {width} | {batch} | {:.3} | {} | {} | {} | {} | {} | {} | {:.1} |",
                gflop * 1e3,
                match &gpu_r {
                    Ok(r) => cell(r),
                    Err(e) => format!("— ({e})"),
                },
                cell(&cpu_r),
                if twin_r.is_empty() {
                    "(skipped)".into()
                } else {
                    cell(&twin_r)
                },
                ratio(g, Some(c)),
                ratio(g, t),
                g.map_or("—".into(), |g| format!("{:.1}", g * gflop)),
                c * gflop,
            );
            points.push(Point {
                width,
                batch,
                gpu: g,
                cpu: c,
            });
        }
    }
    println!("\nCrossover (GPU against the tuned CPU):");
    for &width in &a.widths {
        let text = match crossover::crossover(&points, width) {
            Crossover::NoGpu => "no GPU figure".to_string(),
            Crossover::CpuEverywhere => "tuned CPU faster at every batch size".into(),
            Crossover::GpuEverywhere => "GPU faster at every batch size".into(),
            Crossover::GpuFrom { from } => format!("GPU faster from batch {from}"),
            Crossover::Mixed => "the lead changes more than once".into(),
        };
        println!("- 2-{width}-{width}-2: {text}");
    }
    // The goal point: the GPU ≥ 20× the tuned CPU at 2-256-256-2, batch 4096.
    if let Some(p) = points.iter().find(|p| p.width == 256 && p.batch == 4096) {
        match p.gpu {
            Some(g) => println!(
                "\nGoal: 2-256-256-2, batch 4096: GPU {g:.1} steps/s = {:.2}× the tuned CPU ({:.1} steps/s); goal ≥ 20×: {}",
                g / p.cpu,
                p.cpu,
                if g / p.cpu >= 20.0 { "met" } else { "NOT met" }
            ),
            None => println!("\nGoal: no GPU figure for 2-256-256-2 at batch 4096"),
        }
    }
    println!("\n(whole run: {:.1} s)", start.elapsed().as_secs_f64());
    Ok(())
}
