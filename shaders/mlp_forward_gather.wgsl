// Tiny MLP, first dense layer of a training step, picking its own batch on the GPU:
// out[b, n] = act(Σ_k W[n, k] · in[b, k] + bias[n]) as in mlp_forward.wgsl, where in[b] is row
// (start + b) mod rows of the training set. The set is uploaded once, already in the batch
// order of `mlp::net::batch_order` (row j holds sample order[j]), so a batch is `batch`
// consecutive rows, wrapping — the same samples, in the same order, as the CPU twin's
// `batch_indices`. The threads of output 0 also copy their row's inputs into the activation
// buffer (the first layer's weight gradients read them) and its label into `labels` (the
// loss reads it). Invocation 0 writes the next step's state: start + batch (mod rows), and
// with `accum` micro-batches per update (gradient accumulation; 0 or 1 = none) the micro-batch
// index micro + 1 (mod accum) and t + 1 only when that wraps, so Adam's t counts updates. The state is double-buffered (this step reads one, writes the other), so no thread
// of this dispatch reads what another writes and the CPU writes nothing per step.
//
// Launch: workgroup_size(64); workgroups = ceil(batch · fan_out / 64) along x.
// Buffers: 0 = params (read: W at w_off, fan_out × fan_in row-major, biases at b_off),
//          1 = acts (read_write: this layer's input written at in_off, output at out_off),
//          2 = labels (read_write: one u32 per batch sample),
//          3 = data_x (read: rows × fan_in features, batch order),
//          4 = data_y (read: rows labels, same order),
//          5 = state (read: {start, t, micro, 0}: first row of this batch, updates done before
//              it, its micro-batch within the update),
//          6 = next_state (read_write: the state of the next step),
//          7 = uniform Gather {batch, fan_in, fan_out, act, w_off, b_off, in_off, out_off,
//              rows, accum, 0, 0}.

struct Gather {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    act: u32,
    w_off: u32,
    b_off: u32,
    in_off: u32,
    out_off: u32,
    rows: u32,
    accum: u32,
    pad1: u32,
    pad2: u32,
}

// activate(), StepState: mlp_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<storage, read_write> labels: array<u32>;
@group(0) @binding(3) var<storage, read> data_x: array<f32>;
@group(0) @binding(4) var<storage, read> data_y: array<u32>;
@group(0) @binding(5) var<storage, read> state: StepState;
@group(0) @binding(6) var<storage, read_write> next_state: StepState;
@group(0) @binding(7) var<uniform> d: Gather;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i == 0u) {
        let micro = (state.micro + 1u) % max(d.accum, 1u);
        next_state = StepState(
            (state.start + d.batch % d.rows) % d.rows,
            state.t + select(0u, 1u, micro == 0u),
            micro,
            0u,
        );
    }
    if (i >= d.batch * d.fan_out) {
        return;
    }
    let b = i / d.fan_out;
    let n = i % d.fan_out;
    let row = (state.start + b % d.rows) % d.rows;
    var acc = 0.0;
    for (var k = 0u; k < d.fan_in; k++) {
        let v = data_x[row * d.fan_in + k];
        acc += params[d.w_off + n * d.fan_in + k] * v;
        if (n == 0u) {
            acts[d.in_off + b * d.fan_in + k] = v;
        }
    }
    if (n == 0u) {
        labels[b] = data_y[row];
    }
    acts[d.out_off + i] = activate(acc + params[d.b_off + n], d.act);
}
