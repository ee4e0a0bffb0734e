//! `cargo xtask bench cpu …`: see `cpu.rs`.
//!
//! `cargo xtask bench matmul [--sizes 256,1024] [--reps 5] [--kernels id,…] [--out FILE]
//! [--warm-ms 500] [--checked] [--tune] [--copy-mib 256]`: every matmul kernel of the
//! catalogue, through the same dispatch path as the app, at each size; GFLOP/s from GPU
//! timestamps, each result verified against the CPU reference. A run's figure for a cell is
//! the MEDIAN of its timed passes; `bench summarise` takes the median over whole runs.
//! Before the timed passes, in the same submission, the kernel runs for at least --warm-ms of
//! GPU time (estimated from a pilot run), so a figure does not depend on how long the GPU
//! idled before it (`--warm-ms 0`: the old fixed 2 warm-up passes). The kernels are compiled
//! as the app compiles them natively: trusted, without wgpu's runtime checks (path
//! `wgpu-trusted`; `Gpu::compiles_checked` says why); `--checked` compiles them with the checks
//! every browser applies (path `wgpu`, what this bench measured before that change);
//! `--unchecked`, the old flag, is the default now and accepted as such; `--tune` adds every
//! tile variant the tuner tries (`matmul-tuned`'s, `matmul-double-buffer`'s and the candidate
//! `matmul-deep-k`'s); `--kernels` may also name variants (`matmul-tuned@128x128x8`, or
//! `matmul-deep-k@` for all of one kernel's); with
//! `--copy-mib` the copy probe is measured too. With --out writes the rows as TSV
//! (`summary::HEADER`), every pass time included. A kernel the device cannot run is printed
//! as `skipped:` with the reason (the Tensor Core stage: what the adapter lacks). The table
//! also gives each kernel's largest error relative to Σ|terms| and, beside it, its error
//! against the problem as posed (f32 inputs): the same figure for every stage but the Tensor
//! Core one, which is judged on its f16-rounded inputs (`VerifiedRun::posed_error`).
//! `--kernels` may also name the Tensor Core kernels outside the ladder:
//! `matmul-tensor-core@8x8x8` (Mesa's lavapipe 26 tiles), `matmul-tensor-core-direct` (the
//! control that loads its tiles straight from storage) and `matmul-tensor-core-direct@8x8x8`.
//! `bench dump-kernels`: see `dump.rs`; `bench summarise`: see `summary.rs`.
//! `bench mlp`: see `mlp_bench.rs`. `bench attention`: see `attention_bench.rs`. `bench conv`: see `conv_bench.rs`. `bench crossover`: see
//! `crossover.rs`. `bench clamps`: see `clamps.rs`. `bench cnn`: see `cnn_bench.rs`.
//! `bench int8`: see `int8_bench.rs`. `bench gpt-cpu`: see `gpt_cpu_bench.rs`.

mod attention_bench;
mod clamps;
mod cnn_bench;
mod conv_bench;
mod cpu;
mod crossover;
mod dump;
mod engine_dump;
mod gpt_cpu_bench;
mod gpt_decode_bench;
mod gpt_dump;
mod gpt_peer;
mod int8_bench;
mod ir_check;
mod json;
mod mlp_bench;
mod summary;

use std::process::ExitCode;

use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use gpu_runtime::{
    measurements, run_matmul_verified, Family, Gpu, KernelSpec, MeasureSize, RunOptions,
    TimingMethod, Workload,
};

const DEFAULT_SIZES: &[u32] = &[256, 512, 1024, 2048, 4096, 8192];

