//! The kernel catalogue: lookups over every family's kernels (`family/`), where each kernel
//! is described exactly once.
//!
//! A consumer (run widget, ladder, visualiser, race, tests, benchmarks) looks a kernel up by id
//! and hands it to [`crate::Gpu::run`]; it never builds bind groups or dispatch sizes itself.
//! To add a kernel: put its WGSL in `shaders/`, add one entry to its family module's
//! `KERNELS`, and add its title and summary keys to both translation tables of the app.

pub use crate::family::matmul::{
    deep_k_tiles, deep_k_variant, double_buffer_tiles, double_buffer_variant, tile_variants,
    tuned_tiles, tuned_variant, CANDIDATES, TILE_PAD_K, TILE_PAD_MN,
};
use crate::family::REGISTRY;
pub use crate::spec::{Family, KernelSource, KernelSpec, Storage};

/// Every built-in kernel, family by family, each family's in ladder order.
pub fn kernels() -> impl Iterator<Item = &'static KernelSpec> {
    REGISTRY.iter().flat_map(|(_, ks)| ks.iter())
}

/// Looks a kernel up by id.
pub fn kernel(id: &str) -> Option<&'static KernelSpec> {
    kernels().find(|k| k.id == id)
}

/// Edited kernels standing in for catalogue ones in a training session's plans (the MLP's and
/// the CNN's): each must replace a kernel one of the session's dispatches runs (`runs`), or it
/// would be silently ignored, so it is refused by name; a dispatch then runs the replacement
/// of its kernel when there is one ([`Replacements::spec`]).
pub struct Replacements<'a>(&'a [&'a KernelSpec]);

impl<'a> Replacements<'a> {
    pub fn checked(
        list: &'a [&'a KernelSpec],
        runs: impl Fn(&str) -> bool,
    ) -> Result<Self, crate::context::GpuError> {
        match list.iter().find(|r| !runs(r.id)) {
            Some(unused) => Err(crate::context::GpuError::Dispatch(format!(
                "{} does not run in this network's training step",
                unused.id
            ))),
            None => Ok(Self(list)),
        }
    }

    /// What a dispatch of `id` binds after its uniform: the loop-budget flag when `id` is a
    /// replaced kernel rewritten with a budget. The rewrite declared the flag just after the
    /// uniform, at binding `bound + 1` for a kernel with `bound` buffers; a flag anywhere else
    /// would alias a binding or be dropped (a stopped loop unreported), so it is refused.
    pub fn after_uniform(
        &self,
        flag: Option<crate::plan::LoopFlag>,
        id: &str,
        bound: usize,
    ) -> Result<Vec<&'static str>, crate::context::GpuError> {
        match flag {
            Some(f) if self.0.iter().any(|r| r.id == id) => {
                if f.binding as usize != bound + 1 {
                    return Err(crate::context::GpuError::Dispatch(format!(
                        "the loop-budget flag is at binding {}, but {id} binds {bound} buffers \
                         and its uniform before it",
                        f.binding
                    )));
                }
                Ok(vec![crate::plan::LOOP_FLAG])
            }
            _ => Ok(Vec::new()),
        }
    }

    /// The kernel a dispatch of `id` runs: its replacement, else the catalogue's.
    pub fn spec(&self, id: &str) -> Result<&'a KernelSpec, crate::context::GpuError> {
        self.0
            .iter()
            .copied()
            .find(|k| k.id == id)
            .or_else(|| kernel(id))
            .ok_or_else(|| crate::context::GpuError::Shader(format!("{id} is not catalogued")))
    }
}

/// WebGPU names of the optional features the catalogue's kernels may need.
const FEATURE_NAMES: [(wgpu::Features, &str); 3] = [
    (wgpu::Features::SHADER_F16, "shader-f16"),
    (wgpu::Features::SUBGROUP, "subgroups"),
    (
        wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
        "wgpu-cooperative-matrix",
    ),
];

impl KernelSpec {
    /// The WebGPU names of the features this kernel needs (`shader-f16`, `subgroups`; wgpu's
    /// own name for its native cooperative matrices, which WebGPU does not have).
    pub fn feature_names(&self) -> Vec<&'static str> {
        FEATURE_NAMES
            .iter()
            .filter(|(f, _)| self.required_features.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }

    /// The kernels of a family, in ladder order, with their stage numbers (from 1).
    pub fn ladder(family: Family) -> impl Iterator<Item = (usize, &'static KernelSpec)> {
        kernels()
            .filter(move |k| k.family == family)
            .enumerate()
            .map(|(i, k)| (i + 1, k))
    }

