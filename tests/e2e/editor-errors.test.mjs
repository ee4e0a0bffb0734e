// The editor's error list: on a phone the underline's marker gives nothing to tap and the
// line may be scrolled away, so naga's errors are listed under the editor, one button each
// ("line L, column C" and the message); a tap puts the cursor on that line, scrolls it into
// view and focuses the editor. The list follows the text as it is typed and goes when the
// errors do; Run's refusal points at it. The same list on the editor, a puzzle and scratch
// mode (one shared component). 390 px with touch in en and zh, and 1280/1920 px shots.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  launch, openPage, screenshot, assertNoErrors, setDoc, docText, editorReady,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
/** The whole page, and the editor with its list up close. */
async function shots(page, name) {
  await screenshot(page, name);
  await page.locator('.code-editor').screenshot({ path: join(OUT, `${name}-editor.png`) });
}

const PLACE = {
  en: (l, c) => `line ${l}, column ${c}`,
  zh: (l, c) => `第 ${l} 行，第 ${c} 列`,
};
const REFUSED = { en: /listed under the editor/, zh: /编辑器下方列出/ };

/** `original` with a syntax error (`1.0 +;`) on a line far below the first screen of the
 * editor; returns the text and that 1-based line. */
function breakFarDown(original) {
  const padding = Array.from({ length: 60 }, (_, i) => `// padding ${i + 1}`).join('\n');
  const head = `${original.trimEnd()}\n${padding}\nfn broken() -> f32 {\n`;
  const line = head.split('\n').length;
  return { text: `${head}    return 1.0 +;\n}\n`, line };
}

/** Where the cursor is and whether its line is on screen: inside the page's viewport and
 * inside the editor's own scroller; and whether the editor has the focus. */
async function cursorState(page) {
  return page.$eval('.cm-host', (host) => {
    const root = host.shadowRoot;
    const line = root.querySelector('.cm-activeLine');
    const scroller = root.querySelector('.cm-scroller').getBoundingClientRect();
    const r = line?.getBoundingClientRect();
    const inView = !!r && r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight
      && r.top >= scroller.top - 1 && r.bottom <= scroller.bottom + 1;
    return {
      line: host.cursorLine(),
      text: line?.textContent ?? '',
      inView,
      focused: document.activeElement === host && !!root.activeElement?.classList.contains('cm-content'),
    };
  });
}

/** Breaks the kernel far down, waits for its row in the list and checks what it says; returns
 * the row's selector and the broken line. */
async function listedError(page, lang) {
  const original = await docText(page);
  const { text, line } = breakFarDown(original);
  await setDoc(page, text);
  const row = `.editor-errors .editor-error[data-line="${line}"]`;
  await page.waitForSelector(row, { timeout: 30_000 });
  const column = Number(await page.getAttribute(row, 'data-column'));
  assert.ok(column >= 1, `column ${column}`);
  const said = await page.textContent(row);
  assert.ok(said.includes(PLACE[lang](line, column)), `row says: ${said}`);
  return { original, row, line };
}

/** Taps the row (after moving the cursor to the top, so the line is out of sight) and waits
 * until the cursor is on `line`, that line is in view and the editor has the focus. */
async function tapAndLand(page, row, line) {
  await page.tap('.cm-content');
  await page.keyboard.press('Control+Home');
  await page.waitForFunction(() => document.querySelector('.cm-host').cursorLine() === 1);
  const before = await cursorState(page);
  assert.equal(before.line, 1);
  await page.tap(row);
  await page.waitForFunction((l) => document.querySelector('.cm-host').cursorLine() === l, line, { timeout: 10_000 });
  // The scroll happens in CodeMirror's next measure, a frame after the cursor moves.
  await page.waitForFunction(() => {
    const host = document.querySelector('.cm-host');
    const r = host.shadowRoot.querySelector('.cm-activeLine')?.getBoundingClientRect();
    return !!r && r.top >= 0 && r.bottom <= window.innerHeight;
  }, null, { timeout: 10_000 }).catch(() => {});
  const after = await cursorState(page);
  assert.equal(after.line, line, 'cursor line after the tap');
  assert.match(after.text, /return 1\.0 \+;/);
  assert.ok(after.inView, `line ${line} is not in view after the tap`);
  assert.ok(after.focused, 'the editor has the focus after the tap');
}

async function noSideScroll(page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow} px`);
}

for (const lang of ['en', 'zh']) {
  test(`a phone: the error list jumps to a far-down error and goes when it is fixed (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-naive&m=32&n=32&k=32`,
      { viewport: { width: 390, height: 844 }, touch: true });
    await editorReady(page, { runnable: true });
    assert.equal(await page.$('.editor-errors'), null, 'no list while the kernel checks clean');
    const { original, row, line } = await listedError(page, lang);
    const box = await page.locator(row).boundingBox();
    assert.ok(box.height >= 44 && box.x >= 0 && box.x + box.width <= 390, `row box ${JSON.stringify(box)}`);
    await noSideScroll(page);
    // Run refuses and says where the errors are.
    await page.tap('.editor-actions .button.primary');
    await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('.editor-result [role="alert"]')?.textContent ?? ''),
      REFUSED[lang].source, { timeout: 30_000 });
    await tapAndLand(page, row, line);
    await shots(page, `editor-errors-${lang}-390`);
    // Fixed: the list goes.
    await setDoc(page, original);
    await page.waitForSelector('.editor-errors', { state: 'detached', timeout: 30_000 });
    assertNoErrors(errors);
    await context.close();
  });

  test(`the error list at 1280 and 1920 px (${lang})`, async () => {
    for (const width of [1280, 1920]) {
      const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-naive`,
        { viewport: { width, height: 900 } });
      await editorReady(page);
      const { row, line } = await listedError(page, lang);
      await page.keyboard.press('Control+Home');
      await page.click(row);
      await page.waitForFunction((l) => document.querySelector('.cm-host').cursorLine() === l, line, { timeout: 10_000 });
      await noSideScroll(page);
      await shots(page, `editor-errors-${lang}-${width}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}

test('the same list on a puzzle and in scratch mode (390 px, touch)', async () => {
  for (const route of ['#/puzzles/dot?lang=en', '#/editor?lang=zh&scratch']) {
    const lang = route.includes('zh') ? 'zh' : 'en';
    const { page, context, errors } = await openPage(browser, route, { viewport: { width: 390, height: 844 }, touch: true });
    await editorReady(page);
    const { original, row, line } = await listedError(page, lang);
    await tapAndLand(page, row, line);
    await noSideScroll(page);
    await setDoc(page, original);
    // The starting text may have its own errors (a puzzle's TODO): the far-down one goes.
    await page.waitForSelector(row, { state: 'detached', timeout: 30_000 });
    assertNoErrors(errors);
    await context.close();
  }
});
