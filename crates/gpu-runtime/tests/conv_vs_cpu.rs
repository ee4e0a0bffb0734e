//! Every convolution stage against the CPU reference, on a real wgpu device (lavapipe under
//! `cargo xtask test`), on shapes that cross every tile edge; and deliberately broken kernels
//! (a transposed filter, an off-by-one halo) that verification must reject.

use gpu_runtime::conv::{
    conv_kernel, force_ig_splits, force_ig_tile, run_conv, run_conv_with, verify_conv, ConvError,
    ConvStage, IG_TILES, KERNELS,
};
use gpu_runtime::cpu_kernels::conv::ConvShape;
use gpu_runtime::{Gpu, KernelSpec, RunControl, RunOptions};

fn gpu() -> Gpu {
    Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    )
}

/// ConvShape::new(N, C, H, W, K, R, S).with(stride, pad, dilation). Odd H and W everywhere, outputs not multiples
/// of the 8×8 tiled patch or the 64/128 GEMM blocks, K across 8/64 edges, R·S·C across BK = 16.
const SHAPES: &[ConvShape] = &[
    // C = 1, valid
    ConvShape::new(1, 1, 5, 5, 1, 3, 3).with(1, 0, 1),
    // RGB, "same", batch 2
    ConvShape::new(2, 3, 9, 7, 5, 3, 3).with(1, 1, 1),
    // C = 5, stride 2
    ConvShape::new(1, 5, 11, 13, 7, 3, 3).with(2, 1, 1),
    // dilation 2, "same"
    ConvShape::new(1, 3, 13, 11, 4, 3, 3).with(1, 2, 2),
    // 1×1, batch 3
    ConvShape::new(3, 5, 7, 9, 9, 1, 1).with(1, 0, 1),
    // 5×5 "same"
    ConvShape::new(1, 3, 17, 19, 6, 5, 5).with(1, 2, 1),
    // 7×7 stride 2 (the ResNet stem, small)
    ConvShape::new(1, 3, 23, 21, 8, 7, 7).with(2, 3, 1),
    // 7×7 dilated 2 → 3×3 output
    ConvShape::new(2, 4, 15, 15, 13, 7, 7).with(1, 0, 2),
    // one output pixel
    ConvShape::new(1, 6, 3, 3, 3, 3, 3).with(1, 0, 1),
    // K = 70 crosses the 64-wide block; C a multiple of 4
    ConvShape::new(1, 8, 9, 9, 70, 3, 3).with(2, 0, 1),
    // M = 798 rows, K = 65: every GEMM edge
    ConvShape::new(2, 16, 21, 19, 65, 3, 3).with(1, 1, 1),
    // everything one
    ConvShape::new(1, 1, 1, 1, 1, 1, 1).with(1, 0, 1),
    // even filter, padding, stride 2
    ConvShape::new(1, 3, 9, 9, 2, 2, 2).with(2, 1, 1),
    // 1×1 with M = 646 and K = 67
    ConvShape::new(2, 36, 17, 19, 67, 1, 1).with(1, 0, 1),
    // dilation and stride together
    ConvShape::new(1, 12, 19, 17, 16, 5, 5).with(2, 2, 2),
    // split-K in 2 slices (R·S·C = 288: 18 steps of 16)
    ConvShape::new(1, 32, 9, 7, 12, 3, 3).with(1, 1, 1),
    // split-K in 12 slices of 9 steps, the last one short (100 steps)
    ConvShape::new(1, 64, 5, 5, 8, 5, 5).with(1, 2, 1),
];

fn shapes() -> impl Iterator<Item = ConvShape> {
    SHAPES.iter().copied()
}

