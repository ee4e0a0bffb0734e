// Implicit GEMM convolution: the GEMM of im2col + GEMM, register-blocked and vectorised like
// matmul_vec4.wgsl, but it never builds the im2col matrix: when a workgroup fetches its next
// block of A it computes which input pixel and channels each element is (output pixel m →
// n, p, q; reduction index → r, s, c) and reads them straight from x, zeros in the padding.
// No extra buffer, and each input value is read from global memory by the few workgroups
// whose rows need it.
//
// Source: matmul_regtile_common.wgsl (outer_product_8x8) and conv_common.wgsl are appended.
// Parameters (override constants): BM × BN outputs per workgroup, BK reduction per step.
//   The runtime picks one of a few blocks per shape (family/conv.rs, `IG_TILES`): 64×64,
//   128×64, 64×128 and 128×128, all with BK = 16; 32×64 and 64×32 with BK = 8 (32
//   invocations) are candidates for short, narrow layers, run only when a benchmark forces
//   them, as are 64×64 and 32×64 with TM = 4 (below). Each invocation prefetches LA = BK·BM/4 /
//   threads vec4s of A and LB = BK·BN/4 / threads of B into registers (1, 2 or 4 each; the
//   unused registers of the four are never loaded, which the compiler sees once the
//   constants are fixed).
// Launch geometry: workgroup_size(BN / 8, BM / TM) = 32, 64, 128 or 256 invocations, each a
//   TM×8 block of Y (rows m, columns k): with TM = 8 (the default) rows 4y…4y+3 and
//   BM/2+4y…, split 4+4 as in matmul_vec4; with TM = 4 rows 4y…4y+3 only, so the same block
//   has twice the invocations, each with half the outputs (for layers whose few outputs would
//   otherwise leave the GPU's SMs with one or two warps each); dispatch
//   (ceil(K / BN), ceil(N·P·Q / BM), splits). Split-K: with cv.splits > 1, workgroup layer z
//   sums only its slice of the reduction (ceil(tiles / splits) steps of BK) and writes its
//   partial sums to slice z of the output buffer, which is then splits × (N·P·Q) × k4 floats;
//   conv_splitk_reduce.wgsl adds the slices. The runtime splits when there are too few
//   output blocks to keep a large GPU busy.
// Buffer layout: vec4 along channels and filters, so the runtime pads C up to c4 (a multiple
//   of 4) with zero channels and K up to k4; zero channels add nothing, padded filters are
//   dropped on readback:
//   @binding(0) x: N×H×W×c4 floats (NHWC), read-only storage, as vec4
//   @binding(1) f: (R·S·c4) × k4 floats (R×S×c4×k4), read-only storage, as vec4
//   @binding(2) y: (N·P·Q) × k4 floats (× splits with split-K), read-write storage, as vec4
//   @binding(3) cv: uniform Conv, with c4 and k4 the padded sizes and kred = R·S·c4

override BM: u32 = 64u;
override BN: u32 = 64u;
override BK: u32 = 16u;
// Rows of Y per invocation: 8 or 4 (see Launch geometry).
override TM: u32 = 8u;

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> f: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> cv: Conv;

// vec4s of the A and B blocks each invocation moves per step (see the header).
fn loads_a() -> u32 {
    return (BK * BM / 4u) / ((BN / 8u) * (BM / TM));
}

fn loads_b() -> u32 {
    return (BK * BN / 4u) / ((BN / 8u) * (BM / TM));
}

