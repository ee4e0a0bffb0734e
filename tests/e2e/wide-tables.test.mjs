// Wide results tables scroll inside their own box at 390 px, and a place that offers
// two kernels to edit labels each button by its kernel (§8, the roofline lesson).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

for (const lang of ['en', 'zh']) {
  test(`after a small sweep at 390 px the page is no wider than the window; the table scrolls in its box (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=sweep&from=16&to=32&workers=2`,
      { viewport: { width: 390, height: 844 } });
    await page.waitForSelector('#sweep-start:not([disabled])');
    await page.click('#sweep-start');
    await page.waitForSelector('.sweep-chart[data-done="true"]', { timeout: 180_000 });
    const m = await page.evaluate(() => {
      const table = document.querySelector('.sweep-table');
      const box = table.closest('.table-scroll');
      return {
        doc: document.documentElement.scrollWidth,
        win: window.innerWidth,
        table: Math.round(table.getBoundingClientRect().width),
        box: box && { tabindex: box.getAttribute('tabindex'), role: box.getAttribute('role'),
          label: box.getAttribute('aria-label'), overflow: getComputedStyle(box).overflowX },
        cols: table.querySelectorAll('thead th').length,
      };
    });
    assert.ok(m.doc <= m.win, `the document is ${m.doc} px wide in a ${m.win} px window (table ${m.table} px)`);
    assert.ok(m.box, 'the sweep table sits in a scroll box');
    assert.equal(m.box.tabindex, '0', 'the box takes keyboard focus');
    assert.equal(m.box.role, 'region');
    assert.ok(m.box.label && m.box.label.length > 3, `the box is named: ${m.box.label}`);
    assert.equal(m.box.overflow, 'auto');
    assert.ok(m.cols >= 3, `N and at least two contenders: ${m.cols} columns`);
    await screenshot(page, `wide-tables-sweep-390-${lang}`);
    // Keyboard: the box takes focus and the arrow keys scroll it; scrolled to its end, the GPU
    // column is inside the box.
    await page.focus('.table-scroll:has(.sweep-table)');
    assert.ok(await page.evaluate(() => document.activeElement?.matches('.table-scroll')), 'the box has focus');
    const sel = '.table-scroll:has(.sweep-table)';
    // The arrow key must always be tried: where this sweep's table happens to fit its box at
    // 390 px (few contenders), the box is made narrower than the table first, so there is
    // something to scroll, instead of the check being left out without a word.
    const fits = await page.$eval(sel, (b) => b.scrollWidth <= b.clientWidth);
    if (fits) {
      await page.$eval(sel, (b) => { b.style.maxWidth = `${Math.floor(b.scrollWidth / 2)}px`; });
      assert.ok(await page.$eval(sel, (b) => b.scrollWidth > b.clientWidth), 'the narrowed box scrolls');
    }
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((s) => document.querySelector(s).scrollLeft > 0, sel);
    if (fits) await page.$eval(sel, (b) => { b.style.maxWidth = ''; });
    await page.$eval(sel, (b) => { b.scrollLeft = b.scrollWidth; });
    const gpu = await page.evaluate(() => {
      const box = document.querySelector('.table-scroll:has(.sweep-table)').getBoundingClientRect();
      return [...document.querySelectorAll('.sweep-table thead th')].filter((th) => /GPU/.test(th.textContent))
        .map((th) => { const r = th.getBoundingClientRect(); return { text: th.textContent, inside: r.left >= box.left - 1 && r.right <= box.right + 1 }; });
    });
    assert.ok(gpu.length >= 1, 'a GPU column');
    assert.ok(gpu.at(-1).inside, `the GPU column is inside the box once scrolled: ${JSON.stringify(gpu)}`);
    await screenshot(page, `wide-tables-sweep-390-${lang}-scrolled`);
    assertNoErrors(errors);
    await context.close();
  });
}

test('the roofline lesson shows one edit button per kernel, each naming its kernel (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/learn/roofline?lang=${lang}`);
    await page.waitForSelector('a.edit-kernel[data-edit="measure-fma"]');
    const links = await page.$$eval('a.edit-kernel', (as) => as.map((a) => ({ id: a.dataset.edit, text: a.textContent.trim() })));
    const ids = links.map((l) => l.id).sort();
    assert.deepEqual(ids, ['measure-copy', 'measure-fma'], `${lang}: one link per kernel: ${JSON.stringify(links)}`);
    const texts = links.map((l) => l.text);
    assert.equal(new Set(texts).size, texts.length, `${lang}: the buttons read differently: ${JSON.stringify(texts)}`);
    if (lang === 'en') assert.ok(!texts.includes('Edit this kernel'), 'no bare "Edit this kernel" beside another kernel\'s button');
    for (const [id, name] of [['measure-copy', /copy|拷贝/i], ['measure-fma', /FMA/]]) {
      assert.match(links.find((l) => l.id === id).text, name, `${lang}: ${id}'s button names its kernel`);
    }
    assertNoErrors(errors);
    await context.close();
  }
});
