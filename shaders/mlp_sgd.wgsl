// Tiny MLP, SGD with momentum over every parameter at once: v ← μ·v + g; p ← p − lr·v.
// Plain SGD is μ = 0. g is the loss gradient plus the regularisation's: g + (l1·sign(p) + l2·p),
// in that order (the CPU twin's `mlp::net::regularised`).
//
// Launch: workgroup_size(64); one thread per parameter; workgroups = ceil(count / 64).
// Buffers: 0 = params (read_write), 1 = grads (read), 2 = velocity (read_write), all
//          `count` f32 in the parameter layout;
//          3 = uniform Sgd {count: u32, lr: f32, momentum: f32, 0, l1: f32, l2: f32, 0, 0}.

struct Sgd {
    count: u32,
    lr: f32,
    momentum: f32,
    pad: u32,
    l1: f32,
    l2: f32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read_write> params: array<f32>;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> velocity: array<f32>;
@group(0) @binding(3) var<uniform> u: Sgd;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u.count) {
        return;
    }
    let p = params[i];
    let g = grads[i] + (u.l1 * sign(p) + u.l2 * p);
    let v = u.momentum * velocity[i] + g;
    velocity[i] = v;
    params[i] = p - u.lr * v;
}
