//! Resident plans: named buffers that stay on the GPU between submissions and dispatches
//! recorded once, then submitted as often as the caller likes (a training step thousands of
//! times, an evaluation every few steps) without waiting, with readbacks requested and polled.
//!
//! A one-shot [`crate::Plan`] uploads, runs and reads back in one call; a [`ResidentPlan`] is for
//! work whose state lives on the GPU. The caller says what to encode as a list of [`Op`]s
//! (passes, buffer clears, dispatches and which binding variant each uses); this module alone
//! turns them into command encoders, compute passes, submits and buffer maps, so the runtime
//! has one place that talks to the queue. Every buffer is counted by [`super::live_buffers`]
//! and destroyed when the plan is dropped.
//!
//! Nothing here waits for the GPU: [`ResidentPlan::submit`] returns once the work is queued
//! and counts the units it carried as completed when the queue says so; a caller that needs
//! the GPU idle (a timing, a cancel) awaits [`ResidentPlan::finished`]. Long work is the
//! caller's to cut: it submits a few units per call and stops submitting to cancel.

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{encoder, Binding, ResidentBuffers};
use crate::context::{Gpu, GpuError};
use crate::spec::KernelSpec;

/// A storage buffer of a resident plan: its bytes, or a size to start zeroed.
pub struct ResidentBuffer<'a> {
    pub name: &'static str,
    pub init: super::Init<'a>,
}

/// A dispatch recorded once. `variants` are its binding lists (plan buffers in binding order,
/// each whole or a range of it, as [`Binding::Buffer`] says; the uniform block made from
/// `uniform` comes after them): most dispatches have one, a dispatch that reads a
/// double-buffered state has two that bind it the other way round. A list holds no
/// [`Binding::Uniform`]. [`ResidentDispatch::whole`] makes lists of whole buffers.
/// `after_uniform` are buffers bound after the uniform in every variant (a learner's
/// loop-budget flag, [`super::LOOP_FLAG`]).
pub struct ResidentDispatch<'a> {
    pub kernel: &'a KernelSpec,
    pub variants: Vec<Vec<Binding>>,
    pub uniform: Vec<u32>,
    pub workgroups: [u32; 3],
    pub after_uniform: Vec<&'static str>,
}

impl ResidentDispatch<'_> {
    /// Binding lists of whole buffers, from their names.
    pub fn whole(variants: Vec<Vec<&'static str>>) -> Vec<Vec<Binding>> {
        variants
            .into_iter()
            .map(|names| names.into_iter().map(Binding::whole).collect())
            .collect()
    }
}

/// What one submission encodes, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Ends the compute pass being recorded, if any; the next dispatch starts a new one.
    Pass,
    /// Zeroes a buffer (between passes: it ends the pass being recorded).
    Clear(&'static str),
    /// Dispatch number `index` (in [`ResidentPlan::new`]'s order) with its binding `variant`.
    Dispatch { index: usize, variant: usize },
    /// Copies `bytes` between two plan buffers (between passes: it ends the pass being
    /// recorded), e.g. a step's batch from where several steps' batches were written at once.
    Copy {
        from: &'static str,
        from_offset: u64,
        to: &'static str,
        to_offset: u64,
        bytes: u64,
    },
}

/// A range of a plan buffer to read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRange {
    pub buffer: &'static str,
    pub offset: u64,
    pub bytes: u64,
}

enum ReadState {
    Idle,
    Pending,
    Ready(Result<(), String>),
}

struct Recorded {
    kernel_id: &'static str,
    pipeline: wgpu::ComputePipeline,
    bind_groups: Vec<wgpu::BindGroup>,
    uniform: wgpu::Buffer,
    workgroups: [u32; 3],
}

/// A plan buffer by name.
fn lookup<'b>(
    buffers: &'b [(&'static str, wgpu::Buffer)],
    name: &str,
) -> Result<&'b wgpu::Buffer, GpuError> {
    buffers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b)
        .ok_or_else(|| GpuError::Dispatch(format!("the plan has no buffer `{name}`")))
}

