// Embeds on a course page of ANOTHER origin (a second server on another port): the
// postMessage API v1 (ready, resize, run → run-finished, setParams/getState/reset, errors),
// the origin check, the strict CSP, the worked example course page, phone and projector widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  BASE_URL, launch, screenshot, assertNoErrors,
} from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
let browser;
let host;
let hostOrigin;

/** Every frame records CSP violations (an embed must run under the strict policy). */
const RECORD_VIOLATIONS = () => {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
  });
};

/** The course page: one iframe, a message log, and a function to send requests. */
function hostPage(src, width) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>course</title><link rel="icon" href="data:,"></head><body>
<iframe id="w" src="${src}" width="${width}" height="150" style="border:0;display:block"></iframe>
<script>
window.received = [];
addEventListener('message', (e) => {
  received.push({ origin: e.origin, data: e.data });
  if (e.data && e.data.api === 'gpu-playground' && e.data.type === 'resize') {
    document.getElementById('w').style.height = e.data.height + 'px';
  }
});
window.send = (msg) => document.getElementById('w').contentWindow.postMessage(msg, '${SITE_ORIGIN}');
</script></body></html>`;
}

before(async () => {
  browser = await launch();
  host = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== '/host.html') {
      res.writeHead(404).end();
      return;
    }
    const src = url.searchParams.get('src');
    const width = Number(url.searchParams.get('w') ?? 360);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostPage(src, width));
  });
  await new Promise((r) => host.listen(0, '127.0.0.1', r));
  hostOrigin = `http://127.0.0.1:${host.address().port}`;
  assert.notEqual(hostOrigin, SITE_ORIGIN);
});
after(async () => {
  await browser?.close();
  await new Promise((r) => host?.close(r));
});

/** Opens the host page embedding `widgetPath` (e.g. `matmul?m=64`) with the given parent origin. */
async function openHost(widgetPath, { parentOrigin = hostOrigin, width = 360, viewport, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: viewport ?? { width: 800, height: 900 }, colorScheme });
  await context.addInitScript(RECORD_VIOLATIONS);
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  const sep = widgetPath.includes('?') ? '&' : '?';
  const src = `${BASE_URL}#/embed/${widgetPath}${sep}parentOrigin=${encodeURIComponent(parentOrigin)}`;
  await page.goto(`${hostOrigin}/host.html?w=${width}&src=${encodeURIComponent(src)}`);
  const frame = () => page.frames().find((f) => f.url().startsWith(SITE_ORIGIN));
  await page.waitForFunction(() => document.getElementById('w').contentWindow !== null);
  const deadline = Date.now() + 30_000;
  while (!frame() && Date.now() < deadline) await page.waitForTimeout(100);
  assert.ok(frame(), 'the embed frame loaded');
  return { page, context, errors, requests, frame: frame() };
}

/** Waits for a message from the embed matching `pred` (received after index `from`). */
async function waitMessage(page, pred, { from = 0, timeout = 120_000 } = {}) {
  const handle = await page.waitForFunction(
    ([src, start]) => {
      const p = new Function('m', `return (${src})(m)`);
      return window.received.slice(start).find((m) => p(m.data)) ?? false;
    },
    [pred.toString(), from],
    { timeout },
  );
  return handle.jsonValue();
}

async function violations(frame) {
  return frame.evaluate(() => window.__csp);
}

function assertOwnOrigins(requests) {
  const foreign = requests.filter((u) => !u.startsWith(SITE_ORIGIN + '/')
    && !u.startsWith(hostOrigin + '/') && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], `requests to other origins: ${foreign.join(', ')}`);
}

const API = 'gpu-playground';

