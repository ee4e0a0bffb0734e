// The site's header on a phone: at 390 px it takes at most 120 of 844 px (it took
// 229): the title and the language switch share a row, the sections are one row that scrolls
// sideways, every section still reachable; at 1280 and 1920 px the header is as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { launch, openPage, show, assertNoErrors } from './helpers.mjs';

const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-polish';
mkdirSync(SHOTS, { recursive: true });
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

for (const lang of ['en', 'zh']) {
  for (const width of [390, 1280, 1920]) {
    test(`the header at ${width} px (${lang})`, async () => {
      const { page, context, errors } = await openPage(browser, `#/?lang=${lang}`, { viewport: { width, height: 844 } });
      for (const route of ['#/', '#/learn/memory', '#/kernels', '#/train']) {
        await show(page, `${route}?lang=${lang}`);
        const h = await page.$eval('header.header', (e) => e.getBoundingClientRect().height);
        if (width === 390) assert.ok(h <= 120, `${route}: header ${h} px tall at 390 px`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `${route}: horizontal overflow of ${overflow}px`);
      }
      // Every section's link can be reached (scrolled to) and clicked.
      const links = page.locator('header .nav a');
      const n = await links.count();
      assert.ok(n >= 5, `${n} links`);
      for (let i = 0; i < n; i++) {
        await links.nth(i).scrollIntoViewIfNeeded();
        const box = await links.nth(i).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= width + 1, `link ${i} on screen once scrolled to`);
      }
      // The language switch is on screen without scrolling.
      const langs = await page.locator('header .langs').boundingBox();
      assert.ok(langs.x + langs.width <= width && langs.y < 120, `language switch at ${JSON.stringify(langs)}`);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: `${SHOTS}/header-${lang}-${width}.png`, clip: { x: 0, y: 0, width, height: 300 } });
      assertNoErrors(errors);
      await context.close();
    });
  }
}

// A section reached by a link (not by its tab) shows its own tab: on a phone the sections'
// row scrolls sideways, and the current one is brought into it, for the last tabs and back
// to the first.
for (const lang of ['en', 'zh']) {
  test(`a phone shows the current section's tab (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/?lang=${lang}`, { viewport: { width: 390, height: 844 } });
    for (const route of ['#/cnn', '#/conv', '#/puzzles', '#/']) {
      await show(page, `${route}?lang=${lang}`);
      const onScreen = () => {
        const a = document.querySelector("header .nav a[aria-current='page']");
        const r = a?.getBoundingClientRect();
        return !!r && r.left >= 0 && r.right <= window.innerWidth;
      };
      await page.waitForFunction(onScreen, null, { timeout: 5000 }).catch(() => {});
      const box = await page.$eval("header .nav a[aria-current='page']", (a) => {
        const r = a.getBoundingClientRect();
        return { left: r.left, right: r.right, text: a.textContent };
      });
      assert.ok(box.left >= 0 && box.right <= 390, `${route}: its tab "${box.text}" at ${box.left}–${box.right} px of 390`);
    }
    await page.screenshot({ path: `${SHOTS}/header-current-${lang}-390.png`, clip: { x: 0, y: 0, width: 390, height: 200 } });
    assertNoErrors(errors);
    await context.close();
  });
}
