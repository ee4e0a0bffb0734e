//! Every catalogued kernel against the CPU reference, on a real wgpu device.
//!
//! `cargo xtask test` runs these on Mesa's lavapipe (a software Vulkan driver), so they need no
//! GPU; they fail — never skip — when no adapter can be found. A kernel that needs a feature
//! the adapter lacks (shader-f16, subgroups) cannot run there: it is reported on stdout as
//! `SKIPPED: …`, which `cargo xtask test` counts, so a missing check is never silent.

mod common;
use common::{gpu, runnable_matmul_kernels, skipped};

use gpu_runtime::cpu_kernels::matmul::MatmulSize;
use gpu_runtime::{GpuError, Job, RunOptions, TimingMethod};

/// Shapes from the issue: degenerate, odd (not multiples of any tile), tall/skinny, K = 1.
const SHAPES: &[(u32, u32, u32)] = &[
    (1, 1, 1),
    (7, 13, 5),
    (64, 64, 64),
    (129, 65, 257),
    (1, 512, 1),
    (512, 1, 512),
    (33, 17, 1),
    (128, 256, 64),
    (130, 131, 9),
    (1, 1024, 1),
];

/// What the test adapter offers of the optional features, printed so the log shows why a
/// stage ran or was skipped, and checked where the app relies on it: a software adapter is
/// called one (the page then never presents its speed as a GPU's), and subgroup sizes are
/// powers of two in the range WebGPU allows (the subgroup stage's tile math assumes it).
#[test]
fn the_adapters_description_holds_what_the_app_relies_on() {
    let gpu = gpu();
    let (f, a) = (gpu.features(), gpu.adapter());
    eprintln!(
        "{} ({}): shader-f16 {}, subgroups {} (sizes {}…{}), timestamps {}",
        a.name,
        a.driver,
        f.contains(gpu_runtime::wgpu::Features::SHADER_F16),
        f.contains(gpu_runtime::wgpu::Features::SUBGROUP),
        a.subgroup_min_size,
        a.subgroup_max_size,
        f.contains(gpu_runtime::wgpu::Features::TIMESTAMP_QUERY),
    );
    let name = a.name.to_lowercase();
    if name.contains("llvmpipe") || name.contains("swiftshader") {
        assert!(
            a.is_software,
            "{} is a CPU but is not called software",
            a.name
        );
    }
    if f.contains(gpu_runtime::wgpu::Features::SUBGROUP) {
        let (lo, hi) = (a.subgroup_min_size, a.subgroup_max_size);
        assert!(
            lo.is_power_of_two() && hi.is_power_of_two() && 4 <= lo && lo <= hi && hi <= 128,
            "subgroup sizes {lo}…{hi}"
        );
    }
}

#[test]
fn every_matmul_kernel_matches_the_cpu_reference() {
    let gpu = gpu();
    let kernels = runnable_matmul_kernels(&gpu, "every_matmul_kernel_matches_the_cpu_reference");
    assert!(!kernels.is_empty());
    let ids: Vec<&str> = kernels.iter().map(|k| k.id).collect();
    eprintln!("{}: checking {ids:?}", gpu.adapter().name);
    for kernel in kernels {
        for (seed, &(m, n, k)) in SHAPES.iter().enumerate() {
            let size = MatmulSize::new(m, n, k);
            let (a, b) = size.inputs(seed as u64 + 1);
            let job = Job::Matmul { size, a: &a, b: &b };
            let out = pollster::block_on(gpu.run(kernel, &job, &RunOptions::default()))
                .unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", kernel.id));
            let verdict = kernel.verify(&job, &out.output);
            assert!(
                verdict.ok,
                "{} at {m}x{n}x{k} (seed {}): {verdict:?}",
                kernel.id,
                seed + 1
            );
        }
    }
}

/// The tile variants the tuner tries (`matmul-tuned@…`, `matmul-double-buffer@…`) are not in
/// the ladder, so the test above does not see them; each one takes other paths through its
/// kernel (1, 2 or 4 loads per invocation, other warp layouts). Every one, on sizes that cut
/// through every tile edge (M, N not multiples of 64; K not of 8), compiled both ways: trusted,
/// as natively, and with runtime checks, as in a browser.
#[test]
fn every_tile_variant_matches_the_cpu_reference_checked_and_trusted() {
    let gpu = gpu();
    let shapes = [(7, 13, 5), (129, 65, 257), (130, 131, 9), (200, 300, 70)];
    for variant in gpu_runtime::catalogue::tile_variants() {
        for checked in [false, true] {
            gpu.set_runtime_checks(checked);
            for (seed, &(m, n, k)) in shapes.iter().enumerate() {
                let size = MatmulSize::new(m, n, k);
                let (a, b) = size.inputs(seed as u64 + 11);
                let job = Job::Matmul { size, a: &a, b: &b };
                let out = pollster::block_on(gpu.run(&variant, &job, &RunOptions::default()))
                    .unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", variant.id));
                let verdict = variant.verify(&job, &out.output);
                assert!(
                    verdict.ok,
                    "{} at {m}x{n}x{k}, runtime checks {checked}: {verdict:?}",
                    variant.id
                );
            }
        }
    }
    gpu.set_runtime_checks(false);
}

