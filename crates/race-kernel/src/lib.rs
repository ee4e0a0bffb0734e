//! The race's SIMD matmul ([`cpu_kernels::matmul_variants`], variant `simd`) as a small wasm module
//! of its own, with a plain C-like interface (no wasm-bindgen): `cargo xtask dist` builds it
//! twice, with `simd128` (`kernels/race_kernel_simd.wasm`) and with `simd128,relaxed-simd`
//! (`kernels/race_kernel_relaxed.wasm`, `f32x4.relaxed_madd`). A browser without relaxed SIMD
//! refuses the second module as a whole, so it lives apart from the app's module and
//! `www/cpu-worker.js` picks one at run time (`WebAssembly.validate` of a tiny relaxed-SIMD
//! module).
//!
//! One job per instance (a worker runs one share at a time):
//! `job_new(m, n, k, r0, r1)` → 0, or an error code; the caller writes rows r0..r1 of A at
//! `job_a()` and B at `job_b()` (byte addresses in this module's memory, f32 little-endian);
//! `job_step(rows)` computes up to `rows` more rows of C and returns the rows done; C is at
//! `job_c()`, (r1 − r0)·N values. Addresses stay valid until the next `job_new`.

use std::cell::RefCell;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::{CpuVariant, RowJob, RowsError, FUSED_BUILD};

thread_local! {
    static JOB: RefCell<Option<RowJob>> = const { RefCell::new(None) };
}

/// `job_new` succeeded.
pub const OK: u32 = 0;
/// `r0 > r1` or `r1 > m`.
pub const BAD_RANGE: u32 = 1;
/// A size is zero or the buffers would not fit in 32-bit wasm memory.
pub const TOO_LARGE: u32 = 2;

/// Largest number of f32 values one buffer may hold (1 GiB), well inside 4 GiB of memory.
const MAX_VALUES: u64 = 1 << 28;

/// Starts a job for rows r0..r1 of an m×k by k×n product (inputs zero until written).
#[no_mangle]
pub extern "C" fn job_new(m: u32, n: u32, k: u32, r0: u32, r1: u32) -> u32 {
    JOB.with(|j| *j.borrow_mut() = None);
    let rows = u64::from(r1.saturating_sub(r0));
    let (n64, k64) = (u64::from(n), u64::from(k));
    if m == 0 || n == 0 || k == 0 {
        return TOO_LARGE;
    }
    if rows * k64 > MAX_VALUES || k64 * n64 > MAX_VALUES || rows * n64 > MAX_VALUES {
        return TOO_LARGE;
    }
    let size = MatmulSize::new(m, n, k);
    match RowJob::zeroed(CpuVariant::Simd, size, r0 as usize, r1 as usize) {
        Ok(job) => {
            JOB.with(|j| *j.borrow_mut() = Some(job));
            OK
        }
        Err(RowsError::BadRange) => BAD_RANGE,
        Err(RowsError::BadLength(_)) => TOO_LARGE,
    }
}

fn with_job<T>(none: T, f: impl FnOnce(&mut RowJob) -> T) -> T {
    JOB.with(|j| j.borrow_mut().as_mut().map_or(none, f))
}

/// Address of rows r0..r1 of A (0 without a job).
#[no_mangle]
pub extern "C" fn job_a() -> usize {
    with_job(0, |job| job.inputs_mut().0.as_mut_ptr() as usize)
}

/// Address of B (0 without a job).
#[no_mangle]
pub extern "C" fn job_b() -> usize {
    with_job(0, |job| job.inputs_mut().1.as_mut_ptr() as usize)
}

/// Computes up to `rows` more rows; returns the rows done so far.
#[no_mangle]
pub extern "C" fn job_step(rows: u32) -> u32 {
    with_job(0, |job| job.step(rows as usize) as u32)
}

/// Address of the job's rows of C (0 without a job).
#[no_mangle]
pub extern "C" fn job_c() -> usize {
    with_job(0, |job| job.result().as_ptr() as usize)
}

/// 1 when this module multiplies and adds with `f32x4.relaxed_madd`, 0 for plain SIMD128.
#[no_mangle]
pub extern "C" fn kernel_fused() -> u32 {
    u32::from(FUSED_BUILD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpu_kernels::matmul::reference;
    use cpu_kernels::verify::{compare, Precision};

    /// The interface as the worker uses it, natively: fill through the addresses' slices,
    /// step in chunks, read C, compare with the f64 reference.
    #[test]
    fn a_job_filled_through_its_buffers_gives_the_verified_product() {
        let size = MatmulSize::new(29, 21, 300);
        let (a, b) = size.inputs(5);
        let (r0, r1, k) = (3usize, 26usize, 300usize);
        assert_eq!(job_new(29, 21, 300, r0 as u32, r1 as u32), OK);
        assert_ne!(job_a(), 0);
        JOB.with(|j| {
            let mut j = j.borrow_mut();
            let job = j.as_mut().expect("a job");
            let (ja, jb) = job.inputs_mut();
            ja.copy_from_slice(&a[r0 * k..r1 * k]);
            jb.copy_from_slice(&b);
        });
        let mut done = 0;
        while done < (r1 - r0) as u32 {
            done = job_step(4);
        }
        let c = JOB.with(|j| j.borrow().as_ref().expect("a job").result().to_vec());
        let r = reference(size, &a, &b);
        let rows = cpu_kernels::matmul::Reference {
            value: r.value[r0 * 21..r1 * 21].to_vec(),
            magnitude: r.magnitude[r0 * 21..r1 * 21].to_vec(),
            ..r
        };
        let v = compare(&c, &rows, Precision::F32);
        assert!(v.ok, "{v:?}");
    }

    #[test]
    fn bad_jobs_are_codes_not_traps() {
        assert_eq!(job_new(4, 4, 4, 3, 2), BAD_RANGE);
        assert_eq!(job_a(), 0);
        assert_eq!(job_step(4), 0);
        assert_eq!(job_new(4, 4, 4, 0, 5), BAD_RANGE);
        assert_eq!(job_new(0, 4, 4, 0, 0), TOO_LARGE);
        assert_eq!(job_new(65536, 65536, 65536, 0, 65536), TOO_LARGE);
        assert_eq!(kernel_fused(), 0, "native builds multiply, then add");
    }
}
