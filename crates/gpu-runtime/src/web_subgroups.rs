//! WebGPU's `subgroups` feature in a browser, which wgpu 30 cannot request there: its web
//! backend maps only some features to `GPUFeatureName`s (gfx-rs/wgpu#5555), and naga 30
//! rejects the `enable subgroups;` directive the browser's compiler requires.
//!
//! What the runtime does instead, in the browser only:
//! - while wgpu asks for the device (the JS `requestDevice` call happens synchronously inside
//!   `Adapter::request_device`), `GPUAdapter.prototype.requestDevice` is wrapped so that the
//!   request also names `subgroups` when that adapter offers it, and restored right after;
//! - the device's own feature list (`GPUDevice.features`) then says whether it was granted,
//!   and [`crate::Gpu::features`] reports `SUBGROUP` from that;
//! - a kernel that needs subgroups is compiled with `enable subgroups;` put in front of its
//!   first line ([`directive`]), so line numbers stay those of the file.
//!
//! Natively none of this exists: wgpu requests `SUBGROUP` itself and naga takes the WGSL as is.

/// What is put in front of a subgroup kernel's first line in the browser. No newline, so
/// compiler messages keep the file's line numbers (columns on line 1 shift by its length).
pub const DIRECTIVE: &str = "enable subgroups; ";

/// The WGSL the browser compiles for a kernel that needs `features`: `wgsl` itself, or with
/// [`DIRECTIVE`] in front when the kernel uses subgroups and does not enable them itself.
pub fn directive(wgsl: &str, features: wgpu::Features) -> Option<String> {
    (features.contains(wgpu::Features::SUBGROUP) && !wgsl.contains("enable subgroups"))
        .then(|| format!("{DIRECTIVE}{wgsl}"))
}

#[cfg(target_arch = "wasm32")]
mod js {
    use wasm_bindgen::prelude::*;

    // Kept in a snippet of its own (not inline in the page), so the strict CSP holds. The
    // wrapper never throws: a failure to read the adapter's features requests what wgpu asked.
    #[wasm_bindgen(inline_js = "
let original = null;
export function subgroups_begin() {
  const proto = globalThis.GPUAdapter && GPUAdapter.prototype;
  if (!proto || original) return;
  original = proto.requestDevice;
  const call = original;
  proto.requestDevice = function (desc) {
    const d = Object.assign({}, desc);
    try {
      const wanted = Array.from(d.requiredFeatures || []);
      if (this.features && this.features.has('subgroups') && !wanted.includes('subgroups')) {
        wanted.push('subgroups');
      }
      d.requiredFeatures = wanted;
    } catch (e) {}
    return call.call(this, d);
  };
}
export function subgroups_end() {
  if (original) {
    GPUAdapter.prototype.requestDevice = original;
    original = null;
  }
}
export function device_has(device, name) {
  try { return !!(device && device.features && device.features.has(name)); } catch (e) { return false; }
}
")]
    extern "C" {
        pub fn subgroups_begin();
        pub fn subgroups_end();
        pub fn device_has(device: &JsValue, name: &str) -> bool;
    }
}

/// Asks for `device` with `subgroups` added where the adapter offers it: `request` must make
/// the JS `requestDevice` call synchronously (wgpu's `Adapter::request_device` does, and
/// returns a future for the answer).
#[cfg(target_arch = "wasm32")]
pub fn with_subgroups<T>(request: impl FnOnce() -> T) -> T {
    js::subgroups_begin();
    let out = request();
    js::subgroups_end();
    out
}

/// Whether the browser granted `subgroups` to this device.
#[cfg(target_arch = "wasm32")]
pub fn granted(device: &wgpu::Device) -> bool {
    device
        .as_webgpu()
        .is_some_and(|d| js::device_has(d.as_ref(), "subgroups"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_subgroup_kernels_get_the_directive_and_only_once() {
        let wgsl = "// a kernel\nfn main() {}\n";
        assert_eq!(directive(wgsl, wgpu::Features::empty()), None);
        assert_eq!(directive(wgsl, wgpu::Features::SHADER_F16), None);
        let with = directive(wgsl, wgpu::Features::SUBGROUP).unwrap_or_default();
        assert_eq!(with, format!("enable subgroups; {wgsl}"));
        // Same line count: compiler messages keep the file's line numbers.
        assert_eq!(with.lines().count(), wgsl.lines().count());
        let already = "enable subgroups;\nfn main() {}\n";
        assert_eq!(directive(already, wgpu::Features::SUBGROUP), None);
    }
}
