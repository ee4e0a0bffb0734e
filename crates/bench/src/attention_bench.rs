//! `bench attention [--seqs 64,256,1024,2048,4096] [--bh 32] [--d 64]
//! [--runs 3] [--reps 5] [--warm-ms 300] [--checked] [--out FILE]`: causal attention, naive
//! (scores and probabilities in memory) and fused (online softmax), at each sequence length,
//! through the same plans as the app ([`gpu_runtime::attention::run_attention`]). The memory
//! wall's experiment: for each length, time (TFLOP/s counted as PyTorch's anchor counts a
//! causal forward, 4·bh·n²·d / 2), the largest buffer each path allocates, and where naive
//! attention no longer fits the adapter's largest binding (reported as "does not fit", with
//! the longest length that would). Each of `runs` whole runs uploads, runs warm-up passes
//! worth `--warm-ms` of GPU time (from a pilot; at least 2), then `reps` timed passes (GPU
//! timestamps around each pass; a naive pass holds its three dispatches); a run's figure is
//! its median pass, the table gives the median over runs and the spread. Every run is verified
//! on a seeded sample of 512 rows (first and last included) against the f64 reference.
//! `crates/bench/torch_sdpa.py` times PyTorch's `scaled_dot_product_attention` alike.

use gpu_runtime::attention::{rows_to_check, run_attention, verify, AttentionPath, AttnLayout};
use gpu_runtime::cpu_kernels::data::random_vec;
use gpu_runtime::{Gpu, GpuError, RunControl, RunOptions, SizeError, TimingMethod};

use crate::summary::median;

/// The seed of the q, k and v at sequence length `n` (`bench dump-kernels` writes the same).
pub fn qkv_seed(n: u32) -> u64 {
    0xA77E + n as u64
}

/// Rows each run checks (all of them when there are fewer), seeded with n.
pub const CHECKED_ROWS: usize = 512;

struct Args {
    seqs: Vec<u32>,
    bh: u32,
    d: u32,
    runs: usize,
    reps: u32,
    warm_ms: f64,
    checked: bool,
    out: Option<String>,
}

/// A comma-separated list of whole numbers in `range`, or a message naming the flag.
pub(crate) fn numbers(
    flag: &str,
    value: &str,
    range: std::ops::RangeInclusive<u32>,
) -> Result<Vec<u32>, String> {
    value
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| range.contains(n))
                .ok_or_else(|| format!("{flag} wants numbers in {range:?}, not `{v}`"))
        })
        .collect()
}

