// Shared by the register-blocked matmul kernels (2D block tiling, vec4, f16): the 8×8 outer
// product that is their inner loop. Not a kernel on its own; the kernel catalogue appends it
// to each of those kernels' source (WGSL has no #include; module-scope order does not matter).
//
// acc holds an 8×8 block of C as 16 vec4s: acc[2r] = the first four columns of the
// invocation's row r, acc[2r+1] = the other four; a_lo/a_hi are A at its rows 0–3 / 4–7,
// b_lo/b_hi are B at its two groups of four columns. Every index below is a constant, so the block stays in registers; the same
// block behind a dynamically indexed array<f32, 64> spilled to local memory on an H200 and
// ran slower than the naive kernel.

fn outer_product_8x8(
    acc: ptr<function, array<vec4<f32>, 16>>,
    a_lo: vec4<f32>, a_hi: vec4<f32>,
    b_lo: vec4<f32>, b_hi: vec4<f32>,
) {
    (*acc)[0] += a_lo.x * b_lo;
    (*acc)[1] += a_lo.x * b_hi;
    (*acc)[2] += a_lo.y * b_lo;
    (*acc)[3] += a_lo.y * b_hi;
    (*acc)[4] += a_lo.z * b_lo;
    (*acc)[5] += a_lo.z * b_hi;
    (*acc)[6] += a_lo.w * b_lo;
    (*acc)[7] += a_lo.w * b_hi;
    (*acc)[8] += a_hi.x * b_lo;
    (*acc)[9] += a_hi.x * b_hi;
    (*acc)[10] += a_hi.y * b_lo;
    (*acc)[11] += a_hi.y * b_hi;
    (*acc)[12] += a_hi.z * b_lo;
    (*acc)[13] += a_hi.z * b_hi;
    (*acc)[14] += a_hi.w * b_lo;
    (*acc)[15] += a_hi.w * b_hi;
}
