// Offline and updates: after one visit the site reloads and works with its server stopped
// (service worker, versioned precache); a new version is announced on the next visit; the
// built site uses content-hashed file names. Served by a server of this test's own (on its
// own port), so it can be stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile, readdir, writeFile, rename, cp, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join, extname, normalize } from 'node:path';
import { launch, waitForRoute, navigatedBy, screenshot, assertNoErrors } from './helpers.mjs';

const SITE = process.env.SITE_DIR ?? fileURLToPath(new URL('../../target/e2e-site/', import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png',
  '.webmanifest': 'application/manifest+json', '.txt': 'text/plain',
};
let browser;

/** Stops `server` (once): open connections are cut, so the browser sees it gone at once. */
function stop(server) {
  if (!server.listening) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
}

/**
 * Serves `root()` (a function, so a test can switch the site under a running server) for test
 * context `t`, which stops it when the test ends, passed or failed: a server left listening
 * keeps this file's process alive, and the whole suite would wait for it.
 */
async function serve(t, root = () => SITE) {
  const server = await listen(root);
  t.after(() => stop(server));
  return server;
}

function listen(root) {
  const server = http.createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
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
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the built site loads its wasm and JS under content-hashed names only', async () => {
  const pkg = await readdir(join(SITE, 'pkg'));
  assert.ok(pkg.some((f) => /^gpu_playground_bg\.[0-9a-f]{16}\.wasm$/.test(f)), pkg.join(', '));
  assert.ok(pkg.some((f) => /^gpu_playground\.[0-9a-f]{16}\.js$/.test(f)), pkg.join(', '));
  assert.ok(pkg.some((f) => /^gpu_playground_embed_bg\.[0-9a-f]{16}\.wasm$/.test(f)), pkg.join(', '));
  assert.ok(pkg.some((f) => /^gpu_playground_embed\.[0-9a-f]{16}\.js$/.test(f)), pkg.join(', '));
  for (const plain of ['gpu_playground.js', 'gpu_playground_bg.wasm', 'gpu_playground_embed.js', 'gpu_playground_embed_bg.wasm']) {
    assert.ok(!pkg.includes(plain), `${plain} has no content hash`);
  }
  const index = await readFile(join(SITE, 'index.html'), 'utf8');
  assert.match(index, /src="\.\/boot\.[0-9a-f]{16}\.js"/);
  assert.doesNotMatch(index, /<script(?![^>]*src=)[^>]*>/, 'no inline script');
});

