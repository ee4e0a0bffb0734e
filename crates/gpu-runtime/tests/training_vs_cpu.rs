//! The MLP training session on a real wgpu device (lavapipe under `cargo xtask test`) against
//! its CPU twin: same seeded initialisation, batch order and formulas, so the loss
//! trajectories must agree step by step, every parameter must agree after 50 steps (and a
//! twin with a planted mistake must not); and the GPU alone must learn circle and XOR.

use std::rc::Rc;

use gpu_runtime::mlp::net::{batch_order, metrics};
use gpu_runtime::mlp::{CpuTrainer, Spec};
use gpu_runtime::training::{SessionConfig, TrainingSession};
use gpu_runtime::Gpu;

fn gpu() -> Rc<Gpu> {
    Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ))
}

fn spec(query: &str) -> Spec {
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let (s, errors) =
        Spec::from_params(|k| pairs.iter().find(|(a, _)| a == k).map(|(_, b)| b.as_str()));
    assert!(errors.is_empty(), "{query}: {errors:?}");
    s
}

struct Pair {
    gpu: TrainingSession,
    cpu: CpuTrainer,
    spec: Spec,
    train_x: Vec<f32>,
    train_y: Vec<u32>,
    test_y: Vec<u32>,
}

fn pair(g: &Rc<Gpu>, s: Spec) -> Pair {
    let net = s.net();
    let (train, test) = s.data();
    let train_x = train.features(&s.features);
    let test_x = test.features(&s.features);
    let params = net.init_params(s.seed);
    let order = batch_order(train.len(), s.seed);
    let eval: Vec<f32> = train_x.iter().chain(&test_x).copied().collect();
    let session = pollster::block_on(TrainingSession::new(
        g.clone(),
        SessionConfig::from_spec(&net, &s, &train, &params, &eval),
    ))
    .expect("session");
    let mut cpu = CpuTrainer::new(
        net,
        s.hyper(),
        params,
        s.batch,
        train_x.clone(),
        train.label.clone(),
        order,
    );
    cpu.accum = s.accum;
    Pair {
        gpu: session,
        cpu,
        spec: s,
        train_x,
        train_y: train.label,
        test_y: test.label,
    }
}

impl Pair {
    /// (train loss, test loss, test accuracy) of the GPU's current parameters.
    fn gpu_metrics(&mut self) -> (f32, f32, f32) {
        let r = self.gpu.eval_blocking().expect("eval");
        let classes = self.spec.net().classes();
        let n = self.train_y.len() * classes;
        let loss = self.spec.net().loss;
        let (train_loss, _) = metrics(loss, &r.logits[..n], &self.train_y, classes);
        let (test_loss, acc) = metrics(loss, &r.logits[n..], &self.test_y, classes);
        (train_loss, test_loss, acc)
    }
}

/// Train-set loss after every one of the first 100 steps, GPU against CPU. They differ only
/// by rounding (the GPU may fuse multiply-adds, its exp/tanh differ in the last bits), which
/// grows slowly over the steps: agreement within 1e-3 absolute + 1 % relative.
#[test]
fn gpu_and_cpu_loss_trajectories_agree_for_100_steps() {
    let g = gpu();
    for q in [
        "data=spiral&layers=8,8&act=tanh&lr=0.03&batch=32&opt=adam&noise=0.1&seed=1",
        "data=circle&layers=6&act=relu&lr=0.1&batch=17&opt=momentum&features=x,y,x2,y2&seed=2",
        "data=xor&layers=5,3&act=sigmoid&lr=0.5&batch=8&opt=sgd&loss=mse&features=x,y,xy,sinx,siny&seed=3",
        // A batch above the 64-thread reduction width, not a multiple of it.
        "data=gauss&layers=16,16&act=relu&lr=0.01&batch=150&opt=adam&noise=0.3&seed=4",
        // Regression: one output, real targets in the label slot.
        "data=hills&layers=8,8&act=tanh&lr=0.03&batch=16&opt=adam&noise=0.1&seed=8",
        "data=plane&layers=4&act=relu&lr=0.1&batch=20&opt=momentum&reg=l2&regrate=0.01&seed=9",
    ] {
        let mut p = pair(&g, spec(q));
        let mut worst = 0.0f32;
        for step in 1..=100 {
            p.gpu.step().expect("step");
            p.cpu.step();
            let (gpu_loss, _, _) = p.gpu_metrics();
            let (cpu_loss, _) = p.cpu.evaluate(&p.train_x, &p.train_y);
            let diff = (gpu_loss - cpu_loss).abs();
            worst = worst.max(diff);
            assert!(
                diff <= 1e-3 + 0.01 * cpu_loss.abs(),
                "{q}, step {step}: GPU loss {gpu_loss} vs CPU {cpu_loss}"
            );
        }
        eprintln!("{q}: worst |GPU − CPU| train loss {worst:e}");
        assert_eq!(p.gpu.steps_submitted(), 100);
        assert_eq!(p.gpu.steps_completed(), 100);
    }
}

/// The GPU alone reaches ≥ 95 % test accuracy on circle and XOR within 600 steps (the same
/// budget as the CPU test in crates/mlp).
#[test]
fn gpu_learns_circle_and_xor() {
    let g = gpu();
    for data in ["circle", "xor"] {
        let s = spec(&format!(
            "data={data}&layers=8,8&act=tanh&lr=0.03&batch=16&opt=adam&noise=0.05&seed=3"
        ));
        let mut p = pair(&g, s);
        let (first, _, _) = p.gpu_metrics();
        for _ in 0..600 {
            p.gpu.step().expect("step");
        }
        let (train_loss, test_loss, acc) = p.gpu_metrics();
        eprintln!("{data}: loss {first} → {train_loss} (test {test_loss}), test accuracy {acc}");
        assert!(train_loss < first);
        assert!(acc >= 0.95, "{data}: test accuracy {acc}");
    }
}

