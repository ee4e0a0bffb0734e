//! The one optimiser family (`optim-sgd`, `optim-adam`) on its own, on a real wgpu device
//! (lavapipe under `cargo xtask test`), against the CPU update every twin runs
//! (`cpu_kernels::optim`): several steps recorded in ONE submission (each step's gradients
//! copied in from a buffer holding all of them, Adam's step number read from the step counter
//! that its own dispatch advances on the GPU), on grids that wrap into y — a wrap limit of 3
//! workgroups per row so a thousand parameters cross it several times, and the real limit
//! (65,535) with more than 65,535 × 64 parameters.
//!
//! Both sides run the same f32 operations in the same order; a parameter may differ by the
//! roundings of a fused multiply-add or a division, a few ulps per step:
//! |GPU − CPU| ≤ 4 · steps · ε · max(|CPU|, 1) for parameters, and 4 · steps · ε · max(|CPU|,
//! size) (plus the smallest normal) for the moments, where size is what the moment is a sum of
//! in absolute value (β·|earlier| + (1 − β)·|g|, |g| counting the gradient and the
//! regularisation term apart): a moment whose terms cancel is small, its roundings are not. A planted mistake — momentum
//! applied twice, the second moment decaying with β₁, the correction of the wrong step, a step
//! counter that does not advance — must break that bound, and does by orders of magnitude.
//! The MLP's and the CNN's sessions run these same kernels; their lockstep tests
//! (`training_vs_cpu.rs`, `cnn_vs_cpu.rs`) check them on every path that uses them.

use std::rc::Rc;

use cpu_kernels::data::SplitMix64;
use cpu_kernels::optim::{adam_update_with, sgd_update_with, EPSILON};
use gpu_runtime::family::optim::{self, correction_table, Rule, MAX_GROUPS_X};
use gpu_runtime::plan::{Init, Op, ReadRange, ResidentBuffer, ResidentDispatch, ResidentPlan};
use gpu_runtime::{kernel, Gpu, KernelSpec};

fn gpu() -> Rc<Gpu> {
    Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ))
}

/// `n` seeded values in (−scale, scale), none exactly 0 (so sign(p) is the same on both sides).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let u = ((rng.next_u64() >> 40) as f32 + 0.5) / (1u64 << 24) as f32;
            (2.0 * u - 1.0) * scale
        })
        .collect()
}

/// `n` seeded gradients of magnitude in [0.1, 0.5), either sign: well above the
/// regularisation terms (≤ 0.011), so no gradient cancels to near Adam's ε, where the step
/// lr·g/(|g| + ε) would magnify one rounding of g (a fused multiply-add on one side) beyond
/// any few-ulp bound.
fn gradients(n: usize, seed: u64) -> Vec<f32> {
    values(n, seed, 1.0)
        .into_iter()
        .map(|u| u.signum() * (0.1 + 0.4 * u.abs()))
        .collect()
}

