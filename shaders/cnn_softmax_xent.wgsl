// CNN softmax cross-entropy, one sample per invocation, in the CPU twin's order
// (`cnn::net`): m = max_j z_j; s = Σ_j exp(z_j − m) (j ascending, from 0);
// prob_j = exp(z_j − m) / s; loss = ln(s) − (z_y − m); the logits' delta is
// (prob_j − [j = y]) · (1/B), with 1/B rounded once on the CPU (inv_batch). The max keeps
// every exponent ≤ 0, so nothing overflows. WGSL's exp and log are not correctly rounded:
// the last bits may differ from the twin's, which the comparison's bound allows for.
// The step's loss, (Σ_n loss_n) / B, is summed on the CPU from the losses read back.
//
// Launch: workgroup_size(64); one invocation per sample n; workgroups
//   (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); n = x + y·row.
// Buffers: 0 = acts (read_write: reads logits_off, writes probs_off), 1 = labels (u32, B;
//          only read, but declared read_write: the training engine keeps them in the
//          activations' buffer, and WebGPU forbids binding one buffer read-only and writable
//          in one dispatch), 2 = deltas (read_write: writes logits_off), 3 = losses
//          (read_write, B), 4 = uniform Dense (16 words; count = B).

@group(0) @binding(0) var<storage, read_write> acts: array<f32>;
@group(0) @binding(1) var<storage, read_write> labels: array<u32>;
@group(0) @binding(2) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(3) var<storage, read_write> losses: array<f32>;
@group(0) @binding(4) var<uniform> u: Dense;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = gid.x + gid.y * u.row;
    if (n >= u.count) {
        return;
    }
    let z = u.logits_off + n * u.classes;
    var m = acts[z];
    for (var j = 1u; j < u.classes; j++) {
        m = max(m, acts[z + j]);
    }
    var s = 0.0;
    for (var j = 0u; j < u.classes; j++) {
        s += exp(acts[z + j] - m);
    }
    // A label outside the classes (not in a valid asset) is clamped, never read out of range.
    let y = min(labels[n], u.classes - 1u);
    losses[n] = log(s) - (acts[z + y] - m);
    for (var j = 0u; j < u.classes; j++) {
        let prob = exp(acts[z + j] - m) / s;
        acts[u.probs_off + n * u.classes + j] = prob;
        deltas[z + j] = (prob - select(0.0, 1.0, j == y)) * u.inv_batch;
    }
}
