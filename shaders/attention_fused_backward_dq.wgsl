// Fused attention backward, pass 3 of 3 (FlashAttention-2's backward): the queries' gradient,
// dq_i = (1/√d)·Σ_{j ≤ i} ds_ij·k_j, without a score or a probability in memory. A workgroup
// owns 16 queries and walks the key tiles up to its diagonal, recomputing per tile what
// attention_fused_backward_dkv.wgsl recomputes: s = q_i·k_j/√d, p = exp(s − lse_i),
// dp = dy_i·v_j, ds = p·(dp − D_i). Recomputing the scores twice costs arithmetic; it buys a
// deterministic sum (no float atomics) and n², not n, memory never allocated.
//
// The 256 invocations are a 16 × 16 grid (a, b) = (l / 16, l % 16): for the scores, query a
// of the block and key b of the tile; for the sum, query a and head columns 4b … 4b + 3 in
// a named vec4 accumulator. Both uses keep row a, so each invocation holds its row's lse and
// D in registers. K and V share one shared tile (V for dp first, then K for s and the sum).
//
// Launch: workgroup_size(256); dispatch (ceil(n / 16), bh, 1): workgroup (x, z) computes query
//   block b = ceil(n / 16) − 1 − x of problem z (the blocks that read the most keys start
//   first), rows 16b … 16b + 15.
// Overrides: D = head width (≤ 64), D4 = ceil(D / 4).
// Buffers: 0 = qkv (read; Q, K, V as addressed by attention_common.wgsl), 1 = dy (read,
//   addressed by out_at), 2 = lse (read, bh·n f32 from attention_fused.wgsl), 3 = delta
//   (read, bh·n f32), 4 = dqkv (read_write, laid out as qkv; dQ added at q_off),
//   5 = uniform Attn (its d must equal D).
// Shared memory: the Q (pre-scaled) and dY tiles (16 rows × 16 vec4), the K-or-V tile (rows
//   padded to 17 vec4), dS (16 × 16): 13.3 KiB.

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
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bh = wg.y;
    let i0 = (groups.x - 1u - wg.x) * T;
    let a = lid / T;
    let b = lid % T;
    let i = i0 + a;
    var q = vec4<f32>(0.0);
    var g = vec4<f32>(0.0);
    var row_lse = 0.0;
    var row_d = 0.0;
    if i < u.n {
        row_lse = lse[bh * u.n + i];
        row_d = delta[bh * u.n + i];
        if b < D4 {
            q = load4(u.q_off + in_at(u, bh, i), b) * u.scale;
            g = load4_dy(out_at(u, bh, i), b);
        }
    }
    qs[lid] = q;
    gs[lid] = g;
    var dq = vec4<f32>(0.0);
    let keys = min(u.n, i0 + T);
    for (var j0 = 0u; j0 < keys; j0 += T) {
        // Row a of the K-or-V tile is key j0 + a.
        let ja = j0 + a;
        var vv = vec4<f32>(0.0);
        if ja < u.n && b < D4 {
            vv = load4(u.v_off + in_at(u, bh, ja), b);
        }
        kvs[a * KS + b] = vv;
        workgroupBarrier();
        // dp of query a and key b.
        var acc = vec4<f32>(0.0);
        for (var t = 0u; t < D4; t++) {
            acc += gs[a * T + t] * kvs[b * KS + t];
        }
        let dp = (acc.x + acc.y) + (acc.z + acc.w);
        workgroupBarrier();
        var kv = vec4<f32>(0.0);
        if ja < u.n && b < D4 {
            kv = load4(u.k_off + in_at(u, bh, ja), b);
        }
        kvs[a * KS + b] = kv;
        workgroupBarrier();
        acc = vec4<f32>(0.0);
        for (var t = 0u; t < D4; t++) {
            acc += qs[a * T + t] * kvs[b * KS + t];
        }
        let s = (acc.x + acc.y) + (acc.z + acc.w);
        var ds = 0.0;
        if i < u.n && j0 + b <= i {
            ds = exp(s - row_lse) * (dp - row_d);
        }
        dss[lid] = ds;
        workgroupBarrier();
        // Query a, columns 4b …: the tile's 16 keys, in order.
        for (var t = 0u; t < T; t++) {
            dq += dss[a * T + t] * kvs[t * KS + b];
        }
        workgroupBarrier();
    }
    if i < u.n && b < D4 {
        let at = u.q_off + in_at(u, bh, i) + 4u * b;
        let v = dq * u.scale;
        for (var t = 0u; t < 4u; t++) {
            if 4u * b + t < D {
                dqkv[at + t] = dqkv[at + t] + v[t];
            }
        }
    }
}
