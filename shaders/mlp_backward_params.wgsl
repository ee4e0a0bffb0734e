// Tiny MLP, backward for one layer's parameters: dW[n, k] = Σ_b dz[b, n] · in[b, k] and
// dbias[n] = Σ_b dz[b, n]. Thread t handles column k = t mod (fan_in + 1) of row
// n = t / (fan_in + 1); the extra column k = fan_in is the bias (its "input" is 1). Sums run
// b = 0 … batch − 1, as in the CPU twin.
//
// Launch: workgroup_size(64); workgroups = ceil(fan_out · (fan_in + 1) / 64).
// Buffers: 0 = acts (read: the layer's input, batch × fan_in at in_off),
//          1 = deltas (read: the layer's dz, batch × fan_out at delta_off),
//          2 = grads (read_write: same layout as params; W at w_off, biases at b_off),
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

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let cols = g.fan_in + 1u;
    if (t >= g.fan_out * cols) {
        return;
    }
    let n = t / cols;
    let k = t % cols;
    var acc = 0.0;
    for (var b = 0u; b < g.batch; b++) {
        var a = 1.0;
        if (k < g.fan_in) {
            a = acts[g.in_off + b * g.fan_in + k];
        }
        acc += deltas[g.delta_off + b * g.fan_out + n] * a;
    }
    if (k < g.fan_in) {
        grads[g.w_off + n * g.fan_in + k] = acc;
    } else {
        grads[g.b_off + n] = acc;
    }
}
