// Single-thread wasm matmuls in one headless Chromium run, and native `matrixmultiply` beside
// them: TensorFlow.js's wasm backend (XNNPACK), the race's SIMD kernel module built with plain
// SIMD128 and with relaxed SIMD (f32x4.relaxed_madd), then `bench cpu` (native sgemm). Every
// contender multiplies the same N×N×N inputs and is verified against an f64 reference on
// sampled elements (bound 2·K·2⁻²⁴·Σ|aᵢbᵢ|) before it is timed.
//
// A run = the mean time of back-to-back multiplies over ≥ 300 ms (after 2 warm-up multiplies);
// the browser contenders take turns run by run, so a change in machine load hits all of them.
// Printed: median and min–max of the runs, GFLOP/s = 2·N³ / time.
//
// Usage (builds first: `cargo xtask dist` for dist/kernels/, `cargo build --release -p bench`):
//   node crates/bench/wasm_matmul.mjs [--kernels dist/kernels] [--n 512] [--runs 5] [--workers 1,2]
// TensorFlow.js comes from crates/bench/web/node_modules (installed here with `npm ci` when
// missing; pinned by crates/bench/web/package-lock.json) and is served by this script's own
// local server, like the kernels: nothing is fetched from another host. No cross-origin
// isolation headers are sent, so tfjs cannot start threads: one thread, like the race's kernel
// in one worker.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve, extname } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const web = join(root, 'crates', 'bench', 'web');
const require = createRequire(join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const kernels = resolve(opt('--kernels', join(root, 'dist', 'kernels')));
const n = Number(opt('--n', '512'));
const runs = Number(opt('--runs', '5'));
if (!Number.isInteger(n) || n < 8 || n > 2048 || !Number.isInteger(runs) || runs < 3 || runs > 50) {
  console.error('--n wants 8..2048, --runs 3..50');
  process.exit(2);
}
for (const f of ['race_kernel_simd.wasm', 'race_kernel_relaxed.wasm']) {
  if (!existsSync(join(kernels, f))) {
    console.error(`${join(kernels, f)} is missing: run \`cargo xtask dist\` (or pass --kernels DIR)`);
    process.exit(2);
  }
}
if (!existsSync(join(web, 'node_modules', '@tensorflow', 'tfjs-backend-wasm'))) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: web, stdio: 'inherit' });
}

