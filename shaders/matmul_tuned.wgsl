// Tuned register-tiled matrix multiply: C = A · B. The vec4 stage's scheme (8×8 outputs per
// invocation, vec4 loads, the next blocks prefetched into registers) with the work it never
// needed taken out:
// - No guards: the runtime pads M and N to multiples of 128 and K to a multiple of 32 with
//   zeros, so every load and store is inside its buffer by construction.
// - The loop over a K block runs eight steps per iteration, so loop bookkeeping (and the
//   iteration counter a compiler may add to every loop) is paid once per 8 steps.
// - Shared memory is indexed [k][column] with a fixed row length, so the bounds checks that
//   WebGPU compilers add to every array access (a min() per index) are on a constant k (folded
//   once the loop is unrolled) and on the invocation's own column (hoisted out of the loop),
//   instead of on one computed flat index per load.
// - Tile sizes are override constants, so a tuner can try a few on the visitor's GPU and keep
//   the fastest with only a new pipeline, no new source.
//
// Source: matmul_regtile_common.wgsl (outer_product_8x8) is appended by the catalogue.
// Parameters (override constants): BM, BN ∈ {64, 128}, BK ∈ {8, 16}; each invocation loads
//   LA = 16·BK / BN vec4s of the A block and LB = 16·BK / BM of the B block, which must be
//   1, 2 or 4. Shared memory 2·BK·32·16 bytes ≤ 16 KiB (WebGPU's default limit).
// Launch geometry: workgroup_size(BN / 8, BM / 8) (64–256 invocations);
//   dispatch (ceil(N / BN), ceil(M / BM), 1). Invocation (x, y) owns rows 4y…4y+3 and
//   BM/2+4y…, columns 4x…4x+3 and BN/2+4x… of its workgroup's BM×BN block.
// Buffer layout (Mp, Np: M, N rounded up to 128; Kp: K rounded up to 32; padding is zeros):
//   @binding(0) a: Mp×Kp f32, read-only storage, as vec4
//   @binding(1) b: Kp×Np f32, read-only storage, as vec4
//   @binding(2) c: Mp×Np f32, read-write storage, as vec4 (padding dropped on readback)
//   @binding(3) dims: uniform { mp, np, kp, _pad } (u32): the PADDED sizes
// Shared memory: A block transposed (k-major) and B block, rows of 32 vec4s (BM/4 and BN/4 used).

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

// Row length fixed at 32 vec4s (the largest BM/4, BN/4): only the outer size may be an
// override in WGSL.
var<workgroup> as2: array<array<vec4<f32>, 32>, BK>;
var<workgroup> bs2: array<array<vec4<f32>, 32>, BK>;

// One invocation's share of the next A or B block (only the first LA or LB are used).
struct Share {
    v0: vec4<f32>,
    v1: vec4<f32>,
    v2: vec4<f32>,
    v3: vec4<f32>,
}

// The i-th vec4 of the A block at K-offset k0.
fn load_a(row0: u32, k0: u32, i: u32) -> vec4<f32> {
    let k4 = dims.k / 4u;
    return a[(row0 + i / (BK / 4u)) * k4 + k0 / 4u + i % (BK / 4u)];
}

// The i-th vec4 of the B block at K-offset k0.
fn load_b(col0: u32, k0: u32, i: u32) -> vec4<f32> {
    let n4 = dims.n / 4u;
    return b[(k0 + i / (BN / 4u)) * n4 + col0 / 4u + i % (BN / 4u)];
}

// LA and LB are constants once the pipeline is built, so the untaken branches vanish.
fn fetch_a(row0: u32, k0: u32, tid: u32, threads: u32) -> Share {
    var s: Share;
    s.v0 = load_a(row0, k0, tid);
    if (16u * BK / BN > 1u) { s.v1 = load_a(row0, k0, tid + threads); }
    if (16u * BK / BN > 2u) {
        s.v2 = load_a(row0, k0, tid + 2u * threads);
        s.v3 = load_a(row0, k0, tid + 3u * threads);
    }
    return s;
}

fn fetch_b(col0: u32, k0: u32, tid: u32, threads: u32) -> Share {
    var s: Share;
    s.v0 = load_b(col0, k0, tid);
    if (16u * BK / BM > 1u) { s.v1 = load_b(col0, k0, tid + threads); }
    if (16u * BK / BM > 2u) {
        s.v2 = load_b(col0, k0, tid + 2u * threads);
        s.v3 = load_b(col0, k0, tid + 3u * threads);
    }
    return s;
}

