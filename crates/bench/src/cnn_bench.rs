//! `bench cnn [--digits FILE] [--batches 64,256] [--runs 3] [--min-ms 1500] [--cpu-min-ms 3000]
//! [--no-cpu] [--tta-secs 60] [--eval-every 50] [--verify-steps 3] [--checked] [--out FILE]`: the CNN
//! page's default network (`cnn::Spec::default()`: conv 5×5 ×6, pool, conv 5×5 ×16, pool,
//! dense 10, Adam lr 0.001) on the real digits asset (`cargo xtask mnist`), issue 24's numbers:
//!
//! 1. **Verification first** (each batch): GPU session and CPU twin train `--verify-steps`
//!    steps on the same batches in lockstep (each step starts the GPU from the twin's state,
//!    the bound of `family/cnn/bound.rs` from zero, as the native tests' lockstep mode); every
//!    parameter, both optimiser states and the loss must be within the bound, or the batch's
//!    speed is not measured (a broken kernel cannot produce a fast number). Gaps below 2⁻¹²⁶
//!    are forgiven: the bound assumes subnormals are kept, a GPU may flush them.
//! 2. **GPU step** (wgpu, the app's session `CnnSession` and kernels, one submission per step,
//!    each uploading its batch): per whole run a fresh session, 20 warm-up steps and a pilot
//!    of 20 drained steps set the timed steps (≥ `--min-ms` of work, 20 to 200,000); the timed
//!    steps are submitted back to back and the queue drained (a readback of the losses) before
//!    the clock stops. ms/step = wall time / steps. Median of `--runs` runs, with fastest and
//!    slowest.
//! 3. **Tuned CPU on one core** (`cnn::tuned::TunedTrainer`, im2col + `matrixmultiply`
//!    single-threaded, this thread only): same treatment, ≥ `--cpu-min-ms` per run.
//! 4. **Time to accuracy** (batch 64, the page's defaults): one session, steps submitted in
//!    chunks of `--eval-every`, after each chunk the 1,000 test images evaluated on the GPU
//!    (four passes of `EVAL_CHUNK`, read back and scored with the twin's formulas); the clock
//!    runs from before the session is made (pipelines included, as pressing Train) and
//!    includes the evaluations. Reports the first time and step at ≥ 90 % and ≥ 97 %, and
//!    the accuracy at `--tta-secs`.
//!
//! `--checked` compiles the catalogue's kernels with wgpu's runtime checks (index clamps, loop
//! counters), as Firefox runs WGSL; its step rows are named `wgpu-checked-step` (trusted, the
//! app natively: `wgpu-step`).
//!
//! Rows go to `--out` as TSV (`what batch runs median min max unit extra`).

use std::rc::Rc;
use std::time::Instant;

use cnn::data::{decode, split, BatchOrder, Samples};
use cnn::net::{CpuTrainer, Hyper, Net, EVAL_CHUNK};
use cnn::tuned::{Gemm, TunedTrainer};
use cnn::Spec;
use gpu_runtime::cnn_training::{described, evaluation, CnnConfig, CnnSession, Part, STAGING};
use gpu_runtime::engine::cnn::Map;
use gpu_runtime::family::cnn::bound::{step_bound, StateBound, TwinStep};
use gpu_runtime::Gpu;

use crate::engine_dump;
use crate::json::{js, num_list};
use crate::summary::min_max;

/// The page's network, settings and data, from the default `Spec`.
pub struct Setup {
    pub spec: Spec,
    pub net: Net,
    pub hyper: Hyper,
    pub params: Vec<f32>,
    pub train: Samples,
    pub test: Samples,
}

/// The default spec's network on the digits asset at `path`, split and initialised as the
/// page does (everything seeded by `spec.seed`).
pub fn setup(path: &str) -> Result<Setup, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        format!("cannot read the digits asset {path}: {e} (make it with `cargo xtask mnist --out {path}`)")
    })?;
    let digits = decode(&bytes).map_err(|e| format!("{path}: {e:?}"))?;
    let spec = Spec::default();
    let net = spec.net().map_err(|e| format!("{e:?}"))?;
    let hyper = spec.hyper();
    let params = net.init_params(spec.seed);
    let (tr, te) = split(digits.len(), spec.seed);
    Ok(Setup {
        train: digits.samples(&tr),
        test: digits.samples(&te),
        net,
        hyper,
        params,
        spec,
    })
}

