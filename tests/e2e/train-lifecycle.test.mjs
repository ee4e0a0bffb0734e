// The training view's run lifecycle, as a learner meets it: Pause stops sending steps at once
// and says how many already sent are still finishing (at most a quarter second of work is ever
// queued, so the count stops soon after); a restart names what each side had reached, with its
// own count; the loss line names the side its numbers come from; the spiral names the features
// that make it learnable, one click away. Screenshots at 390, 1280 and 1920 px in both
// languages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, resizeTo, screenshot, assertNoErrors, sig3 } from './helpers.mjs';

const SPIRAL = '#/train?data=spiral&layers=8,8&act=tanh&lr=0.03&batch=32&opt=adam&features=x,y&noise=0.1&seed=1';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const status = (page) => page.evaluate(() => ({ ...document.querySelector('#train-status')?.dataset }));

async function waitForGpu(page) {
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 90_000 });
  await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.heat) > 1, null, { timeout: 60_000 });
}

async function waitSteps(page, n) {
  await page.waitForFunction((n) => Number(document.querySelector('#train-status')?.dataset.gpuSteps) >= n,
    n, { timeout: 120_000, polling: 100 });
}

test('Pause sends nothing more, names the steps still finishing, and the count stops where it was sent', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  await page.click('#train-play');
  // Long enough for a rate to be measured (the queue is sized from it).
  await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.gpuRate) > 0,
    null, { timeout: 120_000, polling: 100 });
  await waitSteps(page, 30);
  // Records every status change from here, so nothing between two reads is missed.
  await page.evaluate(() => {
    window.seen = [];
    const note = () => window.seen.push({ ...document.querySelector('#train-status').dataset,
      text: document.querySelector('#train-status .rate.gpu')?.textContent });
    new MutationObserver(note).observe(document.querySelector('main'), { subtree: true, attributes: true, childList: true });
  });
  await page.click('#train-play');
  await page.waitForSelector('#train-status[data-running="false"]');
  const paused = await status(page);
  const sent = Number(paused.gpuSubmitted);
  const inFlight = sent - Number(paused.gpuSteps);
  // The queue obeys the page's own limit (a quarter second of work at its measured rate,
  // 2 to 24 steps: page_models::train::run::in_flight_limit, unit-tested there), which the
  // status line gives as the limit its last sending obeyed: at Pause and at every status
  // seen while running, no more steps are in flight than that. How fast this machine steps
  // plays no part in the check.
  const limit = Number(paused.gpuQueueLimit);
  assert.ok(limit >= 2 && limit <= 24, `queue limit ${paused.gpuQueueLimit}`);
  assert.ok(inFlight <= limit, `${inFlight} steps were still queued at Pause (the page's limit: ${limit})`);
  await page.waitForSelector('#train-status[data-gpu-in-flight="0"]', { timeout: 30_000 });
  const done = await status(page);
  assert.equal(Number(done.gpuSubmitted), sent, 'nothing was sent after Pause');
  assert.equal(Number(done.gpuSteps), sent, 'the count stops at what was sent');
  const seen = await page.evaluate(() => window.seen);
  for (const s of seen) {
    const n = Number(s.gpuInFlight);
    assert.ok(n <= Number(s.gpuQueueLimit), `${n} in flight over the limit: ${JSON.stringify(s)}`);
  }
  for (const s of seen.filter((s) => s.running === 'false')) {
    assert.equal(Number(s.gpuSubmitted), sent, `sent after Pause: ${JSON.stringify(s)}`);
    if (Number(s.gpuInFlight) > 0) {
      assert.match(s.text, new RegExp(`finishing ${s.gpuInFlight} steps? already sent`), s.text);
    } else {
      assert.doesNotMatch(s.text, /finishing/, s.text);
    }
  }
  assert.match(await page.textContent('#train-status .rate.gpu'), new RegExp(`paused \\(step ${sent}\\)`));
  assertNoErrors(errors);
  await context.close();
});

test('leaving the page keeps the run: it holds while away and carries on on return', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  await page.click('#train-play');
  await waitSteps(page, 20);
  await page.click('#train-play');
  await page.waitForSelector('#train-status[data-gpu-in-flight="0"]', { timeout: 30_000 });
  // The evaluation of the last step sent (its loss and picture) is read back after the step
  // finishes: wait for it, so that what is compared below is the network as it was left.
  await page.waitForFunction(() => {
    const d = document.querySelector('#train-status')?.dataset;
    return d && d.gpuEvalStep === d.gpuSteps;
  }, null, { timeout: 30_000 });
  const left = await status(page);
  // Away by the navigation, back by its own link (which carries no settings).
  await page.click('header .nav a[href^="#/kernels"]');
  await page.waitForFunction(() => location.hash.startsWith('#/kernels') && !document.querySelector('#train-status'));
  await page.click('header .nav a[href^="#/train"]');
  await page.waitForSelector('#train-returned', { timeout: 30_000 });
  const hash = await page.evaluate(() => decodeURIComponent(location.hash));
  assert.ok(hash.includes('data=spiral') && hash.includes('layers=8,8') && hash.includes('lr=0.03'), `settings kept: ${hash}`);
  const back = await status(page);
  assert.equal(back.gpuSteps, left.gpuSteps, 'the same network, at the same GPU step');
  assert.equal(back.cpuSteps, left.cpuSteps, 'and the same CPU step');
  assert.equal(back.gpuLoss, left.gpuLoss);
  assert.match(await page.textContent('#train-returned'),
    new RegExp(`step ${Number(left.gpuSteps).toLocaleString('en')} on the GPU`));
  // Play carries on from there (a new network would start its count again), and the note goes.
  await page.click('#train-play');
  await waitSteps(page, Number(left.gpuSteps) + 5);
  assert.equal(await page.locator('#train-returned').count(), 0);
  // Training while leaving: held away, running again on return.
  await page.click('header .nav a[href^="#/kernels"]');
  await page.waitForFunction(() => !document.querySelector('#train-status'));
  await page.click('header .nav a[href^="#/train"]');
  await page.waitForSelector('#train-status[data-running="true"]', { timeout: 30_000 });
  const n = Number((await status(page)).gpuSteps);
  assert.ok(n > Number(left.gpuSteps), `kept ${n} steps`);
  await waitSteps(page, n + 3);
  await page.click('#train-play');
  assertNoErrors(errors);
  await context.close();
});