test('ready and resize arrive, the iframe takes the height, and a run from the host is verified', async () => {
  const { page, context, errors, requests, frame } = await openHost('matmul?lang=en&m=64&n=48&k=32');
  const ready = await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  assert.equal(ready.origin, SITE_ORIGIN);
  assert.equal(ready.data.api, API);
  assert.equal(ready.data.version, 1);
  assert.equal(ready.data.widget, 'matmul');
  assert.deepEqual(ready.data.params, { m: '64', n: '48', k: '32' });
  const resize = await waitMessage(page, (d) => d && d.type === 'resize');
  assert.ok(resize.data.height > 200, `content height ${resize.data.height}`);
  // Canvas's own message comes too.
  await waitMessage(page, (d) => typeof d === 'string' && JSON.parse(d).subject === 'lti.frameResize');
  // The iframe took the last height the embed reported, and the content fits it.
  await page.waitForFunction(() => {
    const last = window.received.filter((m) => m.data?.type === 'resize').at(-1).data.height;
    return document.getElementById('w').getBoundingClientRect().height === last;
  });
  const fits = await frame.evaluate(() => document.documentElement.scrollHeight <= innerHeight + 1);
  assert.ok(fits, 'the embed needs no inner scroll bar');

  const from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, version: 1, type: 'run', id: 'r1' }), API);
  const started = await waitMessage(page, (d) => d && d.type === 'run-started', { from });
  assert.equal(started.data.id, 'r1');
  const done = await waitMessage(page, (d) => d && d.type === 'run-finished', { from });
  assert.equal(done.data.id, 'r1');
  const r = done.data.results;
  assert.equal(r.kernel, 'matmul-naive');
  assert.deepEqual([r.m, r.n, r.k], [64, 48, 32]);
  assert.equal(r.verified, true);
  assert.ok(r.kernelMs > 0 && Number.isFinite(r.kernelMs), `kernelMs ${r.kernelMs}`);
  // GFLOP/s is the arithmetic of the size and the kernel time.
  const expected = (2 * 64 * 48 * 32) / (r.kernelMs * 1e6);
  assert.ok(Math.abs(r.gflops - expected) <= 1e-9 * Math.max(1, expected), `${r.gflops} vs ${expected}`);
  assert.equal(r.checked, 64 * 48, 'small sizes check every element');
  // The page shows the same run.
  assert.equal(await frame.getAttribute('.result [data-verified]', 'data-verified'), 'true');
  assert.deepEqual(await violations(frame), []);
  assertNoErrors(errors);
  assertOwnOrigins(requests);
  await context.close();
});

test('setParams, getState and reset echo the request id; bad requests get an error', async () => {
  const { page, context, errors, frame } = await openHost('matmul?lang=en&m=64');
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  let from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, type: 'setParams', id: 7, params: { m: 32, k: '16' } }), API);
  let state = await waitMessage(page, (d) => d && d.type === 'state' && d.id === 7, { from });
  assert.deepEqual(state.data.params, { m: '32', k: '16' });
  await frame.waitForFunction(() => document.querySelector('#dim-m').value === '32'
    && document.querySelector('#dim-k').value === '16');

  from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, type: 'getState', id: 'g' }), API);
  state = await waitMessage(page, (d) => d && d.type === 'state' && d.id === 'g', { from });
  assert.deepEqual(state.data.params, { m: '32', k: '16' });

  from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, type: 'reset', id: 'z' }), API);
  state = await waitMessage(page, (d) => d && d.type === 'state' && d.id === 'z', { from });
  assert.deepEqual(state.data.params, {});
  await frame.waitForFunction(() => document.querySelector('#dim-m').value === '256');

  for (const [msg, code] of [
    [{ api: API, type: 'eval', id: 'e1', code: 'alert(1)' }, 'unknown-type'],
    [{ api: API, type: 'setParams', id: 'e2', params: { onload: 'x' } }, 'unknown-param'],
    [{ api: API, type: 'run', id: 'e3', version: 2 }, 'unsupported-version'],
  ]) {
    from = await page.evaluate(() => window.received.length);
    await page.evaluate((m) => window.send(m), msg);
    const err = await waitMessage(page, (d) => d && d.type === 'error', { from });
    assert.equal(err.data.id, msg.id);
    assert.equal(err.data.code, code);
  }
  // A size the widget refuses: run answers not-runnable, and the page says why at the field.
  from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, type: 'setParams', id: 's', params: { m: 'abc' } }), API);
  await waitMessage(page, (d) => d && d.type === 'state' && d.id === 's', { from });
  await frame.waitForSelector('.field.invalid');
  await page.evaluate((api) => window.send({ api, type: 'run', id: 'bad' }), API);
  const refused = await waitMessage(page, (d) => d && d.type === 'error' && d.id === 'bad', { from });
  assert.equal(refused.data.code, 'not-runnable');
  assert.deepEqual(await violations(frame), []);
  assertNoErrors(errors);
  await context.close();
});

