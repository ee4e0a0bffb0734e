// Shared by the attention kernels (appended when each is built): the uniform block and the
// addressing of Q, K, V and the output. One layout serves both the benchmark's separate
// (batch·heads, n, d) tensors and the GPT's packed rows [q | k | v] of every position.

struct Attn {
    // Sequences × heads, the number of (independent) attention problems.
    bh: u32,
    // Positions per sequence.
    n: u32,
    // Head width.
    d: u32,
    heads: u32,
    // Element offsets of Q, K and V in `qkv`, and of the output in `out`.
    q_off: u32,
    k_off: u32,
    v_off: u32,
    o_off: u32,
    // Strides in elements between sequences, heads and positions: in `qkv`, then in `out`.
    in_seq: u32,
    in_head: u32,
    in_row: u32,
    out_seq: u32,
    out_head: u32,
    out_row: u32,
    // 1/√d.
    scale: f32,
    _pad: u32,
}

// Element 0 of row `i` of problem `bh` in `qkv` (add q_off, k_off or v_off).
fn in_at(u: Attn, bh: u32, i: u32) -> u32 {
    return (bh / u.heads) * u.in_seq + (bh % u.heads) * u.in_head + i * u.in_row;
}

// Element 0 of output row `i` of problem `bh`.
fn out_at(u: Attn, bh: u32, i: u32) -> u32 {
    return u.o_off + (bh / u.heads) * u.out_seq + (bh % u.heads) * u.out_head + i * u.out_row;
}
