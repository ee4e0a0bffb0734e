// Naive attention, pass 1 of 3: every score S[i][j] = (q_i · k_j)·(1/√d) of every problem,
// written to memory (the n×n matrix that makes naive attention's memory grow as n²). Causal:
// only j ≤ i is computed; tiles wholly above the diagonal are skipped and never read.
// A tiled matrix product Q·Kᵀ: 16×16 tiles of Q rows and K rows staged through shared
// memory, 16 head columns at a time.
//
// Launch: workgroup_size(16, 16); dispatch (ceil(n / 16), ceil(n / 16), bh): workgroup
//   (x, y, z) computes keys 16x…, queries 16y… of problem z; invocation (lx, ly) one score.
// Buffers: 0 = qkv (read; Q, K, V as addressed by attention_common.wgsl), 1 = scores
//   (read_write, bh·n·n f32: problem z's row i starts at (z·n + i)·n), 2 = uniform Attn.

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> scores: array<f32>;
@group(0) @binding(2) var<uniform> u: Attn;

var<workgroup> qt: array<array<f32, 16>, 16>;
var<workgroup> kt: array<array<f32, 16>, 16>;

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
        // Row ly of the Q tile and row ly of the K tile, column lx of this head slice.
        let e = e0 + lid.x;
        let qi = i0 + lid.y;
        let kj = j0 + lid.y;
        var qv = 0.0;
        var kv = 0.0;
        if qi < u.n && e < u.d {
            qv = qkv[u.q_off + in_at(u, bh, qi) + e];
        }
        if kj < u.n && e < u.d {
            kv = qkv[u.k_off + in_at(u, bh, kj) + e];
        }
        qt[lid.y][lid.x] = qv;
        kt[lid.y][lid.x] = kv;
        workgroupBarrier();
        for (var t = 0u; t < 16u; t++) {
            acc += qt[lid.y][t] * kt[lid.x][t];
        }
        workgroupBarrier();
    }
    if i < u.n && j < u.n && j <= i {
        scores[(bh * u.n + i) * u.n + j] = acc * u.scale;
    }
}
