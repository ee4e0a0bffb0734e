// What stops an edited kernel before or after it reaches the GPU: a binding or entry point
// that does not fit the page's buffers is named from naga's module info before any GPU call,
// and a kernel that runs far too long is cancelled by the watchdog (shortened here with the
// page's `watchdog=` test parameter), with the source kept and the page still working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, setDoc, editorReady, goto, editorChecked,
  runEditor, docText,
  spinInHelpers,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

for (const lang of ['en', 'zh']) {
  test(`binding mismatches are named before the GPU is asked (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&stage=matmul-naive&m=16&n=16&k=16`);
    await editorReady(page, { runnable: true });
    const original = await docText(page);
    const cases = [
      // A wrong binding number: the shader's 4 is not among the kernel's 0–3, and 2 is unbound.
      [original.replace('@binding(2) var<storage, read_write> c', '@binding(4) var<storage, read_write> c'), ['extra', 'missing'],
        lang === 'en' ? /Binding 4 \(group 0, “c”\) is used in your shader, but the kernel provides only these bindings in group 0: 0 a \(storage, read\), 1 b \(storage, read\), 2 c \(storage, read_write\), 3 dims \(uniform\)/
          : /你的着色器使用了绑定 4（组 0，“c”），但该内核在组 0 中只提供这些绑定：0 a/],
      // A missing entry point.
      [original.replace('fn main(', 'fn matmul('), ['no_entry'], lang === 'en' ? /no compute entry point named “main”.*found: matmul/ : /没有名为“main”的计算入口点/],
      // The wrong kind of buffer.
      [original.replace('var<storage, read> b: array<f32>', 'var<uniform> b: array<vec4<f32>, 4>').replace('b[p * dims.n + col]', 'b[p % 4u].x'),
        ['wrong_class'], lang === 'en' ? /Binding 1 \(“b”\) is declared as uniform in your shader, but the kernel binds storage, read there/ : /绑定 1（“b”）在你的着色器中声明为 uniform/],
    ];
    for (const [src, kinds, text] of cases) {
      await setDoc(page, src);
      await runEditor(page);
      const items = await page.$$eval('.binding-problems li', (li) => li.map((l) => [l.dataset.kind, l.textContent]));
      assert.deepEqual(items.map((i) => i[0]), kinds, JSON.stringify(items));
      assert.match(items[0][1], text);
    }
    await screenshot(page, `editor-bindings-${lang}-1280`);
    await page.setViewportSize({ width: 390, height: 900 });
    await screenshot(page, `editor-bindings-${lang}-390`);
    const noScroll = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    assert.ok(noScroll, 'horizontal scroll at 390px');
    // The original still runs: the check passes what fits.
    await setDoc(page, original);
    await runEditor(page);
    await page.waitForSelector('.editor-result .verdict.ok');
    assertNoErrors(errors);
    await context.close();
  });
}

test('the browser\'s own compiler messages are listed once with their place and underlined', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=matmul-naive&m=16&n=16&k=16');
  await editorReady(page, { runnable: true });
  const original = await docText(page);
  // naga accepts this; the browser's compiler (Tint) refuses a barrier in non-uniform
  // control flow. The Chinese comment before it on the same line tests UTF-16 columns.
  const line = '    /*每行一个线程*/ if (row == 0u) { workgroupBarrier(); }';
  const src = original.replace('    var acc = 0.0;', `${line}\n    var acc = 0.0;`);
  await setDoc(page, src);
  assert.equal(await page.$$eval('.cm-lintRange-error', (e) => e.length), 0, 'naga accepted it');
  await runEditor(page);
  // Listed once, in the editor's error list (the run's message list does not repeat it).
  await page.waitForSelector('#editor-errors button.editor-error[data-from="browser"]');
  assert.match(await page.textContent('.editor-result .message.error'), /browser's WGSL compiler rejected/);
  const items = await page.$$eval('#editor-errors button.editor-error[data-from^="browser"]', (b) => b.map((l) => ({
    line: +l.dataset.line, column: +l.dataset.column, text: l.textContent, place: l.querySelector('.place').textContent,
    error: l.dataset.from === 'browser' })));
  const lineNo = src.split('\n').indexOf(line) + 1;
  const column = line.indexOf('workgroupBarrier') + 1; // UTF-16 units, as JS counts
  const barrier = items.find((i) => i.error && /uniform/.test(i.text));
  assert.ok(barrier, JSON.stringify(items));
  assert.deepEqual([barrier.line, barrier.column], [lineNo, column], JSON.stringify(items));
  assert.equal(barrier.place, `line ${lineNo}, column ${column}`);
  // Underlined in the editor too, at that word.
  await screenshot(page, 'editor-browser-messages-en-1280');
  await page.waitForSelector('.cm-lintRange-error', { timeout: 10_000 });
  const marks = await page.$$eval('.cm-lintRange-error', (e) => e.map((m) => m.textContent));
  assert.ok(marks.includes('workgroupBarrier'), JSON.stringify(marks));
  await screenshot(page, 'editor-browser-messages-en-1280');
  assertNoErrors(errors);
  await context.close();
});

