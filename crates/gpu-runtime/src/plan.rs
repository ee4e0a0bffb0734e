//! The one dispatch path. A [`Plan`] is named buffers (initial bytes or zeroed; some read
//! back) plus an ordered list of dispatches over them; [`Gpu::run_plan`] uploads, dispatches
//! and reads back. A single kernel run is a one-step plan; a two-kernel algorithm is a
//! two-step plan over a shared buffer.
//!
//! Work whose buffers stay on the GPU between submissions (training) is a [`ResidentPlan`]
//! (`plan/resident.rs`): recorded dispatches submitted many times, readbacks polled.
//!
//! Only this module creates command encoders, compute passes, submits, buffer maps and GPU
//! buffers, so [`live_buffers`] counts every buffer the runtime holds.
//!
//! Honest timing and cancel: before its timed start a run waits for work already in the
//! queue (someone else's) to finish, and reports that wait apart. Long work is cut into
//! submissions of about [`TARGET_SUBMIT_MS`] (a step that can be split is dispatched over
//! row ranges; repetitions share a submission up to that time), so a [`CancelToken`] stops
//! the run within about that time, leaving the queue empty. A run timed by timestamps keeps
//! [`IN_FLIGHT`] submissions of half that time in flight (the next is encoded and queued while
//! the GPU runs one, so a repeated plan does not leave the GPU idle between them); a run timed
//! by the wall clock awaits each submission before the next.
//!
//! A plan's uniform blocks and bind groups are made once per distinct dispatch of a run and
//! reused by every repetition (and every warm-up pass) of it.

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

use wgpu::util::DeviceExt;

use crate::clock::now_ms;
use crate::context::{Gpu, GpuError};
use crate::spec::KernelSpec;

pub mod dispatch;
mod resident;
pub use dispatch::{
    grid, grid_for, grid_for_within, grid_within, PlannedDispatch, Uniform, UniformLayout,
    MAX_GROUPS_PER_DIM,
};
pub use resident::{Op, ReadRange, ResidentBuffer, ResidentDispatch, ResidentPlan};

/// Work per submission the chunking aims for (wall clock): short enough that Cancel acts
/// within about a second on a slow adapter, long enough that launch costs stay negligible.
pub const TARGET_SUBMIT_MS: f64 = 200.0;
/// Work (in the step's cost units, multiply-adds for matmul) of the first chunk of a split
/// step, before the adapter's speed is known: about 0.1 s on a software adapter.
const FIRST_CHUNK_COST: f64 = (1u64 << 24) as f64;
/// Passes one submission holds at most (its timestamp queries are allocated for that many;
/// WebGPU allows 4096 queries per set).
const MAX_PASSES: u32 = 1024;
/// Submissions a run timed by timestamps keeps in flight, each cut to
/// `TARGET_SUBMIT_MS / IN_FLIGHT`, so that after a cancel the queue still holds at most about
/// [`TARGET_SUBMIT_MS`] of work. Pass times come from each pass's own timestamps, so a queued
/// submission of the same run adds nothing to them.
const IN_FLIGHT: usize = 2;

/// Whether an open batch of `passes` must be submitted before the next pass: it has passes
/// and either the next would take it `over` its time budget or its timestamp queries are all
/// taken (every pass of a submission needs two; a split step's chunks count too, so many
/// cheap warm-up passes cannot run past the query set).
fn batch_full(passes: usize, over: bool) -> bool {
    passes > 0 && (over || passes >= MAX_PASSES as usize)
}

/// How often to run the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Untimed runs first (pipeline warm-up, clocks ramping up).
    pub warmup: u32,
    /// Timed runs; each dispatch gets its own compute pass and pair of timestamps.
    pub repetitions: u32,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            warmup: 0,
            repetitions: 1,
        }
    }
}

/// Where the kernel time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingMethod {
    /// GPU timestamp queries around each compute pass: the kernel alone.
    Timestamps,
    /// Wall clock from first submit to results mapped: includes launch and readback. Used
    /// when the device has no timestamp queries, and on software adapters, whose timestamps
    /// are not trustworthy.
    WallClock,
}

/// Times of one run, in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    pub method: TimingMethod,
    /// Waiting, before the start, for GPU work submitted earlier by someone else (a cancelled
    /// race, a page left mid-run). Never part of any other figure.
    pub waited_ms: f64,
    /// Creating and filling the buffers (wall clock).
    pub upload_ms: f64,
    /// From the first submit until the result was readable (wall clock): every repetition,
    /// plus readback.
    pub submit_to_result_ms: f64,
    /// Per timed repetition, from timestamps (the sum of its passes); empty with
    /// [`TimingMethod::WallClock`].
    pub pass_ms: Vec<f64>,
    /// Timed repetitions in this run.
    pub repetitions: u32,
    /// Untimed warm-up runs before them (inside the wall clock).
    pub warmup: u32,
    /// Part of `submit_to_result_ms`: from the result buffer being mapped (the GPU is done) to
    /// its bytes copied out (wall clock).
    pub readback_ms: f64,
    /// Submissions the work was cut into (see the module documentation).
    pub submissions: u32,
}