/// Readbacks never block and are skipped while one is pending; a batch's losses come back too.
#[test]
fn readback_is_skipped_while_pending() {
    let g = gpu();
    let mut p = pair(&g, spec("data=gauss&batch=10"));
    p.gpu.step().expect("step");
    assert!(p.gpu.request_eval().expect("first request"));
    assert!(!p.gpu.request_eval().expect("second request is skipped"));
    p.gpu.wait().expect("wait");
    let r = p.gpu.poll_eval().expect("poll").expect("arrived");
    assert_eq!(r.step, 1);
    assert_eq!(r.batch_losses.len(), 10);
    assert!(r.batch_losses.iter().all(|l| l.is_finite() && *l >= 0.0));
    assert!(p.gpu.request_eval().expect("free again"));
}

#[test]
fn lost_device_is_reported() {
    let g = gpu();
    let mut p = pair(&g, spec("data=circle"));
    p.gpu.step().expect("a step before the loss");
    g.destroy();
    assert!(g.is_lost(), "wgpu's lost callback did not fire");
    assert!(matches!(
        p.gpu.step(),
        Err(gpu_runtime::GpuError::DeviceLost(_))
    ));
}

const PARAM_CASES: &[&str] = &[
    "data=spiral&layers=8,8&act=tanh&lr=0.03&batch=32&opt=adam&noise=0.1&seed=1",
    "data=circle&layers=6&act=relu&lr=0.1&batch=17&opt=momentum&features=x,y,x2,y2&seed=2",
    "data=xor&layers=5,3&act=sigmoid&lr=0.5&batch=8&opt=sgd&loss=mse&features=x,y,xy,sinx,siny&seed=3",
    "data=gauss&layers=16,16&act=relu&lr=0.01&batch=150&opt=adam&noise=0.3&seed=4",
];
const PARAM_STEPS: u32 = 50;

/// The largest gap, over all parameters, as a multiple of its bound (≤ 1 passes): the
/// session's [`gpu_runtime::training::param_ulps_per_step`] per step for the twin's batch
/// sums ([`gpu_runtime::training::batch_sum_len`] of its batch and micro-batches), which
/// `bench mlp` and the Dawn runner also hold.
fn worst_ratio(gpu: &[f32], twin: &CpuTrainer) -> f32 {
    worst_ratio_after(gpu, twin, PARAM_STEPS)
}

/// [`worst_ratio`] after `steps` steps: the bound grows by the same ulps every step.
fn worst_ratio_after(gpu: &[f32], twin: &CpuTrainer, steps: u32) -> f32 {
    let cpu = &twin.params;
    assert_eq!(gpu.len(), cpu.len());
    for (a, b) in gpu.iter().zip(cpu) {
        assert!(a.is_finite() && b.is_finite(), "{a} vs {b}");
    }
    let sum_len = gpu_runtime::training::batch_sum_len(twin.batch, twin.accum);
    gpu_runtime::training::param_gap_ratio(gpu, cpu, steps, sum_len)
}

/// Trains GPU and twin `PARAM_STEPS` steps, the twin first changed by `twin` (nothing, or a
/// planted mistake), and returns [`worst_ratio`] of their parameters.
fn param_gap(g: &Rc<Gpu>, q: &str, twin: impl FnOnce(&mut CpuTrainer)) -> f32 {
    let mut p = pair(g, spec(q));
    twin(&mut p.cpu);
    for _ in 0..PARAM_STEPS {
        p.gpu.step().expect("step");
        p.cpu.step();
    }
    let gpu_params = p.gpu.eval_blocking().expect("eval").params;
    worst_ratio(&gpu_params, &p.cpu)
}

/// Every weight and bias after 50 steps, GPU against CPU, within [`gpu_runtime::training::param_ulps_per_step`].
#[test]
fn every_parameter_agrees_after_50_steps() {
    let g = gpu();
    for q in PARAM_CASES {
        let r = param_gap(&g, q, |_| {});
        eprintln!("{q}: worst parameter gap {r:.4} of its bound");
        assert!(
            r <= 1.0,
            "{q}: a parameter is {r}× its bound away from the CPU twin"
        );
    }
}

/// The comparison above can fail: a twin with Adam's ε at PyTorch's 1e-8 instead of 1e-7, or
/// one that never learns its biases, is caught on every case it applies to.
#[test]
fn a_wrong_epsilon_or_bias_rule_breaks_the_comparison() {
    let g = gpu();
    for q in PARAM_CASES {
        if spec(q).hyper().optimiser == gpu_runtime::mlp::Optimiser::Adam {
            let r = param_gap(&g, q, |t| t.epsilon = 1e-8);
            assert!(r > 1.0, "{q}: ε = 1e-8 went unnoticed ({r})");
        }
        let r = param_gap(&g, q, |t| t.bias_input = 0.0);
        assert!(r > 1.0, "{q}: frozen biases went unnoticed ({r})");
    }
}

