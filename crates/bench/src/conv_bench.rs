//! `cargo xtask bench conv [--runs 3] [--reps 10] [--stages id,…] [--shapes 1,3] [--out FILE]
//! [--cudnn FILE] [--ig-tiles id,…] [--ig-splits n,…] [--warm-ms 500] [--checked]`:
//! every convolution stage at the issue's shapes (ResNet layers), through the same plans as the
//! app. The kernels compile as the app compiles them natively, trusted (path `wgpu-trusted`);
//! `--checked` compiles them with wgpu's runtime checks (index clamps, loop counters), as
//! Firefox runs them (path `wgpu`), with the same inputs and verification. The same plans run
//! through Dawn from `bench dump-kernels --conv-shapes …` and `crates/bench/dawn/run.mjs`
//! (path `dawn`), in the same TSV format. Each of `runs` whole runs uploads, dispatches `reps` timed passes after warm-up passes
//! worth `--warm-ms` of GPU time (counted from a pilot run; at least 2; `--warm-ms 0`: 2) and
//! reads back; a run's time is the median of its passes (GPU timestamps around
//! each pass, which holds every dispatch of the stage's plan, im2col included). Reported: the
//! median over runs and the spread (fastest and slowest run). Every run's output is verified
//! against the f64 CPU reference on a sample (borders, corners, 4096 random elements).
//! `crates/bench/cudnn_conv.py` is the cuDNN reference with the same treatment; `--cudnn FILE`
//! (its `--out` table) adds a "% of cuDNN" column. The implicit GEMM's row names the block the
//! runtime chose for the shape; `--ig-tiles` measures the listed blocks instead
//! (`gpu_runtime::conv::IG_TILES` ids), one row each, to compare them.

#[cfg(test)]
use gpu_runtime::conv::conv_kernel;
use gpu_runtime::conv::{
    force_ig_splits, force_ig_tile, implicit_gemm_plan, run_conv, verify_conv, ConvError,
    ConvStage, IG_TILES,
};
use gpu_runtime::cpu_kernels::conv::ConvShape;
use gpu_runtime::{Gpu, RunOptions, TimingMethod};

/// The issue's shapes, NCHW notation N×C×H×W → K, filter (pad keeps H and W at stride 1),
/// plus a 1×1 layer (ResNet's bottleneck) for the pointwise stage.
pub const SHAPES: &[(&str, ConvShape)] = &[
    (
        "1x64x56x56->64 3x3",
        ConvShape::new(1, 64, 56, 56, 64, 3, 3).with(1, 1, 1),
    ),
    (
        "32x64x56x56->64 3x3",
        ConvShape::new(32, 64, 56, 56, 64, 3, 3).with(1, 1, 1),
    ),
    (
        "8x128x28x28->128 3x3",
        ConvShape::new(8, 128, 28, 28, 128, 3, 3).with(1, 1, 1),
    ),
    (
        "1x256x14x14->256 3x3",
        ConvShape::new(1, 256, 14, 14, 256, 3, 3).with(1, 1, 1),
    ),
    (
        "1x3x224x224->64 7x7 s2",
        ConvShape::new(1, 3, 224, 224, 64, 7, 7).with(2, 3, 1),
    ),
    (
        "32x256x56x56->64 1x1",
        ConvShape::new(32, 256, 56, 56, 64, 1, 1),
    ),
];

/// Small shapes for software adapters (`--shapes small`, `bench dump-kernels --conv-shapes
/// small`): a 3×3 layer whose implicit GEMM splits K in 2, a 1×1 layer, and a 7×7 stride-2
/// layer over 3 channels shaped like the stem, with sizes crossing the 32-, 64- and
/// 128-wide block edges.
pub const SMALL_SHAPES: &[(&str, ConvShape)] = &[
    (
        "1x30x6x7->10 3x3",
        ConvShape::new(1, 30, 6, 7, 10, 3, 3).with(1, 1, 1),
    ),
    ("2x6x5x3->7 1x1", ConvShape::new(2, 6, 5, 3, 7, 1, 1)),
    (
        "1x3x45x43->70 7x7 s2",
        ConvShape::new(1, 3, 45, 43, 70, 7, 7).with(2, 3, 1),
    ),
];

