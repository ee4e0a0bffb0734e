// The one-line embed (`embed.js`) on a course page of ANOTHER origin under a strict CSP
// (scripts only from the site, no inline script or style): each <div data-gpu-playground>
// becomes a titled iframe 100 % wide with its own settings and parentOrigin, whose height
// follows its widget; a frame far below gets its address only when scrolled near; resize
// messages from any other window are ignored; the loader included twice mounts once; bad
// attributes are a message in the div, in its language. The Embed button offers the snippet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import {
  BASE_URL, launch, screenshot, assertNoErrors, goto, waitForRoute, startHost, HTML,
} from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
const SITE_DIR = process.env.SITE_DIR;
const API = 'gpu-playground';
let browser;
let host;
let hostOrigin;
/** Course pages by name: their body (the server adds the head). */
const pages = new Map();

// The loader's hashed name, from the built site (both names serve the same file).
const HASHED = readdirSync(SITE_DIR).find((f) => /^embed\.[0-9a-f]{16}\.js$/.test(f));

/** Scripts only from the site (so none of the page's own), no inline style, frames only from the site. */
const STRICT_CSP = () => `default-src 'none'; script-src ${SITE_ORIGIN}; frame-src ${SITE_ORIGIN}; style-src 'self'; img-src 'self'`;

function coursePage(lang, body) {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>course</title><link rel="stylesheet" href="/host.css"></head><body>
<h1>Week 3</h1><p>Matrix multiplication on the GPU.</p>
${body}
</body></html>`;
}

const HOST_CSS = 'body { margin: 0 auto; max-width: 860px; padding: 0 12px; font-family: sans-serif }\n'
  + '.spacer { height: 4000px; border-left: 4px dashed #ccc }\n.gpu-playground-error { color: #a00 }\n';

/** Records CSP violations in every frame (the host page's and the widgets'). */
const RECORD_VIOLATIONS = () => {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
  });
};

before(async () => {
  assert.ok(HASHED, `no embed.<hash>.js in ${SITE_DIR}`);
  browser = await launch();
  host = await startHost((url) => {
    if (url.pathname === '/host.css') return { type: 'text/css', body: HOST_CSS };
    const page = pages.get(url.pathname.slice(1));
    return page
      ? { type: HTML, body: coursePage(page.lang, page.body), headers: { 'content-security-policy': STRICT_CSP() } }
      : null;
  });
  hostOrigin = host.origin;
});
after(async () => {
  await browser?.close();
  await host?.close();
});

async function open(name, { width = 1280, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  await context.addInitScript(RECORD_VIOLATIONS);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`${hostOrigin}/${name}`);
  return { context, page, errors };
}

/** The widget frame inside `#id` (any loader div when null), once it shows the site's page with its ready signal. */
async function widgetFrame(page, id, widget, lang) {
  const div = id ? `#${id}` : '[data-gpu-playground]';
  const frame = await (await page.waitForSelector(`${div} iframe[src]`, { state: 'attached' })).contentFrame();
  await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 60_000 });
  await waitForRoute(frame, `/embed/${widget}`, { lang });
  return frame;
}

/**
 * Waits until the iframe in `#id` is as tall as its widget's content: the loader applies each
 * `resize` in the next animation frame; while the two differ a newer resize must come, so a
 * loader that stops following ends in a timeout, not a pass.
 */
async function followsContent(page, id, frame) {
  for (let i = 0; i < 20; i++) {
    const content = await frame.evaluate(() => Math.ceil(document.getElementById('main').getBoundingClientRect().bottom + scrollY));
    const ok = await page.waitForFunction(([sel, h]) => {
      const f = document.querySelector(sel);
      return Math.abs(f.getBoundingClientRect().height - Math.max(50, h)) <= 1;
    }, [`#${id} iframe`, content], { timeout: 10_000 }).then(() => true, () => false);
    if (ok) return content;
  }
  const [frameH, content] = [
    await page.$eval(`#${id} iframe`, (f) => f.getBoundingClientRect().height),
    await frame.evaluate(() => document.getElementById('main').getBoundingClientRect().bottom + scrollY),
  ];
  throw new Error(`#${id}: iframe ${frameH} px, content ${content} px`);
}

