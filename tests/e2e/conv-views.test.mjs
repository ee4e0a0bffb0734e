// The conv page's teaching views and the conv lesson: two layers over an uploaded picture (layer
// 1 checked here against a reference computed from the PNG's own bytes, both layers verified by
// the page), the receptive field's size against the arithmetic for known stride and dilation,
// the written-out multiply-adds summing to the pixel shown, the im2col cells lit for an input
// pixel against the index arithmetic, the animation's step count P·Q, bad values named, the CPU
// path, the AlexNet calculator, the two embeds' run-finished; screenshots at 390/1280/1920 px
// in en and zh of the photo filtered, the receptive field lit and im2col drawn.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { launch, openPage, goto, show, BASE_URL, assertNoErrors, assertSameOrigin } from './helpers.mjs';

const OUT = process.env.TEST_OUTPUT ?? 'test-output';
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const U = 2 ** -24;

/** A W×H PNG made in the page's canvas from a formula (no third-party content): its bytes for
 *  setInputFiles and its RGB values for the test's own reference. */
async function makePng(page, w, h) {
  const b64 = await page.evaluate(([w, h]) => {
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    const g = c.getContext('2d');
    const img = g.createImageData(w, h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = (y * w + x) * 4;
        const inSquare = x > w / 4 && x < w / 2 && y > h / 4 && y < (3 * h) / 4;
        img.data[i] = inSquare ? 240 : (x * 4) % 256;
        img.data[i + 1] = inSquare ? 210 : (y * 5) % 256;
        img.data[i + 2] = ((x + y) * 3) % 256;
        img.data[i + 3] = 255;
      }
    }
    g.putImageData(img, 0, 0);
    return c.toDataURL('image/png').split(',')[1];
  }, [w, h]);
  return Buffer.from(b64, 'base64');
}

/** The test's own copy of the picture: value of channel c at (row, col), in [0, 1]. */
function pictureAt(w, h) {
  return (row, col, c) => {
    if (row < 0 || col < 0 || row >= h || col >= w) return 0;
    const inSquare = col > w / 4 && col < w / 2 && row > h / 4 && row < (3 * h) / 4;
    const v = c === 0 ? (inSquare ? 240 : (col * 4) % 256) : c === 1 ? (inSquare ? 210 : (row * 5) % 256) : ((col + row) * 3) % 256;
    return v / 255;
  };
}

/** Uploads a generated W×H PNG and waits until the page shows it at `shown` = [w, h]. */
async function upload(page, w, h, name = 'photo.png', shown = [w, h]) {
  const png = await makePng(page, w, h);
  await page.setInputFiles('#conv-file', { name, mimeType: 'image/png', buffer: png });
  await page.waitForFunction(([w, h]) => {
    const c = document.getElementById('conv-input');
    return c && c.width === w && c.height === h;
  }, shown, { timeout: 30_000 });
}

async function runLayers(page) {
  await page.waitForSelector('#conv-layers-run:not([disabled])', { timeout: 60_000 });
  const before = Number(await page.getAttribute('#conv-layers-result', 'data-runs'));
  await page.click('#conv-layers-run');
  await page.waitForFunction(
    (n) => Number(document.querySelector('#conv-layers-result')?.dataset.runs) > n, before, { timeout: 120_000 },
  );
  return page.getAttribute('#conv-layers-result', 'data-verified');
}

async function filterAndWait(page) {
  await page.waitForSelector('#conv-run:not([disabled])', { timeout: 60_000 });
  const before = Number(await page.getAttribute('#conv-result', 'data-runs'));
  await page.click('#conv-run');
  await page.waitForFunction(
    (n) => Number(document.querySelector('#conv-result')?.dataset.runs) > n, before, { timeout: 120_000 },
  );
  return page.getAttribute('#conv-result', 'data-verified');
}

