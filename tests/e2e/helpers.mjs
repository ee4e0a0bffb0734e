// Shared helpers for the end-to-end tests: a headless Chromium with WebGPU (SwiftShader),
// a page that records console errors and requests, and screenshots into TEST_OUTPUT.
import { chromium } from 'playwright-core';
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';

export const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8080/';
const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname); // the repo's /test-output, whatever the cwd
mkdirSync(OUT, { recursive: true });

const COMMON_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** Launches Chromium; `webgpu: false` leaves WebGPU off (no adapter is offered). */
export async function launch({ webgpu = true } = {}) {
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  const args = webgpu ? [...COMMON_ARGS, '--enable-unsafe-webgpu'] : COMMON_ARGS;
  return chromium.launch({ executablePath, headless: true, args });
}

/**
 * Opens a page that records console errors, page errors and every request URL. `serviceWorkers:
 * 'block'` keeps the site's worker out, for a test that fails requests with `page.route`
 * (a request the worker answers from its cache never reaches the route). `touch`: a phone's
 * touch screen (taps, a mobile viewport).
 */
export async function openPage(browser, hashPath = '#/', { initScript, viewport, serviceWorkers, ready = true, touch = false } = {}) {
  const context = await browser.newContext({
    viewport: viewport ?? { width: 1280, height: 900 },
    ...(serviceWorkers ? { serviceWorkers } : {}),
    ...(touch ? { hasTouch: true, isMobile: true } : {}),
  });
  const page = await context.newPage();
  if (initScript) await page.addInitScript(initScript);
  const errors = [];
  const requests = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('request', (req) => requests.push(req.url()));
  if (ready) await goto(page, hashPath);
  else await page.goto(new URL(hashPath, BASE_URL).href);
  return { page, context, errors, requests };
}

/** Splits `#/learn/vram?lang=zh` (or a whole URL) into the route path and the language asked for. */
function routeOf(hashPath) {
  const hash = hashPath.includes('#') ? hashPath.slice(hashPath.indexOf('#') + 1) : hashPath;
  const [path, query = ''] = hash.split('?');
  return { path: path || '/', lang: new URLSearchParams(query).get('lang') };
}

/** The visit number of the page shown now (`data-route-ready="<route> <lang> <n>"`), or 0. */
async function visitNow(page) {
  return page.evaluate(() => {
    const v = document.querySelector('main')?.dataset.routeReady;
    return v ? Number(v.split(' ')[2]) : 0;
  }).catch(() => 0);
}

/**
 * Waits until the shell says `path` is shown with its text in `lang` (any language when null)
 * and its first render done, on a visit after `after`: the page a test reads is never the
 * previous route's, nor the same route's before this navigation.
 */
export async function waitForRoute(page, path, { lang = null, after = 0, timeout = 60_000 } = {}) {
  await page.waitForFunction(([path, lang, after]) => {
    const v = document.querySelector('main')?.dataset.routeReady;
    if (!v) return false;
    const [p, l, n] = v.split(' ');
    return p === path && (!lang || l === lang) && Number(n) > after;
  }, [path, lang, after], { timeout, polling: 100 });
}

/**
 * Navigates to `hashPath` (`#/route?query`) and waits for that route's ready signal. A hash
 * change keeps the document, so the visit must be a later one than the page shown before; a
 * load starts a new document, whose visits count from 1.
 */
export async function goto(page, hashPath, { timeout = 60_000 } = {}) {
  const url = new URL(hashPath, BASE_URL).href;
  const sameDocument = page.url().split('#')[0] === url.split('#')[0];
  const after = sameDocument ? await visitNow(page) : 0;
  await page.goto(url);
  const { path, lang } = routeOf(hashPath);
  await waitForRoute(page, path, { lang, after, timeout });
}

/**
 * Runs `action` (a click on a link or a language switch) and waits until the route it leads
 * to is shown in `lang`: the ready signal of a later visit than the one before the action.
 */
export async function navigatedBy(page, action, { path, lang = null, timeout = 60_000 } = {}) {
  const after = await visitNow(page);
  const shown = path ?? routeOf(page.url()).path; // by default the route stays, as on a language switch
  await action();
  await waitForRoute(page, shown, { lang, after, timeout });
}

