// The residual stream's sum, element-wise: out = a + b, the block's input plus its branch's
// output (three distinct ranges; the backward's in-place sum is gpt_add_into.wgsl).
//
// Launch: workgroup_size(64); dispatch (ceil(len / 64), 1, 1) (len ≤ 4,194,240), one
//   invocation per element.
// Buffers: 0 = a (read), 1 = b (read), 2 = out (read_write), 3 = uniform Len
//   (gpt_common.wgsl). All three are declared read_write: they are ranges of one buffer, and
//   WebGPU forbids one buffer bound both read-only and writable in a dispatch.

// Len: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> u: Len;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= u.len {
        return;
    }
    out[i] = a[i] + b[i];
}
