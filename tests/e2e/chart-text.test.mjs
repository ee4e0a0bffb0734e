// Chart text stays readable on a phone: every `svg text` of the thermal, roofline, systolic,
// Run all and race sweep charts, the train page's network and loss charts and the diagrams of
// the memory, precision, utilisation, simt, latency-throughput, multi-gpu, occupancy and vram
// lessons renders at ≥ 11 CSS px (computed font-size × the svg's CSS width / its viewBox
// width), inside the svg's box and clear of the svg's other texts, at 390 px in en and zh and
// again at 1280 and 1920 px after the window is resized (the charts measure their width and
// redraw). Runs use the smallest settings each page allows, so they stay short on SwiftShader.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, waitForProbe, screenshot, assertNoErrors, trainingSettled } from './helpers.mjs';

const MIN_PX = 11;
const WIDTHS = [390, 1280, 1920];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/**
 * Every text of the svgs matched by `sel` that renders below `minPx`, outside its svg or over
 * another text of its svg (boxes overlapping by more than 2 px both ways: a text's box is a
 * little taller than its glyphs, so lines set close together may touch).
 */
function faults({ sel, minPx }) {
  const out = [];
  const svgs = [...document.querySelectorAll(sel)];
  if (svgs.length === 0) return [`no svg matches ${sel}`];
  for (const svg of svgs) {
    const box = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    const scale = vb && vb.width > 0 ? box.width / vb.width : 1;
    const seen = [];
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      const r = t.getBoundingClientRect();
      const what = JSON.stringify(t.textContent.trim().slice(0, 30));
      if (px < minPx - 0.01) out.push(`${what} renders at ${px.toFixed(1)} px`);
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
        const f = (a, b) => `${a.toFixed(0)}–${b.toFixed(0)}`;
        out.push(`${what} overflows the svg: ${f(r.left, r.right)} × ${f(r.top, r.bottom)} in ${f(box.left, box.right)} × ${f(box.top, box.bottom)}`);
      }
      for (const [other, o] of seen) {
        const dx = Math.min(r.right, o.right) - Math.max(r.left, o.left);
        const dy = Math.min(r.bottom, o.bottom) - Math.max(r.top, o.top);
        if (dx > 2 && dy > 2) out.push(`${what} overlaps ${other}`);
      }
      seen.push([what, r]);
    }
  }
  return out;
}

/**
 * At each width: resize, wait until the charts have redrawn for it (their text checks out, or
 * 10 s pass and the assertion names what is wrong), then assert and take a screenshot.
 */
async function checkAtWidths(page, sel, name, lang) {
  const arg = { sel, minPx: MIN_PX };
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForFunction(`(${faults})(${JSON.stringify(arg)}).length === 0`, null, { timeout: 10_000 }).catch(() => {});
    const bad = await page.evaluate(faults, arg);
    assert.deepEqual(bad, [], `${name} at ${width} px (${lang}): ${bad.join('; ')}`);
    const full = await screenshot(page, `chart-text-${name}-${width}-${lang}`);
    // Each chart alone, at its own size, to read its text.
    const parent = sel === '.systolic-svg' ? '.systolic-views' : sel;
    const charts = page.locator(parent);
    const n = parent === sel ? await charts.count() : 1;
    for (let i = 0; i < n; i++) {
      if (parent === sel && await charts.nth(i).locator('text').count() === 0) continue;
      await charts.nth(i).screenshot({ path: full.replace(/\.png$/, i === 0 ? '-chart.png' : `-chart${i + 1}.png`) });
    }
  }
}

for (const lang of ['en', 'zh']) {
  test(`systolic 8×8 labels are ≥ ${MIN_PX} px (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn/systolic?lang=${lang}`, { viewport: { width: 390, height: 900 } });
    await page.fill('#systolic-n', '8');
    await page.fill('#systolic-k', '8');
    await page.waitForSelector('.systolic[data-n="8"][data-k="8"]');
    // A few cycles in: queues waiting and products in the active PEs.
    for (let i = 0; i < 3; i++) await page.click('.systolic [data-act="step"]');
    await page.waitForSelector('.systolic[data-cycle="3"]');
    await checkAtWidths(page, '.systolic-svg', 'systolic', lang);
    assertNoErrors(errors);
    await context.close();
  });

  test(`thermal axes are ≥ ${MIN_PX} px (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn/thermal?lang=${lang}`, { viewport: { width: 390, height: 900 } });
    await page.waitForSelector('[data-probe="available"], [data-probe="unavailable"]', { timeout: 30_000, state: 'attached' });
    const sel = '.widget[data-widget="thermal"]';
    await page.fill('#thermal-secs', '2');
    await page.click(`${sel} [data-act="start"]`);
    await page.waitForFunction((s) => {
      const st = document.querySelector(`${s} .widget-result`)?.dataset.state;
      return st === 'done' || st === 'error' || st === 'lost';
    }, sel, { timeout: 60_000 });
    assert.equal(await page.getAttribute(`${sel} .widget-result`, 'data-state'), 'done');
    await checkAtWidths(page, '.thermal-chart svg', 'thermal', lang);
    assertNoErrors(errors);
    await context.close();
  });

  test(`Run all bar labels are ≥ ${MIN_PX} px (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/kernels?lang=${lang}&m=32&n=32&k=32&stage=matmul-tiled`, { viewport: { width: 390, height: 900 } });
    await waitForProbe(page);
    await page.click('#run-all-button');
    await page.waitForFunction(() => Number(document.querySelector('.chart')?.dataset.runs) > 0, null, { timeout: 180_000 });
    await checkAtWidths(page, '.chart svg', 'run-all', lang);
    assertNoErrors(errors);
    await context.close();
  });
}

