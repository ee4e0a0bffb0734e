// CNN dense backward, parameters: dWd[j, i] = Σ_n delta[n, j] · p[n, i] and
// dbd[j] = Σ_n delta[n, j], n ascending, one accumulator from 0 (the CPU twin's order,
// `cnn::net`); delta is the logits' delta (already divided by B), p the last pool's output.
//
// Launch: workgroup_size(64); one invocation per dense parameter t, t < classes·inputs a
//   weight (j = t / inputs, i = t % inputs), the next classes the biases; workgroups
//   (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); t = x + y·row.
// Buffers: 0 = acts (read: in_off), 1 = deltas (read: logits_off), 2 = grads (read_write:
//          writes w_off + t; the biases follow the weights, so b_off = w_off + classes·inputs),
//          3 = uniform Dense (16 words; count = classes·inputs + classes).

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read> deltas: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;
@group(0) @binding(3) var<uniform> u: Dense;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x + gid.y * u.row;
    if (t >= u.count) {
        return;
    }
    let weights = u.classes * u.inputs;
    var acc = 0.0;
    if (t < weights) {
        let j = t / u.inputs;
        let i = t % u.inputs;
        for (var n = 0u; n < u.batch; n++) {
            acc += deltas[u.logits_off + n * u.classes + j] * acts[u.in_off + n * u.inputs + i];
        }
        grads[u.w_off + t] = acc;
    } else {
        let j = t - weights;
        for (var n = 0u; n < u.batch; n++) {
            acc += deltas[u.logits_off + n * u.classes + j];
        }
        grads[u.b_off + j] = acc;
    }
}
