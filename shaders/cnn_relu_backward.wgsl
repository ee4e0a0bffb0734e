// CNN ReLU backward: the conv output's delta is the ReLU output's where the
// pre-ReLU value z is positive, else 0 (z = 0 passes nothing, as in the CPU twin,
// `cnn::net`). z is read from the conv region, which the forward pass keeps.
//
// Launch: workgroup_size(64); one invocation per element of the block's conv region, in its
//   NCHW order; workgroups (ceil(g / r), r = ceil(g / 65535), 1) for g = ceil(count / 64);
//   i = x + y·row.
// Buffers: 0 = acts (read: conv_off), 1 = deltas (read_write: reads relu_off, writes
//          conv_off), 2 = uniform Block (16 words; count = B·C_out·CS·CS).

@group(0) @binding(0) var<storage, read> acts: array<f32>;
@group(0) @binding(1) var<storage, read_write> deltas: array<f32>;
@group(0) @binding(2) var<uniform> u: Block;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * u.row;
    if (i >= u.count) {
        return;
    }
    deltas[u.conv_off + i] = select(0.0, deltas[u.relu_off + i], acts[u.conv_off + i] > 0.0);
}