fn sign(p: f32) -> f32 {
    if p > 0.0 {
        1.0
    } else if p < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// What a run leaves: parameters and the two state buffers (velocity in `m` for SGD).
struct State {
    params: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    /// The step counter's `t` in the state the next step would read.
    t: u32,
    /// The CPU's only: the size of the terms each moment is a sum of, β·|earlier| + (1 − β)·|g|
    /// (and |g|² for v), |g| counting the gradient and the regularisation term apart. A
    /// moment whose terms cancel is small, but its roundings are those of its terms.
    m_size: Vec<f64>,
    v_size: Vec<f64>,
}

const PARAMS: &str = "params";
const GRADS: &str = "grads";
const ALL_GRADS: &str = "every step's grads";
const M: &str = "m";
const V: &str = "v";
const CORR: &str = "corrections";
const STATES: [&str; 2] = ["state a", "state b"];

/// `steps` steps of `h` over `count` parameters in one submission on a grid of at most
/// `max_x` workgroups per row, with `k` standing in for the catalogue's kernel.
fn gpu_run(
    g: &Rc<Gpu>,
    k: &KernelSpec,
    h: &optim::Hyper,
    count: usize,
    max_x: u32,
    steps: usize,
) -> State {
    let p0 = values(count, 1, 1.0);
    let grads: Vec<f32> = (0..steps)
        .flat_map(|s| gradients(count, 10 + s as u64))
        .collect();
    let bytes = |v: &[f32]| Init::Bytes(bytemuck::cast_slice(v).to_vec().into());
    let n = count as u64 * 4;
    let buffers = vec![
        ResidentBuffer {
            name: PARAMS,
            init: bytes(&p0),
        },
        ResidentBuffer {
            name: GRADS,
            init: Init::Zeroed(n),
        },
        ResidentBuffer {
            name: ALL_GRADS,
            init: bytes(&grads),
        },
        ResidentBuffer {
            name: M,
            init: Init::Zeroed(n),
        },
        ResidentBuffer {
            name: V,
            init: Init::Zeroed(n),
        },
        ResidentBuffer {
            name: CORR,
            init: Init::Bytes(bytemuck::cast_slice(&correction_table()).to_vec().into()),
        },
        ResidentBuffer {
            name: STATES[0],
            init: Init::Zeroed(16),
        },
        ResidentBuffer {
            name: STATES[1],
            init: Init::Zeroed(16),
        },
    ];
    let variants: Vec<Vec<&'static str>> = (0..2)
        .map(|parity| match h.rule {
            Rule::Sgd { .. } => vec![PARAMS, GRADS, M],
            Rule::Adam => vec![
                PARAMS,
                GRADS,
                M,
                V,
                CORR,
                STATES[parity],
                STATES[1 - parity],
            ],
        })
        .collect();
    let dispatch = ResidentDispatch {
        kernel: k,
        variants: ResidentDispatch::whole(variants),
        uniform: optim::uniform(h, count, max_x).words().to_vec(),
        workgroups: optim::grid(count, max_x).0,
        after_uniform: Vec::new(),
    };
    let mut plan = pollster::block_on(ResidentPlan::new(
        g.clone(),
        buffers,
        vec![dispatch],
        3 * n + 16,
    ))
    .expect("plan");
    let mut ops = Vec::new();
    for s in 0..steps {
        ops.push(Op::Copy {
            from: ALL_GRADS,
            from_offset: s as u64 * n,
            to: GRADS,
            to_offset: 0,
            bytes: n,
        });
        ops.push(Op::Dispatch {
            index: 0,
            variant: s % 2,
        });
    }
    plan.submit(&ops, steps as u64).expect("one submission");
    let range = |buffer, bytes| ReadRange {
        buffer,
        offset: 0,
        bytes,
    };
    let ranges = [
        range(PARAMS, n),
        range(M, n),
        range(V, n),
        range(STATES[steps % 2], 16),
    ];
    assert!(plan.request_read(&[], &ranges).expect("read"));
    let bytes = loop {
        plan.wait().expect("wait");
        if let Some(b) = plan.poll_read().expect("poll") {
            break b;
        }
    };
    let f: Vec<f32> = bytemuck::pod_collect_to_vec(&bytes);
    State {
        params: f[..count].to_vec(),
        m: f[count..2 * count].to_vec(),
        v: f[2 * count..3 * count].to_vec(),
        t: f[3 * count + 1].to_bits(),
        m_size: Vec::new(),
        v_size: Vec::new(),
    }
}

/// The same steps on the CPU (`cpu_kernels::optim`, the update every twin runs).
fn cpu_run(h: &optim::Hyper, count: usize, steps: usize) -> State {
    let mut p = values(count, 1, 1.0);
    let (mut m, mut v) = (vec![0.0f32; count], vec![0.0f32; count]);
    let (l1, l2) = (h.l1, h.l2);
    let reg = |g: f32, p: f32| g + (l1 * sign(p) + l2 * p);
    let (mut m_size, mut v_size) = (vec![0.0f64; count], vec![0.0f64; count]);
    let (b1, b2) = match h.rule {
        Rule::Sgd { momentum } => (momentum as f64, 1.0),
        Rule::Adam => (0.9, 0.999),
    };
    for s in 0..steps {
        let g = gradients(count, 10 + s as u64);
        for i in 0..count {
            let size = g[i].abs() as f64 + l1 as f64 + (l2 * p[i]).abs() as f64;
            // SGD's velocity adds g whole.
            let new = if b2 == 1.0 { size } else { (1.0 - b1) * size };
            m_size[i] = b1 * m_size[i] + new;
            v_size[i] = b2 * v_size[i] + (1.0 - b2) * size * size;
        }
        match h.rule {
            Rule::Sgd { momentum } => sgd_update_with(h.lr, momentum, &mut p, &g, &mut m, reg),
            Rule::Adam => {
                adam_update_with(h.lr, s as u64 + 1, EPSILON, &mut p, &g, &mut m, &mut v, reg)
            }
        }
    }
    State {
        params: p,
        m,
        v,
        t: steps as u32,
        m_size,
        v_size,
    }
}

/// The worst |GPU − CPU| over its bound (see the module header) across parameters and state.
fn gap(gpu: &State, cpu: &State, steps: usize) -> f64 {
    let per = 4.0 * steps as f64 * f32::EPSILON as f64;
    let worst = |a: &[f32], b: &[f32], size: &[f64]| {
        a.iter()
            .zip(b)
            .zip(size)
            .map(|((&x, &y), &size)| {
                if !x.is_finite() {
                    return f64::INFINITY;
                }
                let bound = per * (y.abs() as f64).max(size) + f32::MIN_POSITIVE as f64;
                (x as f64 - y as f64).abs() / bound
            })
            .fold(0.0, f64::max)
    };
    let r = [
        worst(&gpu.params, &cpu.params, &vec![1.0; cpu.params.len()]),
        worst(&gpu.m, &cpu.m, &cpu.m_size),
        worst(&gpu.v, &cpu.v, &cpu.v_size),
    ];
    r.into_iter().fold(0.0, f64::max)
}

fn adam() -> optim::Hyper {
    optim::Hyper {
        rule: Rule::Adam,
        lr: 0.01,
        l1: 1e-3,
        l2: 1e-2,
        advance: true,
    }
}

fn sgd() -> optim::Hyper {
    optim::Hyper {
        rule: Rule::Sgd { momentum: 0.9 },
        lr: 0.05,
        l1: 1e-3,
        l2: 1e-2,
        advance: false,
    }
}

const STEPS: usize = 4;
/// Parameters of the small runs: no multiple of 64 (the last workgroup has idle invocations).
const SMALL: usize = 1001;

/// Both kernels, unchanged, with the small wrap limit (16 groups on rows of 3, so 6 rows
/// and 2 idle groups): the CPU's update after 1 and after 4 steps in one submission, the step
/// counter advanced once per Adam step.
#[test]
fn both_optimisers_step_like_the_cpu_in_one_submission_on_a_wrapped_grid() {
    let g = gpu();
    assert_eq!(optim::grid(SMALL, 3).0, [3, 6, 1]);
    for h in [adam(), sgd()] {
        let k = kernel(h.kernel_id()).expect("catalogued");
        for steps in [1, STEPS] {
            let got = gpu_run(&g, k, &h, SMALL, 3, steps);
            let want = cpu_run(&h, SMALL, steps);
            let r = gap(&got, &want, steps);
            eprintln!("{} {steps} steps: worst gap {r:.4} of its bound", k.id);
            assert!(r <= 1.0, "{} after {steps} steps: {r}× the bound", k.id);
            if h.rule == Rule::Adam {
                assert_eq!(got.t, steps as u32, "Adam's step counter");
            }
        }
    }
}

/// More parameters than 65,535 workgroups of 64 cover: the grid wraps into a second row at
/// the real limit, and every parameter, the tail's included, gets the CPU's update.
#[test]
fn a_grid_past_65535_workgroups_updates_every_parameter() {
    let g = gpu();
    let count = 65_535 * 64 + 77;
    // 65,537 workgroups: two rows of 32,769 (the one grid rule keeps rows even).
    assert_eq!(optim::grid(count, MAX_GROUPS_X).0, [32_769, 2, 1]);
    for h in [adam(), sgd()] {
        let k = kernel(h.kernel_id()).expect("catalogued");
        let got = gpu_run(&g, k, &h, count, MAX_GROUPS_X, 2);
        let want = cpu_run(&h, count, 2);
        let r = gap(&got, &want, 2);
        eprintln!("{} {count} parameters, 2 steps: worst gap {r:.4}", k.id);
        assert!(r <= 1.0, "{}: {r}× the bound", k.id);
        // The last parameter moved (a grid one row short would leave it).
        assert_ne!(got.params[count - 1], values(count, 1, 1.0)[count - 1]);
    }
}

/// Planted mistakes, one at a time: each is within the bound where it cannot show yet (the
/// velocity and second moment start at zero, so their decay matters from step 2; a counter
/// that does not advance gives step 1 its right corrections) and far outside it after
/// [`STEPS`] steps in one submission.
#[test]
fn planted_optimiser_mistakes_break_the_bound() {
    let g = gpu();
    let cases = [
        (
            sgd(),
            "momentum applied twice",
            "u.momentum * velocity[i] + g",
            "u.momentum * u.momentum * velocity[i] + g",
            true,
        ),
        (
            adam(),
            "second moment decaying with β₁",
            "u.beta2 * v[i] +",
            "u.beta1 * v[i] +",
            true,
        ),
        (
            adam(),
            "step counter not advanced",
            "Steps(state.start, state.t + 1u,",
            "Steps(state.start, state.t,",
            true,
        ),
        (
            adam(),
            "corrections of the next step (exponent t + 1)",
            "corrections[min(state.t, u.corr_len - 1u)]",
            "corrections[min(state.t + 1u, u.corr_len - 1u)]",
            false,
        ),
    ];
    for (h, what, from, to, fine_at_step_1) in cases {
        let k = kernel(h.kernel_id()).expect("catalogued");
        let src = k.wgsl();
        assert_eq!(src.matches(from).count(), 1, "{what}: `{from}` once");
        let broken = k.with_source(src.replacen(from, to, 1));
        let first = gap(
            &gpu_run(&g, &broken, &h, SMALL, 3, 1),
            &cpu_run(&h, SMALL, 1),
            1,
        );
        let last = gap(
            &gpu_run(&g, &broken, &h, SMALL, 3, STEPS),
            &cpu_run(&h, SMALL, STEPS),
            STEPS,
        );
        eprintln!("{what}: {first:.3} of the bound after 1 step, {last:.1} after {STEPS}");
        if fine_at_step_1 {
            assert!(first <= 1.0, "{what}: shows at step 1 ({first})");
        }
        assert!(last > 1.0, "{what}: went unnoticed ({last})");
    }
}

/// No model brings its own optimiser kernel: the only kernels that update a second moment or
/// a velocity are the optimiser family's two and the MLP's fused whole-step kernels (rewrite
/// rules of its plan, `training::FUSED_REPLACES`, which inline the same update). Here, not in
/// `family/optim.rs`, because it reads the whole catalogue, which lists that family.
#[test]
fn no_other_kernel_is_an_optimiser() {
    let fused = ["mlp-step-reduce", "mlp-step-params"];
    let ours = [optim::SGD_ID, optim::ADAM_ID];
    for k in gpu_runtime::kernels() {
        let src = k.wgsl();
        let updates = src.contains("beta2 * v[i]") || src.contains("velocity[i]");
        let allowed = ours.contains(&k.id) || fused.contains(&k.id);
        assert!(!updates || allowed, "{} updates parameters itself", k.id);
    }
    for id in ours.iter().chain(&fused) {
        assert!(gpu_runtime::kernel(id).is_some(), "{id}");
    }
}
