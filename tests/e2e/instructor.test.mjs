// Instructor mode: the Embed buttons are instructor tools, so a learner's default view has
// none; the footer's one switch (or a link's `instructor=1`) shows them on every page, the
// choice survives a reload, and an embedded widget never shows them nor changes the choice.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, goto, assertNoErrors, waitForRoute } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
const saved = (page) => page.evaluate(() => localStorage.getItem('gpu-playground.instructor'));
// Three pages, each with an element rendered beside its Embed buttons (so "none" is checked
// once the buttons would have been there) and how many widgets it carries.
const PAGES = [
  ['#/kernels?lang=en&stage=matmul-tiled', 'section.page h1', 2],
  ['#/race?lang=en&view=claim', '.race-tabs', 1],
  ['#/learn/roofline?lang=en', 'article.lesson h1', 1],
];

async function embedButtons(page, path, landmark) {
  await goto(page, path);
  await page.waitForSelector(landmark);
  return page.locator('.embed-toggle').count();
}

test('a learner sees no Embed button; the footer switch shows them everywhere, survives a reload, hides them again', async () => {
  const { page, context, errors } = await openPage(browser, '#/?lang=en');
  assert.equal(await saved(page), null, 'nothing saved before the visitor chooses');
  for (const [path, landmark] of PAGES) {
    assert.equal(await embedButtons(page, path, landmark), 0, `${path}: a learner's view has no Embed button`);
  }
  const sw = page.locator('footer #instructor-mode');
  assert.equal(await sw.isChecked(), false, 'the switch starts off');
  assert.equal(await page.locator('footer label:has(#instructor-mode)').innerText(), 'Instructor tools: show Embed buttons');

  await sw.check();
  await page.waitForSelector('.embed-toggle');
  assert.equal(await saved(page), '1');
  for (const [path, landmark, n] of PAGES) {
    assert.equal(await embedButtons(page, path, landmark), n, `${path}: instructor mode shows its Embed buttons`);
  }
  // A reload (the URL no longer asks for it: the nav links carry only the language).
  await page.reload();
  await waitForRoute(page, '/learn/roofline', { lang: 'en' });
  await page.waitForSelector('.embed-toggle');
  assert.equal(await sw.isChecked(), true, 'the switch remembers after a reload');
  assert.equal(await embedButtons(page, PAGES[0][0], PAGES[0][1]), PAGES[0][2], 'and the buttons are still there on another page');

  await sw.uncheck();
  await page.waitForSelector('.embed-toggle', { state: 'detached' });
  assert.equal(await saved(page), '0');
  // The switch's `instructor=0` leaves the address at once, so the page shown is the address
  // of PAGES[0] again: visit the others first (a visit to the same address is no visit).
  await page.waitForFunction(() => !location.hash.includes('instructor'));
  for (const [path, landmark] of [...PAGES].reverse()) {
    assert.equal(await embedButtons(page, path, landmark), 0, `${path}: off again, no Embed button`);
  }
  assertNoErrors(errors);
  await context.close();
});

test('a link with instructor=1 turns it on; an embed never shows the buttons nor changes the choice', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&view=claim&instructor=1');
  await page.waitForSelector('.embed-toggle');
  assert.equal(await saved(page), '1', 'a docs link\'s choice is kept');
  // The Embed panel's live preview is an embed iframe of the site.
  await page.click('.embed-toggle');
  const frame = await (await page.waitForSelector('.embed-preview')).contentFrame();
  await waitForRoute(frame, '/embed/claim', { lang: 'en' });
  await frame.waitForSelector('.embed-root');
  assert.equal(await frame.locator('.embed-toggle').count(), 0, 'an embed shows no Embed button');
  assert.equal(await frame.locator('#instructor-mode').count(), 0, 'nor the switch');
  // An embed's own `instructor=` neither shows the buttons nor touches the saved choice.
  await goto(page, '#/embed/race?lang=en&instructor=0');
  await page.waitForSelector('.embed-root');
  assert.equal(await page.locator('.embed-toggle').count(), 0);
  assert.equal(await saved(page), '1', 'the embed changed the saved choice');
  await goto(page, '#/embed/lesson?lang=en&lesson=roofline&instructor=1');
  await page.waitForSelector('.embed-root');
  assert.equal(await page.locator('.embed-toggle').count(), 0, 'an embed asking for instructor mode still shows none');
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  for (const width of [390, 1280, 1920]) {
    test(`the instructor switch in the footer (${lang}, ${width} px)`, async () => {
      const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=claim`, { viewport: { width, height: 900 } });
      const footer = page.locator('footer.footer');
      await footer.scrollIntoViewIfNeeded();
      const box = await page.locator('footer label:has(#instructor-mode)').boundingBox();
      assert.ok(box.height >= 24 && box.width >= 24, `a touch target: ${JSON.stringify(box)}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scroll: ${overflow}`);
      await page.screenshot({ path: join(OUT, `instructor-switch-off-${lang}-${width}.png`) });
      await page.check('#instructor-mode');
      await page.waitForSelector('.embed-toggle');
      await footer.scrollIntoViewIfNeeded();
      await footer.screenshot({ path: join(OUT, `instructor-footer-on-${lang}-${width}.png`) });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(OUT, `instructor-race-on-${lang}-${width}.png`) });
      assertNoErrors(errors);
      await context.close();
    });
  }
}

test('instructor=1 leaves the address once read: no address, link or snippet carries it to students', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=claim&instructor=1`);
    await page.waitForSelector('.embed-toggle');
    assert.equal(await saved(page), '1', 'the choice is kept');
    // Read once, then taken out of the address bar.
    await page.waitForFunction(() => !location.hash.includes('instructor'), null, { timeout: 30_000 });
    assert.match(page.url(), /view=claim/, 'the rest of the address stays');
    // Still on without it.
    await page.waitForSelector('.embed-toggle');
    // No link the page writes carries it (nav, language switch, view tabs, "open" links).
    const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => a.getAttribute('href')));
    assert.ok(hrefs.length > 5, `links: ${hrefs.length}`);
    assert.deepEqual(hrefs.filter((h) => h.includes('instructor')), []);
    // Nor the Embed snippet and its preview.
    const share = page.locator('.embed-share[data-widget="claim"]');
    await share.locator('.embed-toggle').click();
    const snippet = await share.locator('.embed-snippet').inputValue();
    assert.match(snippet, /embed\/claim/);
    assert.doesNotMatch(snippet, /instructor/);
    const src = await page.getAttribute('.embed-preview', 'src');
    assert.doesNotMatch(src, /instructor/);
    // The footer switch also leaves no trace in the address.
    await page.locator('footer #instructor-mode').uncheck();
    await page.waitForSelector('.embed-toggle', { state: 'detached' });
    // The choice is saved by an effect after the render that removed the buttons.
    await page.waitForFunction(() => localStorage.getItem('gpu-playground.instructor') === '0', null, { timeout: 30_000 });
    await page.waitForFunction(() => !location.hash.includes('instructor'), null, { timeout: 30_000 });
    assertNoErrors(errors);
    await context.close();
  }
});
