//! The CPU-vs-GPU race's browser side: the wasm entry points the CPU workers call
//! (`worker_api`) and the page's pool of workers (`pool`). Its plain logic (URL settings, the
//! live race, the sweep chart's geometry, the measured and verified runs) is
//! `page_models::race`.
//!
//! Data flow: the page makes seeded inputs once; the CPU side sends each worker its rows of A
//! and all of B (`postMessage`, no shared memory, so the site stays embeddable on any static
//! host), each worker computes its rows in chunks with `cpu_kernels::matmul_variants` and reports
//! progress, and the page assembles C; the GPU side runs the same inputs through
//! `Gpu::run`. Both results are checked against the CPU reference and against each other.

pub mod pool;
pub mod worker_api;
