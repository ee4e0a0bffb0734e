// Lessons 13–16 (systolic arrays, INT8, FP64, heat): each renders in both languages at three
// widths with no console error, no NaN and no missing key; each widget's numbers are checked
// against hand-computed cases or bounds derived from arithmetic; bad input is named.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, screenshot, assertNoErrors } from './helpers.mjs';

const LESSONS = ['systolic', 'int8', 'fp64', 'thermal'];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function waitForProbe(page) {
  await page.waitForSelector('[data-probe="available"], [data-probe="unavailable"]', { timeout: 30_000, state: 'attached' });
  return page.getAttribute('[data-probe]', 'data-probe');
}

async function assertClean(page, where) {
  const text = await page.evaluate(() => document.querySelector('article.lesson').innerText);
  assert.doesNotMatch(text, /\[(lc|lesson|kernel|size)\.[^\]]+\]/, `${where}: a translation key is missing`);
  assert.doesNotMatch(text, /NaN|undefined|Infinity/, `${where}: NaN/undefined on screen`);
  return text;
}

/** The page is no wider than the viewport (nothing forces a horizontal scroll). */
async function assertNoOverflow(page, where) {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
  }));
  assert.ok(scroll <= client + 1, `${where}: page is ${scroll}px wide in a ${client}px viewport`);
}

test('the index lists the four new lessons after the first twelve and the conv lesson', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn?lang=en');
  await page.waitForSelector('.lesson-list li');
  const hrefs = await page.$$eval('.lesson-list a', (as) => as.map((a) => a.getAttribute('href')));
  const ids = hrefs.map((h) => h.replace(/^#\/learn\//, '').replace(/\?.*$/, ''));
  assert.deepEqual(ids.slice(13, 17), LESSONS);
  // The conv lesson's "next" link leads to the first of them.
  await goto(page, '#/learn/conv?lang=en');
  assert.match(await page.getAttribute('.lesson-nav .next', 'href'), /#\/learn\/systolic/);
  assertNoErrors(errors);
  await context.close();
});

// One load per language: at each width the four lessons are shown in turn (a hash change), so
// each is first drawn at that width, as a load at that width drew it.
for (const lang of ['en', 'zh']) {
  test(`lessons 13–16 render in ${lang} at 390, 1280 and 1920 px`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn?lang=${lang}`, { viewport: { width: 390, height: 900 } });
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      for (const id of LESSONS) {
        await goto(page, `#/learn/${id}?lang=${lang}`);
        assert.ok(await page.$(`article.lesson[data-lesson="${id}"]`), `${id} is shown`);
        await page.waitForSelector('.try-it');
        assert.ok(await page.$('.widget'), `${id} has a widget`);
        if (id !== 'systolic') await waitForProbe(page);
        if (id === 'systolic') {
          // Show a mid-animation state in the screenshot.
          for (let i = 0; i < 5; i++) await page.click('[data-act="step"]');
        }
        const text = await assertClean(page, `${id} ${lang} ${width}`);
        if (lang === 'zh') assert.match(text, /[\u4e00-\u9fff]/, `${id}: Chinese text`);
        await assertNoOverflow(page, `${id} ${lang} ${width}`);
        await screenshot(page, `lessons-systolic-thermal-${id}-${lang}-${width}`);
      }
    }
    assertNoErrors(errors);
    await context.close();
  });
}

const rowData = (page, sel) => page.$eval(sel, (r) => ({ ...r.dataset }));

