// Puzzle "1-D convolution": out[i] = sum over k < K of a[i + k] * b[k], where a counts as 0
// past its end (N = 8 samples, K = 3 taps).
// Launch: 1 workgroup of 8 threads, one per output.
// Buffers: @binding(0) a: N f32, @binding(1) b: K f32 (read), @binding(2) out: N f32 (write).
const N: u32 = 8u;
const K: u32 = 3u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = lid.x;
    // hole:begin
    var acc = 0.0;
    for (var k = 0u; k < K; k++) {
        if (i + k < N) {
            acc += a[i + k] * b[k];
        }
    }
    out[i] = acc;
    // hole:end
}
