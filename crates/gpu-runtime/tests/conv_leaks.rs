//! Conv plans leave no GPU buffer behind: after every stage (im2col's scratch matrix and
//! split-K's partial sums included), after a shader that fails to compile, and after a
//! cancelled run, `live_buffers()` is back to zero. One test: the counter is global.

use gpu_runtime::conv::{conv_kernel, run_conv, run_conv_with, ConvError, ConvStage};
use gpu_runtime::cpu_kernels::conv::ConvShape;
use gpu_runtime::{live_buffers, Gpu, GpuError, RunControl, RunOptions};

#[test]
fn conv_runs_destroy_what_they_created() {
    let gpu = Gpu::request_blocking().expect("no GPU adapter (see kernels_vs_cpu.rs)");
    let opts = RunOptions::default();
    let shape = ConvShape::new(1, 32, 9, 7, 12, 3, 3).with(1, 1, 1); // split-K: 2 slices
    let (x, f) = shape.inputs(1);
    assert_eq!(live_buffers(), 0);
    for stage in [
        ConvStage::Direct,
        ConvStage::Tiled,
        ConvStage::Im2colGemm,
        ConvStage::ImplicitGemm,
    ] {
        pollster::block_on(run_conv(&gpu, stage, &shape, &x, &f, &opts))
            .unwrap_or_else(|e| panic!("{}: {e}", stage.id()));
        assert_eq!(live_buffers(), 0, "{}", stage.id());
    }
    // WGSL that does not compile: a named error, nothing left behind.
    let broken = conv_kernel("conv-splitk-reduce")
        .map(|k| k.with_source(k.wgsl().replace("var acc = part[i];", "var acc = part[i]")))
        .expect("catalogued");
    let ctl = RunControl::default();
    let got = pollster::block_on(run_conv_with(
        &gpu,
        ConvStage::ImplicitGemm,
        &[&broken],
        &shape,
        &x,
        &f,
        &opts,
        &ctl,
    ));
    assert!(
        matches!(got, Err(ConvError::Gpu(GpuError::Shader(_)))),
        "{got:?}"
    );
    assert_eq!(live_buffers(), 0);
    // Cancelled before it starts: reported as such, nothing left behind.
    let ctl = RunControl::default();
    ctl.cancel.cancel();
    let got = pollster::block_on(run_conv_with(
        &gpu,
        ConvStage::Im2colGemm,
        &[],
        &shape,
        &x,
        &f,
        &opts,
        &ctl,
    ));
    assert!(
        matches!(got, Err(ConvError::Gpu(GpuError::Cancelled))),
        "{got:?}"
    );
    assert_eq!(live_buffers(), 0);
}
