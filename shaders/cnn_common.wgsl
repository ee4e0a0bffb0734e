// Shared by the CNN's kernels: their uniform blocks, one per kind of launch. Not a
// kernel on its own; the CNN family (crates/gpu-runtime/src/family/cnn/mod.rs) appends it to
// every CNN kernel (WGSL has no #include, and module-scope order does not matter), so a
// kernel's own lines keep their numbers. The words are the ones the family's uniform encoders
// write, in this order (16 words each).

struct Block {
    batch: u32,
    c_in: u32,
    c_out: u32,
    k: u32,
    in_side: u32,
    conv_side: u32,
    pool_side: u32,
    in_off: u32,
    conv_off: u32,
    relu_off: u32,
    pool_off: u32,
    argmax_off: u32,
    w_off: u32,
    b_off: u32,
    count: u32,
    row: u32,
}

struct Dense {
    batch: u32,
    inputs: u32,
    classes: u32,
    in_off: u32,
    logits_off: u32,
    probs_off: u32,
    w_off: u32,
    b_off: u32,
    inv_batch: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    pad3: u32,
    pad4: u32,
    count: u32,
    row: u32,
}
