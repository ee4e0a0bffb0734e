// im2col: unrolls the input into the matrix A whose row m is the input window output pixel m
// sees — R·S·C values in (r, s, c) order, zeros where the window lies in the padding — so the
// convolution becomes one matrix multiply Y = A · F, with the filter F viewed as the
// (R·S·C)×K matrix it already is (R×S×C×K layout). The GEMM after it is the matmul ladder's
// best stage (matmul_vec4.wgsl), the second dispatch of a two-step plan. The price: A holds
// N·P·Q·R·S·C floats, about R·S/stride² times the input (9× for a 3×3 at stride 1).
//
// Source: conv_common.wgsl is appended by the catalogue.
// Launch geometry: workgroup_size(64, 4): x along the columns of A (consecutive invocations
//   write consecutive floats and read consecutive channels), y along its rows;
//   dispatch (ceil(kred / 64), ceil(N·P·Q / 4), 1).
// Buffer layout:
//   @binding(0) x: N×H×W×C f32 (NHWC), read-only storage
//   @binding(1) a: (N·P·Q) × kred f32, read-write storage; kred = R·S·C rounded up to 4 so
//     the vec4 GEMM can read its rows; the extra columns are written as zeros
//   @binding(2) cv: uniform Conv (kred as above)

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<uniform> cv: Conv;

@compute @workgroup_size(64, 4, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let m = gid.y;
    if (col >= cv.kred || m >= cv.m) {
        return;
    }
    var v = 0.0;
    if (col < cv.r * cv.s * cv.c) {
        let c = col % cv.c;
        let s = (col / cv.c) % cv.s;
        let r = col / (cv.c * cv.s);
        let q = m % cv.q;
        let p = (m / cv.q) % cv.p;
        let n = m / (cv.q * cv.p);
        let ih = conv_in(p, r);
        let iw = conv_in(q, s);
        if (conv_inside(ih, iw)) {
            v = x[((n * cv.h + u32(ih)) * cv.w + u32(iw)) * cv.c + c];
        }
    }
    a[m * cv.kred + col] = v;
}
