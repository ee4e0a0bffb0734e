//! GPU runtime and kernel catalogue of GPU Playground.
//!
//! - [`catalogue`]: every kernel described once — WGSL source, entry point, launch geometry,
//!   the workload family that fixes its bindings, CPU reference and verification.
//! - [`Gpu`]: one wgpu device and the single dispatch path ([`Gpu::run`]) that every consumer
//!   (run widget, ladder, race, tests, benchmarks) goes through.
//! - [`workload`]: problem sizes, their validation against user input and device limits.
//!
//! The same code runs natively (Vulkan/Metal/DX12, used by tests and benchmarks) and in the
//! browser (WebGPU). This crate never depends on yew, web-sys DOM types or any UI code.

pub mod catalogue;
mod clock;
mod context;
mod dispatch;
pub mod layout;
pub mod measure;
mod schedule;
pub mod training;
mod verified;
pub mod workload;

pub use catalogue::{kernel, Family, KernelSpec, Storage, KERNELS};
pub use clock::now_ms;
pub use context::{looks_like_software, AdapterSummary, Gpu, GpuError};
pub use dispatch::{live_buffers, RunOptions, RunOutput, Timing, TimingMethod};
pub use schedule::{record_schedule, ScheduleRecord};
pub use verified::{run_matmul_verified, VerifiedRun, FULL_CHECK_MACS, SAMPLED_ELEMENTS};
pub use workload::{parse_dim, BufferLimits, Job, MeasureSize, ScheduleSize, SizeError, Workload};

pub use cpu_kernels;
pub use mlp;
pub use wgpu;
