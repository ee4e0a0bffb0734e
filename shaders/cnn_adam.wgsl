// CNN Adam over every parameter at once, as the CPU twin
// (`cnn::net::apply_update`): m ← β₁·m + (1 − β₁)·g; v ← β₂·v + ((1 − β₂)·g)·g;
// p ← p − (lr·(m / c₁)) / (√(v / c₂) + ε). 1 − β₁ and 1 − β₂ come in the uniform as the
// twin's f32 constants (WGSL would fold `1.0 - 0.999` in abstract float and get a different
// f32), and so do the bias corrections c₁ = 1 − β₁ᵗ, c₂ = 1 − β₂ᵗ of this step
// (`cnn::net::adam_corrections`, computed once in f64 and rounded): the session rewrites
// them before each step.
//
// Launch: workgroup_size(64); one invocation per parameter; workgroups
//   (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = params (read_write), 1 = grads (read), 2 = m (read_write), 3 = v
//          (read_write), all in the parameter layout; 4 = uniform Opt (16 words, see the
//          struct).

@group(0) @binding(0) var<storage, read_write> params: array<f32>;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> m: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<uniform> u: Opt;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let g = grads[i];
    let mi = u.beta1 * m[i] + u.one_minus_beta1 * g;
    let vi = u.beta2 * v[i] + u.one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = params[i] - u.lr * (mi / u.c1) / (sqrt(vi / u.c2) + u.eps);
}
