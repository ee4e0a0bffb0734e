// Naive attention, pass 3 of 3: out_i = Σ_{j ≤ i} p_ij · v_j, a tiled matrix product P·V
// reading the probabilities back from memory: 16×16 tiles of P and of V staged through
// shared memory, keys up to the tile's last query only (causal).
//
// Launch: workgroup_size(16, 16); dispatch (ceil(d / 16), ceil(n / 16), bh): workgroup
//   (x, y, z) computes head columns 16x…, queries 16y… of problem z; invocation (lx, ly) one
//   output element.
// Buffers: 0 = qkv (read; V as addressed by attention_common.wgsl; declared read_write so
//   that qkv and out may be ranges of one buffer, as WebGPU forbids one buffer bound both
//   read-only and writable in a dispatch), 1 = probabilities (read,
//   bh·n·n f32 from attention_naive_softmax.wgsl; entries j > i are never read), 2 = out
//   (read_write, addressed by out_at), 3 = uniform Attn.

@group(0) @binding(0) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> u: Attn;

var<workgroup> pt: array<array<f32, 16>, 16>;
var<workgroup> vt: array<array<f32, 16>, 16>;

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
        let pj = j0 + lid.x;
        var p = 0.0;
        if i < u.n && pj <= i {
            p = probs[(bh * u.n + i) * u.n + pj];
        }
        pt[lid.y][lid.x] = p;
        let vj = j0 + lid.y;
        var v = 0.0;
        if vj < u.n && e < u.d {
            v = qkv[u.v_off + in_at(u, bh, vj) + e];
        }
        vt[lid.y][lid.x] = v;
        workgroupBarrier();
        for (var t = 0u; t < 16u; t++) {
            acc += pt[lid.y][t] * vt[t][lid.x];
        }
        workgroupBarrier();
    }
    if i < u.n && e < u.d {
        out[out_at(u, bh, i) + e] = acc;
    }
}
