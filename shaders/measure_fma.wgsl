// Compute probe: long chains of fused multiply-adds with almost no memory traffic, so the
// time is set by the arithmetic units (lessons 5 and 8).
//
// Logical thread t starts four independent vec4 chains from src[t] and runs `iters`
// iterations of x = fma(x, one, c) on each (16 FMAs = 32 FLOPs per iteration). Independent
// chains let the hardware overlap their latencies. `one` is 1.0 read from the uniform (the
// compiler cannot fold it away, so every step stays a real multiply-add), and c are small
// whole numbers: each step adds c exactly, so the result never settles, depends on every
// iteration, and is checked bit for bit — a kernel that skipped one iteration of one chain
// fails verification.
//
// Launch geometry: workgroup_size(64); dispatch (g, 1, 1) with any g ≥ 1 (grid-stride loop
//   over the logical threads).
// Buffer layout:
//   @binding(0) src: `threads` f32 (read): starting values
//   @binding(1) out: `threads` f32 (written): sum of the 16 chain values after `iters` steps
//   @binding(2) dims: uniform { n, threads, iters, one_bits } (one_bits: 1.0's bit pattern)
// FLOPs per run: 32 · threads · iters.

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
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let launched = groups.x * 64u;
    let one = vec4<f32>(bitcast<f32>(dims.one_bits));
    let c0 = vec4<f32>(1.0, 2.0, 3.0, 4.0);
    let c1 = vec4<f32>(5.0, 6.0, 7.0, 8.0);
    let c2 = vec4<f32>(-1.0, -2.0, -3.0, -5.0);
    let c3 = vec4<f32>(1.0, 3.0, 5.0, 7.0);
    for (var t = gid.x; t < dims.threads; t += launched) {
        let s = src[t];
        var x0 = vec4<f32>(s);
        var x1 = vec4<f32>(s + 1.0);
        var x2 = vec4<f32>(s - 1.0);
        var x3 = vec4<f32>(-s);
        for (var i = 0u; i < dims.iters; i++) {
            x0 = fma(x0, one, c0);
            x1 = fma(x1, one, c1);
            x2 = fma(x2, one, c2);
            x3 = fma(x3, one, c3);
        }
        let v = x0 + x1 + x2 + x3;
        out[t] = v.x + v.y + v.z + v.w;
    }
}
