// Puzzle "broadcast": out[r][c] = a[r] + b[c], a column of N plus a row of N gives an
// N×N matrix (row by row), N = 2, with 3×3 threads.
// Launch: 1 workgroup of 3×3 threads; thread (x, y) handles column x of row y.
// Buffers: @binding(0) a: N f32, @binding(1) b: N f32 (read), @binding(2) out: N*N f32 (write).
const N: u32 = 2u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(3, 3)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let c = lid.x;
    let r = lid.y;
    // hole:begin
    if (r < N && c < N) {
        out[r * N + c] = a[r] + b[c];
    }
    // hole:end
}
