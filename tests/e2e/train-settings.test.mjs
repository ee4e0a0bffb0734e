// The training view's settings and picture: the learning rate applies live, a batch size or
// regularisation change restarts visibly, micro-batches per update (gradient accumulation) are
// shown and trained, bad values are named at their field and change nothing; clicks on the
// picture land where clicked at every width and zoom; rates say "measuring…" or "paused", never
// 0.00; every neuron is drawn; a regression task trains; the page fits a phone, with screenshots
// at 390, 1280 and 1920 px in both languages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, screenshot, assertNoErrors, trainingSettled, switchLang } from './helpers.mjs';

const SPIRAL = '#/train?data=spiral&layers=8,8&act=tanh&lr=0.03&batch=32&opt=adam&features=x,y&noise=0.1&seed=1';
const EXTENT = 6;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const status = (page, attr) => page.getAttribute('#train-status', `data-${attr}`);
const query = (page) => page.evaluate(() => new URLSearchParams(location.hash.split('?')[1] ?? ''));
const param = (page, k) => page.evaluate((k) => new URLSearchParams(location.hash.split('?')[1] ?? '').get(k), k);

async function waitForGpu(page) {
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 90_000 });
  await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.heat) > 1, null, { timeout: 60_000 });
}

/**
 * From now on, keeps in `window.fewestSteps` the fewest GPU steps the status has shown: a reset
 * (a new network and session) shows 0 while its session starts, so a value below the count
 * at the start proves a reset, whenever it happened.
 */
async function watchForReset(page) {
  return page.evaluate(() => {
    const steps = () => Number(document.querySelector('#train-status')?.dataset.gpuSteps ?? 0);
    window.fewestSteps = steps();
    window.resetWatch?.disconnect();
    window.resetWatch = new MutationObserver(() => { window.fewestSteps = Math.min(window.fewestSteps, steps()); });
    window.resetWatch.observe(document.querySelector('main'), { subtree: true, childList: true, attributes: true, attributeFilter: ['data-gpu-steps'] });
    return window.fewestSteps;
  });
}

/** Waits for `more` further GPU steps, then asserts none of them came from a reset. */
async function assertNoReset(page, since, more, what) {
  await waitSteps(page, since + more);
  const fewest = await page.evaluate(() => window.fewestSteps);
  assert.ok(fewest >= since, `${what}: the GPU step count fell from ${since} to ${fewest} (training was reset)`);
}

async function waitSteps(page, n) {
  await page.waitForFunction((n) => Number(document.querySelector('#train-status')?.dataset.gpuSteps) >= n,
    n, { timeout: 120_000, polling: 200 });
}

test('learning rate applies live; bad values are named at the field and change nothing', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  await page.click('#train-play');
  await waitSteps(page, 20);
  // Type slowly, so that several renders (every 150 ms while training) happen between keys.
  const start = await watchForReset(page);
  await page.fill('#train-lr', '');
  await page.type('#train-lr', '0.2', { delay: 250 });
  await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1] ?? '').get('lr') === '0.2');
  // More steps counted since the URL changed: the view has rendered since, with the new rate.
  await assertNoReset(page, start, 10, 'a live learning-rate change');
  assert.equal(await page.inputValue('#train-lr'), '0.2', 'the field keeps what was typed');
  assert.equal(await param(page, 'lr'), '0.2', 'a valid rate reaches the URL');
  assert.equal(await page.textContent('#train-play'), 'Pause', 'still training');
  for (const bad of ['abc', '-1', '1e99']) {
    const before = await watchForReset(page);
    await page.fill('#train-lr', bad);
    await page.waitForSelector('#train-lr-error', { timeout: 10_000 });
    const msg = await page.textContent('#train-lr-error');
    assert.ok(msg.includes(`“${bad}”`), `the field names the bad value: ${msg}`);
    assert.equal(await page.inputValue('#train-lr'), bad, 'the bad text stays for the learner to fix');
    assert.equal(await param(page, 'lr'), '0.2', `"${bad}" must not reach the URL`);
    await assertNoReset(page, before, 10, `"${bad}"`);
  }
  await page.fill('#train-lr', '0.05');
  await page.waitForFunction(() => location.hash.includes('lr=0.05'));
  assert.equal(await page.$('#train-lr-error'), null, 'the message goes once the value is good');
  assertNoErrors(errors);
  await context.close();
});

