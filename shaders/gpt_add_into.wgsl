// The residual's backward sum, in place: acc += b, element-wise. The gradient that skipped
// the branch (acc, the block input's delta) gains the one that went through it (b). In place
// because WebGPU refuses two writable bindings of overlapping ranges of one buffer, which an
// out-of-place add with out = a would need; each invocation reads and writes only its element.
//
// Launch: workgroup_size(64); dispatch (ceil(len / 64), 1, 1) (len ≤ 4,194,240), one
//   invocation per element.
// Buffers: 0 = acc (read_write), 1 = b (read; declared read_write: a range of the same buffer,
//   and WebGPU forbids one buffer bound both read-only and writable in a dispatch),
//   2 = uniform Len (gpt_common.wgsl).

// Len: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read_write> acc: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<uniform> u: Len;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= u.len {
        return;
    }
    acc[i] = acc[i] + b[i];
}
