//! The `stack` lesson's launch translator: a 2-D problem and a CUDA thread-block shape become a CUDA
//! grid and the equivalent WebGPU dispatch, checked against both APIs' limits.
//!
//! Limits used: CUDA (compute capability 5.0 and later, CUDA C++ Programming Guide): at most
//! 1,024 threads per block and 1,024 in x or y; grid x up to 2³¹ − 1, grid y up to 65,535.
//! WebGPU (the specification's default limits, which every adapter must offer):
//! maxComputeInvocationsPerWorkgroup 256, maxComputeWorkgroupSizeX/Y 256,
//! maxComputeWorkgroupsPerDimension 65,535.

pub const CUDA_MAX_THREADS_PER_BLOCK: u64 = 1024;
pub const CUDA_MAX_GRID_X: u64 = (1 << 31) - 1;
pub const CUDA_MAX_GRID_Y: u64 = 65_535;
pub const WEBGPU_MAX_INVOCATIONS: u64 = 256;
pub const WEBGPU_MAX_SIZE_XY: u64 = 256;
pub const WEBGPU_MAX_WORKGROUPS_PER_DIM: u64 = 65_535;
pub const WARP: u64 = 32;
/// Largest accepted problem side.
pub const MAX_SIDE: u64 = 1 << 24;

/// A problem of `width × height` elements, one thread each, in blocks of `block_x × block_y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchInput {
    pub width: u64,
    pub height: u64,
    pub block_x: u64,
    pub block_y: u64,
}

/// Something one of the two APIs would reject, or a waste worth pointing out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    /// More than 1,024 threads in a block (CUDA rejects the launch).
    CudaBlock,
    /// Grid y beyond 65,535 (CUDA rejects it).
    CudaGridY,
    /// More than 256 invocations per workgroup (WebGPU's default limit).
    WebGpuInvocations,
    /// Workgroup x or y above 256.
    WebGpuSize,
    /// More than 65,535 workgroups in x or y.
    WebGpuWorkgroups,
    /// The block is not a multiple of 32 threads: the last warp runs partly empty.
    PartialWarp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid_x: u64,
    pub grid_y: u64,
    pub threads_per_block: u64,
    pub warps_per_block: u64,
    pub launched: u64,
    /// Threads launched beyond the problem: they must return early (the bounds check).
    pub idle: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchError {
    /// A side or block dimension is 0 or too large.
    OutOfRange(&'static str),
}

pub fn translate(i: &LaunchInput) -> Result<(Launch, Vec<Issue>), LaunchError> {
    for (name, v, max) in [
        ("width", i.width, MAX_SIDE),
        ("height", i.height, MAX_SIDE),
        ("block_x", i.block_x, 4096),
        ("block_y", i.block_y, 4096),
    ] {
        if v == 0 || v > max {
            return Err(LaunchError::OutOfRange(name));
        }
    }
    let grid_x = i.width.div_ceil(i.block_x);
    let grid_y = i.height.div_ceil(i.block_y);
    let threads_per_block = i.block_x * i.block_y;
    let launched = grid_x * grid_y * threads_per_block;
    let l = Launch {
        grid_x,
        grid_y,
        threads_per_block,
        warps_per_block: threads_per_block.div_ceil(WARP),
        launched,
        idle: launched - i.width * i.height,
    };
    let mut issues = Vec::new();
    if threads_per_block > CUDA_MAX_THREADS_PER_BLOCK {
        issues.push(Issue::CudaBlock);
    }
    if grid_y > CUDA_MAX_GRID_Y || grid_x > CUDA_MAX_GRID_X {
        issues.push(Issue::CudaGridY);
    }
    if threads_per_block > WEBGPU_MAX_INVOCATIONS {
        issues.push(Issue::WebGpuInvocations);
    }
    if i.block_x > WEBGPU_MAX_SIZE_XY || i.block_y > WEBGPU_MAX_SIZE_XY {
        issues.push(Issue::WebGpuSize);
    }
    if grid_x > WEBGPU_MAX_WORKGROUPS_PER_DIM || grid_y > WEBGPU_MAX_WORKGROUPS_PER_DIM {
        issues.push(Issue::WebGpuWorkgroups);
    }
    if !threads_per_block.is_multiple_of(WARP) {
        issues.push(Issue::PartialWarp);
    }
    Ok((l, issues))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(w: u64, h: u64, bx: u64, by: u64) -> Result<(Launch, Vec<Issue>), LaunchError> {
        translate(&LaunchInput {
            width: w,
            height: h,
            block_x: bx,
            block_y: by,
        })
    }

    #[test]
    fn a_1000_by_1000_image_in_16_by_16_blocks() {
        // ceil(1000/16) = 63 → 63 × 63 blocks of 256 threads = 1,016,064 launched,
        // 16,064 beyond the 1,000,000 elements.
        let (l, issues) = t(1000, 1000, 16, 16).unwrap();
        assert_eq!((l.grid_x, l.grid_y), (63, 63));
        assert_eq!(l.threads_per_block, 256);
        assert_eq!(l.warps_per_block, 8);
        assert_eq!(l.launched, 1_016_064);
        assert_eq!(l.idle, 16_064);
        assert!(issues.is_empty());
    }

    #[test]
    fn limits_differ_between_the_apis() {
        // 32 × 32 = 1,024: fine for CUDA, beyond WebGPU's default 256 invocations.
        let (_, issues) = t(4096, 4096, 32, 32).unwrap();
        assert_eq!(issues, vec![Issue::WebGpuInvocations]);
        // 64 × 32 = 2,048: too big for both.
        let (_, issues) = t(4096, 4096, 64, 32).unwrap();
        assert!(issues.contains(&Issue::CudaBlock) && issues.contains(&Issue::WebGpuInvocations));
        // 512 × 1: WebGPU's x limit is 256.
        let (_, issues) = t(4096, 1, 512, 1).unwrap();
        assert!(issues.contains(&Issue::WebGpuSize));
        // 10 × 10 = 100 threads: 4 warps, the last one partly empty.
        let (l, issues) = t(100, 100, 10, 10).unwrap();
        assert_eq!(l.warps_per_block, 4);
        assert_eq!(issues, vec![Issue::PartialWarp]);
        // 16,777,216 × 1 in blocks of 64 → 262,144 workgroups in x: too many for WebGPU.
        let (l, issues) = t(MAX_SIDE, 1, 64, 1).unwrap();
        assert_eq!(l.grid_x, 262_144);
        assert_eq!(issues, vec![Issue::WebGpuWorkgroups]);
        // Tall: 1 × 16,777,216 in blocks of 1 × 128 → grid y 131,072, beyond both.
        let (_, issues) = t(1, MAX_SIDE, 1, 128).unwrap();
        assert!(issues.contains(&Issue::CudaGridY) && issues.contains(&Issue::WebGpuWorkgroups));
    }

    #[test]
    fn bad_input() {
        assert_eq!(t(0, 1, 1, 1), Err(LaunchError::OutOfRange("width")));
        assert_eq!(
            t(1, MAX_SIDE + 1, 1, 1),
            Err(LaunchError::OutOfRange("height"))
        );
        assert_eq!(t(1, 1, 0, 1), Err(LaunchError::OutOfRange("block_x")));
        assert_eq!(t(1, 1, 1, 5000), Err(LaunchError::OutOfRange("block_y")));
    }
}