test('systolic: a 4×4 array finishes a 4×4×4 product in 3n − 2 = 10 cycles', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/systolic?lang=en');
  const root = '.widget[data-widget="systolic"] .systolic';
  await page.waitForSelector(root);
  assert.equal(await page.getAttribute(root, 'data-total'), '10');
  // Four steps: PE (i, j) works in cycles i+j+1 ..= i+j+4, so 1 + 3 + 6 + 10 = 20 MACs so far,
  // 10 in cycle 4; the SIMT threads have done 4 × 16 = 64, all of them.
  for (let i = 0; i < 4; i++) await page.click('[data-act="step"]');
  let sys = await rowData(page, 'tr[data-row="systolic"]');
  let simt = await rowData(page, 'tr[data-row="simt"]');
  assert.equal(sys.now, '10');
  assert.equal(sys.done, '20');
  assert.equal(simt.done, '64');
  assert.equal(simt.cycles, '4');
  // To the end: 64 MACs in 10 cycles, at most 12 in one cycle; A and B read once each (2nK = 32)
  // against two operands per MAC for the threads (128).
  await page.click('[data-act="end"]');
  sys = await rowData(page, 'tr[data-row="systolic"]');
  simt = await rowData(page, 'tr[data-row="simt"]');
  assert.deepEqual([sys.done, sys.cycles, sys.peak, sys.reads, sys.now], ['64', '10', '12', '32', '1']);
  assert.deepEqual([simt.reads, simt.readsTotal, simt.peak], ['128', '128', '16']);
  // C equals A·B computed here from the numbers the page shows.
  const d = await page.$eval(root, (e) => ({ ...e.dataset }));
  const [a, b, c] = [d.a, d.b, d.c].map((s) => s.split(',').map(Number));
  const n = 4, k = 4;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
      assert.equal(c[i * n + j], s, `C[${i}][${j}]`);
    }
  }
  assert.equal(await page.getAttribute('[data-ok]', 'data-ok'), 'true');
  // One step back: the far corner's last MAC is undone; 3 PEs work in cycle 9.
  await page.click('[data-act="back"]');
  sys = await rowData(page, 'tr[data-row="systolic"]');
  assert.deepEqual([sys.done, sys.now], ['63', '3']);
  // Play advances on its own.
  await page.click('[data-act="reset"]');
  await page.click('[data-act="play"]');
  await page.waitForFunction((r) => Number(document.querySelector(r).dataset.cycle) >= 2, root, { timeout: 5000 });
  await page.click('[data-act="play"]');
  // A long K fills the array: n = 2, K = 16 → 2n + K − 2 = 18 cycles, 4 MACs per cycle at peak.
  await page.fill('#systolic-n', '2');
  await page.fill('#systolic-k', '16');
  await page.waitForFunction((r) => document.querySelector(r)?.dataset.total === '18', root);
  await page.click('[data-act="end"]');
  sys = await rowData(page, 'tr[data-row="systolic"]');
  assert.deepEqual([sys.done, sys.peak, sys.reads], ['64', '4', '64']);
  assertNoErrors(errors);
  await context.close();
});

test('systolic: bad sizes are named and nothing is drawn', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/systolic?lang=en');
  await page.waitForSelector('#systolic-n');
  for (const [field, value, re] of [
    ['#systolic-n', '', /empty|enter/i],
    ['#systolic-n', 'abc', /whole number/i],
    ['#systolic-n', '9', /2.*8/],
    ['#systolic-k', '0', /1.*16/],
  ]) {
    await page.fill('#systolic-n', '4');
    await page.fill('#systolic-k', '4');
    await page.fill(field, value);
    const msg = await page.textContent(`${field}-error`);
    assert.match(msg, re, `${field}=${value}: ${msg}`);
    assert.ok(await page.$('[data-invalid="true"]'), `${field}=${value}: the widget says why it is empty`);
    assert.equal(await page.$('.systolic'), null);
  }
  assertNoErrors(errors);
  await context.close();
});

async function measure(page, widget, timeout = 180_000) {
  const sel = `.widget[data-widget="${widget}"]`;
  await page.click(`${sel} button.measure`);
  await page.waitForFunction((s) => {
    const st = document.querySelector(`${s} .widget-result`)?.dataset.state;
    return st === 'done' || st === 'error' || st === 'lost';
  }, sel, { timeout });
  assert.equal(await page.getAttribute(`${sel} .widget-result`, 'data-state'), 'done', await page.textContent(`${sel} .widget-result`));
  return sel;
}

