// The browser's own WGSL compiler on a puzzle and in scratch mode: a kernel naga accepts but
// the browser (Tint) refuses — a barrier inside an `if` that differs between threads — is
// answered with the compiler's messages placed at their line and column in the editor's
// error list, the page's plain-language reading of the uniformity rule, and no raw WebGPU
// error ("Invalid ComputePipeline…"). Scratch mode also refuses a launch of more workgroups
// in all than it runs, before anything reaches the GPU.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, assertNoErrors, setDoc, docText, editorReady, editorChecked, runEditor, screenshot,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const HINT = { en: /barrier.*every thread of the workgroup/, zh: /屏障.*工作组的每个线程/ };
const REJECTED = { en: /rejected the kernel/, zh: /拒绝了这个内核/ };
const RAW = /Invalid|ComputePipeline|BindGroup|\[object/;

for (const lang of ['en', 'zh']) {
  test(`a puzzle whose barrier sits in non-uniform control flow gets the browser's placed messages and the rule in words (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/puzzles/shared?lang=${lang}`);
    await editorReady(page, { runnable: true });
    // The natural mistake: only the threads with an element wait at the barrier.
    const wrong = [
      '    if (i < N) {',
      '        tile[l] = a[i];',
      '        workgroupBarrier();',
      '        out[i] = tile[TPB - 1u - l] + 10.0;',
      '    }',
    ].join('\n');
    const starter = await docText(page);
    // The starter's hole is its TODO comment line(s) inside main.
    const lines = starter.split('\n');
    const todo = lines.findIndex((l) => l.includes('TODO'));
    assert.ok(todo >= 0, `the starter has a TODO to fill:\n${starter}`);
    const src = [...lines.slice(0, todo), wrong, ...lines.slice(todo + 1)].join('\n');
    await setDoc(page, src);
    await editorChecked(page, { includes: 'if (i < N)' });
    assert.equal(await page.$('#editor-errors'), null, 'naga accepts it: no list before Run');
    await runEditor(page);
    const result = await page.textContent('.editor-result');
    assert.match(result, REJECTED[lang], result);
    assert.match(result, HINT[lang], result);
    assert.doesNotMatch(result, RAW, result);
    // The browser's error is in the editor's list at the barrier's line and column.
    const entry = page.locator('#editor-errors button.editor-error[data-from="browser"]').first();
    await entry.waitFor();
    const lineNo = src.split('\n').findIndex((l) => l.includes('workgroupBarrier();')) + 1;
    const column = src.split('\n')[lineNo - 1].indexOf('workgroupBarrier') + 1;
    assert.deepEqual(
      [await entry.getAttribute('data-line'), await entry.getAttribute('data-column')],
      [String(lineNo), String(column)],
    );
    // Not solved; the solution still passes afterwards (the page recovered).
    assert.equal(await page.$('.editor-result .verdict.ok'), null);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await screenshot(page, `puzzle-compiler-${lang}-${width}`);
    }
    await page.click('.solution .button');
    await page.click('.solution .button');
    await editorChecked(page, { includes: 'tile[l] = a[i];\n    workgroupBarrier();' });
    await runEditor(page);
    assert.ok(await page.$('.editor-result .verdict.ok'), await page.textContent('.editor-result'));
    assert.equal(await page.$('#editor-errors button[data-from="browser"]'), null, 'the old messages are gone');
    // No barrier at all: right values on a GPU that runs the workgroup in lockstep, but luck.
    const solved = await docText(page);
    const unsafe = solved.replace(/\n\s*workgroupBarrier\(\);/, '');
    assert.notEqual(unsafe, solved);
    await setDoc(page, unsafe);
    await editorChecked(page, { includes: 'tile[TPB - 1u - l]' });
    await runEditor(page);
    const luck = await page.textContent('.editor-result');
    assert.match(luck, lang === 'en' ? /never calls workgroupBarrier\(\).*luck, not a solution/ : /没有调用 workgroupBarrier\(\).*不算解出/, luck);
    assert.equal(await page.$('.editor-result .verdict.ok'), null, 'not solved');
    assertNoErrors(errors);
    await context.close();
  });
}

test('scratch mode: the browser compiler\'s refusal is placed and explained; too many workgroups in all are refused before the GPU', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&scratch');
  await page.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  const starter = await docText(page);
  const src = starter.replace(/(fn main\(.*\)\s*\{)/, '$1\n    if (id.x == 0u) { workgroupBarrier(); }');
  assert.notEqual(src, starter, 'the starter has a main to add to');
  await setDoc(page, src);
  await editorChecked(page, { includes: 'workgroupBarrier' });
  await page.click('.editor-actions .button.primary');
  await page.waitForSelector('.scratch-result .message.error', { timeout: 120_000 });
  const result = await page.textContent('.scratch-result');
  assert.match(result, REJECTED.en, result);
  assert.match(result, HINT.en, result);
  assert.doesNotMatch(result, RAW, result);
  await page.locator('#editor-errors button.editor-error[data-from="browser"]').first().waitFor();
  // 65,535 × 65,535 workgroups: each axis is allowed, the product is not.
  for (const axis of ['x', 'y']) {
    await page.fill(`.scratch-group[data-axis="${axis}"]`, '65535');
    await page.dispatchEvent(`.scratch-group[data-axis="${axis}"]`, 'change');
  }
  const err = await page.waitForSelector('.scratch-errors li[data-error="scratch.err.groups_total"]');
  assert.match(await err.textContent(), /4,294,836,225 workgroups in all.*at most 1,048,576/);
  assert.equal(await page.isDisabled('.editor-actions .button.primary'), true, 'Run is off');
  assertNoErrors(errors);
  await context.close();
});
