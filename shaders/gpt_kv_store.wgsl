// Writes the keys and values of rows [q | k | v] (3c wide, as the qkv projection leaves them)
// into one layer's KV cache: row r is position base + r % per_seq of sequence r / per_seq,
// base 0 for a prompt (every position of it at once) or state[0] for a decode step (one
// row per sequence). A copy, no arithmetic: the cache holds exactly the numbers the full
// forward would read. Positions at or past the cache's capacity are not written.
//
// Launch: workgroup_size(64); dispatch (ceil(rows·2c / 64), 1, 1): invocation g copies
//   element g % 2c ([k | v]) of row g / 2c.
// Buffers: 0 = qkv (read, rows × 3c), 1 = cache (read_write, seqs × cap × 2c, as
//   gpt_decode_common.wgsl lays it out), 2 = state (read, u32: the decode position),
//   3 = uniform Decode (gpt_decode_common.wgsl).

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> cache: array<f32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<uniform> u: Decode;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    let w = 2u * u.c;
    if g >= u.rows * w {
        return;
    }
    let r = g / w;
    let e = g % w;
    var base = 0u;
    if u.from_state == 1u {
        base = state[0];
    }
    let pos = base + r % u.per_seq;
    if pos >= u.cap {
        return;
    }
    let s = r / u.per_seq;
    cache[(s * u.cap + pos) * w + e] = qkv[r * 3u * u.c + u.c + e];
}
