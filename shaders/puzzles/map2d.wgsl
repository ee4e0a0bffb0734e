// Puzzle "2-D map": out[r][c] = a[r][c] + 10 for an N×N matrix stored row by row
// (element (r, c) at index r * N + c), with a 4×4 block of threads for N = 3.
// Launch: 1 workgroup of 4×4 threads; thread (x, y) handles column x of row y.
// Buffers: @binding(0) a: N*N f32 (read), @binding(1) out: N*N f32 (write).
const N: u32 = 3u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4, 4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let c = lid.x;
    let r = lid.y;
    // hole:begin
    if (r < N && c < N) {
        out[r * N + c] = a[r * N + c] + 10.0;
    }
    // hole:end
}
