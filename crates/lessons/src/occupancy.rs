//! Occupancy: how many warps an NVIDIA SM keeps resident for a given launch, and which
//! resource stops it from holding more (the `occupancy` lesson).
//!
//! Per-SM limits are those of the compute-capability tables in NVIDIA's CUDA C++ Programming
//! Guide ("Technical Specifications per Compute Capability"); the allocation rules (registers
//! per warp in units of 256, shared memory in units of 128 bytes plus 1 KB reserved per block
//! on compute capability 8.0 and later) follow NVIDIA's CUDA Occupancy Calculator.

/// Per-SM resources of one compute capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmLimits {
    /// Example product, e.g. "A100".
    pub gpu: &'static str,
    /// Compute capability, e.g. "8.0".
    pub cc: &'static str,
    pub warp_size: u32,
    pub max_threads_per_block: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub registers_per_sm: u32,
    pub max_registers_per_thread: u32,
    /// Shared memory an SM can give to blocks, bytes.
    pub shared_per_sm: u32,
    /// The most one block can ask for (opt-in), bytes.
    pub max_shared_per_block: u32,
    /// Reserved by the system for each block, bytes.
    pub reserved_shared_per_block: u32,
}

const KIB: u32 = 1024;

/// A100 (8.0), RTX 4090 (8.9), H100 (9.0).
pub const GPUS: [SmLimits; 3] = [
    SmLimits {
        gpu: "A100",
        cc: "8.0",
        warp_size: 32,
        max_threads_per_block: 1024,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        registers_per_sm: 65_536,
        max_registers_per_thread: 255,
        shared_per_sm: 164 * KIB,
        max_shared_per_block: 163 * KIB,
        reserved_shared_per_block: KIB,
    },
    SmLimits {
        gpu: "RTX 4090",
        cc: "8.9",
        warp_size: 32,
        max_threads_per_block: 1024,
        max_warps_per_sm: 48,
        max_blocks_per_sm: 24,
        registers_per_sm: 65_536,
        max_registers_per_thread: 255,
        shared_per_sm: 100 * KIB,
        max_shared_per_block: 99 * KIB,
        reserved_shared_per_block: KIB,
    },
    SmLimits {
        gpu: "H100",
        cc: "9.0",
        warp_size: 32,
        max_threads_per_block: 1024,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        registers_per_sm: 65_536,
        max_registers_per_thread: 255,
        shared_per_sm: 228 * KIB,
        max_shared_per_block: 227 * KIB,
        reserved_shared_per_block: KIB,
    },
];

/// What a launch asks of each block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub threads_per_block: u32,
    pub registers_per_thread: u32,
    pub shared_per_block: u32,
}

/// The resource that caps the number of resident blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// Resident warps (threads) per SM.
    Warps,
    /// Resident blocks per SM.
    Blocks,
    /// The register file.
    Registers,
    /// Shared memory.
    SharedMemory,
}

