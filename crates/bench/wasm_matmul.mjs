// Single-thread wasm matmuls in one headless Chromium, and native `matrixmultiply` beside them,
// interleaved: TensorFlow.js's wasm backend (XNNPACK), jax-js's wasm backend, the race's kernel
// module built with plain SIMD128 and with relaxed SIMD (f32x4.relaxed_madd), the app module's
// own SIMD kernel (what the CNN page's CPU trainer, the conv race and the worker's last resort
// run; with --site), then `bench cpu` (native sgemm, one thread). Every contender multiplies the
// same seeded N×N×N inputs and is verified against an f64 reference on sampled elements (bound
// 2·K·2⁻²⁴·Σ|aᵢbᵢ|, cpu_kernels::verify's F32 rule) before it is timed.
//
// Same treatment: every contender gets A and B as JS Float32Arrays and hands C back as one, every
// multiply, so each time includes the copies in and out (as in the race's worker).
// A run = the mean time of back-to-back multiplies over ≥ 300 ms (after 2 warm-up multiplies).
// A round = one run of every contender, the browser ones in a rotating order, then one native run
// (`bench cpu --runs --reps 1`): a change in machine load hits all of them alike. Printed: the
// median and min–max of the rounds (GFLOP/s = 2·N³ / time), the load average before and after
// every round, and the ratios the issues' goals name.
//
// A session = a fresh headless Chromium running `--runs` rounds; `--sessions` whole sessions are
// run one after another, and the summary gives the median of the sessions' medians with their
// spread.
//
// One command (the lead re-runs it on a quiet machine; the site is the one CI builds, profile
// `web`, and `bench` the native side):
//   cargo xtask dist --out target/site-bench && cargo build --release -p bench \
//     && node crates/bench/wasm_matmul.mjs --site target/site-bench
// Options: --kernels DIR (the two race_kernel_*.wasm; default SITE/kernels or dist/kernels),
// --site DIR (a built site: adds the app module's kernel), --n 512, --runs 7 (3..50),
// --sessions 3 (1..20), --workers 1,2 (also time the race's multi-worker split), --no-native,
// --only LIST (some of race-relaxed,race-simd,app,tfjs,jax,native), --json FILE (every run's
// ms, with the load before and after each round).
// TensorFlow.js and jax-js come from crates/bench/web/node_modules (installed here with
// `npm ci` when missing; pinned by crates/bench/web/package-lock.json) and are served by this
// script's own local server, like the kernels: nothing is fetched from another host. No
// cross-origin isolation headers are sent, so neither library can start threads: one thread,
// like the race's kernel in one worker.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
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
const site = opt('--site', null) && resolve(opt('--site', null));
const kernels = resolve(opt('--kernels', site ? join(site, 'kernels') : join(root, 'dist', 'kernels')));
const n = Number(opt('--n', '512'));
const runs = Number(opt('--runs', '7'));
const sessionCount = Number(opt('--sessions', '3'));
const workerCounts = opt('--workers', '').split(',').filter(Boolean).map(Number);
const only = opt('--only', null)?.split(',');
const wanted = (name) => !only || only.includes(name);
const native = !args.includes('--no-native') && wanted('native');
if (!Number.isInteger(n) || n < 8 || n > 2048 || !Number.isInteger(runs) || runs < 3 || runs > 50 || !Number.isInteger(sessionCount) || sessionCount < 1 || sessionCount > 20) {
  console.error('--n wants 8..2048, --runs 3..50, --sessions 1..20');
  process.exit(2);
}
if (workerCounts.some((c) => !Number.isInteger(c) || c < 1 || c > 16)) {
  console.error('--workers wants a list of 1..16');
  process.exit(2);
}
for (const f of ['race_kernel_simd.wasm', 'race_kernel_relaxed.wasm']) {
  if (!existsSync(join(kernels, f))) {
    console.error(`${join(kernels, f)} is missing: run \`cargo xtask dist\` (or pass --kernels DIR)`);
    process.exit(2);
  }
}
const exe = join(root, 'target', 'release', process.platform === 'win32' ? 'bench.exe' : 'bench');
if (native && !existsSync(exe)) {
  console.error(`${exe} is missing: run \`cargo build --release -p bench\` (or pass --no-native)`);
  process.exit(2);
}
if (!existsSync(join(web, 'node_modules', '@jax-js', 'jax'))) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: web, stdio: 'inherit' });
}

