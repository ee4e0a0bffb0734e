// The SIMT visualiser's frame times while it plays a 64×64 launch (tiled stage, 16×16
// workgroups, 10 steps/s) in headless Chromium: the gaps between animation frames, median and
// p95. A measurement of this machine, not a check: the browser tests check what playing does
// (visualiser-controls.test.mjs), and this prints how smoothly it does it.
//
// Usage (the site must be served, e.g. `cargo xtask serve --port 8080` in another shell):
//   node crates/bench/visualiser_frames.mjs [--base http://127.0.0.1:8080/] [--frames 150] [--runs 3]
// Uses playwright-core from tests/e2e (installed by `cargo xtask setup`) and CHROMIUM
// (default /usr/bin/chromium), with WebGPU on as the browser tests have it (SwiftShader here).
import { createRequire } from 'node:module';
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
const frames = Number(opt('--frames', '150'));
const runs = Number(opt('--runs', '3'));
if (!(Number.isInteger(frames) && frames >= 10 && frames <= 10_000) || !(Number.isInteger(runs) && runs >= 1 && runs <= 20)) {
  console.error('--frames wants an integer 10..10000, --runs 1..20');
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await page.goto(new URL('#/visualiser?lang=en&stage=tiled&size=64&wg=16&sg=32', base).href);
await page.waitForSelector('#vis-step', { timeout: 60_000 });
await page.selectOption('#vis-speed', '10');
const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
console.log(`Chromium ${browser.version()}; ${frames} animation frames per run while the view plays.\n`);
console.log('| run | steps drawn | median frame gap | p95 frame gap | worst |');
console.log('| ---: | ---: | ---: | ---: | ---: |');
for (let run = 1; run <= runs; run++) {
  await page.click('#vis-play');
  // Frame times, and how many steps the view drew meanwhile (it wraps at the end, so the
  // changes of its step are counted rather than the step read before and after).
  const { times, steps } = await page.evaluate((n) => new Promise((resolve) => {
    const el = document.querySelector('#vis-step');
    let steps = 0;
    const seen = new MutationObserver(() => { steps += 1; });
    seen.observe(el, { attributes: true, attributeFilter: ['data-step'] });
    const t = [];
    const tick = (now) => {
      t.push(now);
      if (t.length < n) requestAnimationFrame(tick); else { seen.disconnect(); resolve({ times: t, steps }); }
    };
    requestAnimationFrame(tick);
  }), frames);
  await page.click('#vis-play');
  const gaps = times.slice(1).map((t, i) => t - times[i]).sort((a, b) => a - b);
  console.log(`| ${run} | ${steps} | ${at(gaps, 0.5).toFixed(1)} ms | ${at(gaps, 0.95).toFixed(1)} ms | ${gaps[gaps.length - 1].toFixed(1)} ms |`);
}
await browser.close();
