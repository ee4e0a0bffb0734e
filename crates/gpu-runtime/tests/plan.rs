//! The plan-based dispatch path on a real wgpu device (lavapipe under `cargo xtask test`):
//! a plan of two dispatches over a shared buffer, matmuls cut into many row ranges, the
//! pipeline cache keyed by source and by the runtime-checks setting, and progress. Leak checks are in `live_buffers.rs`.

use gpu_runtime::cpu_kernels::matmul::{self, MatmulSize};
use gpu_runtime::cpu_kernels::verify;
use gpu_runtime::plan::{Binding, Dispatch, Init, PlanBuffer, Step};
use gpu_runtime::{kernel, Job, Plan, Progress, RunControl, RunOptions, Workload};

mod common;
use common::{gpu, runnable_matmul_kernels};

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// mid = A·B (s1), out = mid·E (s2) with `k`: two dispatches, the second reading what the
/// first wrote; mid and out are read back.
fn chained_plan(
    k: &'static gpu_runtime::KernelSpec,
    s1: MatmulSize,
    s2: MatmulSize,
    a: &[f32],
    b: &[f32],
    e: &[f32],
) -> Plan<'static> {
    let step = |x: &'static str, y: &'static str, out: &'static str, s: MatmulSize| Step {
        kernel: k,
        dispatch: Dispatch {
            bindings: vec![
                Binding::whole(x),
                Binding::whole(y),
                Binding::whole(out),
                Binding::Uniform,
            ],
            uniform: vec![s.m, s.n, s.k, 0],
            workgroups: k.workgroups(&Workload::Matmul(s)),
        },
        cost: s.flops() / 2.0,
        split: None,
    };
    let input = |name, data: &[f32]| PlanBuffer {
        name,
        init: Init::Bytes(bytemuck::cast_slice(data).to_vec().into()),
        read_back: false,
    };
    let output = |name, len: usize| PlanBuffer {
        name,
        init: Init::Zeroed(len as u64 * 4),
        read_back: true,
    };
    Plan {
        buffers: vec![
            input("a", a),
            input("b", b),
            input("e", e),
            output("mid", s1.c_len()),
            output("out", s2.c_len()),
        ],
        steps: vec![step("a", "b", "mid", s1), step("mid", "e", "out", s2)],
    }
}

#[test]
fn two_dispatches_share_a_buffer() {
    let gpu = gpu();
    let k = kernel("matmul-naive").expect("catalogued");
    // mid = A·B (5×7 · 7×6), out = mid·E (5×6 · 6×3).
    let s1 = MatmulSize::new(5, 6, 7);
    let s2 = MatmulSize::new(5, 3, 6);
    let (a, b) = s1.inputs(1);
    let (_, e) = s2.inputs(2);
    let plan = chained_plan(k, s1, s2, &a, &b, &e);
    let out = pollster::block_on(gpu.run_plan(&plan, &RunOptions::default(), &Default::default()))
        .expect("runs");
    let mid = floats(out.bytes("mid").expect("mid read back"));
    let got = floats(out.bytes("out").expect("out read back"));
    let v1 = verify::compare(&mid, &matmul::reference(s1, &a, &b), k.precision);
    assert!(v1.ok, "{v1:?}");
    // The second step read what the first wrote: out matches mid·E.
    let v2 = verify::compare(&got, &matmul::reference(s2, &mid, &e), k.precision);
    assert!(v2.ok, "{v2:?}");
    assert!(got.iter().any(|&x| x != 0.0));
}

#[test]
fn every_matmul_kernel_is_right_when_cut_into_row_ranges() {
    let gpu = gpu();
    // Odd sizes: rows of A (29 floats) and C (33 floats) need 64-row pieces for aligned offsets.
    let size = MatmulSize::new(300, 33, 29);
    let (a, b) = size.inputs(3);
    let ctl = RunControl {
        chunk_cap: Some(1.0),
        ..Default::default()
    };
    for k in runnable_matmul_kernels(
        &gpu,
        "every_matmul_kernel_is_right_when_cut_into_row_ranges",
    ) {
        let job = Job::Matmul { size, a: &a, b: &b };
        let out = pollster::block_on(gpu.run_with(k, &job, &RunOptions::default(), &ctl))
            .unwrap_or_else(|e| panic!("{}: {e}", k.id));
        // 300 rows in pieces of 64 rows (or 128 for f16's 58-byte rows).
        assert!(out.timing.submissions >= 3, "{}: {:?}", k.id, out.timing);
        // The kernel's own check: the f64 reference of what it multiplies (the Tensor Core
        // stage's f16-rounded inputs), with its precision's bound.
        let v = k.verify(&job, &out.output);
        assert!(v.ok, "{}: {v:?}", k.id);
    }
}

