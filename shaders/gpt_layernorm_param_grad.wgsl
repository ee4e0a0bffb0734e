// The GPT's LayerNorm, backward to γ and β: dγ_i += Σ_rows dy·x̂, dβ_i += Σ_rows dy, with
// x̂ = (x − mean)·rstd, summed by ascending row (the CPU twin's order: one invocation per
// column). Adds into the gradient buffer, in the parameters' layout.
//
// Launch: workgroup_size(64); dispatch (ceil(c / 64), 1, 1): invocation i is column i.
// Buffers: 0 = x (read), 1 = stats (read: mean, rstd per row), 2 = dy (read), 3 = grads
//   (read_write; dγ at u.gamma, dβ at u.beta), 4 = uniform Ln (gpt_common.wgsl).

// Ln: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> stats: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;
@group(0) @binding(4) var<uniform> u: Ln;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= u.c {
        return;
    }
    var dg = grads[u.gamma + i];
    var db = grads[u.beta + i];
    for (var r = 0u; r < u.rows; r++) {
        let xh = (x[r * u.c + i] - stats[2u * r]) * stats[2u * r + 1u];
        let d = dy[r * u.c + i];
        dg += d * xh;
        db += d;
    }
    grads[u.gamma + i] = dg;
    grads[u.beta + i] = db;
}
