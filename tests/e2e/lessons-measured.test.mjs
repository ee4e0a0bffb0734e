// Learn → lessons 1–6 and 8: each renders in both languages without console errors or missing
// keys; every measuring widget produces finite numbers on SwiftShader; the occupancy
// calculator validates its inputs; a lost device and a browser without WebGPU get messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, screenshot, assertNoErrors } from './helpers.mjs';
import { QUEUE_SPY, queueState, clickAndCount } from './queue-spy.mjs';
import { checkAtWidths } from './chart-faults.mjs';

/** Lesson pages have no GPU panel: wait until a widget knows whether WebGPU is there. */
async function waitForProbe(page) {
  await page.waitForSelector('[data-probe="available"], [data-probe="unavailable"]', { timeout: 30_000, state: 'attached' });
  return page.getAttribute('[data-probe]', 'data-probe');
}

const LADDER = ['matmul-naive', 'matmul-coalesced', 'matmul-tiled', 'matmul-blocktile-1d', 'matmul-blocktile-2d',
  'matmul-vec4', 'matmul-subgroup', 'matmul-f16', 'matmul-tuned', 'matmul-double-buffer'];
const LESSONS = ['latency-throughput', 'simt', 'occupancy', 'memory', 'roofline', 'precision', 'utilisation'];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function noMissingKeys(page) {
  const text = await page.textContent('article.lesson');
  assert.doesNotMatch(text, /\[(lesson|kernel|size)\.[^\]]+\]/, 'a translation key is missing');
  assert.doesNotMatch(text, /undefined/);
  for (const t of await page.$$eval('.widget, .facts, svg', (els) => els.map((e) => e.textContent))) {
    assert.doesNotMatch(t, /NaN|Infinity/);
  }
}

for (const lang of ['en', 'zh']) {
  test(`lessons 1–6 and 8 render in ${lang}`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn?lang=${lang}`);
    for (const id of LESSONS) {
      await goto(page, `#/learn/${id}?lang=${lang}`);
      await page.waitForSelector(`article.lesson[data-lesson="${id}"]`);
      await waitForProbe(page);
      await page.waitForSelector('.try-it');
      assert.ok(await page.$('.widget'), `${id} has a widget`);
      await noMissingKeys(page);
      if (id === 'latency-throughput') {
        // The diagram's counts are the ones its caption states: 4 CPU cores, 192 GPU lanes.
        assert.equal((await page.$$('.diagram .core.big')).length, 4);
        assert.equal((await page.$$('.diagram .core.small')).length, 192);
      }
      await screenshot(page, `lessons-measured-${id}-${lang}`);
    }
    assertNoErrors(errors);
    await context.close();
  });
}

async function measure(page, widget, timeout = 120_000) {
  const sel = `.widget[data-widget="${widget}"]`;
  await page.click(`${sel} button.measure`);
  await page.waitForFunction((s) => {
    const st = document.querySelector(`${s} .widget-result`)?.dataset.state;
    return st === 'done' || st === 'error' || st === 'lost';
  }, sel, { timeout });
  const state = await page.getAttribute(`${sel} .widget-result`, 'data-state');
  assert.equal(state, 'done', await page.textContent(`${sel} .widget-result`));
  return sel;
}

const finite = (v) => Number.isFinite(Number(v)) && Number(v) >= 0;

