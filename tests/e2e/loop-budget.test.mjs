// No learner's kernel can wedge the GPU: the editor rewrites the learner's
// kernel so that every loop stops after an iteration budget derived from the problem size
// (wgsl-check's loop_budget, through editor.js's budgetLoops) and flags which loop did; the
// page then names the loop's line and never says "Correct". An endless loop, a nested endless
// loop and a long finite loop each end with that message (in a matmul stage; an endless loop
// in a conv stage's plan and in an MLP training step too) (no speed is asserted: the budget
// ends them, not the watchdog, which would say "timed-out"); the unmodified kernel is then
// verified, a second tab runs fine, and no GPU buffer is left alive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, assertNoErrors, setDoc, editorReady, editorChecked, runEditor, goto, docText,
  spinInHelpers,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const URL_EN = '#/editor?lang=en&stage=matmul-tiled&m=32&n=32&k=32';
const live = (page) => page.evaluate(() => window.gpuPlayground.debug_live_buffers());
const outcome = (page) => page.getAttribute('.editor-result', 'data-outcome');
const resultText = (page) => page.textContent('.editor-result');
/** 1-based line of the first line of `text` that contains `needle`. */
const lineOf = (text, needle) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

/** `original` with `code` put at the start of main's body (after `var acc = 0.0;`). */
function withCode(original, code) {
  const anchor = 'var acc = 0.0;';
  assert.ok(original.includes(anchor), 'the kernel has its accumulator');
  return original.replace(anchor, `${anchor}\n${code}`);
}

const CASES = [
  ['an endless while', '    var spin = 0u;\n    while (true) { c[0] = f32(spin); spin = spin + 1u; }', 'while (true)'],
  // Exits that never come at run time (a loop with no exit at all is refused by Chrome's
  // compiler when another loop encloses it).
  ['a nested endless loop', '    var spin = 0u;\n    loop {\n        while (dims.k > 0u) { c[1] = f32(spin); spin = spin + 1u; }\n        if (dims.m == 0u) { break; }\n    }', 'loop {'],
  ['a long finite loop', '    for (var i = 0u; i < 100000000u; i = i + 1u) { acc = acc + 1e-9; }', 'i < 100000000u'],
];

test('every loop of an edited kernel stops at its budget and is named by its line; the kernel, a second tab and the buffers are fine after', async () => {
  const { page, context, errors } = await openPage(browser, URL_EN);
  await editorReady(page, { runnable: true });
  const original = await docText(page);
  for (const [what, code, needle] of CASES) {
    const src = withCode(original, code);
    await setDoc(page, src);
    await runEditor(page, { timeout: 300_000 });
    assert.equal(await outcome(page), 'loop-stopped', `${what}: ${await resultText(page)}`);
    const line = lineOf(src, needle);
    assert.ok(line > 0);
    assert.equal(await page.getAttribute('.editor-result .loop-stopped', 'data-line'), String(line), what);
    assert.match(await resultText(page),
      new RegExp(`^The loop at line ${line} ran past [\\d,]+ iterations, so it was stopped; the result is not verified\\.$`), what);
    assert.equal(await page.$('.editor-result .verdict.ok'), null, `${what}: never "Correct"`);
    assert.equal(await docText(page), src, `${what}: the source is kept`);
  }
  // The unmodified kernel: verified.
  await page.click('.editor-actions .button:nth-child(2)'); // Reset
  await editorChecked(page);
  assert.equal(await docText(page), original);
  await runEditor(page, { timeout: 300_000 });
  assert.equal(await outcome(page), 'correct', await resultText(page));
  assert.equal(await page.textContent('.editor-result .verdict.ok p'), 'Correct: every element matches the CPU reference.');
  assert.equal(await live(page), 0, 'GPU buffers left alive in the first tab');
  // A second tab in the same browser context runs fine.
  const second = await context.newPage();
  const errors2 = [];
  second.on('pageerror', (e) => errors2.push(`pageerror: ${e.message}`));
  second.on('console', (m) => { if (m.type() === 'error') errors2.push(`console.error: ${m.text()}`); });
  await goto(second, URL_EN);
  await editorReady(second, { runnable: true });
  await runEditor(second, { timeout: 300_000 });
  assert.equal(await outcome(second), 'correct', await resultText(second));
  assert.equal(await live(second), 0, 'GPU buffers left alive in the second tab');
  assertNoErrors(errors);
  assertNoErrors(errors2);
  await context.close();
});

