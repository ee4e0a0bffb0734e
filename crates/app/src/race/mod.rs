//! The CPU-vs-GPU race, minus its view: URL settings (`params`), the live race's page logic
//! (`duel`), the sweep chart's geometry (`plot`), the wasm entry points the CPU workers call
//! (`worker_api`), the page's pool of workers (`pool`) and the measured, verified runs of each
//! side (`measure`).
//!
//! Data flow: the page makes seeded inputs once; the CPU side sends each worker its rows of A
//! and all of B (`postMessage`, no shared memory, so the site stays embeddable on any static
//! host), each worker computes its rows in chunks with `cpu_kernels::cpu_matmul` and reports
//! progress, and the page assembles C; the GPU side runs the same inputs through
//! `Gpu::run`. Both results are checked against the CPU reference and against each other.

pub mod conv_params;
pub mod duel;
pub mod measure;
pub mod params;
pub mod plot;
pub mod pool;
pub mod worker_api;