/// Largest |a − b| over two parameter vectors.
fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// With L2 (and L1) regularisation on, the GPU's parameters after 100 steps agree with the CPU
/// twin's within rounding (1e-3 + 1 % of the largest parameter). The same comparison rejects a
/// twin whose regularisation term is wrong (strength doubled), and one without it, so it can
/// see the term: the GPU must apply exactly the twin's formula.
#[test]
fn regularised_parameters_agree_and_a_wrong_term_is_caught() {
    let g = gpu();
    for q in [
        "data=circle&layers=6,4&act=tanh&lr=0.03&batch=16&opt=adam&reg=l2&regrate=0.03&seed=5",
        "data=xor&layers=6&act=relu&lr=0.1&batch=20&opt=momentum&reg=l2&regrate=0.01&seed=6",
        "data=gauss&layers=5&act=sigmoid&lr=0.3&batch=12&opt=sgd&reg=l1&regrate=0.003&seed=7",
    ] {
        let s = spec(q);
        let mut p = pair(&g, s.clone());
        let twin = |l1: f32, l2: f32| {
            let hyper = gpu_runtime::mlp::Hyper {
                l1,
                l2,
                ..s.hyper()
            };
            let (train, _) = s.data();
            CpuTrainer::new(
                s.net(),
                hyper,
                s.net().init_params(s.seed),
                s.batch,
                p.train_x.clone(),
                train.label.clone(),
                batch_order(train.len(), s.seed),
            )
        };
        let (l1, l2) = (s.hyper().l1, s.hyper().l2);
        let mut doubled = twin(2.0 * l1, 2.0 * l2);
        let mut none = twin(0.0, 0.0);
        for _ in 0..100 {
            p.gpu.step().expect("step");
            p.cpu.step();
            doubled.step();
            none.step();
        }
        let gpu_params = p.gpu.eval_blocking().expect("eval").params;
        let cpu = &p.cpu.params;
        let largest = cpu.iter().map(|v| v.abs()).fold(0.0, f32::max);
        let tol = 1e-3 + 0.01 * largest;
        let (ok, wrong, off) = (
            max_diff(&gpu_params, cpu),
            max_diff(&gpu_params, &doubled.params),
            max_diff(&gpu_params, &none.params),
        );
        eprintln!("{q}: GPU vs twin {ok:e}, vs doubled term {wrong:e}, vs no term {off:e} (tolerance {tol:e})");
        assert!(ok <= tol, "{q}: GPU and CPU parameters differ by {ok}");
        assert!(wrong > tol, "{q}: a doubled term ({wrong}) would pass");
        assert!(off > tol, "{q}: no term at all ({off}) would pass");
    }
}

/// Regression on the GPU alone: the hills' squared error falls to under a quarter of the
/// untrained network's within 600 steps, and the error measure is the RMSE √(2 · mean loss).
#[test]
fn gpu_learns_a_regression_surface() {
    let g = gpu();
    let s = spec("data=hills&layers=8,8&act=tanh&lr=0.03&batch=16&opt=adam&noise=0.05&seed=3");
    let mut p = pair(&g, s);
    let (first, _, _) = p.gpu_metrics();
    for _ in 0..600 {
        p.gpu.step().expect("step");
    }
    let (train_loss, test_loss, rmse) = p.gpu_metrics();
    eprintln!("hills: loss {first} → {train_loss} (test {test_loss}), test RMSE {rmse}");
    assert!(train_loss < first / 4.0, "{first} → {train_loss}");
    assert!((rmse - (2.0 * test_loss).sqrt()).abs() < 1e-6);
}

/// Every step path against the twin, parameter by parameter: the two workgroup-memory
/// dispatches (the default for small networks), the two per-sample whole-step dispatches
/// (asked for; small networks only) and the per-layer kernels (asked for, and the default for
/// a layer wider than `FUSED_MAX_WIDTH`: the gathering first layer, the fused output layer and
/// loss), each with several steps recorded
/// into one command buffer (`steps(k)`), so the step state advancing on the GPU is checked
/// across steps within one submission and across submissions.
#[test]
fn both_step_paths_and_batched_submits_agree_with_the_twin() {
    use gpu_runtime::training::{fused, PathOptions, StepPath};
    let g = gpu();
    let s = spec("data=spiral&layers=8,8&act=tanh&lr=0.03&batch=70&opt=adam&noise=0.1&seed=5");
    let (train, _) = s.data();
    let x = train.features(&s.features);
    let small = s.net();
    let wide = gpu_runtime::mlp::Net {
        sizes: vec![small.inputs(), 72, 5, small.classes()],
        ..small.clone()
    };
    for (net, per_submit, path, first_kernel) in [
        (
            small.clone(),
            7u32,
            Some(StepPath::Samples),
            "mlp-step-samples",
        ),
        (
            small.clone(),
            5,
            Some(StepPath::Layers),
            "mlp-forward-gather",
        ),
        (small, 6, None, "mlp-step-lanes"),
        (wide, 6, None, "mlp-forward-gather"),
    ] {
        let paths = PathOptions {
            step: path,
            tiled: None,
        };
        assert_eq!(
            fused(&net, paths),
            path == Some(StepPath::Samples),
            "{:?}",
            net.sizes
        );
        let params = net.init_params(5);
        let order = batch_order(train.len(), 5);
        let mut session = pollster::block_on(TrainingSession::new(
            g.clone(),
            SessionConfig {
                net: net.clone(),
                hyper: s.hyper(),
                batch: s.batch,
                params: &params,
                features: x.clone(),
                labels: train.label.clone(),
                order: order.clone(),
                eval_features: &x,
                accum: 1,
                paths,
            },
        ))
        .expect("session");
        assert_eq!(session.plan()[0].kernel_id, first_kernel, "{path:?}");
        let mut cpu = CpuTrainer::new(
            net.clone(),
            s.hyper(),
            params,
            s.batch,
            x.clone(),
            train.label.clone(),
            order,
        );
        // 70 × 6 or 7 steps wrap around the training set several times.
        for _ in 0..(PARAM_STEPS / per_submit) {
            session.steps(per_submit).expect("steps");
            for _ in 0..per_submit {
                cpu.step();
            }
        }
        let r = session.eval_blocking().expect("eval");
        let ratio = worst_ratio(&r.params, &cpu);
        eprintln!(
            "{:?}, {per_submit} per submit: worst gap {ratio:.4} of its bound",
            net.sizes
        );
        assert!(ratio <= 1.0, "{:?}: {ratio}× the bound", net.sizes);
        assert_eq!(r.batch_losses.len(), s.batch);
        assert_eq!(
            session.steps_submitted(),
            (PARAM_STEPS / per_submit * per_submit) as u64
        );
    }
}

