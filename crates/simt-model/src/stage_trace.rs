//! A trace of any stage the visualiser shows: a matmul stage ([`crate::trace`]) or a conv stage
//! ([`crate::conv_trace`]), behind one set of methods, so the view draws either.

use crate::conv_trace::ConvTrace;
use crate::trace::{Array, LaneAccess, MatmulTrace, Step, StepCost};
use crate::Launch;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageTrace {
    Matmul(MatmulTrace),
    Conv(ConvTrace),
}

impl StageTrace {
    pub fn launch(&self) -> Launch {
        match self {
            StageTrace::Matmul(t) => t.launch(),
            StageTrace::Conv(t) => t.launch(),
        }
    }

    pub fn steps(&self) -> Vec<Step> {
        match self {
            StageTrace::Matmul(t) => t.steps(),
            StageTrace::Conv(t) => t.steps(),
        }
    }

    pub fn lanes(&self, step: Step, workgroup: [u32; 3], subgroup: u32) -> Vec<LaneAccess> {
        match self {
            StageTrace::Matmul(t) => t.lanes(step, workgroup, subgroup),
            StageTrace::Conv(t) => t.lanes(step, workgroup, subgroup),
        }
    }

    pub fn subgroup_cost(&self, step: Step, workgroup: [u32; 3], subgroup: u32) -> StepCost {
        match self {
            StageTrace::Matmul(t) => t.subgroup_cost(step, workgroup, subgroup),
            StageTrace::Conv(t) => t.subgroup_cost(step, workgroup, subgroup),
        }
    }

    pub fn step_cost(&self, step: Step) -> StepCost {
        match self {
            StageTrace::Matmul(t) => t.step_cost(step),
            StageTrace::Conv(t) => t.step_cost(step),
        }
    }

    pub fn running_totals(&self) -> Vec<StepCost> {
        match self {
            StageTrace::Matmul(t) => t.running_totals(),
            StageTrace::Conv(t) => t.running_totals(),
        }
    }

    pub fn tile_contents(&self, step: Step, workgroup: [u32; 3]) -> Vec<(Array, Vec<Option<u32>>)> {
        match self {
            StageTrace::Matmul(t) => t.tile_contents(step, workgroup),
            StageTrace::Conv(t) => t.tile_contents(step, workgroup),
        }
    }
}
