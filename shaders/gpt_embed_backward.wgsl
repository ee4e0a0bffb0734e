// The GPT's embeddings, backward: the gather's gradient is a scatter-add, dwte[v] += Σ of
// dx[r] over the rows r whose token is v, and dwpe[p] += Σ of dx[r] over the rows at
// position p (r = b·t + p). Many rows share a token, so a kernel with one invocation per
// row would need atomic float adds, whose order (and so whose rounding) changes from run to
// run. Here each gradient element has one owner that walks the rows by ascending r, the CPU
// twin's order: the result is the same on every run and equal to the f32 twin's.
//
// Launch: workgroup_size(64); dispatch (ceil((vocab + t)·c / 64), 1, 1): invocation g owns
//   column g % c of table row g / c: token row v < vocab, else position row v − vocab. A token
//   row reads every row's token (n reads, the same for the whole workgroup when c is a
//   multiple of 64) and dx only where it matches; a position row reads the rows p, t + p, ….
// Buffers: 0 = tokens (read, u32 × rows), 1 = dx (read, rows × c), 2 = grads (read_write;
//   dwte at u.wte, dwpe at u.wpe, added to), 3 = uniform Embed (gpt_common.wgsl).

// Embed: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> tokens: array<u32>;
@group(0) @binding(1) var<storage, read> dx: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;
@group(0) @binding(3) var<uniform> u: Embed;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if g >= (u.vocab + u.t) * u.c {
        return;
    }
    let v = g / u.c;
    let i = g % u.c;
    if v < u.vocab {
        let at = u.wte + v * u.c + i;
        var s = grads[at];
        for (var r = 0u; r < u.rows; r++) {
            if tokens[r] == v {
                s += dx[r * u.c + i];
            }
        }
        grads[at] = s;
    } else {
        let p = v - u.vocab;
        let at = u.wpe + p * u.c + i;
        var s = grads[at];
        for (var r = p; r < u.rows; r += u.t) {
            s += dx[r * u.c + i];
        }
        grads[at] = s;
    }
}
