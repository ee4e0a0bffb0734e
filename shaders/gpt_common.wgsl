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