#[test]
fn repetitions_are_timed_and_results_stay_correct() {
    let gpu = gpu();
    let kernel = gpu_runtime::kernel("matmul-naive").expect("naive kernel");
    let size = MatmulSize::new(96, 80, 72);
    let (a, b) = size.inputs(9);
    let job = Job::Matmul { size, a: &a, b: &b };
    let opts = RunOptions {
        warmup: 2,
        repetitions: 3,
    };
    let out = pollster::block_on(gpu.run(kernel, &job, &opts)).expect("run");
    assert!(kernel.verify(&job, &out.output).ok);
    let t = &out.timing;
    assert_eq!(t.repetitions, 3);
    match t.method {
        TimingMethod::Timestamps => assert_eq!(t.pass_ms.len(), 3),
        TimingMethod::WallClock => assert!(t.pass_ms.is_empty()),
    }
    assert!(t.kernel_ms().is_finite() && t.kernel_ms() >= 0.0, "{t:?}");
    // Software adapters must never claim GPU timestamps.
    if gpu.adapter().is_software {
        assert_eq!(t.method, TimingMethod::WallClock);
    }
}

#[test]
fn broken_wgsl_is_an_error_not_a_crash() {
    let gpu = gpu();
    let naive = gpu_runtime::kernel("matmul-naive").expect("naive kernel");
    // Same id as the naive kernel: the pipeline cache is keyed by the source, not the id.
    let broken = naive.with_source(
        "@compute @workgroup_size(1) fn main() { let x: f32 = undefined_thing; }".into(),
    );
    let size = MatmulSize::new(4, 4, 4);
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    let err = pollster::block_on(gpu.run(&broken, &job, &RunOptions::default()))
        .expect_err("broken WGSL must not run");
    assert!(matches!(err, GpuError::Shader(_)), "{err:?}");
    // The device is still usable afterwards.
    let ok = pollster::block_on(gpu.run(naive, &job, &RunOptions::default())).expect("run");
    assert!(naive.verify(&job, &ok.output).ok);
}

/// The device is destroyed for real; the "lost" flag must come from wgpu's device-lost
/// callback (nothing in the test or in `destroy` sets it).
#[test]
fn a_lost_device_is_reported() {
    let gpu = gpu();
    let kernel = gpu_runtime::kernel("matmul-naive").expect("naive kernel");
    let size = MatmulSize::new(8, 8, 8);
    let (a, b) = size.inputs(1);
    let job = Job::Matmul { size, a: &a, b: &b };
    assert!(pollster::block_on(gpu.run(kernel, &job, &RunOptions::default())).is_ok());
    assert!(!gpu.is_lost());
    gpu.destroy();
    assert!(gpu.is_lost(), "wgpu's lost callback did not fire");
    let err = pollster::block_on(gpu.run(kernel, &job, &RunOptions::default()))
        .expect_err("a lost device cannot run");
    assert!(matches!(err, GpuError::DeviceLost(_)), "{err:?}");
    // A fresh device works again: what the app does on the next run.
    let gpu = self::gpu();
    assert!(pollster::block_on(gpu.run(kernel, &job, &RunOptions::default())).is_ok());
}

#[test]
fn every_matmul_kernel_is_right_at_large_and_power_of_two_sizes() {
    // 1000³ is a multiple of no tile; 512³ of all of them. The reference is sampled here
    // (edges + 4096 random elements), as in the browser.
    let gpu = gpu();
    for kernel in runnable_matmul_kernels(
        &gpu,
        "every_matmul_kernel_is_right_at_large_and_power_of_two_sizes",
    ) {
        for (m, n, k) in [(1000, 1000, 1000), (512, 512, 512), (64, 1024, 32)] {
            let size = MatmulSize::new(m, n, k);
            let run = pollster::block_on(gpu_runtime::run_matmul_verified(
                &gpu,
                kernel,
                size,
                7,
                &RunOptions::default(),
            ))
            .unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", kernel.id));
            assert!(
                run.verdict.ok,
                "{} {m}x{n}x{k}: {:?}",
                kernel.id, run.verdict
            );
        }
    }
}

