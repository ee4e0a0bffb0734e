//! `bench mlp [--steps N] [--batch B] [--sweep]`: training steps per second of the tiny MLP
//! (2-16-16-2, ReLU, Adam, spiral data) on the GPU — through the same training session and
//! kernels as the app — against the CPU twin on one core. Prints Markdown table rows. With
//! `--sweep`, also samples/s for batch sizes 1 … 4096 (the train view's batch-size experiment).
//! `--per-submit 1,64` and `--path default,layers,separate` measure every combination (`--runs`
//! whole runs each) and end with one table of medians and spreads (`crates/bench/h200/training_step.sh`).
//! `--checked` compiles the kernels with wgpu's runtime checks, as Firefox runs them (the
//! default is the app's native trusted compile).
//!
//! Before any timing, each (path, steps per submit) is verified: a fresh session trains
//! `--verify-steps` steps (default 64, submitted `per_submit` at a time) next to the CPU twin
//! (`CpuTrainer`), and every parameter must be within the session's bound
//! ([`gpu_runtime::training::param_gap_ratio`], [`gpu_runtime::training::param_ulps_per_step`]
//! per step for the batch's sums); one outside it is not
//! timed. `--out FILE` writes the table as TSV.
//!
//! [`dump`] (`bench dump-kernels --mlp 1024,64`) writes the same step for
//! `crates/bench/dawn/mlp.mjs` (Dawn).

use std::rc::Rc;
use std::time::Instant;

use gpu_runtime::mlp::net::batch_order;
use gpu_runtime::mlp::{Activation, CpuTrainer, Dataset, Feature, Hyper, LossKind, Net, Optimiser};
use gpu_runtime::training::{batch_sum_len, param_gap_ratio, SessionConfig, TrainingSession};
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
    /// Steps trained next to the twin before timing.
    verify_steps: u32,
    /// Where the summary goes as TSV.
    out: Option<String>,
}

/// Which dispatches a measured step runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    /// The plan the app uses (for 2-16-16-2: the two workgroup-memory dispatches,
    /// `mlp-step-lanes` and `mlp-step-reduce`).
    Default,
    /// The two per-sample whole-step kernels (`PathOptions::step(StepPath::Samples)`).
    Fused,
    /// Per layer (`PathOptions::step(StepPath::Layers)`): the default before the
    /// workgroup-memory step, 5 dispatches for 2-16-16-2 (the optimiser inside
    /// `mlp-step-params`).
    Layers,
    /// Per layer with a gradient kernel per layer and a separate optimiser: the step an edit of
    /// `mlp-backward-params` or `optim-adam` costs, since an edited kernel always runs and nothing
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
        verify_steps: 64,
        out: None,
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
            "--verify-steps" => {
                a.verify_steps = value
                    .parse()
                    .ok()
                    .filter(|s| (1..=1000).contains(s))
                    .ok_or_else(|| format!("--verify-steps wants 1 to 1000, not `{value}`"))?
            }
            "--out" => a.out = Some(value),
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

/// What every session of this bench trains: the network, Adam at lr 0.01, 8,192 spiral points
/// (noise 0.1, seed 1), the initial parameters and batch order of seed 1, and 256 evaluation
/// rows (the same for `bench mlp` and the Dawn dump).
pub struct Setup {
    pub net: Net,
    pub hyper: Hyper,
    pub x: Vec<f32>,
    pub labels: Vec<u32>,
    pub params: Vec<f32>,
    pub order: Vec<u32>,
    pub eval: Vec<f32>,
}

