// Puzzle "axis sum": out[r] = sum of row r of an R×C matrix (R = 4, C = 6, row by row):
// one workgroup per row.
// Launch: R workgroups of 1 thread each (workgroup r sums row r).
// Buffers: @binding(0) a: R*C f32 (read), @binding(1) out: R f32 (write).
const R: u32 = 4u;
const C: u32 = 6u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
    let r = wid.x;
    // hole:begin
    var sum = 0.0;
    for (var c = 0u; c < C; c++) {
        sum += a[r * C + c];
    }
    out[r] = sum;
    // hole:end
}