struct Args {
    sizes: Vec<u32>,
    reps: u32,
    out: Option<String>,
    /// Only these kernel ids (all when empty).
    kernels: Vec<String>,
    /// GPU time to keep the kernel running before the timed passes (0: 2 fixed passes).
    warm_ms: f64,
    /// Compile with wgpu's runtime checks (`--checked`), as a browser does.
    checked: bool,
    tune: bool,
    copy_mib: u32,
    /// `--wgsl ID=FILE`: a catalogued kernel's spec with its WGSL replaced by FILE's, as a
    /// kernel of its own (id `ID+FILE`), to try a variant on a lent device without a rebuild.
    replaced: Vec<(String, String)>,
    /// `--keep-going`: a cell that fails verification is reported and the run goes on.
    keep_going: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("matmul") => {}
        other => {
            return Err(format!(
                "usage: bench matmul [--sizes 256,1024] [--reps 5] [--out FILE] [--kernels id,…] [--warm-ms 500] [--checked] [--tune] [--copy-mib 256] [--wgsl ID=FILE] [--keep-going] | bench dump-kernels --dir DIR | bench summarise … | bench mlp [--steps N] [--batch B] [--sweep] [--per-submit K,…] [--path default,fused,layers,separate] [--runs R] [--gpu-only] [--checked] [--verify-steps 64] [--out FILE] | bench cpu [--sizes 512,1024] [--reps 5] [--tsv] | bench crossover [--widths 16,64,256,512] [--batches 1,16,256,1024,4096] [--runs 3] [--min-ms 40] [--twin-max-gflop 4] | bench conv [--runs 3] [--reps 10] [--stages id,…] [--shapes 1,3] [--out FILE] [--cudnn FILE] [--ig-tiles id,…] [--ig-splits n,…] [--checked] | bench dump-kernels --dir DIR [--conv-shapes 1,…] [--conv-ig-tiles id,…] [--conv-ig-splits n,…] | bench cnn [--digits FILE] [--batches 64,256] [--runs 3] [--tta-secs 60] [--no-cpu] [--checked] | bench dump-kernels --dir DIR --cnn [--cnn-digits FILE] | bench dump-kernels --dir DIR --mlp 1024,64 [--mlp-verify-steps 64] | bench dump-kernels --dir DIR --gpt-peer default|key=value,… | bench clamps [--kernels id,…] | bench attention [--seqs 64,…] [--bh 32] [--d 64] [--runs 3] [--reps 5] [--checked] [--out FILE] | bench gpt-cpu [--asset target/gpt-names.txt] [--shape 2,4,64,16] [--batch 32] [--lr 0.003] [--runs 3] [--min-ms 1000] [--no-twin] [--out FILE] (got {other:?})"
            ))
        }
    }
    let mut parsed = Args {
        sizes: DEFAULT_SIZES.to_vec(),
        reps: 5,
        out: None,
        kernels: Vec::new(),
        warm_ms: 500.0,
        checked: false,
        tune: false,
        copy_mib: 0,
        replaced: Vec::new(),
        keep_going: false,
    };
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--checked" => {
                parsed.checked = true;
                continue;
            }
            // The default since catalogue kernels compile trusted; kept for old scripts.
            "--unchecked" => {
                parsed.checked = false;
                continue;
            }
            "--tune" => {
                parsed.tune = true;
                continue;
            }
            "--keep-going" => {
                parsed.keep_going = true;
                continue;
            }
            _ => {}
        }
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
            "--warm-ms" => {
                parsed.warm_ms = value
                    .parse()
                    .ok()
                    .filter(|w: &f64| (0.0..=10_000.0).contains(w))
                    .ok_or_else(|| format!("--warm-ms wants 0 to 10000, not `{value}`"))?;
            }
            "--copy-mib" => {
                parsed.copy_mib = value
                    .parse()
                    .ok()
                    .filter(|m: &u32| (1..=2048).contains(m))
                    .ok_or_else(|| format!("--copy-mib wants 1 to 2048, not `{value}`"))?;
            }
            "--kernels" => parsed.kernels = value.split(',').map(str::to_string).collect(),
            "--wgsl" => {
                let (id, file) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--wgsl wants ID=FILE, not `{value}`"))?;
                parsed.replaced.push((id.to_string(), file.to_string()));
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("attention") => attention_bench::run(args.into_iter().skip(1)),
        Some("cpu") => cpu::run(&args[1..]),
        Some("cnn") => cnn_bench::run(args.into_iter().skip(1)),
        Some("conv") => conv_bench::run(args.into_iter().skip(1)),
        Some("crossover") => crossover::run(args.into_iter().skip(1)),
        Some("gpt-cpu") => gpt_cpu_bench::run(args.into_iter().skip(1)),
        Some("gpt-decode") => gpt_decode_bench::run(args.into_iter().skip(1)),
        Some("dump-kernels") => dump::run(&args[1..]),
        Some("int8") => int8_bench::run(args.into_iter().skip(1)),
        Some("clamps") => clamps::run(&args[1..]),
        Some("summarise") => summary::run(&args[1..]),
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
    for k in gpu_runtime::kernels()
        .filter(|k| k.family == Family::Matmul)
        .chain(gpu_runtime::catalogue::CANDIDATES)
    {
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

    gpu.set_runtime_checks(args.checked);
    let path = if args.checked { "wgpu" } else { "wgpu-trusted" };
    println!(
        "\nruntime checks: {}",
        if args.checked {
            "on (--checked: as in a browser)"
        } else {
            "off for these catalogue kernels (as the app natively; --checked turns them on)"
        }
    );
    let mut rows = vec![summary::HEADER.to_string()];
    println!("\n| kernel | size | GFLOP/s (median pass) | best pass | ms | warm-up passes | timing | verified | max rel. error | vs the f32 problem |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |");
    let mut selected: Vec<KernelSpec> = gpu_runtime::kernels()
        .filter(|k| {
            k.family == Family::Matmul
                && (args.kernels.is_empty() || args.kernels.iter().any(|id| id == k.id))
        })
        .cloned()
        .collect();
    // `--tune`: every tile variant; else those `--kernels` names, by id
    // (`matmul-tuned@128x128x8`) or all of one kernel's (`matmul-deep-k@`).
    selected.extend(gpu_runtime::catalogue::tile_variants().filter(|v| {
        args.tune
            || args
                .kernels
                .iter()
                .any(|i| i == v.id || (i.ends_with('@') && v.id.starts_with(i.as_str())))
    }));
    // The Tensor Core kernels outside the ladder (8×8×8 tiles, the control without shared
    // memory), only when named.
    selected.extend(
        gpu_runtime::family::matmul::tensor_core_variants()
            .into_iter()
            .filter(|k| args.kernels.iter().any(|id| id == k.id)),
    );
    for (id, file) in &args.replaced {
        let base = gpu_runtime::kernels()
            .cloned()
            .chain(gpu_runtime::catalogue::tile_variants())
            .chain(gpu_runtime::family::matmul::tensor_core_variants())
            .find(|k| k.id == id.as_str())
            .ok_or_else(|| format!("--wgsl: no matmul kernel `{id}`"))?;
        let text = std::fs::read_to_string(file).map_err(|e| format!("--wgsl {file}: {e}"))?;
        selected.push(KernelSpec {
            // Leaked once per flag: spec ids are &'static str.
            id: Box::leak(format!("{id}+{file}").into_boxed_str()),
            source: gpu_runtime::KernelSource::Text(text),
            ..base
        });
    }
    for k in &selected {
        if let Some(why) = gpu.cannot_run(k) {
            println!(
                "| {} | – | – | – | – | – | skipped: {why} | – | – | – |",
                k.id
            );
            continue;
        }
        for &n in &args.sizes {
            let size = MatmulSize::new(n, n, n);
            if let Err(e) = Workload::Matmul(size).check_limits(&gpu.buffer_limits()) {
                println!(
                    "| {} | {n} | – | – | – | – | does not fit: {e:?} | – |",
                    k.id
                );
                continue;
            }
            // On stderr: when each cell started and ended (UTC seconds), to line up with a
            // clock log (nvidia-smi) taken beside the run.
            eprintln!("{:.3}\t{}\t{n}\tstart", unix_secs(), k.id);
            let warmup = warmup_passes(&gpu, k, size, args.warm_ms)?;
            let opts = RunOptions {
                warmup,
                repetitions: args.reps,
            };
            let run = pollster::block_on(run_matmul_verified(&gpu, k, size, 1, &opts))
                .map_err(|e| format!("{} at {n}: {e}", k.id))?;
            eprintln!("{:.3}\t{}\t{n}\tend", unix_secs(), k.id);
            let method = match run.timing.method {
                TimingMethod::Timestamps => "timestamps",
                TimingMethod::WallClock => "wall clock",
            };
            let ms = median_pass_ms(&run.timing);
            let gflops = run.flops / (ms * 1e6);
            // The error against the problem as posed (f32 inputs): the verdict's own for
            // every stage judged on unrounded inputs, the second figure for the Tensor Core
            // stage, which is judged on its f16-rounded inputs.
            let posed = run.posed_error.unwrap_or(run.verdict.max_rel_error);
            println!(
                "| {} | {n} | {gflops:.1} | {:.1} | {ms:.3} | {warmup} | {method} | {} | {:.2e} (bound {:.2e}) | {posed:.2e} |",
                k.id,
                run.gflops(),
                if run.verdict.ok { "yes" } else { "NO" },
                run.verdict.max_rel_error,
                run.verdict.rel_bound,
            );
            rows.push(format!(
                "{path}\t{}\t{n}\t{gflops:.3}\tGFLOP/s\t{ms:.5}\t{method}\t{}\t{}",
                k.id,
                run.verdict.ok,
                pass_list(&run.timing.pass_ms)
            ));
            if !run.verdict.ok && args.keep_going {
                println!("  ^ failed verification: {:?}", run.verdict);
            } else if !run.verdict.ok {
                return Err(format!(
                    "{} at {n} failed verification: {:?}",
                    k.id, run.verdict
                ));
            }
        }
    }
    if args.copy_mib > 0 {
        // As measurements::bandwidth, but with the same warm-up and median as the matmuls.
        let elements = args.copy_mib * (1 << 20) / 4;
        let data = measurements::input(elements as usize);
        let size = MeasureSize {
            elements,
            threads: elements,
            param: 0,
        };
        let pilot = pollster::block_on(measurements::run_checked(
            &gpu,
            "measure-copy",
            size,
            &data,
            &RunOptions::default(),
        ))
        .map_err(|e| e.to_string())?;
        let opts = RunOptions {
            warmup: warmup_for(pilot.ms, args.warm_ms),
            repetitions: args.reps,
        };
        let m = pollster::block_on(measurements::run_checked(
            &gpu,
            "measure-copy",
            size,
            &data,
            &opts,
        ))
        .map_err(|e| e.to_string())?;
        let ms = median_pass_ms(&m.timing);
        let gbs = measurements::gb_per_s(8.0 * elements as f64, ms);
        println!(
            "\ncopy probe, {} MiB: {gbs:.0} GB/s (median pass, {} warm-up passes)",
            args.copy_mib, opts.warmup
        );
        rows.push(format!(
            "{path}\tmeasure-copy\t{elements}\t{gbs:.3}\tGB/s\t{ms:.5}\ttimestamps\ttrue\t{}",
            pass_list(&m.timing.pass_ms)
        ));
    }
    if let Some(path) = args.out {
        std::fs::write(&path, rows.join("\n") + "\n")
            .map_err(|e| format!("writing {path}: {e}"))?;
        println!("\nwrote {path}");
    }
    Ok(())
}

/// Warm-up passes that fill `warm_ms` of GPU time, from a one-pass pilot run (at least 2).
fn warmup_passes(gpu: &Gpu, k: &KernelSpec, size: MatmulSize, warm_ms: f64) -> Result<u32, String> {
    if warm_ms <= 0.0 {
        return Ok(2);
    }
    let pilot = pollster::block_on(run_matmul_verified(gpu, k, size, 1, &RunOptions::default()))
        .map_err(|e| format!("{} at {}: {e}", k.id, size.m))?;
    Ok(warmup_for(pilot.timing.kernel_ms(), warm_ms))
}

/// Passes of `pass_ms` each needed to keep the GPU busy for `warm_ms` (2 to 5,000).
fn warmup_for(pass_ms: f64, warm_ms: f64) -> u32 {
    if warm_ms <= 0.0 || !pass_ms.is_finite() || pass_ms <= 0.0 {
        return 2;
    }
    (warm_ms / pass_ms).ceil().clamp(2.0, 5000.0) as u32
}

/// The median timed pass; the wall-clock estimate where there are no timestamps.
fn median_pass_ms(t: &gpu_runtime::Timing) -> f64 {
    if t.pass_ms.is_empty() {
        t.kernel_ms()
    } else {
        summary::median(&t.pass_ms)
    }
}

fn unix_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn pass_list(p: &[f64]) -> String {
    p.iter()
        .map(|x| format!("{x:.5}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_fills_the_requested_time() {
        assert_eq!(warmup_for(4.0, 300.0), 75);
        assert_eq!(warmup_for(1000.0, 300.0), 2);
        assert_eq!(warmup_for(0.001, 300.0), 5000);
        assert_eq!(warmup_for(4.0, 0.0), 2);
        assert_eq!(warmup_for(f64::NAN, 300.0), 2);
    }
}
