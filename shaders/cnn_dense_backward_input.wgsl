// CNN dense backward, input: dp[n, i] = Σ_j delta[n, j] · Wd[j, i], j ascending,
// one accumulator from 0 (the CPU twin's order, `cnn::net`): the last pool's delta, the
// logits' delta sent back through the dense weights.
//
// Launch: workgroup_size(64); one invocation per (sample n, input i), t = n·inputs + i;
//   workgroups (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); t = x + y·row.
// Buffers: 0 = params (read: Wd at w_off), 1 = deltas (read_write: reads logits_off, writes
//          in_off), 2 = uniform Dense (16 words; count = B·inputs).

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(2) var<uniform> u: Dense;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x + gid.y * u.row;
    if (t >= u.count) {
        return;
    }
    let n = t / u.inputs;
    let i = t % u.inputs;
    var acc = 0.0;
    for (var j = 0u; j < u.classes; j++) {
        acc += deltas[u.logits_off + n * u.classes + j] * params[u.w_off + j * u.inputs + i];
    }
    deltas[u.in_off + t] = acc;
}
