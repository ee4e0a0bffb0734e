//! The glossary page (`#/learn/glossary`): one table of CUDA names, their WebGPU/WGSL
//! counterparts and the Chinese term every page uses. The names are code or product names and
//! live here; each row's explanation is translated (`gloss.<id>` in `locales/*/glossary-page.txt`).
//! Where a row's English name is also a term of `locales/glossary.txt`, the Chinese must be
//! that file's (checked by `crates/app/tests/glossary.rs`).

/// One row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// Key suffix and anchor: `gloss.<id>`, `#/learn/glossary#g-<id>`.
    pub id: &'static str,
    /// The plain English name of the idea (lower case, as in running text).
    pub english: &'static str,
    /// CUDA's name (C++ API or hardware term).
    pub cuda: &'static str,
    /// WebGPU/WGSL's name; "—" where WebGPU has none.
    pub wgsl: &'static str,
    /// The Chinese term.
    pub zh: &'static str,
}

macro_rules! term {
    ($id:literal, $en:literal, $cuda:literal, $wgsl:literal, $zh:literal) => {
        Term {
            id: $id,
            english: $en,
            cuda: $cuda,
            wgsl: $wgsl,
            zh: $zh,
        }
    };
}

/// Execution first, then memory, synchronisation, host side and hardware.
pub const TERMS: [Term; 32] = [
    term!("thread", "thread", "thread", "invocation", "线程"),
    term!("warp", "warp", "warp (32 threads)", "subgroup", "线程束"),
    term!("block", "thread block", "block", "workgroup", "线程块"),
    term!(
        "grid",
        "grid",
        "grid",
        "dispatch (grid of workgroups)",
        "网格"
    ),
    term!(
        "kernel",
        "kernel",
        "__global__ function",
        "@compute entry point",
        "内核"
    ),
    term!(
        "launch",
        "launch",
        "kernel<<<grid, block>>>(…)",
        "dispatchWorkgroups(x, y, z)",
        "启动"
    ),
    term!(
        "thread-idx",
        "thread index",
        "threadIdx",
        "@builtin(local_invocation_id)",
        "线程索引"
    ),
    term!(
        "block-idx",
        "block index",
        "blockIdx",
        "@builtin(workgroup_id)",
        "线程块索引"
    ),
    term!(
        "block-dim",
        "block size",
        "blockDim",
        "@workgroup_size(x, y, z)",
        "线程块大小"
    ),
    term!(
        "grid-dim",
        "grid size",
        "gridDim",
        "@builtin(num_workgroups)",
        "网格大小"
    ),
    term!(
        "global-id",
        "global thread index",
        "blockIdx * blockDim + threadIdx",
        "@builtin(global_invocation_id)",
        "全局线程索引"
    ),
    term!(
        "lane",
        "lane",
        "threadIdx.x % 32",
        "@builtin(subgroup_invocation_id)",
        "通道"
    ),
    term!(
        "divergence",
        "divergence",
        "warp divergence",
        "non-uniform control flow",
        "分支发散"
    ),
    term!(
        "global-memory",
        "global memory",
        "global memory (cudaMalloc)",
        "var<storage>",
        "全局内存"
    ),
    term!(
        "shared-memory",
        "shared memory",
        "__shared__",
        "var<workgroup>",
        "共享内存"
    ),
    term!(
        "registers",
        "registers",
        "local variables (registers)",
        "var<function> / let",
        "寄存器"
    ),
    term!(
        "constant",
        "constant memory",
        "__constant__",
        "var<uniform>",
        "常量内存"
    ),
    term!(
        "barrier",
        "barrier",
        "__syncthreads()",
        "workgroupBarrier()",
        "屏障"
    ),
    term!(
        "shuffle",
        "shuffle",
        "__shfl_sync()",
        "subgroupShuffle()",
        "线程束洗牌"
    ),
    term!(
        "atomic",
        "atomic",
        "atomicAdd()",
        "atomicAdd(&a, v)",
        "原子操作"
    ),
    term!(
        "coalescing",
        "coalescing",
        "coalesced access",
        "—",
        "合并访存"
    ),
    term!(
        "bank-conflict",
        "bank conflict",
        "bank conflict",
        "—",
        "存储体冲突"
    ),
    term!("occupancy", "occupancy", "occupancy", "—", "占用率"),
    term!(
        "sm",
        "streaming multiprocessor",
        "SM",
        "— (not exposed)",
        "流式多处理器"
    ),
    term!(
        "tensor-core",
        "tensor core",
        "Tensor Core (wmma, mma)",
        "— (not exposed)",
        "张量核心"
    ),
    term!(
        "half",
        "half precision",
        "__half",
        "f16 (shader-f16)",
        "半精度"
    ),
    term!("stream", "stream", "cudaStream_t", "GPUQueue", "流"),
    term!(
        "alloc",
        "allocation",
        "cudaMalloc()",
        "device.createBuffer()",
        "显存分配"
    ),
    term!(
        "upload",
        "upload",
        "cudaMemcpy(HostToDevice)",
        "queue.writeBuffer()",
        "上传"
    ),
    term!(
        "readback",
        "readback",
        "cudaMemcpy(DeviceToHost)",
        "mapAsync()",
        "回读"
    ),
    term!(
        "unified-memory",
        "unified memory",
        "cudaMallocManaged()",
        "—",
        "统一内存"
    ),
    term!(
        "timestamp",
        "timestamp",
        "cudaEventRecord()",
        "timestamp-query",
        "时间戳"
    ),
];

pub fn term(id: &str) -> Option<&'static Term> {
    TERMS.iter().find(|t| t.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_unique_and_url_safe_and_enough_rows() {
        assert!(TERMS.len() >= 25);
        for (i, t) in TERMS.iter().enumerate() {
            assert!(
                t.id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{}",
                t.id
            );
            assert_eq!(
                TERMS.iter().position(|u| u.id == t.id),
                Some(i),
                "{} twice",
                t.id
            );
            assert!(
                !t.zh.is_empty() && !t.zh.is_ascii(),
                "{}: Chinese term",
                t.id
            );
            assert_eq!(t.english, t.english.to_lowercase());
        }
        // One Chinese term per idea.
        for t in &TERMS {
            assert_eq!(TERMS.iter().filter(|u| u.zh == t.zh).count(), 1, "{}", t.zh);
        }
        assert_eq!(term("warp").map(|t| t.wgsl), Some("subgroup"));
        assert!(term("nope").is_none());
    }
}
