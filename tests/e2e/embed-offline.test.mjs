// The loader offline (docs/embedding.md, "Offline with the loader"). A service worker can only
// answer requests of its own site's pages, so the playground's cannot serve `embed.js` to a
// course page. The documented way: the course page serves its own copy of `embed.js` with
// `data-site` naming the playground, and its own service worker (the docs' few lines) keeps the
// page and that copy. The widgets' frames are the playground's pages, kept by the playground's
// service worker. Measured: visit once, stop both servers, reload the course page: the frame
// appears and the widget opens. Both servers are this file's own, so they can be stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, extname, normalize } from 'node:path';
import { launch, waitForRoute, screenshot, assertNoErrors } from './helpers.mjs';

const SITE = process.env.SITE_DIR;
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png',
  '.webmanifest': 'application/manifest+json', '.txt': 'text/plain', '.bin': 'application/octet-stream',
};
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

function listen(answer) {
  const server = http.createServer(async (req, res) => {
    try {
      const { type, body } = await answer(new URL(req.url, 'http://x').pathname);
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}
const origin = (server) => `http://127.0.0.1:${server.address().port}`;
function stop(server) {
  if (!server.listening) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
}

/** The service worker a course page adds, exactly as docs/embedding.md gives it. */
async function docsServiceWorker() {
  const docs = await readFile(new URL('../../docs/embedding.md', import.meta.url), 'utf8');
  const code = docs.match(/<!-- course-sw\.js -->\s*```js\n([\s\S]*?)```/)?.[1];
  assert.ok(code, 'docs/embedding.md gives the course page\'s service worker');
  return code;
}

test('a course page that keeps its own copy of the loader reloads offline with its frames', async (t) => {
  const site = await listen(async (path) => {
    let p = normalize(decodeURIComponent(path));
    if (p.includes('..')) throw new Error('no');
    if (p.endsWith('/')) p += 'index.html';
    return { type: TYPES[extname(p)] ?? 'application/octet-stream', body: await readFile(join(SITE, p)) };
  });
  const siteOrigin = origin(site);
  const sw = await docsServiceWorker();
  const course = await listen(async (path) => {
    if (path === '/course.html') {
      return {
        type: TYPES['.html'],
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>course</title><link rel="icon" href="data:,"></head><body>
<h1>Week 3</h1>
<div data-gpu-playground="race" data-n="64" data-hide="heading,tabs"><a href="${siteOrigin}/#/embed/race?n=64">the race</a></div>
<script src="/gpu-playground-embed.js" data-site="${siteOrigin}/" async></script>
<script>navigator.serviceWorker.register('/course-sw.js');</script>
</body></html>`,
      };
    }
    if (path === '/gpu-playground-embed.js') return { type: TYPES['.js'], body: await readFile(join(SITE, 'embed.js')) };
    if (path === '/course-sw.js') return { type: TYPES['.js'], body: sw };
    throw new Error('not found');
  });
  const courseOrigin = origin(course);
  t.after(() => Promise.all([stop(site), stop(course)]));

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`${courseOrigin}/course.html`);
  let frame = await (await page.waitForSelector('[data-gpu-playground] iframe[src]')).contentFrame();
  await waitForRoute(frame, '/embed/race', { lang: 'en' });
  // Both service workers in control, the playground's with its precache done.
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 60_000 });
  await frame.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000 });

  await Promise.all([stop(site), stop(course)]);
  await assert.rejects(fetch(`${courseOrigin}/course.html`), 'the course server is really stopped');

  await page.reload();
  frame = await (await page.waitForSelector('[data-gpu-playground] iframe[src]', { timeout: 30_000 })).contentFrame();
  await waitForRoute(frame, '/embed/race', { lang: 'en' });
  // The frame is sized by the loader from the widget's messages, offline too.
  await page.waitForFunction(() => Number(document.querySelector('[data-gpu-playground] iframe').getAttribute('height')) > 300);
  await screenshot(page, 'embed-offline-course-en-1280');
  assertNoErrors(errors);
  await context.close();
});
