// Adam over a flat range of parameters, one model's every layer at once:
// m ← β₁·m + (1 − β₁)·g; v ← β₂·v + ((1 − β₂)·g)·g; p ← p − (lr·(m / c₁)) / (√(v / c₂) + ε).
// g is the loss gradient plus the regularisation's, g + (l1·sign(p) + l2·p) in that order (0
// for a model without it), as the CPU twin (`cpu_kernels::optim::adam_update_with`).
//
// The bias corrections c₁ = 1 − β₁ᵗ and c₂ = 1 − β₂ᵗ come from a table the CPU computes once
// (`cpu_kernels::optim::adam_correction_table`, the twin's numbers), entry t for the step after
// t completed ones; past its end both are exactly 1.0 in f32 and the last entry serves. t is a
// counter kept on the GPU, so the CPU writes nothing per step and many steps can share one
// submission. The counter is double-buffered: a step reads `state` and the next state goes to
// the other buffer, so no invocation reads what another writes. A model that gathers its batch
// on the GPU advances it there (`advance` = 0); otherwise invocation 0 here writes t + 1.
//
// Launch: workgroup_size(64); one invocation per parameter; workgroups
//   (min(g, 65535), ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row, and the
//   invocations past the last parameter return.
// Buffers: 0 = params (read_write), 1 = grads (read), 2 = m (read_write), 3 = v (read_write),
//          all `count` f32 in the parameter layout; 4 = corrections (read: vec2 (c₁, c₂) per
//          step, `corr_len` entries); 5 = state (read: Steps, t = steps done before this one);
//          6 = next state (read_write: Steps, written only with `advance`); 7 = uniform Optim
//          (16 words, optim_common.wgsl).

@group(0) @binding(0) var<storage, read_write> params: array<f32>;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> m: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<storage, read> corrections: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read> state: Steps;
@group(0) @binding(6) var<storage, read_write> next_state: Steps;
@group(0) @binding(7) var<uniform> u: Optim;

// Optim, Steps, element(): optim_common.wgsl (appended when the kernel is built).

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = element(gid, u.row);
    if (u.advance == 1u && i == 0u) {
        next_state = Steps(state.start, state.t + 1u, state.micro, 0u);
    }
    if (i >= u.count) {
        return;
    }
    let c = corrections[min(state.t, u.corr_len - 1u)];
    let p = params[i];
    let g = grads[i] + (u.l1 * sign(p) + u.l2 * p);
    let mi = u.beta1 * m[i] + u.one_minus_beta1 * g;
    let vi = u.beta2 * v[i] + u.one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = p - u.lr * (mi / c.x) / (sqrt(vi / c.y) + u.eps);
}
