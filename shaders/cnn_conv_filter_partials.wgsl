// CNN conv filter gradient, stage 1 of 2: each sample's share of every filter
// tap's gradient, part_n[o, c, r, s] = Σ_y Σ_x dz[n, o, y, x] · in[n, c, y + r, x + s],
// y outer, x inner, one accumulator from 0 (the CPU twin's order, `cnn::net`). As a GEMM:
// for each sample, dW_n = dZ_n · im2col(in_n), M = C_out, N = C_in·K·K, reduced over the
// OH·OW output pixels; the input rows are read in place, never copied. Stage 2
// (cnn_conv_filter_reduce.wgsl) adds the B partials in n order.
//
// Launch: workgroup_size(64); one invocation per (sample, filter tap),
//   i = n·(C_out·C_in·K·K) + ((o·C_in + c)·K + r)·K + s; workgroups
//   (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = acts (read: the block's input at in_off), 1 = deltas (read: the conv
//          region's delta dz at conv_off), 2 = partials (read_write: B × C_out·C_in·K·K,
//          sample-major), 3 = uniform Block (16 words; count = B·C_out·C_in·K·K).

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read> deltas: array<f32>;
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;
@group(0) @binding(3) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let kk = u.k * u.k;
    let taps = u.c_out * u.c_in * kk;
    let n = i / taps;
    let t = i % taps;
    let s = t % u.k;
    let r = (t / u.k) % u.k;
    let c = (t / kk) % u.c_in;
    let o = t / (kk * u.c_in);
    let cs = u.conv_side;
    let ins = u.in_side;
    let dz = u.conv_off + (n * u.c_out + o) * cs * cs;
    let plane = u.in_off + (n * u.c_in + c) * ins * ins;
    var part = 0.0;
    for (var y = 0u; y < cs; y++) {
        for (var x = 0u; x < cs; x++) {
            part += deltas[dz + y * cs + x] * acts[plane + (y + r) * ins + x + s];
        }
    }
    partials[i] = part;
}
