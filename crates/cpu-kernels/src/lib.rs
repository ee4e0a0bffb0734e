//! CPU side of GPU Playground: the independent reference every GPU kernel is checked against,
//! deterministic test data, and the verification rule (a tolerance that grows with the
//! reduction length, never a fixed epsilon or bit equality).
//!
//! Pure Rust: no GPU, no DOM, no web dependencies, so it builds for native tests and for wasm.

pub mod conv;
pub mod conv_variants;
pub mod data;
pub mod df64;
pub mod gemm;
pub mod matmul;
pub mod matmul_variants;
pub mod optim;
pub mod quant;
pub mod verify;
