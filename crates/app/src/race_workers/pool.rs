//! The page's CPU workers (`www/cpu-worker.js`, each with its own copy of this wasm module):
//! created on first use, reused by later races, terminated on Cancel. Inputs and outputs
//! travel by `postMessage` (no SharedArrayBuffer, so no cross-origin isolation headers are
//! needed), and the time those copies take is measured and reported.

use std::cell::RefCell;
use std::rc::Rc;

use futures_channel::oneshot;
use js_sys::{Array, Float32Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

use cpu_kernels::conv::ConvShape;
use cpu_kernels::conv_variants::CpuConvVariant;
use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::CpuVariant;

use page_models::race::params::{chunk_rows, split_rows};

/// Relative to the page, so the site works from any sub-path. Each worker loads the module
/// the page runs: the whole app's, or the embed module's (`cargo xtask dist` writes the second
/// worker file, naming the embed module's glue).
const WORKER_URL: &str = if cfg!(feature = "lessons") {
    "./cpu-worker.js"
} else {
    "./cpu-worker-embed.js"
};

/// Why the CPU side did not finish.
#[derive(Clone, Debug, PartialEq)]
pub enum CpuError {
    /// Cancel was pressed (the workers were terminated).
    Cancelled,
    /// A worker could not start or failed; the message is the browser's.
    Worker(String),
}

/// A finished CPU run and where its time went (milliseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct CpuRun {
    pub c: Vec<f32>,
    pub workers: u32,
    /// From the first input copy to the last row of C in place.
    pub total_ms: f64,
    /// The parts below follow the worker whose result arrived last and add up to `total_ms`.
    /// Inputs copied out of the page's memory, posted and copied into the worker's.
    pub copy_in_ms: f64,
    /// The multiply itself.
    pub compute_ms: f64,
    /// Results posted by the worker, and put in place in the page after the last arrived.
    pub copy_out_ms: f64,
    /// From the worker posting its result to the page handling the message: the message's
    /// transit plus any time the page's main thread was busy.
    pub wait_ms: f64,
    /// Which module computed it (the worker's report; see [`CpuKernel`]).
    pub kernel: CpuKernel,
}

/// Where a worker's multiply ran: `www/cpu-worker.js` loads the race's kernel module with
/// relaxed SIMD where the browser accepts it, else the plain SIMD128 one; anything else (other
/// variants, the conv race, or no kernel module) runs in the app's own module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuKernel {
    /// `kernels/race_kernel_relaxed.wasm`: `f32x4.relaxed_madd`.
    Relaxed,
    /// `kernels/race_kernel_simd.wasm`: a multiply, then an add.
    Simd,
    /// The app's module (`CpuRowJob`, `CpuConvJob`).
    App,
}

impl CpuKernel {
    /// The worker's name for it (`kernel` in its messages); unknown names are the app's.
    pub fn from_id(id: &str) -> Self {
        match id {
            "relaxed" => CpuKernel::Relaxed,
            "simd" => CpuKernel::Simd,
            _ => CpuKernel::App,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            CpuKernel::Relaxed => "relaxed",
            CpuKernel::Simd => "simd",
            CpuKernel::App => "app",
        }
    }
}

#[derive(Default)]
struct SlotState {
    ready: bool,
    ready_tx: Option<oneshot::Sender<Result<(), String>>>,
    run: f64,
    progress: Option<Rc<dyn Fn(usize, u32)>>,
    index: usize,
    done_tx: Option<oneshot::Sender<Result<JsValue, String>>>,
}

struct Slot {
    worker: Worker,
    state: Rc<RefCell<SlotState>>,
    _onmessage: Closure<dyn FnMut(MessageEvent)>,
    _onerror: Closure<dyn FnMut(ErrorEvent)>,
}