/// `--shapes`: [`SHAPES`] by number (1-based), or `small` for [`SMALL_SHAPES`].
pub fn parse_shapes(value: &str) -> Result<Vec<(&'static str, ConvShape)>, String> {
    let mut out = Vec::new();
    for v in value.split(',').map(str::trim) {
        if v == "small" {
            out.extend_from_slice(SMALL_SHAPES);
            continue;
        }
        let i = v
            .parse::<usize>()
            .ok()
            .filter(|i| (1..=SHAPES.len()).contains(i))
            .ok_or_else(|| format!("shapes are 1 to {} or small, not `{v}`", SHAPES.len()))?;
        out.push(SHAPES[i - 1]);
    }
    Ok(out)
}

struct Args {
    runs: usize,
    reps: u32,
    stages: Vec<ConvStage>,
    shapes: Vec<(&'static str, ConvShape)>,
    out: Option<String>,
    /// cuDNN's TFLOP/s per shape name, from `cudnn_conv.py --out` (for the % column).
    cudnn: Option<std::collections::HashMap<String, f64>>,
    /// Implicit GEMM blocks to force, one row each (empty: the runtime's choice).
    ig_tiles: Vec<&'static str>,
    /// Reduction slices to force, one row each with every block (empty: the runtime's).
    ig_splits: Vec<u32>,
    warm_ms: f64,
    /// wgpu's runtime checks on the catalogue's kernels (`--checked`), as in a browser.
    checked: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        runs: 3,
        reps: 10,
        stages: ConvStage::ALL.to_vec(),
        shapes: SHAPES.to_vec(),
        out: None,
        cudnn: None,
        ig_tiles: Vec::new(),
        ig_splits: Vec::new(),
        warm_ms: 500.0,
        checked: false,
    };
    while let Some(flag) = args.next() {
        if flag == "--checked" {
            a.checked = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--runs" => {
                a.runs = value
                    .parse()
                    .ok()
                    .filter(|r| (3..=50).contains(r))
                    .ok_or_else(|| format!("--runs wants 3 to 50, not `{value}`"))?
            }
            "--reps" => {
                a.reps = value
                    .parse()
                    .ok()
                    .filter(|r| (1..=200).contains(r))
                    .ok_or_else(|| format!("--reps wants 1 to 200, not `{value}`"))?
            }
            "--stages" => {
                a.stages = value
                    .split(',')
                    .map(|id| {
                        ConvStage::from_id(id.trim()).ok_or_else(|| format!("unknown stage `{id}`"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--shapes" => a.shapes = parse_shapes(&value)?,
            "--out" => a.out = Some(value),
            "--warm-ms" => {
                a.warm_ms = value
                    .parse()
                    .ok()
                    .filter(|w: &f64| (0.0..=10_000.0).contains(w))
                    .ok_or_else(|| format!("--warm-ms wants 0 to 10000, not `{value}`"))?
            }
            "--ig-splits" => {
                a.ig_splits = value
                    .split(',')
                    .map(|v| {
                        v.trim()
                            .parse::<u32>()
                            .ok()
                            .filter(|n| (1..=16).contains(n))
                            .ok_or_else(|| format!("--ig-splits wants 1 to 16, not `{v}`"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--ig-tiles" => {
                a.ig_tiles = value
                    .split(',')
                    .map(|id| {
                        IG_TILES
                            .iter()
                            .find(|t| t.id == id.trim())
                            .map(|t| t.id)
                            .ok_or_else(|| format!("unknown implicit GEMM block `{id}`"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--cudnn" => {
                let text =
                    std::fs::read_to_string(&value).map_err(|e| format!("reading {value}: {e}"))?;
                a.cudnn = Some(parse_cudnn(&text).map_err(|e| format!("{value}: {e}"))?);
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// cuDNN's median TFLOP/s by shape name from the TSV `cudnn_conv.py --out` writes (header
/// `shape\ttflops_median\t…`).
fn parse_cudnn(text: &str) -> Result<std::collections::HashMap<String, f64>, String> {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    if !header.starts_with("shape\ttflops_median") {
        return Err(format!("not a cudnn_conv.py table (header `{header}`)"));
    }
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut cols = l.split('\t');
            let name = cols.next().unwrap_or_default().to_string();
            let tflops = cols
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| format!("bad TFLOP/s in `{l}`"))?;
            Ok((name, tflops))
        })
        .collect()
}

/// A row's stage label: the implicit GEMM's names its block (the kernel id) and reduction
/// slices as the plan made now has them (the Dawn runner's rows carry the same label).
pub fn stage_label(stage: ConvStage, shape: &ConvShape) -> String {
    match stage {
        ConvStage::ImplicitGemm => match implicit_gemm_plan(shape) {
            Some((k, 1)) => format!("{} ({k})", stage.id()),
            Some((k, n)) => format!("{} ({k}, split-K {n})", stage.id()),
            None => stage.id().to_string(),
        },
        _ => stage.id().to_string(),
    }
}

/// The TSV header of `--out` (the Dawn runner writes the same columns): per-run medians in
/// `run_ms`, the path, and `wall_ms`: per run, the wall clock from the first submission to the
/// result divided by every pass it covered (warm-up included, so waits between submissions
/// count): an upper bound on a pass that does not rest on timestamps.
pub const TSV_HEADER: &str = "stage\tshape\tgflops_median\tms_median\tms_min\tms_max\truns\ttiming\tverified\tmax_rel_error\textra_bytes\tpath\trun_ms\twall_ms";

pub fn run(args: impl Iterator<Item = String>) -> Result<(), String> {
    let args = parse(args)?;
    let gpu = Gpu::request_blocking().map_err(|e| e.to_string())?;
    let (rows, failures) = bench(&gpu, &args, &args.shapes)?;
    if let Some(path) = &args.out {
        std::fs::write(path, rows.join("\n") + "\n").map_err(|e| format!("writing {path}: {e}"))?;
        println!("\nwrote {path}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("failed verification: {}", failures.join(", ")))
    }
}

/// Measures every selected stage at each shape on `gpu` (runtime checks as `args.checked`
/// says): the TSV rows, header first, and the cells that failed verification.
#[allow(clippy::type_complexity)]
fn bench(
    gpu: &Gpu,
    args: &Args,
    shapes: &[(&str, ConvShape)],
) -> Result<(Vec<String>, Vec<String>), String> {
    gpu.set_runtime_checks(args.checked);
    let path = if args.checked { "wgpu" } else { "wgpu-trusted" };
    let ad = gpu.adapter();
    println!(
        "adapter: {} ({}, {}, driver {})",
        ad.name, ad.device_type, ad.backend, ad.driver
    );
    if ad.is_software {
        println!("NOTE: software adapter — these are CPU numbers, not GPU numbers.");
    }
    println!(
        "{} whole runs per cell, each {} timed passes after ≥ {} ms of warm-up passes (at least 2); time = median pass of a run",
        args.runs, args.reps, args.warm_ms
    );
    println!(
        "runtime checks: {}",
        if args.checked {
            "on (--checked: as Firefox compiles WGSL; path wgpu)"
        } else {
            "off for the catalogue's kernels (as the app natively; path wgpu-trusted)"
        }
    );
    println!("\n| stage | shape | GFLOP/s (median) | % of cuDNN | ms median | ms fastest–slowest run | spread | extra memory | verified |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    let mut rows = vec![TSV_HEADER.to_string()];
    let pilot = RunOptions {
        warmup: 2,
        repetitions: 3,
    };
    let mut failures = Vec::new();
    for (name, shape) in shapes {
        let (x, f) = shape.inputs(1);
        let variants = |stage: ConvStage| -> Vec<(Option<&'static str>, Option<u32>)> {
            if stage != ConvStage::ImplicitGemm {
                return vec![(None, None)];
            }
            let tiles: Vec<Option<&'static str>> = if args.ig_tiles.is_empty() {
                vec![None]
            } else {
                args.ig_tiles.iter().map(|&t| Some(t)).collect()
            };
            let splits: Vec<Option<u32>> = if args.ig_splits.is_empty() {
                vec![None]
            } else {
                args.ig_splits.iter().map(|&n| Some(n)).collect()
            };
            tiles
                .iter()
                .flat_map(|&t| splits.iter().map(move |&n| (t, n)))
                .collect()
        };
        for (stage, (tile, splits)) in args
            .stages
            .iter()
            .flat_map(|&st| variants(st).into_iter().map(move |v| (st, v)))
        {
            force_ig_tile(tile);
            force_ig_splits(splits);
            let label = stage_label(stage, shape);
            // Warm-up passes worth warm_ms of GPU time, from a pilot run's pass time.
            let mut opts = RunOptions {
                warmup: 2,
                repetitions: args.reps,
            };
            if args.warm_ms > 0.0 {
                if let Ok(o) = pollster::block_on(run_conv(gpu, stage, shape, &x, &f, &pilot)) {
                    let pass = match o.timing.method {
                        TimingMethod::Timestamps if !o.timing.pass_ms.is_empty() => {
                            super::summary::median(&o.timing.pass_ms)
                        }
                        _ => o.timing.kernel_ms(),
                    };
                    if pass.is_finite() && pass > 0.0 {
                        opts.warmup = ((args.warm_ms / pass).ceil() as u32).clamp(2, 50_000);
                    }
                }
            }
            let mut times = Vec::new();
            let mut wall = Vec::new();
            let mut verified = true;
            let mut max_err = 0f64;
            let mut method = "timestamps";
            let mut refused = None;
            for run in 0..args.runs {
                let out = match pollster::block_on(run_conv(gpu, stage, shape, &x, &f, &opts)) {
                    Ok(o) => o,
                    Err(
                        e @ (ConvError::NotPointwise
                        | ConvError::PatchTooLarge { .. }
                        | ConvError::BufferTooLarge { .. }
                        | ConvError::TooManyWorkgroups { .. }),
                    ) => {
                        refused = Some(e.to_string());
                        break;
                    }
                    Err(e) => return Err(format!("{} at {name}: {e}", stage.id())),
                };
                let (v, _) = verify_conv(shape, &x, &f, &out.output, 1 + run as u64);
                verified &= v.ok;
                max_err = max_err.max(v.max_rel_error);
                let tm = &out.timing;
                wall.push(tm.submit_to_result_ms / (tm.warmup + tm.repetitions.max(1)) as f64);
                let t = match out.timing.method {
                    TimingMethod::Timestamps => super::summary::median(&out.timing.pass_ms),
                    TimingMethod::WallClock => {
                        method = "wall clock";
                        out.timing.kernel_ms()
                    }
                };
                times.push(t);
            }
            if let Some(why) = refused {
                println!("| {label} | {name} | – | – | – | – | – | – | does not run: {why} |");
                continue;
            }
            let list = |v: &[f64]| {
                v.iter()
                    .map(|t| format!("{t:.5}"))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let (run_ms, wall_ms) = (list(&times), list(&wall));
            let lo = times.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = times.iter().copied().fold(0.0, f64::max);
            let med = super::summary::median(&times);
            let gflops = shape.flops() / (med * 1e6);
            let extra = stage.extra_bytes(shape);
            let of_cudnn = match args.cudnn.as_ref().and_then(|c| c.get(*name)) {
                Some(tflops) => format!("{:.0} %", gflops / (tflops * 10.0)),
                None => "–".to_string(),
            };
            println!(
                "| {label} | {name} | {gflops:.1} | {of_cudnn} | {med:.3} | {lo:.3}–{hi:.3} | {:.1} % | {:.1} MiB | {} |",
                100.0 * (hi - lo) / med,
                extra as f64 / (1 << 20) as f64,
                if verified { "yes" } else { "NO" }
            );
            rows.push(format!(
                "{label}\t{name}\t{gflops:.3}\t{med:.5}\t{lo:.5}\t{hi:.5}\t{}\t{method}\t{verified}\t{max_err:.3e}\t{extra}\t{path}\t{run_ms}\t{wall_ms}",
                args.runs
            ));
            if !verified {
                failures.push(format!("{label} at {name}"));
            }
        }
    }
    Ok((rows, failures))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_the_issues() {
        let flops: Vec<f64> = SHAPES.iter().map(|(_, s)| s.flops()).collect();
        // 2·N·P·Q·K·R·S·C: 1×64×56×56→64 3×3 "same" = 2·3136·64·576.
        assert_eq!(flops[0], 2.0 * 3136.0 * 64.0 * 576.0);
        assert_eq!(SHAPES[4].1.out_hw(), (112, 112));
        assert!(SHAPES.iter().all(|(_, s)| s.validate().is_ok()));
    }

    #[test]
    fn args_are_checked() {
        let p = |v: &[&str]| parse(v.iter().map(|s| s.to_string()));
        assert!(p(&["--runs", "2"]).is_err());
        assert!(p(&["--stages", "conv-nope"]).is_err());
        assert!(p(&["--shapes", "7"]).is_err());
        let a = p(&["--shapes", "2,5", "--stages", "conv-implicit-gemm"]).expect("valid");
        assert_eq!(a.shapes, vec![SHAPES[1], SHAPES[4]]);
        let small = p(&["--shapes", "small"]).expect("valid");
        assert_eq!(small.shapes, SMALL_SHAPES.to_vec());
        assert!(SMALL_SHAPES.iter().all(|(_, s)| s.validate().is_ok()));
        assert_eq!(a.stages, vec![ConvStage::ImplicitGemm]);
        assert!(p(&["--cudnn", "/nonexistent.tsv"]).is_err());
    }

    /// `--checked` on a software Vulkan adapter (lavapipe under `cargo xtask test`; fails,
    /// never skips, without an adapter): every stage, split-K and im2col + GEMM included, runs
    /// and verifies at small shapes through pipelines compiled with wgpu's runtime checks, and
    /// the trusted run afterwards compiles pipelines of its own (the cache is keyed by the
    /// setting), so the flag reaches the compiler.
    #[test]
    fn checked_path_runs_every_stage_verified_with_its_own_pipelines() {
        let gpu =
            Gpu::request_blocking().expect("no GPU adapter (lavapipe under cargo xtask test)");
        // 30 channels → 32 stored, 3×3: 288-long reduction, 18 BK-steps over one 64×64 block,
        // so the implicit GEMM splits K in 2 and adds a reduction dispatch.
        let small = ConvShape::new(1, 30, 6, 7, 10, 3, 3).with(1, 1, 1);
        let pointwise = ConvShape::new(2, 6, 5, 3, 7, 1, 1);
        assert_eq!(implicit_gemm_plan(&small), Some(("conv-implicit-gemm", 2)));
        let shapes = [("small 3x3", small), ("small 1x1", pointwise)];
        let p = |v: &[&str]| parse(v.iter().map(|s| s.to_string())).expect("valid");
        let quick = ["--runs", "3", "--reps", "2", "--warm-ms", "0"];
        let checked = p(&[&quick[..], &["--checked"]].concat());
        assert!(checked.checked && !p(&quick).checked);
        let (rows, failures) = bench(&gpu, &checked, &shapes).expect("runs");
        assert_eq!(failures, Vec::<String>::new());
        // Direct, tiled, im2col + GEMM, implicit GEMM at both shapes, 1×1 at the 1×1 shape.
        let cells: Vec<&String> = rows[1..].iter().collect();
        assert_eq!(cells.len(), 9, "{rows:#?}");
        for r in &cells {
            let c: Vec<&str> = r.split('\t').collect();
            assert_eq!((c[8], c[11]), ("true", "wgpu"), "{r}");
            assert_eq!(c[12].split(',').count(), 3, "{r}");
            assert_eq!(c[13].split(',').count(), 3, "{r}");
        }
        assert!(cells
            .iter()
            .any(|r| r.starts_with("conv-implicit-gemm (conv-implicit-gemm, split-K 2)")));
        let kernel = conv_kernel("conv-implicit-gemm").expect("catalogued");
        assert!(gpu.compiles_checked(kernel));
        let compiled = gpu.cached_pipelines();
        // Direct, tiled, im2col, matmul-vec4, implicit GEMM, split-K reduction.
        assert_eq!(compiled, 6);
        let (rows, failures) = bench(&gpu, &p(&quick), &shapes).expect("runs");
        assert!(failures.is_empty() && rows[1].split('\t').nth(11) == Some("wgpu-trusted"));
        assert!(!gpu.compiles_checked(kernel));
        assert_eq!(gpu.cached_pipelines(), 2 * compiled);
    }

    #[test]
    fn cudnn_table_is_read_by_shape_name() {
        let t = "shape\ttflops_median\tms_median\n1x64x56x56->64 3x3\t5.2\t0.045\n\n";
        let m = parse_cudnn(t).expect("valid");
        assert_eq!(m.get(SHAPES[0].0), Some(&5.2));
        assert!(parse_cudnn("size\tgflops\n").is_err());
        assert!(parse_cudnn("shape\ttflops_median\nx\tNaN\n").is_err());
        assert!(parse_cudnn("shape\ttflops_median\nx\t0\n").is_err());
    }
}
