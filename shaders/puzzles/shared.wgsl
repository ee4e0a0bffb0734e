// Puzzle "shared memory": out[i] = a[i] + 10 for N = 8, but each workgroup first copies its
// 4 elements into workgroup (shared) memory, waits at a barrier, then reads from there.
// Launch: 2 workgroups of 4 threads.
// Buffers: @binding(0) a: N f32 (read), @binding(1) out: N f32 (write);
// workgroup memory: tile, 4 f32 per workgroup.
const N: u32 = 8u;
const TPB: u32 = 4u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<f32, TPB>;

@compute @workgroup_size(TPB)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = gid.x;
    let l = lid.x;
    // hole:begin
    tile[l] = a[i];
    workgroupBarrier();
    out[i] = tile[l] + 10.0;
    // hole:end
}
