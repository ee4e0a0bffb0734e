// The batching experiment of #/gpt ("why inference batches"): KV-cache decoding at batches
// 1, 2, … on the page's adapter, each batch's warm-up checked against the CPU twin, tokens per
// second in a table and a chart; the device's roof measured and prefill and decode placed on
// it at the arithmetic intensities of the model's shape (recomputed here from the formula
// written out independently); Cancel stops a run; without WebGPU the intensities still show
// and nothing runs; screenshots of the section at 390, 1280 and 1920 px in English and Chinese.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors, switchLang } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// The page's model: 2 layers, width 64, context 32, vocabulary 64. FLOPs of the matrix
// products and attention; the fewest bytes (weights, activations, cached keys and values).
const [L, C, T, V] = [2, 64, 32, 64];
const weights = (rows, positions) => L * (12 * C * C + 13 * C) + 2 * C + C * V + rows * C + positions * C;
const acts = (rows) => 2 * rows * (C + L * 18 * C + C + V);
function decodeIntensity(b) {
  let flops = 0;
  let bytes = 0;
  for (let a = 2; a <= T; a++) { // steps at positions 1 … 31 attend to 2 … 32 positions
    flops += 2 * b * (L * (12 * C * C + 2 * a * C) + C * V);
    bytes += 4 * (weights(b, 1) + acts(b) + L * b * a * 2 * C);
  }
  return flops / bytes;
}
const prefillIntensity = () => {
  const flops = 2 * T * (L * 12 * C * C + C * V) + L * 2 * C * T * (T + 1);
  return flops / (4 * (weights(T, T) + acts(T) + L * T * 2 * C));
};
const close = (a, b) => Math.abs(a / b - 1) < 1e-9;

async function done(page) {
  await page.waitForSelector('#gpt-batching[data-phase="done"]', { timeout: 300_000 });
  return page.$$eval('#gpt-batching-table tbody tr', (rows) => rows.map((r) => ({
    batch: Number(r.dataset.batch), cell: r.dataset.cell, tokens: Number(r.dataset.tokens),
  })));
}

// The section at 390, 1280 and 1920 px: nothing wider than the window, and a screenshot.
async function layoutAtThreeWidths(page, lang) {
  const out = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
  for (const width of [390, 1280, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(scroll <= 0, `${lang} at ${width}: the page scrolls sideways by ${scroll} px`);
    await page.locator('#gpt-batching').screenshot({ path: join(out, `gpt-batching-${lang}-${width}.png`) });
  }
}

test('Cancel stops a run between batches; bad URL values are named', async () => {
  const { page, context, errors } = await openPage(browser, '#/gpt?lang=en&bmax=64');
  await page.waitForSelector('#gpt-batching-run:not([disabled])');
  await page.click('#gpt-batching-run');
  await page.waitForSelector('#gpt-batching-table tr[data-batch="1"][data-cell="verified"]', { timeout: 240_000 });
  await page.click('#gpt-batching-run');
  await page.waitForSelector('#gpt-batching[data-phase="cancelled"]');
  assert.equal(await page.textContent('#gpt-batching-run'), 'Run');
  assert.ok(await page.$('#gpt-batching-table tr[data-batch="64"][data-cell="waiting"]'), 'the largest batch was never reached');
  assert.equal(await page.$('#gpt-batching-verdict'), null);
  assertNoErrors(errors);
  await context.close();
  const bad = await openPage(browser, '#/gpt?lang=zh&bmax=12');
  await bad.page.waitForSelector('#gpt-batching-software');
  assert.match(await bad.page.textContent('#gpt-batching-errors'), /bmax=12/);
  assert.equal(await bad.page.$eval('#gpt-bmax', (s) => s.value), '8', 'the software adapter\'s default');
  assertNoErrors(bad.errors);
  await bad.context.close();
});

// The finished run is then laid out at three widths in English, and in Chinese after the
// header's language switch on the same page: one run for both languages' layouts. The file's
// last test on the GPU's browser: after #/gpt in Chinese (its quatrains) the next page opened
// in the same browser did not show its route within 60 s (gpt-page.test.mjs says more).
test('small batches decode, verified, to a table and a chart; prefill and decode sit on the roofline; the section at 390, 1280 and 1920 px in English and Chinese', async () => {
  const { page, context, errors } = await openPage(browser, '#/gpt?lang=en&bmax=2');
  await page.waitForSelector('#gpt-batching-software');
  await page.waitForSelector('#gpt-batching-run:not([disabled])');
  await page.click('#gpt-batching-run');
  await page.waitForSelector('#gpt-batching[data-phase="running"]');
  const rows = await done(page);
  assert.deepEqual(rows.map((r) => [r.batch, r.cell]), [[1, 'verified'], [2, 'verified']]);
  for (const r of rows) assert.ok(r.tokens > 0, `batch ${r.batch}: ${r.tokens} tokens/s`);
  assert.equal(await page.$$eval('#gpt-batching-chart g.bar rect', (b) => b.length), 2);
  assert.match(await page.textContent('#gpt-batching-verdict'), /From 1 to 2 sequences at once, a decode step took .*× as long but made 2 tokens instead of 1/);
  // The roof was measured, and both kinds of work are on it at their measured rates.
  assert.ok(Number(await page.getAttribute('#gpt-batching-ridge', 'data-ridge')) > 0);
  const points = await page.$$eval('#gpt-batching-roofline g.point', (ps) => Object.fromEntries(
    ps.map((p) => [p.dataset.point, { ai: Number(p.dataset.ai), measured: p.dataset.measured }])));
  assert.deepEqual(Object.keys(points).sort(), ['decode', 'decode-batched', 'prefill']);
  for (const p of Object.values(points)) assert.equal(p.measured, 'true');
  assert.ok(close(points.prefill.ai, prefillIntensity()), `prefill ${points.prefill.ai} vs ${prefillIntensity()}`);
  assert.ok(close(points.decode.ai, decodeIntensity(1)), `decode ${points.decode.ai} vs ${decodeIntensity(1)}`);
  assert.ok(close(points['decode-batched'].ai, decodeIntensity(2)));
  assert.ok(points.prefill.ai > points['decode-batched'].ai && points['decode-batched'].ai > points.decode.ai);
  await layoutAtThreeWidths(page, 'en');
  await switchLang(page, 'zh');
  assert.deepEqual(await done(page), rows, 'the finished run is shown in Chinese too');
  await layoutAtThreeWidths(page, 'zh');
  assertNoErrors(errors);
  await context.close();
});

test('without WebGPU the intensities still show and nothing runs', async () => {
  const plain = await launch({ webgpu: false });
  const { page, context, errors } = await openPage(plain, '#/gpt?lang=en&bmax=4');
  await page.waitForSelector('#gpt-batching-no-gpu');
  assert.ok(await page.isDisabled('#gpt-batching-run'));
  const ais = await page.$$eval('#gpt-batching-roofline-table tbody tr', (rs) => Object.fromEntries(rs.map((r) => [r.dataset.point, Number(r.dataset.ai)])));
  assert.ok(close(ais.prefill, prefillIntensity()));
  assert.ok(close(ais.decode, decodeIntensity(1)));
  assert.ok(close(ais['decode-batched'], decodeIntensity(4)));
  assert.equal(await page.$('#gpt-batching-roofline'), null, 'no roof without a device to measure');
  assertNoErrors(errors);
  await context.close();
  await plain.close();
});
