// Lessons 7 and 9–12 (VRAM, many GPUs, software stack, choosing a GPU, headline claims):
// each renders in both languages with no console error and no NaN; every calculator reacts to
// its inputs, keeps them in the URL, and answers bad input with a message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors } from './helpers.mjs';

const LESSONS = ['vram', 'multi-gpu', 'stack', 'choosing', 'claims'];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function open(path) {
  const r = await openPage(browser, path);
  await r.page.waitForSelector('.lesson-body.lb');
  return r;
}

async function bodyText(page) {
  return page.evaluate(() => document.querySelector('main').innerText);
}

function assertClean(text, where) {
  assert.ok(!/NaN|undefined|Infinity/.test(text), `${where}: NaN/undefined on screen`);
  assert.ok(!/\[lb\./.test(text), `${where}: a missing translation key is shown`);
}

for (const lang of ['en', 'zh']) {
  test(`lessons 7, 9–12 render in ${lang}`, async () => {
    for (const id of LESSONS) {
      const { page, context, errors } = await open(`#/learn/${id}?lang=${lang}`);
      assert.equal(await page.getAttribute('article.lesson', 'data-lesson'), id);
      const text = await bodyText(page);
      assertClean(text, `${id} ${lang}`);
      if (lang === 'zh') assert.match(text, /[\u4e00-\u9fff]/, `${id}: Chinese text`);
      assert.ok(await page.$('.try-it'), `${id}: ends with a "try it"`);
      await screenshot(page, `lessons-calculators-${id}-${lang}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}

test('VRAM: 7B FP16 Adam is 112 GB plus activations; inputs change it; bad input gets a message', async () => {
  const { page, context, errors } = await open('#/learn/vram?lang=en');
  // 7e9 × 16 = 112e9, plus 32 layers × 2048·4096·(34 + 5·32·2048/4096) = 30,601,641,984.
  assert.equal(await page.getAttribute('[data-vram-total]', 'data-vram-total'), '142601641984');
  assert.match(await page.textContent('.breakdown'), /Optimiser state\s*56\.0 GB/);
  await page.fill('#f-p', '13B');
  await page.waitForFunction(() => document.querySelector('[data-vram-total]')?.dataset.vramTotal !== '142601641984');
  assert.match(new URL(page.url()).hash, /p=13B/);
  // Inference: weights + KV cache only.
  await page.selectOption('#f-mode', 'infer');
  await page.waitForFunction(() => !document.querySelector('#f-opt'));
  assert.equal(await page.getAttribute('[data-vram-total]', 'data-vram-total'), String(26e9 + 2 * 32 * 2048 * 4096 * 2));
  // As a Chinese reader types 13 billion: in Chinese units, and with a full-width input method.
  for (const typed of ['130亿', '１３B']) {
    await page.fill('#f-p', '1');
    await page.waitForFunction(() => document.querySelector('[data-vram-total]')?.dataset.vramTotal !== String(26e9 + 2 * 32 * 2048 * 4096 * 2));
    await page.fill('#f-p', typed);
    await page.waitForSelector(`[data-vram-total="${26e9 + 2 * 32 * 2048 * 4096 * 2}"]`);
  }
  // Bad values: a message, never NaN.
  for (const bad of ['-5', 'abc', '1e99']) {
    await page.fill('#f-p', bad);
    await page.waitForSelector('[data-vram-total="invalid"]');
    assert.ok((await page.textContent('#f-p-error')).length > 0, bad);
    assertClean(await bodyText(page), `vram ${bad}`);
  }
  await page.fill('#f-p', '7B');
  await page.selectOption('#f-mode', 'train');
  await page.selectOption('#f-w', 'int4');
  await page.waitForSelector('[data-vram-total="invalid"]');
  assert.match(await page.textContent('.calc-output'), /LoRA/);
  await page.check('#f-lora');
  await page.waitForSelector('[data-vram-total]:not([data-vram-total="invalid"])');
  assert.equal(await page.getAttribute('[data-fit][data-gpu="rtx3090"]', 'data-fit'), 'no');
  await page.check('#f-ckpt');
  await page.waitForFunction(() => document.querySelector('[data-gpu="rtx3090"]')?.dataset.fit === 'fits');
  // A preset fills several fields and shows as a link.
  await page.click('.presets button:has-text("ResNet-50")');
  await page.waitForSelector('#f-mb');
  assert.match(new URL(page.url()).hash, /act=sample/);
  await screenshot(page, 'lessons-calculators-vram-qlora-en');
  assertNoErrors(errors);
  await context.close();
});

test('VRAM: state from the URL, absurd values from the URL', async () => {
  const { page, context, errors } = await open('#/learn/vram?lang=zh&p=175B&w=fp16&mode=train&b=0&l=x');
  await page.waitForSelector('[data-vram-total="invalid"]');
  assert.equal(await page.inputValue('#f-p'), '175B');
  assert.ok((await page.textContent('#f-b-error')).length > 0);
  assert.ok((await page.textContent('#f-l-error')).length > 0);
  assertClean(await bodyText(page), 'vram url');
  assertNoErrors(errors);
  await context.close();
});

test('Many GPUs: ring all-reduce over NVLink and PCIe', async () => {
  const { page, context, errors } = await open('#/learn/multi-gpu?lang=en');
  assert.ok(await page.$('svg.diagram.mgpu'));
  // 7e9 × 2 bytes, 8 GPUs, 300 GB/s each way: 2·7/8·14e9 / 300e9 = 0.081666667 s.
  assert.equal(await page.getAttribute('[data-ring-time]', 'data-ring-time'), '0.081666667');
  await page.selectOption('#f-link', 'pcie4');
  await page.waitForFunction(() => document.querySelector('[data-ring-time]')?.dataset.ringTime === '0.765625000');
  assert.equal(await page.inputValue('#f-bw'), '32');
  await page.fill('#f-lat', '5');
  // 14 steps × 5 µs more.
  await page.waitForFunction(() => document.querySelector('[data-ring-time]')?.dataset.ringTime === '0.765695000');
  await page.fill('#f-bw', '100');
  await page.waitForFunction(() => document.querySelector('#f-link')?.value === 'custom');
  assert.match(new URL(page.url()).hash, /bw=100/);
  for (const [field, bad] of [['#f-n', '0'], ['#f-n', '2.5'], ['#f-bw', '-1'], ['#f-lat', 'x']]) {
    await page.fill(field, bad);
    await page.waitForSelector('[data-ring-time="invalid"]');
    assertClean(await bodyText(page), `ring ${field}=${bad}`);
    await page.fill(field, field === '#f-n' ? '8' : field === '#f-bw' ? '100' : '0');
    await page.waitForSelector('[data-ring-time]:not([data-ring-time="invalid"])');
  }
  assertNoErrors(errors);
  await context.close();
});

test('Software stack: translate a launch and check both APIs\' limits', async () => {
  const { page, context, errors } = await open('#/learn/stack?lang=en');
  assert.equal(await page.getAttribute('[data-launch]', 'data-launch'), '63x63');
  assert.match(await page.textContent('.code-pair'), /dispatchWorkgroups\(63, 63\)/);
  assert.ok(await page.$('a[href^="#/kernels"]'));
  await page.fill('#f-bx', '32');
  await page.fill('#f-by', '32');
  await page.waitForSelector('[data-issue="WebGpuInvocations"]');
  assert.ok(!(await page.$('[data-issue="CudaBlock"]')));
  await page.fill('#f-by', '64');
  await page.waitForSelector('[data-issue="CudaBlock"]');
  await page.fill('#f-w', 'abc');
  await page.waitForSelector('[data-launch="invalid"]');
  assertClean(await bodyText(page), 'stack');
  assertNoErrors(errors);
  await context.close();
});

test('Choosing a GPU: fits first, ranked by bandwidth', async () => {
  const { page, context, errors } = await open('#/learn/choosing?lang=en');
  assert.equal(await page.getAttribute('[data-need]', 'data-need'), '14000000000');
  const order = await page.$$eval('tr.gpu-row', (rs) => rs.map((r) => [r.dataset.gpu, r.dataset.fit]));
  assert.deepEqual(order[0], ['mi300x', 'fits']);
  assert.deepEqual(order.at(-1), ['rtx3060', 'no']);
  await page.selectOption('#f-mode', 'train');
  await page.waitForSelector('[data-need="112000000000"]');
  const fits = await page.$$eval('tr.gpu-row[data-fit="fits"]', (rs) => rs.map((r) => r.dataset.gpu));
  assert.deepEqual(fits, ['mi300x', 'h200']);
  await screenshot(page, 'lessons-calculators-choosing-train-en');
  await page.fill('#f-p', '0');
  await page.waitForSelector('[data-need="invalid"]');
  assertClean(await bodyText(page), 'choosing');
  assertNoErrors(errors);
  await context.close();
});

test('Choosing a GPU: a format that does not exist, from the URL', async () => {
  const { page, context, errors } = await open('#/learn/choosing?lang=zh&w=fp7&p=7B');
  await page.waitForSelector('[data-need="invalid"]');
  assert.equal(await page.$$eval('tr.gpu-row[data-fit="fits"]', (rs) => rs.length), 0);
  assertClean(await bodyText(page), 'choosing url');
  assertNoErrors(errors);
  await context.close();
});

test('Headline claims: matmul time calculator and the race link', async () => {
  const { page, context, errors } = await open('#/learn/claims?lang=en');
  assert.equal(await page.getAttribute('[data-ratio]', 'data-ratio'), '100.000000');
  assert.match(await page.textContent('.calc-output'), /137,438,953,472/);
  await page.fill('#f-gpu', '1000');
  await page.waitForSelector('[data-ratio="10.000000"]');
  assert.equal(await page.getAttribute('a[href*="view=claim"]', 'href'), '#/race?view=claim&lang=en');
  // A GPU rate below the CPU's is said plainly, not as "1/0.5".
  await page.fill('#f-gpu', '50');
  await page.waitForSelector('[data-ratio="0.500000"]');
  assert.match(await page.textContent('.calc-output'), /slower one and takes 2\.00× the CPU's time/);
  for (const [field, bad] of [['#f-n', '0'], ['#f-cpu', '-1'], ['#f-gpu', 'fast']]) {
    await page.fill(field, bad);
    await page.waitForSelector('[data-ratio="invalid"]');
    assertClean(await bodyText(page), `claims ${bad}`);
  }
  assert.equal(await page.getAttribute('.claim-card:has-text("Leaves out") >> nth=0', 'data-claim'), 'alexnet');
  assertNoErrors(errors);
  await context.close();
});

test('VRAM: a preset sets every field it implies (GPT-3 175B → about 2.8 TB)', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/vram?lang=en&w=int4&lora=1&ckpt=1&opt=sgd&mode=train');
  await page.waitForSelector('.presets button');
  await page.click('.presets button:has-text("GPT-3 175B")');
  await page.waitForFunction(() => /p=175/.test(location.hash));
  await page.waitForSelector('[data-vram-total]:not([data-vram-total="invalid"])');
  assert.equal(await page.isChecked('#f-lora'), false);
  assert.equal(await page.isChecked('#f-ckpt'), false);
  assert.equal(await page.inputValue('#f-w'), 'fp16');
  assert.equal(await page.inputValue('#f-opt'), 'adam');
  // Model states alone: 175e9 × 16 bytes = 2.8e12; activations come on top.
  const total = Number(await page.getAttribute('[data-vram-total]', 'data-vram-total'));
  assert.ok(total >= 2.8e12 && total < 4e12, `total ${total}`);
  await screenshot(page, 'lessons-calculators-vram-gpt3-en');
  assertNoErrors(errors);
  await context.close();
});

test('Many GPUs: one GPU is "a single GPU", never "over 1 GPUs"', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/multi-gpu?lang=en&n=1');
  await page.waitForSelector('[data-ring-time]');
  const total = await page.textContent('[data-ring-time]');
  assert.doesNotMatch(total, /\b1 GPUs/, total);
  assert.match(total, /single GPU/, total);
  assertNoErrors(errors);
  await context.close();
});
