//! A kernel run checked against the CPU reference: what the run widget, the ladder and the
//! race all show ("verified (max rel. error …)").

use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::verify::{self, Precision, Verdict};

use crate::context::{Gpu, GpuError};
use crate::plan::{RunControl, RunOptions, Timing};
use crate::spec::KernelSpec;
use crate::workload::{Job, Workload};

/// Above this many multiply-adds the reference is computed for a sample of elements only, so
/// the visitor's CPU never stalls the page for long (2²⁶ f64 MACs take well under a second).
pub const FULL_CHECK_MACS: u64 = 1 << 26;
/// Random elements checked when sampling (edges are always checked on top).
pub const SAMPLED_ELEMENTS: usize = 4096;

/// The outcome of a verified run.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedRun {
    pub verdict: Verdict,
    /// Output elements compared with the reference.
    pub checked: usize,
    /// Output elements in total.
    pub total: usize,
    pub timing: Timing,
    /// Floating-point operations of one run.
    pub flops: f64,
    /// For a kernel judged against the reference of its f16-rounded inputs (the Tensor Core
    /// stage, `Precision::F16Products`): its largest error relative to Σ|terms| against the
    /// problem as posed (the f32 inputs, unrounded), on the same elements: the figure to set
    /// beside the f32 stages' `verdict.max_rel_error`. `None` for the others, whose verdict
    /// already is against the problem as posed.
    pub posed_error: Option<f64>,
}

impl VerifiedRun {
    /// GFLOP/s of one kernel execution, by [`Timing::kernel_ms`].
    pub fn gflops(&self) -> f64 {
        self.flops / (self.timing.kernel_ms() * 1e6)
    }
}

/// Runs a matmul kernel on seeded data and verifies it.
pub async fn run_matmul_verified(
    gpu: &Gpu,
    kernel: &KernelSpec,
    size: MatmulSize,
    seed: u64,
    opts: &RunOptions,
) -> Result<VerifiedRun, GpuError> {
    run_matmul_verified_with(gpu, kernel, size, seed, opts, &RunControl::default()).await
}

/// [`run_matmul_verified`] with cancel and progress.
pub async fn run_matmul_verified_with(
    gpu: &Gpu,
    kernel: &KernelSpec,
    size: MatmulSize,
    seed: u64,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<VerifiedRun, GpuError> {
    Workload::Matmul(size)
        .check_limits(&gpu.buffer_limits())
        .map_err(GpuError::Size)?;
    let (a, b) = size.inputs(seed);
    let job = Job::Matmul { size, a: &a, b: &b };
    let out = gpu.run_with(kernel, &job, opts, ctl).await?;
    let indices = matmul::check_indices(size, FULL_CHECK_MACS, SAMPLED_ELEMENTS, seed);
    // The reference of what the kernel multiplied, and (where that differs) of the problem
    // as posed: both on the same elements.
    let judge = |a: &[f32], b: &[f32], precision| match &indices {
        None => verify::compare(&out.output, &matmul::reference(size, a, b), precision),
        Some(idx) => {
            let got: Vec<f32> = idx.iter().map(|&i| out.output[i]).collect();
            verify::compare(&got, &matmul::reference_at(size, a, b, idx), precision)
        }
    };
    let (ja, jb) = verify::judged_inputs(kernel.precision, &a, &b);
    let verdict = judge(&ja, &jb, kernel.precision);
    let posed_error = kernel
        .precision
        .rounds_inputs_to_f16()
        .then(|| judge(&a, &b, Precision::F16Inputs).max_rel_error);
    Ok(VerifiedRun {
        verdict,
        checked: indices.as_ref().map_or(size.c_len(), Vec::len),
        total: size.c_len(),
        timing: out.timing,
        flops: size.flops(),
        posed_error,
    })
}

/// Any family's run, checked by its family against the CPU reference (every element): what
/// a new family uses until it needs sampling like matmul's.
pub async fn run_verified(
    gpu: &Gpu,
    kernel: &KernelSpec,
    job: &Job<'_>,
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<(crate::RunOutput, Verdict), GpuError> {
    let out = gpu.run_with(kernel, job, opts, ctl).await?;
    let verdict = kernel.verify(job, &out.output);
    Ok((out, verdict))
}
