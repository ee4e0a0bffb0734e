// Scratch mode (#/editor?scratch): buffers declared in a table (each bad field named), their
// WGSL declarations kept in the source, a one-step run whose buffers come back as a table and
// a heatmap, and the whole setup shared by link. Both languages, three widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, assertSameOrigin, setDoc, docText,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function ready(page) {
  await page.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  await page.waitForSelector('.scratch-buffers tbody tr');
}

async function field(page, selector, value) {
  await page.fill(selector, value);
  await page.dispatchEvent(selector, 'change');
}

async function run(page) {
  await page.waitForSelector('.editor-actions .button.primary:not([disabled])', { timeout: 60_000 }).catch(async (e) => {
    // Run is disabled while a run goes, without WebGPU, or with a bad table: say which.
    const why = await page.evaluate(() => ({
      table: document.querySelector('.scratch-errors')?.textContent ?? '',
      messages: [...document.querySelectorAll('main .message')].map((m) => m.textContent),
      rows: [...document.querySelectorAll('.scratch-buffers tbody tr')].map((r) => [...r.querySelectorAll('input, select')].map((i) => i.value).join('|')),
    }));
    throw new Error(`Run stayed disabled: ${JSON.stringify(why)} (${e.message.split('\n')[0]})`);
  });
  await page.click('.editor-actions .button.primary');
  await page.waitForSelector('.scratch-result .verdict, .scratch-result .message.error', { timeout: 120_000 });
}

const values = (page, name) => page.$$eval(`.scratch-out[data-buffer-name="${name}"] .scratch-values td`, (td) => td.map((t) => t.textContent));

test('the starter doubles a ramp; results come back as a table and a heatmap', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/editor?lang=en&scratch');
  await ready(page);
  assert.match(await docText(page), /@group\(0\) @binding\(0\) var<storage, read_write> data: array<f32>;/);
  await run(page);
  const got = await values(page, 'data');
  assert.equal(got.length, 256);
  assert.deepEqual(got.slice(0, 5), ['0', '2', '4', '6', '8']);
  assert.equal(got[255], '510');
  const heat = await page.$eval('.scratch-heatmap', (c) => [c.width, c.height]);
  assert.deepEqual(heat, [16, 16]);
  assertSameOrigin(requests);
  assertNoErrors(errors);
  await context.close();
});

test('bad buffer fields are named and Run waits for them', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&scratch');
  await ready(page);
  await field(page, '.scratch-len', 'abc');
  const err = await page.waitForSelector('.scratch-errors li[data-error="scratch.err.length"]');
  assert.match(await err.textContent(), /The length of data, “abc”, is not a whole number from 1 to 1048576/);
  assert.equal(await page.isDisabled('.editor-actions .button.primary'), true);
  await field(page, '.scratch-len', '4');
  await page.selectOption('.scratch-init', 'list');
  await field(page, '.scratch-arg', '1, 2, x');
  const texts = await page.$$eval('.scratch-errors li', (li) => li.map((l) => l.textContent));
  assert.deepEqual(texts, ['data has 4 elements but its list has 3 values.']);
  await field(page, '.scratch-arg', '1, 2, x, 4');
  assert.match(await page.textContent('.scratch-errors'), /Value 3 of data, “x”, is not a number of type f32/);
  await field(page, '.scratch-name', 'fn');
  await page.waitForSelector('.scratch-errors li[data-error="scratch.err.name_invalid"]');
  await field(page, '.scratch-group[data-axis="y"]', '0');
  await page.waitForSelector('.scratch-errors li[data-error="scratch.err.groups"]');
  assertNoErrors(errors);
  await context.close();
});

test('a half-typed field survives the page redrawing before it is committed', async () => {
  // Any other change redraws the table; a field bound straight to the table's value was set
  // back to it, wiping text typed but not yet committed (what failed a loaded run).
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&scratch');
  await ready(page);
  await field(page, '.scratch-len', '4');
  await page.selectOption('.scratch-init', 'list');
  await page.fill('.scratch-arg', '1 2 3 4');
  await field(page, '.scratch-group[data-axis="x"]', '1');
  assert.equal(await page.inputValue('.scratch-arg'), '1 2 3 4', 'the typed list survived the redraw');
  await page.dispatchEvent('.scratch-arg', 'change');
  await run(page);
  assert.deepEqual(await values(page, 'data'), ['2', '4', '6', '8']);
  assertNoErrors(errors);
  await context.close();
});

test('a second buffer: declarations follow the table, integers come back, the link round-trips', async () => {
  const { page, context, errors } = await openPage(browser, '#/editor?lang=en&scratch');
  await ready(page);
  await page.click('.scratch-add');
  await page.waitForSelector('.scratch-buffers tbody tr:nth-child(2)');
  const row = '.scratch-buffers tbody tr:nth-child(2)';
  await field(page, `${row} .scratch-name`, 'counts');
  await page.selectOption(`${row} .scratch-type`, 'u32');
  await field(page, `${row} .scratch-len`, '4');
  await page.selectOption(`${row} .scratch-init`, 'list');
  await field(page, `${row} .scratch-arg`, '1 2 3 4');
  await page.waitForFunction(() => document.querySelector('.cm-host')?.editorText?.().includes('@binding(1) var<storage, read_write> counts: array<u32>;'));
  const src = await docText(page);
  await setDoc(page, src.replace('data[i] = data[i] * 2.0;', 'data[i] = data[i] * 2.0;\n        if (i < 4u) { counts[i] = counts[i] * 10u + i; }'));
  await run(page);
  assert.deepEqual(await values(page, 'counts'), ['10', '21', '32', '43']);
  await page.click('.editor-actions .button:nth-child(3)');
  await page.waitForSelector('.share-link a');
  const url = page.url();
  assert.match(url, /[?&]src=[A-Za-z0-9_-]+/);
  await context.close();
  const fresh = await openPage(browser, new URL(url).hash);
  await ready(fresh.page);
  assert.equal(await fresh.page.$$eval('.scratch-buffers tbody tr', (r) => r.length), 2);
  assert.equal(await fresh.page.inputValue('.scratch-buffers tbody tr:nth-child(2) .scratch-arg'), '1 2 3 4');
  assert.match(await docText(fresh.page), /counts\[i\] \* 10u \+ i/);
  assertNoErrors([...errors, ...fresh.errors]);
  await fresh.context.close();
});

for (const lang of ['en', 'zh']) {
  test(`scratch mode fits 390, 1280 and 1920 px (${lang})`, async () => {
    for (const width of [390, 1280, 1920]) {
      const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&scratch`, { viewport: { width, height: 900 } });
      await ready(page);
      await page.selectOption('.scratch-init', 'random');
      await field(page, '.scratch-arg', '7');
      await run(page);
      await page.waitForSelector('.scratch-out');
      const noScroll = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(noScroll, `horizontal scroll at ${width}px`);
      await screenshot(page, `scratch-${lang}-${width}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}
