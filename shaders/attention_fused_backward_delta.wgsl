// Fused attention backward, pass 1 of 3: each row's D_i = dy_i · out_i. Through the softmax
// the gradient reaching a score is ds_ij = p_ij·(dp_ij − Σ_k p_ik·dp_ik), and that sum is
// dy_i · out_i (out_i = Σ_k p_ik·v_k, dp_ik = dy_i·v_k): one dot product of width d per row
// instead of a sum over the row's probabilities, which the fused passes never store.
//
// Launch: workgroup_size(64); dispatch (ceil(n / 64), bh, 1): invocation x of workgroup
//   (·, z) is row x of problem z.
// Buffers: 0 = out (read, the forward's output, addressed by out_at), 1 = dy (read, the
//   output's gradient, the same layout), 2 = delta (read_write, bh·n f32: problem z's row i
//   at z·n + i), 3 = uniform Attn.

@group(0) @binding(0) var<storage, read> out: array<f32>;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> delta: array<f32>;
@group(0) @binding(3) var<uniform> u: Attn;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
) {
    let i = gid.x;
    let bh = wg.y;
    if i >= u.n {
        return;
    }
    let at = out_at(u, bh, i);
    var s = 0.0;
    for (var e = 0u; e < u.d; e++) {
        s += dy[at + e] * out[at + e];
    }
    delta[bh * u.n + i] = s;
}
