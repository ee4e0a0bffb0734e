//! The GPU side of a race (one run through the shared dispatch path, timed in parts) and the
//! checks that make a race worth watching: CPU and GPU each against the reference, and against
//! each other.

use cpu_kernels::conv::{self, ConvShape};
use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::verify::{self, Precision, Verdict};
use gpu_runtime::conv::{ConvError, ConvStage};
use gpu_runtime::{Gpu, GpuError, Job, KernelSpec, RunControl, RunOptions, Timing, TimingMethod};
use gpu_runtime::{FULL_CHECK_MACS, SAMPLED_ELEMENTS};

/// A finished GPU run and where its time went (milliseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRun {
    pub c: Vec<f32>,
    pub timing: Timing,
    /// Upload plus submit-to-result: what the visitor waits for once the pipeline exists.
    pub total_ms: f64,
}

impl GpuRun {
    /// The kernel alone, when timestamps are trusted (not on software adapters).
    pub fn kernel_ms(&self) -> Option<f64> {
        (self.timing.method == TimingMethod::Timestamps).then(|| self.timing.kernel_ms())
    }

    /// Launch, queueing and the copy into the readback buffer: submit-to-result minus the
    /// kernel and the mapped copy. Only known with timestamps.
    pub fn launch_ms(&self) -> Option<f64> {
        self.kernel_ms()
            .map(|k| (self.timing.submit_to_result_ms - k - self.timing.readback_ms).max(0.0))
    }
}

/// Compiles the kernel's pipeline (cached per device) and returns how long it took.
pub async fn prepare(gpu: &Gpu, kernel: &'static KernelSpec) -> Result<f64, GpuError> {
    let t0 = gpu_runtime::now_ms();
    gpu.pipeline(kernel).await?;
    Ok(gpu_runtime::now_ms() - t0)
}

/// One run of a matmul kernel on the given inputs (after any earlier GPU work has drained:
/// that wait is in `timing.waited_ms`, never in `total_ms`).
pub async fn run_gpu(
    gpu: &Gpu,
    kernel: &'static KernelSpec,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    ctl: &RunControl,
) -> Result<GpuRun, GpuError> {
    let job = Job::Matmul { size, a, b };
    let out = gpu
        .run_with(kernel, &job, &RunOptions::default(), ctl)
        .await?;
    Ok(GpuRun {
        total_ms: out.timing.upload_ms + out.timing.submit_to_result_ms,
        c: out.output,
        timing: out.timing,
    })
}

/// Checks one result against the reference (every element when cheap, else a sample).
pub fn verify_one(
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    precision: Precision,
) -> Verdict {
    check(size, a, b, c, None, precision).cpu
}

/// The outcome of checking a race.
#[derive(Clone, Debug, PartialEq)]
pub struct Checks {
    pub cpu: Verdict,
    pub gpu: Option<Verdict>,
    /// Largest |cpu − gpu| / Σ|a·b| over the checked elements.
    pub max_rel_diff: Option<f64>,
    pub checked: usize,
    pub total: usize,
}

impl Checks {
    /// Both sides verified (the GPU side too, when there was one).
    pub fn all_ok(&self) -> bool {
        self.cpu.ok && self.gpu.as_ref().is_none_or(|g| g.ok)
    }
}

/// Checks the CPU result (and the GPU result with its precision, if any) against the
/// reference: every element when that is cheap, otherwise edges plus a seeded sample.
pub fn check(
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    cpu: &[f32],
    gpu: Option<(&[f32], Precision)>,
    cpu_precision: Precision,
) -> Checks {
    let indices = matmul::check_indices(size, FULL_CHECK_MACS, SAMPLED_ELEMENTS, 1);
    let (reference, idx) = match indices {
        None => (matmul::reference(size, a, b), None),
        Some(idx) => (matmul::reference_at(size, a, b, &idx), Some(idx)),
    };
    judge(
        &reference,
        idx.as_deref(),
        cpu,
        gpu,
        cpu_precision,
        size.c_len(),
    )
}

/// [`check`] for a convolution: both sides against the f64 conv reference (every element
/// when cheap, else corners, borders and a seeded sample) and against each other.
pub fn check_conv(
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
    cpu: &[f32],
    gpu: Option<&[f32]>,
) -> Checks {
    let indices = conv::check_indices(shape, FULL_CHECK_MACS, SAMPLED_ELEMENTS, 1);
    let (reference, idx) = match indices {
        None => (conv::reference(shape, x, f), None),
        Some(idx) => (conv::reference_at(shape, x, f, &idx), Some(idx)),
    };
    judge(
        &reference,
        idx.as_deref(),
        cpu,
        gpu.map(|g| (g, Precision::F32)),
        Precision::F32,
        shape.y_len(),
    )
}