test('a batch size change restarts visibly and keeps training; a bad one is named', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  await page.click('#train-play');
  await waitSteps(page, 20);
  // Typing goes through "6" before "64": the field keeps each keystroke, the change applies on Enter.
  await page.fill('#train-batch', '');
  await page.type('#train-batch', '64', { delay: 250 });
  assert.equal(await page.inputValue('#train-batch'), '64');
  await page.press('#train-batch', 'Enter');
  await page.waitForFunction(() => location.hash.includes('batch=64'));
  await page.waitForSelector('#train-restarted', { timeout: 30_000 });
  assert.match(await page.textContent('#train-restarted'), /batch size/i);
  assert.match(await page.textContent('#train-restarted'), /step 0/);
  await waitForGpu(page);
  assert.equal(await page.textContent('#train-play'), 'Pause', 'the restarted network keeps training');
  await waitSteps(page, 5);
  const before = await watchForReset(page);
  await page.fill('#train-batch', 'abc');
  await page.press('#train-batch', 'Enter');
  await page.waitForSelector('#train-batch-error');
  assert.match(await page.textContent('#train-batch-error'), /“abc”/);
  assert.equal(await param(page, 'batch'), '64');
  await assertNoReset(page, before, 10, 'a bad batch size');
  // The stepper's arrow key applies at once.
  await page.fill('#train-batch', '64');
  await page.press('#train-batch', 'ArrowUp');
  await page.waitForFunction(() => location.hash.includes('batch=65'));
  assertNoErrors(errors);
  await context.close();
});

