// Shared by the optimiser kernels (optim_sgd.wgsl, optim_adam.wgsl): their uniform block, the
// step state Adam reads its step number from, and the grid's index. Not a kernel on its own;
// the optimiser family (crates/gpu-runtime/src/family/optim.rs) appends it to both (WGSL has
// no #include, and module-scope order does not matter), so a kernel's own lines keep their
// numbers.

// The 16 words of every optimiser dispatch's uniform, in the order the family's encoder
// writes them. 1 − β₁ and 1 − β₂ come as the CPU twin's f32 constants: WGSL would fold
// `1.0 - 0.999` in abstract-float precision and get a different f32. Count and row sit in
// the last two words, as in every CNN kernel's uniform.
struct Optim {
    lr: f32,
    momentum: f32,
    beta1: f32,
    beta2: f32,
    one_minus_beta1: f32,
    one_minus_beta2: f32,
    eps: f32,
    l1: f32,
    l2: f32,
    // Entries of Adam's correction table.
    corr_len: u32,
    // 1: this dispatch advances the step counter itself (a model whose batch is not
    // gathered on the GPU); 0: the model's gathering kernel already does.
    advance: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    count: u32,
    row: u32,
}

// The step state: {first batch row, steps done, micro-batch, 0}. Only `t` matters here; the
// other words are the MLP's gathering kernel's and are carried over unchanged.
struct Steps {
    start: u32,
    t: u32,
    micro: u32,
    pad: u32,
}

// Element index of an invocation of a grid that wraps into y past 65,535 workgroups along x:
// `row` is the invocations of one grid row (x workgroups · 64).
fn element(gid: vec3<u32>, row: u32) -> u32 {
    return gid.x + gid.y * row;
}
