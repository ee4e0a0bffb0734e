//! A scratch run as data, without DOM or GPU: the learner's kernel as a spec, the loop budget
//! of a setup, the buffer too large for the device, the one-step plan it runs as (the table's
//! buffers in binding order, every one read back, then the loop flag) and the bits read back
//! per buffer. It lives here, not in `components/scratch_page.rs`, so the page only renders
//! and dispatches and the plan is unit-tested natively; the setup itself (fields, WGSL
//! declarations, initial bits) is `crate::scratch`'s.

use std::borrow::Cow;

use gpu_runtime::plan::{le_words, Binding, Dispatch, Init, Plan, PlanBuffer, Step};
use gpu_runtime::{KernelSpec, LOOP_FLAG};

use crate::scratch::{ElemType, Ready, ReadyBuffer, MAX_BUFFERS};

/// Plan buffer names by binding (the plan wants static names; the learner's are in the WGSL).
pub const NAMES: [&str; MAX_BUFFERS] = ["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"];

/// The learner's budgeted kernel as the spec the plan runs.
pub fn spec(source: String) -> Option<KernelSpec> {
    crate::edit_target::learner_spec("scratch", source)
}

/// The scratch kernel's loop budget: there is no family's work to size it by, so every
/// buffer element counts for 16 inner iterations, shared by the workgroups (not by their
/// invocations, which only the source knows): generous for a kernel that ends, still finite
/// for one that does not.
pub fn loop_budget(ready: &Ready) -> u32 {
    let elements: f64 = ready.buffers.iter().map(|b| b.bits.len() as f64).sum();
    let groups: f64 = ready.groups.iter().map(|&g| f64::from(g)).product();
    crate::loop_budget::budget(16.0 * elements, groups)
}

/// The first buffer longer than `limit` bytes (the device's largest storage binding), which
/// the page names instead of running.
pub fn oversized(ready: &Ready, limit: u64) -> Option<&ReadyBuffer> {
    ready
        .buffers
        .iter()
        .find(|b| b.bits.len() as u64 * 4 > limit)
}

/// The one-step plan of a run: each table buffer from its initial bits, then the loop flag
/// of `flag_words` zeroed words, all read back and bound whole in that order, over the
/// setup's workgroups.
pub fn plan<'a>(ready: &Ready, spec: &'a KernelSpec, flag_words: usize) -> Plan<'a> {
    let mut buffers: Vec<PlanBuffer> = ready
        .buffers
        .iter()
        .zip(NAMES)
        .map(|(b, name)| PlanBuffer {
            name,
            init: Init::Bytes(Cow::Owned(
                b.bits.iter().flat_map(|v| v.to_le_bytes()).collect(),
            )),
            read_back: true,
        })
        .collect();
    buffers.push(PlanBuffer {
        name: LOOP_FLAG,
        init: Init::Zeroed((flag_words * 4) as u64),
        read_back: true,
    });
    let bindings = NAMES[..ready.buffers.len()]
        .iter()
        .copied()
        .chain([LOOP_FLAG])
        .map(Binding::whole)
        .collect();
    Plan {
        buffers,
        steps: vec![Step {
            kernel: spec,
            dispatch: Dispatch {
                bindings,
                uniform: Vec::new(),
                workgroups: ready.groups,
            },
            cost: 1.0,
            split: None,
        }],
    }
}

/// Each table buffer's bits after the run, under the learner's name, from `bytes` (a plan
/// buffer's read-back bytes by plan name).
pub fn results<'o>(
    ready: &Ready,
    bytes: impl Fn(&str) -> Option<&'o [u8]>,
) -> Vec<(String, ElemType, Vec<u32>)> {
    ready
        .buffers
        .iter()
        .zip(NAMES)
        .map(|(b, name)| (b.name.clone(), b.ty, le_words(bytes(name))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::{check, BufferDecl, InitKind};

    fn decl(name: &str, ty: ElemType, len: &str, init: InitKind) -> BufferDecl {
        BufferDecl {
            name: name.into(),
            ty,
            len: len.into(),
            init,
            arg: String::new(),
        }
    }

    /// Two buffers (f32 ramp of 5, u32 zeros of 3) over 2×3×1 workgroups.
    fn ready() -> Ready {
        let groups = ["2".to_string(), "3".to_string(), "1".to_string()];
        check(
            &[
                decl("a", ElemType::F32, "5", InitKind::Ramp),
                decl("res", ElemType::U32, "3", InitKind::Zeros),
            ],
            &groups,
        )
        .expect("a valid setup")
    }

    /// A buffer's name, whether it is read back, and its initial bytes (or zeroed size).
    type Shown = (&'static str, bool, Result<Vec<u8>, u64>);

    fn le(bits: &[u32]) -> Vec<u8> {
        bits.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn the_table_buffers_then_the_flag_are_bound_in_order_and_all_read_back() {
        let ready = ready();
        let spec = spec("@compute @workgroup_size(1) fn main() {}".into())
            .expect("a measuring kernel to start from");
        let plan = plan(&ready, &spec, 3);
        let step = &plan.steps[0];
        assert_eq!(
            step.dispatch.bindings,
            ["b0", "b1", LOOP_FLAG].map(Binding::whole).to_vec()
        );
        assert_eq!(step.dispatch.workgroups, [2, 3, 1]);
        assert!(step.dispatch.uniform.is_empty() && step.split.is_none());
        assert_eq!(
            (step.kernel.id, step.kernel.entry_point),
            ("scratch", "main")
        );
        let got: Vec<Shown> = plan
            .buffers
            .iter()
            .map(|b| {
                let init = match &b.init {
                    Init::Bytes(v) => Ok(v.to_vec()),
                    Init::Zeroed(n) => Err(*n),
                };
                (b.name, b.read_back, init)
            })
            .collect();
        let ramp: Vec<u32> = (0..5).map(|i| (i as f32).to_bits()).collect();
        assert_eq!(
            got,
            vec![
                ("b0", true, Ok(le(&ramp))),
                ("b1", true, Ok(le(&[0, 0, 0]))),
                (LOOP_FLAG, true, Err(12)),
            ]
        );
    }

    #[test]
    fn the_names_cover_every_buffer_the_table_allows() {
        let mut names = NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MAX_BUFFERS);
        assert!(!names.contains(&LOOP_FLAG));
    }

    #[test]
    fn the_budget_is_sixteen_iterations_per_element_shared_by_the_workgroups() {
        // 8 elements × 16 over 6 workgroups: ⌈21.3⌉ = 22, × 4, plus the slack.
        assert_eq!(loop_budget(&ready()), 4 * 22 + crate::loop_budget::SLACK);
    }

    #[test]
    fn a_buffer_over_the_limit_is_named() {
        let ready = ready();
        assert_eq!(oversized(&ready, 20), None);
        assert_eq!(oversized(&ready, 19).map(|b| b.name.as_str()), Some("a"));
        assert_eq!(oversized(&ready, 11).map(|b| b.name.as_str()), Some("a"));
    }

    #[test]
    fn results_come_back_under_the_learners_names() {
        let ready = ready();
        let read = [("b0", le(&[7, 8])), ("b1", le(&[9])), (LOOP_FLAG, le(&[0]))];
        let bytes = |n: &str| {
            read.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, b)| b.as_slice())
        };
        assert_eq!(
            results(&ready, bytes),
            vec![
                ("a".to_string(), ElemType::F32, vec![7, 8]),
                ("res".to_string(), ElemType::U32, vec![9]),
            ]
        );
        assert_eq!(results(&ready, |_| None)[0].2, Vec::<u32>::new());
    }
}