/** Points at output pixel (p, q) of a map drawn as P×Q cells. */
async function pointAt(page, id, p, q, [P, Q]) {
  // The mouse reaches only what is in the viewport, and not under a notice fixed at its edge.
  await page.evaluate((id) => document.getElementById(id).scrollIntoView({ block: 'center' }), id);
  const box = await page.locator(`#${id}`).boundingBox();
  // The page reads whole CSS pixels (MouseEvent.clientX as an integer): aim at the first whole
  // pixel inside the cell (a cell is wider than one CSS pixel in these tests).
  const inCell = (start, size, i, n) => {
    const lo = start + (i * size) / n, hi = start + ((i + 1) * size) / n;
    const v = Math.ceil(lo + 1e-6);
    assert.ok(v < hi, `cell ${i} of ${n} is narrower than a CSS pixel`);
    return v;
  };
  await page.mouse.move(inCell(box.x, box.width, q, Q), inCell(box.y, box.height, p, P));
}

/** The written-out sum: each term's weight and input, the rest (if cut short), the result. */
const readSum = (page) => page.evaluate(() => {
  const terms = [...document.querySelectorAll('#conv-sum .term')].map((t) => [Number(t.dataset.w), Number(t.dataset.x)]);
  const rest = document.querySelector('#conv-sum .rest');
  const r = document.querySelector('#conv-sum-result');
  return {
    terms,
    rest: rest ? { count: Number(rest.dataset.count), sum: Number(rest.dataset.sum) } : null,
    value: Number(r.dataset.value),
    shown: r.textContent,
    macs: Number(document.querySelector('#conv-sum').dataset.macs),
  };
});

const field = (page) => page.evaluate(() => ({ ...document.querySelector('#conv-field').dataset }));

/** Receptive field of two layers of R×R at this stride and dilation: 1 + (R−1)·dil·(1 + stride). */
const rf = (r, stride, dil) => 1 + (r - 1) * dil + (r - 1) * dil * stride;

