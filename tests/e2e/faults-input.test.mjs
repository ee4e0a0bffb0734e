// Rows 4b and 5b of docs/reliability.md.
// 4b: an allocation the device refuses although the size is within its limits (out of memory):
//     the Kernels page names it, no GPU buffer is left behind, and the next run works.
// 5b: NaN, ±Infinity and numbers past a type's range typed into the fields where learners
//     type real numbers: each is refused at the field with a message that names it, nothing
//     downstream shows NaN or Infinity, and a good value afterwards works again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, waitForProbe, runVerified, runAndWait, assertNoErrors, screenshot } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/**
 * SwiftShader allocates from the host's memory and will not run out at sizes the machine can
 * afford, so the test injects the out-of-memory error at the WebGPU API: once armed, a
 * createBuffer of at least `window.__oom.over` bytes makes the enclosing 'out-of-memory' error
 * scope report a real GPUOutOfMemoryError, which is what a browser reports when the device
 * cannot allocate. Everything after that (wgpu's error conversion, the runtime, the page) is
 * the real code.
 */
function injectOom() {
  window.__oom = { over: Infinity, injected: 0 };
  const scopes = new WeakMap();
  const stack = (d) => { if (!scopes.has(d)) scopes.set(d, []); return scopes.get(d); };
  const push = GPUDevice.prototype.pushErrorScope;
  const pop = GPUDevice.prototype.popErrorScope;
  const create = GPUDevice.prototype.createBuffer;
  GPUDevice.prototype.pushErrorScope = function (filter) {
    stack(this).push({ filter, big: false });
    return push.call(this, filter);
  };
  GPUDevice.prototype.createBuffer = function (desc) {
    if (desc.size >= window.__oom.over) {
      for (const s of stack(this)) if (s.filter === 'out-of-memory') s.big = true;
    }
    return create.call(this, desc);
  };
  GPUDevice.prototype.popErrorScope = function () {
    const s = stack(this).pop();
    const real = pop.call(this);
    if (s?.filter === 'out-of-memory' && s.big) {
      window.__oom.injected += 1;
      return real.then(() => new GPUOutOfMemoryError('injected by the test: not enough memory for this buffer'));
    }
    return real;
  };
}

const live = (page) => page.evaluate(() => window.gpuPlayground.debug_live_buffers());

test('row 4b: an allocation the device refuses is named, leaks nothing, and the next run works', async () => {
  // 1024³ with the tiled stage: three 4 MiB matrices, far inside SwiftShader's limits (so no
  // limit check refuses it); every buffer of 4 MiB or more is "out of memory". (Without the
  // handling the run goes on and is verified in a few seconds, so the test fails quickly.)
  const OVER = 4 * 1024 * 1024;
  const URL_EN = '#/kernels?lang=en&m=1024&n=1024&k=1024&stage=matmul-tiled';
  const { page, context, errors } = await openPage(browser, URL_EN, { initScript: injectOom });
  await waitForProbe(page);
  assert.equal(await page.isDisabled('#run-button'), false, 'the size passes the limit checks');
  await page.evaluate((n) => { window.__oom.over = n; }, OVER);
  await runAndWait(page);
  assert.ok(await page.evaluate(() => window.__oom.injected) >= 1, 'the injected error was reported');
  const msg = await page.textContent('.result [data-oom="true"]');
  assert.match(msg, /could not allocate the memory this size needs \(out of memory\)/);
  assert.equal(await page.$('.result [data-verified]'), null, 'no result is shown for the failed run');
  assert.equal(await live(page), 0, 'every buffer the failed run made was destroyed');
  await screenshot(page, 'faults-oom-en');
  // The device is still usable: the same page runs a smaller size, verified.
  await page.evaluate(() => { window.__oom.over = Infinity; });
  await runVerified(page, [64, 64, 64]);
  assert.equal(await live(page), 0);
  // And the Chinese page names it too.
  await page.evaluate((n) => { window.__oom.over = n; }, OVER);
  // The Chinese page itself (its text arrived, its widget rendered), not the English one
  // still on screen, is what runs and is read.
  await goto(page, URL_EN.replace('lang=en', 'lang=zh'));
  await page.waitForSelector('#run-button:not([disabled])');
  await runAndWait(page);
  assert.match(await page.textContent('.result [data-oom="true"]'), /显存不足/);
  assert.equal(await live(page), 0);
  assertNoErrors(errors);
  await context.close();
});

// What learners type that Rust's float parser reads as NaN or infinity, or that is past f32's
// or f64's range.
const NON_FINITE = ['NaN', 'nan', 'Infinity', '-inf', '1e39', '1e309'];

/** No result area shows NaN or Infinity (input values are not text, messages are excluded). */
async function noNonFiniteShown(page, where) {
  const text = await page.evaluate(() => {
    const clone = document.querySelector('main')?.cloneNode(true) ?? document.body.cloneNode(true);
    clone.querySelectorAll('.field-error, [role="alert"]').forEach((e) => e.remove());
    return clone.textContent;
  });
  assert.doesNotMatch(text, /NaN|Infinity|\binf\b/, `${where}: NaN or Infinity on the page`);
}

test('row 5b: the conv filter grid refuses NaN, infinity and huge weights at the cell', async () => {
  const { page, context, errors } = await openPage(browser, '#/conv?lang=en&img=strokes&filter=box&stage=tiled');
  await page.waitForSelector('#conv-run:not([disabled])', { timeout: 60_000 });
  for (const bad of [...NON_FINITE, '1e30/1e-30', '0/0']) {
    await page.fill('#conv-w4', bad);
    await page.waitForSelector('#conv-weight-error');
    assert.match(await page.textContent('#conv-weight-error'), /Every weight must be a number .* between −1000 and 1000/);
    assert.equal(await page.getAttribute('#conv-w4', 'aria-invalid'), 'true', bad);
    assert.ok(await page.isDisabled('#conv-run'), `${bad}: nothing runs`);
    assert.equal(await page.inputValue('#conv-w4'), bad, 'the typed text stays to be fixed');
    assert.doesNotMatch(page.url(), /NaN|inf/i, `${bad} reached the URL`);
    await noNonFiniteShown(page, `conv ${bad}`);
  }
  await page.fill('#conv-w4', '1/9');
  await page.waitForSelector('#conv-run:not([disabled])');
  assert.equal(await page.$('#conv-weight-error'), null);
  assertNoErrors(errors);
  await context.close();
});

test('row 5b: the learning rate refuses NaN and infinity at the field; the URL keeps the last good one', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=en&data=spiral&lr=0.03');
  await page.waitForSelector('#train-lr');
  for (const bad of NON_FINITE) {
    await page.fill('#train-lr', bad);
    await page.waitForSelector('#train-lr-error', { timeout: 10_000 });
    const msg = await page.textContent('#train-lr-error');
    assert.ok(msg.includes(`“${bad}”`), `the message names ${bad}: ${msg}`);
    assert.equal(await page.getAttribute('#train-lr', 'aria-invalid'), 'true');
    assert.match(new URL(page.url()).hash, /lr=0\.03(&|$)/, `${bad} must not reach the URL`);
  }
  await page.fill('#train-lr', '0.05');
  await page.waitForFunction(() => location.hash.includes('lr=0.05'));
  assert.equal(await page.$('#train-lr-error'), null);
  assertNoErrors(errors);
  await context.close();
});