#[test]
fn progress_is_reported_up_to_the_total() {
    let gpu = gpu();
    let k = kernel("matmul-tiled").expect("catalogued");
    let size = MatmulSize::new(256, 64, 64);
    let (a, b) = size.inputs(1);
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let ctl = RunControl {
        progress: Some({
            let seen = seen.clone();
            std::rc::Rc::new(move |p| seen.borrow_mut().push(p))
        }),
        chunk_cap: Some(64.0 * 64.0 * 64.0),
        ..Default::default()
    };
    let job = Job::Matmul { size, a: &a, b: &b };
    let out =
        pollster::block_on(gpu.run_with(k, &job, &RunOptions::default(), &ctl)).expect("runs");
    assert!(k.verify(&job, &out.output).ok);
    let seen = seen.borrow();
    assert_eq!(seen.first(), Some(&Progress::WaitingForQueue));
    let done: Vec<f64> = seen
        .iter()
        .filter_map(|p| match p {
            Progress::Running { done, total } => {
                assert_eq!(*total, size.flops() / 2.0);
                Some(*done)
            }
            _ => None,
        })
        .collect();
    // Four pieces of 64 rows, then the final report.
    assert!(done.len() >= 4, "{seen:?}");
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    assert_eq!(done.last(), Some(&(size.flops() / 2.0)));
}

#[test]
fn the_pipeline_cache_tells_two_sources_with_one_id_apart() {
    let gpu = gpu();
    let naive = kernel("matmul-naive").expect("catalogued");
    let doubled = naive.with_source(naive.wgsl().replace(
        "c[row * dims.n + col] = acc;",
        "c[row * dims.n + col] = 2.0 * acc;",
    ));
    assert_eq!(doubled.id, naive.id);
    assert_ne!(doubled.pipeline_key(), naive.pipeline_key());
    let size = MatmulSize::new(9, 8, 7);
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    let opts = RunOptions::default();
    let plain = pollster::block_on(gpu.run(naive, &job, &opts)).expect("runs");
    let twice = pollster::block_on(gpu.run(&doubled, &job, &opts)).expect("runs");
    let again = pollster::block_on(gpu.run(naive, &job, &opts)).expect("runs");
    assert!(naive.verify(&job, &plain.output).ok);
    assert_eq!(plain.output, again.output);
    for (x, y) in plain.output.iter().zip(&twice.output) {
        assert_eq!(2.0 * x, *y);
    }
}

#[test]
fn catalogue_kernels_run_trusted_natively_and_checked_on_request_with_their_own_pipelines() {
    let gpu = gpu();
    // Odd sizes: the tuned stages' padding to whole tiles is what keeps them in bounds unchecked.
    let size = MatmulSize::new(33, 17, 9);
    let (a, b) = size.inputs(2);
    let job = Job::Matmul { size, a: &a, b: &b };
    let opts = RunOptions::default();
    for id in ["matmul-vec4", "matmul-tuned", "matmul-double-buffer"] {
        let k = kernel(id).expect("catalogued");
        // Natively the catalogue's own kernels are compiled without runtime checks.
        assert!(!gpu.compiles_checked(k), "{id}");
        let trusted = pollster::block_on(gpu.run(k, &job, &opts)).expect("runs trusted");
        let before = gpu.cached_pipelines();
        gpu.set_runtime_checks(true);
        assert!(gpu.compiles_checked(k), "{id}");
        let checked = pollster::block_on(gpu.run(k, &job, &opts)).expect("runs checked");
        assert_eq!(
            gpu.cached_pipelines(),
            before + 1,
            "{id}: a pipeline of its own"
        );
        gpu.set_runtime_checks(false);
        let again = pollster::block_on(gpu.run(k, &job, &opts)).expect("runs");
        assert_eq!(
            gpu.cached_pipelines(),
            before + 1,
            "{id}: the trusted one is reused"
        );
        for out in [&checked, &trusted, &again] {
            let v = k.verify(&job, &out.output);
            assert!(v.ok, "{id}: {v:?}");
        }
        assert_eq!(checked.output, trusted.output, "{id}");
    }
}