/// Buffers and recorded dispatches on one device (see the module documentation).
pub struct ResidentPlan {
    gpu: Rc<Gpu>,
    buffers: Vec<(&'static str, wgpu::Buffer)>,
    dispatches: Vec<Recorded>,
    /// Where readbacks land; `readback_bytes` of [`ResidentPlan::new`] long.
    staging: Option<wgpu::Buffer>,
    read: Arc<Mutex<ReadState>>,
    read_bytes: u64,
    submitted: u64,
    completed: Arc<AtomicU64>,
    /// Destroys (and uncounts) every buffer above when the plan is dropped.
    _held: ResidentBuffers,
}

impl ResidentPlan {
    /// Compiles the pipelines (through [`Gpu::pipeline`]'s cache), creates and fills the
    /// buffers, a uniform per dispatch and every binding variant's bind group, and a staging
    /// buffer of `readback_bytes` for [`ResidentPlan::request_read`]. A failure on a device
    /// that is meanwhile lost is reported as [`GpuError::DeviceLost`].
    pub async fn new(
        gpu: Rc<Gpu>,
        buffers: Vec<ResidentBuffer<'_>>,
        dispatches: Vec<ResidentDispatch<'_>>,
        readback_bytes: u64,
    ) -> Result<Self, GpuError> {
        match Self::build(gpu.clone(), buffers, dispatches, readback_bytes).await {
            Err(e) if gpu.is_lost() && !matches!(e, GpuError::DeviceLost(_)) => {
                Err(GpuError::DeviceLost(e.to_string()))
            }
            other => other,
        }
    }

    async fn build(
        gpu: Rc<Gpu>,
        buffers: Vec<ResidentBuffer<'_>>,
        dispatches: Vec<ResidentDispatch<'_>>,
        readback_bytes: u64,
    ) -> Result<Self, GpuError> {
        if gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost before the plan was made".into()));
        }
        let max_groups = gpu.limits().max_compute_workgroups_per_dimension;
        if let Some(d) = dispatches
            .iter()
            .find(|d| d.workgroups.iter().any(|&g| g > max_groups))
        {
            return Err(GpuError::Dispatch(format!(
                "{}: {:?} workgroups exceed maxComputeWorkgroupsPerDimension ({max_groups})",
                d.kernel.id, d.workgroups
            )));
        }
        let mut pipelines = Vec::with_capacity(dispatches.len());
        for d in &dispatches {
            pipelines.push(gpu.pipeline(d.kernel).await?);
        }