/// The order seed the page gives the twin and the session (the spec's seed).
pub fn order_seed(s: &Setup) -> u64 {
    s.spec.seed
}

struct Args {
    digits: String,
    batches: Vec<usize>,
    runs: usize,
    min_ms: f64,
    cpu_min_ms: f64,
    cpu: bool,
    tta_secs: f64,
    eval_every: u32,
    verify_steps: u64,
    out: Option<String>,
    /// wgpu's runtime checks on the catalogue's kernels, as in Firefox.
    checked: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        digits: "target/cnn-digits.bin".into(),
        batches: vec![64, 256],
        runs: 3,
        min_ms: 1500.0,
        cpu_min_ms: 3000.0,
        cpu: true,
        tta_secs: 60.0,
        eval_every: 50,
        verify_steps: 3,
        out: None,
        checked: false,
    };
    while let Some(flag) = args.next() {
        if flag == "--no-cpu" {
            a.cpu = false;
            continue;
        }
        if flag == "--checked" {
            a.checked = true;
            continue;
        }
        let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        match flag.as_str() {
            "--digits" => a.digits = v,
            "--batches" => {
                a.batches = v
                    .split(',')
                    .map(|b| {
                        b.trim()
                            .parse::<usize>()
                            .ok()
                            .filter(|b| (1..=256).contains(b))
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("--batches wants 1 to 256, not `{v}`"))?
            }
            "--runs" => a.runs = num(&v)?.clamp(1.0, 50.0) as usize,
            "--min-ms" => a.min_ms = num(&v)?.max(1.0),
            "--cpu-min-ms" => a.cpu_min_ms = num(&v)?.max(1.0),
            "--tta-secs" => a.tta_secs = num(&v)?.max(0.0),
            "--eval-every" => a.eval_every = num(&v)?.clamp(1.0, 100_000.0) as u32,
            "--verify-steps" => a.verify_steps = num(&v)?.clamp(0.0, 50.0) as u64,
            "--out" => a.out = Some(v),
            _ => return Err(format!("bench cnn: unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Subnormal gaps are forgiven (a GPU may flush them to zero; the bound assumes it keeps them).
const FLUSH: f64 = f32::MIN_POSITIVE as f64;

/// The largest max(0, |got − want| − 2⁻¹²⁶) / bound (≤ 1 passes) and its index; a NaN fails.
pub fn worst(got: &[f32], want: &[f32], bound: &[f64]) -> (f64, usize) {
    if got.len() != want.len() || want.len() != bound.len() {
        return (f64::INFINITY, 0);
    }
    let mut w = (0.0f64, 0usize);
    for (i, ((&g, &c), &b)) in got.iter().zip(want).zip(bound).enumerate() {
        let gap = ((g as f64 - c as f64).abs() - FLUSH).max(0.0);
        let r = if !g.is_finite() {
            f64::INFINITY
        } else if gap == 0.0 {
            0.0
        } else if b > 0.0 {
            gap / b
        } else {
            f64::INFINITY
        };
        if r > w.0 {
            w = (r, i);
        }
    }
    w
}

/// One twin step in lockstep: the state before it (parameters, first and second moment),
/// after it, the bound on |GPU − twin| after it when the GPU starts from the same state
/// before it (the sharpest: no earlier step's bound carried), and the step's loss and bound.
pub struct LockStep {
    pub before: [Vec<f32>; 3],
    pub after: [Vec<f32>; 3],
    pub bound: StateBound,
    pub loss: f32,
    pub loss_bound: f64,
}

/// The twin's first `steps` steps, each with its lockstep bound (the native tests' lockstep
/// mode: a free run's bound, carried from step to step, grows past any use within 3 Adam
/// steps — Adam divides by √v of tiny gradients).
pub fn twin_lockstep(s: &Setup, batch: usize, steps: u64) -> Result<Vec<LockStep>, String> {
    let mut cpu = CpuTrainer::new(
        s.net.clone(),
        s.hyper,
        s.params.clone(),
        batch,
        s.train.clone(),
        order_seed(s),
    );
    let mut out = Vec::new();
    for step in 1..=steps {
        let labels = cpu.gather(step - 1).1.to_vec();
        let (m, v) = cpu.optimiser_state();
        let before = [cpu.params.clone(), m.to_vec(), v.to_vec()];
        cpu.step();
        let b = step_bound(
            &TwinStep {
                net: &s.net,
                hyper: &s.hyper,
                step,
                params: &before[0],
                m: &before[1],
                v: &before[2],
                ws: cpu.workspace(),
                grads: cpu.grads(),
                labels: &labels,
            },
            &StateBound::zero(s.params.len()),
        )
        .ok_or("the twin's buffers do not have the net's sizes")?;
        let (m, v) = cpu.optimiser_state();
        out.push(LockStep {
            before,
            after: [cpu.params.clone(), m.to_vec(), v.to_vec()],
            bound: b.state,
            loss: cpu.last_loss,
            loss_bound: b.loss,
        });
    }
    Ok(out)
}

fn session(g: &Rc<Gpu>, s: &Setup, batch: usize, eval_batch: usize) -> Result<CnnSession, String> {
    pollster::block_on(CnnSession::new(
        g.clone(),
        CnnConfig {
            net: s.net.clone(),
            hyper: s.hyper,
            batch,
            params: &s.params,
            train: s.train.clone(),
            order_seed: order_seed(s),
            eval_batch,
        },
    ))
    .map_err(|e| format!("session: {e}"))
}

/// GPU against twin for the first `steps` steps in lockstep (each step starts the GPU from
/// the twin's state): the worst gap as a fraction of its bound over every step.
fn verify(g: &Rc<Gpu>, s: &Setup, batch: usize, steps: u64) -> Result<f64, String> {
    let twin = twin_lockstep(s, batch, steps)?;
    let mut gpu = session(g, s, batch, 0)?;
    let mut all = 0.0f64;
    for (k, t) in twin.iter().enumerate() {
        gpu.write_state(&t.before[0], &t.before[1], &t.before[2])
            .map_err(|e| e.to_string())?;
        gpu.step().map_err(|e| e.to_string())?;
        let r = gpu
            .read_blocking(&[Part::Params, Part::M, Part::V, Part::Losses])
            .map_err(|e| e.to_string())?;
        let (p, at) = worst(&r.params, &t.after[0], &t.bound.params);
        let m = worst(&r.m, &t.after[1], &t.bound.m).0;
        let v = worst(&r.v, &t.after[2], &t.bound.v).0;
        let loss = (r.loss as f64 - t.loss as f64).abs() / t.loss_bound.max(f64::MIN_POSITIVE);
        let w = p.max(m).max(v).max(loss);
        println!(
            "verify batch {batch} step {}: worst |GPU − twin| / bound: params {p:.3} (at {at}), m {m:.3}, v {v:.3}, loss {loss:.3} (GPU {}, twin {}) → {}",
            k + 1,
            r.loss,
            t.loss,
            if w <= 1.0 { "within the bound" } else { "OUTSIDE the bound" }
        );
        if w > 1.0 {
            return Err(format!(
                "batch {batch} step {}: GPU parameter {at} is {} where the twin has {} (bound {:e})",
                k + 1,
                r.params.get(at).copied().unwrap_or(f32::NAN),
                t.after[0].get(at).copied().unwrap_or(f32::NAN),
                t.bound.params.get(at).copied().unwrap_or(0.0)
            ));
        }
        all = all.max(w);
    }
    Ok(all)
}

/// Submits `n` steps and drains the queue; the wall time in ms and the last step's loss.
fn gpu_steps(sess: &mut CnnSession, n: u32) -> Result<(f64, f32), String> {
    let t = Instant::now();
    sess.steps(n).map_err(|e| e.to_string())?;
    let r = sess
        .read_blocking(&[Part::Losses])
        .map_err(|e| e.to_string())?;
    Ok((t.elapsed().as_secs_f64() * 1e3, r.loss))
}

/// One whole GPU run: ms per step.
fn gpu_run(g: &Rc<Gpu>, s: &Setup, batch: usize, min_ms: f64) -> Result<(f64, u32, f32), String> {
    let mut sess = session(g, s, batch, 0)?;
    gpu_steps(&mut sess, 20)?;
    let (pilot, _) = gpu_steps(&mut sess, 20)?;
    let n = ((min_ms / (pilot / 20.0)).ceil() as u32).clamp(20, 200_000);
    let (ms, loss) = gpu_steps(&mut sess, n)?;
    if !loss.is_finite() {
        return Err(format!("batch {batch}: the loss is {loss}"));
    }
    Ok((ms / n as f64, n, loss))
}

/// One whole tuned-CPU run (this thread): ms per step.
fn cpu_run(s: &Setup, batch: usize, min_ms: f64) -> (f64, u32, f32) {
    let mut t = TunedTrainer::new(
        s.net.clone(),
        s.hyper,
        s.params.clone(),
        batch,
        s.train.clone(),
        order_seed(s),
        Gemm::best(),
    );
    t.step();
    let clock = Instant::now();
    let pilot = 3;
    for _ in 0..pilot {
        t.step();
    }
    let per = clock.elapsed().as_secs_f64() * 1e3 / pilot as f64;
    let n = ((min_ms / per).ceil() as u32).clamp(3, 100_000);
    let clock = Instant::now();
    for _ in 0..n {
        t.step();
    }
    (
        clock.elapsed().as_secs_f64() * 1e3 / n as f64,
        n,
        t.last_loss,
    )
}

/// Test accuracy of the session's current parameters (four evaluation passes).
fn test_accuracy(sess: &mut CnnSession, s: &Setup, classes: usize) -> Result<(f32, f32), String> {
    let px = s.net.side * s.net.side;
    let mut logits = Vec::with_capacity(s.test.len() * classes);
    for chunk in s.test.x.chunks(EVAL_CHUNK * px) {
        let r = sess
            .eval_blocking(chunk, false)
            .map_err(|e| e.to_string())?;
        logits.extend_from_slice(&r.logits[..r.rows * classes]);
    }
    let e = evaluation(&logits, &s.test.y, classes);
    Ok((e.accuracy, e.loss))
}

struct Tta {
    /// (seconds, step) when ≥ 90 % and ≥ 97 % were first seen.
    at90: Option<(f64, u64)>,
    at97: Option<(f64, u64)>,
    /// Accuracy of the last evaluation before the limit, its time and step.
    last: (f32, f64, u64),
    best: f32,
    log: Vec<(f64, u64, f32, f32)>,
}

fn time_to_accuracy(g: &Rc<Gpu>, s: &Setup, secs: f64, every: u32) -> Result<Tta, String> {
    let clock = Instant::now();
    let mut sess = session(g, s, s.spec.batch, EVAL_CHUNK)?;
    let classes = s.net.classes;
    let mut out = Tta {
        at90: None,
        at97: None,
        last: (0.0, 0.0, 0),
        best: 0.0,
        log: Vec::new(),
    };
    loop {
        sess.steps(every).map_err(|e| e.to_string())?;
        let (acc, loss) = test_accuracy(&mut sess, s, classes)?;
        let t = clock.elapsed().as_secs_f64();
        if t > secs {
            break;
        }
        let step = sess.steps_submitted();
        out.log.push((t, step, acc, loss));
        out.last = (acc, t, step);
        out.best = out.best.max(acc);
        if acc >= 0.90 && out.at90.is_none() {
            out.at90 = Some((t, step));
        }
        if acc >= 0.97 && out.at97.is_none() {
            out.at97 = Some((t, step));
        }
    }
    Ok(out)
}

pub fn run(args: impl Iterator<Item = String>) -> Result<(), String> {
    let a = parse(args)?;
    let s = setup(&a.digits)?;
    let mut tsv = vec!["what\tbatch\truns\tmedian\tmin\tmax\tunit\textra".to_string()];
    println!(
        "CNN {:?} channels, {:?} kernels, {} optimiser lr {}, seed {}: {} parameters; {} train / {} test digits from {}",
        s.spec.channels,
        s.spec.kernels,
        s.hyper.optimiser.code(),
        s.hyper.lr,
        s.spec.seed,
        s.params.len(),
        s.train.len(),
        s.test.len(),
        a.digits
    );
    let g = Rc::new(Gpu::request_blocking().map_err(|e| e.to_string())?);
    g.set_runtime_checks(a.checked);
    let step_row = if a.checked {
        "wgpu-checked-step"
    } else {
        "wgpu-step"
    };
    println!(
        "runtime checks: {}",
        if a.checked {
            "on (--checked: as Firefox compiles WGSL)"
        } else {
            "off for the catalogue's kernels (as the app natively)"
        }
    );
    let ad = g.adapter().clone();
    println!(
        "adapter: {} ({}, {}, driver {})",
        ad.name, ad.device_type, ad.backend, ad.driver
    );
    if ad.is_software {
        println!("NOTE: software adapter — these are CPU numbers, not GPU numbers.");
    }
    let mut gpu_ms = Vec::new();
    for &batch in &a.batches {
        let verified = if a.verify_steps > 0 {
            match verify(&g, &s, batch, a.verify_steps) {
                Ok(w) => format!("verified {} steps, worst/bound {w:.3}", a.verify_steps),
                Err(e) => {
                    println!("NOT MEASURED: {e}");
                    tsv.push(format!(
                        "{step_row}\t{batch}\t0\tNaN\tNaN\tNaN\tms\tFAILED {e}"
                    ));
                    continue;
                }
            }
        } else {
            "unverified".into()
        };
        let mut ms = Vec::new();
        for run in 0..a.runs {
            let (m, n, loss) = gpu_run(&g, &s, batch, a.min_ms)?;
            println!(
                "wgpu batch {batch} run {}: {m:.4} ms/step ({:.0} steps/s, {n} steps, last loss {loss:.4})",
                run + 1,
                1e3 / m
            );
            ms.push(m);
        }
        let (lo, hi) = min_max(&ms);
        let med = median(&ms);
        println!(
            "| wgpu | {batch} | {med:.4} ms | {:.0} steps/s | {lo:.4}–{hi:.4} ms | {:.0} samples/s | {verified} |",
            1e3 / med,
            batch as f64 * 1e3 / med
        );
        tsv.push(format!(
            "{step_row}\t{batch}\t{}\t{med}\t{lo}\t{hi}\tms\t{verified}",
            a.runs
        ));
        gpu_ms.push((batch, med));
    }
    if a.cpu {
        for &batch in &a.batches {
            let mut ms = Vec::new();
            for run in 0..a.runs {
                let (m, n, loss) = cpu_run(&s, batch, a.cpu_min_ms);
                println!(
                    "tuned CPU (one core, {}) batch {batch} run {}: {m:.3} ms/step ({n} steps, last loss {loss:.4})",
                    Gemm::best().code(),
                    run + 1
                );
                ms.push(m);
            }
            let (lo, hi) = min_max(&ms);
            let med = median(&ms);
            let ratio = gpu_ms
                .iter()
                .find(|(b, _)| *b == batch)
                .map(|(_, g)| med / g);
            println!(
                "| tuned CPU, one core | {batch} | {med:.3} ms | {:.1} steps/s | {lo:.3}–{hi:.3} ms | wgpu is {} the CPU |",
                1e3 / med,
                ratio.map_or("n/a".into(), |r| format!("{r:.1}×"))
            );
            tsv.push(format!(
                "cpu-step\t{batch}\t{}\t{med}\t{lo}\t{hi}\tms\t{}",
                a.runs,
                ratio.map_or("".into(), |r| format!("wgpu {r:.2}x"))
            ));
        }
    }
    if a.tta_secs > 0.0 {
        println!(
            "\ntime to accuracy (wgpu, batch {}, evaluating the {} test digits every {} steps, for {} s):",
            s.spec.batch,
            s.test.len(),
            a.eval_every,
            a.tta_secs
        );
        let t = time_to_accuracy(&g, &s, a.tta_secs, a.eval_every)?;
        for (i, (time, step, acc, loss)) in t.log.iter().enumerate() {
            // The first 40 evaluations, then every 20th.
            if i < 40 || i % 20 == 0 {
                println!(
                    "  {time:8.3} s  step {step:7}  test accuracy {:.1} %  loss {loss:.4}",
                    acc * 100.0
                );
            }
        }
        let fmt = |x: Option<(f64, u64)>| {
            x.map_or("not reached".into(), |(t, s)| {
                format!("{t:.2} s (step {s})")
            })
        };
        println!(
            "| wgpu | 90 %: {} | 97 %: {} | at {} s: {:.1} % (step {}, best {:.1} %) |",
            fmt(t.at90),
            fmt(t.at97),
            a.tta_secs,
            t.last.0 * 100.0,
            t.last.2,
            t.best * 100.0
        );
        let secs = |x: Option<(f64, u64)>| x.map_or("NaN".to_string(), |(t, _)| t.to_string());
        let steps = |x: Option<(f64, u64)>| x.map_or("-".to_string(), |(_, s)| s.to_string());
        tsv.push(format!(
            "wgpu-tta90\t{}\t1\t{}\t\t\ts\tstep {}",
            s.spec.batch,
            secs(t.at90),
            steps(t.at90)
        ));
        tsv.push(format!(
            "wgpu-tta97\t{}\t1\t{}\t\t\ts\tstep {}",
            s.spec.batch,
            secs(t.at97),
            steps(t.at97)
        ));
        tsv.push(format!(
            "wgpu-acc-at-limit\t{}\t1\t{}\t\t\tfraction\tat {:.2} s step {}",
            s.spec.batch, t.last.0, t.last.1, t.last.2
        ));
    }
    if let Some(path) = a.out {
        std::fs::write(&path, tsv.join("\n") + "\n").map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `cnn::net`'s per-parameter values (f64 bounds) in the arena's parameter layout.
fn bound_to_arena(map: &Map, flat: &[f64], words: usize) -> Vec<f64> {
    let mut out = vec![0.0; words];
    for &(at, r) in &map.params {
        if let (Some(dst), Some(src)) = (out.get_mut(r.words()), flat.get(at..at + r.len)) {
            dst.copy_from_slice(src);
        }
    }
    out
}

/// `bench dump-kernels --dir DIR --cnn DIGITS [--cnn-batches 64,256] [--cnn-epochs 300]
/// [--cnn-verify-steps 3]`: the CNN session's engine exactly as `CnnSession` builds it
/// (`gpu_runtime::cnn_training::described`), for `crates/bench/dawn/cnn.mjs` (and the data
/// for `crates/bench/tfjs/cnn_tfjs.mjs`). Writes DIR/cnn/cnn.json and, per batch B, the
/// engine's description in DIR/cnn/bB/ (`engine_dump`: buffers, dispatches, programs; the
/// staging buffer of `per_submit` steps' batches is one of its buffers, and a step is its
/// batch copied from there into the arena, then the train-step program, as the session
/// submits it) — and the binary files: the seeded train and test split as f32 pixels and u32
/// labels, the batch order (the first `--cnn-epochs` epochs' permutations of the train set:
/// step s's batch is entries s·B … s·B + B − 1 of their concatenation, as `BatchOrder`), and
/// per batch the twin's first `--cnn-verify-steps` steps in lockstep ([`twin_lockstep`]) in
/// the ARENA's parameter layout: `verify_B_before.bin` and `verify_B_after.bin` (per step:
/// parameters, m, v as f32) and `verify_B_bound.bin` (the same as f64 bounds; padding 0),
/// the losses and their bounds in the JSON.
pub fn dump(
    dir: &str,
    digits: &str,
    batches: &[usize],
    epochs: u64,
    verify_steps: u64,
) -> Result<(), String> {
    let s = setup(digits)?;
    let d = format!("{dir}/cnn");
    std::fs::create_dir_all(&d).map_err(|e| format!("{d}: {e}"))?;
    let write = |name: &str, bytes: Vec<u8>| {
        std::fs::write(format!("{d}/{name}"), bytes).map_err(|e| format!("{name}: {e}"))
    };
    write("params_init.bin", f32_bytes(&s.params))?;
    write("train_x.bin", f32_bytes(&s.train.x))?;
    write("train_y.bin", u32_bytes(&s.train.y))?;
    write("test_x.bin", f32_bytes(&s.test.x))?;
    write("test_y.bin", u32_bytes(&s.test.y))?;
    let order = BatchOrder::new(s.train.len(), order_seed(&s));
    let mut perms = Vec::with_capacity(epochs as usize * s.train.len());
    for e in 0..epochs {
        perms.extend(order.epoch(e));
    }
    write("order.bin", u32_bytes(&perms))?;
    let mut per_batch = Vec::new();
    let mut eval_json = String::from("null");
    for &batch in batches {
        let described = described(&s.net, &s.hyper, batch, EVAL_CHUNK, &s.params, &[], None)
            .map_err(|e| e.to_string())?;
        let bdir = format!("{d}/b{batch}");
        std::fs::create_dir_all(&bdir).map_err(|e| format!("{bdir}: {e}"))?;
        let net = &described.net;
        let map = described.map.clone();
        let words = net.param_words();
        let (input, targets, losses) = (net.input.act, net.targets, net.losses);
        if let (Some(e), Some(em)) = (&described.eval, &described.eval_map) {
            eval_json = format!(
                "{{\"images\":{},\"input_offset\":{},\"logits_offset\":{}}}",
                e.batch,
                em.input.at * 4,
                em.logits.at * 4
            );
        }
        let per_submit = described.per_submit;
        let desc = engine_dump::describe(net, &described.params, described.setup)?;
        let engine = engine_dump::description_json(&bdir, &desc)?;
        let twin = twin_lockstep(&s, batch, verify_steps)?;
        let mut before = Vec::new();
        let mut after = Vec::new();
        let mut bound = Vec::new();
        for t in &twin {
            for i in 0..3 {
                before.extend(map.to_arena(&t.before[i], words));
                after.extend(map.to_arena(&t.after[i], words));
            }
            bound.extend(bound_to_arena(&map, &t.bound.params, words));
            bound.extend(bound_to_arena(&map, &t.bound.m, words));
            bound.extend(bound_to_arena(&map, &t.bound.v, words));
        }
        write(&format!("verify_{batch}_before.bin"), f32_bytes(&before))?;
        write(&format!("verify_{batch}_after.bin"), f32_bytes(&after))?;
        write(&format!("verify_{batch}_bound.bin"), f64_bytes(&bound))?;
        let losses_j: Vec<String> = twin.iter().map(|t| format!("{:e}", t.loss)).collect();
        let loss_bounds: Vec<String> = twin.iter().map(|t| format!("{:e}", t.loss_bound)).collect();
        per_batch.push(format!(
            "{{\"batch\":{batch},\"dir\":{},\"engine\":{engine},\"per_submit\":{per_submit},\"staging\":{},\"input_offset\":{},\"targets_offset\":{},\"losses_offset\":{},\"param_words\":{words},\"verify\":{{\"steps\":{verify_steps},\"losses\":[{}],\"loss_bounds\":[{}]}}}}",
            js(&format!("b{batch}")),
            js(STAGING),
            input.at * 4,
            targets.at * 4,
            losses.at * 4,
            losses_j.join(","),
            loss_bounds.join(",")
        ));
    }
    let json = format!(
        "{{\"spec\":{{\"channels\":{},\"kernels\":{},\"optimiser\":{},\"lr\":{:e},\"momentum\":{:e},\"batch\":{},\"seed\":{}}},\
         \"side\":{},\"classes\":{},\"params\":{},\"train\":{},\"test\":{},\"epochs\":{epochs},\
         \"batches\":[{}],\"eval\":{eval_json}}}\n",
        num_list(s.spec.channels.iter()),
        num_list(s.spec.kernels.iter()),
        js(s.hyper.optimiser.code()),
        s.hyper.lr,
        s.hyper.momentum,
        s.spec.batch,
        s.spec.seed,
        s.net.side,
        s.net.classes,
        s.params.len(),
        s.train.len(),
        s.test.len(),
        per_batch.join(","),
    );
    write("cnn.json", json.into_bytes())?;
    println!(
        "wrote {d}/cnn.json: the engine's step at batches {batches:?}, {epochs} epochs of order, twin after {verify_steps} steps"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_is_a_flag_without_a_value() {
        let p = |v: &[&str]| parse(v.iter().map(|s| s.to_string()));
        let a = p(&["--checked", "--batches", "4", "--no-cpu"]).expect("valid");
        assert!(a.checked && !a.cpu);
        assert_eq!(a.batches, vec![4]);
        assert!(!p(&["--batches", "4"]).expect("valid").checked);
    }
}
