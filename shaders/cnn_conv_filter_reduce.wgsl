// CNN conv filter gradient, stage 2 of 2: dW[t] = Σ_n part_n[t], n ascending, one
// accumulator from 0, for every filter tap t of a block (the CPU twin's order, `cnn::net`).
// Splitting the sum over the batch from the sum over pixels lets stage 1 spread B times more
// invocations over the GPU while the twin can still follow it exactly.
//
// Launch: workgroup_size(64); one invocation per filter tap t = ((o·C_in + c)·K + r)·K + s;
//   workgroups (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); t = x + y·row.
// Buffers: 0 = partials (read: B × C_out·C_in·K·K, sample-major, from
//          cnn_conv_filter_partials.wgsl), 1 = grads (read_write: writes w_off + t),
//          2 = uniform Block (16 words; count = C_out·C_in·K·K).

@group(0) @binding(0) var<storage, read> partials: array<f32>;
@group(0) @binding(1) var<storage, read_write> grads: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x + gid.y * u.row;
    if (t >= u.count) {
        return;
    }
    var acc = 0.0;
    for (var n = 0u; n < u.batch; n++) {
        acc += partials[n * u.count + t];
    }
    grads[u.w_off + t] = acc;
}
