// The fault matrix (docs/reliability.md), caused for real in headless Chromium: a device the
// adapter refuses, a device destroyed mid-use, hostile URLs, the wasm failing to load, and
// local storage that throws. Each test would fail if the page's handling were removed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, goto, navigatedBy, switchLang, waitForProbe, runAndWait, runVerified, screenshot, assertNoErrors, BASE_URL,
  resizeTo,
} from './helpers.mjs';
import { QUEUE_SPY, queueState, queueDrained, clickAndCount } from './queue-spy.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/**
 * The "Your GPU" panel says, feature by feature, what the browser's adapter offers (the log
 * also shows it: what SwiftShader offers decides which stages run here).
 */
test('row 1a: the GPU panel reports the adapter and each optional feature as the browser offers it', async () => {
  const { page, context, errors } = await openPage(browser, '#/?lang=en');
  assert.equal(await waitForProbe(page), 'available');
  const offered = await page.evaluate(async () => {
    const a = await navigator.gpu.requestAdapter();
    return { vendor: a.info.vendor, architecture: a.info.architecture, features: [...a.features].sort() };
  });
  console.log(`browser adapter ${offered.vendor} ${offered.architecture}: ${offered.features.join(', ')}`);
  const shown = await page.$$eval('.gpu-panel table.facts tr', (rows) => rows.map((r) => ({
    name: r.querySelector('th')?.textContent.split(' ')[0],
    has: r.querySelector('td')?.className,
  })));
  const features = shown.filter((r) => r.has === 'yes' || r.has === 'no');
  assert.deepEqual(features.map((r) => r.name), ['timestamp-query', 'shader-f16', 'subgroups', 'chromium-experimental-subgroup-matrix']);
  for (const { name, has } of features) {
    assert.equal(has, offered.features.includes(name) ? 'yes' : 'no', `the panel's answer for ${name}`);
  }
  const panel = await page.textContent('.gpu-panel');
  assert.ok(panel.includes(offered.vendor) && panel.includes(offered.architecture), 'vendor and architecture shown');
  // SwiftShader is a CPU: the panel must say so.
  assert.equal(await page.getAttribute('.gpu-panel [data-software]', 'data-software'),
    offered.architecture === 'swiftshader' ? 'true' : null);
  assertNoErrors(errors);
  await context.close();
});

test('row 1b: an adapter that refuses the device gives a message; the page still works', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=16&n=16&k=16', {
    initScript: () => {
      GPUAdapter.prototype.requestDevice = () =>
        Promise.reject(new DOMException('refused by the test', 'OperationError'));
    },
  });
  assert.equal(await waitForProbe(page), 'available');
  await page.click('#run-button');
  await page.waitForFunction(() => /could not be created/.test(document.querySelector('.result')?.textContent ?? ''),
    null, { timeout: 60_000 });
  assert.match(await page.textContent('.result'), /refused by the test/);
  // Nothing is stuck: the button is usable again and other pages open.
  assert.ok(!(await page.isDisabled('#run-button')));
  await navigatedBy(page, () => page.click('nav a[href^="#/learn?"]'), { path: '/learn', lang: 'en' });
  assert.ok(await page.$('main h1'));
  assertNoErrors(errors);
  await context.close();
});

test('row 1c: requestAdapter resolving to null: the panel says no adapter, nothing throws', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en', {
    initScript: () => { GPU.prototype.requestAdapter = () => Promise.resolve(null); },
  });
  assert.equal(await waitForProbe(page), 'unavailable');
  assert.match(await page.textContent('.gpu-panel'), /offered no GPU adapter/);
  assert.ok(await page.isDisabled('#run-button'));
  assertNoErrors(errors);
  await context.close();
});

test('row 2: a device destroyed for real is noticed through wgpu, reported, and leaks no buffer', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=40&n=24&k=8');
  await waitForProbe(page);
  await runAndWait(page);
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_live_buffers()), 0);
  // GPUDevice.destroy() through wgpu: only the device's `lost` promise can tell the page.
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_lose_device()), true);
  await runAndWait(page);
  await page.waitForSelector('.result [data-recovered="true"]');
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_live_buffers()), 0);
  assertNoErrors(errors.filter((e) => !/destroyed|lost/i.test(e)));
  await context.close();
});

