//! `bench clamps [--kernels id,…]`: what wgpu's runtime checks add to each conv kernel's
//! SPIR-V (and to `matmul-vec4`, the GEMM of im2col + GEMM and of 1×1; then `matmul-tuned`
//! and the tuner's candidate `matmul-deep-k`; `--kernels` may also name tile variants such as
//! `matmul-tuned@128x128x8`), counted in the SPIR-V
//! naga writes for Vulkan with the options wgpu 30 passes it (wgpu-hal `vulkan/adapter.rs`
//! and `device.rs`), with the kernel's override constants applied as the pipeline does:
//!
//! - checked (`bench conv --checked`, Firefox): every array index clamped (`Restrict`:
//!   `UMin(i, len − 1)`), buffer accesses left to the driver's `robustBufferAccess2` (the
//!   H200 has it), a loop counter on every loop, checked integer division;
//! - trusted (the app natively): none of it.
//!
//! Reported per kernel: GLSL.std.450 `UMin` instructions (the shader's own `min()` calls are
//! in both counts, so checked − trusted is what the checks add), loops (`OpLoopMerge`), and
//! SPIR-V words. Tint's counts for the same kernels come from Dawn's `dump_shaders`
//! (`crates/bench/h200/conv_paths.sh`).

use gpu_runtime::conv::{conv_kernel, ConvStage, IG_TILES};
use gpu_runtime::KernelSpec;
use naga::back::spv;
use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};

/// Counts in one SPIR-V module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpirvCounts {
    pub umin: usize,
    /// `UMin`s inside a loop: between a loop's header (the block holding its OpLoopMerge)
    /// and its merge block, in naga's structured block order.
    pub umin_in_loops: usize,
    pub loops: usize,
    pub words: usize,
}

/// Counts `UMin` (GLSL.std.450 instruction 38 through OpExtInst), those inside loops, and
/// `OpLoopMerge`.
pub fn count(words: &[u32]) -> SpirvCounts {
    const OP_EXT_INST_IMPORT: u32 = 11;
    const OP_EXT_INST: u32 = 12;
    const OP_LOOP_MERGE: u32 = 246;
    const OP_LABEL: u32 = 248;
    const GLSL_UMIN: u32 = 38;
    let mut glsl = None;
    // Merge blocks of the loops we are inside.
    let mut open: Vec<u32> = Vec::new();
    let mut c = SpirvCounts {
        words: words.len(),
        ..Default::default()
    };
    let mut i = 5; // after the header
    while i < words.len() {
        let (len, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if len == 0 || i + len > words.len() {
            break;
        }
        let inst = &words[i..i + len];
        match op {
            OP_EXT_INST_IMPORT if len >= 3 => {
                let name: Vec<u8> = inst[2..].iter().flat_map(|w| w.to_le_bytes()).collect();
                if name.starts_with(b"GLSL.std.450") {
                    glsl = Some(inst[1]);
                }
            }
            OP_EXT_INST if len >= 5 && Some(inst[3]) == glsl && inst[4] == GLSL_UMIN => {
                c.umin += 1;
                c.umin_in_loops += usize::from(!open.is_empty());
            }
            OP_LOOP_MERGE if len >= 3 => {
                c.loops += 1;
                open.push(inst[1]);
            }
            OP_LABEL if len >= 2 => open.retain(|&m| m != inst[1]),
            _ => {}
        }
        i += len;
    }
    c
}

/// naga's SPIR-V for `k` as wgpu compiles it, with runtime checks or trusted.
pub fn spirv(k: &KernelSpec, checked: bool) -> Result<Vec<u32>, String> {
    let wgsl = k.wgsl();
    let module = naga::front::wgsl::parse_str(&wgsl).map_err(|e| e.emit_to_string(&wgsl))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| format!("{}: {e:?}", k.id))?;
    let mut constants = naga::back::PipelineConstants::default();
    for (name, v) in k.constants {
        constants.insert(name.to_string(), *v);
    }
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((naga::ShaderStage::Compute, k.entry_point)),
        &constants,
    )
    .map_err(|e| format!("{}: {e}", k.id))?;
    let policy = |on| {
        if on {
            BoundsCheckPolicy::Restrict
        } else {
            BoundsCheckPolicy::Unchecked
        }
    };
    let options = spv::Options {
        lang_version: (1, 6),
        flags: spv::WriterFlags::empty(),
        bounds_check_policies: BoundsCheckPolicies {
            index: policy(checked),
            // robustBufferAccess2 (the H200, lavapipe): buffers are the driver's.
            buffer: BoundsCheckPolicy::Unchecked,
            image_load: BoundsCheckPolicy::Unchecked,
            binding_array: BoundsCheckPolicy::Unchecked,
        },
        force_loop_bounding: checked,
        emit_int_div_checks: checked,
        ..Default::default()
    };
    let pipeline = spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: k.entry_point.to_string(),
    };
    spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| format!("{}: {e}", k.id))
}

