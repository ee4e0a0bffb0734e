// Double-float ("df64") matrix multiply: C = A · B where every value is an unevaluated sum
// hi + lo of two f32 (|lo| ≤ half an ulp of hi), which carries about 48 significant bits
// against f32's 24. WGSL has no f64; this is how double precision is emulated on GPUs without
// it. Products use Dekker's exact splitting (no fma needed: WGSL does not promise that fma is
// fused), sums Knuth's two-sum; both are exact in IEEE f32 arithmetic without reassociation.
// About 30 f32 operations per multiply-add instead of one.
//
// WGSL cannot mark arithmetic as exact, and shader compilers may simplify floating-point
// expressions algebraically (Mesa's NIR turns (a + b) - a into b unless told otherwise), which
// deletes exactly the rounding errors these algorithms compute. So every intermediate whose
// identity would allow such a rewrite is multiplied by `one[0]` (`opaque`), 1.0 read from a
// storage buffer: a value no compiler can know. (A uniform is not enough: lavapipe may inline
// uniform values into the shader and then fold the multiplication away.) Without it lavapipe
// returns f32 accuracy.
//
// Same structure as matmul_tiled.wgsl (16×16 tiles in workgroup memory), so the two can be
// timed side by side.
//
// Launch geometry: workgroup_size(16, 16); dispatch (ceil(N / 16), rows / 16, 1) covering the
//   row tiles from dims.row0 (the plan may cut a run into row ranges).
// Buffer layout (row-major, each element a vec2<f32> = (hi, lo)):
//   @binding(0) a: M × K
//   @binding(1) b: K × N
//   @binding(2) c: M × N
//   @binding(3) one: array<f32> holding [1.0]
//   @binding(4) dims: uniform { m, n, k, row0 } (u32)

struct Dims {
    m: u32,
    n: u32,
    k: u32,
    row0: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> one: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

var<workgroup> tile_a: array<array<vec2<f32>, 16>, 16>;
var<workgroup> tile_b: array<array<vec2<f32>, 16>, 16>;

// x, unchanged, in a form the compiler cannot simplify against its operands.
fn opaque(x: f32) -> f32 {
    return x * one[0];
}

// s + e = x + y exactly (Knuth).
fn two_sum(x: f32, y: f32) -> vec2<f32> {
    let s = opaque(x + y);
    let v = opaque(s - x);
    let e = (x - opaque(s - v)) + (y - v);
    return vec2<f32>(s, e);
}

// s + e = x + y exactly, when |x| ≥ |y|.
fn quick_two_sum(x: f32, y: f32) -> vec2<f32> {
    let s = opaque(x + y);
    return vec2<f32>(s, y - opaque(s - x));
}

// x = hi + lo with 12 significant bits each (Veltkamp; 4097 = 2^12 + 1).
fn split(x: f32) -> vec2<f32> {
    let t = opaque(4097.0 * x);
    let hi = t - opaque(t - x);
    return vec2<f32>(hi, x - hi);
}

// p + e = x · y exactly (Dekker): the halves' products are exact in f32.
fn two_prod(x: f32, y: f32) -> vec2<f32> {
    let p = opaque(x * y);
    let xs = split(x);
    let ys = split(y);
    let e = ((xs.x * ys.x - p) + xs.x * ys.y + xs.y * ys.x) + xs.y * ys.y;
    return vec2<f32>(p, e);
}

fn df_mul(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
    var p = two_prod(x.x, y.x);
    p.y = p.y + (x.x * y.y + x.y * y.x);
    return quick_two_sum(p.x, p.y);
}

fn df_add(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
    let s = two_sum(x.x, y.x);
    let t = two_sum(x.y, y.y);
    var r = quick_two_sum(s.x, s.y + t.x);
    return quick_two_sum(r.x, r.y + t.y);
}

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let row = dims.row0 + wid.y * 16u + lid.y;
    let col = wid.x * 16u + lid.x;
    var acc = vec2<f32>(0.0, 0.0);
    let steps = (dims.k + 15u) / 16u;
    for (var s = 0u; s < steps; s = s + 1u) {
        let ka = s * 16u + lid.x;
        let kb = s * 16u + lid.y;
        var va = vec2<f32>(0.0, 0.0);
        if (row < dims.m && ka < dims.k) {
            va = a[row * dims.k + ka];
        }
        var vb = vec2<f32>(0.0, 0.0);
        if (kb < dims.k && col < dims.n) {
            vb = b[kb * dims.n + col];
        }
        tile_a[lid.y][lid.x] = va;
        tile_b[lid.y][lid.x] = vb;
        workgroupBarrier();
        // Only the tile's real columns of K: adding zero products is exact but wasted.
        let count = min(16u, dims.k - s * 16u);
        for (var p = 0u; p < count; p = p + 1u) {
            acc = df_add(acc, df_mul(tile_a[lid.y][p], tile_b[p][lid.x]));
        }
        workgroupBarrier();
    }
    if (row < dims.m && col < dims.n) {
        c[row * dims.n + col] = acc;
    }
}
