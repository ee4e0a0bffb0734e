// CNN 2×2 max-pool forward with stride 2, keeping the winner. Each window is read
// (0,0), (0,1), (1,0), (1,1) and a later value wins only if strictly greater, so ties keep the
// first, as the CPU twin (`cnn::net`) does; an odd last row and column of the map are not
// pooled. The winner's index within the block's ReLU region (batch included) goes to the
// argmax buffer, so pool backward is a plain lookup.
//
// Launch: workgroup_size(64); one invocation per pool output, in its NCHW order
//   i = ((n·C + c)·PS + py)·PS + px; workgroups (ceil(g / r), r = ceil(g / 65535), 1) for
//   g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = acts (read_write: reads relu_off, writes pool_off),
//          1 = argmax (read_write, u32: writes argmax_off + i),
//          2 = uniform Block (16 words; count = B·C_out·PS·PS).

@group(0) @binding(0) var<storage, read_write> acts: array<f32>;
@group(0) @binding(1) var<storage, read_write> argmax: array<u32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let cs = u.conv_side;
    let ps = u.pool_side;
    let px = i % ps;
    let py = (i / ps) % ps;
    let nc = i / (ps * ps);
    let first = (nc * cs + 2u * py) * cs + 2u * px;
    var best = first;
    var best_v = acts[u.relu_off + first];
    // (0, 1), (1, 0), (1, 1): offsets 1, cs and cs + 1 from the window's first element,
    // unrolled (a loop over a private array of offsets would index it dynamically).
    let right = acts[u.relu_off + first + 1u];
    if (right > best_v) {
        best = first + 1u;
        best_v = right;
    }
    let below = acts[u.relu_off + first + cs];
    if (below > best_v) {
        best = first + cs;
        best_v = below;
    }
    let diagonal = acts[u.relu_off + first + cs + 1u];
    if (diagonal > best_v) {
        best = first + cs + 1u;
        best_v = diagonal;
    }
    acts[u.pool_off + i] = best_v;
    argmax[u.argmax_off + i] = best;
}
