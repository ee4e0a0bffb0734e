//! Training the tiny MLP on the GPU: a session that owns persistent buffers and bind groups,
//! records one training step as ONE command-buffer submit, and reads metrics back without ever
//! blocking a step.
//!
//! Data flow of a step: the batch's features and labels are written into the activation and
//! label buffers (`queue.write_buffer`), then one compute pass runs, in order: `mlp-forward`
//! per layer, `mlp-loss`, `mlp-backward-params` per layer (a workgroup reduction per parameter) (last first) with
//! `mlp-backward-input` between layers, and one optimiser dispatch (`mlp-sgd` or `mlp-adam`)
//! over all parameters. Nothing is read back per step. [`TrainingSession::request_eval`]
//! (every k steps, the caller's choice) runs the forward pass over an evaluation set (the
//! decision-boundary grid, the training set and the test set) and maps one staging buffer
//! asynchronously; while that mapping is pending further requests are skipped, and
//! [`TrainingSession::poll_eval`] hands the result over once it has arrived.
//!
//! Every pipeline comes from [`Gpu::pipeline`] and every kernel from the catalogue.

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mlp::net::{adam_corrections, gather_batch, BETA1, BETA2, EPSILON};
use mlp::{Hyper, Net, Optimiser};

use crate::catalogue::{kernel, KernelSpec};
use crate::context::{Gpu, GpuError};
use crate::plan::{encoder, ResidentBuffers};
use crate::workload::BufferLimits;

/// Threads per workgroup of every MLP kernel (their `@workgroup_size(64)`).
pub const WORKGROUP: u32 = 64;

/// The buffers a dispatch binds, in binding order (the uniform comes last, always).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Params,
    Grads,
    M,
    V,
    Acts,
    Deltas,
    Labels,
    Losses,
}

fn bindings(kernel_id: &str) -> &'static [Slot] {
    use Slot::*;
    match kernel_id {
        "mlp-forward" => &[Params, Acts],
        "mlp-loss" => &[Acts, Labels, Deltas, Losses],
        "mlp-backward-params" => &[Acts, Deltas, Grads],
        "mlp-backward-input" => &[Params, Acts, Deltas],
        "mlp-sgd" => &[Params, Grads, M],
        "mlp-adam" => &[Params, Grads, M, V],
        _ => &[],
    }
}

/// One dispatch of a step: which kernel, for which layer, how many threads and workgroups,
/// and the words of its uniform (the optimisers use twelve, the others eight and zeros).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedDispatch {
    pub kernel_id: &'static str,
    /// The layer (1-based) it works on; 0 for the optimiser, which updates all of them.
    pub layer: usize,
    pub threads: u32,
    pub workgroups: [u32; 3],
    pub uniform: [u32; UNIFORM_WORDS],
}

pub const UNIFORM_WORDS: usize = 12;

fn planned<const N: usize>(
    kernel_id: &'static str,
    layer: usize,
    threads: usize,
    words: [u32; N],
) -> PlannedDispatch {
    let mut uniform = [0; UNIFORM_WORDS];
    uniform[..N].copy_from_slice(&words);
    let threads = threads as u32;
    PlannedDispatch {
        kernel_id,
        layer,
        threads,
        workgroups: [threads.div_ceil(WORKGROUP).max(1), 1, 1],
        uniform,
    }
}

/// The forward dispatches for `rows` samples.
pub fn forward_plan(net: &Net, rows: usize) -> Vec<PlannedDispatch> {
    let layout = net.layout();
    let (offs, _) = net.act_offsets(rows);
    layout
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            planned(
                "mlp-forward",
                i + 1,
                rows * l.fan_out,
                [
                    rows as u32,
                    l.fan_in as u32,
                    l.fan_out as u32,
                    net.activation_of(i + 1) as u32,
                    l.w_off as u32,
                    l.b_off as u32,
                    offs[i] as u32,
                    offs[i + 1] as u32,
                ],
            )
        })
        .collect()
}

