//! Every catalogue kernel the editor edits (matmul stages, conv stages' edited kernels, MLP
//! and CNN kernels, measuring kernels) still computes the right answer through the loop budget's
//! rewrite (`wgsl_check::budget_loops`) with the budget the page gives it (`edit_target::
//! loop_budget_for`), with its flag bound where its family binds it, and no loop trips; and
//! an endless loop, a nested one, in a kernel of each family run that way ends, flags its
//! line, and leaves no buffer behind.
//! Needs a wgpu adapter (lavapipe under `cargo xtask test`); fails, never skips, without one.

use std::rc::Rc;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::verify::Precision;
use gpu_runtime::cnn_training::CnnSession;
use gpu_runtime::conv::{run_conv_with_loop_flag, ConvRun};
use gpu_runtime::training::TrainingSession;
use gpu_runtime::{
    live_buffers, measurements, Gpu, Job, KernelSpec, LoopFlag, RunControl, RunOptions,
};
use page_models::edit_cnn::CnnCheck;
use page_models::edit_target::{
    compare_elements, conv_shape, loop_budget_for, measure_size, within, MlpProbe, Target,
    MLP_REL_BOUND,
};
use page_models::kernel_edit::reference_rule;
use page_models::loop_budget::stopped_line;

/// Held by each test: `live_buffers` counts the whole process's buffers, so the leak check
/// must not see the other test's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn flag_of(b: &wgsl_check::LoopBudget) -> LoopFlag {
    LoopFlag {
        binding: b.flag_binding,
        words: b.flag_words(),
    }
}

/// Runs `edited` (rewritten with a loop budget, its flag at `flag`) as the editor runs
/// `target`'s kernel; returns whether its output is right (by the family's own check) and
/// the flag's words.
fn run_budgeted(
    gpu: &Rc<Gpu>,
    target: Target,
    edited: &KernelSpec,
    flag: LoopFlag,
    size: Option<MatmulSize>,
) -> Result<(bool, Vec<u32>), String> {
    let ctl = RunControl::default();
    let opts = RunOptions::default();
    let id = edited.id;
    match target {
        Target::Matmul(kernel) => {
            let s = size.ok_or("no size")?;
            let (a, b) = s.inputs(1);
            let job = Job::Matmul {
                size: s,
                a: &a,
                b: &b,
            };
            let (out, words) =
                pollster::block_on(gpu.run_with_loop_flag(edited, &job, &opts, &ctl, flag))
                    .map_err(|e| format!("{id} {s:?}: {e}"))?;
            Ok((kernel.verify(&job, &out.output).ok, words))
        }
        Target::Measure(_) => {
            let m = measure_size(id);
            let input = measurements::input(m.elements as usize);
            let job = Job::Measure {
                size: m,
                input: &input,
            };
            let (out, words) =
                pollster::block_on(gpu.run_with_loop_flag(edited, &job, &opts, &ctl, flag))
                    .map_err(|e| format!("{id}: {e}"))?;
            Ok((measurements::verify(id, m, &input, &out.output).ok, words))
        }
        Target::Conv(stage) => {
            let shape = conv_shape(stage);
            let (x, f) = shape.inputs(1);
            let run = ConvRun {
                stage,
                shape: &shape,
                x: &x,
                f: &f,
            };
            let (out, words) = pollster::block_on(run_conv_with_loop_flag(
                gpu, &run, edited, flag, &opts, &ctl,
            ))
            .map_err(|e| format!("{} ({id}): {e}", stage.id()))?;
            let (p, q) = shape.validate().map_err(|e| e.to_string())?;
            let reference = cpu_kernels::conv::reference(&shape, &x, &f);
            let layout = page_models::edit_target::Layout::Conv {
                n: shape.n,
                p,
                q,
                k: shape.k,
            };
            let diff = compare_elements(
                &layout,
                &out.output,
                &reference.value,
                8,
                reference_rule(&reference, Precision::F32),
            );
            Ok((diff.wrong == 0 && diff.total > 0, words))
        }
        Target::Mlp(_) => {
            let probe = MlpProbe::new(id);
            let mut session = pollster::block_on(TrainingSession::new_edited(
                gpu.clone(),
                probe.config(),
                &[edited],
                Some(flag),
            ))
            .map_err(|e| format!("{id}: {e}"))?;
            session.step().map_err(|e| e.to_string())?;
            let r = session.eval_blocking().map_err(|e| e.to_string())?;
            let (expected, layout) = probe.twin();
            let got: Vec<f32> = r.params.iter().chain(&r.logits).copied().collect();
            let diff = compare_elements(&layout, &got, &expected, 8, within(MLP_REL_BOUND));
            Ok((diff.wrong == 0 && diff.total == expected.len(), r.loop_flag))
        }
        Target::Cnn(_) => {
            let mut check = CnnCheck::new(id, true).ok_or("no CNN check")?;
            let mut session = pollster::block_on(CnnSession::new_edited(
                gpu.clone(),
                check.config(),
                &[edited],
                Some(flag),
            ))
            .map_err(|e| format!("{id}: {e}"))?;
            loop {
                check.start_step(&mut session).map_err(|e| e.to_string())?;
                let r = session
                    .read_blocking(&check.parts())
                    .map_err(|e| e.to_string())?;
                if let Some(run) = check.finish_step(&r, 8) {
                    return Ok((run.diff.wrong == 0 && run.diff.total > 0, run.flag));
                }
            }
        }
    }
}

