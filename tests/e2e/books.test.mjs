// The worked example books (docs/examples/books/): what mdBook and Jupyter Book emit from
// their sources today, built by the browser step just before this file runs (`cargo xtask
// books`, into target/books/ or BOOKS_BUILT; generated output is not in git), served from
// ANOTHER origin with only the playground's address changed to the test site's. In each, the
// one-line loader's <div> becomes the race's iframe in the page's language, 100 % of the
// book's column, as tall as its widget; at 390 and 1920 px the book does not scroll
// sideways. Screenshots in en and zh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { extname, join, normalize } from 'node:path';
import {
  BASE_URL, launch, screenshot, assertNoErrors, waitForRoute, startHost,
} from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
const BUILT = join(process.env.BOOKS_BUILT ?? fileURLToPath(new URL('../../target/books/', import.meta.url)), '/');
// The address the books' sources name (docs/examples/books/README.md).
const PLACEHOLDER = 'https://you.github.io/gpu-playground/';
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2', '.woff': 'font/woff',
  '.ttf': 'font/ttf', '.json': 'application/json', '.ico': 'image/x-icon',
};
let browser;
let host;
let hostOrigin;

before(async () => {
  browser = await launch();
  host = await startHost((url) => {
    const path = normalize(decodeURIComponent(url.pathname));
    const file = join(BUILT, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(BUILT) || !existsSync(file) || !statSync(file).isFile()) return null;
    let body = readFileSync(file);
    if (extname(file) === '.html') body = body.toString('utf8').replaceAll(PLACEHOLDER, BASE_URL);
    return { type: TYPES[extname(file)] ?? 'application/octet-stream', body };
  });
  hostOrigin = host.origin;
});
after(async () => {
  await browser?.close();
  await host?.close();
});

/** Waits until the book's iframe is as tall as its widget's content (see embed-loader.test.mjs). */
async function followsContent(page, frame) {
  for (let i = 0; i < 20; i++) {
    const content = await frame.evaluate(() => Math.ceil(document.getElementById('main').getBoundingClientRect().bottom + scrollY));
    const ok = await page.waitForFunction((h) => {
      const f = document.querySelector('[data-gpu-playground] iframe');
      return Math.abs(f.getBoundingClientRect().height - Math.max(50, h)) <= 1;
    }, content, { timeout: 10_000 }).then(() => true, () => false);
    if (ok) return content;
  }
  throw new Error('the iframe never took its widget\'s height');
}

// Errors Jupyter Book 1.0.4's own theme logs on every page, with or without a widget: it
// includes sphinx-thebe's script twice, and its theme switcher reads an unset mode.
const TOOL_ERRORS = {
  'jupyter-book': ["pageerror: Identifier 'THEBE_JS_URL' has already been declared", 'console.error: Got invalid theme mode: . Resetting to auto.'],
  mdbook: [],
};

const BOOKS = [
  // [folder, what the tool writes into every page, so the test knows it serves that tool's output]
  ['mdbook', /<script src="book\.js"><\/script>/],
  ['jupyter-book', /<script src="_static\/scripts\/sphinx-book-theme\.js\?v=[0-9a-f]+"><\/script>/],
];

for (const [book, generator] of BOOKS) {
  for (const lang of ['en', 'zh']) {
    test(`${book}: the race mounts in the book's page and sizes itself at 390 and 1920 px (${lang})`, async () => {
      const name = lang === 'en' ? 'race.html' : 'race-zh.html';
      const html = readFileSync(join(BUILT, book, name), 'utf8');
      assert.match(html, generator, `${book}/${name} is not that tool's output`);
      assert.ok(html.includes(`<script src="${PLACEHOLDER}embed.js" async></script>`), 'the loader\'s tag came through');
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      const errors = [];
      page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('response', (r) => { if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`); });
      await page.goto(`${hostOrigin}/${book}/${name}`);
      const el = await page.waitForSelector('[data-gpu-playground] iframe[src]', { state: 'attached' });
      const frame = await el.contentFrame();
      await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 60_000 });
      await waitForRoute(frame, '/embed/race', { lang });
      assert.equal(await frame.inputValue('#race-n'), '256');
      const q = new URLSearchParams(new URL(await el.getAttribute('src')).hash.split('?')[1]);
      assert.equal(q.get('parentOrigin'), hostOrigin);
      for (const width of [390, 1920]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
        await followsContent(page, frame);
        const [frameW, columnW] = await page.$eval('[data-gpu-playground]', (d) => [d.querySelector('iframe').getBoundingClientRect().width, d.getBoundingClientRect().width]);
        assert.equal(Math.round(frameW), Math.round(columnW), 'the iframe fills the book\'s column');
        const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(pageWidth <= width, `the page is ${pageWidth} px wide at ${width}`);
        await el.scrollIntoViewIfNeeded();
        await screenshot(page, `book-${book}-${lang}-${width}`);
      }
      assertNoErrors(errors.filter((e) => !TOOL_ERRORS[book].includes(e)));
      await context.close();
    });
  }
}