// The local server: /k/<file> from the kernels folder, /tf/<path> from tfjs's dist folders.
const tfCore = join(web, 'node_modules', '@tensorflow', 'tfjs-core', 'dist');
const tfWasm = join(web, 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist');
const files = {
  '/tf/tf-core.min.js': join(tfCore, 'tf-core.min.js'),
  '/tf/tf-backend-wasm.min.js': join(tfWasm, 'tf-backend-wasm.min.js'),
  '/tf/tfjs-backend-wasm.wasm': join(tfWasm, 'tfjs-backend-wasm.wasm'),
  '/tf/tfjs-backend-wasm-simd.wasm': join(tfWasm, 'tfjs-backend-wasm-simd.wasm'),
  '/tf/tfjs-backend-wasm-threaded-simd.wasm': join(tfWasm, 'tfjs-backend-wasm-threaded-simd.wasm'),
};
for (const f of readdirSync(kernels)) files[`/k/${f}`] = join(kernels, f);
const page_html = `<!doctype html><meta charset="utf-8"><title>wasm matmul</title>
<script src="/tf/tf-core.min.js"></script><script src="/tf/tf-backend-wasm.min.js"></script>`;
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(page_html);
  } else if (files[path]) {
    res.writeHead(200, { 'content-type': types[extname(path)] }).end(readFileSync(files[path]));
  } else {
    res.writeHead(404).end();
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'],
});
const page = await browser.newPage();
await page.goto(base);
const kinds = readdirSync(kernels).filter((f) => /^race_kernel_\w+\.wasm$/.test(f)).map((f) => f.slice(12, -5));
const workerCounts = opt('--workers', '1,2').split(',').map(Number);
const result = await page.evaluate(async ([n, runs, kinds, workerCounts]) => {
  // Seeded inputs in [-1, 1).
  let s = 0x9e3779b9;
  const rnd = () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s / 2 ** 32) * 2 - 1;
  };
  const a = Float32Array.from({ length: n * n }, rnd);
  const b = Float32Array.from({ length: n * n }, rnd);
  // Sampled f64 reference and the rounding bound (see cpu_kernels::verify).
  const samples = Array.from({ length: 256 }, (_, i) => [(i * 97 + 13) % n, (i * 61 + 7) % n]);
  samples.push([0, 0], [n - 1, n - 1], [0, n - 1], [n - 1, 0]);
  const check = (name, c) => {
    for (const [i, j] of samples) {
      let ref = 0, mag = 0;
      for (let p = 0; p < n; p++) {
        const t = a[i * n + p] * b[p * n + j];
        ref += t; mag += Math.abs(t);
      }
      const err = Math.abs(c[i * n + j] - ref);
      if (!(err <= 2 * n * 2 ** -24 * mag)) {
        throw new Error(`${name}: C[${i}][${j}] = ${c[i * n + j]}, reference ${ref}, bound ${2 * n * 2 ** -24 * mag}`);
      }
    }
  };

  const contenders = {};
  // TensorFlow.js, wasm backend, its own SIMD build, one thread.
  tf.wasm.setWasmPaths('/tf/');
  await tf.setBackend('wasm');
  await tf.ready();
  const ta = tf.tensor2d(a, [n, n]);
  const tb = tf.tensor2d(b, [n, n]);
  contenders.tfjs = () => {
    const t = tf.matMul(ta, tb);
    const c = t.dataSync();
    t.dispose();
    return c;
  };
  const tfInfo = {
    version: tf.version_core,
    simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
    threads: await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'),
  };

  // The race's kernel module, as the worker drives it (www/cpu-worker.js).
  for (const kind of kinds) {
    const bytes = await (await fetch(`/k/race_kernel_${kind}.wasm`)).arrayBuffer();
    const { instance } = await WebAssembly.instantiate(bytes, {});
    const k = instance.exports;
    contenders[`race-${kind}`] = () => {
      if (k.job_new(n, n, n, 0, n) !== 0) throw new Error('job_new failed');
      new Float32Array(k.memory.buffer, k.job_a(), n * n).set(a);
      new Float32Array(k.memory.buffer, k.job_b(), n * n).set(b);
      k.job_step(n);
      return new Float32Array(k.memory.buffer, k.job_c(), n * n).slice();
    };
    contenders[`race-${kind}`].fused = k.kernel_fused();
  }

  // Multi-worker scaling, as the race splits the work: each worker gets its rows of A and all
  // of B by postMessage (copies included in the time), runs the best kernel module, and
  // posts its rows of C back; the page puts them together.
  const best = kinds.includes('relaxed') ? 'relaxed' : kinds[0];
  const module = await WebAssembly.compile(await (await fetch(`/k/race_kernel_${best}.wasm`)).arrayBuffer());
  const workerSrc = `let k;
    onmessage = async ({ data }) => {
      if (data.module) { k = (await WebAssembly.instantiate(data.module, {})).exports; postMessage('ready'); return; }
      const { n, r0, r1, a, b } = data;
      k.job_new(n, n, n, r0, r1);
      new Float32Array(k.memory.buffer, k.job_a(), a.length).set(a);
      new Float32Array(k.memory.buffer, k.job_b(), b.length).set(b);
      k.job_step(r1 - r0);
      const c = new Float32Array(k.memory.buffer, k.job_c(), (r1 - r0) * n).slice();
      postMessage(c, [c.buffer]);
    };`;
  const workerUrl = URL.createObjectURL(new Blob([workerSrc], { type: 'text/javascript' }));
  for (const count of workerCounts) {
    const pool = await Promise.all(Array.from({ length: count }, () => new Promise((ok) => {
      const w = new Worker(workerUrl);
      w.onmessage = () => ok(w);
      w.postMessage({ module });
    })));
    const tiles = Math.ceil(n / 4);
    const cuts = Array.from({ length: count + 1 }, (_, i) => Math.min(n, 4 * Math.round((tiles * i) / count)));
    contenders[`workers-${count}`] = async () => {
      const c = new Float32Array(n * n);
      await Promise.all(pool.map((w, i) => new Promise((ok) => {
        const [r0, r1] = [cuts[i], cuts[i + 1]];
        w.onmessage = ({ data }) => { c.set(data, r0 * n); ok(); };
        w.postMessage({ n, r0, r1, a: a.slice(r0 * n, r1 * n), b: b.slice() });
      })));
      return c;
    };
  }

  const times = {};
  for (const [name, f] of Object.entries(contenders)) {
    check(name, await f());
    await f();
    times[name] = [];
  }
  for (let r = 0; r < runs; r++) {
    for (const [name, f] of Object.entries(contenders)) {
      let count = 0;
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < 300) {
        await f();
        count++;
        t = performance.now();
      }
      times[name].push((t - t0) / count);
    }
  }
  return { times, tfInfo, best, fused: Object.fromEntries(kinds.map((k) => [k, contenders[`race-${k}`].fused])) };
}, [n, runs, kinds, workerCounts]);
const version = browser.version();
await browser.close();
server.close();

