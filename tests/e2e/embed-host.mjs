// The course page of ANOTHER origin (a second server on another port) that embed.test.mjs and
// embed-results.test.mjs embed widgets in: the browser and host server each file starts, the
// host page, and the helpers both files' tests use. Not a test file (node runs *.test.mjs).
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  BASE_URL, launch, screenshot, assertNoErrors, goto, waitForRoute, navigatedBy, startHost, HTML,
} from './helpers.mjs';

export const SITE_ORIGIN = new URL(BASE_URL).origin;
export let browser;
export let host;
export let hostOrigin;

/** Every frame records CSP violations (an embed must run under the strict policy). */
export const RECORD_VIOLATIONS = () => {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
  });
};

/** The course page: one iframe, a message log, and a function to send requests. */
export function hostPage(src, width) {
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
  host = await startHost((url) => (url.pathname === '/host.html'
    ? { type: HTML, body: hostPage(url.searchParams.get('src'), Number(url.searchParams.get('w') ?? 360)) }
    : null));
  hostOrigin = host.origin;
});
after(async () => {
  await browser?.close();
  await host?.close();
});

/** The route and language of an embed path (`matmul?lang=zh&m=64` → `/embed/matmul`, `zh`). */
export function embedRoute(widgetPath) {
  const [id, query = ''] = widgetPath.split('?');
  return { path: `/embed/${id}`, lang: new URLSearchParams(query).get('lang') };
}

/**
 * The frame an iframe element holds once it shows a page of the site (not `about:blank`),
 * with that page's ready signal when `route` is given.
 */
export async function siteFrame(page, selector, route) {
  const frame = await (await page.waitForSelector(selector, { state: 'attached' })).contentFrame();
  assert.ok(frame, `${selector} holds a frame`);
  await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 30_000 });
  if (route) await waitForRoute(frame, route.path, { lang: route.lang });
  return frame;
}

/** Opens the host page embedding `widgetPath` (e.g. `matmul?m=64`) with the given parent origin. */
export async function openHost(widgetPath, { parentOrigin = hostOrigin, width = 360, viewport, colorScheme = 'light' } = {}) {
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
  // The embed's page, rendered with its text in the language asked for.
  const frame = await siteFrame(page, '#w', embedRoute(widgetPath));
  return { page, context, errors, requests, frame };
}

/**
 * The embed's count of messages it received (`data-messages`) and of those it ignored
 * (`data-ignored`: from an origin or window it does not talk to).
 */
export async function waitIgnored(frame, n) {
  await frame.waitForSelector(`.embed-root[data-ignored="${n}"]`, { state: 'attached', timeout: 30_000 });
  return frame.$eval('.embed-root', (r) => [Number(r.dataset.messages), Number(r.dataset.ignored)]);
}

/** Waits for a message from the embed matching `pred` (received after index `from`). */
export async function waitMessage(page, pred, { from = 0, timeout = 120_000 } = {}) {
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

export async function violations(frame) {
  return frame.evaluate(() => window.__csp);
}

export function assertOwnOrigins(requests) {
  const foreign = requests.filter((u) => !u.startsWith(SITE_ORIGIN + '/')
    && !u.startsWith(hostOrigin + '/') && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], `requests to other origins: ${foreign.join(', ')}`);
}

export const API = 'gpu-playground';


/** hide=prose hides a lesson's paragraphs and leaves its widget. */
export async function checkLessonProseHidden(page) {
  const prose = await page.$$eval('.lesson > p:not(.lesson-number)', (ps) => ps.map((p) => p.offsetParent === null));
  assert.ok(prose.length > 0 && prose.every(Boolean), `lesson paragraphs hidden: ${prose}`);
  const controls = await page.$$eval('.lesson :is(input, select, button)', (cs) => cs.filter((c) => c.offsetParent !== null).length);
  assert.ok(controls > 0, 'the lesson widget stays visible');
}

// ---------------------------------------------------------------- run-finished of every widget

/** Opens `widgetPath` in the course page, waits for `ready`, sends `run` and returns the
 * `run-finished` it gets (after `prepare`, e.g. setParams, has run). */
export async function runFromHost(widgetPath, { prepare, timeout = 240_000, width = 900 } = {}) {
  const opened = await openHost(widgetPath, { width, viewport: { width: width + 40, height: 900 } });
  const { page } = opened;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  if (prepare) await prepare(opened);
  // The widget's run button must be enabled (WebGPU probed, settings valid).
  const from = await page.evaluate(() => window.received.length);
  const id = `run-${Math.random().toString(36).slice(2, 8)}`;
  await page.evaluate(([api, id]) => window.send({ api, type: 'run', id }), [API, id]);
  const started = await waitMessage(page, (d) => d && (d.type === 'run-started' || d.type === 'error'), { from });
  assert.equal(started.data.type, 'run-started', JSON.stringify(started.data));
  const done = await waitMessage(page, (d) => d && (d.type === 'run-finished' || (d.type === 'error' && d.code === 'run-failed')), { from, timeout });
  assert.equal(done.data.type, 'run-finished', JSON.stringify(done.data));
  assert.equal(done.data.id, id, 'the reply echoes the request id');
  return { ...opened, results: done.data.results, id, from };
}

/** Closes a host page after checking that nothing went wrong in it. */
export async function finish({ context, errors, frame, requests }) {
  assert.deepEqual(await violations(frame), []);
  assertNoErrors(errors);
  assertOwnOrigins(requests);
  await context.close();
}

export const near = (a, b, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-300);
