// First-load benchmark (not a test): bytes a visitor downloads and time until the page can be
// used, for the landing page and an embed, each in a fresh browser context (cold cache),
// headless Chromium on this machine. Bytes are counted as a static host would send them:
// gzip-compressed (zlib level 6, what common servers use) except images, next to the raw
// sizes. LIST=1 prints every response.
//
//   cargo xtask e2e --no-build   (or any server of a built site), then:
//   BASE_URL=http://127.0.0.1:PORT/course/gpu-playground/ node tests/e2e/first-load.mjs
//
// "Interactive" = the moment the page's main control works: for the landing page the app has
// rendered and the WebGPU probe has answered ([data-webgpu]); for an embed its run button
// (Run, Start the race, Play) is enabled. Measured from navigation start (performance.now() in the page).
import { gzipSync } from 'node:zlib';
import { launch, BASE_URL } from './helpers.mjs';

const RUNS = Number(process.env.RUNS ?? 5);
const CASES = [
  { name: 'landing page', path: '#/?lang=en', ready: () => !!document.querySelector('[data-webgpu]') },
  {
    name: 'embed (matmul)',
    path: '#/embed/matmul?lang=en&m=64',
    ready: () => { const b = document.querySelector('#run-button'); return !!b && !b.disabled; },
  },
  // The two widgets docs/embedding.md's five-minute example puts in a course page.
  {
    name: 'embed (race)',
    path: '#/embed/race?lang=en',
    ready: () => { const b = document.querySelector('#race-start'); return !!b && !b.disabled; },
  },
  {
    name: 'embed (SIMT view)',
    path: '#/embed/simt?lang=en',
    ready: () => { const b = document.querySelector('#vis-play'); return !!b && !b.disabled; },
  },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const browser = await launch();
const rows = [];
for (const c of CASES) {
  const times = [];
  let raw = 0;
  let gz = 0;
  let files = 0;
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // No service worker: a first visit has none yet.
    await context.addInitScript(() => { try { delete Navigator.prototype.serviceWorker; } catch {} });
    const page = await context.newPage();
    const bodies = [];
    page.on('response', (r) => bodies.push(r.body().then((b) => ({ url: r.url(), b }), () => ({ url: r.url(), b: Buffer.alloc(0) }))));
    await page.goto(new URL(c.path, BASE_URL).href);
    await page.waitForFunction(c.ready, null, { timeout: 60_000, polling: 10 });
    times.push(await page.evaluate(() => performance.now()));
    await page.waitForLoadState('networkidle');
    const all = await Promise.all(bodies);
    if (i === 0) {
      files = all.length;
      raw = all.reduce((s, { b }) => s + b.length, 0);
      // Images go over the wire as they are (hosts do not gzip PNG); the rest gzip-compressed.
      gz = all.reduce((s, { url, b }) => s + (!b.length ? 0
        : /\.png$/.test(new URL(url).pathname) ? b.length : gzipSync(b, { level: 6 }).length), 0);
      if (process.env.LIST) for (const { url, b } of all) console.log(`${b.length}\t${gzipSync(b, { level: 6 }).length}\t${url}`);
    }
    await context.close();
  }
  rows.push({ ...c, times, raw, gz, files });
}
await browser.close();

const kb = (b) => (b / 1024).toFixed(0);
console.log(`First load, ${new Date().toISOString().slice(0, 10)}, ${RUNS} cold loads each, ${BASE_URL}`);
console.log('| page | files | raw KiB | gzip KiB | interactive, median ms | min–max ms |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.files} | ${kb(r.raw)} | ${kb(r.gz)} | ${median(r.times).toFixed(0)} | `
    + `${Math.min(...r.times).toFixed(0)}–${Math.max(...r.times).toFixed(0)} |`);
}