fn run(gpu: &Gpu, stage: ConvStage, shape: &ConvShape, seed: u64) -> Result<bool, ConvError> {
    let (x, f) = shape.inputs(seed);
    let out = pollster::block_on(run_conv(gpu, stage, shape, &x, &f, &RunOptions::default()))?;
    assert_eq!(out.output.len(), shape.y_len(), "{} {shape:?}", stage.id());
    let (verdict, checked) = verify_conv(shape, &x, &f, &out.output, seed);
    assert_eq!(checked, shape.y_len(), "small shapes are checked whole");
    if !verdict.ok {
        eprintln!("{} {shape:?}: {verdict:?}", stage.id());
    }
    Ok(verdict.ok)
}

#[test]
fn every_stage_matches_the_cpu_reference() {
    let gpu = gpu();
    let mut runs = 0;
    for stage in ConvStage::ALL {
        for (seed, shape) in shapes().enumerate() {
            match run(&gpu, stage, &shape, seed as u64 + 1) {
                Ok(ok) => assert!(ok, "{} at {shape:?}", stage.id()),
                // Only the 1×1 stage may refuse, and only shapes that are not 1×1.
                Err(ConvError::NotPointwise) => {
                    assert!(stage == ConvStage::Pointwise && !shape.is_pointwise())
                }
                Err(e) => panic!("{} at {shape:?}: {e}", stage.id()),
            }
            runs += 1;
        }
    }
    let split = shapes()
        .filter(|s| ConvStage::ImplicitGemm.plan_kernels(s).map(|k| k.len()) == Ok(2))
        .count();
    assert!(split >= 2, "split-K must be exercised");
    let pointwise = shapes().filter(|s| s.is_pointwise()).count();
    assert!(pointwise >= 3, "the 1×1 stage must be exercised");
    assert_eq!(runs, ConvStage::ALL.len() * SHAPES.len());
}

/// Every implicit GEMM block (64×64, 128×64, 64×128, 128×128, which the runtime picks per
/// shape, and the candidates 32×64, 64×32 and the four-row 64×64 and 32×64)
/// on every shape above plus shapes that cross the 128-wide edges in both directions, and
/// each block with r and s swapped in its decoding must fail.
#[test]
fn every_implicit_gemm_block_matches_the_cpu_reference() {
    let gpu = gpu();
    let wide = [
        // M = 255 (one full 128-row block and a partial one), K = 131 (k4 = 132 crosses 128),
        // C = 7 (c4 = 8: R·S·c4 = 72, 4.5 steps of BK = 16)
        ConvShape::new(1, 7, 15, 17, 131, 3, 3).with(1, 1, 1),
        // M = 2·23·21 = 966, K = 200, split-K with the 128×128 block
        ConvShape::new(2, 20, 23, 21, 200, 3, 3).with(1, 1, 1),
        // The 7×7 stem's kind, odd: C = 3 (c4 = 4), stride 2, pad 3, M = 23·22 = 506,
        // K = 70 (k4 = 72 crosses the 32- and 64-wide edges), R·S·c4 = 196: 12.25 steps of
        // BK = 16, 24.5 of BK = 8
        ConvShape::new(1, 3, 45, 43, 70, 7, 7).with(2, 3, 1),
    ];
    let swapped = (
        "let ih = o.ih + i32((rs / cv.s) * cv.dil);\n    let iw = o.iw + i32((rs % cv.s) * cv.dil);",
        "let ih = o.ih + i32((rs % cv.s) * cv.dil);\n    let iw = o.iw + i32((rs / cv.s) * cv.dil);",
    );
    for tile in IG_TILES {
        assert!(force_ig_tile(Some(tile.id)));
        for (seed, shape) in shapes().chain(wide).enumerate() {
            let kernels = ConvStage::ImplicitGemm
                .plan_kernels(&shape)
                .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
            assert_eq!(kernels[0], tile.id);
            let ok = run(&gpu, ConvStage::ImplicitGemm, &shape, seed as u64 + 11)
                .unwrap_or_else(|e| panic!("{} at {shape:?}: {e}", tile.id));
            assert!(ok, "{} at {shape:?}", tile.id);
        }
        // Split-K with slices shorter than the runtime's rule keeps (≥ 8 steps): 2 and 3
        // slices of the stem-like shape's 13 or 25 steps, the last slice shorter.
        let stem = wide[2];
        for splits in [2, 3] {
            force_ig_splits(Some(splits));
            let kernels = ConvStage::ImplicitGemm.plan_kernels(&stem);
            assert_eq!(kernels, Ok(vec![tile.id, "conv-splitk-reduce"]));
            let ok = run(&gpu, ConvStage::ImplicitGemm, &stem, 40 + splits as u64)
                .unwrap_or_else(|e| panic!("{} at {stem:?}: {e}", tile.id));
            assert!(ok, "{} with {splits} slices at {stem:?}", tile.id);
        }
        force_ig_splits(None);
        let broken = mutant(tile.id, swapped.0, swapped.1);
        for shape in wide {
            assert!(
                !verdict_with(&gpu, ConvStage::ImplicitGemm, &[&broken], &shape),
                "{} with r and s swapped passed at {shape:?}",
                tile.id
            );
        }
    }
    assert!(force_ig_tile(None));
    assert!(!force_ig_tile(Some("conv-implicit-gemm-3x3")));
}

