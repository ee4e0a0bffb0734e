//! `bench cpu [--sizes 512,1024] [--reps 5] [--tsv] [--runs]`: the race's CPU kernels natively (single
//! thread; the SIMD variant runs its portable 4-lane fallback here) against the
//! `matrixmultiply` crate's sgemm (single thread, its own runtime-detected AVX2/FMA kernels).
//! Best of the repetitions after one warm-up, every result verified against the sampled
//! reference. `crates/bench/cpu_vs_wasm.mjs` runs this beside the wasm build in Chromium.
//! With `--runs`, each of the `--reps` runs is the mean time of back-to-back multiplies over
//! ≥ 300 ms, and every run is printed (TSV: name, N, then each run's ms): the rule of
//! `crates/bench/wasm_matmul.mjs`, which takes the median and spread. `--cpu-time` (Linux)
//! divides by this thread's CPU time (`/proc/thread-self/schedstat`) instead of the wall
//! clock, for a loaded machine: `crates/bench/wasm_matmul_cputime.mjs` does the same for wasm.

use std::time::Instant;

use gpu_runtime::cpu_kernels::matmul::{self, MatmulSize};
use gpu_runtime::cpu_kernels::matmul_variants::{self, CpuVariant};
use gpu_runtime::cpu_kernels::verify::{self, Precision};

/// Same seed as the app's race.
const SEED: u64 = 1;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut sizes = vec![512u32, 1024];
    let mut reps = 5u32;
    let mut tsv = false;
    let mut all_runs = false;
    let mut cpu_time = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--tsv" => tsv = true,
            "--runs" => all_runs = true,
            "--cpu-time" => cpu_time = true,
            "--sizes" => {
                let v = it.next().ok_or("--sizes needs a value")?;
                sizes = v
                    .split(',')
                    .map(|s| s.trim().parse().ok().filter(|n| (1..=4096).contains(n)))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| format!("--sizes wants numbers from 1 to 4096, not `{v}`"))?;
            }
            "--reps" => {
                let v = it.next().ok_or("--reps needs a value")?;
                reps = v
                    .parse()
                    .ok()
                    .filter(|r| (1..=50).contains(r))
                    .ok_or_else(|| format!("--reps wants 1 to 50, not `{v}`"))?;
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if !tsv {
        println!("| implementation | N | ms (best of {reps}) | GFLOP/s |");
        println!("| --- | ---: | ---: | ---: |");
    }
    for &n in &sizes {
        let size = MatmulSize::new(n, n, n);
        let (a, b) = size.inputs(SEED);
        let report = |name: &str, ms: f64| {
            let gflops = size.flops() / (ms * 1e6);
            if tsv {
                println!("{name}\t{n}\t{ms:.4}\t{gflops:.3}");
            } else {
                println!("| {name} | {n} | {ms:.2} | {gflops:.2} |");
            }
        };
        if all_runs {
            let ms = runs(reps, cpu_time, size, &a, &b, |a, b| Ok(sgemm(size, a, b)))?;
            let cells: Vec<String> = ms.iter().map(|m| format!("{m:.4}")).collect();
            println!("matrixmultiply-sgemm\t{n}\t{}", cells.join("\t"));
            continue;
        }
        for v in [CpuVariant::Blocked, CpuVariant::Simd] {
            let ms = best(reps, size, &a, &b, &|a, b| {
                matmul_variants::matmul(v, size, a, b).map_err(|e| format!("{e:?}"))
            })?;
            report(&format!("native-{}", v.id()), ms);
        }
        let ms = best(reps, size, &a, &b, &|a, b| Ok(sgemm(size, a, b)))?;
        report("matrixmultiply-sgemm", ms);
    }
    Ok(())
}

/// Single-thread sgemm from the `matrixmultiply` crate, row-major.
fn sgemm(size: MatmulSize, a: &[f32], b: &[f32]) -> Vec<f32> {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    let mut c = vec![0f32; m * n];
    // SAFETY: the pointers cover m×k, k×n and m×n row-major f32 matrices (lengths checked by
    // `MatmulSize::inputs` and the allocation above); strides are in elements.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
    c
}

/// `reps` runs after a warm-up run whose result is verified, each the mean time (ms) of
/// back-to-back multiplies over at least 300 ms.
fn runs(
    reps: u32,
    cpu_time: bool,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    f: impl Fn(&[f32], &[f32]) -> Result<Vec<f32>, String>,
) -> Result<Vec<f64>, String> {
    best(1, size, a, b, &f)?;
    let mut out = Vec::new();
    for _ in 0..reps {
        let t0 = Instant::now();
        let c0 = thread_cpu_ms();
        let mut count = 0u32;
        while t0.elapsed().as_secs_f64() < 0.3 {
            std::hint::black_box(f(a, b)?);
            count += 1;
        }
        let ms = if cpu_time {
            match (c0, thread_cpu_ms()) {
                (Some(c0), Some(c1)) => c1 - c0,
                _ => return Err("--cpu-time needs /proc/thread-self/schedstat (Linux)".into()),
            }
        } else {
            t0.elapsed().as_secs_f64() * 1e3
        };
        out.push(ms / f64::from(count));
    }
    Ok(out)
}

/// This thread's time on a CPU so far (ms), from the first field of
/// `/proc/thread-self/schedstat` (nanoseconds).
fn thread_cpu_ms() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e6)
}

/// Best time of `reps` runs after a warm-up run whose result is verified.
fn best(
    reps: u32,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    f: &impl Fn(&[f32], &[f32]) -> Result<Vec<f32>, String>,
) -> Result<f64, String> {
    let c = f(a, b)?;
    let idx = matmul::check_indices(size, 0, 2048, 7).unwrap_or_default();
    let reference = matmul::reference_at(size, a, b, &idx);
    let got: Vec<f32> = idx.iter().map(|&i| c[i]).collect();
    let verdict = verify::compare(&got, &reference, Precision::F32);
    if !verdict.ok {
        return Err(format!("wrong result at {size:?}: {verdict:?}"));
    }
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t0 = Instant::now();
        let c = f(a, b)?;
        best = best.min(t0.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(c);
    }
    Ok(best)
}
