//! The CNN's training step on a real wgpu device (lavapipe under `cargo xtask test`) against
//! its CPU twin (`cnn::net::CpuTrainer`): same parameters, batches and formulas, so after every
//! step each parameter, gradient, activation, delta, argmax, Adam's or the momentum's state
//! and the loss must lie within the bound that `gpu_runtime::family::cnn::bound` derives from
//! the arithmetic (its header has the derivation), on two tiny networks (one whose pools cover
//! every conv output, one whose odd sides they cut) and on the default LeNet, with SGD +
//! momentum and with Adam, for 5 steps.
//!
//! Two ways: lockstep, each step started from the twin's state, so every step's bound starts
//! from zero and stays sharp (the observed gaps are 1e-5 to 7e-2 of it); and free-running,
//! after 1 and 5 steps, where the bound carries every earlier step's worst case and so grows
//! by one to three orders of magnitude a step (after 5 it says little; the lockstep run is
//! the real check of later steps). A session whose input-gradient kernel forgets the filter's
//! 180° rotation must fail, and does by three orders of magnitude.

use std::rc::Rc;

use cpu_kernels::data::SplitMix64;
use gpu_runtime::cnn::data::Samples;
use gpu_runtime::cnn::net::{Block, CpuTrainer, Hyper, Net, Optimiser};
use gpu_runtime::cnn_training::{evaluation, CnnConfig, CnnSession, Part};
use gpu_runtime::family::cnn::bound::{logits_bound, step_bound, StateBound, TwinStep};
use gpu_runtime::{kernel, Gpu, KernelSpec};

const STEPS: usize = 5;

/// The test adapter (lavapipe under `cargo xtask test`). A missing one fails, as in every
/// native GPU test here (`tests/common`): the comparison is the point, so it never skips.
fn gpu() -> Rc<Gpu> {
    Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ))
}

/// `n` seeded images of side `side`: about half the pixels paper (exactly 0, as in MNIST),
/// the rest ink in (0, 1); labels cycle through the ten classes.
fn images(side: usize, n: usize, seed: u64) -> Samples {
    let mut rng = SplitMix64::new(seed);
    let mut s = Samples {
        side,
        ..Samples::default()
    };
    for i in 0..n {
        for _ in 0..side * side {
            let r = rng.next_u64();
            s.x.push(if r.is_multiple_of(2) {
                0.0
            } else {
                (r >> 40) as f32 / (1u64 << 24) as f32
            });
        }
        s.y.push((i % 10) as u32);
    }
    s
}

fn block(c_in: usize, c_out: usize, kernel: usize) -> Block {
    Block {
        c_in,
        c_out,
        kernel,
    }
}

/// Side 14: conv 3×3 → 3 channels (12) → pool (6) → conv 3×3 → 4 (4) → pool (2) → dense
/// 16 → 10. Every conv output side is even, so the 2×2 pools cover it whole: with an odd side
/// (13 → 11 → pool 5) the last row and column never reach the loss, their deltas are always
/// zero, and a conv-gradient bug there is invisible to this network
/// (`a_filter_gradient_without_the_last_row_is_caught`). Odd channel counts, and sides that
/// are no multiple of a tile, remain.
fn tiny() -> Net {
    Net::new(14, vec![block(1, 3, 3), block(3, 4, 3)], 10).expect("fits")
}

/// Side 13: conv 3×3 → 3 channels (11) → pool (5) → conv 3×3 → 4 (3) → pool (1) → dense 10:
/// the pools drop an odd side's last row and column, as the page's networks may (a 4×4
/// kernel on 28 pixels, say), so that path stays checked too.
fn tiny_odd() -> Net {
    Net::new(13, vec![block(1, 3, 3), block(3, 4, 3)], 10).expect("fits")
}

/// The default LeNet: 28 → conv 5×5 → 6 (24) → pool (12) → conv 5×5 → 16 (8) → pool (4) →
/// dense 256 → 10.
fn lenet() -> Net {
    Net::new(28, vec![block(1, 6, 5), block(6, 16, 5)], 10).expect("fits")
}

fn hyper(optimiser: Optimiser) -> Hyper {
    match optimiser {
        Optimiser::Sgd => Hyper {
            lr: 0.05,
            optimiser,
            momentum: 0.9,
        },
        Optimiser::Adam => Hyper {
            lr: 0.003,
            optimiser,
            momentum: 0.0,
        },
    }
}

