// Screenshots of the pages issue 11's polish changed, at 390, 1280 and 1920 px in both
// languages (full pages, and the first screenful for reading at full size); none scrolls sideways.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors, waitForProbe } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const withLang = (route, lang) => `${route}${route.includes('?') ? '&' : '?'}lang=${lang}`;

test('screenshots of the changed pages at 390, 1280 and 1920 px in both languages', async () => {
  const pages = [['home', '#/'], ['kernels', '#/kernels?m=64&n=64&k=64'], ['visualiser', '#/visualiser?stage=tiled&wgx=3&wgy=3'],
    ['vram', '#/learn/vram'], ['multi-gpu', '#/learn/multi-gpu'], ['precision', '#/learn/precision']];
  for (const lang of ['en', 'zh']) {
    for (const [width, height] of [[390, 844], [1280, 900], [1920, 1080]]) {
      const { page, context, errors } = await openPage(browser, withLang('#/', lang), { viewport: { width, height } });
      await waitForProbe(page);
      for (const [name, route] of pages) {
        await page.goto(new URL(withLang(route, lang), page.url()).href);
        await page.waitForSelector('main h1', { timeout: 30_000 });
        await page.waitForTimeout(300);
        assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, `${name} ${width} ${lang}`);
        await screenshot(page, `polish-shot-${name}-${width}-${lang}`);
        // The first screenful on its own, readable at full size.
        await page.screenshot({ path: `${process.env.TEST_OUTPUT ?? 'test-output'}/polish-view-${name}-${width}-${lang}.png` });
      }
      assertNoErrors(errors);
      await context.close();
    }
  }
});