// The local server: /k/<file> from the kernels folder, /tf/<path> from tfjs's dist folders,
// /jax/<file> from jax-js's, /site/pkg/<file> from the site's wasm-bindgen output.
const tfCore = join(web, 'node_modules', '@tensorflow', 'tfjs-core', 'dist');
const tfWasm = join(web, 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist');
const jaxDist = join(web, 'node_modules', '@jax-js', 'jax', 'dist');
const files = {
  '/tf/tf-core.min.js': join(tfCore, 'tf-core.min.js'),
  '/tf/tf-backend-wasm.min.js': join(tfWasm, 'tf-backend-wasm.min.js'),
  '/tf/tfjs-backend-wasm.wasm': join(tfWasm, 'tfjs-backend-wasm.wasm'),
  '/tf/tfjs-backend-wasm-simd.wasm': join(tfWasm, 'tfjs-backend-wasm-simd.wasm'),
  '/tf/tfjs-backend-wasm-threaded-simd.wasm': join(tfWasm, 'tfjs-backend-wasm-threaded-simd.wasm'),
};
for (const f of readdirSync(jaxDist).filter((f) => f.endsWith('.js'))) files[`/jax/${f}`] = join(jaxDist, f);
for (const f of readdirSync(kernels)) files[`/k/${f}`] = join(kernels, f);
// The app module: its glue (hashed or plain name) and everything it imports from snippets/.
let appGlue = null;
let appWasm = null;
if (site) {
  const pkg = join(site, 'pkg');
  const walk = (dir, url) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name), `${url}/${e.name}`);
      else files[`${url}/${e.name}`] = join(dir, e.name);
    }
  };
  walk(pkg, '/site/pkg');
  appGlue = readdirSync(pkg).find((f) => /^gpu_playground(\.[0-9a-f]+)?\.js$/.test(f));
  appWasm = readdirSync(pkg).find((f) => /^gpu_playground_bg(\.[0-9a-f]+)?\.wasm$/.test(f));
  if (!appGlue || !appWasm) {
    console.error(`${pkg} has no gpu_playground glue: is --site a built site?`);
    process.exit(2);
  }
}
const page_html = `<!doctype html><meta charset="utf-8"><title>wasm matmul</title>
<script src="/tf/tf-core.min.js"></script><script src="/tf/tf-backend-wasm.min.js"></script>`;
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(page_html);
  } else if (files[path]) {
    res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' }).end(readFileSync(files[path]));
  } else {
    res.writeHead(404).end();
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}/`;

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const uptime = () => {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${load()}`;
  }
};
// One whole session: a fresh browser, every contender set up and checked, `runs` rounds.
async function session() {
  const uptimeBefore = uptime();

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    // --expose-gc: a full collection before each contender's run, so garbage one contender made
    // is not collected on another's time.
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--js-flags=--expose-gc'],
  });
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e}`));
  await page.goto(base);
  const kinds = readdirSync(kernels).filter((f) => /^race_kernel_\w+\.wasm$/.test(f)).map((f) => f.slice(12, -5));

  // Set up every contender on the page (window.bench), check each result once.
  const setup = await page.evaluate(async ([n, kinds, workerCounts, appGlue, appWasm, wanted]) => {
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
      if (!c || c.length !== n * n) throw new Error(`${name}: result has ${c?.length} values, not ${n * n}`);
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
    const info = {};
    // Every contender gets the same treatment, the race's: the inputs come in as JS arrays and
    // the result goes out as one, every multiply (the copies are part of each time).
    // TensorFlow.js, wasm backend, its own SIMD build, one thread.
    if (wanted.includes('tfjs')) {
      tf.wasm.setWasmPaths('/tf/');
      await tf.setBackend('wasm');
      await tf.ready();
      contenders.tfjs = () => {
        const [ta, tb] = [tf.tensor2d(a, [n, n]), tf.tensor2d(b, [n, n])];
        const t = tf.matMul(ta, tb);
        const c = t.dataSync();
        tf.dispose([ta, tb, t]);
        return c;
      };
      info.tfjs = {
        version: tf.version_core,
        simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
        threads: await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'),
      };
    }

    // jax-js, wasm device (its generated SIMD kernels), one thread; the same copies.
    if (wanted.includes('jax')) {
      const jax = await import('/jax/index.js');
      const available = await jax.init('wasm');
      if (!available.includes('wasm')) throw new Error(`jax-js: no wasm device (${available})`);
      jax.defaultDevice('wasm');
      const np = jax.numpy;
      contenders.jax = () => np.matmul(np.array(a).reshape([n, n]), np.array(b).reshape([n, n])).dataSync();
      info.jax = { device: jax.defaultDevice() };
    }

    // The race's kernel module, as the worker drives it (www/cpu-worker.js).
    for (const kind of kinds.filter((k) => wanted.includes(`race-${k}`))) {
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
      info[`race-${kind}`] = { fused: k.kernel_fused() };
    }

    // The app module's own kernel (CpuRowJob, as the worker's last resort; the CNN page's CPU
    // trainer and the conv race run the same code).
    if (appGlue && wanted.includes('app')) {
      const app = await import(`/site/pkg/${appGlue}`);
      await app.default({ module_or_path: `/site/pkg/${appWasm}` });
      contenders.app = () => {
        const job = new app.CpuRowJob('simd', n, n, n, 0, n, a, b);
        try {
          job.step(n);
          return job.result();
        } finally {
          job.free();
        }
      };
    }

    // Multi-worker scaling, as the race splits the work: each worker gets its rows of A and all
    // of B by postMessage (copies included in the time), runs the best kernel module, and
    // posts its rows of C back; the page puts them together.
    const best = kinds.includes('relaxed') ? 'relaxed' : kinds[0];
    if (workerCounts.length) {
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
    }

    for (const [name, f] of Object.entries(contenders)) {
      check(name, await f());
      await f();
    }
    // One run of every contender, starting at `first` (the order rotates from round to round).
    window.benchRound = async (first) => {
      const names = Object.keys(contenders);
      const out = {};
      for (let i = 0; i < names.length; i++) {
        const name = names[(first + i) % names.length];
        const f = contenders[name];
        globalThis.gc?.();
        let count = 0;
        const t0 = performance.now();
        let t = t0;
        while (t - t0 < 300) {
          await f();
          count++;
          t = performance.now();
        }
        out[name] = (t - t0) / count;
      }
      return out;
    };
    return { info, best, names: Object.keys(contenders) };
  }, [n, kinds, workerCounts, appGlue, appWasm, ['tfjs', 'jax', 'app', ...kinds.map((k) => `race-${k}`)].filter(wanted)]);

  // The rounds: the browser's contenders, then native sgemm (verified on its warm-up multiply).
  const times = Object.fromEntries(setup.names.map((k) => [k, []]));
  if (native) times.native = [];
  const loads = [];
  for (let r = 0; r < runs; r++) {
    const before = load();
    const round = await page.evaluate((first) => window.benchRound(first), r);
    for (const [k, ms] of Object.entries(round)) times[k].push(ms);
    if (native) {
      const tsv = execFileSync(exe, ['cpu', '--sizes', String(n), '--reps', '1', '--tsv', '--runs'], { encoding: 'utf8' });
      const line = tsv.trim().split('\n').find((l) => l.startsWith('matrixmultiply-sgemm\t'));
      if (!line) throw new Error(`bench cpu printed no sgemm line:\n${tsv}`);
      times.native.push(Number(line.split('\t')[2]));
    }
    loads.push(`${before} → ${load()}`);
  }
  const version = browser.version();
  await browser.close();
  const uptimeAfter = uptime();
  return { times, info: setup.info, best: setup.best, version, uptimeBefore, uptimeAfter, loads };
}

const gflops = (ms) => (2 * n ** 3) / (ms * 1e6);
const median = (xs) => {
  const v = [...xs].sort((x, y) => x - y);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const stats = (ms) => {
  const g = ms.map(gflops);
  return { med: median(g), lo: Math.min(...g), hi: Math.max(...g) };
};
// Prints one session's table and its per-round ratios; returns the contenders' medians and the
// ratios' medians.
function report(res) {
  const { info, times, version, uptimeBefore, uptimeAfter, loads } = res;
  const labels = {
    tfjs: `TensorFlow.js ${info.tfjs?.version} wasm backend (XNNPACK; SIMD ${info.tfjs?.simd}, threads ${info.tfjs?.threads})`,
    jax: `jax-js wasm backend (device ${info.jax?.device})`,
    'race-relaxed': `race kernel module, relaxed SIMD (f32x4.relaxed_madd; fused: ${info['race-relaxed']?.fused})`,
    'race-simd': `race kernel module, plain SIMD128 (fused: ${info['race-simd']?.fused})`,
    app: "the app module's own kernel (CpuRowJob 'simd')",
    native: 'native matrixmultiply sgemm (1 thread, `bench cpu`)',
  };
  const order = ['race-relaxed', 'race-simd', 'app', 'tfjs', 'jax', 'native'];
  const s = Object.fromEntries(Object.entries(times).map(([k, ms]) => [k, stats(ms)]));
  console.log(`${new Date().toISOString()}; Chromium ${version}; N = ${n}; ${runs} rounds`);
  console.log(`uptime before: ${uptimeBefore}`);
  console.log(`uptime after:  ${uptimeAfter}`);
  console.log(`load average (1, 5, 15 min) before → after each round: ${loads.join('; ')}\n`);
  console.log('| contender | GFLOP/s, median | min–max |');
  console.log('| --- | ---: | ---: |');
  for (const k of order.filter((k) => s[k])) {
    console.log(`| ${labels[k]} | ${s[k].med.toFixed(1)} | ${s[k].lo.toFixed(1)}–${s[k].hi.toFixed(1)} |`);
  }
  if (workerCounts.length) {
    console.log(`\nWorkers (${res.best} module, rows split as the race splits them, copies included):\n`);
    console.log('| workers | GFLOP/s, median | min–max |');
    console.log('| ---: | ---: | ---: |');
    for (const count of workerCounts) {
      const w = s[`workers-${count}`];
      console.log(`| ${count} | ${w.med.toFixed(1)} | ${w.lo.toFixed(1)}–${w.hi.toFixed(1)} |`);
    }
  }
  // Per round, so the ratios' spread is not the spread of two independent medians.
  const fmt = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
  const fastest = (names) => {
    const have = names.filter((k) => times[k]);
    return have.length ? times[have[0]].map((_, i) => Math.min(...have.map((k) => times[k][i]))) : null;
  };
  const ratios = {};
  const ours = fastest(['race-relaxed', 'race-simd']);
  const peer = fastest(['tfjs', 'jax']);
  if (ours && peer) {
    ratios.peer = ours.map((ms, i) => peer[i] / ms);
    console.log(`\nrace kernel (faster module) ÷ best peer (faster of tfjs, jax-js), per round: ${fmt(ratios.peer)}×`);
  }
  if (ours && times.native) {
    ratios.native = ours.map((ms, i) => (100 * times.native[i]) / ms);
    console.log(`race kernel (faster module) ÷ native matrixmultiply, per round: ${fmt(ratios.native)} %`);
  }
  if (times.app && times['race-simd']) {
    ratios.app = times.app.map((ms, i) => times['race-simd'][i] / ms);
    console.log(`app module's kernel ÷ plain race module, per round: ${fmt(ratios.app)}`);
  }
  return { med: Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.med])), ratios };
}