#[test]
fn a_larger_shape_is_sampled_and_still_verified() {
    // Above FULL_CHECK_MACS, so the check samples borders, corners and random elements.
    let gpu = gpu();
    let shape = ConvShape::new(2, 48, 36, 36, 72, 3, 3).with(1, 1, 1);
    for stage in [
        ConvStage::ImplicitGemm,
        ConvStage::Im2colGemm,
        ConvStage::Tiled,
    ] {
        let v = pollster::block_on(gpu_runtime::conv::run_conv_verified(
            &gpu,
            stage,
            &shape,
            7,
            &RunOptions::default(),
        ))
        .unwrap_or_else(|e| panic!("{}: {e}", stage.id()));
        assert!(v.verdict.ok, "{}: {:?}", stage.id(), v.verdict);
        assert!(
            v.checked < v.total && v.checked > 4000,
            "{} of {}",
            v.checked,
            v.total
        );
    }
}

/// A conv kernel with its source edited: how a bug would look. Same id, constants and
/// layout; its own pipeline (the cache is keyed by source).
fn mutant(id: &str, from: &str, to: &str) -> KernelSpec {
    let k = conv_kernel(id).unwrap_or_else(|| panic!("{id}"));
    let src = k.wgsl();
    assert!(
        src.contains(from),
        "{id} no longer contains `{from}`: update the mutant"
    );
    k.with_source(src.replace(from, to))
}

fn verdict_with(gpu: &Gpu, stage: ConvStage, kernels: &[&KernelSpec], shape: &ConvShape) -> bool {
    let (x, f) = shape.inputs(3);
    let out = pollster::block_on(run_conv_with(
        gpu,
        stage,
        kernels,
        shape,
        &x,
        &f,
        &RunOptions::default(),
        &RunControl::default(),
    ))
    .unwrap_or_else(|e| panic!("{}: {e}", stage.id()));
    verify_conv(shape, &x, &f, &out.output, 3).0.ok
}

