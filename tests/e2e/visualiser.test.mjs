// The SIMT visualiser: stepping changes what is lit and the counters as the model says;
// coalescing is visible in the counts; keyboard; URL state; bad parameters; both languages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { launch, openPage, goto, screenshot, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const counter = (page, table, key) =>
  page.$eval(`[data-counters="${table}"] td[data-key="${key}"]`, (td) => Number(td.textContent.replace(/,/g, '')));

test('stepping moves the lit cells and the counters follow the model', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=naive&size=32&wg=8&sg=32');
  await page.waitForSelector('#vis-step');
  assert.match(await page.textContent('#vis-step'), /Step 1 of 33/);
  // Naive, 8×8 workgroups: a 32-lane subgroup is 4 rows of 8 lanes, x → row of C. A is read
  // from 8 different rows (8 sectors), B from 4 neighbouring columns (1 sector): 9.
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.sectors'), 9);
  const before = await page.$$eval('.vis-matrix .cell', (cs) => cs.map((c) => `${c.getAttribute('x')},${c.getAttribute('y')}`).join(' '));
  const shot1 = await screenshot(page, 'visualiser-step1-en');
  await page.click('#vis-forward');
  await page.waitForFunction(() => document.querySelector('#vis-step').dataset.step === '1');
  const after = await page.$$eval('.vis-matrix .cell', (cs) => cs.map((c) => `${c.getAttribute('x')},${c.getAttribute('y')}`).join(' '));
  assert.notEqual(before, after, 'a new column of A is read at step 2');
  const total1 = await counter(page, 'vis.counters.total', 'vis.count.sectors');
  // 32×32 outputs / 32 lanes = 32 subgroups, 9 sectors each per step, over 2 steps.
  assert.equal(total1, 2 * 32 * 9);
  const shot2 = await screenshot(page, 'visualiser-step2-en');
  assert.notDeepEqual(readFileSync(shot1), readFileSync(shot2), 'screenshots differ between steps');
  // Keyboard: focus the view, → and ←.
  await page.focus('.vis-view');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('#vis-step').dataset.step === '2');
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.querySelector('#vis-step').dataset.step === '1');
  // Space plays; it reaches further steps by itself, then space pauses.
  await page.selectOption('#vis-speed', '10');
  await page.focus('.vis-view');
  await page.keyboard.press(' ');
  await page.waitForFunction(() => Number(document.querySelector('#vis-step').dataset.step) >= 4);
  await page.keyboard.press(' ');
  assert.match(new URL(page.url()).hash, /step=\d+/);
  assertNoErrors(errors);
  await context.close();
});

test('coalesced reads cost far fewer sectors than naive ones', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=coalesced&size=32&wg=8&sg=32');
  await page.waitForSelector('#vis-step');
  // Coalesced, same shape: A from 4 rows (4 sectors), B 8 neighbouring words (1 sector): 5,
  // against 9 for naive; with a whole warp along x it is 5 against 33 (the model's tests).
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.sectors'), 5);
  assert.equal(await counter(page, 'vis.counters.step', 'vis.count.sectors'), 32 * 5);
  await screenshot(page, 'visualiser-coalesced-en');
  assertNoErrors(errors);
  await context.close();
});

test('the transposed shared tile shows bank conflicts and padding removes them', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=zh&stage=tiled-transposed&size=32&wg=16&sg=32');
  await page.waitForSelector('#vis-step');
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.conflicts'), 7);
  assert.match(await page.textContent('.visualiser h1'), /SIMT 视图/);
  await screenshot(page, 'visualiser-tiled-zh');
  await goto(page, '#/visualiser?lang=zh&stage=tiled-transposed&size=32&wg=16&sg=32&pad=2');
  await page.waitForFunction(() => document.querySelector('[data-counters="vis.counters.subgroup"] td[data-key="vis.count.conflicts"]')?.textContent === '0');
  assertNoErrors(errors);
  await context.close();
});