// Values a visitor (or a broken link) can put in any parameter.
const HOSTILE = [
  '<img src=x onerror="window.__pwned=1">',
  '"><svg onload=window.__pwned=1>',
  '<script>window.__pwned=1</script>',
  'A'.repeat(5000),
  '9'.repeat(400),
  '𝟙𝟚𝟛 中文 \u202e ｍ',
  '-1', 'NaN', '1e309', '0x10', ' 12 ', '%zz', '',
];

const ROUTES = [
  ['#/kernels', ['m', 'n', 'k', 'stage']],
  ['#/visualiser', ['stage', 'size', 'wg', 'sg', 'pad']],
  ['#/race', ['view', 'n', 'cpu', 'workers', 'gpu', 'from', 'to', 'at']],
  ['#/train', ['data', 'layers', 'act', 'opt', 'loss', 'lr', 'noise', 'seed', 'split', 'n', 'features', 'batch']],
  ['#/learn/vram', ['params', 'bytes', 'opt', 'batch']],
  ['#/learn', []],
  ['#/embed/matmul', ['m', 'n', 'k']],
];

test('row 6: hostile URL parameters on every route: no crash, no injected markup', async () => {
  const { page, context, errors } = await openPage(browser, '#/?lang=en');
  await waitForProbe(page);
  let cases = 0;
  for (const [route, keys] of ROUTES) {
    for (const value of HOSTILE) {
      const enc = encodeURIComponent(value);
      // Every parameter bad at once, each key repeated, plus a bad language.
      const params = [...keys, 'lang'].map((k) => `${k}=${enc}&${k}=${enc}`).join('&');
      for (const [hash, path] of [[`${route}?${params}`, route.slice(1)], [`${route}/${enc}?lang=${enc}`, null]]) {
        // The route shown once its text has arrived and it has rendered with these parameters
        // (an unknown segment is the 404 page, whatever its path).
        const before = await page.$eval('main', (m) => Number(m.dataset.routeReady?.split(' ')[2] ?? 0));
        await page.goto(new URL(hash, BASE_URL).href);
        await page.waitForFunction(([path, before]) => {
          const v = document.querySelector('main')?.dataset.routeReady?.split(' ');
          return v && Number(v[2]) > before && (path === null || v[0] === path);
        }, [path, before], { timeout: 60_000 });
        const state = await page.evaluate(() => ({
          pwned: window.__pwned,
          injected: document.querySelectorAll('img[src="x"], svg[onload], main script').length,
          text: document.querySelector('main')?.textContent ?? '',
        }));
        assert.equal(state.pwned, undefined, `${hash}: script ran`);
        assert.equal(state.injected, 0, `${hash}: markup was injected`);
        assert.ok(state.text.trim().length > 0, `${hash}: empty page`);
        cases += 1;
      }
    }
  }
  console.log(`${cases} hostile URLs opened`);
  assertNoErrors(errors);
  await context.close();
});

test('row 6: on the Kernels page each bad size is named and the run refused', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=%3Cb%3E&n=99999999&k=-1');
  await waitForProbe(page);
  const shown = await page.$$eval('.field-error', (es) => es.map((e) => e.textContent).filter((t) => t.trim()));
  assert.equal(shown.length, 3, shown.join(' | '));
  assert.ok(await page.isDisabled('#run-button'));
  assertNoErrors(errors);
  await context.close();
});

for (const [what, route] of [
  ['network error on the wasm', (r) => r.abort('failed')],
  ['truncated wasm', async (r) => {
    const resp = await r.fetch();
    const body = await resp.body();
    await r.fulfill({ response: resp, body: body.subarray(0, Math.floor(body.length / 3)) });
  }],
]) {
  test(`row 12: ${what}: a message in both languages, not a blank page`, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.route(/\.wasm$/, route);
    await page.goto(new URL('#/?lang=en', BASE_URL).href);
    await page.waitForSelector('#boot.error', { timeout: 30_000 });
    const text = await page.textContent('#boot');
    assert.match(text, /could not start/);
    assert.match(text, /无法/);
    await context.close();
  });
}

test('row 12: the language text failing to load: a message, not "Loading…" forever', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route(/locales\/[a-z]+-core\.[0-9a-f]{16}\.txt$/, (r) => r.abort('failed'));
  await page.goto(new URL('#/?lang=zh', BASE_URL).href);
  await page.waitForSelector('#boot.error', { timeout: 30_000 });
  const text = await page.textContent('#boot');
  assert.match(text, /could not start/);
  assert.match(text, /无法/);
  await context.close();
});

