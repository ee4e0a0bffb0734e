//! The editor's check of an edited CNN kernel (issue 24), without DOM: the edited kernel runs
//! in the real training step (`gpu_runtime::cnn_training::CnnSession::new_edited`, the
//! catalogue's other kernels around it) of [`CnnProbe`]'s small network, [`CNN_STEPS`] steps,
//! and after each step every activation, argmax, delta, gradient, optimiser state and
//! parameter is compared with the CPU twin's (`cnn::net::CpuTrainer`) within the bound
//! `gpu_runtime::family::cnn::bound` derives from the arithmetic, exactly as
//! `crates/gpu-runtime/tests/cnn_vs_cpu.rs` compares them.
//!
//! Lockstep, as that test's sharp check: before each step the GPU is given the twin's
//! parameters and optimiser state, so each step's bound starts from zero and a wrong kernel
//! shows at the step it first runs (a run-on bound grows by orders of magnitude a step and
//! would let a small mistake through). The first step with a wrong element ends the run and
//! names it by buffer (`deltas[17]`: the kernels' own buffer names); so does a loop the
//! budget stopped. The caller drives the session ([`CnnCheck::start_step`], then a readback
//! of [`CnnCheck::parts`], then [`CnnCheck::finish_step`]): natively by blocking on each
//! readback (the tests here, `crates/app/tests/loop_budget.rs`), in the page with its own
//! polling (`components/edit_run.rs`).

use cnn::net::CpuTrainer;
use gpu_runtime::cnn_training::{CnnConfig, CnnSession, Part, Readout};
use gpu_runtime::family::cnn::bound::{step_bound, StateBound, TwinStep};
use gpu_runtime::GpuError;

use crate::edit_target::{compare_elements, CnnProbe, Differences, Layout, CNN_STEPS};

/// One lockstep step as the twin ran it.
#[derive(Clone, Debug)]
pub struct StepCheck {
    /// The twin's parameters and optimiser state before the step (written into the GPU's).
    pub params: Vec<f32>,
    pub m: Vec<f32>,
    pub v: Vec<f32>,
    /// The twin's values after the step, in [`Layout::Cnn`]'s order, and how far the GPU's
    /// may be from each.
    pub expected: Vec<f64>,
    pub bound: Vec<f64>,
}

/// A step's buffers in [`Layout::Cnn`]'s order (`edit_target::CNN_SEGMENTS`); argmax
/// indices as f32 (exact below 2²⁴, far beyond the probe's).
fn step_values(
    acts: &[f32],
    argmax: &[u32],
    deltas: &[f32],
    grads: &[f32],
    m: &[f32],
    v: &[f32],
    params: &[f32],
) -> Vec<f32> {
    let mut out = Vec::new();
    out.extend_from_slice(acts);
    out.extend(argmax.iter().map(|&a| a as f32));
    for part in [deltas, grads, m, v, params] {
        out.extend_from_slice(part);
    }
    out
}

/// What one edited CNN kernel's check found.
#[derive(Clone, Debug, PartialEq)]
pub struct CnnRun {
    /// The last step compared: the first wrong one, the one whose loop was stopped, or the
    /// last one.
    pub diff: Differences,
    /// Which step that was (1-based) and how many the check runs.
    pub step: usize,
    pub steps: usize,
    /// The loop-budget flag's words of the last step read (empty without a flag).
    pub flag: Vec<u32>,
}

/// The twin's side of the check and where the GPU's side has got to.
pub struct CnnCheck {
    pub probe: CnnProbe,
    pub layout: Layout,
    pub checks: Vec<StepCheck>,
    next: usize,
    flag: bool,
}

impl CnnCheck {
    /// Runs the twin [`CNN_STEPS`] steps for `kernel_id`'s probe; `flag`: the edited kernel
    /// carries a loop-budget flag to read back. None when the probe's network or the bound
    /// cannot be laid out (a bug, not the learner's).
    pub fn new(kernel_id: &str, flag: bool) -> Option<Self> {
        let probe = CnnProbe::new(kernel_id)?;
        let checks = twin_steps(&probe, CNN_STEPS)?;
        Some(Self {
            layout: probe.layout(),
            probe,
            checks,
            next: 0,
            flag,
        })
    }