test('two layers over an uploaded picture: layer 1 matches the PNG, sums add up, the field grows by the arithmetic', async () => {
  const { page, context, errors, requests } = await openPage(browser,
    '#/conv?lang=en&filter=gauss&size=3&stride=1&pad=1&dil=1&k1=4&k2=3&init=classic&seed=5');
  const [W, H] = [64, 48];
  await upload(page, W, H);
  assert.equal(await runLayers(page), 'true');
  assert.match(await page.textContent('#conv-layer1-badge'), /verified: 12288 values match/); // 48·64·4
  assert.match(await page.textContent('#conv-layer2-badge'), /verified: 9216 values match/); // 48·64·3
  assert.equal(await page.locator('canvas[id^="conv-map-1-"]').count(), 4);
  assert.equal(await page.locator('canvas[id^="conv-map-2-"]').count(), 3);
  assert.match(page.url(), /k1=4&k2=3&init=classic&seed=5/);

  // Layer 1, map 1 is Sobel x (÷3 on each colour) over the picture: the test's own reference.
  const sobel = [-1, 0, 1, -2, 0, 2, -1, 0, 1];
  const px = pictureAt(W, H);
  for (const [p, q] of [[20, 20], [0, 0], [12, 16], [47, 63]]) {
    await pointAt(page, 'conv-map-1-0', p, q, [H, W]);
    await page.waitForFunction(([p, q]) => document.querySelector('#conv-sum')
      && document.querySelector('.conv-explain h3')?.textContent.includes(`(${p}, ${q})`), [p, q]);
    let ref = 0, mag = 0;
    for (let r = 0; r < 3; r++) for (let s = 0; s < 3; s++) for (let c = 0; c < 3; c++) {
      const t = (sobel[r * 3 + s] / 3) * px(p - 1 + r, q - 1 + s, c);
      ref += t; mag += Math.abs(t);
    }
    const sum = await readSum(page);
    const bound = 2 * 27 * U * mag + 1e-7;
    assert.ok(Math.abs(sum.value - ref) <= bound, `layer 1 (${p}, ${q}): GPU ${sum.value} vs reference ${ref} (± ${bound})`);
    // The written-out terms are that picture's pixels and Sobel's weights, and sum to the pixel shown.
    const padded = (p === 0 || p === H - 1 ? 3 : 0) + (q === 0 || q === W - 1 ? 3 : 0) - ((p === 0 || p === H - 1) && (q === 0 || q === W - 1) ? 1 : 0);
    assert.equal(sum.terms.length, (9 - padded) * 3, `(${p}, ${q}) terms`);
    assert.equal(sum.macs, sum.terms.length);
    const written = sum.terms.reduce((a, [w, x]) => a + w * x, 0);
    assert.ok(Math.abs(written - sum.value) <= bound, `written ${written} = shown ${sum.value}`);
    assert.equal(sum.shown, sum.value < 0 ? `(${sum.value.toFixed(4)})` : sum.value.toFixed(4));
  }

  // Layer 2 at an inner pixel: 9 layer-1 pixels, 5×5 of the picture; 3·3·4 = 36 terms, all written.
  await pointAt(page, 'conv-map-2-1', 24, 32, [H, W]);
  await page.waitForFunction(() => document.querySelector('.conv-explain h3')?.textContent.includes('layer 2, feature map 2, pixel (24, 32)'));
  let f = await field(page);
  assert.deepEqual([f.rows, f.cols, f.read, f.layer1, f.box], [String(rf(3, 1, 1)), '5', '25', '9', '22,26,30,34']);
  let sum = await readSum(page);
  assert.equal(sum.terms.length, 36);
  assert.equal(sum.rest, null);
  let mag = sum.terms.reduce((a, [w, x]) => a + Math.abs(w * x), 0);
  let written = sum.terms.reduce((a, [w, x]) => a + w * x, 0);
  assert.ok(Math.abs(written - sum.value) <= 2 * 36 * U * mag + 1e-7, `layer 2: written ${written} vs shown ${sum.value}`);
  assert.ok(sum.terms.every(([, x]) => x >= 0), 'layer 2 reads layer 1 after ReLU');

  // Keyboard: the arrow keys move the picked pixel, and the lit window with it.
  await page.focus('#conv-map-2-1');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.querySelector('#conv-field')?.dataset.box === '23,27,31,35');
  // The lit cells are drawn: the picture canvas has the highlight colour inside the box only.
  const litInside = await page.evaluate(() => {
    const c = document.getElementById('conv-field-input');
    const z = c.width / 64;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const at = (r, col) => { const i = ((Math.floor((r + 0.5) * z)) * c.width + Math.floor((col + 0.5) * z)) * 4; return [d[i], d[i + 1], d[i + 2]]; };
    return { inside: at(25, 33), outside: at(5, 5) };
  });
  const orange = ([r, g, b]) => r > 200 && g > 60 && g < 200 && b < 120;
  assert.ok(orange(litInside.inside), `the field is lit ${litInside.inside}`);
  assert.ok(!orange(litInside.outside), `outside is not ${litInside.outside}`);

  // Stride 2: 7×7; dilation 2 (padding 2): 9×9 of which 25 are read.
  for (const [stride, pad, dil, p, q] of [[2, 1, 1, 6, 8], [1, 2, 2, 24, 32]]) {
    await page.fill('#conv-stride', String(stride));
    await page.fill('#conv-pad', String(pad));
    await page.fill('#conv-dil', String(dil));
    assert.equal(await runLayers(page), 'true');
    const [P, Q] = stride === 2 ? [12, 16] : [48, 64];
    await pointAt(page, 'conv-map-2-0', p, q, [P, Q]);
    await page.waitForFunction(([p, q]) => document.querySelector('.conv-explain h3')?.textContent.includes(`pixel (${p}, ${q})`), [p, q]);
    f = await field(page);
    const n = rf(3, stride, dil);
    assert.deepEqual([f.rows, f.cols], [String(n), String(n)], `stride ${stride} dil ${dil}`);
    assert.equal(f.read, String(dil === 1 ? n * n : 25));
  }

  // Eight layer-1 maps: 72 terms, 12 written and the rest summed; together the pixel shown.
  await page.fill('#conv-stride', '1');
  await page.fill('#conv-pad', '1');
  await page.fill('#conv-dil', '1');
  await page.selectOption('#conv-k1', '8');
  assert.equal(await runLayers(page), 'true');
  await pointAt(page, 'conv-map-2-2', 10, 10, [H, W]);
  await page.waitForFunction(() => document.querySelector('.conv-explain h3')?.textContent.includes('pixel (10, 10)'));
  sum = await readSum(page);
  assert.equal(sum.macs, 72);
  assert.equal(sum.terms.length, 12);
  assert.equal(sum.rest.count, 60);
  written = sum.terms.reduce((a, [w, x]) => a + w * x, 0) + sum.rest.sum;
  // |w| ≤ 1 (random), 0 ≤ x ≤ 16 (a classic filter's Σ|w| on [0, 1] pixels): Σ|terms| ≤ 72·16.
  assert.ok(Math.abs(written - sum.value) <= 2 * 72 * U * 72 * 16, `${written} vs ${sum.value}`);
  assert.match(await page.textContent('#conv-sum'), /\+ 60 more terms/);
  assertNoErrors(errors);
  assertSameOrigin(requests);
  await context.close();
});

