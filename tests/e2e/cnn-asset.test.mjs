// The CNN page's digits asset (issue 24): one content-hashed file in the built site, named in
// boot.js, never part of the first load or the precache, kept by the service worker after its
// first fetch so that the page then works offline; a missing or damaged file is a message in
// the page, not a crash.
//
// The first tests need only the built site; the last ones open #/cnn, which loads the digits
// when it opens (`digits_asset::load()`) and shows an `AssetError` in words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile, readdir, writeFile, cp, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join, extname, normalize } from 'node:path';
import { launch, openPage, goto, waitForRoute, assertNoErrors, BASE_URL } from './helpers.mjs';


const SITE = process.env.SITE_DIR ?? fileURLToPath(new URL('../../target/e2e-site/', import.meta.url));
const NAME = /^cnn-digits\.[0-9a-f]{16}\.bin$/;
const isDigits = (url) => /\/cnn-digits\.[0-9a-f]{16}\.bin$/.test(new URL(url).pathname);
// The asset's layout (crates/cnn/src/data.rs): header, u8 pixels, u8 labels, FNV-1a checksum.
const HEADER = 20;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** The asset's file name in the built site (exactly one). */
async function digitsName() {
  const names = (await readdir(SITE)).filter((f) => f.startsWith('cnn-digits'));
  assert.equal(names.length, 1, `one digits file in the site: ${names.join(', ')}`);
  assert.match(names[0], NAME);
  return names[0];
}

/** 32-bit FNV-1a, the asset's checksum (`cnn::data::fnv1a`). */
function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h;
}

/** Checks bytes as the app's decoder does (magic, shape, length, checksum); the image count. */
function checkAsset(bytes) {
  assert.equal(Buffer.from(bytes.subarray(0, 4)).toString('latin1'), 'GPMD');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [version, count, rows, cols] = [4, 8, 12, 16].map((at) => view.getUint32(at, true));
  assert.deepEqual([version, rows, cols], [1, 28, 28]);
  assert.equal(bytes.length, HEADER + count * rows * cols + count + 4);
  assert.equal(view.getUint32(bytes.length - 4, true), fnv1a(bytes.subarray(0, bytes.length - 4)), 'checksum');
  return count;
}