// Helpers' loops share one budget per thread: without that, a loop calling a helper that loops
// calling another that loops would cost the product of three budgets (editor-guards runs such a
// kernel with a barrier, where the shared counter cannot be used, against the watchdog).
test('loops in helper functions called from a loop share one budget: three levels end with the message', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=matmul-naive&m=32&n=32&k=32');
  await editorReady(page, { runnable: true });
  const src = spinInHelpers(await docText(page));
  await setDoc(page, src);
  await runEditor(page, { timeout: 300_000 });
  assert.equal(await outcome(page), 'loop-stopped', await resultText(page));
  // The innermost helper's loop spends the shared budget first; it comes first in the source.
  const line = lineOf(src, 'for (var i = 0u; i < 0xffffffffu');
  assert.equal(await page.getAttribute('.editor-result .loop-stopped', 'data-line'), String(line), await resultText(page));
  assert.equal(await live(page), 0);
  assertNoErrors(errors);
  await context.close();
});

/** `original` with `code` put at the start of its entry point `main`'s body. */
function atEntry(original, code) {
  const at = original.indexOf('fn main(');
  assert.ok(at >= 0, 'the kernel has its entry point');
  const open = original.indexOf('{', at);
  return `${original.slice(0, open + 1)}\n${code}${original.slice(open + 1)}`;
}

// Conv stages run a multi-kernel plan and MLP kernels a training session: the flag buffer is
// bound in the step (or dispatches) that run the learner's kernel, not only in one-step runs.
for (const stage of ['conv-direct', 'conv-implicit-gemm', 'optim-sgd']) {
  test(`an endless loop in ${stage} stops at its budget with its line; the unmodified kernel then verifies`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=en&stage=${stage}`);
    await editorReady(page, { runnable: true });
    const original = await docText(page);
    const src = atEntry(original, '    var spin = 0u;\n    while (true) { spin = spin + 1u; }');
    await setDoc(page, src);
    await runEditor(page, { timeout: 300_000 });
    assert.equal(await outcome(page), 'loop-stopped', await resultText(page));
    const line = lineOf(src, 'while (true)');
    assert.equal(await page.getAttribute('.editor-result .loop-stopped', 'data-line'), String(line), await resultText(page));
    assert.match(await resultText(page),
      new RegExp(`^The loop at line ${line} ran past [\\d,]+ iterations, so it was stopped; the result is not verified\\.$`));
    assert.equal(await page.$('.editor-result .verdict.ok'), null, 'never "Correct"');
    await page.click('.editor-actions .button:nth-child(2)'); // Reset
    await editorChecked(page);
    await runEditor(page, { timeout: 300_000 });
    assert.equal(await outcome(page), 'correct', await resultText(page));
    assert.equal(await live(page), 0, 'GPU buffers left alive');
    assertNoErrors(errors);
    await context.close();
  });
}

test('the loop message in Chinese', async () => {
  const { page, context, errors } = await openPage(browser, URL_EN.replace('lang=en', 'lang=zh'));
  await editorReady(page, { runnable: true });
  const original = await docText(page);
  const src = withCode(original, CASES[0][1]);
  await setDoc(page, src);
  await runEditor(page, { timeout: 300_000 });
  assert.equal(await outcome(page), 'loop-stopped', await resultText(page));
  const line = lineOf(src, 'while (true)');
  assert.match(await resultText(page), new RegExp(`^第 ${line} 行的循环超过了 [\\d,]+ 次迭代，因此被停下；结果未经验证。$`));
  assert.equal(await live(page), 0);
  assertNoErrors(errors);
  await context.close();
});
