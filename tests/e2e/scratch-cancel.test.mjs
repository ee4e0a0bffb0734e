// Cancel in scratch mode (#/editor?scratch): a long kernel (one workgroup spinning a few
// million iterations a thread; the table's 262,144 elements give the loop budget room for it)
// is cancelled once its one dispatch is on the GPU. The page says "Cancelling" while that
// dispatch finishes, then "Cancelled", shows no buffers, submits nothing after the click and
// leaves nothing queued (watched at the WebGPU API), and the next run is verified. Its own
// file, so its own browser: the spinning kernel keeps that browser's software GPU busy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors, setDoc, docText } from './helpers.mjs';
import { QUEUE_SPY, queueState, clickAndCount } from './queue-spy.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const RUN = '.editor-actions .button.primary';
const outcome = (page) => page.getAttribute('.scratch-result', 'data-outcome');

async function field(page, selector, value) {
  await page.fill(selector, value);
  await page.dispatchEvent(selector, 'change');
}

const SPIN = `let i = id.x;
    if (i < arrayLength(&data)) {
        var acc = data[i];
        for (var k = 0u; k < 4000000u; k = k + 1u) {
            acc = acc * 0.5 + 1.0;
        }
        data[i] = acc;
    }`;

for (const [lang, width] of [['en', 1280], ['zh', 390]]) {
  test(`Cancel stops a long scratch run: nothing is sent after it, it says so, and the next run is right (${lang}, ${width} px)`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&scratch`,
      { initScript: QUEUE_SPY, viewport: { width, height: 900 } });
    await page.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
    assert.equal(await page.$('#scratch-cancel'), null, 'no Cancel before a run');
    await field(page, '.scratch-len', '262144');
    await field(page, '.scratch-group[data-axis="x"]', '1');
    const starter = await docText(page);
    const body = /let i = id\.x;[\s\S]*?data\[i\] = data\[i\] \* 2\.0;\n    \}/;
    assert.match(starter, body);
    await setDoc(page, starter.replace(body, SPIN));
    await page.waitForSelector(`${RUN}:not([disabled])`, { timeout: 60_000 });
    await page.click(RUN);
    await page.waitForSelector('#scratch-cancel:not([disabled])');
    // Under way: the dispatch has been handed to the GPU.
    await page.waitForFunction(() => window.__queueSpy.submitted > 0, null, { timeout: 120_000 });
    assert.equal(await outcome(page), 'running', await page.textContent('.scratch-result'));
    const atCancel = await clickAndCount(page, '#scratch-cancel');
    const said = await page.textContent('.scratch-result');
    assert.match(said, lang === 'en' ? /Cancelling/ : /正在取消/, said);
    assert.equal(await page.isDisabled('#scratch-cancel'), true, 'Cancel pressed once');
    await screenshot(page, `scratch-cancelling-${lang}-${width}`);
    await page.waitForFunction(() => document.querySelector('.scratch-result')?.dataset.outcome !== 'running',
      null, { timeout: 120_000 });
    assert.equal(await outcome(page), 'cancelled', await page.textContent('.scratch-result'));
    const q = await queueState(page);
    assert.equal(q.submitted, atCancel, 'no GPU work submitted after Cancel');
    assert.equal(q.completed, q.submitted, 'nothing of the cancelled run left queued');
    assert.match(await page.textContent('.scratch-result'), lang === 'en' ? /^Cancelled\./ : /^已取消。/);
    assert.equal(await page.$('.scratch-out'), null, 'a cancelled run shows no buffers');
    assert.equal(await page.$('#scratch-cancel'), null, 'Cancel goes with the run');
    await screenshot(page, `scratch-cancelled-${lang}-${width}`);
    // The same page at the other width (a phone's 390 px, a laptop's 1280 px).
    const other = width === 390 ? 1280 : 390;
    await page.setViewportSize({ width: other, height: 900 });
    await screenshot(page, `scratch-cancelled-${lang}-${other}`);
    await page.setViewportSize({ width, height: 900 });
    // The next run: the starter's doubling of the ramp, on the same table.
    await setDoc(page, starter);
    await page.click(RUN);
    await page.waitForFunction(() => document.querySelector('.scratch-result')?.dataset.outcome === 'done',
      null, { timeout: 120_000 });
    const got = await page.$$eval('.scratch-out[data-buffer-name="data"] .scratch-values td', (td) => td.slice(0, 4).map((t) => t.textContent));
    assert.deepEqual(got, ['0', '2', '4', '6']);
    assertNoErrors(errors);
    await context.close();
  });
}
