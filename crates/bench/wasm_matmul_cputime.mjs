// Cross-check for wasm_matmul.mjs on a loaded machine: the same wasm (TensorFlow.js's and
// jax-js's wasm backends, both race kernel modules, the same treatment: inputs in, C out, every
// multiply) in Node's V8, timed by this process's CPU time
// (process.cpuUsage) rather than the wall clock, so other processes' load counts less. Node's
// V8 is older than Chromium's: this is a check of the ratios, not the browser figure. Then
// `bench cpu --runs --cpu-time` (native matrixmultiply, this thread's CPU time).
//   node --experimental-wasm-relaxed-simd crates/bench/wasm_matmul_cputime.mjs [--kernels DIR] [--n 512] [--runs 5]
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'crates', 'bench', 'web', 'package.json'));
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const kernels = resolve(opt('--kernels', join(root, 'dist', 'kernels')));
const n = Number(opt('--n', '512'));
const runs = Number(opt('--runs', '5'));

const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');
await tf.setBackend('wasm');
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
await tf.ready();

let s = 0x9e3779b9;
const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return (s / 2 ** 32) * 2 - 1; };
const a = Float32Array.from({ length: n * n }, rnd);
const b = Float32Array.from({ length: n * n }, rnd);
// jax-js starts a pool of workers where SharedArrayBuffer exists (Node; a browser page only when
// cross-origin isolated, which wasm_matmul.mjs's page is not): hidden, so it runs on one thread
// as in the browser and as the race's kernel in one worker.
delete globalThis.SharedArrayBuffer;
const jax = await import(join(root, 'crates', 'bench', 'web', 'node_modules', '@jax-js', 'jax', 'dist', 'index.js'));
if (!(await jax.init('wasm')).includes('wasm')) throw new Error('jax-js: no wasm device');
jax.defaultDevice('wasm');
const np = jax.numpy;
const contenders = {
  tfjs: () => {
    const [ta, tb] = [tf.tensor2d(a, [n, n]), tf.tensor2d(b, [n, n])];
    const t = tf.matMul(ta, tb);
    const c = t.dataSync();
    tf.dispose([ta, tb, t]);
    return c;
  },
  jax: () => np.matmul(np.array(a).reshape([n, n]), np.array(b).reshape([n, n])).dataSync(),
};
for (const kind of ['relaxed', 'simd']) {
  const { instance } = await WebAssembly.instantiate(readFileSync(join(kernels, `race_kernel_${kind}.wasm`)), {});
  const k = instance.exports;
  contenders[kind] = () => {
    k.job_new(n, n, n, 0, n);
    new Float32Array(k.memory.buffer, k.job_a(), n * n).set(a);
    new Float32Array(k.memory.buffer, k.job_b(), n * n).set(b);
    k.job_step(n);
    return new Float32Array(k.memory.buffer, k.job_c(), n * n).slice();
  };
}
for (const [name, f] of Object.entries(contenders)) {
  const c = f();
  for (let i = 0; i < 64; i++) {
    const [r, col] = [(i * 97 + 13) % n, (i * 61 + 7) % n];
    let ref = 0, mag = 0;
    for (let p = 0; p < n; p++) { const t = a[r * n + p] * b[p * n + col]; ref += t; mag += Math.abs(t); }
    if (!(Math.abs(c[r * n + col] - ref) <= 2 * n * 2 ** -24 * mag)) throw new Error(`${name} wrong at ${r},${col}`);
  }
}
const res = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (let r = 0; r < runs; r++) {
  for (const [name, f] of Object.entries(contenders)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let count = 0;
    while (performance.now() - t0 < 300) { f(); count++; }
    const c = process.cpuUsage(c0);
    res[name].push((2 * n ** 3) / (((c.user + c.system) / count) * 1e3));
  }
}
const exe = join(root, 'target', 'release', 'bench');
const tsv = execFileSync(exe, ['cpu', '--sizes', String(n), '--reps', String(runs), '--tsv', '--runs', '--cpu-time'], { encoding: 'utf8' });
res.native = tsv.trim().split('\t').slice(2).map((ms) => (2 * n ** 3) / (Number(ms) * 1e6));
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`${new Date().toISOString()}; Node ${process.version} (V8 ${process.versions.v8}); N = ${n}; ${runs} runs; GFLOP/s per CPU-second; load ${load}`);
const med = {};
for (const [name, g] of Object.entries(res)) {
  const v = [...g].sort((x, y) => x - y);
  med[name] = v[(v.length - 1) >> 1];
  console.log(`${name}\tmedian ${med[name].toFixed(1)}\tmin ${v[0].toFixed(1)}\tmax ${v[v.length - 1].toFixed(1)}`);
}
const peer = Math.max(med.tfjs, med.jax);
console.log(`relaxed / best peer ${(med.relaxed / peer).toFixed(2)}×; relaxed / native ${((100 * med.relaxed) / med.native).toFixed(0)} %`);
