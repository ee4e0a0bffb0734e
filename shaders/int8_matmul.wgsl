// INT8 matrix multiply with packed 4×8-bit dot products: C = A · B exactly, in 32-bit
// integers. A and B hold symmetric per-tensor quantised values (−127..127); the caller
// multiplies C by scale_a · scale_b to get back to real numbers. Every product of two int8
// values and every partial sum is exact (|C| ≤ 127² · K < 2³¹ for K ≤ 133,000), so the result
// must equal the CPU's integer product bit for bit.
//
// dot4I8Packed(x, y) reads each u32 as four signed 8-bit lanes and returns Σ x_i · y_i: four
// multiply-adds in one built-in (DP4a hardware where the GPU has it). It needs the WGSL language
// feature packed_4x8_integer_dot_product (navigator.gpu.wgslLanguageFeatures).
//
// Same structure as matmul_tiled.wgsl (16×16 tiles in workgroup memory), so the two can be
// timed side by side: each tile step here covers 64 values of K (16 words of 4).
//
// Launch geometry: workgroup_size(16, 16); dispatch (ceil(N / 16), rows / 16, 1) covering the
//   row tiles from dims.row0 (the plan may cut a run into row ranges).
//   local_invocation_id.x -> column inside the tile, .y -> row inside the tile.
// Buffer layout:
//   @binding(0) a: M × KW u32, row-major: word w of row i packs A[i][4w .. 4w+3] (lane 0 in
//                  the low byte; K padded with zeros up to KW · 4)
//   @binding(1) bt: N × KW u32: word w of row j packs B[4w .. 4w+3][j] (B's columns)
//   @binding(2) c: M × N i32, row-major
//   @binding(3) dims: uniform { m, n, kw, row0 } (u32)
requires packed_4x8_integer_dot_product;

struct Dims {
    m: u32,
    n: u32,
    kw: u32,
    row0: u32,
}

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> bt: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@group(0) @binding(3) var<uniform> dims: Dims;

// One padding word per row keeps the column reads of tile_b off a single bank.
var<workgroup> tile_a: array<array<u32, 17>, 16>;
var<workgroup> tile_b: array<array<u32, 17>, 16>;

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let row_base = dims.row0 + wid.y * 16u;
    let col_base = wid.x * 16u;
    let row = row_base + lid.y;
    let col = col_base + lid.x;
    // The B column this invocation loads (rows of bt are B's columns).
    let load_col = col_base + lid.y;
    var acc: i32 = 0;
    let steps = (dims.kw + 15u) / 16u;
    for (var s = 0u; s < steps; s = s + 1u) {
        let w = s * 16u + lid.x;
        var va = 0u;
        if (row < dims.m && w < dims.kw) {
            va = a[row * dims.kw + w];
        }
        var vb = 0u;
        if (load_col < dims.n && w < dims.kw) {
            vb = bt[load_col * dims.kw + w];
        }
        tile_a[lid.y][lid.x] = va;
        tile_b[lid.y][lid.x] = vb;
        workgroupBarrier();
        for (var p = 0u; p < 16u; p = p + 1u) {
            acc = acc + dot4I8Packed(tile_a[lid.y][p], tile_b[lid.x][p]);
        }
        workgroupBarrier();
    }
    if (row < dims.m && col < dims.n) {
        c[row * dims.n + col] = acc;
    }
}
