// Naive matrix multiply: C = A · B, one invocation per output element.
//
// Launch geometry: workgroup_size(16, 16); dispatch (ceil(M / 16), ceil(N / 16), 1).
//   global_invocation_id.x -> row of C, global_invocation_id.y -> column of C.
//   Neighbouring invocations in a subgroup differ in x, so they read different ROWS of A
//   and write elements N floats apart in C: this is the uncoalesced mapping the ladder's
//   next stage fixes.
// Buffer layout (all f32, row-major, tightly packed):
//   @binding(0) a: M×K, read-only storage
//   @binding(1) b: K×N, read-only storage
//   @binding(2) c: M×N, read-write storage
//   @binding(3) dims: uniform { m, n, k, _pad } (u32)
// Invocations outside M×N (the edges of the last workgroups) return without touching memory.

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
    let row = gid.x;
    let col = gid.y;
    if (row >= dims.m || col >= dims.n) {
        return;
    }
    var acc = 0.0;
    for (var p = 0u; p < dims.k; p = p + 1u) {
        acc = acc + a[row * dims.k + p] * b[p * dims.n + col];
    }
    c[row * dims.n + col] = acc;
}