test('row 12: the JS glue failing to load: a message, not "Loading…" forever', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  // Either module's glue: the landing page runs the embed module's.
  await page.route(/gpu_playground(_embed)?(\.[0-9a-f]{16})?\.js$/, (r) => r.abort('failed'));
  await page.goto(new URL('#/?lang=en', BASE_URL).href);
  await page.waitForSelector('#boot.error', { timeout: 30_000 });
  assert.match(await page.textContent('#boot'), /could not start/);
  await screenshot(page, 'fault-glue-missing');
  await context.close();
});

for (const [what, script] of [
  ['disabled (access throws)', () => {
    Object.defineProperty(window, 'localStorage', {
      get() { throw new DOMException('disabled by the test', 'SecurityError'); },
    });
  }],
  ['full (every write throws)', () => {
    Storage.prototype.setItem = () => { throw new DOMException('full', 'QuotaExceededError'); };
  }],
]) {
  test(`row 13: local storage ${what}: the page works, the language switch too`, async () => {
    const { page, context, errors } = await openPage(browser, '#/?lang=en', { initScript: script });
    assert.equal(await waitForProbe(page), 'available');
    await navigatedBy(page, () => page.click('nav a[href^="#/kernels?"]'), { path: '/kernels', lang: 'en' });
    await switchLang(page, 'zh');
    assert.match(await page.textContent('main h1'), /内核/);
    assert.match(new URL(page.url()).hash, /lang=zh/);
    // A run still works without saved preferences.
    await runVerified(page, [16, 16, 16]);
    assertNoErrors(errors);
    await context.close();
  });
}

test('row 4: a size past the device limits is refused before submission, naming the largest that fits', async () => {
  const MIB128 = 128 * 1024 * 1024;
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=8192&n=8192&k=8192', {
    // An adapter with WebGPU's default binding limit (128 MiB), as many laptops report.
    initScript: () => {
      const limit = 128 * 1024 * 1024;
      const real = Object.getOwnPropertyDescriptor(GPUAdapter.prototype, 'limits').get;
      Object.defineProperty(GPUAdapter.prototype, 'limits', {
        get() {
          const l = real.call(this);
          return new Proxy(l, {
            get: (t, k) => (k === 'maxStorageBufferBindingSize' ? limit : t[k]),
          });
        },
      });
    },
  });
  await waitForProbe(page);
  // 8192² floats are 256 MiB per matrix.
  assert.ok(await page.isDisabled('#run-button'));
  const text = await page.textContent('.run-widget');
  const m = text.match(/largest square size that fits is ([\d,]+)/);
  assert.ok(m, text);
  const n = Number(m[1].replace(/,/g, ''));
  assert.ok(n * n * 4 <= MIB128 && n >= 5000, `largest fit ${n}`);
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_live_buffers()), 0);
  // A size that fits runs.
  await runVerified(page, [64, 64, 64]);
  assertNoErrors(errors);
  await context.close();
});

test('row 9: a double submit starts one run, not two', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=48&n=48&k=48', {
    initScript: () => {
      window.__submits = 0;
      const submit = GPUQueue.prototype.submit;
      GPUQueue.prototype.submit = function (...args) { window.__submits += 1; return submit.apply(this, args); };
    },
  });
  await waitForProbe(page);
  await runAndWait(page);
  const one = await page.evaluate(() => window.__submits);
  assert.ok(one > 0);
  // Two submits in the same task, before the page can re-render and disable the button.
  const before = Number(await page.getAttribute('.result', 'data-runs'));
  await page.evaluate(() => {
    const form = document.querySelector('#run-button').form;
    form.requestSubmit();
    form.requestSubmit();
  });
  await page.waitForFunction((n) => Number(document.querySelector('.result')?.dataset.runs) > n, before, { timeout: 120_000 });
  // The widget counts the runs it started (synchronously, past its busy guard) as well as
  // the runs finished: a second run started by the second submit would show here at once,
  // whether or not it has reached the GPU yet.
  assert.equal(await page.getAttribute('.result', 'data-started'), String(before + 1), 'runs started');
  assert.equal(await page.getAttribute('.result', 'data-runs'), String(before + 1), 'runs finished');
  assert.equal(await page.evaluate(() => window.__submits), 2 * one, 'submissions of exactly one more run');
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_live_buffers()), 0);
  assertNoErrors(errors);
  await context.close();
});

