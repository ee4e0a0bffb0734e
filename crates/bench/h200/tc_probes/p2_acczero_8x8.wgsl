// Tensor Core probe p2_acczero: as p1, but the accumulator starts from a cooperative load of a zeroed workgroup tile, not Acc().
// A diagnostic, not a ladder stage: it replaces `matmul-tensor-core-direct` through
// `bench matmul --wgsl matmul-tensor-core-direct=THIS --keep-going` (same bindings and grid) and
// writes only C's first 8x8 tile, so a correct probe fails verification first at element 8
// (row 0, column 8) with {wrong} = N*N - 64; a broken one fails at element 0.
// Every invocation of every workgroup computes the same tile (matrix operations need uniform
// control flow) and stores the same bits.
// Launch geometry: workgroup_size(128), grid (ceil(N/128), ceil(M/128), 1), as the direct kernel.
// Buffer layout: a Mp x Kp f16, b Kp x Np f16, c Mp x Np f32, dims {mp, np, kp, _} (padded sizes).
enable f16;
enable wgpu_cooperative_matrix;

struct Dims { m: u32, n: u32, k: u32, _pad: u32, }
const T: u32 = 8u;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
alias TileA = coop_mat8x8<f16, A>;
alias TileB = coop_mat8x8<f16, B>;
alias Acc = coop_mat8x8<f32, C>;
var<workgroup> zero_tile: array<f32, 256>;

@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) lid: u32) {
    zero_tile[lid] = 0.0;
    zero_tile[lid + 128u] = 0.0;
    workgroupBarrier();
    var acc = coopLoadT<Acc>(&zero_tile[0], T);
    for (var kk = 0u; kk < dims.k; kk += T) {
        let x = coopLoadT<TileA>(&a[kk], dims.k);
        let y = coopLoadT<TileB>(&b[kk * dims.n], dims.n);
        acc = coopMultiplyAdd(x, y, acc);
    }
    let n = dims.n;
    workgroupBarrier();
    coopStoreT(acc, &c[0], n);
}
