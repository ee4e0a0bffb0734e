// The digits CNN (#/cnn): the small network trains on the GPU (SwiftShader here) beside the
// tuned CPU, step for step, and its test loss falls to the seeded twin's value (bound below);
// Train and Pause run both sides and measure the ratio; a drawn digit is read, an empty pad
// says so; bad settings are named in both languages (a missing or damaged digits file:
// cnn-asset.test.mjs); without WebGPU the CPU trains alone; the embed reports the accuracy;
// screenshots at 390, 1280 and 1920 px in English and Chinese.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors, startHost, BASE_URL, switchLang } from './helpers.mjs';
import { ready, evaluatedAt } from './cnn-page.mjs';

// crates/cnn/tests/mnist.rs `the_browser_tests_small_network_learns`: with these settings the
// twin's test loss goes 2.9907 → 1.2437 (accuracy 9.0 % → 62.3 %) in 30 steps. The GPU and
// the tuned CPU each stay within a derived bound of the twin (cnn_vs_cpu, cnn/tests/tuned.rs)
// that is far below 2 % of the loss, so each side must land within 2 % of those values.
const SMALL = '#/cnn?ch=4,8&k=5,5&batch=16&lr=0.01';
const FIRST_LOSS = 2.9907;
const LOSS_AT_30 = 1.2437;
const STEPS = 30;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const status = (page) => page.evaluate(() => ({ ...document.querySelector('#cnn-status')?.dataset }));
const parse = (s) => {
  const [step, loss, accuracy] = (s ?? '').split(' ').map(Number);
  return { step, loss, accuracy };
};

const near = (got, want, rel, what) =>
  assert.ok(Math.abs(got - want) <= rel * want, `${what}: ${got}, expected ${want} ± ${rel * 100} %`);

test('step by step, both sides learn the small network as the seeded twin does', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`);
  await ready(page);
  assert.equal(await page.textContent('h1'), 'Train a CNN on handwritten digits');
  await evaluatedAt(page, 0);
  const s0 = await status(page);
  near(parse(s0.gpuTest).loss, FIRST_LOSS, 0.02, 'GPU loss before training');
  near(parse(s0.cpuTest).loss, FIRST_LOSS, 0.02, 'CPU loss before training');
  for (let i = 0; i < STEPS; i++) await page.click('#cnn-step');
  await evaluatedAt(page, STEPS);
  const s = await status(page);
  const gpu = parse(s.gpuTest);
  const cpu = parse(s.cpuTest);
  console.log(`small CNN after ${STEPS} steps: GPU loss ${gpu.loss} (acc ${gpu.accuracy}), CPU ${cpu.loss} (acc ${cpu.accuracy})`);
  assert.equal(Number(s.gpuSteps), STEPS);
  assert.equal(Number(s.cpuSteps), STEPS);
  near(gpu.loss, LOSS_AT_30, 0.02, 'GPU test loss after 30 steps');
  near(cpu.loss, LOSS_AT_30, 0.02, 'CPU test loss after 30 steps');
  // The look inside follows the GPU's network: its filters, the first test digit's layers
  // (input and conv/ReLU/pool per block), the confusion matrix and some mistakes.
  await page.waitForSelector('#cnn-filters[data-count="4"]');
  await page.waitForSelector('#cnn-layers[data-layers="7"]', { timeout: 60_000 });
  await page.waitForSelector(`#cnn-confusion[data-step="${STEPS}"]`);
  assert.ok(Number(await page.getAttribute('#cnn-mistakes', 'data-count')) > 0);
  // A mistake picked is shown through the layers.
  const picked = await page.getAttribute('.cnn-mistake >> nth=0', 'data-index');
  await page.click('.cnn-mistake >> nth=0');
  await page.waitForSelector(`#cnn-layers[data-index="${picked}"][data-layers="7"]`, { timeout: 60_000 });
  await screenshot(page, 'cnn-small-en');
  assertNoErrors(errors);
  await context.close();
});