test('screenshots: lesson 1 race widget at 390, 1280 and 1920 px in both languages, no sideways scroll', async () => {
  for (const lang of ['en', 'zh']) {
    // One load per language, opened at 390 px and resized to the other widths.
    const { page, context, errors } = await openPage(browser, `#/learn/latency-throughput?lang=${lang}`, {
      viewport: { width: 390, height: 900 },
    });
    for (const width of [390, 1280, 1920]) {
      await resizeTo(page, width);
      await page.waitForSelector('.widget[data-widget="race"] button.measure');
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(sideways <= 0, `${lang} at ${width}px scrolls sideways by ${sideways}px`);
      await page.locator('.widget[data-widget="race"]').screenshot({ path: `${process.env.TEST_OUTPUT ?? 'test-output'}/lesson1-widget-${lang}-${width}.png` });
      assertNoErrors(errors);
    }
    await context.close();
  }
});

// Row 7: the tab hidden. Headless Chromium never hides a page, so `document.hidden` is
// redefined on the prototype (before the app loads) to read `window.__hidden`, and the test
// fires `visibilitychange` itself, as the browser would.
const HIDEABLE = `
  window.__hidden = false;
  window.__hiddenReads = 0;
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true,
    get: () => { window.__hiddenReads += 1; return window.__hidden; } });
  Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true,
    get: () => (window.__hidden ? 'hidden' : 'visible') });
`;
const setHidden = (page, hidden) => page.evaluate((h) => {
  window.__hidden = h;
  document.dispatchEvent(new Event('visibilitychange'));
}, hidden);

/** Clicks Start and waits until this race (not an earlier one) has finished. */
async function race(page, timeout = 180_000) {
  const before = Number(await page.getAttribute('.lanes', 'data-races'));
  await page.click('#race-start');
  await page.waitForFunction(
    (n) => Number(document.querySelector('.lanes')?.dataset.races) > n, before, { timeout, polling: 100 },
  );
}

test('row 7: a race during which the page was hidden says its times are unreliable', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(
      browser, `#/race?lang=${lang}&n=64&cpu=naive&workers=1`, { initScript: HIDEABLE },
    );
    await waitForProbe(page);
    await page.waitForSelector('#race-start:not([disabled])');
    // In view throughout: no note.
    await race(page);
    assert.equal(await page.$('[data-hidden-note]'), null, 'a race kept in view has no note');
    // Hidden for a moment in the middle, shown again before the end: the race notes every
    // visibilitychange while it runs, so the length of the moment does not matter. 512 keeps
    // the race running well past it on a software GPU while staying short on a busy 2-core CI
    // machine (1024 took over 180 s there under load).
    await page.fill('#race-n', '512');
    // Hidden and shown again in one task of the page, in the microtask after the render that
    // first shows the race running: the race cannot end in between, whatever the machine's
    // speed. (Polling on animation frames missed the running phase on a loaded 2-core CI
    // machine: no frame was drawn while the race ran.)
    await page.evaluate(() => {
      window.__flipped = false;
      const flip = () => {
        if (window.__flipped || document.querySelector('.lanes')?.dataset.phase !== 'running') return;
        window.__flipped = true;
        for (const h of [true, false]) {
          window.__hidden = h;
          document.dispatchEvent(new Event('visibilitychange'));
        }
      };
      new MutationObserver(flip).observe(document.body,
        { subtree: true, childList: true, attributes: true, attributeFilter: ['data-phase'] });
    });
    await page.click('#race-start');
    await page.waitForFunction(() => window.__flipped, null, { timeout: 60_000, polling: 100 });
    await page.waitForFunction(() => Number(document.querySelector('.lanes')?.dataset.races) >= 2,
      null, { timeout: 180_000, polling: 100 });
    assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
    const note = await page.textContent('[data-hidden-note]');
    assert.match(note, lang === 'en' ? /hidden.*unreliable/ : /隐藏.*不可靠/);
    await screenshot(page, `race-hidden-note-${lang}`);
    assertNoErrors(errors);
    await context.close();
  }
});