/** The page, with the loader included twice (stable and hashed name), and a frame of the site the loader did not make. */
function twoWidgets(lang) {
  const site = BASE_URL;
  return {
    lang,
    body: `<div id="near" data-gpu-playground="race" data-n="256" data-lang="zh" data-hide="heading,tabs"><a href="${site}#/embed/race?n=256&amp;lang=zh">race</a></div>
<p>Between the widgets.</p>
<iframe id="foreign" title="not the loader's" src="${site}#/embed/gpu?lang=en&amp;parentOrigin=${encodeURIComponent(hostOrigin)}" width="300" height="120"></iframe>
<div class="spacer"></div>
<div id="far" data-gpu-playground="matmul" data-m="64" data-n="48" data-k="32"><a href="${site}#/embed/matmul?m=64">matmul</a></div>
<script src="${site}embed.js" async></script>
<script src="${site}${HASHED}" async></script>`,
  };
}

test('two widgets under a strict CSP: own settings and title, heights follow, the far one loads when scrolled near', async () => {
  pages.set('two.html', twoWidgets('en'));
  const { context, page, errors } = await open('two.html');
  const near = await widgetFrame(page, 'near', 'race', 'zh');
  // One iframe per div although the loader came twice; the fallback link is gone.
  assert.deepEqual(await page.$$eval('[data-gpu-playground]', (els) => els.map((e) => [e.id, e.querySelectorAll('iframe').length, e.querySelectorAll('a').length])),
    [['near', 1, 0], ['far', 1, 0]]);
  const attrs = await page.$eval('#near iframe', (f) => ({ title: f.title, width: f.getAttribute('width'), src: f.src }));
  assert.equal(attrs.title, 'GPU Playground：CPU 与 GPU 赛跑');
  assert.equal(attrs.width, '100%');
  const q = new URLSearchParams(new URL(attrs.src).hash.split('?')[1]);
  assert.deepEqual(Object.fromEntries(q), { n: '256', hide: 'heading,tabs', lang: 'zh', parentOrigin: hostOrigin });
  assert.equal(await near.inputValue('#race-n'), '256', 'the race has its own N');
  const [frameW, columnW] = await page.$eval('#near', (d) => [d.querySelector('iframe').getBoundingClientRect().width, d.getBoundingClientRect().width]);
  assert.equal(Math.round(frameW), Math.round(columnW), 'the iframe fills its column');
  await followsContent(page, 'near', near);

  // Lazy: the widget below the fold has a frame but no address yet, while the near one runs.
  assert.equal(await page.$eval('#far iframe', (f) => f.hasAttribute('src')), false, 'the far frame loaded before it was near');
  const farTitle = await page.$eval('#far iframe', (f) => f.title);
  assert.equal(farTitle, 'GPU Playground: one matrix-multiply stage\'s Run widget');

  // Resize messages from a window the loader did not make are ignored: one from the site's
  // frame that is not the loader's, one from the page itself.
  const foreign = await (await page.$('#foreign')).contentFrame();
  await foreign.waitForURL((u) => u.href.startsWith(SITE_ORIGIN));
  const nearHeight = await page.$eval('#near iframe', (f) => f.height);
  await page.evaluate(() => {
    window.__seen = [];
    addEventListener('message', (e) => { if (e.data?.height === 4321) window.__seen.push(e.origin); });
    // Every height the loader gives either frame from here on.
    window.__heights = [];
    const obs = new MutationObserver((ms) => ms.forEach((m) => window.__heights.push([m.target.parentElement.id, m.target.getAttribute('height')])));
    document.querySelectorAll('#near iframe, #far iframe').forEach((f) => obs.observe(f, { attributes: true, attributeFilter: ['height'] }));
  });
  await foreign.evaluate((api) => parent.postMessage({ api, version: 1, type: 'resize', height: 4321 }, '*'), API);
  await page.evaluate((api) => postMessage({ api, version: 1, type: 'resize', height: 4321 }, '*'), API);
  await page.waitForFunction(() => window.__seen.length === 2);
  // The loader heard both before this page's listener, so a height it took from them is
  // pending in an animation-frame callback registered before this one, which therefore runs
  // after it. Then a resize from the near widget's own frame, which the loader does apply:
  // once that height is on the frame the loader is known to be applying heights, and neither
  // foreign message may have left one on either frame. (The legitimate one comes after that
  // frame, so it cannot overwrite a wrongly pending height before it is seen.)
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  await near.evaluate((api) => parent.postMessage({ api, version: 1, type: 'resize', height: 777 }, '*'), API);
  await page.waitForFunction(() => window.__heights.some(([id, h]) => id === 'near' && h === '777'));
  const heights = await page.evaluate(() => window.__heights);
  assert.deepEqual(heights.filter(([, h]) => h === '4321'), [], `a foreign window's resize changed a frame: ${JSON.stringify(heights)}`);
  // The near widget's height as it was, so what follows starts where it did.
  await near.evaluate(([api, height]) => parent.postMessage({ api, version: 1, type: 'resize', height }, '*'), [API, Number(nearHeight)]);
  await page.waitForFunction((h) => document.querySelector('#near iframe').height === h, nearHeight);

  await page.locator('#far').scrollIntoViewIfNeeded();
  const far = await widgetFrame(page, 'far', 'matmul', 'en');
  assert.equal(await far.inputValue('#dim-m'), '64', 'the second widget has its own settings');
  const farQ = new URLSearchParams(new URL(await page.$eval('#far iframe', (f) => f.src)).hash.split('?')[1]);
  assert.deepEqual(Object.fromEntries(farQ), { m: '64', n: '48', k: '32', lang: 'en', parentOrigin: hostOrigin });
  await followsContent(page, 'far', far);
  // A run in the far widget grows it; its frame follows, the near one keeps its own height.
  const before = await followsContent(page, 'far', far);
  const nearBefore = await page.$eval('#near iframe', (f) => f.height);
  await far.click('#run-button');
  await far.waitForSelector('.result [data-verified="true"]', { timeout: 120_000 });
  const grown = await followsContent(page, 'far', far);
  assert.ok(grown > before, `the far frame grew with its result: ${before} → ${grown}`);
  assert.equal(await page.$eval('#near iframe', (f) => f.height), nearBefore);

  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'CSP violations on the host page');
  assert.deepEqual(await near.evaluate(() => window.__csp), []);
  assertNoErrors(errors);
  await context.close();
});

