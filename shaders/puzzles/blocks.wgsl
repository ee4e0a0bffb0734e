// Puzzle "blocks": out[i] = a[i] + 10 for N = 9 elements, with workgroups of only 4
// threads: each thread finds its element from its workgroup and its place in it.
// Launch: 3 workgroups of 4 threads.
// Buffers: @binding(0) a: N f32 (read), @binding(1) out: N f32 (write).
const N: u32 = 9u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    // hole:begin
    let i = wid.x * 4u + lid.x;
    if (i < N) {
        out[i] = a[i] + 10.0;
    }
    // hole:end
}
