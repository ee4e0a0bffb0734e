// Subgroup matrix multiply: C = A · B, sharing through registers instead of shared memory.
// All invocations of a workgroup work on the same row of C. Within a subgroup (a warp), each
// lane loads ONE value of that row of A; the lanes then pass the values around with
// subgroupShuffle, so a row segment of A is read from memory once per subgroup and never
// touches shared memory or a barrier. Works for any subgroup size up to 64 (4 on SwiftShader,
// 32 on NVIDIA, 64 on many AMD GPUs).
//
// Needs the device feature `subgroups`.
// Launch geometry: workgroup_size(64); dispatch (ceil(N / 64), M, 1).
//   Invocation x of workgroup (i, j) computes C[j][64i + x].
// Buffer layout (all f32, row-major, tightly packed):
//   @binding(0) a: M×K, read-only storage
//   @binding(1) b: K×N, read-only storage
//   @binding(2) c: M×N, read-write storage
//   @binding(3) dims: uniform { m, n, k, _pad } (u32)
// Every lane executes every shuffle (out-of-range lanes contribute zeros), so the subgroup
// operations stay in uniform control flow.

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

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let row = wg.y;
    let col = wg.x * 64u + lid.x;
    var acc = 0.0;
    for (var k0 = 0u; k0 < dims.k; k0 = k0 + sg_size) {
        var mine = 0.0;
        if (row < dims.m && k0 + lane < dims.k) {
            mine = a[row * dims.k + k0 + lane];
        }
        for (var j = 0u; j < sg_size; j = j + 1u) {
            let av = subgroupShuffle(mine, j);
            var bv = 0.0;
            if (k0 + j < dims.k && col < dims.n) {
                bv = b[(k0 + j) * dims.n + col];
            }
            acc = acc + av * bv;
        }
    }
    if (row < dims.m && col < dims.n) {
        c[row * dims.n + col] = acc;
    }
}