/** Clicks at fractions (fx, fy) of the picture's own box and returns the point that was added. */
async function clickAt(page, fx, fy) {
  const n = ((await param(page, 'add')) ?? '').split('~').filter(Boolean).length;
  const box = await page.evaluate(() => {
    const r = document.querySelector('#train-boundary').getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  await page.mouse.click(box.x + fx * box.w, box.y + fy * box.h);
  await page.waitForFunction((n) => {
    const add = new URLSearchParams(location.hash.split('?')[1] ?? '').get('add') ?? '';
    return add.split('~').filter(Boolean).length > n;
  }, n, { timeout: 10_000 });
  // The point is drawn once the network has been rebuilt with it.
  await page.waitForFunction((n) => document.querySelectorAll('#train-boundary circle.added').length > n, n, { timeout: 30_000 });
  const add = (await param(page, 'add')).split('~').filter(Boolean);
  const [x, y, c] = add[add.length - 1].split('_').map(Number);
  // The page lists the same point beside the picture.
  const listed = await page.$$eval('#train-boundary circle.added', (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
  assert.deepEqual(listed[listed.length - 1], [x, y], 'the drawn point is the added one');
  return { x, y, c, px: 2 * EXTENT / Math.min(box.w, box.h) };
}

// One page, loaded at 390 px and then resized (and zoomed) as a reader turning a tablet or
// zooming in would: the picture is measured again at each width, which is what is checked,
// and each click is found as the newest of the added points, whatever came before it.
test('clicks land where clicked: centre and four corners at 390, 1280, 1920 px and with zoom', async () => {
  const { page, context, errors } = await openPage(browser, `#/train?lang=en&data=gauss`,
    { viewport: { width: 390, height: 900 } });
  await waitForGpu(page);
  for (const [width, zoom] of [[390, 1], [1280, 1], [1920, 1], [1280, 1.5]]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForFunction((w) => window.innerWidth === w, width);
    await page.evaluate((z) => { document.documentElement.style.zoom = String(z); }, zoom);
    // The layout for this width and zoom: two frames drawn since (the resize observers ran).
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.locator('#train-boundary').scrollIntoViewIfNeeded();
    const f = 0.05;
    const cases = [[0.5, 0.5], [f, f], [1 - f, f], [f, 1 - f], [1 - f, 1 - f]];
    for (const [fx, fy] of cases) {
      const p = await clickAt(page, fx, fy).catch((e) => { throw new Error(`${width} px, zoom ${zoom}, click at (${fx}, ${fy}): ${e.message}`); });
      const want = [(2 * fx - 1) * EXTENT, (1 - 2 * fy) * EXTENT];
      // One pixel of the picture plus the URL's rounding to 0.01.
      const tol = p.px + 0.011;
      assert.ok(Math.abs(p.x - want[0]) <= tol && Math.abs(p.y - want[1]) <= tol,
        `${width} px, zoom ${zoom}: click at (${fx}, ${fy}) of the picture added (${p.x}, ${p.y}), expected (${want[0].toFixed(2)}, ${want[1].toFixed(2)}) ± ${tol.toFixed(3)}`);
    }
  }
  assertNoErrors(errors);
  await context.close();
});

test('rates say "measuring…" or "paused", never 0.00 for what was not measured', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  const idle = await page.textContent('#train-status');
  assert.doesNotMatch(idle, /0\.00/, idle);
  assert.doesNotMatch(idle, /–/, idle);
  assert.equal((idle.match(/paused/g) ?? []).length, 2, `both sides say they are paused: ${idle}`);
  await page.click('#train-play');
  await page.waitForFunction(() => (document.querySelector('#train-status').textContent.match(/steps\/s/g) ?? []).length === 2,
    null, { timeout: 60_000 });
  const running = await page.textContent('#train-status');
  assert.doesNotMatch(running, /\b0\.00 steps/, running);
  await page.click('#train-play');
  await page.waitForFunction(() => (document.querySelector('#train-status').textContent.match(/paused/g) ?? []).length === 2);
  assertNoErrors(errors);
  await context.close();
});

test('every input and hidden neuron is drawn as a picture; L2 regularisation from the page', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  // 2 inputs + 8 + 8 hidden neurons; the output is the big picture.
  await page.waitForFunction(() => document.querySelectorAll('.train-network g.neuron image').length === 18, null, { timeout: 30_000 });
  const hrefs = await page.$$eval('.train-network g.neuron image', (is) => is.map((i) => i.getAttribute('href')));
  assert.ok(hrefs.every((h) => h.startsWith('data:image/bmp;base64,')));
  assert.ok(new Set(hrefs).size > 10, 'the neurons differ');
  assert.match(await page.textContent('.train-network + .hint'), /weights the GPU last sent back/);
  await page.click('#train-play');
  await waitSteps(page, 10);
  await page.selectOption('#train-reg', 'l2');
  await page.waitForFunction(() => /reg=l2/.test(location.hash) && /regrate=0\.001/.test(location.hash));
  await page.waitForSelector('#train-restarted');
  assert.match(await page.textContent('#train-restarted'), /regularisation/);
  await waitForGpu(page);
  await page.selectOption('#train-reg-rate', '0.01');
  await page.waitForFunction(() => /regrate=0\.01(&|$)/.test(location.hash));
  assert.equal(await page.inputValue('#train-reg'), 'l2');
  await waitSteps(page, 10);
  assertNoErrors(errors);
  await context.close();
});

test('a seed being typed while training is kept through the redraws until it is committed', async () => {
  // The page redraws on every tick while training; a field bound straight to the setting was
  // set back to it by each redraw, wiping what was being typed.
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=en`);
  await waitForGpu(page);
  await page.click('#train-play');
  const seed = page.locator('.train-field input[type="number"]');
  await seed.fill('42');
  const steps = Number(await status(page, 'gpu-steps'));
  // Several ticks later (each one redraws the status line and the controls beside it).
  await page.waitForFunction((n) => Number(document.querySelector('#train-status').dataset.gpuSteps) > n + 2, steps, { timeout: 60_000 });
  assert.equal(await seed.inputValue(), '42', 'the typed seed survived the redraws');
  assert.equal(await param(page, 'seed'), '1', 'not committed yet');
  await seed.dispatchEvent('change');
  await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1] ?? '').get('seed') === '42');
  assertNoErrors(errors);
  await context.close();
});

// Trained once, in English; the same trained network is then read in Chinese after the
// header's language switch (the page keeps its network), instead of a second load and 75 more
// steps.
test('a regression task trains on the GPU, with an error measure instead of accuracy', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=en&data=hills&layers=8,8&act=tanh&lr=0.03&batch=16&opt=adam&noise=0.05');
  await waitForGpu(page);
  assert.equal(await page.inputValue('#train-data'), 'hills');
  assert.ok(await page.$eval('#train-loss', (s) => s.disabled), 'the loss comes with the task');
  // One output: the last column of the network has a single node.
  assert.equal(await page.$$eval('.train-network circle.node', (cs) => cs.length), 1);
  await page.click('#train-play');
  // The twin's train loss on these settings: 0.352 → 0.040 at 50 steps, 0.022 at 75
  // (`CpuTrainer`); the GPU's follows it within 1e-3 + 1 % (training_vs_cpu).
  await waitSteps(page, 75);
  await page.click('#train-play');
  await trainingSettled(page);
  const steps = await status(page, 'gpu-steps');
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      await switchLang(page, 'zh');
      await trainingSettled(page);
      assert.equal(await status(page, 'gpu-steps'), steps, 'the same trained network, in Chinese');
      assert.equal(await page.inputValue('#train-data'), 'hills');
      assert.ok(await page.$eval('#train-loss', (s) => s.disabled), 'the loss comes with the task');
      assert.equal(await page.$$eval('.train-network circle.node', (cs) => cs.length), 1);
    }
    const first = Number(await status(page, 'first-gpu-loss'));
    const last = Number(await status(page, 'gpu-loss'));
    assert.ok(last < first / 4, `${lang}: the squared error falls: ${first} → ${last}`);
    const metrics = await page.textContent('.train-metrics');
    assert.match(metrics, lang === 'en' ? /root-mean-square\): [\d.]+/ : /均方根）：[\d.]+/, metrics);
    assert.doesNotMatch(metrics, /accuracy|准确率/, metrics);
    await screenshot(page, `train-regression-${lang}`);
  }
  assertNoErrors(errors);
  await context.close();
});

test('a smaller training share lowers a batch that no longer fits: the URL follows, and nothing blames the link', async () => {
  const { page, context, errors } = await openPage(browser,
    '#/train?lang=en&data=spiral&layers=8,8&act=tanh&lr=0.03&batch=100&n=200&split=50&opt=adam&seed=1');
  await waitForGpu(page);
  assert.equal(await page.$('.train-errors'), null, 'batch 100 fits 100 training points');
  await page.click('#train-play');
  await waitSteps(page, 3);
  // 20 % of 200 points: 40 in training.
  const split = page.locator('#train-split');
  await split.evaluate((el) => { el.value = '20'; el.dispatchEvent(new Event('change', { bubbles: true })); });
  await page.waitForFunction(() => /split=20/.test(location.hash));
  assert.equal(await param(page, 'batch'), '40', 'the URL carries the batch the page runs');
  await page.waitForSelector('#train-restarted');
  const notice = await page.textContent('#train-restarted');
  assert.match(notice, /training share/, notice);
  assert.match(notice, /batch size/, notice);
  assert.equal(await page.$('.train-errors'), null, 'no error about the link');
  assert.equal(await page.inputValue('#train-batch'), '40');
  assertNoErrors(errors);
  await context.close();
});

test('a paused network, not yet stepped, says when a smaller training share lowered its batch', async () => {
  const { page, context, errors } = await openPage(browser,
    '#/train?lang=en&data=spiral&layers=8,8&act=tanh&lr=0.03&batch=100&n=200&split=50&opt=adam&seed=1');
  await waitForGpu(page);
  const split = page.locator('#train-split');
  await split.evaluate((el) => { el.value = '20'; el.dispatchEvent(new Event('change', { bubbles: true })); });
  await page.waitForFunction(() => /split=20/.test(location.hash));
  await page.waitForSelector('#train-batch-lowered');
  assert.equal(await page.textContent('#train-batch-lowered'),
    'The batch size went from 100 to 40: the training set now has only 40 points, and a batch cannot be larger than it.');
  assert.equal(await page.$('#train-restarted'), null, 'nothing had been stepped, so no restart to name');
  // The learner's own batch is not news: the note goes.
  await page.fill('#train-batch', '16');
  await page.press('#train-batch', 'Enter');
  await page.waitForFunction(() => /batch=16/.test(location.hash));
  await page.waitForSelector('#train-batch-lowered', { state: 'detached' });
  assertNoErrors(errors);
  await context.close();
});

// Diverged once, in English; the same page is then read in Chinese after the header's language
// switch (the page keeps its network and what it said), instead of a second load and 20 steps.
test('a network that diverges says so in words, with its learning rate, instead of a bare "–"', async () => {
  // Plain SGD at the largest learning rate the page takes, on a regression task: the
  // squared error's gradient grows each step until the weights overflow.
  const { page, context, errors } = await openPage(browser,
    '#/train?lang=en&data=hills&layers=8,8&act=relu&lr=10&batch=16&opt=sgd&noise=0.05',
    { viewport: { width: 390, height: 900 } });
  await waitForGpu(page);
  // Nothing is said before training, in either language.
  assert.equal(await page.$('.train-diverged'), null, 'nothing is said before training');
  await switchLang(page, 'zh');
  assert.equal(await page.$('.train-diverged'), null, 'zh: nothing is said before training');
  await switchLang(page, 'en');
  await waitForGpu(page);
  for (let i = 0; i < 20; i++) await page.click('#train-step');
  await waitSteps(page, 20);
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      await switchLang(page, 'zh');
      assert.equal(await status(page, 'gpu-steps'), '20', 'the same network, in Chinese');
    }
    const note = await page.waitForSelector('.train-diverged', { timeout: 60_000 });
    const text = await note.textContent();
    assert.match(text, lang === 'en' ? /diverged.*\(10 now/ : /发散.*现在是 10/, text);
    assert.match(await page.textContent('.train-metrics'), /–/);
    await note.scrollIntoViewIfNeeded();
    await screenshot(page, `train-diverged-${lang}-390`);
  }
  assertNoErrors(errors);
  await context.close();
});

// One load per language, at 390 px (the narrowest, loaded fresh); the window is then widened
// to 1280 and 1920 px on the same trained page, as a reader turning a tablet would, instead
// of a new load and ten more GPU steps per width.
test('the training view fits 390 px with its kernels open; screenshots at three widths in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=${lang}`,
      { viewport: { width: 390, height: 900 } });
    await waitForGpu(page);
    for (let i = 0; i < 10; i++) await page.click('#train-step');
    await waitSteps(page, 10);
    await page.click('.train-kernels summary');
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      // The layout for this width: the window has its new width, and two frames have been
      // drawn since (the charts' resize observers have fired and their redraw is painted).
      await page.waitForFunction((w) => window.innerWidth === w, width);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(wide <= width, `${lang} ${width} px: the page is ${wide} px wide`);
      await screenshot(page, `train-${lang}-${width}`);
    }
    assertNoErrors(errors);
    await context.close();
  }
});

