// CNN conv bias gradient: db[o] = Σ_n (Σ_y Σ_x dz[n, o, y, x]), the per-sample sums
// first (y outer, x inner) and then their sum over n ascending, each from 0: the CPU twin's
// two stages (`cnn::net`). A block has only C_out biases, so each gets a workgroup: its 64
// invocations sum 64 samples' maps at a time, each map in the twin's order, and invocation 0
// adds those per-sample sums in sample order — the twin's additions in the twin's order, the
// maps spread over the workgroup. (One invocation per channel summing all B·S'² deltas alone
// was 80 % of a batch-256 step on an H200: docs/benchmarks.md, "CNN training".)
//
// Launch: workgroup_size(64); one workgroup per output channel o = workgroup_id.x, workgroups
//   (C_out, 1, 1); count = C_out (row unused).
// Buffers: 0 = deltas (read: the conv region's delta dz at conv_off), 1 = grads
//          (read_write: writes b_off + o), 2 = uniform Block (16 words; count = C_out).

@group(0) @binding(0) var<storage, read> deltas: array<f32>;
@group(0) @binding(1) var<storage, read_write> grads: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

// Per-sample sums of the current 64 samples.
var<workgroup> part: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let o = wid.x;
    let plane = u.conv_side * u.conv_side;
    var acc = 0.0;
    for (var n0 = 0u; n0 < u.batch; n0 += 64u) {
        let n = n0 + lid;
        var sample = 0.0;
        if (n < u.batch && o < u.count) {
            let dz = u.conv_off + (n * u.c_out + o) * plane;
            for (var p = 0u; p < plane; p++) {
                sample += deltas[dz + p];
            }
        }
        part[lid] = sample;
        workgroupBarrier();
        if (lid == 0u) {
            let m = min(64u, u.batch - n0);
            for (var i = 0u; i < m; i++) {
                acc += part[i];
            }
        }
        workgroupBarrier();
    }
    if (lid == 0u && o < u.count) {
        grads[u.b_off + o] = acc;
    }
}
