// Tiny MLP, the output layer and the loss in one dispatch: one thread per sample computes
// its logits z[b, c] = act(Σ_k W[c, k] · in[b, k] + bias[c]) exactly as mlp_forward.wgsl does
// (same sum order), writes them, then the loss and its gradient exactly as mlp_loss.wgsl
// does, then sends that gradient one layer down exactly as mlp_backward_input.wgsl does:
// dz_in[b, k] = (Σ_c dz[b, c] · W[c, k]) · f'(in[b, k]), f the hidden layer's activation
// (`below_act`; its derivative written in terms of its output, as there), summed over c in
// order. Fusing saves two dispatches (and the barriers before them) per training step; the
// output layer has only `classes` outputs per sample, so one thread per sample is enough, and
// nothing here reads what another thread writes (the weights change only in a later dispatch).
// kind 0 = softmax cross-entropy, 1 = mean squared error against the one-hot target,
// 2 = regression (the label slot holds an f32 target's bits); see mlp_loss.wgsl.
//
// Launch: workgroup_size(64); one thread per sample; workgroups = ceil(batch / 64).
// Buffers: 0 = params (read: W at w_off, classes × fan_in row-major, biases at b_off),
//          1 = acts (read_write: the layer's input at in_off, logits written at out_off),
//          2 = labels (read: one u32 per sample),
//          3 = deltas (read_write: dz written batch × classes at delta_off; the hidden layer's
//              dz_in written batch × fan_in at in_off, the offsets of the activations),
//          4 = losses (read_write: one f32 per sample at loss_off + b; micro-batch j of an
//              accumulated step writes at j · batch),
//          5 = uniform Head {batch, fan_in, classes, act, w_off, b_off, in_off, out_off,
//              delta_off, kind, mean_over, loss_off, below_act, 0, 0, 0}: the gradient is of
//              the mean over mean_over samples (batch · micro-batches per update, as in
//              mlp_loss.wgsl).

struct Head {
    batch: u32,
    fan_in: u32,
    classes: u32,
    act: u32,
    w_off: u32,
    b_off: u32,
    in_off: u32,
    out_off: u32,
    delta_off: u32,
    kind: u32,
    mean_over: u32,
    loss_off: u32,
    below_act: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<u32>;
@group(0) @binding(3) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(4) var<storage, read_write> losses: array<f32>;
@group(0) @binding(5) var<uniform> u: Head;

// activate(), derivative_from_output(): mlp_common.wgsl (appended when the kernel is built).

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= u.batch) {
        return;
    }
    let z0 = u.out_off + b * u.classes;
    for (var c = 0u; c < u.classes; c++) {
        var acc = 0.0;
        for (var k = 0u; k < u.fan_in; k++) {
            acc += params[u.w_off + c * u.fan_in + k] * acts[u.in_off + b * u.fan_in + k];
        }
        acts[z0 + c] = activate(acc + params[u.b_off + c], u.act);
    }
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
    }    // The gradient one layer down (this thread's own deltas, written above).
    for (var k = 0u; k < u.fan_in; k++) {
        var g = 0.0;
        for (var c = 0u; c < u.classes; c++) {
            g += deltas[u.delta_off + b * u.classes + c] * params[u.w_off + c * u.fan_in + k];
        }
        let i = u.in_off + b * u.fan_in + k;
        deltas[i] = g * derivative_from_output(acts[i], u.below_act);
    }
}
