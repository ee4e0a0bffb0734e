//! The tiny multilayer perceptron of the train view, without any GPU or DOM code.
//!
//! - [`spec`]: every setting of the view, parsed from and written to the URL, with named
//!   errors for bad values.
//! - [`data`]: the four seeded datasets, noise, train/test split, learner-added points and the
//!   input features.
//! - [`net`]: the network's shape, where its parameters and activations live in flat buffers
//!   (the same layout the GPU kernels use), seeded initialisation, and the CPU twin
//!   ([`net::CpuTrainer`]) that computes exactly what the WGSL kernels compute, in the same
//!   order, so the two loss curves can be compared step by step.
//! - [`tuned`]: the tuned CPU trainer ([`tuned::TunedTrainer`]): the same training step as
//!   batched matrix multiplies (`matrixmultiply` natively, the race's SIMD kernel in wasm),
//!   the fair CPU the GPU is compared with.

pub mod crossover;
pub mod data;
pub mod net;
pub mod spec;
pub mod tuned;

pub use data::{Dataset, Feature, Points};
pub use net::{Activation, CpuTrainer, Hyper, Layout, LossKind, Net, Optimiser};
pub use spec::{Regularisation, Spec, SpecError};
pub use tuned::{Gemm, TunedTrainer};