// The TM = 4 inner step: rows 0–3 of the invocation (a) times its two groups of four columns,
// into acc[0…7] as outer_product_8x8 lays them out.
fn outer_product_4x8(acc: ptr<function, array<vec4<f32>, 16>>, a: vec4<f32>, b_lo: vec4<f32>, b_hi: vec4<f32>) {
    (*acc)[0] = fma(vec4<f32>(a.x), b_lo, (*acc)[0]);
    (*acc)[1] = fma(vec4<f32>(a.x), b_hi, (*acc)[1]);
    (*acc)[2] = fma(vec4<f32>(a.y), b_lo, (*acc)[2]);
    (*acc)[3] = fma(vec4<f32>(a.y), b_hi, (*acc)[3]);
    (*acc)[4] = fma(vec4<f32>(a.z), b_lo, (*acc)[4]);
    (*acc)[5] = fma(vec4<f32>(a.z), b_hi, (*acc)[5]);
    (*acc)[6] = fma(vec4<f32>(a.w), b_lo, (*acc)[6]);
    (*acc)[7] = fma(vec4<f32>(a.w), b_hi, (*acc)[7]);
}

var<workgroup> as4: array<vec4<f32>, BK * BM / 4u>;
var<workgroup> bs4: array<vec4<f32>, BK * BN / 4u>;

// Where an output pixel's window starts: its image's first row of x (n·H), and the input
// row and column of tap (0, 0). `ok` is false past the last pixel.
struct Origin {
    nh: u32,
    ih: i32,
    iw: i32,
    ok: bool,
}

fn origin(m: u32) -> Origin {
    let q = m % cv.q;
    let p = (m / cv.q) % cv.p;
    let n = m / (cv.q * cv.p);
    return Origin(n * cv.h, conv_in(p, 0u), conv_in(q, 0u), m < cv.m);
}

// The vec4 of A (the im2col matrix, never stored) at the pixel `o` and reduction vec4 index
// g4 = ((r·S + s)·c4 + c) / 4.
fn load_a(o: Origin, g4: u32) -> vec4<f32> {
    let c4v = cv.c4 / 4u;
    if (!o.ok || g4 >= cv.kred / 4u) {
        return vec4<f32>(0.0);
    }
    let cq = g4 % c4v;
    let rs = g4 / c4v;
    let ih = o.ih + i32((rs / cv.s) * cv.dil);
    let iw = o.iw + i32((rs % cv.s) * cv.dil);
    if (!conv_inside(ih, iw)) {
        return vec4<f32>(0.0);
    }
    return x[((o.nh + u32(ih)) * cv.w + u32(iw)) * c4v + cq];
}

