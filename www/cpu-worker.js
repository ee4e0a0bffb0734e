// CPU side of the race (#/race): a module worker that loads the same wasm module as the page
// and computes its share of rows (a multiply's rows of C, or a convolution's output pixels),
// reporting progress per chunk. The page never freezes.
//
// Messages in:  {type: 'run', run, variant, m, n, k, r0, r1, chunk, a, b, tPost}
//   a: rows r0..r1 of A, b: all of B (Float32Array, transferred); tPost: when the page began
//   copying them (absolute ms, performance.timeOrigin + performance.now()).
//               {type: 'conv', run, variant, dims, r0, r1, chunk, x, f, tPost}
//   dims: [N, C, H, W, K, R, S, stride, pad, dilation]; x: the whole input, f: the filter;
//   r0..r1: output pixels.
// Messages out: {type: 'ready'} once the module is loaded; {type: 'progress', run, done};
//   {type: 'done', run, c, tReceived, tLoaded, tComputed, tSent}; {type: 'error', run, message}.
// Cancel: the page terminates the worker.
import init, * as wasm from './pkg/gpu_playground.js';

const now = () => performance.timeOrigin + performance.now();

const ready = init().then(
  () => self.postMessage({ type: 'ready' }),
  (err) => self.postMessage({ type: 'error', run: -1, message: `wasm failed to load: ${err}` }),
);

self.onmessage = async ({ data }) => {
  const tReceived = now();
  await ready;
  if (data?.type !== 'run' && data?.type !== 'conv') return;
  const { run } = data;
  let job;
  try {
    job = data.type === 'conv'
      ? new wasm.CpuConvJob(data.variant, data.dims, data.r0, data.r1, data.x, data.f)
      : new wasm.CpuRowJob(data.variant, data.m, data.n, data.k, data.r0, data.r1, data.a, data.b);
    const tLoaded = now();
    while (!job.is_done()) {
      const done = job.step(data.chunk);
      self.postMessage({ type: 'progress', run, done });
    }
    const tComputed = now();
    const c = job.result();
    const tSent = now();
    self.postMessage({ type: 'done', run, c, tReceived, tLoaded, tComputed, tSent }, [c.buffer]);
  } catch (err) {
    self.postMessage({ type: 'error', run, message: String(err?.message ?? err) });
  } finally {
    job?.free();
  }
};
