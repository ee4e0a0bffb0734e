// The app shell: loading, the GPU panel, navigation, language, URL state, bad URLs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, waitForProbe, screenshot, assertNoErrors, assertSameOrigin,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('home loads with no console errors, same-origin requests only, and a GPU adapter', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/?lang=en');
  assert.equal(await waitForProbe(page), 'available');
  // SwiftShader is a software adapter: the page must say its numbers are a CPU's.
  await page.waitForSelector('[data-software="true"]');
  const panel = await page.textContent('.gpu-panel');
  assert.match(panel, /swiftshader/i);
  assert.match(panel, /Max workgroup size X/);
  assert.match(panel, /timestamp-query/);
  assert.match(await page.textContent('h1'), /Why do GPUs power AI\?/);
  await screenshot(page, 'home-en');
  assertNoErrors(errors);
  assertSameOrigin(requests);
  await context.close();
});

test('every area renders its heading, never TODO', async () => {
  const { page, context, errors } = await openPage(browser, '#/?lang=en');
  await waitForProbe(page);
  for (const [path, pattern] of [
    ['#/learn', /Learn/],
    ['#/race', /CPU vs GPU race/],
    ['#/train', /Train a tiny network/],
    ['#/embed', /Embed a widget/],
    ['#/kernels', /Run on your GPU/],
  ]) {
    await page.click(`nav a[href^="${path}?"]`);
    await page.waitForFunction((p) => location.hash.startsWith(p + '?'), path);
    // A route whose text part is not loaded yet shows "Loading…" first (Learn fetches the
    // lessons' text on its first visit): read the page once that notice has gone.
    await page.waitForFunction(() => !document.querySelector('main [data-text]'), null, { timeout: 30_000 });
    const text = await page.textContent('main');
    assert.match(text, pattern, `${path}`);
    assert.doesNotMatch(text, /TODO/i);
    assert.equal(await page.getAttribute(`nav a[href^="${path}?"]`, 'aria-current'), 'page');
    // Each area's content, not just its heading: counts fixed by the catalogue.
    const counts = {
      '#/learn': ['.lesson-list > li', 20],
      '#/kernels': ['.stage-list a[data-stage]', 10],
    }[path];
    if (counts) {
      await page.waitForSelector(counts[0]);
      assert.equal((await page.$$(counts[0])).length, counts[1], `${path}: ${counts[0]}`);
    }
  }
  assertNoErrors(errors);
  await context.close();
});

test('the language switch changes visible text, the URL, and persists', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&m=64');
  await waitForProbe(page);
  assert.match(await page.textContent('h1'), /Kernels/);
  await page.click('button[data-lang="zh"]');
  await page.waitForFunction(() => document.querySelector('h1')?.textContent.includes('内核'));
  const url = new URL(page.url());
  assert.match(url.hash, /lang=zh/);
  assert.match(url.hash, /m=64/, 'other parameters survive the switch');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.match(await page.textContent('nav'), /学习/);
  await waitForProbe(page);
  await screenshot(page, 'kernels-zh');
  // Persisted: a link without ?lang opens in Chinese.
  await page.goto(new URL('#/learn', url).href);
  await page.waitForFunction(() => document.querySelector('h1')?.textContent.includes('学习'));
  assert.match(new URL(page.url()).hash, /lang=zh/);
  // And back.
  await page.click('button[data-lang="en"]');
  await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Learn');
  assertNoErrors(errors);
  await context.close();
});

test('?lang=zh before the hash works too (embeds)', async () => {
  const { page, context, errors } = await openPage(browser, '?lang=zh#/race');
  await page.waitForFunction(() => document.querySelector('h1')?.textContent.includes('赛跑'));
  assertNoErrors(errors);
  await context.close();
});

test('bad URLs show a page, not a crash', async () => {
  const { page, context, errors } = await openPage(browser, '#/no/such/page?lang=en');
  await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Page not found');
  // A hash without the leading slash, typed by hand after load.
  await page.evaluate(() => { location.hash = 'kernels'; });
  await page.waitForFunction(() => location.hash.startsWith('#/kernels'));
  await page.waitForSelector('#run-button');
  // An unknown embedded widget names the ones that exist.
  await page.goto(new URL('#/embed/nope?lang=en', page.url()).href);
  await page.waitForFunction(() => document.body.textContent.includes('There is no widget called'));
  // A language nobody speaks falls back instead of failing.
  await page.goto(new URL('#/learn?lang=xx', page.url()).href);
  await page.waitForFunction(() => document.querySelector('h1')?.textContent.length > 0);
  assertNoErrors(errors);
  await context.close();
});

test('the GPU panel embeds on its own', async () => {
  const { page, context, errors } = await openPage(browser, '#/embed/gpu?lang=zh', {
    viewport: { width: 480, height: 700 },
  });
  assert.equal(await waitForProbe(page), 'available');
  assert.equal(await page.$('header'), null, 'embeds have no header');
  assert.match(await page.textContent('.gpu-panel'), /你的 GPU/);
  await screenshot(page, 'embed-gpu-zh');
  assertNoErrors(errors);
  await context.close();
});
