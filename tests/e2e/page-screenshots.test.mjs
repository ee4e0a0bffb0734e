// Screenshots of the main pages (home, kernels, SIMT view, VRAM, many GPUs, precision) at 390,
// 1280 and 1920 px in both languages (full pages, and the first screenful for reading at full
// size); none scrolls sideways.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, show, screenshot, assertNoErrors, waitForProbe } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const withLang = (route, lang) => `${route}${route.includes('?') ? '&' : '?'}lang=${lang}`;

test('screenshots of the changed pages at 390, 1280 and 1920 px in both languages', async () => {
  const pages = [['home', '#/'], ['kernels', '#/kernels?m=64&n=64&k=64'], ['visualiser', '#/visualiser?stage=tiled&wgx=3&wgy=3'],
    ['vram', '#/learn/vram'], ['multi-gpu', '#/learn/multi-gpu'], ['precision', '#/learn/precision']];
  // One load per language (at 390 px); at each width every page is navigated to again, so
  // each is drawn at that width, instead of a new load of the app per width.
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, withLang('#/', lang), { viewport: { width: 390, height: 844 } });
    await waitForProbe(page);
    for (const [width, height] of [[390, 844], [1280, 900], [1920, 1080]]) {
      await page.setViewportSize({ width, height });
      await page.waitForFunction((w) => window.innerWidth === w, width);
      for (const [name, route] of pages) {
        // Measured once the shell shows this route in `lang`, never the previous one.
        await show(page, withLang(route, lang));
        assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, `${name} ${width} ${lang}`);
        await screenshot(page, `page-${name}-${width}-${lang}`);
        // The first screenful on its own, readable at full size.
        await page.screenshot({ path: `${process.env.TEST_OUTPUT ?? 'test-output'}/page-view-${name}-${width}-${lang}.png` });
      }
    }
    assertNoErrors(errors);
    await context.close();
  }
});
