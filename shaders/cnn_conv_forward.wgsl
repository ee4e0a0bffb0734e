// CNN conv forward with bias and ReLU: an implicit GEMM over the CNN's NCHW/OIHW
// layout (`cnn::net`). Row m of the GEMM is an output pixel (n, y, x), M = B·OH·OW; column
// o is an output channel, N = C_out; the reduction index is k = (c·K + r)·K + s, K_red =
// C_in·K·K, so A[m, k] = in[n, c, y + r, x + s] (im2col, never built) and B[k, o] =
// W[o, c, r, s], which in OIHW is the filter's own flat index k. One invocation owns one
// (m, o) element and adds its K_red terms with k ascending (c outermost, s innermost), the
// CPU twin's order; the bias is added once, after the sum. The epilogue also writes the ReLU:
// the pre-ReLU z stays in its own region (ReLU backward and the page read it).
//
// Why not conv_implicit_gemm.wgsl: it reads NHWC activations and R×S×C×K filters as vec4
// along the channels and reduces in (r, s, c) order in four lanes; this layout is NCHW/OIHW
// and the twin reduces in (c, r, s) order with one accumulator, so its sums would differ.
//
// Launch: workgroup_size(64); one invocation per element of the conv output, in its NCHW
//   order i = ((n·C_out + o)·OH + y)·OW + x (neighbours write neighbours); workgroups
//   (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = params (read: the parameter layout, filters at w_off, biases at b_off),
//          1 = acts (read_write: the batch's activations; reads in_off, writes conv_off and
//              relu_off),
//          2 = uniform Block (16 words, see cnn_common.wgsl; count = B·C_out·OH·OW).

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> acts: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let cs = u.conv_side;
    let ins = u.in_side;
    let x = i % cs;
    let y = (i / cs) % cs;
    let o = (i / (cs * cs)) % u.c_out;
    let n = i / (cs * cs * u.c_out);
    var acc = 0.0;
    for (var c = 0u; c < u.c_in; c++) {
        let plane = u.in_off + (n * u.c_in + c) * ins * ins;
        let w = u.w_off + (o * u.c_in + c) * u.k * u.k;
        for (var r = 0u; r < u.k; r++) {
            for (var s = 0u; s < u.k; s++) {
                acc += acts[plane + (y + r) * ins + x + s] * params[w + r * u.k + s];
            }
        }
    }
    let z = acc + params[u.b_off + o];
    acts[u.conv_off + i] = z;
    acts[u.relu_off + i] = max(z, 0.0);
}