impl Timing {
    /// The best estimate of one run: the fastest timestamped repetition, or the wall clock
    /// divided by every repetition it covered (warm-up included).
    pub fn kernel_ms(&self) -> f64 {
        match self.method {
            TimingMethod::Timestamps => self.pass_ms.iter().copied().fold(f64::INFINITY, f64::min),
            TimingMethod::WallClock => {
                self.submit_to_result_ms / (self.warmup + self.repetitions.max(1)) as f64
            }
        }
    }
}

/// Set from anywhere (a Cancel button, a page being left) to stop a run at its next
/// submission boundary; the run then returns [`GpuError::Cancelled`].
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Rc<Cell<bool>>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.set(true);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.get()
    }
}

/// What a run is doing, reported to [`RunControl::progress`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// Waiting for GPU work submitted earlier (not this run's) to finish.
    WaitingForQueue,
    /// `done` of `total` work units submitted and finished.
    Running { done: f64, total: f64 },
}

/// Cancel and progress for one run; the default has neither.
#[derive(Clone, Default)]
pub struct RunControl {
    pub cancel: CancelToken,
    pub progress: Option<Rc<dyn Fn(Progress)>>,
    /// The largest piece of a split step, in its cost units; None: by measured speed only.
    /// (Tests force many pieces with it.)
    pub chunk_cap: Option<f64>,
}

impl RunControl {
    fn report(&self, p: Progress) {
        if let Some(f) = &self.progress {
            f(p);
        }
    }
}

/// How a plan buffer starts.
pub enum Init<'a> {
    Bytes(Cow<'a, [u8]>),
    Zeroed(u64),
}

impl Init<'_> {
    /// What [`ResidentBuffers::create`] makes of it: the bytes, or a zeroed size (a multiple
    /// of 4). A zero-length binding is invalid, so 4 bytes stand in for an empty buffer.
    fn contents(&self) -> Result<&[u8], u64> {
        match self {
            Init::Bytes(bytes) if bytes.is_empty() => Err(4),
            Init::Bytes(bytes) => Ok(bytes.as_ref()),
            Init::Zeroed(n) => Err((*n).max(4).div_ceil(4) * 4),
        }
    }
}

/// A named storage buffer of a plan.
pub struct PlanBuffer<'a> {
    pub name: &'static str,
    pub init: Init<'a>,
    /// Copied back after the last repetition and returned in [`PlanOutput::read`].
    pub read_back: bool,
}

/// One binding of a dispatch, in binding order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// A plan buffer, whole, or `size` bytes from `offset` (a multiple of the device's
    /// `minStorageBufferOffsetAlignment`).
    Buffer {
        name: &'static str,
        offset: u64,
        size: Option<u64>,
    },
    /// The dispatch's own uniform block, made from its words.
    Uniform,
}

impl Binding {
    pub fn whole(name: &'static str) -> Self {
        Binding::Buffer {
            name,
            offset: 0,
            size: None,
        }
    }
}

/// One dispatch: bindings, uniform words (any number) and workgroup counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dispatch {
    pub bindings: Vec<Binding>,
    pub uniform: Vec<u32>,
    pub workgroups: [u32; 3],
}

/// How a step's dispatch is cut into row ranges: `part(first, count)` is the dispatch that
/// computes rows `first..first + count` of `units`; `align` rows is the smallest piece whose
/// buffer offsets respect the device's alignment.
pub struct Split<'a> {
    pub units: u32,
    pub align: u32,
    #[allow(clippy::type_complexity)]
    pub part: Box<dyn Fn(u32, u32) -> Dispatch + 'a>,
}

/// One kernel over the plan's buffers.
pub struct Step<'a> {
    pub kernel: &'a KernelSpec,
    /// The whole dispatch.
    pub dispatch: Dispatch,
    /// Work of the whole dispatch, in the family's unit (for progress and chunk sizes).
    pub cost: f64,
    /// Present when the step can be cut into row ranges (see [`Split`]).
    pub split: Option<Split<'a>>,
}

/// Named buffers and the ordered dispatches over them.
#[derive(Default)]
pub struct Plan<'a> {
    pub buffers: Vec<PlanBuffer<'a>>,
    pub steps: Vec<Step<'a>>,
}

/// The loop-budget flag buffer's name in a plan or a resident plan ([`Plan::attach_loop_flag`]).
pub const LOOP_FLAG: &str = "loop_flag";

/// Where a learner's kernel rewritten with a loop budget (the editor's `budget_loops`) wants
/// its flag buffer: `@binding(binding)` of group 0, just after the family's own bindings, a
/// zeroed buffer of `words` u32 words that the rewrite's counters mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopFlag {
    pub binding: u32,
    pub words: usize,
}