// Native: `bench cpu` (release build), the same runs rule.
const exe = join(root, 'target', 'release', process.platform === 'win32' ? 'bench.exe' : 'bench');
const tsv = args.includes('--no-native') ? 'matrixmultiply-sgemm\t0\tNaN' : execFileSync(exe, ['cpu', '--sizes', String(n), '--reps', String(runs), '--tsv', '--runs'], { encoding: 'utf8' });
const native = {};
for (const line of tsv.trim().split('\n')) {
  const [name, , ...ms] = line.split('\t');
  native[name] = ms.map(Number);
}

const gflops = (ms) => (2 * n ** 3) / (ms * 1e6);
const median = (xs) => {
  const v = [...xs].sort((x, y) => x - y);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const row = (label, ms) => {
  const g = ms.map(gflops);
  return [label, median(g), Math.min(...g), Math.max(...g)];
};
const labels = { simd: 'plain SIMD128 (multiply, then add)', relaxed: 'relaxed SIMD (f32x4.relaxed_madd)' };
const rows = [
  row(`TensorFlow.js ${result.tfInfo.version} wasm backend (XNNPACK; SIMD ${result.tfInfo.simd}, threads ${result.tfInfo.threads})`, result.times.tfjs),
  ...kinds.map((k) => row(`race kernel, ${labels[k] ?? k} (module says fused: ${result.fused[k]})`, result.times[`race-${k}`])),
  row('native matrixmultiply sgemm (1 thread)', native['matrixmultiply-sgemm']),
];
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`${new Date().toISOString()}; Chromium ${version}; N = ${n}; ${runs} runs each; load average after: ${load}\n`);
console.log('| contender | GFLOP/s, median | min–max |');
console.log('| --- | ---: | ---: |');
for (const [label, med, lo, hi] of rows) {
  console.log(`| ${label} | ${med.toFixed(1)} | ${lo.toFixed(1)}–${hi.toFixed(1)} |`);
}
console.log(`\nWorkers (${result.best} module, rows split as the race splits them, copies included):\n`);
console.log('| workers | GFLOP/s, median | min–max | × one worker |');
console.log('| ---: | ---: | ---: | ---: |');
const one = median(result.times['workers-1'] ?? [NaN]);
for (const count of workerCounts) {
  const [, med, lo, hi] = row('', result.times[`workers-${count}`]);
  console.log(`| ${count} | ${med.toFixed(1)} | ${lo.toFixed(1)}–${hi.toFixed(1)} | ${(med / gflops(one)).toFixed(2)} |`);
}
const tfjs = rows[0][1];
const ours = Math.max(...rows.slice(1, -1).map((r) => r[1]));
console.log(`\nrace kernel (faster module) / tfjs: ${(ours / tfjs).toFixed(2)}×; / native matrixmultiply: ${((100 * ours) / rows[rows.length - 1][1]).toFixed(0)} %`);
