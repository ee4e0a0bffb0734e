// Moves the decode position on after a step: state[0] += per_seq (1, one new token per
// sequence). Its own dispatch, last in a step, so every kernel of the step read the same
// position; WebGPU orders dispatches, so the next step's kernels see the new one.
//
// Launch: workgroup_size(1); dispatch (1, 1, 1).
// Buffers: 0 = state (read_write, u32: the position), 1 = uniform Decode
//   (gpt_decode_common.wgsl).

@group(0) @binding(0) var<storage, read_write> state: array<u32>;
@group(0) @binding(1) var<uniform> u: Decode;

@compute @workgroup_size(1)
fn main() {
    state[0] = state[0] + u.per_seq;
}
