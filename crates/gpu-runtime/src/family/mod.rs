//! The kernel families, one module each, and their registry.
//!
//! A family module owns its kernels (the catalogue entries, in ladder order), their grid, how
//! a job becomes buffers and a uniform (its plan), its CPU reference and its check. Adding a
//! family: a module here, one line in [`REGISTRY`], a [`crate::Family`] variant and a
//! [`crate::Job`] variant (its parameters, any size).

use std::borrow::Cow;

use cpu_kernels::verify::Verdict;

use crate::context::GpuError;
use crate::plan::{Binding, Dispatch, Init, Plan, PlanBuffer, Split, Step};
use crate::spec::{Family, KernelSpec};
use crate::workload::Job;

pub mod attention;
pub mod cnn;
pub mod conv;
pub mod decode;
pub mod gpt;
pub mod matmul;
pub mod measure;
pub mod mlp;
pub mod numeric;
pub mod optim;
pub mod schedule;

/// Every family's kernels; the catalogue's lookups walk this list.
pub static REGISTRY: &[(Family, &[KernelSpec])] = &[
    (Family::Matmul, matmul::KERNELS),
    (Family::Schedule, schedule::KERNELS),
    (Family::Mlp, mlp::KERNELS),
    // The one optimiser family (the MLP's editor group offers it).
    (Family::Mlp, optim::KERNELS),
    (Family::Measure, measure::KERNELS),
    (Family::Conv, conv::KERNELS),
    (Family::Numeric, numeric::KERNELS),
    (Family::Cnn, cnn::KERNELS),
    (Family::Attention, attention::KERNELS),
    (Family::Gpt, gpt::KERNELS),
    // The GPT's KV-cache decoding (the engine's decoder).
    (Family::Gpt, decode::KERNELS),
];

/// The buffers and uniform of a one-kernel job: inputs at bindings 0, 1, …, the output next,
/// the uniform last.
pub(crate) struct Layout<'a> {
    pub inputs: Vec<Cow<'a, [u8]>>,
    /// The uniform block's words (any number).
    pub uniform: Vec<u32>,
    /// f32 elements in the output buffer.
    pub output_len: usize,
    /// Rows of the output and the padded and real row lengths, when they differ.
    pub padded_rows: Option<(usize, usize, usize)>,
}

/// Names of a one-kernel plan's buffers.
const INPUTS: [&str; 4] = ["in0", "in1", "in2", "in3"];
pub(crate) const OUTPUT: &str = "out";

/// A one-kernel job as a one-step plan, and how to unpack its output.
pub(crate) struct SingleRun<'a> {
    pub plan: Plan<'a>,
    pub padded_rows: Option<(usize, usize, usize)>,
}

impl<'a> Layout<'a> {
    /// The one-step plan of this layout: `workgroups` for the whole job, `cost` its work,
    /// `split` how it may be cut into row ranges.
    pub(crate) fn into_plan(
        self,
        kernel: &'a KernelSpec,
        workgroups: [u32; 3],
        cost: f64,
        split: Option<Split<'a>>,
    ) -> Result<SingleRun<'a>, GpuError> {
        if self.inputs.len() > INPUTS.len() {
            return Err(GpuError::WrongJob);
        }
        let mut bindings: Vec<Binding> = INPUTS[..self.inputs.len()]
            .iter()
            .map(|n| Binding::whole(n))
            .collect();
        bindings.push(Binding::whole(OUTPUT));
        bindings.push(Binding::Uniform);
        let mut buffers: Vec<PlanBuffer> = self
            .inputs
            .into_iter()
            .zip(INPUTS)
            .map(|(bytes, name)| PlanBuffer {
                name,
                init: Init::Bytes(bytes),
                read_back: false,
            })
            .collect();
        buffers.push(PlanBuffer {
            name: OUTPUT,
            init: Init::Zeroed(self.output_len as u64 * 4),
            read_back: true,
        });
        Ok(SingleRun {
            plan: Plan {
                buffers,
                steps: vec![Step {
                    kernel,
                    dispatch: Dispatch {
                        bindings,
                        uniform: self.uniform,
                        workgroups,
                    },
                    cost,
                    split,
                }],
            },
            padded_rows: self.padded_rows,
        })
    }
}

