// Naive attention, pass 2 of 3: each score row i (keys 0…i, the causal part) becomes
// probabilities in place: p_j = exp(s_j − max) / Σ_j exp(s_k − max). One workgroup per row;
// its 128 invocations stride over the row and combine their maxima and sums in shared memory
// (a tree, so the sum's order differs from the CPU twin's ascending one: the check's bound
// is order-free).
//
// Launch: workgroup_size(128); dispatch (n, bh, 1): workgroup (i, z) is row i of problem z.
// Buffers: 0 = scores (read_write, bh·n·n f32, as attention_naive_scores.wgsl wrote them),
//   1 = uniform Attn.

@group(0) @binding(0) var<storage, read_write> scores: array<f32>;
@group(0) @binding(1) var<uniform> u: Attn;

var<workgroup> part: array<f32, 128>;

@compute @workgroup_size(128)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = wg.x;
    let row = (wg.y * u.n + i) * u.n;
    let len = i + 1u;
    // A large finite start instead of −∞: WGSL may assume no infinities.
    var m = -3.0e38;
    for (var j = lid; j < len; j += 128u) {
        m = max(m, scores[row + j]);
    }
    part[lid] = m;
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if lid < s {
            part[lid] = max(part[lid], part[lid + s]);
        }
        workgroupBarrier();
    }
    let row_max = part[0];
    workgroupBarrier();
    var z = 0.0;
    for (var j = lid; j < len; j += 128u) {
        let e = exp(scores[row + j] - row_max);
        scores[row + j] = e;
        z += e;
    }
    part[lid] = z;
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if lid < s {
            part[lid] = part[lid] + part[lid + s];
        }
        workgroupBarrier();
    }
    let total = part[0];
    for (var j = lid; j < len; j += 128u) {
        scores[row + j] = scores[row + j] / total;
    }
}
