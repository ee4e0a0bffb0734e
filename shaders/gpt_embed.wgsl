// The GPT's embeddings, forward: each row of activations is its token's row of the token
// table plus its position's row of the position table, x[r][i] = wte[tokens[r]][i] +
// wpe[r % t][i]: a gather, one addition per element. A token outside the vocabulary
// (the host refuses them before a run) gives a zero row rather than a read out of the table.
//
// Launch: workgroup_size(64); dispatch (ceil(rows·c / 64), 1, 1): invocation g is element
//   g % c of row g / c (consecutive invocations read consecutive columns of one table row).
// Buffers: 0 = tokens (read, u32 × rows; declared read_write so that tokens and x may be
//   ranges of one buffer, as WebGPU forbids one buffer bound both read-only and writable in
//   a dispatch), 1 = params (read; wte at u.wte, vocab × c; wpe at
//   u.wpe, t × c), 2 = x (read_write, rows × c, overwritten), 3 = uniform Embed
//   (gpt_common.wgsl).

// Embed: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read_write> tokens: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<uniform> u: Embed;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if g >= u.rows * u.c {
        return;
    }
    let r = g / u.c;
    let i = g % u.c;
    let tok = tokens[r];
    var v = 0.0;
    if tok < u.vocab {
        v = params[u.wte + tok * u.c + i] + params[u.wpe + (r % u.t) * u.c + i];
    }
    x[g] = v;
}