test('im2col: an input pixel lights exactly its cells, the matrix times the filter is the output, the animation has P·Q steps', async () => {
  const { page, context, errors } = await openPage(browser, '#/conv?lang=en&filter=sharpen&size=3&stride=1&pad=1&dil=1');
  await page.waitForSelector('#conv-im2col');
  const check = async (stride, pad, dil, ir, ic) => {
    const P = Math.floor((6 + 2 * pad - dil * 2 - 1) / stride) + 1;
    const now = page.locator('#conv-anim-now');
    assert.equal(await now.getAttribute('data-steps'), String(P * P), `steps for stride ${stride} pad ${pad} dil ${dil}`);
    assert.match(await page.textContent('#conv-small .conv-formula'), new RegExp(`= ${P}$`));
    assert.equal(await page.locator('#conv-im2col .cell').count(), P * P * 9);
    // Point at input pixel (ir, ic): the cells that hold it, by the index arithmetic.
    await page.hover(`#conv-padded .cell[data-r="${ir + pad}"][data-c="${ic + pad}"]`);
    const expected = [];
    for (let p = 0; p < P; p++) for (let q = 0; q < P; q++) for (let r = 0; r < 3; r++) for (let s = 0; s < 3; s++) {
      if (p * stride - pad + r * dil === ir && q * stride - pad + s * dil === ic) expected.push(`${p * P + q},${r * 3 + s}`);
    }
    const lit = await page.$$eval('#conv-im2col .cell.lit', (cells) => cells.map((c) => `${c.dataset.row},${c.dataset.col}`));
    assert.deepEqual(lit.sort(), expected.sort(), `lit cells for (${ir}, ${ic})`);
    const value = await page.textContent(`#conv-padded .cell[data-r="${ir + pad}"][data-c="${ic + pad}"]`);
    const litText = await page.$$eval('#conv-im2col .cell.lit', (cells) => cells.map((c) => c.textContent));
    assert.ok(litText.every((t) => t === value), 'each lit cell holds the input value');
    // The product column is the matrix times the filter column.
    const { rows, column, product } = await page.evaluate(() => {
      const m = [...document.querySelectorAll('#conv-im2col .cell')].map((c) => Number(c.textContent));
      const f = [...document.querySelectorAll('#conv-filter-column .cell')].map((c) => Number(c.textContent));
      const y = [...document.querySelectorAll('#conv-product .cell')].map((c) => Number(c.textContent));
      const rows = [];
      for (let i = 0; i < m.length; i += 9) rows.push(m.slice(i, i + 9));
      return { rows, column: f, product: y };
    });
    assert.equal(product.length, P * P);
    rows.forEach((row, i) => {
      const y = row.reduce((a, v, j) => a + v * column[j], 0);
      assert.ok(Math.abs(y - product[i]) <= 0.005 + 1e-9, `row ${i}: ${y} vs ${product[i]}`);
    });
  };
  await check(1, 1, 1, 2, 3);
  await check(1, 1, 1, 0, 0);
  await page.fill('#conv-stride', '2');
  await page.fill('#conv-pad', '0');
  await check(2, 0, 1, 2, 2);
  await page.fill('#conv-stride', '1');
  await page.fill('#conv-pad', '1');
  await page.fill('#conv-dil', '2');
  await check(1, 1, 2, 3, 3);

  // The animation: stride 2, no padding → 2×2 = 4 steps; the taps sit at p·2 + r.
  await page.fill('#conv-dil', '1');
  await page.fill('#conv-stride', '2');
  await page.fill('#conv-pad', '0');
  await page.waitForFunction(() => document.querySelector('#conv-anim-now')?.dataset.steps === '4');
  const taps = () => page.$$eval('#conv-padded .cell.tap', (c) => c.map((e) => `${e.dataset.r},${e.dataset.c}`).sort());
  const window = (p, q) => { const t = []; for (let r = 0; r < 3; r++) for (let s = 0; s < 3; s++) t.push(`${p * 2 + r},${q * 2 + s}`); return t.sort(); };
  assert.deepEqual(await taps(), window(0, 0));
  await page.click('#conv-anim-step');
  assert.equal(await page.getAttribute('#conv-anim-now', 'data-step'), '2');
  assert.deepEqual(await taps(), window(0, 1));
  await page.click('#conv-anim-back');
  await page.click('#conv-anim-play');
  await page.waitForFunction(() => document.querySelector('#conv-anim-now')?.dataset.step === '4', null, { timeout: 10_000 });
  await page.waitForFunction(() => document.querySelector('#conv-anim-play')?.textContent === 'Play', null, { timeout: 5_000 });
  assert.deepEqual(await taps(), window(1, 1));
  assert.match(await page.textContent('#conv-anim-now'), /Step 4 of 4: output \(1, 1\)/);
  // Keyboard over the output: ArrowUp goes from (1, 1) to (0, 1), step 2.
  await page.focus('#conv-small-out');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.getAttribute('#conv-anim-now', 'data-step'), '2');
  // Padding 5 is more than the example draws: named, and the rest of the page still works.
  await page.fill('#conv-pad', '5');
  await page.waitForSelector('#conv-small-error');
  assert.match(await page.textContent('#conv-small-error'), /at most 4 rings of padding.*use 5/);
  assertNoErrors(errors);
  await context.close();
});

