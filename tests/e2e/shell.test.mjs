// The app shell: loading, the GPU panel, navigation, language, URL state, bad URLs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, goto, navigatedBy, switchLang, waitForRoute, waitForProbe, screenshot, assertNoErrors,
  assertSameOrigin,
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
    // The route is read once its text part has arrived (Learn fetches the lessons' text on
    // its first visit and shows "Loading…" until then) and it has rendered.
    await navigatedBy(page, () => page.click(`nav a[href^="${path}?"]`), { path: path.slice(1), lang: 'en' });
    assert.ok((await page.evaluate(() => location.hash)).startsWith(`${path}?`));
    assert.equal(await page.$('main [data-text]'), null, 'no "Loading…" left');
    const text = await page.textContent('main');
    assert.match(text, pattern, `${path}`);
    assert.doesNotMatch(text, /TODO/i);
    assert.equal(await page.getAttribute(`nav a[href^="${path}?"]`, 'aria-current'), 'page');
    // Each area's content, not just its heading: counts fixed by the catalogue.
    const counts = {
      '#/learn': ['.lesson-list > li', 20],
      '#/kernels': ['.stage-list a[data-stage]', 11],
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
  await switchLang(page, 'zh');
  assert.match(await page.textContent('h1'), /内核/);
  const url = new URL(page.url());
  assert.match(url.hash, /lang=zh/);
  assert.match(url.hash, /m=64/, 'other parameters survive the switch');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.match(await page.textContent('nav'), /学习/);
  await waitForProbe(page);
  await screenshot(page, 'kernels-zh');
  // Persisted: a link without ?lang opens in Chinese.
  await goto(page, '#/learn');
  await waitForRoute(page, '/learn', { lang: 'zh' });
  assert.match(await page.textContent('h1'), /学习/);
  assert.match(new URL(page.url()).hash, /lang=zh/);
  // And back.
  await switchLang(page, 'en');
  assert.equal(await page.textContent('h1'), 'Learn');
  assertNoErrors(errors);
  await context.close();
});

test('?lang=zh before the hash works too (embeds)', async () => {
  const { page, context, errors } = await openPage(browser, '?lang=zh#/race');
  await waitForRoute(page, '/race', { lang: 'zh' });
  assert.match(await page.textContent('h1'), /赛跑/);
  assertNoErrors(errors);
  await context.close();
});

test('bad URLs show a page, not a crash', async () => {
  // An unknown route is the not-found page (its ready signal says /404).
  const { page, context, errors } = await openPage(browser, '#/no/such/page?lang=en', { ready: false });
  await waitForRoute(page, '/404', { lang: 'en' });
  assert.equal(await page.textContent('h1'), 'Page not found');
  // A hash without the leading slash, typed by hand after load.
  await navigatedBy(page, () => page.evaluate(() => { location.hash = 'kernels'; }), { path: '/kernels' });
  assert.ok((await page.evaluate(() => location.hash)).startsWith('#/kernels'));
  assert.ok(await page.$('#run-button'));
  // An unknown embedded widget names the ones that exist.
  await goto(page, '#/embed/nope?lang=en');
  assert.match(await page.textContent('body'), /There is no widget called/);
  // A language nobody speaks falls back instead of failing.
  await navigatedBy(page, () => page.goto(new URL('#/learn?lang=xx', page.url()).href), { path: '/learn' });
  assert.ok((await page.textContent('h1')).length > 0);
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