test('the race times CPU and GPU at every size', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/latency-throughput?lang=en');
  await waitForProbe(page);
  const sel = await measure(page, 'race');
  const rows = await page.$$eval(`${sel} .race-row`, (rs) => rs.map((r) => [r.dataset.n, r.dataset.cpuMs, r.dataset.gpuMs, r.dataset.cpuKernel]));
  assert.deepEqual(rows.map((r) => r[0]), ['16', '64', '128', '256']);
  // The CPU contender is the race's SIMD kernel, not the f64 verification reference.
  assert.deepEqual(rows.map((r) => r[3]), ['simd', 'simd', 'simd', 'simd']);
  // Short CPU tries are repeated until the browser's clock resolves them: never 0 ms.
  for (const [, cpu, gpu] of rows) assert.ok(finite(cpu) && Number(cpu) > 0 && finite(gpu) && Number(gpu) > 0, `${cpu} ${gpu}`);
  // 256³ is 4,096 times the work of 16³: it must take measurably longer. 33.5 MFLOP on one
  // core with 128-bit wasm SIMD (no FMA: at most two 4-lane multiplies and two adds a cycle,
  // 16 flop/cycle, ≈ 100 GFLOP/s at 6 GHz) takes at least 0.33 ms, and at most 10 s
  // (3 MFLOP/s) on any machine. (An idle 2-core CI machine measured 0.97 ms = 35 GFLOP/s.)
  const cpu = rows.map((r) => Number(r[1]));
  assert.ok(cpu[3] > cpu[0], `CPU ms ${cpu}`);
  assert.ok(cpu[3] >= 0.33 && cpu[3] <= 10_000, `CPU 256³ took ${cpu[3]} ms`);
  assert.match(await page.textContent(sel), /software adapter/);
  await screenshot(page, 'lessons-measured-race-en');
  // On a phone in Chinese a time stays one word ("0.00456 ms", never "0.0045" above "6 ms")
  // and the table fits the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await goto(page, '#/learn/latency-throughput?lang=zh');
  await waitForProbe(page);
  await measure(page, 'race');
  const lines = await page.$$eval(`${sel} .race-row td.num`, (tds) => tds.map((td) => {
    const r = document.createRange();
    r.selectNodeContents(td);
    const tops = new Set([...r.getClientRects()].map((b) => Math.round(b.top)));
    return [td.textContent, tops.size];
  }));
  assert.equal(lines.length, 8);
  for (const [t, n] of lines) assert.equal(n, 1, `"${t}" is broken over ${n} lines`);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'sideways scroll at 390 px');
  await screenshot(page, 'lessons-measured-race-zh-390');
  assertNoErrors(errors);
  await context.close();
});

test('divergence, stride, roofline and launch widgets give finite numbers (zh)', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/simt?lang=zh');
  await waitForProbe(page);
  let sel = await measure(page, 'divergence');
  assert.ok(finite(await page.getAttribute(`${sel} .ratio`, 'data-value')));
  await screenshot(page, 'lessons-measured-simt-measured-zh');

  await goto(page, '#/learn/memory?lang=zh');
  sel = await measure(page, 'strided');
  const bars = await page.$$eval(`${sel} .bar`, (bs) => bs.map((b) => [b.dataset.stride, b.dataset.gbps]));
  assert.deepEqual(bars.map((b) => b[0]), ['1', '2', '4', '8', '16', '32', '64']);
  assert.ok(bars.every((b) => finite(b[1]) && Number(b[1]) > 0), JSON.stringify(bars));
  await screenshot(page, 'lessons-measured-memory-measured-zh');

  await goto(page, '#/learn/roofline?lang=zh');
  sel = await measure(page, 'roofline', 240_000);
  assert.ok(Number(await page.getAttribute(`${sel} .bandwidth`, 'data-value')) > 0);
  assert.ok(Number(await page.getAttribute(`${sel} .peak`, 'data-value')) > 0);
  const points = await page.$$eval(`${sel} .point`, (ps) => ps.map((p) => [p.dataset.stage, p.dataset.ai, p.dataset.gflops]));
  // Every stage but f16 runs in this browser (SwiftShader has subgroups, no shader-f16), and
  // each verified: an unverified stage would be left off the chart.
  assert.deepEqual(points.map((p) => p[0]).sort(), LADDER.filter((s) => s !== 'matmul-f16').sort(), JSON.stringify(points));
  assert.ok(points.every((p) => finite(p[1]) && finite(p[2]) && Number(p[2]) > 0));
  const ai = Object.fromEntries(points.map((p) => [p[0], Number(p[1])]));
  assert.ok(ai['matmul-naive'] < 0.25 && ai['matmul-tiled'] > 3 && ai['matmul-blocktile-2d'] > ai['matmul-tiled']);
  await screenshot(page, 'lessons-measured-roofline-measured-zh');
  // The chart's text on this measurement, at 390, 1280 and 1920 px (≥ 11 px, inside the svg,
  // no overlaps; chart-faults.mjs), instead of a second roofline run in chart-text.test.mjs;
  // then the window's width as before for the next widget.
  await checkAtWidths(page, '.roofline-chart', 'roofline', 'zh');
  await page.setViewportSize({ width: 1280, height: 900 });

  await goto(page, '#/learn/utilisation?lang=zh');
  await page.fill('#launch-count', '64');
  sel = await measure(page, 'launch');
  assert.ok(finite(await page.getAttribute(`${sel} .per-dispatch`, 'data-value')));
  assert.ok(Number(await page.getAttribute(`${sel} .per-trip`, 'data-value')) > 0);
  await screenshot(page, 'lessons-measured-utilisation-measured-zh');
  assertNoErrors(errors);
  await context.close();
});

