// Coalescing probe: every element of a buffer is read exactly once, but neighbouring threads
// read addresses `stride` floats apart (the `memory` lesson). With stride 1 a warp's 32 reads fall in a
// few cache lines; with stride 32 each read needs its own line, so the same useful bytes cost
// many more bytes of memory traffic.
//
// The n elements are viewed as a (stride × n/stride) matrix stored column-major: logical read
// v (0 ≤ v < n) goes to element (v mod rows)·stride + v / rows, rows = n / stride. This is a
// permutation, so every element is read once; consecutive v are `stride` floats apart.
// Logical thread t (0 ≤ t < threads) reads v = t, t + threads, t + 2·threads, … and writes
// the sum of what it read.
//
// Launch geometry: workgroup_size(256); dispatch (g, 1, 1) with any g ≥ 1 (grid-stride loop
//   over the logical threads).
// Buffer layout:
//   @binding(0) src: n f32 (read); n must be a multiple of stride
//   @binding(1) sums: `threads` f32 (written): sums[t] = Σ src[idx(v)] over t's reads
//   @binding(2) dims: uniform { n, threads, stride, _pad }

struct Dims {
    n: u32,
    threads: u32,
    stride: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let stride = max(dims.stride, 1u);
    let rows = dims.n / stride;
    let launched = groups.x * 256u;
    for (var t = gid.x; t < dims.threads; t += launched) {
        var acc = 0.0;
        for (var v = t; v < dims.n; v += dims.threads) {
            acc += src[(v % rows) * stride + v / rows];
        }
        sums[t] = acc;
    }
}
