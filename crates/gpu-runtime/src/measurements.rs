//! The lessons' measuring kernels (`shaders/measure_*.wgsl`): their buffer layout, launch
//! grids, CPU references, and the measurements built on [`Gpu::run`] — memory bandwidth,
//! arithmetic peak, bandwidth against stride, divergence, and launch overhead.
//!
//! Every measurement checks the GPU's output against a CPU reference before it reports a
//! number, so a wrong kernel can never produce a plausible-looking speed.

use crate::context::{Gpu, GpuError};
use crate::plan::{RunControl, RunOptions, Timing};
use crate::spec::KernelSpec;
use crate::workload::{Job, MeasureSize};

pub use crate::family::measure::{reference, verify, MAX_STRIDE};

/// Inputs for the probes: small whole numbers 0…7 (exact in f32, so sums of up to 2²¹ of
/// them are exact too, whatever their order).
pub fn input(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 2_654_435_761) >> 7 & 7) as f32)
        .collect()
}

/// One measured run: its timing and the amount of work it did.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub timing: Timing,
    /// Milliseconds of one execution: the fastest timestamped pass, or the wall clock divided
    /// by every pass of the submission (warm-up included).
    pub ms: f64,
}

fn spec(id: &str) -> Result<&'static KernelSpec, GpuError> {
    crate::kernel(id).ok_or_else(|| GpuError::Shader(format!("{id} is not catalogued")))
}

/// Runs a probe, checks its output against the CPU reference, and returns its timing.
pub async fn run_checked(
    gpu: &Gpu,
    kernel_id: &str,
    size: MeasureSize,
    input: &[f32],
    opts: &RunOptions,
) -> Result<Measured, GpuError> {
    run_checked_with(gpu, kernel_id, size, input, opts, &RunControl::default()).await
}

