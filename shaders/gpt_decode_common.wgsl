// Shared by the KV-cache decoding kernels (appended when each is built): their uniform block.
// The cache of one layer holds, for each of `seqs` sequences, `cap` positions of [k | v]
// rows (2c wide): position p of sequence s starts at (s·cap + p)·2c. The position a decode
// step writes and attends up to is kept on the GPU (`state[0]`), so several steps can be
// chained in one submission without the host writing anything between them.

struct Decode {
    // Rows of the tensor this dispatch reads or writes (prompt rows, or one per sequence).
    rows: u32,
    // Rows per sequence in that tensor: the context for a prompt, 1 for a decode step.
    per_seq: u32,
    // Width of the residual stream.
    c: u32,
    heads: u32,
    // Positions the cache holds per sequence (the context).
    cap: u32,
    // 1: the first row's position is state[0] (a decode step); 0: it is position 0 (a prompt).
    from_state: u32,
    // Tokens in the vocabulary; the token and position tables' offsets in the parameters.
    vocab: u32,
    wte: u32,
    wpe: u32,
    // 1/√(head width).
    scale: f32,
    _p0: u32,
    _p1: u32,
}