test('row 5b: lesson 6 names NaN, infinity and a number past f64 separately; 1e39 is a real overflow', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/precision?lang=en');
  await page.waitForSelector('#round-input');
  const cases = [
    ['NaN', /^NaN \(“not a number”\) is stored as NaN in every format/],
    ['-nan', /^NaN \(“not a number”\)/],
    ['Infinity', /^Infinity is stored as infinity in every format/],
    ['-inf', /^Infinity is stored as infinity/],
    ['1e309', /too large even for a 64-bit float/],
    ['abc', /Type a decimal number/],
  ];
  for (const [bad, want] of cases) {
    await page.fill('#round-input', bad);
    // The message for this input, not the one still shown for the previous case.
    await page.waitForFunction(([src, flags]) => new RegExp(src, flags)
      .test(document.querySelector('#round-input-error')?.textContent ?? ''), [want.source, want.flags], { timeout: 10_000 })
      .catch(() => {});
    assert.match((await page.textContent('#round-input-error')) ?? '', want, bad);
    assert.equal(await page.getAttribute('#round-input', 'aria-invalid'), 'true');
    assert.equal(await page.$('table.rounding'), null, `${bad}: no rounding table`);
  }
  // 1e39 is finite in f64 and past every 16/19/32-bit format's largest value (≈ 3.4e38):
  // each row says it overflows. That infinity is the right answer, and the page says why.
  await page.fill('#round-input', '1e39');
  await page.waitForSelector('table.rounding');
  const rows = await page.$$eval('table.rounding tbody tr', (rs) => rs.map((r) => r.textContent));
  assert.equal(rows.length, 4);
  for (const r of rows) assert.match(r, /overflow: becomes infinity/);
  // 70000 overflows FP16 only (largest 65,504).
  await page.fill('#round-input', '70000');
  await page.waitForFunction(() => document.querySelectorAll('table.rounding tbody tr').length === 4
    && document.querySelector('table.rounding tr[data-format="FP32"]')?.textContent.includes('70000'));
  const fp16 = await page.textContent('table.rounding tr[data-format="FP16"]');
  assert.match(fp16, /overflow/);
  assert.doesNotMatch(await page.textContent('table.rounding tr[data-format="BF16"]'), /overflow/);
  await page.fill('#round-input', 'NaN');
  await screenshot(page, 'faults-nan-precision-en');
  assertNoErrors(errors);
  await context.close();
});