test('picking a thread shows its ids under both names; bad parameters get a message', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&size=9999&sg=33&stage=warp');
  await page.waitForSelector('#vis-step');
  const msg = await page.textContent('.visualiser .message.error');
  // Out of range is clamped and said; not allowed at all is replaced by the default.
  assert.match(msg, /The matrix size \(size\): 9999 is outside 4–64; using 64/);
  assert.equal(await page.inputValue('#vis-size'), '64');
  assert.match(msg, /The subgroup width \(sg\): “33” is not allowed here/);
  assert.match(msg, /The stage \(stage\): “warp”/);
  // In Chinese, the field's Chinese name (not a bare "size =").
  await goto(page, '#/visualiser?lang=zh&size=9999&sg=33&stage=warp');
  const zh = await page.textContent('.visualiser .message.error');
  assert.match(zh, /矩阵尺寸（size）：9999 超出 4–64 的范围；改用 64。/);
  assert.match(zh, /子组宽度（sg）：“33”在这里不允许/);
  await goto(page, '#/visualiser?lang=en&size=9999&sg=33&stage=warp');
  await page.click('.vis-wgs rect[data-wg="1,2"]');
  await page.click('.vis-threads rect[data-thread="11"]');
  const ids = await page.textContent('#vis-ids');
  // workgroup (1, 2) of 8×8, local index 11 → local (3, 1), global (11, 17)
  assert.match(ids, /global_invocation_id\(11, 17\)/);
  assert.match(ids, /local_invocation_id\(3, 1\)threadIdx/);
  assert.match(ids, /workgroup_id\(1, 2\)blockIdx/);
  assert.match(new URL(page.url()).hash, /wgx=1&wgy=2&t=11/);
  assertNoErrors(errors);
  await context.close();
});

test('real-GPU mode records every workgroup exactly once and replays the waves', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en');
  await page.waitForFunction(() => document.querySelector('#real-record')?.disabled === false, null, { timeout: 30_000 });
  await page.click('#real-record');
  await page.waitForSelector('[data-recorded="true"]', { timeout: 120_000 });
  const n = Number(await page.getAttribute('.real-summary', 'data-workgroups'));
  const resident = Number(await page.getAttribute('.real-summary', 'data-max-resident'));
  assert.equal(n, 32 * 32);
  assert.ok(resident >= 1 && resident <= n, `resident ${resident}`);
  assert.match(await page.textContent('.real-gpu'), /each exactly once/);
  assert.match(await page.textContent('.real-gpu'), /CPU emulating a GPU/);
  // The replay plays to the end by itself.
  await page.waitForFunction(() => /1024 of 1024/.test(document.querySelector('.real-gpu .vis-step')?.textContent ?? ''),
    null, { timeout: 60_000 });
  console.log(`SwiftShader schedule: 1024 workgroups, at most ${resident} resident at once`);
  await screenshot(page, 'visualiser-real-gpu-en');
  assertNoErrors(errors);
  await context.close();
});

test('compare mode counts two stages on the same problem side by side', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=naive&size=32&wg=8&sg=32');
  await page.waitForSelector('#vis-step');
  await page.selectOption('#vis-compare', 'coalesced');
  await page.waitForSelector('.vis-compare');
  assert.match(new URL(page.url()).hash, /compare=coalesced/);
  const cell = (key, col) => page.$eval(`.compare-table tr[data-key="${key}"] td.${col}`,
    (td) => Number(td.textContent.replace(/,/g, '')));
  const [naive, coalesced] = [await cell('vis.count.sectors', 'a'), await cell('vis.count.sectors', 'b')];
  // Per step per subgroup 9 vs 5 sectors (see above), for 32 steps and 32 subgroups, plus the
  // stores (naive writes 8 rows × 4 columns: 8 sectors; coalesced 4 rows of 8: 4 sectors).
  assert.equal(naive, 32 * 32 * 9 + 32 * 8);
  assert.equal(coalesced, 32 * 32 * 5 + 32 * 4);
  assert.equal(await cell('vis.count.global', 'a'), await cell('vis.count.global', 'b'), 'same work');
  await screenshot(page, 'visualiser-compare-en');
  assertNoErrors(errors);
  await context.close();
});

