// Bandwidth probe: copies a buffer of f32 to another, four floats (one vec4) per step, so the
// bytes moved per second approach the device's memory bandwidth (lessons 5 and 8).
//
// Launch geometry: workgroup_size(256); dispatch (g, 1, 1) with any g ≥ 1: the kernel walks
//   the vec4s in a grid-stride loop, so every element is copied whatever the grid.
// Buffer layout:
//   @binding(0) src: n f32 (read), n a multiple of 4
//   @binding(1) dst: n f32 (written): dst[i] = src[i], bit for bit
//   @binding(2) dims: uniform { n, threads, param, _pad }: n = elements; threads and param
//     are unused here (they shape the other measuring kernels)
// Bytes moved per run: 8·n (each element read once and written once).

struct Dims {
    n: u32,
    threads: u32,
    param: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let quads = dims.n / 4u;
    let stride = groups.x * 256u;
    for (var i = gid.x; i < quads; i += stride) {
        dst[i] = src[i];
    }
}