        let scopes = gpu.scopes();
        let mut held = ResidentBuffers::default();
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let mut named = Vec::with_capacity(buffers.len());
        for b in &buffers {
            named.push((b.name, held.create(&gpu, b.name, usage, b.init.contents())));
        }
        let find = |name: &str| lookup(&named, name);
        let mut recorded = Vec::with_capacity(dispatches.len());
        for (d, pipeline) in dispatches.iter().zip(pipelines) {
            // Uniform blocks are sized in multiples of 16 bytes.
            let mut bytes: Vec<u8> = bytemuck::cast_slice(&d.uniform).to_vec();
            bytes.resize(bytes.len().max(16).div_ceil(16) * 16, 0);
            let uniform = held.create(
                &gpu,
                d.kernel.id,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                Ok(&bytes),
            );
            let layout = pipeline.get_bind_group_layout(0);
            let mut bind_groups: Vec<wgpu::BindGroup> = Vec::with_capacity(d.variants.len());
            for (v, names) in d.variants.iter().enumerate() {
                // A variant equal to an earlier one shares its bind group.
                if let Some(same) = d.variants[..v].iter().position(|w| w == names) {
                    let shared = bind_groups[same].clone();
                    bind_groups.push(shared);
                    continue;
                }
                let mut entries = Vec::with_capacity(names.len() + 1);
                for (i, bound) in names.iter().enumerate() {
                    let Binding::Buffer { name, offset, size } = bound else {
                        return Err(GpuError::Dispatch(format!(
                            "{}: the uniform is bound after the buffers, not in their list",
                            d.kernel.id
                        )));
                    };
                    entries.push(wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: find(name)?,
                            offset: *offset,
                            size: size.and_then(std::num::NonZeroU64::new),
                        }),
                    });
                }
                entries.push(wgpu::BindGroupEntry {
                    binding: names.len() as u32,
                    resource: uniform.as_entire_binding(),
                });
                for (i, name) in d.after_uniform.iter().enumerate() {
                    entries.push(wgpu::BindGroupEntry {
                        binding: (names.len() + 1 + i) as u32,
                        resource: find(name)?.as_entire_binding(),
                    });
                }
                bind_groups.push(gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(d.kernel.id),
                    layout: &layout,
                    entries: &entries,
                }));
            }
            if bind_groups.is_empty() {
                return Err(GpuError::Dispatch(format!(
                    "{} has no binding list",
                    d.kernel.id
                )));
            }
            recorded.push(Recorded {
                kernel_id: d.kernel.id,
                pipeline,
                bind_groups,
                uniform,
                workgroups: d.workgroups,
            });
        }
        let staging = (readback_bytes > 0).then(|| {
            held.create(
                &gpu,
                "resident readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                Err(readback_bytes.next_multiple_of(4)),
            )
        });
        gpu.pop_scopes(scopes).await?;
        Ok(Self {
            gpu,
            buffers: named,
            dispatches: recorded,
            staging,
            read: Arc::new(Mutex::new(ReadState::Idle)),
            read_bytes: 0,
            submitted: 0,
            completed: Arc::new(AtomicU64::new(0)),
            _held: held,
        })
    }

    fn buffer(&self, name: &str) -> Result<&wgpu::Buffer, GpuError> {
        lookup(&self.buffers, name)
    }

    /// Writes bytes into a plan buffer at `offset` (queued before the next submission).
    pub fn write(&self, name: &str, offset: u64, bytes: &[u8]) -> Result<(), GpuError> {
        let buffer = self.buffer(name)?;
        self.gpu.queue.write_buffer(buffer, offset, bytes);
        Ok(())
    }

    /// Copies the first `bytes` of `from`'s buffer `name` into this plan's buffer of that name,
    /// after everything either plan has submitted (one queue): another plan's current
    /// contents without a readback. Both plans must be on the same device.
    pub fn copy_from(&self, from: &ResidentPlan, name: &str, bytes: u64) -> Result<(), GpuError> {
        if !Rc::ptr_eq(&self.gpu, &from.gpu) {
            return Err(GpuError::Dispatch(
                "a copy between plans on different devices".into(),
            ));
        }
        if self.gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost while running".into()));
        }
        let mut enc = encoder(&self.gpu);
        enc.copy_buffer_to_buffer(from.buffer(name)?, 0, self.buffer(name)?, 0, bytes);
        self.gpu.submit([enc.finish()]);
        Ok(())
    }

    /// Rewrites dispatch `index`'s uniform block (the same number of words it was made with).
    pub fn write_uniform(&self, index: usize, words: &[u32]) -> Result<(), GpuError> {
        let d = self.dispatches.get(index).ok_or(GpuError::WrongJob)?;
        self.gpu
            .queue
            .write_buffer(&d.uniform, 0, bytemuck::cast_slice(words));
        Ok(())
    }

    /// The kernel id of dispatch `index`, if there is one.
    pub fn kernel_id(&self, index: usize) -> Option<&'static str> {
        self.dispatches.get(index).map(|d| d.kernel_id)
    }

    /// Records `ops` into one command encoder.
    fn encode(&self, ops: &[Op]) -> Result<wgpu::CommandEncoder, GpuError> {
        let mut enc = encoder(&self.gpu);
        let mut pass: Option<wgpu::ComputePass<'static>> = None;
        for op in ops {
            match *op {
                Op::Pass => pass = None,
                Op::Clear(name) => {
                    pass = None;
                    enc.clear_buffer(self.buffer(name)?, 0, None);
                }
                Op::Copy {
                    from,
                    from_offset,
                    to,
                    to_offset,
                    bytes,
                } => {
                    pass = None;
                    enc.copy_buffer_to_buffer(
                        self.buffer(from)?,
                        from_offset,
                        self.buffer(to)?,
                        to_offset,
                        bytes,
                    );
                }
                Op::Dispatch { index, variant } => {
                    let d = self.dispatches.get(index).ok_or(GpuError::WrongJob)?;
                    let group = d.bind_groups.get(variant).ok_or(GpuError::WrongJob)?;
                    let p = match &mut pass {
                        Some(p) => p,
                        None => pass.insert(
                            enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                                label: Some("resident"),
                                timestamp_writes: None,
                            })
                            .forget_lifetime(),
                        ),
                    };
                    p.set_pipeline(&d.pipeline);
                    p.set_bind_group(0, group, &[]);
                    p.dispatch_workgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
                }
            }
        }
        drop(pass);
        Ok(enc)
    }

    /// Encodes `ops` as one command buffer and submits it without waiting; the `units` of work
    /// it carries (training steps, say) count as completed once the queue reports it done.
    pub fn submit(&mut self, ops: &[Op], units: u64) -> Result<(), GpuError> {
        if self.gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost while running".into()));
        }
        let enc = self.encode(ops)?;
        self.gpu.submit([enc.finish()]);
        let done = self.completed.clone();
        self.gpu.queue.on_submitted_work_done(move || {
            done.fetch_add(units, Ordering::SeqCst);
        });
        self.submitted += units;
        self.poll();
        Ok(())
    }

    /// Units submitted so far.
    pub fn units_submitted(&self) -> u64 {
        self.submitted
    }

    /// Units the GPU has finished (counted by the queue's completion callbacks, never waited
    /// for).
    pub fn units_completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }

    /// Whether a readback is on its way (requested and not yet collected).
    pub fn read_pending(&self) -> bool {
        self.read
            .lock()
            .map(|s| !matches!(*s, ReadState::Idle))
            .unwrap_or(true)
    }

    /// Encodes `ops`, then copies `ranges` one after another into the staging buffer, submits
    /// and maps it asynchronously. Returns false, doing nothing, while the previous readback
    /// has not been collected with [`ResidentPlan::poll_read`].
    pub fn request_read(&mut self, ops: &[Op], ranges: &[ReadRange]) -> Result<bool, GpuError> {
        if self.gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost while running".into()));
        }
        if self.read_pending() {
            return Ok(false);
        }
        let staging = self.staging.as_ref().ok_or(GpuError::WrongJob)?;
        let total: u64 = ranges.iter().map(|r| r.bytes).sum();
        if total > staging.size() {
            return Err(GpuError::Readback(format!(
                "{total} bytes to read, {} of staging",
                staging.size()
            )));
        }
        let mut enc = self.encode(ops)?;
        let mut at = 0;
        for r in ranges {
            if r.bytes > 0 {
                enc.copy_buffer_to_buffer(self.buffer(r.buffer)?, r.offset, staging, at, r.bytes);
            }
            at += r.bytes;
        }
        self.gpu.submit([enc.finish()]);
        if let Ok(mut s) = self.read.lock() {
            *s = ReadState::Pending;
        }
        self.read_bytes = total;
        let slot = self.read.clone();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            if let Ok(mut s) = slot.lock() {
                *s = ReadState::Ready(r.map_err(|e| e.to_string()));
            }
        });
        self.poll();
        Ok(true)
    }

    /// The bytes of the last requested readback (the ranges back to back), if they have
    /// arrived; never waits.
    pub fn poll_read(&mut self) -> Result<Option<Vec<u8>>, GpuError> {
        self.poll();
        let ready = match self.read.lock() {
            Ok(mut s) => match &*s {
                ReadState::Ready(r) => {
                    let r = r.clone();
                    *s = ReadState::Idle;
                    r
                }
                _ => return Ok(None),
            },
            Err(_) => return Err(GpuError::Readback("readback state poisoned".into())),
        };
        if let Err(e) = ready {
            return Err(if self.gpu.is_lost() {
                GpuError::DeviceLost(e)
            } else {
                GpuError::Readback(e)
            });
        }
        let staging = self.staging.as_ref().ok_or(GpuError::WrongJob)?;
        let bytes = {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            view.get(..self.read_bytes as usize)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| GpuError::Readback("short readback".into()))?
        };
        staging.unmap();
        Ok(Some(bytes))
    }

    /// Resolves when everything submitted so far (by anyone) has finished on the GPU; in the
    /// browser, where nothing may block, this is how a caller waits.
    pub fn finished(&self) -> impl std::future::Future<Output = Result<(), GpuError>> {
        let (tx, rx) = futures_channel::oneshot::channel();
        self.gpu.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        self.poll();
        async move {
            rx.await
                .map_err(|_| GpuError::DeviceLost("the GPU stopped answering".into()))
        }
    }

    /// Natively, lets wgpu run finished callbacks without waiting; in the browser they run on
    /// their own and this does nothing.
    pub fn poll(&self) {
        #[cfg(not(target_arch = "wasm32"))]
        let _ = self.gpu.device.poll(wgpu::PollType::Poll);
    }

    /// Natively, waits until everything submitted has finished (benchmarks and tests).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<(), GpuError> {
        self.gpu.poll_wait()
    }

    /// The device the plan lives on.
    pub fn gpu(&self) -> &Rc<Gpu> {
        &self.gpu
    }
}
