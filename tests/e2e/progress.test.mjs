// A learner's progress carried to another device: solved puzzles and drafts saved to a file
// and as a share code, imported in a fresh browser (another device); a corrupt, foreign or
// cut-short import is refused in words and loses nothing. Both languages, three widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, editorReady, editorChecked, runEditor, docText, goto,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const SOLVED = 'gpu-playground.puzzles.solved';

/** The exported file, as the Save link would download it. */
async function exported(page) {
  const href = await page.getAttribute('a.progress-export', 'href');
  assert.match(href, /^data:application\/json;charset=utf-8,/);
  return decodeURIComponent(href.slice(href.indexOf(',') + 1));
}

async function importFile(page, text, name = 'gpu-playground-progress.json') {
  await page.setInputFiles('input.progress-file', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
}

async function status(page) {
  await page.waitForSelector('.progress-status [data-ok]');
  const el = await page.$('.progress-status [data-ok]');
  return { ok: (await el.getAttribute('data-ok')) === 'true', text: await el.textContent() };
}

test('a solved puzzle and its draft survive export and import, by file and by code', async () => {
  // Device 1: solve "map" with its own solution (Show solution, Use it).
  const one = await openPage(browser, '#/puzzles/map?lang=en');
  await editorReady(one.page, { runnable: true });
  await one.page.click('.solution .button');
  await one.page.click('.solution .button');
  await editorChecked(one.page, { includes: 'a[i] + 10' });
  const solution = await docText(one.page);
  await runEditor(one.page);
  await one.page.waitForFunction((k) => (localStorage.getItem(k) ?? '').includes('map'), SOLVED);
  await goto(one.page, '#/puzzles?lang=en');
  await one.page.waitForSelector('a.progress-export');
  const file = await exported(one.page);
  const parsed = JSON.parse(file);
  assert.equal(parsed.format, 'gpu-playground-progress');
  assert.equal(parsed.version, 1);
  assert.equal(parsed.items[SOLVED], 'map');
  assert.equal(parsed.items['gpu-playground.draft.puzzle.map'], solution);
  await one.page.click('.progress-show-code');
  const code = await one.page.inputValue('.progress-code-out');
  assert.match(code, /^GPP1-[A-Za-z0-9_-]+$/);
  assertNoErrors(one.errors);
  await one.context.close();

  // Device 2 (a fresh browser): nothing solved; the file brings it back.
  for (const how of ['file', 'code']) {
    const two = await openPage(browser, '#/puzzles?lang=en');
    await two.page.waitForSelector('a.progress-export');
    assert.equal(await two.page.$('.puzzle-list a[data-puzzle="map"] + .badge'), null);
    if (how === 'file') {
      await importFile(two.page, file);
    } else {
      await two.page.fill('.progress-code-in', code);
      await two.page.click('.progress-import-code');
    }
    const s = await status(two.page);
    assert.ok(s.ok, s.text);
    assert.match(s.text, /1 puzzle newly solved, 1 draft added/);
    await two.page.waitForSelector('.puzzle-list a[data-puzzle="map"] + .badge.ok');
    await goto(two.page, '#/puzzles/map?lang=en');
    await editorReady(two.page);
    assert.equal(await docText(two.page), solution, `${how}: the draft came with it`);
    assertNoErrors(two.errors);
    await two.context.close();
  }
});

for (const lang of ['en', 'zh']) {
  test(`a corrupt, foreign, newer or cut-short import is refused in words and loses nothing (${lang})`, async () => {
    for (const width of [390, 1280, 1920]) {
      const { page, context, errors } = await openPage(browser, `#/puzzles?lang=${lang}`, {
        viewport: { width, height: 900 },
        initScript: () => {
          if (!localStorage.getItem('gpu-playground.puzzles.solved')) {
            localStorage.setItem('gpu-playground.puzzles.solved', 'zip');
            localStorage.setItem('gpu-playground.draft.puzzle.zip', '// mine');
          }
        },
      });
      await page.waitForSelector('.puzzle-list a[data-puzzle="zip"] + .badge.ok');
      const good = await exported(page);
      const before = await page.evaluate(() => JSON.stringify(Object.entries(localStorage).sort()));
      const cases = [
        ['{"format":"gpu-playground-progress","version":1,"chec', lang === 'zh' ? /不是进度文件/ : /not a progress file/],
        ['{"name":"holiday photo","size":3}', lang === 'zh' ? /不是 GPU 游乐场的进度文件/ : /not a GPU Playground progress file/],
        [good.replace('"version":1', '"version":7'), lang === 'zh' ? /第 7 版/ : /version 7/],
        [good.replace('// mine', '// someone else'), lang === 'zh' ? /校验和不符/ : /checksum does not match/],
      ];
      for (const [text, want] of cases) {
        const previous = await page.evaluate(() => document.querySelector('.progress-status [data-ok]')?.textContent ?? '');
        await importFile(page, text);
        await page.waitForFunction((w) => (document.querySelector('.progress-status [data-ok="false"]')?.textContent ?? w) !== w,
          previous);
        const s = await status(page);
        assert.equal(s.ok, false);
        assert.match(s.text, want);
      }
      await page.click('.progress-show-code');
      const code = await page.inputValue('.progress-code-out');
      await page.fill('.progress-code-in', code.slice(0, code.length - 12));
      await page.click('.progress-import-code');
      await page.waitForFunction(() => /GPP1|code|代码/.test(document.querySelector('.progress-status [data-ok="false"]')?.textContent ?? ''));
      const s = await status(page);
      assert.match(s.text, lang === 'zh' ? /不是完整的进度代码/ : /not a complete progress code/);
      assert.equal(await page.evaluate(() => JSON.stringify(Object.entries(localStorage).sort())), before,
        'nothing in storage changed');
      await page.waitForSelector('.puzzle-list a[data-puzzle="zip"] + .badge.ok');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
      await page.locator('.progress-transfer').scrollIntoViewIfNeeded();
      await screenshot(page, `progress-${lang}-${width}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}
