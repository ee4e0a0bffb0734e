// CNN dense forward: logit[n, j] = (Σ_i p[n, i] · Wd[j, i]) + bd[j], i ascending,
// one accumulator from 0, the bias added once after the sum (the CPU twin's order,
// `cnn::net`). p is the last pool's output: one sample's CHW block is its dense input row.
//
// Launch: workgroup_size(64); one invocation per (sample n, class j), i = n·classes + j;
//   workgroups (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = params (read: Wd at w_off, classes × inputs row-major; bd at b_off),
//          1 = acts (read_write: reads in_off, writes logits_off),
//          2 = uniform Dense (16 words, see cnn_common.wgsl; count = B·classes).

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<uniform> u: Dense;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x + gid.y * u.row;
    if (idx >= u.count) {
        return;
    }
    let n = idx / u.classes;
    let j = idx % u.classes;
    let p = u.in_off + n * u.inputs;
    let w = u.w_off + j * u.inputs;
    var acc = 0.0;
    for (var i = 0u; i < u.inputs; i++) {
        acc += acts[p + i] * params[w + i];
    }
    acts[u.logits_off + idx] = acc + params[u.b_off + j];
}
