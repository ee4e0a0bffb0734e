// The editor's result belongs to the source it ran: after an edit it is marked stale (never a
// current green Correct) until the text is that source again or Run answers anew. And naga's
// message for a missing `;` names the line that lacks it, said once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, assertNoErrors, setDoc, editorReady, runEditor, docText,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const stale = (page) => page.getAttribute('.editor-result', 'data-stale');

for (const lang of ['en', 'zh']) {
  test(`a Correct result is stale after an edit and current again at its source (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-naive&m=32&n=32&k=32`);
    await editorReady(page, { runnable: true });
    const original = await docText(page);
    assert.equal(await stale(page), 'false');
    await runEditor(page);
    assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'correct');
    assert.equal(await stale(page), 'false');
    assert.equal(await page.locator('.editor-result .stale-note').count(), 0);
    // A syntax error typed after the run: the result is kept but marked as the old source's.
    const broken = original.replace('let col = gid.y;', 'let col = gid.y');
    assert.notEqual(broken, original);
    await setDoc(page, broken);
    await page.waitForSelector('.editor-result[data-stale="true"].stale');
    const note = await page.textContent('.editor-result .stale-note');
    assert.match(note, lang === 'en' ? /before your last edit.*run again/ : /上次修改之前.*再运行一次/);
    assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'correct', 'numbers kept');
    assert.ok(await page.locator('.editor-result .verdict.ok').count() === 1, 'the old verdict stays visible');
    const opacity = await page.$eval('.editor-result .verdict.ok', (el) => {
      let o = 1;
      for (let e = el; e && !e.classList.contains('editor-result'); e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
      return o;
    });
    assert.ok(opacity < 1, `stale verdict dimmed: ${opacity}`);

    // naga's message: the missing `;` is on the `let col` line (not the `if` after it), once.
    const mark = await page.waitForSelector('.cm-lintRange-error', { timeout: 30_000 });
    const where = await mark.evaluate((el) => ({ line: el.closest('.cm-line').textContent, text: el.textContent }));
    assert.deepEqual(where, { line: '    let col = gid.y', text: 'y' });
    await mark.hover();
    const message = await page.waitForSelector('.cm-tooltip-lint .cm-diagnosticText', { timeout: 10_000 });
    const text = await message.textContent();
    assert.match(text, /expected `;`/);
    assert.equal(text.split('expected `;`').length - 1, 1, `said once: ${text}`);

    // Back to exactly the source that ran: the result is current again.
    await setDoc(page, original);
    await page.waitForSelector('.editor-result[data-stale="false"]:not(.stale)');
    assert.equal(await page.locator('.editor-result .stale-note').count(), 0);
    assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'correct');
    // Run refused on the broken text: that answer belongs to the broken text, current at once.
    await setDoc(page, broken);
    await runEditor(page);
    assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'has-errors');
    assert.equal(await stale(page), 'false');
    assertNoErrors(errors);
    await context.close();
  });
}
