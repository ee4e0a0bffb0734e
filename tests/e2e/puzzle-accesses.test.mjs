// The puzzle page's access view: the learner's kernel run again instrumented (naga in the
// editor module rewrites each array index into a logging call), drawn per thread from the
// log the GPU wrote. map: thread 3 reads a[3] and writes out[3] and nothing else; guard
// without its guard: threads 4..7 each read a[i] and write out[i] past N = 4, so 8
// out-of-bounds accesses in all (2 per thread × 4 threads), 0 with the guard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, assertSameOrigin, setDoc, editorReady,
  editorChecked, runEditor, docText,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function useSolution(page) {
  await page.click('.solution .button');
  await page.click('.solution .button');
  // The solution is in (no TODO left) and naga has checked it (Run acts on that verdict).
  await page.waitForFunction(() => !document.querySelector('.cm-host')?.editorText?.().includes('// TODO'));
  await editorChecked(page);
}

async function runAndShow(page) {
  await runEditor(page);
  await page.waitForSelector('.editor-result .verdict');
  await page.click('#puzzle-accesses');
  await page.waitForSelector('#puzzle-access-view, #access-error', { timeout: 120_000 });
  const err = await page.$('#access-error');
  assert.equal(err, null, err && await err.textContent());
}

/** What the selected thread did: {array: [[index, kind], …]}. */
async function touched(page) {
  return page.$$eval('.access-strip', (ts) => Object.fromEntries(ts.map((t) => [t.dataset.array,
    [...t.querySelectorAll('td[data-kind]:not([data-kind=""])')].map((c) => [Number(c.dataset.index), c.dataset.kind])])));
}

test('map: thread 3 reads a[3] and writes out[3], found by hover and by keyboard', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/puzzles/map?lang=en');
  await editorReady(page, { runnable: true });
  await useSolution(page);
  await runAndShow(page);
  assert.equal(await page.getAttribute('#puzzle-access-view', 'data-oob'), '0');
  await page.hover('button.inv[data-inv="3"]');
  assert.equal(await page.getAttribute('#puzzle-access-view', 'data-selected'), '3');
  assert.deepEqual(await touched(page), { a: [[3, 'r']], out: [[3, 'w']] });
  assert.match(await page.textContent('.access-selected'), /Thread 3: 1 read, 1 write,/);
  // Keyboard: focus thread 1, Tab to thread 2.
  await page.focus('button.inv[data-inv="1"]');
  await page.keyboard.press('Tab');
  assert.equal(await page.getAttribute('#puzzle-access-view', 'data-selected'), '2');
  assert.deepEqual(await touched(page), { a: [[2, 'r']], out: [[2, 'w']] });
  assertSameOrigin(requests);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`guard: out-of-bounds accesses are counted without the guard, none with it (${lang})`, async () => {
    for (const width of [390, 1280, 1920]) {
      const { page, context, errors } = await openPage(browser, `#/puzzles/guard?lang=${lang}`,
        { viewport: { width, height: 900 } });
      await editorReady(page, { runnable: true });
      await useSolution(page);
      const solution = await docText(page);
      await runAndShow(page);
      assert.ok(await page.$('.editor-result .verdict.ok'));
      assert.equal(await page.getAttribute('#puzzle-access-view', 'data-oob'), '0');
      await page.hover('button.inv[data-inv="6"]');
      assert.deepEqual(await touched(page), { a: [], out: [] }); // guarded: thread 6 does nothing
      await screenshot(page, `puzzle-access-pass-${lang}-${width}`);
      await setDoc(page, solution.replace('if (i < N) {', 'if (true) {'));
      await runAndShow(page);
      assert.ok(await page.$('.editor-result .verdict.wrong'));
      assert.equal(await page.getAttribute('#puzzle-access-view', 'data-oob'), '8');
      await page.hover('button.inv[data-inv="6"]');
      assert.deepEqual(await touched(page), { a: [[6, 'r']], out: [[6, 'w']] });
      assert.equal(await page.$$eval('.access-strip td.acc-past.acc-write', (c) => c.length), 1);
      const noScroll = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(noScroll, `horizontal scroll at ${width}px`);
      await screenshot(page, `puzzle-access-fail-${lang}-${width}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}

test('2-D map: threads are named (x, y); a flattened guard shows elements written by two threads', async () => {
  const { page, context, errors } = await openPage(browser, '#/puzzles/map2d?lang=en');
  await editorReady(page, { runnable: true });
  await useSolution(page);
  const solution = await docText(page);
  await runAndShow(page);
  assert.equal(await page.$('#access-overwritten'), null);
  assert.equal(await page.textContent('button.inv[data-inv="6"]'), '(2, 1)');
  await page.hover('button.inv[data-inv="6"]');
  assert.match(await page.textContent('.access-selected'), /Thread \(2, 1\): 1 read, 1 write,/);
  // r * N + c < N * N lets thread (3, 0) write element 3, which (0, 1) writes too: the same
  // value, so every value matches; the access view says it is a race (and so does Run's
  // verdict, below).
  await setDoc(page, solution.replace('if (r < N && c < N)', 'if (r * N + c < N * N)'));
  await runAndShow(page);
  const warn = await page.waitForSelector('#access-overwritten');
  assert.equal(await warn.getAttribute('data-count'), '2');
  assert.match(await warn.textContent(), /out\[3\], by threads \(3, 0\) and \(0, 1\)\)/);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`2-D map: Run says a flattened guard is a race, not Solved; the true solution is Solved (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/puzzles/map2d?lang=${lang}`,
      { viewport: { width: 1280, height: 900 } });
    await editorReady(page, { runnable: true });
    await useSolution(page);
    const solution = await docText(page);
    await runEditor(page);
    await page.waitForSelector('.editor-result .verdict.ok');
    assert.equal(await page.$('#puzzle-race'), null);
    // Every value of the flattened guard's answer matches (both writers of out[3] write the
    // same), so only the race check can tell it from a solution.
    await setDoc(page, solution.replace('if (r < N && c < N)', 'if (r * N + c < N * N)'));
    await editorChecked(page);
    await runEditor(page);
    const race = await page.waitForSelector('.editor-result #puzzle-race.verdict.wrong');
    assert.equal(await page.$('.editor-result .verdict.ok'), null, 'not Solved');
    assert.equal(await race.getAttribute('data-index'), '3');
    assert.equal(await race.getAttribute('data-size'), '3');
    assert.match(await race.textContent(), lang === 'en'
      ? /out\[3\] is written by threads \(3, 0\) and \(0, 1\) at N = 3: a race/
      : /在 N = 3 时，out\[3\] 被线程 \(3, 0\) 和 \(0, 1\) 写入：这是竞争/);
    // The table below still shows every value right: the verdict says why that is not enough.
    assert.equal(await page.$$eval('.puzzle-out td.wrong, .puzzle-out td.unwritten', (c) => c.length), 0);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await screenshot(page, `puzzle-race-${lang}-${width}`);
    }
    assertNoErrors(errors);
    await context.close();
  });
}