test('an origin the embedder did not name is ignored: no reply, no run', async () => {
  // The embed was told to talk to another origin than the page that holds it.
  const { page, context, errors, frame } = await openHost('matmul?lang=en&m=16', {
    parentOrigin: 'http://127.0.0.1:9',
  });
  await frame.waitForFunction(() => document.querySelector('#run-button') && !document.querySelector('#run-button').disabled,
    null, { timeout: 60_000 });
  await page.evaluate((api) => {
    window.send({ api, type: 'run', id: 1 });
    window.send({ api, type: 'setParams', id: 2, params: { m: 8 } });
  }, API);
  await page.waitForTimeout(3000);
  assert.equal(await frame.getAttribute('.result', 'data-runs'), '0', 'the run did not start');
  assert.equal(await frame.inputValue('#dim-m'), '16', 'the settings did not change');
  assert.deepEqual(await page.evaluate(() => window.received), [], 'nothing was sent to this page');
  assertNoErrors(errors);
  await context.close();
});

test('parentOrigin=* and a malformed origin are refused with a message in the page', async () => {
  for (const [origin, pattern] of [['*', /parentOrigin=\* is not accepted/], ['https://a.edu/course', /is not an origin/]]) {
    const { page, context, errors, frame } = await openHost('gpu?lang=en', { parentOrigin: origin });
    await frame.waitForSelector('.embed-note');
    assert.match(await frame.textContent('.embed-note'), pattern);
    await page.waitForTimeout(1500);
    assert.deepEqual(await page.evaluate(() => window.received), []);
    assertNoErrors(errors);
    await context.close();
  }
});

test('a race started by the host reports the winner and verified results, under the strict CSP', async () => {
  const { page, context, errors, requests, frame } = await openHost('race?lang=zh&n=64&hide=heading,tabs', { width: 700 });
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  assert.equal(await frame.isVisible('.race-tabs'), false, 'hide=tabs hid the tabs');
  const from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, type: 'run', id: 'race-1' }), API);
  const done = await waitMessage(page, (d) => d && d.type === 'run-finished', { from, timeout: 180_000 });
  assert.equal(done.data.id, 'race-1');
  const r = done.data.results;
  assert.equal(r.n, 64);
  assert.equal(r.verified, true);
  assert.ok(r.cpuMs > 0 && r.gpuMs > 0, JSON.stringify(r));
  assert.equal(r.winner, r.gpuMs < r.cpuMs ? 'gpu' : 'cpu');
  assert.ok(Math.abs(r.cpuGflops - (2 * 64 ** 3) / (r.cpuMs * 1e6)) < 1e-9 * r.cpuGflops + 1e-12);
  await screenshot(page, 'embed-race-host-zh');
  assert.deepEqual(await violations(frame), [], 'no CSP violation in the race');
  assertNoErrors(errors);
  assertOwnOrigins(requests);
  await context.close();
});