#[test]
fn broken_kernels_fail_verification() {
    let gpu = gpu();
    let kernel = |id| conv_kernel(id).unwrap_or_else(|| panic!("{id}"));
    let shape = ConvShape::new(2, 5, 13, 11, 6, 3, 3).with(1, 1, 1);
    let stride2 = ConvShape::new(1, 4, 21, 19, 8, 5, 5).with(2, 2, 1);
    // The real kernels pass through the same path, so a failure below is the mutation's.
    assert!(verdict_with(
        &gpu,
        ConvStage::Direct,
        &[kernel("conv-direct")],
        &shape
    ));
    assert!(verdict_with(
        &gpu,
        ConvStage::Tiled,
        &[kernel("conv-tiled")],
        &stride2
    ));
    // The direct stage reading the filter transposed (r and s swapped).
    let transposed = mutant(
        "conv-direct",
        "let fb = (r * cv.s + s) * cv.c;",
        "let fb = (s * cv.r + r) * cv.c;",
    );
    assert!(!verdict_with(
        &gpu,
        ConvStage::Direct,
        &[&transposed],
        &shape
    ));
    // The implicit GEMM decoding the reduction index with r and s swapped.
    let transposed = mutant(
        "conv-implicit-gemm",
        "let ih = o.ih + i32((rs / cv.s) * cv.dil);\n    let iw = o.iw + i32((rs % cv.s) * cv.dil);",
        "let ih = o.ih + i32((rs % cv.s) * cv.dil);\n    let iw = o.iw + i32((rs / cv.s) * cv.dil);",
    );
    assert!(!verdict_with(
        &gpu,
        ConvStage::ImplicitGemm,
        &[&transposed],
        &shape
    ));
    // The tiled stage staging a patch one row short: the halo's last row is never loaded.
    let short_halo = mutant(
        "conv-tiled",
        "let th = (TP - 1u) * cv.stride + cv.dil * (cv.r - 1u) + 1u;",
        "let th = (TP - 1u) * cv.stride + cv.dil * (cv.r - 1u);",
    );
    assert!(!verdict_with(
        &gpu,
        ConvStage::Tiled,
        &[&short_halo],
        &shape
    ));
    assert!(!verdict_with(
        &gpu,
        ConvStage::Tiled,
        &[&short_halo],
        &stride2
    ));
    // im2col writing each window shifted by one column.
    let shifted = mutant(
        "conv-im2col",
        "let iw = conv_in(q, s);",
        "let iw = conv_in(q, s) + 1;",
    );
    assert!(!verdict_with(
        &gpu,
        ConvStage::Im2colGemm,
        &[&shifted],
        &shape
    ));
    // Split-K's reduction forgetting the last slice.
    let split = ConvShape::new(1, 64, 5, 5, 8, 5, 5).with(1, 2, 1);
    assert!(verdict_with(&gpu, ConvStage::ImplicitGemm, &[], &split));
    let dropped = mutant(
        "conv-splitk-reduce",
        "z < sizes.splits;",
        "z + 1u < sizes.splits;",
    );
    assert!(!verdict_with(
        &gpu,
        ConvStage::ImplicitGemm,
        &[&dropped],
        &split
    ));
}

#[test]
fn bad_shapes_and_mismatched_data_are_errors_not_panics() {
    let gpu = gpu();
    let opts = RunOptions::default();
    let bad = ConvShape::new(1, 1, 2, 2, 1, 5, 5);
    assert!(matches!(
        pollster::block_on(run_conv(
            &gpu,
            ConvStage::Direct,
            &bad,
            &[0.0; 4],
            &[0.0; 25],
            &opts
        )),
        Err(ConvError::Shape(_))
    ));
    let ok = ConvShape::new(1, 2, 4, 4, 3, 3, 3);
    assert_eq!(
        pollster::block_on(run_conv(
            &gpu,
            ConvStage::Tiled,
            &ok,
            &[0.0; 3],
            &[0.0; 54],
            &opts
        ))
        .err(),
        Some(ConvError::WrongInputLength)
    );
    assert_eq!(
        pollster::block_on(run_conv(
            &gpu,
            ConvStage::Pointwise,
            &ok,
            &[0.0; 32],
            &[0.0; 54],
            &opts
        ))
        .err(),
        Some(ConvError::NotPointwise)
    );
}

/// The catalogue's own test checks ids, workgroup sizes and overrides of every registered
/// kernel; conv headers must also state launch geometry and buffer layout.
#[test]
fn conv_shader_headers_state_geometry_and_layout() {
    // direct, tiled, im2col, the implicit GEMM in four blocks, the split-K reduction
    assert_eq!(KERNELS.len(), 4 + IG_TILES.len());
    for k in KERNELS {
        let src = k.wgsl();
        for part in ["Launch geometry", "Buffer layout"] {
            assert!(src.contains(part), "{}: header lacks {part}", k.id);
        }
    }
}