/// Why a launch is impossible on this GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchError {
    Threads { max: u32 },
    Registers { max: u32 },
    Shared { max: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Occupancy {
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    /// Resident warps / maximum warps, 0…1.
    pub fraction: f64,
    pub limiter: Limiter,
    /// Blocks each resource alone would allow (warps, blocks, registers, shared memory).
    pub by_limit: [(Limiter, u32); 4],
}

fn round_up(x: u32, unit: u32) -> u32 {
    x.div_ceil(unit) * unit
}

/// Resident blocks and warps of `launch` on one SM of `gpu`.
pub fn occupancy(gpu: &SmLimits, launch: &Launch) -> Result<Occupancy, LaunchError> {
    if launch.threads_per_block == 0 || launch.threads_per_block > gpu.max_threads_per_block {
        return Err(LaunchError::Threads {
            max: gpu.max_threads_per_block,
        });
    }
    if launch.registers_per_thread == 0
        || launch.registers_per_thread > gpu.max_registers_per_thread
    {
        return Err(LaunchError::Registers {
            max: gpu.max_registers_per_thread,
        });
    }
    if launch.shared_per_block > gpu.max_shared_per_block {
        return Err(LaunchError::Shared {
            max: gpu.max_shared_per_block,
        });
    }
    let warps_per_block = launch.threads_per_block.div_ceil(gpu.warp_size);
    let by_warps = gpu.max_warps_per_sm / warps_per_block;
    let regs_per_warp = round_up(launch.registers_per_thread * gpu.warp_size, 256);
    let by_registers = (gpu.registers_per_sm / regs_per_warp) / warps_per_block;
    let shared = round_up(launch.shared_per_block + gpu.reserved_shared_per_block, 128);
    let by_shared = gpu.shared_per_sm / shared;
    let by_limit = [
        (Limiter::Warps, by_warps),
        (Limiter::Blocks, gpu.max_blocks_per_sm),
        (Limiter::Registers, by_registers),
        (Limiter::SharedMemory, by_shared),
    ];
    // The first of equal minima is named: warps before blocks before registers before shared.
    let (limiter, blocks) =
        by_limit
            .iter()
            .copied()
            .fold((Limiter::Warps, u32::MAX), |best, (l, b)| {
                if b < best.1 {
                    (l, b)
                } else {
                    best
                }
            });
    let warps = blocks * warps_per_block;
    Ok(Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm: warps,
        fraction: warps as f64 / gpu.max_warps_per_sm as f64,
        limiter,
        by_limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(t: u32, r: u32, s: u32) -> Launch {
        Launch {
            threads_per_block: t,
            registers_per_thread: r,
            shared_per_block: s,
        }
    }

    #[test]
    fn a100_hand_computed() {
        let a100 = &GPUS[0];
        // 256 threads = 8 warps; 32 regs → 1,024 per warp → 64 warps → 8 blocks; 64/8 = 8.
        let o = occupancy(a100, &launch(256, 32, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (8, 64));
        assert_eq!(o.fraction, 1.0);
        assert_eq!(o.limiter, Limiter::Warps);
        // 64 regs → 2,048 per warp → 32 warps → 4 blocks → 50 %.
        let o = occupancy(a100, &launch(256, 64, 0)).unwrap();
        assert_eq!(
            (o.blocks_per_sm, o.fraction, o.limiter),
            (4, 0.5, Limiter::Registers)
        );
        // 48 KiB + 1 KiB reserved = 50,176 B; 167,936 / 50,176 = 3 blocks of 4 warps = 18.75 %.
        let o = occupancy(a100, &launch(128, 32, 48 * 1024)).unwrap();
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (3, 12));
        assert_eq!(o.fraction, 0.1875);
        assert_eq!(o.limiter, Limiter::SharedMemory);
        // 32-thread blocks: 64/1 = 64 warps but only 32 blocks → 50 %.
        let o = occupancy(a100, &launch(32, 16, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (32, Limiter::Blocks));
        // 33 threads still take two warps: 32 blocks × 2 warps = 64 warps.
        let o = occupancy(a100, &launch(33, 16, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (32, 64));
        // 255 regs → 8,160 → rounded to 8,192 per warp → 8 warps → one 8-warp block.
        let o = occupancy(a100, &launch(256, 255, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.fraction), (1, 0.125));
    }

    #[test]
    fn rtx4090_and_h100_differ() {
        // 4090: 48 warps per SM. 256 threads, 32 regs: 48/8 = 6 blocks, 100 %.
        let o = occupancy(&GPUS[1], &launch(256, 32, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.fraction), (6, 48, 1.0));
        // 64 KiB + 1 KiB → 1 block on the 4090 (100 KiB), 3 on H100 (228 KiB).
        let s = 64 * 1024;
        assert_eq!(
            occupancy(&GPUS[1], &launch(256, 32, s))
                .unwrap()
                .blocks_per_sm,
            1
        );
        assert_eq!(
            occupancy(&GPUS[2], &launch(256, 32, s))
                .unwrap()
                .blocks_per_sm,
            3
        );
    }

    #[test]
    fn impossible_launches_are_errors() {
        let a100 = &GPUS[0];
        assert_eq!(
            occupancy(a100, &launch(0, 32, 0)),
            Err(LaunchError::Threads { max: 1024 })
        );
        assert_eq!(
            occupancy(a100, &launch(1025, 32, 0)),
            Err(LaunchError::Threads { max: 1024 })
        );
        assert_eq!(
            occupancy(a100, &launch(64, 256, 0)),
            Err(LaunchError::Registers { max: 255 })
        );
        assert_eq!(
            occupancy(&GPUS[1], &launch(64, 32, 100 * 1024)),
            Err(LaunchError::Shared { max: 99 * 1024 })
        );
        // The largest allowed shared memory still fits one block.
        assert_eq!(
            occupancy(a100, &launch(64, 32, 163 * 1024))
                .unwrap()
                .blocks_per_sm,
            1
        );
    }
}
