// Puzzle "shared memory": each workgroup of 4 reverses its 4 elements and adds 10, for N = 8:
// out[i] = a[mirror of i within its workgroup] + 10. Each thread first copies its element into
// workgroup (shared) memory, all wait at a barrier, then each reads the element its mirror
// thread wrote: without the barrier it could read it before it is written.
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
    out[i] = tile[TPB - 1u - l] + 10.0;
    // hole:end
}
