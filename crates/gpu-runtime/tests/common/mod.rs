//! What the native GPU test files share: the adapter, and saying that a check did not run.

use std::io::Write;

use gpu_runtime::{kernels, Family, Gpu, KernelSpec};

/// The test adapter (lavapipe under `cargo xtask test`); a missing one fails, never skips.
pub fn gpu() -> Gpu {
    Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    )
}

/// Says that a check did not run. Written to the process's stdout directly (the test
/// harness captures only `print!`), one line, for `cargo xtask test` to count as skipped.
pub fn skipped(what: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "SKIPPED: {what}");
    let _ = out.flush();
}

/// The matmul kernels this adapter can run; each one it cannot is reported as skipped.
pub fn runnable_matmul_kernels(gpu: &Gpu, test: &str) -> Vec<&'static KernelSpec> {
    let (can, cannot): (Vec<_>, Vec<_>) = kernels()
        .filter(|k| k.family == Family::Matmul)
        .partition(|k| gpu.cannot_run(k).is_none());
    for k in cannot {
        skipped(&format!(
            "{test}: {} on {} ({})",
            k.id,
            gpu.adapter().name,
            gpu.cannot_run(k).unwrap_or_default()
        ));
    }
    can
}
