// The SIMT view's controls: the selection stays in range and out-of-range sizes are clamped
// and said, a size typed during Play is kept until Enter, on a touch phone the step controls
// stay beside the grids, the picture takes the keyboard and lists its keys (both languages),
// the grids grow at 1920 px, the home page's card leads here, and compare mode writes no
// factor for 0.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, screenshot, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the SIMT selection stays in range; out-of-range sizes are clamped and said', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=naive&size=32&wg=8&sg=32&wgx=3&wgy=3');
  await page.waitForSelector('rect.wg.selected');
  assert.equal(await page.getAttribute('rect.wg.selected', 'data-wg'), '3,3');
  const setField = async (sel, v) => {
    await page.fill(sel, v);
    await page.locator(sel).dispatchEvent('change');
  };
  await setField('#vis-wg', '16');
  await page.waitForFunction(() => document.querySelectorAll('rect.wg').length === 4);
  assert.equal(await page.getAttribute('rect.wg.selected', 'data-wg'), '1,1', 'selection clamped into the 2×2 grid');
  const ids = await page.textContent('#vis-ids');
  assert.match(ids, /workgroup_id\s*\(1, 1\)/, ids);
  const global = [...ids.matchAll(/global_invocation_id\s*\((\d+), (\d+)\)/g)][0];
  assert.ok(Number(global[1]) < 32 && Number(global[2]) < 32, `global id ${global[0]} outside 32×32`);
  assert.ok(await page.$$eval('.vis-matrix .cell', (c) => c.length) > 0, 'the selected subgroup lights cells');
  assert.match(new URL(page.url()).hash, /wgx=1&wgy=1/);
  // Size 1000 → 64, said in the page, the field showing 64.
  await setField('#vis-size', '1000');
  await page.waitForFunction(() => document.querySelector('#vis-size').value === '64');
  const msg = await page.textContent('.vis-adjusted');
  assert.match(msg, /1000/);
  assert.match(msg, /64/);
  assert.match(await page.textContent('.vis-matrix figcaption'), /64×64/);
  // Side 3 → 4 (the smallest), said too.
  await setField('#vis-wg', '3');
  await page.waitForFunction(() => document.querySelector('#vis-wg').value === '4');
  assert.match(await page.textContent('.vis-adjusted'), /3/);
  // Side 7 is in range: used as typed, the grid follows (⌈64/7⌉ = 10 per side).
  await setField('#vis-wg', '7');
  await page.waitForFunction(() => document.querySelectorAll('rect.wg').length === 100);
  assert.equal(await page.inputValue('#vis-wg'), '7');
  // An emptied field is refused with a message, the field showing the value used.
  await setField('#vis-size', '');
  await page.waitForFunction(() => /The matrix size \(size\): “”/.test(document.querySelector('.vis-adjusted')?.textContent ?? ''));
  assert.equal(await page.inputValue('#vis-size'), '32');
  // Nonsense in a link is named, the field showing the value used.
  await page.evaluate(() => { location.hash = '#/visualiser?lang=en&stage=naive&size=abc&wg=8'; });
  await page.waitForFunction(() => /abc/.test(document.querySelector('.vis-adjusted')?.textContent ?? ''));
  assert.equal(await page.inputValue('#vis-size'), '32');
  await screenshot(page, 'visualiser-controls-clamped-en');
  assertNoErrors(errors);
  await context.close();
});

