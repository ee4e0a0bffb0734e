// GELU in its tanh form, backward: with u = √(2/π)·(x + 0.044715·x³),
// dx += dy·(0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·√(2/π)·(1 + 3·0.044715·x²)), added to what
// the residual stream already passed back. WGSL states no accuracy of its own for tanh, so
// the check gives it an absolute allowance.
//
// Launch: workgroup_size(64); dispatch (ceil(len / 64), 1, 1) (len ≤ 4,194,240), one
//   invocation per element.
// Buffers: 0 = x (read), 1 = dy (read; declared read_write so that dy and dx may be ranges
//   of one buffer: WebGPU forbids one buffer bound both read-only and writable in a
//   dispatch), 2 = dx (read_write, added to), 3 = uniform
//   {len, 0, 0, 0}.

// Len, GELU_C and GELU_A: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> dx: array<f32>;
@group(0) @binding(3) var<uniform> u: Len;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= u.len {
        return;
    }
    let v = x[i];
    let th = tanh(GELU_C * (v + GELU_A * v * v * v));
    let du = GELU_C * (1.0 + 3.0 * GELU_A * v * v);
    dx[i] += dy[i] * (0.5 * (1.0 + th) + 0.5 * v * (1.0 - th * th) * du);
}
