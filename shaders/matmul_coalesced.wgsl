// Coalesced matrix multiply: C = A · B, one invocation per output element — like the naive
// kernel, but neighbouring invocations now own neighbouring COLUMNS of C.
//
// Launch geometry: workgroup_size(16, 16); dispatch (ceil(N / 16), ceil(M / 16), 1).
//   global_invocation_id.x -> column of C, global_invocation_id.y -> row of C.
//   The lanes of a subgroup share one row: their reads of A hit the same word (a broadcast)
//   and their reads of B and writes of C are consecutive addresses, so each subgroup access
//   becomes a few 32-byte sectors instead of one sector per lane.
// Buffer layout (all f32, row-major, tightly packed):
//   @binding(0) a: M×K, read-only storage
//   @binding(1) b: K×N, read-only storage
//   @binding(2) c: M×N, read-write storage
//   @binding(3) dims: uniform { m, n, k, _pad } (u32)
// Invocations outside M×N return without touching memory.

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= dims.m || col >= dims.n) {
        return;
    }
    var acc = 0.0;
    for (var p = 0u; p < dims.k; p = p + 1u) {
        acc = acc + a[row * dims.k + p] * b[p * dims.n + col];
    }
    c[row * dims.n + col] = acc;
}
