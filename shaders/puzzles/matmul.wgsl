// Puzzle "matmul": out = A · B for N×N matrices (N = 4, row by row): out[r][c] is the sum
// over k of A[r][k] * B[k][c].
// Launch: 1 workgroup of 4×4 threads; thread (x, y) computes column x of row y.
// Buffers: @binding(0) A: N*N f32, @binding(1) B: N*N f32 (read), @binding(2) out: N*N f32 (write).
const N: u32 = 4u;
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4, 4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let c = lid.x;
    let r = lid.y;
    // hole:begin
    var acc = 0.0;
    for (var k = 0u; k < N; k++) {
        acc += A[r * N + k] * B[k * N + c];
    }
    out[r * N + c] = acc;
    // hole:end
}
