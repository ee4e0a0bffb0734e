//! Every catalogue kernel the editor runs with a loop budget (matmul stages and measuring
//! kernels: `edit_run::takes_loop_flag`) still computes the right answer through the rewrite
//! (`wgsl_check::budget_loops`) with the budget the page gives it (`edit_target::
//! loop_budget_for`), at the editor's default size and at an uneven one, and no loop trips.
//! Needs a wgpu adapter (lavapipe under `cargo xtask test`); fails, never skips, without one.

use cpu_kernels::matmul::MatmulSize;
use gpu_runtime::{measurements, Gpu, Job, RunControl, RunOptions};
use page_models::edit_target::{loop_budget_for, measure_size, Target};
use page_models::loop_budget::stopped_line;

#[test]
fn every_budgeted_catalogue_kernel_is_still_correct_and_never_trips() {
    let gpu =
        Gpu::request_blocking().expect("no GPU adapter (see gpu-runtime's kernels_vs_cpu.rs)");
    let features = gpu.features();
    let mut checked = 0;
    for target in Target::all() {
        let Some(kernel) = target.kernel() else {
            continue;
        };
        if !matches!(target, Target::Matmul(_) | Target::Measure(_))
            || !features.contains(kernel.required_features)
        {
            continue;
        }
        let sizes: &[Option<MatmulSize>] = match target {
            Target::Matmul(_) => &[
                Some(MatmulSize::new(256, 256, 256)),
                Some(MatmulSize::new(100, 70, 33)),
            ],
            _ => &[None],
        };
        for &size in sizes {
            let budget = loop_budget_for(target, size).expect("a budget");
            let b = wgsl_check::budget_loops(&kernel.wgsl(), budget)
                .unwrap_or_else(|e| panic!("{}: {e}", kernel.id));
            let edited = kernel.with_source(b.source.clone());
            let flag = (b.flag_binding, b.flag_words());
            let ctl = RunControl::default();
            let opts = RunOptions::default();
            let (ok, words) = match size {
                Some(s) => {
                    let (a, bm) = s.inputs(1);
                    let job = Job::Matmul {
                        size: s,
                        a: &a,
                        b: &bm,
                    };
                    let (out, words) = pollster::block_on(
                        gpu.run_with_loop_flag(&edited, &job, &opts, &ctl, flag),
                    )
                    .unwrap_or_else(|e| panic!("{} {s:?}: {e}", kernel.id));
                    (kernel.verify(&job, &out.output).ok, words)
                }
                None => {
                    let m = measure_size(kernel.id);
                    let input = measurements::input(m.elements as usize);
                    let job = Job::Measure {
                        size: m,
                        input: &input,
                    };
                    let (out, words) = pollster::block_on(
                        gpu.run_with_loop_flag(&edited, &job, &opts, &ctl, flag),
                    )
                    .unwrap_or_else(|e| panic!("{}: {e}", kernel.id));
                    (
                        measurements::verify(kernel.id, m, &input, &out.output).ok,
                        words,
                    )
                }
            };
            assert!(ok, "{} {size:?}: wrong through the loop budget", kernel.id);
            assert_eq!(words.len(), b.flag_words(), "{}", kernel.id);
            assert_eq!(
                stopped_line(&b.lines, &words),
                None,
                "{} {size:?} tripped its budget of {budget}: {words:?}",
                kernel.id
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} runs checked");
}

#[test]
fn an_endless_loop_trips_and_names_its_line() {
    let gpu = Gpu::request_blocking().expect("no GPU adapter");
    let target = Target::from_id("matmul-tiled").expect("a stage");
    let kernel = target.kernel().expect("its kernel");
    let size = MatmulSize::new(32, 32, 32);
    let src = kernel.wgsl().replacen(
        "var acc = 0.0;",
        "var acc = 0.0;\n    var spin = 0u;\n    while (true) { c[0] = f32(spin); spin = spin + 1u; }",
        1,
    );
    let line = src
        .lines()
        .position(|l| l.contains("while (true)"))
        .expect("inserted") as u32
        + 1;
    let budget = loop_budget_for(target, Some(size)).expect("a budget");
    let b = wgsl_check::budget_loops(&src, budget).expect("budgets");
    let edited = kernel.with_source(b.source.clone());
    let (a, bm) = size.inputs(1);
    let job = Job::Matmul {
        size,
        a: &a,
        b: &bm,
    };
    let (_, words) = pollster::block_on(gpu.run_with_loop_flag(
        &edited,
        &job,
        &RunOptions::default(),
        &RunControl::default(),
        (b.flag_binding, b.flag_words()),
    ))
    .expect("ends");
    assert_eq!(stopped_line(&b.lines, &words), Some(line), "{words:?}");
}