/// [`run_checked`] with a cancel (it stops between its submissions).
pub async fn run_checked_with(
    gpu: &Gpu,
    kernel_id: &str,
    size: MeasureSize,
    input: &[f32],
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<Measured, GpuError> {
    let kernel = spec(kernel_id)?;
    if size.elements < 4 || size.threads == 0 || input.len() != size.elements as usize {
        return Err(GpuError::Dispatch(format!("bad probe size {size:?}")));
    }
    let job = Job::Measure { size, input };
    let (out, verdict) = crate::run_verified(gpu, kernel, &job, opts, ctl).await?;
    if !verdict.ok {
        return Err(GpuError::Dispatch(format!(
            "{kernel_id} gave a wrong result: {:?}",
            verdict.first_failure
        )));
    }
    let ms = out.timing.kernel_ms();
    Ok(Measured {
        timing: out.timing,
        ms,
    })
}

/// Bytes per second as GB/s (10⁹), or 0 for a non-positive time.
pub fn gb_per_s(bytes: f64, ms: f64) -> f64 {
    if ms > 0.0 && ms.is_finite() {
        bytes / ms / 1e6
    } else {
        0.0
    }
}

/// Memory bandwidth from copying `elements` floats (rounded down to a multiple of 64):
/// GB/s counting 8 bytes per element (read + write).
pub async fn bandwidth(gpu: &Gpu, elements: u32, opts: &RunOptions) -> Result<f64, GpuError> {
    let n = (elements / MAX_STRIDE).max(1) * MAX_STRIDE;
    let data = input(n as usize);
    let size = MeasureSize {
        elements: n,
        threads: n,
        param: 0,
    };
    let m = run_checked(gpu, "measure-copy", size, &data, opts).await?;
    Ok(gb_per_s(8.0 * n as f64, m.ms))
}

/// Arithmetic rate of the FMA probe in GFLOP/s: `threads` chains of `iters` steps.
pub async fn fma_rate(
    gpu: &Gpu,
    threads: u32,
    iters: u32,
    opts: &RunOptions,
) -> Result<f64, GpuError> {
    let data = input(threads.max(4) as usize);
    let size = MeasureSize {
        elements: threads.max(4),
        threads,
        param: iters,
    };
    let m = run_checked(gpu, "measure-fma", size, &data, opts).await?;
    Ok(gb_per_s(fma_flops(threads, iters), m.ms))
}

/// FLOPs of one FMA-probe launch: 16 FMAs (32 FLOPs) per thread per iteration.
pub fn fma_flops(threads: u32, iters: u32) -> f64 {
    32.0 * threads as f64 * iters as f64
}

/// Useful GB/s of reading `elements` floats (a multiple of 64) with neighbouring threads
/// `stride` apart; each logical thread reads 16 of them.
pub async fn strided_read(
    gpu: &Gpu,
    data: &[f32],
    stride: u32,
    opts: &RunOptions,
) -> Result<f64, GpuError> {
    let n = data.len() as u32;
    if stride == 0 || stride > MAX_STRIDE || !n.is_multiple_of(MAX_STRIDE) {
        return Err(GpuError::Dispatch(format!("bad stride {stride} for {n}")));
    }
    let size = MeasureSize {
        elements: n,
        threads: (n / 16).max(1),
        param: stride,
    };
    let m = run_checked(gpu, "measure-strided", size, data, opts).await?;
    Ok(gb_per_s(4.0 * n as f64, m.ms))
}

/// Milliseconds of the divergent and the uniform variant of the same work.
pub async fn divergence(
    gpu: &Gpu,
    threads: u32,
    iters: u32,
    opts: &RunOptions,
) -> Result<(f64, f64), GpuError> {
    let threads = (threads / 64).max(1) * 64;
    let data = input(threads as usize);
    let size = MeasureSize {
        elements: threads,
        threads,
        param: iters,
    };
    // Alternate the order so warm-up effects do not favour one variant.
    let d1 = run_checked(gpu, "measure-divergent", size, &data, opts).await?;
    let u1 = run_checked(gpu, "measure-uniform", size, &data, opts).await?;
    let u2 = run_checked(gpu, "measure-uniform", size, &data, opts).await?;
    let d2 = run_checked(gpu, "measure-divergent", size, &data, opts).await?;
    Ok((d1.ms.min(d2.ms), u1.ms.min(u2.ms)))
}

/// The three ways of doing the same amount of tiny work, in milliseconds (wall clock from
/// submit to result).
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchCosts {
    pub dispatches: u32,
    /// One dispatch with `dispatches` times the threads.
    pub fused_ms: f64,
    /// `dispatches` dispatches of the tiny kernel in one submission.
    pub one_submit_ms: f64,
    /// `dispatches` separate runs, each waiting for its result before the next.
    pub separate_ms: f64,
}

impl LaunchCosts {
    /// Extra cost of each dispatch inside one submission, in µs.
    pub fn per_dispatch_us(&self) -> f64 {
        ((self.one_submit_ms - self.fused_ms) / self.dispatches.max(1) as f64 * 1e3).max(0.0)
    }
    /// Cost of each separate round trip, in µs.
    pub fn per_round_trip_us(&self) -> f64 {
        self.separate_ms / self.dispatches.max(1) as f64 * 1e3
    }
}

/// One checked run of the FMA probe (`launch_costs`'s every run).
async fn fma(
    gpu: &Gpu,
    size: MeasureSize,
    data: &[f32],
    opts: &RunOptions,
    ctl: &RunControl,
) -> Result<Measured, GpuError> {
    run_checked_with(gpu, "measure-fma", size, data, opts, ctl).await
}

/// Threads and iterations of the tiny kernel in [`launch_costs`].
pub const TINY_THREADS: u32 = 64;
pub const TINY_ITERS: u32 = 8;

/// Times `dispatches` tiny FMA launches three ways (see [`LaunchCosts`]); `progress` is told
/// how many separate runs are done (0 before each of the first runs), and an `Err` from it (a
/// cancel) stops the series there, before its next submission.
pub async fn launch_costs(
    gpu: &Gpu,
    dispatches: u32,
    ctl: &RunControl,
    mut progress: impl FnMut(u32) -> Result<(), GpuError>,
) -> Result<LaunchCosts, GpuError> {
    let dispatches = dispatches.clamp(1, 1024);
    let tiny = MeasureSize {
        elements: TINY_THREADS,
        threads: TINY_THREADS,
        param: TINY_ITERS,
    };
    let tiny_data = input(TINY_THREADS as usize);
    let fused = MeasureSize {
        elements: TINY_THREADS * dispatches,
        threads: TINY_THREADS * dispatches,
        param: TINY_ITERS,
    };
    let fused_data = input(fused.elements as usize);
    let once = RunOptions::default();
    // Warm the pipeline and the driver once. `progress(0)` before each run lets a cancel
    // stop the series before it submits anything more.
    progress(0)?;
    fma(gpu, tiny, &tiny_data, &once, ctl).await?;
    let many = RunOptions {
        warmup: 0,
        repetitions: dispatches,
    };
    // Best of three for the two single submissions, alternating, so noise and warm-up do not
    // decide which looks cheaper.
    let (mut fused_ms, mut one_submit_ms) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        progress(0)?;
        let f = fma(gpu, fused, &fused_data, &once, ctl).await?;
        fused_ms = fused_ms.min(f.timing.submit_to_result_ms);
        progress(0)?;
        let one = fma(gpu, tiny, &tiny_data, &many, ctl).await?;
        one_submit_ms = one_submit_ms.min(one.timing.submit_to_result_ms);
    }
    let mut separate_ms = 0.0;
    for i in 0..dispatches {
        let r = fma(gpu, tiny, &tiny_data, &once, ctl).await?;
        separate_ms += r.timing.submit_to_result_ms;
        // The caller's Err (a cancel) stops the series here.
        progress(i + 1)?;
    }
    Ok(LaunchCosts {
        dispatches,
        fused_ms,
        one_submit_ms,
        separate_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_reads_are_a_permutation() {
        let n = 256usize;
        for stride in [1u32, 2, 4, 8, 16, 32, 64] {
            let size = MeasureSize {
                elements: n as u32,
                threads: n as u32,
                param: stride,
            };
            // With one read per thread, the "sums" are the elements in read order.
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let mut order = reference("measure-strided", size, &data);
            assert_eq!(
                order[1] - order[0],
                if stride == 1 { 1.0 } else { stride as f32 }
            );
            order.sort_by(f32::total_cmp);
            assert_eq!(order, data, "stride {stride}");
        }
    }

    #[test]
    fn chains_count_every_step() {
        // Start s = 3: the chains start at 3, 4, 2, −3 and add their constants (total 41)
        // each step: 4·(3 + 4 + 2 − 3) + 200·41.
        let size = MeasureSize {
            elements: 4,
            threads: 1,
            param: 200,
        };
        let got = reference("measure-fma", size, &[3.0, 0.0, 0.0, 0.0]);
        assert_eq!(got[0], 24.0 + 200.0 * 41.0);
        // Both divergence paths count up by one; path B wraps at 2048.
        let data = [5.0f32, 2000.0, 0.0, 7.0];
        for id in ["measure-divergent", "measure-uniform"] {
            let size = MeasureSize {
                elements: 4,
                threads: 4,
                param: 100,
            };
            let got = reference(id, size, &data);
            let path_a = |t: usize| {
                if id == "measure-divergent" {
                    t.is_multiple_of(2)
                } else {
                    t < 64
                }
            };
            for (t, (&g, &s)) in got.iter().zip(&data).enumerate() {
                let want = if path_a(t) {
                    s + 100.0
                } else {
                    (s + 100.0) % 2048.0
                };
                assert_eq!(g, want, "{id} thread {t}");
            }
        }
    }

    #[test]
    fn one_missing_step_fails_the_check() {
        let data = input(256);
        for id in ["measure-fma", "measure-divergent", "measure-uniform"] {
            for iters in [1u32, 25, 256, 2048, 4097] {
                let size = |param| MeasureSize {
                    elements: 256,
                    threads: 256,
                    param,
                };
                let ran = reference(id, size(iters - 1), &data);
                assert!(verify(id, size(iters - 1), &data, &ran).ok);
                assert!(!verify(id, size(iters), &data, &ran).ok, "{id} {iters}");
            }
        }
    }

    #[test]
    fn verify_catches_a_wrong_copy() {
        let data = input(64);
        let size = MeasureSize {
            elements: 64,
            threads: 64,
            param: 0,
        };
        assert!(verify("measure-copy", size, &data, &data).ok);
        let mut bad = data.clone();
        bad[63] += 1.0;
        let v = verify("measure-copy", size, &data, &bad);
        assert!(!v.ok);
        assert_eq!(v.first_failure.map(|f| f.0), Some(63));
        assert!(!verify("measure-copy", size, &data, &data[..10]).ok);
    }

    #[test]
    fn launch_costs_arithmetic() {
        let c = LaunchCosts {
            dispatches: 100,
            fused_ms: 1.0,
            one_submit_ms: 3.0,
            separate_ms: 50.0,
        };
        assert!((c.per_dispatch_us() - 20.0).abs() < 1e-9);
        assert!((c.per_round_trip_us() - 500.0).abs() < 1e-9);
        assert_eq!(gb_per_s(1e9, 1000.0), 1.0);
        assert_eq!(gb_per_s(1e9, 0.0), 0.0);
    }
}

/// Bytes the transfer probe sends: a counter pattern, so a shifted, truncated or stale copy
/// cannot match.
pub fn transfer_pattern(bytes: usize) -> Vec<u8> {
    let words = bytes / 4;
    (0..words as u32)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect()
}

/// One transfer size: every repetition's upload and readback times (ms).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRuns {
    pub bytes: u64,
    pub upload_ms: Vec<f64>,
    pub readback_ms: Vec<f64>,
}

/// Host → GPU and GPU → host on this machine: for each size, `reps` round trips through
/// [`Gpu::time_transfer`], each read back and compared byte for byte with what was sent
/// before its time counts. `progress(done, total)` after each.
pub async fn transfer_bandwidth(
    gpu: &Gpu,
    sizes: &[u64],
    reps: u32,
    progress: &dyn Fn(u32, u32),
) -> Result<Vec<TransferRuns>, GpuError> {
    let total = sizes.len() as u32 * reps;
    let mut out = Vec::new();
    let mut done = 0;
    for &bytes in sizes {
        let data = transfer_pattern(bytes as usize);
        let mut runs = TransferRuns {
            bytes: data.len() as u64,
            upload_ms: Vec::new(),
            readback_ms: Vec::new(),
        };
        for _ in 0..reps {
            let t = gpu.time_transfer(&data).await?;
            if t.read != data {
                let at = t.read.iter().zip(&data).position(|(a, b)| a != b);
                return Err(GpuError::Readback(format!(
                    "the {bytes}-byte transfer came back different (first at byte {at:?})"
                )));
            }
            runs.upload_ms.push(t.upload_ms);
            runs.readback_ms.push(t.readback_ms);
            done += 1;
            progress(done, total);
        }
        out.push(runs);
    }
    Ok(out)
}
