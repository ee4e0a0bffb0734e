//! The one dispatch path: upload inputs, run a catalogued kernel, read the result back, time it,
//! and release every buffer — whatever the kernel and whoever asked.

use std::sync::atomic::{AtomicU32, Ordering};

use wgpu::util::DeviceExt;

use crate::catalogue::KernelSpec;
use crate::clock::now_ms;
use crate::context::{Gpu, GpuError};
use crate::workload::Job;

/// How often to run the kernel within one submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Untimed runs first (pipeline warm-up, clocks ramping up).
    pub warmup: u32,
    /// Timed runs; each gets its own compute pass and pair of timestamps.
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
    /// Wall clock from submit to results mapped: includes launch and readback. Used when the
    /// device has no timestamp queries, and on software adapters, whose timestamps are not
    /// trustworthy.
    WallClock,
}

/// Times of one [`Gpu::run`], in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    pub method: TimingMethod,
    /// Creating and filling the buffers (wall clock).
    pub upload_ms: f64,
    /// From submit until the result was readable (wall clock): every repetition, plus readback.
    pub submit_to_result_ms: f64,
    /// Per timed repetition, from timestamps; empty with [`TimingMethod::WallClock`].
    pub pass_ms: Vec<f64>,
    /// Timed repetitions in this run.
    pub repetitions: u32,
    /// Untimed warm-up passes before them, in the same submission (so inside the wall clock).
    pub warmup: u32,
    /// Part of `submit_to_result_ms`: from the result buffer being mapped (the GPU is done) to
    /// its bytes copied out (wall clock).
    pub readback_ms: f64,
}

