// Tiny MLP, backward through a WIDE layer to its input as a register-tiled matmul:
// dz_in[b, k] = (Σ_n dz[b, n] · W[n, k]) · f'(a[b, k]), i.e. DZ_IN = (DZ · W) ∘ f'(A) with
// DZ = batch × fan_out and W = fan_out × fan_in (row-major: the reduction runs down W's
// columns, which the indexing handles). The result is the one mlp_backward_input.wgsl gives,
// to the last bit: each sum still runs n = 0 … fan_out − 1 in turn, then is multiplied by the
// derivative of the previous layer's activation written in terms of its output a (ReLU
// a > 0, tanh 1 − a², sigmoid a(1 − a), linear 1). A workgroup stages a 64 × 16 slice of DZ
// and a 16 × 64 slice of W in workgroup memory, each value used by 16 threads.
//
// Launch: workgroup_size(256) = 16 × 16 threads; workgroups = (ceil(fan_in / 64),
//   ceil(batch / 64), 1): workgroup (x, y) owns b ∈ [64y, 64y + 64), k ∈ [64x, 64x + 64);
//   thread (tx, ty) = (index mod 16, index / 16) owns b = 64y + ty + 16i, k = 64x + tx + 16j
//   (i, j = 0…3). Any batch and widths: loads past an edge read 0, stores past an edge are
//   skipped. Workgroup memory: 2 × 64 × 16 f32 = 8 KiB.
// Buffers: 0 = params (read: W at w_off),
//          1 = acts (read: the layer's input a, batch × fan_in at in_off),
//          2 = deltas (read_write: reads dz at out_delta_off, writes dz_in at in_delta_off),
//          3 = uniform Back {batch, fan_in, fan_out, act, w_off, in_off, in_delta_off,
//              out_delta_off} (the same uniform as mlp_backward_input.wgsl).

struct Back {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    act: u32,
    w_off: u32,
    in_off: u32,
    in_delta_off: u32,
    out_delta_off: u32,
}

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read> acts: array<f32>;
@group(0) @binding(2) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(3) var<uniform> u: Back;

const TILE: u32 = 64u;
const DEPTH: u32 = 16u;

// tile_dz[r · 64 + m] = DZ[b0 + m, n0 + r]; tile_w[r · 64 + c] = W[n0 + r, k0 + c].
var<workgroup> tile_dz: array<f32, 1024>;
var<workgroup> tile_w: array<f32, 1024>;

// derivative_from_output(): mlp_common.wgsl (appended when the kernel is built).

// Row b of dz_in: the thread's four columns k = col + 16j.
fn store_row(b: u32, col: u32, s: vec4<f32>) {
    if (b >= u.batch) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let k = col + 16u * j;
        if (k < u.fan_in) {
            let i = b * u.fan_in + k;
            deltas[u.in_delta_off + i] = s[j] * derivative_from_output(acts[u.in_off + i], u.act);
        }
    }
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let tx = t % 16u;
    let ty = t / 16u;
    let b0 = wid.y * TILE;
    let k0 = wid.x * TILE;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    // DZ is contiguous along the reduction (16 neighbouring threads read 16 neighbouring n of
    // one row), W along k (64 neighbouring threads read 64 neighbouring k of one row).
    let dz_r = t % DEPTH;
    let dz_m = t / DEPTH;
    let w_c = t % TILE;
    let w_r = t / TILE;
    for (var n0 = 0u; n0 < u.fan_out; n0 += DEPTH) {
        for (var i = 0u; i < 4u; i++) {
            let m = dz_m + 16u * i;
            var z = 0.0;
            if (b0 + m < u.batch && n0 + dz_r < u.fan_out) {
                z = deltas[u.out_delta_off + (b0 + m) * u.fan_out + n0 + dz_r];
            }
            tile_dz[dz_r * TILE + m] = z;
            let r = w_r + 4u * i;
            var w = 0.0;
            if (n0 + r < u.fan_out && k0 + w_c < u.fan_in) {
                w = params[u.w_off + (n0 + r) * u.fan_in + k0 + w_c];
            }
            tile_w[r * TILE + w_c] = w;
        }
        workgroupBarrier();
        for (var r = 0u; r < DEPTH; r++) {
            let o = r * TILE;
            let z = vec4<f32>(tile_dz[o + ty], tile_dz[o + ty + 16u], tile_dz[o + ty + 32u], tile_dz[o + ty + 48u]);
            let w = vec4<f32>(tile_w[o + tx], tile_w[o + tx + 16u], tile_w[o + tx + 32u], tile_w[o + tx + 48u]);
            // Multiply, then add: s += dz · W in mlp_backward_input.wgsl's order.
            acc0 = acc0 + z.x * w;
            acc1 = acc1 + z.y * w;
            acc2 = acc2 + z.z * w;
            acc3 = acc3 + z.w * w;
        }
        workgroupBarrier();
    }
    let col = k0 + tx;
    store_row(b0 + ty, col, acc0);
    store_row(b0 + ty + 16u, col, acc1);
    store_row(b0 + ty + 32u, col, acc2);
    store_row(b0 + ty + 48u, col, acc3);
}
