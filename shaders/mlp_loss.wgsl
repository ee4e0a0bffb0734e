// Tiny MLP, loss: the gradient of the mean loss with respect to the logits, and each sample's
// loss. The mean is over `mean_over` samples: the micro-batch's `batch` times the number of
// micro-batches accumulated into one update (gradient accumulation; 1 without it), so the
// summed micro-batch gradients are the effective batch's mean. Below, N = mean_over.
// kind 0 = softmax cross-entropy: p = softmax(z), loss = ln Σ e^(z−m) − (z_y − m),
// dz_c = (p_c − [c = y]) / N. kind 1 = mean squared error against the one-hot target t:
// loss = ½ Σ_c (z_c − t_c)², dz_c = (z_c − t_c) / N. kind 2 = regression: one output z
// against the sample's real target t, whose bits sit in the label slot (bitcast<f32>):
// loss = ½ (z − t)², dz = (z − t) / N.
//
// Launch: workgroup_size(64); one thread per sample; workgroups = ceil(batch / 64).
// Buffers: 0 = acts (read: the logits, batch × classes at logits_off),
//          1 = labels (read: one u32 class per sample, or an f32 target's bits for kind 2),
//          2 = deltas (read_write: dz written batch × classes at delta_off),
//          3 = losses (read_write: one f32 per sample at loss_off + b, read back with the
//              metrics; micro-batch j of an accumulated step writes at j · batch),
//          4 = uniform Loss {batch, classes, logits_off, delta_off, kind, mean_over, loss_off, 0}.

struct Loss {
    batch: u32,
    classes: u32,
    logits_off: u32,
    delta_off: u32,
    kind: u32,
    mean_over: u32,
    loss_off: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read> labels: array<u32>;
@group(0) @binding(2) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(3) var<storage, read_write> losses: array<f32>;
@group(0) @binding(4) var<uniform> u: Loss;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= u.batch) {
        return;
    }
    let z0 = u.logits_off + b * u.classes;
    let y = labels[b];
    let inv_b = 1.0 / f32(u.mean_over);
    if (u.kind == 0u) {
        var m = acts[z0];
        for (var c = 1u; c < u.classes; c++) {
            m = max(m, acts[z0 + c]);
        }
        var s = 0.0;
        for (var c = 0u; c < u.classes; c++) {
            s += exp(acts[z0 + c] - m);
        }
        for (var c = 0u; c < u.classes; c++) {
            let p = exp(acts[z0 + c] - m) / s;
            let t = select(0.0, 1.0, c == y);
            deltas[u.delta_off + b * u.classes + c] = (p - t) * inv_b;
        }
        losses[u.loss_off + b] = log(s) - (acts[z0 + y] - m);
    } else if (u.kind == 2u) {
        let e = acts[z0] - bitcast<f32>(y);
        deltas[u.delta_off + b * u.classes] = e * inv_b;
        losses[u.loss_off + b] = 0.5 * (e * e);
    } else {
        var acc = 0.0;
        for (var c = 0u; c < u.classes; c++) {
            let t = select(0.0, 1.0, c == y);
            let e = acts[z0 + c] - t;
            acc += e * e;
            deltas[u.delta_off + b * u.classes + c] = e * inv_b;
        }
        losses[u.loss_off + b] = 0.5 * acc;
    }
}
