//! GPU runtime and kernel catalogue of GPU Playground.
//!
//! - [`family`]: one module per kernel family (matmul, conv, schedule, mlp, measure, numeric,
//!   cnn, attention, gpt), each owning its kernels, grid, buffer layout, CPU reference and
//!   check; [`catalogue`] looks kernels up.
//! - [`plan`]: the one dispatch path — named buffers and ordered dispatches, uploaded, run
//!   (cut into cancellable submissions, after the queue has drained) and read back.
//!   [`Gpu::run`] is a one-step plan; every consumer (run widget, ladder, race, lessons,
//!   tests, benchmarks) goes through it.
//! - [`workload`]: problem sizes, their validation against user input and device limits.
//!
//! The same code runs natively (Vulkan/Metal/DX12, used by tests and benchmarks) and in the
//! browser (WebGPU). This crate never depends on yew, web-sys DOM types or any UI code.

pub mod catalogue;
mod clock;
pub mod cnn_training;
mod context;
pub mod crossover;
mod dispatch;
pub mod engine;
pub mod family;
mod launch_schedule;
pub mod measurements;
pub mod plan;
mod spec;
pub mod training;
mod verified;
mod web_subgroups;
pub mod workload;

pub use catalogue::{kernel, kernels, Family, KernelSource, KernelSpec, Storage};
pub use clock::now_ms;
pub use context::{coop_configs_text, looks_like_software, AdapterSummary, Gpu, GpuError};
pub use dispatch::RunOutput;
pub use family::attention;
pub use family::conv;
pub use family::gpt as gpt_layers;
pub use family::numeric;
pub use launch_schedule::{record_schedule, ScheduleRecord};
pub use plan::{
    live_buffers, CancelToken, LoopFlag, Plan, PlanOutput, Progress, RunControl, RunOptions,
    Timing, TimingMethod, LOOP_FLAG,
};
pub use verified::{
    run_matmul_verified, run_matmul_verified_with, run_verified, VerifiedRun, FULL_CHECK_MACS,
    SAMPLED_ELEMENTS,
};
pub use workload::{parse_dim, BufferLimits, Job, MeasureSize, ScheduleSize, SizeError, Workload};

pub use cnn;
pub use cpu_kernels;
pub use gpt;
pub use mlp;
pub use wgpu;
