//! A trace of any stage the visualiser shows: a matmul stage ([`crate::trace`]) or a conv stage
//! ([`crate::conv_trace`]), behind one set of methods, so the view draws either; the costs come from [`Traced`].

use crate::conv_trace::ConvTrace;
use crate::trace::{Array, LaneAccess, MatmulTrace, Step, Traced};
use crate::{InvocationIds, Launch};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageTrace {
    Matmul(MatmulTrace),
    Conv(ConvTrace),
}

impl Traced for StageTrace {
    fn launch(&self) -> Launch {
        match self {
            StageTrace::Matmul(t) => t.launch(),
            StageTrace::Conv(t) => t.launch(),
        }
    }

    fn steps(&self) -> Vec<Step> {
        match self {
            StageTrace::Matmul(t) => t.steps(),
            StageTrace::Conv(t) => t.steps(),
        }
    }

    fn access(&self, step: Step, ids: InvocationIds) -> LaneAccess {
        match self {
            StageTrace::Matmul(t) => t.access(step, ids),
            StageTrace::Conv(t) => t.access(step, ids),
        }
    }
}

impl StageTrace {
    pub fn tile_contents(&self, step: Step, workgroup: [u32; 3]) -> Vec<(Array, Vec<Option<u32>>)> {
        match self {
            StageTrace::Matmul(t) => t.tile_contents(step, workgroup),
            StageTrace::Conv(t) => t.tile_contents(step, workgroup),
        }
    }
}
