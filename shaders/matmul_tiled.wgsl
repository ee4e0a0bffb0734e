// Shared-memory tiled matrix multiply: C = A · B. Each workgroup computes one TILE×TILE block
// of C; it walks along K one tile at a time, first copying a TILE×TILE block of A and of B
// into workgroup (shared) memory together, then letting every invocation read them TILE
// times. Each global value is loaded once per workgroup instead of once per invocation.
//
// Parameters (override constants, set by the kernel catalogue): TILE (default 16).
// Launch geometry: workgroup_size(TILE, TILE); dispatch (ceil(N / TILE), ceil(M / TILE), 1).
//   local_invocation_id.x -> column inside the tile, .y -> row inside the tile.
// Buffer layout (all f32, row-major, tightly packed):
//   @binding(0) a: M×K, read-only storage
//   @binding(1) b: K×N, read-only storage
//   @binding(2) c: M×N, read-write storage
//   @binding(3) dims: uniform { m, n, k, _pad } (u32)
// Edges: loads outside A or B put 0 in the tile (adds nothing); only in-range C is written.
// Every invocation reaches every barrier, even those outside C.

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

override TILE: u32 = 16u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> tile_a: array<f32, TILE * TILE>;
var<workgroup> tile_b: array<f32, TILE * TILE>;

@compute @workgroup_size(TILE, TILE, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let row = wg.y * TILE + lid.y;
    let col = wg.x * TILE + lid.x;
    let tiles = (dims.k + TILE - 1u) / TILE;
    var acc = 0.0;
    for (var t = 0u; t < tiles; t = t + 1u) {
        // Invocation (x, y) copies A[row][t·TILE + x] and B[t·TILE + y][col].
        let ka = t * TILE + lid.x;
        var va = 0.0;
        if (row < dims.m && ka < dims.k) {
            va = a[row * dims.k + ka];
        }
        tile_a[lid.y * TILE + lid.x] = va;
        let kb = t * TILE + lid.y;
        var vb = 0.0;
        if (kb < dims.k && col < dims.n) {
            vb = b[kb * dims.n + col];
        }
        tile_b[lid.y * TILE + lid.x] = vb;
        workgroupBarrier();
        for (var p = 0u; p < TILE; p = p + 1u) {
            acc = acc + tile_a[lid.y * TILE + p] * tile_b[p * TILE + lid.x];
        }
        // Nobody may overwrite the tiles while others still read them.
        workgroupBarrier();
    }
    if (row < dims.m && col < dims.n) {
        c[row * dims.n + col] = acc;
    }
}