test('row 7: training holds while the page is hidden and resumes when shown', async () => {
  const { page, context, errors } = await openPage(
    browser, '#/train?lang=en&data=spiral&layers=8,8', { initScript: HIDEABLE },
  );
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
  const steps = async () => Number(await page.getAttribute('#train-status', 'data-gpu-steps'));
  await page.click('#train-play');
  await page.waitForFunction(() => Number(document.querySelector('#train-status')?.dataset.gpuSteps) > 0,
    null, { timeout: 60_000 });
  await setHidden(page, true);
  await page.waitForSelector('#train-status[data-running="false"]', { timeout: 10_000 });
  // Steps submitted before the page was hidden (up to MAX_IN_FLIGHT) still complete; on a
  // loaded software adapter that can take seconds, so wait for them rather than a fixed time.
  await page.waitForFunction(() => {
    const s = document.querySelector('#train-status')?.dataset;
    return s && s.gpuSteps === s.gpuSubmitted;
  }, null, { timeout: 60_000 });
  const held = await steps();
  const submitted = await page.getAttribute('#train-status', 'data-gpu-submitted');
  // The training's timer asks document.hidden on every tick (16 ms): sixty more questions
  // are sixty ticks taken while hidden, each of which would have stepped.
  const reads = await page.evaluate(() => window.__hiddenReads);
  await page.waitForFunction((r) => window.__hiddenReads >= r + 60, reads, { timeout: 60_000 });
  assert.equal(await steps(), held, 'no step is taken while the page is hidden');
  assert.equal(await page.getAttribute('#train-status', 'data-gpu-submitted'), submitted, 'nothing is submitted while hidden');
  assert.match(await page.textContent('#train-play'), /Pause/, 'Play stays on');
  await setHidden(page, false);
  await page.waitForSelector('#train-status[data-running="true"]', { timeout: 10_000 });
  await page.waitForFunction((n) => Number(document.querySelector('#train-status')?.dataset.gpuSteps) > n + 10,
    held, { timeout: 60_000 });
  assert.notEqual(await page.getAttribute('#train-status', 'data-gpu'), 'lost');
  assertNoErrors(errors);
  await context.close();
});

// Row 9b: settings changed from outside during a race (the URL: Back, a link, the embed API —
// the controls themselves are disabled while it runs). The older race is cancelled; the
// result shown is always the one of the settings shown.
test('row 9b: the URL changing N during a race cancels it; the next result is the new N', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=1024&cpu=naive&workers=1', {
    initScript: QUEUE_SPY,
  });
  await waitForProbe(page);
  await page.waitForSelector('#race-start:not([disabled])');
  await page.click('#race-start');
  // Really under way: the GPU side has finished part of its work, and has more to do.
  await page.waitForFunction(() => {
    const v = Number(document.querySelector('.lane.gpu .track')?.getAttribute('aria-valuenow'));
    return document.querySelector('.lanes')?.dataset.phase === 'running' && v > 0 && v < 100;
  }, null, { timeout: 120_000 });
  // The URL changes as a learner's link click changes it, and the count is taken in the same
  // task as that click (clickAndCount, as the other cancel tests): anything submitted later
  // was sent after the URL had changed, even before "cancelled" shows.
  await page.evaluate(() => {
    const a = document.createElement('a');
    a.id = 'e2e-other-n';
    a.href = '#/race?lang=en&n=64&cpu=simd&workers=1';
    document.body.append(a);
  });
  let atCancel;
  await navigatedBy(page, async () => { atCancel = await clickAndCount(page, '#e2e-other-n'); }, { path: '/race', lang: 'en' });
  await page.waitForSelector('.lanes[data-phase="cancelled"]', { timeout: 10_000 });
  assert.equal(await page.inputValue('#race-n'), '64', 'the field shows the new N');
  assert.equal(await page.$('.race-results'), null, 'no result of the old race');
  // The old race's GPU side stops at its next submission boundary: once it has returned,
  // it submitted nothing after the cancel and left nothing queued, and no result came.
  await page.waitForSelector('.lanes[data-gpu-idle="true"]', { timeout: 60_000 });
  await queueDrained(page);
  assert.equal((await queueState(page)).submitted, atCancel, 'no GPU work submitted after the cancel');
  assert.equal(await page.getAttribute('.lanes', 'data-races'), '0', 'the old race is never counted');
  assert.equal(await page.$('.race-results'), null, 'no result of the old race, ever');
  await race(page);
  assert.equal(await page.getAttribute('.lanes', 'data-races'), '1', 'one race finished, not two');
  assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
  assert.equal(await page.inputValue('#race-n'), '64');
  assert.match(await page.textContent('.lane.cpu .lane-title'), /SIMD|simd/i);
  assertNoErrors(errors);
  await context.close();
});
