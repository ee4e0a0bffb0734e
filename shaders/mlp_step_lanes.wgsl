// Tiny MLP, the first of the TWO dispatches of a whole training step for small networks: every
// sample's forward pass, loss and backward pass, with each layer's activations and deltas kept
// in workgroup memory, and each parameter's gradient summed over this workgroup's samples.
// The second dispatch (mlp_step_reduce.wgsl) adds the 64 workgroups' sums and applies the
// optimiser.
//
// Why 64 workgroups, and why these samples: the CPU twin (crates/mlp, `REDUCE`) and the
// per-layer kernels sum a parameter's gradient over the batch in 64 LANES: lane t adds the
// terms of samples t, t + 64, t + 128, … in that order, then the 64 lane sums are halved
// pairwise (32, 16, …, 1). Workgroup t here is lane t: it takes exactly samples
// b = t + 64·g (g = 0, 1, …), and each parameter's thread adds their terms in increasing g. So
// the sum is the twin's to the last bit (up to fused multiply-adds), and the test's tight
// per-step bound still holds. A lane with no sample (batch < 64) writes zeros.
//
// Inside a workgroup, threads cooperate per layer: the lane's samples are taken C at a time
// (C = samples per chunk, chosen so a chunk's activations and deltas fit `mem`); for a chunk:
//   1. the inputs: row (start + b) mod rows of the training set (kept on the GPU in batch
//      order), one thread per value;                                                barrier
//   2. each layer forward, one thread per (sample, neuron): the dense layer of
//      mlp_forward.wgsl, k = 0 … fan_in − 1, then the bias and the activation;   barrier each
//   3. the loss and its gradient at the logits, one thread per sample (mlp_loss.wgsl);
//      the sample's loss goes to losses[b];                                         barrier
//   4. each layer from the last down to the second, the deltas at its input, one thread per
//      (sample, input): n = 0 … fan_out − 1, times the activation's derivative taken from the
//      layer below's output (mlp_backward_input.wgsl);                            barrier each
//   5. every parameter, one thread each (strided): dW[n, k] += Σ_c dz[c, n] · in[c, k],
//      dbias[n] += Σ_c dz[c, n], added in sample order onto the lane's sum so far (the
//      partials buffer; the first chunk starts from 0);                             barrier
// Thread 0 of workgroup 0 writes the next step's state {start + batch mod rows, t + 1} into
// the other of the two state buffers: the CPU writes nothing per step.
// Used for networks of at most 8 layers of at most 64 neurons, without gradient
// accumulation (training::lanes_fit); other networks use the per-layer kernels.
//
// Launch: workgroup_size(256); min(64, batch) workgroups along x (one per lane with a sample;
//   the sums of lanes never launched stay the zeros the partials buffer starts with).
// Buffers: 0 = params (read: layer l's W at w_off, fan_out × fan_in row-major; biases at b_off),
//          1 = losses (read_write: one f32 per sample of the batch),
//          2 = data_x (read: rows × inputs, batch order), 3 = data_y (read: rows labels; f32
//              bits for regression),
//          4 = state (read: {start, t, 0, 0}), 5 = next_state (read_write),
//          6 = partials (read_write: parameter j's sum over lane t's samples at j · 64 + t,
//              parameters numbered layer after layer, each layer's fan_out rows of
//              fan_in weights + 1 bias: j = first[l] + n · (fan_in + 1) + k, k = fan_in the bias),
//          7 = uniform StepNet (as mlp_step_samples.wgsl, except: per layer, in_off and out_off
//              are offsets in `mem` for one chunk (C rows per layer), opt.z = C, opt.w = the
//              number of parameters).
// Workgroup memory: `mem`, 3,840 f32 (15 KiB of WebGPU's default 16 KiB): a chunk's
// activations, layer after layer (C rows of each width), then its deltas at the same offsets
// plus `dbase` (= C · Σ widths).

// activate(), derivative_from_output(), StepState and StepNet: mlp_common.wgsl (appended when
// the kernel is built). StepNet here: opt.z = C (samples per chunk), opt.w = parameter count; layers[2l + 1].w =
// the layer's first parameter number; in_off/out_off are offsets in `mem`.

@group(0) @binding(0) var<storage, read> params: array<f32>;
@group(0) @binding(1) var<storage, read_write> losses: array<f32>;
@group(0) @binding(2) var<storage, read> data_x: array<f32>;
@group(0) @binding(3) var<storage, read> data_y: array<u32>;
@group(0) @binding(4) var<storage, read> state: StepState;
@group(0) @binding(5) var<storage, read_write> next_state: StepState;
@group(0) @binding(6) var<storage, read_write> partials: array<f32>;
@group(0) @binding(7) var<uniform> u: StepNet;

const LANES: u32 = 64u;
const THREADS: u32 = 256u;

