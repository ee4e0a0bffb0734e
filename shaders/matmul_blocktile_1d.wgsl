// 1D block-tiled matrix multiply: C = A · B. Like the tiled kernel, a workgroup stages blocks
// of A and B in shared memory, but each invocation now computes TM = 16 outputs down one
// column of C. It loads one value of B into a register and reuses it 16 times, so there are
// far fewer shared-memory reads per multiply-add (higher arithmetic intensity per invocation).
//
// Parameters (override constants): BM = 64 rows and BN = 64 columns of C per workgroup,
//   BK = 8 (the K-slice staged per step). TM = 16 is fixed by the code: the 16 accumulators
//   are four vec4 registers indexed by constants (a dynamically indexed array would spill to
//   slow local memory once naga and the driver compile it).
// Launch geometry: workgroup_size(BN, BM / 16) = 64×4 = 256 invocations;
//   dispatch (ceil(N / BN), ceil(M / BM), 1). Invocation (x, y) owns column x of the block and
//   rows 16y … 16y+15.
// Buffer layout (all f32, row-major, tightly packed):
//   @binding(0) a: M×K, read-only storage
//   @binding(1) b: K×N, read-only storage
//   @binding(2) c: M×N, read-write storage
//   @binding(3) dims: uniform { m, n, k, _pad } (u32)
// Shared memory: the A block is stored transposed (k-major) as vec4s, so an invocation reads
// its 16 rows as four vec4 loads.

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

override BM: u32 = 64u;
override BN: u32 = 64u;
override BK: u32 = 8u;
const TM: u32 = 16u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

// as4[k * BM/4 + m/4][m % 4] = A[row0 + m][k0 + k]
var<workgroup> as4: array<vec4<f32>, BK * BM / 4u>;
// bs[k * BN + n] = B[k0 + k][col0 + n]
var<workgroup> bs: array<f32, BK * BN>;

fn store_column4(row: u32, col: u32, v: vec4<f32>) {
    if (col >= dims.n) {
        return;
    }
    if (row < dims.m) { c[row * dims.n + col] = v.x; }
    if (row + 1u < dims.m) { c[(row + 1u) * dims.n + col] = v.y; }
    if (row + 2u < dims.m) { c[(row + 2u) * dims.n + col] = v.z; }
    if (row + 3u < dims.m) { c[(row + 3u) * dims.n + col] = v.w; }
}

@compute @workgroup_size(BN, BM / 16u, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let threads = BN * (BM / TM);
    let tid = lid.y * BN + lid.x;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    let tiles = (dims.k + BK - 1u) / BK;
    for (var t = 0u; t < tiles; t = t + 1u) {
        let k0 = t * BK;
        // Consecutive invocations read consecutive k of one row of A (BK floats per row).
        for (var i = tid; i < BM * BK; i = i + threads) {
            let m = i / BK;
            let kk = i % BK;
            let gr = row0 + m;
            let gk = k0 + kk;
            var v = 0.0;
            if (gr < dims.m && gk < dims.k) {
                v = a[gr * dims.k + gk];
            }
            as4[kk * (BM / 4u) + m / 4u][m % 4u] = v;
        }
        // Consecutive invocations read consecutive columns of one row of B: coalesced.
        for (var i = tid; i < BK * BN; i = i + threads) {
            let kk = i / BN;
            let nn = i % BN;
            let gk = k0 + kk;
            let gc = col0 + nn;
            var v = 0.0;
            if (gk < dims.k && gc < dims.n) {
                v = b[gk * dims.n + gc];
            }
            bs[i] = v;
        }
        workgroupBarrier();
        let r4 = lid.y * (TM / 4u);
        for (var kk = 0u; kk < BK; kk = kk + 1u) {
            let bv = bs[kk * BN + lid.x];
            let base = kk * (BM / 4u) + r4;
            acc0 = acc0 + as4[base] * bv;
            acc1 = acc1 + as4[base + 1u] * bv;
            acc2 = acc2 + as4[base + 2u] * bv;
            acc3 = acc3 + as4[base + 3u] * bv;
        }
        workgroupBarrier();
    }
    let r = row0 + lid.y * TM;
    let col = col0 + lid.x;
    store_column4(r, col, acc0);
    store_column4(r + 4u, col, acc1);
    store_column4(r + 8u, col, acc2);
    store_column4(r + 12u, col, acc3);
}
