// Direct convolution: one invocation per output element y[n,p,q,k], summing its R·S·C terms
// straight from global memory. Every input value is fetched again by each of the up to
// R·S/stride² outputs whose window covers it (and by every filter k): no reuse at all except
// what the hardware caches catch. The baseline of the conv ladder.
//
// Source: conv_common.wgsl (struct Conv, conv_in, conv_inside) is appended by the catalogue.
// Launch geometry: workgroup_size(16, 16): x runs along the filters k (neighbouring
//   invocations read the same input value and neighbouring filter values, which coalesce),
//   y along the output pixels m = (n·P + p)·Q + q; dispatch (ceil(K / 16), ceil(N·P·Q / 16), 1).
// Buffer layout (f32, tightly packed):
//   @binding(0) x: N×H×W×C (NHWC), read-only storage
//   @binding(1) f: R×S×C×K, read-only storage
//   @binding(2) y: N×P×Q×K, read-write storage
//   @binding(3) cv: uniform Conv (conv_common.wgsl)

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> f: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> cv: Conv;

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    let m = gid.y;
    if (k >= cv.k || m >= cv.m) {
        return;
    }
    let q = m % cv.q;
    let p = (m / cv.q) % cv.p;
    let n = m / (cv.q * cv.p);
    var acc = 0.0;
    for (var r = 0u; r < cv.r; r = r + 1u) {
        let ih = conv_in(p, r);
        for (var s = 0u; s < cv.s; s = s + 1u) {
            let iw = conv_in(q, s);
            if (!conv_inside(ih, iw)) {
                continue; // zero padding adds nothing
            }
            let xb = ((n * cv.h + u32(ih)) * cv.w + u32(iw)) * cv.c;
            let fb = (r * cv.s + s) * cv.c;
            for (var c = 0u; c < cv.c; c = c + 1u) {
                acc = fma(x[xb + c], f[(fb + c) * cv.k + k], acc);
            }
        }
    }
    y[m * cv.k + k] = acc;
}