/// The largest |GPU − twin| / bound over `got` (≤ 1 passes), and where: a zero bound asks
/// for equality.
fn worst(got: &[f32], want: &[f32], bound: &[f64]) -> (f64, usize) {
    assert_eq!(got.len(), want.len());
    let mut w = (0.0f64, 0usize);
    for (i, ((&g, &c), &b)) in got.iter().zip(want).zip(bound).enumerate() {
        assert!(g.is_finite(), "GPU value {i} is {g}");
        let gap = (g as f64 - c as f64).abs();
        let r = if gap == 0.0 {
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

/// One step's comparison: the worst |GPU − twin| as a fraction of its bound for the
/// parameters, the step's gradients, activations and deltas (so a failure names the kernel
/// whose output is off: [`region`]), the optimiser's state and the loss, and the largest absolute parameter gap
/// with its bound.
#[derive(Debug)]
struct Gap {
    params: f64,
    grads: f64,
    acts: f64,
    deltas: f64,
    /// Whether every pool kept the twin's winner.
    argmax: bool,
    state: f64,
    loss: f64,
    abs_param_gap: f64,
    its_bound: f64,
}

impl Gap {
    fn within(&self) -> bool {
        self.params <= 1.0
            && self.grads <= 1.0
            && self.acts <= 1.0
            && self.deltas <= 1.0
            && self.argmax
            && self.state <= 1.0
            && self.loss <= 1.0
    }
}

/// How GPU and twin run side by side.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Each step starts the GPU from the twin's state (parameters, momentum or Adam's
    /// moments), so each step's bound starts from zero: every step's kernels are checked at
    /// the sharpest bound, along the twin's whole trajectory.
    Lockstep,
    /// The GPU runs on its own; the bound carries every earlier step's (worst-case, so it
    /// grows quickly from step to step).
    Free,
}

/// Trains GPU (with `replacements` for catalogue kernels) and twin `STEPS` steps side by side
/// and compares after each; stops after the first step past its bound.
fn run(
    g: &Rc<Gpu>,
    net: &Net,
    optimiser: Optimiser,
    batch: usize,
    mode: Mode,
    replacements: &[&KernelSpec],
) -> Vec<Gap> {
    let hyper = hyper(optimiser);
    let params = net.init_params(11);
    let train = images(net.side, 3 * batch + 1, 5);
    let mut gpu = pollster::block_on(CnnSession::new_with(
        g.clone(),
        CnnConfig {
            net: net.clone(),
            hyper,
            batch,
            params: &params,
            train: train.clone(),
            order_seed: 3,
            eval_batch: 0,
        },
        replacements,
    ))
    .expect("session");
    let mut cpu = CpuTrainer::new(net.clone(), hyper, params.clone(), batch, train, 3);
    let mut bound = StateBound::zero(params.len());
    let mut gaps = Vec::new();
    for step in 1..=STEPS as u64 {
        let labels = cpu.gather(step - 1).1.to_vec();
        let (m, v) = cpu.optimiser_state();
        let before = (cpu.params.clone(), m.to_vec(), v.to_vec());
        if mode == Mode::Lockstep {
            gpu.write_state(&before.0, &before.1, &before.2)
                .expect("state");
            bound = StateBound::zero(params.len());
        }
        cpu.step();
        gpu.step().expect("step");
        let b = step_bound(
            &TwinStep {
                net,
                hyper: &hyper,
                step,
                params: &before.0,
                m: &before.1,
                v: &before.2,
                ws: cpu.workspace(),
                grads: cpu.grads(),
                labels: &labels,
            },
            &bound,
        )
        .expect("sizes");
        bound = b.state;
        let r = gpu
            .read_blocking(&[
                Part::Params,
                Part::Grads,
                Part::M,
                Part::V,
                Part::Losses,
                Part::Acts,
                Part::Deltas,
                Part::Argmax,
            ])
            .expect("readback");
        let (m, v) = cpu.optimiser_state();
        let (params_ratio, at) = worst(&r.params, &cpu.params, &bound.params);
        let mut gap = Gap {
            params: params_ratio,
            grads: worst(&r.grads, cpu.grads(), &b.grads).0,
            acts: worst(&r.acts, &cpu.workspace().acts, &b.acts).0,
            deltas: worst(&r.deltas, &cpu.workspace().deltas, &b.deltas).0,
            argmax: r.argmax == cpu.workspace().argmax,
            state: worst(&r.m, m, &bound.m).0.max(worst(&r.v, v, &bound.v).0),
            loss: (r.loss as f64 - cpu.last_loss as f64).abs() / b.loss,
            abs_param_gap: 0.0,
            its_bound: 0.0,
        };
        for (i, (&a, &c)) in r.params.iter().zip(&cpu.params).enumerate() {
            let d = (a as f64 - c as f64).abs();
            if d > gap.abs_param_gap {
                gap.abs_param_gap = d;
                gap.its_bound = bound.params[i];
            }
        }
        let within = gap.within();
        if !within {
            let ws = cpu.workspace();
            let (_, act) = worst(&r.acts, &ws.acts, &b.acts);
            let (_, delta) = worst(&r.deltas, &ws.deltas, &b.deltas);
            eprintln!(
                "step {step}: parameter {at}: GPU {}, twin {}, bound {:e}; worst activation in \
                 {}, worst delta in {}",
                r.params[at],
                cpu.params[at],
                bound.params[at],
                region(net, batch, act),
                region(net, batch, delta)
            );
        }
        gaps.push(gap);
        if !within {
            break;
        }
    }
    gaps
}

/// Which region of the activation (or delta) layout element `i` is in, and so which kernel
/// wrote it (for a delta, the backward kernel that writes that region).
fn region(net: &Net, batch: usize, i: usize) -> String {
    let l = net.act_layout(batch);
    let mut name = "input (block 1's input gradient)".to_string();
    for (b, a) in l.blocks.iter().enumerate() {
        for (start, what) in [
            (a.conv, "conv (conv forward / ReLU backward)"),
            (a.relu, "ReLU (conv forward / pool backward)"),
            (
                a.pool,
                "pool (pool forward / input gradient or dense backward)",
            ),
        ] {
            if i >= start {
                name = format!("block {} {what}", b + 1);
            }
        }
    }
    if i >= l.logits {
        name = "logits (dense forward / softmax)".into();
    }
    if i >= l.probs {
        name = "probabilities (softmax)".into();
    }
    name
}

/// Both optimisers, lockstep at every step and free-running after 1 and `STEPS` steps.
fn check(net: Net, name: &str, batch: usize) {
    let g = gpu();
    for opt in Optimiser::ALL {
        let o = opt.code();
        let lock = run(&g, &net, opt, batch, Mode::Lockstep, &[]);
        for (i, gap) in lock.iter().enumerate() {
            eprintln!("{name} batch {batch} {o} lockstep step {}: {gap:?}", i + 1);
        }
        assert_eq!(lock.len(), STEPS, "{name} {o}: lockstep stopped early");
        assert!(
            lock.iter().all(Gap::within),
            "{name} {o}: past the bound: {lock:?}"
        );
        let free = run(&g, &net, opt, batch, Mode::Free, &[]);
        eprintln!("{name} batch {batch} {o} free step 1: {:?}", free[0]);
        eprintln!(
            "{name} batch {batch} {o} free step {}: {:?}",
            free.len(),
            free[free.len() - 1]
        );
        assert_eq!(
            free.len(),
            STEPS,
            "{name} {o}: free run past its bound: {free:?}"
        );
    }
}

#[test]
fn a_tiny_network_trains_like_the_twin() {
    check(tiny(), "tiny", 5);
}

#[test]
fn a_tiny_odd_network_trains_like_the_twin() {
    check(tiny_odd(), "tiny odd", 5);
}

#[test]
fn lenet_trains_like_the_twin() {
    check(lenet(), "lenet", 3);
}

/// The input gradient with the filter not rotated (tap (r', s') instead of
/// (K − 1 − r', K − 1 − s')): the first block's gradients go wrong, and the comparison says so.
#[test]
fn an_unrotated_input_gradient_is_caught() {
    let g = gpu();
    let good = kernel("cnn-conv-input-grad").expect("catalogued");
    let src = good.wgsl();
    let rotated = "params[w + (last - rp) * u.k + (last - sp)]";
    assert!(src.contains(rotated));
    let broken = good.with_source(src.replace(rotated, "params[w + rp * u.k + sp]"));
    for opt in Optimiser::ALL {
        let gaps = run(&g, &tiny(), opt, 5, Mode::Lockstep, &[&broken]);
        eprintln!("unrotated {}: {gaps:?}", opt.code());
        assert!(
            gaps.len() == 1 && !gaps[0].within(),
            "{}: the unrotated filter went unnoticed: {gaps:?}",
            opt.code()
        );
    }
}

/// The filter gradient with the conv output's last row left out of its sum (`y < cs - 1`):
/// the small network must see it, so every conv output row and column has to reach the loss
/// (a 2×2 pool over an odd side drops the last one, whose deltas are then always zero, and
/// such a bug was once caught only by LeNet).
#[test]
fn a_filter_gradient_without_the_last_row_is_caught() {
    let g = gpu();
    let good = kernel("cnn-conv-filter-partials").expect("catalogued");
    let src = good.wgsl();
    let every_row = "for (var y = 0u; y < cs; y++) {";
    assert!(src.contains(every_row));
    let broken = good.with_source(src.replace(every_row, "for (var y = 0u; y < cs - 1u; y++) {"));
    for opt in Optimiser::ALL {
        let gaps = run(&g, &tiny(), opt, 5, Mode::Lockstep, &[&broken]);
        eprintln!("last row dropped {}: {gaps:?}", opt.code());
        assert!(
            gaps.len() == 1 && !gaps[0].within(),
            "{}: a filter gradient without the last row went unnoticed: {gaps:?}",
            opt.code()
        );
    }
}

/// `STEPS` steps in ONE submission (Adam's step number coming from the counter its dispatch
/// advances on the GPU, each step's batch copied from the staging buffer) leave exactly the
/// parameters, moments and losses that the same steps submitted one at a time leave (the
/// lockstep tests above check those against the twin at the sharpest bound), and agree with
/// the twin within the free-running bound.
#[test]
fn steps_in_one_submission_are_the_steps_one_at_a_time() {
    let g = gpu();
    let net = tiny();
    let batch = 5;
    for opt in Optimiser::ALL {
        let hyper = hyper(opt);
        let params = net.init_params(11);
        let train = images(net.side, 3 * batch + 1, 5);
        let session = || {
            pollster::block_on(CnnSession::new(
                g.clone(),
                CnnConfig {
                    net: net.clone(),
                    hyper,
                    batch,
                    params: &params,
                    train: train.clone(),
                    order_seed: 3,
                    eval_batch: 0,
                },
            ))
            .expect("session")
        };
        let parts = [Part::Params, Part::M, Part::V, Part::Losses];
        let mut together = session();
        assert!(together.steps_per_submit() >= STEPS as u32);
        together.steps(STEPS as u32).expect("steps");
        let a = together.read_blocking(&parts).expect("readback");
        let mut apart = session();
        for _ in 0..STEPS {
            apart.step().expect("step");
        }
        let b = apart.read_blocking(&parts).expect("readback");
        assert_eq!(a.step, STEPS as u64);
        assert!(
            a.params == b.params && a.m == b.m && a.v == b.v && a.losses == b.losses,
            "{}: one submission differs from one per step",
            opt.code()
        );
        // The twin, with the bound carrying every step's worst case.
        let mut cpu = CpuTrainer::new(net.clone(), hyper, params.clone(), batch, train, 3);
        let mut bound = StateBound::zero(params.len());
        for step in 1..=STEPS as u64 {
            let labels = cpu.gather(step - 1).1.to_vec();
            let (m, v) = cpu.optimiser_state();
            let before = (cpu.params.clone(), m.to_vec(), v.to_vec());
            cpu.step();
            bound = step_bound(
                &TwinStep {
                    net: &net,
                    hyper: &hyper,
                    step,
                    params: &before.0,
                    m: &before.1,
                    v: &before.2,
                    ws: cpu.workspace(),
                    grads: cpu.grads(),
                    labels: &labels,
                },
                &bound,
            )
            .expect("sizes")
            .state;
        }
        let (m, v) = cpu.optimiser_state();
        let w = worst(&a.params, &cpu.params, &bound.params)
            .0
            .max(worst(&a.m, m, &bound.m).0)
            .max(worst(&a.v, v, &bound.v).0);
        eprintln!(
            "{} {STEPS} steps in one submission: worst {w:.3e} of the free bound",
            opt.code()
        );
        assert!(w <= 1.0, "{}: {w}× the free-running bound", opt.code());
    }
}

/// The optimiser family's mistakes in the CNN's step, in lockstep with the twin: momentum
/// applied twice and a step counter that Adam's dispatch does not advance agree with the twin
/// at step 1 (the velocity starts at zero; step 1's corrections are right) and are caught at
/// step 2; Adam's corrections taken for the next step are caught at step 1.
#[test]
fn optimiser_mistakes_are_caught_in_the_cnn_step() {
    let g = gpu();
    for (opt, what, from, to, caught_at) in [
        (
            Optimiser::Sgd,
            "momentum applied twice",
            "u.momentum * velocity[i] + g",
            "u.momentum * u.momentum * velocity[i] + g",
            2,
        ),
        (
            Optimiser::Adam,
            "step counter not advanced",
            "Steps(state.start, state.t + 1u,",
            "Steps(state.start, state.t,",
            2,
        ),
        (
            Optimiser::Adam,
            "corrections of the next step",
            "corrections[min(state.t, u.corr_len - 1u)]",
            "corrections[min(state.t + 1u, u.corr_len - 1u)]",
            1,
        ),
    ] {
        let id = match opt {
            Optimiser::Sgd => "optim-sgd",
            Optimiser::Adam => "optim-adam",
        };
        let good = kernel(id).expect("catalogued");
        let src = good.wgsl();
        assert_eq!(src.matches(from).count(), 1, "{what}");
        let broken = good.with_source(src.replacen(from, to, 1));
        let gaps = run(&g, &tiny(), opt, 5, Mode::Lockstep, &[&broken]);
        eprintln!("{what}: {gaps:?}");
        assert_eq!(
            gaps.len(),
            caught_at,
            "{what}: caught at step {}",
            gaps.len()
        );
        assert!(!gaps[caught_at - 1].within(), "{what} went unnoticed");
    }
}

/// An evaluation pass (its own batch size and buffers) on fewer images than its batch gives
/// the twin's logits for the same parameters, within the forward pass's bound.
#[test]
fn an_evaluation_gives_the_twins_logits() {
    let g = gpu();
    let net = tiny();
    let hyper = hyper(Optimiser::Adam);
    let params = net.init_params(11);
    let train = images(net.side, 16, 5);
    let mut session = pollster::block_on(CnnSession::new(
        g,
        CnnConfig {
            net: net.clone(),
            hyper,
            batch: 4,
            params: &params,
            train: train.clone(),
            order_seed: 3,
            eval_batch: 8,
        },
    ))
    .expect("session");
    let mut cpu = CpuTrainer::new(net.clone(), hyper, params, 4, train, 3);
    session.steps(2).expect("steps");
    cpu.step();
    cpu.step();
    // The GPU's own parameters are a few ulps away; evaluate the twin's.
    let (m, v) = cpu.optimiser_state();
    session.write_state(&cpu.params, m, v).expect("state");
    let test = images(net.side, 6, 9);
    let r = session.eval_blocking(&test.x, true).expect("eval");
    assert_eq!((r.rows, r.logits.len()), (6, 60));
    assert_eq!(r.acts.len(), net.act_layout(8).len);
    let mut ws = net.workspace(6);
    net.forward(&cpu.params, &test.x, &mut ws);
    let l = &ws.layout;
    let want = &ws.acts[l.logits..l.logits + 60];
    let bound = logits_bound(&net, &cpu.params, &ws).expect("sizes");
    let (ratio, at) = worst(&r.logits, want, &bound);
    eprintln!("evaluation: worst logit gap {ratio:e} of its bound (logit {at})");
    assert!(ratio <= 1.0, "logit {at}: {} vs {}", r.logits[at], want[at]);
    // The page's numbers from the GPU's logits: the twin's evaluation's classes and accuracy;
    // a sample's loss ln Σ exp(z − m) − (z_y − m) moves by at most 2·(its largest logit gap)
    // (the log-sum-exp moves by the largest, the label's logit by its own), plus the f32
    // roundings of its terms (ln, exp sum, two subtractions: 8u of |ln s| + |z_y − m|).
    let got = evaluation(&r.logits, &test.y, net.classes);
    let twin = cpu.evaluate(&test);
    assert_eq!(
        (&got.predicted, got.accuracy),
        (&twin.predicted, twin.accuracy)
    );
    let u = gpu_runtime::family::cnn::bound::U;
    let mut loss_bound = 0.0;
    for n in 0..6 {
        let z = &want[n * 10..][..10];
        let (m, s) = gpu_runtime::cnn::net::softmax_parts(z);
        let gap = (0..10)
            .map(|j| (r.logits[n * 10 + j] as f64 - z[j] as f64).abs())
            .fold(0.0, f64::max);
        let y = test.y[n] as usize;
        loss_bound += (2.0 * gap + 8.0 * u * (s.ln().abs() + (z[y] - m).abs()) as f64) / 6.0;
    }
    assert!(
        (got.loss as f64 - twin.loss as f64).abs() <= loss_bound,
        "{} vs {}",
        got.loss,
        twin.loss
    );
    // A request for more images than the evaluation batch is refused, not truncated.
    assert!(session
        .request_eval(&images(net.side, 9, 1).x, false)
        .is_err());
}

/// Wrong sizes and a second readback are answered, not panicked on; an edited kernel that
/// the step does not run is refused by name.
#[test]
fn misuse_is_an_error_or_a_no() {
    let g = gpu();
    let net = tiny();
    let params = net.init_params(1);
    fn config<'a>(net: &Net, params: &'a [f32]) -> CnnConfig<'a> {
        CnnConfig {
            net: net.clone(),
            hyper: hyper(Optimiser::Sgd),
            batch: 2,
            params,
            train: images(net.side, 4, 2),
            order_seed: 1,
            eval_batch: 0,
        }
    }
    let short = pollster::block_on(CnnSession::new(g.clone(), config(&net, &params[1..])));
    assert!(short.is_err());
    let adam = kernel("optim-adam").expect("catalogued");
    let unused = pollster::block_on(CnnSession::new_with(
        g.clone(),
        config(&net, &params),
        &[adam],
    ));
    assert!(matches!(unused, Err(e) if e.to_string().contains("optim-adam")));
    let mut s = pollster::block_on(CnnSession::new(g, config(&net, &params))).expect("session");
    assert!(s.write_state(&params, &params[1..], &params).is_err());
    s.step().expect("step");
    assert!(s.request_read(&[Part::Losses]).expect("asked"));
    assert!(!s.request_read(&[Part::Params]).expect("answered"));
    assert!(
        s.request_eval(&images(net.side, 1, 3).x, false).is_err(),
        "no evaluation batch"
    );
}