test('Train runs both sides and measures their ratio; Pause stops sending steps', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`);
  await ready(page);
  await page.click('#cnn-play');
  await page.waitForFunction(() => {
    const d = document.querySelector('#cnn-status')?.dataset ?? {};
    return Number(d.gpuSteps) >= 4 && Number(d.cpuSteps) >= 3
      && document.querySelector('#cnn-ratio')?.dataset.verdict === 'ratio';
  }, null, { timeout: 240_000, polling: 200 });
  const ratio = await page.textContent('#cnn-ratio');
  assert.match(ratio, /\d× as many steps per second/);
  // A software adapter is named as such.
  assert.match(await page.textContent('.cnn-caveats'), /software renderer/);
  await page.click('#cnn-play');
  await page.waitForSelector('#cnn-status[data-phase="paused"]', { timeout: 60_000 });
  const s = await status(page);
  // Once paused and the last evaluations are in, nothing more was sent.
  await evaluatedAt(page, Number(s.gpuSteps), ['gpu']);
  await evaluatedAt(page, Number(s.cpuSteps), ['cpu']);
  const later = await status(page);
  assert.equal(later.gpuSteps, s.gpuSteps);
  assert.equal(later.cpuSteps, s.cpuSteps);
  assert.equal(await page.textContent('#cnn-play'), 'Train');
  assert.equal(await page.locator('#cnn-stalled').count(), 0, 'a learning network has not stalled');
  console.log(`small CNN trained: ${s.gpuSteps} GPU, ${s.cpuSteps} CPU steps; ${ratio}`);
  assertNoErrors(errors);
  await context.close();
});

test('the learning rate changes live; a new shape restarts and says what the old one reached', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`);
  await ready(page);
  await page.click('#cnn-play');
  await page.waitForFunction(() => Number(document.querySelector('#cnn-status')?.dataset.gpuSteps) >= 3, null, { timeout: 120_000 });
  await page.fill('#cnn-lr', '0.02');
  await page.waitForFunction(() => location.hash.includes('lr=0.02'));
  const steps = Number((await status(page)).gpuSteps);
  await page.waitForFunction((n) => Number(document.querySelector('#cnn-status')?.dataset.gpuSteps) > n + 2, steps, { timeout: 120_000 });
  assert.equal(await page.locator('#cnn-restarted').count(), 0, 'a new rate does not restart');
  // A bad rate is named at its field and changes nothing.
  await page.fill('#cnn-lr', '-3');
  await page.waitForSelector('#cnn-lr-error');
  assert.ok(await page.evaluate(() => location.hash.includes('lr=0.02')));
  // A second block's channels: a new network, named.
  await page.fill('#cnn-ch-1', '6');
  await page.press('#cnn-ch-1', 'Enter');
  await page.waitForSelector('#cnn-restarted', { timeout: 30_000 }).catch(async (e) => {
    throw new Error(`${e.message}\nstatus ${JSON.stringify(await status(page))} hash ${await page.evaluate(() => location.hash)}`);
  });
  assert.match(await page.textContent('#cnn-restarted'), /channels/);
  await page.waitForSelector('#cnn-status[data-gpu="ready"]', { timeout: 90_000 });
  await page.click('#cnn-play');
  assertNoErrors(errors);
  await context.close();
});