test('precision: formats computed, rounding validated, f16 error on the CPU without shader-f16', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/precision?lang=en');
  await waitForProbe(page);
  assert.equal(await page.textContent('.formats tr[data-format="FP16"] td.eps'), '0.000977');
  await page.fill('#round-input', '70000');
  assert.match(await page.textContent('.rounding tr[data-format="FP16"]'), /overflow/);
  assert.equal(await page.textContent('.rounding tr[data-format="BF16"] .stored'), '70144');
  await page.fill('#round-input', 'abc');
  assert.match(await page.textContent('#round-input-error'), /decimal number/);
  assert.equal(await page.$('.rounding'), null);
  await page.fill('#f16-n', '0');
  assert.ok(await page.isDisabled('.widget[data-widget="f16-error"] button.measure'));
  await page.fill('#f16-n', '64');
  const sel = await measure(page, 'f16-error');
  const err = Number(await page.getAttribute(`${sel} .cpu-error`, 'data-value'));
  assert.ok(err > 0 && err < 1e-3, `${err}`);
  assert.match(await page.textContent(`${sel} [data-f16-unavailable]`), /shader-f16/);
  await screenshot(page, 'lessons-measured-precision-measured-en');
  assertNoErrors(errors);
  await context.close();
});

test('occupancy calculator: hand-checked cases and bad input', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/occupancy?lang=en');
  await waitForProbe(page);
  const occ = () => page.getAttribute('.occ-result', 'data-occupancy');
  assert.equal(await occ(), '100');
  await page.fill('#occ-regs', '64');
  assert.equal(await occ(), '50.0');
  assert.equal(await page.getAttribute('.limiter', 'data-limiter'), 'Registers');
  await page.fill('#occ-regs', '32');
  await page.fill('#occ-threads', '128');
  await page.fill('#occ-shared', '49152');
  assert.equal(await occ(), '18.8');
  assert.equal(await page.getAttribute('.limiter', 'data-limiter'), 'SharedMemory');
  await page.selectOption('#occ-gpu', '2');
  assert.match(await page.textContent('.widget[data-widget="occupancy"]'), /H100/);
  for (const [field, value, re] of [
    ['#occ-threads', 'abc', /whole number/i], ['#occ-threads', '2000', /1.*1,024/],
    ['#occ-regs', '', /.+/], ['#occ-shared', '-5', /.+/],
  ]) {
    await page.fill(field, value);
    assert.match(await page.textContent(`${field}-error`), re, `${field}=${value}`);
    assert.equal(await page.$('.occ-result'), null);
    const text = await page.textContent('.widget[data-widget="occupancy"]');
    assert.doesNotMatch(text, /NaN|Infinity/);
    await page.fill(field, field === '#occ-shared' ? '0' : '64');
  }
  assert.match(await page.textContent('[data-webgpu-limits]'), /fits/);
  await screenshot(page, 'lessons-measured-occupancy-h100-en');
  assertNoErrors(errors);
  await context.close();
});

test('a lost device gives a message and the next Measure recovers', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/simt?lang=en');
  await waitForProbe(page);
  await measure(page, 'divergence');
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_lose_device()), true);
  const sel = '.widget[data-widget="divergence"]';
  await page.click(`${sel} button.measure`);
  await page.waitForFunction((s) => ['done', 'lost', 'error'].includes(
    document.querySelector(`${s} .widget-result`)?.dataset.state), sel, { timeout: 120_000 });
  const state = await page.getAttribute(`${sel} .widget-result`, 'data-state');
  if (state === 'lost') {
    assert.match(await page.textContent(sel), /device was lost/);
    await measure(page, 'divergence');
  } else {
    // The page noticed the loss first and measured on a fresh device.
    assert.equal(state, 'done');
  }
  assertNoErrors(errors.filter((e) => !/destroyed|lost/i.test(e)));
  await context.close();
});

