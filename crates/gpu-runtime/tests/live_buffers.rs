//! The live-buffer counter (buffers created by `Gpu::run` minus buffers destroyed) returns to
//! zero after successful and failed runs, so repeated races cannot leak GPU memory.
//! Needs a wgpu adapter (lavapipe under `cargo xtask test`); fails, never skips, without one.

use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use gpu_runtime::{kernel, live_buffers, Gpu, Job, RunOptions};

#[test]
fn every_run_destroys_what_it_created() {
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
