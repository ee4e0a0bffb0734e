//! What a kernel is: [`KernelSpec`], the description every family module gives of each of its
//! kernels. This module knows no family and no kernel; the lists live in `family/`.

use std::hash::{Hash, Hasher};

use cpu_kernels::verify::Precision;

use crate::workload::Workload;

/// The family fixes the buffer layout (bindings), the CPU reference and the verification. Each
/// variant has one module under `family/` and one line in its registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// C = A·B (`family/matmul.rs`).
    Matmul,
    /// Records when workgroups start and end (`family/schedule.rs`).
    Schedule,
    /// The tiny MLP's training kernels (`family/mlp.rs`); run by a training session.
    Mlp,
    /// Measuring kernels of the lessons (`family/measure.rs`).
    Measure,
    /// 2-D convolution stages (`family/conv.rs`); run as plans by `conv::run_conv`, no `Job`.
    Conv,
    /// INT8 and double-float matmuls of lessons 14 and 15 (`family/numeric.rs`); run by its
    /// own plans, no `Job`.
    Numeric,
    /// The CNN page's training kernels (`family/cnn.rs`); run by a `cnn_training` session,
    /// no `Job`.
    Cnn,
    /// Causal self-attention, naive and fused (`family/attention.rs`); run as plans by
    /// `attention::run_attention`, no `Job`.
    Attention,
    /// The GPT's LayerNorm and GELU kernels (`family/gpt.rs`); run as plans by its `run_*`
    /// functions, no `Job`.
    Gpt,
}

/// How the inputs and output are laid out in GPU buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// f32, tightly packed, as the job holds them.
    F32,
    /// f32 read and written as vec4: K and N are padded with zeros up to multiples of 4 (the
    /// uniform carries the padded sizes) and the padded columns of C are dropped on readback.
    F32Vec4,
    /// A and B uploaded as IEEE binary16; C is f32.
    F16Inputs,
    /// As [`Storage::F32Vec4`], but M and N padded with zeros up to multiples of 128 and K up
    /// to a multiple of 32 (`family::matmul::TILE_PAD_*`), so a kernel whose tiles divide them
    /// needs no bounds tests; the padding is dropped on readback.
    F32Vec4Tiles,
    /// A and B uploaded as IEEE binary16 and padded with zeros like [`Storage::F32Vec4Tiles`]
    /// (M and N to multiples of 128, K of 32), C f32 with the same padding, dropped on
    /// readback: the Tensor Core stage's whole 16×16 tiles need no bounds tests.
    F16Tiles,
}

/// Where a kernel's WGSL comes from: built from files in `shaders/` (built-in kernels), or
/// text made at run time (an edited copy of a kernel).
#[derive(Clone, Debug)]
pub enum KernelSource {
    Built(fn() -> String),
    Text(String),
}

/// Everything needed to compile, launch and check one kernel. Built-in kernels are statics
/// in their family's module; a spec with [`KernelSource::Text`] can be made at run time.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// Stable id, used in URLs and as the prefix of its text keys.
    pub id: &'static str,
    /// Path of its WGSL file relative to the repository root, shown to learners.
    pub source_path: &'static str,
    /// The complete WGSL as compiled (see [`KernelSpec::wgsl`]).
    pub source: KernelSource,
    pub entry_point: &'static str,
    pub family: Family,
    /// Values for the shader's `override` constants (tile sizes).
    pub constants: &'static [(&'static str, f64)],
    /// The workgroup size the shader ends up with after its overrides; a test checks it
    /// against the shader.
    pub workgroup_size: [u32; 3],
    /// Workgroups to dispatch for a workload (the family module's grid function).
    pub grid: fn(&Workload) -> [u32; 3],
    pub storage: Storage,
    /// Device features the kernel needs; without them it is shown as unavailable.
    pub required_features: wgpu::Features,
    /// How it rounds, which sets its error bound.
    pub precision: Precision,
    /// Translation key of its short title.
    pub title_key: &'static str,
    /// Translation key of its one-paragraph explanation.
    pub summary_key: &'static str,
}

impl KernelSpec {
    /// The complete WGSL this kernel compiles from.
    pub fn wgsl(&self) -> String {
        match &self.source {
            KernelSource::Built(f) => f(),
            KernelSource::Text(s) => s.clone(),
        }
    }

    /// The side T of the T×T×T cooperative-matrix tiles (f16 inputs, f32 accumulators) the
    /// kernel's WGSL declares (`coop_mat16x16`, `coop_mat8x8`), `None` where it uses none:
    /// what an adapter must offer besides the feature (`Gpu::cannot_run`).
    pub fn cooperative_tile(&self) -> Option<u32> {
        let src = self.wgsl();
        if src.contains("coop_mat16x16") {
            Some(16)
        } else if src.contains("coop_mat8x8") {
            Some(8)
        } else {
            None
        }
    }

    /// Workgroups to dispatch for this workload.
    pub fn workgroups(&self, w: &Workload) -> [u32; 3] {
        (self.grid)(w)
    }

    /// The same kernel compiled from other WGSL (an edited copy): same id, family, layout and
    /// checks, its own pipeline (the cache is keyed by the source, not the id).
    pub fn with_source(&self, wgsl: String) -> KernelSpec {
        KernelSpec {
            source: KernelSource::Text(wgsl),
            ..self.clone()
        }
    }

    /// The pipeline cache key: a hash of what is compiled (source, entry point, constants),
    /// so two kernels with one id but different WGSL never share a pipeline.
    pub fn pipeline_key(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.wgsl().hash(&mut h);
        self.entry_point.hash(&mut h);
        for (name, value) in self.constants {
            name.hash(&mut h);
            value.to_bits().hash(&mut h);
        }
        h.finish()
    }
}