var<workgroup> mem: array<f32, 3840>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let lane = wid.x;
    let batch = u.head.x;
    let rows = u.head.y;
    let depth = u.head.z;
    let chunk = u.opt.z;
    let count = u.opt.w;
    if (lane == 0u && tid == 0u) {
        next_state = StepState((state.start + batch % rows) % rows, state.t + 1u, 0u, 0u);
    }
    // This lane's samples: b = lane + 64·g for g < mine.
    var mine = 0u;
    if (lane < batch) {
        mine = (batch - lane + LANES - 1u) / LANES;
    }
    let inputs = u.layers[0].x;
    let last = u.layers[2u * (depth - 1u)];
    let last_c = u.layers[2u * (depth - 1u) + 1u];
    let classes = last.y;
    // The deltas sit above every layer's activations of the chunk.
    let dbase = last_c.z + chunk * classes;
    let inv_b = 1.0 / f32(batch);
    for (var g0 = 0u; g0 < mine; g0 += chunk) {
        let cn = min(chunk, mine - g0);
        // 1. The inputs of the chunk's samples.
        for (var i = tid; i < cn * inputs; i += THREADS) {
            let c = i / inputs;
            let b = lane + LANES * (g0 + c);
            let row = (state.start + b % rows) % rows;
            mem[u.layers[1].y + i] = data_x[row * inputs + i % inputs];
        }
        workgroupBarrier();
        // 2. Forward, layer by layer.
        for (var l = 0u; l < depth; l++) {
            let a = u.layers[2u * l];
            let o = u.layers[2u * l + 1u];
            for (var i = tid; i < cn * a.y; i += THREADS) {
                let c = i / a.y;
                let n = i % a.y;
                var acc = 0.0;
                for (var k = 0u; k < a.x; k++) {
                    acc += params[a.w + n * a.x + k] * mem[o.y + c * a.x + k];
                }
                mem[o.z + i] = activate(acc + params[o.x + n], a.z);
            }
            workgroupBarrier();
        }
        // 3. The loss and its gradient at the logits, one thread per sample.
        for (var c = tid; c < cn; c += THREADS) {
            let b = lane + LANES * (g0 + c);
            let row = (state.start + b % rows) % rows;
            let z0 = last_c.z + c * classes;
            let y = data_y[row];
            let kind = u.head.w;
            if (kind == 0u) {
                var m = mem[z0];
                for (var j = 1u; j < classes; j++) {
                    m = max(m, mem[z0 + j]);
                }
                var s = 0.0;
                for (var j = 0u; j < classes; j++) {
                    s += exp(mem[z0 + j] - m);
                }
                for (var j = 0u; j < classes; j++) {
                    let p = exp(mem[z0 + j] - m) / s;
                    let t = select(0.0, 1.0, j == y);
                    mem[dbase + z0 + j] = (p - t) * inv_b;
                }
                losses[b] = log(s) - (mem[z0 + y] - m);
            } else if (kind == 2u) {
                let e = mem[z0] - bitcast<f32>(y);
                mem[dbase + z0] = e * inv_b;
                losses[b] = 0.5 * (e * e);
            } else {
                var acc = 0.0;
                for (var j = 0u; j < classes; j++) {
                    let t = select(0.0, 1.0, j == y);
                    let e = mem[z0 + j] - t;
                    acc += e * e;
                    mem[dbase + z0 + j] = e * inv_b;
                }
                losses[b] = 0.5 * acc;
            }
        }
        workgroupBarrier();
        // 4. Backward, last layer first: the deltas at layer l's input from its output's.
        for (var l = depth - 1u; l >= 1u; l--) {
            let a = u.layers[2u * l];
            let o = u.layers[2u * l + 1u];
            let act_below = u.layers[2u * (l - 1u)].z;
            for (var i = tid; i < cn * a.x; i += THREADS) {
                let c = i / a.x;
                let k = i % a.x;
                var s = 0.0;
                for (var n = 0u; n < a.y; n++) {
                    s += mem[dbase + o.z + c * a.y + n] * params[a.w + n * a.x + k];
                }
                mem[dbase + o.y + i] = s * derivative_from_output(mem[o.y + i], act_below);
            }
            workgroupBarrier();
        }
        // 5. Every parameter's sum over the chunk, added in sample order onto the lane's.
        for (var j = tid; j < count; j += THREADS) {
            var l = 0u;
            for (var q = 1u; q < depth; q++) {
                if (j >= u.layers[2u * q + 1u].w) {
                    l = q;
                }
            }
            let a = u.layers[2u * l];
            let o = u.layers[2u * l + 1u];
            let cols = a.x + 1u;
            let id = j - o.w;
            let n = id / cols;
            let k = id % cols;
            var acc = 0.0;
            if (g0 > 0u) {
                acc = partials[j * LANES + lane];
            }
            for (var c = 0u; c < cn; c++) {
                var x = 1.0;
                if (k < a.x) {
                    x = mem[o.y + c * a.x + k];
                }
                acc += mem[dbase + o.z + c * a.y + n] * x;
            }
            partials[j * LANES + lane] = acc;
        }
        // The next chunk overwrites `mem`.
        workgroupBarrier();
    }
    if (mine == 0u) {
        for (var j = tid; j < count; j += THREADS) {
            partials[j * LANES + lane] = 0.0;
        }
    }
}
