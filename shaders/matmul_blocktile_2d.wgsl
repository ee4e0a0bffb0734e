// 2D block-tiled (register-blocked) matrix multiply: C = A · B. Each invocation computes an
// 8×8 block of C held in registers. Per step along K it reads 8 values of A and 8 of B from
// shared memory and does 64 multiply-adds with them: an outer product. Shared-memory traffic
// per multiply-add drops 4× against the 1D kernel, and each workgroup's 128×128 block reuses
// every global value 128 times.
//
// Source: matmul_regtile_common.wgsl (outer_product_8x8) is appended by the catalogue.
// Parameters (override constants): BM = BN = 128 (the block of C per workgroup), BK = 16.
//   The 8×8 per invocation is fixed by the code (see the common file).
// Launch geometry: workgroup_size(BN / 8, BM / 8) = 16×16 = 256 invocations;
//   dispatch (ceil(N / BN), ceil(M / BM), 1). Invocation (x, y) owns rows 4y…4y+3 and
//   BM/2+4y…BM/2+4y+3, and columns 4x…4x+3 and BN/2+4x…BN/2+4x+3 of its block: split in
//   two halves so that neighbouring invocations read neighbouring vec4s of shared memory
//   (no bank conflicts) and write neighbouring addresses of C.
// Buffer layout (row-major, tightly packed):
//   @binding(0) a: M×K InputElem, read-only storage
//   @binding(1) b: K×N InputElem, read-only storage
//   @binding(2) c: M×N f32, read-write storage
//   InputElem is f32 here. The half-precision stage of the ladder is this same file with
//   `enable f16;` put first and InputElem = f16: inputs stored and loaded as f16 (half the
//   bytes), converted to f32 on the way into shared memory, so products (exact in f32) and
//   sums are f32 — mixed precision, as on Tensor Cores.
//   @binding(3) dims: uniform { m, n, k, _pad } (u32)
// Shared memory: A block transposed (k-major) and B block, both as vec4s.

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

alias InputElem = f32;

override BM: u32 = 128u;
override BN: u32 = 128u;
override BK: u32 = 16u;

@group(0) @binding(0) var<storage, read> a: array<InputElem>;
@group(0) @binding(1) var<storage, read> b: array<InputElem>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

// as4[k * BM/4 + m/4][m % 4] = A[row0 + m][k0 + k]
var<workgroup> as4: array<vec4<f32>, BK * BM / 4u>;
// bs4[k * BN/4 + n/4][n % 4] = B[k0 + k][col0 + n]
var<workgroup> bs4: array<vec4<f32>, BK * BN / 4u>;

// Row `row` of this invocation's block: columns col…col+3 (lo) and col+BN/2…col+BN/2+3 (hi).
fn store_row8(row: u32, col: u32, lo: vec4<f32>, hi: vec4<f32>) {
    if (row >= dims.m) {
        return;
    }
    store4(row * dims.n, col, lo);
    store4(row * dims.n, col + BN / 2u, hi);
}

fn store4(row_start: u32, col: u32, v: vec4<f32>) {
    if (col < dims.n) { c[row_start + col] = v.x; }
    if (col + 1u < dims.n) { c[row_start + col + 1u] = v.y; }
    if (col + 2u < dims.n) { c[row_start + col + 2u] = v.z; }
    if (col + 3u < dims.n) { c[row_start + col + 3u] = v.w; }
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
    let tiles = (dims.k + BK - 1u) / BK;
    for (var t = 0u; t < tiles; t = t + 1u) {
        let k0 = t * BK;
        for (var i = tid; i < BM * BK; i = i + threads) {
            let m = i / BK;
            let kk = i % BK;
            let gr = row0 + m;
            let gk = k0 + kk;
            var v = 0.0;
            if (gr < dims.m && gk < dims.k) {
                v = f32(a[gr * dims.k + gk]);
            }
            as4[kk * (BM / 4u) + m / 4u][m % 4u] = v;
        }
        for (var i = tid; i < BK * BN; i = i + threads) {
            let kk = i / BN;
            let nn = i % BN;
            let gk = k0 + kk;
            let gc = col0 + nn;
            var v = 0.0;
            if (gk < dims.k && gc < dims.n) {
                v = f32(b[gk * dims.n + gc]);
            }
            bs4[kk * (BN / 4u) + nn / 4u][nn % 4u] = v;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk = kk + 1u) {
            let ai = kk * (BM / 4u) + lid.y;
            let bi = kk * (BN / 4u) + lid.x;
            outer_product_8x8(&acc, as4[ai], as4[ai + BM / 8u], bs4[bi], bs4[bi + BN / 8u]);
        }
        workgroupBarrier();
    }
    let r = row0 + lid.y * 4u;
    let r_hi = r + BM / 2u;
    let col = col0 + lid.x * 4u;
    store_row8(r, col, acc[0], acc[1]);
    store_row8(r + 1u, col, acc[2], acc[3]);
    store_row8(r + 2u, col, acc[4], acc[5]);
    store_row8(r + 3u, col, acc[6], acc[7]);
    store_row8(r_hi, col, acc[8], acc[9]);
    store_row8(r_hi + 1u, col, acc[10], acc[11]);
    store_row8(r_hi + 2u, col, acc[12], acc[13]);
    store_row8(r_hi + 3u, col, acc[14], acc[15]);
}
