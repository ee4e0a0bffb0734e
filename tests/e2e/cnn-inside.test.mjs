// #/cnn's "look inside" and curves as a learner reads them (issue 41, round three), at 390 and
// 1280 px in English and Chinese:
// - the filters, the test image's feature maps and the confusion matrix show one network: the
//   same step on every panel at every moment of a run (a learner saw "after 3 steps", "after 7"
//   and "after 0" at once), also for a digit picked among the mistakes, and one visible label
//   names that step;
// - the charts show the CPU twin's curve past the GPU's last step, on the same axes, with a
//   label that says how far ahead the CPU is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors } from './helpers.mjs';
import { ready } from './cnn-page.mjs';

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
const SMALL = '#/cnn?ch=4,8&k=5,5&batch=16&lr=0.01';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** The step each panel says it shows (undefined: the panel shows no network yet). */
const panelSteps = (page) => page.evaluate(() => Object.fromEntries(
  ['#cnn-filters', '#cnn-layers', '#cnn-confusion', '#cnn-inside-step']
    .map((id) => [id, document.querySelector(id)?.dataset.step])));

const shot = (page, selector, name) => page.locator(selector).screenshot({ path: join(OUT, `${name}.png`) });
const count = (n) => n.toLocaleString('en-US');
const stepOf = (s) => Number((s ?? '').split(' ')[0]);

const LABEL = {
  en: (n) => `Filters, feature maps and confusion matrix below: the GPU's network after ${count(n)} ${n === 1 ? 'step' : 'steps'}, read back together.`,
  zh: (n) => `下面的滤波器、特征图和混淆矩阵都来自 GPU 训练 ${count(n)} 步后的网络，一起回读。`,
};
const LEAD = {
  en: (side, other, ahead, by, behind) => `Both sides on the same axes: the ${side}'s lines go on to step ${count(ahead)}, ${count(by)} ${by === 1 ? 'step' : 'steps'} past the ${other}'s last evaluation at step ${count(behind)} (the dotted line).`,
  zh: (side, other, ahead, by, behind) => `两边画在同一坐标轴上：${side} 的曲线一直延伸到第 ${count(ahead)} 步，比 ${other} 最后一次评估的第 ${count(behind)} 步多出 ${count(by)} 步（点线处）。`,
};

/** Each chart's width in its own units and the right-most x of each of its lines. */
const chartEnds = (page, id) => page.evaluate((id) => {
  const svg = document.querySelector(`${id} svg`);
  const w = Number(svg.getAttribute('viewBox').split(' ')[2]);
  const end = (cls) => {
    const pts = (svg.querySelector(`polyline.${cls}`)?.getAttribute('points') ?? '').trim();
    return pts ? Math.max(...pts.split(/\s+/).map((p) => Number(p.split(',')[0]))) : null;
  };
  return { w, gpu: end('gpu-test'), cpu: end('cpu-test'), behind: svg.querySelector('.cnn-behind')?.getAttribute('x1') ?? null };
}, id);

