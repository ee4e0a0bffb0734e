// The browser's own WGSL compiler's messages join naga's in the error list under the editor
// (one list, tap to jump): a kernel naga accepts and the browser (Tint) refuses — a barrier in
// non-uniform control flow — lists the browser's error at its line and column after Run, and
// shows it only there: once on the page, not again in the run's message list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, assertNoErrors, setDoc, docText, editorReady, runEditor,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const out = (name) => `${process.env.TEST_OUTPUT ?? 'test-output'}/${name}.png`;
const FROM = { en: /the browser's compiler \(at the last run\):/, zh: /浏览器自己的编译器（上次运行时）：/ };
const PLACE = { en: (l, c) => `line ${l}, column ${c}`, zh: (l, c) => `第 ${l} 行，第 ${c} 列` };

for (const lang of ['en', 'zh']) {
  test(`the browser compiler's error is in the editor's error list, and a tap jumps to it (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-naive&m=16&n=16&k=16`);
    await editorReady(page, { runnable: true });
    const original = await docText(page);
    const line = '    if (row == 0u) { workgroupBarrier(); }';
    const src = original.replace('    var acc = 0.0;', `${line}\n    var acc = 0.0;`);
    await setDoc(page, src);
    assert.equal(await page.$('#editor-errors'), null, 'naga accepts it: no list yet');
    await runEditor(page);
    const entry = page.locator('#editor-errors button.editor-error[data-from="browser"]').first();
    await entry.waitFor();
    const lineNo = src.split('\n').indexOf(line) + 1;
    const column = line.indexOf('workgroupBarrier') + 1;
    assert.deepEqual([await entry.getAttribute('data-line'), await entry.getAttribute('data-column')], [String(lineNo), String(column)]);
    const text = await entry.textContent();
    assert.match(text, FROM[lang]);
    assert.ok(text.includes(PLACE[lang](lineNo, column)), text);
    assert.match(text, /uniform/);
    // Shown once: the error's text is nowhere else on the page.
    const message = (await entry.locator('.text').textContent()).trim();
    const times = await page.evaluate((m) => document.querySelector('main').innerText.split(m).length - 1, message);
    assert.equal(times, 1, `"${message}" is shown ${times} times`);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator('.code-editor').screenshot({ path: out(`editor-errors-browser-${width}-${lang}`) });
    }
    // Put the cursor elsewhere, then tap the entry: the cursor goes to the browser's line.
    await page.click('.cm-content');
    await page.keyboard.press('Control+Home');
    await entry.click();
    await page.waitForFunction((l) => document.querySelector('.cm-host').cursorLine() === l, lineNo);
    assertNoErrors(errors);
    await context.close();
  });
}