    /// The previous stage of this kernel's ladder, if any.
    pub fn previous(&self) -> Option<&'static KernelSpec> {
        let mut prev = None;
        for (_, k) in Self::ladder(self.family) {
            if k.id == self.id {
                return prev;
            }
            prev = Some(k);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;
    use cpu_kernels::matmul::MatmulSize;

    /// The workgroup size a shader declares, with its override defaults substituted.
    fn declared_workgroup_size(k: &KernelSpec) -> [u32; 3] {
        let src = k.wgsl();
        let start = src.find("@workgroup_size(").expect("a workgroup size") + 16;
        let end = start + src[start..].find(')').expect("closing paren");
        let dims: Vec<u32> = src[start..end]
            .split(',')
            .map(|expr| {
                // Each dimension is a literal or an override, or a product of them, or one
                // of those divided by literals (`BN / 8u`, `BM * BN / 64u`).
                let value = |p: &str| {
                    let p = p.trim().trim_end_matches('u');
                    p.parse::<u32>().unwrap_or_else(|_| {
                        k.constants
                            .iter()
                            .find(|(name, _)| *name == p)
                            .map(|(_, v)| *v as u32)
                            .unwrap_or_else(|| panic!("{}: unknown size `{p}`", k.id))
                    })
                };
                let mut parts = expr
                    .split('/')
                    .map(|p| p.split('*').map(value).product::<u32>());
                let first = parts.next().unwrap_or(1);
                parts.fold(first, |acc, d| acc / d)
            })
            .collect();
        [
            dims[0],
            *dims.get(1).unwrap_or(&1),
            *dims.get(2).unwrap_or(&1),
        ]
    }

    #[test]
    fn specs_agree_with_their_shaders() {
        for (i, k) in kernels().enumerate() {
            assert!(
                kernels().take(i).all(|o| o.id != k.id),
                "duplicate {}",
                k.id
            );
            let src = k.wgsl();
            assert_eq!(declared_workgroup_size(k), k.workgroup_size, "{}", k.id);
            assert!(src.contains(&format!("fn {}(", k.entry_point)));
            let first_code = src.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            assert!(
                first_code.starts_with("//") || first_code.starts_with("enable "),
                "{} needs a header comment",
                k.id
            );
            for (name, _) in k.constants {
                assert!(
                    src.contains(&format!("override {name}:")),
                    "{}: {name}",
                    k.id
                );
            }
            assert!(k.title_key.starts_with(&format!("kernel.{}.", k.id)));
            assert!(
                k.workgroup_size.iter().product::<u32>() <= 256,
                "WebGPU's default limit"
            );
        }
    }

    #[test]
    fn ladder_order_and_features() {
        let ids: Vec<&str> = KernelSpec::ladder(Family::Matmul)
            .map(|(_, k)| k.id)
            .collect();
        assert_eq!(ids.len(), 11);
        assert_eq!(ids[10], "matmul-tensor-core");
        assert_eq!(ids[0], "matmul-naive");
        assert!(kernel("matmul-naive").and_then(|k| k.previous()).is_none());
        assert_eq!(
            kernel("matmul-coalesced")
                .and_then(|k| k.previous())
                .map(|k| k.id),
            Some("matmul-naive")
        );
        assert_eq!(
            kernel("matmul-f16").map(|k| k.feature_names()),
            Some(vec!["shader-f16"])
        );
        assert_eq!(
            kernel("matmul-subgroup").map(|k| k.feature_names()),
            Some(vec!["subgroups"])
        );
    }

    #[test]
    fn tuned_variants_match_their_shapes() {
        assert_eq!(tuned_tiles().count(), 8);
        for (bm, bn, bk) in tuned_tiles() {
            let k = tuned_variant(bm, bn, bk).expect("listed shape");
            assert_eq!(k.id, format!("matmul-tuned@{bm}x{bn}x{bk}"));
            assert_eq!(k.workgroup_size, [bn / 8, bm / 8, 1]);
            assert_eq!(declared_workgroup_size(&k), k.workgroup_size, "{}", k.id);
            // Each invocation loads 1, 2 or 4 vec4s of each block; the kernel has no other case.
            for loads in [16 * bk / bn, 16 * bk / bm] {
                assert!([1, 2, 4].contains(&loads), "{}", k.id);
            }
            let w = Workload::Matmul(MatmulSize::new(129, 129, 7));
            assert_eq!(
                k.workgroups(&w),
                [129u32.div_ceil(bn), 129u32.div_ceil(bm), 1]
            );
        }
        assert!(tuned_variant(32, 32, 8).is_none());
    }

    #[test]
    fn double_buffer_variants_match_their_shapes() {
        assert_eq!(double_buffer_tiles().count(), 5);
        for (bm, bn, bk) in double_buffer_tiles() {
            let k = double_buffer_variant(bm, bn, bk).expect("listed shape");
            assert_eq!(k.id, format!("matmul-double-buffer@{bm}x{bn}x{bk}"));
            assert_eq!(k.workgroup_size, [bm * bn / 64, 1, 1]);
            assert_eq!(declared_workgroup_size(&k), k.workgroup_size, "{}", k.id);
            // Whole warps of 32, each a 32×64 tile: BN a multiple of 64, BM of 32.
            assert_eq!(bn % 64, 0, "{}", k.id);
            assert_eq!(bm % 32, 0, "{}", k.id);
            for loads in [16 * bk / bn, 16 * bk / bm] {
                assert!([1, 2, 4].contains(&loads), "{}", k.id);
            }
            // Two buffers of both operands within WebGPU's default workgroup storage.
            assert!(2 * bk * (bm + bn) * 4 <= 16384, "{}", k.id);
            let w = Workload::Matmul(MatmulSize::new(129, 129, 7));
            assert_eq!(
                k.workgroups(&w),
                [129u32.div_ceil(bn), 129u32.div_ceil(bm), 1]
            );
        }
        assert!(double_buffer_variant(128, 128, 16).is_none());
        assert_eq!(
            tile_variants().count(),
            tuned_tiles().count() + double_buffer_tiles().count() + deep_k_tiles().count()
        );
    }

    #[test]
    fn deep_k_variants_match_their_shapes() {
        assert_eq!(deep_k_tiles().count(), 5);
        // A tuner's candidate, not a ladder stage: not in the registry.
        assert!(kernel("matmul-deep-k").is_none());
        for (bm, bn, bk) in deep_k_tiles() {
            let k = deep_k_variant(bm, bn, bk).expect("listed shape");
            assert_eq!(k.id, format!("matmul-deep-k@{bm}x{bn}x{bk}"));
            assert_eq!(k.workgroup_size, [bn / 8, bm / 8, 1]);
            assert_eq!(declared_workgroup_size(&k), k.workgroup_size, "{}", k.id);
            let threads = bm * bn / 64;
            for loads in [bk * bm / 4 / threads, bk * bn / 4 / threads] {
                assert!((1..=8).contains(&loads), "{}", k.id);
            }
            assert_eq!(bk * bm / 4 % threads, 0, "{}", k.id);
            assert_eq!(bk * bn / 4 % threads, 0, "{}", k.id);
            // Both blocks exactly, within WebGPU's default workgroup storage; K padded to
            // TILE_PAD_K splits into whole blocks of BK, eight steps per inner iteration.
            assert!(bk * (bm + bn) * 4 <= 16384, "{}", k.id);
            assert_eq!(TILE_PAD_K % bk, 0);
            assert_eq!(bk % 8, 0);
            let w = Workload::Matmul(MatmulSize::new(129, 129, 7));
            assert_eq!(
                k.workgroups(&w),
                [129u32.div_ceil(bn), 129u32.div_ceil(bm), 1]
            );
        }
        let base = &CANDIDATES[0];
        assert_eq!(base.workgroup_size, declared_workgroup_size(base));
        assert!(deep_k_variant(128, 128, 32).is_none());
    }

    #[test]
    fn grids_cover_odd_sizes() {
        let w = Workload::Matmul(MatmulSize::new(129, 65, 7));
        let grid = |id: &str| kernel(id).map(|k| k.workgroups(&w));
        assert_eq!(grid("matmul-naive"), Some([9, 5, 1]));
        assert_eq!(grid("matmul-coalesced"), Some([5, 9, 1]));
        assert_eq!(grid("matmul-vec4"), Some([1, 2, 1]));
        assert_eq!(grid("matmul-tuned"), Some([1, 3, 1]));
        assert_eq!(grid("matmul-double-buffer"), Some([1, 2, 1]));
        assert_eq!(grid("matmul-subgroup"), Some([2, 129, 1]));
        assert_eq!(grid("matmul-tensor-core"), Some([1, 2, 1]));
    }
}
