// Other names for a page land on it: `#/simt` (the visualiser's embed id, used by learners
// who saw it) is the visualiser, its query kept, on load and when typed or followed later.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, waitForRoute, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('#/simt and other aliases redirect to the canonical page, query kept', async () => {
  const { page, context, errors } = await openPage(browser, '#/simt?lang=zh&stage=naive&size=32', { ready: false });
  await waitForRoute(page, '/visualiser', { lang: 'zh' });
  // The query is kept (the visualiser may add its own state after it).
  assert.ok(new URL(page.url()).hash.startsWith('#/visualiser?lang=zh&stage=naive&size=32'), page.url());
  assert.equal(await page.$('.not-found, [data-not-found]'), null);
  // Followed later in the same document (a link, a typed address): the same.
  for (const [from, path, hash] of [
    ['#/visualizer?lang=en', '/visualiser', '#/visualiser?lang=en'],
    ['#/lesson/simt?lang=en', '/learn/simt', '#/learn/simt?lang=en'],
    ['#/puzzle/map?lang=en', '/puzzles/map', '#/puzzles/map?lang=en'],
  ]) {
    const before = await page.evaluate(() => Number(document.querySelector('main')?.dataset.routeReady?.split(' ')[2] ?? 0));
    await page.evaluate((h) => { location.hash = h; }, from);
    await waitForRoute(page, path, { lang: 'en', after: before });
    assert.ok(new URL(page.url()).hash.startsWith(hash), `${page.url()} from ${from}`);
  }
  assertNoErrors(errors);
  await context.close();
});