#[test]
fn half_precision_inputs_cost_accuracy_that_the_f16_bound_allows() {
    let gpu = gpu();
    let (Some(f32_k), Some(f16_k)) = (
        gpu_runtime::kernel("matmul-blocktile-2d"),
        gpu_runtime::kernel("matmul-f16"),
    ) else {
        panic!("both kernels are catalogued");
    };
    if !gpu.features().contains(f16_k.required_features) {
        skipped(&format!(
            "half_precision_inputs_cost_accuracy_that_the_f16_bound_allows: {} has no shader-f16",
            gpu.adapter().name
        ));
        return;
    }
    let size = MatmulSize::new(96, 80, 256);
    let run = |k| {
        pollster::block_on(gpu_runtime::run_matmul_verified(
            &gpu,
            k,
            size,
            3,
            &RunOptions::default(),
        ))
        .expect("run")
    };
    let (full, half) = (run(f32_k), run(f16_k));
    assert!(full.verdict.ok && half.verdict.ok);
    // Rounding the inputs to 11 significant bits dominates: the f16 error is far larger.
    assert!(
        half.verdict.max_rel_error > 20.0 * full.verdict.max_rel_error,
        "f16 {:e} vs f32 {:e}",
        half.verdict.max_rel_error,
        full.verdict.max_rel_error
    );
    assert!(half.verdict.rel_bound > full.verdict.rel_bound);
}

#[test]
fn the_schedule_probe_sees_every_workgroup_exactly_once() {
    let gpu = gpu();
    for (gx, gy) in [(1, 1), (7, 5), (32, 32)] {
        let size = gpu_runtime::ScheduleSize { gx, gy, work: 64 };
        let rec = pollster::block_on(gpu_runtime::record_schedule(&gpu, size))
            .unwrap_or_else(|e| panic!("{gx}x{gy}: {e}"));
        assert_eq!(rec.events.len(), (gx * gy) as usize);
        let mut tickets: Vec<u32> = rec.events.iter().flat_map(|&(s, e)| [s, e]).collect();
        tickets.sort_unstable();
        assert!(tickets.iter().enumerate().all(|(i, &t)| t == i as u32));
        assert!(rec.events.iter().all(|&(s, e)| s < e));
    }
}