test('a size typed while the view plays survives its redraws and applies on Enter', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=naive&size=32&wg=8&sg=32');
  await page.waitForSelector('#vis-step');
  await page.click('#vis-play');
  await page.locator('#vis-size').fill('16');
  // Every step redraws the settings panel; a field bound to the URL's value would be set
  // back to 32 by the first of them.
  const from = Number(await page.getAttribute('#vis-step', 'data-step'));
  await page.waitForFunction((s) => Number(document.querySelector('#vis-step').dataset.step) >= s + 2, from);
  assert.equal(await page.inputValue('#vis-size'), '16', 'the typed size survives the redraws');
  await page.locator('#vis-size').press('Enter');
  await page.waitForFunction(() => /16×16/.test(document.querySelector('.vis-matrix figcaption')?.textContent ?? ''));
  assert.match(new URL(page.url()).hash, /size=16/);
  assert.equal(await page.inputValue('#vis-size'), '16');
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`on a 390 px touch screen the step controls stay on screen beside the grids; the hint is for touch (${lang})`, async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    await goto(page, `#/visualiser?lang=${lang}&stage=naive&size=32&wg=8&sg=32`);
    await page.waitForSelector('.vis-matrices .vis-matrix');
    assert.equal(await page.isVisible('#vis-touch'), true, 'the touch hint shows');
    assert.equal(await page.isVisible('#vis-keys'), false, 'the keyboard hint does not');
    // Scroll the matrices to the middle of the screen: the Forward button must still be on it.
    await page.evaluate(() => document.querySelector('.vis-matrices').scrollIntoView({ block: 'center' }));
    const inView = () => page.evaluate(() => {
      const b = document.querySelector('#vis-forward').getBoundingClientRect();
      const m = document.querySelector('.vis-matrices').getBoundingClientRect();
      return { button: b.top >= 0 && b.bottom <= innerHeight, matrix: m.bottom > 0 && m.top < innerHeight, top: b.top };
    });
    const v = await inView();
    assert.ok(v.button && v.matrix, `Forward at y = ${v.top.toFixed(0)} with the matrices in view: ${JSON.stringify(v)}`);
    // A tap steps, and the step's lit cells are in view with the button.
    const step = Number(await page.getAttribute('#vis-step', 'data-step'));
    await page.tap('#vis-forward');
    await page.waitForFunction((s) => Number(document.querySelector('#vis-step').dataset.step) === s + 1, step);
    const after = await inView();
    assert.ok(after.button && after.matrix, JSON.stringify(after));
    await screenshot(page, `visualiser-touch-390-${lang}`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('the SIMT picture takes the keyboard after a click, shows focus and lists its keys', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=naive&size=32&wg=8&sg=32');
  await page.waitForSelector('#vis-step');
  await page.click('.vis-matrices .vis-matrix svg');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('#vis-step').dataset.step === '1', null, { timeout: 5_000 });
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.querySelector('#vis-step').dataset.step === '0');
  const focus = await page.evaluate(() => {
    const el = document.activeElement;
    const s = getComputedStyle(el);
    return { tab: el.getAttribute('tabindex'), outline: s.outlineStyle, width: parseFloat(s.outlineWidth) };
  });
  assert.equal(focus.tab, '0');
  assert.ok(focus.outline !== 'none' && focus.width >= 2, `no visible focus: ${JSON.stringify(focus)}`);
  await page.keyboard.press(' ');
  await page.waitForFunction(() => Number(document.querySelector('#vis-step').dataset.step) >= 1, null, { timeout: 10_000 });
  await page.keyboard.press(' ');
  // The keys are listed on screen, in both languages.
  assert.match(await page.textContent('#vis-keys'), /←.*→/);
  assert.match(await page.textContent('#vis-keys'), /picture/i);
  // The Chinese text arrives after the switch (fetched on first use): goto waits for it.
  await goto(page, '#/visualiser?lang=zh');
  assert.match(await page.textContent('#vis-keys'), /空格/);
  assertNoErrors(errors);
  await context.close();
});

test('at 1920 px the SIMT grids grow for a projector', async () => {
  const widths = {};
  for (const [lang, width, height] of [['en', 1280, 900], ['en', 1920, 1080], ['zh', 1920, 1080], ['zh', 1280, 900]]) {
    const { page, context, errors } = await openPage(browser, `#/visualiser?lang=${lang}&stage=tiled&size=32&wg=8&sg=32`,
      { viewport: { width, height } });
    await page.waitForSelector('.vis-matrix svg');
    widths[`${lang}${width}`] = await page.$eval('.vis-matrix svg', (s) => s.getBoundingClientRect().width);
    widths[`${lang}${width}wgs`] = await page.$eval('svg.vis-threads', (s) => s.getBoundingClientRect().width);
    await screenshot(page, `visualiser-controls-${width}-${lang}`);
    assertNoErrors(errors);
    await context.close();
  }
  for (const lang of ['en', 'zh']) {
    assert.ok(widths[`${lang}1920`] >= 1.4 * widths[`${lang}1280`], JSON.stringify(widths));
    assert.ok(widths[`${lang}1920`] >= 360, JSON.stringify(widths));
    assert.ok(widths[`${lang}1920wgs`] >= 1.4 * widths[`${lang}1280wgs`], JSON.stringify(widths));
  }
});

test('the home page has a card for the SIMT view, in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/?lang=${lang}`);
    await page.waitForSelector('.cards');
    const card = await page.$('.cards a.card[href^="#/visualiser"]');
    assert.ok(card, 'no SIMT view card');
    assert.ok((await card.textContent()).trim().length > 10);
    await card.click();
    await page.waitForSelector('#vis-step');
    assertNoErrors(errors);
    await context.close();
  }
});

test('compare mode writes "–", not "0.00×", for 0 against a count', async () => {
  const { page, context, errors } = await openPage(browser, '#/visualiser?lang=en&stage=naive&size=32&wg=8&sg=32&compare=tiled');
  await page.waitForSelector('.compare-table');
  const row = await page.$eval('.compare-table tr[data-key="vis.count.shared"]', (tr) => [...tr.cells].map((c) => c.textContent));
  assert.equal(row[1], '0', row.join(' | '));
  assert.ok(Number(row[2].replace(/,/g, '')) > 0, row.join(' | '));
  assert.equal(row[3], '–', `no factor for 0 against ${row[2]}: ${row.join(' | ')}`);
  assertNoErrors(errors);
  await context.close();
});
