// Shared by the tiny MLP's kernels: the activations and their derivatives, and the two
// uniform/storage blocks of the whole-step kernels. Not a kernel on its own; the MLP family
// (crates/gpu-runtime/src/family/mlp.rs) appends it to the kernels that use it (WGSL has no
// #include, and module-scope order does not matter), so their line numbers stay their own.
//
// Activation codes, as `mlp::Activation` numbers them: 0 identity, 1 ReLU, 2 tanh, 3 sigmoid.
// The clamps keep tanh and the sigmoid's exp finite; the CPU twin clamps the same way, so the
// two agree to the last bit (up to fused multiply-adds).

fn activate(z: f32, act: u32) -> f32 {
    switch act {
        case 1u: { return max(z, 0.0); }
        case 2u: { return tanh(clamp(z, -15.0, 15.0)); }
        case 3u: { return 1.0 / (1.0 + exp(-clamp(z, -30.0, 30.0))); }
        default: { return z; }
    }
}

// The activation's derivative written in terms of its OUTPUT a = activate(z): what the
// backward pass has at hand, so z need not be kept.
fn derivative_from_output(a: f32, act: u32) -> f32 {
    switch act {
        case 1u: { return select(0.0, 1.0, a > 0.0); }
        case 2u: { return 1.0 - a * a; }
        case 3u: { return a * (1.0 - a); }
        default: { return 1.0; }
    }
}

// The network and hyper-parameters of the whole-step kernels (one uniform block).
struct StepNet {
    // batch, rows of the training set, depth (layers), loss kind (0 cross-entropy, 1 MSE,
    // 2 regression)
    head: vec4<u32>,
    // optimiser (0 SGD / momentum, 1 Adam), Adam's correction table length, then
    // mlp_step_lanes' C (samples per chunk) and parameter count (0, 0 for the others)
    opt: vec4<u32>,
    // lr, β₁, β₂, ε
    hyper0: vec4<f32>,
    // l1, l2, momentum, 0
    hyper1: vec4<f32>,
    // per layer l: [2l] = {fan_in, fan_out, act, w_off}, [2l + 1] = {b_off, in_off, out_off,
    // a fourth number each kernel's header names}
    layers: array<vec4<u32>, 16>,
}

// The step state the GPU carries from step to step (two buffers, read one, write the other):
// the training set's row the batch starts at, the step number t (Adam's corrections), and the
// micro-batch counter of gradient accumulation (0 where a kernel does not accumulate).
struct StepState {
    start: u32,
    t: u32,
    micro: u32,
    pad1: u32,
}
