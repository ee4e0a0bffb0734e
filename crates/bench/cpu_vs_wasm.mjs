// The race's wasm SIMD128 matmul in headless Chromium against native single-thread
// `matrixmultiply` sgemm, on the same machine, in one run. Prints a Markdown table.
//
// Usage (the site must be served, e.g. `cargo xtask serve --port 8080` in another shell):
//   cargo build --release -p bench
//   node crates/bench/cpu_vs_wasm.mjs [--base http://127.0.0.1:8080/] [--sizes 512,1024] [--reps 5]
// Uses playwright-core from tests/e2e (installed by `cargo xtask setup`) and CHROMIUM
// (default /usr/bin/chromium).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const base = opt('--base', process.env.BASE_URL ?? 'http://127.0.0.1:8080/');
const sizes = opt('--sizes', '512,1024').split(',').map(Number);
const reps = Number(opt('--reps', '5'));
if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 4096) || !(reps >= 1 && reps <= 20)) {
  console.error('--sizes wants integers 1..4096, --reps 1..20');
  process.exit(2);
}
const gflops = (n, ms) => (2 * n ** 3) / (ms * 1e6);

// Browser side: the app's own wasm module, single thread, page main thread.
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
const page = await browser.newPage();
await page.goto(new URL('#/', base).href);
await page.waitForFunction(() => window.gpuPlayground?.cpu_bench, null, { timeout: 60_000 });
const version = browser.version();
const wasm = {};
for (const n of sizes) {
  for (const v of ['simd', 'blocked']) {
    wasm[`${v}-${n}`] = await page.evaluate(([v, n, r]) => window.gpuPlayground.cpu_bench(v, n, r), [v, n, reps]);
  }
}
await browser.close();

// Native side: `bench cpu` (release build).
const exe = join(root, 'target', 'release', process.platform === 'win32' ? 'bench.exe' : 'bench');
const tsv = execFileSync(exe, ['cpu', '--sizes', sizes.join(','), '--reps', String(reps), '--tsv'], { encoding: 'utf8' });
const native = {};
for (const line of tsv.trim().split('\n')) {
  const [name, n, ms] = line.split('\t');
  native[`${name}-${n}`] = Number(ms);
}

console.log(`Chromium ${version}; best of ${reps} after a warm-up; single thread on both sides.\n`);
console.log('| N | wasm SIMD128 (Chromium) | native matrixmultiply sgemm | wasm / native | wasm blocked | native, same Rust (portable 4-lane) |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
for (const n of sizes) {
  const w = gflops(n, wasm[`simd-${n}`]);
  const s = gflops(n, native[`matrixmultiply-sgemm-${n}`]);
  const wb = gflops(n, wasm[`blocked-${n}`]);
  const ns = gflops(n, native[`native-simd-${n}`]);
  console.log(`| ${n}³ | ${w.toFixed(1)} GFLOP/s | ${s.toFixed(1)} GFLOP/s | ${(100 * w / s).toFixed(0)} % | ${wb.toFixed(1)} GFLOP/s | ${ns.toFixed(1)} GFLOP/s |`);
}