#[test]
fn every_budgeted_catalogue_kernel_is_still_correct_and_never_trips() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = Rc::new(
        Gpu::request_blocking().expect("no GPU adapter (see gpu-runtime's kernels_vs_cpu.rs)"),
    );
    let mut checked = [0usize; 4];
    let mut skipped = Vec::new();
    for target in Target::all() {
        let Some(kernel) = target.kernel() else {
            continue;
        };
        // Features, and for the Tensor Core stage the tile it is written for.
        if gpu.cannot_run(kernel).is_some() {
            skipped.push(kernel.id);
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
            let (ok, words) = run_budgeted(&gpu, target, &edited, flag_of(&b), size)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(ok, "{} {size:?}: wrong through the loop budget", kernel.id);
            assert_eq!(words.len(), b.flag_words(), "{}", kernel.id);
            assert_eq!(
                stopped_line(&b.lines, &words),
                None,
                "{} {size:?} tripped its budget of {budget}: {words:?}",
                kernel.id
            );
            checked[target.family() as usize % 4] += 1;
        }
    }
    let total: usize = checked.iter().sum();
    println!("budgeted kernels checked: {total}; skipped (adapter lacks a feature): {skipped:?}");
    for target in [
        "matmul-tiled",
        "conv-direct",
        "conv-implicit-gemm",
        "optim-sgd",
        "mlp-forward",
        "cnn-conv-input-grad",
    ] {
        assert!(
            Target::from_id(target).is_some(),
            "{target} is no longer an edit target"
        );
    }
    assert!(total >= 20, "only {total} runs checked");
}

/// `kernel`'s source with `code` inserted at the start of its entry point's body (on the
/// lines after the brace's), and the 1-based line of that brace.
fn with_code_at_entry(kernel: &KernelSpec, code: &str) -> (String, u32) {
    let src = kernel.wgsl();
    let head = format!("fn {}(", kernel.entry_point);
    let at = src.find(&head).expect("the entry point");
    let open = at + src[at..].find('{').expect("its body");
    let line = src[..open].lines().count() as u32;
    let mut out = src.clone();
    out.insert_str(open + 1, &format!("\n{code}\n"));
    (out, line)
}

#[test]
fn endless_loops_in_every_family_end_and_name_their_line() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = Rc::new(Gpu::request_blocking().expect("no GPU adapter"));
    let before = live_buffers();
    let endless = "    var spin = 0u;\n    while (true) { spin = spin + 1u; }";
    let nested = "    var spin = 0u;\n    loop {\n        loop { spin = spin + 3u; }\n        spin = spin + 1u;\n    }";
    let cases = [
        ("matmul-tiled", endless, Some(MatmulSize::new(32, 32, 32))),
        ("matmul-tiled", nested, Some(MatmulSize::new(32, 32, 32))),
        ("conv-direct", endless, None),
        ("conv-implicit-gemm", nested, None),
        ("optim-sgd", endless, None),
        ("mlp-forward", nested, None),
        ("cnn-conv-input-grad", endless, None),
        ("cnn-conv-filter-reduce", nested, None),
        ("measure-copy", endless, None),
    ];
    for (id, code, size) in cases {
        let target = Target::from_id(id).unwrap_or_else(|| panic!("{id} is an edit target"));
        let kernel = target.kernel().expect("its kernel");
        let (src, line) = with_code_at_entry(kernel, code);
        let budget = loop_budget_for(target, size).expect("a budget");
        let b = wgsl_check::budget_loops(&src, budget).unwrap_or_else(|e| panic!("{id}: {e}"));
        let edited = kernel.with_source(b.source.clone());
        let (_, words) = run_budgeted(&gpu, target, &edited, flag_of(&b), size)
            .unwrap_or_else(|e| panic!("{e}"));
        // The inserted loop is two lines below the brace (`var spin` comes first); in the
        // nested pair the inner one, a line further, trips first, and the outer trips too
        // once its own count runs out, so either may be the first flagged line.
        let stopped = stopped_line(&b.lines, &words);
        let expected: &[u32] = if code == nested {
            &[line + 2, line + 3]
        } else {
            &[line + 2]
        };
        assert!(
            stopped.is_some_and(|l| expected.contains(&l)),
            "{id}: stopped at {stopped:?}, the loop is at {expected:?} ({words:?})"
        );
    }
    assert_eq!(live_buffers(), before, "a run left buffers behind");
}
