// Tensor Core matrix multiply without shared memory: the Tensor Core stage
// (matmul_tensor_core.wgsl) with every cooperative load straight from the storage buffers, as
// the first plain probe of the matrix units through Dawn did. Not a ladder stage: a control for
// the benchmark, so one run separates what the matrix units give from what staging through
// shared memory costs (or saves: each 64×64 warp tile reads its own A rows and B columns via L1/L2).
//
// Scheme: as the stage (T = 16, or 8 in the catalogue's `@8x8x8` copy of this file): each
// workgroup computes an 8T×8T block of C, each of four warps a 4×4 grid of T×T tiles kept in
// sixteen accumulators over the whole K loop; per T of K a warp loads 4 tiles of A and 4 of
// B with coopLoadT from storage and multiplies them. No barrier inside the K loop; the pass
// count (ceil(4 / subgroups)) is still read through workgroupUniformLoad, and the one
// barrier before the stores is there because naga 30 writes a coopStoreT's pointer only from
// values computed by an earlier statement.
// Needs `shader-f16`, `subgroups` and wgpu's experimental cooperative matrices (16×16×16 f16 ->
// f32 tiles offered by the adapter).
// Launch geometry: workgroup_size(128); dispatch (ceil(N / 8T), ceil(M / 8T), 1).
// Buffer layout (Mp, Np: M, N rounded up to 128; Kp: K rounded up to 32; padding is zeros):
//   @binding(0) a: Mp×Kp f16, read-only storage
//   @binding(1) b: Kp×Np f16, read-only storage
//   @binding(2) c: Mp×Np f32, read-write storage (padding dropped on readback)
//   @binding(3) dims: uniform { mp, np, kp, _pad } (u32): the PADDED sizes

enable f16;
enable wgpu_cooperative_matrix;

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

// The tile's side; the coop_mat types below name it too.
const T: u32 = 16u;
const BM: u32 = 8u * T;
const BN: u32 = 8u * T;
const WARP_TILES: u32 = 4u;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> subgroups_here: u32;

alias TileA = coop_mat16x16<f16, A>;
alias TileB = coop_mat16x16<f16, B>;
alias Acc = coop_mat16x16<f32, C>;

@compute @workgroup_size(128)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) sg_count: u32,
) {
    let kk_len = dims.k;
    let n = dims.n;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    if lid == 0u {
        subgroups_here = sg_count;
    }
    let passes = (WARP_TILES + workgroupUniformLoad(&subgroups_here) - 1u)
        / workgroupUniformLoad(&subgroups_here);

    for (var p = 0u; p < passes; p++) {
        let warp = (sg + p * sg_count) % WARP_TILES;
        let wr = (warp / 2u) * 4u * T;
        let wc = (warp % 2u) * 4u * T;

        var c00 = Acc(); var c01 = Acc(); var c02 = Acc(); var c03 = Acc();
        var c10 = Acc(); var c11 = Acc(); var c12 = Acc(); var c13 = Acc();
        var c20 = Acc(); var c21 = Acc(); var c22 = Acc(); var c23 = Acc();
        var c30 = Acc(); var c31 = Acc(); var c32 = Acc(); var c33 = Acc();

        let ar = row0 + wr;
        let bc = col0 + wc;
        for (var kk = 0u; kk < kk_len; kk += T) {
            let a0 = coopLoadT<TileA>(&a[(ar + 0u * T) * kk_len + kk], kk_len);
            let a1 = coopLoadT<TileA>(&a[(ar + 1u * T) * kk_len + kk], kk_len);
            let a2 = coopLoadT<TileA>(&a[(ar + 2u * T) * kk_len + kk], kk_len);
            let a3 = coopLoadT<TileA>(&a[(ar + 3u * T) * kk_len + kk], kk_len);
            let b0 = coopLoadT<TileB>(&b[kk * n + bc + 0u * T], n);
            let b1 = coopLoadT<TileB>(&b[kk * n + bc + 1u * T], n);
            let b2 = coopLoadT<TileB>(&b[kk * n + bc + 2u * T], n);
            let b3 = coopLoadT<TileB>(&b[kk * n + bc + 3u * T], n);
            c00 = coopMultiplyAdd(a0, b0, c00);
            c01 = coopMultiplyAdd(a0, b1, c01);
            c02 = coopMultiplyAdd(a0, b2, c02);
            c03 = coopMultiplyAdd(a0, b3, c03);
            c10 = coopMultiplyAdd(a1, b0, c10);
            c11 = coopMultiplyAdd(a1, b1, c11);
            c12 = coopMultiplyAdd(a1, b2, c12);
            c13 = coopMultiplyAdd(a1, b3, c13);
            c20 = coopMultiplyAdd(a2, b0, c20);
            c21 = coopMultiplyAdd(a2, b1, c21);
            c22 = coopMultiplyAdd(a2, b2, c22);
            c23 = coopMultiplyAdd(a2, b3, c23);
            c30 = coopMultiplyAdd(a3, b0, c30);
            c31 = coopMultiplyAdd(a3, b1, c31);
            c32 = coopMultiplyAdd(a3, b2, c32);
            c33 = coopMultiplyAdd(a3, b3, c33);
        }

        // The 16 tiles' first elements in C. naga 30 writes a coopStoreT's pointer from
        // values computed by earlier statements only, so they are all computed, and a
        // statement (the barrier, in uniform control flow) comes, before the first store.
        let r0 = (row0 + wr) * n + col0 + wc;
        let r1 = r0 + T * n;
        let r2 = r0 + 2u * T * n;
        let r3 = r0 + 3u * T * n;
        let s01 = r0 + T; let s02 = r0 + 2u * T; let s03 = r0 + 3u * T;
        let s11 = r1 + T; let s12 = r1 + 2u * T; let s13 = r1 + 3u * T;
        let s21 = r2 + T; let s22 = r2 + 2u * T; let s23 = r2 + 3u * T;
        let s31 = r3 + T; let s32 = r3 + 2u * T; let s33 = r3 + 3u * T;
        workgroupBarrier();
        coopStoreT(c00, &c[r0], n);
        coopStoreT(c01, &c[s01], n);
        coopStoreT(c02, &c[s02], n);
        coopStoreT(c03, &c[s03], n);
        coopStoreT(c10, &c[r1], n);
        coopStoreT(c11, &c[s11], n);
        coopStoreT(c12, &c[s12], n);
        coopStoreT(c13, &c[s13], n);
        coopStoreT(c20, &c[r2], n);
        coopStoreT(c21, &c[s21], n);
        coopStoreT(c22, &c[s22], n);
        coopStoreT(c23, &c[s23], n);
        coopStoreT(c30, &c[r3], n);
        coopStoreT(c31, &c[s31], n);
        coopStoreT(c32, &c[s32], n);
        coopStoreT(c33, &c[s33], n);
    }
}
