// Puzzle "zip": out[i] = a[i] + b[i].
// Launch: 1 workgroup of 4 threads (N = 4), one thread per element.
// Buffers: @binding(0) a: N f32, @binding(1) b: N f32 (read), @binding(2) out: N f32 (write).
const N: u32 = 4u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = lid.x;
    // hole:begin
    out[i] = a[i] + b[i];
    // hole:end
}
