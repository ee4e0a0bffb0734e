// Tiny MLP, dense layer forward for a WIDE layer as a register-tiled matmul:
// out[b, n] = act(Σ_k in[b, k] · W[n, k] + bias[n]), i.e. OUT = act(IN · Wᵀ + bias) with
// IN = batch × fan_in and W = fan_out × fan_in (both row-major, so both operands are read
// along k: the transpose is in the indexing). The result is the one mlp_forward.wgsl gives,
// to the last bit: every output's sum still runs k = 0 … fan_in − 1 in turn (tile after tile,
// k in order inside a tile), then adds the bias, then the activation (0 = linear, 1 = ReLU,
// 2 = tanh, 3 = sigmoid, as in mlp_forward.wgsl). What changes is who loads what: a workgroup
// stages a 64 × 16 slice of IN and of W in workgroup memory and every value loaded there is
// used by 16 threads, where the one-thread-per-output kernel reads both from memory per
// multiply-add.
//
// Launch: workgroup_size(256) = 16 × 16 threads; workgroups = (ceil(fan_out / 64),
//   ceil(batch / 64), 1): workgroup (x, y) owns outputs b ∈ [64y, 64y + 64), n ∈ [64x, 64x + 64);
//   thread (tx, ty) = (index mod 16, index / 16) owns the 4 × 4 outputs b = 64y + ty + 16i,
//   n = 64x + tx + 16j (i, j = 0…3: neighbouring threads write neighbouring n). Any batch and
//   widths: loads past an edge read 0 (adding 0 · 0 leaves a sum unchanged), stores past an
//   edge are skipped. Workgroup memory: 2 × 64 × 16 f32 = 8 KiB.
// Buffers: 0 = params (read: W, fan_out × fan_in row-major at w_off, biases at b_off),
//          1 = acts (read_write: reads the layer's input at in_off, batch × fan_in; writes its
//              output at out_off, batch × fan_out),
//          2 = uniform Dense {batch, fan_in, fan_out, act, w_off, b_off, in_off, out_off}
//              (the same uniform as mlp_forward.wgsl).

struct Dense {
    batch: u32,
    fan_in: u32,
    fan_out: u32,
    act: u32,
    w_off: u32,
    b_off: u32,
    in_off: u32,
    out_off: u32,
}

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<uniform> d: Dense;

const TILE: u32 = 64u;
const DEPTH: u32 = 16u;

// tile_in[r · 64 + m] = IN[b0 + m, k0 + r]; tile_w[r · 64 + c] = W[n0 + c, k0 + r].
var<workgroup> tile_in: array<f32, 1024>;
var<workgroup> tile_w: array<f32, 1024>;

// activate(): mlp_common.wgsl (appended when the kernel is built).

// Row b of the output: the thread's four columns n0 + tx + 16j, each with its bias.
fn store_row(b: u32, col: u32, acc: vec4<f32>) {
    if (b >= d.batch) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let n = col + 16u * j;
        if (n < d.fan_out) {
            acts[d.out_off + b * d.fan_out + n] = activate(acc[j] + params[d.b_off + n], d.act);
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
    let n0 = wid.x * TILE;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    // Loading: thread t reads column r = t mod 16 of rows t / 16 + 16i, so 16 neighbouring
    // threads read 16 neighbouring k of one row (both operands are contiguous along k).
    let lr = t % DEPTH;
    let lm = t / DEPTH;
    for (var k0 = 0u; k0 < d.fan_in; k0 += DEPTH) {
        let k = k0 + lr;
        for (var i = 0u; i < 4u; i++) {
            let m = lm + 16u * i;
            var x = 0.0;
            if (b0 + m < d.batch && k < d.fan_in) {
                x = acts[d.in_off + (b0 + m) * d.fan_in + k];
            }
            tile_in[lr * TILE + m] = x;
            var w = 0.0;
            if (n0 + m < d.fan_out && k < d.fan_in) {
                w = params[d.w_off + (n0 + m) * d.fan_in + k];
            }
            tile_w[lr * TILE + m] = w;
        }
        workgroupBarrier();
        for (var r = 0u; r < DEPTH; r++) {
            let o = r * TILE;
            let a = vec4<f32>(tile_in[o + ty], tile_in[o + ty + 16u], tile_in[o + ty + 32u], tile_in[o + ty + 48u]);
            let w = vec4<f32>(tile_w[o + tx], tile_w[o + tx + 16u], tile_w[o + tx + 32u], tile_w[o + tx + 48u]);
            // Multiply, then add: the order and roundings of acc += W · in in mlp_forward.wgsl.
            acc0 = acc0 + w * a.x;
            acc1 = acc1 + w * a.y;
            acc2 = acc2 + w * a.z;
            acc3 = acc3 + w * a.w;
        }
        workgroupBarrier();
    }
    let col = n0 + tx;
    store_row(b0 + ty, col, acc0);
    store_row(b0 + ty + 16u, col, acc1);
    store_row(b0 + ty + 32u, col, acc2);
    store_row(b0 + ty + 48u, col, acc3);
}