/// Gradient accumulation: with `accum=k` the GPU runs k micro-batches of `batch` per update,
/// and its train-loss trajectory follows the CPU twin doing the same, step by step, within the
/// tolerance of the plain comparison above (1e-3 + 1 %); every parameter after 50 steps within
/// the same ulps-per-step bound. The readback holds the losses of all k·b samples of the step.
#[test]
fn accumulated_micro_batches_agree_with_the_twin() {
    let g = gpu();
    for q in [
        "data=spiral&layers=8,8&act=tanh&lr=0.03&batch=8&accum=4&opt=adam&noise=0.1&seed=1",
        "data=circle&layers=6&act=relu&lr=0.1&batch=17&accum=3&opt=momentum&seed=2",
        "data=hills&layers=8&act=tanh&lr=0.03&batch=70&accum=2&opt=sgd&noise=0.1&seed=8",
    ] {
        let mut p = pair(&g, spec(q));
        let k = p.spec.accum;
        let mut worst = 0.0f32;
        for step in 1..=PARAM_STEPS {
            p.gpu.step().expect("step");
            p.cpu.step();
            let (gpu_loss, _, _) = p.gpu_metrics();
            let (cpu_loss, _) = p.cpu.evaluate(&p.train_x, &p.train_y);
            let diff = (gpu_loss - cpu_loss).abs();
            worst = worst.max(diff);
            assert!(
                diff <= 1e-3 + 0.01 * cpu_loss.abs(),
                "{q}, step {step}: GPU loss {gpu_loss} vs CPU {cpu_loss}"
            );
        }
        let r = p.gpu.eval_blocking().expect("eval");
        assert_eq!(r.batch_losses.len(), k * p.spec.batch);
        // The step's mean loss over all its micro-batches is the twin's.
        let gpu_mean =
            r.batch_losses.iter().map(|&l| l as f64).sum::<f64>() / (k * p.spec.batch) as f64;
        let cpu_mean = p.cpu.last_batch_loss as f64;
        assert!(
            (gpu_mean - cpu_mean).abs() <= 1e-4 * cpu_mean.abs().max(1.0),
            "{q}: step loss {gpu_mean} vs {cpu_mean}"
        );
        let ratio = worst_ratio(&r.params, &p.cpu);
        eprintln!(
            "{q}: worst |GPU − CPU| train loss {worst:e}, parameters {ratio:.4} of their bound"
        );
        assert!(ratio <= 1.0, "{q}: parameters {ratio}× their bound apart");
        assert_eq!(p.gpu.steps_completed(), PARAM_STEPS as u64);
    }
    // Accumulated updates recorded five to a command buffer (`steps(5)`): the step state
    // swaps per micro-batch and Adam's t advances once per update, all on the GPU.
    let q = "data=spiral&layers=8,8&act=tanh&lr=0.03&batch=8&accum=3&opt=adam&noise=0.1&seed=4";
    let mut p = pair(&g, spec(q));
    for _ in 0..PARAM_STEPS / 5 {
        p.gpu.steps(5).expect("steps");
        for _ in 0..5 {
            p.cpu.step();
        }
    }
    let r = p.gpu.eval_blocking().expect("eval");
    let ratio = worst_ratio(&r.params, &p.cpu);
    eprintln!("{q}, 5 per submit: parameters {ratio:.4} of their bound");
    assert!(ratio <= 1.0, "{q}, 5 per submit: {ratio}x the bound");
}

/// Mean of means: two micro-batches of b give the same update as one batch of 2b. Each
/// sample's gradient term δ·a is computed identically both ways (the forward pass and the
/// loss gradient, scaled by 1/(2b), are per sample); only the order of the 2b additions
/// differs. Each order's sum is within (n − 1)·u·Σ|terms| of the exact sum (u = 2⁻²⁴, n = 2b),
/// so the two gradients differ by at most 2(n − 1)·u·Σ|terms|, and one SGD step moves the
/// parameters apart by at most lr times that, plus one rounding of each update (u·|p| each).
/// Σ|terms| is measured from each sample's own gradient (a twin with a batch of one). Checked
/// on the CPU twin and on the GPU; a "sum, not mean" accumulation (each micro-batch divided by
/// b instead of 2b) is twice the gradient and fails.
#[test]
fn two_micro_batches_of_b_equal_one_batch_of_2b() {
    let g = gpu();
    for (q, b) in [
        (
            "data=spiral&layers=8,8&act=tanh&lr=0.5&opt=sgd&noise=0.1&seed=1",
            16usize,
        ),
        (
            "data=xor&layers=5,3&act=sigmoid&lr=0.5&opt=sgd&loss=mse&features=x,y,xy&seed=3",
            40,
        ),
    ] {
        let half = spec(&format!("{q}&batch={b}&accum=2"));
        let whole = spec(&format!("{q}&batch={}&accum=1", 2 * b));
        let mut a = pair(&g, half.clone());
        let mut w = pair(&g, whole);
        a.cpu.step();
        w.cpu.step();
        a.gpu.step().expect("step");
        w.gpu.step().expect("step");
        let (pa, pw) = (
            a.gpu.eval_blocking().expect("eval").params,
            w.gpu.eval_blocking().expect("eval").params,
        );
        // Σ|terms| per parameter from each sample's own gradient, scaled by 1/(2b).
        let n = 2 * b;
        let (train, _) = half.data();
        let order = batch_order(train.len(), half.seed);
        let mut abs_sum = vec![0.0f64; a.cpu.params.len()];
        for &i in &order[..n] {
            let mut one = CpuTrainer::new(
                half.net(),
                gpu_runtime::mlp::Hyper {
                    lr: 0.0,
                    ..half.hyper()
                },
                half.net().init_params(half.seed),
                1,
                a.train_x.clone(),
                train.label.clone(),
                vec![i],
            );
            one.step();
            for (s, &gi) in abs_sum.iter_mut().zip(one.grads()) {
                *s += (gi as f64).abs() / n as f64;
            }
        }
        let u = f64::from(f32::EPSILON) / 2.0;
        let lr = half.lr as f64;
        let check = |who: &str, x: &[f32], y: &[f32], factor: f64| {
            let mut worst = 0.0f64;
            for (i, (&p, &q)) in x.iter().zip(y).enumerate() {
                // 1.01: the per-sample terms above are each one rounding from the batch's own.
                let bound = factor
                    * (lr * 2.0 * (n - 1) as f64 * u * abs_sum[i] * 1.01
                        + 2.0 * u * (p.abs().max(q.abs()) as f64))
                    + f64::MIN_POSITIVE;
                worst = worst.max((p - q).abs() as f64 / bound);
            }
            eprintln!("{who}: k=2,b={b} vs b={n}: worst gap {worst:.4} of its bound");
            worst
        };
        assert!(
            check("CPU", &a.cpu.params, &w.cpu.params, 1.0) <= 1.0,
            "{q}: CPU twin"
        );
        // The GPU may fuse multiply-adds; its per-sample terms are then rounded once less,
        // which the same bound covers.
        assert!(check("GPU", &pa, &pw, 1.0) <= 1.0, "{q}: GPU");
        // Losses: the mean over the step's 2b samples is the same number both ways.
        assert!(
            (a.cpu.last_batch_loss - w.cpu.last_batch_loss).abs()
                <= 2.0 * n as f32 * f32::EPSILON * w.cpu.last_batch_loss
        );
        // The test can see a wrong rule: a twin that sums the micro-batch means instead of
        // averaging them (δ divided by b, not 2b) takes twice the step.
        let mut sum_of_means = CpuTrainer::new(
            half.net(),
            gpu_runtime::mlp::Hyper {
                lr: 2.0 * half.lr,
                ..half.hyper()
            },
            half.net().init_params(half.seed),
            b,
            a.train_x.clone(),
            train.label.clone(),
            order.clone(),
        );
        sum_of_means.accum = 2;
        sum_of_means.step();
        assert!(
            check("sum of means", &sum_of_means.params, &w.cpu.params, 1.0) > 1.0,
            "{q}: a sum of means would pass"
        );
    }
}

