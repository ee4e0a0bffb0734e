//! What `www/cpu-worker.js` calls in its copy of this wasm module: one share of rows of a
//! multiply, computed a chunk at a time. Also the entry point of the CPU benchmark
//! (`crates/bench/cpu_vs_wasm.mjs`).

use cpu_kernels::conv::ConvShape;
use cpu_kernels::conv_variants::{ConvRowJob, CpuConvVariant};
use cpu_kernels::matmul::{self, MatmulSize};
use cpu_kernels::matmul_variants::{self, CpuVariant, RowJob};
use cpu_kernels::verify::{self, Precision};
use wasm_bindgen::prelude::*;

/// One worker's rows of C = A·B.
#[wasm_bindgen]
pub struct CpuRowJob(RowJob);

#[wasm_bindgen]
impl CpuRowJob {
    /// `a_rows`: rows r0..r1 of A (K values each); `b`: all of B (K×N).
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        variant: &str,
        m: u32,
        n: u32,
        k: u32,
        r0: u32,
        r1: u32,
        a_rows: Vec<f32>,
        b: Vec<f32>,
    ) -> Result<CpuRowJob, JsError> {
        let variant = CpuVariant::from_id(variant)
            .ok_or_else(|| JsError::new(&format!("unknown CPU variant {variant}")))?;
        RowJob::new(
            variant,
            MatmulSize::new(m, n, k),
            r0 as usize,
            r1 as usize,
            a_rows,
            b,
        )
        .map(CpuRowJob)
        .map_err(|e| JsError::new(&format!("{e:?}")))
    }

    /// Computes up to `rows` more rows; returns the rows done so far.
    pub fn step(&mut self, rows: u32) -> u32 {
        self.0.step(rows as usize) as u32
    }

    pub fn is_done(&self) -> bool {
        self.0.is_done()
    }

    /// The rows of C (copied out into a new Float32Array).
    pub fn result(&self) -> Vec<f32> {
        self.0.result().to_vec()
    }
}

/// One worker's output pixels of a convolution (the conv race).
#[wasm_bindgen]
pub struct CpuConvJob(ConvRowJob);

#[wasm_bindgen]
impl CpuConvJob {
    /// `dims`: [N, C, H, W, K, R, S, stride, pad, dilation]; pixels r0..r1 (NPQ order) of the
    /// output; `x` the whole NHWC input, `f` the whole R×S×C×K filter.
    #[wasm_bindgen(constructor)]
    pub fn new(
        variant: &str,
        dims: Vec<u32>,
        r0: u32,
        r1: u32,
        x: Vec<f32>,
        f: Vec<f32>,
    ) -> Result<CpuConvJob, JsError> {
        let variant = CpuConvVariant::from_id(variant)
            .ok_or_else(|| JsError::new(&format!("unknown CPU variant {variant}")))?;
        let [n, c, h, w, k, r, s, stride, pad, dil] = <[u32; 10]>::try_from(dims)
            .map_err(|_| JsError::new("a convolution needs ten sizes"))?;
        let shape = ConvShape::new(n, c, h, w, k, r, s).with(stride, pad, dil);
        ConvRowJob::new(variant, shape, r0 as usize, r1 as usize, x, f)
            .map(CpuConvJob)
            .map_err(|e| JsError::new(&format!("{e:?}")))
    }

    /// Computes up to `rows` more output pixels; returns the pixels done so far.
    pub fn step(&mut self, rows: u32) -> u32 {
        self.0.step(rows as usize) as u32
    }

    pub fn is_done(&self) -> bool {
        self.0.is_done()
    }

    /// The pixels' outputs, K each (copied out into a new Float32Array).
    pub fn result(&self) -> Vec<f32> {
        self.0.result().to_vec()
    }
}

/// Benchmark hook: the best of `reps` single-thread runs of `variant` on an N×N×N multiply in
/// milliseconds, after one warm-up run. The result is verified (sampled reference); a wrong
/// result is an error, not a time.
#[wasm_bindgen]
pub fn cpu_bench(variant: &str, n: u32, reps: u32) -> Result<f64, JsError> {
    let v = CpuVariant::from_id(variant)
        .ok_or_else(|| JsError::new(&format!("unknown CPU variant {variant}")))?;
    if !(1..=4096).contains(&n) {
        return Err(JsError::new("n must be 1 to 4096"));
    }
    let size = MatmulSize::new(n, n, n);
    let (a, b) = size.inputs(page_models::race::params::SEED);
    let run =
        || matmul_variants::matmul(v, size, &a, &b).map_err(|e| JsError::new(&format!("{e:?}")));
    let c = run()?;
    let idx = matmul::check_indices(size, 0, 2048, 7).unwrap_or_default();
    let reference = matmul::reference_at(size, &a, &b, &idx);
    let got: Vec<f32> = idx.iter().map(|&i| c[i]).collect();
    let verdict = verify::compare(&got, &reference, Precision::F32);
    if !verdict.ok {
        return Err(JsError::new(&format!("wrong result: {verdict:?}")));
    }
    let mut best = f64::INFINITY;
    for _ in 0..reps.clamp(1, 20) {
        let t0 = now_ms();
        let c = run()?;
        best = best.min(now_ms() - t0);
        std::hint::black_box(c);
    }
    Ok(best)
}

/// `performance.now()` in a window or a worker (the runtime's clock).
pub use gpu_runtime::now_ms;
