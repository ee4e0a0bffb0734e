// The kernels page's results and links: a result is shown only with the stage and sizes it ran
// with (and Run all's chart names its own size), a hash change in the same tab updates the stage
// and sizes (the SIMT view's too), a bad link value is named at its field, and a timing table
// writes one unit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, navigatedBy, assertNoErrors, waitForProbe, runAndWait } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a result is shown only with the settings it belongs to', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&stage=matmul-naive&m=64&n=64&k=64');
  await waitForProbe(page);
  await page.waitForSelector('#run-button:not([disabled])');
  await runAndWait(page);
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
  // Another stage: stage 1's verdict must not stay under it (an unavailable one first).
  const off = await page.$('.stage-list a:has(.badge.off)');
  const other = off ?? await page.$('.stage-list a[data-stage]:not([aria-current])');
  const id = await other.getAttribute('data-stage');
  await other.click();
  await page.waitForSelector(`.stage-detail[data-current-stage="${id}"]`);
  assert.equal(await page.$('.result [data-verified]'), null, `stage 1's verdict shown under ${id}`);
  assert.equal(await page.$('.result .checked'), null);
  // Back to stage 1 at the size it ran: the result belongs there and comes back.
  await page.click('.stage-list a[data-stage="matmul-naive"]');
  await page.waitForSelector('.stage-detail[data-current-stage="matmul-naive"]');
  await page.waitForSelector('.result [data-verified="true"]');
  // A size change: the 64³ verdict and "… elements compared" must go.
  await page.fill('#dim-m', '32');
  await page.waitForFunction(() => /m=32/.test(location.hash));
  assert.equal(await page.$('.result [data-verified]'), null, 'a 64×64 result under a 32×64 size');
  assert.equal(await page.$('.result .checked'), null);
  // Run all's chart names the size it ran at, not the size typed since.
  await page.fill('#dim-m', '16');
  await page.fill('#dim-n', '16');
  await page.fill('#dim-k', '16');
  await page.click('#run-all-button');
  await page.waitForFunction(() => Number(document.querySelector('.run-all .chart')?.dataset.runs) >= 1,
    null, { timeout: 300_000 });
  await page.fill('#dim-m', '24');
  await page.waitForFunction(() => /m=24/.test(location.hash));
  const caption = await page.textContent('.run-all figcaption');
  assert.match(caption, /16×16×16/, caption);
  assertNoErrors(errors);
  await context.close();
});

test('a hash change in the same tab updates stage and sizes; a bad link value is named', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=en&stage=matmul-naive&m=256&n=256&k=256');
  await page.waitForSelector('#dim-m');
  const second = await page.$$eval('.stage-list a[data-stage]', (as) => as[1].dataset.stage);
  await page.evaluate((s) => { location.hash = `#/kernels?lang=en&stage=${s}&m=64&n=32&k=16`; }, second);
  await page.waitForSelector(`.stage-detail[data-current-stage="${second}"]`);
  await page.waitForFunction(() => document.querySelector('#dim-m').value === '64', null, { timeout: 10_000 });
  assert.equal(await page.inputValue('#dim-n'), '32');
  assert.equal(await page.inputValue('#dim-k'), '16');
  // An unknown stage in a link typed in the same tab: named, then stage 1.
  await navigatedBy(page, () => page.evaluate(() => { location.hash = '#/kernels?lang=en&stage=warp-magic&m=abc'; }), { path: '/kernels' });
  await page.waitForSelector('.stage-detail[data-current-stage="matmul-naive"]');
  assert.match(await page.textContent('.ladder'), /warp-magic/);
  assert.equal(await page.inputValue('#dim-m'), 'abc');
  assert.ok((await page.textContent('#dim-m-error')).length > 0, 'the bad size is named at its field');
  // The visualiser follows a hash change too.
  await navigatedBy(page, () => page.evaluate(() => { location.hash = '#/visualiser?lang=en&stage=naive&size=32&step=0'; }), { path: '/visualiser' });
  assert.ok(await page.$('#vis-step'));
  await page.evaluate(() => { location.hash = '#/visualiser?lang=en&stage=naive&size=16&step=3&wgx=1&wgy=0'; });
  await page.waitForFunction(() => document.querySelector('#vis-step')?.dataset.step === '3');
  assert.equal(await page.getAttribute('rect.wg.selected', 'data-wg'), '1,0');
  assertNoErrors(errors);
  await context.close();
});

test('one unit in one timing table (zh run widget)', async () => {
  const { page, context, errors } = await openPage(browser, '#/kernels?lang=zh&stage=matmul-naive&m=64&n=64&k=64');
  await waitForProbe(page);
  await page.waitForSelector('#run-button:not([disabled])');
  await runAndWait(page);
  const cells = await page.$$eval('.result table.timing td', (tds) => tds.map((t) => t.textContent));
  const units = new Set(cells.flatMap((c) => c.match(/毫秒|ms\b/g) ?? []));
  assert.equal(units.size, 1, `mixed units: ${cells.join(' | ')}`);
  assertNoErrors(errors);
  await context.close();
});
