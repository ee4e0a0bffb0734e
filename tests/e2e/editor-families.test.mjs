// "Edit this kernel" beyond the matmul ladder: every conv stage, the MLP's kernels and the
// measuring kernels open in the editor from the page that shows them, the original passes its
// family's CPU check, and a planted mistake fails with the wrong elements named in the
// family's terms and marked on the output's picture.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, assertSameOrigin, setDoc, editorReady, goto,
  runEditor, docText,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Waits until the editor shows `stage` (its own page, editor mounted, Run enabled). */
async function stageReady(page, stage) {
  await page.waitForSelector(`.editor-page[data-stage="${stage}"] .code-editor[data-ready="true"] .cm-content`, { timeout: 60_000 });
  await page.waitForSelector(`.editor-page[data-stage="${stage}"] .editor-actions .button.primary:not([disabled])`, { timeout: 60_000 });
}

async function verdict(page) {
  return page.$eval('.editor-result', (e) => e.textContent);
}

/** Runs the original, then `edit(original)`; returns the wrong run's table and map. */
async function originalPassesEditFails(page, edit) {
  const original = await docText(page);
  await runEditor(page);
  assert.equal(await page.textContent('.editor-result .verdict.ok p'), 'Correct: every element matches the CPU reference.',
    await verdict(page));
  assert.match(await page.textContent('.editor-times'), /original/);
  const edited = edit(original);
  assert.notEqual(edited, original, 'the planted mistake did not apply');
  await setDoc(page, edited);
  await runEditor(page);
  const wrong = await page.textContent('.verdict.wrong p');
  const rows = await page.$$eval('.differences tbody tr', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
  const map = await page.$eval('.wrong-map-canvas', (c) => ({
    rows: +c.dataset.rows, cols: +c.dataset.cols, marked: +c.dataset.marked, width: c.width, height: c.height,
    red: (() => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] > 199 && d[i + 1] < 100) n++;
      return n;
    })(),
  }));
  return { wrong, rows, map };
}

test('every kernel page links to the editor, and each link opens that kernel', async () => {
  const { page, context, errors } = await openPage(browser, '#/conv?lang=en');
  await page.waitForSelector('a.edit-kernel[data-edit="conv-direct"]');
  await goto(page, '#/train?lang=en');
  // The kernels' sources sit in a closed <details> on the train page: present, not shown.
  await page.waitForSelector('a.edit-kernel[data-edit^="mlp-"]', { state: 'attached' });
  for (const [lesson, ids] of [['simt', ['measure-divergent']], ['memory', ['measure-strided']], ['roofline', ['measure-copy', 'measure-fma']]]) {
    await goto(page, `#/learn/${lesson}?lang=en`);
    for (const id of ids) await page.waitForSelector(`a.edit-kernel[data-edit="${id}"]`);
  }
  // The editor lists every family and opens the linked kernel's source.
  await goto(page, '#/editor?lang=en&stage=conv-im2col-gemm');
  await page.waitForSelector('.editor-page[data-stage="conv-im2col-gemm"] .code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  assert.match(await page.textContent('.editor-page h2'), /shaders\/conv_im2col\.wgsl/);
  const groups = await page.$$eval('.editor-group-name', (g) => g.map((e) => e.textContent));
  assert.deepEqual(groups, ['Matrix multiply', 'Convolution', 'Training (MLP)', 'Training (CNN)', 'Measuring kernels']);
  const ids = await page.$$eval('.editor-groups a', (as) => as.map((a) => new URL(a.href).hash.match(/stage=([^&]+)/)[1]));
  for (const id of ['conv-direct', 'conv-tiled', 'conv-im2col-gemm', 'conv-implicit-gemm', 'conv-pointwise',
    'mlp-forward', 'mlp-gather', 'mlp-loss', 'mlp-backward-params', 'mlp-backward-input', 'optim-sgd', 'optim-adam',
    'measure-copy', 'measure-strided', 'measure-fma', 'measure-divergent', 'measure-uniform']) {
    assert.ok(ids.includes(id), `${id} missing from the editor's list`);
  }
  assertNoErrors(errors);
  await context.close();
});

test('every conv stage as shipped passes the CPU check in the editor', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=conv-direct');
  for (const stage of ['conv-direct', 'conv-tiled', 'conv-im2col-gemm', 'conv-implicit-gemm', 'conv-pointwise']) {
    // This stage's page and editor (the last stage's satisfy no wait here), then this run's
    // answer: a fresh page has answered no run yet, so the verdict read is this stage's.
    if (stage !== 'conv-direct') await goto(page, `#/editor?lang=en&stage=${stage}`);
    await stageReady(page, stage);
    assert.equal(await page.getAttribute('.editor-result', 'data-runs'), '0', `${stage}: a fresh page`);
    await runEditor(page);
    assert.equal(await page.getAttribute(`.editor-page[data-stage="${stage}"] .editor-result`, 'data-outcome'), 'correct',
      `${stage}: ${await verdict(page)}`);
    assert.equal(await page.textContent('.editor-result .verdict.ok p'), 'Correct: every element matches the CPU reference.',
      `${stage}: ${await verdict(page)}`);
  }
  assertNoErrors(errors);
  await context.close();
});

