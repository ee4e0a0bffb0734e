// Fused causal attention (FlashAttention-style forward): out_i = Σ_{j ≤ i} softmax_j(q_i·k_j/√d)
// · v_j without writing a score or a probability to memory. Each invocation owns one query
// row for the whole kernel: its scaled q and its output accumulator o live in registers (16
// named vec4s each, so nothing is a dynamically indexed private array that would spill). The
// workgroup's 64 rows walk the keys in tiles of 32, staged through shared memory once per tile
// and read by every row (the same address across a warp: a broadcast, no bank conflicts).
// Within a tile a row takes its live keys four at a time: four scores, the running maximum m
// raised to theirs, what it has summed so far (l and o) rescaled by exp(m_old − m_new)
// ("online softmax"), then l += Σ p and o += Σ p·v. No invocation waits for another inside a
// tile, so a tile costs two barriers whatever its work (the 16 × 16-tile design before this
// one needed four per 16 keys and ran at 29–40 % of PyTorch's fused fp32 attention on an
// H100). Memory grows with n, not n²; sums run in an order the CPU twin does not use (the
// check's bound is order-free and counts the exps). Each row's log-sum-exp, m + ln l, is saved
// for the backward (attention_fused_backward_*.wgsl), which recomputes every probability as
// exp(s − lse).
//
// Launch: workgroup_size(64); dispatch (ceil(n / 64), bh, 1): workgroup (x, z) computes query
//   block b = ceil(n / 64) − 1 − x of problem z (the blocks that read the most keys start
//   first, so they do not finish last), rows 64b … 64b + 63; it reads keys
//   0 … min(n, 64b + 64) − 1. Invocation l owns row 64b + l.
// Overrides: D = head width (≤ 64), D4 = ceil(D / 4). Rows hold 16 vec4s whatever D is (zeros
//   past it), so a narrower head costs as much as d = 64.
// Buffers: 0 = qkv (read; Q, K, V as addressed by attention_common.wgsl), 1 = out
//   (read_write, addressed by out_at), 2 = lse (read_write, bh·n f32: problem z's row i at
//   z·n + i), 3 = uniform Attn (its d must equal D).
// Shared memory: the K and V tiles, 32 keys × 16 vec4 each: 16 KiB, WebGPU's default limit.

override D: u32 = 64u;
override D4: u32 = 16u;
const R: u32 = 64u;
const BC: u32 = 32u;
// A large finite "minus infinity": WGSL may assume no infinities. Masked scores are NEG.
const NEG: f32 = -3.0e38;

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> lse: array<f32>;
@group(0) @binding(3) var<uniform> u: Attn;

var<workgroup> ks: array<vec4<f32>, 512>;
var<workgroup> vs: array<vec4<f32>, 512>;

// The row's q, scaled: 16 named vec4s passed by value.
struct Q {
    q0: vec4<f32>,
    q1: vec4<f32>,
    q2: vec4<f32>,
    q3: vec4<f32>,
    q4: vec4<f32>,
    q5: vec4<f32>,
    q6: vec4<f32>,
    q7: vec4<f32>,
    q8: vec4<f32>,
    q9: vec4<f32>,
    q10: vec4<f32>,
    q11: vec4<f32>,
    q12: vec4<f32>,
    q13: vec4<f32>,
    q14: vec4<f32>,
    q15: vec4<f32>,
}

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

fn store4(base: u32, c: u32, v: vec4<f32>) {
    for (var t = 0u; t < 4u; t++) {
        if 4u * c + t < D {
            out[base + 4u * c + t] = v[t];
        }
    }
}

