// What a page downloads (the first-load budget, docs/benchmarks.md "First load").
// - Text comes in parts (crates/locale-files PARTS): a page fetches the core and the
//   parts its route names, nothing else. Each page is loaded fresh and the parts it fetched
//   are checked, and that no key of a part it did not fetch was asked for (the app logs a
//   console error then, which fails `assertNoErrors`); a part failing to arrive gives a
//   message and a working "Try again", not "Loading…" for good.
// - The landing page and an embedded widget (all but a lesson, the CNN and the editor's) run
//   the embed module, the app without its lessons, CNN page and editor pages; everything else
//   the whole app; one of those pages reached inside the embed module reloads into the whole
//   app, and the visit count goes on across the reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, waitForRoute, navigatedBy, screenshot, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const partsFetched = (requests, lang) => [...new Set(requests
  .map((u) => new URL(u).pathname.match(new RegExp(`locales/${lang}-([a-z]+)\\.[0-9a-f]{16}\\.txt$`))?.[1])
  .filter(Boolean))].sort();

// Each page (a fresh load) and the parts it must fetch, no more and no fewer.
const PAGES = [
  ['#/', ['core']],
  ['#/embed/matmul', ['core']],
  ['#/embed/ladder', ['core']],
  ['#/embed/conv-direct', ['conv', 'core']],
  ['#/embed/simt', ['conv', 'core']],
  ['#/embed/race', ['core', 'race']],
  ['#/embed/train', ['core', 'train']],
  ['#/kernels', ['conv', 'core']],
  ['#/visualiser', ['conv', 'core']],
  ['#/race', ['conv', 'core', 'race']],
  ['#/train', ['core', 'train']],
  ['#/conv', ['conv', 'core']],
  ['#/editor', ['core', 'editor']],
  ['#/puzzles', ['core', 'editor']],
  ['#/cnn', ['cnn', 'core']],
  ['#/gpt', ['core', 'gpt']],
  ['#/embed/cnn', ['cnn', 'core']],
  ['#/learn', ['cnn', 'conv', 'core', 'editor', 'lessons', 'race', 'train']],
  ['#/learn/occupancy', ['cnn', 'conv', 'core', 'editor', 'lessons', 'race', 'train']],
];

for (const lang of ['en', 'zh']) {
  test(`${lang}: each page fetches the text parts its route names, and uses no other`, async () => {
    for (const [path, want] of PAGES) {
      const sep = path.includes('?') ? '&' : '?';
      const { page, context, errors, requests } = await openPage(browser, `${path}${sep}lang=${lang}`);
      await page.waitForLoadState('networkidle');
      // Rendering is done once nothing is pending; a late key would have logged by now (the
      // error names the key, the message the page).
      assert.deepEqual(errors, [], `${path} logged errors:\n${errors.join('\n')}`);
      assert.deepEqual(partsFetched(requests, lang), want, `${path}: text parts fetched`);
      assert.equal(await page.$('[data-text]'), null, `${path}: no loading or failure notice`);
      await context.close();
    }
  });

  test(`${lang}: a text part that fails to arrive gives a message and Try again works`, async () => {
    // No service worker: once it has precached the site and claimed the page (sooner or
    // later, depending on load), it answers the part from its cache and the route below
    // never sees the request (the test then timed out in one full run).
    const { page, context } = await openPage(browser, `#/?lang=${lang}`, { serviceWorkers: 'block' });
    await page.waitForSelector('[data-webgpu]', { timeout: 30_000 });
    let fail = true;
    await page.route(/locales\/[a-z]+-lessons\.[0-9a-f]{16}\.txt$/, (r) => (fail ? r.abort('failed') : r.continue()));
    await page.click('nav a[href^="#/learn?"]');
    await page.waitForSelector('[data-text="failed"][role="alert"]', { timeout: 30_000 });
    const message = await page.textContent('[data-text="failed"]');
    assert.match(message, lang === 'en' ? /could not be loaded/ : /无法加载/);
    // The shell is still there: the visitor can go elsewhere.
    assert.ok(await page.$('header nav'), 'the navigation stays');
    await screenshot(page, `text-part-failed-${lang}`);
    fail = false;
    await page.click('[data-text="failed"] button');
    await waitForRoute(page, '/learn', { lang });
    assert.equal(await page.$('[data-text]'), null, 'no loading or failure notice');
    // The Learn index: its introduction (core text) and the lessons' text (glossary link).
    assert.match(await page.textContent('main'), lang === 'en' ? /Short lessons/ : /一组短课/);
    assert.ok(await page.$('main .glossary-link a'), 'the glossary link (lessons part) is drawn');
    await context.close();
  });
}

