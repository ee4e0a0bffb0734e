// Attention for one decode step: the newest query of each sequence against every key and
// value of the KV cache up to and including its own position p = state[0] (causal by
// construction: later positions are not in the cache yet). Per (sequence, head): scores
// s_j = (q · k_j)·(1/√d) for j = 0…p, p_j = exp(s_j − max) / Σ exp(s_k − max), out = Σ p_j·v_j —
// the operations of the naive kernels (attention_naive_*.wgsl) in the same form, so the full
// forward's error bound covers them; only the summation orders of the maximum and the sum
// (a tree here) differ, and the bound is order-free. The scores live in workgroup memory: a
// decode step's attention reads the cache once and writes nothing but its output row.
//
// Launch: workgroup_size(64); dispatch (heads, seqs, 1): workgroup (h, s) is head h of
//   sequence s; its invocations stride over the positions (scores), then over the head's
//   columns (the output). The host keeps cap ≤ 1024 (the scores' workgroup array).
// Buffers: 0 = qkv (read, seqs × 3c rows [q | k | v]: this step's; declared read_write
//   because it and out are ranges of one buffer), 1 = cache (read, seqs × cap × 2c rows
//   [k | v], gpt_decode_common.wgsl), 2 = state (read, u32: p), 3 = out (read_write,
//   seqs × c; head h's columns h·d…), 4 = uniform Decode (gpt_decode_common.wgsl).

@group(0) @binding(0) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> cache: array<f32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> u: Decode;

const MAX_POSITIONS: u32 = 1024u;

var<workgroup> p: array<f32, 1024>;
var<workgroup> part: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let h = wg.x;
    let s = wg.y;
    let d = u.c / u.heads;
    let w = 2u * u.c;
    let len = min(state[0] + 1u, min(u.cap, MAX_POSITIONS));
    let q = s * 3u * u.c + h * d;
    let kv = s * u.cap * w + h * d;
    for (var j = lid; j < len; j += 64u) {
        var acc = 0.0;
        for (var e = 0u; e < d; e++) {
            acc += qkv[q + e] * cache[kv + j * w + e];
        }
        p[j] = acc * u.scale;
    }
    workgroupBarrier();
    // A large finite start instead of −∞: WGSL may assume no infinities.
    var m = -3.0e38;
    for (var j = lid; j < len; j += 64u) {
        m = max(m, p[j]);
    }
    part[lid] = m;
    workgroupBarrier();
    for (var k = 32u; k > 0u; k >>= 1u) {
        if lid < k {
            part[lid] = max(part[lid], part[lid + k]);
        }
        workgroupBarrier();
    }
    let row_max = part[0];
    workgroupBarrier();
    var z = 0.0;
    for (var j = lid; j < len; j += 64u) {
        let e = exp(p[j] - row_max);
        p[j] = e;
        z += e;
    }
    part[lid] = z;
    workgroupBarrier();
    for (var k = 32u; k > 0u; k >>= 1u) {
        if lid < k {
            part[lid] = part[lid] + part[lid + k];
        }
        workgroupBarrier();
    }
    let total = part[0];
    for (var j = lid; j < len; j += 64u) {
        p[j] = p[j] / total;
    }
    workgroupBarrier();
    for (var e = lid; e < d; e += 64u) {
        var acc = 0.0;
        for (var j = 0u; j < len; j++) {
            acc += p[j] * cache[kv + j * w + u.c + e];
        }
        out[s * u.c + h * d + e] = acc;
    }
}
