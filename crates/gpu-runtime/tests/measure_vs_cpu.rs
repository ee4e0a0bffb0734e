//! The lessons' measuring kernels against their CPU references on a real wgpu device
//! (lavapipe under `cargo xtask test`): exact copies, strided sums, FMA chains, both
//! divergence variants, and the launch-overhead measurement producing finite numbers.

use gpu_runtime::measurements;
use gpu_runtime::{kernel, Gpu, Job, MeasureSize, RunOptions};

fn gpu() -> Gpu {
    Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    )
}

fn check(gpu: &Gpu, id: &str, size: MeasureSize, data: &[f32]) {
    let k = kernel(id).expect("catalogued");
    let job = Job::Measure { size, input: data };
    let out = pollster::block_on(gpu.run(k, &job, &RunOptions::default()))
        .unwrap_or_else(|e| panic!("{id} {size:?}: {e}"));
    let v = k.verify(&job, &out.output);
    assert!(v.ok, "{id} {size:?}: {v:?}");
}

#[test]
fn copy_is_exact() {
    let gpu = gpu();
    for n in [4u32, 68, 1028, 262_148] {
        // Non-trivial bit patterns, including negative zero and a NaN-free spread.
        let mut data: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
        data[0] = -0.0;
        let size = MeasureSize {
            elements: n,
            threads: n,
            param: 0,
        };
        check(&gpu, "measure-copy", size, &data);
    }
}

#[test]
fn strided_sums_match_for_every_stride() {
    let gpu = gpu();
    let n = 64 * 129;
    let data = measurements::input(n as usize);
    for stride in [1u32, 2, 4, 8, 16, 32, 64] {
        for threads in [n / 16, 1, 37, n] {
            let size = MeasureSize {
                elements: n,
                threads,
                param: stride,
            };
            check(&gpu, "measure-strided", size, &data);
        }
    }
    // The total is the same whatever the stride: every element is read once.
    let size = MeasureSize {
        elements: n,
        threads: n / 16,
        param: 32,
    };
    let sums = measurements::reference("measure-strided", size, &data);
    assert_eq!(sums.iter().sum::<f32>(), data.iter().sum::<f32>());
}

#[test]
fn fma_chains_match() {
    let gpu = gpu();
    for (threads, iters) in [(1u32, 0u32), (63, 1), (65, 17), (1000, 300)] {
        let data: Vec<f32> = (0..threads.max(4)).map(|i| i as f32 * 0.5 - 3.0).collect();
        let size = MeasureSize {
            elements: threads.max(4),
            threads,
            param: iters,
        };
        check(&gpu, "measure-fma", size, &data);
    }
}

#[test]
fn both_divergence_variants_match() {
    let gpu = gpu();
    for (threads, iters) in [(64u32, 1u32), (640, 50), (200, 7)] {
        let data: Vec<f32> = (0..threads).map(|i| (i % 11) as f32).collect();
        let size = MeasureSize {
            elements: threads,
            threads,
            param: iters,
        };
        check(&gpu, "measure-divergent", size, &data);
        check(&gpu, "measure-uniform", size, &data);
    }
}

#[test]
fn measurements_give_finite_positive_numbers() {
    let gpu = gpu();
    let opts = RunOptions {
        warmup: 1,
        repetitions: 2,
    };
    let bw = pollster::block_on(measurements::bandwidth(&gpu, 1 << 16, &opts)).expect("bandwidth");
    assert!(bw.is_finite() && bw > 0.0, "{bw}");
    let flops = pollster::block_on(measurements::fma_rate(&gpu, 4096, 64, &opts)).expect("fma");
    assert!(flops.is_finite() && flops > 0.0, "{flops}");
    let data = measurements::input(64 * 256);
    let s = pollster::block_on(measurements::strided_read(&gpu, &data, 8, &opts)).expect("strided");
    assert!(s.is_finite() && s > 0.0);
    assert!(pollster::block_on(measurements::strided_read(&gpu, &data, 0, &opts)).is_err());
    let (d, u) = pollster::block_on(measurements::divergence(&gpu, 1024, 32, &opts)).expect("div");
    assert!(d > 0.0 && u > 0.0);
    let mut seen = 0;
    let c = pollster::block_on(measurements::launch_costs(
        &gpu,
        8,
        &Default::default(),
        |i| {
            seen = i;
            Ok(())
        },
    ))
    .expect("launch");
    assert_eq!(seen, 8);
    assert!(c.per_round_trip_us().is_finite() && c.per_dispatch_us() >= 0.0);
}

#[test]
fn a_matmul_job_is_refused_by_a_probe() {
    let gpu = gpu();
    let size = gpu_runtime::cpu_kernels::matmul::MatmulSize::new(2, 2, 2);
    let (a, b) = size.inputs(1);
    let k = kernel("measure-copy").expect("catalogued");
    let r = pollster::block_on(gpu.run(
        k,
        &Job::Matmul { size, a: &a, b: &b },
        &RunOptions::default(),
    ));
    assert!(r.is_err());
}

/// A kernel (or driver) that runs fewer iterations than asked must fail verification, or
/// the roofline's "peak" would count work that was never done. Runs the real probe with a
/// shortened loop and checks its output as if the full count had been asked for.
#[test]
fn a_shortened_loop_fails_verification() {
    let gpu = gpu();
    for id in ["measure-fma", "measure-divergent", "measure-uniform"] {
        for (asked, ran) in [(256u32, 255u32), (1024, 102), (2048, 2047), (64, 63)] {
            let threads = 128u32;
            let data = measurements::input(threads as usize);
            let size = |iters| MeasureSize {
                elements: threads,
                threads,
                param: iters,
            };
            let k = kernel(id).expect("catalogued");
            let job = Job::Measure {
                size: size(ran),
                input: &data,
            };
            let out = pollster::block_on(gpu.run(k, &job, &RunOptions::default()))
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            // What it ran is right for what it ran…
            assert!(k.verify(&job, &out.output).ok, "{id} {ran}");
            // …and wrong for what was asked.
            let asked_job = Job::Measure {
                size: size(asked),
                input: &data,
            };
            let v = k.verify(&asked_job, &out.output);
            assert!(
                !v.ok,
                "{id}: {ran} of {asked} iterations passed as {asked}: {v:?}"
            );
        }
    }
}

/// Lesson 19's transfer probe: every byte comes back as sent, each direction has a positive,
/// finite time, odd sizes and sizes the device refuses are errors (not panics), and the
/// repetitions are all recorded.
#[test]
fn transfers_round_trip_every_byte() {
    let gpu = gpu();
    let sizes = [4u64, 1 << 20, (3 << 20) + 12];
    let runs = pollster::block_on(measurements::transfer_bandwidth(
        &gpu,
        &sizes,
        3,
        &|_, _| {},
    ))
    .expect("transfer");
    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert_eq!(r.upload_ms.len(), 3);
        assert_eq!(r.readback_ms.len(), 3);
        for t in r.upload_ms.iter().chain(&r.readback_ms) {
            assert!(t.is_finite() && *t >= 0.0, "{t}");
        }
    }
    // The pattern differs word by word, so a shifted or stale copy cannot pass.
    let p = measurements::transfer_pattern(16);
    assert_ne!(p[..4], p[4..8]);
    for bad in [0usize, 6] {
        let data = vec![0u8; bad];
        assert!(
            pollster::block_on(gpu.time_transfer(&data)).is_err(),
            "{bad} bytes"
        );
    }
}