test('bad attributes: a message in the div, in its language; no frame', async () => {
  pages.set('bad.html', {
    lang: 'en',
    body: `<div id="unknown" data-gpu-playground="nope" data-lang="zh"><a href="${BASE_URL}">fallback</a></div>
<div id="notwhole" data-gpu-playground="race" data-n="abc"><a href="${BASE_URL}">fallback</a></div>
<div id="param" data-gpu-playground="race" data-bogus-thing="1" data-lang="zh"></div>
<section lang="zh-CN"><div id="lang" data-gpu-playground="gpu" data-lang="fr"></div></section>
<div id="hide" data-gpu-playground="matmul" data-hide="title,tabs"></div>
<div id="ok" data-gpu-playground="gpu"></div>
<script src="${BASE_URL}embed.js" async></script>`,
  });
  const { context, page, errors } = await open('bad.html');
  await page.waitForSelector('#ok iframe', { state: 'attached' });
  const said = async (id) => page.$eval(`#${id}`, (d) => ({
    alert: d.querySelector('[role="alert"]')?.textContent ?? null,
    lang: d.querySelector('[role="alert"]')?.lang ?? null,
    frames: d.querySelectorAll('iframe').length,
    links: d.querySelectorAll('a').length,
  }));
  const unknown = await said('unknown');
  assert.equal(unknown.frames, 0);
  assert.equal(unknown.links, 1, 'the fallback link stays');
  assert.equal(unknown.lang, 'zh');
  assert.match(unknown.alert, /GPU 游乐场没有名为“nope”的组件。可用的组件：matmul, .*race/);
  const notWhole = await said('notwhole');
  assert.match(notWhole.alert, /data-n="abc" must be a whole number/);
  assert.equal(notWhole.frames, 0);
  const param = await said('param');
  assert.match(param.alert, /组件“race”没有 data-bogus-thing 这个设置。它接受：data-n, data-cpu/);
  const lang = await said('lang');
  assert.match(lang.alert, /data-lang="fr" 不是 GPU 游乐场支持的语言/, 'the div\'s language comes from around it');
  const hide = await said('hide');
  assert.match(hide.alert, /the widget "matmul" cannot hide tabs\. It can hide: title, notes/);
  assert.equal((await said('ok')).alert, null);
  await screenshot(page, 'embed-loader-bad-attributes');
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assertNoErrors(errors);
  await context.close();
});

