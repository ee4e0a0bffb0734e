// Conv page: bundled pictures filtered by every GPU stage (verified against the CPU, output
// pixels checked), a picture the test makes uploaded and filtered (scaled down with a note),
// a non-image file and a too-large filter named, bad URL values named, the CPU path without
// WebGPU, no horizontal scroll at 390 px; screenshots at 390/1280/1920 in both languages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors, assertSameOrigin } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const STAGES = ['direct', 'tiled', 'im2col-gemm', 'implicit-gemm'];

async function ready(page) {
  await page.waitForSelector('#conv-run:not([disabled])', { timeout: 60_000 });
}

async function filterAndWait(page) {
  const before = Number(await page.getAttribute('#conv-result', 'data-runs'));
  await page.click('#conv-run');
  await page.waitForFunction(
    (n) => Number(document.querySelector('#conv-result')?.dataset.runs) > n, before, { timeout: 120_000 },
  );
  return page.getAttribute('#conv-result', 'data-verified');
}

/** A canvas's size and RGBA bytes. */
const pixels = (page, id) => page.evaluate((id) => {
  const c = document.getElementById(id);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  return { w: c.width, h: c.height, data: Array.from(d) };
}, id);

function differing(a, b) {
  let n = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    if (Math.abs(a.data[i] - b.data[i]) + Math.abs(a.data[i + 1] - b.data[i + 1]) + Math.abs(a.data[i + 2] - b.data[i + 2]) > 6) n++;
  }
  return n;
}

/** A PNG made in the page's own canvas (no third-party content), as bytes for setInputFiles. */
async function makePng(page, w, h) {
  const b64 = await page.evaluate(([w, h]) => {
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    const g = c.getContext('2d');
    g.fillStyle = '#2050a0'; g.fillRect(0, 0, w, h);
    g.fillStyle = '#f0d020'; g.fillRect(w / 4, h / 4, w / 2, h / 2);
    return c.toDataURL('image/png').split(',')[1];
  }, [w, h]);
  return Buffer.from(b64, 'base64');
}

test('every stage filters a bundled picture, verified, and agrees with the others', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/conv?lang=en&img=checker&filter=edge');
  await ready(page);
  assert.equal(await page.textContent('h1'), 'Convolution: filter a picture');
  let first;
  for (const stage of STAGES) {
    await page.selectOption('#conv-stage', stage);
    // The URL follows the choice once the page has handled it (not necessarily by now).
    await page.waitForFunction((s) => new URLSearchParams(location.hash.split('?')[1]).get('stage') === s, stage);
    assert.equal(await filterAndWait(page), 'true', `stage ${stage} verified`);
    assert.match(await page.textContent('#conv-badge'), /verified: 49152 values match/);
    const input = await pixels(page, 'conv-input');
    const output = await pixels(page, 'conv-output');
    assert.deepEqual([output.w, output.h], [128, 128]);
    // The Laplacian is 0 inside a flat square (black) and large on its edges.
    const at = (img, x, y) => img.data.slice((y * img.w + x) * 4, (y * img.w + x) * 4 + 3);
    assert.deepEqual(at(output, 8, 8), [0, 0, 0]);
    assert.notDeepEqual(at(input, 8, 8), [0, 0, 0]);
    assert.ok(differing(input, output) > 128 * 128 / 2, 'the output differs from the input');
    if (first) assert.equal(differing(first, output), 0, `${stage} draws what direct drew`);
    else first = output;
  }
  assertNoErrors(errors);
  assertSameOrigin(requests);
  await context.close();
});

