// Fused causal attention (FlashAttention-style forward): out_i = Σ_{j ≤ i} softmax_j(q_i·k_j/√d)
// · v_j without writing a score or a probability to memory. A workgroup takes 16 query rows
// and walks the keys in tiles of 16, all staged through shared memory; its 256 invocations
// are a 16 × 16 grid. Per key tile, invocation (r, c) first computes the score of query row r
// and key c of the tile; then every invocation of row r raises the row's running maximum m
// to the tile's, rescales what it has summed so far by exp(m_old − m_new) ("online
// softmax"), turns its own score into exp(s − m_new), and adds Σ_j p_j·v_j for its own four
// output columns 4c … 4c + 3. After the last tile it divides by the running sum. Memory
// grows with n, not n²; the price is a rescale per tile, and sums in an order the CPU twin
// does not use (the check's bound is order-free and counts those exps). Every accumulator is
// a named variable: no private array, so nothing spills to local memory. Each row's
// log-sum-exp, m + ln l, is saved for the backward (attention_fused_backward_*.wgsl), which
// recomputes every probability from it as exp(s − lse) without a running maximum.
//
// Launch: workgroup_size(256); dispatch (ceil(n / 16), bh, 1): workgroup (x, z) computes query
//   block b = ceil(n / 16) − 1 − x of problem z (the blocks that read the most keys start
//   first, so they do not finish last), rows 16b … 16b + 15; it reads keys
//   0 … min(n, 16b + 16) − 1. Invocation l is (r, c) = (l / 16, l % 16).
// Overrides: D = head width (≤ 64), D4 = ceil(D / 4).
// Buffers: 0 = qkv (read; Q, K, V as addressed by attention_common.wgsl), 1 = out
//   (read_write, addressed by out_at), 2 = lse (read_write, bh·n f32: problem z's row i at
//   z·n + i), 3 = uniform Attn (its d must equal D).
// Shared memory: Q, K and V tiles (16 rows × 16 vec4; K's rows padded to 17 so the 16 keys
//   of one score step fall in different banks) and the 16 × 16 scores: 13.3 KiB.

override D: u32 = 64u;
override D4: u32 = 16u;
const T: u32 = 16u;
const KS: u32 = 17u;
// A large finite "minus infinity": WGSL may assume no infinities. Masked scores are NEG; any
// live score is far above NEG / 2.
const NEG: f32 = -3.0e38;

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> lse: array<f32>;
@group(0) @binding(3) var<uniform> u: Attn;

var<workgroup> qs: array<vec4<f32>, 256>;
var<workgroup> ks: array<vec4<f32>, 272>;
var<workgroup> vs: array<vec4<f32>, 256>;
var<workgroup> ps: array<f32, 256>;

// Elements 4c … 4c + 3 of the row starting at `base`, zero past the head width.
fn load4(base: u32, c: u32) -> vec4<f32> {
    var r = vec4<f32>(0.0);
    for (var t = 0u; t < 4u; t++) {
        if 4u * c + t < D {
            r[t] = qkv[base + 4u * c + t];
        }
    }
    return r;
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bh = wg.y;
    let i0 = (groups.x - 1u - wg.x) * T;
    let r = lid / T;
    let c = lid % T;
    let i = i0 + r;
    var q = vec4<f32>(0.0);
    if i < u.n && c < D4 {
        q = load4(u.q_off + in_at(u, bh, i), c) * u.scale;
    }
    qs[lid] = q;
    var o = vec4<f32>(0.0);
    var m = NEG;
    var l = 0.0;
    let keys = min(u.n, i0 + T);
    for (var kb = 0u; kb < keys; kb += T) {
        // Row r of the K and V tiles is key kb + r; this invocation loads its vec4 c.
        let jr = kb + r;
        var kv = vec4<f32>(0.0);
        var vv = vec4<f32>(0.0);
        if jr < u.n && c < D4 {
            let at = in_at(u, bh, jr);
            kv = load4(u.k_off + at, c);
            vv = load4(u.v_off + at, c);
        }
        ks[r * KS + c] = kv;
        vs[lid] = vv;
        workgroupBarrier();
        // The score of query row r and key kb + c.
        var acc = vec4<f32>(0.0);
        for (var t = 0u; t < D4; t++) {
            acc += qs[r * T + t] * ks[c * KS + t];
        }
        let j = kb + c;
        ps[lid] = select(NEG, (acc.x + acc.y) + (acc.z + acc.w), j <= i && j < u.n);
        workgroupBarrier();
        var tile_max = m;
        for (var t = 0u; t < T; t++) {
            tile_max = max(tile_max, ps[r * T + t]);
        }
        workgroupBarrier();
        let s = ps[lid];
        ps[lid] = select(0.0, exp(s - tile_max), s > 0.5 * NEG);
        workgroupBarrier();
        let rescale = exp(m - tile_max);
        l *= rescale;
        o *= rescale;
        for (var t = 0u; t < T; t++) {
            let p = ps[r * T + t];
            l += p;
            o += p * vs[t * T + c];
        }
        m = tile_max;
        workgroupBarrier();
    }
    if i < u.n && c == 0u {
        lse[bh * u.n + i] = m + log(l);
    }
    if i < u.n && c < D4 {
        let v = o / l;
        let ob = out_at(u, bh, i) + 4u * c;
        for (var t = 0u; t < 4u; t++) {
            if 4u * c + t < D {
                out[ob + t] = v[t];
            }
        }
    }
}
