// GELU in its tanh form, element-wise, forward: y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
// WGSL states no accuracy of its own for tanh, so the check gives it an absolute allowance.
//
// Launch: workgroup_size(64); dispatch (ceil(len / 64), 1, 1) (len ≤ 4,194,240), one
//   invocation per element.
// Buffers: 0 = x (read; declared read_write so that x and y may be ranges of one buffer:
//   WebGPU forbids one buffer bound both read-only and writable in a dispatch),
//   1 = y (read_write), 2 = uniform {len, 0, 0, 0}.

// Len, GELU_C and GELU_A: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> u: Len;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= u.len {
        return;
    }
    let v = x[i];
    y[i] = 0.5 * v * (1.0 + tanh(GELU_C * (v + GELU_A * v * v * v)));
}