/** Clicks the header's language switch and waits for the page in that language's text. */
export async function switchLang(page, lang) {
  await navigatedBy(page, () => page.click(`button.lang[data-lang="${lang}"]`), { lang });
}

/** Waits until the "Your GPU" panel has an answer (available or not). */
export async function waitForProbe(page) {
  await page.waitForSelector('[data-webgpu]', { timeout: 30_000 });
  return page.getAttribute('[data-webgpu]', 'data-webgpu');
}

/**
 * After Pause on #/train: not running, the steps already sent finished, and the picture and
 * loss shown are the GPU's evaluation at its last step (a redraw need not come: the last one
 * may have arrived before Pause).
 */
export async function trainingSettled(page, { timeout = 60_000 } = {}) {
  await page.waitForFunction(() => {
    const d = document.querySelector('#train-status')?.dataset;
    return d?.running === 'false' && d.gpuInFlight === '0' && d.gpuEvalStep !== '' && d.gpuEvalStep === d.gpuSteps;
  }, null, { timeout });
}

/**
 * Sets the window to `width` × `height` and lets the page redraw for it (two animation
 * frames: the resize event, then what the page drew in answer), for a check at another width
 * on the page already loaded rather than a fresh load at that width.
 */
export async function resizeTo(page, width, height = 900) {
  await page.setViewportSize({ width, height });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

export async function screenshot(page, name) {
  const path = join(OUT, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export function assertNoErrors(errors) {
  assert.deepEqual(errors, [], `the page logged errors:\n${errors.join('\n')}`);
}

/** Every request went to the page's own origin (or was inline data). */
export function assertSameOrigin(requests) {
  const origin = new URL(BASE_URL).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], `requests to other origins: ${foreign.join(', ')}`);
  assert.ok(requests.length > 0, 'no requests were recorded');
}

/** Clicks the Run widget's button and waits for this run's result (not the previous one's). */
export async function runAndWait(page) {
  const before = Number(await page.getAttribute('.result', 'data-runs'));
  await page.click('#run-button');
  await page.waitForFunction(
    (n) => Number(document.querySelector('.result')?.dataset.runs) > n, before, { timeout: 120_000 },
  );
}

/** Types an M×N×K size into the Run widget, runs it, and checks the result is verified. */
export async function runVerified(page, [m, n, k]) {
  await page.fill('#dim-m', String(m));
  await page.fill('#dim-n', String(n));
  await page.fill('#dim-k', String(k));
  await runAndWait(page);
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
}

/** The editor's whole text (CodeMirror draws only the lines in view). */
export const docText = (page) => page.$eval('.cm-host', (h) => h.editorText());

/** Waits until the in-page code editor is mounted (and, with `runnable`, its Run button is enabled). */
export async function editorReady(page, { runnable = false } = {}) {
  await page.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  if (runnable) {
    await page.waitForSelector('.editor-actions .button.primary:not([disabled])', { timeout: 60_000 });
  }
}

/**
 * Replaces the editor's whole text as a user would: select all, delete, type. Delete first:
 * typing over a selection of highlighted text makes Chromium keep the highlight's colour as a
 * style attribute, which the strict CSP blocks (and logs). Then waits until naga has checked
 * exactly this text and told the page (the editor's `checkedText`), so Run sees its verdict.
 */
export async function setDoc(page, text) {
  await page.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await page.waitForFunction((t) => {
    const host = document.querySelector('.cm-host');
    return host?.editorText?.() === t && host.checkedText?.() === t;
  }, text, { timeout: 30_000 });
}

/**
 * Waits until naga has checked the editor's current text and told the page (its verdict is
 * what Run acts on): after a Reset, Use solution or reload, where the test did not type.
 * `includes`: and the text contains this (the replacement has landed).
 */
export async function editorChecked(page, { includes = '' } = {}) {
  await page.waitForFunction((inc) => {
    const host = document.querySelector('.cm-host');
    const text = host?.editorText?.();
    return typeof text === 'string' && text.includes(inc) && host.checkedText?.() === text;
  }, includes, { timeout: 30_000 });
}

/**
 * Clicks the editor's (or a puzzle's) Run and waits for this run's answer: the result's
 * `data-runs` counts answered runs, so the previous run's verdict never satisfies the wait.
 */
export async function runEditor(page, { timeout = 120_000 } = {}) {
  const before = Number(await page.getAttribute('.editor-result', 'data-runs'));
  await page.click('.editor-actions .button.primary');
  await page.waitForFunction(
    (n) => Number(document.querySelector('.editor-result')?.dataset.runs) > n, before, { timeout },
  );
}

/**
 * Shows `hashPath` and waits for its ready signal, like `goto`, except when the page already
 * shows exactly that URL (a loop whose first route is the one the page was opened on, or the
 * same page at another width): navigating to the URL a page is on is no navigation, so no new
 * visit would come; then it only waits for that route's ready signal in the language asked for.
 */
export async function show(page, hashPath, { timeout = 60_000 } = {}) {
  if (page.url() !== new URL(hashPath, BASE_URL).href) return goto(page, hashPath, { timeout });
  const { path, lang } = routeOf(hashPath);
  await waitForRoute(page, path, { lang, timeout });
}

/** The naive matmul stage's kernel (`original`) with its k loop made endless and calling a
 * helper whose loop calls another helper's loop, neither of which ends in practice: three
 * levels of loops, two of them in helpers. `barrier` adds a `workgroupBarrier()` at the top
 * of main (uniform there). */
export function spinInHelpers(original, { barrier = false } = {}) {
  const src = original.replace('for (var p = 0u; p < dims.k; p = p + 1u) {',
    'for (var p = 0u; p < 0xffffffffu; p = p + 1u) {\n        if (acc < -1e30) { break; }').replace(
    'acc = acc + a[row * dims.k + p] * b[p * dims.n + col];',
    'acc = acc + spin(a[row * dims.k + p % dims.k] * b[(p % dims.k) * dims.n + col] * 1e-9);').replace(
    '@compute @workgroup_size(16, 16, 1)', `${SPIN}@compute @workgroup_size(16, 16, 1)`).replace(
    'fn main(@builtin(global_invocation_id) gid: vec3<u32>) {',
    `fn main(@builtin(global_invocation_id) gid: vec3<u32>) {${barrier ? '\n    workgroupBarrier();' : ''}`);
  assert.ok(src.includes('0xffffffffu;') && src.includes('spin(a[') && src.includes('fn spin_inner')
    && src.includes('workgroupBarrier();') === barrier, 'every edit of the naive kernel applied');
  return src;
}

const SPIN = `fn spin_inner(x: f32) -> f32 {
    var y = x;
    for (var i = 0u; i < 0xffffffffu; i = i + 1u) {
        if (y < -1e30) { break; }
        y = y * 0.5 + x;
    }
    return y;
}

fn spin(x: f32) -> f32 {
    var y = x;
    for (var i = 0u; i < 0xffffffffu; i = i + 1u) {
        if (y < -1e30) { break; }
        y = spin_inner(y) * 1e-9;
    }
    return y;
}

`;

// The `numbers` crate's rule, for tests that check a value the page writes: three significant
// digits (rounded first), whole numbers from 1,000 up (`numbers::ms` and `numbers::number`,
// without and with separators).
export function sig3(x, { separators = false } = {}) {
  if (!Number.isFinite(x)) return '–';
  if (x === 0) return '0';
  if (Math.abs(x) >= 999.5) {
    const whole = Math.round(x);
    return separators ? whole.toLocaleString('en-US') : String(whole);
  }
  return Number(x).toPrecision(3);
}

/** The content type of the course pages the tests serve. */
export const HTML = 'text/html; charset=utf-8';

/**
 * Serves an instructor's course page from a second origin (its own port on 127.0.0.1, never
 * the site's): `route(url)` answers with `{ type, body, headers }` or null (404; a favicon
 * gets 204). Returns `{ origin, close }`.
 */
export async function startHost(route) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const answer = route(url);
    if (!answer) {
      res.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    res.writeHead(200, { 'content-type': answer.type, ...answer.headers }).end(answer.body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  assert.notEqual(origin, new URL(BASE_URL).origin, 'the course page is on another origin');
  return { origin, close: () => new Promise((r) => server.close(r)) };
}