/// Every dispatch of one training step, in the order they run. The optimiser's uniform holds
/// the learning rate of `hyper` and Adam's corrections for step 1; a session rewrites it
/// every step.
pub fn step_plan(net: &Net, hyper: &Hyper, batch: usize) -> Vec<PlannedDispatch> {
    let layout = net.layout();
    let (offs, _) = net.act_offsets(batch);
    let depth = net.depth();
    let mut plan = forward_plan(net, batch);
    plan.push(planned(
        "mlp-loss",
        depth,
        batch,
        [
            batch as u32,
            net.classes() as u32,
            offs[depth] as u32,
            offs[depth] as u32,
            net.loss as u32,
            // The mean is over this many samples and the losses start at 0: a session with
            // gradient accumulation rewrites both per micro-batch (`loss_words`).
            batch as u32,
            0,
            0,
        ],
    ));
    for l in (1..=depth).rev() {
        let lo = layout.layers[l - 1];
        // One workgroup of 64 threads per weight or bias (a reduction over the batch).
        plan.push(planned(
            "mlp-backward-params",
            l,
            lo.fan_out * (lo.fan_in + 1) * WORKGROUP as usize,
            [
                batch as u32,
                lo.fan_in as u32,
                lo.fan_out as u32,
                offs[l - 1] as u32,
                offs[l] as u32,
                lo.w_off as u32,
                lo.b_off as u32,
                0,
            ],
        ));
        if l > 1 {
            plan.push(planned(
                "mlp-backward-input",
                l,
                batch * lo.fan_in,
                [
                    batch as u32,
                    lo.fan_in as u32,
                    lo.fan_out as u32,
                    net.activation_of(l - 1) as u32,
                    lo.w_off as u32,
                    offs[l - 1] as u32,
                    offs[l - 1] as u32,
                    offs[l] as u32,
                ],
            ));
        }
    }
    plan.push(optimiser_dispatch(layout.param_count, hyper, 1));
    plan
}

fn optimiser_dispatch(count: usize, hyper: &Hyper, t: u32) -> PlannedDispatch {
    let f = f32::to_bits;
    match hyper.optimiser {
        Optimiser::Sgd | Optimiser::Momentum => planned(
            "mlp-sgd",
            0,
            count,
            [
                count as u32,
                f(hyper.lr),
                f(hyper.optimiser.momentum()),
                0,
                f(hyper.l1),
                f(hyper.l2),
                0,
                0,
            ],
        ),
        Optimiser::Adam => {
            let (c1, c2) = adam_corrections(t);
            planned(
                "mlp-adam",
                0,
                count,
                [
                    count as u32,
                    f(hyper.lr),
                    f(BETA1),
                    f(BETA2),
                    f(EPSILON),
                    f(c1),
                    f(c2),
                    0,
                    f(hyper.l1),
                    f(hyper.l2),
                    0,
                    0,
                ],
            )
        }
    }
}

/// The loss dispatch's uniform for micro-batch `j` of `accum` in one step: the gradient is
/// divided by the effective batch (`accum · batch`), the losses go to `j · batch`.
pub fn loss_words(net: &Net, batch: usize, accum: usize, j: usize) -> [u32; UNIFORM_WORDS] {
    let (offs, _) = net.act_offsets(batch);
    let depth = net.depth();
    let mut w = [0; UNIFORM_WORDS];
    w[..7].copy_from_slice(&[
        batch as u32,
        net.classes() as u32,
        offs[depth] as u32,
        offs[depth] as u32,
        net.loss as u32,
        (accum.max(1) * batch) as u32,
        (j * batch) as u32,
    ]);
    w
}

/// Memory of one step with gradient accumulation: the activations and deltas a session keeps
/// for one micro-batch, against what one batch of the effective size would need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccumMemory {
    pub micro_batch: usize,
    pub effective_batch: usize,
    /// Activations + deltas for one micro-batch (what the session allocates).
    pub micro_bytes: u64,
    /// Activations + deltas for the whole effective batch at once.
    pub effective_bytes: u64,
}

