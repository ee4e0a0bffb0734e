//! The tiny decoder-only character model of the GPT page, without any GPU or DOM code: the
//! pure-Rust floor that its WGSL kernels and the page stand on, as `cnn` and `mlp` are for
//! theirs.
//!
//! - [`model`]: the shape ([`Config`]), where every parameter lives in one flat buffer
//!   ([`ParamLayout`], the layout the kernels bind), seeded initialisation, and the forward and
//!   backward pass ([`Model::loss_and_grad`]) as a list of layers: token and position
//!   embeddings; per block a pre-LayerNorm causal multi-head self-attention and a pre-LayerNorm
//!   MLP with GELU, each added back onto the residual stream; a final LayerNorm and the
//!   softmax cross-entropy head. Generic over [`Real`], so the same code runs in f32 (the twin
//!   the GPU is held to) and in f64 (the reference its gradients are checked against by finite
//!   differences in `tests/gradients.rs`).
//! - [`ops`]: each layer's forward and backward, with its summation order stated.
//! - [`train`]: the twin's training loop (Adam from `cpu_kernels::optim`, the update every model
//!   shares) over seeded batches of windows.
//! - [`tuned`]: the tuned CPU trainer — the same step with every product a matrix multiply
//!   (`cpu_kernels::gemm`), single-threaded: the CPU bar the GPU step is measured against.
//! - [`data`]: the character vocabulary, documents as windows of the context, the seeded split.
//! - [`asset`]: the site asset a data set ships in (names, Tang quatrains), its checks, and the
//!   split every user of it makes.
//! - [`bigram`]: the counting baseline the model must beat, computed on the same split.
//! - [`memory`]: what training and decoding keep, from the shape alone, up to GPT-3's.

pub mod asset;
pub mod bigram;
pub mod data;
pub mod memory;
pub mod model;
pub mod ops;
pub mod real;
pub mod train;
pub mod tuned;

pub use data::{Corpus, Vocab};
pub use model::{Config, ConfigError, Model, ParamLayout};
pub use real::Real;