// zh: theme=dark asked for; en: theme=auto (the default) on a system that prefers dark.
for (const [lang, theme, colorScheme] of [['en', '', 'dark'], ['zh', '&theme=dark', 'light']]) {
  test(`the SIMT view fits a 390 px embed with no horizontal scroll, dark theme (${lang})`, async () => {
    const { page, context, errors, frame } = await openHost(`simt-compare?lang=${lang}&hide=heading,replay${theme}`, {
      width: 390, viewport: { width: 420, height: 900 }, colorScheme,
    });
    await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
    // The dark palette of www/css/embed.css (--bg: #14171f) is in force.
    assert.equal(await frame.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), 'rgb(20, 23, 31)');
    await frame.waitForSelector('.vis-compare');
    const overflow = await frame.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px at 390`);
    await page.waitForTimeout(500);
    await screenshot(page, `embed-simt-390-${lang}`);
    assert.deepEqual(await violations(frame), []);
    assertNoErrors(errors);
    await context.close();
  });
}

for (const lang of ['en', 'zh']) {
  for (const width of [390, 1280, 1920]) {
    test(`the example course page (${lang}, ${width} px): three embeds, sized, a host button runs one`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 1000 } });
      await context.addInitScript(RECORD_VIOLATIONS);
      const page = await context.newPage();
      const errors = [];
      page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      const file = lang === 'zh' ? 'course.zh.html' : 'course.html';
      await page.goto(new URL(`examples/${file}`, BASE_URL).href);
      await page.waitForFunction(() => document.querySelectorAll('iframe').length === 3);
      // Every embed sized itself (the page's script set each height from `resize`).
      await page.waitForFunction(() => [...document.querySelectorAll('iframe')]
        .every((f) => f.dataset.sized === 'true'), null, { timeout: 90_000 });
      // Each embed got the height of its content: nothing is cut off or scrolls inside.
      for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
        await f.waitForFunction(() => document.documentElement.scrollHeight <= innerHeight + 1, null, { timeout: 30_000 })
          .catch(async () => assert.fail(`${f.url()}: content ${await f.evaluate(() => document.documentElement.scrollHeight)} px in a ${await f.evaluate(() => innerHeight)} px frame`));
      }
      // One run per language is enough to prove the button; the widths are about layout.
      if (width === 1280) {
        await page.click('#run-race');
        await page.waitForFunction(() => document.querySelector('#results')?.dataset.finished >= 1,
          null, { timeout: 180_000 });
        const log = await page.textContent('#results');
        assert.match(log, lang === 'zh' ? /race: 已验证/ : /race: verified/);
        assert.match(log, /winner = (cpu|gpu)/);
      }
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
      await screenshot(page, `embed-course-${lang}-${width}`);
      for (const f of page.frames()) assert.deepEqual(await f.evaluate(() => window.__csp ?? []), [], f.url());
      assertNoErrors(errors);
      await context.close();
    });
  }
}

for (const [lang, width] of [['en', 1280], ['zh', 390], ['en', 1920]]) {
  test(`the Embed button gives the snippet for the current state, a preview and a copy button (${lang}, ${width} px)`, async () => {
    const context = await browser.newContext({ viewport: { width, height: 1000 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: SITE_ORIGIN });
    await context.addInitScript(RECORD_VIOLATIONS);
    const page = await context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    await page.goto(new URL(`#/race?lang=${lang}&view=sweep&from=32&to=128`, BASE_URL).href);
    await page.click('.embed-toggle');
    const code = await page.inputValue('.embed-snippet');
    const src = new URL(`#/embed/sweep?from=32&to=128&lang=${lang}&hide=heading%2Ctabs`, BASE_URL).href;
    assert.ok(code.includes(`src="${src.replaceAll('&', '&amp;')}"`), code);
    assert.match(code, /width="\d+" height="\d+"/);
    assert.equal(await page.getAttribute('.embed-preview', 'src'), src);
    let preview;
    for (const end = Date.now() + 30_000; !preview && Date.now() < end; await page.waitForTimeout(100)) {
      preview = page.frames().find((f) => f.url() === src);
    }
    assert.ok(preview, 'the live preview loaded');
    await preview.waitForSelector('#sweep-start', { timeout: 60_000 });
    assert.equal(await preview.isVisible('.race-tabs'), false, 'the preview hides the page tabs');
    await page.click('.embed-copy');
    await page.waitForSelector('.embed-panel [role="status"]');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
    await page.locator('.embed-panel').scrollIntoViewIfNeeded();
    await screenshot(page, `embed-button-${lang}-${width}`);
    for (const f of page.frames()) assert.deepEqual(await f.evaluate(() => window.__csp ?? []), [], f.url());
    assertNoErrors(errors);
    await context.close();
  });
}

