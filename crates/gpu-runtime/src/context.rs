//! One GPU device: how it is requested (natively or in the browser), what it reports about
//! itself, and how a lost device is noticed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::workload::BufferLimits;

/// Errors of the runtime, each meant to be shown to a user as it is.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuError {
    /// No adapter was offered (no WebGPU, blocklisted driver, no Vulkan driver natively).
    NoAdapter,
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// The device was lost (driver reset, tab in background for long, GPU removed).
    DeviceLost(String),
    /// WGSL failed to compile or a pipeline was invalid.
    Shader(String),
    /// Validation error while running.
    Dispatch(String),
    /// The device could not allocate a buffer the run needs (sizes within the limits, but not
    /// enough memory); the run's other buffers are destroyed, the device stays usable.
    OutOfMemory(String),
    /// Reading results back failed.
    Readback(String),
    /// The kernel needs features this device lacks.
    MissingFeatures(String),
    /// The job does not match the kernel's family.
    WrongJob,
    /// The problem does not fit the device's limits.
    Size(crate::workload::SizeError),
    /// The run was cancelled; the work it had submitted has finished, nothing is queued.
    Cancelled,
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoAdapter => write!(f, "no GPU adapter is available"),
            GpuError::RequestDevice(e) => write!(f, "the GPU device could not be created: {e}"),
            GpuError::DeviceLost(e) => write!(f, "the GPU device was lost: {e}"),
            GpuError::Shader(e) => write!(f, "shader error: {e}"),
            GpuError::Dispatch(e) => write!(f, "GPU error while running: {e}"),
            GpuError::OutOfMemory(e) => write!(f, "the GPU is out of memory: {e}"),
            GpuError::Readback(e) => write!(f, "reading results back failed: {e}"),
            GpuError::MissingFeatures(e) => write!(f, "the device lacks features: {e}"),
            GpuError::WrongJob => write!(f, "this kernel cannot run that job"),
            GpuError::Size(e) => write!(f, "the problem does not fit the device: {e:?}"),
            GpuError::Cancelled => write!(f, "the run was cancelled"),
        }
    }
}

impl std::error::Error for GpuError {}

/// Whether an adapter's self-description names a software implementation (a CPU running the
/// GPU API): Mesa's llvmpipe/lavapipe, Google's SwiftShader, Microsoft's WARP.
pub fn looks_like_software(description: &str) -> bool {
    let lower = description.to_lowercase();
    [
        "llvmpipe",
        "lavapipe",
        "swiftshader",
        "warp",
        "software",
        "softpipe",
    ]
    .iter()
    .any(|s| lower.contains(s))
}

/// What the runtime knows about the adapter behind a device.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    /// A CPU implementing the GPU API (lavapipe/llvmpipe, SwiftShader, WARP): its speed is a
    /// CPU's, and the app says so.
    pub is_software: bool,
    pub subgroup_min_size: u32,
    pub subgroup_max_size: u32,
}

impl AdapterSummary {
    fn from_info(info: &wgpu::AdapterInfo) -> Self {
        let is_software = info.device_type == wgpu::DeviceType::Cpu
            || looks_like_software(&format!("{} {}", info.name, info.driver));
        Self {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
            is_software,
            subgroup_min_size: info.subgroup_min_size,
            subgroup_max_size: info.subgroup_max_size,
        }
    }
}

/// A device with its queue, its compiled pipelines and a flag set when it is lost.
pub struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    adapter: AdapterSummary,
    lost: Arc<AtomicBool>,
    /// Compiled pipelines by [`crate::KernelSpec::pipeline_key`] and whether they were
    /// compiled with wgpu's runtime checks.
    pub(crate) pipelines: RefCell<HashMap<(u64, bool), wgpu::ComputePipeline>>,
    /// Natively: whether the catalogue's own kernels get wgpu's runtime checks too (off by
    /// default, see [`Gpu::compiles_checked`]); benchmarks turn it on to measure the checked
    /// path a browser takes ([`Gpu::set_runtime_checks`]).
    pub(crate) catalogue_checks: std::cell::Cell<bool>,
    /// In a browser: the device was granted WebGPU's `subgroups`, which wgpu cannot request
    /// there itself (`crate::web_subgroups`). Always false natively, where wgpu reports it.
    web_subgroups: bool,
    /// Why this device has no Tensor Core kernel (`matmul-tensor-core`), or `None` where it
    /// has one of them ([`tensor_cores`]).
    tensor_cores_missing: Option<String>,
    /// The adapter's cooperative-matrix configurations (empty where it has none).
    coop_configs: Vec<wgpu::CooperativeMatrixProperties>,
    /// Submissions made through [`Gpu::submit`], and those the queue has reported done: a
    /// run can tell whether earlier work is really queued before it says it waits for some.
    submitted: AtomicU64,
    finished: Arc<AtomicU64>,
}