fn judge(
    reference: &matmul::Reference,
    idx: Option<&[usize]>,
    cpu: &[f32],
    gpu: Option<(&[f32], Precision)>,
    cpu_precision: Precision,
    total: usize,
) -> Checks {
    let pick = |v: &[f32]| -> Vec<f32> {
        match idx {
            // A result of the wrong length is wrong: pad it with NaN so it fails.
            None => (0..total)
                .map(|i| v.get(i).copied().unwrap_or(f32::NAN))
                .collect(),
            Some(idx) => idx
                .iter()
                .map(|&i| v.get(i).copied().unwrap_or(f32::NAN))
                .collect(),
        }
    };
    let cpu_got = pick(cpu);
    let cpu_verdict = verify::compare(&cpu_got, reference, cpu_precision);
    let (gpu_verdict, diff) = match gpu {
        Some((g, precision)) => {
            let got = pick(g);
            let v = verify::compare(&got, reference, precision);
            let diff = cpu_got
                .iter()
                .zip(&got)
                .zip(&reference.magnitude)
                .map(|((&x, &y), &mag)| (x as f64 - y as f64).abs() / mag.max(f64::MIN_POSITIVE))
                .fold(
                    0f64,
                    |m, d| if d.is_nan() { f64::INFINITY } else { m.max(d) },
                );
            (Some(v), Some(diff))
        }
        None => (None, None),
    };
    Checks {
        cpu: cpu_verdict,
        gpu: gpu_verdict,
        max_rel_diff: diff,
        checked: cpu_got.len(),
        total,
    }
}

/// Compiles every pipeline a conv stage may dispatch and returns how long that took.
pub async fn prepare_conv(gpu: &Gpu, stage: ConvStage) -> Result<f64, GpuError> {
    let t0 = gpu_runtime::now_ms();
    for k in stage.kernels() {
        gpu.pipeline(k).await?;
    }
    Ok(gpu_runtime::now_ms() - t0)
}

/// One run of a conv stage on the given inputs, timed like [`run_gpu`] (queue drained first).
pub async fn run_gpu_conv(
    gpu: &Gpu,
    stage: ConvStage,
    shape: &ConvShape,
    x: &[f32],
    f: &[f32],
    ctl: &RunControl,
) -> Result<GpuRun, ConvError> {
    let out =
        gpu_runtime::conv::run_conv_with(gpu, stage, &[], shape, x, f, &RunOptions::default(), ctl)
            .await?;
    Ok(GpuRun {
        total_ms: out.timing.upload_ms + out.timing.submit_to_result_ms,
        c: out.output,
        timing: out.timing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpu_kernels::matmul_variants::{matmul, CpuVariant};

    #[test]
    fn agreeing_sides_pass_and_a_wrong_one_is_caught() {
        let size = MatmulSize::new(24, 24, 24);
        let (a, b) = size.inputs(1);
        let c1 = matmul(CpuVariant::Simd, size, &a, &b).expect("ok");
        let c2 = matmul(CpuVariant::Naive, size, &a, &b).expect("ok");
        let ok = check(
            size,
            &a,
            &b,
            &c1,
            Some((&c2, Precision::F32)),
            Precision::F32,
        );
        assert!(ok.all_ok());
        assert_eq!(ok.checked, 576);
        assert!(ok.max_rel_diff.is_some_and(|d| d < 1e-5));
        let mut bad = c2.clone();
        bad[100] += 0.5;
        let caught = check(
            size,
            &a,
            &b,
            &c1,
            Some((&bad, Precision::F32)),
            Precision::F32,
        );
        assert!(!caught.all_ok());
        assert!(caught.max_rel_diff.is_some_and(|d| d > 1e-3));
        let cpu_only = check(size, &a, &b, &c1, None, Precision::F32);
        assert!(cpu_only.all_ok() && cpu_only.gpu.is_none());
    }

    #[test]
    fn conv_sides_are_checked_against_the_reference_and_each_other() {
        use cpu_kernels::conv_variants::{conv, CpuConvVariant};
        let s = ConvShape::new(2, 3, 9, 7, 5, 3, 3).with(2, 1, 1);
        let (x, f) = s.inputs(1);
        let direct = conv(CpuConvVariant::Direct, &s, &x, &f).expect("ok");
        let simd = conv(CpuConvVariant::Im2colSimd, &s, &x, &f).expect("ok");
        let ok = check_conv(&s, &x, &f, &direct, Some(&simd));
        assert!(ok.all_ok());
        assert_eq!((ok.checked, ok.total), (s.y_len(), s.y_len()));
        assert!(ok.max_rel_diff.is_some_and(|d| d < 1e-5));
        // One wrong element on the "GPU" side, and a result one value short, are caught.
        let mut bad = simd.clone();
        bad[7] += 0.25;
        assert!(!check_conv(&s, &x, &f, &direct, Some(&bad)).all_ok());
        let short = &direct[..direct.len() - 1];
        assert!(!check_conv(&s, &x, &f, short, None).all_ok());
    }

    #[test]
    fn large_sizes_are_sampled() {
        let size = MatmulSize::new(512, 512, 512);
        let (a, b) = size.inputs(1);
        let c = matmul(CpuVariant::Simd, size, &a, &b).expect("ok");
        let r = check(size, &a, &b, &c, None, Precision::F32);
        assert!(r.cpu.ok);
        assert!(r.checked < r.total);
    }
}
