//! What the browser says about WebGPU, read through `navigator.gpu` directly (wgpu's adapter
//! info is nearly empty on the web). `navigator.gpu` is checked before anything asks wgpu for
//! an adapter, so a browser without WebGPU gets an explanation instead of a panic.

use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The limits the "Your GPU" panel shows, by their WebGPU names.
pub const SHOWN_LIMITS: [&str; 5] = [
    "maxComputeWorkgroupSizeX",
    "maxComputeInvocationsPerWorkgroup",
    "maxStorageBufferBindingSize",
    "maxBufferSize",
    "maxComputeWorkgroupStorageSize",
];
/// Limits given in bytes (shown as KiB/MiB).
pub const BYTE_LIMITS: [&str; 3] = [
    "maxStorageBufferBindingSize",
    "maxBufferSize",
    "maxComputeWorkgroupStorageSize",
];
/// The optional features the playground uses.
pub const SHOWN_FEATURES: [&str; 3] = ["timestamp-query", "shader-f16", "subgroups"];

/// Why WebGPU cannot be used.
#[derive(Clone, Debug, PartialEq)]
pub enum Unavailable {
    InsecureContext,
    NoApi,
    NoAdapter,
    Failed(String),
}

/// An adapter as the browser describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterReport {
    pub vendor: String,
    pub architecture: String,
    pub device: String,
    pub description: String,
    pub is_software: bool,
    pub limits: Vec<(&'static str, Option<f64>)>,
    pub features: Vec<(&'static str, bool)>,
    pub subgroup_sizes: Option<(u32, u32)>,
    /// Chrome's experimental matrix units from WGSL (`chromium-experimental-subgroup-matrix`):
    /// None where the adapter does not offer them, else its tile configurations.
    pub subgroup_matrix: Option<Vec<SubgroupMatrixConfig>>,
}

/// One tile shape the browser offers for subgroup matrices (`GPUAdapterInfo.subgroupMatrixConfigs`).
#[derive(Clone, Debug, PartialEq)]
pub struct SubgroupMatrixConfig {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub component: String,
    pub result: String,
}

impl std::fmt::Display for SubgroupMatrixConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}×{}×{} {} → {}",
            self.m, self.n, self.k, self.component, self.result
        )
    }
}

/// The feature Chrome names its subgroup matrices by.
pub const SUBGROUP_MATRIX: &str = "chromium-experimental-subgroup-matrix";

/// The configurations listed in `info.subgroupMatrixConfigs` (entries without whole numbers
/// and type names are left out).
fn subgroup_matrix_configs(info: &JsValue) -> Vec<SubgroupMatrixConfig> {
    let list = get(info, "subgroupMatrixConfigs");
    if !Array::is_array(&list) {
        return Vec::new();
    }
    Array::from(&list)
        .iter()
        .filter_map(|c| {
            let dim = |k: &str| get(&c, k).as_f64().filter(|v| *v >= 1.0).map(|v| v as u32);
            Some(SubgroupMatrixConfig {
                m: dim("M")?,
                n: dim("N")?,
                k: dim("K")?,
                component: get(&c, "componentType").as_string()?,
                result: get(&c, "resultComponentType").as_string()?,
            })
        })
        .collect()
}

