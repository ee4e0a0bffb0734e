// Fused causal attention (FlashAttention-style forward): out_i = Σ_{j ≤ i} softmax_j(q_i·k_j/√d)
// · v_j without writing a score or a probability to memory. Each invocation owns one query
// row: its q (pre-scaled by 1/√d) and its output accumulator stay in registers while the
// workgroup walks the keys in tiles of BC staged through shared memory. Per tile it computes
// the BC scores, raises its running maximum m to the tile's, rescales what it has summed so
// far by exp(m_old − m_new) ("online softmax"), then adds exp(s − m)·v for each key. After the
// last tile it divides by the running sum. Memory grows with n, not n²; the price is one
// rescale (an exp and d multiplies) per tile, and sums in an order the CPU twin does not use
// (the check's bound is order-free and counts those exps).
//
// Launch: workgroup_size(BR) (override, default 64); dispatch (ceil(n / BR), bh, 1):
//   workgroup (x, z) computes query block b = ceil(n / BR) − 1 − x of problem z (the last
//   blocks, which read the most keys, are started first, so they do not finish last); it
//   reads keys 0 … min(n, BR·b + BR) − 1 (the causal part of its last row); invocation l is
//   query BR·b + l.
// Overrides: D = head width (≤ 64), D4 = ceil(D / 4), BR = queries per workgroup.
// Buffers: 0 = qkv (read; Q, K, V as addressed by attention_common.wgsl), 1 = out
//   (read_write, addressed by out_at), 2 = uniform Attn (its d must equal D).
// Shared memory: K and V tiles, BC × 16 vec4 each (8 KiB together).

override D: u32 = 64u;
override D4: u32 = 16u;
override BR: u32 = 64u;
const BC: u32 = 16u;
const MAX_D4: u32 = 16u;
// A large finite "minus infinity": WGSL may assume no infinities.
const NEG: f32 = -3.0e38;

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> u: Attn;

var<workgroup> ks: array<vec4<f32>, 256>;
var<workgroup> vs: array<vec4<f32>, 256>;

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

@compute @workgroup_size(BR)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bh = wg.y;
    let block = groups.x - 1u - wg.x;
    let i = block * BR + lid;
    let row = min(i, u.n - 1u);
    var q: array<vec4<f32>, MAX_D4>;
    var o: array<vec4<f32>, MAX_D4>;
    let qbase = u.q_off + in_at(u, bh, row);
    for (var c = 0u; c < D4; c++) {
        q[c] = load4(qbase, c) * u.scale;
        o[c] = vec4<f32>(0.0);
    }
    var m = NEG;
    var l = 0.0;
    let keys = min(u.n, block * BR + BR);
    for (var kb = 0u; kb < keys; kb += BC) {
        for (var t = lid; t < BC * D4; t += BR) {
            let r = t / D4;
            let c = t % D4;
            let j = kb + r;
            var kv = vec4<f32>(0.0);
            var vv = vec4<f32>(0.0);
            if j < u.n {
                let at = in_at(u, bh, j);
                kv = load4(u.k_off + at, c);
                vv = load4(u.v_off + at, c);
            }
            ks[r * MAX_D4 + c] = kv;
            vs[r * MAX_D4 + c] = vv;
        }
        workgroupBarrier();
        var s: array<f32, BC>;
        var tile_max = m;
        for (var r = 0u; r < BC; r++) {
            var acc = vec4<f32>(0.0);
            for (var c = 0u; c < D4; c++) {
                acc += q[c] * ks[r * MAX_D4 + c];
            }
            let j = kb + r;
            let live = j <= i && j < u.n;
            s[r] = select(NEG, (acc.x + acc.y) + (acc.z + acc.w), live);
            tile_max = max(tile_max, s[r]);
        }
        let rescale = exp(m - tile_max);
        l *= rescale;
        for (var c = 0u; c < D4; c++) {
            o[c] *= rescale;
        }
        for (var r = 0u; r < BC; r++) {
            let j = kb + r;
            let p = select(0.0, exp(s[r] - tile_max), j <= i && j < u.n);
            l += p;
            for (var c = 0u; c < D4; c++) {
                o[c] += p * vs[r * MAX_D4 + c];
            }
        }
        m = tile_max;
        workgroupBarrier();
    }
    if i < u.n {
        let ob = out_at(u, bh, i);
        for (var c = 0u; c < D4; c++) {
            let v = o[c] / l;
            for (var t = 0u; t < 4u; t++) {
                if 4u * c + t < D {
                    out[ob + 4u * c + t] = v[t];
                }
            }
        }
    }
}