/// `--warm-ms`: milliseconds of warm-up GPU time, 0 to 10,000.
pub(crate) fn warm_ms(value: &str) -> Result<f64, String> {
    value
        .parse()
        .ok()
        .filter(|w: &f64| (0.0..=10_000.0).contains(w))
        .ok_or_else(|| format!("--warm-ms wants 0 to 10000, not `{value}`"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        seqs: vec![64, 256, 1024, 2048, 4096],
        bh: 32,
        d: 64,
        runs: 3,
        reps: 5,
        warm_ms: 300.0,
        checked: false,
        out: None,
    };
    while let Some(flag) = args.next() {
        if flag == "--checked" {
            a.checked = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--seqs" => a.seqs = numbers(&flag, &value, 1..=65_535)?,
            "--bh" => a.bh = numbers(&flag, &value, 1..=65_535)?[0],
            "--d" => a.d = numbers(&flag, &value, 1..=64)?[0],
            "--runs" => a.runs = numbers(&flag, &value, 1..=50)?[0] as usize,
            "--reps" => a.reps = numbers(&flag, &value, 1..=200)?[0],
            "--warm-ms" => a.warm_ms = warm_ms(&value)?,
            "--out" => a.out = Some(value),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

pub fn run(args: impl Iterator<Item = String>) -> Result<(), String> {
    let a = parse(args)?;
    let gpu = Gpu::request_blocking().map_err(|e| e.to_string())?;
    let info = gpu.adapter();
    println!("adapter: {} ({}, {})", info.name, info.backend, info.driver);
    if info.is_software {
        println!("NOTE: software adapter — these are CPU numbers, not GPU numbers.");
    }
    gpu.set_runtime_checks(a.checked);
    let path_name = if a.checked { "wgpu" } else { "wgpu-trusted" };
    println!(
        "\ncausal attention, {} problems, head width {}, {path_name}; median of {} runs (fastest–slowest)\n",
        a.bh, a.d, a.runs
    );
    println!(
        "| path | n | TFLOP/s | min–max | ms | largest buffer MiB | verified (error / bound) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
    let mut tsv = vec![
        "path\tkernel\tn\ttflops_median\ttflops_min\ttflops_max\tms_median\tbuffer_bytes\tverified"
            .to_string(),
    ];
    for &n in &a.seqs {
        let l = AttnLayout::separate(a.bh, n, a.d);
        let qkv = random_vec(l.qkv_len(), qkv_seed(n));
        let sample = rows_to_check(&l, CHECKED_ROWS, n as u64);
        for path in AttentionPath::ALL {
            let name = path.id();
            let buffer = l.largest_buffer(path);
            let run_once = |opts: &RunOptions| {
                pollster::block_on(run_attention(
                    &gpu,
                    path,
                    &l,
                    &qkv,
                    opts,
                    &RunControl::default(),
                ))
            };
            let pilot = match run_once(&RunOptions::default()) {
                Ok(p) => p,
                Err(GpuError::Size(SizeError::ExceedsLimit {
                    limit_bytes,
                    largest_square,
                    ..
                })) => {
                    println!(
                        "| {name} | {n} | – | – | – | {:.0} | does not fit: the largest binding is {:.0} MiB; n ≤ {largest_square} fits |",
                        buffer as f64 / 1048576.0,
                        limit_bytes as f64 / 1048576.0
                    );
                    tsv.push(format!(
                        "{path_name}\t{name}\t{n}\t\t\t\t\t{buffer}\tdoes-not-fit"
                    ));
                    continue;
                }
                Err(e) => return Err(format!("{name} at n = {n}: {e}")),
            };
            let pass = pilot.timing.kernel_ms().max(1e-3);
            let warmup = ((a.warm_ms / pass).ceil() as u32).clamp(2, 5000);
            let opts = RunOptions {
                warmup,
                repetitions: a.reps,
            };
            let mut tflops = Vec::new();
            let mut ms = Vec::new();
            let mut worst = 0.0f64;
            let mut method = "";
            for _ in 0..a.runs {
                let out = run_once(&opts).map_err(|e| format!("{name} at n = {n}: {e}"))?;
                let v = verify(&l, &qkv, &out.output, &sample);
                if !v.ok {
                    return Err(format!("{name} at n = {n} failed verification: {v:?}"));
                }
                worst = worst.max(v.max_rel_error);
                method = match out.timing.method {
                    TimingMethod::Timestamps => "timestamps",
                    TimingMethod::WallClock => "wall clock",
                };
                let t = if out.timing.pass_ms.is_empty() {
                    out.timing.kernel_ms()
                } else {
                    median(&out.timing.pass_ms)
                };
                ms.push(t);
                tflops.push(l.flops() / (t * 1e9));
            }
            let (lo, hi) = tflops
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
            let med = median(&tflops);
            println!(
                "| {name} | {n} | {med:.2} | {lo:.2}–{hi:.2} | {:.3} | {:.1} | yes ({worst:.3}; {method}) |",
                median(&ms),
                buffer as f64 / 1048576.0
            );
            tsv.push(format!(
                "{path_name}\t{name}\t{n}\t{med:.4}\t{lo:.4}\t{hi:.4}\t{:.5}\t{buffer}\ttrue",
                median(&ms)
            ));
        }
    }
    if let Some(path) = a.out {
        std::fs::write(&path, tsv.join("\n") + "\n").map_err(|e| format!("writing {path}: {e}"))?;
        println!("\nwrote {path}");
    }
    Ok(())
}
