// Double-buffered, warp-tiled matrix multiply: C = A · B. The tuned stage's work per invocation
// (an 8×8 block of C, vec4 loads, the next K block prefetched into registers, no guards thanks
// to the padding) with three changes aimed at the checked compilers of browsers:
// - Two shared buffers per operand: block t is written into buffer t % 2 while the other one
//   may still be read, so one barrier per K block suffices instead of two. Order per block:
//   write block t (held in registers) to buffer t % 2; start loading block t + 1 into
//   registers; barrier; multiply out buffer t % 2. Buffer t % 2 was last read while computing
//   block t − 2, which every invocation finished before the barrier of block t − 1.
// - Every workgroup-memory index is built in `main` from local_invocation_index with / and %
//   by constants, from loop counters that run from a constant to a constant in steps of 1,
//   and from t % 2: exactly what Tint's integer range analysis follows (it does not follow
//   values into helper functions, nor & and |). So Dawn can prove each index in range and
//   drops the clamp it would add (a min() per index, several per step of the inner loop).
//   naga (wgpu) cannot; natively the catalogue compiles this kernel trusted instead.
// - Warp tiling: the 32 invocations of a warp (a subgroup of 32 on NVIDIA; nothing here
//   needs subgroup operations) own a 32×64 piece of the block, 4×8 invocations of 8×8 each,
//   so per step of K a warp reads 8 + 16 distinct vec4s of shared memory (A + B) instead of
//   the 4 + 32 of the tuned stage's 16×2 warps at BN = 128.
//
// Source: matmul_regtile_common.wgsl (outer_product_8x8) is appended by the catalogue.
// Parameters (override constants): BM, BN ∈ {64, 128}, BK ∈ {8, 16}, with both buffers of both
//   operands, 2·BK·(BM + BN)·4 bytes, within WebGPU's default 16 KiB (so BK = 16 only with
//   64×64). Each invocation loads LA = 16·BK / BN vec4s of an A block and
//   LB = 16·BK / BM of a B block, 1, 2 or 4 each.
// Launch geometry: workgroup_size(BM · BN / 64), one dimension (64–256 invocations);
//   dispatch (ceil(N / BN), ceil(M / BM), 1). Invocation i is lane i % 32 of warp i / 32;
//   warp w owns rows 32·(w / (BN/64)) … +31 and columns 64·(w % (BN/64)) … +63 of the block;
//   lane l owns, of those, rows 4·(l / 8) … +3 and 16 + 4·(l / 8) … +3, columns 4·(l % 8) … +3
//   and 32 + 4·(l % 8) … +3.
// Buffer layout (as matmul_tuned.wgsl; Mp, Np: M, N rounded up to 128; Kp: K rounded up to 32;
//   padding is zeros):
//   @binding(0) a: Mp×Kp f32, read-only storage, as vec4
//   @binding(1) b: Kp×Np f32, read-only storage, as vec4
//   @binding(2) c: Mp×Np f32, read-write storage, as vec4 (padding dropped on readback)
//   @binding(3) dims: uniform { mp, np, kp, _pad } (u32): the PADDED sizes
// Shared memory: A blocks transposed (k-major: row k holds BM/4 vec4s, each 4 consecutive rows
//   of A), B blocks as they are (row k holds BN/4 vec4s); buffer h of A starts at h·BK·BM/4.

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

override BM: u32 = 128u;
override BN: u32 = 128u;
override BK: u32 = 8u;

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

// Two buffers each, one after the other.
var<workgroup> a_s: array<vec4<f32>, 2u * BK * BM / 4u>;
var<workgroup> b_s: array<vec4<f32>, 2u * BK * BN / 4u>;

// The i-th vec4 of the A block at K-offset k0 (row i / (BK/4), k 4·(i % (BK/4)) …).
fn load_a(row0: u32, k0: u32, i: u32) -> vec4<f32> {
    return a[(row0 + i / (BK / 4u)) * (dims.k / 4u) + k0 / 4u + i % (BK / 4u)];
}

// The i-th vec4 of the B block at K-offset k0 (row i / (BN/4), vec4 column i % (BN/4)).
fn load_b(col0: u32, k0: u32, i: u32) -> vec4<f32> {
    return b[(k0 + i / (BN / 4u)) * (dims.n / 4u) + col0 / 4u + i % (BN / 4u)];
}

// Row `row`, vec4 columns c4 and c4 + 8, of C: always inside C, thanks to the padding.
fn store_row8(row: u32, c4: u32, lo: vec4<f32>, hi: vec4<f32>) {
    let n4 = dims.n / 4u;
    c[row * n4 + c4] = lo;
    c[row * n4 + c4 + 8u] = hi;
}

