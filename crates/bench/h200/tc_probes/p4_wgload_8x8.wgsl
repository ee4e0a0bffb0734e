// Tensor Core probe p4_wgload: as p1, but A and B tiles are copied by plain loads into padded workgroup tiles (rows of T+8 halves, as the stage) and cooperatively loaded from there.
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
const S: u32 = T + 8u;
var<workgroup> ta: array<f16, 384>;
var<workgroup> tb: array<f16, 384>;

@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) lid: u32) {
    var acc = Acc();
    for (var kk = 0u; kk < dims.k; kk += T) {
        for (var e = lid; e < T * T; e += 128u) {
            ta[(e / T) * S + e % T] = a[(e / T) * dims.k + kk + e % T];
            tb[(e / T) * S + e % T] = b[(kk + e / T) * dims.n + e % T];
        }
        workgroupBarrier();
        let x = coopLoadT<TileA>(&ta[0], S);
        let y = coopLoadT<TileB>(&tb[0], S);
        acc = coopMultiplyAdd(x, y, acc);
        workgroupBarrier();
    }
    let n = dims.n;
    workgroupBarrier();
    coopStoreT(acc, &c[0], n);
}
