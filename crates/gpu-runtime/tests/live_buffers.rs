//! The live-buffer counter (buffers created by `Gpu::run` minus buffers destroyed) returns to
//! zero after successful and failed runs, so repeated races cannot leak GPU memory.
//! Needs a wgpu adapter (lavapipe under `cargo xtask test`); fails, never skips, without one.

use std::rc::Rc;
use std::sync::Mutex;

use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use gpu_runtime::mlp::Spec;
use gpu_runtime::training::{SessionConfig, TrainingSession};
use gpu_runtime::{
    kernel, live_buffers, CancelToken, Gpu, GpuError, Job, Progress, RunControl, RunOptions,
};

/// The counter is global: the tests of this file take turns.
static TURN: Mutex<()> = Mutex::new(());

#[test]
fn every_run_destroys_what_it_created() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = Gpu::request_blocking().expect("no GPU adapter (see kernels_vs_cpu.rs)");
    let k = kernel("matmul-vec4").expect("catalogued");
    let size = MatmulSize::new(33, 17, 9);
    let (a, b) = size.inputs(1);
    assert_eq!(live_buffers(), 0);
    for _ in 0..5 {
        let job = Job::Matmul { size, a: &a, b: &b };
        pollster::block_on(gpu.run(k, &job, &RunOptions::default())).expect("runs");
        assert_eq!(live_buffers(), 0);
    }
    // A run that fails on a lost device leaves nothing behind either.
    gpu.destroy();
    assert!(gpu.is_lost(), "wgpu's lost callback did not fire");
    let job = Job::Matmul { size, a: &a, b: &b };
    assert!(pollster::block_on(gpu.run(k, &job, &RunOptions::default())).is_err());
    assert_eq!(live_buffers(), 0);
    // The next device works and leaks nothing either.
    let gpu = Gpu::request_blocking().expect("a fresh device");
    let job = Job::Matmul { size, a: &a, b: &b };
    let out = pollster::block_on(gpu.run(k, &job, &RunOptions::default())).expect("runs");
    assert!(k.verify(&job, &out.output).ok);
    assert_eq!(live_buffers(), 0);
}

#[test]
fn a_cancelled_run_stops_early_and_leaks_nothing() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = Gpu::request_blocking().expect("no GPU adapter (see kernels_vs_cpu.rs)");
    let k = kernel("matmul-naive").expect("catalogued");
    let size = MatmulSize::new(512, 256, 256);
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    let token = CancelToken::new();
    let reports = Rc::new(std::cell::Cell::new(0u32));
    let ctl = RunControl {
        cancel: token.clone(),
        // Cancel as soon as the first piece (of sixteen) has finished.
        progress: Some({
            let reports = reports.clone();
            Rc::new(move |p| {
                if let Progress::Running { done, total } = p {
                    assert!(done < total, "cancelled before the end");
                    reports.set(reports.get() + 1);
                    token.cancel();
                }
            })
        }),
        chunk_cap: Some(32.0 * 256.0 * 256.0),
    };
    let r = pollster::block_on(gpu.run_with(k, &job, &RunOptions::default(), &ctl));
    assert!(matches!(r, Err(GpuError::Cancelled)), "{r:?}");
    assert_eq!(reports.get(), 1, "stopped at the first boundary");
    assert_eq!(live_buffers(), 0);
    // The device is fine afterwards.
    let small = MatmulSize::new(8, 8, 8);
    let (a, b) = small.inputs(1);
    let job = Job::Matmul {
        size: small,
        a: &a,
        b: &b,
    };
    let out = pollster::block_on(gpu.run(k, &job, &RunOptions::default())).expect("runs");
    assert!(k.verify(&job, &out.output).ok);
    assert_eq!(live_buffers(), 0);
}

#[test]
fn a_training_session_counts_its_buffers_and_frees_them_on_drop() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = Rc::new(Gpu::request_blocking().expect("no GPU adapter (see kernels_vs_cpu.rs)"));
    let (s, errors) = Spec::from_params(|_| None);
    assert!(errors.is_empty());
    let net = s.net();
    let (train, _) = s.data();
    let x = train.features(&s.features);
    let params = net.init_params(s.seed);
    // With gradient accumulation (k micro-batches) the session holds k more uniforms: one loss
    // dispatch per micro-batch (and the uniforms of its longer plan). Each session's buffers are all counted and all freed.
    let mut held = Vec::new();
    for accum in [1usize, 3] {
        assert_eq!(live_buffers(), 0);
        let mut session = pollster::block_on(TrainingSession::new(
            gpu.clone(),
            SessionConfig {
                accum,
                ..SessionConfig::from_spec(&net, &s, &train, &params, &x)
            },
        ))
        .expect("session");
        // Params, grads, two optimiser states, activations, deltas, labels, losses, evaluation
        // activations, readback, and one uniform per dispatch.
        assert!(
            live_buffers() >= 10 + session.plan().len() as u32,
            "{}",
            live_buffers()
        );
        held.push((live_buffers(), session.plan().len() as u32));
        for _ in 0..5 {
            session.step().expect("step");
        }
        session.steps(3).expect("steps");
        session.eval_blocking().expect("eval");
        drop(session);
        assert_eq!(live_buffers(), 0);
    }
    // Three loss uniforms more, and one per extra dispatch of the accumulating plan (its
    // gradient kernels and optimiser stay separate: the update waits for every micro-batch).
    let ((one, plan_one), (three, plan_three)) = (held[0], held[1]);
    assert_eq!(three, one + 3 + (plan_three - plan_one), "{held:?}");
}
