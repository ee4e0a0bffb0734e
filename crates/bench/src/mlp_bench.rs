//! `bench mlp [--steps N] [--batch B] [--sweep]`: training steps per second of the tiny MLP
//! (2-16-16-2, ReLU, Adam, spiral data) on the GPU — through the same training session and
//! kernels as the app — against the CPU twin on one core. Prints Markdown table rows. With
//! `--sweep`, also samples/s for batch sizes 1 … 4096 (the train view's batch-size experiment).
//! `--per-submit 1,64` and `--path default,layers,separate` measure every combination (`--runs`
//! whole runs each) and end with one table of medians and spreads (`crates/bench/h200/training_step.sh`).
//! `--checked` compiles the kernels with wgpu's runtime checks, as Firefox runs them (the
//! default is the app's native trusted compile).

use std::rc::Rc;
use std::time::Instant;

use gpu_runtime::mlp::net::batch_order;
use gpu_runtime::mlp::{Activation, CpuTrainer, Dataset, Feature, Hyper, LossKind, Net, Optimiser};
use gpu_runtime::training::{SessionConfig, TrainingSession};
use gpu_runtime::Gpu;

const POINTS: usize = 8192;

struct Args {
    steps: u32,
    batch: usize,
    sweep: bool,
    /// Steps recorded into one command buffer (`TrainingSession::steps`), one measurement each.
    per_submit: Vec<u32>,
    /// Whole GPU measurements (each a fresh session); the table gives each and the median.
    runs: u32,
    /// Skip the CPU twin (device runs where only the GPU step time is wanted).
    gpu_only: bool,
    /// The step paths to measure, one after the other.
    paths: Vec<Path>,
    /// wgpu's runtime checks on the catalogue's kernels, as in a browser.
    checked: bool,
}

/// Which dispatches a measured step runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    /// The plan the app uses (for 2-16-16-2: the two workgroup-memory dispatches,
    /// `mlp-step-lanes` and `mlp-step-reduce`).
    Default,
    /// The two per-sample whole-step kernels (`force_step_path(Some(StepPath::Samples))`).
    Fused,
    /// Per layer (`force_step_path(Some(StepPath::Layers))`): the default before the
    /// workgroup-memory step, 5 dispatches for 2-16-16-2 (the optimiser inside
    /// `mlp-step-params`).
    Layers,
    /// Per layer with a gradient kernel per layer and a separate optimiser: the step an edit of
    /// `mlp-backward-params` or `mlp-adam` costs, since an edited kernel always runs and nothing
    /// is fused around it. Unchanged copies of both are pinned, as an edit in the editor would
    /// pin them.
    Separate,
}

