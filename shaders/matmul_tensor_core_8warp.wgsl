// Tensor Core matrix multiply with eight warps: the Tensor Core stage
// (matmul_tensor_core.wgsl; read its header for the subgroup passes and the alignment rules,
// all kept here) with 256 invocations on the same 128×128 block, each warp a 2×4 grid of
// T×T tiles (2T rows × 4T columns) instead of 4×4. Not a ladder stage: a candidate the
// benchmark measures beside the stage (`bench matmul --kernels`).
//
// Why: with four warps per workgroup and a barrier twice per BK step, a warp waiting on its
// copy or at a barrier leaves few others to issue to the matrix units. Eight warps give the
// scheduler twice as many, halve each invocation's share of the copy (4 vec4s of A and 4 of B
// per step for T = 16) and halve the accumulators (8 per warp, so fewer registers), at the
// price of less reuse per warp (2 tiles of A and 4 of B per 8 products instead of 4 and 4
// per 16). Blocks, padding and shared memory are the stage's, so the runtime is unchanged.
//
// Warp tile w (of 8) covers rows 2T·(w / 2)…, columns 4T·(w % 2)… of the block; with S
// subgroups, ceil(8 / S) passes give subgroup s the warp tile (s + p·S) mod 8.
// Needs `shader-f16`, `subgroups` and wgpu's experimental cooperative matrices (16×16×16 f16
// -> f32 tiles offered by the adapter; the catalogue's `@8x8x8` copy uses 8×8×8).
// Launch geometry: workgroup_size(256); dispatch (ceil(N / 8T), ceil(M / 8T), 1).
// Buffer layout (Mp, Np: M, N rounded up to 128; Kp: K rounded up to 32; padding is zeros):
//   @binding(0) a: Mp×Kp f16, read-only storage, as vec4<f16>
//   @binding(1) b: Kp×Np f16, read-only storage, as vec4<f16>
//   @binding(2) c: Mp×Np f32, read-write storage (padding dropped on readback)
//   @binding(3) dims: uniform { mp, np, kp, _pad } (u32): the PADDED sizes
// Shared memory: A block 8T×(BK+8) and B block BK×(8T+8) halves, row-major (18.5 KiB for
//   T = 16), the only workgroup variables (see the stage's header for why).

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
const BK: u32 = 2u * T;
const THREADS: u32 = 256u;
// Row lengths of the shared blocks, in halves: 8 halves (16 bytes) of padding per row.
const AS: u32 = BK + 8u;
const BS: u32 = BN + 8u;
const WARP_TILES: u32 = 8u;

@group(0) @binding(0) var<storage, read> a: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> tile_a: array<f16, BM * AS>;
var<workgroup> tile_b: array<f16, BK * BS>;

alias TileA = coop_mat16x16<f16, A>;
alias TileB = coop_mat16x16<f16, B>;
alias Acc = coop_mat16x16<f32, C>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) sg_count: u32,
) {
    let k4 = dims.k / 4u;
    let n4 = dims.n / 4u;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    let passes = (WARP_TILES + sg_count - 1u) / sg_count;

    for (var p = 0u; p < passes; p++) {
        let warp = (sg + p * sg_count) % WARP_TILES;
        let wr = (warp / 2u) * 2u * T;
        let wc = (warp % 2u) * 4u * T;

        var c00 = Acc(); var c01 = Acc(); var c02 = Acc(); var c03 = Acc();
        var c10 = Acc(); var c11 = Acc(); var c12 = Acc(); var c13 = Acc();

        for (var k0 = 0u; k0 < dims.k; k0 += BK) {
            // Copy the A block (BM rows × BK) and the B block (BK rows × BN): BM·BK / 512
            // vec4s of each per invocation (4 for T = 16, 1 for T = 8).
            for (var i = 0u; i < BM * BK / (4u * THREADS); i++) {
                let va = lid + i * THREADS;
                let ar = va / (BK / 4u);
                let ac = (va % (BK / 4u)) * 4u;
                let x = a[(row0 + ar) * k4 + k0 / 4u + ac / 4u];
                let sa = ar * AS + ac;
                tile_a[sa] = x.x;
                tile_a[sa + 1u] = x.y;
                tile_a[sa + 2u] = x.z;
                tile_a[sa + 3u] = x.w;
                let br = va / (BN / 4u);
                let bc = (va % (BN / 4u)) * 4u;
                let y = b[(k0 + br) * n4 + col0 / 4u + bc / 4u];
                let sb = br * BS + bc;
                tile_b[sb] = y.x;
                tile_b[sb + 1u] = y.y;
                tile_b[sb + 2u] = y.z;
                tile_b[sb + 3u] = y.w;
            }
            workgroupBarrier();
            {
                for (var kk = 0u; kk < BK; kk += T) {
                    let a0 = coopLoadT<TileA>(&tile_a[(wr + 0u * T) * AS + kk], AS);
                    let a1 = coopLoadT<TileA>(&tile_a[(wr + 1u * T) * AS + kk], AS);
                    let b0 = coopLoadT<TileB>(&tile_b[kk * BS + wc + 0u * T], BS);
                    let b1 = coopLoadT<TileB>(&tile_b[kk * BS + wc + 1u * T], BS);
                    let b2 = coopLoadT<TileB>(&tile_b[kk * BS + wc + 2u * T], BS);
                    let b3 = coopLoadT<TileB>(&tile_b[kk * BS + wc + 3u * T], BS);
                    c00 = coopMultiplyAdd(a0, b0, c00);
                    c01 = coopMultiplyAdd(a0, b1, c01);
                    c02 = coopMultiplyAdd(a0, b2, c02);
                    c03 = coopMultiplyAdd(a0, b3, c03);
                    c10 = coopMultiplyAdd(a1, b0, c10);
                    c11 = coopMultiplyAdd(a1, b1, c11);
                    c12 = coopMultiplyAdd(a1, b2, c12);
                    c13 = coopMultiplyAdd(a1, b3, c13);
                }
            }
            workgroupBarrier();
        }

        // The 8 tiles' first elements in C. naga 30 writes a coopStoreT's pointer from
        // values computed by earlier statements only, so they are all computed, and a
        // statement (the barrier, in uniform control flow) comes, before the first store.
        let n = dims.n;
        let r0 = (row0 + wr) * n + col0 + wc;
        let r1 = r0 + T * n;
        let s01 = r0 + T; let s02 = r0 + 2u * T; let s03 = r0 + 3u * T;
        let s11 = r1 + T; let s12 = r1 + 2u * T; let s13 = r1 + 3u * T;
        workgroupBarrier();
        coopStoreT(c00, &c[r0], n);
        coopStoreT(c01, &c[s01], n);
        coopStoreT(c02, &c[s02], n);
        coopStoreT(c03, &c[s03], n);
        coopStoreT(c10, &c[r1], n);
        coopStoreT(c11, &c[s11], n);
        coopStoreT(c12, &c[s12], n);
        coopStoreT(c13, &c[s13], n);
    }
}