test('after one visit the site reloads and runs with its server stopped; updates are announced', async (t) => {
  const server = await serve(t);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  // The visitor's previous visit ran an older build.
  await page.addInitScript(() => {
    if (!sessionStorage.getItem('seeded')) {
      localStorage.setItem('gpu-playground.version', '0000000000000000');
      sessionStorage.setItem('seeded', '1');
    }
  });
  await page.goto(`${origin}/#/kernels?lang=en&m=32&n=32&k=32`);
  await waitForRoute(page, '/kernels', { lang: 'en' });
  const notice = await page.waitForSelector('p.notice[data-update="installed"]', { timeout: 60_000 });
  assert.match(await notice.textContent(), /updated since your last visit/);
  await page.waitForFunction(() => document.querySelector('#run-button')?.disabled === false, null, { timeout: 60_000 });
  // The service worker took control and finished precaching.
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000 });

  await stop(server);
  await assert.rejects(fetch(`${origin}/index.html`), 'the server is really stopped');

  await page.reload();
  await waitForRoute(page, '/kernels', { lang: 'en' });
  await page.waitForFunction(() => document.querySelector('#run-button')?.disabled === false, null, { timeout: 60_000 });
  assert.equal(await page.$('p.notice[data-update]'), null, 'the same version is not announced twice');
  const before = Number(await page.getAttribute('.result', 'data-runs'));
  await page.click('#run-button');
  await page.waitForFunction((n) => Number(document.querySelector('.result')?.dataset.runs) > n, before, { timeout: 120_000 });
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
  // Other pages of the app come from the cache too.
  await navigatedBy(page, () => page.goto(`${origin}/#/race?lang=zh`), { path: '/race', lang: 'zh' });
  assert.match(await page.textContent('main h1'), /赛跑/);
  await screenshot(page, 'offline-race-zh');
  // The editor is fetched only by the pages that use it, so it is not cached yet: offline,
  // a puzzle says so in words (it once showed "JsValue(TypeError: Failed to fetch
  // dynamically imported module…)"). The browser's own report of the failed fetch is expected.
  // Only reports of the editor's own files failing are expected: a console message whose
  // source is, or whose text names, a file under /editor/. Anything else (an error that merely
  // mentions "editor", another file that failed) is still an error.
  // Counted per text: "Failed to load resource: net::ERR_FAILED" reads the same for every
  // file, so each excuses one occurrence only.
  const editorMessages = new Map();
  const excuse = (e) => editorMessages.set(e, (editorMessages.get(e) ?? 0) + 1);
  const fromEditor = (s) => /\/editor\//.test(s ?? '');
  page.on('console', (msg) => {
    if (msg.type() === 'error' && (fromEditor(msg.location()?.url) || fromEditor(msg.text()))) {
      excuse(`console.error: ${msg.text()}`);
    }
  });
  page.on('pageerror', (err) => { if (fromEditor(err.message)) excuse(`pageerror: ${err.message}`); });
  const notEditors = (list) => list.filter((e) => {
    const n = editorMessages.get(e) ?? 0;
    if (n === 0) return true;
    editorMessages.set(e, n - 1);
    return false;
  });
  const seen = errors.length;
  await navigatedBy(page, () => page.goto(`${origin}/#/puzzles/map?lang=zh`), { path: '/puzzles/map', lang: 'zh' });
  const unreachable = await page.waitForSelector('.code-editor .message.error', { timeout: 60_000 });
  const said = await unreachable.textContent();
  assert.match(said, /编辑器尚未下载/);
  assert.doesNotMatch(said, /TypeError|JsValue|Failed to fetch/);
  await screenshot(page, 'offline-editor-zh');
  errors.splice(seen, errors.length - seen, ...notEditors(errors.slice(seen)));
  // The example course page is a document of its own, not the app: offline it comes back as
  // itself with its stylesheet and script (it once came back as index.html, whose relative
  // paths then failed under /examples/), and the app's own page is still the app afterwards.
  const failed = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  const seenCourse = errors.length;
  await page.goto(`${origin}/examples/course.html`);
  await page.waitForSelector('h1');
  assert.match(await page.title(), /example course page/);
  assert.match(await page.textContent('h1'), /Week 3/);
  assert.ok(await page.evaluate(() => [...document.styleSheets].some((s) => s.href?.endsWith('/examples/course.css') && s.cssRules.length > 0)),
    'course.css came from the cache');
  // The course page embeds a puzzle, whose editor (as above) is not cached before an editor
  // has been opened once: only the editor's own files may fail, and the puzzle says so in words.
  const puzzle = page.frames().find((f) => f.url().includes('/embed/puzzle'));
  assert.ok(puzzle, 'the course page embeds a puzzle');
  const inFrame = await (await puzzle.waitForSelector('.code-editor .message.error', { timeout: 60_000 })).textContent();
  assert.doesNotMatch(inFrame, /TypeError|JsValue|Failed to fetch/);
  assert.deepEqual(failed.filter((u) => !new URL(u).pathname.includes('/editor/')), [], 'nothing the course page asked for failed offline');
  errors.splice(seenCourse, errors.length - seenCourse, ...notEditors(errors.slice(seenCourse)));
  await page.goto(`${origin}/#/kernels?lang=en`);
  await waitForRoute(page, '/kernels', { lang: 'en' });
  assertNoErrors(errors);
  await context.close();
});

/** The built site's hashed names and version: the whole app's module and the embed module. */
async function hashes(dir) {
  const pkg = await readdir(join(dir, 'pkg'));
  const top = await readdir(dir);
  const find = (re) => pkg.find((f) => re.test(f));
  const wasm = find(/^gpu_playground_bg\.[0-9a-f]{16}\.wasm$/);
  const glue = find(/^gpu_playground\.[0-9a-f]{16}\.js$/);
  const embedWasm = find(/^gpu_playground_embed_bg\.[0-9a-f]{16}\.wasm$/);
  const embedGlue = find(/^gpu_playground_embed\.[0-9a-f]{16}\.js$/);
  const boot = top.find((f) => /^boot\.[0-9a-f]{16}\.js$/.test(f));
  const version = (await readFile(join(dir, 'sw.js'), 'utf8')).match(/const VERSION = '([0-9a-f]{16})'/)?.[1];
  assert.ok(wasm && glue && embedWasm && embedGlue && boot && version, `hashed names in ${dir}`);
  // Every module file of this build, for "nothing of build A" checks.
  const modules = [wasm, glue, embedWasm, embedGlue];
  return { wasm, glue, embedWasm, embedGlue, boot, version, modules };
}

