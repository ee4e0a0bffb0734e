// Tiny MLP, picking a training step's batch on the GPU without computing anything: copies
// row (start + b) mod rows of the training set into the first layer's input, batch sample b,
// and that row's label into `labels`, so a plain mlp_forward.wgsl can run the first layer.
// The step runs this instead of mlp_forward_gather.wgsl (which does the same copies inside
// the first layer) when mlp-forward is edited in the editor, so the edit runs on every layer.
// The set is uploaded once in the batch order of `mlp::net::batch_order`, so a batch is
// `batch` consecutive rows, wrapping (the CPU twin's `batch_indices`). Invocation 0 writes the
// next step's state exactly as mlp_forward_gather.wgsl does: start + batch (mod rows); the
// micro-batch index micro + 1 (mod accum), and t + 1 only when that wraps (Adam's t counts
// updates). The state is double-buffered (this step reads one copy, writes the other).
//
// Launch: workgroup_size(64); one thread per input element; workgroups =
//   ceil(batch · fan_in / 64) along x.
// Buffers: 0 = acts (read_write: the first layer's input, batch × fan_in at in_off),
//          1 = labels (read_write: one u32 per batch sample),
//          2 = data_x (read: rows × fan_in features, batch order),
//          3 = data_y (read: rows labels, same order),
//          4 = state (read: {start, t, micro, 0}), 5 = next_state (read_write: the next step's),
//          6 = uniform Gather {batch, fan_in, fan_out, act, w_off, b_off, in_off, out_off,
//              rows, accum, 0, 0} (the layout of mlp_forward_gather.wgsl; fan_out, act,
//              w_off, b_off and out_off are unused here).

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

// StepState: mlp_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read_write> acts: array<f32>;
@group(0) @binding(1) var<storage, read_write> labels: array<u32>;
@group(0) @binding(2) var<storage, read> data_x: array<f32>;
@group(0) @binding(3) var<storage, read> data_y: array<u32>;
@group(0) @binding(4) var<storage, read> state: StepState;
@group(0) @binding(5) var<storage, read_write> next_state: StepState;
@group(0) @binding(6) var<uniform> d: Gather;

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
    if (i >= d.batch * d.fan_in) {
        return;
    }
    let b = i / d.fan_in;
    let k = i % d.fan_in;
    let row = (state.start + b % d.rows) % d.rows;
    acts[d.in_off + i] = data_x[row * d.fan_in + k];
    if (k == 0u) {
        labels[b] = data_y[row];
    }
}