const modulesFetched = (requests) => [...new Set(requests
  .map((u) => new URL(u).pathname.match(/pkg\/(gpu_playground(?:_embed)?)_bg\.[0-9a-f]{16}\.wasm$/)?.[1])
  .filter(Boolean))].sort();

for (const [path, want] of [
  ['#/embed/matmul?lang=en', ['gpu_playground_embed']],
  ['#/embed/race?lang=zh', ['gpu_playground_embed']],
  ['#/embed/lesson?lesson=occupancy&lang=en', ['gpu_playground']],
  ['#/embed/cnn?lang=en', ['gpu_playground']],
  ['#/embed/editor?lang=en', ['gpu_playground']],
  ['#/embed/puzzle?lang=en', ['gpu_playground']],
  ['#/?lang=en', ['gpu_playground_embed']],
  ['#/kernels?lang=en', ['gpu_playground']],
  ['#/learn/roofline?lang=zh', ['gpu_playground']],
]) {
  test(`${path}: runs the ${want[0] === 'gpu_playground' ? 'whole app' : 'embed module'}`, async () => {
    const { page, context, errors, requests } = await openPage(browser, path);
    await page.waitForLoadState('networkidle');
    assert.deepEqual(modulesFetched(requests), want);
    assertNoErrors(errors);
    await context.close();
  });
}

test('a lesson reached inside the embed module reloads into the whole app', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/embed/matmul?lang=en');
  await page.waitForSelector('#run-button');
  assert.deepEqual(modulesFetched(requests), ['gpu_playground_embed']);
  // The embed module shows its "reloading" page for the lesson (never ready), then reloads:
  // the route is read on the new document, the whole app's.
  const reloaded = page.waitForEvent('load', { timeout: 60_000 });
  await page.evaluate(() => { location.hash = '#/learn/occupancy?lang=en'; });
  await reloaded;
  await waitForRoute(page, '/learn/occupancy', { lang: 'en' });
  assert.equal(await page.$('[data-text]'), null, 'no loading or failure notice');
  assert.deepEqual(modulesFetched(requests), ['gpu_playground', 'gpu_playground_embed']);
  assert.match(await page.textContent('main'), /Lesson/);
  assertNoErrors(errors);
  await context.close();
});

// The landing page runs the embed module: a page it leaves out, reached by the navigation,
// reloads into the whole app, and the next visit's ready signal is the whole app's (the visit
// count goes on across the reload, so a test waiting for the next page never reads the
// stand-in's). Pages the embed module has stay in it.
test('from the landing page, Kernels stays in the embed module and the CNN, editor and Learn pages reload into the whole app', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/?lang=en');
  assert.deepEqual(modulesFetched(requests), ['gpu_playground_embed']);
  await navigatedBy(page, () => page.click('nav a[href^="#/kernels?"]'), { path: '/kernels' });
  assert.deepEqual(modulesFetched(requests), ['gpu_playground_embed'], 'Kernels is in the embed module');
  const visit = await page.evaluate(() => Number(document.querySelector('main').dataset.routeReady.split(' ')[2]));
  await navigatedBy(page, () => page.click('nav a[href^="#/cnn?"]'), { path: '/cnn' });
  assert.deepEqual(modulesFetched(requests), ['gpu_playground', 'gpu_playground_embed']);
  const after = await page.evaluate(() => Number(document.querySelector('main').dataset.routeReady.split(' ')[2]));
  assert.ok(after > visit, `the visit count went on across the reload (${visit} → ${after})`);
  assert.equal(await page.$('main p.boot'), null, 'the CNN page, not the stand-in that reloads');
  // In the whole app now: the editor and Learn need no other reload.
  await navigatedBy(page, () => page.click('nav a[href^="#/puzzles?"]'), { path: '/puzzles' });
  await navigatedBy(page, () => page.click('nav a[href^="#/learn?"]'), { path: '/learn' });
  assert.match(await page.textContent('main'), /Short lessons/);
  assertNoErrors(errors);
  await context.close();
});