/// What accumulating `accum` micro-batches of `batch` saves in activation memory.
pub fn accum_memory(net: &Net, batch: usize, accum: usize) -> AccumMemory {
    let effective = batch * accum.max(1);
    AccumMemory {
        micro_batch: batch,
        effective_batch: effective,
        micro_bytes: 2 * activation_bytes(net, batch),
        effective_bytes: 2 * activation_bytes(net, effective),
    }
}

/// Bytes of the largest buffer a session needs for `rows` samples: the activations (the
/// deltas are as large).
pub fn activation_bytes(net: &Net, rows: usize) -> u64 {
    net.act_offsets(rows).1 as u64 * 4
}

/// The largest batch whose activations fit one storage binding of this device: where memory
/// sets the ceiling for this network.
pub fn max_batch(net: &Net, limits: &BufferLimits) -> u64 {
    let per_sample = net.sizes.iter().sum::<usize>().max(1) as u64 * 4;
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
        / per_sample
}

/// What a session trains on.
pub struct SessionConfig<'a> {
    pub net: Net,
    pub hyper: Hyper,
    /// Samples per micro-batch.
    pub batch: usize,
    /// Micro-batches per update (gradient accumulation; 1 = none).
    pub accum: usize,
    /// Initial parameters (see [`Net::init_params`]).
    pub params: &'a [f32],
    /// Training features (rows × inputs) and labels.
    pub features: Vec<f32>,
    pub labels: Vec<u32>,
    /// Batch order (see [`mlp::net::batch_order`]).
    pub order: Vec<u32>,
    /// Rows the evaluation forward pass runs on (rows × inputs); may be empty.
    pub eval_features: &'a [f32],
}

/// One evaluation read back from the GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalReadback {
    /// Training steps completed when the evaluation ran.
    pub step: u64,
    /// Logits of every evaluation row (rows × classes).
    pub logits: Vec<f32>,
    /// Each sample's loss in the last training step (all its micro-batches: `accum · batch`).
    pub batch_losses: Vec<f32>,
    /// The parameters at that step (for drawing the weights).
    pub params: Vec<f32>,
}

enum ReadState {
    Idle,
    Pending,
    Ready(Result<(), String>),
}

struct Pass {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: [u32; 3],
}

/// A network being trained on the GPU. Dropping it destroys its buffers.
pub struct TrainingSession {
    gpu: Rc<Gpu>,
    net: Net,
    hyper: Hyper,
    batch: usize,
    accum: usize,
    features: Vec<f32>,
    labels: Vec<u32>,
    order: Vec<u32>,
    plan: Vec<PlannedDispatch>,
    step_passes: Vec<Pass>,
    eval_passes: Vec<Pass>,
    /// Every buffer of the session, destroyed (and uncounted) when it is dropped.
    _buffers: ResidentBuffers,
    acts: wgpu::Buffer,
    labels_buf: wgpu::Buffer,
    params: wgpu::Buffer,
    losses: wgpu::Buffer,
    eval_acts: wgpu::Buffer,
    staging: wgpu::Buffer,
    opt_uniform: wgpu::Buffer,
    loss_uniform: wgpu::Buffer,
    grads: wgpu::Buffer,
    eval_rows: usize,
    eval_out_off: u64,
    step: u64,
    completed: Arc<AtomicU64>,
    read: Arc<Mutex<ReadState>>,
    read_step: u64,
    x: Vec<f32>,
    y: Vec<u32>,
}