test('leaving the page keeps the network: it holds while away and carries on on return', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`);
  await ready(page);
  for (let i = 0; i < 5; i++) await page.click('#cnn-step');
  await evaluatedAt(page, 5);
  const away = async () => {
    await page.click('header .nav a[href^="#/kernels"]');
    await page.waitForFunction(() => location.hash.startsWith('#/kernels') && !document.querySelector('#cnn-status'));
    // Back by the navigation's own link, which carries no settings.
    await page.click('header .nav a[href^="#/cnn"]');
    await page.waitForSelector('#cnn-returned', { timeout: 30_000 });
  };
  await away();
  // The same network: its settings back in the address, its steps and its evaluations.
  const hash = await page.evaluate(() => decodeURIComponent(location.hash));
  assert.ok(hash.includes('ch=4,8') && hash.includes('batch=16'), `settings kept: ${hash}`);
  let s = await status(page);
  assert.equal(Number(s.gpuSteps), 5);
  assert.equal(Number(s.cpuSteps), 5);
  assert.equal(parse(s.gpuTest).step, 5);
  assert.match(await page.textContent('#cnn-returned'), /step 5 on the GPU and 5 on the CPU/);
  // It carries on from step 5 (a new network would be at step 1), and the note goes.
  await page.click('#cnn-step');
  await evaluatedAt(page, 6);
  assert.equal(await page.locator('#cnn-returned').count(), 0);
  // Training while leaving: held away, running again on return.
  await page.click('#cnn-play');
  await page.waitForFunction(() => Number(document.querySelector('#cnn-status')?.dataset.gpuSteps) >= 8, null, { timeout: 120_000 });
  await away();
  await page.waitForSelector('#cnn-status[data-phase="running"]', { timeout: 10_000 });
  s = await status(page);
  const left = Number(s.cpuSteps);
  assert.ok(left >= 8, `kept ${left} CPU steps`);
  await page.waitForFunction((n) => Number(document.querySelector('#cnn-status')?.dataset.cpuSteps) > n, left, { timeout: 60_000 });
  await page.click('#cnn-play');
  assertNoErrors(errors);
  await context.close();
});

test('a learning rate far too high stalls at chance, and the page says so', async () => {
  // SGD: at lr 1 it sits at 2.30–2.40 from about step 40 (stalled within 8 s here). Adam at
  // lr 1 hovers at 2.45–2.9, on the stall band's edge, so its stall came at any time from 28 s
  // to past the 180 s limit (CI: 174 s); its blown-up first steps are learner-notes' test.
  const { page, context, errors } = await openPage(browser, '#/cnn?ch=4,8&k=5,5&batch=16&opt=sgd&lr=1&lang=en');
  await ready(page);
  await page.click('#cnn-play');
  // page_models::cnn::board::Curves::stalled: four test scores near ln 10 over ≥ 40 steps.
  await page.waitForSelector('#cnn-stalled', { timeout: 180_000 });
  assert.match(await page.textContent('#cnn-stalled'), /here 1\)/);
  await page.click('#cnn-play');
  assertNoErrors(errors);
  await context.close();
});

test('a lost GPU device is reported, the CPU goes on, Reset starts on a new device', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`);
  await ready(page);
  await page.click('#cnn-play');
  await page.waitForFunction(() => Number(document.querySelector('#cnn-status')?.dataset.gpuSteps) >= 3, null, { timeout: 120_000 });
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_lose_device()), true);
  await page.waitForSelector('#cnn-status[data-gpu="lost"]', { timeout: 30_000 });
  assert.match(await page.textContent('#cnn-gpu'), /GPU device was lost/);
  const cpu = Number((await status(page)).cpuSteps);
  await page.waitForFunction((n) => Number(document.querySelector('#cnn-status').dataset.cpuSteps) > n, cpu);
  await page.click('#cnn-reset');
  await page.waitForSelector('#cnn-status[data-gpu="ready"]', { timeout: 90_000 });
  assertNoErrors(errors);
  await context.close();
});

test('a drawn digit is read by the network; an empty pad says so', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`);
  await ready(page);
  await page.waitForSelector('#cnn-draw-class[data-error="cnn.draw.empty"]');
  await page.locator('#cnn-pad').scrollIntoViewIfNeeded();
  const box = await page.locator('#cnn-pad').boundingBox();
  // A "1": one stroke down the middle.
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.15);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * (0.15 + 0.07 * i));
  await page.mouse.up();
  await page.waitForSelector('#cnn-draw-class[data-class]');
  assert.equal(await page.locator('.cnn-draw .cnn-layer').count(), 7);
  assert.equal(await page.locator('ol.cnn-probs li').count(), 10);
  await page.click('#cnn-clear');
  await page.waitForSelector('#cnn-draw-class[data-error="cnn.draw.empty"]');
  assertNoErrors(errors);
  await context.close();
});

test('bad settings in the address are named, in English and Chinese', async () => {
  for (const [lang, word] of [['en', 'not a whole number'], ['zh', '整数']]) {
    const { page, context, errors } = await openPage(browser, `#/cnn?ch=4,999&lr=-1&batch=0&opt=rmsprop&lang=${lang}`);
    await page.waitForSelector('#cnn-errors');
    assert.equal(await page.locator('#cnn-errors li').count(), 4);
    const text = await page.textContent('#cnn-errors');
    assert.ok(text.includes('999') && text.includes('rmsprop') && text.includes(word), text);
    // The defaults run instead: the page still trains.
    await ready(page);
    assertNoErrors(errors);
    await context.close();
  }
});

