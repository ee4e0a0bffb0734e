// The GPT's LayerNorm, backward to its input: with x̂ = (x − mean)·rstd and d̂ = dy·γ,
// dx += rstd·(d̂ − mean(d̂) − x̂·mean(d̂·x̂)), the means over the row's c columns summed by
// ascending column (the CPU twin's order; one invocation per row). Adds into dx, because the
// residual stream's gradient arrives there first. γ's and β's gradients are
// gpt_layernorm_param_grad.wgsl.
//
// Launch: workgroup_size(64); dispatch (ceil(rows / 64), 1, 1): invocation r is row r.
// Buffers: 0 = x (read), 1 = params (read; γ at u.gamma), 2 = stats (read: mean, rstd per
//   row), 3 = dy (read; declared read_write so that it may be a range of dx's buffer, as
//   WebGPU forbids one buffer bound both read-only and writable in a dispatch), 4 = dx
//   (read_write, added to), 5 = uniform Ln (gpt_common.wgsl).

// Ln: gpt_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read> stats: array<f32>;
@group(0) @binding(3) var<storage, read_write> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
@group(0) @binding(5) var<uniform> u: Ln;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if r >= u.rows {
        return;
    }
    let at = r * u.c;
    let mean = stats[2u * r];
    let rstd = stats[2u * r + 1u];
    var sd = 0.0;
    var sdx = 0.0;
    for (var i = 0u; i < u.c; i++) {
        let xh = (x[at + i] - mean) * rstd;
        let d = dy[at + i] * params[u.gamma + i];
        sd += d;
        sdx += d * xh;
    }
    let cf = f32(u.c);
    let md = sd / cf;
    let mdx = sdx / cf;
    for (var i = 0u; i < u.c; i++) {
        let xh = (x[at + i] - mean) * rstd;
        let d = dy[at + i] * params[u.gamma + i];
        dx[at + i] += rstd * (d - md - xh * mdx);
    }
}