test('every widget in the embed index loads on its own under the CSP, with no console error', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  await context.addInitScript(RECORD_VIOLATIONS);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(new URL('#/embed?lang=en', BASE_URL).href);
  const links = await page.$$eval('.embeds a', (as) => as.map((a) => a.getAttribute('href')));
  const ids = links.map((h) => h.match(/^#\/embed\/([a-z-]+)\?/)?.[1]);
  for (const id of ['matmul', 'ladder', 'race', 'sweep', 'claim', 'simt', 'simt-compare', 'schedule',
    'train', 'batch', 'lesson', 'gpu']) {
    assert.ok(ids.includes(id), `${id} is listed`);
  }
  for (const id of ids) {
    const extra = id === 'lesson' ? '&lesson=occupancy&hide=prose' : '';
    await page.goto(new URL(`#/embed/${id}?lang=zh${extra}`, BASE_URL).href);
    await page.waitForSelector(`.embed-root[data-widget="${id}"] .embed-body > *`, { timeout: 30_000 });
    assert.equal(await page.$('header'), null, `${id}: no page header`);
    assert.equal(await page.$('.embed-note'), null, `${id}: no complaint about its parameters`);
    assert.deepEqual(await page.evaluate(() => window.__csp), [], `${id}: CSP violations`);
    if (id === 'lesson') await checkLessonProseHidden(page);
  }
  assertNoErrors(errors);
  await context.close();
});

/** hide=prose hides a lesson's paragraphs and leaves its widget. */
async function checkLessonProseHidden(page) {
  const prose = await page.$$eval('.lesson > p:not(.lesson-number)', (ps) => ps.map((p) => p.offsetParent === null));
  assert.ok(prose.length > 0 && prose.every(Boolean), `lesson paragraphs hidden: ${prose}`);
  const controls = await page.$$eval('.lesson :is(input, select, button)', (cs) => cs.filter((c) => c.offsetParent !== null).length);
  assert.ok(controls > 0, 'the lesson widget stays visible');
}

test('a conv stage embed runs from the host and reports its shape, verified', async () => {
  const { page, context, errors, requests, frame } = await openHost(
    'conv-tiled?lang=en&n=1&h=10&w=12&c=3&k=4&r=3&s=3&stride=1&pad=1&dil=1',
  );
  const ready = await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  assert.equal(ready.data.widget, 'conv-tiled');
  const from = await page.evaluate(() => window.received.length);
  await page.evaluate((api) => window.send({ api, version: 1, type: 'run', id: 'c1' }), API);
  const done = await waitMessage(page, (d) => d && d.type === 'run-finished', { from, timeout: 120_000 });
  const r = done.data.results;
  assert.equal(r.kernel, 'conv-tiled');
  assert.equal(r.family, 'conv');
  assert.deepEqual([r.n, r.h, r.w, r.c, r.k, r.r, r.s, r.stride, r.pad, r.dil], [1, 10, 12, 3, 4, 3, 3, 1, 1, 1]);
  assert.equal(r.verified, true);
  // FLOPs = 2·N·P·Q·K·R·S·C = 2·10·12·4·27 ("same" padding keeps 10×12).
  const expected = (2 * 10 * 12 * 4 * 27) / (r.kernelMs * 1e6);
  assert.ok(Math.abs(r.gflops - expected) <= 1e-9 * Math.max(1, expected), `${r.gflops} vs ${expected}`);
  assert.equal(r.checked, 10 * 12 * 4, 'every output element checked');
  assert.deepEqual(await violations(frame), []);
  assertNoErrors(errors);
  assertOwnOrigins(requests);
  await context.close();
});
