// Offline and updates: after one visit the site reloads and works with its server stopped
// (service worker, versioned precache); a new version is announced on the next visit; the
// built site uses content-hashed file names. Served by a server of this test's own (on its
// own port), so it can be stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, extname, normalize } from 'node:path';
import { launch, screenshot, assertNoErrors } from './helpers.mjs';

const SITE = fileURLToPath(new URL('../../target/e2e-site/', import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png',
  '.webmanifest': 'application/manifest+json', '.txt': 'text/plain',
};
let browser;

function serve() {
  const server = http.createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.includes('..')) return res.writeHead(404).end();
    if (path.endsWith('/')) path += 'index.html';
    try {
      const body = await readFile(join(SITE, path));
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
  assert.ok(!pkg.includes('gpu_playground.js') && !pkg.includes('gpu_playground_bg.wasm'));
  const index = await readFile(join(SITE, 'index.html'), 'utf8');
  assert.match(index, /src="\.\/boot\.[0-9a-f]{16}\.js"/);
  assert.doesNotMatch(index, /<script(?![^>]*src=)[^>]*>/, 'no inline script');
});

test('after one visit the site reloads and runs with its server stopped; updates are announced', async () => {
  const server = await serve();
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
  const notice = await page.waitForSelector('p.notice[data-update="installed"]', { timeout: 60_000 });
  assert.match(await notice.textContent(), /updated since your last visit/);
  await page.waitForFunction(() => !document.querySelector('#run-button')?.disabled, null, { timeout: 60_000 });
  // The service worker took control and finished precaching.
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000 });

  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await assert.rejects(fetch(`${origin}/index.html`), 'the server is really stopped');

  await page.reload();
  await page.waitForFunction(() => !document.querySelector('#run-button')?.disabled, null, { timeout: 60_000 });
  assert.equal(await page.$('p.notice[data-update]'), null, 'the same version is not announced twice');
  const before = Number(await page.getAttribute('.result', 'data-runs'));
  await page.click('#run-button');
  await page.waitForFunction((n) => Number(document.querySelector('.result')?.dataset.runs) > n, before, { timeout: 120_000 });
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
  // Other pages of the app come from the cache too.
  await page.goto(`${origin}/#/race?lang=zh`);
  await page.waitForFunction(() => document.querySelector('h1')?.textContent.includes('赛跑'));
  await screenshot(page, 'offline-race-zh');
  assertNoErrors(errors);
  await context.close();
});
