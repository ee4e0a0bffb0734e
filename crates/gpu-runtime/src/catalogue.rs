//! The kernel catalogue: each kernel is described exactly once, here.
//!
//! A consumer (run widget, ladder, visualiser, race, tests, benchmarks) looks a kernel up by id
//! and hands it to [`crate::Gpu::run`]; it never builds bind groups or dispatch sizes itself.
//! To add a kernel: put its WGSL in `shaders/`, add one entry to [`KERNELS`], and add its
//! title and summary keys to both translation tables of the app.

use cpu_kernels::matmul;
use cpu_kernels::verify::{self, Precision, Verdict};

use crate::workload::{Job, Workload};

/// The family fixes the buffer layout (bindings), the CPU reference and the verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// C = A·B. Bindings: 0 = A (M×K, read), 1 = B (K×N, read), 2 = C (M×N, write),
    /// 3 = uniform dims {m, n, k, 0}.
    Matmul,
}

/// Everything needed to compile, launch and check one kernel.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// Stable id, used in URLs and as the prefix of its text keys.
    pub id: &'static str,
    /// Path of the WGSL file relative to the repository root, shown to learners.
    pub source_path: &'static str,
    /// The WGSL itself, compiled into the binary from `shaders/`.
    pub wgsl: &'static str,
    pub entry_point: &'static str,
    pub family: Family,
    /// Must equal the shader's `@workgroup_size`; a test checks that it does.
    pub workgroup_size: [u32; 3],
    /// Workgroups to dispatch for a workload.
    pub grid: fn(&Workload) -> [u32; 3],
    /// Device features the kernel needs; without them it is shown as unavailable.
    pub required_features: wgpu::Features,
    /// The precision it computes in, which sets its error bound.
    pub precision: Precision,
    /// Translation key of its short title.
    pub title_key: &'static str,
    /// Translation key of its one-paragraph explanation.
    pub summary_key: &'static str,
}

const fn div_ceil(a: u32, b: u32) -> u32 {
    a.div_ceil(b)
}

/// Grid for kernels that map x to rows and y to columns, one 16×16 tile of C per workgroup.
fn grid_rows_x_16(w: &Workload) -> [u32; 3] {
    match w {
        Workload::Matmul(s) => [div_ceil(s.m, 16), div_ceil(s.n, 16), 1],
    }
}

/// All kernels, in the order the ladder shows them.
pub static KERNELS: &[KernelSpec] = &[KernelSpec {
    id: "matmul-naive",
    source_path: "shaders/matmul_naive.wgsl",
    wgsl: include_str!("../../../shaders/matmul_naive.wgsl"),
    entry_point: "main",
    family: Family::Matmul,
    workgroup_size: [16, 16, 1],
    grid: grid_rows_x_16,
    required_features: wgpu::Features::empty(),
    precision: Precision::F32,
    title_key: "kernel.matmul-naive.title",
    summary_key: "kernel.matmul-naive.summary",
}];

/// Looks a kernel up by id.
pub fn kernel(id: &str) -> Option<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.id == id)
}

impl KernelSpec {
    /// Workgroups to dispatch for this workload.
    pub fn workgroups(&self, w: &Workload) -> [u32; 3] {
        (self.grid)(w)
    }

    /// Whether a job fits this kernel's family.
    pub fn accepts(&self, job: &Job<'_>) -> bool {
        matches!((self.family, job), (Family::Matmul, Job::Matmul { .. }))
    }

    /// The uniform block of a workload, as the shader's `Dims` struct expects it.
    pub(crate) fn uniform_words(&self, w: &Workload) -> [u32; 4] {
        match w {
            Workload::Matmul(s) => [s.m, s.n, s.k, 0],
        }
    }

    /// Floating-point operations of one run, for GFLOP/s.
    pub fn flops(&self, w: &Workload) -> f64 {
        match w {
            Workload::Matmul(s) => s.flops(),
        }
    }

    /// Checks a GPU result against the CPU reference for this job.
    pub fn verify(&self, job: &Job<'_>, got: &[f32]) -> Verdict {
        match *job {
            Job::Matmul { size, a, b } => {
                verify::compare(got, &matmul::reference(size, a, b), self.precision)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpu_kernels::matmul::MatmulSize;

    #[test]
    fn ids_are_unique_and_sources_declare_their_workgroup_size() {
        for (i, k) in KERNELS.iter().enumerate() {
            assert!(
                KERNELS[..i].iter().all(|o| o.id != k.id),
                "duplicate {}",
                k.id
            );
            let [x, y, z] = k.workgroup_size;
            let decl = format!("@workgroup_size({x}, {y}, {z})");
            assert!(k.wgsl.contains(&decl), "{} must declare {decl}", k.id);
            assert!(k.wgsl.contains(&format!("fn {}(", k.entry_point)));
            assert!(
                k.wgsl.trim_start().starts_with("//"),
                "{} needs a header comment",
                k.id
            );
            assert!(k.title_key.starts_with(&format!("kernel.{}.", k.id)));
        }
    }

    #[test]
    fn grid_covers_odd_sizes() {
        let k = kernel("matmul-naive").expect("naive kernel exists");
        let w = Workload::Matmul(MatmulSize::new(129, 65, 7));
        assert_eq!(k.workgroups(&w), [9, 5, 1]);
    }
}
