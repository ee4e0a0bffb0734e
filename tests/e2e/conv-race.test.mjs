// Race → the convolution view (#/race?view=conv): the same convolution on the CPU (direct, or
// im2col + the race's SIMD matmul, in the workers) and on a GPU stage, both verified against
// the f64 reference and against each other; Cancel, then a race again with sane times; bad
// settings named; the layout at 390/1280/1920 px in both languages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, resizeTo, waitForProbe, screenshot, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function race(page, timeout = 120_000) {
  const before = Number(await page.getAttribute('.lanes', 'data-races'));
  await page.click('#race-start');
  await page.waitForFunction(
    (n) => Number(document.querySelector('.lanes')?.dataset.races) > n, before, { timeout },
  );
}

/** The rows of a breakdown table as numbers in ms (seconds converted). */
async function breakdown(page, selector) {
  return page.$$eval(`${selector} tr`, (rows) => rows.map((r) => {
    const t = r.querySelector('td')?.textContent ?? '';
    // In ms, whatever unit the page chose (a part under 1 ms is written in µs).
    const m = t.match(/^(-?[\d.,]+) (ns|µs|ms|s)$/);
    const scale = { ns: 1e-6, 'µs': 1e-3, ms: 1, s: 1000 };
    return m ? Number(m[1].replace(/,/g, '')) * scale[m[2]] : null;
  }));
}

// A small odd shape: 2 images 9×11×3, 5 filters 3×3, stride 2, padding 1 → 2×5×6×5 outputs.
const SMALL = 'batch=2&h=9&w=11&c=3&k=5&r=3&s=3&stride=2&pad=1&dil=1';

for (const [cpu, gpu] of [['direct', 'conv-direct'], ['im2col-simd', 'conv-tiled'], ['im2col-simd', 'conv-implicit-gemm']]) {
  test(`conv race ${cpu} vs ${gpu}: both verified, agreeing, breakdown adds up`, async () => {
    const { page, context, errors } = await openPage(
      browser, `#/race?lang=en&view=conv&${SMALL}&workers=2&ccpu=${cpu}&cgpu=${gpu}`,
    );
    assert.equal(await waitForProbe(page), 'available');
    assert.equal(await page.inputValue('#race-cpu'), cpu);
    assert.equal(await page.inputValue('#race-conv-gpu'), gpu);
    await page.waitForSelector('#race-start:not([disabled])');
    await race(page);
    assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
    assert.equal(await page.getAttribute('[data-agree]', 'data-agree'), 'true');
    assert.match(await page.textContent('.race-results .checked'), /all 300 elements/);
    // CPU: total, copy in, compute, copy out, wait: the parts add up to the total.
    const [total, copyIn, compute, copyOut, wait] = await breakdown(page, '.cpu-breakdown');
    assert.ok(total > 0 && compute >= 0, `${total} ${compute}`);
    const sum = copyIn + compute + copyOut + wait;
    assert.ok(Math.abs(sum - total) <= 0.05 * total + 0.2, `parts ${sum} vs total ${total}`);
    const g = await breakdown(page, '.gpu-breakdown');
    assert.ok(g[0] > 0 && g[1] >= 0, `GPU total ${g[0]}, upload ${g[1]}`);
    assertNoErrors(errors);
    await context.close();
  });
}

test('cancel mid conv race, then race again: verified, with sane times', async () => {
  // Big enough that the naive CPU loop is still running when Cancel comes.
  const { page, context, errors } = await openPage(
    browser, '#/race?lang=en&view=conv&batch=4&h=96&w=96&c=16&k=32&r=5&s=5&stride=1&pad=2&dil=1&workers=1&ccpu=direct&cgpu=conv-direct',
  );
  await waitForProbe(page);
  await page.waitForSelector('#race-start:not([disabled])');
  await page.click('#race-start');
  await page.waitForSelector('.lanes[data-phase="running"]', { timeout: 60_000 });
  await page.click('#race-cancel');
  await page.waitForSelector('.lanes[data-phase="cancelled"]');
  assert.ok(await page.isEnabled('#race-start'));
  // Smaller, again: it finishes, verifies, and its times are of this race only.
  await page.fill('#race-conv-h', '12');
  await page.fill('#race-conv-w', '12');
  await page.fill('#race-conv-batch', '1');
  await page.fill('#race-conv-c', '3');
  await page.fill('#race-conv-k', '4');
  const t0 = Date.now();
  await race(page);
  const wall = Date.now() - t0;
  assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
  const [cpuTotal] = await breakdown(page, '.cpu-breakdown');
  const [gpuTotal] = await breakdown(page, '.gpu-breakdown');
  // Each side's time is within this race's own wall time (no cancelled work counted in it).
  assert.ok(cpuTotal > 0 && cpuTotal < wall, `CPU ${cpuTotal} ms, race took ${wall} ms`);
  assert.ok(gpuTotal > 0 && gpuTotal < wall, `GPU ${gpuTotal} ms, race took ${wall} ms`);
  assert.match(new URL(page.url()).hash, /h=12&w=12/);
  assertNoErrors(errors);
  await context.close();
});

test('bad conv race settings are named: fields at the field, variant and stage replaced', async () => {
  const { page, context, errors } = await openPage(
    browser, '#/race?lang=en&view=conv&batch=1&h=3&w=3&c=1&k=1&r=7&s=7&stride=1&pad=0&dil=1&ccpu=turbo&cgpu=conv-winograd',
  );
  await waitForProbe(page);
  const issues = await page.textContent('.race-issues');
  assert.match(issues, /setting ccpu =/);
  assert.match(issues, /setting cgpu =/);
  assert.equal(await page.inputValue('#race-cpu'), 'im2col-simd');
  assert.equal(await page.inputValue('#race-conv-gpu'), 'conv-tiled');
  assert.match(await page.textContent('[data-shape-error]'), /filter spans 7 along h, but the padded input has only 3/);
  assert.ok(await page.isDisabled('#race-start'));
  await page.fill('#race-conv-k', '0');
  assert.match(await page.textContent('#race-conv-k-error'), /k must be at least 1/);
  await page.fill('#race-conv-k', '2');
  await page.fill('#race-conv-r', '3');
  await page.fill('#race-conv-s', '3');
  await race(page);
  assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`conv race layout at 390, 1280 and 1920 px (${lang})`, async () => {
    // One race per language, run at 390 px (the narrowest, where the results must fit a
    // phone); its results are then checked at 1280 and 1920 px by resizing. Racing again at
    // each width checked the race again, which the tests above do, not the layout.
    const { page, context, errors } = await openPage(
      browser, `#/race?lang=${lang}&view=conv&${SMALL}&workers=2`, { viewport: { width: 390, height: 1000 } },
    );
    await waitForProbe(page);
    await page.waitForSelector('#race-start:not([disabled])');
    await race(page);
    for (const width of [390, 1280, 1920]) {
      await resizeTo(page, width, 1000);
      assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
      await screenshot(page, `conv-race-${width}-${lang}`);
      const over = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      assert.ok(over <= 1, `the page is ${over} px wider than ${width}`);
      assertNoErrors(errors);
    }
    await context.close();
  });
}