impl<'a> Plan<'a> {
    /// Adds the [`LOOP_FLAG`] buffer (read back) and binds it in every step that runs
    /// `kernel_id` (every step when None), split parts included. Refuses a flag that would
    /// not sit just after such a step's own bindings: bound elsewhere it would alias another
    /// binding or be dropped, and a stopped loop would go unreported.
    pub fn attach_loop_flag(
        &mut self,
        kernel_id: Option<&str>,
        flag: LoopFlag,
    ) -> Result<(), GpuError> {
        let runs = |step: &Step<'_>| kernel_id.is_none_or(|id| step.kernel.id == id);
        if !self.steps.iter().any(runs) {
            return Err(GpuError::Dispatch(format!(
                "no step of this plan runs {}",
                kernel_id.unwrap_or("a kernel")
            )));
        }
        if let Some(step) = self
            .steps
            .iter()
            .find(|s| runs(s) && s.dispatch.bindings.len() != flag.binding as usize)
        {
            return Err(GpuError::Dispatch(format!(
                "the loop-budget flag is at binding {}, but {} binds {} buffers before it",
                flag.binding,
                step.kernel.id,
                step.dispatch.bindings.len()
            )));
        }
        self.buffers.push(PlanBuffer {
            name: LOOP_FLAG,
            init: Init::Zeroed((flag.words.max(1) * 4) as u64),
            read_back: true,
        });
        for step in self.steps.iter_mut().filter(|s| runs(s)) {
            step.dispatch.bindings.push(Binding::whole(LOOP_FLAG));
            step.split = step.split.take().map(|s| {
                let part = s.part;
                Split {
                    units: s.units,
                    align: s.align,
                    part: Box::new(move |a, b| {
                        let mut d = part(a, b);
                        d.bindings.push(Binding::whole(LOOP_FLAG));
                        d
                    }),
                }
            });
        }
        Ok(())
    }
}

/// The buffers read back (in plan order, by name) and the timing.
#[derive(Clone, Debug)]
pub struct PlanOutput {
    pub read: Vec<(&'static str, Vec<u8>)>,
    pub timing: Timing,
}

/// The result of one catalogued kernel's run ([`crate::Gpu::run`], a conv stage): its
/// output, unpadded, and the timing.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub output: Vec<f32>,
    pub timing: Timing,
}

impl PlanOutput {
    /// The bytes of a read-back buffer.
    pub fn bytes(&self, name: &str) -> Option<&[u8]> {
        self.read
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b.as_slice())
    }

    /// A read-back buffer as u32 words (a loop flag, an access log); empty when it was not
    /// read back.
    pub fn words(&self, name: &str) -> Vec<u32> {
        le_words(self.bytes(name))
    }
}

/// Read-back bytes as little-endian u32 words, a trailing partial word dropped; empty for
/// `None` (a buffer that was not read back).
pub fn le_words(bytes: Option<&[u8]>) -> Vec<u32> {
    bytes
        .unwrap_or_default()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

thread_local! {
    /// Bind groups this thread's runs have made (tests/plan.rs counts them per run).
    static BIND_GROUPS_MADE: Cell<u32> = const { Cell::new(0) };
}

/// Bind groups this thread's plan runs have made so far: a repeated plan makes one per
/// dispatch, not one per pass (tests/plan.rs).
#[doc(hidden)]
pub fn bind_groups_made() -> u32 {
    BIND_GROUPS_MADE.with(Cell::get)
}

/// GPU buffers created by the runtime and not yet destroyed (all devices together).
static LIVE_BUFFERS: AtomicU32 = AtomicU32::new(0);

/// Buffers created minus buffers destroyed: zero whenever no run is in flight and no training
/// session is alive. Tests use it to check that runs and sessions leak nothing.
pub fn live_buffers() -> u32 {
    LIVE_BUFFERS.load(Ordering::SeqCst)
}

/// Buffers that outlive a run (a training session's); destroyed and uncounted on drop.
#[derive(Default)]
pub struct ResidentBuffers(Vec<wgpu::Buffer>);

impl ResidentBuffers {
    /// Creates a buffer of `size` bytes (zeroed) or holding `contents`.
    pub(crate) fn create(
        &mut self,
        gpu: &Gpu,
        label: &str,
        usage: wgpu::BufferUsages,
        contents: Result<&[u8], u64>,
    ) -> wgpu::Buffer {
        let b = match contents {
            Ok(bytes) => gpu
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: bytes,
                    usage,
                }),
            Err(size) => gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            }),
        };
        LIVE_BUFFERS.fetch_add(1, Ordering::SeqCst);
        self.0.push(b.clone());
        b
    }
}

impl Drop for ResidentBuffers {
    fn drop(&mut self) {
        for b in &self.0 {
            b.destroy();
        }
        LIVE_BUFFERS.fetch_sub(self.0.len() as u32, Ordering::SeqCst);
    }
}

/// A command encoder (the only place one is made).
pub(crate) fn encoder(gpu: &Gpu) -> wgpu::CommandEncoder {
    gpu.device.create_command_encoder(&Default::default())
}

/// Bookkeeping of a run across its submissions.
struct RunState {
    /// Measured wall ms per unit of work (from the last submission).
    ms_per_cost: Option<f64>,
    done: f64,
    total: f64,
    pass_ms: Vec<f64>,
    submissions: u32,
    t_first_submit: Option<f64>,
    /// When the last awaited submission was seen finished (the next one's GPU time cannot
    /// start before it).
    t_last_done: f64,
}

/// Timestamp queries of one submission in flight, reused by later submissions once it has
/// been read.
struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