test('int8: scales, exact integers and errors inside their bounds', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/int8?lang=en');
  assert.equal(await waitForProbe(page), 'available');
  await page.fill('#int8-n', '128');
  const sel = await measure(page, 'int8');
  const s = await page.$eval(`${sel} .scales`, (e) => ({ ...e.dataset }));
  // scale = max|x| / 127; the inputs are uniform in [−1, 1), so max|x| is close to 1.
  for (const [m, sc] of [[s.maxA, s.scaleA], [s.maxB, s.scaleB]]) {
    assert.ok(Number(m) > 0.95 && Number(m) <= 1, m);
    assert.ok(Math.abs(Number(sc) - Number(m) / 127) <= 1e-6 * Number(sc), `${sc} vs ${m}/127`);
  }
  // q = round(x / s) for the values shown.
  for (const r of await page.$$eval(`${sel} .quant-sample tr[data-x]`, (rs) => rs.map((x) => ({ ...x.dataset })))) {
    assert.equal(Number(r.q), Math.round(Number(r.x) / Number(s.scaleA)), JSON.stringify(r));
  }
  const rows = Object.fromEntries(await page.$$eval(`${sel} tr[data-row]`, (rs) => rs.map((r) => [r.dataset.row, { ...r.dataset }])));
  assert.deepEqual(Object.keys(rows).sort(), ['f16', 'f32-block', 'f32-tiled', 'int8']);
  const bound = Number(await page.getAttribute(`${sel} [data-bound]`, 'data-bound'));
  // The bound ≈ (s/2)(Σ|a| + Σ|b|) / Σ|a·b| ≈ 4/254 ≈ 0.016 for uniform inputs; the error of
  // random roundings is far below it but far above f32's (its σ is about 5 × 10⁻⁴ of Σ|a·b|).
  assert.ok(bound > 0.01 && bound < 0.03, `bound ${bound}`);
  const e8 = Number(rows.int8.err);
  assert.ok(e8 > 1e-4 && e8 <= bound, `int8 error ${e8}, bound ${bound}`);
  // f32: K = 128 roundings of 2⁻²⁴ at most: < 128 · 6 × 10⁻⁸ ≈ 7.6 × 10⁻⁶.
  for (const id of ['f32-tiled', 'f32-block']) {
    assert.ok(Number(rows[id].err) < 7.6e-6, `${id} ${rows[id].err}`);
    assert.ok(Number(rows[id].ms) > 0, `${id} time`);
  }
  // f16 inputs: each rounding ≤ 2⁻¹¹ relative, a product ≤ 2⁻¹⁰ + 2⁻²², sums exact → ≤ 9.8 × 10⁻⁴.
  assert.ok(Number(rows.f16.err) > 1e-6 && Number(rows.f16.err) <= 9.8e-4, `f16 ${rows.f16.err}`);
  const dp4 = await page.getAttribute(`${sel} [data-dp4]`, 'data-dp4');
  if (dp4 === 'true') {
    assert.equal(await page.getAttribute(`${sel} [data-exact]`, 'data-exact'), 'true', 'INT8 on the GPU equals the exact integer product');
    assert.ok(Number(rows.int8.ms) > 0);
    assert.equal(rows.int8.errSrc, 'gpu');
  } else {
    assert.ok(await page.$(`${sel} [data-int8-missing]`), 'the missing feature is explained');
    assert.equal(rows.int8.errSrc, 'cpu');
  }
  await screenshot(page, 'lessons-systolic-thermal-int8-result-en');
  console.log(`int8 (n=128): dp4=${dp4}`, Object.values(rows).map((r) => `${r.row} ${r.ms || '-'} ms err ${Number(r.err).toExponential(2)}`).join('; '));
  // Bad sizes.
  for (const [v, re] of [['8', /16.*512/], ['abc', /whole number/i], ['', /empty|enter/i]]) {
    await page.fill('#int8-n', v);
    assert.match(await page.textContent('#int8-n-error'), re, v);
    assert.ok(await page.isDisabled(`${sel} button.measure`), `${v}: Measure disabled`);
  }
  assertNoErrors(errors);
  await context.close();
});

test('fp64: double-float reaches 2⁻⁴⁴ where f32 stops near 2⁻²⁴; the table shows 1:2 and 1:64', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/fp64?lang=en');
  // Vendor ratios: FP32 ÷ FP64 peaks.
  const ratio = (g) => page.getAttribute(`tr[data-gpu="${g}"]`, 'data-ratio');
  assert.equal(await ratio('H100 SXM5'), '2');
  assert.equal(await ratio('A100'), '2');
  assert.equal(await ratio('RTX 4090'), '64');
  assert.equal(await ratio('RTX 3090'), '64');
  assert.equal(await waitForProbe(page), 'available');
  await page.fill('#fp64-n', '64');
  const sel = await measure(page, 'fp64');
  const f = await rowData(page, `${sel} tr[data-row="f32"]`);
  const d = await rowData(page, `${sel} tr[data-row="df64"]`);
  // f32 rounds the inputs (2⁻²⁵ each) and 64 sums: error ≥ 2⁻³² and ≤ 66 · 2⁻²⁴.
  assert.ok(Number(f.err) >= 2 ** -32 && Number(f.err) <= 66 * 2 ** -24, `f32 ${f.err}`);
  // Double-float: a few units of 2⁻⁴⁸ per multiply-add, 64 of them: ≤ 2⁻⁴⁴.
  assert.ok(Number(d.err) <= 2 ** -44, `df64 ${d.err} = 2^${Math.log2(Number(d.err)).toFixed(1)}`);
  // Both kinds timed (each result checked above), and the ratio the page states is theirs.
  // Which one is faster is the machine's business (docs/benchmarks.md has the figures).
  assert.ok(Number(f.ms) > 0 && Number(d.ms) > 0, `f32 ${f.ms} ms, df64 ${d.ms} ms`);
  const r = Number(await page.getAttribute(`${sel} [data-ratio]`, 'data-ratio'));
  assert.ok(Math.abs(r - Number(d.ms) / Number(f.ms)) <= 1e-9 * r, `ratio ${r} vs ${d.ms} / ${f.ms}`);
  await screenshot(page, 'lessons-systolic-thermal-fp64-result-en');
  console.log(`fp64 (n=64): f32 ${f.ms} ms err 2^${Math.log2(Number(f.err)).toFixed(1)}, df64 ${d.ms} ms err 2^${Math.log2(Number(d.err)).toFixed(1)}, ratio ${r.toFixed(1)}`);
  await page.fill('#fp64-n', '1000');
  assert.match(await page.textContent('#fp64-n-error'), /16.*512/);
  assert.ok(await page.isDisabled(`${sel} button.measure`));
  assertNoErrors(errors);
  await context.close();
});

