// Tiny MLP, the per-sample half of a whole training step in ONE dispatch: one thread per
// sample of the batch picks its row of the training set, runs the forward pass through every
// layer, the loss and its gradient, and the backward pass of the deltas through every layer.
// Each of those only ever needs its own sample's numbers, so no thread waits for another;
// the per-parameter half (sums over the batch, then the optimiser) is mlp_step_params.wgsl.
// The sums run in the same order as the per-layer kernels and the CPU twin: the dense layer
// of mlp_forward.wgsl (k = 0 … fan_in − 1, then the bias and the activation), the loss of
// mlp_loss.wgsl, the deltas of mlp_backward_input.wgsl (n = 0 … fan_out − 1, times the
// activation's derivative taken from its output).
// Batch rows: the training set is uploaded once in batch order (row j = sample order[j]), so
// sample b of a step is row (start + b) mod rows, as the CPU twin's `batch_indices`.
// Thread 0 writes the next step's state {start + batch mod rows, t + 1} into the other of the
// two state buffers (this step reads one, writes the other): the CPU writes nothing per step.
// Used for networks with at most 8 layers of at most 64 neurons (each thread walks its
// sample through all of them); wider networks use the per-layer kernels.
//
// Launch: workgroup_size(64); one thread per sample; workgroups = ceil(batch / 64).
// Buffers: 0 = params (read: layer l's W at w_off, fan_out × fan_in row-major; biases at b_off),
//          1 = acts (read_write: layer l's input rows at in_off, output rows at out_off),
//          2 = deltas (read_write: the loss gradient w.r.t. each layer's output, same offsets),
//          3 = losses (read_write: one f32 per sample),
//          4 = data_x (read: rows × inputs, batch order), 5 = data_y (read: rows labels; f32
//              bits for regression),
//          6 = state (read: {start, t, 0, 0}), 7 = next_state (read_write),
//          8 = uniform StepNet (see below; shared with mlp_step_params.wgsl).

// activate(), derivative_from_output(), StepState and StepNet: mlp_common.wgsl (appended when
// the kernel is built). StepNet here: layers[2l + 1].w = the first workgroup of the layer's parameters in
// mlp_step_params.

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(3) var<storage, read_write> losses: array<f32>;
@group(0) @binding(4) var<storage, read> data_x: array<f32>;
@group(0) @binding(5) var<storage, read> data_y: array<u32>;
@group(0) @binding(6) var<storage, read> state: StepState;
@group(0) @binding(7) var<storage, read_write> next_state: StepState;
@group(0) @binding(8) var<uniform> u: StepNet;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let batch = u.head.x;
    let rows = u.head.y;
    let depth = u.head.z;
    let b = gid.x;
    if (b == 0u) {
        next_state = StepState((state.start + batch % rows) % rows, state.t + 1u, 0u, 0u);
    }
    if (b >= batch) {
        return;
    }
    let row = (state.start + b % rows) % rows;
    // The inputs, copied where the first layer's weight gradients read them.
    let inputs = u.layers[0].x;
    let in0 = u.layers[1].y;
    for (var k = 0u; k < inputs; k++) {
        acts[in0 + b * inputs + k] = data_x[row * inputs + k];
    }
    // Forward, layer by layer.
    for (var l = 0u; l < depth; l++) {
        let a = u.layers[2u * l];
        let c = u.layers[2u * l + 1u];
        let fan_in = a.x;
        let fan_out = a.y;
        for (var n = 0u; n < fan_out; n++) {
            var acc = 0.0;
            for (var k = 0u; k < fan_in; k++) {
                acc += params[a.w + n * fan_in + k] * acts[c.y + b * fan_in + k];
            }
            acts[c.z + b * fan_out + n] = activate(acc + params[c.x + n], a.z);
        }
    }
    // Loss and its gradient at the logits (mlp_loss.wgsl).
    let last = u.layers[2u * (depth - 1u)];
    let classes = last.y;
    let z0 = u.layers[2u * (depth - 1u) + 1u].z + b * classes;
    let y = data_y[row];
    let inv_b = 1.0 / f32(batch);
    let kind = u.head.w;
    if (kind == 0u) {
        var m = acts[z0];
        for (var c = 1u; c < classes; c++) {
            m = max(m, acts[z0 + c]);
        }
        var s = 0.0;
        for (var c = 0u; c < classes; c++) {
            s += exp(acts[z0 + c] - m);
        }
        for (var c = 0u; c < classes; c++) {
            let p = exp(acts[z0 + c] - m) / s;
            let t = select(0.0, 1.0, c == y);
            deltas[z0 + c] = (p - t) * inv_b;
        }
        losses[b] = log(s) - (acts[z0 + y] - m);
    } else if (kind == 2u) {
        let e = acts[z0] - bitcast<f32>(y);
        deltas[z0] = e * inv_b;
        losses[b] = 0.5 * (e * e);
    } else {
        var acc = 0.0;
        for (var c = 0u; c < classes; c++) {
            let t = select(0.0, 1.0, c == y);
            let e = acts[z0 + c] - t;
            acc += e * e;
            deltas[z0 + c] = e * inv_b;
        }
        losses[b] = 0.5 * acc;
    }
    // Backward through the layers (mlp_backward_input.wgsl), last layer first: the deltas
    // at layer l's input from those at its output.
    for (var l = depth - 1u; l >= 1u; l--) {
        let a = u.layers[2u * l];
        let c = u.layers[2u * l + 1u];
        let fan_in = a.x;
        let fan_out = a.y;
        // The activation of the layer below, whose output is this layer's input.
        let act_below = u.layers[2u * (l - 1u)].z;
        for (var k = 0u; k < fan_in; k++) {
            var s = 0.0;
            for (var n = 0u; n < fan_out; n++) {
                s += deltas[c.z + b * fan_out + n] * params[a.w + n * fan_in + k];
            }
            let i = c.y + b * fan_in + k;
            deltas[i] = s * derivative_from_output(acts[i], act_below);
        }
    }
}
