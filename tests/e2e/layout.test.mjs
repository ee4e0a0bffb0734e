// Layout and legibility across the site: every page fits 390 px without sideways scroll (both
// languages, with screenshots of the main areas), no drop-down clips its labels (390 and 1280 px).
// (The race sweep chart's axis labels: race.test.mjs.)
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

// The sweep chart's y-axis labels (readable, one format) are checked in race.test.mjs, on the
// sweep that test already runs in each language, instead of a second sweep here.
