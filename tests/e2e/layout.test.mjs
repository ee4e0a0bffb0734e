// Layout and legibility across the site: every page fits 390 px without sideways scroll (both
// languages, with screenshots of the main areas), no drop-down clips its labels (390 and 1280 px),
// and the race sweep chart's axis labels are readable and written one way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, show, screenshot, assertNoErrors, waitForProbe } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const LESSONS = ['latency-throughput', 'simt', 'occupancy', 'memory', 'roofline', 'precision', 'vram',
  'utilisation', 'multi-gpu', 'stack', 'choosing', 'claims'];
const ROUTES = ['#/', '#/learn', ...LESSONS.map((l) => `#/learn/${l}`), '#/kernels', '#/visualiser',
  '#/visualiser?stage=tiled&compare=naive', '#/race', '#/race?view=sweep', '#/race?view=claim', '#/train',
  '#/embed', '#/embed/matmul', '#/embed/gpu'];

const withLang = (route, lang) => `${route}${route.includes('?') ? '&' : '?'}lang=${lang}`;

for (const lang of ['en', 'zh']) {
  test(`every page fits 390 px with no horizontal scroll (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, withLang('#/', lang), { viewport: { width: 390, height: 844 } });
    await waitForProbe(page);
    const wide = [];
    for (const route of ROUTES) {
      // Measured once the shell shows this route in `lang` (a lesson shows "Loading…" until
      // its text has arrived; the previous route's heading satisfies any selector).
      await show(page, withLang(route, lang));
      const w = await page.evaluate(() => document.documentElement.scrollWidth);
      if (w > 390) {
        const culprits = await page.evaluate(() => [...document.querySelectorAll('main *')]
          .filter((e) => e.getBoundingClientRect().right > 391)
          .slice(0, 3).map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} → ${Math.round(e.getBoundingClientRect().right)}`));
        wide.push(`${route}: ${w} px (${culprits.join('; ')})`);
      }
    }
    for (const route of ['#/', '#/kernels', '#/visualiser', '#/learn/vram', '#/race']) {
      await show(page, withLang(route, lang));
      await screenshot(page, `layout-390${route.replace(/[#/?=&]+/g, '-')}${lang}`);
    }
    assert.deepEqual(wide, [], `pages wider than 390 px:\n${wide.join('\n')}`);
    assertNoErrors(errors);
    await context.close();
  });
}

test('drop-down labels are not clipped (both languages, 390 and 1280 px)', async () => {
  const clipped = [];
  for (const lang of ['en', 'zh']) {
    for (const width of [390, 1280]) {
      const { page, context, errors } = await openPage(browser, withLang('#/', lang), { viewport: { width, height: 900 } });
      for (const route of ['#/learn/vram', '#/learn/multi-gpu', '#/learn/choosing', '#/learn/stack', '#/learn/claims',
        '#/learn/precision', '#/learn/occupancy', '#/visualiser', '#/race', '#/race?view=sweep', '#/race?view=claim', '#/train', '#/conv']) {
        await show(page, withLang(route, lang));
        const bad = await page.evaluate(() => {
          const canvas = document.createElement('canvas').getContext('2d');
          const out = [];
          for (const sel of document.querySelectorAll('main select')) {
            if (!sel.offsetParent) continue;
            const s = getComputedStyle(sel);
            canvas.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
            // Room for the text: the box minus padding, border and the arrow (about 20 px).
            const room = sel.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - 20;
            for (const o of sel.options) {
              const w = canvas.measureText(o.textContent).width;
              if (w > room) out.push(`#${sel.id} "${o.textContent}" needs ${Math.ceil(w)} px, has ${Math.floor(room)}`);
            }
          }
          return out;
        });
        clipped.push(...bad.map((b) => `${lang} ${width} ${route}: ${b}`));
      }
      assertNoErrors(errors);
      await context.close();
    }
  }
  assert.deepEqual(clipped, [], clipped.join('\n'));
});

test('the sweep chart\'s y-axis labels are readable and formatted one way', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=sweep&from=16&to=64&workers=2`);
    await waitForProbe(page);
    await page.waitForSelector('#sweep-start:not([disabled])');
    await page.click('#sweep-start');
    await page.waitForSelector('.sweep-chart[data-done="true"]', { timeout: 180_000 });
    const ticks = await page.$$eval('.sweep-chart text.tick.y', (ts) => ts.map((t) => {
      const s = getComputedStyle(t);
      return { text: t.textContent, size: t.getBoundingClientRect().height, fill: s.fill, opacity: s.opacity, stroke: s.stroke };
    }));
    assert.ok(ticks.length >= 2, JSON.stringify(ticks));
    for (const t of ticks) {
      // Decades are whole numbers of one unit: "0.01 ms", "1 ms", "100 ms", "1 s", never "10.00 ms".
      assert.match(t.text, /^(0\.0*1|1|10|100) (µs|ms|s)$/, `tick "${t.text}"`);
      assert.ok(t.size >= 11, `tick "${t.text}" is ${t.size} px tall`);
      const rgb = t.fill.match(/\d+/g).map(Number);
      const lum = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
      assert.ok(lum <= 0.45 && Number(t.opacity) === 1, `tick "${t.text}" is faint: ${t.fill} × ${t.opacity}`);
      // A light outline (the gridlines' stroke, inherited) blurs the glyphs into the background.
      assert.equal(t.stroke, 'none', `tick "${t.text}" is outlined in ${t.stroke}`);
    }
    await screenshot(page, `layout-sweep-${lang}`);
    assertNoErrors(errors);
    await context.close();
  }
});
