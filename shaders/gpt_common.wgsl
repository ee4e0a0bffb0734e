// Shared by the GPT's layer kernels (appended when each is built): the uniform blocks and
// GELU's constants.

// LayerNorm's uniform: rows of width c; γ and β at these offsets of the parameter (or
// gradient) buffer; ε.
struct Ln {
    rows: u32,
    c: u32,
    gamma: u32,
    beta: u32,
    eps: f32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

// An element-wise kernel's uniform: the number of elements.
struct Len {
    len: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

// GELU's tanh form: √(2/π) and the cubic's coefficient.
const GELU_C: f32 = 0.7978845608028654;
const GELU_A: f32 = 0.044715;

// The embeddings' uniform: `rows` = batch × positions rows of width c, `t` positions per
// window (row r is position r % t), `vocab` tokens; the token table (vocab × c) and the
// position table (≥ t rows × c) at these offsets of the parameter (or gradient) buffer.
struct Embed {
    rows: u32,
    c: u32,
    t: u32,
    vocab: u32,
    wte: u32,
    wpe: u32,
    _p0: u32,
    _p1: u32,
}

// Softmax cross-entropy's uniform: `rows` rows of `vocab` logits.
struct Xent {
    rows: u32,
    vocab: u32,
    _p0: u32,
    _p1: u32,
}

// A target that counts nothing (padding): no loss, no gradient. The CPU twin's IGNORE.
const IGNORE: u32 = 0xffffffffu;