@compute @workgroup_size(BM * BN / 64u, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let threads = BM * BN / 64u;
    let la = 16u * BK / BN;
    let lb = 16u * BK / BM;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;

    // Warp tile and lane (see the header). am: the lane's first vec4 of an A row of shared
    // memory (its rows 0–3; rows 4–7 are at am + 4); bn: its first vec4 of a B row (columns
    // 0–3; columns 4–7 at bn + 8).
    let warp = tid / 32u;
    let lane = tid % 32u;
    let am = (warp / (BN / 64u)) * 8u + lane / 8u;
    let bn = (warp % (BN / 64u)) * 16u + lane % 8u;

    // What each invocation copies of a block: vec4 number tid + j·threads of A (j < la) and
    // of B (j < lb). Where those go in shared memory does not depend on the block.
    let ia0 = tid;
    let ia1 = tid + threads;
    let ia2 = tid + 2u * threads;
    let ia3 = tid + 3u * threads;

    var acc: array<vec4<f32>, 16>;
    // Registers holding the next block: up to four vec4s of A, four of B.
    var a0 = load_a(row0, 0u, ia0);
    var a1: vec4<f32>;
    var a2: vec4<f32>;
    var a3: vec4<f32>;
    if (la > 1u) { a1 = load_a(row0, 0u, ia1); }
    if (la > 2u) {
        a2 = load_a(row0, 0u, ia2);
        a3 = load_a(row0, 0u, ia3);
    }
    var b0 = load_b(col0, 0u, ia0);
    var b1: vec4<f32>;
    var b2: vec4<f32>;
    var b3: vec4<f32>;
    if (lb > 1u) { b1 = load_b(col0, 0u, ia1); }
    if (lb > 2u) {
        b2 = load_b(col0, 0u, ia2);
        b3 = load_b(col0, 0u, ia3);
    }

    let tiles = dims.k / BK;
    for (var t = 0u; t < tiles; t = t + 1u) {
        // This block's buffer: its first vec4 in a_s and in b_s.
        let ha = (t % 2u) * (BK * BM / 4u);
        let hb = (t % 2u) * (BK * BN / 4u);

        // 1. Registers (block t) into buffer t % 2, A transposed: vec4 i of the A block is
        // row m = i / (BK/4), k = 4·(i % (BK/4)) … +3; it lands in rows k … k+3 of shared A,
        // vec4 m / 4, component m % 4. The (la > …) tests are constant per pipeline.
        {
            let m = ia0 / (BK / 4u);
            let at = ha + (ia0 % (BK / 4u)) * 4u * (BM / 4u) + m / 4u;
            a_s[at][m % 4u] = a0.x;
            a_s[at + BM / 4u][m % 4u] = a0.y;
            a_s[at + 2u * (BM / 4u)][m % 4u] = a0.z;
            a_s[at + 3u * (BM / 4u)][m % 4u] = a0.w;
        }
        if (la > 1u) {
            let m = ia1 / (BK / 4u);
            let at = ha + (ia1 % (BK / 4u)) * 4u * (BM / 4u) + m / 4u;
            a_s[at][m % 4u] = a1.x;
            a_s[at + BM / 4u][m % 4u] = a1.y;
            a_s[at + 2u * (BM / 4u)][m % 4u] = a1.z;
            a_s[at + 3u * (BM / 4u)][m % 4u] = a1.w;
        }
        if (la > 2u) {
            let m2 = ia2 / (BK / 4u);
            let at2 = ha + (ia2 % (BK / 4u)) * 4u * (BM / 4u) + m2 / 4u;
            a_s[at2][m2 % 4u] = a2.x;
            a_s[at2 + BM / 4u][m2 % 4u] = a2.y;
            a_s[at2 + 2u * (BM / 4u)][m2 % 4u] = a2.z;
            a_s[at2 + 3u * (BM / 4u)][m2 % 4u] = a2.w;
            let m3 = ia3 / (BK / 4u);
            let at3 = ha + (ia3 % (BK / 4u)) * 4u * (BM / 4u) + m3 / 4u;
            a_s[at3][m3 % 4u] = a3.x;
            a_s[at3 + BM / 4u][m3 % 4u] = a3.y;
            a_s[at3 + 2u * (BM / 4u)][m3 % 4u] = a3.z;
            a_s[at3 + 3u * (BM / 4u)][m3 % 4u] = a3.w;
        }
        // B as it is: vec4 i of the B block is row i / (BN/4), vec4 column i % (BN/4).
        b_s[hb + ia0] = b0;
        if (lb > 1u) { b_s[hb + ia1] = b1; }
        if (lb > 2u) {
            b_s[hb + ia2] = b2;
            b_s[hb + ia3] = b3;
        }

        // 2. Start loading block t + 1; it is not needed until the next iteration.
        if (t + 1u < tiles) {
            let k0 = (t + 1u) * BK;
            a0 = load_a(row0, k0, ia0);
            if (la > 1u) { a1 = load_a(row0, k0, ia1); }
            if (la > 2u) {
                a2 = load_a(row0, k0, ia2);
                a3 = load_a(row0, k0, ia3);
            }
            b0 = load_b(col0, k0, ia0);
            if (lb > 1u) { b1 = load_b(col0, k0, ia1); }
            if (lb > 2u) {
                b2 = load_b(col0, k0, ia2);
                b3 = load_b(col0, k0, ia3);
            }
        }

        // 3. The only barrier of the block: buffer t % 2 is complete.
        workgroupBarrier();

        // 4. Multiply out buffer t % 2.
        for (var kk = 0u; kk < BK; kk = kk + 1u) {
            let ai = ha + kk * (BM / 4u) + am;
            let bi = hb + kk * (BN / 4u) + bn;
            outer_product_8x8(&acc, a_s[ai], a_s[ai + 4u], b_s[bi], b_s[bi + 8u]);
        }
    }

    // acc[2r], acc[2r+1]: row r of the lane's 8×8 (rows 0–3 at its first four rows, 4–7 at
    // the four 16 rows further down), columns 0–3 and 4–7 (32 columns = 8 vec4s apart).
    let r = row0 + am * 4u;
    let r_hi = r + 16u;
    let c4 = col0 / 4u + bn;
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