thread_local! {
    static POOL: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
    static RUN: RefCell<f64> = const { RefCell::new(0.0) };
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn now_abs() -> f64 {
    let global = js_sys::global();
    let perf = get(&global, "performance");
    get(&perf, "timeOrigin").as_f64().unwrap_or(0.0) + super::worker_api::now_ms()
}

fn new_slot() -> Result<Slot, String> {
    let opts = WorkerOptions::new();
    opts.set_type(WorkerType::Module);
    let worker = Worker::new_with_options(WORKER_URL, &opts)
        .map_err(|e| format!("{:?}", get(&e, "message").as_string().unwrap_or_default()))?;
    let state = Rc::new(RefCell::new(SlotState::default()));
    let st = state.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let kind = get(&data, "type").as_string().unwrap_or_default();
        let mut s = st.borrow_mut();
        match kind.as_str() {
            "ready" => {
                s.ready = true;
                if let Some(tx) = s.ready_tx.take() {
                    let _ = tx.send(Ok(()));
                }
            }
            "progress" if get(&data, "run").as_f64() == Some(s.run) => {
                let done = get(&data, "done").as_f64().unwrap_or(0.0) as u32;
                let (cb, index) = (s.progress.clone(), s.index);
                drop(s);
                if let Some(cb) = cb {
                    cb(index, done);
                }
            }
            "done" if get(&data, "run").as_f64() == Some(s.run) => {
                let _ = Reflect::set(&data, &"tArrived".into(), &now_abs().into());
                s.progress = None;
                if let Some(tx) = s.done_tx.take() {
                    let _ = tx.send(Ok(data));
                }
            }
            "error" => {
                let msg = get(&data, "message").as_string().unwrap_or_default();
                if let Some(tx) = s.ready_tx.take() {
                    let _ = tx.send(Err(msg.clone()));
                }
                if let Some(tx) = s.done_tx.take() {
                    let _ = tx.send(Err(msg));
                }
            }
            _ => {}
        }
    });
    let st = state.clone();
    let onerror = Closure::<dyn FnMut(ErrorEvent)>::new(move |e: ErrorEvent| {
        e.prevent_default();
        let msg = e.message();
        let mut s = st.borrow_mut();
        if let Some(tx) = s.ready_tx.take() {
            let _ = tx.send(Err(msg.clone()));
        }
        if let Some(tx) = s.done_tx.take() {
            let _ = tx.send(Err(msg));
        }
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    Ok(Slot {
        worker,
        state,
        _onmessage: onmessage,
        _onerror: onerror,
    })
}

/// Makes sure `count` workers exist and have loaded the wasm module; returns how long that
/// took (0 when they were already there).
pub async fn ensure(count: usize) -> Result<f64, CpuError> {
    let t0 = now_abs();
    let mut waits = Vec::new();
    let created = POOL.with(|p| -> Result<(), String> {
        let mut pool = p.borrow_mut();
        while pool.len() < count {
            pool.push(new_slot()?);
        }
        for slot in pool.iter().take(count) {
            let mut s = slot.state.borrow_mut();
            if !s.ready {
                let (tx, rx) = oneshot::channel();
                s.ready_tx = Some(tx);
                waits.push(rx);
            }
        }
        Ok(())
    });
    created.map_err(CpuError::Worker)?;
    let fresh = !waits.is_empty();
    for rx in waits {
        match rx.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                terminate();
                return Err(CpuError::Worker(e));
            }
            Err(_) => return Err(CpuError::Cancelled),
        }
    }
    Ok(if fresh { now_abs() - t0 } else { 0.0 })
}

/// Stops every worker at once (Cancel); pending runs end with [`CpuError::Cancelled`].
pub fn terminate() {
    let slots = POOL.with(|p| std::mem::take(&mut *p.borrow_mut()));
    for slot in &slots {
        slot.worker.terminate();
    }
    // Dropping the slots drops the senders: whoever awaits them sees the cancellation.
}

/// Live workers (for the page's "workers" line).
pub fn live_workers() -> usize {
    POOL.with(|p| p.borrow().len())
}

/// C = A·B on `workers` workers, each taking a block of rows; `progress(fraction)` is called
/// as chunks finish. The workers must have been started with [`ensure`].
pub async fn run_matmul(
    variant: CpuVariant,
    workers: u32,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    progress: Rc<dyn Fn(f64)>,
) -> Result<CpuRun, CpuError> {
    let ranges = split_rows(size.m, workers);
    let k = size.k as usize;
    run_ranges(&ranges, size.n as usize, progress, |msg, r0, r1| {
        let a_rows = Float32Array::from(&a[r0 as usize * k..r1 as usize * k]);
        let b_all = Float32Array::from(b);
        set(msg, "type", "run".into());
        set(msg, "variant", variant.id().into());
        set(msg, "m", size.m.into());
        set(msg, "n", size.n.into());
        set(msg, "k", size.k.into());
        set(msg, "a", a_rows.clone().into());
        set(msg, "b", b_all.clone().into());
        Array::of2(&a_rows.buffer(), &b_all.buffer())
    })
    .await
}

/// A convolution on `workers` workers, each taking a block of output pixels (the rows of the
/// (N·P·Q)×K output); each gets the whole input and filter (a window may reach any row).
pub async fn run_conv(
    variant: CpuConvVariant,
    workers: u32,
    shape: ConvShape,
    x: &[f32],
    f: &[f32],
    progress: Rc<dyn Fn(f64)>,
) -> Result<CpuRun, CpuError> {
    let ranges = split_rows(shape.out_pixels() as u32, workers);
    let s = shape;
    let dims = [
        s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.dilation,
    ];
    run_ranges(&ranges, shape.k as usize, progress, |msg, _, _| {
        let x_all = Float32Array::from(x);
        let f_all = Float32Array::from(f);
        set(msg, "type", "conv".into());
        set(msg, "variant", variant.id().into());
        let d = Array::new();
        for v in dims {
            d.push(&v.into());
        }
        set(msg, "dims", d.into());
        set(msg, "x", x_all.clone().into());
        set(msg, "f", f_all.clone().into());
        Array::of2(&x_all.buffer(), &f_all.buffer())
    })
    .await
}