test('the train view accumulates micro-batches: effective batch and memory shown, bad accum named', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=en&data=spiral&batch=8&accum=4');
  await page.waitForSelector('#train-accum-summary');
  const s = await page.$eval('#train-accum-summary', (e) => ({ ...e.dataset, text: e.textContent }));
  assert.equal(s.effective, '32');
  // Default net 2 → 8 → 8 → 2: 20 floats per sample, activations + deltas = 2 × 20 × 4 = 160
  // bytes per sample: 1,280 for a micro-batch of 8, 5,120 for 32 at once.
  assert.equal(s.microBytes, '1280');
  assert.equal(s.effectiveBytes, '5120');
  assert.match(s.text, /32 = 4 × 8/);
  assert.equal(await page.$eval('#train-accum', (e) => e.value), '4');
  // It trains: GPU updates and the twin's both advance and the loss stays finite.
  await page.click('#train-play');
  await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.gpuSteps) >= 10, null, { timeout: 60_000 });
  const loss = Number(await page.getAttribute('#train-status', 'data-gpu-loss'));
  assert.ok(Number.isFinite(loss) && loss > 0 && loss < 2, `loss ${loss}`);
  await page.click('#train-play');
  // Changing it is a restart, announced.
  await page.selectOption('#train-accum', '2');
  await page.waitForFunction(() => /accum=2/.test(location.hash));
  await page.waitForFunction(() => /because the micro-batches per update changed/.test(document.querySelector('main').innerText));
  assertNoErrors(errors);
  await context.close();
  // A bad value in the URL is named and replaced by 1.
  const bad = await openPage(browser, '#/train?lang=en&accum=0');
  await bad.page.waitForSelector('#train-accum-summary');
  assert.match(await bad.page.textContent('main'), /Micro-batches per update “0” is not usable/);
  assert.equal(await bad.page.getAttribute('#train-accum-summary', 'data-effective'), '16');
  await bad.context.close();
});

test('on a phone the picture and the loss sit right under Start, before the settings', async () => {
  const { page, context, errors } = await openPage(browser, `${SPIRAL}&lang=zh`, { viewport: { width: 390, height: 844 } });
  await waitForGpu(page);
  const at = await page.evaluate(() => {
    const top = (s) => document.querySelector(s).getBoundingClientRect().top + scrollY;
    return { start: top('#train-play'), picture: top('#train-boundary'), data: top('#train-data') };
  });
  // Within one phone screen of Start, and above the first setting.
  assert.ok(at.picture - at.start < 700, `the picture starts ${Math.round(at.picture - at.start)} px below Start`);
  assert.ok(at.picture < at.data, 'the picture comes before the dataset setting');
  assertNoErrors(errors);
  await context.close();
});
