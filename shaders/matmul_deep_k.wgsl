// Deep-K register-tiled matrix multiply: C = A · B. The tuned stage (tile-padded storage, 8×8
// outputs per invocation, vec4 loads, the next blocks prefetched into registers, one shared
// buffer per operand) with two changes aimed at the browser's compiler:
// - Deeper K blocks: shared memory holds exactly BK·BM and BK·BN floats (flat arrays sized by
//   the override constants, where the tuned stage's rows are fixed at 32 vec4s), so a 64×64
//   block can take BK = 32 within WebGPU's default 16 KiB: half the barriers per multiply-add
//   of BK = 16, a quarter of BK = 8.
// - Every index provable: each shared-memory and register-array index is computed in `main`
//   from the invocation's local id, override constants and loop counters that run from 0 to an
//   override in steps of 1 (no index passed into a helper function, no loop bound held in a
//   `let`), which is what Tint's integer range analysis follows, so Dawn drops the clamp it
//   would put on each access. Dawn 0.6.2's Tint (dump_shaders, on SwiftShader) keeps none on
//   workgroup or register arrays and one loop counter (the loop over K blocks, bounded by the
//   uniform); for matmul_tuned.wgsl it keeps 8 clamps in `step`, run 8 times per 8 K-steps.
//   Storage loads and stores need no guard because the runtime pads M, N to multiples of 128
//   and K to a multiple of 32 with zeros (as for the tuned stage).
// A candidate for the tuner (`bench matmul --tune`, `crates/bench/dawn/run.mjs`), not a stage
// of the ladder.
//
// Source: matmul_regtile_common.wgsl (outer_product_8x8) is appended by the catalogue.
// Parameters (override constants set by the runtime): BM, BN ∈ {64, 128}, BK ∈ {16, 32} with
//   BK·(BM + BN)·4 bytes ≤ 16 KiB. Derived overrides (never set): THREADS, and the vec4s each
//   invocation loads per step, LA = BK·BM/4 / THREADS of the A block and LB = BK·BN/4 /
//   THREADS of the B block, at most MAX_LOADS each.
// Launch geometry: workgroup_size(BN / 8, BM / 8) (64–256 invocations);
//   dispatch (ceil(N / BN), ceil(M / BM), 1). Invocation (x, y) owns rows 4y…4y+3 and
//   BM/2+4y…, columns 4x…4x+3 and BN/2+4x… of its workgroup's BM×BN block.
// Buffer layout (Mp, Np: M, N rounded up to 128; Kp: K rounded up to 32; padding is zeros):
//   @binding(0) a: Mp×Kp f32, read-only storage, as vec4
//   @binding(1) b: Kp×Np f32, read-only storage, as vec4
//   @binding(2) c: Mp×Np f32, read-write storage, as vec4 (padding dropped on readback)
//   @binding(3) dims: uniform { mp, np, kp, _pad } (u32): the PADDED sizes
// Shared memory: the A block transposed (k-major: row k holds BM/4 vec4s of m), the B block
//   (row k holds BN/4 vec4s of n).

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

override BM: u32 = 64u;
override BN: u32 = 64u;
override BK: u32 = 32u;

// The most vec4s of a block one invocation moves per step (64×64×32: 512 / 64).
const MAX_LOADS: u32 = 8u;
// Derived, not set by the runtime: invocations, and vec4s of the A and B blocks each moves
// per step. Overrides rather than `let`s so that loop bounds are constants once the pipeline
// is built (Tint then proves the loops finite and their indices in range).
override THREADS: u32 = (BN / 8u) * (BM / 8u);
override LA: u32 = (BK * BM / 4u) / THREADS;
override LB: u32 = (BK * BN / 4u) / THREADS;

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> as4: array<vec4<f32>, BK * BM / 4u>;
var<workgroup> bs4: array<vec4<f32>, BK * BN / 4u>;

