// Shared by the register-blocked matmul kernels (2D block tiling, vec4, f16): the 8×8 outer
// product that is their inner loop. Not a kernel on its own; the kernel catalogue appends it
// to each of those kernels' source (WGSL has no #include; module-scope order does not matter).
//
// acc holds an 8×8 block of C as 16 vec4s: acc[2r] = the first four columns of the
// invocation's row r, acc[2r+1] = the other four; a_lo/a_hi are A at its rows 0–3 / 4–7,
// b_lo/b_hi are B at its two groups of four columns. Every index below is a constant, so the block stays in registers; the same
// block behind a dynamically indexed array<f32, 64> spilled to local memory on an H200 and
// ran slower than the naive kernel. fma() asks for fused multiply-adds explicitly.

fn outer_product_8x8(
    acc: ptr<function, array<vec4<f32>, 16>>,
    a_lo: vec4<f32>, a_hi: vec4<f32>,
    b_lo: vec4<f32>, b_hi: vec4<f32>,
) {
    (*acc)[0] = fma(vec4<f32>(a_lo.x), b_lo, (*acc)[0]);
    (*acc)[1] = fma(vec4<f32>(a_lo.x), b_hi, (*acc)[1]);
    (*acc)[2] = fma(vec4<f32>(a_lo.y), b_lo, (*acc)[2]);
    (*acc)[3] = fma(vec4<f32>(a_lo.y), b_hi, (*acc)[3]);
    (*acc)[4] = fma(vec4<f32>(a_lo.z), b_lo, (*acc)[4]);
    (*acc)[5] = fma(vec4<f32>(a_lo.z), b_hi, (*acc)[5]);
    (*acc)[6] = fma(vec4<f32>(a_lo.w), b_lo, (*acc)[6]);
    (*acc)[7] = fma(vec4<f32>(a_lo.w), b_hi, (*acc)[7]);
    (*acc)[8] = fma(vec4<f32>(a_hi.x), b_lo, (*acc)[8]);
    (*acc)[9] = fma(vec4<f32>(a_hi.x), b_hi, (*acc)[9]);
    (*acc)[10] = fma(vec4<f32>(a_hi.y), b_lo, (*acc)[10]);
    (*acc)[11] = fma(vec4<f32>(a_hi.y), b_hi, (*acc)[11]);
    (*acc)[12] = fma(vec4<f32>(a_hi.z), b_lo, (*acc)[12]);
    (*acc)[13] = fma(vec4<f32>(a_hi.z), b_hi, (*acc)[13]);
    (*acc)[14] = fma(vec4<f32>(a_hi.w), b_lo, (*acc)[14]);
    (*acc)[15] = fma(vec4<f32>(a_hi.w), b_hi, (*acc)[15]);
}