// Writes the i-th vec4 of the A block (row m, k = 4q…4q+3) into shared memory, transposed.
fn stash_a(i: u32, v: vec4<f32>) {
    let m = i / (BK / 4u);
    let k = (i % (BK / 4u)) * 4u;
    as2[k][m / 4u][m % 4u] = v.x;
    as2[k + 1u][m / 4u][m % 4u] = v.y;
    as2[k + 2u][m / 4u][m % 4u] = v.z;
    as2[k + 3u][m / 4u][m % 4u] = v.w;
}

// Writes the i-th vec4 of the B block into shared memory.
fn stash_b(i: u32, v: vec4<f32>) {
    bs2[i / (BN / 4u)][i % (BN / 4u)] = v;
}

fn stash(sa: Share, sb: Share, tid: u32, threads: u32) {
    stash_a(tid, sa.v0);
    stash_b(tid, sb.v0);
    if (16u * BK / BN > 1u) { stash_a(tid + threads, sa.v1); }
    if (16u * BK / BN > 2u) {
        stash_a(tid + 2u * threads, sa.v2);
        stash_a(tid + 3u * threads, sa.v3);
    }
    if (16u * BK / BM > 1u) { stash_b(tid + threads, sb.v1); }
    if (16u * BK / BM > 2u) {
        stash_b(tid + 2u * threads, sb.v2);
        stash_b(tid + 3u * threads, sb.v3);
    }
}

// Row `row`, vec4 columns c4 and c4 + BN/8, of C: always inside C, thanks to the padding.
fn store_row8(row: u32, c4: u32, lo: vec4<f32>, hi: vec4<f32>) {
    let n4 = dims.n / 4u;
    c[row * n4 + c4] = lo;
    c[row * n4 + c4 + BN / 8u] = hi;
}

// One step along K: row kk of both shared blocks into the 8×8 accumulator.
fn step(acc: ptr<function, array<vec4<f32>, 16>>, kk: u32, ly: u32, lx: u32) {
    outer_product_8x8(acc, as2[kk][ly], as2[kk][ly + BM / 8u], bs2[kk][lx], bs2[kk][lx + BN / 8u]);
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
    var sa = fetch_a(row0, 0u, tid, threads);
    var sb = fetch_b(col0, 0u, tid, threads);
    let tiles = dims.k / BK;
    for (var t = 0u; t < tiles; t = t + 1u) {
        stash(sa, sb, tid, threads);
        workgroupBarrier();
        // Fetch the next blocks now; they are not needed until the next iteration.
        if (t + 1u < tiles) {
            sa = fetch_a(row0, (t + 1u) * BK, tid, threads);
            sb = fetch_b(col0, (t + 1u) * BK, tid, threads);
        }
        for (var kk = 0u; kk < BK; kk = kk + 8u) {
            step(&acc, kk, lid.y, lid.x);
            step(&acc, kk + 1u, lid.y, lid.x);
            step(&acc, kk + 2u, lid.y, lid.x);
            step(&acc, kk + 3u, lid.y, lid.x);
            step(&acc, kk + 4u, lid.y, lid.x);
            step(&acc, kk + 5u, lid.y, lid.x);
            step(&acc, kk + 6u, lid.y, lid.x);
            step(&acc, kk + 7u, lid.y, lid.x);
        }
        workgroupBarrier();
    }
    let c4 = col0 / 4u + lid.x;
    let r = row0 + lid.y * 4u;
    let r_hi = r + BM / 2u;
    // Constant indices into acc only: a computed one would push it out of registers.
    store_row8(r, c4, acc[0], acc[1]);
    store_row8(r + 1u, c4, acc[2], acc[3]);
    store_row8(r + 2u, c4, acc[4], acc[5]);
    store_row8(r + 3u, c4, acc[6], acc[7]);
    store_row8(r_hi, c4, acc[8], acc[9]);
    store_row8(r_hi + 1u, c4, acc[10], acc[11]);
    store_row8(r_hi + 2u, c4, acc[12], acc[13]);
    store_row8(r_hi + 3u, c4, acc[14], acc[15]);
}
