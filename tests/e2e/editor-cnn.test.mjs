// "Edit this kernel" for the CNN (issue 24): a CNN kernel opens in the editor and runs in the
// real training step of a small seeded network (no digits asset), in lockstep with the CPU
// twin; the input gradient as shipped is correct, the same kernel without its 180° filter
// turn is wrong with the wrong elements named by their buffer, and an endless loop in it is
// stopped by the loop budget and named by its line, never "Correct".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, assertNoErrors, setDoc, editorReady, runEditor, docText, screenshot,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const STAGE = 'cnn-conv-input-grad';
const outcome = (page) => page.getAttribute('.editor-result', 'data-outcome');
const resultText = (page) => page.textContent('.editor-result');
/** 1-based line of the first line of `text` that contains `needle`. */
const lineOf = (text, needle) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
const ROTATED = 'params[w + (last - rp) * u.k + (last - sp)]';

test('the CNN input gradient: correct as shipped, wrong without its flip, named by buffer', async () => {
  const { page, context, errors } = await openPage(browser, `#/editor?lang=en&stage=${STAGE}`);
  await page.waitForSelector(`.editor-page[data-stage="${STAGE}"]`);
  await editorReady(page, { runnable: true });
  const groups = await page.$$eval('.editor-group-name', (g) => g.map((e) => e.textContent));
  assert.ok(groups.includes('Training (CNN)'), JSON.stringify(groups));
  assert.match(await page.textContent('.editor-context'), /small CNN/);
  // Explained as on the CNN page: what it computes, and how its threads map to indices.
  const explained = await page.textContent('#editor-cnn-mapping');
  assert.match(explained, /How threads map to indices/);
  assert.match(explained, /One thread per input element, i = \(\(n·C_in \+ c\)·H \+ y\)·H \+ x/);
  const original = await docText(page);
  assert.ok(original.includes(ROTATED), 'the shipped kernel reads the turned tap');

  await runEditor(page);
  assert.equal(await outcome(page), 'correct', await resultText(page));
  assert.equal(await page.textContent('.editor-result .verdict.ok p'),
    'Correct: every element matches the CPU reference.');

  await setDoc(page, original.replace(ROTATED, 'params[w + rp * u.k + sp]'));
  await runEditor(page);
  assert.equal(await outcome(page), 'wrong', await resultText(page));
  assert.match(await page.textContent('.verdict.wrong p'), /Wrong: \d+ of \d+ elements differ/);
  const rows = await page.$$eval('.differences tbody tr', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
  assert.ok(rows.length > 0, 'the wrong elements are listed');
  // The input gradient writes deltas: the first wrong elements are there, by buffer name.
  assert.match(rows[0][0], /^deltas\[\d+\]$/, JSON.stringify(rows));
  for (const [name, expected, got] of rows) assert.notEqual(expected, got, `${name}: ${expected} vs ${got}`);
  assert.ok(await page.$eval('.wrong-map-canvas', (c) => +c.dataset.marked) > 0);
  await screenshot(page, 'editor-cnn-wrong-en-1280');
  assertNoErrors(errors);
  await context.close();
});

test('an endless loop in a CNN kernel stops at its budget and is named by its line', async () => {
  const { page, context, errors } = await openPage(browser, `#/editor?lang=en&stage=${STAGE}`);
  await editorReady(page, { runnable: true });
  const original = await docText(page);
  const anchor = 'var acc = 0.0;';
  assert.ok(original.includes(anchor));
  const src = original.replace(anchor, `${anchor}\n    var spin = 0u;\n    while (true) { spin = spin + 1u; }`);
  await setDoc(page, src);
  await runEditor(page, { timeout: 300_000 });
  assert.equal(await outcome(page), 'loop-stopped', await resultText(page));
  const line = lineOf(src, 'while (true)');
  assert.equal(await page.getAttribute('.editor-result .loop-stopped', 'data-line'), String(line), await resultText(page));
  assert.match(await resultText(page),
    new RegExp(`^The loop at line ${line} ran past [\\d,]+ iterations, so it was stopped; the result is not verified\\.$`));
  assert.equal(await page.$('.editor-result .verdict.ok'), null, 'never "Correct"');
  assertNoErrors(errors);
  await context.close();
});
