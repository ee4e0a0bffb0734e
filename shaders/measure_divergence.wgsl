// Divergence probe (the `simt` lesson): half of the threads run path A (a chain of multiply-adds), the
// other half path B (a chain of square roots), `iters` steps each. Which half is set by the
// override DIVERGENT:
//   DIVERGENT = true:  even and odd LANES differ, so every subgroup (warp) holds threads of
//                      both paths and, in SIMT, runs A and B one after the other;
//   DIVERGENT = false: even and odd WORKGROUPS differ, so all threads of a subgroup agree
//                      and each subgroup runs only one path.
// Both variants do exactly the same arithmetic in total; only its grouping differs.
// Both paths count up by one per step on whole numbers, so the result never settles and
// depends on every iteration (a skipped step fails the exact check):
//   path A: x = fma(x, one, 1), with `one` = 1.0 from the uniform (not foldable);
//   path B: x = round(sqrt(x·(x + 2) + 1)) mod 2048 — the square root of (x + 1)², exact for
//           x < 2048 once rounded (WGSL's sqrt may be a few ulps off), wrapping at 2048.
//
// Launch geometry: workgroup_size(64); dispatch (g, 1, 1) with g = threads / 64 (threads a
//   multiple of 64; the catalogue's grid computes this).
// Buffer layout:
//   @binding(0) src: `threads` f32 (read): starting values (whole numbers 0 … 2047)
//   @binding(1) out: `threads` f32 (written): each thread's value after its path
//   @binding(2) dims: uniform { n, threads, iters, one_bits } (one_bits: 1.0's bit pattern)

override DIVERGENT: bool = true;

struct Dims {
    n: u32,
    threads: u32,
    iters: u32,
    one_bits: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let t = gid.x;
    if (t >= dims.threads) {
        return;
    }
    var path_a: bool;
    if (DIVERGENT) {
        path_a = (lane & 1u) == 0u;
    } else {
        path_a = (wid.x & 1u) == 0u;
    }
    let one = bitcast<f32>(dims.one_bits);
    var x = src[t];
    if (path_a) {
        for (var i = 0u; i < dims.iters; i++) {
            x = fma(x, one, 1.0);
        }
    } else {
        for (var i = 0u; i < dims.iters; i++) {
            x = round(sqrt(fma(x, x + 2.0, 1.0))) % 2048.0;
        }
    }
    out[t] = x;
}