fn set(msg: &Object, key: &str, v: JsValue) {
    let _ = Reflect::set(msg, &key.into(), &v);
}

/// Posts each worker its range (`fill` adds the work's fields to the message and returns
/// what to transfer), gathers the rows of `row_len` values in order, and times the copies.
async fn run_ranges(
    ranges: &[(u32, u32)],
    row_len: usize,
    progress: Rc<dyn Fn(f64)>,
    fill: impl Fn(&Object, u32, u32) -> Array,
) -> Result<CpuRun, CpuError> {
    ensure(ranges.len()).await?;
    let run = RUN.with(|r| {
        let mut r = r.borrow_mut();
        *r += 1.0;
        *r
    });
    let n = row_len;
    let total_rows = ranges.last().map_or(0, |r| r.1).max(1) as f64;
    let done_rows = Rc::new(RefCell::new(vec![0u32; ranges.len()]));
    let on_progress: Rc<dyn Fn(usize, u32)> = {
        let done_rows = done_rows.clone();
        Rc::new(move |i, done| {
            let sum: u32 = {
                let mut d = done_rows.borrow_mut();
                if let Some(slot) = d.get_mut(i) {
                    *slot = done;
                }
                d.iter().sum()
            };
            progress(sum as f64 / total_rows);
        })
    };
    let t_start = now_abs();
    let mut receivers = Vec::new();
    let posted = POOL.with(|p| -> Result<(), String> {
        let pool = p.borrow();
        for (i, &(r0, r1)) in ranges.iter().enumerate() {
            let slot = pool.get(i).ok_or("a worker is missing")?;
            let (tx, rx) = oneshot::channel();
            {
                let mut s = slot.state.borrow_mut();
                s.run = run;
                s.index = i;
                s.progress = Some(on_progress.clone());
                s.done_tx = Some(tx);
            }
            receivers.push(rx);
            let msg = Object::new();
            let transfer = fill(&msg, r0, r1);
            set(&msg, "run", run.into());
            set(&msg, "r0", r0.into());
            set(&msg, "r1", r1.into());
            set(&msg, "chunk", chunk_rows(r1 - r0).into());
            slot.worker
                .post_message_with_transfer(&msg, &transfer)
                .map_err(|e| get(&e, "message").as_string().unwrap_or_default())?;
        }
        Ok(())
    });
    posted.map_err(CpuError::Worker)?;

    let mut c = vec![0f32; ranges.last().map_or(0, |r| r.1) as usize * n];
    // The breakdown follows the worker whose result arrived last: the race's total is its
    // timeline, so the parts add up to the total (a maximum per part, over different
    // workers, would not).
    let mut last: Option<[f64; 4]> = None;
    let mut kernel = CpuKernel::App;
    for (rx, &(r0, r1)) in receivers.into_iter().zip(ranges) {
        let data = match rx.await {
            Ok(Ok(d)) => d,
            Ok(Err(e)) => return Err(CpuError::Worker(e)),
            Err(_) => return Err(CpuError::Cancelled),
        };
        let part: Float32Array = get(&data, "c")
            .dyn_into()
            .map_err(|_| CpuError::Worker("no result".into()))?;
        let dst = &mut c[r0 as usize * n..r1 as usize * n];
        if part.length() as usize != dst.len() {
            return Err(CpuError::Worker("result has the wrong length".into()));
        }
        part.copy_to(dst);
        let t = |key: &str| get(&data, key).as_f64().unwrap_or(f64::NAN);
        let stamps = [t("tLoaded"), t("tComputed"), t("tSent"), t("tArrived")];
        if last.is_none_or(|l| stamps[3] >= l[3]) {
            last = Some(stamps);
            kernel = CpuKernel::from_id(&get(&data, "kernel").as_string().unwrap_or_default());
        }
    }
    let t_end = now_abs();
    let [loaded, computed, sent, arrived] = last.unwrap_or([t_start; 4]);
    let (copy_in, compute, wait) = (loaded - t_start, computed - loaded, arrived - sent);
    // Posting the result, and putting the rows in place after the last one arrived.
    let copy_out = (sent - computed) + (t_end - arrived);
    Ok(CpuRun {
        c,
        workers: ranges.len() as u32,
        total_ms: t_end - t_start,
        copy_in_ms: copy_in,
        compute_ms: compute,
        copy_out_ms: copy_out,
        wait_ms: wait,
        kernel,
    })
}