/// The one-step plan running `kernel` on `job`.
pub(crate) fn single<'a>(kernel: &'a KernelSpec, job: &Job<'a>) -> Result<SingleRun<'a>, GpuError> {
    match *job {
        Job::Matmul { size, a, b } if kernel.family == Family::Matmul => {
            matmul::plan(kernel, size, a, b)
        }
        Job::Schedule(size) if kernel.family == Family::Schedule => schedule::plan(kernel, size),
        Job::Measure { size, input } if kernel.family == Family::Measure => {
            measure::plan(kernel, size, input)
        }
        _ => Err(GpuError::WrongJob),
    }
}

/// What running a one-kernel job uploads and dispatches, for tools that run the kernel
/// through another WebGPU implementation (`bench dump-kernels` for Dawn): taken from the same
/// one-step plan [`crate::Gpu::run`] runs, so padding and grids have one source.
pub struct JobBuffers {
    /// Input buffers' bytes, bindings 0, 1, …; the output comes next, the uniform last.
    pub inputs: Vec<Vec<u8>>,
    /// The uniform block's words.
    pub uniform: Vec<u32>,
    /// Workgroups of the whole (unsplit) dispatch.
    pub workgroups: [u32; 3],
    /// f32 elements of the output buffer, padding included.
    pub output_len: usize,
    /// Rows of the output and the padded and real row lengths, when they differ.
    pub padded_rows: Option<(usize, usize, usize)>,
}

/// The buffers and dispatch of `kernel` on `job` (see [`JobBuffers`]).
pub fn job_buffers(kernel: &KernelSpec, job: &Job<'_>) -> Result<JobBuffers, GpuError> {
    let run = single(kernel, job)?;
    let step = run.plan.steps.first().ok_or(GpuError::WrongJob)?;
    let mut inputs = Vec::new();
    let mut output_len = 0;
    for b in &run.plan.buffers {
        match &b.init {
            Init::Bytes(bytes) => inputs.push(bytes.to_vec()),
            Init::Zeroed(len) if b.name == OUTPUT => output_len = (*len / 4) as usize,
            Init::Zeroed(_) => return Err(GpuError::WrongJob),
        }
    }
    Ok(JobBuffers {
        inputs,
        uniform: step.dispatch.uniform.clone(),
        workgroups: step.dispatch.workgroups,
        output_len,
        padded_rows: run.padded_rows,
    })
}

impl KernelSpec {
    /// Whether a job fits this kernel's family.
    pub fn accepts(&self, job: &Job<'_>) -> bool {
        matches!(
            (self.family, job),
            (Family::Matmul, Job::Matmul { .. })
                | (Family::Schedule, Job::Schedule(_))
                | (Family::Measure, Job::Measure { .. })
        )
    }

    /// Checks a GPU result against the family's CPU reference for this job.
    pub fn verify(&self, job: &Job<'_>, got: &[f32]) -> Verdict {
        match *job {
            Job::Matmul { size, a, b } => matmul::verify(self, size, a, b, got),
            Job::Schedule(_) => schedule::verify_tickets(got),
            Job::Measure { size, input } => measure::verify(self.id, size, input, got),
        }
    }
}

/// Drops padded columns from a result read back from the GPU.
pub(crate) fn unpad(raw: Vec<f32>, padded_rows: Option<(usize, usize, usize)>) -> Vec<f32> {
    match padded_rows {
        None => raw,
        Some((rows, stride, cols)) => (0..rows)
            .flat_map(|r| raw[r * stride..r * stride + cols].iter().copied())
            .collect(),
    }
}
