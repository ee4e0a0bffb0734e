// Fused attention backward, pass 2 of 3 (FlashAttention-2's backward): the keys' and values'
// gradients, dk_j = (1/√d)·Σ_{i ≥ j} ds_ij·q_i and dv_j = Σ_{i ≥ j} p_ij·dy_i, without a score
// or a probability in memory. A workgroup owns 16 keys and walks the query tiles from its own
// diagonal tile down; per tile it recomputes each score s = q_i·k_j/√d and its probability
// p = exp(s − lse_i) from the row's log-sum-exp the forward saved (no running maximum, no
// rescaling: lse is already the whole row's), each dp = dy_i·v_j, and ds = p·(dp − D_i) with
// D from attention_fused_backward_delta.wgsl. The queries' gradient needs the transposed
// walk and is the next pass's: summing it here would need float atomics, whose order
// changes from run to run.
//
// The 256 invocations are a 16 × 16 grid (a, b) = (l / 16, l % 16), used two ways: for the
// scores, query a of the tile and key b of the block; for the sums, key a of the block and
// head columns 4b … 4b + 3, whose dk and dv stay in two named vec4 accumulators. K and V
// share one shared tile (V for dp first, then K for s), so the workgroup's shared memory
// stays under WebGPU's 16 KiB: both are read again per query tile, as the forward reads them.
//
// Launch: workgroup_size(256); dispatch (ceil(n / 16), bh, 1): workgroup (x, z) owns keys
//   16x … 16x + 15 of problem z (x = 0 walks the most query tiles and starts first).
// Overrides: D = head width (≤ 64), D4 = ceil(D / 4).
// Buffers: 0 = qkv (read; Q, K, V as addressed by attention_common.wgsl), 1 = dy (read,
//   addressed by out_at), 2 = lse (read, bh·n f32 from attention_fused.wgsl), 3 = delta
//   (read, bh·n f32), 4 = dqkv (read_write, laid out as qkv; dK added at k_off, dV at v_off),
//   5 = uniform Attn (its d must equal D).
// Shared memory: the Q (pre-scaled) and dY tiles (16 rows × 16 vec4), the K-or-V tile (rows
//   padded to 17 vec4 so the 16 keys of one score step fall in different banks), P and dS
//   (16 × 16): 14.3 KiB.

override D: u32 = 64u;
override D4: u32 = 16u;
const T: u32 = 16u;
const KS: u32 = 17u;

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> lse: array<f32>;
@group(0) @binding(3) var<storage, read> delta: array<f32>;
@group(0) @binding(4) var<storage, read_write> dqkv: array<f32>;
@group(0) @binding(5) var<uniform> u: Attn;

var<workgroup> qs: array<vec4<f32>, 256>;
var<workgroup> gs: array<vec4<f32>, 256>;
var<workgroup> kvs: array<vec4<f32>, 272>;
var<workgroup> ps: array<f32, 256>;
var<workgroup> dss: array<f32, 256>;

// Elements 4c … 4c + 3 of the row starting at `base` of `qkv`, zero past the head width.
fn load4(base: u32, c: u32) -> vec4<f32> {
    var r = vec4<f32>(0.0);
    for (var t = 0u; t < 4u; t++) {
        if 4u * c + t < D {
            r[t] = qkv[base + 4u * c + t];
        }
    }
    return r;
}

// The same from `dy`.
fn load4_dy(base: u32, c: u32) -> vec4<f32> {
    var r = vec4<f32>(0.0);
    for (var t = 0u; t < 4u; t++) {
        if 4u * c + t < D {
            r[t] = dy[base + 4u * c + t];
        }
    }
    return r;
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bh = wg.y;
    let j0 = wg.x * T;
    let a = lid / T;
    let b = lid % T;
    // This invocation's key in the sums, and its key's row in qkv.
    let ja = j0 + a;
    var dk = vec4<f32>(0.0);
    var dv = vec4<f32>(0.0);
    for (var i0 = j0; i0 < u.n; i0 += T) {
        // Row a of the Q and dY tiles is query i0 + a; row a of the K-or-V tile is key ja.
        let ia = i0 + a;
        var g = vec4<f32>(0.0);
        var vv = vec4<f32>(0.0);
        if ia < u.n && b < D4 {
            g = load4_dy(out_at(u, bh, ia), b);
        }
        if ja < u.n && b < D4 {
            vv = load4(u.v_off + in_at(u, bh, ja), b);
        }
        gs[lid] = g;
        kvs[a * KS + b] = vv;
        workgroupBarrier();
        // dp of query a and key b.
        var acc = vec4<f32>(0.0);
        for (var t = 0u; t < D4; t++) {
            acc += gs[a * T + t] * kvs[b * KS + t];
        }
        let dp = (acc.x + acc.y) + (acc.z + acc.w);
        workgroupBarrier();
        var q = vec4<f32>(0.0);
        var kv = vec4<f32>(0.0);
        if ia < u.n && b < D4 {
            q = load4(u.q_off + in_at(u, bh, ia), b) * u.scale;
        }
        if ja < u.n && b < D4 {
            kv = load4(u.k_off + in_at(u, bh, ja), b);
        }
        qs[lid] = q;
        kvs[a * KS + b] = kv;
        workgroupBarrier();
        // s, p and ds of query a and key b; zero where the key is after the query.
        acc = vec4<f32>(0.0);
        for (var t = 0u; t < D4; t++) {
            acc += qs[a * T + t] * kvs[b * KS + t];
        }
        let s = (acc.x + acc.y) + (acc.z + acc.w);
        let j = j0 + b;
        var p = 0.0;
        var ds = 0.0;
        if ia < u.n && j <= ia {
            p = exp(s - lse[bh * u.n + ia]);
            ds = p * (dp - delta[bh * u.n + ia]);
        }
        ps[lid] = p;
        dss[lid] = ds;
        workgroupBarrier();
        // Key a, columns 4b …: the tile's 16 queries, in order.
        for (var t = 0u; t < T; t++) {
            dv += ps[t * T + a] * gs[t * T + b];
            dk += dss[t * T + a] * qs[t * T + b];
        }
        workgroupBarrier();
    }
    if ja < u.n && b < D4 {
        let at = in_at(u, bh, ja) + 4u * b;
        for (var t = 0u; t < 4u; t++) {
            if 4u * b + t < D {
                dqkv[u.k_off + at + t] = dqkv[u.k_off + at + t] + dk[t];
                dqkv[u.v_off + at + t] = dqkv[u.v_off + at + t] + dv[t];
            }
        }
    }
}
