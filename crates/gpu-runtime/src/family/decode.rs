//! The GPT's KV-cache decoding kernels: the decode step's embeddings (its position from the
//! GPU), storing keys and values into a layer's cache, attention of one new query per
//! sequence over the cache, and the step's position counter. The engine's decoder
//! (`engine::decode`) records them with the layer kernels the full forward uses; they are
//! checked there, inside the decoder's test against the CPU twin's full forward.

use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;
use cpu_kernels::verify::Precision;

const COMMON: &str = include_str!("../../../../shaders/gpt_decode_common.wgsl");
const EMBED_AT: &str = include_str!("../../../../shaders/gpt_embed_at.wgsl");
const KV_STORE: &str = include_str!("../../../../shaders/gpt_kv_store.wgsl");
const ATTENTION: &str = include_str!("../../../../shaders/attention_decode.wgsl");
const ADVANCE: &str = include_str!("../../../../shaders/gpt_decode_advance.wgsl");

fn no_grid(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

macro_rules! decode_kernel {
    ($id:literal, $path:literal, $src:ident, $wg:expr, $family:expr) => {
        KernelSpec {
            id: $id,
            source_path: $path,
            source: KernelSource::Built(|| format!("{}\n{COMMON}", $src)),
            entry_point: "main",
            family: $family,
            constants: &[],
            workgroup_size: $wg,
            grid: no_grid,
            storage: Storage::F32,
            required_features: wgpu::Features::empty(),
            precision: Precision::F32,
            title_key: concat!("kernel.", $id, ".title"),
            summary_key: concat!("kernel.", $id, ".summary"),
        }
    };
}

pub const EMBED_AT_ID: &str = "gpt-embed-at";
pub const KV_STORE_ID: &str = "gpt-kv-store";
pub const ATTENTION_ID: &str = "attention-decode";
pub const ADVANCE_ID: &str = "gpt-decode-advance";

pub static KERNELS: &[KernelSpec] = &[
    decode_kernel!(
        "gpt-embed-at",
        "shaders/gpt_embed_at.wgsl",
        EMBED_AT,
        [64, 1, 1],
        Family::Gpt
    ),
    decode_kernel!(
        "gpt-kv-store",
        "shaders/gpt_kv_store.wgsl",
        KV_STORE,
        [64, 1, 1],
        Family::Gpt
    ),
    decode_kernel!(
        "attention-decode",
        "shaders/attention_decode.wgsl",
        ATTENTION,
        [64, 1, 1],
        Family::Gpt
    ),
    decode_kernel!(
        "gpt-decode-advance",
        "shaders/gpt_decode_advance.wgsl",
        ADVANCE,
        [1, 1, 1],
        Family::Gpt
    ),
];

/// The uniform block of every decoding kernel (`shaders/gpt_decode_common.wgsl`), word by
/// word.
pub static UNIFORM: crate::plan::UniformLayout = crate::plan::UniformLayout {
    name: "Decode",
    words: &[
        "rows",
        "per_seq",
        "c",
        "heads",
        "cap",
        "from_state",
        "vocab",
        "wte",
        "wpe",
        "scale",
        "_p0",
        "_p1",
    ],
};