#[test]
fn edited_kernels_are_always_checked() {
    let gpu = gpu();
    let tuned = kernel("matmul-tuned").expect("catalogued");
    // The same text as the catalogue's, but made at run time (as the editor does): nothing
    // proves what a learner typed, so it never runs without checks, whatever the setting.
    let copy = tuned.with_source(tuned.wgsl());
    for catalogue_checks in [false, true] {
        gpu.set_runtime_checks(catalogue_checks);
        assert!(gpu.compiles_checked(&copy));
        assert_eq!(gpu.compiles_checked(tuned), catalogue_checks);
    }
    gpu.set_runtime_checks(false);
    let size = MatmulSize::new(65, 31, 11);
    let (a, b) = size.inputs(4);
    let job = Job::Matmul { size, a: &a, b: &b };
    let before = gpu.cached_pipelines();
    let edited = pollster::block_on(gpu.run(&copy, &job, &RunOptions::default())).expect("runs");
    assert!(copy.verify(&job, &edited.output).ok);
    gpu.set_runtime_checks(true);
    pollster::block_on(gpu.run(&copy, &job, &RunOptions::default())).expect("runs");
    assert_eq!(
        gpu.cached_pipelines(),
        before + 1,
        "the edited copy has one (checked) pipeline whatever the setting"
    );
}

#[test]
fn short_repetitions_share_one_submission() {
    // The launch-cost lesson compares one submission of many dispatches with many
    // submissions: short repetitions must not be cut apart.
    let gpu = gpu();
    let k = kernel("measure-fma").expect("catalogued");
    let size = gpu_runtime::MeasureSize {
        elements: 64,
        threads: 64,
        param: 8,
    };
    let input = gpu_runtime::measurements::input(64);
    let job = Job::Measure {
        size,
        input: &input,
    };
    let opts = RunOptions {
        warmup: 0,
        repetitions: 16,
    };
    let out = pollster::block_on(gpu.run(k, &job, &opts)).expect("runs");
    assert_eq!(out.timing.submissions, 1, "{:?}", out.timing);
    assert!(k.verify(&job, &out.output).ok);
}

/// A repeated plan makes each dispatch's uniform block and bind group once, however many
/// warm-up passes and repetitions it runs (lavapipe under `cargo xtask test`), leaks
/// nothing, and computes what one run computes.
#[test]
fn a_repeated_plan_binds_each_dispatch_once() {
    let gpu = gpu();
    let k = kernel("matmul-naive").expect("catalogued");
    // mid = A·B (9×6 · 6×5), out = mid·E (9×5 · 5×4): two dispatches, each with a uniform.
    let s1 = MatmulSize::new(9, 5, 6);
    let s2 = MatmulSize::new(9, 4, 5);
    let (a, b) = s1.inputs(3);
    let (_, e) = s2.inputs(4);
    let plan = chained_plan(k, s1, s2, &a, &b, &e);
    let before = gpu_runtime::plan::bind_groups_made();
    let opts = RunOptions {
        warmup: 7,
        repetitions: 9,
    };
    let out = pollster::block_on(gpu.run_plan(&plan, &opts, &RunControl::default())).expect("runs");
    assert_eq!(
        gpu_runtime::plan::bind_groups_made() - before,
        2,
        "one per dispatch, not per pass"
    );
    let floats =
        |name| -> Vec<f32> { bytemuck::pod_collect_to_vec(out.bytes(name).expect("read back")) };
    let (mid, got) = (floats("mid"), floats("out"));
    let v1 = verify::compare(&mid, &matmul::reference(s1, &a, &b), k.precision);
    assert!(v1.ok, "{v1:?}");
    let v2 = verify::compare(&got, &matmul::reference(s2, &mid, &e), k.precision);
    assert!(v2.ok, "{v2:?}");
    assert!(got.iter().any(|&x| x != 0.0));
    assert_eq!(out.timing.repetitions, 9);
}