test('thermal: a short sustained run charts GFLOP/s; bad durations are named', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/thermal?lang=en');
  assert.equal(await waitForProbe(page), 'available');
  const sel = '.widget[data-widget="thermal"]';
  for (const [v, re] of [['1', /2.*300/], ['abc', /whole number/i], ['', /empty|enter/i]]) {
    await page.fill('#thermal-secs', v);
    assert.match(await page.textContent('#thermal-secs-error'), re, v);
    assert.ok(await page.isDisabled(`${sel} [data-act="start"]`), `${v}: Start disabled`);
  }
  await page.fill('#thermal-secs', '3');
  await page.click(`${sel} [data-act="start"]`);
  await page.waitForFunction((s) => {
    const st = document.querySelector(`${s} .widget-result`)?.dataset.state;
    return st === 'done' || st === 'error' || st === 'lost';
  }, sel, { timeout: 60_000 });
  assert.equal(await page.getAttribute(`${sel} .widget-result`, 'data-state'), 'done', await page.textContent(`${sel} .widget-result`));
  // A software adapter gets the 256³ load.
  assert.equal(await page.getAttribute(`${sel} [data-n]`, 'data-n'), '256');
  const pts = await page.$$eval(`${sel} circle.point`, (cs) => cs.map((c) => [Number(c.dataset.t), Number(c.dataset.gflops)]));
  assert.ok(pts.length >= 2, `${pts.length} points`);
  for (let i = 0; i < pts.length; i++) {
    const [t, g] = pts[i];
    // A CPU pretending to be a GPU: above 0.01 GFLOP/s, far below 10 TFLOP/s.
    assert.ok(g > 0.01 && g < 10_000, `point ${i}: ${g} GFLOP/s`);
    if (i > 0) assert.ok(t > pts[i - 1][0], 'time increases');
  }
  // The run lasts until 3 s have passed.
  assert.ok(pts.at(-1)[0] >= 3 && pts.at(-1)[0] < 30, `last point at ${pts.at(-1)[0]} s`);
  const early = Number(await page.getAttribute(`${sel} [data-early]`, 'data-early'));
  const sorted = pts.slice(0, Math.min(pts.length, Math.max(3, Math.floor(pts.length / 5)))).map((p) => p[1]).sort((a, b) => a - b);
  const m = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  assert.ok(Math.abs(early - m) <= 1e-9 * m, `early median ${early} vs ${m}`);
  await screenshot(page, 'lessons-systolic-thermal-thermal-result-en');
  console.log(`thermal (3 s, SwiftShader): ${pts.length} points, ${pts.map((p) => p[1].toFixed(2)).join(', ')} GFLOP/s`);
  assertNoErrors(errors);
  await context.close();
});

