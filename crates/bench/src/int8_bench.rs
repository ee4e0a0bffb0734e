//! `bench int8 [--sizes 1024,4096] [--runs 3] [--reps 5] [--warm-ms 300] [--checked]
//! [--out FILE]`: the INT8 lesson's kernel (`int8-matmul`: four int8 multiply-adds per
//! `dot4I8Packed`, exact 32-bit sums) at square sizes, through the same plan the lesson runs
//! ([`gpu_runtime::numeric::run_int8`]). Each of `runs` whole runs does warm-up passes worth
//! `--warm-ms` of GPU time (from a pilot; at least 2) then `reps` timed passes (timestamps);
//! a run's figure is its median pass, the table the median over runs and the spread, in
//! TOP/s (2·n³ integer operations). Every run is checked EXACTLY (integer sums have no
//! rounding) against the CPU product on a seeded sample of 64 rows, first and last included.
//! `crates/bench/torch_int_mm.py` times `torch._int_mm` (cuBLAS's int8 GEMM) alike.

use gpu_runtime::cpu_kernels::data::SplitMix64;
use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use gpu_runtime::cpu_kernels::quant::{pack_cols, pack_rows};
use gpu_runtime::numeric::run_int8;
use gpu_runtime::{Gpu, RunControl, RunOptions, TimingMethod};

use crate::attention_bench::{numbers, warm_ms};
use crate::summary::median;

struct Args {
    sizes: Vec<u32>,
    runs: usize,
    reps: u32,
    warm_ms: f64,
    checked: bool,
    out: Option<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        sizes: vec![1024, 4096],
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
        let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--sizes" => a.sizes = numbers(&flag, &v, 1..=16_384)?,
            "--runs" => a.runs = numbers(&flag, &v, 1..=50)?[0] as usize,
            "--reps" => a.reps = numbers(&flag, &v, 1..=200)?[0],
            "--warm-ms" => a.warm_ms = warm_ms(&v)?,
            "--out" => a.out = Some(v),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// Seeded int8 values in −127..=127 (the symmetric range a quantiser produces).
fn int8s(len: usize, seed: u64) -> Vec<i8> {
    let mut r = SplitMix64::new(seed);
    (0..len)
        .map(|_| ((r.next_u64() % 255) as i32 - 127) as i8)
        .collect()
}

/// Rows to check: first, last and a seeded spread between.
fn sample_rows(n: usize, count: usize, seed: u64) -> Vec<usize> {
    let mut r = SplitMix64::new(seed);
    let mut rows: Vec<usize> = (0..count.saturating_sub(2))
        .map(|_| (r.next_u64() % n as u64) as usize)
        .collect();
    rows.extend([0, n - 1]);
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// The first element of `rows` whose GPU sum differs from the exact product, if any.
fn first_wrong(n: usize, a: &[i8], b: &[i8], c: &[i32], rows: &[usize]) -> Option<String> {
    let mut want = vec![0i64; n];
    for &i in rows {
        want.iter_mut().for_each(|w| *w = 0);
        for p in 0..n {
            let x = a[i * n + p] as i64;
            for (j, w) in want.iter_mut().enumerate() {
                *w += x * b[p * n + j] as i64;
            }
        }
        if let Some(j) = (0..n).find(|&j| c[i * n + j] as i64 != want[j]) {
            return Some(format!(
                "C[{i}][{j}] is {} but the exact sum is {}",
                c[i * n + j],
                want[j]
            ));
        }
    }
    None
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
    let path = if a.checked { "wgpu" } else { "wgpu-trusted" };
    println!(
        "\nint8-matmul (dot4I8Packed), {path}; median of {} runs (fastest–slowest), each verified exactly on 64 rows\n",
        a.runs
    );
    println!("| kernel | n | TOP/s | min–max | ms | verified | timing |");
    println!("| --- | ---: | ---: | ---: | ---: | --- | --- |");
    let mut tsv =
        vec!["path\tkernel\tsize\ttops_median\ttops_min\ttops_max\tms_median".to_string()];
    for &n in &a.sizes {
        let nu = n as usize;
        let size = MatmulSize { m: n, n, k: n };
        let qa = int8s(nu * nu, 0x1A7 + n as u64);
        let qb = int8s(nu * nu, 0x1B8 + n as u64);
        let (pa, pb) = (pack_rows(&qa, nu, nu), pack_cols(&qb, nu, nu));
        let rows = sample_rows(nu, 64, n as u64);
        let once = |opts: &RunOptions| {
            pollster::block_on(run_int8(&gpu, size, &pa, &pb, opts, &RunControl::default()))
                .map_err(|e| format!("int8-matmul at {n}: {e}"))
        };
        let pilot = once(&RunOptions::default())?;
        let pass = pilot.timing.kernel_ms().max(1e-3);
        let opts = RunOptions {
            warmup: ((a.warm_ms / pass).ceil() as u32).clamp(2, 5000),
            repetitions: a.reps,
        };
        let ops = 2.0 * (n as f64).powi(3);
        let (mut tops, mut ms, mut method) = (Vec::new(), Vec::new(), "");
        for _ in 0..a.runs {
            let out = once(&opts)?;
            if let Some(wrong) = first_wrong(nu, &qa, &qb, &out.output, &rows) {
                return Err(format!("int8-matmul at {n} failed verification: {wrong}"));
            }
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
            tops.push(ops / (t * 1e9));
        }
        let lo = tops.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = tops.iter().copied().fold(0.0, f64::max);
        let med = median(&tops);
        println!(
            "| int8-matmul | {n} | {med:.2} | {lo:.2}–{hi:.2} | {:.3} | yes (exact) | {method} |",
            median(&ms)
        );
        tsv.push(format!(
            "{path}\tint8-matmul\t{n}\t{med:.4}\t{lo:.4}\t{hi:.4}\t{:.5}",
            median(&ms)
        ));
    }
    if let Some(p) = a.out {
        std::fs::write(&p, tsv.join("\n") + "\n").map_err(|e| format!("writing {p}: {e}"))?;
        println!("\nwrote {p}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_element_is_named_and_a_right_product_passes() {
        let n = 5;
        let a = int8s(n * n, 1);
        let b = int8s(n * n, 2);
        let mut c: Vec<i32> = (0..n * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                (0..n)
                    .map(|p| a[i * n + p] as i32 * b[p * n + j] as i32)
                    .sum()
            })
            .collect();
        let rows = sample_rows(n, 64, 3);
        assert_eq!(rows, vec![0, 1, 2, 3, 4]);
        assert_eq!(first_wrong(n, &a, &b, &c, &rows), None);
        c[4 * n + 3] += 1;
        let msg = first_wrong(n, &a, &b, &c, &rows).expect("the changed element is caught");
        assert!(msg.starts_with("C[4][3]"), "{msg}");
    }

    #[test]
    fn values_stay_in_the_symmetric_range() {
        let v = int8s(10_000, 9);
        assert!(v.iter().all(|&x| x >= -127));
        assert!(v.contains(&-127) && v.contains(&127));
    }
}
