// Naive attention backward, pass 3 of 4: the queries' gradient, dq_i += Σ_{j ≤ i} ds_ij·k_j,
// a tiled matrix product dS·K reading dS back from memory: 16×16 tiles of dS and of K staged
// through shared memory, keys up to the tile's last query only (causal). Adds into the
// gradient buffer (each element has one owner: no atomics).
//
// Launch: workgroup_size(16, 16); dispatch (ceil(d / 16), ceil(n / 16), bh): workgroup
//   (x, y, z) computes head columns 16x…, queries 16y… of problem z; invocation (lx, ly) one
//   element.
// Buffers: 0 = qkv (read; K as addressed by attention_common.wgsl), 1 = dscores (read, bh·n·n
//   f32 from attention_naive_backward_ds.wgsl; entries j > i are never read), 2 = dqkv
//   (read_write, laid out as qkv; dQ added at q_off), 3 = uniform Attn.

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> dscores: array<f32>;
@group(0) @binding(2) var<storage, read_write> dqkv: array<f32>;
@group(0) @binding(3) var<uniform> u: Attn;

var<workgroup> st: array<array<f32, 16>, 16>;
var<workgroup> kt: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let bh = wg.z;
    let i0 = wg.y * 16u;
    let e = wg.x * 16u + lid.x;
    let i = i0 + lid.y;
    // Keys past the tile's last query are masked for every row of it.
    let keys = min(u.n, i0 + 16u);
    var acc = 0.0;
    for (var j0 = 0u; j0 < keys; j0 += 16u) {
        let sj = j0 + lid.x;
        var ds = 0.0;
        if i < u.n && sj <= i {
            ds = dscores[(bh * u.n + i) * u.n + sj];
        }
        st[lid.y][lid.x] = ds;
        let kj = j0 + lid.y;
        var k = 0.0;
        if kj < u.n && e < u.d {
            k = qkv[u.k_off + in_at(u, bh, kj) + e];
        }
        kt[lid.y][lid.x] = k;
        workgroupBarrier();
        for (var t = 0u; t < 16u; t++) {
            acc += st[lid.y][t] * kt[t][lid.x];
        }
        workgroupBarrier();
    }
    if i < u.n && e < u.d {
        let at = u.q_off + in_at(u, bh, i) + e;
        dqkv[at] = dqkv[at] + acc;
    }
}
