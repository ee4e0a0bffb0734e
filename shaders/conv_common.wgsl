// Shared by the convolution stages: the parameter block every conv shader binds as its
// uniform. Not a kernel on its own; the conv family module appends it to each stage's source
// (WGSL has no #include; module-scope order does not matter).
//
// Layouts (see cpu_kernels::conv): x is NHWC, f is R×S×C×K (HWIO), y is NPQK — the (N·P·Q)×K
// matrix of the GEMM form. Output size P = (H + 2·pad − dil·(R−1) − 1) / stride + 1, Q alike.

struct Conv {
    n: u32, c: u32, h: u32, w: u32,
    k: u32, r: u32, s: u32, stride: u32,
    pad: u32, dil: u32, p: u32, q: u32,
    // The GEMM view: m = N·P·Q output pixels; kred = reduction length as the stage stores it
    // (R·S·C, or padded to a multiple of 4 for vec4 rows); k4 = K rounded up to 4; c4 = C as
    // the stage stores it (C, or rounded up to 4 for vec4 pixels).
    m: u32, kred: u32, k4: u32, c4: u32,
    // Channels the tiled stage stages per step (as many as fit its workgroup memory, at
    // most 8); reduction slices of the implicit GEMM (1: no split-K). 0 where unused.
    chunk: u32, splits: u32, _pad0: u32, _pad1: u32,
}

// The input row (ih) or column (iw) that output coordinate o reads at filter tap t: may be
// negative or past the edge, where it reads the zero padding.
fn conv_in(o: u32, t: u32) -> i32 {
    return i32(o * cv.stride + t * cv.dil) - i32(cv.pad);
}

fn conv_inside(ih: i32, iw: i32) -> bool {
    return ih >= 0 && iw >= 0 && ih < i32(cv.h) && iw < i32(cv.w);
}