test('conv: one output pixel off in every channel is named y[n][p][q][k] and marked once', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/editor?lang=en&stage=conv-direct');
  await editorReady(page, { runnable: true });
  // Output row m = 5 is image 0, row p = 0, column q = 5; all 10 filters of it get +1.
  const { wrong, rows, map } = await originalPassesEditFails(page,
    (src) => src.replace('y[m * cv.k + k] = acc;', 'y[m * cv.k + k] = acc + select(0.0, 1.0, m == 5u);'));
  assert.match(wrong, /Wrong: 10 of 7980 elements differ/); // 2·19·21·10 outputs
  assert.deepEqual(rows.map((r) => r[0]), ['y[0][0][5][0]', 'y[0][0][5][1]', 'y[0][0][5][2]', 'y[0][0][5][3]',
    'y[0][0][5][4]', 'y[0][0][5][5]', 'y[0][0][5][6]', 'y[0][0][5][7]']);
  for (const [, expected, got] of rows) assert.ok(Math.abs(+got - +expected - 1) < 1e-3, `${expected} → ${got}`);
  // The picture: 2 images of 19 rows stacked, 21 columns, one pixel red.
  assert.deepEqual(map, { rows: 38, cols: 21, marked: 1, width: 21, height: 38, red: 1 });
  await screenshot(page, 'editor-conv-wrong-en-1280');
  assertSameOrigin(requests);
  assertNoErrors(errors);
  await context.close();
});

test('measuring kernel: a copy that adds one is wrong everywhere it is not exact', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=zh&stage=measure-copy');
  await editorReady(page, { runnable: true });
  const original = await docText(page);
  await runEditor(page);
  await page.waitForSelector('.editor-result .verdict.ok');
  await setDoc(page, original.replace('dst[i] = src[i];', 'dst[i] = src[i] + vec4<f32>(0.0, 0.0, 0.0, 1.0);'));
  await runEditor(page);
  const rows = await page.$$eval('.differences tbody tr', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
  // Every fourth element (lane w of each vec4): 16384 / 4 wrong, the first out[3].
  assert.match(await page.textContent('.verdict.wrong p'), /16384 个元素中有 4096 个/);
  assert.equal(rows[0][0], 'out[3]');
  assert.equal(+rows[0][2], +rows[0][1] + 1);
  const marked = await page.$eval('.wrong-map-canvas', (c) => +c.dataset.marked);
  // 16384 elements, 64 a row = 256 rows, drawn in blocks of 4 rows: 64 × 64 cells, the
  // 16 columns 3, 7, …, 63 wrong in each.
  assert.equal(marked, 64 * 16);
  await screenshot(page, 'editor-measure-wrong-zh-1280');
  assertNoErrors(errors);
  await context.close();
});

test('MLP: the SGD kernel stepping uphill is caught against the CPU twin', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=optim-sgd');
  await editorReady(page, { runnable: true });
  const { wrong, rows, map } = await originalPassesEditFails(page,
    (src) => src.replace('params[i] = p - u.lr * v;', 'params[i] = p + u.lr * v;'));
  assert.match(wrong, /Wrong: \d+ of \d+ elements differ/);
  assert.match(rows[0][0], /^params\[\d+\]$/);
  // A wrong element never prints like the right one (a step of lr·|g| ≈ 1e-3 or less).
  for (const [name, expected, got] of rows) assert.notEqual(expected, got, `${name}: ${expected} vs ${got}`);
  assert.ok(map.marked > 0 && map.red === map.marked, JSON.stringify(map));
  assertNoErrors(errors);
  await context.close();
});

// The default step of the editor's small network does the loss inside mlp-step-lanes (the
// whole step in workgroup memory); an edited mlp-loss must still run (the plan then takes the
// per-layer kernels with the output layer and the loss apart), or the learner's edit would be
// silently ignored.
test('MLP: an edited loss kernel runs in the step and is caught against the twin', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=mlp-loss');
  await editorReady(page, { runnable: true });
  const { wrong, rows, map } = await originalPassesEditFails(page,
    (src) => src.replace('let t = select(0.0, 1.0, c == y);', 'let t = select(0.0, 0.5, c == y);'));
  assert.match(wrong, /Wrong: \d+ of \d+ elements differ/);
  assert.match(rows[0][0], /^(params\[\d+\]|logit\[\d+\]\[\d+\])$/);
  assert.ok(map.marked > 0 && map.red === map.marked, JSON.stringify(map));
  await screenshot(page, 'editor-mlp-loss-wrong-en-1280');
  assertNoErrors(errors);
  await context.close();
});

test('MLP: the forward kernel as shipped passes against the twin', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&stage=mlp-forward');
  await editorReady(page, { runnable: true });
  await runEditor(page);
  assert.equal(await page.textContent('.editor-result .verdict.ok p'), 'Correct: every element matches the CPU reference.',
    await verdict(page));
  assertNoErrors(errors);
  await context.close();
});