test('row 5b: the calculators of lessons 7, 9 and 12 refuse NaN, infinity and huge values at the field', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/vram?lang=en');
  const fields = [
    ['vram', '#f-p'],
    ['multi-gpu', '#f-p'],
    ['multi-gpu', '#f-bw'],
    ['multi-gpu', '#f-lat'],
    ['claims', '#f-cpu'],
    ['claims', '#f-gpu'],
    ['claims', '#f-n'],
  ];
  for (const [lesson, sel] of fields) {
    if (!page.url().includes(`#/learn/${lesson}?`)) await goto(page, `#/learn/${lesson}?lang=en`);
    assert.ok(await page.$(sel), `${lesson} has ${sel}`);
    const good = await page.inputValue(sel);
    for (const bad of NON_FINITE) {
      await page.fill(sel, bad);
      await page.waitForFunction((s) => document.querySelector(`${s}-error`)?.textContent.length > 0, sel, { timeout: 10_000 })
        .catch(() => assert.fail(`${lesson} ${sel}: "${bad}" was accepted without a message`));
      assert.equal(await page.getAttribute(sel, 'aria-invalid'), 'true', `${lesson} ${sel} ${bad}`);
      await noNonFiniteShown(page, `${lesson} ${sel} ${bad}`);
    }
    // The field's own value again, as a fresh page would have it: its message goes, and the
    // next field of the same lesson is tested with every other field valid.
    await page.fill(sel, good);
    await page.waitForFunction((s) => !document.querySelector(`${s}-error`)?.textContent, sel, { timeout: 10_000 });
    assert.notEqual(await page.getAttribute(sel, 'aria-invalid'), 'true', `${lesson} ${sel} back to ${good}`);
  }
  assertNoErrors(errors);
  await context.close();
});