/// `PARAM_STEPS` steps of a session whose kernel `replacement.id` is `replacement` (as the
/// editor runs a learner's edit), against the twin: [`worst_ratio`] of their parameters.
fn replaced_gap(g: &Rc<Gpu>, q: &str, replacement: &gpu_runtime::KernelSpec) -> f32 {
    replaced_gap_after(g, q, replacement, PARAM_STEPS)
}

/// [`replaced_gap`] after `steps` steps; the replaced kernel must be in the session's step.
fn replaced_gap_after(
    g: &Rc<Gpu>,
    q: &str,
    replacement: &gpu_runtime::KernelSpec,
    steps: u32,
) -> f32 {
    let s = spec(q);
    let net = s.net();
    let (train, _) = s.data();
    let x = train.features(&s.features);
    let params = net.init_params(s.seed);
    let order = batch_order(train.len(), s.seed);
    let mut session = pollster::block_on(TrainingSession::new_with(
        g.clone(),
        SessionConfig {
            accum: 1,
            ..SessionConfig::from_spec(&net, &s, &train, &params, &x[..2 * net.inputs()])
        },
        &[replacement],
    ))
    .unwrap_or_else(|e| panic!("{}: {e}", replacement.id));
    assert!(
        session.plan().iter().any(|p| p.kernel_id == replacement.id),
        "{q}: {} is not in the step",
        replacement.id
    );
    let mut cpu = CpuTrainer::new(net, s.hyper(), params, s.batch, x, train.label, order);
    for _ in 0..steps {
        session.step().expect("step");
        cpu.step();
    }
    let r = session.eval_blocking().expect("eval");
    worst_ratio_after(&r.params, &cpu, steps)
}

/// The optimiser's formula is written four times: `optim-sgd` and `optim-adam` (the optimiser
/// family every model shares, here on the MLP's per-layer
/// path with accumulation or wide layers), and inline in `mlp-step-reduce` (the default small
/// network's step) and `mlp-step-params` (the per-layer and whole-step paths). Momentum's
/// velocity and Adam's second moment start at zero, so a mistake in how they are carried
/// shows only from step 2. Each kernel, with each optimiser that has such state, trains like
/// the twin for `PARAM_STEPS` steps; a copy with the velocity's or the second moment's decay
/// wrong (μ² for μ; β₁ for β₂) agrees after step 1 and is caught at step 2.
#[test]
fn every_optimiser_kernel_is_checked_past_its_first_step() {
    let g = gpu();
    let q =
        |opt: &str| format!("data=circle&layers=8,8&act=tanh&lr=0.03&batch=16&opt={opt}&seed=3");
    let momentum = (
        "u.momentum * velocity[i] + g",
        "u.momentum * u.momentum * velocity[i] + g",
    );
    let inline_momentum = (
        "u.hyper1.z * m[i] + g",
        "u.hyper1.z * u.hyper1.z * m[i] + g",
    );
    let second_moment = ("u.beta2 * v[i] +", "u.beta1 * v[i] +");
    let inline_second_moment = ("beta2 * v[i] +", "beta1 * v[i] +");
    for (id, opt, (from, to)) in [
        ("optim-sgd", "momentum", momentum),
        ("optim-adam", "adam", second_moment),
        ("mlp-step-reduce", "momentum", inline_momentum),
        ("mlp-step-reduce", "adam", inline_second_moment),
        ("mlp-step-params", "momentum", inline_momentum),
        ("mlp-step-params", "adam", inline_second_moment),
    ] {
        let k = gpu_runtime::kernel(id).expect("catalogued");
        let wgsl = k.wgsl();
        assert_eq!(
            wgsl.matches(from).count(),
            1,
            "{id}: `{from}` once in its source"
        );
        let r = replaced_gap(&g, &q(opt), &k.with_source(wgsl.clone()));
        eprintln!("{id} {opt}: unchanged copy, {PARAM_STEPS} steps, worst gap {r:.4} of its bound");
        assert!(r <= 1.0, "{id} {opt}: {r}× the bound");
        let broken = k.with_source(wgsl.replacen(from, to, 1));
        let (first, second) = (
            replaced_gap_after(&g, &q(opt), &broken, 1),
            replaced_gap_after(&g, &q(opt), &broken, 2),
        );
        eprintln!(
            "{id} {opt}: `{to}`, worst gap {first:.4} after step 1, {second:.1} after step 2"
        );
        assert!(
            first <= 1.0,
            "{id} {opt}: `{to}` shows at step 1 ({first}), so this checks no later step"
        );
        assert!(
            second > 1.0,
            "{id} {opt}: `{to}` went unnoticed at step 2 ({second})"
        );
    }
}

