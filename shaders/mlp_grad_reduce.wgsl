// Tiny MLP, the second half of a WIDE layer's parameter gradient (after mlp_grad_tiled.wgsl):
// for each weight and bias, the sum of its S partial sums P_s (S = min(64, batch); a missing
// slice s ≥ S counts as 0, exactly as an idle thread of mlp_backward_params.wgsl does), halved
// in that kernel's order — p[s] += p[s + 32] for s < 32, then + 16, …, + 1 — and ADDED to the
// gradient buffer (which the step clears first, as for mlp_backward_params.wgsl), so the
// gradient equals that kernel's to the last bit.
//
// Launch: workgroup_size(64); one thread per parameter of the layer, id = n · (fan_in + 1) + c
//   (c = fan_in: the bias); workgroups = ceil(fan_out · (fan_in + 1) / 64) along x.
// Buffers: 0 = partials (read: P_s[n, c] at s · fan_out · (fan_in + 1) + id),
//          1 = grads (read_write, added to: W[n, c] at w_off + n · fan_in + c, bias at b_off + n),
//          2 = uniform Grad {batch, fan_in, fan_out, in_off, delta_off, w_off, b_off, S}
//              (mlp_grad_tiled.wgsl's).

struct Grad {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    in_off: u32,
    delta_off: u32,
    w_off: u32,
    b_off: u32,
    slices: u32,
}

@group(0) @binding(0) var<storage, read> partials: array<f32>;
@group(0) @binding(1) var<storage, read_write> grads: array<f32>;
@group(0) @binding(2) var<uniform> g: Grad;

fn slice(s: u32, per: u32, id: u32) -> f32 {
    if (s < g.slices) {
        return partials[s * per + id];
    }
    return 0.0;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cols = g.fan_in + 1u;
    let per = g.fan_out * cols;
    let id = gid.x;
    if (id >= per) {
        return;
    }
    // The first halving straight from memory, the next five in a private array.
    var p: array<f32, 32>;
    for (var s = 0u; s < 32u; s++) {
        p[s] = slice(s, per, id) + slice(s + 32u, per, id);
    }
    for (var h = 16u; h > 0u; h >>= 1u) {
        for (var s = 0u; s < h; s++) {
            p[s] = p[s] + p[s + h];
        }
    }
    let n = id / cols;
    let c = id % cols;
    if (c < g.fan_in) {
        grads[g.w_off + n * g.fan_in + c] += p[0];
    } else {
        grads[g.b_off + n] += p[0];
    }
}