test('without WebGPU the tuned CPU trains alone, and the page says why', async () => {
  const noGpu = await launch({ webgpu: false });
  try {
    const { page, context, errors } = await openPage(noGpu, `${SMALL}&lang=en`);
    await ready(page, 'none');
    assert.match(await page.textContent('#cnn-gpu'), /no WebGPU/);
    await page.click('#cnn-play');
    await page.waitForFunction(() => Number(document.querySelector('#cnn-status')?.dataset.cpuSteps) >= 3, null, { timeout: 60_000 });
    await page.click('#cnn-play');
    assert.equal(await page.getAttribute('#cnn-ratio', 'data-verdict'), 'no-gpu');
    await page.waitForSelector('#cnn-confusion[data-step]', { timeout: 60_000 });
    assertNoErrors(errors);
    await context.close();
  } finally {
    await noGpu.close();
  }
});

test('the embed trains on request and reports its test accuracy', async () => {
  const origin = new URL(BASE_URL).origin;
  const host = await startHost((url) => ({
    type: 'text/html; charset=utf-8',
    body: `<!doctype html><html><head><meta charset="utf-8"></head><body>
<iframe id="w" src="${url.searchParams.get('src')}" width="900" height="1200"></iframe>
<script>window.received = []; addEventListener('message', (e) => received.push(e.data));
window.send = (m) => document.getElementById('w').contentWindow.postMessage(m, '${origin}');</script></body></html>`,
  }));
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const src = `${BASE_URL}#/embed/cnn?lang=en&ch=4,8&k=5,5&batch=16&lr=0.01&parentOrigin=${encodeURIComponent(host.origin)}`;
    await page.goto(`${host.origin}/?src=${encodeURIComponent(src)}`);
    await page.waitForFunction(() => window.received.some((d) => d?.type === 'ready'), null, { timeout: 60_000 });
    const frame = page.frames().find((f) => f.url().startsWith(origin));
    await frame.waitForSelector('#cnn-status[data-gpu="ready"]', { timeout: 90_000 });
    await page.evaluate(() => window.send({ api: 'gpu-playground', version: 1, type: 'run', id: 'c1' }));
    await frame.waitForFunction(() => Number(document.querySelector('#cnn-status')?.dataset.gpuSteps) >= 5, null, { timeout: 120_000 });
    await page.evaluate(() => window.send({ api: 'gpu-playground', version: 1, type: 'run', id: 'c2' }));
    const done = await page.waitForFunction(() => window.received.find((d) => d?.type === 'run-finished'), null, { timeout: 120_000 });
    const msg = await done.jsonValue();
    const r = msg.results ?? msg.result ?? msg;
    assert.ok(Number.isFinite(r.accuracy) && r.accuracy >= 0 && r.accuracy <= 1, JSON.stringify(msg));
    assert.ok(r.gpuSteps >= 5, JSON.stringify(msg));
    // The score is of the network where it stopped, not an earlier evaluation's.
    assert.equal(r.from, 'gpu', JSON.stringify(msg));
    assert.equal(r.step, r.gpuSteps, JSON.stringify(msg));
    await context.close();
  } finally {
    await host.close();
  }
});

// One fresh load at 390 px in English, then the window widened to 1280 and 1920 px; then back
// at 390 px the header's language switch to Chinese, on the same stepped network (the page
// keeps it), and the three widths again. A load fetches the 10,000 digits and starts both
// sides, which is most of this test's time, so one load serves both languages.
test('the page at 390, 1280 and 1920 px in English and Chinese', async () => {
  const { page, context, errors } = await openPage(browser, `${SMALL}&lang=en`, { viewport: { width: 390, height: 900 } });
  await ready(page);
  await page.click('#cnn-step');
  await evaluatedAt(page, 1);
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      await page.setViewportSize({ width: 390, height: 900 });
      await switchLang(page, 'zh');
      await ready(page);
      await evaluatedAt(page, 1);
    }
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      // The layout for this width: the window has its new width, and two frames have been
      // drawn since.
      await page.waitForFunction((w) => window.innerWidth === w, width);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.waitForSelector('#cnn-layers[data-layers="7"]', { timeout: 60_000 });
      // Nothing wider than the page.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${lang} ${width}: the page scrolls sideways by ${overflow} px`);
      await screenshot(page, `cnn-${lang}-${width}`);
    }
  }
  assertNoErrors(errors);
  await context.close();
});
