//! `cargo xtask bench cpu …`: see `cpu.rs`.
//!
//! `cargo xtask bench matmul [--sizes 256,1024] [--reps 5] [--kernels id,…] [--out FILE]`: every matmul kernel
//! of the catalogue, through the same dispatch path as the app, at each size; GFLOP/s from
//! GPU timestamps (best of the repetitions, after warm-up), each result verified against the
//! CPU reference. Prints a Markdown table; with --out also writes it as TSV.
//! `bench mlp`: see `mlp_bench.rs`.

mod cpu;
mod ir_check;
mod mlp_bench;

use std::process::ExitCode;

use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use gpu_runtime::{run_matmul_verified, Family, Gpu, RunOptions, TimingMethod, Workload};

const DEFAULT_SIZES: &[u32] = &[256, 512, 1024, 2048, 4096, 8192];

struct Args {
    sizes: Vec<u32>,
    reps: u32,
    out: Option<String>,
    /// Only these kernel ids (all when empty).
    kernels: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("matmul") => {}
        other => {
            return Err(format!(
                "usage: bench matmul [--sizes 256,1024] [--reps 5] [--out FILE] | bench mlp [--steps N] [--batch B] [--sweep] | bench cpu [--sizes 512,1024] [--reps 5] [--tsv] (got {other:?})"
            ))
        }
    }
    let mut parsed = Args {
        sizes: DEFAULT_SIZES.to_vec(),
        reps: 5,
        out: None,
        kernels: Vec::new(),
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--sizes" => {
                parsed.sizes = value
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<u32>()
                            .ok()
                            .filter(|&n| (1..=16384).contains(&n))
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        format!("--sizes wants numbers from 1 to 16384, not `{value}`")
                    })?;
            }
            "--reps" => {
                parsed.reps = value
                    .parse()
                    .ok()
                    .filter(|&r: &u32| (1..=100).contains(&r))
                    .ok_or_else(|| format!("--reps wants 1 to 100, not `{value}`"))?;
            }
            "--out" => parsed.out = Some(value),
            "--kernels" => parsed.kernels = value.split(',').map(str::to_string).collect(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("cpu") => cpu::run(&args[1..]),
        _ => run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    if std::env::args().nth(1).as_deref() == Some("mlp") {
        return mlp_bench::run(std::env::args().skip(2));
    }
    let args = parse_args()?;
    let gpu = Gpu::request_blocking().map_err(|e| e.to_string())?;
    let a = gpu.adapter();
    println!(
        "adapter: {} ({}, {}, driver {})",
        a.name, a.device_type, a.backend, a.driver
    );
    println!(
        "subgroup size: {}–{}",
        a.subgroup_min_size, a.subgroup_max_size
    );
    if a.is_software {
        println!("NOTE: software adapter — these are CPU numbers, not GPU numbers.");
    }

    println!("\nStatic check (naga IR): dynamically indexed private arrays");
    for k in gpu_runtime::kernels().filter(|k| k.family == Family::Matmul) {
        let found = ir_check::dynamically_indexed_private_arrays(&k.wgsl())?;
        println!(
            "  {:<22} {}",
            k.id,
            if found.is_empty() {
                "none".to_string()
            } else {
                found.join(", ")
            }
        );
    }

    let opts = RunOptions {
        warmup: 2,
        repetitions: args.reps,
    };
    let mut rows = vec!["kernel\tsize\tgflops\tms\ttiming\tverified\tmax_rel_error".to_string()];
    println!("\n| kernel | size | GFLOP/s | ms | timing | verified |");
    println!("| --- | ---: | ---: | ---: | --- | --- |");
    let selected = gpu_runtime::kernels().filter(|k| {
        k.family == Family::Matmul
            && (args.kernels.is_empty() || args.kernels.iter().any(|id| id == k.id))
    });
    for k in selected {
        if !gpu.features().contains(k.required_features) {
            println!(
                "| {} | – | – | – | unavailable: needs {:?} | – |",
                k.id, k.required_features
            );
            continue;
        }
        for &n in &args.sizes {
            let size = MatmulSize::new(n, n, n);
            if let Err(e) = Workload::Matmul(size).check_limits(&gpu.buffer_limits()) {
                println!("| {} | {n} | – | – | does not fit: {e:?} | – |", k.id);
                continue;
            }
            let run = pollster::block_on(run_matmul_verified(&gpu, k, size, 1, &opts))
                .map_err(|e| format!("{} at {n}: {e}", k.id))?;
            let method = match run.timing.method {
                TimingMethod::Timestamps => "timestamps",
                TimingMethod::WallClock => "wall clock",
            };
            println!(
                "| {} | {n} | {:.1} | {:.3} | {method} | {} |",
                k.id,
                run.gflops(),
                run.timing.kernel_ms(),
                if run.verdict.ok { "yes" } else { "NO" }
            );
            rows.push(format!(
                "{}\t{n}\t{:.3}\t{:.5}\t{method}\t{}\t{:.3e}",
                k.id,
                run.gflops(),
                run.timing.kernel_ms(),
                run.verdict.ok,
                run.verdict.max_rel_error
            ));
            if !run.verdict.ok {
                return Err(format!(
                    "{} at {n} failed verification: {:?}",
                    k.id, run.verdict
                ));
            }
        }
    }
    if let Some(path) = args.out {
        std::fs::write(&path, rows.join("\n") + "\n")
            .map_err(|e| format!("writing {path}: {e}"))?;
        println!("\nwrote {path}");
    }
    Ok(())
}