/// Optional features the playground uses when present; none is required.
fn wanted_features() -> wgpu::Features {
    wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP
}

/// Whether the adapter offers the cooperative-matrix configuration the Tensor Core kernels
/// are written for: T×T×T tiles, f16 A and B, f32 accumulator and result.
pub fn offers_tensor_core_tile(configs: &[wgpu::CooperativeMatrixProperties], t: u32) -> bool {
    configs.iter().any(|c| {
        (c.m_size, c.n_size, c.k_size) == (t, t, t)
            && c.ab_type == wgpu::CooperativeScalarType::F16
            && c.cr_type == wgpu::CooperativeScalarType::F32
    })
}

/// Whether an adapter can run the Tensor Core stage: `Ok` with the features to request for
/// it, or `Err` saying what it lacks (shown where the stage is skipped, never silently).
///
/// wgpu's cooperative matrices are native only (a browser's WebGPU has no such feature in
/// wgpu 30) and experimental: wgpu offers `EXPERIMENTAL_COOPERATIVE_MATRIX` on Vulkan where
/// the driver has VK_KHR_cooperative_matrix and `vulkanMemoryModelDeviceScope`, and lists the
/// driver's subgroup-scoped configurations of 8 or 16.
/// Cooperative-matrix configurations as a reason or a log names them: "16x16x16 F16->F32, …".
pub fn coop_configs_text(configs: &[wgpu::CooperativeMatrixProperties]) -> String {
    configs
        .iter()
        .map(|c| {
            format!(
                "{}x{}x{} {:?}->{:?}",
                c.m_size, c.n_size, c.k_size, c.ab_type, c.cr_type
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn tensor_cores(
    features: wgpu::Features,
    configs: &[wgpu::CooperativeMatrixProperties],
) -> Result<wgpu::Features, String> {
    let coop = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
    if cfg!(target_arch = "wasm32") {
        return Err(
            "wgpu's cooperative matrices are native only: a browser's WebGPU \
                    offers them to wgpu 30 under no name"
                .into(),
        );
    }
    if !features.contains(coop) {
        return Err(if configs.is_empty() {
            "the adapter offers no cooperative matrices (Vulkan: no VK_KHR_cooperative_matrix \
             configuration wgpu can use)"
                .into()
        } else {
            format!(
                "the adapter lists cooperative matrices ({}) but wgpu does not offer them \
                 (Vulkan: vulkanMemoryModelDeviceScope missing)",
                coop_configs_text(configs)
            )
        });
    }
    if ![8, 16].iter().any(|&t| offers_tensor_core_tile(configs, t)) {
        return Err(format!(
            "the adapter's cooperative matrices ({}) include no 16x16x16 or 8x8x8 \
             f16->f32 tile",
            coop_configs_text(configs)
        ));
    }
    let also = wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP;
    if !features.contains(also) {
        return Err(format!(
            "the adapter lacks {:?}, which the Tensor Core stage needs beside cooperative \
             matrices",
            also - features
        ));
    }
    Ok(coop | also)
}

impl Gpu {
    /// Requests the high-performance adapter and a device with every optional feature the
    /// adapter has and the adapter's own limits (so large problems are not capped by defaults).
    pub async fn request() -> Result<Self, GpuError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        if cfg!(not(target_arch = "wasm32")) {
            // Honour WGPU_BACKEND / WGPU_ADAPTER_NAME natively (tests pick a software adapter).
            desc = desc.with_env();
        }
        let instance = wgpu::Instance::new(desc);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|_| GpuError::NoAdapter)?;
        let mut features = adapter.features() & wanted_features();
        let coop_configs = adapter.cooperative_matrix_properties();
        let tensor = tensor_cores(adapter.features(), &coop_configs);
        let experimental = match &tensor {
            Ok(needs) => {
                features |= *needs;
                // SAFETY: wgpu asks the caller to accept that its experimental features may
                // have bugs with undefined behaviour. Only the Tensor Core stage's shader
                // uses cooperative matrices; it is checked against the CPU on odd sizes by
                // the native tests wherever a driver offers them, and the feature is asked
                // for only natively, where the adapter offers the tile it is written for.
                unsafe { wgpu::ExperimentalFeatures::enabled() }
            }
            Err(_) => wgpu::ExperimentalFeatures::disabled(),
        };
        let request = || {
            adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("gpu-playground"),
                required_features: features,
                required_limits: adapter.limits(),
                experimental_features: experimental,
                ..Default::default()
            })
        };
        // In a browser the request also names `subgroups` where the adapter offers it.
        #[cfg(target_arch = "wasm32")]
        let request = crate::web_subgroups::with_subgroups(request);
        #[cfg(not(target_arch = "wasm32"))]
        let request = request();
        let (device, queue) = request
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        #[cfg(target_arch = "wasm32")]
        let web_subgroups = crate::web_subgroups::granted(&device);
        #[cfg(not(target_arch = "wasm32"))]
        let web_subgroups = false;

        let lost = Arc::new(AtomicBool::new(false));
        let flag = lost.clone();
        device.set_device_lost_callback(move |_reason, _msg| flag.store(true, Ordering::SeqCst));
        // Errors outside an error scope must never abort the page (wgpu's default handler
        // panics); every run uses scopes, so anything here is logged, not fatal.
        device.on_uncaptured_error(Arc::new(|e| log_uncaptured(&e.to_string())));

        Ok(Self {
            device,
            queue,
            adapter: AdapterSummary::from_info(&adapter.get_info()),
            lost,
            pipelines: RefCell::new(HashMap::new()),
            catalogue_checks: std::cell::Cell::new(false),
            web_subgroups,
            tensor_cores_missing: tensor.err(),
            coop_configs,
            submitted: AtomicU64::new(0),
            finished: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Submits `commands`, counting them until the queue reports them done.
    pub(crate) fn submit(
        &self,
        commands: impl IntoIterator<Item = wgpu::CommandBuffer>,
    ) -> wgpu::SubmissionIndex {
        let index = self.queue.submit(commands);
        self.submitted.fetch_add(1, Ordering::SeqCst);
        let finished = self.finished.clone();
        self.queue.on_submitted_work_done(move || {
            finished.fetch_add(1, Ordering::SeqCst);
        });
        index
    }

    /// Whether every submission made through this device has been reported done. In the
    /// browser the reports arrive on their own; natively only when the device is polled, so
    /// there this may say false after the work is done.
    pub fn idle(&self) -> bool {
        self.finished.load(Ordering::SeqCst) >= self.submitted.load(Ordering::SeqCst)
    }

    /// Why the Tensor Core stage cannot run on this device (`None` where it can): what the
    /// adapter lacks, in words, for a skipped stage's report.
    pub fn tensor_cores_missing(&self) -> Option<&str> {
        self.tensor_cores_missing.as_deref()
    }

    /// The adapter's cooperative-matrix configurations, as wgpu lists them.
    pub fn cooperative_matrix_configs(&self) -> &[wgpu::CooperativeMatrixProperties] {
        &self.coop_configs
    }

    /// Why `kernel` cannot run on this device, or `None` where it can: the features it needs
    /// that the device lacks, the Tensor Core kernels' own reason where that is one, and for
    /// those kernels the tile the adapter must offer.
    pub fn cannot_run(&self, kernel: &crate::KernelSpec) -> Option<String> {
        let missing = kernel.required_features - self.features();
        if !missing.is_empty() {
            return match &self.tensor_cores_missing {
                Some(why) if missing.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) => {
                    Some(why.clone())
                }
                _ => Some(format!("the device lacks {missing:?}")),
            };
        }
        let t = kernel.cooperative_tile()?;
        (!offers_tensor_core_tile(&self.coop_configs, t)).then(|| {
            format!(
                "the adapter's cooperative matrices include no {t}x{t}x{t} f16->f32 tile \
                 (it has {})",
                coop_configs_text(&self.coop_configs)
            )
        })
    }

    /// Natively, for benchmarks and tests: `true` compiles later pipelines of the catalogue's
    /// own kernels WITH wgpu's runtime checks, as every kernel is in a browser; `false` (the
    /// default) compiles them trusted again. Edited kernels are checked either way. The
    /// pipeline cache is keyed by the setting too, so no pipeline crosses over.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn set_runtime_checks(&self, on: bool) {
        self.catalogue_checks.set(on);
    }

    /// Whether `kernel` is compiled with wgpu's runtime checks: array indices clamped
    /// (naga's `Restrict` policy; with them a clamp on every workgroup-memory read of a
    /// matmul's inner loop) and an iteration counter added to every loop.
    ///
    /// - In a browser, always: WebGPU checks every shader, so this changes nothing there.
    /// - An edited kernel ([`KernelSource::Text`]: a learner's source, a puzzle, a scratch
    ///   kernel, a test's deliberately broken copy), always: nothing proves its indices in
    ///   range or its loops finite, and out-of-range workgroup or private-array accesses
    ///   without the clamps are undefined behaviour on the GPU.
    /// - The catalogue's own kernels ([`KernelSource::Built`]: the WGSL files in `shaders/`,
    ///   compiled into the binary; a `fn()` cannot carry text made at run time), natively,
    ///   not: each one's indices are in range by construction for the buffers its family
    ///   lays out (padding, grids), and the every-kernel tests check them on odd sizes
    ///   against the CPU reference through this same path. The checks cost them 13–29 % at
    ///   4096³ on an H200 (docs/benchmarks.md, "naga vs Tint on the same WGSL").
    ///
    /// [`KernelSource::Text`]: crate::KernelSource::Text
    /// [`KernelSource::Built`]: crate::KernelSource::Built
    pub fn compiles_checked(&self, kernel: &crate::KernelSpec) -> bool {
        cfg!(target_arch = "wasm32")
            || self.catalogue_checks.get()
            || !matches!(kernel.source, crate::KernelSource::Built(_))
    }

    /// Pipelines compiled and cached so far (for tests of the cache).
    pub fn cached_pipelines(&self) -> usize {
        self.pipelines.borrow().len()
    }

    /// Native convenience for tests and benchmarks.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn request_blocking() -> Result<Self, GpuError> {
        pollster::block_on(Self::request())
    }

    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    /// The device's features: wgpu's list, plus `SUBGROUP` where a browser granted it.
    pub fn features(&self) -> wgpu::Features {
        let mut f = self.device.features();
        if self.web_subgroups {
            f |= wgpu::Features::SUBGROUP;
        }
        f
    }

    /// The WGSL this device compiles for a kernel with source `wgsl` that needs `features`:
    /// `wgsl`, or in a browser with `enable subgroups;` in front (`crate::web_subgroups`).
    pub(crate) fn source_for(&self, wgsl: String, features: wgpu::Features) -> String {
        if self.web_subgroups {
            if let Some(with) = crate::web_subgroups::directive(&wgsl, features) {
                return with;
            }
        }
        wgsl
    }

    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    pub fn buffer_limits(&self) -> BufferLimits {
        BufferLimits::from(&self.device.limits())
    }

    /// Records that the adapter is a software one when the platform knows better than wgpu's
    /// adapter info (in the browser, `GPUAdapterInfo` says so; wgpu's info is nearly empty).
    pub fn mark_software(&mut self) {
        self.adapter.is_software = true;
    }

    /// True once the device is lost; the app then drops this `Gpu` and requests a new one.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Destroys the device for real (`GPUDevice.destroy()` in the browser): tests use it to
    /// check that the loss is noticed the way a driver reset would be — through wgpu's
    /// device-lost callback, never by setting the flag here — reported and recovered from.
    pub fn destroy(&self) {
        self.device.destroy();
        // Natively the callback fires once the device is maintained with its queue drained;
        // wait for that, so the flag is up before the next call, as it is in the browser
        // once the `lost` promise settles.
        #[cfg(not(target_arch = "wasm32"))]
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
    }
}

#[cfg(target_arch = "wasm32")]
fn log_uncaptured(msg: &str) {
    web_sys::console::warn_1(&format!("GPU Playground: uncaptured GPU error: {msg}").into());
}

#[cfg(not(target_arch = "wasm32"))]
fn log_uncaptured(msg: &str) {
    eprintln!("uncaptured GPU error: {msg}");
}