impl TrainingSession {
    /// Creates the buffers, pipelines and bind groups. Fails with a [`GpuError`] when the
    /// device is lost, a shader does not compile or the sizes exceed the device's limits.
    pub async fn new(gpu: Rc<Gpu>, cfg: SessionConfig<'_>) -> Result<Self, GpuError> {
        if gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost before training started".into()));
        }
        let net = cfg.net;
        let width = net.inputs();
        let classes = net.classes();
        let batch = cfg.batch.max(1);
        let accum = cfg.accum.max(1);
        if cfg.labels.is_empty()
            || cfg.features.len() != cfg.labels.len() * width
            || cfg.order.len() != cfg.labels.len()
            || cfg.params.len() != net.layout().param_count
            || net.depth() == 0
        {
            return Err(GpuError::WrongJob);
        }
        let eval_rows = cfg.eval_features.len() / width.max(1);
        let limits = gpu.buffer_limits();
        let ceiling = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        for rows in [batch, eval_rows.max(1)] {
            let bytes = activation_bytes(&net, rows);
            if bytes > ceiling {
                return Err(GpuError::Dispatch(format!(
                    "{rows} rows need {bytes} bytes of activations, more than this device's \
                     {ceiling}-byte storage buffer limit"
                )));
            }
        }
        let max_groups = gpu.limits().max_compute_workgroups_per_dimension;
        let plan = step_plan(&net, &cfg.hyper, batch);
        let eval_plan = forward_plan(&net, eval_rows.max(1));
        if let Some(p) = plan
            .iter()
            .chain(&eval_plan)
            .find(|p| p.workgroups[0] > max_groups)
        {
            return Err(GpuError::Dispatch(format!(
                "{}: {} workgroups exceed maxComputeWorkgroupsPerDimension ({max_groups})",
                p.kernel_id, p.workgroups[0]
            )));
        }
        let mut pipelines: Vec<(&'static str, wgpu::ComputePipeline)> = Vec::new();
        for p in plan.iter().chain(&eval_plan) {
            if pipelines.iter().all(|(id, _)| *id != p.kernel_id) {
                let spec: &'static KernelSpec = kernel(p.kernel_id).ok_or_else(|| {
                    GpuError::Shader(format!("{} is not catalogued", p.kernel_id))
                })?;
                pipelines.push((p.kernel_id, gpu.pipeline(spec).await?));
            }
        }
        let pipeline = |id: &str| {
            pipelines
                .iter()
                .find(|(k, _)| *k == id)
                .map(|(_, p)| p.clone())
                .ok_or(GpuError::WrongJob)
        };

        let device = &gpu.device;
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let mut buffers = ResidentBuffers::default();
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let mut make = |label: &str, bytes: u64, usage| {
            buffers.create(&gpu, label, usage, Err(bytes.max(4).next_multiple_of(4)))
        };
        let n_params = net.layout().param_count as u64;
        let params = make("mlp params", n_params * 4, storage);
        let grads = make("mlp grads", n_params * 4, storage);
        let m = make("mlp m", n_params * 4, storage);
        let v = make("mlp v", n_params * 4, storage);
        let acts = make("mlp acts", activation_bytes(&net, batch), storage);
        let deltas = make("mlp deltas", activation_bytes(&net, batch), storage);
        let labels_buf = make("mlp labels", batch as u64 * 4, storage);
        let losses = make("mlp losses", (accum * batch) as u64 * 4, storage);
        let eval_acts = make(
            "mlp eval acts",
            activation_bytes(&net, eval_rows.max(1)),
            storage,
        );
        let eval_out_bytes = (eval_rows * classes) as u64 * 4;
        let staging = make(
            "mlp readback",
            eval_out_bytes + (accum * batch) as u64 * 4 + n_params * 4,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        gpu.queue
            .write_buffer(&params, 0, bytemuck::cast_slice(cfg.params));
        if eval_rows > 0 {
            gpu.queue.write_buffer(
                &eval_acts,
                0,
                bytemuck::cast_slice(&cfg.eval_features[..eval_rows * width]),
            );
        }

        let mut opt_uniform = None;
        let mut loss_uniform = None;
        let mut build = |p: &PlannedDispatch, acts: &wgpu::Buffer| -> Result<Pass, GpuError> {
            let uniform = buffers.create(
                &gpu,
                p.kernel_id,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                Ok(bytemuck::cast_slice(&p.uniform)),
            );
            if p.layer == 0 {
                opt_uniform = Some(uniform.clone());
            }
            if p.kernel_id == "mlp-loss" {
                loss_uniform = Some(uniform.clone());
            }
            let mut entries: Vec<wgpu::BindGroupEntry> = bindings(p.kernel_id)
                .iter()
                .map(|slot| match slot {
                    Slot::Params => &params,
                    Slot::Grads => &grads,
                    Slot::M => &m,
                    Slot::V => &v,
                    Slot::Acts => acts,
                    Slot::Deltas => &deltas,
                    Slot::Labels => &labels_buf,
                    Slot::Losses => &losses,
                })
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            entries.push(wgpu::BindGroupEntry {
                binding: entries.len() as u32,
                resource: uniform.as_entire_binding(),
            });
            let pipeline = pipeline(p.kernel_id)?;
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(p.kernel_id),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
            Ok(Pass {
                pipeline,
                bind_group,
                workgroups: p.workgroups,
            })
        };
        let step_passes = plan
            .iter()
            .map(|p| build(p, &acts))
            .collect::<Result<Vec<_>, _>>();
        let eval_passes = if eval_rows > 0 {
            eval_plan
                .iter()
                .map(|p| build(p, &eval_acts))
                .collect::<Result<Vec<_>, _>>()
        } else {
            Ok(Vec::new())
        };
        let (oom, validation) = (oom.pop(), validation.pop());
        let failure = match (oom.await, validation.await) {
            (Some(e), _) | (None, Some(e)) => Some(e.to_string()),
            _ => None,
        };
        let (step_passes, eval_passes, opt_uniform, loss_uniform) =
            match (step_passes, eval_passes, opt_uniform, loss_uniform) {
                (Ok(s), Ok(e), Some(u), Some(l)) if failure.is_none() => (s, e, u, l),
                // Dropping `buffers` destroys what was made.
                (Err(e), _, _, _) | (_, Err(e), _, _) => return Err(e),
                _ => {
                    let msg = failure.unwrap_or_else(|| "no optimiser or loss dispatch".into());
                    return Err(if gpu.is_lost() {
                        GpuError::DeviceLost(msg)
                    } else {
                        GpuError::Dispatch(msg)
                    });
                }
            };
        let last = net.act_offsets(eval_rows.max(1)).0[net.depth()] as u64 * 4;
        Ok(Self {
            net,
            hyper: cfg.hyper,
            batch,
            accum,
            features: cfg.features,
            labels: cfg.labels,
            order: cfg.order,
            plan,
            step_passes,
            eval_passes,
            _buffers: buffers,
            acts,
            labels_buf,
            params,
            losses,
            eval_acts,
            staging,
            opt_uniform,
            loss_uniform,
            grads,
            eval_rows,
            eval_out_off: last,
            step: 0,
            completed: Arc::new(AtomicU64::new(0)),
            read: Arc::new(Mutex::new(ReadState::Idle)),
            read_step: 0,
            x: Vec::new(),
            y: Vec::new(),
            gpu,
        })
    }

    /// The dispatches of one step, for showing (kernel id, layer, workgroups).
    pub fn plan(&self) -> &[PlannedDispatch] {
        &self.plan
    }

    pub fn net(&self) -> &Net {
        &self.net
    }

    /// Changes the learning rate from the next step on.
    pub fn set_lr(&mut self, lr: f32) {
        self.hyper.lr = lr;
    }

    /// Steps submitted so far.
    pub fn steps_submitted(&self) -> u64 {
        self.step
    }

    /// Steps the GPU has finished (counted by `on_submitted_work_done`, never waited for).
    pub fn steps_completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }

    /// Micro-batches per update.
    pub fn accum(&self) -> usize {
        self.accum
    }

    /// Submits one training step without waiting for it: one command buffer per micro-batch
    /// (each needs its own samples in the activation buffer, and `write_buffer` lands between
    /// submits), the first clearing the gradients, the last ending with the optimiser.
    pub fn step(&mut self) -> Result<(), GpuError> {
        if self.gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost while training".into()));
        }
        let width = self.net.inputs();
        let k = self.accum;
        let opt = optimiser_dispatch(
            self.net.layout().param_count,
            &self.hyper,
            (self.step + 1).min(u32::MAX as u64) as u32,
        );
        let queue = &self.gpu.queue;
        queue.write_buffer(&self.opt_uniform, 0, bytemuck::cast_slice(&opt.uniform));
        let (last, backward) = self.step_passes.split_last().ok_or(GpuError::WrongJob)?;
        for j in 0..k {
            gather_batch(
                &self.features,
                &self.labels,
                width,
                &self.order,
                self.step * k as u64 + j as u64,
                self.batch,
                &mut self.x,
                &mut self.y,
            );
            queue.write_buffer(&self.acts, 0, bytemuck::cast_slice(&self.x));
            queue.write_buffer(&self.labels_buf, 0, bytemuck::cast_slice(&self.y));
            let words = loss_words(&self.net, self.batch, k, j);
            queue.write_buffer(&self.loss_uniform, 0, bytemuck::cast_slice(&words[..8]));
            let mut encoder = encoder(&self.gpu);
            if j == 0 {
                encoder.clear_buffer(&self.grads, 0, None);
            }
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("mlp step"),
                    timestamp_writes: None,
                });
                let passes = backward.iter().chain((j + 1 == k).then_some(last));
                for p in passes {
                    pass.set_pipeline(&p.pipeline);
                    pass.set_bind_group(0, &p.bind_group, &[]);
                    pass.dispatch_workgroups(p.workgroups[0], p.workgroups[1], p.workgroups[2]);
                }
            }
            queue.submit([encoder.finish()]);
        }
        let done = self.completed.clone();
        queue.on_submitted_work_done(move || {
            done.fetch_add(1, Ordering::SeqCst);
        });
        self.step += 1;
        self.poll();
        Ok(())
    }

    /// Resolves when every step submitted so far has finished on the GPU (for timing in the
    /// browser, where nothing may block).
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

    /// Natively, waits until every submitted step has finished (benchmarks and tests).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<(), GpuError> {
        self.gpu
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| GpuError::Readback(e.to_string()))
    }

    /// Whether the session's device has been lost (wgpu's lost callback fired). A destroyed
    /// device may never report submitted work as done, so a caller waiting for completions
    /// must ask this too.
    pub fn device_lost(&self) -> bool {
        self.gpu.is_lost()
    }

    /// Whether an evaluation readback is on its way.
    pub fn eval_pending(&self) -> bool {
        self.read
            .lock()
            .map(|s| !matches!(*s, ReadState::Idle))
            .unwrap_or(true)
    }

    /// Starts an evaluation (forward pass over the evaluation rows, then an asynchronous map).
    /// Returns false, doing nothing, while the previous one has not been collected.
    pub fn request_eval(&mut self) -> Result<bool, GpuError> {
        if self.gpu.is_lost() {
            return Err(GpuError::DeviceLost("lost while training".into()));
        }
        if self.eval_pending() {
            return Ok(false);
        }
        let mut encoder = encoder(&self.gpu);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("mlp eval"),
                timestamp_writes: None,
            });
            for p in &self.eval_passes {
                pass.set_pipeline(&p.pipeline);
                pass.set_bind_group(0, &p.bind_group, &[]);
                pass.dispatch_workgroups(p.workgroups[0], p.workgroups[1], p.workgroups[2]);
            }
        }
        let out_bytes = (self.eval_rows * self.net.classes()) as u64 * 4;
        if out_bytes > 0 {
            encoder.copy_buffer_to_buffer(
                &self.eval_acts,
                self.eval_out_off,
                &self.staging,
                0,
                out_bytes,
            );
        }
        encoder.copy_buffer_to_buffer(
            &self.losses,
            0,
            &self.staging,
            out_bytes,
            (self.accum * self.batch) as u64 * 4,
        );
        encoder.copy_buffer_to_buffer(
            &self.params,
            0,
            &self.staging,
            out_bytes + (self.accum * self.batch) as u64 * 4,
            self.net.layout().param_count as u64 * 4,
        );
        self.gpu.queue.submit([encoder.finish()]);
        if let Ok(mut s) = self.read.lock() {
            *s = ReadState::Pending;
        }
        self.read_step = self.step;
        let slot = self.read.clone();
        self.staging
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| {
                if let Ok(mut s) = slot.lock() {
                    *s = ReadState::Ready(r.map_err(|e| e.to_string()));
                }
            });
        self.poll();
        Ok(true)
    }

    /// The evaluation, if its readback has arrived (never waits).
    pub fn poll_eval(&mut self) -> Result<Option<EvalReadback>, GpuError> {
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
        let floats: Vec<f32> = {
            let view = self
                .staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            bytemuck::pod_collect_to_vec(&view)
        };
        self.staging.unmap();
        let n = self.eval_rows * self.net.classes();
        let losses = self.accum * self.batch;
        Ok(Some(EvalReadback {
            step: self.read_step,
            logits: floats[..n].to_vec(),
            batch_losses: floats[n..n + losses].to_vec(),
            params: floats[n + losses..n + losses + self.net.layout().param_count].to_vec(),
        }))
    }

    /// Natively: an evaluation now, waiting for it (tests and benchmarks).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn eval_blocking(&mut self) -> Result<EvalReadback, GpuError> {
        if self.eval_pending() {
            self.wait()?;
            let _ = self.poll_eval()?;
        }
        self.request_eval()?;
        self.wait()?;
        self.poll_eval()?
            .ok_or_else(|| GpuError::Readback("no evaluation arrived".into()))
    }

    /// Writes new parameters (for tests that start the GPU and CPU from the same point).
    pub fn write_params(&self, params: &[f32]) {
        self.gpu
            .queue
            .write_buffer(&self.params, 0, bytemuck::cast_slice(params));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlp::{Activation, LossKind};

    #[test]
    fn plan_of_a_two_hidden_layer_net() {
        let net = Net {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Relu,
            loss: LossKind::CrossEntropy,
        };
        let hyper = Hyper {
            lr: 0.1,
            optimiser: Optimiser::Adam,
            l1: 0.0,
            l2: 0.0,
        };
        let plan = step_plan(&net, &hyper, 1024);
        let ids: Vec<&str> = plan.iter().map(|p| p.kernel_id).collect();
        assert_eq!(
            ids,
            [
                "mlp-forward",
                "mlp-forward",
                "mlp-forward",
                "mlp-loss",
                "mlp-backward-params",
                "mlp-backward-input",
                "mlp-backward-params",
                "mlp-backward-input",
                "mlp-backward-params",
                "mlp-adam"
            ]
        );
        assert_eq!(plan[0].workgroups, [256, 1, 1]); // 1024 × 16 / 64
        assert_eq!(plan[3].workgroups, [16, 1, 1]);
        assert_eq!(plan[4].threads, 2 * 17 * 64);
        assert_eq!(plan[4].workgroups, [34, 1, 1]);
        assert_eq!(plan[9].threads, 48 + 272 + 34);
        // The output layer is linear, hidden layers use the chosen activation.
        assert_eq!(plan[2].uniform[3], 0);
        assert_eq!(plan[0].uniform[3], Activation::Relu as u32);
        for p in &plan {
            assert!(bindings(p.kernel_id).len() >= 2, "{}", p.kernel_id);
            assert!(kernel(p.kernel_id).is_some(), "{}", p.kernel_id);
        }
    }

    #[test]
    fn memory_sets_the_batch_ceiling() {
        let net = Net {
            sizes: vec![2, 16, 16, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
        };
        let limits = BufferLimits {
            max_storage_buffer_binding_size: 128 << 20,
            max_buffer_size: 256 << 20,
        };
        assert_eq!(max_batch(&net, &limits), (128 << 20) / (36 * 4));
    }
}