// ------------------------------------------------------------------ conv stages

test('conv direct: each term from global memory, counters and reuse as computed by hand', async () => {
  // 4×4 picture, 3 channels, 8 filters 3×3, padding 1: 16 pixels × 8 filters in one 16×16
  // workgroup. Step 13 is the centre tap (r 1, s 1, c 0): subgroup 0 = pixels 0 and 1 × 8
  // filters (16 lanes; 16 lanes past the last filter idle) reads x[0], x[3] (1 sector) and
  // f[96..104] (1 sector, lines 0 and 3): 32 loads, 2 sectors, 2 lines.
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=conv-direct&size=4&sg=32&step=12&t=0');
  await page.waitForSelector('#vis-step');
  assert.match(await page.textContent('#vis-step'), /Step 13 of 28 · every thread adds term \(r 1, s 1, channel 0\)/);
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.global'), 32);
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.sectors'), 2);
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.lines'), 2);
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.inactive'), 16);
  assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.shared'), 0);
  // The whole launch: (2+3+3+2)² = 100 taps inside the picture × 3 channels × 8 filters =
  // 2,400 reads of 48 values.
  assert.equal(await page.getAttribute('.vis-reuse', 'data-reads'), '2400');
  assert.equal(await page.getAttribute('.vis-reuse', 'data-distinct'), '48');
  assert.match(await page.textContent('.vis-reuse'), /fetched 50\.0 times/);
  // Lit: two input cells and eight filter cells.
  const lit = await page.$$eval('.vis-matrix .cell', (cs) => cs.length);
  assert.equal(lit, 2 + 8);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`conv tiled: the halo is staged once into workgroup memory, then read from there (${lang})`, async () => {
    for (const width of [390, 1280, 1920]) {
      // Patch 10×10×3 = 300 words, staged in 5 passes of 64. Thread 40 is in subgroup 1
      // (words 32–63): patch row 1 = image row 0, columns 1–4 (words 33–44, x[0..12]) and
      // word 63 (x[12]): 13 loads in 2 sectors, 1 line; 32 consecutive words written: no
      // bank conflict.
      const { page, context, errors } = await openPage(
        browser, `#/visualiser?lang=${lang}&stage=conv-tiled&size=4&sg=32&step=0&t=40`, { viewport: { width, height: 1000 } },
      );
      await page.waitForSelector('#vis-step');
      assert.match(await page.textContent('#vis-step'), lang === 'en' ? /Step 1 of 33/ : /33/);
      assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.global'), 13);
      assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.sectors'), 2);
      assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.lines'), 1);
      assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.shared'), 32);
      assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.conflicts'), 0);
      // Each of the 48 input values is read from global memory once.
      assert.equal(await page.getAttribute('.vis-reuse', 'data-reads'), '48');
      assert.equal(await page.getAttribute('.vis-reuse', 'data-distinct'), '48');
      // The patch is drawn with what it holds: after pass 1 the first 64 words are staged.
      assert.equal(await page.$$eval('.vis-matrix rect.held', (r) => r.length), 13 + 0);
      // Stepping on to the first term read from workgroup memory: no global input reads.
      await goto(page, `#/visualiser?lang=${lang}&stage=conv-tiled&size=4&sg=32&step=5&t=0`);
      await page.waitForFunction(() => document.querySelector('#vis-step')?.dataset.step === '5');
      assert.equal(await counter(page, 'vis.counters.subgroup', 'vis.count.shared'), 32);
      assert.equal(await page.$$eval('.vis-matrix rect.held', (r) => r.length), 48, 'the whole patch is staged');
      await screenshot(page, `visualiser-conv-tiled-${width}-${lang}`);
      const over = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      assert.ok(over <= 1, `the page is ${over} px wider than ${width}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}
