// The GPT's LayerNorm, forward: each row of width c normalised to zero mean and unit variance,
// then scaled by γ and shifted by β: mean = Σx / c, var = Σ(x − mean)² / c (both summed by
// ascending column, the CPU twin's order: one invocation per row), rstd = 1 / √(var + ε),
// y = (x − mean)·rstd·γ + β. Saves mean and rstd for the backward.
//
// Launch: workgroup_size(64); dispatch (ceil(rows / 64), 1, 1): invocation r is row r.
// Buffers: 0 = x (read, rows × c; declared read_write so that it may be a range of the
//   buffer y and stats are written to: WebGPU forbids binding one buffer both read-only and
//   writable in a dispatch), 1 = params (read; γ at u.gamma, β at u.beta, c each),
//   2 = y (read_write, rows × c), 3 = stats (read_write, rows × 2: mean, rstd),
//   4 = uniform Ln (gpt_common.wgsl).

// Ln: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>;
@group(0) @binding(4) var<uniform> u: Ln;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if r >= u.rows {
        return;
    }
    let at = r * u.c;
    let cf = f32(u.c);
    var s = 0.0;
    for (var i = 0u; i < u.c; i++) {
        s += x[at + i];
    }
    let mean = s / cf;
    var q = 0.0;
    for (var i = 0u; i < u.c; i++) {
        let d = x[at + i] - mean;
        q += d * d;
    }
    let rstd = 1.0 / sqrt(q / cf + u.eps);
    for (var i = 0u; i < u.c; i++) {
        y[at + i] = (x[at + i] - mean) * rstd * params[u.gamma + i] + params[u.beta + i];
    }
    stats[2u * r] = mean;
    stats[2u * r + 1u] = rstd;
}