test('without WebGPU the measuring widgets explain and the calculators still work', async () => {
  const b = await launch();
  try {
    const { page, errors } = await openPage(b, '#/learn/roofline?lang=en', {
      initScript: () => { delete Navigator.prototype.gpu; },
    });
    assert.equal(await waitForProbe(page), 'unavailable');
    assert.match(await page.textContent('[data-no-webgpu]'), /does not offer/);
    assert.ok(await page.isDisabled('.widget button.measure'));
    await goto(page, '#/learn/occupancy?lang=en');
    assert.equal(await page.getAttribute('.occ-result', 'data-occupancy'), '100');
    assert.match(await page.textContent('.widget'), /not known/);
    await goto(page, '#/learn/precision?lang=en');
    await page.fill('#f16-n', '32');
    const sel = await measure(page, 'f16-error');
    assert.ok(Number(await page.getAttribute(`${sel} .cpu-error`, 'data-value')) > 0);
    await screenshot(page, 'lessons-measured-precision-no-webgpu-en');
    assertNoErrors(errors);
  } finally {
    await b.close();
  }
});

// A lesson's measurement is a series of GPU runs: Cancel stops it before its next run (the
// one on the GPU finishes first: "Cancelling…"), nothing is submitted after the click, it says
// so, and Measure starts afresh; leaving the page mid-run cancels it too: nothing is submitted
// once the lesson is gone, and no GPU buffer stays alive.
for (const lang of ['en', 'zh']) {
  test(`a measurement can be cancelled, and leaving the lesson cancels it (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn/utilisation?lang=${lang}`, { initScript: QUEUE_SPY });
    await waitForProbe(page);
    const sel = '.widget[data-widget="launch"]';
    const state = () => page.getAttribute(`${sel} .widget-result`, 'data-state');
    const idle = () => page.waitForFunction(() => window.__queueSpy.completed === window.__queueSpy.submitted, null, { timeout: 60_000 });
    // 1,024 separate launches: long enough on SwiftShader to be caught running.
    await page.fill('#launch-count', '1024');
    await page.click(`${sel} button.measure`);
    await page.waitForSelector(`${sel} button.cancel-measure:not([disabled])`);
    const atCancel = await clickAndCount(page, `${sel} button.cancel-measure`);
    await page.waitForFunction((s) => document.querySelector(`${s} .widget-result`)?.dataset.state !== 'running', sel, { timeout: 60_000 });
    assert.equal(await state(), 'cancelled', await page.textContent(`${sel} .widget-result`));
    await idle();
    assert.equal((await queueState(page)).submitted, atCancel, 'no GPU work submitted after Cancel');
    assert.match(await page.textContent(`${sel} .widget-result`),
      lang === 'en' ? /^Cancelled\. The steps not reached were not run/ : /^已取消。/);
    assert.equal(await page.$(`${sel} button.cancel-measure`), null, 'no Cancel once stopped');
    await screenshot(page, `lessons-measured-cancelled-${lang}`);
    // Measure again: a fresh run, to the end.
    await page.fill('#launch-count', '32');
    await measure(page, 'launch');
    // Leave mid-run.
    await page.fill('#launch-count', '1024');
    await page.click(`${sel} button.measure`);
    await page.waitForSelector(`${sel} button.cancel-measure`);
    await goto(page, `#/learn?lang=${lang}`);
    await page.waitForSelector(sel, { state: 'detached' });
    const atLeave = (await queueState(page)).submitted;
    await idle();
    assert.equal((await queueState(page)).submitted, atLeave, 'no GPU work submitted after leaving the lesson');
    await page.waitForFunction(() => window.gpuPlayground.debug_live_buffers() === 0, null, { timeout: 60_000 });
    assertNoErrors(errors);
    await context.close();
  });
}
