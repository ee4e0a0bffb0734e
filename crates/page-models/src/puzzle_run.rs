//! A puzzle's run as data, without DOM or GPU: the learner's kernel as a spec, the loop budget
//! of a case, the one-step plan it runs as, and the read-back bytes as numbers. The plan binds
//! by the `puzzles` crate's convention: the inputs in order, then `out`, then the one buffer a
//! run may add (the loop budget's flag, or the access log). It lives here, not in
//! `components/puzzle_page.rs`, so the page only renders and dispatches and the layout a
//! puzzle gets is unit-tested natively.

use std::borrow::Cow;

use gpu_runtime::plan::{Binding, Dispatch, Init, Plan, PlanBuffer, Step};
use gpu_runtime::{KernelSpec, LOOP_FLAG};
use puzzles::{access, Case, Puzzle};

/// The output buffer's name (the `puzzles` convention).
pub const OUT: &str = "out";
/// The access log's buffer name.
pub const LOG: &str = "log";

/// The buffer a run binds after `out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Nothing: the budget's rewrite put no flag after `out` (the kernel has no loop).
    Nothing,
    /// The loop budget's flag, `words` u32 words, zeroed.
    LoopFlag { words: usize },
    /// The access log, zeroed, room for `access::CAPACITY` accesses.
    Log,
}

/// The learner's kernel (or its budgeted or instrumented copy) as the spec a plan runs.
pub fn spec(source: String) -> Option<KernelSpec> {
    crate::edit_target::learner_spec("puzzle", source)
}

/// The binding just after `out`: where the loop flag and the access log must sit, since the
/// plan binds them there.
pub fn after_out(p: &Puzzle) -> usize {
    p.inputs.len() + 1
}

/// A case's loop budget: one iteration per input and output element, all in one thread (a
/// puzzle's launch is tiny, and a loop that ends needs no more).
pub fn loop_budget(case: &Case) -> u32 {
    let work: usize = case.inputs.iter().map(Vec::len).sum::<usize>() + case.expected.len();
    crate::loop_budget::budget(work as f64, 1.0)
}

fn bytes(values: &[f32]) -> Init<'static> {
    Init::Bytes(Cow::Owned(
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    ))
}

/// The one-step plan of a run: `inputs` (none read back), `out` starting as `initial` (read
/// back), then `after`, each bound whole in that order, over `workgroups`.
pub fn plan<'a>(
    p: &Puzzle,
    spec: &'a KernelSpec,
    inputs: &[Vec<f32>],
    initial: &[f32],
    workgroups: [u32; 3],
    after: After,
) -> Plan<'a> {
    let mut buffers: Vec<PlanBuffer> = p
        .inputs
        .iter()
        .zip(inputs)
        .map(|(name, data)| PlanBuffer {
            name,
            init: bytes(data),
            read_back: false,
        })
        .collect();
    buffers.push(PlanBuffer {
        name: OUT,
        init: bytes(initial),
        read_back: true,
    });
    let mut bindings: Vec<Binding> = p.inputs.iter().map(|n| Binding::whole(n)).collect();
    bindings.push(Binding::whole(OUT));
    let extra = match after {
        After::Nothing => None,
        After::LoopFlag { words } => Some((LOOP_FLAG, words.max(1) * 4)),
        After::Log => Some((LOG, access::log_words(access::CAPACITY) * 4)),
    };
    if let Some((name, size)) = extra {
        buffers.push(PlanBuffer {
            name,
            init: Init::Zeroed(size as u64),
            read_back: true,
        });
        bindings.push(Binding::whole(name));
    }
    Plan {
        buffers,
        steps: vec![Step {
            kernel: spec,
            dispatch: Dispatch {
                bindings,
                uniform: Vec::new(),
                workgroups,
            },
            cost: 1.0,
            split: None,
        }],
    }
}

