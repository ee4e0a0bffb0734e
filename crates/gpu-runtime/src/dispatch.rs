//! Running one catalogued kernel on a job: the job becomes a one-step plan (its family
//! module builds it) and goes through [`Gpu::run_plan`], the one dispatch path.

use crate::context::{Gpu, GpuError};
use crate::family;
pub use crate::plan::RunOutput;
use crate::plan::{RunControl, RunOptions};
use crate::spec::KernelSpec;
use crate::workload::Job;

impl Gpu {
    /// Runs `kernel` on `job`, without cancel or progress.
    pub async fn run(
        &self,
        kernel: &KernelSpec,
        job: &Job<'_>,
        opts: &RunOptions,
    ) -> Result<RunOutput, GpuError> {
        self.run_with(kernel, job, opts, &RunControl::default())
            .await
    }

    /// Runs `kernel` on `job` as a one-step plan, with cancel and progress.
    pub async fn run_with(
        &self,
        kernel: &KernelSpec,
        job: &Job<'_>,
        opts: &RunOptions,
        ctl: &RunControl,
    ) -> Result<RunOutput, GpuError> {
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost before the run".into()));
        }
        if !kernel.accepts(job) {
            return Err(GpuError::WrongJob);
        }
        job.workload()
            .check_limits(&self.buffer_limits())
            .map_err(GpuError::Size)?;
        let run = family::single(kernel, job)?;
        let out = self.run_plan(&run.plan, opts, ctl).await?;
        let bytes = out
            .bytes(family::OUTPUT)
            .ok_or_else(|| GpuError::Readback("no output was read back".into()))?;
        Ok(RunOutput {
            output: family::unpad(bytemuck::pod_collect_to_vec(bytes), run.padded_rows),
            timing: out.timing,
        })
    }
}
