// Vectorised 2D block-tiled matrix multiply: C = A · B, as the 2D kernel but every global
// load and store moves a vec4 (16 bytes) instead of one f32, so a workgroup fetches its blocks
// with a quarter of the memory instructions and C is written four columns at a time. It also
// fetches the NEXT blocks of A and B into registers while it computes on the current ones in
// shared memory (software pipelining), so global-memory latency hides behind arithmetic.
//
// Source: matmul_regtile_common.wgsl (outer_product_8x8) is appended by the catalogue.
// Parameters (override constants): BM = BN = 128, BK = 16. The prefetch keeps exactly two
//   vec4s of A and two of B per invocation in registers, so BM·BK/4 and BK·BN/4 must both
//   equal 2 × the workgroup size (512 for the defaults).
// Launch geometry: workgroup_size(BN / 8, BM / 8) = 16×16 = 256 invocations;
//   dispatch (ceil(N / BN), ceil(M / BM), 1); the same split 4+4 rows and columns per
//   invocation as the 2D kernel.
// Buffer layout: vec4<f32> rows, so the runtime pads K and N up to multiples of 4 with zeros
//   (zeros add nothing to a dot product) and drops the padded columns of C on readback:
//   @binding(0) a: M×K4 floats (K4 = K rounded up to 4), read-only storage, as vec4
//   @binding(1) b: K4×N4 floats, read-only storage, as vec4
//   @binding(2) c: M×N4 floats, read-write storage, as vec4
//   @binding(3) dims: uniform { m, n4, k4, _pad } (u32): the PADDED sizes
// Shared memory: A block transposed (k-major) and B block, both as vec4s.

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

override BM: u32 = 128u;
override BN: u32 = 128u;
override BK: u32 = 16u;

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> as4: array<vec4<f32>, BK * BM / 4u>;
var<workgroup> bs4: array<vec4<f32>, BK * BN / 4u>;

// Padded N is a multiple of 4 and an invocation's column groups start at multiples of 4, so
// each vec4 of C is either wholly inside or wholly outside. c4 is in vec4 units.
fn store_row8(row: u32, c4: u32, lo: vec4<f32>, hi: vec4<f32>) {
    let n4 = dims.n / 4u;
    if (row >= dims.m) {
        return;
    }
    if (c4 < n4) { c[row * n4 + c4] = lo; }
    if (c4 + BN / 8u < n4) { c[row * n4 + c4 + BN / 8u] = hi; }
}

// The i-th vec4 of the A block for K-offset k0 (zero outside A).
fn load_a(row0: u32, k0: u32, i: u32) -> vec4<f32> {
    let k4 = dims.k / 4u;
    let gr = row0 + i / (BK / 4u);
    let gk4 = k0 / 4u + i % (BK / 4u);
    if (gr < dims.m && gk4 < k4) {
        return a[gr * k4 + gk4];
    }
    return vec4<f32>(0.0);
}

// The i-th vec4 of the B block for K-offset k0 (zero outside B).
fn load_b(col0: u32, k0: u32, i: u32) -> vec4<f32> {
    let n4 = dims.n / 4u;
    let gk = k0 + i / (BN / 4u);
    let gc4 = col0 / 4u + i % (BN / 4u);
    if (gk < dims.k && gc4 < n4) {
        return b[gk * n4 + gc4];
    }
    return vec4<f32>(0.0);
}

// Writes the i-th vec4 of the A block into shared memory, transposed (k-major).
fn stash_a(i: u32, v: vec4<f32>) {
    let m = i / (BK / 4u);
    let base = (i % (BK / 4u)) * 4u * (BM / 4u) + m / 4u;
    as4[base][m % 4u] = v.x;
    as4[base + (BM / 4u)][m % 4u] = v.y;
    as4[base + 2u * (BM / 4u)][m % 4u] = v.z;
    as4[base + 3u * (BM / 4u)][m % 4u] = v.w;
}

@compute @workgroup_size(BN / 8u, BM / 8u, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let threads = (BN / 8u) * (BM / 8u);
    let tid = lid.y * (BN / 8u) + lid.x;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    var acc: array<vec4<f32>, 16>;
    // Registers holding the next blocks: two vec4s of A, two of B.
    var a0 = load_a(row0, 0u, tid);
    var a1 = load_a(row0, 0u, tid + threads);
    var b0 = load_b(col0, 0u, tid);
    var b1 = load_b(col0, 0u, tid + threads);
    let tiles = (dims.k + BK - 1u) / BK;
    for (var t = 0u; t < tiles; t = t + 1u) {
        stash_a(tid, a0);
        stash_a(tid + threads, a1);
        bs4[tid] = b0;
        bs4[tid + threads] = b1;
        workgroupBarrier();
        // Start fetching the next blocks now; they are not needed until the next step.
        let k_next = (t + 1u) * BK;
        if (t + 1u < tiles) {
            a0 = load_a(row0, k_next, tid);
            a1 = load_a(row0, k_next, tid + threads);
            b0 = load_b(col0, k_next, tid);
            b1 = load_b(col0, k_next, tid + threads);
        }
        for (var kk = 0u; kk < BK; kk = kk + 1u) {
            let ai = kk * (BM / 4u) + lid.y;
            let bi = kk * (BN / 4u) + lid.x;
            outer_product_8x8(&acc, as4[ai], as4[ai + BM / 8u], bs4[bi], bs4[bi + BN / 8u]);
        }
        workgroupBarrier();
    }
    let r = row0 + lid.y * 4u;
    let r_hi = r + BM / 2u;
    let c4 = col0 / 4u + lid.x;
    store_row8(r, c4, acc[0], acc[1]);
    store_row8(r + 1u, c4, acc[2], acc[3]);
    store_row8(r + 2u, c4, acc[4], acc[5]);
    store_row8(r + 3u, c4, acc[6], acc[7]);
    store_row8(r_hi, c4, acc[8], acc[9]);
    store_row8(r_hi + 1u, c4, acc[10], acc[11]);
    store_row8(r_hi + 2u, c4, acc[12], acc[13]);
    store_row8(r_hi + 3u, c4, acc[14], acc[15]);
}
