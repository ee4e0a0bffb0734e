//! Recording how the GPU scheduled a launch (the visualiser's real-GPU mode).

use crate::context::{Gpu, GpuError};
use crate::plan::RunOptions;
use crate::workload::{Job, ScheduleSize};

/// Start and end tickets of each workgroup, indexed by linear workgroup id (y·gx + x).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRecord {
    pub size: ScheduleSize,
    pub events: Vec<(u32, u32)>,
}

/// Runs the schedule probe once and checks that every workgroup ran exactly once.
pub async fn record_schedule(gpu: &Gpu, size: ScheduleSize) -> Result<ScheduleRecord, GpuError> {
    let kernel = crate::kernel("schedule-probe")
        .ok_or_else(|| GpuError::Shader("schedule-probe is not catalogued".into()))?;
    let job = Job::Schedule(size);
    let (out, verdict) = crate::run_verified(
        gpu,
        kernel,
        &job,
        &RunOptions::default(),
        &Default::default(),
    )
    .await?;
    if !verdict.ok {
        return Err(GpuError::Dispatch(format!(
            "the schedule probe's tickets are inconsistent: {:?}",
            verdict.first_failure
        )));
    }
    let events = out
        .output
        .chunks_exact(2)
        .map(|p| (p[0].to_bits(), p[1].to_bits()))
        .collect();
    Ok(ScheduleRecord { size, events })
}
