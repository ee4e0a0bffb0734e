// Tiny MLP, Adam over every parameter at once: m ← β₁m + (1 − β₁)g; v ← β₂v + (1 − β₂)g²;
// p ← p − lr · (m / c₁) / (√(v / c₂) + ε). The bias corrections c₁ = 1 − β₁ᵗ and
// c₂ = 1 − β₂ᵗ come from a table the CPU computes once (`mlp::net::adam_corrections`, the
// numbers the CPU twin uses), entry t − 1 for step t; past its end both are exactly 1.0 in f32
// and the last entry serves. The step counter is the session's state, advanced on the GPU
// by mlp_forward_gather.wgsl (it holds the steps done before this one), so the CPU writes
// nothing per step.
// g is the loss gradient plus the regularisation's: g + (l1·sign(p) + l2·p), in that order
// (the CPU twin's `mlp::net::regularised`).
//
// Launch: workgroup_size(64); one thread per parameter; workgroups = ceil(count / 64).
// Buffers: 0 = params (read_write), 1 = grads (read), 2 = m (read_write), 3 = v (read_write),
//          all `count` f32 in the parameter layout;
//          4 = corrections (read: vec2 (c₁, c₂) per step, `corr_len` entries),
//          5 = state (read: {start, t, 0, 0}, t = steps done before this one),
//          6 = uniform Adam {count: u32, lr, beta1, beta2, eps: f32, corr_len: u32, 0, 0,
//              l1, l2: f32, 0, 0}.

struct Adam {
    count: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    corr_len: u32,
    pad: u32,
    pad0: u32,
    l1: f32,
    l2: f32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read_write> params: array<f32>;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> m: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<storage, read> corrections: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read> state: StepState;
@group(0) @binding(6) var<uniform> u: Adam;

// StepState: mlp_common.wgsl (appended when the kernel is built).

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u.count) {
        return;
    }
    let c = corrections[min(state.t, u.corr_len - 1u)];
    let p = params[i];
    let g = grads[i] + (u.l1 * sign(p) + u.l2 * p);
    let mi = u.beta1 * m[i] + (1.0 - u.beta1) * g;
    let vi = u.beta2 * v[i] + (1.0 - u.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = p - u.lr * (mi / c.x) / (sqrt(vi / c.y) + u.eps);
}