    /// The session's settings.
    pub fn config(&self) -> CnnConfig<'_> {
        self.probe.config()
    }

    /// What to read back after each step.
    pub fn parts(&self) -> Vec<Part> {
        let mut parts = vec![
            Part::Acts,
            Part::Argmax,
            Part::Deltas,
            Part::Grads,
            Part::M,
            Part::V,
            Part::Params,
        ];
        if self.flag {
            parts.push(Part::LoopFlag);
        }
        parts
    }

    /// Whether every step has been compared.
    pub fn done(&self) -> bool {
        self.next >= self.checks.len()
    }

    /// Puts the GPU where the twin was before the next step and submits that step.
    pub fn start_step(&self, session: &mut CnnSession) -> Result<(), GpuError> {
        let c = self.checks.get(self.next).ok_or(GpuError::WrongJob)?;
        session.write_state(&c.params, &c.m, &c.v)?;
        session.step()
    }

    /// Compares the step's readback with the twin; Some when the check is over (a wrong
    /// element, a stopped loop, or the last step), None when the next step is to run.
    pub fn finish_step(&mut self, r: &Readout, shown: usize) -> Option<CnnRun> {
        let Some(c) = self.checks.get(self.next) else {
            return Some(CnnRun {
                diff: compare_elements(&self.layout, &[], &[], shown, |_, _, _| true),
                step: self.next,
                steps: self.checks.len(),
                flag: r.loop_flag.clone(),
            });
        };
        self.next += 1;
        let got = step_values(
            &r.acts, &r.argmax, &r.deltas, &r.grads, &r.m, &r.v, &r.params,
        );
        let diff = compare(&self.layout, &got, c, shown);
        let stopped = r.loop_flag.iter().any(|&w| w != 0);
        (diff.wrong > 0 || stopped || self.next == self.checks.len()).then(|| CnnRun {
            diff,
            step: self.next,
            steps: self.checks.len(),
            flag: r.loop_flag.clone(),
        })
    }
}

/// `got` (a step's buffers in [`Layout::Cnn`]'s order) against the twin's step: an element
/// is wrong when it is not finite or further from the twin's than its bound (a zero bound
/// asks for the same value); a missing one is wrong.
pub fn compare(layout: &Layout, got: &[f32], check: &StepCheck, shown: usize) -> Differences {
    let bound = &check.bound;
    compare_elements(layout, got, &check.expected, shown, |i, g, e| {
        let b = bound.get(i).copied().unwrap_or(0.0);
        !g.is_finite() || (f64::from(g) - e).abs() > b
    })
}