// q · k for key `j` of the shared tile.
fn score(q: Q, j: u32) -> f32 {
    let k = j * 16u;
    return dot(q.q0, ks[k + 0u]) + dot(q.q1, ks[k + 1u]) + dot(q.q2, ks[k + 2u]) + dot(q.q3, ks[k + 3u]) + dot(q.q4, ks[k + 4u]) + dot(q.q5, ks[k + 5u]) + dot(q.q6, ks[k + 6u]) + dot(q.q7, ks[k + 7u]) + dot(q.q8, ks[k + 8u]) + dot(q.q9, ks[k + 9u]) + dot(q.q10, ks[k + 10u]) + dot(q.q11, ks[k + 11u]) + dot(q.q12, ks[k + 12u]) + dot(q.q13, ks[k + 13u]) + dot(q.q14, ks[k + 14u]) + dot(q.q15, ks[k + 15u]);
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bh = wg.y;
    let i0 = (groups.x - 1u - wg.x) * R;
    let i = i0 + lid;
    var q = Q();
    if i < u.n {
        let qb = u.q_off + in_at(u, bh, i);
        q.q0 = load4(qb, 0u) * u.scale;
        q.q1 = load4(qb, 1u) * u.scale;
        q.q2 = load4(qb, 2u) * u.scale;
        q.q3 = load4(qb, 3u) * u.scale;
        q.q4 = load4(qb, 4u) * u.scale;
        q.q5 = load4(qb, 5u) * u.scale;
        q.q6 = load4(qb, 6u) * u.scale;
        q.q7 = load4(qb, 7u) * u.scale;
        q.q8 = load4(qb, 8u) * u.scale;
        q.q9 = load4(qb, 9u) * u.scale;
        q.q10 = load4(qb, 10u) * u.scale;
        q.q11 = load4(qb, 11u) * u.scale;
        q.q12 = load4(qb, 12u) * u.scale;
        q.q13 = load4(qb, 13u) * u.scale;
        q.q14 = load4(qb, 14u) * u.scale;
        q.q15 = load4(qb, 15u) * u.scale;
    }
    var o0 = vec4<f32>(0.0);
    var o1 = vec4<f32>(0.0);
    var o2 = vec4<f32>(0.0);
    var o3 = vec4<f32>(0.0);
    var o4 = vec4<f32>(0.0);
    var o5 = vec4<f32>(0.0);
    var o6 = vec4<f32>(0.0);
    var o7 = vec4<f32>(0.0);
    var o8 = vec4<f32>(0.0);
    var o9 = vec4<f32>(0.0);
    var o10 = vec4<f32>(0.0);
    var o11 = vec4<f32>(0.0);
    var o12 = vec4<f32>(0.0);
    var o13 = vec4<f32>(0.0);
    var o14 = vec4<f32>(0.0);
    var o15 = vec4<f32>(0.0);
    var m = NEG;
    var l = 0.0;
    let keys = min(u.n, i0 + R);
    for (var kb = 0u; kb < keys; kb += BC) {
        // The tile's keys kb … kb + BC − 1, zero past n and past the head width.
        for (var e = lid; e < BC * 16u; e += R) {
            let jr = kb + e / 16u;
            let c = e % 16u;
            var kv = vec4<f32>(0.0);
            var vv = vec4<f32>(0.0);
            if jr < u.n && c < D4 {
                let at = in_at(u, bh, jr);
                kv = load4(u.k_off + at, c);
                vv = load4(u.v_off + at, c);
            }
            ks[e] = kv;
            vs[e] = vv;
        }
        workgroupBarrier();
        // Keys kb … kb + live − 1 are this row's (causal: j ≤ i; and j < n).
        var live = 0u;
        if i < u.n && kb <= i {
            live = min(BC, i + 1u - kb);
        }
        for (var j0 = 0u; j0 < live; j0 += 4u) {
            let s0 = select(NEG, score(q, j0 + 0u), j0 + 0u < live);
            let s1 = select(NEG, score(q, j0 + 1u), j0 + 1u < live);
            let s2 = select(NEG, score(q, j0 + 2u), j0 + 2u < live);
            let s3 = select(NEG, score(q, j0 + 3u), j0 + 3u < live);
            let m_new = max(max(m, max(s0, s1)), max(s2, s3));
            let rescale = exp(m - m_new);
            let p0 = select(0.0, exp(s0 - m_new), j0 < live);
            let p1 = select(0.0, exp(s1 - m_new), j0 + 1u < live);
            let p2 = select(0.0, exp(s2 - m_new), j0 + 2u < live);
            let p3 = select(0.0, exp(s3 - m_new), j0 + 3u < live);
            l = l * rescale + ((p0 + p1) + (p2 + p3));
            let v0 = j0 * 16u;
            let v1 = v0 + 16u;
            let v2 = v0 + 32u;
            let v3 = v0 + 48u;
            o0 = o0 * rescale + p0 * vs[v0 + 0u] + p1 * vs[v1 + 0u] + p2 * vs[v2 + 0u] + p3 * vs[v3 + 0u];
            o1 = o1 * rescale + p0 * vs[v0 + 1u] + p1 * vs[v1 + 1u] + p2 * vs[v2 + 1u] + p3 * vs[v3 + 1u];
            o2 = o2 * rescale + p0 * vs[v0 + 2u] + p1 * vs[v1 + 2u] + p2 * vs[v2 + 2u] + p3 * vs[v3 + 2u];
            o3 = o3 * rescale + p0 * vs[v0 + 3u] + p1 * vs[v1 + 3u] + p2 * vs[v2 + 3u] + p3 * vs[v3 + 3u];
            o4 = o4 * rescale + p0 * vs[v0 + 4u] + p1 * vs[v1 + 4u] + p2 * vs[v2 + 4u] + p3 * vs[v3 + 4u];
            o5 = o5 * rescale + p0 * vs[v0 + 5u] + p1 * vs[v1 + 5u] + p2 * vs[v2 + 5u] + p3 * vs[v3 + 5u];
            o6 = o6 * rescale + p0 * vs[v0 + 6u] + p1 * vs[v1 + 6u] + p2 * vs[v2 + 6u] + p3 * vs[v3 + 6u];
            o7 = o7 * rescale + p0 * vs[v0 + 7u] + p1 * vs[v1 + 7u] + p2 * vs[v2 + 7u] + p3 * vs[v3 + 7u];
            o8 = o8 * rescale + p0 * vs[v0 + 8u] + p1 * vs[v1 + 8u] + p2 * vs[v2 + 8u] + p3 * vs[v3 + 8u];
            o9 = o9 * rescale + p0 * vs[v0 + 9u] + p1 * vs[v1 + 9u] + p2 * vs[v2 + 9u] + p3 * vs[v3 + 9u];
            o10 = o10 * rescale + p0 * vs[v0 + 10u] + p1 * vs[v1 + 10u] + p2 * vs[v2 + 10u] + p3 * vs[v3 + 10u];
            o11 = o11 * rescale + p0 * vs[v0 + 11u] + p1 * vs[v1 + 11u] + p2 * vs[v2 + 11u] + p3 * vs[v3 + 11u];
            o12 = o12 * rescale + p0 * vs[v0 + 12u] + p1 * vs[v1 + 12u] + p2 * vs[v2 + 12u] + p3 * vs[v3 + 12u];
            o13 = o13 * rescale + p0 * vs[v0 + 13u] + p1 * vs[v1 + 13u] + p2 * vs[v2 + 13u] + p3 * vs[v3 + 13u];
            o14 = o14 * rescale + p0 * vs[v0 + 14u] + p1 * vs[v1 + 14u] + p2 * vs[v2 + 14u] + p3 * vs[v3 + 14u];
            o15 = o15 * rescale + p0 * vs[v0 + 15u] + p1 * vs[v1 + 15u] + p2 * vs[v2 + 15u] + p3 * vs[v3 + 15u];
            m = m_new;
        }
        workgroupBarrier();
    }
    if i < u.n {
        lse[bh * u.n + i] = m + log(l);
        let ob = out_at(u, bh, i);
        store4(ob, 0u, o0 / l);
        store4(ob, 1u, o1 / l);
        store4(ob, 2u, o2 / l);
        store4(ob, 3u, o3 / l);
        store4(ob, 4u, o4 / l);
        store4(ob, 5u, o5 / l);
        store4(ob, 6u, o6 / l);
        store4(ob, 7u, o7 / l);
        store4(ob, 8u, o8 / l);
        store4(ob, 9u, o9 / l);
        store4(ob, 10u, o10 / l);
        store4(ob, 11u, o11 / l);
        store4(ob, 12u, o12 / l);
        store4(ob, 13u, o13 / l);
        store4(ob, 14u, o14 / l);
        store4(ob, 15u, o15 / l);
    }
}
