// Naive attention backward, pass 2 of 4: through the softmax. For row i (keys 0…i), with
// D = Σ_j p_j·dp_j, the gradient reaching each score is ds_j = p_j·(dp_j − D)·(1/√d), the
// 1/√d of the forward's scaling folded in here once. In place: dP's row becomes dS's. One
// workgroup per row; its 128 invocations stride over the row and combine their parts of D
// in shared memory (a tree, so the sum's order differs from the CPU twin's ascending one:
// the check's bound is order-free).
//
// Launch: workgroup_size(128); dispatch (n, bh, 1): workgroup (i, z) is row i of problem z.
// Buffers: 0 = probs (read, bh·n·n f32 from attention_naive_softmax.wgsl), 1 = dscores
//   (read_write, the same layout: dP from attention_naive_backward_dp.wgsl in, dS out),
//   2 = uniform Attn.

@group(0) @binding(0) var<storage, read> probs: array<f32>;
@group(0) @binding(1) var<storage, read_write> dscores: array<f32>;
@group(0) @binding(2) var<uniform> u: Attn;

var<workgroup> part: array<f32, 128>;

@compute @workgroup_size(128)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = wg.x;
    let row = (wg.y * u.n + i) * u.n;
    let len = i + 1u;
    var s = 0.0;
    for (var j = lid; j < len; j += 128u) {
        s += probs[row + j] * dscores[row + j];
    }
    part[lid] = s;
    workgroupBarrier();
    for (var h = 64u; h > 0u; h >>= 1u) {
        if lid < h {
            part[lid] = part[lid] + part[lid + h];
        }
        workgroupBarrier();
    }
    let total = part[0];
    for (var j = lid; j < len; j += 128u) {
        dscores[row + j] = probs[row + j] * (dscores[row + j] - total) * u.scale;
    }
}
