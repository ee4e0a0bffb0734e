//! The page's one wgpu device, created on first use and replaced when it is lost.

use std::cell::RefCell;
use std::rc::Rc;

use gpu_runtime::{Gpu, GpuError};

thread_local! {
    static GPU: RefCell<Option<Rc<Gpu>>> = const { RefCell::new(None) };
}

/// The shared device, requesting a new one if there is none or the last one was lost.
/// Callers must have checked that WebGPU is available (see `probe`). `software` is what the
/// browser said about the adapter (wgpu's own adapter info is nearly empty on the web).
/// The flag is true when the previous device had been lost and this is a fresh one, so the
/// page can say so.
pub async fn gpu(software: bool) -> Result<(Rc<Gpu>, bool), GpuError> {
    let previous = GPU.with(|c| c.borrow().clone());
    let replaced_lost = match previous {
        Some(g) if !g.is_lost() => return Ok((g, false)),
        Some(_) => true,
        None => false,
    };
    let mut g = Gpu::request().await?;
    // Two widgets may ask at once (the training view does on mount); whichever request ends
    // first wins and the others share its device. Otherwise the page would hold two devices
    // and losing "the" device would not reach a widget holding the other.
    if let Some(winner) = GPU.with(|c| c.borrow().clone()).filter(|w| !w.is_lost()) {
        return Ok((winner, replaced_lost));
    }
    if software {
        g.mark_software();
    }
    let g = Rc::new(g);
    GPU.with(|c| *c.borrow_mut() = Some(g.clone()));
    Ok((g, replaced_lost))
}

/// Drops the device (after a loss) so the next call starts a fresh one.
pub fn forget() {
    GPU.with(|c| *c.borrow_mut() = None);
}

/// Test hook: destroys the current device for real, to check that the page notices the loss
/// (through wgpu's lost callback) and recovers.
pub fn destroy_device() -> bool {
    GPU.with(|c| c.borrow().as_ref().map(|g| g.destroy()).is_some())
}

thread_local! {
    /// GFLOP/s each stage measured on this page's device (`page_models::run_status`), for the
    /// next run's estimate.
    static RATES: RefCell<Vec<(String, f64)>> = const { RefCell::new(Vec::new()) };
}

/// The rate stage `id` measured here, if a run long enough to trust has finished.
pub fn measured_rate(id: &str) -> Option<f64> {
    RATES.with(|r| r.borrow().iter().find(|(s, _)| s == id).map(|(_, g)| *g))
}

/// Remembers what stage `id` measured (the latest run counts).
pub fn remember_rate(id: &str, gflops: f64) {
    RATES.with(|r| {
        let mut r = r.borrow_mut();
        r.retain(|(s, _)| s != id);
        r.push((id.to_string(), gflops));
    });
}