/// The Tensor Core kernels: the ladder's `matmul-tensor-core` (16×16×16 tiles, what NVIDIA's
/// Vulkan driver offers), its `@8x8x8` variant (what Mesa's lavapipe 26 offers) and the
/// benchmark's control without shared memory at both tile sizes, each on
/// sizes that cut through every tile and block edge, compiled trusted and with runtime
/// checks. A kernel the adapter cannot run is reported as skipped with the adapter's reason
/// (no VK_KHR_cooperative_matrix, no such tile); `cargo xtask test` counts it.
///
/// Skips alone would let every Tensor Core kernel go unchecked while the suite is green, so
/// the run meant to have cooperative matrices (`tools/lavapipe-coopmat/run.sh`, Mesa 26's
/// lavapipe) names the tile its adapter has in [`REQUIRE_TILE_VAR`]; the test then fails
/// unless the adapter offers that tile and every kernel built for it ran.
#[test]
fn the_tensor_core_kernels_match_the_f16_reference_or_say_why_not() {
    let gpu = gpu();
    let configs = gpu_runtime::coop_configs_text(gpu.cooperative_matrix_configs());
    eprintln!("{}: cooperative matrices [{configs}]", gpu.adapter().name);
    let required = required_tensor_core_tile();
    if let Some(t) = required {
        let offered = gpu.cooperative_matrix_configs().iter().any(|c| {
            (c.m_size, c.n_size, c.k_size) == (t, t, t)
                && c.ab_type == gpu_runtime::wgpu::CooperativeScalarType::F16
                && c.cr_type == gpu_runtime::wgpu::CooperativeScalarType::F32
        });
        assert!(
            offered,
            "{REQUIRE_TILE_VAR}={t}, but the adapter {} ({}) offers no {t}x{t}x{t} f16->f32 \
             cooperative matrix (it has [{configs}]): the run did not get the driver it set up",
            gpu.adapter().name,
            gpu.adapter().driver,
        );
    }
    let mut ran: Vec<(&'static str, Option<u32>)> = Vec::new();
    let ladder = gpu_runtime::kernel("matmul-tensor-core")
        .expect("catalogued")
        .clone();
    let variants = gpu_runtime::family::matmul::tensor_core_variants();
    assert_eq!(variants.len(), 3);
    let shapes = [
        (1, 1, 1),
        (7, 13, 5),
        (129, 65, 257),
        (130, 131, 9),
        (200, 300, 70),
        (1, 512, 33),
        (256, 128, 64),
        // M, N and K each one past a block: every tile edge crossed, K padded to 96.
        (257, 129, 65),
    ];
    let kernels: Vec<_> = std::iter::once(ladder).chain(variants).collect();
    let built_for = |t: u32| -> Vec<&'static str> {
        kernels
            .iter()
            .filter(|k| k.cooperative_tile() == Some(t))
            .map(|k| k.id)
            .collect()
    };
    let expected = required.map(built_for).unwrap_or_default();
    for kernel in kernels.iter().cloned() {
        if let Some(why) = gpu.cannot_run(&kernel) {
            skipped(&format!(
                "the_tensor_core_kernels_match_the_f16_reference_or_say_why_not: {} on {} ({why})",
                kernel.id,
                gpu.adapter().name
            ));
            continue;
        }
        for checked in [false, true] {
            gpu.set_runtime_checks(checked);
            for (seed, &(m, n, k)) in shapes.iter().enumerate() {
                let size = MatmulSize::new(m, n, k);
                let run = pollster::block_on(gpu_runtime::run_matmul_verified(
                    &gpu,
                    &kernel,
                    size,
                    seed as u64 + 21,
                    &RunOptions::default(),
                ))
                .unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", kernel.id));
                assert!(
                    run.verdict.ok,
                    "{} at {m}x{n}x{k}, runtime checks {checked}: {:?}",
                    kernel.id, run.verdict
                );
                let posed = run.posed_error.expect("judged on rounded inputs");
                eprintln!(
                    "{} {m}x{n}x{k} checked={checked}: max rel. error {:.2e} (bound {:.2e}), \
                     against the f32 problem {posed:.2e}",
                    kernel.id, run.verdict.max_rel_error, run.verdict.rel_bound
                );
            }
        }
        // Cut into row ranges (whole 128-row blocks, A and C bound at an offset), as a long
        // run is: 300 rows in at least three pieces.
        let size = MatmulSize::new(300, 33, 29);
        let (a, b) = size.inputs(3);
        let job = Job::Matmul { size, a: &a, b: &b };
        let ctl = gpu_runtime::RunControl {
            chunk_cap: Some(1.0),
            ..Default::default()
        };
        let out = pollster::block_on(gpu.run_with(&kernel, &job, &RunOptions::default(), &ctl))
            .unwrap_or_else(|e| panic!("{} in row ranges: {e}", kernel.id));
        assert!(
            out.timing.submissions >= 3,
            "{}: {:?}",
            kernel.id,
            out.timing
        );
        let v = kernel.verify(&job, &out.output);
        assert!(v.ok, "{} in row ranges: {v:?}", kernel.id);
        ran.push((kernel.id, kernel.cooperative_tile()));
    }
    gpu.set_runtime_checks(false);
    if let Some(t) = required {
        let at_tile: Vec<&str> = ran
            .iter()
            .filter(|(_, tile)| *tile == Some(t))
            .map(|(id, _)| *id)
            .collect();
        assert!(
            !expected.is_empty() && at_tile == expected,
            "{REQUIRE_TILE_VAR}={t}: on {} the kernels built for {t}x{t}x{t} are {expected:?} \
             but only {at_tile:?} ran; the others were skipped above",
            gpu.adapter().name,
        );
    }
}

/// Set by `tools/lavapipe-coopmat/run.sh` to the tile side its adapter offers (8 on Mesa 26's
/// lavapipe): the Tensor Core test must then run every kernel of that tile, not skip it.
const REQUIRE_TILE_VAR: &str = "GPU_PLAYGROUND_REQUIRE_TENSOR_CORE_TILE";

/// The tile side [`REQUIRE_TILE_VAR`] names, `None` where it is unset; any other value fails.
fn required_tensor_core_tile() -> Option<u32> {
    let v = std::env::var(REQUIRE_TILE_VAR).ok()?;
    match v.trim().parse::<u32>() {
        Ok(t @ (8 | 16)) => Some(t),
        _ => panic!("{REQUIRE_TILE_VAR}={v:?}: expected 8 or 16"),
    }
}