impl Timing {
    /// The best estimate of one kernel execution: the fastest timestamped pass, or the wall
    /// clock divided by every pass it covered (warm-up passes share the submission).
    pub fn kernel_ms(&self) -> f64 {
        match self.method {
            TimingMethod::Timestamps => self.pass_ms.iter().copied().fold(f64::INFINITY, f64::min),
            TimingMethod::WallClock => {
                self.submit_to_result_ms / (self.warmup + self.repetitions.max(1)) as f64
            }
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub output: Vec<f32>,
    pub timing: Timing,
}

/// Buffers of one run; destroyed on every exit path, so failed runs leak nothing.
struct Buffers(Vec<wgpu::Buffer>);

impl Buffers {
    fn push(&mut self, b: wgpu::Buffer) -> wgpu::Buffer {
        LIVE_BUFFERS.fetch_add(1, Ordering::SeqCst);
        self.0.push(b.clone());
        b
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        for b in &self.0 {
            b.destroy();
        }
        LIVE_BUFFERS.fetch_sub(self.0.len() as u32, Ordering::SeqCst);
    }
}

/// GPU buffers created by [`Gpu::run`] and not yet destroyed (all devices together).
static LIVE_BUFFERS: AtomicU32 = AtomicU32::new(0);

/// Buffers created minus buffers destroyed: zero whenever no run is in flight. Tests use it to
/// check that repeated runs leak nothing.
pub fn live_buffers() -> u32 {
    LIVE_BUFFERS.load(Ordering::SeqCst)
}

impl Gpu {
    /// Compiles (once per device) the pipeline of a kernel, reporting WGSL errors as
    /// [`GpuError::Shader`] rather than as an uncaptured error.
    pub async fn pipeline(
        &self,
        kernel: &'static KernelSpec,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        if let Some(p) = self.pipelines.borrow().get(kernel.id) {
            return Ok(p.clone());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(kernel.id),
            source: wgpu::ShaderSource::Wgsl(kernel.wgsl().into()),
        };
        let module = if self.runtime_checks.get() {
            self.device.create_shader_module(desc)
        } else {
            // SAFETY: only set by benchmarks (Gpu::set_runtime_checks) for catalogue kernels,
            // whose every access is in bounds for the layouts the runtime builds.
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
        self.pipelines
            .borrow_mut()
            .insert(kernel.id, pipeline.clone());
        Ok(pipeline)
    }

    /// Runs `kernel` on `job`: the single dispatch path of the whole playground.
    /// Any failure on a device that has meanwhile been lost is reported as
    /// [`GpuError::DeviceLost`], whatever wgpu said first, so callers handle one case.
    pub async fn run(
        &self,
        kernel: &'static KernelSpec,
        job: &Job<'_>,
        opts: &RunOptions,
    ) -> Result<RunOutput, GpuError> {
        match self.run_unchecked(kernel, job, opts).await {
            Err(e) if self.is_lost() && !matches!(e, GpuError::DeviceLost(_)) => {
                Err(GpuError::DeviceLost(e.to_string()))
            }
            other => other,
        }
    }

    async fn run_unchecked(
        &self,
        kernel: &'static KernelSpec,
        job: &Job<'_>,
        opts: &RunOptions,
    ) -> Result<RunOutput, GpuError> {
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost before the run".into()));
        }
        if !kernel.accepts(job) {
            return Err(GpuError::WrongJob);
        }
        let missing = kernel.required_features - self.features();
        if !missing.is_empty() {
            return Err(GpuError::MissingFeatures(format!("{missing:?}")));
        }
        let workload = job.workload();
        workload
            .check_limits(&self.buffer_limits())
            .map_err(GpuError::Size)?;
        let groups = kernel.workgroups(&workload);
        let max_groups = self.limits().max_compute_workgroups_per_dimension;
        if groups.iter().any(|&g| g > max_groups) {
            return Err(GpuError::Dispatch(format!(
                "{groups:?} workgroups exceed maxComputeWorkgroupsPerDimension ({max_groups})"
            )));
        }
        let pipeline = self.pipeline(kernel).await?;

        let t_start = now_ms();
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let mut buffers = Buffers(Vec::new());

        let layout = crate::layout::layout(kernel.storage, job);
        let mut entries_buffers = Vec::new();
        for (i, data) in layout.inputs.iter().enumerate() {
            entries_buffers.push(buffers.push(self.device.create_buffer_init(
                &wgpu::util::BufferInitDescriptor {
                    label: Some(&format!("input {i}")),
                    contents: data,
                    usage: wgpu::BufferUsages::STORAGE,
                },
            )));
        }
        let out_bytes = (layout.output_len * 4) as u64;
        let output = buffers.push(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("output"),
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        }));
        entries_buffers.push(output.clone());
        let uniform = buffers.push(self.device.create_buffer_init(
            &wgpu::util::BufferInitDescriptor {
                label: Some("dims"),
                contents: bytemuck::cast_slice(&layout.dims),
                usage: wgpu::BufferUsages::UNIFORM,
            },
        ));
        entries_buffers.push(uniform);
        let staging = buffers.push(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: out_bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }));
        let entries: Vec<wgpu::BindGroupEntry> = entries_buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.id),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });

        let reps = opts.repetitions.max(1);
        let timestamps = self.features().contains(wgpu::Features::TIMESTAMP_QUERY)
            && !self.adapter().is_software;
        let queries = timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass times"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * reps,
            });
            let bytes = 16 * reps as u64;
            let resolve = buffers.push(self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }));
            let read = buffers.push(self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            (set, resolve, read)
        });

        let mut encoder = self.device.create_command_encoder(&Default::default());
        for rep in 0..opts.warmup + reps {
            let timed = rep.checked_sub(opts.warmup);
            let timestamp_writes = match (&queries, timed) {
                (Some((set, _, _)), Some(t)) => Some(wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: Some(2 * t),
                    end_of_pass_write_index: Some(2 * t + 1),
                }),
                _ => None,
            };
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.id),
                timestamp_writes,
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        }
        encoder.copy_buffer_to_buffer(&output, 0, &staging, 0, out_bytes);
        if let Some((set, resolve, read)) = &queries {
            encoder.resolve_query_set(set, 0..2 * reps, resolve, 0);
            encoder.copy_buffer_to_buffer(resolve, 0, read, 0, resolve.size());
        }
        let t_submit = now_ms();
        self.queue.submit([encoder.finish()]);

        let oom = oom.pop();
        let validation = validation.pop();
        let mut reads = vec![map_read(&staging)];
        if let Some((_, _, read)) = &queries {
            reads.push(map_read(read));
        }
        self.wait_for_queue()?;
        if let Some(e) = oom.await {
            return Err(GpuError::Dispatch(e.to_string()));
        }
        if let Some(e) = validation.await {
            return Err(GpuError::Dispatch(e.to_string()));
        }
        let mut mapped = Vec::new();
        let mut readback_ms = 0.0;
        for r in reads {
            let (bytes, ms) = r.await?;
            readback_ms += ms;
            mapped.push(bytes);
        }
        let t_done = now_ms();
        if self.is_lost() {
            return Err(GpuError::DeviceLost("lost during the run".into()));
        }

        let output =
            crate::layout::unpad(bytemuck::pod_collect_to_vec(&mapped[0]), layout.padded_rows);
        let pass_ms = match mapped.get(1) {
            Some(bytes) => {
                let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(bytes);
                let period_ns = self.queue.get_timestamp_period() as f64;
                ticks
                    .chunks_exact(2)
                    .map(|p| p[1].saturating_sub(p[0]) as f64 * period_ns / 1e6)
                    .collect()
            }
            None => Vec::new(),
        };
        Ok(RunOutput {
            output,
            timing: Timing {
                method: if queries.is_some() {
                    TimingMethod::Timestamps
                } else {
                    TimingMethod::WallClock
                },
                upload_ms: t_submit - t_start,
                submit_to_result_ms: t_done - t_submit,
                pass_ms,
                repetitions: reps,
                warmup: opts.warmup,
                readback_ms,
            },
        })
    }

    /// Natively, drives the device until submitted work is done; in the browser the map
    /// callbacks fire on their own and this does nothing.
    fn wait_for_queue(&self) -> Result<(), GpuError> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        Ok(())
    }
}

/// Starts mapping a whole buffer for reading; the future yields its bytes and the time from
/// the buffer being mapped to the bytes being copied out.
fn map_read(
    buffer: &wgpu::Buffer,
) -> impl std::future::Future<Output = Result<(Vec<u8>, f64), GpuError>> {
    let (tx, rx) = futures_channel::oneshot::channel();
    let slice = buffer.slice(..);
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    let buffer = buffer.clone();
    async move {
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
}