/// `out`'s elements; empty when it was not read back.
pub fn floats(bytes: Option<&[u8]>) -> Vec<f32> {
    bytes
        .unwrap_or_default()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use puzzles::PUZZLES;

    /// A buffer's name, whether it is read back, and its initial bytes (or zeroed size).
    type Shown = (&'static str, bool, Result<Vec<u8>, u64>);

    fn layout(plan: &Plan) -> Vec<Shown> {
        plan.buffers
            .iter()
            .map(|b| {
                let init = match &b.init {
                    Init::Bytes(v) => Ok(v.to_vec()),
                    Init::Zeroed(n) => Err(*n),
                };
                (b.name, b.read_back, init)
            })
            .collect()
    }

    fn bound(plan: &Plan) -> Vec<Binding> {
        plan.steps[0].dispatch.bindings.clone()
    }

    #[test]
    fn every_case_binds_inputs_then_out_with_its_data_and_launch() {
        for p in PUZZLES {
            let spec = spec(puzzles::solution(p)).expect("a measuring kernel to start from");
            for case in puzzles::cases(p) {
                let initial = case.initial_output();
                let plan = plan(
                    p,
                    &spec,
                    &case.inputs,
                    &initial,
                    case.workgroups,
                    After::Nothing,
                );
                let names: Vec<&str> = p.inputs.iter().copied().chain([OUT]).collect();
                assert_eq!(
                    bound(&plan),
                    names.iter().map(|n| Binding::whole(n)).collect::<Vec<_>>(),
                    "{} {}",
                    p.id,
                    case.label()
                );
                let got = layout(&plan);
                assert_eq!(got.len(), p.inputs.len() + 1, "{}", p.id);
                for ((name, read, init), (want, data)) in got.iter().zip(
                    names
                        .iter()
                        .zip(case.inputs.iter().chain([&initial]).map(|v| bytes(v))),
                ) {
                    assert_eq!(name, want, "{}", p.id);
                    assert_eq!(*read, *name == OUT, "{} {name}: read back", p.id);
                    let Init::Bytes(data) = data else {
                        unreachable!("bytes() always gives bytes")
                    };
                    assert_eq!(init.as_deref(), Ok(&data[..]), "{} {name}", p.id);
                }
                let step = &plan.steps[0];
                assert_eq!(step.dispatch.workgroups, case.workgroups, "{}", p.id);
                assert!(step.dispatch.uniform.is_empty() && step.split.is_none());
                assert_eq!(
                    (step.kernel.id, step.kernel.entry_point),
                    ("puzzle", "main")
                );
            }
        }
    }

    #[test]
    fn the_flag_and_the_log_are_bound_just_after_out() {
        let p = &PUZZLES[0];
        let spec = spec(puzzles::solution(p)).expect("a measuring kernel to start from");
        let inputs = (p.data)();
        let initial = puzzles::initial_output(p);
        for (after, name, size) in [
            (After::LoopFlag { words: 3 }, LOOP_FLAG, 12),
            // A flag of no words still gets the smallest buffer the budget can write to.
            (After::LoopFlag { words: 0 }, LOOP_FLAG, 4),
            (
                After::Log,
                LOG,
                (access::log_words(access::CAPACITY) * 4) as u64,
            ),
        ] {
            let plan = plan(p, &spec, &inputs, &initial, p.workgroups, after);
            let b = bound(&plan);
            assert_eq!(b.len(), after_out(p) + 1, "{after:?}");
            assert_eq!(b[after_out(p) - 1], Binding::whole(OUT), "{after:?}");
            assert_eq!(b[after_out(p)], Binding::whole(name), "{after:?}");
            let last = layout(&plan).pop();
            assert_eq!(last, Some((name, true, Err(size))), "{after:?}");
        }
    }

    #[test]
    fn a_cases_loop_budget_is_four_iterations_per_element_plus_the_slack() {
        for p in PUZZLES {
            for case in puzzles::cases(p) {
                let work = case.inputs.iter().map(Vec::len).sum::<usize>() + case.expected.len();
                assert_eq!(
                    loop_budget(&case),
                    4 * work as u32 + crate::loop_budget::SLACK,
                    "{} {}",
                    p.id,
                    case.label()
                );
            }
        }
    }

    #[test]
    fn read_back_floats_decode_little_endian() {
        let f: Vec<u8> = [1.5f32, -7777.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(floats(Some(&f)), vec![1.5, -7777.0]);
        assert_eq!(floats(None), Vec::<f32>::new());
    }
}