for (const lang of ['en', 'zh']) {
  test(`roofline axes are ≥ ${MIN_PX} px (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn/roofline?lang=${lang}`, { viewport: { width: 390, height: 900 } });
    await page.waitForSelector('[data-probe="available"], [data-probe="unavailable"]', { timeout: 30_000, state: 'attached' });
    const sel = '.widget[data-widget="roofline"]';
    await page.click(`${sel} button.measure`);
    await page.waitForFunction((s) => {
      const st = document.querySelector(`${s} .widget-result`)?.dataset.state;
      return st === 'done' || st === 'error' || st === 'lost';
    }, sel, { timeout: 300_000 });
    assert.equal(await page.getAttribute(`${sel} .widget-result`, 'data-state'), 'done');
    await checkAtWidths(page, '.roofline-chart', 'roofline', lang);
    assertNoErrors(errors);
    await context.close();
  });
}

for (const lang of ['en', 'zh']) {
  test(`race sweep axes are ≥ ${MIN_PX} px (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=sweep&from=16&to=128&workers=2`, { viewport: { width: 390, height: 900 } });
    await waitForProbe(page);
    await page.waitForSelector('#sweep-start:not([disabled])');
    await page.click('#sweep-start');
    await page.waitForSelector('.sweep-chart[data-done="true"]', { timeout: 180_000 });
    await checkAtWidths(page, '.sweep-chart svg', 'race-sweep', lang);
    assertNoErrors(errors);
    await context.close();
  });

  test(`train network and loss chart are ≥ ${MIN_PX} px (${lang})`, async () => {
    const url = `#/train?data=spiral&layers=4&act=tanh&lr=0.03&batch=16&opt=adam&features=x,y,sinx,siny&noise=0.1&seed=1&lang=${lang}`;
    const { page, context, errors } = await openPage(browser, url, { viewport: { width: 390, height: 900 } });
    await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
    await page.click('#train-play');
    await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.gpuSteps) >= 20, null, { timeout: 120_000, polling: 250 });
    await page.click('#train-play'); // pause
    await trainingSettled(page);
    await checkAtWidths(page, '.train svg', 'train', lang);
    assertNoErrors(errors);
    await context.close();
  });
}

for (const lang of ['en', 'zh']) {
  test(`train experiment charts are ≥ ${MIN_PX} px (${lang})`, async () => {
    // The crossover on a grid of two points; the batch-size experiment's first two batch sizes.
    const url = `#/train?layers=4&act=relu&xwidths=16&xbatches=1,4&lang=${lang}`;
    const { page, context, errors } = await openPage(browser, url, { viewport: { width: 390, height: 900 } });
    await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
    await page.click('#train-x-run');
    await page.waitForSelector('#train-crossover[data-phase="done"]', { timeout: 300_000 });
    await page.click('#train-exp-run');
    await page.waitForFunction(() => document.querySelectorAll('.train-exp-table tbody tr').length >= 2, null, { timeout: 300_000, polling: 250 });
    await page.click('#train-exp-run'); // cancel: the rows so far stay
    await page.waitForSelector('.train-exp-chart');
    await checkAtWidths(page, '.train-exp-chart, .train-x-chart', 'train-experiments', lang);
    assertNoErrors(errors);
    await context.close();
  });
}

// The lessons' static diagrams, the multi-GPU calculator's bars (drawn from its defaults) and
// the memory lesson's stride chart (after a measurement).
const LESSONS = ['memory', 'precision', 'utilisation', 'simt', 'latency-throughput', 'multi-gpu', 'occupancy', 'vram'];
for (const lang of ['en', 'zh']) {
  for (const id of LESSONS) {
    test(`${id} diagram text is ≥ ${MIN_PX} px (${lang})`, async () => {
      const { page, context, errors } = await openPage(browser, `#/learn/${id}?lang=${lang}`, { viewport: { width: 390, height: 900 } });
      await page.waitForSelector(id === 'multi-gpu' ? 'article.lesson svg.bars' : 'article.lesson svg');
      if (id === 'memory') {
        await page.waitForSelector('[data-probe="available"], [data-probe="unavailable"]', { timeout: 30_000, state: 'attached' });
        const sel = '.widget[data-widget="strided"]';
        await page.click(`${sel} button.measure`);
        await page.waitForFunction((s) => {
          const st = document.querySelector(`${s} .widget-result`)?.dataset.state;
          return st === 'done' || st === 'error' || st === 'lost';
        }, sel, { timeout: 120_000 });
        assert.equal(await page.getAttribute(`${sel} .widget-result`, 'data-state'), 'done');
        await page.waitForSelector('.stride-chart');
      }
      await checkAtWidths(page, 'article.lesson svg', `lesson-${id}`, lang);
      assertNoErrors(errors);
      await context.close();
    });
  }
}