test('an uploaded picture is scaled down, filtered and verified; a text file is named', async () => {
  const { page, context, errors } = await openPage(browser, '#/conv?lang=en&filter=gauss&size=5&pad=2');
  await ready(page);
  const png = await makePng(page, 3000, 1500);
  await page.setInputFiles('#conv-file', { name: 'photo.png', mimeType: 'image/png', buffer: png });
  await page.waitForSelector('#conv-scaled', { timeout: 30_000 });
  assert.match(await page.textContent('#conv-scaled'), /3000×1500.*256×128/);
  assert.equal(await filterAndWait(page), 'true');
  const input = await pixels(page, 'conv-input');
  const output = await pixels(page, 'conv-output');
  assert.deepEqual([input.w, input.h, output.w, output.h], [256, 128, 256, 128]);
  // The yellow square's border is blurred: a pixel on it is between blue and yellow.
  const i = (64 * 256 + 64) * 4;
  assert.ok(output.data[i] > input.data[i - 8] && output.data[i] < input.data[i + 8],
    `blurred edge ${output.data[i]} between ${input.data[i - 8]} and ${input.data[i + 8]}`);
  await page.setInputFiles('#conv-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a picture') });
  await page.waitForSelector('#conv-upload-error', { timeout: 30_000 });
  assert.match(await page.textContent('#conv-upload-error'), /“notes\.txt” is not a picture/);
  assertNoErrors(errors);
  await context.close();
});

test('a filter larger than the padded picture and bad URL values are named; nothing runs', async () => {
  const { page, context, errors } = await openPage(browser, '#/conv?lang=en&size=5&dil=40&pad=0&stage=fft&stride=0&img=cat');
  await page.waitForSelector('#conv-shape-error');
  assert.match(await page.textContent('#conv-shape-error'), /spans 161 pixels along h.*only 128/);
  assert.ok(await page.isDisabled('#conv-run'));
  const named = await page.textContent('#conv-url-errors');
  for (const s of ['stage=fft', 'stride=0', 'img=cat']) assert.ok(named.includes(s), `${s} named in: ${named}`);
  // Typed bad values: a field and a weight.
  await page.fill('#conv-dil', '1');
  await page.fill('#conv-pad', '99');
  assert.match(await page.textContent('.field-error'), /Padding must be a whole number from 0 to 64/);
  await page.fill('#conv-pad', '2');
  await page.fill('#conv-w0', 'abc');
  await page.waitForSelector('#conv-weight-error');
  assert.ok(await page.isDisabled('#conv-run'));
  await page.fill('#conv-w0', '1/25');
  await page.waitForSelector('#conv-run:not([disabled])');
  assert.match(page.url(), /filter=custom/);
  await screenshot(page, 'conv-errors-en');
  assertNoErrors(errors);
  await context.close();
});

// One load and one filter run per language, at 390 px (the narrowest, loaded fresh); the
// window is then widened to 1280 and 1920 px on the same page, instead of a new load and the
// same GPU filter again per width.
test('Chinese page and three widths: no horizontal scroll, screenshots', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors, requests } = await openPage(browser,
      `#/conv?lang=${lang}&img=strokes&filter=sobelx&stage=tiled`, { viewport: { width: 390, height: 900 } });
    await ready(page);
    assert.equal(await filterAndWait(page), 'true');
    if (lang === 'zh') assert.equal(await page.textContent('h1'), '卷积：给图片加滤镜');
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      // The layout for this width: the window has its new width, and two frames have been
      // drawn since.
      await page.waitForFunction((w) => window.innerWidth === w, width);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${lang} ${width}px scrolls sideways by ${overflow}px`);
      await screenshot(page, `conv-${lang}-${width}`);
    }
    assertNoErrors(errors);
    assertSameOrigin(requests);
    await context.close();
  }
});

test('without WebGPU the CPU reference computes the output and the page says so', async () => {
  const cpuBrowser = await launch({ webgpu: false });
  try {
    const { page, context, errors } = await openPage(cpuBrowser, '#/conv?lang=en&img=rings&filter=emboss');
    await ready(page);
    await page.waitForSelector('#conv-cpu-note');
    assert.equal(await filterAndWait(page), 'cpu');
    assert.match(await page.textContent('.conv-images'), /on the CPU/);
    const input = await pixels(page, 'conv-input');
    const output = await pixels(page, 'conv-output');
    assert.ok(differing(input, output) > 1000, 'the emboss changed the picture');
    await screenshot(page, 'conv-cpu-en');
    assertNoErrors(errors);
    await context.close();
  } finally {
    await cpuBrowser.close();
  }
});