/// The kernels every conv stage may dispatch, each once, in ladder order, then the implicit
/// GEMM's candidate blocks (dispatched only when a benchmark forces them).
pub fn conv_kernels() -> Vec<&'static KernelSpec> {
    let mut out: Vec<&'static KernelSpec> = Vec::new();
    let candidates = IG_TILES
        .iter()
        .filter(|t| !t.auto)
        .filter_map(|t| conv_kernel(t.id));
    for k in ConvStage::ALL
        .iter()
        .flat_map(|s| s.kernels())
        .chain(candidates)
    {
        if !out.iter().any(|o| o.id == k.id) {
            out.push(k);
        }
    }
    out
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut only: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--kernels" => only = value.split(',').map(str::to_string).collect(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    println!("naga's SPIR-V for Vulkan (wgpu 30's options), override constants applied");
    println!("\n| kernel | UMin trusted | UMin checked | added by the checks | of them in loops | loops (each gets a counter when checked) | words trusted → checked |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut kernels: Vec<KernelSpec> = conv_kernels().into_iter().cloned().collect();
    kernels.extend(gpu_runtime::kernel("matmul-tuned").cloned());
    kernels.extend(gpu_runtime::catalogue::CANDIDATES.iter().cloned());
    let listed = |id: &str| only.iter().any(|o| o == id);
    kernels.extend(gpu_runtime::catalogue::tile_variants().filter(|v| listed(v.id)));
    for k in kernels.iter().filter(|k| only.is_empty() || listed(k.id)) {
        let t = count(&spirv(k, false)?);
        let c = count(&spirv(k, true)?);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} → {} |",
            k.id,
            t.umin,
            c.umin,
            c.umin as i64 - t.umin as i64,
            c.umin_in_loops as i64 - t.umin_in_loops as i64,
            c.loops,
            t.words,
            c.words
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_add_clamps_and_the_trusted_path_has_none_of_them() {
        let kernels = conv_kernels();
        // Direct, tiled, im2col, eight implicit GEMM blocks (four of them candidates), the
        // split-K reduction, matmul-vec4.
        assert_eq!(kernels.len(), 13);
        for k in kernels {
            let t = count(&spirv(k, false).expect("compiles"));
            let c = count(&spirv(k, true).expect("compiles"));
            assert_eq!(t.loops, c.loops, "{}", k.id);
            assert!(c.words > t.words, "{}: {t:?} {c:?}", k.id);
            // Workgroup tiles are fixed-size arrays: Restrict clamps their indices.
            if k.id.starts_with("conv-implicit-gemm") || k.id == "matmul-vec4" {
                assert!(c.umin > t.umin, "{}: {t:?} {c:?}", k.id);
            }
        }
    }

    /// The Tensor Core stage runs only where a driver offers cooperative matrices, which the
    /// test machines may lack; its WGSL is still compiled here, both ways, to the SPIR-V
    /// wgpu would hand the driver, so a shader naga rejects never waits for a GPU to show
    /// it. `TENSOR_CORE_SPIRV_OUT=dir` also writes both modules there (for `spirv-val`).
    #[test]
    fn the_tensor_core_kernel_compiles_to_spirv_both_ways() {
        let ladder = gpu_runtime::kernel("matmul-tensor-core").expect("catalogued");
        let all: Vec<KernelSpec> = std::iter::once(ladder.clone())
            .chain(gpu_runtime::family::matmul::tensor_core_variants())
            .collect();
        for (k, checked) in all.iter().flat_map(|k| [(k, false), (k, true)]) {
            let words = spirv(k, checked).unwrap_or_else(|e| panic!("{e}"));
            // OpCapability CooperativeMatrixKHR (6022).
            assert!(
                words.windows(2).any(|w| w == [(2 << 16) | 17, 6022]),
                "no CooperativeMatrixKHR capability"
            );
            if let Some(dir) = std::env::var_os("TENSOR_CORE_SPIRV_OUT") {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                let name = format!(
                    "{}_{}.spv",
                    k.id.replace('@', "_"),
                    if checked { "checked" } else { "trusted" }
                );
                std::fs::write(std::path::Path::new(&dir).join(name), bytes).expect("written");
            }
        }
    }

    #[test]
    fn counts_only_glsl_umin() {
        // Header, OpExtInstImport %1 "GLSL.std.450", OpExtInst %t %r %1 UMin a b,
        // OpExtInst %t %r %1 UMax a b, OpLoopMerge.
        let name: Vec<u32> = b"GLSL.std.450\0\0\0\0"
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut w = vec![0x0723_0203, 0x0001_0600, 0, 100, 0];
        w.push(((2 + name.len() as u32) << 16) | 11);
        w.push(1);
        w.extend(&name);
        w.extend([(7 << 16) | 12, 2, 3, 1, 38, 4, 5]);
        w.extend([(7 << 16) | 12, 2, 6, 1, 41, 4, 5]);
        w.extend([(4 << 16) | 246, 7, 8, 0]);
        w.extend([(7 << 16) | 12, 2, 9, 1, 38, 4, 5]);
        w.extend([(2 << 16) | 248, 7]);
        w.extend([(7 << 16) | 12, 2, 10, 1, 38, 4, 5]);
        let c = count(&w);
        assert_eq!(
            (c.umin, c.umin_in_loops, c.loops, c.words),
            (3, 1, 1, w.len())
        );
    }
}