/// The twin's `steps` steps of `probe`, each from its own state before it, with the bound of
/// a GPU step started from that same state (the bound carried in is zero).
pub fn twin_steps(probe: &CnnProbe, steps: usize) -> Option<Vec<StepCheck>> {
    let mut cpu = CpuTrainer::new(
        probe.net.clone(),
        probe.hyper,
        probe.params.clone(),
        probe.batch,
        probe.train.clone(),
        probe.order_seed,
    );
    let zeros = StateBound::zero(probe.params.len());
    let mut out = Vec::with_capacity(steps);
    for step in 1..=steps as u64 {
        let labels = cpu.gather(step - 1).1.to_vec();
        let (m, v) = cpu.optimiser_state();
        let (params, m, v) = (cpu.params.clone(), m.to_vec(), v.to_vec());
        cpu.step();
        let b = step_bound(
            &TwinStep {
                net: &probe.net,
                hyper: &probe.hyper,
                step,
                params: &params,
                m: &m,
                v: &v,
                ws: cpu.workspace(),
                grads: cpu.grads(),
                labels: &labels,
            },
            &zeros,
        )?;
        let ws = cpu.workspace();
        let (m_after, v_after) = cpu.optimiser_state();
        let expected = step_values(
            &ws.acts,
            &ws.argmax,
            &ws.deltas,
            cpu.grads(),
            m_after,
            v_after,
            &cpu.params,
        )
        .into_iter()
        .map(f64::from)
        .collect();
        let mut bound = Vec::new();
        bound.extend_from_slice(&b.acts);
        // The winner of a window is a choice, not a rounding: the same, or wrong.
        bound.extend(std::iter::repeat_n(0.0, ws.argmax.len()));
        for part in [&b.deltas, &b.grads, &b.state.m, &b.state.v, &b.state.params] {
            bound.extend_from_slice(part);
        }
        out.push(StepCheck {
            params,
            m,
            v,
            expected,
            bound,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// The whole check of `replacements` for `kernel_id`'s probe, blocking on each readback.
    fn run_blocking(
        gpu: Rc<gpu_runtime::Gpu>,
        kernel_id: &str,
        replacements: &[&gpu_runtime::KernelSpec],
    ) -> Result<CnnRun, GpuError> {
        let mut check = CnnCheck::new(kernel_id, false).ok_or(GpuError::WrongJob)?;
        let mut session = pollster::block_on(CnnSession::new_edited(
            gpu,
            check.config(),
            replacements,
            None,
        ))?;
        loop {
            check.start_step(&mut session)?;
            let r = session.read_blocking(&check.parts())?;
            if let Some(run) = check.finish_step(&r, 8) {
                return Ok(run);
            }
        }
    }

    /// The test adapter (lavapipe under `cargo xtask test`); a missing one fails, as in
    /// every native GPU test here: the comparison is the point.
    fn gpu() -> Rc<gpu_runtime::Gpu> {
        Rc::new(gpu_runtime::Gpu::request_blocking().expect(
            "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs lavapipe)",
        ))
    }

    /// Every CNN kernel, given as the edit unchanged, runs its steps and matches the twin.
    #[test]
    fn every_catalogue_kernel_passes_as_an_edit() {
        let g = gpu();
        for k in gpu_runtime::family::cnn::KERNELS {
            let edit = k.with_source(k.wgsl());
            let run =
                run_blocking(g.clone(), k.id, &[&edit]).unwrap_or_else(|e| panic!("{}: {e}", k.id));
            assert_eq!(run.diff.wrong, 0, "{}: {:?}", k.id, run.diff.first);
            assert_eq!((run.step, run.steps), (CNN_STEPS, CNN_STEPS), "{}", k.id);
            assert_eq!(
                run.diff.total,
                CnnProbe::new(k.id).expect("probe").layout().len() as usize
            );
        }
    }

    /// The planted bug: the input gradient without its 180° turn is wrong at the first step,
    /// first in the deltas it writes (block 2's input gradient is block 1's pool delta).
    #[test]
    fn an_input_gradient_without_its_flip_is_wrong_and_named() {
        let good = gpu_runtime::kernel("cnn-conv-input-grad").expect("catalogued");
        let src = good.wgsl();
        let rotated = "params[w + (last - rp) * u.k + (last - sp)]";
        assert!(src.contains(rotated));
        let broken = good.with_source(src.replace(rotated, "params[w + rp * u.k + sp]"));
        let run = run_blocking(gpu(), good.id, &[&broken]).expect("runs");
        assert!(run.diff.wrong > 0, "the unflipped filter went unnoticed");
        assert_eq!(run.step, 1);
        assert!(
            run.diff.first[0].label.starts_with("deltas["),
            "{:?}",
            run.diff.first
        );
    }

    /// A filter-gradient sum that forgets the batch's first sample is wrong in `grads`.
    #[test]
    fn a_reduce_that_skips_a_sample_is_wrong_in_the_gradients() {
        let good = gpu_runtime::kernel("cnn-conv-filter-reduce").expect("catalogued");
        let src = good.wgsl();
        let from_zero = "for (var n = 0u; n < u.batch; n++)";
        assert!(src.contains(from_zero));
        let broken = good.with_source(src.replace(from_zero, "for (var n = 1u; n < u.batch; n++)"));
        let run = run_blocking(gpu(), good.id, &[&broken]).expect("runs");
        assert!(run.diff.wrong > 0);
        assert!(
            run.diff.first[0].label.starts_with("grads["),
            "{:?}",
            run.diff.first
        );
    }

    #[test]
    fn the_twin_side_lines_up_with_the_layout() {
        let check = CnnCheck::new("cnn-conv-input-grad", false).expect("a check");
        assert_eq!(check.checks.len(), CNN_STEPS);
        assert!(!check.done());
        for c in &check.checks {
            assert_eq!(c.expected.len(), check.layout.len() as usize);
            assert_eq!(c.bound.len(), c.expected.len());
            assert!(c.bound.iter().all(|b| b.is_finite() && *b >= 0.0));
            // The twin against itself is right; one value moved past its bound is named.
            let got: Vec<f32> = c.expected.iter().map(|&e| e as f32).collect();
            assert_eq!(compare(&check.layout, &got, c, 8).wrong, 0);
            let [a, g, ..] = check.layout.cnn_segments();
            let mut off = got.clone();
            off[a + g + 3] += 1.0;
            let d = compare(&check.layout, &off, c, 8);
            assert_eq!(d.wrong, 1);
            assert_eq!(d.first[0].label, "deltas[3]");
        }
        // The second step starts where the first left the twin.
        assert_ne!(check.checks[0].params, check.checks[1].params);
        assert!(check.parts().len() == 7 && CnnCheck::new("cnn-conv-input-grad", true).is_some());
    }
}
