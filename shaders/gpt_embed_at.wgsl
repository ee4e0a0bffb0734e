// The GPT's embeddings for one decode step: one row per sequence, every sequence at the same
// position p = state[0] (the host keeps p below the context): x[r][i] = wte[tokens[r]][i] +
// wpe[p][i]. The same gather and single addition per element as the prompt's embeddings
// (gpt_embed.wgsl), only the position comes from the GPU, not from the row. A token outside
// the vocabulary (the host refuses them) gives a zero row rather than a read out of the table.
//
// Launch: workgroup_size(64); dispatch (ceil(rows·c / 64), 1, 1): invocation g is element
//   g % c of row g / c.
// Buffers: 0 = tokens (read, u32 × rows; declared read_write because tokens and x are ranges
//   of one buffer, and WebGPU forbids one buffer bound both read-only and writable in a
//   dispatch), 1 = params (read; wte at u.wte, vocab × c; wpe at u.wpe, cap × c), 2 = x
//   (read_write, rows × c, overwritten), 3 = state (read, u32: the position), 4 = uniform
//   Decode (gpt_decode_common.wgsl).

@group(0) @binding(0) var<storage, read_write> tokens: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read> state: array<u32>;
@group(0) @binding(4) var<uniform> u: Decode;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if g >= u.rows * u.c {
        return;
    }
    let r = g / u.c;
    let i = g % u.c;
    let tok = tokens[r];
    let p = state[0];
    var v = 0.0;
    if tok < u.vocab && p < u.cap {
        v = params[u.wte + tok * u.c + i] + params[u.wpe + p * u.c + i];
    }
    x[g] = v;
}
