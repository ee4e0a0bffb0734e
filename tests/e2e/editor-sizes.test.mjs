// The editor's problem sizes: M, N and K are fields on the page (kept in the URL), a bad value
// is named at its field, a result for other sizes is marked stale, and every matmul edit is
// also checked at a second size that stops short of every tile edge — so a kernel whose
// store guard was removed is not "Correct" just because 256 is a multiple of its tile.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, resizeTo, screenshot, assertNoErrors, setDoc, editorReady, runEditor, docText,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const result = (page, attr) => page.getAttribute('.editor-result', `data-${attr}`);
const GUARD = 'if (row < dims.m && col < dims.n) {';

for (const lang of ['en', 'zh']) {
  test(`a kernel without its store guard is wrong at the second size, and says so (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-tiled`);
    await editorReady(page, { runnable: true });
    for (const d of ['m', 'n', 'k']) assert.equal(await page.inputValue(`#editor-dim-${d}`), '256');
    const original = await docText(page);
    assert.ok(original.includes(GUARD), 'the tiled kernel guards its store');
    await setDoc(page, original.replace(GUARD, 'if (true) {'));
    await runEditor(page);
    assert.equal(await result(page, 'outcome'), 'wrong');
    assert.equal(await result(page, 'edge'), 'failed');
    const note = await page.textContent('.editor-result .edge-note');
    const edge = note.match(/(\d+)×(\d+)×(\d+)/g);
    assert.equal(edge.length, 2, note);
    assert.equal(edge[0], '256×256×256', note);
    for (const d of edge[1].split('×').map(Number)) assert.ok(d % 2 === 1 && d >= 33 && d <= 159, note);
    assert.match(note, lang === 'en' ? /^Right at 256×256×256, but not at \d+×\d+×\d+/ : /^在 256×256×256 上正确，但在 \d+×\d+×\d+ 上不正确/);
    // The map and the count are the second size's.
    const [em, en] = edge[1].split('×').map(Number);
    // (At most 64 cells a side: a cell stands for ⌈m / 64⌉ rows.)
    const rows = Math.ceil(em / Math.max(1, Math.ceil(em / 64)));
    assert.equal(await page.getAttribute('.wrong-map-canvas', 'data-rows'), String(rows));
    assert.match(await page.textContent('.verdict.wrong [role="alert"]'), new RegExp(`of ${(em * en).toLocaleString('en')}|${em * en}`));
    await screenshot(page, `editor-edge-failed-${lang}`);
    // The kernel as shipped: right at both sizes.
    await setDoc(page, original);
    await runEditor(page);
    assert.equal(await result(page, 'outcome'), 'correct');
    assert.equal(await result(page, 'edge'), 'passed');
    assert.match(await page.textContent('.editor-result .edge-note'),
      lang === 'en' ? /^Also right at \d+×\d+×\d+/ : /^在 \d+×\d+×\d+ 上也正确/);
    assertNoErrors(errors);
    await context.close();
  });
}

test('the size fields: a bad value is named and Run waits; a new size goes to the URL and marks the result stale', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=matmul-naive&m=32&n=32&k=32');
  await editorReady(page, { runnable: true });
  await runEditor(page);
  assert.equal(await result(page, 'outcome'), 'correct');
  assert.equal(await result(page, 'stale'), 'false');
  await page.fill('#editor-dim-m', 'abc');
  await page.waitForFunction(() => document.querySelector('#editor-dim-m-error')?.textContent.trim().length > 0);
  assert.equal(await page.getAttribute('#editor-dim-m', 'aria-invalid'), 'true');
  assert.ok(await page.$eval('#editor-run', (b) => b.disabled), 'Run waits for a good size');
  // The old result says whose it is, without asking for a run Run cannot start.
  assert.match(await page.textContent('.editor-result .stale-note'), /This result is for 32×32×32; the sizes above are not valid yet/);
  // Too large for the editor: its own ceiling is named, once, at the field (not the Kernels
  // page's 8,192 beside a refusal at 1,024).
  for (const big of ['2000', '9000']) {
    await page.fill('#editor-dim-m', big);
    await page.waitForFunction((b) => new URLSearchParams(location.hash.split('?')[1]).get('m') === b, big);
    assert.equal(await page.textContent('#editor-dim-m-error'),
      'Sizes above 1,024 per side are refused in the editor: every element is checked on the CPU.');
    assert.doesNotMatch(await page.textContent('main'), /8,192|8192/);
  }
  // Out of range below, too: the range named is the editor's.
  await page.fill('#editor-dim-m', '0');
  await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1]).get('m') === '0');
  assert.match(await page.textContent('#editor-dim-m-error'), /1,024/);
  assert.doesNotMatch(await page.textContent('main'), /8,192|8192/);
  await page.fill('#editor-dim-m', '100');
  await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1]).get('m') === '100');
  await page.waitForSelector('.editor-result[data-stale="true"]');
  assert.match(await page.textContent('.editor-result .stale-note'), /This result is for 32×32×32, not the sizes above/);
  assert.equal(await page.textContent('#editor-dim-m-error'), '');
  await runEditor(page);
  assert.equal(await result(page, 'stale'), 'false');
  assert.match(await page.textContent('.editor-times'), /100×32×32/);
  assertNoErrors(errors);
  await context.close();
});

test('the editor with its size fields fits 390, 1280 and 1920 px in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    // One editor load per language, opened at 390 px and resized: the layout is checked at
    // each width; loading the editor again for each width checked nothing more.
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-tiled&m=64&n=64&k=64`,
      { viewport: { width: 390, height: 900 } });
    await editorReady(page, { runnable: true });
    for (const width of [390, 1280, 1920]) {
      await resizeTo(page, width);
      await editorReady(page, { runnable: true });
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(wide <= width, `${lang} ${width} px: the page is ${wide} px wide`);
      await page.locator('.editor-sizes').scrollIntoViewIfNeeded();
      await screenshot(page, `editor-sizes-${lang}-${width}`);
      assertNoErrors(errors);
    }
    await context.close();
  }
});