test('the Embed button offers the one-line snippet, and pasted on another origin it works (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: SITE_ORIGIN });
    const page = await context.newPage();
    await goto(page, `#/race?lang=${lang}&n=192&instructor=1`);
    const share = page.locator('.embed-share[data-widget="race"]');
    await share.locator('.embed-toggle').click();
    const snippet = await share.locator('.embed-loader-snippet').inputValue();
    assert.match(snippet, new RegExp(`^<div data-gpu-playground="race" data-n="192" data-lang="${lang}" data-hide="heading,tabs"><a href="[^"]+#/embed/race\\?n=192&amp;lang=${lang}&amp;hide=heading%2Ctabs">GPU Playground(: |：)[^<]+</a></div>\\n<script src="${BASE_URL.replace(/[.]/g, '\\.')}embed\\.js" async></script>$`), snippet);
    await share.locator('.embed-copy-loader').click();
    await share.locator('[role="status"]').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet, 'Copy copies the one-line snippet');
    // The iframe snippet is still there beside it.
    assert.match(await share.locator('.embed-snippet').inputValue(), /^<iframe /);
    await share.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${process.env.TEST_OUTPUT ?? '/tmp'}/embed-loader-panel-${lang}.png` });
    await context.close();

    pages.set(`pasted-${lang}.html`, { lang, body: snippet });
    const opened = await open(`pasted-${lang}.html`);
    const frame = await widgetFrame(opened.page, null, 'race', lang);
    assert.equal(await frame.inputValue('#race-n'), '192');
    assertNoErrors(opened.errors);
    await opened.context.close();
  }
});

for (const lang of ['en', 'zh']) {
  test(`three widgets from the loader line alone on another origin at 390, 1280 and 1920 px (${lang})`, async () => {
    pages.set(`shots-${lang}.html`, {
      lang,
      body: `<div id="w1" data-gpu-playground="gpu" data-lang="${lang}"></div>
<div id="w2" data-gpu-playground="matmul" data-m="32" data-n="32" data-k="32" data-lang="${lang}"></div>
<div id="w3" data-gpu-playground="race" data-n="64" data-lang="${lang}"></div>
<script src="${BASE_URL}embed.js" async></script>`,
    });
    const { context, page, errors } = await open(`shots-${lang}.html`, { width: 390, height: 844 });
    const w1 = await widgetFrame(page, 'w1', 'gpu', lang);
    await page.locator('#w2').scrollIntoViewIfNeeded();
    const w2 = await widgetFrame(page, 'w2', 'matmul', lang);
    await page.locator('#w3').scrollIntoViewIfNeeded();
    const w3 = await widgetFrame(page, 'w3', 'race', lang);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
      await followsContent(page, 'w1', w1);
      await followsContent(page, 'w2', w2);
      await followsContent(page, 'w3', w3);
      const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(pageWidth <= width, `the course page is ${pageWidth} px wide at ${width}`);
      await screenshot(page, `embed-loader-${lang}-${width}`);
      // Chromium leaves a cross-origin frame far from the viewport unpainted in a full-page
      // shot (a blank box of the right height), so each widget is also shot scrolled into view.
      for (const id of ['w1', 'w2', 'w3']) {
        await page.locator(`#${id}`).scrollIntoViewIfNeeded();
        await page.locator(`#${id}`).screenshot({ path: `${process.env.TEST_OUTPUT ?? '/tmp'}/embed-loader-${lang}-${width}-${id}.png` });
      }
    }
    assertNoErrors(errors);
    await context.close();
  });
}