/// Every MLP kernel the editor offers, replaced by an unchanged copy of itself, trains as the
/// twin does (so the separate kernels a plan falls back to when one is edited are right);
/// and an edit that changes a kernel's arithmetic changes the result — in particular the
/// ones a fused kernel replaces by default (`mlp-loss`, `mlp-forward`, `mlp-backward-params`,
/// `optim-adam`), which a plan that ignored the edit would never run, the default step's own
/// two (`mlp-step-lanes`, `mlp-step-reduce`), and the wide layers' tiled kernels, which a pin
/// puts on this narrow network (the unchanged copies' gap equals the per-element kernels' to
/// the last digit: the same sums in the same order).
#[test]
fn an_edited_kernel_runs_even_where_a_fused_one_would_replace_it() {
    let g = gpu();
    let q = |id: &str| {
        let opt = if id == "optim-sgd" { "sgd" } else { "adam" };
        format!("data=circle&layers=8,8&act=tanh&lr=0.03&batch=16&opt={opt}&seed=3")
    };
    let mlp: Vec<_> = gpu_runtime::kernels()
        .filter(|k| k.family == gpu_runtime::Family::Mlp)
        .collect();
    assert_eq!(
        mlp.len(),
        17,
        "every MLP kernel, mlp-gather, the default step's two and the tiled ones included"
    );
    for k in &mlp {
        let copy = k.with_source(k.wgsl());
        let r = replaced_gap(&g, &q(k.id), &copy);
        eprintln!("{}: unchanged copy, worst gap {r:.4} of its bound", k.id);
        assert!(r <= 1.0, "{}: {r}× the bound", k.id);
    }
    for (id, from, to) in [
        // Cross-entropy's target probability halved.
        (
            "mlp-loss",
            "let t = select(0.0, 1.0, c == y);",
            "let t = select(0.0, 0.5, c == y);",
        ),
        // Every layer's bias counted twice.
        (
            "mlp-forward",
            "acc + params[d.b_off + n]",
            "acc + 2.0 * params[d.b_off + n]",
        ),
        // The first weight's gradient dropped.
        (
            "mlp-backward-params",
            "grads[g.w_off + n * g.fan_in + k] += partial[0];",
            "grads[g.w_off + n * g.fan_in + k] += select(partial[0], 0.0, n + k == 0u);",
        ),
        // Adam's step halved.
        (
            "optim-adam",
            "params[i] = p - u.lr *",
            "params[i] = p - 0.5 * u.lr *",
        ),
        // The default step's two kernels: every layer's bias counted twice, Adam's step
        // halved.
        (
            "mlp-step-lanes",
            "activate(acc + params[o.x + n], a.z)",
            "activate(acc + 2.0 * params[o.x + n], a.z)",
        ),
        (
            "mlp-step-reduce",
            "params[i] = p - lr *",
            "params[i] = p - 0.5 * lr *",
        ),
        // The tiled kernels, pinned, run on this narrow network too: every bias doubled in
        // the tiled forward, and the gradient's last halving step dropped.
        (
            "mlp-forward-tiled",
            "activate(acc[j] + params[d.b_off + n], d.act)",
            "activate(acc[j] + 2.0 * params[d.b_off + n], d.act)",
        ),
        (
            "mlp-grad-reduce",
            "let sum = (q0.x + q0.z) + (q0.y + q0.w);",
            "let sum = q0.x + q0.z;",
        ),
    ] {
        let k = gpu_runtime::kernel(id).expect("catalogued");
        let wgsl = k.wgsl();
        assert!(wgsl.contains(from), "{id}: `{from}` not in its source");
        let r = replaced_gap(&g, &q(id), &k.with_source(wgsl.replacen(from, to, 1)));
        eprintln!("{id}: edited, worst gap {r:.1} of its bound");
        assert!(r > 10.0, "{id}: the edit did not change the result ({r})");
    }
}

/// A 2-256-256-2 network has 66,562 parameters, more workgroups than one grid dimension may
/// hold (65,535): the per-parameter kernels wrap into y. The default step (its 256 → 256
/// layer as tiled matmuls), the fused step (`mlp-step-params`, with tiling off) and the
/// separate path (`mlp-backward-params`, pinned as an edit would) train it as the twin does,
/// parameter by parameter — so the workgroups past 65,535 (the last layers' weights and
/// biases) are really updated, not skipped or doubled.
#[test]
fn a_network_with_more_parameters_than_a_grid_row_trains_like_the_twin() {
    let g = gpu();
    let s = spec("data=circle&layers=8,8&act=tanh&lr=0.01&batch=8&opt=adam&seed=3");
    let net = gpu_runtime::mlp::Net {
        sizes: vec![2, 256, 256, 2],
        ..s.net()
    };
    assert!(net.layout().param_count > 65_535);
    let (train, _) = s.data();
    let x = train.features(&s.features);
    let params = net.init_params(s.seed);
    let order = batch_order(train.len(), s.seed);
    let separate = gpu_runtime::kernels()
        .find(|k| k.id == "mlp-backward-params")
        .expect("mlp-backward-params");
    let copy = separate.with_source(separate.wgsl());
    for (tiled, pinned) in [
        (None, &[][..]),
        (Some(false), &[][..]),
        (None, &[&copy][..]),
    ] {
        let mut session = pollster::block_on(TrainingSession::new_with(
            g.clone(),
            SessionConfig {
                accum: 1,
                paths: gpu_runtime::training::PathOptions::tiled(tiled),
                ..SessionConfig::from_spec(&net, &s, &train, &params, &x[..2 * net.inputs()])
            },
            pinned,
        ))
        .expect("session");
        let tiles = session
            .plan()
            .iter()
            .any(|p| p.kernel_id == "mlp-grad-tiled");
        assert_eq!(tiles, tiled.is_none() && pinned.is_empty());
        let mut cpu = CpuTrainer::new(
            net.clone(),
            s.hyper(),
            params.clone(),
            s.batch,
            x.clone(),
            train.label.clone(),
            order.clone(),
        );
        for _ in 0..PARAM_STEPS {
            session.step().expect("step");
            cpu.step();
        }
        let r = session.eval_blocking().expect("eval");
        let gap = worst_ratio(&r.params, &cpu);
        eprintln!(
            "2-256-256-2, {} pinned, tiled {tiles}: worst gap {gap:.4} of its bound",
            pinned.len()
        );
        assert!(gap <= 1.0, "{} pinned: {gap}× the bound", pinned.len());
    }
}