// One run per language at 390 px, then the window widened to 1280 px: each load fetches the
// 10,000 digits and trains both sides until they are apart, which is most of this test's time;
// the charts, panels and a picked mistake are checked at each width on the same paused network.
for (const lang of ['en', 'zh']) {
  test(`${lang} at 390 and 1280 px: look inside shows one network at a time; the charts show how far ahead a side is`, async () => {
    const { page, context, errors } = await openPage(browser, `${SMALL}&lang=${lang}`, { viewport: { width: 390, height: 900 } });
    await ready(page);
    await page.click('#cnn-play');
    // Checked at every frame while training, until three networks have been
    // shown and one side's evaluations are at least two steps past the other's: any moment
    // with two steps on the panels is kept and reported.
    const seen = await (await page.waitForFunction(() => {
      const w = (window.__inside ??= { steps: [], bad: null });
      const step = (id) => document.querySelector(id)?.dataset.step;
      const [f, l, c] = ['#cnn-filters', '#cnn-layers', '#cnn-confusion'].map(step);
      if (c !== undefined && (f !== c || l !== c)) w.bad ??= { filters: f, layers: l, confusion: c };
      if (c !== undefined && !w.steps.includes(c)) w.steps.push(c);
      const d = document.querySelector('#cnn-status')?.dataset ?? {};
      const apart = Math.abs(Number((d.gpuTest ?? '').split(' ')[0]) - Number((d.cpuTest ?? '').split(' ')[0]));
      return w.steps.length >= 3 && apart >= 2 ? w : false;
    }, null, { timeout: 300_000, polling: 'raf' })).jsonValue();
    await page.click('#cnn-play');
    await page.waitForSelector('#cnn-status[data-phase="paused"]', { timeout: 60_000 });
    // Paused: each side's last evaluation is of where it stopped.
    await page.waitForFunction(() => {
      const d = document.querySelector('#cnn-status')?.dataset ?? {};
      return ['gpu', 'cpu'].every((s) => Number((d[`${s}Test`] ?? '').split(' ')[0]) === Number(d[`${s}Steps`]));
    }, null, { timeout: 180_000, polling: 100 });
    const status = await page.evaluate(() => ({ ...document.querySelector('#cnn-status').dataset }));
    const gpu = stepOf(status.gpuTest);
    const cpu = stepOf(status.cpuTest);
    const ahead = Math.max(gpu, cpu);
    const behind = Math.min(gpu, cpu);
    assert.ok(ahead - behind >= 2, `${lang}: GPU ${gpu}, CPU ${cpu}`);
    if (seen.bad) assert.fail(`${lang}: the panels showed different networks at once: ${JSON.stringify(seen.bad)}`);
    console.log(`${lang}: GPU ${gpu}, CPU ${cpu} steps; snapshots seen at ${seen.steps.join(', ')}`);

    for (const width of [390, 1280]) {
      const where = `${lang} ${width}`;
      await page.setViewportSize({ width, height: 900 });
      // The layout for this width: the window has its new width, and two frames have been
      // drawn since (the charts measure their width when they are laid out).
      await page.waitForFunction((w) => window.innerWidth === w, width);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      // The charts: both sides' lines to their own last step on one x axis up to the
      // further one; the side behind stops at its step, marked, and the note says by how much.
      const wrong = [];
      for (const id of ['#cnn-loss-chart', '#cnn-acc-chart']) {
        const e = await chartEnds(page, id);
        const x = (step) => 40 + (e.w - 48) * step / ahead;
        const [front, back] = cpu > gpu ? [e.cpu, e.gpu] : [e.gpu, e.cpu];
        if (!(Math.abs(front - x(ahead)) < 0.5)) wrong.push(`${id}: the side ahead ends at x ${front}, not at step ${ahead} (${x(ahead)})`);
        if (!(Math.abs(back - x(behind)) < 0.5)) wrong.push(`${id}: the side behind ends at x ${back}, not at step ${behind} (${x(behind)})`);
        if (!(Math.abs(Number(e.behind) - x(behind)) < 0.5)) wrong.push(`${id}: no dotted line at step ${behind} (${e.behind})`);
      }
      assert.deepEqual(wrong, [], where);
      const [side, other] = cpu > gpu ? ['CPU', 'GPU'] : ['GPU', 'CPU'];
      assert.equal((await page.textContent('#cnn-chart-lead')).trim(), LEAD[lang](side, other, ahead, ahead - behind, behind), where);
      for (const id of ['#cnn-loss-chart', '#cnn-acc-chart']) assert.equal(await page.getAttribute(id, 'data-max-step'), String(ahead));

      await page.waitForSelector(`#cnn-confusion[data-step="${gpu}"]`, { timeout: 120_000 });
      await page.waitForSelector(`#cnn-layers[data-step="${gpu}"][data-layers="7"]`, { timeout: 60_000 });
      for (const [id, s] of Object.entries(await panelSteps(page))) assert.equal(s, String(gpu), `${id} after Pause, ${where}`);
      assert.equal((await page.textContent('#cnn-inside-step')).trim(), LABEL[lang](gpu), where);

      // A digit picked among the mistakes is shown by the same network: the first mistake
      // not shown now, so each width's pick is a new readback.
      const shown = await page.getAttribute('#cnn-layers', 'data-index');
      const indices = await page.$$eval('.cnn-mistake', (ms) => ms.map((m) => m.dataset.index));
      const n = indices.findIndex((i) => i !== shown);
      assert.ok(n >= 0, `${where}: no mistake other than the digit shown (${indices})`);
      const picked = indices[n];
      await page.locator('.cnn-mistake').nth(n).click();
      await page.waitForSelector(`#cnn-layers[data-index="${picked}"][data-layers="7"]`, { timeout: 60_000 });
      for (const [id, s] of Object.entries(await panelSteps(page))) assert.equal(s, String(gpu), `${id} after a pick, ${where}`);

      await shot(page, '.cnn-progress', `cnn-charts-${lang}-${width}`);
      await page.locator('#cnn-inside-step').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(OUT, `cnn-inside-${lang}-${width}.png`) });
    }
    assertNoErrors(errors);
    await context.close();
  });
}
