// CNN max-pool backward: the ReLU region's delta is zero except at each window's
// winner, which gets the pool output's delta. The CPU twin (`cnn::net`) zeroes the region and
// then scatters to the argmax; here each ReLU element looks up its own window instead and
// writes either that delta or zero. Windows do not overlap and a winner lies in its own
// window, so every element gets the same value as the twin's, with no second pass and no
// race; elements of an unpooled odd last row or column get zero.
//
// Launch: workgroup_size(64); one invocation per element of the block's ReLU region, in its
//   NCHW order i = ((n·C + c)·CS + y)·CS + x; workgroups (ceil(g / r), r = ceil(g / 65535), 1)
//   for g = ceil(count / 64); i = x + y·row.
// Buffers: 0 = argmax (read, u32: argmax_off + pool index → index in the ReLU region),
//          1 = deltas (read_write: reads pool_off, writes relu_off),
//          2 = uniform Block (16 words; count = B·C_out·CS·CS).

@group(0) @binding(0) var<storage, read> argmax: array<u32>;
@group(0) @binding(1) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    let cs = u.conv_side;
    let ps = u.pool_side;
    let x = i % cs;
    let y = (i / cs) % cs;
    let nc = i / (cs * cs);
    var d = 0.0;
    let px = x / 2u;
    let py = y / 2u;
    if (px < ps && py < ps) {
        let e = (nc * ps + py) * ps + px;
        if (argmax[u.argmax_off + e] == i) {
            d = deltas[u.pool_off + e];
        }
    }
    deltas[u.relu_off + i] = d;
}
