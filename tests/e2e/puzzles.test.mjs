// GPU puzzles in the browser: the list, a puzzle's reference solution passes, a plausible
// mistake fails with the wrong elements named, a missing guard is caught, progress is kept,
// both languages, no console error, no foreign request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, assertSameOrigin, setDoc, editorReady, goto, editorChecked, runEditor,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** The whole text (CodeMirror draws only the lines in view). */
async function docText(page) {
  return page.$eval('.cm-host', (h) => h.editorText());
}

/** Runs and waits for this run's answer (not the previous run's verdict). */
const run = (page) => runEditor(page);

test('the list has twelve puzzles in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/puzzles?lang=${lang}`);
    await page.waitForSelector('.puzzle-list a');
    const ids = await page.$$eval('.puzzle-list a', (as) => as.map((a) => a.dataset.puzzle));
    assert.deepEqual(ids, ['map', 'zip', 'guard', 'map2d', 'broadcast', 'blocks', 'shared', 'dot',
      'prefix_sum', 'axis_sum', 'matmul', 'conv1d']);
    assertNoErrors(errors);
    await context.close();
  }
});

for (const lang of ['en', 'zh']) {
  test(`dot product: the solution passes, a mistake fails with the wrong element shown (${lang})`, async () => {
    for (const width of [390, 1280, 1920]) {
      const { page, context, errors, requests } = await openPage(browser, `#/puzzles/dot?lang=${lang}`,
        { viewport: { width, height: 900 } });
      await editorReady(page, { runnable: true });
      assert.match(await docText(page), /\/\/ TODO/);
      await page.click('.solution .button');
      await page.click('.solution .button');
      // The solution is in and naga has checked it (Run acts on that verdict).
      await editorChecked(page, { includes: 'part[i] = a[i] * b[i];' });
      const solution = await docText(page);
      await run(page);
      assert.ok(await page.$('.editor-result .verdict.ok'), await page.textContent('.editor-result'));
      await screenshot(page, `puzzle-pass-${lang}-${width}`);
      await setDoc(page, solution.replace('var stride = N / 2u', 'var stride = N / 4u'));
      await run(page);
      assert.ok(await page.$('.editor-result .verdict.wrong'));
      const first = await page.textContent('.mismatches li');
      assert.match(first, /out\[0\]/);
      assert.match(first, /140/); // Σ i² for i < 8
      assert.equal(await page.$$eval('.puzzle-out td.wrong', (t) => t.length), 1);
      const noScroll = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(noScroll, `horizontal scroll at ${width}px`);
      await screenshot(page, `puzzle-fail-${lang}-${width}`);
      assertSameOrigin(requests);
      assertNoErrors(errors);
      await context.close();
    }
  });
}

test('guard: a missing guard is caught as writes past the end; solved puzzles are remembered', async () => {
  const { page, context, errors } = await openPage(browser, '#/puzzles/guard?lang=en');
  await editorReady(page);
  await page.click('.solution .button');
  await page.click('.solution .button');
  await editorChecked(page, { includes: 'if (i < N)' });
  const solution = await docText(page);
  await run(page);
  assert.ok(await page.$('.editor-result .verdict.ok'));
  await setDoc(page, solution.replace('if (i < N) {', 'if (true) {'));
  await run(page);
  assert.match(await page.textContent('.verdict.wrong'), /4 elements past the end of out were written/);
  await goto(page, '#/puzzles?lang=en');
  const solved = await page.$$eval('.puzzle-list li', (ls) => ls.filter((l) => l.querySelector('.badge')).map((l) => l.querySelector('a').dataset.puzzle));
  assert.deepEqual(solved, ['guard']);
  assertNoErrors(errors);
  await context.close();
});