/** Counts the devices the page asks WebGPU for (`window.__devices`). */
const COUNT_DEVICES = () => {
  window.__devices = 0;
  if (!self.GPUAdapter) return;
  const request = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = function (...args) {
    window.__devices += 1;
    return request.apply(this, args);
  };
};

// Runs last in this file: the cancelled kernel may keep the software GPU busy a while.
// Every loop carries an iteration budget (loop-budget.test.mjs) and helpers' loops share one
// per-thread budget, except in a kernel with a barrier: there (WGSL's uniformity rules) each
// helper loop counts afresh on each call, so loops calling helpers that loop multiply their
// budgets. Such a kernel is what the budget cannot bound in time, and what the watchdog is for.
test('a kernel that runs far too long is stopped by the watchdog; the source stays, the next run is fresh and verified', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=matmul-naive&m=4&n=4&k=4&watchdog=3000',
    { initScript: COUNT_DEVICES });
  await editorReady(page, { runnable: true });
  const original = await docText(page);
  const endless = spinInHelpers(original, { barrier: true });
  await setDoc(page, endless);
  // The run's only way to a timed-out answer is the watchdog (no time is measured here: the
  // outcome and the limit it names are the behaviour).
  await runEditor(page);
  assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'timed-out', await page.textContent('.editor-result'));
  assert.match(await page.textContent('.editor-result .timed-out'), /did not finish within 3 s/);
  // The source is kept, the buttons answer, and the page still moves and edits.
  assert.equal(await docText(page), endless);
  assert.equal(await page.isDisabled('.editor-actions .button.primary'), false);
  await page.click('.editor-actions .button:nth-child(2)'); // Reset
  await editorChecked(page);
  assert.equal(await docText(page), original);
  // The watchdog dropped the device: the next run asks for a fresh one, and is verified. It
  // runs under the default watchdog: the 3 s one was for the endless kernel, and SwiftShader may
  // still be working off that kernel's submitted work (which no watchdog takes back), so 3 s
  // here would be a speed check on the machine.
  const devices = await page.evaluate(() => window.__devices);
  assert.ok(devices >= 1, `the endless run had a device (${devices} requested)`);
  await goto(page, '#/editor?lang=en&stage=matmul-naive&m=4&n=4&k=4');
  await editorReady(page, { runnable: true });
  assert.equal(await docText(page), original);
  await runEditor(page);
  assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'correct', await page.textContent('.editor-result'));
  assert.equal(await page.textContent('.editor-result .verdict.ok p'), 'Correct: every element matches the CPU reference.');
  assert.equal(await page.evaluate(() => window.__devices), devices + 1, 'the next run got a fresh device');
  await goto(page, '#/editor?lang=en&stage=conv-direct');
  await editorReady(page);
  await screenshot(page, 'editor-after-watchdog-en-1280');
  assertNoErrors(errors);
  await context.close();
});
