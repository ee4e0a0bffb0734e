// Tiny MLP, the second of the TWO dispatches of a whole training step for small networks
// (after mlp_step_lanes.wgsl): one WORKGROUP per parameter adds its 64 lane sums, the
// gradient dW[n, k] = Σ_b dz[b, n] · in[b, k] or dbias[n] = Σ_b dz[b, n], by halving them
// pairwise in workgroup memory (32, 16, …, 1: the order of mlp_backward_params.wgsl and of the
// CPU twin, whose lane t holds samples t, t + 64, …), and its thread 0 then updates the
// parameter with the optimiser, exactly as optim_adam.wgsl / optim_sgd.wgsl do:
// g ← g + (l1·sign(p) + l2·p); Adam: m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g²,
// p ← p − lr·(m / c₁) / (√(v / c₂) + ε), with (c₁, c₂) from the correction table at the step
// counter; SGD with momentum μ: v ← μv + g, p ← p − lr·v. Nothing in this dispatch reads a
// parameter another workgroup writes (the passes that read them ran in the first dispatch).
//
// Launch: workgroup_size(64); workgroups = the number of parameters, along x and wrapping into
//   y past 65,535 (workgroup index = x + y · num_workgroups.x; the few past the last parameter
//   idle).
// Buffers: 0 = partials (read: parameter j's lane sums at j · 64 + t, as mlp_step_lanes.wgsl
//              numbers them),
//          1 = grads (read_write: the gradient, parameter layout), 2 = params (read_write),
//          3 = m (read_write: Adam's first moment, or SGD's velocity), 4 = v (read_write),
//          5 = corrections (read: vec2 (c₁, c₂) per step), 6 = state (read: {start, t, 0, 0},
//              the state this step read),
//          7 = uniform StepNet (mlp_step_lanes.wgsl; opt.w = the number of parameters).

// StepState, StepNet: mlp_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> partials: array<f32>;
@group(0) @binding(1) var<storage, read_write> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> corrections: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read> state: StepState;
@group(0) @binding(7) var<uniform> u: StepNet;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let j = wid.x + wid.y * groups.x;
    let valid = j < u.opt.w;
    var lane_sum = 0.0;
    if (valid) {
        lane_sum = partials[j * 64u + t];
    }
    partial[t] = lane_sum;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (t < s) {
            partial[t] += partial[t + s];
        }
        workgroupBarrier();
    }
    if (t == 0u && valid) {
        // Which layer parameter j belongs to (the last whose first number ≤ j), and where it
        // sits in the parameter layout.
        let depth = u.head.z;
        var l = 0u;
        for (var q = 1u; q < depth; q++) {
            if (j >= u.layers[2u * q + 1u].w) {
                l = q;
            }
        }
        let a = u.layers[2u * l];
        let c = u.layers[2u * l + 1u];
        let cols = a.x + 1u;
        let id = j - c.w;
        let n = id / cols;
        let k = id % cols;
        var i = c.x + n;
        if (k < a.x) {
            i = a.w + n * a.x + k;
        }
        grads[i] = partial[0];
        let p = params[i];
        let g = partial[0] + (u.hyper1.x * sign(p) + u.hyper1.y * p);
        let lr = u.hyper0.x;
        if (u.opt.x == 1u) {
            let beta1 = u.hyper0.y;
            let beta2 = u.hyper0.z;
            let cr = corrections[min(state.t, u.opt.y - 1u)];
            let mi = beta1 * m[i] + (1.0 - beta1) * g;
            let vi = beta2 * v[i] + (1.0 - beta2) * g * g;
            m[i] = mi;
            v[i] = vi;
            params[i] = p - lr * (mi / cr.x) / (sqrt(vi / cr.y) + u.hyper0.w);
        } else {
            let vel = u.hyper1.z * m[i] + g;
            m[i] = vel;
            params[i] = p - lr * vel;
        }
    }
}