/**
 * "Build B": the same site as a new release would look to a browser — every content hash and
 * the version replaced by new ones (files renamed, every reference rewritten), and the wasm's
 * bytes changed (a custom section appended, which changes nothing it does).
 */
async function makeBuildB() {
  const dir = await mkdtemp(join(tmpdir(), 'gp-build-b-'));
  await cp(SITE, dir, { recursive: true });
  const a = await hashes(dir);
  const swap = new Map();
  for (const name of [...a.modules, a.boot]) {
    const h = name.match(/[0-9a-f]{16}/)[0];
    swap.set(h, [...h].reverse().join('') === h ? h.replace(/^./, (c) => (c === 'f' ? '0' : 'f')) : [...h].reverse().join(''));
  }
  swap.set(a.version, 'b'.repeat(16));
  const rewrite = (t) => { for (const [from, to] of swap) t = t.replaceAll(from, to); return t; };
  for (const f of ['index.html', 'sw.js', a.boot, 'cpu-worker.js', 'cpu-worker-embed.js', `pkg/${a.glue}`, `pkg/${a.embedGlue}`]) {
    await writeFile(join(dir, f), rewrite(await readFile(join(dir, f), 'utf8')));
  }
  // A custom section ("b", one byte) at the end of each module: a different file, same program.
  for (const m of [a.wasm, a.embedWasm]) {
    const wasm = await readFile(join(dir, 'pkg', m));
    await writeFile(join(dir, 'pkg', m), Buffer.concat([wasm, Buffer.from([0, 3, 1, 0x62, 0x42])]));
  }
  for (const f of [...a.modules.map((m) => `pkg/${m}`), a.boot]) await rename(join(dir, f), join(dir, rewrite(f)));
  const b = await hashes(dir);
  assert.notEqual(b.wasm, a.wasm);
  assert.notEqual(b.embedWasm, a.embedWasm);
  assert.notEqual(b.version, a.version);
  return { dir, a, b };
}

