//! A pure model of how a SIMT machine executes a compute kernel — what the visualiser draws.
//!
//! No GPU, no DOM: everything here is plain arithmetic, unit-tested against hand-computed
//! expectations.
//!
//! - [`Launch`]: grid → workgroups (CUDA: thread blocks) → subgroups (warps) → invocations
//!   (threads), and the ids each invocation sees under both naming schemes.
//! - [`memory`]: what one subgroup-wide access costs — 32-byte sectors and 128-byte lines of
//!   global memory (coalescing), and shared-memory bank conflicts.

pub mod conv_trace;
pub mod memory;
pub mod schedule;
pub mod stage_trace;
pub mod trace;

/// A dispatch: how many workgroups, how big each is, and how wide a subgroup is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Workgroups per dimension (CUDA: gridDim).
    pub grid: [u32; 3],
    /// Invocations per workgroup per dimension (CUDA: blockDim).
    pub workgroup: [u32; 3],
    /// Invocations per subgroup (CUDA: warpSize, 32 on NVIDIA; 64 on many AMD GPUs).
    pub subgroup_width: u32,
}

/// Every id one invocation can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvocationIds {
    /// `global_invocation_id` (CUDA: blockIdx * blockDim + threadIdx).
    pub global: [u32; 3],
    /// `local_invocation_id` (CUDA: threadIdx).
    pub local: [u32; 3],
    /// `workgroup_id` (CUDA: blockIdx).
    pub workgroup: [u32; 3],
    /// `local_invocation_index`: the linear index inside the workgroup, x fastest.
    pub local_index: u32,
    /// Which subgroup of the workgroup (CUDA: warp id = threadIdx linear / 32).
    pub subgroup: u32,
    /// `subgroup_invocation_id` (CUDA: lane id).
    pub lane: u32,
}

impl Launch {
    pub fn invocations_per_workgroup(&self) -> u32 {
        self.workgroup.iter().product()
    }

    pub fn workgroup_count(&self) -> u32 {
        self.grid.iter().product()
    }

    /// Subgroups per workgroup; the last one is partly empty when the workgroup size is not a
    /// multiple of the subgroup width (those lanes idle: wasted hardware).
    pub fn subgroups_per_workgroup(&self) -> u32 {
        self.invocations_per_workgroup()
            .div_ceil(self.subgroup_width.max(1))
    }

    /// The ids of the invocation at `local_index` inside workgroup `workgroup`.
    ///
    /// Linearisation is x fastest, then y, then z, for both the workgroup's invocations and
    /// the subgroup split — the order WebGPU, Vulkan and CUDA use.
    pub fn ids(&self, workgroup: [u32; 3], local_index: u32) -> InvocationIds {
        let [wx, wy, _] = self.workgroup;
        let local = [
            local_index % wx,
            (local_index / wx) % wy,
            local_index / (wx * wy),
        ];
        let global = [0, 1, 2].map(|d| workgroup[d] * self.workgroup[d] + local[d]);
        let width = self.subgroup_width.max(1);
        InvocationIds {
            global,
            local,
            workgroup,
            local_index,
            subgroup: local_index / width,
            lane: local_index % width,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_x_fastest_order() {
        let l = Launch {
            grid: [4, 4, 1],
            workgroup: [16, 16, 1],
            subgroup_width: 32,
        };
        assert_eq!(l.invocations_per_workgroup(), 256);
        assert_eq!(l.subgroups_per_workgroup(), 8);
        let id = l.ids([2, 1, 0], 37);
        assert_eq!(id.local, [5, 2, 0]);
        assert_eq!(id.global, [37, 18, 0]);
        assert_eq!((id.subgroup, id.lane), (1, 5));
    }

    #[test]
    fn partial_subgroups_are_counted() {
        let l = Launch {
            grid: [1, 1, 1],
            workgroup: [10, 10, 1],
            subgroup_width: 32,
        };
        assert_eq!(l.subgroups_per_workgroup(), 4); // 100 = 3 full + one with 4 lanes
        assert_eq!(l.ids([0, 0, 0], 99).lane, 3);
    }
}