/// An edited kernel with a loop-budget flag (as the editor's rewrite binds it, just after
/// the uniform) runs in the real step, its flag is read back, and the step still agrees with
/// the twin; a flag anywhere else is refused.
#[test]
fn an_edited_kernel_with_a_loop_flag_runs_in_the_step() {
    let g = gpu();
    let relu = kernel("cnn-relu-backward").expect("catalogued");
    let src = relu.wgsl();
    let uniform = "@group(0) @binding(2) var<uniform> u: Block;";
    assert!(src.contains(uniform));
    // Stands in for the rewrite's counters: marks word 0 when the kernel runs.
    let edited = relu.with_source(
        src.replace(
            uniform,
            &format!(
                "{uniform}\n@group(0) @binding(3) var<storage, read_write> gpl_flag: array<u32>;"
            ),
        )
        .replace(
            "    deltas[u.conv_off + i] =",
            "    gpl_flag[0] = 1u;\n    deltas[u.conv_off + i] =",
        ),
    );
    let net = tiny();
    let params = net.init_params(2);
    let hyper = hyper(Optimiser::Sgd);
    let train = images(net.side, 10, 4);
    let config = CnnConfig {
        net: net.clone(),
        hyper,
        batch: 5,
        params: &params,
        train: train.clone(),
        order_seed: 3,
        eval_batch: 0,
    };
    let flag = |binding| gpu_runtime::LoopFlag { binding, words: 2 };
    let misplaced = pollster::block_on(CnnSession::new_edited(
        g.clone(),
        config.clone(),
        &[&edited],
        Some(flag(4)),
    ));
    assert!(misplaced.is_err());
    let mut s = pollster::block_on(CnnSession::new_edited(g, config, &[&edited], Some(flag(3))))
        .expect("session");
    let mut cpu = CpuTrainer::new(net.clone(), hyper, params.clone(), 5, train, 3);
    let labels = cpu.gather(0).1.to_vec();
    cpu.step();
    s.step().expect("step");
    let r = s
        .read_blocking(&[Part::Params, Part::LoopFlag])
        .expect("readback");
    assert_eq!(r.loop_flag, vec![1, 0]);
    let zero = vec![0.0; params.len()];
    let b = step_bound(
        &TwinStep {
            net: &net,
            hyper: &hyper,
            step: 1,
            params: &params,
            m: &zero,
            v: &zero,
            ws: cpu.workspace(),
            grads: cpu.grads(),
            labels: &labels,
        },
        &StateBound::zero(params.len()),
    )
    .expect("sizes");
    let (ratio, _) = worst(&r.params, &cpu.params, &b.state.params);
    assert!(ratio <= 1.0, "{ratio}");
}
