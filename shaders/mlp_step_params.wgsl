// Tiny MLP, the per-parameter half of a whole training step in ONE dispatch (after every
// layer's activations and deltas are written, by mlp_step_samples.wgsl or, in the default
// per-layer step, by the forward kernels, the loss and mlp_backward_input.wgsl for every layer
// but the first, all at the offsets of `Net::act_offsets`): one WORKGROUP per
// parameter of every layer computes its gradient, dW[n, k] = Σ_b dz[b, n] · in[b, k] or
// dbias[n] = Σ_b dz[b, n], exactly as mlp_backward_params.wgsl does (64 threads each sum every
// 64th sample, then halve the 64 partial sums in workgroup memory; the CPU twin sums in the
// same order), and its thread 0 then updates that parameter with the optimiser, exactly as
// optim_adam.wgsl / optim_sgd.wgsl do: g ← g + (l1·sign(p) + l2·p); Adam: m ← β₁m + (1 − β₁)g,
// v ← β₂v + (1 − β₂)g², p ← p − lr·(m / c₁) / (√(v / c₂) + ε), with (c₁, c₂) from the correction
// table at the step counter; SGD with momentum μ: v ← μv + g, p ← p − lr·v. No workgroup reads
// a parameter another one writes (the forward and backward passes that read them are the
// earlier dispatches), so the update can follow the sum in the same dispatch.
//
// Launch: workgroup_size(64); workgroups = every layer's fan_out · (fan_in + 1), layer after
//   layer (layer l's first workgroup is in its uniform entry), along x and wrapping into y past
//   65,535 (workgroup index = x + y · num_workgroups.x; the few past the last parameter idle).
// Buffers: 0 = acts (read), 1 = deltas (read), both as the earlier dispatches left them,
//          2 = grads (read_write: the gradient, parameter layout), 3 = params (read_write),
//          4 = m (read_write: Adam's first moment, or SGD's velocity), 5 = v (read_write),
//          6 = corrections (read: vec2 (c₁, c₂) per step), 7 = state (read: {start, t, 0, 0}),
//          8 = uniform StepNet (mlp_step_samples.wgsl).

// StepState, StepNet: mlp_common.wgsl (appended when the kernel is built).

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read> deltas: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;
@group(0) @binding(3) var<storage, read_write> params: array<f32>;
@group(0) @binding(4) var<storage, read_write> m: array<f32>;
@group(0) @binding(5) var<storage, read_write> v: array<f32>;
@group(0) @binding(6) var<storage, read> corrections: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> state: StepState;
@group(0) @binding(8) var<uniform> u: StepNet;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let gid = wid.x + wid.y * groups.x;
    let batch = u.head.x;
    let depth = u.head.z;
    // Which layer this workgroup's parameter belongs to (the last whose first workgroup ≤ id).
    var l = 0u;
    for (var j = 1u; j < depth; j++) {
        if (gid >= u.layers[2u * j + 1u].w) {
            l = j;
        }
    }
    let a = u.layers[2u * l];
    let c = u.layers[2u * l + 1u];
    let fan_in = a.x;
    let fan_out = a.y;
    let cols = fan_in + 1u;
    let id = gid - c.w;
    let valid = id < fan_out * cols;
    let n = id / cols;
    let k = id % cols;
    var acc = 0.0;
    if (valid) {
        for (var b = t; b < batch; b += 64u) {
            var x = 1.0;
            if (k < fan_in) {
                x = acts[c.y + b * fan_in + k];
            }
            acc += deltas[c.z + b * fan_out + n] * x;
        }
    }
    partial[t] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (t < s) {
            partial[t] += partial[t + s];
        }
        workgroupBarrier();
    }
    if (t == 0u && valid) {
        var i = c.x + n;
        if (k < fan_in) {
            i = a.w + n * fan_in + k;
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
