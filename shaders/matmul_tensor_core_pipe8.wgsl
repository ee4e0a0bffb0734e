// Tensor Core matrix multiply with eight warps and the next K block prefetched into
// registers: the two candidates matmul_tensor_core_8warp.wgsl (256 invocations on the stage's
// 128×128 block, each warp a 2×4 grid of T×T tiles) and matmul_tensor_core_prefetch.wgsl
// (each invocation loads block k0 + BK into registers before block k0's multiplies and
// stores it to shared memory after the second barrier) in one kernel. Not a ladder stage: a
// candidate the benchmark measures beside the stage (`bench matmul --kernels`); read the
// stage's header (matmul_tensor_core.wgsl) for the subgroup passes and alignment rules.
//
// Why: the two attack different idle times (too few warps to cover a barrier; global loads
// not started until the previous block is consumed), and eight warps leave each invocation
// only 4 + 4 vec4<f16> of prefetch registers and 8 accumulators, so the pipelining costs no
// occupancy here.
//
// Warp tile w (of 8) covers rows 2T·(w / 2)…, columns 4T·(w % 2)… of the block; with S
// subgroups, ceil(8 / S) passes give subgroup s the warp tile (s + p·S) mod 8. BK = 2T.
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

// Vec4s of A (and of B) each invocation copies per BK step.
const LOADS: u32 = BM * BK / (4u * THREADS);

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
    // The registers the next block travels in.
    var ra: array<vec4<f16>, LOADS>;
    var rb: array<vec4<f16>, LOADS>;

    for (var p = 0u; p < passes; p++) {
        let warp = (sg + p * sg_count) % WARP_TILES;
        let wr = (warp / 2u) * 2u * T;
        let wc = (warp % 2u) * 4u * T;

        var c00 = Acc(); var c01 = Acc(); var c02 = Acc(); var c03 = Acc();
        var c10 = Acc(); var c11 = Acc(); var c12 = Acc(); var c13 = Acc();

        // The first block: storage -> registers -> shared.
        for (var i = 0u; i < LOADS; i++) {
            let v = lid + i * THREADS;
            ra[i] = a[(row0 + v / (BK / 4u)) * k4 + v % (BK / 4u)];
            rb[i] = b[(v / (BN / 4u)) * n4 + col0 / 4u + v % (BN / 4u)];
        }
        for (var i = 0u; i < LOADS; i++) {
            let v = lid + i * THREADS;
            let sa = (v / (BK / 4u)) * AS + (v % (BK / 4u)) * 4u;
            tile_a[sa] = ra[i].x;
            tile_a[sa + 1u] = ra[i].y;
            tile_a[sa + 2u] = ra[i].z;
            tile_a[sa + 3u] = ra[i].w;
            let sb = (v / (BN / 4u)) * BS + (v % (BN / 4u)) * 4u;
            tile_b[sb] = rb[i].x;
            tile_b[sb + 1u] = rb[i].y;
            tile_b[sb + 2u] = rb[i].z;
            tile_b[sb + 3u] = rb[i].w;
        }
        workgroupBarrier();

        for (var k0 = 0u; k0 < dims.k; k0 += BK) {
            let more = k0 + BK < dims.k;
            // Prefetch the next block while this one is multiplied.
            if more {
                let k1 = k0 + BK;
                for (var i = 0u; i < LOADS; i++) {
                    let v = lid + i * THREADS;
                    ra[i] = a[(row0 + v / (BK / 4u)) * k4 + k1 / 4u + v % (BK / 4u)];
                    rb[i] = b[(k1 + v / (BN / 4u)) * n4 + col0 / 4u + v % (BN / 4u)];
                }
            }
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
            // Every warp is done reading this block before it is overwritten.
            workgroupBarrier();
            if more {
                for (var i = 0u; i < LOADS; i++) {
                    let v = lid + i * THREADS;
                    let sa = (v / (BK / 4u)) * AS + (v % (BK / 4u)) * 4u;
                    tile_a[sa] = ra[i].x;
                    tile_a[sa + 1u] = ra[i].y;
                    tile_a[sa + 2u] = ra[i].z;
                    tile_a[sa + 3u] = ra[i].w;
                    let sb = (v / (BN / 4u)) * BS + (v % (BN / 4u)) * 4u;
                    tile_b[sb] = rb[i].x;
                    tile_b[sb + 1u] = rb[i].y;
                    tile_b[sb + 2u] = rb[i].z;
                    tile_b[sb + 3u] = rb[i].w;
                }
            }
            // The next block is whole in shared memory before anyone reads it.
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