// The i-th vec4 of the B block (the filter) for reduction offset k0 (zero outside).
fn load_b(col0: u32, k0: u32, i: u32) -> vec4<f32> {
    let n4 = cv.k4 / 4u;
    let gk = k0 + i / (BN / 4u);
    let gc4 = col0 / 4u + i % (BN / 4u);
    if (gk < cv.kred && gc4 < n4) {
        return f[gk * n4 + gc4];
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

// `base` is the first vec4 of this workgroup layer's slice (0 without split-K).
fn store_row8(base: u32, row: u32, c4: u32, lo: vec4<f32>, hi: vec4<f32>) {
    let n4 = cv.k4 / 4u;
    if (row >= cv.m) {
        return;
    }
    if (c4 < n4) { y[base + row * n4 + c4] = lo; }
    if (c4 + BN / 8u < n4) { y[base + row * n4 + c4 + BN / 8u] = hi; }
}

@compute @workgroup_size(BN / 8u, BM / TM, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let threads = (BN / 8u) * (BM / TM);
    let tid = lid.y * (BN / 8u) + lid.x;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    // The A block's vec4 i sits at row i / (BK/4), reduction vec4 i % (BK/4) of the block.
    // Each invocation loads the same four i every step, so their pixels are decoded once.
    let per_row = BK / 4u;
    let i0 = tid;
    let i1 = tid + threads;
    let i2 = tid + 2u * threads;
    let i3 = tid + 3u * threads;
    let o0 = origin(row0 + i0 / per_row);
    let o1 = origin(row0 + i1 / per_row);
    let o2 = origin(row0 + i2 / per_row);
    let o3 = origin(row0 + i3 / per_row);
    // This layer's slice of the reduction: steps t_begin .. t_end of BK each.
    let all_tiles = (cv.kred + BK - 1u) / BK;
    let per_split = (all_tiles + cv.splits - 1u) / cv.splits;
    let t_begin = min(wg.z * per_split, all_tiles);
    let t_end = min(t_begin + per_split, all_tiles);
    var acc: array<vec4<f32>, 16>;
    let la = loads_a();
    let lb = loads_b();
    let g0 = t_begin * BK / 4u;
    var a0 = load_a(o0, g0 + i0 % per_row);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    if (la > 1u) { a1 = load_a(o1, g0 + i1 % per_row); }
    if (la > 2u) {
        a2 = load_a(o2, g0 + i2 % per_row);
        a3 = load_a(o3, g0 + i3 % per_row);
    }
    var b0 = load_b(col0, t_begin * BK, i0);
    var b1 = vec4<f32>(0.0);
    var b2 = vec4<f32>(0.0);
    var b3 = vec4<f32>(0.0);
    if (lb > 1u) { b1 = load_b(col0, t_begin * BK, i1); }
    if (lb > 2u) {
        b2 = load_b(col0, t_begin * BK, i2);
        b3 = load_b(col0, t_begin * BK, i3);
    }
    for (var t = t_begin; t < t_end; t = t + 1u) {
        stash_a(i0, a0);
        if (la > 1u) { stash_a(i1, a1); }
        if (la > 2u) {
            stash_a(i2, a2);
            stash_a(i3, a3);
        }
        bs4[i0] = b0;
        if (lb > 1u) { bs4[i1] = b1; }
        if (lb > 2u) {
            bs4[i2] = b2;
            bs4[i3] = b3;
        }
        workgroupBarrier();
        // Fetch the next blocks while this one is multiplied.
        if (t + 1u < t_end) {
            let k_next = (t + 1u) * BK;
            let g4 = k_next / 4u;
            a0 = load_a(o0, g4 + i0 % per_row);
            if (la > 1u) { a1 = load_a(o1, g4 + i1 % per_row); }
            if (la > 2u) {
                a2 = load_a(o2, g4 + i2 % per_row);
                a3 = load_a(o3, g4 + i3 % per_row);
            }
            b0 = load_b(col0, k_next, i0);
            if (lb > 1u) { b1 = load_b(col0, k_next, i1); }
            if (lb > 2u) {
                b2 = load_b(col0, k_next, i2);
                b3 = load_b(col0, k_next, i3);
            }
        }
        for (var kk = 0u; kk < BK; kk = kk + 1u) {
            let ai = kk * (BM / 4u) + lid.y;
            let bi = kk * (BN / 4u) + lid.x;
            if (TM == 8u) {
                outer_product_8x8(&acc, as4[ai], as4[ai + BM / 8u], bs4[bi], bs4[bi + BN / 8u]);
            } else {
                outer_product_4x8(&acc, as4[ai], bs4[bi], bs4[bi + BN / 8u]);
            }
        }
        workgroupBarrier();
    }
    let r = row0 + lid.y * 4u;
    let r_hi = r + BM / 2u;
    let c4 = col0 / 4u + lid.x;
    let base = wg.z * cv.m * (cv.k4 / 4u);
    store_row8(base, r, c4, acc[0], acc[1]);
    store_row8(base, r + 1u, c4, acc[2], acc[3]);
    store_row8(base, r + 2u, c4, acc[4], acc[5]);
    store_row8(base, r + 3u, c4, acc[6], acc[7]);
    if (TM == 8u) {
        store_row8(base, r_hi, c4, acc[8], acc[9]);
        store_row8(base, r_hi + 1u, c4, acc[10], acc[11]);
        store_row8(base, r_hi + 2u, c4, acc[12], acc[13]);
        store_row8(base, r_hi + 3u, c4, acc[14], acc[15]);
    }
}
