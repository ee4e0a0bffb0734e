// The GPT's loss head: softmax cross-entropy over the vocabulary, forward and backward in
// one pass. For each row of logits x: m = max x, z = Σ exp(x − m) (by ascending class, the
// CPU twin's order: one invocation per row), p = exp(x − m) / z. The row's loss is
// −ln p[target] = ln z − (x[target] − m), computed in that form so that a tiny p is not
// rounded before its logarithm. The loss gradient on the logits is (p − onehot(target)) / N,
// N the number of rows whose target is not IGNORE (the loss is their mean); an IGNORE row
// has loss 0 and gradient 0. Every invocation counts N itself from the targets, so a
// training step can change the targets without a new uniform.
//
// Launch: workgroup_size(64); dispatch (ceil(rows / 64), 1, 1): invocation r is row r.
// Buffers: 0 = logits (read, rows × vocab), 1 = targets (read, u32 × rows; a target is
//   < vocab or IGNORE), 2 = losses (read_write, rows: each row's −ln p[target], 0 if IGNORE;
//   their sum / N is the loss), 3 = dlogits (read_write, rows × vocab, overwritten),
//   4 = uniform Xent (gpt_common.wgsl).

// Xent, IGNORE: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> targets: array<u32>;
@group(0) @binding(2) var<storage, read_write> losses: array<f32>;
@group(0) @binding(3) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(4) var<uniform> u: Xent;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if r >= u.rows {
        return;
    }
    let at = r * u.vocab;
    let tg = targets[r];
    if tg == IGNORE {
        losses[r] = 0.0;
        for (var j = 0u; j < u.vocab; j++) {
            dlogits[at + j] = 0.0;
        }
        return;
    }
    var counted = 0u;
    for (var k = 0u; k < u.rows; k++) {
        counted += select(1u, 0u, targets[k] == IGNORE);
    }
    let inv = 1.0 / f32(counted);
    var m = logits[at];
    for (var j = 1u; j < u.vocab; j++) {
        m = max(m, logits[at + j]);
    }
    var z = 0.0;
    for (var j = 0u; j < u.vocab; j++) {
        z += exp(logits[at + j] - m);
    }
    losses[r] = log(z) - (logits[at + tg] - m);
    for (var j = 0u; j < u.vocab; j++) {
        let p = exp(logits[at + j] - m) / z;
        dlogits[at + j] = select(p, p - 1.0, j == tg) * inv;
    }
}