test('a new build is picked up on the next visit and announced; no old wasm runs beside the new JS', async (t) => {
  const { dir: buildB, a, b } = await makeBuildB();
  t.after(() => rm(buildB, { recursive: true, force: true }));
  let root = SITE;
  const server = await serve(t, () => root);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  const pkgResponses = [];
  context.on('response', (r) => { if (r.url().includes('/pkg/')) pkgResponses.push(new URL(r.url()).pathname.split('/').pop()); });
  const open = async (path) => {
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    await page.goto(`${origin}/${path}`);
    await waitForRoute(page, '/kernels');
    await page.waitForFunction(() => document.querySelector('#run-button')?.disabled === false, null, { timeout: 60_000 });
    return page;
  };
  const swVersion = (page) => page.evaluate(() => new Promise((resolve) => {
    navigator.serviceWorker.addEventListener('message', (e) => resolve(e.data.swVersion), { once: true });
    navigator.serviceWorker.controller.postMessage('version');
  }));
  /** The JS glue and wasm the pages received since the last call (network or service worker). */
  const loaded = () => {
    const names = [...new Set(pkgResponses.filter((n) => /^gpu_playground/.test(n)))].sort();
    pkgResponses.length = 0;
    return names;
  };

  /**
   * The JS glue the page shown loaded, from its own resource timing: there whether
   * the network or a service worker answered (Playwright does not always report a response
   * a worker passed through, and once reported none at all for visit 2).
   */
  const pageLoaded = (p) => p.evaluate(() => [...new Set(performance.getEntriesByType('resource')
    .map((e) => new URL(e.name).pathname.split('/').pop())
    .filter((n) => /^gpu_playground/.test(n)))].sort());

  // Visit 1: build A installs its service worker.
  let page = await open('#/kernels?lang=en&m=16&n=16&k=16');
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000 });
  assert.equal(await swVersion(page), a.version);
  // The page ran A's whole-app module; the worker's precache also fetches A's embed module.
  const visit1 = loaded();
  assert.ok(visit1.includes(a.glue) && visit1.includes(a.wasm), `visit 1 runs build A: ${visit1}`);
  assert.deepEqual(visit1.filter((n) => !a.modules.includes(n)), [], `visit 1: only build A's modules: ${visit1}`);

  // Build B is deployed. Visit 2 (a reload of the open tab) runs B and says so; B's worker
  // installs beside A's and the page says a new version is ready.
  root = buildB;
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#run-button')?.disabled === false, null, { timeout: 60_000 });
  // B's glue names only B's wasm, which A's cache cannot hold, and the run below needs it.
  const visit2 = await pageLoaded(page);
  assert.ok(visit2.includes(b.glue), `visit 2 runs build B's JS: ${visit2}`);
  assert.deepEqual(visit2.filter((n) => a.modules.includes(n)), [], 'nothing of build A');
  assert.ok((await readFile(join(buildB, 'pkg', b.glue), 'utf8')).includes(b.wasm), 'B\'s glue loads B\'s wasm');
  await page.waitForSelector('p.notice[data-update="installed"]', { timeout: 30_000 });
  assert.match(await page.textContent('p.notice[data-update="installed"]'), /updated since your last visit/);
  await page.waitForSelector('p.notice[data-update="available"]', { timeout: 120_000 });
  assert.match(await page.textContent('p.notice[data-update="available"]'), /new version of GPU Playground has been downloaded/);
  await screenshot(page, 'offline-update-available-en');
  await page.close();

  // Visit 3, no tab of the old version left: B's worker is in charge, A's cache is gone, and
  // the site works offline from B's files.
  page = await open('#/kernels?lang=zh&m=16&n=16&k=16');
  // The waiting worker takes over once no page of the old version is open; the browser may
  // need a moment after the last one closed.
  let version;
  for (let i = 0; i < 20 && version !== b.version; i++) {
    if (i > 0) {
      // B's worker takes over when the last page A's worker controls goes away, a reload of
      // this one included: reload once B's is installed (waiting, or active already).
      await page.waitForFunction(async () => {
        const r = await navigator.serviceWorker.getRegistration();
        return !!(r && !r.installing && (r.waiting || r.active));
      }, null, { timeout: 60_000 });
      await page.reload();
      await page.waitForFunction(() => document.querySelector('#run-button')?.disabled === false, null, { timeout: 60_000 });
    }
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
    version = await swVersion(page);
  }
  assert.equal(version, b.version, 'build B\'s service worker controls the next visit');
  const cacheNames = await page.evaluate(() => caches.keys());
  assert.deepEqual(cacheNames, [`gpu-playground-${b.version}`], 'only the new version\'s cache is left');
  await stop(server);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#run-button')?.disabled === false, null, { timeout: 60_000 });
  const offline = await pageLoaded(page);
  assert.ok(offline.includes(b.glue), `offline: build B from the cache: ${offline}`);
  assert.deepEqual(offline.filter((n) => a.modules.includes(n)), [], 'offline: nothing of build A');
  await page.click('#run-button');
  await page.waitForFunction(() => document.querySelector('.result [data-verified]')?.dataset.verified === 'true', null, { timeout: 120_000 });

  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`the browser's install offer shows the install notice, and Install calls its prompt (${lang})`, async (t) => {
    const server = await serve(t);
    const origin = `http://127.0.0.1:${server.address().port}`;
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    await page.goto(`${origin}/#/?lang=${lang}`);
    await waitForRoute(page, '/', { lang });
    await page.waitForSelector('[data-webgpu]', { timeout: 60_000 });
    assert.equal(await page.$('#install-app'), null, 'no install notice before the browser offers it');
    // What Chromium fires when the site meets its install criteria (a headless browser never
    // does): an event whose default is to show the browser's own bar, with a prompt() method.
    await page.evaluate(() => {
      window.prompted = 0;
      const e = new Event('beforeinstallprompt', { cancelable: true });
      e.prompt = () => { window.prompted += 1; return Promise.resolve(); };
      e.userChoice = Promise.resolve({ outcome: 'accepted' });
      window.dispatchEvent(e);
      window.defaultPrevented = e.defaultPrevented;
    });
    assert.equal(await page.evaluate(() => window.defaultPrevented), true, 'the browser\'s own bar is held back');
    const notice = await page.waitForSelector('p.notice.install');
    assert.match(await notice.textContent(), lang === 'zh' ? /安装/ : /can be installed as an app/);
    await screenshot(page, `offline-install-notice-${lang}-390`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
    await page.click('#install-app');
    assert.equal(await page.evaluate(() => window.prompted), 1, 'Install opened the browser\'s prompt once');
    await page.waitForSelector('p.notice.install', { state: 'detached' });
    assertNoErrors(errors);
    await context.close();
  });
}
