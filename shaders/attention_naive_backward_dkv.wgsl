// Naive attention backward, pass 4 of 4: the keys' and values' gradients, the transposed
// products dk_j += Σ_{i ≥ j} ds_ij·q_i and dv_j += Σ_{i ≥ j} p_ij·dy_i, reading P and dS back
// from memory. A workgroup owns 16 keys and 16 head columns and walks the query tiles from
// its own diagonal tile down (a query before key j never looks at it): per tile, 16×16 tiles
// of P, dS, Q and dY staged through shared memory. Adds into the gradient buffer (each
// element has one owner: no atomics).
//
// Launch: workgroup_size(16, 16); dispatch (ceil(d / 16), ceil(n / 16), bh): workgroup
//   (x, y, z) computes head columns 16x…, keys 16y… of problem z; invocation (lx, ly) column
//   16x + lx of key 16y + ly, one element of dK and one of dV.
// Buffers: 0 = qkv (read; Q as addressed by attention_common.wgsl), 1 = dy (read, addressed
//   by out_at), 2 = probs (read, bh·n·n f32; dy and probs are declared read_write so that
//   they may be ranges of dqkv's buffer, as WebGPU forbids one buffer bound both read-only
//   and writable in a dispatch), 3 = dscores (read, bh·n·n f32 from
//   attention_naive_backward_ds.wgsl; entries j > i of both are never read), 4 = dqkv
//   (read_write, laid out as qkv; dK added at k_off, dV at v_off), 5 = uniform Attn.

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> probs: array<f32>;
@group(0) @binding(3) var<storage, read> dscores: array<f32>;
@group(0) @binding(4) var<storage, read_write> dqkv: array<f32>;
@group(0) @binding(5) var<uniform> u: Attn;

var<workgroup> pt: array<array<f32, 16>, 16>;
var<workgroup> st: array<array<f32, 16>, 16>;
var<workgroup> qt: array<array<f32, 16>, 16>;
var<workgroup> gt: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let bh = wg.z;
    let j0 = wg.y * 16u;
    let e = wg.x * 16u + lid.x;
    let j = j0 + lid.y;
    var dk = 0.0;
    var dv = 0.0;
    for (var i0 = j0; i0 < u.n; i0 += 16u) {
        // Row ly of every tile is query i0 + ly: its P and dS at key j0 + lx, its q and dy at
        // column e.
        let qi = i0 + lid.y;
        let pj = j0 + lid.x;
        var p = 0.0;
        var ds = 0.0;
        if qi < u.n && pj <= qi {
            let at = (bh * u.n + qi) * u.n + pj;
            p = probs[at];
            ds = dscores[at];
        }
        pt[lid.y][lid.x] = p;
        st[lid.y][lid.x] = ds;
        var q = 0.0;
        var g = 0.0;
        if qi < u.n && e < u.d {
            q = qkv[u.q_off + in_at(u, bh, qi) + e];
            g = dy[out_at(u, bh, qi) + e];
        }
        qt[lid.y][lid.x] = q;
        gt[lid.y][lid.x] = g;
        workgroupBarrier();
        for (var t = 0u; t < 16u; t++) {
            dk += st[t][lid.y] * qt[t][lid.x];
            dv += pt[t][lid.y] * gt[t][lid.x];
        }
        workgroupBarrier();
    }
    if j < u.n && e < u.d {
        let at = in_at(u, bh, j) + e;
        dqkv[u.k_off + at] = dqkv[u.k_off + at] + dk;
        dqkv[u.v_off + at] = dqkv[u.v_off + at] + dv;
    }
}
