// The race's CPU SIMD kernel module (crates/race-kernel): the worker loads the relaxed-SIMD
// build where the browser validates relaxed SIMD, the plain SIMD128 build where it does not
// (simulated by serving a worker whose probe answers "no"), and the app's own kernel when
// neither module can be fetched; every race verifies against the f64 reference either way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, goto, screenshot, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/**
 * Runs one SIMD race at N = 256 with one worker in a fresh context (no service worker, so
 * routes see every request); `patch(context)` may change what the server answers.
 */
async function simdRace(patch = async () => {}) {
  const context = await browser.newContext({ serviceWorkers: 'block', viewport: { width: 1280, height: 900 } });
  await patch(context);
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}`); });
  context.on('request', (req) => requests.push(new URL(req.url()).pathname));
  await goto(page, '#/race?lang=en&n=256&cpu=simd&workers=1');
  await page.waitForSelector('#race-start:not([disabled])', { timeout: 60_000 });
  await page.click('#race-start');
  await page.waitForFunction(() => Number(document.querySelector('.lanes')?.dataset.races) > 0, null, { timeout: 120_000 });
  const kernel = await page.getAttribute('[data-cpu-kernel]', 'data-cpu-kernel');
  const verified = await page.getAttribute('.race-results', 'data-verified');
  const text = await page.textContent('.cpu-breakdown');
  return { page, context, errors, requests, kernel, verified, text };
}

const kernelFiles = (requests) => requests.filter((p) => p.includes('/kernels/')).map((p) => p.split('/').pop());

test('where relaxed SIMD validates, the race runs the fused kernel module and verifies', async () => {
  const { page, context, errors, requests, kernel, verified, text } = await simdRace();
  // The browser's own answer decides what to expect (Chromium ≥ 114 has relaxed SIMD).
  const relaxed = await page.evaluate(() => {
    const z = [0xfd, 0x0c, ...new Array(16).fill(0)];
    return WebAssembly.validate(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b,
      3, 2, 1, 0, 0x0a, 0x3d, 1, 0x3b, 0, ...z, ...z, ...z, 0xfd, 0x85, 0x02, 0x0b]));
  });
  assert.equal(kernel, relaxed ? 'relaxed' : 'simd');
  assert.deepEqual(kernelFiles(requests), [relaxed ? 'race_kernel_relaxed.wasm' : 'race_kernel_simd.wasm']);
  assert.equal(verified, 'true');
  assert.match(text, relaxed ? /f32x4\.relaxed_madd/ : /a multiply, then an add/);
  await screenshot(page, 'race-kernel-relaxed-en');
  assertNoErrors(errors);
  await context.close();
});

test('a browser without relaxed SIMD gets the plain SIMD128 module, and the race verifies', async () => {
  let patched = false;
  const { context, errors, requests, kernel, verified, text } = await simdRace(async (ctx) => {
    await ctx.route('**/cpu-worker.js', async (route) => {
      const response = await route.fetch();
      const original = await response.text();
      const body = original.replace('WebAssembly.validate(RELAXED_PROBE)', 'false');
      patched = body !== original;
      await route.fulfill({ response, body });
    });
  });
  assert.ok(patched, 'the worker still asks WebAssembly.validate about its probe');
  assert.equal(kernel, 'simd');
  assert.deepEqual(kernelFiles(requests), ['race_kernel_simd.wasm'], 'the relaxed module is never fetched');
  assert.equal(verified, 'true');
  assert.match(text, /SIMD128: a multiply, then an add/);
  assertNoErrors(errors);
  await context.close();
});

test('without either kernel module the app module computes, and the race verifies', async () => {
  const { context, errors, kernel, verified } = await simdRace(async (ctx) => {
    await ctx.route('**/kernels/*.wasm', (route) => route.fulfill({ status: 404, body: '' }));
  });
  assert.equal(kernel, 'app');
  assert.equal(verified, 'true');
  // The two 404s are the browser's console lines about the failed fetches, nothing else.
  assert.ok(errors.every((e) => /404|Failed to load resource/.test(e)), errors.join('\n'));
  await context.close();
});
