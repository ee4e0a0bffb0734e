// Naive attention backward, pass 1 of 4: the gradient reaching each probability,
// dP[i][j] = dy_i · v_j for every key j ≤ i, written to memory (a second n×n matrix per
// problem, beside the probabilities the forward kept). A tiled matrix product dY·Vᵀ: 16×16
// tiles of dY rows and V rows staged through shared memory, 16 head columns at a time; tiles
// wholly above the diagonal are skipped and never read.
//
// Launch: workgroup_size(16, 16); dispatch (ceil(n / 16), ceil(n / 16), bh): workgroup
//   (x, y, z) computes keys 16x…, queries 16y… of problem z; invocation (lx, ly) one entry.
// Buffers: 0 = qkv (read; V as addressed by attention_common.wgsl), 1 = dy (read, the
//   output's gradient, addressed by out_at), 2 = dscores (read_write, bh·n·n f32: problem
//   z's row i starts at (z·n + i)·n), 3 = uniform Attn.

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> dscores: array<f32>;
@group(0) @binding(3) var<uniform> u: Attn;

var<workgroup> gt: array<array<f32, 16>, 16>;
var<workgroup> vt: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let bh = wg.z;
    let i0 = wg.y * 16u;
    let j0 = wg.x * 16u;
    // Every key of this tile is after every query: masked, never read.
    if j0 > i0 + 15u {
        return;
    }
    let i = i0 + lid.y;
    let j = j0 + lid.x;
    var acc = 0.0;
    for (var e0 = 0u; e0 < u.d; e0 += 16u) {
        // Row ly of the dY tile and row ly of the V tile, column lx of this head slice.
        let e = e0 + lid.x;
        let gi = i0 + lid.y;
        let vj = j0 + lid.y;
        var gv = 0.0;
        var vv = 0.0;
        if gi < u.n && e < u.d {
            gv = dy[out_at(u, bh, gi) + e];
        }
        if vj < u.n && e < u.d {
            vv = qkv[u.v_off + in_at(u, bh, vj) + e];
        }
        gt[lid.y][lid.x] = gv;
        vt[lid.y][lid.x] = vv;
        workgroupBarrier();
        for (var t = 0u; t < 16u; t++) {
            acc += gt[lid.y][t] * vt[lid.x][t];
        }
        workgroupBarrier();
    }
    if i < u.n && j < u.n && j <= i {
        dscores[(bh * u.n + i) * u.n + j] = acc;
    }
}