test('bad layer settings are named and nothing runs', async () => {
  const { page, context, errors } = await openPage(browser, '#/conv?lang=en&k1=0&k2=99&init=magic&seed=abc');
  await page.waitForSelector('#conv-url-errors');
  const named = await page.textContent('#conv-url-errors');
  for (const s of ['k1=0', 'k2=99', 'init=magic', 'seed=abc']) assert.ok(named.includes(s), `${s} named in: ${named}`);
  await page.fill('#conv-seed', '12x');
  await page.waitForSelector('#conv-seed-error');
  assert.ok(await page.isDisabled('#conv-layers-run'));
  await page.fill('#conv-seed', '12');
  await page.waitForSelector('#conv-layers-run:not([disabled])', { timeout: 60_000 });
  assert.match(page.url(), /seed=12/);
  // A 5×5 filter dilated by 16 at stride 2 fits the picture (65 ≤ 128) but not layer 1's 32×32 output.
  await page.selectOption('#conv-size', '5');
  await page.fill('#conv-pad', '0');
  await page.fill('#conv-stride', '2');
  await page.fill('#conv-dil', '16');
  await page.waitForSelector('#conv-layers-error');
  assert.match(await page.textContent('#conv-layers-error'), /spans 65 pixels along h.*only 32/);
  assert.ok(await page.isDisabled('#conv-layers-run'));
  assertNoErrors(errors);
  await context.close();
});

