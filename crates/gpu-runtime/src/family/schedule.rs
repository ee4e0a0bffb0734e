//! The schedule probe: records when workgroups start and end (the visualiser's real-GPU
//! mode). Bindings: 0 = atomic counter, 1 = events (2 u32 per workgroup, read back as raw
//! words), 2 = uniform {gx, gy, work, 0}.

use std::borrow::Cow;

use cpu_kernels::verify::{Precision, Verdict};

use super::{Layout, SingleRun};
use crate::context::GpuError;
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::{ScheduleSize, Workload};

const SCHEDULE_PROBE: &str = include_str!("../../../../shaders/schedule_probe.wgsl");

/// One workgroup per probe cell.
fn grid_schedule(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Schedule(s) => [s.gx, s.gy, 1],
        _ => [0, 0, 0],
    }
}

pub static KERNELS: &[KernelSpec] = &[KernelSpec {
    id: "schedule-probe",
    source_path: "shaders/schedule_probe.wgsl",
    source: KernelSource::Built(|| SCHEDULE_PROBE.to_string()),
    entry_point: "main",
    family: Family::Schedule,
    constants: &[],
    workgroup_size: [64, 1, 1],
    grid: grid_schedule,
    storage: Storage::F32,
    required_features: wgpu::Features::empty(),
    precision: Precision::F32,
    title_key: "kernel.schedule-probe.title",
    summary_key: "kernel.schedule-probe.summary",
}];

/// The one-step plan: the counter starts at zero, the events buffer is read back.
pub(crate) fn plan(kernel: &KernelSpec, s: ScheduleSize) -> Result<SingleRun<'_>, GpuError> {
    let layout = Layout {
        inputs: vec![Cow::Owned(vec![0u8; 4])],
        uniform: vec![s.gx, s.gy, s.work, 0],
        output_len: 2 * s.gx as usize * s.gy as usize,
        padded_rows: None,
    };
    let groups = kernel.workgroups(&Workload::Schedule(s));
    let cost = s.gx as f64 * s.gy as f64 * s.work.max(1) as f64;
    layout.into_plan(kernel, groups, cost, None)
}

/// A schedule probe is right when its tickets (raw words) are exactly 0 … 2·groups − 1, once
/// each — every workgroup started and ended once — and each ends after it starts.
pub(crate) fn verify_tickets(got: &[f32]) -> Verdict {
    let words: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    let mut seen = vec![false; words.len()];
    let mut first_failure = None;
    let mut wrong = 0;
    for (i, &w) in words.iter().enumerate() {
        let fresh = seen.get(w as usize).is_some_and(|s| !s);
        let ordered = i % 2 == 0 || words[i - 1] < w;
        if fresh && ordered {
            seen[w as usize] = true;
        } else {
            wrong += 1;
            first_failure.get_or_insert((i, got[i], w as f64));
        }
    }
    Verdict {
        ok: first_failure.is_none() && seen.iter().all(|&s| s),
        max_rel_error: 0.0,
        rel_bound: 0.0,
        first_failure,
        wrong,
    }
}