impl AdapterReport {
    /// A short name for the software notice: "SwiftShader", or whatever the adapter says.
    pub fn display_name(&self) -> String {
        [&self.description, &self.architecture, &self.vendor]
            .into_iter()
            .find(|s| !s.is_empty())
            .cloned()
            .unwrap_or_default()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum WebGpuStatus {
    Checking,
    Unavailable(Unavailable),
    Available(AdapterReport),
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn get_string(obj: &JsValue, key: &str) -> String {
    get(obj, key).as_string().unwrap_or_default()
}

async fn call_async(obj: &JsValue, method: &str, args: &Array) -> Result<JsValue, String> {
    let f: Function = get(obj, method)
        .dyn_into()
        .map_err(|_| format!("{method} is not a function"))?;
    let promise: Promise = f
        .apply(obj, args)
        .map_err(js_error)?
        .dyn_into()
        .map_err(|_| format!("{method} did not return a promise"))?;
    JsFuture::from(promise).await.map_err(js_error)
}

fn js_error(e: JsValue) -> String {
    e.as_string()
        .or_else(|| get(&e, "message").as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Asks the browser for an adapter and describes it.
pub async fn probe() -> WebGpuStatus {
    let global = js_sys::global();
    let navigator = get(&global, "navigator");
    let gpu = get(&navigator, "gpu");
    if gpu.is_undefined() || gpu.is_null() {
        let secure = get(&global, "isSecureContext").as_bool().unwrap_or(true);
        return WebGpuStatus::Unavailable(if secure {
            Unavailable::NoApi
        } else {
            Unavailable::InsecureContext
        });
    }
    let options = Object::new();
    let _ = Reflect::set(
        &options,
        &"powerPreference".into(),
        &"high-performance".into(),
    );
    let adapter = match call_async(&gpu, "requestAdapter", &Array::of1(&options)).await {
        Ok(a) if !a.is_null() && !a.is_undefined() => a,
        Ok(_) => return WebGpuStatus::Unavailable(Unavailable::NoAdapter),
        Err(e) => return WebGpuStatus::Unavailable(Unavailable::Failed(e)),
    };
    let mut info = get(&adapter, "info");
    if info.is_undefined() {
        // Older Chromium exposed the info only through a method.
        info = call_async(&adapter, "requestAdapterInfo", &Array::new())
            .await
            .unwrap_or(JsValue::UNDEFINED);
    }
    let limits_obj = get(&adapter, "limits");
    let features_obj = get(&adapter, "features");
    let has_feature = |name: &str| -> bool {
        get(&features_obj, "has")
            .dyn_into::<Function>()
            .ok()
            .and_then(|f| f.call1(&features_obj, &name.into()).ok())
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    let vendor = get_string(&info, "vendor");
    let architecture = get_string(&info, "architecture");
    let device = get_string(&info, "device");
    let description = get_string(&info, "description");
    let fallback = get(&info, "isFallbackAdapter").as_bool().unwrap_or(false)
        || get(&adapter, "isFallbackAdapter")
            .as_bool()
            .unwrap_or(false);
    let is_software = fallback
        || gpu_runtime::looks_like_software(&format!(
            "{vendor} {architecture} {device} {description}"
        ));
    let sub_min = get(&info, "subgroupMinSize").as_f64();
    let sub_max = get(&info, "subgroupMaxSize").as_f64();
    WebGpuStatus::Available(AdapterReport {
        limits: SHOWN_LIMITS
            .iter()
            .map(|&l| (l, get(&limits_obj, l).as_f64()))
            .collect(),
        features: SHOWN_FEATURES
            .iter()
            .map(|&f| (f, has_feature(f)))
            .collect(),
        subgroup_sizes: sub_min.zip(sub_max).map(|(a, b)| (a as u32, b as u32)),
        subgroup_matrix: has_feature(SUBGROUP_MATRIX).then(|| subgroup_matrix_configs(&info)),
        vendor,
        architecture,
        device,
        description,
        is_software,
    })
}

/// Whether the browser's WGSL compiler offers a language feature
/// (`navigator.gpu.wgslLanguageFeatures`, e.g. `packed_4x8_integer_dot_product`); false where
/// there is no WebGPU or no such set.
pub fn wgsl_language_feature(name: &str) -> bool {
    let gpu = get(&get(&js_sys::global(), "navigator"), "gpu");
    if gpu.is_undefined() || gpu.is_null() {
        return false;
    }
    let set = get(&gpu, "wgslLanguageFeatures");
    get(&set, "has")
        .dyn_into::<Function>()
        .ok()
        .and_then(|f| f.call1(&set, &name.into()).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}