impl Path {
    fn parse(v: &str) -> Result<Path, String> {
        Ok(match v {
            "default" | "auto" => Path::Default,
            "fused" => Path::Fused,
            "layers" => Path::Layers,
            "separate" => Path::Separate,
            _ => {
                return Err(format!(
                    "--path wants default, fused, layers or separate, not `{v}`"
                ))
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Path::Default => "default",
            Path::Fused => "fused",
            Path::Layers => "layers",
            Path::Separate => "separate",
        }
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        steps: 200,
        batch: 1024,
        sweep: false,
        per_submit: vec![1],
        runs: 1,
        gpu_only: false,
        paths: vec![Path::Default],
        checked: false,
    };
    while let Some(flag) = args.next() {
        if flag == "--checked" {
            a.checked = true;
            continue;
        }
        if flag == "--sweep" {
            a.sweep = true;
            continue;
        }
        if flag == "--gpu-only" {
            a.gpu_only = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--steps" => {
                a.steps = value
                    .parse()
                    .ok()
                    .filter(|s| (1..=100_000).contains(s))
                    .ok_or_else(|| format!("--steps wants 1 to 100000, not `{value}`"))?
            }
            "--batch" => {
                a.batch = value
                    .parse()
                    .ok()
                    .filter(|b| (1..=POINTS).contains(b))
                    .ok_or_else(|| format!("--batch wants 1 to {POINTS}, not `{value}`"))?
            }
            "--per-submit" => {
                a.per_submit = value
                    .split(',')
                    .map(|v| v.trim().parse().ok().filter(|s| (1..=1000).contains(s)))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| {
                        format!("--per-submit wants 1 to 1000 (comma-separated), not `{value}`")
                    })?
            }
            "--path" => {
                a.paths = value
                    .split(',')
                    .map(|v| Path::parse(v.trim()))
                    .collect::<Result<Vec<_>, _>>()?
            }
            "--runs" => {
                a.runs = value
                    .parse()
                    .ok()
                    .filter(|s| (1..=20).contains(s))
                    .ok_or_else(|| format!("--runs wants 1 to 20, not `{value}`"))?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn net() -> Net {
    Net {
        sizes: vec![2, 16, 16, 2],
        activation: Activation::Relu,
        loss: LossKind::CrossEntropy,
    }
}

struct Measured {
    /// Dispatches of one step.
    dispatches: usize,
    gpu_steps_s: f64,
    cpu_steps_s: f64,
    gpu_loss: f32,
    cpu_loss: f32,
}

fn measure(
    gpu: &Rc<Gpu>,
    batch: usize,
    steps: u32,
    per_submit: u32,
    path: Path,
    cpu_budget_s: f64,
) -> Result<Measured, String> {
    use gpu_runtime::training::StepPath;
    gpu_runtime::training::force_step_path(match path {
        Path::Fused => Some(StepPath::Samples),
        Path::Layers => Some(StepPath::Layers),
        Path::Default | Path::Separate => None,
    });
    let copies: Vec<gpu_runtime::KernelSpec> = match path {
        Path::Separate => ["mlp-backward-params", "mlp-adam"]
            .iter()
            .filter_map(|id| gpu_runtime::kernel(id))
            .map(|k| k.with_source(k.wgsl()))
            .collect(),
        _ => Vec::new(),
    };
    let replacements: Vec<&gpu_runtime::KernelSpec> = copies.iter().collect();
    let net = net();
    let hyper = Hyper {
        lr: 0.01,
        optimiser: Optimiser::Adam,
        l1: 0.0,
        l2: 0.0,
    };
    let pts = Dataset::Spiral.generate(POINTS, 0.1, 1);
    let x = pts.features(&[Feature::X, Feature::Y]);
    let params = net.init_params(1);
    let order = batch_order(pts.len(), 1);
    let eval = x[..256 * 2].to_vec();
    let mut session = pollster::block_on(TrainingSession::new_with(
        gpu.clone(),
        SessionConfig {
            net: net.clone(),
            hyper,
            batch,
            accum: 1,
            params: &params,
            features: x.clone(),
            labels: pts.label.clone(),
            order: order.clone(),
            eval_features: &eval,
        },
        &replacements,
    ))
    .map_err(|e| e.to_string())?;
    let dispatches = session.plan().len();
    let mut cpu = CpuTrainer::new(net, hyper, params, batch, x, pts.label.clone(), order);

    // Warm-up: pipelines, driver caches.
    for _ in 0..3 {
        session.step().map_err(|e| e.to_string())?;
    }
    session.wait().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let mut left = steps;
    while left > 0 {
        let k = left.min(per_submit);
        session.steps(k).map_err(|e| e.to_string())?;
        left -= k;
    }
    session.wait().map_err(|e| e.to_string())?;
    let gpu_s = t.elapsed().as_secs_f64();
    let r = session.eval_blocking().map_err(|e| e.to_string())?;
    let gpu_loss = r.batch_losses.iter().sum::<f32>() / r.batch_losses.len() as f32;

    if cpu_budget_s <= 0.0 {
        return Ok(Measured {
            dispatches,
            gpu_steps_s: (steps as f64) / gpu_s,
            cpu_steps_s: f64::NAN,
            gpu_loss,
            cpu_loss: f32::NAN,
        });
    }
    for _ in 0..3 {
        cpu.step();
    }
    let t = Instant::now();
    let mut cpu_steps = 0u32;
    while cpu_steps < steps && (cpu_steps == 0 || t.elapsed().as_secs_f64() < cpu_budget_s) {
        cpu.step();
        cpu_steps += 1;
    }
    let cpu_s = t.elapsed().as_secs_f64();
    Ok(Measured {
        dispatches,
        gpu_steps_s: (steps as f64) / gpu_s,
        cpu_steps_s: cpu_steps as f64 / cpu_s,
        gpu_loss,
        cpu_loss: cpu.last_batch_loss,
    })
}

pub fn run(args: impl Iterator<Item = String>) -> Result<(), String> {
    let args = parse(args)?;
    let gpu = Rc::new(Gpu::request_blocking().map_err(|e| e.to_string())?);
    let a = gpu.adapter().clone();
    println!(
        "adapter: {} ({}, {}, driver {})",
        a.name, a.device_type, a.backend, a.driver
    );
    if a.is_software {
        println!("NOTE: software adapter — these are CPU numbers, not GPU numbers.");
    }
    gpu.set_runtime_checks(args.checked);
    println!(
        "runtime checks: {}",
        if args.checked {
            "on (--checked: as Firefox compiles WGSL)"
        } else {
            "off for the catalogue's kernels (as the app natively)"
        }
    );
    let cpu_budget = if args.gpu_only { 0.0 } else { 20.0 };
    // (path, steps per submit, dispatches, median, min, max) of every combination.
    let mut summary = Vec::new();
    let mut first = true;
    for &path in &args.paths {
        for &per_submit in &args.per_submit {
            println!(
                "\nMLP 2-16-16-2, ReLU, Adam, batch {}, {} steps, {per_submit} per command buffer, \
                 path {} (CPU twin: one core, same formulas)\n",
                args.batch,
                args.steps,
                path.name()
            );
            let budget = if first { cpu_budget } else { 0.0 };
            first = false;
            let mut times = Vec::new();
            let mut m = measure(&gpu, args.batch, args.steps, per_submit, path, budget)?;
            times.push(1e6 / m.gpu_steps_s);
            for _ in 1..args.runs {
                let r = measure(&gpu, args.batch, args.steps, per_submit, path, 0.0)?;
                times.push(1e6 / r.gpu_steps_s);
            }
            let mut sorted = times.clone();
            sorted.sort_by(f64::total_cmp);
            let median = sorted[sorted.len() / 2];
            let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
            println!(
                "GPU µs per step (wall clock, {} run(s)): {} — median {median:.1}, min {lo:.1}, \
                 max {hi:.1}",
                times.len(),
                times
                    .iter()
                    .map(|t| format!("{t:.1}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
            );
            summary.push((path, per_submit, m.dispatches, median, lo, hi));
            m.gpu_steps_s = 1e6 / median;
            if budget > 0.0 {
                println!("| adapter | batch | GPU steps/s | CPU steps/s | GPU / CPU |");
                println!("| --- | ---: | ---: | ---: | ---: |");
                println!(
                    "| {} | {} | {:.0} | {:.0} | {:.2}× |",
                    a.name,
                    args.batch,
                    m.gpu_steps_s,
                    m.cpu_steps_s,
                    m.gpu_steps_s / m.cpu_steps_s
                );
                println!(
                    "\n(last batch loss: GPU {:.4}; CPU {:.4} — the CPU may have run fewer steps)",
                    m.gpu_loss, m.cpu_loss
                );
            }
        }
    }
    gpu_runtime::training::force_step_path(None);
    if summary.len() > 1 {
        println!(
            "\nTraining step, 2-16-16-2, batch {}, {} — µs per step, wall clock over {} steps, \
             median of {} whole runs (fresh session each), spread = min … max:\n",
            args.batch, a.name, args.steps, args.runs
        );
        println!("| path | dispatches per step | steps per submit | median µs | spread µs |");
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (path, k, dispatches, median, lo, hi) in &summary {
            println!(
                "| {} | {dispatches} | {k} | {median:.1} | {lo:.1} … {hi:.1} (±{:.0} %) |",
                path.name(),
                50.0 * (hi - lo) / median
            );
        }
    }
    if args.sweep {
        println!("\n| batch | GPU samples/s | CPU samples/s |");
        println!("| ---: | ---: | ---: |");
        for batch in [1usize, 4, 16, 64, 256, 1024, 4096] {
            let steps =
                (args.steps as usize * 64 / batch).clamp(20, args.steps as usize * 4) as u32;
            let per_submit = args.per_submit[0];
            let path = args.paths[0];
            let m = measure(&gpu, batch, steps, per_submit, path, 3.0)?;
            println!(
                "| {batch} | {:.0} | {:.0} |",
                m.gpu_steps_s * batch as f64,
                m.cpu_steps_s * batch as f64
            );
        }
    }
    Ok(())
}
