// Tiny MLP, a WIDE layer's parameter gradient as a register-tiled matmul whose reduction runs
// over the batch, cut into S strided slices (S = min(64, batch)): slice s computes
// P_s[n, c] = Σ_j dz[b_j, n] · x[b_j, c] over its samples b_j = s + S·j (j = 0, 1, … while
// b_j < batch), where x[b, c] is the layer's input for c < fan_in and 1 for c = fan_in (the
// bias column). That is P_s = DZ_sᵀ · [X_s 1]: DZ is batch × fan_out and X batch × fan_in,
// both row-major, so the transpose is in the indexing. Slice s holds exactly the partial sum
// that thread s of mlp_backward_params.wgsl accumulates (the same samples, in the same order),
// so mlp_grad_reduce.wgsl, halving the S slices in that kernel's order, gives its gradient to
// the last bit. The slices also give the GPU enough workgroups: a 256 × 257 gradient is only
// 20 tiles of 64 × 64, the batch's 64 slices make 1,280.
//
// Launch: workgroup_size(256) = 16 × 16 threads; workgroups = (ceil((fan_in + 1) / 64),
//   ceil(fan_out / 64), S): workgroup (x, y, s) owns n ∈ [64y, 64y + 64), c ∈ [64x, 64x + 64)
//   of slice s; thread (tx, ty) = (index mod 16, index / 16) owns n = 64y + ty + 16i,
//   c = 64x + tx + 16j (i, j = 0…3). Any batch and widths: loads past an edge read 0, stores
//   past an edge are skipped. Workgroup memory: 2 × 16 × 64 f32 = 8 KiB.
// Buffers: 0 = acts (read: the layer's input, batch × fan_in at in_off),
//          1 = deltas (read: the layer's dz, batch × fan_out at delta_off),
//          2 = partials (read_write: P_s[n, c] at s · fan_out · (fan_in + 1) + n · (fan_in + 1) + c),
//          3 = uniform Grad {batch, fan_in, fan_out, in_off, delta_off, w_off, b_off, S}
//              (mlp_backward_params.wgsl's uniform, its last word the slice count).

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

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read> deltas: array<f32>;
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;
@group(0) @binding(3) var<uniform> g: Grad;

const TILE: u32 = 64u;
const DEPTH: u32 = 16u;

// tile_dz[r · 64 + m] = dz[b_(j0 + r), n0 + m]; tile_x[r · 64 + c] = x[b_(j0 + r), c0 + c].
var<workgroup> tile_dz: array<f32, 1024>;
var<workgroup> tile_x: array<f32, 1024>;

// Row n of slice s's partial gradient: the thread's four columns c = col + 16j.
fn store_row(base: u32, n: u32, col: u32, acc: vec4<f32>) {
    let cols = g.fan_in + 1u;
    if (n >= g.fan_out) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let c = col + 16u * j;
        if (c < cols) {
            partials[base + n * cols + c] = acc[j];
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
    let c0 = wid.x * TILE;
    let n0 = wid.y * TILE;
    let s = wid.z;
    let cols = g.fan_in + 1u;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    // Both operands are rows of a sample: 64 neighbouring threads read 64 neighbouring
    // columns of one row (of dz, and of x).
    let lc = t % TILE;
    let lr = t / TILE;
    // Samples of this slice: b = s + S·j for j < ceil((batch − s) / S).
    let steps = (g.batch - s + g.slices - 1u) / g.slices;
    for (var j0 = 0u; j0 < steps; j0 += DEPTH) {
        for (var i = 0u; i < 4u; i++) {
            let r = lr + 4u * i;
            let j = j0 + r;
            let b = s + g.slices * j;
            let inside = j < steps;
            var z = 0.0;
            if (inside && n0 + lc < g.fan_out) {
                z = deltas[g.delta_off + b * g.fan_out + n0 + lc];
            }
            tile_dz[r * TILE + lc] = z;
            let c = c0 + lc;
            var x = 0.0;
            if (inside && c < g.fan_in) {
                x = acts[g.in_off + b * g.fan_in + c];
            } else if (inside && c == g.fan_in) {
                x = 1.0;
            }
            tile_x[r * TILE + lc] = x;
        }
        workgroupBarrier();
        for (var r = 0u; r < DEPTH; r++) {
            let o = r * TILE;
            let z = vec4<f32>(tile_dz[o + ty], tile_dz[o + ty + 16u], tile_dz[o + ty + 32u], tile_dz[o + ty + 48u]);
            let x = vec4<f32>(tile_x[o + tx], tile_x[o + tx + 16u], tile_x[o + tx + 32u], tile_x[o + tx + 48u]);
            // Multiply, then add: acc += dz · x in mlp_backward_params.wgsl's order.
            acc0 = acc0 + z.x * x;
            acc1 = acc1 + z.y * x;
            acc2 = acc2 + z.z * x;
            acc3 = acc3 + z.w * x;
        }
        workgroupBarrier();
    }
    let base = s * g.fan_out * cols;
    let col = c0 + tx;
    store_row(base, n0 + ty, col, acc0);
    store_row(base, n0 + ty + 16u, col, acc1);
    store_row(base, n0 + ty + 32u, col, acc2);
    store_row(base, n0 + ty + 48u, col, acc3);
}
