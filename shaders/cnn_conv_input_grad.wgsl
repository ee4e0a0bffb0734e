// CNN conv input gradient, a transposed convolution: the conv output's delta dz,
// padded by K − 1 on every side, correlated with each filter rotated by 180°:
//   d_in[n, c, y, x] = Σ_o Σ_r' Σ_s' dz[n, o, y + r' − (K − 1), x + s' − (K − 1)]
//                                    · W[o, c, K − 1 − r', K − 1 − s'],
// o outermost, then r' and s' ascending, one accumulator from 0; taps that fall in the
// padding are skipped rather than multiplied by zero (the CPU twin's order, `cnn::net`).
// As an implicit GEMM: M = B·H·W input pixels, N = C_in, reduction (o·K + r')·K + s' over
// C_out·K·K, the padded dz read in place (never built).
//
// Launch: workgroup_size(64); one invocation per element of the block's input, in its NCHW
//   order i = ((n·C_in + c)·H + y)·W + x; workgroups (ceil(g / r), r = ceil(g / 65535), 1) for
//   g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = params (read: filters at w_off), 1 = deltas (read_write: reads conv_off,
//          writes in_off: the previous block's pool region, or the input's),
//          2 = uniform Block (16 words; count = B·C_in·H·W).

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let ins = u.in_side;
    let cs = i32(u.conv_side);
    let last = u.k - 1u;
    let x = i % ins;
    let y = (i / ins) % ins;
    let c = (i / (ins * ins)) % u.c_in;
    let n = i / (ins * ins * u.c_in);
    var acc = 0.0;
    for (var o = 0u; o < u.c_out; o++) {
        let dz = u.conv_off + (n * u.c_out + o) * u.conv_side * u.conv_side;
        let w = u.w_off + (o * u.c_in + c) * u.k * u.k;
        for (var rp = 0u; rp < u.k; rp++) {
            // Row y + r' − (K − 1) of dz; outside the map it is padding.
            let zy = i32(y + rp) - i32(last);
            if (zy < 0 || zy >= cs) {
                continue;
            }
            for (var sp = 0u; sp < u.k; sp++) {
                let zx = i32(x + sp) - i32(last);
                if (zx < 0 || zx >= cs) {
                    continue;
                }
                // The 180° rotation: tap (K − 1 − r', K − 1 − s').
                acc += deltas[dz + u32(zy * cs + zx)] * params[w + (last - rp) * u.k + (last - sp)];
            }
        }
    }
    deltas[u.in_off + i] = acc;
}
