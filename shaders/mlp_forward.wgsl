// Tiny MLP, dense layer forward: out[b, n] = act(Σ_k W[n, k] · in[b, k] + bias[n]).
// One thread computes one output element; the sum runs k = 0 … fan_in − 1 (the CPU twin in
// crates/mlp sums in the same order). The hidden activation is a uniform field, so one
// pipeline serves every layer: 0 = linear (the output layer's logits), 1 = ReLU, 2 = tanh,
// 3 = sigmoid (tanh and sigmoid clamp z so exp cannot overflow).
//
// Launch: workgroup_size(64); workgroups = ceil(batch · fan_out / 64) along x.
// Buffers: 0 = params (read: every layer's W, fan_out × fan_in row-major at w_off, then its
//              biases at b_off),
//          1 = acts (read_write: each layer's activations, batch rows of its width; this
//              layer reads its input at in_off and writes its output at out_off),
//          2 = uniform Dense {batch, fan_in, fan_out, act, w_off, b_off, in_off, out_off}.

struct Dense {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    act: u32,
    w_off: u32,
    b_off: u32,
    in_off: u32,
    out_off: u32,
}

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<uniform> d: Dense;

// activate(): mlp_common.wgsl (appended when the kernel is built).

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= d.batch * d.fan_out) {
        return;
    }
    let b = i / d.fan_out;
    let n = i % d.fan_out;
    var acc = 0.0;
    for (var k = 0u; k < d.fan_in; k++) {
        acc += params[d.w_off + n * d.fan_in + k] * acts[d.in_off + b * d.fan_in + k];
    }
    acts[d.out_off + i] = activate(acc + params[d.b_off + n], d.act);
}
