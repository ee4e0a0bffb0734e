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

// p[s] + p[s + 32] for the four slices s = first … first + 3: the first halving.
fn halved(first: u32, per: u32, id: u32) -> vec4<f32> {
    return vec4<f32>(
        slice(first, per, id) + slice(first + 32u, per, id),
        slice(first + 1u, per, id) + slice(first + 33u, per, id),
        slice(first + 2u, per, id) + slice(first + 34u, per, id),
        slice(first + 3u, per, id) + slice(first + 35u, per, id),
    );
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cols = g.fan_in + 1u;
    let per = g.fan_out * cols;
    let id = gid.x;
    if (id >= per) {
        return;
    }
    // The 32 sums after the first halving as eight vec4s, q_i = p[4i … 4i + 3], every index
    // a constant so they stay in registers (a dynamically indexed private array would spill).
    var q0 = halved(0u, per, id);
    var q1 = halved(4u, per, id);
    var q2 = halved(8u, per, id);
    var q3 = halved(12u, per, id);
    let q4 = halved(16u, per, id);
    let q5 = halved(20u, per, id);
    let q6 = halved(24u, per, id);
    let q7 = halved(28u, per, id);
    // p[s] += p[s + 16] for s < 16, then + 8 for s < 8, then + 4 for s < 4.
    q0 = q0 + q4;
    q1 = q1 + q5;
    q2 = q2 + q6;
    q3 = q3 + q7;
    q0 = q0 + q2;
    q1 = q1 + q3;
    q0 = q0 + q1;
    // Then + 2 for s < 2, then + 1.
    let sum = (q0.x + q0.z) + (q0.y + q0.w);
    let n = id / cols;
    let c = id % cols;
    if (c < g.fan_in) {
        grads[g.w_off + n * g.fan_in + c] += sum;
    } else {
        grads[g.b_off + n] += sum;
    }
}