pub fn setup() -> Setup {
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
    Setup {
        net,
        hyper,
        x,
        labels: pts.label.clone(),
        params,
        order,
        eval,
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
    verify_steps: Option<u32>,
) -> Result<Result<Measured, f32>, String> {
    use gpu_runtime::training::{PathOptions, StepPath};
    let paths = PathOptions {
        step: match path {
            Path::Fused => Some(StepPath::Samples),
            Path::Layers => Some(StepPath::Layers),
            Path::Default | Path::Separate => None,
        },
        tiled: None,
    };
    let copies: Vec<gpu_runtime::KernelSpec> = match path {
        Path::Separate => ["mlp-backward-params", "optim-adam"]
            .iter()
            .filter_map(|id| gpu_runtime::kernel(id))
            .map(|k| k.with_source(k.wgsl()))
            .collect(),
        _ => Vec::new(),
    };
    let replacements: Vec<&gpu_runtime::KernelSpec> = copies.iter().collect();
    let Setup {
        net,
        hyper,
        x,
        labels,
        params,
        order,
        eval,
    } = setup();
    let mut session = pollster::block_on(TrainingSession::new_with(
        gpu.clone(),
        SessionConfig {
            net: net.clone(),
            hyper,
            batch,
            accum: 1,
            params: &params,
            features: x.clone(),
            labels: labels.clone(),
            order: order.clone(),
            eval_features: &eval,
            paths,
        },
        &replacements,
    ))
    .map_err(|e| e.to_string())?;
    if let Some(v) = verify_steps {
        // The twin's parameters after `v` steps against the session's, submitted as timed.
        let mut left = v;
        while left > 0 {
            let k = left.min(per_submit);
            session.steps(k).map_err(|e| e.to_string())?;
            left -= k;
        }
        let got = session.eval_blocking().map_err(|e| e.to_string())?.params;
        let mut twin = CpuTrainer::new(net, hyper, params, batch, x, labels, order);
        for _ in 0..v {
            twin.step();
        }
        let sum_len = batch_sum_len(batch, 1);
        return Ok(Err(param_gap_ratio(&got, &twin.params, v, sum_len)));
    }
    let dispatches = session.plan().len();
    let mut cpu = CpuTrainer::new(net, hyper, params, batch, x, labels, order);

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
        return Ok(Ok(Measured {
            dispatches,
            gpu_steps_s: (steps as f64) / gpu_s,
            cpu_steps_s: f64::NAN,
            gpu_loss,
            cpu_loss: f32::NAN,
        }));
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
    Ok(Ok(Measured {
        dispatches,
        gpu_steps_s: (steps as f64) / gpu_s,
        cpu_steps_s: cpu_steps as f64 / cpu_s,
        gpu_loss,
        cpu_loss: cpu.last_batch_loss,
    }))
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
            let v = args.verify_steps;
            let worst = match measure(&gpu, args.batch, v, per_submit, path, 0.0, Some(v))? {
                Err(ratio) => ratio,
                Ok(_) => f32::NAN,
            };
            let within = worst <= 1.0;
            println!(
                "verify: {v} steps ({per_submit} per submit) next to the CPU twin, worst \
                 |GPU − twin| / bound over the parameters {worst:.4} → {}",
                if within {
                    "within the bound"
                } else {
                    "OUTSIDE the bound: not timed"
                }
            );
            if !within {
                summary.push((path, per_submit, 0, f64::NAN, f64::NAN, f64::NAN, worst));
                continue;
            }
            let budget = if first { cpu_budget } else { 0.0 };
            first = false;
            let timed = |budget| -> Result<Measured, String> {
                measure(&gpu, args.batch, args.steps, per_submit, path, budget, None)?
                    .map_err(|_| "a timing run returned a verification".to_string())
            };
            let mut times = Vec::new();
            let mut m = timed(budget)?;
            times.push(1e6 / m.gpu_steps_s);
            for _ in 1..args.runs {
                let r = timed(0.0)?;
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
            summary.push((path, per_submit, m.dispatches, median, lo, hi, worst));
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
    if let Some(out) = &args.out {
        let checks = if args.checked { "checked" } else { "trusted" };
        let mut tsv =
            String::from("path\tchecks\tbatch\tper_submit\tdispatches\truns\tsteps\tmedian_us\tmin_us\tmax_us\tverify_steps\tworst_over_bound\n");
        for (path, k, dispatches, median, lo, hi, worst) in &summary {
            tsv.push_str(&format!(
                "wgpu-{}\t{checks}\t{}\t{k}\t{dispatches}\t{}\t{}\t{median}\t{lo}\t{hi}\t{}\t{worst}\n",
                path.name(),
                args.batch,
                args.runs,
                args.steps,
                args.verify_steps
            ));
        }
        std::fs::write(out, tsv).map_err(|e| format!("{out}: {e}"))?;
    }
    if summary.len() > 1 {
        println!(
            "\nTraining step, 2-16-16-2, batch {}, {} — µs per step, wall clock over {} steps, \
             median of {} whole runs (fresh session each), spread = min … max:\n",
            args.batch, a.name, args.steps, args.runs
        );
        println!("| path | dispatches per step | steps per submit | median µs | spread µs |");
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (path, k, dispatches, median, lo, hi, _) in &summary {
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
            let m = measure(&gpu, batch, steps, per_submit, path, 3.0, None)?
                .map_err(|_| "a timing run returned a verification".to_string())?;
            println!(
                "| {batch} | {:.0} | {:.0} |",
                m.gpu_steps_s * batch as f64,
                m.cpu_steps_s * batch as f64
            );
        }
    }
    Ok(())
}

/// `bench dump-kernels --dir DIR --mlp 1024,64 [--mlp-verify-steps 64]`: the session's step at
/// those batches exactly as [`TrainingSession::new`] builds it (no replacement, no gradient
/// accumulation), for `crates/bench/dawn/mlp.mjs`. Writes DIR/mlp/mlp.json — the composed WGSL
/// of every kernel the steps run, and per batch the buffers (name, bytes, initial contents: a
/// file or zeros), the step's dispatches in order (kernel, layer, workgroups, the uniform
/// words, and for each parity of the step the bound buffer names in binding order, the uniform
/// after them), whether a step clears the gradients first, and the twin's parameters after the
/// verification steps — and the binary files: the initial parameters, the training set in
/// batch order (features, labels: the session uploads it so, and the GPU keeps the step's
/// place in it), Adam's correction table, `twin_B.bin`. The plan is the session's kernels and
/// uniforms ([`step_plan_with`]: the same planner the session runs over the engine's arena,
/// here over `mlp::net`'s packed layouts and the MLP family's buffer names; the evaluation's
/// buffer and dispatches are left out: a step never binds them).
pub fn dump(dir: &str, batches: &[usize], verify_steps: u32) -> Result<(), String> {
    use crate::json::{js, kernel_json, num_list};
    use gpu_runtime::family::mlp::{bound_buffers, buffer};
    use gpu_runtime::training::{
        activation_bytes, adam_correction_table, batch_sum_len, param_ulps_per_step, partials_len,
        step_plan_with, StepOptions, LANES, UNIFORM_WORDS,
    };
    let s = setup();
    let d = format!("{dir}/mlp");
    std::fs::create_dir_all(&d).map_err(|e| format!("{d}: {e}"))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(format!("{d}/{name}"), bytes).map_err(|e| format!("{name}: {e}"))
    };
    let width = s.net.inputs();
    let mut xs = Vec::with_capacity(s.x.len());
    let mut ys = Vec::with_capacity(s.labels.len());
    for &i in &s.order {
        let i = i as usize;
        xs.extend_from_slice(&s.x[i * width..(i + 1) * width]);
        ys.push(s.labels[i]);
    }
    write(
        "params_init.bin",
        &le_bytes(s.params.iter().map(|v| v.to_bits())),
    )?;
    write("data_x.bin", &le_bytes(xs.iter().map(|v| v.to_bits())))?;
    write("data_y.bin", &le_bytes(ys.iter().copied()))?;
    let corr = adam_correction_table();
    write(
        "corrections.bin",
        &le_bytes(corr.iter().flatten().map(|v| v.to_bits())),
    )?;
    let n_params = s.net.layout().param_count as u64;
    let rows = s.labels.len();
    let mut ids: Vec<&str> = Vec::new();
    let mut per_batch = Vec::new();
    for &batch in batches {
        let opts = StepOptions {
            accum: 1,
            pinned: &[],
            ..StepOptions::default()
        };
        let mut plan = step_plan_with(&s.net, &s.hyper, batch, rows, opts);
        if let Some(gather) = plan
            .iter_mut()
            .find(|p| matches!(p.kernel_id, "mlp-forward-gather" | "mlp-gather"))
        {
            gather.uniform.set("accum", 1);
        }
        let clear_grads = plan
            .iter()
            .any(|p| matches!(p.kernel_id, "mlp-backward-params" | "mlp-grad-reduce"));
        let lane_sums = if plan.iter().any(|p| p.kernel_id == "mlp-step-lanes") {
            n_params * LANES as u64 * 4
        } else {
            4
        };
        let zero = |name: &str, bytes: u64| format!("{{\"name\":{},\"zeroed\":{bytes}}}", js(name));
        let file = |name: &str, f: &str, bytes: usize| {
            format!(
                "{{\"name\":{},\"file\":{},\"bytes\":{bytes}}}",
                js(name),
                js(f)
            )
        };
        let bufs = [
            file(buffer::PARAMS, "params_init.bin", s.params.len() * 4),
            zero(buffer::GRADS, n_params * 4),
            zero(buffer::M, n_params * 4),
            zero(buffer::V, n_params * 4),
            zero(buffer::ACTS, activation_bytes(&s.net, batch)),
            zero(buffer::DELTAS, activation_bytes(&s.net, batch)),
            zero(buffer::LABELS, batch as u64 * 4),
            zero(buffer::LOSSES, batch as u64 * 4),
            file(buffer::DATA_X, "data_x.bin", xs.len() * 4),
            file(buffer::DATA_Y, "data_y.bin", ys.len() * 4),
            zero(buffer::STATES[0], 16),
            zero(buffer::STATES[1], 16),
            file(buffer::CORRECTIONS, "corrections.bin", corr.len() * 8),
            zero(
                buffer::PARTIALS,
                lane_sums.max(partials_len(&s.net, batch, &[], Default::default()) as u64 * 4),
            ),
        ];
        let step: Vec<String> = plan
            .iter()
            .map(|p| {
                if !ids.contains(&p.kernel_id) {
                    ids.push(p.kernel_id);
                }
                let variants: Vec<String> = (0..2)
                    .map(|parity| {
                        let names: Vec<String> = bound_buffers(p.kernel_id, parity, false)
                            .iter()
                            .map(|n| js(n))
                            .collect();
                        format!("[{}]", names.join(","))
                    })
                    .collect();
                format!(
                    "{{\"kernel\":{},\"layer\":{},\"workgroups\":{},\"uniform\":{},\"variants\":[{}]}}",
                    js(p.kernel_id),
                    p.layer,
                    num_list(p.workgroups),
                    num_list(p.uniform.words()),
                    variants.join(",")
                )
            })
            .collect();
        let mut twin = CpuTrainer::new(
            s.net.clone(),
            s.hyper,
            s.params.clone(),
            batch,
            s.x.clone(),
            s.labels.clone(),
            s.order.clone(),
        );
        for _ in 0..verify_steps {
            twin.step();
        }
        write(
            &format!("twin_{batch}.bin"),
            &le_bytes(twin.params.iter().map(|v| v.to_bits())),
        )?;
        per_batch.push(format!(
            "{{\"batch\":{batch},\"ulps_per_step\":{:e},\"clear_grads\":{clear_grads},\"buffers\":[{}],\"step\":[{}],\"twin\":{},\"twin_loss\":{:e}}}",
            param_ulps_per_step(batch_sum_len(batch, 1)),
            bufs.join(","),
            step.join(","),
            js(&format!("twin_{batch}.bin")),
            twin.last_batch_loss
        ));
    }
    let kernels: Vec<String> = ids
        .iter()
        .map(|id| {
            gpu_runtime::kernel(id)
                .map(kernel_json)
                .ok_or_else(|| format!("no kernel {id}"))
        })
        .collect::<Result<_, _>>()?;
    let json = format!(
        "{{\"net\":{},\"optimiser\":\"adam\",\"lr\":{:e},\"points\":{POINTS},\"params\":{n_params},\
         \"uniform_words\":{UNIFORM_WORDS},\"verify_steps\":{verify_steps},\
         \"kernels\":[{}],\"batches\":[{}]}}\n",
        num_list(s.net.sizes.iter()),
        s.hyper.lr,
        kernels.join(","),
        per_batch.join(",")
    );
    write("mlp.json", json.as_bytes())?;
    println!(
        "wrote {d}/mlp.json: {} kernels, batches {batches:?}, twin after {verify_steps} steps",
        ids.len()
    );
    Ok(())
}

/// 32-bit words as little-endian bytes.
fn le_bytes(words: impl Iterator<Item = u32>) -> Vec<u8> {
    words.flat_map(u32::to_le_bytes).collect()
}
