// Tiny MLP, backward through one layer to its input: dz_in[b, k] =
// (Σ_n dz[b, n] · W[n, k]) · f'(a[b, k]), where a is the previous layer's output and f its
// activation, whose derivative is written in terms of a: ReLU a > 0, tanh 1 − a²,
// sigmoid a(1 − a), linear 1. Not run for the first layer (its input is the data).
//
// Launch: workgroup_size(64); one thread per input element; workgroups =
// ceil(batch · fan_in / 64).
// Buffers: 0 = params (read: W at w_off),
//          1 = acts (read: the layer's input a, batch × fan_in at in_off),
//          2 = deltas (read_write: reads dz at out_delta_off, writes dz_in at in_delta_off),
//          3 = uniform Back {batch, fan_in, fan_out, act, w_off, in_off, in_delta_off,
//              out_delta_off}.

struct Back {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    act: u32,
    w_off: u32,
    in_off: u32,
    in_delta_off: u32,
    out_delta_off: u32,
}

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read> acts: array<f32>;
@group(0) @binding(2) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(3) var<uniform> u: Back;

// derivative_from_output(): mlp_common.wgsl (appended when the kernel is built).

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u.batch * u.fan_in) {
        return;
    }
    let b = i / u.fan_in;
    let k = i % u.fan_in;
    var s = 0.0;
    for (var n = 0u; n < u.fan_out; n++) {
        s += deltas[u.out_delta_off + b * u.fan_out + n] * params[u.w_off + n * u.fan_in + k];
    }
    deltas[u.in_delta_off + i] = s * derivative_from_output(acts[u.in_off + i], u.act);
}