test('a restart names what each side had reached, with its own count', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  await page.click('#train-play');
  await page.waitForFunction(() => {
    const s = document.querySelector('#train-status')?.dataset;
    return Number(s?.gpuSteps) >= 10 && Number(s?.cpuSteps) >= 10;
  }, null, { timeout: 120_000 });
  const before = await status(page);
  // How long the new network takes to finish its first GPU step (reported, not asserted: speed
  // belongs to docs/benchmarks.md): the count falls to 0 at the restart, then rises again.
  await page.evaluate((old) => {
    window.restart = { t0: performance.now() };
    const watch = new MutationObserver(() => {
      const n = Number(document.querySelector('#train-status')?.dataset.gpuSteps);
      if (window.restart.reset === undefined && n < old) window.restart.reset = performance.now();
      if (window.restart.reset !== undefined && n >= 1 && window.restart.first === undefined) {
        window.restart.first = performance.now();
        watch.disconnect();
      }
    });
    watch.observe(document.querySelector('main'), { subtree: true, attributes: true, attributeFilter: ['data-gpu-steps'] });
  }, Number(before.gpuSteps));
  await page.fill('#train-batch', '64');
  await page.press('#train-batch', 'Enter');
  await page.waitForSelector('#train-restarted', { timeout: 30_000 });
  const note = await page.textContent('#train-restarted');
  const m = note.match(/reached step ([\d,]+) on the GPU and step ([\d,]+) on the CPU twin/);
  assert.ok(m, note);
  const [gpu, cpu] = [m[1], m[2]].map((v) => Number(v.replaceAll(',', '')));
  // Each side's own count, taken when the change applied: at least what it showed before.
  assert.ok(gpu >= Number(before.gpuSteps), `GPU: ${gpu} < ${before.gpuSteps} (${note})`);
  assert.ok(cpu >= Number(before.cpuSteps), `CPU: ${cpu} < ${before.cpuSteps} (${note})`);
  assert.ok(gpu > 0 && cpu > 0, note);
  await page.waitForFunction(() => window.restart.first !== undefined, null, { timeout: 60_000 });
  const r = await page.evaluate(() => window.restart);
  console.log(`restart: first GPU step of the new network ${(r.first - r.t0).toFixed(0)} ms after Enter`);
  assertNoErrors(errors);
  await context.close();
});

test('the loss line names whose numbers it shows', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=${lang}`);
    // Whatever is shown first, the side it names is the side whose numbers they are.
    await page.waitForSelector('.train-metrics');
    const first = await page.$eval('.train-metrics', (p) => ({ side: p.dataset.side, text: p.textContent }));
    assert.match(first.text, first.side === 'gpu' ? /^(GPU network|GPU 网络)/ : /^(CPU twin|CPU 孪生)/, first.text);
    await waitForGpu(page);
    await page.waitForSelector('.train-metrics[data-side="gpu"]');
    const s = await status(page);
    const text = await page.textContent('.train-metrics');
    assert.match(text, lang === 'en' ? /^GPU network/ : /^GPU 网络/, text);
    assert.ok(text.includes(sig3(Number(s.gpuLoss), { separators: true })), `the GPU's loss ${s.gpuLoss} in "${text}"`);
    assertNoErrors(errors);
    await context.close();
  }
});

test('the spiral suggests the features that make it learnable; one click adds them', async () => {
  for (const lang of ['en', 'zh']) {
    // One load per language, opened at 390 px and then resized: the suggestion and the
    // page's width are checked at each width, and the click that removes the suggestion
    // comes last, at 1280 px.
    const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=${lang}`, { viewport: { width: 390, height: 900 } });
    for (const width of [390, 1920, 1280]) {
      await resizeTo(page, width);
      await page.waitForSelector('#train-suggest');
      assert.match(await page.textContent('#train-suggest'), /sin x, sin y/);
      await page.$eval('#train-suggest', (e) => e.scrollIntoView());
      await screenshot(page, `train-suggest-${lang}-${width}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${overflow} px wider than the window at ${width}`);
      if (width === 1280) {
        await page.click('#train-suggest-add');
        await page.waitForFunction(() =>
          new URLSearchParams(location.hash.split('?')[1] ?? '').get('features') === 'x,y,sinx,siny');
        await page.waitForSelector('#train-suggest', { state: 'detached' });
      }
    }
    assertNoErrors(errors);
    await context.close();
  }
  // Datasets x and y learn quickly say nothing.
  const { page, context } = await openPage(browser, '#/train?data=circle&lang=en');
  await page.waitForSelector('.train-features');
  assert.equal(await page.$('#train-suggest'), null);
  await context.close();
});
