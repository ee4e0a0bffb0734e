// Puzzle "prefix sum": out[i] = a[0] + a[1] + ... + a[i] (inclusive scan) over N = 8
// elements, in workgroup memory, in log2(N) steps (Hillis–Steele).
// Launch: 1 workgroup of 8 threads.
// Buffers: @binding(0) a: N f32 (read), @binding(1) out: N f32 (write);
// workgroup memory: s, N f32.
const N: u32 = 8u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<workgroup> s: array<f32, N>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = lid.x;
    // hole:begin
    s[i] = a[i];
    workgroupBarrier();
    for (var d = 1u; d < N; d = d * 2u) {
        var v = s[i];
        if (i >= d) {
            v = v + s[i - d];
        }
        workgroupBarrier();
        s[i] = v;
        workgroupBarrier();
    }
    out[i] = s[i];
    // hole:end
}
