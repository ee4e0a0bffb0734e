// Tiled direct convolution: a workgroup computes a TP×TQ patch of output pixels for KT
// filters. It stages the input patch those outputs read — the tile plus its halo, the
// dil·(R−1) extra rows and columns a window reaches past the tile — in workgroup memory, a few
// channels at a time, and every output reads its window from there: each input value comes
// from global memory once per workgroup instead of once per output and filter.
//
// Source: conv_common.wgsl is appended by the catalogue.
// Parameters (override constants): TP = TQ = 8 output rows/columns per workgroup,
//   TILE_FLOATS = 3840 (15 KiB of workgroup memory); KT = 8 filters per invocation (two vec4
//   accumulators, a const). The staged patch is th × tw × cv.chunk floats with th = (TP−1)·stride + dil·(R−1) + 1, tw alike with Q and S; the runtime picks
//   chunk = min(8, C, TILE_FLOATS / (th·tw)) and refuses shapes where th·tw > TILE_FLOATS.
// Launch geometry: workgroup_size(TQ, TP) = 64 invocations, one output pixel each;
//   dispatch (ceil(Q/TQ)·ceil(P/TP), ceil(K/KT), N): x = spatial tile, y = filter block, z = n.
// Buffer layout (f32, tightly packed): as conv_direct.wgsl —
//   @binding(0) x: N×H×W×C, @binding(1) f: R×S×C×K, @binding(2) y: N×P×Q×K,
//   @binding(3) cv: uniform Conv.

override TP: u32 = 8u;
override TQ: u32 = 8u;
override TILE_FLOATS: u32 = 3840u;
const KT: u32 = 8u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> f: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> cv: Conv;

var<workgroup> tile: array<f32, TILE_FLOATS>;

// The filter value at index i, which belongs to filter k: zero past the last filter (the
// tail of the last block), so nothing is read out of bounds.
fn fv(i: u32, k: u32) -> f32 {
    if (k < cv.k) {
        return f[i];
    }
    return 0.0;
}

@compute @workgroup_size(TQ, TP, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let tiles_q = (cv.q + TQ - 1u) / TQ;
    let p0 = (wg.x / tiles_q) * TP;
    let q0 = (wg.x % tiles_q) * TQ;
    let k0 = wg.y * KT;
    let n = wg.z;
    let p = p0 + lid.y;
    let q = q0 + lid.x;
    // The patch's first input row and column (may lie in the padding) and its size.
    let ih0 = i32(p0 * cv.stride) - i32(cv.pad);
    let iw0 = i32(q0 * cv.stride) - i32(cv.pad);
    let th = (TP - 1u) * cv.stride + cv.dil * (cv.r - 1u) + 1u;
    let tw = (TQ - 1u) * cv.stride + cv.dil * (cv.s - 1u) + 1u;
    let chunk = cv.chunk;
    let patch_len = th * tw * chunk;
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    for (var c0 = 0u; c0 < cv.c; c0 = c0 + chunk) {
        // Stage: every invocation copies a strided share of the patch (zeros in the padding
        // and past the last channel).
        for (var i = tid; i < patch_len; i = i + TP * TQ) {
            let cc = i % chunk;
            let col = (i / chunk) % tw;
            let row = i / (chunk * tw);
            let ih = ih0 + i32(row);
            let iw = iw0 + i32(col);
            var v = 0.0;
            if (conv_inside(ih, iw) && c0 + cc < cv.c) {
                v = x[((n * cv.h + u32(ih)) * cv.w + u32(iw)) * cv.c + c0 + cc];
            }
            tile[i] = v;
        }
        workgroupBarrier();
        let cn = min(chunk, cv.c - c0);
        for (var r = 0u; r < cv.r; r = r + 1u) {
            let row = lid.y * cv.stride + r * cv.dil;
            for (var s = 0u; s < cv.s; s = s + 1u) {
                let col = lid.x * cv.stride + s * cv.dil;
                let tb = (row * tw + col) * chunk;
                for (var cc = 0u; cc < cn; cc = cc + 1u) {
                    let xv = vec4<f32>(tile[tb + cc]);
                    let fb = ((r * cv.s + s) * cv.c + c0 + cc) * cv.k + k0;
                    let f_lo = vec4<f32>(fv(fb, k0), fv(fb + 1u, k0 + 1u), fv(fb + 2u, k0 + 2u), fv(fb + 3u, k0 + 3u));
                    let f_hi = vec4<f32>(fv(fb + 4u, k0 + 4u), fv(fb + 5u, k0 + 5u), fv(fb + 6u, k0 + 6u), fv(fb + 7u, k0 + 7u));
                    lo = fma(xv, f_lo, lo);
                    hi = fma(xv, f_hi, hi);
                }
            }
        }
        workgroupBarrier();
    }
    if (p >= cv.p || q >= cv.q) {
        return;
    }
    let out = ((n * cv.p + p) * cv.q + q) * cv.k;
    for (var j = 0u; j < 4u; j = j + 1u) {
        if (k0 + j < cv.k) { y[out + k0 + j] = lo[j]; }
        if (k0 + 4u + j < cv.k) { y[out + k0 + 4u + j] = hi[j]; }
    }
}