/// The default step of a small network (`mlp-step-lanes` + `mlp-step-reduce`: 64 workgroups,
/// one per lane of the gradient's sum, each layer's activations in workgroup memory) against
/// the twin, parameter by parameter after `steps` steps, and the last step's mean loss. The
/// lanes take samples t, t + 64, … and sum them in the twin's order, so the bound is the plain
/// ulps-per-step one. Batches that are not multiples of 64 (1: 63 empty lanes; 37; 1,000: lanes
/// of 16 and 15 samples) and 1,024; odd widths and input counts; every loss and optimiser; a
/// network whose lane needs two chunks of workgroup memory (64-wide: 9 samples fit, 16 per
/// lane); steps recorded several to a command buffer.
#[test]
fn the_workgroup_memory_step_agrees_with_the_twin_at_odd_batches_and_widths() {
    use gpu_runtime::mlp::Net;
    use gpu_runtime::training::lane_chunk;
    let g = gpu();
    // (query for data and settings, hidden widths, batch, steps per submit, steps)
    let cases: &[(&str, &[usize], usize, u32, u32)] = &[
        (
            "data=spiral&act=tanh&lr=0.03&opt=adam&noise=0.1&seed=11",
            &[7, 5],
            37,
            5,
            100,
        ),
        (
            "data=circle&act=relu&lr=0.05&opt=momentum&features=x,y,x2&seed=12",
            &[13],
            1,
            10,
            100,
        ),
        (
            "data=xor&act=sigmoid&lr=0.3&opt=sgd&loss=mse&features=x,y,xy,sinx,siny&seed=13",
            &[9, 3, 11],
            1000,
            4,
            60,
        ),
        (
            "data=gauss&act=relu&lr=0.01&opt=adam&noise=0.3&seed=14",
            &[16, 16],
            1024,
            8,
            64,
        ),
        (
            "data=hills&act=tanh&lr=0.03&opt=adam&noise=0.1&reg=l2&regrate=0.01&seed=15",
            &[15],
            150,
            3,
            60,
        ),
        (
            "data=spiral&act=tanh&lr=0.01&opt=adam&noise=0.1&seed=16",
            &[64, 64, 64],
            1000,
            2,
            20,
        ),
    ];
    for &(q, hidden, batch, per_submit, steps) in cases {
        let s = spec(q);
        let (train, _) = s.data();
        let x = train.features(&s.features);
        let base = s.net();
        let mut sizes = vec![base.inputs()];
        sizes.extend_from_slice(hidden);
        sizes.push(base.classes());
        let net = Net { sizes, ..base };
        let params = net.init_params(s.seed);
        let order = batch_order(train.len(), s.seed);
        let mut session = pollster::block_on(TrainingSession::new(
            g.clone(),
            SessionConfig {
                batch,
                accum: 1,
                ..SessionConfig::from_spec(&net, &s, &train, &params, &x)
            },
        ))
        .expect("session");
        let ids: Vec<&str> = session.plan().iter().map(|p| p.kernel_id).collect();
        assert_eq!(ids, ["mlp-step-lanes", "mlp-step-reduce"], "{q}");
        let mut cpu = CpuTrainer::new(
            net.clone(),
            s.hyper(),
            params,
            batch,
            x.clone(),
            train.label.clone(),
            order,
        );
        for _ in 0..steps / per_submit {
            session.steps(per_submit).expect("steps");
            for _ in 0..per_submit {
                cpu.step();
            }
        }
        let done = steps / per_submit * per_submit;
        let r = session.eval_blocking().expect("eval");
        let ratio = worst_ratio_after(&r.params, &cpu, done);
        // The last step's losses, one per sample: their mean is the twin's batch loss (each
        // sample's loss is the same formula on the same logits; the means differ by the
        // summation's rounding, ≤ batch · u relative, and a few ulps of exp/log).
        assert_eq!(r.batch_losses.len(), batch);
        let gpu_mean = r.batch_losses.iter().map(|&l| l as f64).sum::<f64>() / batch as f64;
        let cpu_mean = cpu.last_batch_loss as f64;
        let loss_gap = (gpu_mean - cpu_mean).abs();
        // The GPU's logits on the whole training set, from its parameters, against the
        // twin's from its own: the trajectory ends where the twin's does.
        let (gpu_loss, _) =
            gpu_runtime::mlp::net::metrics(net.loss, &r.logits, &train.label, net.classes());
        let (cpu_loss, _) = cpu.evaluate(&x, &train.label);
        eprintln!(
            "{:?} batch {batch} ({} per chunk), {done} steps, {per_submit} per submit: \
             parameters {ratio:.4} of their bound, step loss gap {loss_gap:e}, train loss \
             {gpu_loss} vs {cpu_loss}",
            net.sizes,
            lane_chunk(&net, batch)
        );
        assert!(
            ratio <= 1.0,
            "{q}, batch {batch}: parameters {ratio}× their bound apart"
        );
        assert!(
            loss_gap <= 1e-4 * cpu_mean.abs().max(1.0),
            "{q}, batch {batch}: step loss {gpu_mean} vs {cpu_mean}"
        );
        assert!(
            (gpu_loss - cpu_loss).abs() <= 1e-3 + 0.01 * cpu_loss.abs(),
            "{q}, batch {batch}: train loss {gpu_loss} vs {cpu_loss}"
        );
        assert_eq!(session.steps_completed(), done as u64);
    }
}
/// Wide networks on the tiled path (`training::wide`: the three products of a layer with
/// fan-in and fan-out ≥ 64 as 64 × 64-tiled matmuls, its gradient summed over 64 batch slices
/// then halved), against the twin after `PARAM_STEPS` steps, parameter by parameter, within
/// the same [`gpu_runtime::training::param_ulps_per_step`] bound as the per-element kernels: the tiled kernels add the same
/// terms in the same order (a sum over k or n in turn; a gradient slice s holds the samples
/// s, s + 64, … as `mlp-backward-params`'s thread s does, halved in its order), so what is
/// left is the device's fused multiply-adds, as before. The shapes cross every tile edge:
/// widths 97 and 130 (not multiples of 64 or 16), batches 1,000 (15 full tiles and 40 rows),
/// 37 (fewer samples than slices) and 1; with tiling forced on, a narrow network puts every
/// layer, the output layer's gradient included, on the tiled kernels. The small-batch cases
/// also train against a twin with a planted mistake (frozen biases), which must fail.
#[test]
fn wide_layers_on_tiled_matmuls_train_like_the_twin() {
    use gpu_runtime::training::PathOptions;
    let g = gpu();
    for (sizes, q, forced) in [
        (
            vec![2, 97, 130, 3],
            "data=spiral&layers=8&act=tanh&lr=0.01&batch=1000&opt=adam&noise=0.1&n=2000&split=90&seed=5",
            None,
        ),
        (
            vec![2, 256, 256, 2],
            "data=circle&layers=8&act=relu&lr=0.01&batch=37&opt=adam&seed=6",
            None,
        ),
        (
            vec![2, 70, 65, 66, 2],
            "data=xor&layers=8&act=sigmoid&lr=0.3&batch=1&opt=momentum&loss=mse&seed=7",
            None,
        ),
        (
            vec![2, 9, 7, 2],
            "data=gauss&layers=8&act=tanh&lr=0.05&batch=130&opt=sgd&seed=8",
            Some(true),
        ),
    ] {
        let s = spec(q);
        let net = gpu_runtime::mlp::Net { sizes, ..s.net() };
        let (train, _) = s.data();
        let x = train.features(&s.features);
        let params = net.init_params(s.seed);
        let order = batch_order(train.len(), s.seed);
        let run = |twin: &dyn Fn(&mut CpuTrainer)| {
            let mut session = pollster::block_on(TrainingSession::new(
                g.clone(),
                SessionConfig {
                    accum: 1,
                    paths: PathOptions::tiled(forced),
                    ..SessionConfig::from_spec(&net, &s, &train, &params, &x[..2 * net.inputs()])
                },
            ))
            .expect("session");
            let tiled = session
                .plan()
                .iter()
                .filter(|p| p.kernel_id.ends_with("-tiled"))
                .count();
            assert!(tiled >= 2, "{:?}: {tiled} tiled dispatches", net.sizes);
            let mut cpu = CpuTrainer::new(
                net.clone(),
                s.hyper(),
                params.clone(),
                s.batch,
                x.clone(),
                train.label.clone(),
                order.clone(),
            );
            twin(&mut cpu);
            for _ in 0..PARAM_STEPS {
                session.step().expect("step");
                cpu.step();
            }
            let r = session.eval_blocking().expect("eval");
            worst_ratio(&r.params, &cpu)
        };
        let gap = run(&|_| {});
        eprintln!("{:?} batch {}: worst gap {gap:.4} of its bound", net.sizes, s.batch);
        assert!(gap <= 1.0, "{:?}: {gap}× the bound", net.sizes);
        // The twin's debug build is the slow side: the planted mistake on the small batches.
        if s.batch <= 130 {
            let frozen = run(&|t| t.bias_input = 0.0);
            eprintln!("  frozen-bias twin: {frozen:.1} of the bound");
            assert!(frozen > 1.0, "{:?}: frozen biases went unnoticed", net.sizes);
        }
    }
}