test('the built site has the digits under a content-hashed name, named in boot.js and not precached', async () => {
  const name = await digitsName();
  assert.equal(checkAsset(new Uint8Array(await readFile(join(SITE, name)))), 10_000);
  const boot = (await readdir(SITE)).find((f) => /^boot\.[0-9a-f]{16}\.js$/.test(f));
  const bootText = await readFile(join(SITE, boot), 'utf8');
  // The digits first; the GPT page's text follows them (gpt-asset.test.mjs checks the rest).
  assert.match(bootText, new RegExp(`const ASSETS = \\{ 'cnn-digits': '${name.replaceAll('.', '\\.')}'(, '[^']*': '[^']*')* \\};`));
  assert.match(bootText, /app\.boot\(LOCALES, ASSETS\)/);
  const sw = await readFile(join(SITE, 'sw.js'), 'utf8');
  const list = (marker) => sw.match(new RegExp(`const ${marker} = \\[([^\\]]*)\\]`))?.[1] ?? assert.fail(`no ${marker} in sw.js`);
  assert.ok(!list('PRECACHE').includes('cnn-digits'), 'the digits are precached');
  assert.ok(list('PRECACHE').includes("'index.html'"), 'the precache list was read');
  assert.deepEqual(list('ON_USE').match(/'[^']*'/g).filter((f) => f.includes('cnn-digits')), [`'${name}'`], 'sw.js keeps the digits once fetched');
});

/**
 * Serves `root()` (SITE unless the test switches it: a new build deployed) on a port of this
 * test's own, so that the test can stop it (offline).
 */
async function serve(t, root = () => SITE) {
  const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.txt': 'text/plain' };
  const served = [];
  const server = http.createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    served.push(path);
    if (path.includes('..')) return res.writeHead(404).end();
    if (path.endsWith('/')) path += 'index.html';
    try {
      const body = await readFile(join(root(), path));
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const stop = () => {
    if (!server.listening) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  };
  t.after(stop);
  // `served`: the paths the server answered (what reached the network), in order.
  return { origin: `http://127.0.0.1:${server.address().port}`, stop, served };
}

// A page script fetches the digits, as digits_asset::load() does (relative to the page), and
// answers with their length and FNV-1a (7.5 MiB are not worth copying out of the page as JSON).
// (The loop is fnv1a's: the page's CSP allows no eval of a function passed in as text.)
const fetched = (page, name) => page.evaluate(async (n) => {
  const r = await fetch(n);
  const bytes = new Uint8Array(await r.arrayBuffer());
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return { status: r.status, length: bytes.length, fnv: h };
}, name);

/** What `fetched` answers for the built file. */
async function expectedFetch(name) {
  const file = await readFile(join(SITE, name));
  return { status: 200, length: file.length, fnv: fnv1a(file) };
}

/**
 * Whether a cache holds `url`, polled in the page for up to 30 s (the worker stores its copy
 * while the page reads the answer). Not waitForFunction: it takes the Promise an async check
 * returns for a yes.
 */
const kept = (page, url) => page.evaluate(async (u) => {
  for (const end = performance.now() + 30_000; performance.now() < end;) {
    if (await caches.match(u)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}, url);

test('the first load and the precache leave the digits alone; once fetched they are kept and work offline', async (t) => {
  const name = await digitsName();
  // What reached the server: the page's requests and the service worker's (its precache).
  const { origin, stop, served } = await serve(t);
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  await page.goto(`${origin}/#/?lang=en`);
  await waitForRoute(page, '/', { lang: 'en' });
  // The service worker has installed (its whole precache fetched) and controls the page.
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000, polling: 100 });
  assert.ok(served.some((p) => /^\/pkg\/gpu_playground_embed_bg\.[0-9a-f]{16}\.wasm$/.test(p)), `the precache was fetched: ${served}`);
  assert.deepEqual(served.filter((p) => p.includes('cnn-digits')), [], 'the first load or the precache fetched the digits');
  const url = `${origin}/${name}`;
  const cached = () => page.evaluate((u) => caches.match(u).then((r) => !!r), url);
  assert.equal(await cached(), false, 'the digits are in a cache before any page asked');

  // A page script fetches them, as the CNN page does.
  const expected = await expectedFetch(name);
  assert.deepEqual(await fetched(page, name), expected);
  assert.deepEqual(served.filter((p) => p.includes('cnn-digits')), [`/${name}`], 'the fetch went out, once');
  assert.ok(await kept(page, url), 'the service worker did not keep the digits');

  // Offline: the server is gone, the page reloads from the worker's cache and the digits come
  // from there too.
  await stop();
  await assert.rejects(fetch(`${origin}/index.html`), 'the server is really stopped');
  await page.reload();
  await waitForRoute(page, '/', { lang: 'en' });
  assert.deepEqual(await fetched(page, name), expected);
  assertNoErrors(errors);
});

test('a first visit straight to #/cnn keeps the digits for offline use, though they came before the worker', async (t) => {
  const name = await digitsName();
  const { origin, stop, served } = await serve(t);
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  await page.goto(`${origin}/#/cnn?lang=en`);
  await page.waitForSelector('#cnn-data[data-images="10000"]', { timeout: 60_000 });
  assert.equal(served.filter((p) => p.includes('cnn-digits')).length, 1, 'downloaded once');
  assert.ok(await kept(page, `${origin}/${name}`), 'the first visit\'s digits were not kept');
  assert.equal(served.filter((p) => p.includes('cnn-digits')).length, 1, 'kept without a second download');
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000, polling: 100 });
  await stop();
  await page.reload();
  await page.waitForSelector('#cnn-data[data-images="10000"]', { timeout: 60_000 });
  assertNoErrors(errors);
});

