// Chart text stays readable on a phone: every `svg text` of the thermal, roofline and systolic
// charts, the train page's network and loss charts and the diagrams of
// the memory, precision, utilisation, simt, latency-throughput, multi-gpu, occupancy and vram
// lessons renders at ≥ 11 CSS px (computed font-size × the svg's CSS width / its viewBox
// width), inside the svg's box and clear of the svg's other texts, at 390 px in en and zh and
// again at 1280 and 1920 px after the window is resized (the charts measure their width and
// redraw). Runs use the smallest settings each page allows, so they stay short on SwiftShader.
// The Run all chart, the race sweep chart and (in zh) the roofline chart are checked the same
// way (chart-faults.mjs) by ladder.test.mjs, race.test.mjs and lessons-measured.test.mjs, on
// their own runs instead of a second run of the same GPU work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, assertNoErrors, trainingSettled, switchLang } from './helpers.mjs';
import { MIN_PX, checkAtWidths } from './chart-faults.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

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

}

// In zh the roofline chart's text is checked on lessons-measured.test.mjs's measurement.
for (const lang of ['en']) {
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

// The train page keeps its network and its experiments' results through the header's language
// switch: each is trained or measured once, checked in English at 390, 1280 and 1920 px, then
// back at 390 px switched to Chinese and checked again, instead of a second load and run.
async function checkBothLanguages(page, sel, name, shown) {
  await checkAtWidths(page, sel, name, 'en');
  await page.setViewportSize({ width: 390, height: 900 });
  await switchLang(page, 'zh');
  await shown();
  await checkAtWidths(page, sel, name, 'zh');
}

test(`train network and loss chart are ≥ ${MIN_PX} px (en, zh)`, async () => {
  const url = '#/train?data=spiral&layers=4&act=tanh&lr=0.03&batch=16&opt=adam&features=x,y,sinx,siny&noise=0.1&seed=1&lang=en';
  const { page, context, errors } = await openPage(browser, url, { viewport: { width: 390, height: 900 } });
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
  await page.click('#train-play');
  await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.gpuSteps) >= 20, null, { timeout: 120_000, polling: 250 });
  await page.click('#train-play'); // pause
  await trainingSettled(page);
  const steps = await page.getAttribute('#train-status', 'data-gpu-steps');
  await checkBothLanguages(page, '.train svg', 'train', async () => {
    await trainingSettled(page);
    assert.equal(await page.getAttribute('#train-status', 'data-gpu-steps'), steps, 'the same trained network');
  });
  assertNoErrors(errors);
  await context.close();
});

test(`train experiment charts are ≥ ${MIN_PX} px (en, zh)`, async () => {
  // The crossover on a grid of two points; the batch-size experiment's first two batch sizes.
  const url = '#/train?layers=4&act=relu&xwidths=16&xbatches=1,4&lang=en';
  const { page, context, errors } = await openPage(browser, url, { viewport: { width: 390, height: 900 } });
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
  await page.click('#train-x-run');
  await page.waitForSelector('#train-crossover[data-phase="done"]', { timeout: 300_000 });
  await page.click('#train-exp-run');
  await page.waitForFunction(() => document.querySelectorAll('.train-exp-table tbody tr').length >= 2, null, { timeout: 300_000, polling: 250 });
  await page.click('#train-exp-run'); // cancel: the rows so far stay
  await page.waitForSelector('.train-exp-chart');
  const rows = await page.$$eval('.train-exp-table tbody tr', (r) => r.length);
  await checkBothLanguages(page, '.train-exp-chart, .train-x-chart', 'train-experiments', async () => {
    await page.waitForSelector('#train-crossover[data-phase="done"]');
    await page.waitForSelector('.train-exp-chart');
    assert.equal(await page.$$eval('.train-exp-table tbody tr', (r) => r.length), rows, 'the same measurements');
  });
  assertNoErrors(errors);
  await context.close();
});

// The lessons' static diagrams, the multi-GPU calculator's bars (drawn from its defaults) and
// the memory lesson's stride chart (after a measurement). One page per language visits the
// lessons in turn (a hash change, as a reader clicking through them): a fresh load per lesson
// was 16 loads of the app for the same checks. Each lesson is shown first at 390 px, as a
// fresh load at 390 px was, before `checkAtWidths` resizes it to 1280 and 1920 px.
const LESSONS = ['memory', 'precision', 'utilisation', 'simt', 'latency-throughput', 'multi-gpu', 'occupancy', 'vram'];
for (const lang of ['en', 'zh']) {
  test(`lesson diagram text is ≥ ${MIN_PX} px: ${LESSONS.join(', ')} (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn?lang=${lang}`, { viewport: { width: 390, height: 900 } });
    for (const id of LESSONS) {
      await page.setViewportSize({ width: 390, height: 900 });
      await goto(page, `#/learn/${id}?lang=${lang}`);
      assert.ok(await page.$(`article.lesson[data-lesson="${id}"]`), `${id} is shown`);
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
    }
    await context.close();
  });
}