test('thermal: Stop ends a 60 s run, keeps the points, leaves the GPU free and says a software adapter cannot tell throttling', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/thermal?lang=en');
  assert.equal(await waitForProbe(page), 'available');
  const sel = '.widget[data-widget="thermal"]';
  await page.fill('#thermal-secs', '60');
  await page.click(`${sel} [data-act="start"]`);
  // Six points: enough for a verdict (lessons::thermal::MIN_POINTS).
  await page.waitForFunction((s) => Number(document.querySelector(`${s} .widget-result`)?.dataset.points) >= 6, sel, { timeout: 90_000 });
  // Stop, counting the points shown in the same task as the click.
  const t0 = Date.now();
  const atClick = await page.evaluate((s) => {
    const n = Number(document.querySelector(`${s} .widget-result`).dataset.points);
    document.querySelector(`${s} [data-act="stop"]`).click();
    return n;
  }, sel);
  // "stopped" is set once the run's loop has returned (a 60 s run would say "done" or go on).
  await page.waitForFunction((s) => document.querySelector(`${s} .widget-result`)?.dataset.state === 'stopped', sel, { timeout: 30_000 });
  const ms = Date.now() - t0;
  assert.ok(await page.$(`${sel} [data-stopped="true"]`));
  // The chunk in flight at the click may still add its point; nothing after it.
  const kept = Number(await page.getAttribute(`${sel} .widget-result`, 'data-points'));
  assert.ok(kept >= 1 && kept >= atClick && kept <= atClick + 1, `${atClick} points at the click, ${kept} kept`);
  assert.equal(await page.isDisabled(`${sel} [data-act="stop"]`), true, 'nothing left to stop');
  assert.equal(await page.isDisabled(`${sel} [data-act="start"]`), false, 'a new run can start');
  // The GPU is free again: no run left in the queue, no buffer leaked.
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_live_buffers()), 0);
  // On a software adapter a slowdown is the CPU's, so the lesson never calls it throttling
  // (or its absence): it says it can't tell, and why.
  assert.equal(await page.getAttribute(`${sel} .verdict`, 'data-verdict'), 'software');
  assert.match(await page.textContent(`${sel} .verdict`), /Can't tell here: .*software adapter/);
  console.log(`thermal: stopped ${ms} ms after the click (a figure for docs/benchmarks.md, not a check)`);
  assertNoErrors(errors);
  await context.close();
});

test('without WebGPU: INT8 still computes its error on the CPU; the GPU widgets explain', async () => {
  const noGpu = await launch({ webgpu: false });
  try {
    const { page, context, errors } = await openPage(noGpu, '#/learn/int8?lang=en');
    assert.equal(await waitForProbe(page), 'unavailable');
    await page.fill('#int8-n', '64');
    const sel = await measure(page, 'int8');
    const int8 = await rowData(page, `${sel} tr[data-row="int8"]`);
    assert.equal(int8.errSrc, 'cpu');
    assert.ok(Number(int8.err) > 1e-4 && Number(int8.err) < 0.03, int8.err);
    assert.ok(await page.$(`${sel} [data-int8-missing]`));
    for (const id of ['fp64', 'thermal']) {
      await goto(page, `#/learn/${id}?lang=en`);
      await page.waitForSelector(`article.lesson[data-lesson="${id}"] [data-no-webgpu="true"]`);
    }
    assertNoErrors(errors);
    await context.close();
  } finally {
    await noGpu.close();
  }
});

test('thermal: Stop says what it kept: nothing yet when no point was measured (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/learn/thermal?lang=${lang}`);
    assert.equal(await waitForProbe(page), 'available');
    const sel = '.widget[data-widget="thermal"]';
    // Stop in the microtask after the render that enables it: the run is cancelled before
    // (or just as) its first chunk is measured.
    await page.evaluate((s) => {
      const widget = document.querySelector(s);
      const stopWhenOn = () => {
        const stop = widget.querySelector('[data-act="stop"]');
        if (stop && !stop.disabled && !window.__stopped) {
          window.__stopped = true;
          stop.click();
        }
      };
      new MutationObserver(stopWhenOn).observe(widget, { subtree: true, childList: true, attributes: true });
      widget.querySelector('[data-act="start"]').click();
    }, sel);
    await page.waitForFunction((s) => document.querySelector(`${s} .widget-result`)?.dataset.state === 'stopped', sel, { timeout: 30_000 });
    const points = Number(await page.getAttribute(`${sel} .widget-result`, 'data-points'));
    const note = await page.textContent(`${sel} [data-stopped="true"]`);
    // The note matches what is on the chart, whichever way the race with the first chunk went.
    if (points === 0) assert.match(note, lang === 'en' ? /nothing to show yet/ : /还没有可显示的内容/, note);
    else assert.match(note, lang === 'en' ? /measured so far are kept/ : /已测得的点会保留/, note);
    assertNoErrors(errors);
    await context.close();
  }
});
