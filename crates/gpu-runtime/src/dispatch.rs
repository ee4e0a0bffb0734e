//! Running one catalogued kernel on a job: the job becomes a one-step plan (its family
//! module builds it) and goes through [`Gpu::run_plan`], the one dispatch path.

use crate::context::{Gpu, GpuError};
use crate::family;
pub use crate::plan::RunOutput;
use crate::plan::{LoopFlag, RunControl, RunOptions, LOOP_FLAG};
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
        self.run_single(kernel, job, opts, ctl, None)
            .await
            .map(|(out, _)| out)
    }

    /// [`Gpu::run_with`] for a learner's kernel rewritten with a loop budget (the editor's
    /// `budget_loops`): the [`LOOP_FLAG`] buffer is bound in every dispatch
    /// ([`crate::Plan::attach_loop_flag`]) and read back with the output (the words are
    /// returned beside it).
    pub async fn run_with_loop_flag(
        &self,
        kernel: &KernelSpec,
        job: &Job<'_>,
        opts: &RunOptions,
        ctl: &RunControl,
        flag: LoopFlag,
    ) -> Result<(RunOutput, Vec<u32>), GpuError> {
        self.run_single(kernel, job, opts, ctl, Some(flag)).await
    }

    async fn run_single(
        &self,
        kernel: &KernelSpec,
        job: &Job<'_>,
        opts: &RunOptions,
        ctl: &RunControl,
        flag: Option<LoopFlag>,
    ) -> Result<(RunOutput, Vec<u32>), GpuError> {
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost before the run".into()));
        }
        if !kernel.accepts(job) {
            return Err(GpuError::WrongJob);
        }
        job.workload()
            .check_limits(&self.buffer_limits())
            .map_err(GpuError::Size)?;
        let mut run = family::single(kernel, job)?;
        if let Some(flag) = flag {
            run.plan.attach_loop_flag(None, flag)?;
        }
        let out = self.run_plan(&run.plan, opts, ctl).await?;
        let bytes = out
            .bytes(family::OUTPUT)
            .ok_or_else(|| GpuError::Readback("no output was read back".into()))?;
        let flag = out.words(LOOP_FLAG);
        Ok((
            RunOutput {
                output: family::unpad(bytemuck::pod_collect_to_vec(bytes), run.padded_rows),
                timing: out.timing,
            },
            flag,
        ))
    }
}
