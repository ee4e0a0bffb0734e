// CNN conv bias gradient (issue 24): db[o] = Σ_n (Σ_y Σ_x dz[n, o, y, x]), the per-sample sums
// first (y outer, x inner) and then their sum over n ascending, each from 0: the CPU twin's
// two stages (`cnn::net`), here in one invocation per channel because a block has only
// C_out biases.
//
// Launch: workgroup_size(64); one invocation per output channel o; workgroups
//   (min(g, 65535), ceil(g / 65535), 1) for g = ceil(count / 64); o = x + y·row.
// Buffers: 0 = deltas (read: the conv region's delta dz at conv_off), 1 = grads
//          (read_write: writes b_off + o), 2 = uniform Block (16 words; count = C_out).

@group(0) @binding(0) var<storage, read> deltas: array<f32>;
@group(0) @binding(1) var<storage, read_write> grads: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.x + gid.y * u.row;
    if (o >= u.count) {
        return;
    }
    let plane = u.conv_side * u.conv_side;
    var acc = 0.0;
    for (var n = 0u; n < u.batch; n++) {
        let dz = u.conv_off + (n * u.c_out + o) * plane;
        var part = 0.0;
        for (var p = 0u; p < plane; p++) {
            part += deltas[dz + p];
        }
        acc += part;
    }
    grads[u.b_off + o] = acc;
}