test('without WebGPU both layers run on the CPU and the sums still add up', async () => {
  const cpu = await launch({ webgpu: false });
  try {
    const { page, context, errors } = await openPage(cpu, '#/conv?lang=en&img=checker&k1=2&k2=2&init=random&seed=3');
    assert.equal(await runLayers(page), 'cpu');
    assert.match(await page.textContent('#conv-layers'), /on the CPU/);
    // (The run picks the middle pixel, (64, 64); pointing moves the pick.)
    await pointAt(page, 'conv-map-2-0', 60, 70, [128, 128]);
    await page.waitForFunction(() => document.querySelector('.conv-explain h3')?.textContent.includes('pixel (60, 70)'));
    const sum = await readSum(page);
    assert.equal(sum.terms.length, 18);
    const mag = sum.terms.reduce((a, [w, x]) => a + Math.abs(w * x), 0);
    const written = sum.terms.reduce((a, [w, x]) => a + w * x, 0);
    assert.ok(Math.abs(written - sum.value) <= 2 * 18 * U * mag + 1e-7);
    const f = await field(page);
    assert.deepEqual([f.rows, f.cols], ['5', '5']);
    assertNoErrors(errors);
    await context.close();
  } finally {
    await cpu.close();
  }
});

test('the conv lesson counts AlexNet from its shapes and its calculator names bad input', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/conv?lang=en');
  await page.waitForSelector('#alexnet-table');
  assert.equal(await page.textContent('h1'), 'Convolution and CNNs');
  // Hand-computed (crates/lessons/src/cnn.rs): 60,965,224 parameters, 724,406,816 multiply-adds.
  assert.equal(await page.getAttribute('#alexnet-params', 'data-params'), '60965224');
  assert.equal(await page.getAttribute('#alexnet-macs', 'data-macs'), '724406816');
  assert.equal(await page.getAttribute('tr[data-layer="conv1"] [data-macs]', 'data-macs'), String(55 * 55 * 96 * 11 * 11 * 3));
  // 6 · 724,406,816 · 1.2e6 · 90 FLOPs over 5.5 days, against 2 × 1.581 TFLOP/s.
  const share = (6 * 724406816 * 1.2e6 * 90) / (5.5 * 86400) / (2 * 1.581e12);
  assert.ok(Math.abs(Number(await page.getAttribute('#conv-calc-result', 'data-share')) - share) < 1e-6);
  assert.match(await page.textContent('#conv-calc-result'), /31% of the GPUs' combined peak/);
  await page.fill('#f-days', '0');
  await page.waitForSelector('#f-days-error:has-text("greater than zero")');
  assert.equal(await page.getAttribute('#conv-calc-result', 'data-share'), 'invalid');
  assert.match(page.url(), /days=0/);
  await page.fill('#f-days', '6');
  await page.waitForFunction(() => document.querySelector('#conv-calc-result')?.dataset.share !== 'invalid');
  await goto(page, '#/learn?lang=en');
  assert.ok(await page.$('a[href^="#/learn/conv"]'), 'the index links the conv lesson');
  for (const [lang, width] of [['en', 390], ['zh', 390], ['zh', 1280]]) {
    await page.setViewportSize({ width, height: 900 });
    // The lesson in this language: navigate when the language changes (zh 1280 is the zh page
    // at another width), and read it only once the shell says it shows /learn/conv in `lang`.
    const hash = `#/learn/conv?lang=${lang}`;
    await show(page, hash);
    assert.ok(await page.$('#alexnet-table'));
    const text = await page.evaluate(() => document.body.innerText);
    if (lang === 'zh') assert.match(text, /[\u4e00-\u9fff]/, 'the lesson in Chinese');
    assert.ok(!/\[(lb|lesson|conv)\./.test(text), `${lang}: a missing translation key is shown`);
    assert.ok(!/NaN|undefined|Infinity/.test(text), `${lang}: NaN on screen`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${lang} ${width}px scrolls sideways by ${overflow}px`);
    await page.screenshot({ path: join(OUT, `conv-lesson-${lang}-${width}.png`), fullPage: true });
  }
  assertNoErrors(errors);
  await context.close();
});

test('the conv-filter and conv-field embeds run on request and report verified results', async () => {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const src = url.searchParams.get('src') ?? '';
    const origin = new URL(BASE_URL).origin;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<iframe id="w" src="${src}" width="800" height="900"></iframe>
<script>window.received = []; addEventListener('message', (e) => received.push(e.data));
window.send = (m) => document.getElementById('w').contentWindow.postMessage(m, '${origin}');</script></body></html>`);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const host = `http://127.0.0.1:${server.address().port}`;
  try {
    for (const [widget, expect] of [['conv-filter', { width: 128, height: 128 }], ['conv-field', { k1: 2, k2: 3 }]]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const src = `${BASE_URL}#/embed/${widget}?lang=en&k1=2&k2=3&img=rings&parentOrigin=${encodeURIComponent(host)}`;
      await page.goto(`${host}/?src=${encodeURIComponent(src)}`);
      await page.waitForFunction(() => window.received.some((d) => d?.type === 'ready'), null, { timeout: 60_000 });
      const frame = page.frames().find((f) => f.url().startsWith(new URL(BASE_URL).origin));
      // Each embed shows its own view only.
      assert.equal(await frame.locator('#conv-layers').count(), widget === 'conv-field' ? 1 : 0);
      assert.equal(await frame.locator('#conv-output').count(), widget === 'conv-filter' ? 1 : 0);
      await frame.waitForSelector(widget === 'conv-field' ? '#conv-layers-run:not([disabled])' : '#conv-run:not([disabled])', { timeout: 60_000 });
      await page.evaluate(() => window.send({ api: 'gpu-playground', version: 1, type: 'run', id: 'c1' }));
      const done = await page.waitForFunction(() => window.received.find((d) => d?.type === 'run-finished'), null, { timeout: 120_000 });
      const r = (await done.jsonValue()).results;
      assert.equal(r.verified, true, `${widget}: ${JSON.stringify(r)}`);
      for (const [k, v] of Object.entries(expect)) assert.equal(r[k], v, `${widget} ${k}`);
      await context.close();
    }
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('screenshots: your photo filtered, the receptive field lit, im2col drawn (390/1280/1920, en and zh)', async () => {
  for (const lang of ['en', 'zh']) {
    for (const width of [390, 1280, 1920]) {
      const { page, context, errors, requests } = await openPage(browser,
        `#/conv?lang=${lang}&filter=edge&k1=4&k2=4`, { viewport: { width, height: 900 } });
      await upload(page, 320, 240, 'my-photo.png', [256, 192]);
      await page.waitForSelector('#conv-scaled');
      assert.equal(await filterAndWait(page), 'true');
      assert.equal(await runLayers(page), 'true');
      // At 390 px a map's cells are narrower than a CSS pixel: point near (90, 120), check the
      // field's size (any inner pixel of two 3×3 layers: 5×5), not its exact place.
      const box = await page.locator('#conv-map-2-0').boundingBox();
      await page.evaluate(() => document.getElementById('conv-map-2-0').scrollIntoView({ block: 'center' }));
      const b2 = await page.locator('#conv-map-2-0').boundingBox();
      await page.mouse.move(Math.round(b2.x + (b2.width * 120) / 256), Math.round(b2.y + (b2.height * 90) / 192));
      await page.waitForFunction(() => /\((8\d|9\d), (1[01]\d|12\d|13\d)\)/.test(document.querySelector('.conv-explain h3')?.textContent ?? ''));
      const f = await field(page);
      assert.deepEqual([f.rows, f.cols, f.read], ['5', '5', '25'], `${lang} ${width} ${box.width}`);
      await page.locator('.conv-images').screenshot({ path: join(OUT, `conv-photo-${lang}-${width}.png`) });
      await page.locator('#conv-layers').screenshot({ path: join(OUT, `conv-field-${lang}-${width}.png`) });
      await page.hover('#conv-padded .cell[data-r="3"][data-c="3"]');
      await page.waitForSelector('#conv-im2col .cell.lit');
      await page.locator('#conv-small').screenshot({ path: join(OUT, `conv-im2col-${lang}-${width}.png`) });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${lang} ${width}px scrolls sideways by ${overflow}px`);
      if (lang === 'zh') assert.match(await page.textContent('#conv-layers h2'), /感受野/);
      const text = await page.evaluate(() => document.body.innerText);
      assert.ok(!/\[(conv|embed)\./.test(text) && !/NaN|undefined/.test(text), `${lang}: missing key or NaN shown`);
      assertNoErrors(errors);
      assertSameOrigin(requests);
      await context.close();
    }
  }
});