test('a new version of the site keeps the digits its predecessor had kept, while their name is the same', async (t) => {
  const name = await digitsName();
  // Build B: this site with another version (a new service worker; the digits unchanged).
  const buildB = await mkdtemp(join(tmpdir(), 'gp-digits-b-'));
  t.after(() => rm(buildB, { recursive: true, force: true }));
  await cp(SITE, buildB, { recursive: true });
  const swText = await readFile(join(SITE, 'sw.js'), 'utf8');
  const versionA = swText.match(/const VERSION = '([0-9a-f]{16})'/)?.[1] ?? assert.fail('no version in sw.js');
  const versionB = versionA === 'b'.repeat(16) ? 'c'.repeat(16) : 'b'.repeat(16);
  await writeFile(join(buildB, 'sw.js'), swText.replace(versionA, versionB));
  let root = SITE;
  const { origin, stop, served } = await serve(t, () => root);
  const downloads = () => served.filter((p) => p === `/${name}`).length;
  const context = await browser.newContext();
  t.after(() => context.close());
  const url = `${origin}/${name}`;
  const swVersion = (page) => page.evaluate(() => new Promise((resolve) => {
    navigator.serviceWorker.addEventListener('message', (e) => resolve(e.data.swVersion), { once: true });
    navigator.serviceWorker.controller.postMessage('version');
  }));

  // Visit 1, build A: the digits fetched once and kept in A's cache.
  let page = await context.newPage();
  await page.goto(`${origin}/#/?lang=en`);
  await waitForRoute(page, '/', { lang: 'en' });
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000, polling: 100 });
  const expected = await expectedFetch(name);
  assert.deepEqual(await fetched(page, name), expected);
  assert.ok(await kept(page, url), 'A kept the digits');
  assert.equal(downloads(), 1);

  // Build B is deployed. The browser looks for a new worker on its own schedule (Chromium
  // defers the check after a navigation); the page asks now, as a later visit would. B installs
  // beside A and takes over once no page of A is open (a reload of the only tab is not enough:
  // the old page is still there when the new one is requested), so the page closes and another
  // opens.
  root = buildB;
  const waiting = await page.evaluate(async () => {
    const r = await navigator.serviceWorker.getRegistration();
    await r.update();
    for (const end = performance.now() + 60_000; performance.now() < end;) {
      if (r.waiting && !r.installing) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  });
  assert.ok(waiting, "build B's worker installed");
  for (let i = 0; i < 5 && (i === 0 || (await swVersion(page)) !== versionB); i++) {
    await page.close();
    page = await context.newPage();
    await page.goto(`${origin}/#/?lang=en`);
    await waitForRoute(page, '/', { lang: 'en' });
    await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 60_000, polling: 100 });
  }
  assert.equal(await swVersion(page), versionB, "build B's service worker controls the page");
  assert.deepEqual(await page.evaluate(() => caches.keys()), [`gpu-playground-${versionB}`], "only B's cache is left");
  assert.ok(await kept(page, url), "B's cache holds the digits A had kept");

  // Offline: the digits come from B's cache, never downloaded a second time.
  await stop();
  await page.reload();
  await waitForRoute(page, '/', { lang: 'en' });
  assert.deepEqual(await fetched(page, name), expected);
  assert.equal(downloads(), 1, 'the digits were downloaded once');
});

/** Opens the landing page without the service worker (so page.route sees every request). */
async function landing(route) {
  const opened = await openPage(browser, '#/?lang=en', { serviceWorkers: 'block' });
  if (route) await opened.page.route(/\/cnn-digits\.[0-9a-f]{16}\.bin$/, route);
  assert.deepEqual(opened.requests.filter(isDigits), [], 'the landing page fetched the digits');
  return opened;
}

/** Waits until the page's main text matches `re`. */
async function says(page, re) {
  await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('main')?.textContent ?? ''), re.source, { timeout: 60_000, polling: 100 });
}

