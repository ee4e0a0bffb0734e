// The soak (`cargo xtask soak`, not part of `cargo xtask test`): one page each for 1,000
// verified runs on the Kernels page, 1,000 races, and an hour of training (the hour-equivalent a visitor leaving the tab open would run). Prints the JS heap
// (after a forced GC), live GPU buffers and frame time at start and end, and fails on growth
// or on a result that differs from the first one. Counts can be lowered with SOAK_RUNS,
// SOAK_RACES and SOAK_TRAIN_S (seconds of training) for a quick try.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, waitForProbe, runAndWait, assertNoErrors } from '../e2e/helpers.mjs';

const RUNS = Number(process.env.SOAK_RUNS ?? 1000);
const RACES = Number(process.env.SOAK_RACES ?? 1000);
const TRAIN_S = Number(process.env.SOAK_TRAIN_S ?? 3600);
// Noise allowed in the heap after GC; growth per run would exceed it many times over.
const HEAP_SLACK = 1024 * 1024;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Heap after GC, live GPU buffers, and the mean frame time over 60 frames. */
async function sample(page, cdp) {
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = (await cdp.send('Runtime.getHeapUsage')).usedSize;
  const buffers = await page.evaluate(() => window.gpuPlayground.debug_live_buffers());
  const frameMs = await page.evaluate(() => new Promise((done) => {
    const times = [];
    const tick = (t) => { times.push(t); if (times.length > 60) done((times[60] - times[0]) / 60); else requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  }));
  return { heap, buffers, frameMs };
}

function report(t, what, start, end) {
  const line = `${what}: JS heap ${start.heap} → ${end.heap} bytes, live GPU buffers ${start.buffers} → ${end.buffers}, ` +
    `frame ${start.frameMs.toFixed(1)} → ${end.frameMs.toFixed(1)} ms`;
  console.log(line);
  t.diagnostic(line);
  assert.equal(end.buffers, 0, `${what}: GPU buffers left alive`);
  assert.ok(end.heap - start.heap < HEAP_SLACK, `${what}: JS heap grew by ${end.heap - start.heap} bytes`);
}

test(`${RUNS} verified runs on the Kernels page, identical results`, async (t) => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=33&n=31&k=17&stage=matmul-tiled');
  await waitForProbe(page);
  const cdp = await context.newCDPSession(page);
  await runAndWait(page);
  const first = await page.textContent('.result .verdict');
  const start = await sample(page, cdp);
  for (let i = 0; i < RUNS; i++) {
    await runAndWait(page);
    assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true', `run ${i}`);
    assert.equal(await page.textContent('.result .verdict'), first, `run ${i} differs from the first`);
  }
  report(t, `${RUNS} runs`, start, await sample(page, cdp));
  assertNoErrors(errors);
  await context.close();
});

test(`${RACES} races in one page, each verified and agreeing`, async (t) => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=32&workers=2');
  await waitForProbe(page);
  await page.waitForSelector('#race-start:not([disabled])');
  const cdp = await context.newCDPSession(page);
  const race = async () => {
    const n = Number(await page.getAttribute('.lanes', 'data-races'));
    await page.click('#race-start');
    await page.waitForFunction((k) => Number(document.querySelector('.lanes')?.dataset.races) > k, n, { timeout: 120_000 });
  };
  await race();
  const agree = await page.textContent('[data-agree]');
  const start = await sample(page, cdp);
  for (let i = 0; i < RACES; i++) {
    await race();
    assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true', `race ${i}`);
    assert.equal(await page.textContent('[data-agree]'), agree, `race ${i}: a different CPU–GPU difference`);
  }
  // Each race counted once (the first one included), none twice.
  assert.equal(await page.getAttribute('.lanes', 'data-races'), String(RACES + 1), 'races counted');
  report(t, `${RACES} races`, start, await sample(page, cdp));
  assertNoErrors(errors);
  await context.close();
});

test(`training for ${TRAIN_S} s in one page`, async (t) => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=en&data=spiral&layers=8,8');
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
  const cdp = await context.newCDPSession(page);
  const start = await sample(page, cdp);
  await page.click('#train-play');
  // The soak's length: TRAIN_S seconds of the page at its own pace, failing at once if the
  // GPU is lost on the way (a wait for "lost" that must time out).
  const lost = await page.waitForSelector('#train-status[data-gpu="lost"]', { timeout: TRAIN_S * 1000 })
    .then(() => true, (e) => { if (e.name === 'TimeoutError') return false; throw e; });
  assert.equal(lost, false, 'the GPU was lost during the soak');
  await page.click('#train-play'); // pause
  const steps = Number(await page.getAttribute('#train-status', 'data-gpu-steps'));
  console.log(`training: ${steps} GPU steps in ${TRAIN_S} s`);
  assert.ok(steps > 0);
  // The paused session still holds its resident buffers (counted since the engine merge);
  // leaving the page must free every one of them.
  const paused = await page.evaluate(() => window.gpuPlayground.debug_live_buffers());
  assert.ok(paused > 0, 'the training session\'s buffers are counted while it exists');
  await goto(page, '#/?lang=en');
  assert.equal(await page.$('#train-status'), null, 'the training view is gone');
  console.log(`training: ${paused} live GPU buffers while paused, then the page was left`);
  report(t, `training (${steps} steps)`, start, await sample(page, cdp));
  assertNoErrors(errors);
  await context.close();
});
