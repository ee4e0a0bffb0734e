// Where a lesson or the race cites the fact-check (issue 41, round three): a learner took the
// bare "FC-05" for jargon, so each link reads as what was checked and against what, in English
// and Chinese, and keeps the id only in its address (docs/fact-check.html#fc-05); the race's
// claim names the article it comes from instead of "the article".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, goto, resizeTo, assertNoErrors } from './helpers.mjs';

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// The lessons the newcomer read, and the ids each must still link to.
const LESSONS = {
  choosing: ['fc-05', 'fc-20'],
  systolic: ['fc-05', 'fc-07', 'fc-15', 'fc-16'],
  roofline: ['fc-20', 'fc-21'],
  precision: ['fc-05', 'fc-07'],
};
const CHECKED = { en: /checked against|checked$|likewise|no source gives/, zh: /对照.*核实|已核实$|同样核实过|没有来源/ };

test('fact-check links say what was checked against what, in English and Chinese', async () => {
  for (const lang of ['en', 'zh']) {
    // One load per language: at each width the window is set first and each lesson is then
    // shown by a hash change, so it is drawn at that width as a load at that width drew it.
    const { page, context, errors } = await openPage(browser, `#/learn?lang=${lang}`, { viewport: { width: 390, height: 900 } });
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [lesson, ids] of Object.entries(LESSONS)) {
        const where = `${lesson} ${lang} ${width}`;
        await goto(page, `#/learn/${lesson}?lang=${lang}`);
        // The prose's links and the GPU table's (its source column names the source, each id
        // says what was checked against it).
        const links = await page.$$eval('main a.doc-link[href*="fact-check.html#fc-"]', (as) =>
          as.map((a) => ({ text: a.textContent, id: a.getAttribute('href').split('#')[1] })));
        assert.ok(links.length > 0, `${where}: no fact-check links`);
        for (const l of links) {
          assert.doesNotMatch(l.text, /^\s*(fact-check\s*)?FC-\d/i, `${where}: a bare id ${JSON.stringify(l)}`);
          assert.match(l.text, CHECKED[lang], `${where}: ${JSON.stringify(l)}`);
        }
        const linked = links.map((l) => l.id);
        for (const id of ids) assert.ok(linked.includes(id), `${where}: no link to ${id} in ${linked}`);
        // No id left bare in the text, and no link markup shown as text.
        const text = await page.textContent('main');
        assert.doesNotMatch(text, /\bFC-\d|\]\(/, `${where}: ${text.match(/.{40}(FC-\d|\]\().{40}/)?.[0]}`);
        if (width === 390 || lesson === 'systolic') {
          // The paragraph, list item or table cell holding each A100 citation (fc-05 or fc-20).
          const cites = page.locator(`main a.doc-link[href$="#${ids[0]}"]`);
          for (const [n, at] of [['first', cites.first()], ['last', cites.last()]]) {
            const box = at.locator('xpath=..');
            await box.scrollIntoViewIfNeeded();
            await box.screenshot({ path: join(OUT, `fact-links-${lesson}-${n}-${lang}-${width}.png`) });
          }
        }
        assertNoErrors(errors);
      }
    }
    await context.close();
  }
});

test('the race names the article whose "1/100" claim it checks', async () => {
  const TITLE = { en: '“How GPUs became the bedrock of large-model training”', zh: '《GPU如何成为AI大模型训练的算力基石》' };
  for (const lang of ['en', 'zh']) {
    // One load per language, opened at 390 px and resized to 1280 px.
    const { page, context, errors } = await openPage(browser, `#/race?view=claim&lang=${lang}`, { viewport: { width: 390, height: 900 } });
    for (const width of [390, 1280]) {
      const where = `${lang} ${width}`;
      await resizeTo(page, width);
      const heading = await page.textContent('#claim-heading');
      assert.ok(heading.includes(TITLE[lang]), `${where}: ${heading}`);
      assert.doesNotMatch(heading, /the article's claim|文章的说法$/, where);
      const source = page.locator('blockquote.claim-quote footer');
      const link = source.locator('a.doc-link');
      assert.equal(await link.getAttribute('href'), 'docs/fact-check.html#fc-45', where);
      assert.doesNotMatch(await link.textContent(), /FC-\d/, where);
      assert.match(await source.textContent(), /GPU如何成为AI大模型训练的算力基石/, where);
      await page.locator('blockquote.claim-quote').screenshot({ path: join(OUT, `fact-links-race-claim-${lang}-${width}.png`) });
      // The tabs and the heading, where the long title has to fit a phone.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${where}: the page scrolls sideways by ${overflow} px`);
      const top = await page.locator('nav.race-tabs').boundingBox();
      const h = await page.locator('#claim-heading').boundingBox();
      await page.screenshot({ path: join(OUT, `fact-links-race-tabs-${lang}-${width}.png`), clip: { x: 0, y: top.y, width, height: Math.min(600, h.y + h.height - top.y + 8) } });
      assertNoErrors(errors);
    }
    await context.close();
  }
});

test('no lesson or stage text shows a bare fact-check id as a link, in English and Chinese', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/learn?lang=${lang}`);
    const lessons = await page.locator('a[href*="#/learn/"]').evaluateAll(
      (as) => [...new Set(as.map((a) => new URL(a.href).hash.match(/^#\/learn\/([a-z0-9-]+)/)?.[1]).filter(Boolean))]);
    assert.ok(lessons.length >= 20, `lessons found: ${lessons}`);
    const pages = [
      ...lessons.map((id) => `#/learn/${id}?lang=${lang}`),
      `#/kernels?lang=${lang}&stage=matmul-blocktile-1d`,
      `#/kernels?lang=${lang}&family=conv&stage=conv-im2col-gemm`,
    ];
    let seen = 0;
    for (const path of pages) {
      await goto(page, path);
      const links = await page.$$eval('main a.doc-link[href*="fact-check.html#fc-"]', (as) => as.map((a) => a.textContent));
      seen += links.length;
      const bare = links.filter((t) => /FC-\d/.test(t) || !t.trim());
      assert.deepEqual(bare, [], `${path}: bare ids`);
    }
    assert.ok(seen >= 80, `${lang}: only ${seen} fact-check links seen`);
    assertNoErrors(errors);
    await context.close();
  }
});