/// A submission being recorded: its encoder, which timed repetition each pass belongs to,
/// its work, and the queries its timestamps go to (`queries[slot]`; submissions take the
/// sets in turn, so a set is reused only after the submission before that has been read).
struct Batch {
    encoder: wgpu::CommandEncoder,
    passes: Vec<Option<u32>>,
    cost: f64,
    slot: usize,
}

/// A submitted batch not yet awaited.
struct Pending {
    index: wgpu::SubmissionIndex,
    /// Fires when the GPU has finished this submission (and everything before it).
    done: futures_channel::oneshot::Receiver<()>,
    passes: Vec<Option<u32>>,
    /// Its timestamps were resolved into `queries[slot]`.
    stamped: bool,
    slot: usize,
    cost: f64,
    t_submit: f64,
}

/// The bind group (over its uniform block, if any) and workgroups of one distinct dispatch of
/// a run: keyed by the step's index and, for a piece of a split step, its row range.
type Bound = std::collections::HashMap<(usize, Option<(u32, u32)>), (wgpu::BindGroup, [u32; 3])>;

impl Gpu {
    /// Compiles (once per device and source) the pipeline of a kernel, reporting WGSL errors
    /// as [`GpuError::Shader`] rather than as an uncaptured error. The cache is keyed by
    /// [`KernelSpec::pipeline_key`] and whether runtime checks are on
    /// ([`Gpu::compiles_checked`]), so an edited copy of a kernel gets its own pipeline, and so
    /// does a kernel compiled with and without checks.
    pub async fn pipeline(&self, kernel: &KernelSpec) -> Result<wgpu::ComputePipeline, GpuError> {
        let checks = self.compiles_checked(kernel);
        let key = (kernel.pipeline_key(), checks);
        if let Some(p) = self.pipelines.borrow().get(&key) {
            return Ok(p.clone());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(kernel.id),
            source: wgpu::ShaderSource::Wgsl(
                self.source_for(kernel.wgsl(), kernel.required_features)
                    .into(),
            ),
        };
        #[cfg(target_arch = "wasm32")]
        let module = {
            // A browser checks every shader; `checks` is always true here.
            debug_assert!(checks);
            self.device.create_shader_module(desc)
        };
        #[cfg(not(target_arch = "wasm32"))]
        let module = if checks {
            self.device.create_shader_module(desc)
        } else {
            // SAFETY: `compiles_checked` is false only natively and only for the catalogue's
            // own kernels (`KernelSource::Built`, never edited WGSL), whose every access is in
            // bounds for the layouts their family builds and whose loops end; the every-kernel
            // tests verify them against the CPU reference on odd sizes through this path.
            unsafe {
                self.device
                    .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        };
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(kernel.id),
                layout: None,
                module: &module,
                entry_point: Some(kernel.entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: kernel.constants,
                    ..Default::default()
                },
                cache: None,
            });
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Shader(e.to_string()));
        }
        self.pipelines.borrow_mut().insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// The compiler's own messages about `kernel`'s WGSL (errors, warnings, notes): in a
    /// browser, the browser's WGSL compiler through `GPUShaderModule.getCompilationInfo()` —
    /// the compiler that will run the kernel, given the same source as [`Gpu::pipeline`];
    /// natively, naga's. Places are in the kernel's own text (a directive the browser needed
    /// in front of line 1 is taken out of them). The module is made inside an error scope,
    /// so a shader with errors is reported here, not as an uncaptured error.
    pub async fn compilation_messages(
        &self,
        kernel: &crate::KernelSpec,
    ) -> Vec<wgpu::CompilationMessage> {
        let wgsl = kernel.wgsl();
        let compiled = self.source_for(wgsl.clone(), kernel.required_features);
        let shift = compiled.len() - wgsl.len();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("compiler messages"),
                source: wgpu::ShaderSource::Wgsl(compiled.into()),
            });
        let info = module.get_compilation_info().await;
        let _ = scope.pop().await;
        let mut messages = info.messages;
        for m in &mut messages {
            if let Some(l) = m.location.as_mut() {
                l.offset = l.offset.saturating_sub(shift as u32);
                if l.line_number == 1 {
                    l.line_position = l.line_position.saturating_sub(shift as u32).max(1);
                }
            }
        }
        messages
    }

    /// Resolves once every piece of work submitted to the queue so far (by anyone) has
    /// finished; returns how long that took (ms).
    pub async fn drain(&self) -> Result<f64, GpuError> {
        let t0 = now_ms();
        let (tx, rx) = futures_channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        self.poll_wait()?;
        rx.await
            .map_err(|_| GpuError::DeviceLost("the GPU stopped answering".into()))?;
        Ok(now_ms() - t0)
    }

    /// Natively, drives the device until submitted work is done; in the browser callbacks
    /// fire on their own and this does nothing.
    fn poll_wait(&self) -> Result<(), GpuError> {
        self.poll_until(None)
    }

    /// Natively, drives the device until submission `index` (None: the latest) is done.
    fn poll_until(&self, index: Option<wgpu::SubmissionIndex>) -> Result<(), GpuError> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: index,
                timeout: None,
            })
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        #[cfg(target_arch = "wasm32")]
        let _ = index;
        Ok(())
    }

    /// Runs a plan. Any failure on a device that has meanwhile been lost is reported as
    /// [`GpuError::DeviceLost`], whatever wgpu said first, so callers handle one case.
    pub async fn run_plan(
        &self,
        plan: &Plan<'_>,
        opts: &RunOptions,
        ctl: &RunControl,
    ) -> Result<PlanOutput, GpuError> {
        match self.run_plan_unchecked(plan, opts, ctl).await {
            Err(e)
                if self.is_lost()
                    && !matches!(e, GpuError::DeviceLost(_) | GpuError::Cancelled) =>
            {
                Err(GpuError::DeviceLost(e.to_string()))
            }
            other => other,
        }
    }

    async fn run_plan_unchecked(
        &self,
        plan: &Plan<'_>,
        opts: &RunOptions,
        ctl: &RunControl,
    ) -> Result<PlanOutput, GpuError> {
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost before the run".into()));
        }
        let max_groups = self.limits().max_compute_workgroups_per_dimension;
        let mut pipelines = Vec::new();
        for step in &plan.steps {
            let missing = step.kernel.required_features - self.features();
            if !missing.is_empty() {
                return Err(GpuError::MissingFeatures(format!("{missing:?}")));
            }
            let groups = step.dispatch.workgroups;
            if groups.iter().any(|&g| g > max_groups) {
                return Err(GpuError::Dispatch(format!(
                    "{groups:?} workgroups exceed maxComputeWorkgroupsPerDimension ({max_groups})"
                )));
            }
            pipelines.push(self.pipeline(step.kernel).await?);
        }

        // Someone else's work still in the queue must not count as ours.
        ctl.report(Progress::WaitingForQueue);
        let waited_ms = self.drain().await?;
        if ctl.cancel.is_cancelled() {
            return Err(GpuError::Cancelled);
        }

        let t_start = now_ms();
        let mut held = ResidentBuffers::default();
        let scopes = self.scopes();
        let mut named = Vec::new();
        for b in &plan.buffers {
            let usage = wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST;
            named.push((b.name, held.create(self, b.name, usage, b.init.contents())));
        }
        self.pop_scopes(scopes).await?;
        // A cancel that came while the buffers were made (the await above is the last before
        // the first submission): nothing of this run is sent.
        if ctl.cancel.is_cancelled() {
            return Err(GpuError::Cancelled);
        }

        let reps = opts.repetitions.max(1);
        let runs = opts.warmup + reps;
        let timestamps = self.features().contains(wgpu::Features::TIMESTAMP_QUERY)
            && !self.adapter().is_software;
        // One set of queries per submission in flight; none: timed by the wall clock, one
        // submission at a time.
        let in_flight = if timestamps { IN_FLIGHT } else { 1 };
        let target_ms = TARGET_SUBMIT_MS / in_flight as f64;
        let queries: Vec<Queries> = (0..in_flight)
            .filter(|_| timestamps)
            .map(|_| {
                let bytes = 16 * MAX_PASSES as u64;
                Queries {
                    set: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                        label: Some("pass times"),
                        ty: wgpu::QueryType::Timestamp,
                        count: 2 * MAX_PASSES,
                    }),
                    resolve: held.create(
                        self,
                        "timestamps",
                        wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                        Err(bytes),
                    ),
                    read: held.create(
                        self,
                        "timestamps readback",
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        Err(bytes),
                    ),
                }
            })
            .collect();

        let step_cost: f64 = plan.steps.iter().map(|s| s.cost).sum();
        let mut st = RunState {
            ms_per_cost: None,
            done: 0.0,
            total: step_cost * runs as f64,
            pass_ms: vec![0.0; reps as usize],
            submissions: 0,
            t_first_submit: None,
            t_last_done: 0.0,
        };
        let mut pending = None;
        let mut bound = Bound::new();
        let mut read = Vec::new();
        let mut batch = Batch {
            encoder: encoder(self),
            passes: Vec::new(),
            cost: 0.0,
            slot: 0,
        };
        for run in 0..runs {
            let timed = run.checked_sub(opts.warmup);
            for (si, (step, pipeline)) in plan.steps.iter().zip(&pipelines).enumerate() {
                match &step.split {
                    Some(split) if split.units > split.align => {
                        let per_unit = step.cost / split.units as f64;
                        let piece = per_unit * split.align as f64;
                        let mut first = 0;
                        while first < split.units {
                            let budget = match st.ms_per_cost {
                                None => FIRST_CHUNK_COST,
                                Some(r) => target_ms / r,
                            }
                            .min(ctl.chunk_cap.unwrap_or(f64::INFINITY));
                            let room = budget - batch.cost;
                            if batch_full(batch.passes.len(), room < piece) {
                                self.flush(&mut batch, &queries, &mut st, ctl, &mut pending)
                                    .await?;
                                continue;
                            }
                            let want = (room / per_unit.max(1e-12)).min(u32::MAX as f64) as u32;
                            let count = (want / split.align * split.align)
                                .max(split.align)
                                .min(split.units - first);
                            let (group, groups) = self.bound(
                                &mut bound,
                                (si, Some((first, count))),
                                || (split.part)(first, count),
                                pipeline,
                                step.kernel,
                                &named,
                                &mut held,
                            )?;
                            self.encode(
                                &mut batch,
                                pipeline,
                                step.kernel,
                                &group,
                                groups,
                                &queries,
                                timed,
                            );
                            batch.cost += per_unit * count as f64;
                            first += count;
                            if first < split.units {
                                self.flush(&mut batch, &queries, &mut st, ctl, &mut pending)
                                    .await?;
                            }
                        }
                    }
                    _ => {
                        let over = st
                            .ms_per_cost
                            .is_some_and(|r| (batch.cost + step.cost) * r > target_ms);
                        if batch_full(batch.passes.len(), over) {
                            self.flush(&mut batch, &queries, &mut st, ctl, &mut pending)
                                .await?;
                        }
                        let (group, groups) = self.bound(
                            &mut bound,
                            (si, None),
                            || step.dispatch.clone(),
                            pipeline,
                            step.kernel,
                            &named,
                            &mut held,
                        )?;
                        self.encode(
                            &mut batch,
                            pipeline,
                            step.kernel,
                            &group,
                            groups,
                            &queries,
                            timed,
                        );
                        batch.cost += step.cost;
                    }
                }
            }
            if run + 1 == runs {
                // The results travel in the last submission.
                for (b, (name, buffer)) in plan.buffers.iter().zip(&named) {
                    if b.read_back {
                        let staging = held.create(
                            self,
                            "readback",
                            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                            Err(buffer.size()),
                        );
                        batch
                            .encoder
                            .copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
                        read.push((*name, staging));
                    }
                }
                let last = self.send(&mut batch, &queries, &mut st).await?;
                if let Some(p) = pending.take() {
                    self.finish(p, &queries, &mut st).await?;
                }
                self.finish(last, &queries, &mut st).await?;
            }
            // Otherwise the batch stays open: repetitions share a submission until it would
            // exceed the target time (the lessons' "one submission, many dispatches").
        }
        ctl.report(Progress::Running {
            done: st.total,
            total: st.total,
        });
        let RunState {
            pass_ms,
            submissions,
            t_first_submit,
            ..
        } = st;
        let mut readback_ms = 0.0;
        let mut out = Vec::new();
        for (name, staging) in read {
            let (bytes, ms) = map_read(&staging, self).await?;
            readback_ms += ms;
            out.push((name, bytes));
        }
        let t_done = now_ms();
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost during the run".into()));
        }
        let t_first = t_first_submit.unwrap_or(t_done);
        Ok(PlanOutput {
            read: out,
            timing: Timing {
                method: if !queries.is_empty() {
                    TimingMethod::Timestamps
                } else {
                    TimingMethod::WallClock
                },
                waited_ms,
                upload_ms: t_first - t_start,
                submit_to_result_ms: t_done - t_first,
                pass_ms: if !queries.is_empty() {
                    pass_ms
                } else {
                    Vec::new()
                },
                repetitions: reps,
                warmup: opts.warmup,
                readback_ms,
                submissions,
            },
        })
    }

    /// The bind group and workgroups of a distinct dispatch of this run (`key`): made once,
    /// with its uniform block, from `make()`, then reused by every repetition.
    #[allow(clippy::too_many_arguments)]
    fn bound(
        &self,
        bound: &mut Bound,
        key: (usize, Option<(u32, u32)>),
        make: impl FnOnce() -> Dispatch,
        pipeline: &wgpu::ComputePipeline,
        kernel: &KernelSpec,
        named: &[(&'static str, wgpu::Buffer)],
        held: &mut ResidentBuffers,
    ) -> Result<(wgpu::BindGroup, [u32; 3]), GpuError> {
        if let Some(b) = bound.get(&key) {
            return Ok(b.clone());
        }
        let d = make();
        let uniform = if d.bindings.contains(&Binding::Uniform) {
            let words: &[u32] = if d.uniform.is_empty() {
                &[0]
            } else {
                &d.uniform
            };
            // Uniform blocks are sized in multiples of 16 bytes.
            let mut bytes: Vec<u8> = bytemuck::cast_slice(words).to_vec();
            bytes.resize(bytes.len().div_ceil(16) * 16, 0);
            Some(held.create(self, "uniform", wgpu::BufferUsages::UNIFORM, Ok(&bytes)))
        } else {
            None
        };
        let mut entries = Vec::new();
        for (i, b) in d.bindings.iter().enumerate() {
            let resource = match b {
                Binding::Uniform => match &uniform {
                    Some(u) => u.as_entire_binding(),
                    None => return Err(GpuError::WrongJob),
                },
                Binding::Buffer { name, offset, size } => {
                    let Some((_, buf)) = named.iter().find(|(n, _)| n == name) else {
                        return Err(GpuError::Dispatch(format!(
                            "the plan has no buffer `{name}`"
                        )));
                    };
                    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: buf,
                        offset: *offset,
                        size: size.and_then(wgpu::BufferSize::new),
                    })
                }
            };
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32,
                resource,
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.id),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        BIND_GROUPS_MADE.with(|n| n.set(n.get() + 1));
        let b = (bind_group, d.workgroups);
        bound.insert(key, b.clone());
        Ok(b)
    }

    /// Records one dispatch as its own compute pass (timestamped when it belongs to a timed
    /// repetition).
    #[allow(clippy::too_many_arguments)]
    fn encode(
        &self,
        batch: &mut Batch,
        pipeline: &wgpu::ComputePipeline,
        kernel: &KernelSpec,
        bind_group: &wgpu::BindGroup,
        g: [u32; 3],
        queries: &[Queries],
        timed: Option<u32>,
    ) {
        let index = batch.passes.len() as u32;
        let timestamp_writes = match (queries.get(batch.slot), timed) {
            (Some(q), Some(_)) => Some(wgpu::ComputePassTimestampWrites {
                query_set: &q.set,
                beginning_of_pass_write_index: Some(2 * index),
                end_of_pass_write_index: Some(2 * index + 1),
            }),
            _ => None,
        };
        let mut pass = batch
            .encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.id),
                timestamp_writes,
            });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(g[0], g[1], g[2]);
        drop(pass);
        batch.passes.push(timed);
    }

    /// Submits the batch; then, when the run keeps two submissions in flight, awaits the one
    /// before it (else this one): learns the speed from it, reports progress and honours a
    /// cancel, which awaits whatever of the run is still in flight first.
    async fn flush(
        &self,
        batch: &mut Batch,
        queries: &[Queries],
        st: &mut RunState,
        ctl: &RunControl,
        pending: &mut Option<Pending>,
    ) -> Result<(), GpuError> {
        let sent = self.send(batch, queries, st).await?;
        let now = if queries.len() >= IN_FLIGHT {
            pending.replace(sent)
        } else {
            Some(sent)
        };
        if let Some(p) = now {
            self.finish(p, queries, st).await?;
        }
        ctl.report(Progress::Running {
            done: st.done,
            total: st.total,
        });
        if ctl.cancel.is_cancelled() {
            if let Some(p) = pending.take() {
                self.finish(p, queries, st).await?;
            }
            return Err(GpuError::Cancelled);
        }
        Ok(())
    }

    /// Submits the batch (its timestamps resolved into its queries) without waiting for the
    /// GPU, and starts a fresh batch on the next set of queries.
    async fn send(
        &self,
        batch: &mut Batch,
        queries: &[Queries],
        st: &mut RunState,
    ) -> Result<Pending, GpuError> {
        let next = (batch.slot + 1) % queries.len().max(1);
        let mut b = std::mem::replace(
            batch,
            Batch {
                encoder: encoder(self),
                passes: Vec::new(),
                cost: 0.0,
                slot: next,
            },
        );
        let stamped = b.passes.iter().any(|p| p.is_some());
        let q = queries.get(b.slot).filter(|_| stamped);
        if let Some(q) = q {
            let n = b.passes.len() as u32;
            b.encoder.resolve_query_set(&q.set, 0..2 * n, &q.resolve, 0);
            b.encoder
                .copy_buffer_to_buffer(&q.resolve, 0, &q.read, 0, 16 * n as u64);
        }
        let scopes = self.scopes();
        let t = now_ms();
        st.t_first_submit.get_or_insert(t);
        let index = self.submit([b.encoder.finish()]);
        let (tx, done) = futures_channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        st.submissions += 1;
        self.pop_scopes(scopes).await?;
        Ok(Pending {
            index,
            done,
            passes: b.passes,
            stamped: q.is_some(),
            slot: b.slot,
            cost: b.cost,
            t_submit: t,
        })
    }

    /// Waits until the GPU has finished a submission (not the ones after it), learns the speed
    /// from it and adds its timestamps to the repetitions they belong to.
    async fn finish(
        &self,
        p: Pending,
        queries: &[Queries],
        st: &mut RunState,
    ) -> Result<(), GpuError> {
        self.poll_until(Some(p.index.clone()))?;
        p.done
            .await
            .map_err(|_| GpuError::DeviceLost("the GPU stopped answering".into()))?;
        let t = now_ms();
        // Its GPU work started after it was submitted and after the one before it finished.
        let ms = t - p.t_submit.max(st.t_last_done);
        st.t_last_done = t;
        if p.cost > 0.0 {
            st.ms_per_cost = Some(ms.max(0.01) / p.cost);
        }
        st.done += p.cost;
        if let Some(q) = queries.get(p.slot).filter(|_| p.stamped) {
            let (bytes, _) = map_read_until(&q.read, self, Some(p.index)).await?;
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
            let period_ns = self.queue.get_timestamp_period() as f64;
            for (rep, t) in p.passes.iter().zip(ticks.chunks_exact(2)) {
                if let Some(slot) = rep.and_then(|rep| st.pass_ms.get_mut(rep as usize)) {
                    *slot += t[1].saturating_sub(t[0]) as f64 * period_ns / 1e6;
                }
            }
        }
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost during the run".into()));
        }
        Ok(())
    }

    fn scopes(&self) -> (wgpu::ErrorScopeGuard, wgpu::ErrorScopeGuard) {
        (
            self.device.push_error_scope(wgpu::ErrorFilter::Validation),
            self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
        )
    }

    fn pop_scopes(
        &self,
        (validation, oom): (wgpu::ErrorScopeGuard, wgpu::ErrorScopeGuard),
    ) -> impl std::future::Future<Output = Result<(), GpuError>> {
        let oom = oom.pop();
        let validation = validation.pop();
        async move {
            if let Some(e) = oom.await {
                return Err(GpuError::OutOfMemory(e.to_string()));
            }
            if let Some(e) = validation.await {
                return Err(GpuError::Dispatch(e.to_string()));
            }
            Ok(())
        }
    }
}