@compute @workgroup_size(BN / 8u, BM / 8u, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let k4 = dims.k / 4u;
    let n4 = dims.n / 4u;
    let row0 = wg.y * BM;
    let col4 = wg.x * (BN / 4u);
    let tiles = dims.k / BK;
    var acc: array<vec4<f32>, 16>;
    // This invocation's share of the next A and B blocks: vec4 i = tid + l·threads of the
    // block, A's at row i / (BK/4), vec4 i % (BK/4) of the block's K range; B's at row
    // i / (BN/4), vec4 i % (BN/4) of the block's columns.
    var pa: array<vec4<f32>, MAX_LOADS>;
    var pb: array<vec4<f32>, MAX_LOADS>;
    for (var l = 0u; l < LA; l = l + 1u) {
        let i = tid + l * THREADS;
        pa[l] = a[(row0 + i / (BK / 4u)) * k4 + i % (BK / 4u)];
    }
    for (var l = 0u; l < LB; l = l + 1u) {
        let i = tid + l * THREADS;
        pb[l] = b[(i / (BN / 4u)) * n4 + col4 + i % (BN / 4u)];
    }
    for (var t = 0u; t < tiles; t = t + 1u) {
        for (var l = 0u; l < LA; l = l + 1u) {
            let i = tid + l * THREADS;
            let m = i / (BK / 4u);
            let at = (i % (BK / 4u)) * BM + m / 4u;
            let lane = m % 4u;
            let v = pa[l];
            as4[at][lane] = v.x;
            as4[at + BM / 4u][lane] = v.y;
            as4[at + BM / 2u][lane] = v.z;
            as4[at + 3u * (BM / 4u)][lane] = v.w;
        }
        for (var l = 0u; l < LB; l = l + 1u) {
            bs4[tid + l * THREADS] = pb[l];
        }
        workgroupBarrier();
        // Fetch the next blocks now; they are not needed until the next iteration.
        if (t + 1u < tiles) {
            let ka = (t + 1u) * (BK / 4u);
            let kb = (t + 1u) * BK;
            for (var l = 0u; l < LA; l = l + 1u) {
                let i = tid + l * THREADS;
                pa[l] = a[(row0 + i / (BK / 4u)) * k4 + ka + i % (BK / 4u)];
            }
            for (var l = 0u; l < LB; l = l + 1u) {
                let i = tid + l * THREADS;
                pb[l] = b[(kb + i / (BN / 4u)) * n4 + col4 + i % (BN / 4u)];
            }
        }
        // Eight steps along K per iteration: loop bookkeeping once per 512 multiply-adds.
        for (var s = 0u; s < BK / 8u; s = s + 1u) {
            let a0 = s * (2u * BM) + lid.y;
            let b0 = s * (2u * BN) + lid.x;
            outer_product_8x8(&acc, as4[a0], as4[a0 + BM / 8u], bs4[b0], bs4[b0 + BN / 8u]);
            let a1 = a0 + BM / 4u;
            let b1 = b0 + BN / 4u;
            outer_product_8x8(&acc, as4[a1], as4[a1 + BM / 8u], bs4[b1], bs4[b1 + BN / 8u]);
            let a2 = a0 + BM / 2u;
            let b2 = b0 + BN / 2u;
            outer_product_8x8(&acc, as4[a2], as4[a2 + BM / 8u], bs4[b2], bs4[b2 + BN / 8u]);
            let a3 = a0 + 3u * (BM / 4u);
            let b3 = b0 + 3u * (BN / 4u);
            outer_product_8x8(&acc, as4[a3], as4[a3 + BM / 8u], bs4[b3], bs4[b3 + BN / 8u]);
            let a4 = a0 + BM;
            let b4 = b0 + BN;
            outer_product_8x8(&acc, as4[a4], as4[a4 + BM / 8u], bs4[b4], bs4[b4 + BN / 8u]);
            let a5 = a0 + 5u * (BM / 4u);
            let b5 = b0 + 5u * (BN / 4u);
            outer_product_8x8(&acc, as4[a5], as4[a5 + BM / 8u], bs4[b5], bs4[b5 + BN / 8u]);
            let a6 = a0 + 3u * (BM / 2u);
            let b6 = b0 + 3u * (BN / 2u);
            outer_product_8x8(&acc, as4[a6], as4[a6 + BM / 8u], bs4[b6], bs4[b6 + BN / 8u]);
            let a7 = a0 + 7u * (BM / 4u);
            let b7 = b0 + 7u * (BN / 4u);
            outer_product_8x8(&acc, as4[a7], as4[a7 + BM / 8u], bs4[b7], bs4[b7 + BN / 8u]);
        }
        workgroupBarrier();
    }
    // Rows r…r+3 and r+BM/2…, vec4 columns c0 and c0 + BN/8: inside C thanks to the padding.
    // Constant indices into acc only: a computed one would push it out of registers.
    let r = row0 + lid.y * 4u;
    let r_hi = r + BM / 2u;
    let c0 = col4 + lid.x;
    let c1 = c0 + BN / 8u;
    c[r * n4 + c0] = acc[0];
    c[r * n4 + c1] = acc[1];
    c[(r + 1u) * n4 + c0] = acc[2];
    c[(r + 1u) * n4 + c1] = acc[3];
    c[(r + 2u) * n4 + c0] = acc[4];
    c[(r + 2u) * n4 + c1] = acc[5];
    c[(r + 3u) * n4 + c0] = acc[6];
    c[(r + 3u) * n4 + c1] = acc[7];
    c[r_hi * n4 + c0] = acc[8];
    c[r_hi * n4 + c1] = acc[9];
    c[(r_hi + 1u) * n4 + c0] = acc[10];
    c[(r_hi + 1u) * n4 + c1] = acc[11];
    c[(r_hi + 2u) * n4 + c0] = acc[12];
    c[(r_hi + 2u) * n4 + c1] = acc[13];
    c[(r_hi + 3u) * n4 + c0] = acc[14];
    c[(r_hi + 3u) * n4 + c1] = acc[15];
}
