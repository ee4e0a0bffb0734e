// Puzzle "map": out[i] = a[i] + 10 for each of the N elements.
// Launch: 1 workgroup of 4 threads (N = 4), one thread per element.
// Buffers: @binding(0) a: N f32 (read), @binding(1) out: N f32 (write).
const N: u32 = 4u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = lid.x;
    // hole:begin
    out[i] = a[i] + 10.0;
    // hole:end
}
