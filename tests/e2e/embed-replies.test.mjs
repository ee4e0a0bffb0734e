// Replies an instructor's course page (ANOTHER origin) gets from an embed, beyond the happy
// path: setParams judged by the page's own settings parser (bad-params with the page's words,
// nothing changed), a puzzle run that fails because of the learner's code (run-finished with
// passed: false and the page's reason, in the embed's language), and `resize` while the
// iframe is scrolled out of view (Chrome throttles animation frames there).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, launch, assertNoErrors, waitForRoute, startHost, HTML } from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
const API = 'gpu-playground';
let browser;
let host;
let hostOrigin;

/** The course page: optionally a tall spacer first (the iframe starts out of view). */
function hostPage(src, spacer) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>course</title><link rel="icon" href="data:,"></head><body style="margin:0">
<div id="spacer" style="height:${spacer}px">text above</div>
<iframe id="w" src="${src}" width="900" height="150" style="border:0;display:block"></iframe>
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
  host = await startHost((url) => (url.pathname === '/host.html'
    ? { type: HTML, body: hostPage(url.searchParams.get('src'), Number(url.searchParams.get('spacer') ?? 0)) }
    : null));
  hostOrigin = host.origin;
});
after(async () => {
  await browser?.close();
  await host?.close();
});

async function openHost(widgetPath, { spacer = 0 } = {}) {
  const context = await browser.newContext({ viewport: { width: 960, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const src = `${BASE_URL}#/embed/${widgetPath}&parentOrigin=${encodeURIComponent(hostOrigin)}`;
  await page.goto(`${hostOrigin}/host.html?spacer=${spacer}&src=${encodeURIComponent(src)}`);
  const frame = await (await page.waitForSelector('#w', { state: 'attached' })).contentFrame();
  await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 30_000 });
  const [id, query] = widgetPath.split('?');
  await waitForRoute(frame, `/embed/${id}`, { lang: new URLSearchParams(query).get('lang') });
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  return { page, context, errors, frame };
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

/** Sends `msg` with `id` and returns the embed's reply to it. */
async function ask(page, msg) {
  const from = await page.evaluate(() => window.received.length);
  await page.evaluate((m) => window.send(m), { api: API, ...msg });
  return (await waitMessage(page, (d) => d && d.id !== undefined && d.type !== 'run-started', { from })).data;
}

test('setParams is judged by the page\'s own settings parser: bad-params with its words, nothing changed (en, zh)', async () => {
  for (const [lang, words] of [
    ['en', /Batch size “999999” is not usable: it must be a whole number from 1 to \d+/],
    ['zh', /批大小“999999”不可用：必须是 1 到 \d+/],
  ]) {
    const { page, context, errors, frame } = await openHost(`train?lang=${lang}&batch=8`);
    const err = await ask(page, { type: 'setParams', id: `b-${lang}`, params: { batch: 999999 } });
    assert.equal(err.type, 'error', JSON.stringify(err));
    assert.equal(err.id, `b-${lang}`);
    assert.equal(err.code, 'bad-params');
    assert.match(err.message, words);
    // An unknown name, the same way.
    const act = await ask(page, { type: 'setParams', id: 'a', params: { act: 'softsign' } });
    assert.equal(act.code, 'bad-params', JSON.stringify(act));
    assert.match(act.message, /softsign/);
    // The widget's state is unchanged, in the reply and in the page.
    const state = await ask(page, { type: 'getState', id: 'g' });
    assert.equal(state.type, 'state');
    assert.deepEqual(state.params, { batch: '8' });
    assert.equal(await frame.evaluate(() => location.hash.includes('999999')), false);
    // A value the page takes still goes through.
    const ok = await ask(page, { type: 'setParams', id: 'ok', params: { batch: 16 } });
    assert.equal(ok.type, 'state', JSON.stringify(ok));
    assert.deepEqual(ok.params, { batch: '16' });
    assertNoErrors(errors);
    await context.close();
  }
});

test('a puzzle run the learner\'s code fails is run-finished with passed: false and the page\'s reason (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors, frame } = await openHost(`puzzle?lang=${lang}&id=map`);
    // The untouched starter code.
    await frame.waitForSelector('#puzzle-run:not([disabled])', { timeout: 60_000 });
    const from = await page.evaluate(() => window.received.length);
    await page.evaluate((api) => window.send({ api, type: 'run', id: 'p' }), API);
    const done = await waitMessage(page, (d) => d && d.id === 'p' && d.type !== 'run-started', { from, timeout: 120_000 });
    assert.equal(done.data.type, 'run-finished', JSON.stringify(done.data));
    const r = done.data.results;
    assert.equal(r.puzzle, 'map');
    assert.equal(r.passed, false);
    // The same words the page shows, in the embed's language.
    const shown = await frame.locator('.puzzle-page .message.error[role="alert"]').first().innerText();
    assert.equal(r.reason, shown);
    assert.ok(r.reason.length > 20, r.reason);
    if (lang === 'zh') assert.match(r.reason, /[\u4e00-\u9fff]/, 'the reason is in Chinese');
    else assert.doesNotMatch(r.reason, /[\u4e00-\u9fff]/);
    assertNoErrors(errors);
    await context.close();
  }
});

test('resize reaches the host while the iframe is scrolled out of view', async () => {
  const { page, context, errors, frame } = await openHost('matmul?lang=en&m=0', { spacer: 3000 });
  const inView = await page.evaluate(() => document.getElementById('w').getBoundingClientRect().top < innerHeight);
  assert.equal(inView, false, 'the iframe starts below the fold');
  const height = () => frame.evaluate(() => {
    const main = document.getElementById('main');
    return Math.ceil(main.getBoundingClientRect().bottom + scrollY);
  });
  const lastResize = () => page.evaluate(() => window.received.filter((m) => m.data?.type === 'resize').at(-1)?.data.height ?? null);
  // The first height arrives although no frame is ever drawn there.
  await page.waitForFunction(() => window.received.some((m) => m.data?.type === 'resize'), null, { timeout: 30_000 });
  const before = await lastResize();
  // The host changes the content (a valid size takes the message under the field away).
  await frame.waitForSelector('.field.invalid');
  const state = await ask(page, { type: 'setParams', id: 's', params: { m: '64' } });
  assert.equal(state.type, 'state', JSON.stringify(state));
  await frame.waitForSelector('.field.invalid', { state: 'detached' });
  const after = await height();
  assert.notEqual(after, before, 'the content height changed');
  await page.waitForFunction((h) => window.received.filter((m) => m.data?.type === 'resize').at(-1)?.data.height === h,
    after, { timeout: 30_000 });
  // Still out of view: the host got it without the iframe being scrolled to.
  assert.equal(await page.evaluate(() => scrollY), 0);
  assertNoErrors(errors);
  await context.close();
});
