// CNN SGD with momentum over every parameter at once: v ← μ·v + g; p ← p − lr·v,
// as the CPU twin (`cnn::net::apply_update`). Plain SGD is μ = 0.
//
// Launch: workgroup_size(64); one invocation per parameter; workgroups
//   (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = params (read_write), 1 = grads (read), 2 = velocity (read_write), all in the
//          parameter layout; 3 = uniform Opt (16 words, see cnn_common.wgsl).

@group(0) @binding(0) var<storage, read_write> params: array<f32>;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> velocity: array<f32>;
@group(0) @binding(3) var<uniform> u: Opt;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let v = u.momentum * velocity[i] + grads[i];
    velocity[i] = v;
    params[i] = params[i] - u.lr * v;
}
