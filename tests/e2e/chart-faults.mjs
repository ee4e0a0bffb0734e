// The chart-text check shared by chart-text.test.mjs and the tests that already draw a chart
// for their own checks (ladder.test.mjs's Run all): every `svg text` renders at ≥ 11 CSS px,
// inside its svg and clear of its svg's other texts, at 390, 1280 and 1920 px.
import assert from 'node:assert/strict';
import { screenshot } from './helpers.mjs';

export const MIN_PX = 11;
const WIDTHS = [390, 1280, 1920];

/**
 * Every text of the svgs matched by `sel` that renders below `minPx`, outside its svg or over
 * another text of its svg (boxes overlapping by more than 2 px both ways: a text's box is a
 * little taller than its glyphs, so lines set close together may touch).
 */
export function faults({ sel, minPx }) {
  const out = [];
  const svgs = [...document.querySelectorAll(sel)];
  if (svgs.length === 0) return [`no svg matches ${sel}`];
  for (const svg of svgs) {
    const box = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    const scale = vb && vb.width > 0 ? box.width / vb.width : 1;
    const seen = [];
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      const r = t.getBoundingClientRect();
      const what = JSON.stringify(t.textContent.trim().slice(0, 30));
      if (px < minPx - 0.01) out.push(`${what} renders at ${px.toFixed(1)} px`);
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
        const f = (a, b) => `${a.toFixed(0)}–${b.toFixed(0)}`;
        out.push(`${what} overflows the svg: ${f(r.left, r.right)} × ${f(r.top, r.bottom)} in ${f(box.left, box.right)} × ${f(box.top, box.bottom)}`);
      }
      for (const [other, o] of seen) {
        const dx = Math.min(r.right, o.right) - Math.max(r.left, o.left);
        const dy = Math.min(r.bottom, o.bottom) - Math.max(r.top, o.top);
        if (dx > 2 && dy > 2) out.push(`${what} overlaps ${other}`);
      }
      seen.push([what, r]);
    }
  }
  return out;
}

/**
 * At each width: resize, wait until the charts have redrawn for it (their text checks out, or
 * 10 s pass and the assertion names what is wrong), then assert and take a screenshot.
 */
export async function checkAtWidths(page, sel, name, lang) {
  const arg = { sel, minPx: MIN_PX };
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForFunction(`(${faults})(${JSON.stringify(arg)}).length === 0`, null, { timeout: 10_000 }).catch(() => {});
    const bad = await page.evaluate(faults, arg);
    assert.deepEqual(bad, [], `${name} at ${width} px (${lang}): ${bad.join('; ')}`);
    const full = await screenshot(page, `chart-text-${name}-${width}-${lang}`);
    // Each chart alone, at its own size, to read its text.
    const parent = sel === '.systolic-svg' ? '.systolic-views' : sel;
    const charts = page.locator(parent);
    const n = parent === sel ? await charts.count() : 1;
    for (let i = 0; i < n; i++) {
      if (parent === sel && await charts.nth(i).locator('text').count() === 0) continue;
      await charts.nth(i).screenshot({ path: full.replace(/\.png$/, i === 0 ? '-chart.png' : `-chart${i + 1}.png`) });
    }
  }
}