/// Maps a whole buffer for reading; yields its bytes and the time from the buffer being
/// mapped to the bytes being copied out.
/// One host ↔ GPU copy of the same bytes both ways, timed on the wall clock (see
/// [`Gpu::time_transfer`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferTiming {
    pub bytes: u64,
    /// `queue.writeBuffer` of the bytes into a GPU buffer until the queue reports it done.
    pub upload_ms: f64,
    /// A copy into a mappable buffer, `mapAsync` and the bytes copied out, until they are in
    /// the page's memory.
    pub readback_ms: f64,
    /// The bytes read back (the caller checks them against what it sent).
    pub read: Vec<u8>,
}

impl Gpu {
    /// Moves `data` to the GPU and back, timing each direction on the wall clock after the
    /// queue has drained (nobody else's work inside). Upload: `write_buffer` into a storage
    /// buffer, then an empty submit whose completion means the copy has landed. Readback: a
    /// GPU copy into a `MAP_READ` buffer (a device-local to host-visible copy, as every
    /// readback needs), `map_async`, and the bytes copied out. Both buffers are destroyed on
    /// every exit path. `data` must be a non-empty multiple of 4 bytes.
    pub async fn time_transfer(&self, data: &[u8]) -> Result<TransferTiming, GpuError> {
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost before the transfer".into()));
        }
        let bytes = data.len() as u64;
        let limits = self.buffer_limits();
        if bytes == 0 || !bytes.is_multiple_of(4) || bytes > limits.max_buffer_size {
            return Err(GpuError::Dispatch(format!(
                "a transfer of {bytes} bytes (a non-zero multiple of 4, at most maxBufferSize {})",
                limits.max_buffer_size
            )));
        }
        let mut held = ResidentBuffers::default();
        let scopes = self.scopes();
        let target = held.create(
            self,
            "transfer",
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            Err(bytes),
        );
        let staging = held.create(
            self,
            "transfer readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            Err(bytes),
        );
        self.pop_scopes(scopes).await?;
        self.drain().await?;