/// Gradient accumulation on the tiled path: 2 micro-batches of 300 into a 97 → 130 layer,
/// each adding its halved slices to the gradient, against the twin.
#[test]
fn accumulation_on_tiled_layers_agrees_with_the_twin() {
    let g = gpu();
    let s = spec("data=spiral&layers=8&act=tanh&lr=0.01&batch=300&accum=2&opt=adam&n=2000&seed=9");
    let net = gpu_runtime::mlp::Net {
        sizes: vec![2, 97, 130, 2],
        ..s.net()
    };
    let (train, _) = s.data();
    let x = train.features(&s.features);
    let params = net.init_params(s.seed);
    let order = batch_order(train.len(), s.seed);
    let mut session = pollster::block_on(TrainingSession::new(
        g.clone(),
        SessionConfig {
            accum: 2,
            ..SessionConfig::from_spec(&net, &s, &train, &params, &x[..2 * net.inputs()])
        },
    ))
    .expect("session");
    assert!(session
        .plan()
        .iter()
        .any(|p| p.kernel_id == "mlp-grad-tiled"));
    let mut cpu = CpuTrainer::new(net, s.hyper(), params, s.batch, x, train.label, order);
    cpu.accum = 2;
    for _ in 0..PARAM_STEPS {
        session.step().expect("step");
        cpu.step();
    }
    let gap = worst_ratio(&session.eval_blocking().expect("eval").params, &cpu);
    eprintln!("97-130, accum 2: worst gap {gap:.4} of its bound");
    assert!(gap <= 1.0, "{gap}× the bound");
}
