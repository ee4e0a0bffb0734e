// SGD with momentum over a flat range of parameters, one model's every layer at once:
// v ← μ·v + g; p ← p − lr·v (plain SGD is μ = 0). g is the loss gradient plus the
// regularisation's, g + (l1·sign(p) + l2·p) in that order (0 for a model without it), as
// the CPU twin (`cpu_kernels::optim::sgd_update_with`).
//
// Launch: workgroup_size(64); one invocation per parameter; workgroups
//   (min(g, 65535), ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row, and the
//   invocations past the last parameter return.
// Buffers: 0 = params (read_write), 1 = grads (read), 2 = velocity (read_write), all `count`
//          f32 in the parameter layout; 3 = uniform Optim (16 words, optim_common.wgsl).

@group(0) @binding(0) var<storage, read_write> params: array<f32>;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> velocity: array<f32>;
@group(0) @binding(3) var<uniform> u: Optim;

// Optim, element(): optim_common.wgsl (appended when the kernel is built).

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = element(gid, u.row);
    if (i >= u.count) {
        return;
    }
    let p = params[i];
    let g = grads[i] + (u.l1 * sign(p) + u.l2 * p);
    let v = u.momentum * velocity[i] + g;
    velocity[i] = v;
    params[i] = p - u.lr * v;
}
