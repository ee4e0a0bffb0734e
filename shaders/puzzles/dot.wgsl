// Puzzle "dot product": out[0] = sum of a[i] * b[i] over N = 8 elements: each thread puts its
// product in workgroup memory, then the workgroup adds them up (a tree reduction).
// Launch: 1 workgroup of 8 threads.
// Buffers: @binding(0) a: N f32, @binding(1) b: N f32 (read), @binding(2) out: 1 f32 (write);
// workgroup memory: part, N f32.
const N: u32 = 8u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
var<workgroup> part: array<f32, N>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = lid.x;
    // hole:begin
    part[i] = a[i] * b[i];
    workgroupBarrier();
    for (var stride = N / 2u; stride > 0u; stride = stride / 2u) {
        if (i < stride) {
            part[i] = part[i] + part[i + stride];
        }
        workgroupBarrier();
    }
    if (i == 0u) {
        out[0] = part[0];
    }
    // hole:end
}