test('#/cnn fetches the digits once per page session, not again on a second visit', async () => {
  const { page, context, errors, requests } = await landing();
  const answered = page.waitForResponse((r) => isDigits(r.url()), { timeout: 60_000 });
  await goto(page, '#/cnn?lang=en');
  const response = await answered;
  assert.equal(response.status(), 200);
  assert.equal(new URL(response.url()).href, new URL(await digitsName(), BASE_URL).href);
  await response.finished();
  await goto(page, '#/?lang=en');
  await goto(page, '#/cnn?lang=en');
  await goto(page, '#/cnn?lang=zh');
  assert.equal(requests.filter(isDigits).length, 1, requests.filter(isDigits).join(', '));
  assert.doesNotMatch(await page.textContent('main'), /手写数字下载失败|已损坏/);
  assertNoErrors(errors);
  await context.close();
});

test('#/cnn drops a damaged copy that the service worker kept, so that a reload downloads the digits again', async (t) => {
  const name = await digitsName();
  // The host sends damaged digits (one byte flipped: the right length, the wrong checksum).
  const damaged = await mkdtemp(join(tmpdir(), 'gp-digits-damaged-'));
  t.after(() => rm(damaged, { recursive: true, force: true }));
  await cp(SITE, damaged, { recursive: true });
  const bytes = await readFile(join(SITE, name));
  bytes[HEADER + 400] ^= 0xff;
  await writeFile(join(damaged, name), bytes);
  let root = damaged;
  const { origin, served } = await serve(t, () => root);
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  await page.goto(`${origin}/#/?lang=en`);
  await waitForRoute(page, '/', { lang: 'en' });
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000, polling: 100 });
  await page.goto(`${origin}/#/cnn?lang=en`);
  await says(page, /damaged \(checksum [0-9a-f]{8} ≠ [0-9a-f]{8}\)/);
  const url = `${origin}/${name}`;
  assert.equal(await page.evaluate((u) => caches.match(u).then((r) => !!r), url), false, 'the damaged copy is still cached');

  // The host is fixed; the reload the message asks for downloads the digits again.
  root = SITE;
  await page.reload();
  await waitForRoute(page, '/cnn', { lang: 'en' });
  assert.ok(await kept(page, url), 'the good digits are kept');
  assert.deepEqual(await fetched(page, name), await expectedFetch(name));
  assert.doesNotMatch(await page.textContent('main'), /damaged/);
  assert.equal(served.filter((p) => p === `/${name}`).length, 2);
  assertNoErrors(errors);
});

for (const { what, route, lang, message } of [
  { what: 'a missing file (404)', route: (r) => r.fulfill({ status: 404, body: 'not found' }), lang: 'en', message: /server answered with status 404/ },
  { what: 'an HTML page instead of the digits', route: (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>x</title>' }), lang: 'zh', message: /手写数字已损坏（magic 3c21646f）/ },
  { what: 'a truncated download', route: async (r) => { const real = await r.fetch(); r.fulfill({ response: real, body: (await real.body()).subarray(0, 1000) }); }, lang: 'en', message: /damaged \(1000 B ≠ 7850024 B\)/ },
  { what: 'a failed connection', route: (r) => r.abort('connectionreset'), lang: 'en', message: /could not be downloaded \(the browser said: .+\)\. Check the connection/ },
]) {
  test(`#/cnn says so in words for ${what}, and nothing crashes`, async () => {
    const { page, context, errors } = await landing(route);
    await goto(page, `#/cnn?lang=${lang}`);
    await says(page, message);
    assert.doesNotMatch(await page.textContent('main'), /JsValue|panicked|TypeError|\{detail\}|\{status\}/);
    // Nothing to train on: Train and Step wait, and no "preparing the GPU" beside the error.
    assert.ok(await page.isDisabled('#cnn-play'), 'Train is disabled without the digits');
    assert.ok(await page.isDisabled('#cnn-step'), 'Step is disabled without the digits');
    assert.equal(await page.locator('#cnn-gpu[data-state="starting"]').count(), 0);
    // The browser's own line about the failed request is expected; nothing else.
    assertNoErrors(errors.filter((e) => !/Failed to load resource|net::ERR/.test(e)));
    await context.close();
  });
}
