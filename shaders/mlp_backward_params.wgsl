// Tiny MLP, backward for one layer's parameters: dW[n, k] += Σ_b dz[b, n] · in[b, k] and
// dbias[n] += Σ_b dz[b, n], ADDED to the gradient buffer, which the step clears before its
// first micro-batch (so with one micro-batch per step it is the plain sum; with k, gradient
// accumulation adds the k micro-batches' sums in order). One WORKGROUP per parameter: column k = id mod (fan_in + 1) of row
// n = id / (fan_in + 1), where the extra column k = fan_in is the bias (its "input" is 1).
// Its 64 threads each sum every 64th sample (thread t: b = t, t + 64, …), then halve the 64
// partial sums in workgroup memory (t += t + 32, then + 16, …, + 1). The CPU twin sums in
// exactly this order. A batch of 1024 thus takes 16 steps per thread instead of 1024.
//
// Launch: workgroup_size(64); workgroups = fan_out · (fan_in + 1) along x, wrapping into y past
// 65,535 (workgroup index = x + y · num_workgroups.x; the few past the last parameter idle).
// Buffers: 0 = acts (read: the layer's input, batch × fan_in at in_off),
//          1 = deltas (read: the layer's dz, batch × fan_out at delta_off),
//          2 = grads (read_write, added to: same layout as params; W at w_off, biases at b_off),
//          3 = uniform Grad {batch, fan_in, fan_out, in_off, delta_off, w_off, b_off, 0}.

struct Grad {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    in_off: u32,
    delta_off: u32,
    w_off: u32,
    b_off: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read> deltas: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;
@group(0) @binding(3) var<uniform> g: Grad;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let cols = g.fan_in + 1u;
    let id = wid.x + wid.y * groups.x;
    let valid = id < g.fan_out * cols;
    let n = id / cols;
    let k = id % cols;
    var acc = 0.0;
    if (valid) {
        for (var b = t; b < g.batch; b += 64u) {
            var a = 1.0;
            if (k < g.fan_in) {
                a = acts[g.in_off + b * g.fan_in + k];
            }
            acc += deltas[g.delta_off + b * g.fan_out + n] * a;
        }
    }
    partial[t] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (t < s) {
            partial[t] += partial[t + s];
        }
        workgroupBarrier();
    }
    if (t == 0u && valid) {
        if (k < g.fan_in) {
            grads[g.w_off + n * g.fan_in + k] += partial[0];
        } else {
            grads[g.b_off + n] += partial[0];
        }
    }
}
