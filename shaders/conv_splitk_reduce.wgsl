// Split-K reduction of the implicit GEMM stage: when a convolution has too few output blocks
// to fill the GPU (one image, few pixels, a long R·S·C reduction), the implicit GEMM cuts the
// reduction into `splits` slices, each workgroup layer z writing its partial sums to its own
// slice of `part`; this pass adds the slices: y[i] = Σ_z part[z·len + i].
//
// Launch geometry: workgroup_size(256); one invocation per vec4 of y;
//   dispatch (ceil(len4 / 256), 1, 1).
// Buffer layout:
//   @binding(0) part: splits × len4 vec4<f32> (len4 = N·P·Q·k4 / 4), read-only storage
//   @binding(1) y: len4 vec4<f32>, read-write storage
//   @binding(2) sizes: uniform { len4, splits, 0, 0 } (u32)

struct Sizes {
    len4: u32,
    splits: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> part: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> sizes: Sizes;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= sizes.len4) {
        return;
    }
    var acc = part[i];
    for (var z = 1u; z < sizes.splits; z = z + 1u) {
        acc = acc + part[z * sizes.len4 + i];
    }
    y[i] = acc;
}