const sessions = [];
for (let i = 0; i < sessionCount; i++) {
  if (i) console.log('');
  console.log(`## Session ${i + 1} of ${sessionCount}`);
  const res = await session();
  sessions.push({ res, summary: report(res) });
}
server.close();

// Across sessions: the median of the sessions' medians, and their min–max.
if (sessionCount > 1) {
  console.log(`\n## All ${sessionCount} sessions: median of the sessions' medians (min–max of them)\n`);
  console.log('| contender | GFLOP/s | min–max |');
  console.log('| --- | ---: | ---: |');
  const keys = ['race-relaxed', 'race-simd', 'app', 'tfjs', 'jax', 'native'].filter((k) => sessions[0].summary.med[k] !== undefined);
  for (const k of keys) {
    const v = sessions.map((x) => x.summary.med[k]);
    console.log(`| ${k} | ${median(v).toFixed(1)} | ${Math.min(...v).toFixed(1)}–${Math.max(...v).toFixed(1)} |`);
  }
  const names = { peer: 'race kernel ÷ best peer (×)', native: 'race kernel ÷ native (%)', app: "app module's kernel ÷ plain race module" };
  for (const [k, label] of Object.entries(names)) {
    if (!sessions[0].summary.ratios[k]) continue;
    const v = sessions.map((x) => median(x.summary.ratios[k]));
    console.log(`${label}, median of the sessions' medians: ${median(v).toFixed(2)} (${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)})`);
  }
}
const json = opt('--json', null);
if (json) {
  writeFileSync(json, JSON.stringify({ n, sessions: sessions.map((x) => ({ ...x.res, date: new Date().toISOString() })) }, null, 1));
}