        let t0 = now_ms();
        self.queue.write_buffer(&target, 0, data);
        self.submit([]);
        self.drain().await?;
        let upload_ms = now_ms() - t0;

        let t1 = now_ms();
        let mut enc = encoder(self);
        enc.copy_buffer_to_buffer(&target, 0, &staging, 0, bytes);
        self.submit([enc.finish()]);
        let (read, _) = map_read(&staging, self).await?;
        let readback_ms = now_ms() - t1;
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost during the transfer".into()));
        }
        Ok(TransferTiming {
            bytes,
            upload_ms,
            readback_ms,
            read,
        })
    }
}

async fn map_read(buffer: &wgpu::Buffer, gpu: &Gpu) -> Result<(Vec<u8>, f64), GpuError> {
    map_read_until(buffer, gpu, None).await
}

/// [`map_read`] of a buffer whose last use is submission `index` (None: the latest), driving
/// the device natively only that far.
async fn map_read_until(
    buffer: &wgpu::Buffer,
    gpu: &Gpu,
    index: Option<wgpu::SubmissionIndex>,
) -> Result<(Vec<u8>, f64), GpuError> {
    let (tx, rx) = futures_channel::oneshot::channel();
    buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    gpu.poll_until(index)?;
    rx.await
        .map_err(|_| GpuError::Readback("the map request was dropped".into()))?
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    let t_mapped = now_ms();
    let bytes = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| GpuError::Readback(e.to_string()))?
        .to_vec();
    buffer.unmap();
    Ok((bytes, now_ms() - t_mapped))
}

#[cfg(test)]
mod tests {
    use super::{batch_full, le_words, MAX_PASSES};

    #[test]
    fn a_batch_is_submitted_before_its_queries_run_out() {
        let max = MAX_PASSES as usize;
        // Within budget and queries: keep filling; an empty batch always takes a pass.
        assert!(!batch_full(0, true));
        assert!(!batch_full(max - 1, false));
        assert!(batch_full(5, true));
        // Every query pair taken: submit, whatever the time budget says (the H100 sweep's
        // "Query 3306 is out of bounds for a query set of size 2048").
        assert!(batch_full(max, false));
    }

    #[test]
    fn read_back_words_are_little_endian_and_drop_a_partial_word() {
        let b: Vec<u8> = [1u32, 0x0102_0304]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .chain([9])
            .collect();
        assert_eq!(le_words(Some(&b)), vec![1, 0x0102_0304]);
        assert_eq!(le_words(Some(&[1, 0, 0, 0, 2])), vec![1]);
        assert_eq!(le_words(None), Vec::<u32>::new());
    }
}
