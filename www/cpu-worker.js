// CPU side of the race (#/race): a module worker that loads the same wasm module as the page
// and computes its share of rows (a multiply's rows of C, or a convolution's output pixels),
// reporting progress per chunk. The page never freezes.
//
// The SIMD matmul runs in a small module of its own (crates/race-kernel), built twice: with
// relaxed SIMD (f32x4.relaxed_madd, a fused multiply-add) and with plain SIMD128. A browser
// without relaxed SIMD refuses such a module as a whole, so the worker first asks
// WebAssembly.validate about a tiny relaxed-SIMD function and loads the relaxed module only
// where it is accepted; otherwise (or if that module fails to load) the plain one; if both
// fail, the app module's own SIMD kernel. Which one runs is reported in 'ready' and 'done'.
//
// Messages in:  {type: 'run', run, variant, m, n, k, r0, r1, chunk, a, b, tPost}
//   a: rows r0..r1 of A, b: all of B (Float32Array, transferred); tPost: when the page began
//   copying them (absolute ms, performance.timeOrigin + performance.now()).
//               {type: 'conv', run, variant, dims, r0, r1, chunk, x, f, tPost}
//   dims: [N, C, H, W, K, R, S, stride, pad, dilation]; x: the whole input, f: the filter;
//   r0..r1: output pixels.
// Messages out: {type: 'ready', kernel} once the modules are loaded (kernel: 'relaxed',
//   'simd' or 'app'); {type: 'progress', run, done};
//   {type: 'done', run, c, kernel, tReceived, tLoaded, tComputed, tSent};
//   {type: 'error', run, message}.
// Cancel: the page terminates the worker.
import init, * as wasm from './pkg/gpu_playground.js';

const now = () => performance.timeOrigin + performance.now();

// (module (func (result v128) (f32x4.relaxed_madd (v128.const 0) (v128.const 0) (v128.const 0))))
const ZERO = [0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // types: () -> v128
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x0a, 0x3d, 0x01, 0x3b, 0x00, ...ZERO, ...ZERO, ...ZERO, 0xfd, 0x85, 0x02, 0x0b, // code
]);

/** Whether this browser accepts relaxed SIMD (a question, never an exception). */
function hasRelaxedSimd() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

async function loadKernel(name) {
  const url = new URL(`./kernels/race_kernel_${name}.wasm`, import.meta.url);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {});
  return instance.exports;
}

/** The kernel module this browser runs: {name, exports}, or {name: 'app'} without one. */
async function pickKernel() {
  const names = hasRelaxedSimd() ? ['relaxed', 'simd'] : ['simd'];
  for (const name of names) {
    try {
      return { name, exports: await loadKernel(name) };
    } catch {
      // Try the next one; the app module's kernel is the last resort.
    }
  }
  return { name: 'app' };
}

let kernel = { name: 'app' };
const ready = Promise.all([init(), pickKernel()]).then(
  ([, k]) => {
    kernel = k;
    self.postMessage({ type: 'ready', kernel: k.name });
  },
  (err) => self.postMessage({ type: 'error', run: -1, message: `wasm failed to load: ${err}` }),
);

/** A row job on the kernel module, with the same step/is_done/result/free as CpuRowJob. */
function moduleJob(k, { m, n, k: depth, r0, r1, a, b }) {
  const code = k.job_new(m, n, depth, r0, r1);
  if (code !== 0) throw new Error(code === 1 ? 'bad row range' : 'matrix too large');
  // Views are made after job_new: it may grow the memory, which detaches older views.
  new Float32Array(k.memory.buffer, k.job_a(), a.length).set(a);
  new Float32Array(k.memory.buffer, k.job_b(), b.length).set(b);
  const rows = r1 - r0;
  let done = 0;
  return {
    step: (chunk) => {
      const next = k.job_step(chunk);
      if (next <= done) throw new Error('the kernel module made no progress');
      return (done = next);
    },
    is_done: () => done >= rows,
    result: () => new Float32Array(k.memory.buffer, k.job_c(), rows * n).slice(),
    free: () => {},
  };
}

self.onmessage = async ({ data }) => {
  const tReceived = now();
  await ready;
  if (data?.type !== 'run' && data?.type !== 'conv') return;
  const { run } = data;
  let job;
  let used = 'app';
  try {
    if (data.type === 'conv') {
      job = new wasm.CpuConvJob(data.variant, data.dims, data.r0, data.r1, data.x, data.f);
    } else if (data.variant === 'simd' && kernel.exports) {
      job = moduleJob(kernel.exports, data);
      used = kernel.name;
    } else {
      job = new wasm.CpuRowJob(data.variant, data.m, data.n, data.k, data.r0, data.r1, data.a, data.b);
    }
    const tLoaded = now();
    while (!job.is_done()) {
      const done = job.step(data.chunk);
      self.postMessage({ type: 'progress', run, done });
    }
    const tComputed = now();
    const c = job.result();
    const tSent = now();
    self.postMessage({ type: 'done', run, c, kernel: used, tReceived, tLoaded, tComputed, tSent }, [c.buffer]);
  } catch (err) {
    self.postMessage({ type: 'error', run, message: String(err?.message ?? err) });
  } finally {
    job?.free();
  }
};
