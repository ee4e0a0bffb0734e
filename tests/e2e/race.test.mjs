// Race → CPU (wasm workers) vs GPU (WebGPU) on the same matmul: a verified race, Cancel, the
// scaling sweep with its chart, the claim check (its software-adapter default, each row's
// progress and time left), bad URL settings, no WebGPU, and no GPU buffer left alive after a
// race (growth over many races is the soak's: `cargo xtask soak`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, waitForProbe, screenshot, assertNoErrors } from './helpers.mjs';
import { QUEUE_SPY, queueState, clickAndCount } from './queue-spy.mjs';
import { checkAtWidths, faults } from './chart-faults.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Clicks Start and waits until this race (not an earlier one) has finished. */
async function race(page, timeout = 120_000) {
  const before = Number(await page.getAttribute('.lanes', 'data-races'));
  await page.click('#race-start');
  await page.waitForFunction(
    (n) => Number(document.querySelector('.lanes')?.dataset.races) > n, before, { timeout },
  );
}

test('a race at N = 256 finishes with both sides verified and agreeing, and leaves no GPU buffer', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=256&workers=2');
  assert.equal(await waitForProbe(page), 'available');
  for (const [i, lang] of ['en', 'zh'].entries()) {
    if (lang !== 'en') await goto(page, `#/race?lang=${lang}&n=256&workers=2`);
    await page.waitForSelector('#race-start:not([disabled])');
    await race(page);
    // Each race is counted once, and every GPU buffer it made is destroyed.
    assert.equal(await page.getAttribute('.lanes', 'data-races'), String(i + 1));
    assert.equal(await page.evaluate(() => window.gpuPlayground.debug_live_buffers()), 0, 'GPU buffers left alive');
    assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
    assert.equal(await page.getAttribute('[data-agree]', 'data-agree'), 'true');
    assert.match(await page.getAttribute('[data-winner]', 'data-winner'), /^(cpu|gpu)$/);
    assert.equal(await page.getAttribute('.lane.cpu', 'data-state'), 'finished');
    assert.equal(await page.getAttribute('.lane.gpu', 'data-state'), 'finished');
    // Breakdown: both tables, with the copies and the software-timestamp caveat.
    assert.ok(await page.$('.cpu-breakdown'));
    assert.ok(await page.$('.gpu-breakdown'));
    if (lang === 'en') {
      assert.match(await page.textContent('[data-agree]'), /Results agree: max rel\. difference/);
      assert.match(await page.textContent('.cpu-breakdown'), /Copying inputs to the workers/);
      assert.match(await page.textContent('.race-results'), /timestamps are not trusted/);
    }
    await screenshot(page, `race-finished-${lang}`);
  }
  assertNoErrors(errors);
  await context.close();
});

test('cancel mid-race leaves the page usable, and the next race works', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=1024&cpu=naive&workers=1');
  await waitForProbe(page);
  await page.waitForSelector('#race-start:not([disabled])');
  await page.click('#race-start');
  await page.waitForSelector('.lanes[data-phase="running"]', { timeout: 60_000 });
  // A long race says how far each side is and, after its first chunk, about how long it has
  // left (the GPU's bar is a real fraction once one is known, not stripes).
  for (const side of ['cpu', 'gpu']) {
    const sel = `.lane.${side} .lane-left[data-left="ms"]`;
    await page.waitForSelector(sel, { timeout: 120_000 });
    assert.match(await page.textContent(sel), /^\d+ % done · about \d+ (min \d+ )?s left$/);
  }
  assert.equal(await page.$('.lane.gpu .runner.indeterminate'), null);
  await page.click('#race-cancel');
  await page.waitForSelector('.lanes[data-phase="cancelled"]');
  assert.match(await page.textContent('.race-status'), /Cancelled/);
  assert.ok(await page.isEnabled('#race-start'));
  // Start again, smaller: it finishes and verifies.
  await page.fill('#race-n', '64');
  await page.selectOption('#race-cpu', 'simd');
  await race(page);
  assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
  assert.match(new URL(page.url()).hash, /n=64/);
  assert.match(new URL(page.url()).hash, /cpu=simd/);
  assertNoErrors(errors);
  await context.close();
});

// Opened at 390 px: after its own checks the sweep chart's text is checked at 390, 1280 and
// 1920 px (≥ 11 px, inside the svg, no overlaps; chart-faults.mjs) on this sweep, instead of
// a second sweep per language in chart-text.test.mjs.
test('the sweep draws a log-log chart and marks the crossover (or says there is none); its text is ≥ 11 px', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=sweep&from=16&to=128&workers=2`,
      { viewport: { width: 390, height: 900 } });
    await waitForProbe(page);
    await page.waitForSelector('#sweep-start:not([disabled])');
    await page.click('#sweep-start');
    // The point being measured says how far it is (a point can take seconds).
    const point = await page.waitForSelector('.sweep .progress-text[data-progress]');
    assert.match(await point.textContent(), lang === 'en' ? /^N = \d+: .+ · \d+ % done · / : /^N = \d+：.+ · 已完成 \d+ % · /);
    await page.waitForSelector('.sweep-chart[data-done="true"]', { timeout: 180_000 });
    const series = await page.$$eval('.sweep-chart .series', (s) => s.map((g) => g.dataset.series));
    assert.deepEqual(series, ['cpu-naive-1', 'cpu-blocked-1', 'cpu-simd-1', 'cpu-simd-2', 'gpu']);
    const dots = await page.$$eval('.sweep-chart .series circle', (c) => c.length);
    assert.equal(dots, 5 * 4, 'every contender at every size');
    const summary = await page.getAttribute('[data-crossover-summary]', 'data-crossover-summary');
    if (summary.startsWith('At')) {
      assert.ok(await page.$('.sweep-chart .crossover line'), 'a crossover marker is drawn');
    } else {
      assert.equal(await page.$('.sweep-chart .crossover'), null);
      assert.ok(['None', 'GpuEverywhere'].includes(summary), summary);
    }
    await checkAtWidths(page, '.sweep-chart svg', 'race-sweep', lang);
    await page.setViewportSize({ width: 1280, height: 900 });
    // Back at 1280 px (the chart redrawn for it: its text checks out again), the y-axis labels
    // are readable and formatted one way.
    await page.waitForFunction(() => window.innerWidth === 1280);
    await page.waitForFunction(`(${faults})(${JSON.stringify({ sel: '.sweep-chart svg', minPx: 11 })}).length === 0`);
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
    await screenshot(page, `race-sweep-${lang}`);
    assertNoErrors(errors);
    await context.close();
  }
});

test('the claim view measures the ratio and labels the extrapolation', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/race?lang=${lang}&view=claim&at=512&workers=2`);
    await waitForProbe(page);
    await page.waitForSelector('#claim-start:not([disabled])');
    assert.ok(await page.$('.extrapolation-note'));
    await page.click('#claim-start');
    await page.waitForSelector('[data-claim-done="true"]', { timeout: 180_000 });
    const rows = await page.$$eval('.claim-table tbody tr', (r) => r.map((x) => x.dataset.contender));
    assert.deepEqual(rows, ['cpu-simd-1', 'cpu-simd-2', 'gpu']);
    assert.equal(await page.$$eval('.claim-table td.estimate', (t) => t.filter((x) => x.textContent).length), 3);
    assert.equal(await page.$$eval('.claim-verdict li', (l) => l.length), 2);
    // Ratios are stated as "N× faster" or "N× slower", never as a fraction "0.1× faster".
    const ratios = await page.$$eval('.claim-table td.ratio', (t) => t.map((x) => x.textContent).filter(Boolean));
    assert.equal(ratios.length, 2);
    for (const r of ratios) assert.ok(Number(r.match(/(\d+(\.\d+)?)/)[1]) >= 1, r);
    if (lang === 'en') assert.match(await page.textContent('.claim-verdict'), /the article says (the GPU is )?100× faster/);
    await screenshot(page, `race-claim-${lang}`);
    assertNoErrors(errors);
    await context.close();
  }
});

test('claim on a software adapter: N = 512 by default and why; rows show a rising percentage and the time left; a URL N wins', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&view=claim&workers=2');
  await waitForProbe(page);
  assert.ok(await page.$('.race-software'), 'SwiftShader is a software adapter');
  await page.waitForSelector('#claim-start:not([disabled])');
  assert.equal(await page.inputValue('#claim-at'), '512');
  assert.match(await page.textContent('[data-claim-default="software"]'),
    /software adapter, so the check runs at N = 512 by default: N = 1024 is 8× the work.*Choose N = 1024/);
  // Every running row as the page draws it, in order: a row can pass through its states
  // between two looks from here, so the page records them.
  await page.evaluate(() => {
    window.claimSeen = [];
    new MutationObserver(() => {
      for (const tr of document.querySelectorAll('.claim-table tbody tr[data-state="running"]')) {
        const seen = {
          who: tr.dataset.contender, pct: Number(tr.dataset.progress), left: tr.dataset.left,
          bar: tr.querySelector('progress')?.value, text: tr.querySelector('.progress-text')?.textContent,
        };
        const last = window.claimSeen.findLast((x) => x.who === seen.who);
        if (!last || last.pct !== seen.pct || last.text !== seen.text) window.claimSeen.push(seen);
      }
    }).observe(document.querySelector('.claim'), { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.click('#claim-start');
  await page.waitForSelector('[data-claim-done="true"]', { timeout: 180_000 });
  const seen = await page.evaluate(() => window.claimSeen);
  const left = /^(estimating the time left…|about \d+ s left|about \d+ min \d+ s left|copying the result back and checking it…)$/;
  for (const who of ['cpu-simd-1', 'cpu-simd-2', 'gpu']) {
    const rows = seen.filter((x) => x.who === who);
    assert.ok(rows.length > 0, `${who} was never shown running`);
    // Before its first chunk a row estimates; its percentage never goes back.
    assert.deepEqual([rows[0].pct, rows[0].left], [0, 'estimating'], who);
    for (const [i, r] of rows.entries()) {
      const [, pct, rest] = r.text.match(/^(\d+) % done · (.*)$/) ?? [];
      assert.equal(Number(pct), r.pct, `${who}: ${r.text}`);
      assert.equal(r.bar, r.pct, who);
      assert.match(rest ?? '', left, `${who}: ${r.text}`);
      if (i > 0) assert.ok(r.pct >= rows[i - 1].pct, `${who} went back: ${rows[i - 1].pct} → ${r.pct}`);
    }
  }
  // The GPU row (the one that sat at "running…" for minutes) rises from 0 through a part
  // done (its first submission is an eighth of the work at 512) and says about how long is
  // left once it has done some.
  const gpu = seen.filter((x) => x.who === 'gpu');
  const pcts = new Set(gpu.map((x) => x.pct));
  assert.ok(pcts.size >= 3 && gpu.some((x) => x.pct > 0 && x.pct < 100), `the GPU's percentage rose: ${JSON.stringify(gpu)}`);
  assert.ok(gpu.some((x) => x.left === 'ms' && /about \d+/.test(x.text)), `an estimate: ${JSON.stringify(gpu)}`);
  assert.equal(await page.$$eval('.claim-table tbody tr[data-state="done"]', (r) => r.length), 3);
  // An N in the URL is honoured, and the note goes.
  await goto(page, '#/race?lang=en&view=claim&at=1024&workers=2');
  await page.waitForSelector('#claim-start:not([disabled])');
  assert.equal(await page.inputValue('#claim-at'), '1024');
  assert.equal(await page.$('[data-claim-default]'), null);
  assert.equal(await page.$('.race-issues'), null);
  // The note in Chinese.
  await goto(page, '#/race?lang=zh&view=claim&workers=2');
  await page.waitForSelector('#claim-start:not([disabled])');
  assert.equal(await page.inputValue('#claim-at'), '512');
  assert.match(await page.textContent('[data-claim-default="software"]'), /软件适配器.*N = 512/);
  await screenshot(page, 'race-claim-software-default-zh');
  assertNoErrors(errors);
  await context.close();
});

test('bad URL settings are named and replaced by defaults', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=abc&cpu=turbo&workers=0&gpu=matmul-nope&view=race');
  await waitForProbe(page);
  const text = await page.textContent('.race-issues');
  for (const name of ['n', 'cpu', 'workers', 'gpu']) assert.match(text, new RegExp(`setting ${name} =`));
  assert.equal(await page.inputValue('#race-n'), '256');
  assert.equal(await page.inputValue('#race-cpu'), 'simd');
  // A stage this adapter cannot run (SwiftShader has no shader-f16) falls back to one that
  // can, and says so.
  await goto(page, '#/race?lang=en&gpu=matmul-f16');
  await page.waitForSelector('[data-gpu-note]');
  assert.match(await page.textContent('[data-gpu-note]'), /racing matmul-/);
  // A sweep range the wrong way round.
  await goto(page, '#/race?lang=en&view=sweep&from=1024&to=64');
  assert.ok(await page.$('.race-issues'));
  assert.equal(await page.inputValue('#sweep-from'), '16');
  await page.fill('#sweep-to', '9999');
  assert.ok(await page.isDisabled('#sweep-start'));
  assertNoErrors(errors);
  await context.close();
});

test('without WebGPU the CPU side still races', async () => {
  const noGpu = await launch({ webgpu: false });
  try {
    const { page, context, errors } = await openPage(noGpu, '#/race?lang=en&n=96');
    assert.notEqual(await waitForProbe(page), 'available');
    assert.match(await page.textContent('[data-gpu-note]'), /no WebGPU/);
    await race(page);
    assert.equal(await page.getAttribute('[data-agree]', 'data-agree'), 'cpu-only');
    assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
    assertNoErrors(errors);
    await context.close();
  } finally {
    await noGpu.close();
  }
});

test('a lost GPU device is replaced and said so; the CPU side is unaffected', async () => {
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=48&workers=2');
  await waitForProbe(page);
  await page.waitForSelector('#race-start:not([disabled])');
  await race(page);
  assert.equal(await page.evaluate(() => window.gpuPlayground.debug_lose_device()), true);
  await race(page);
  assert.ok(await page.$('.race-results [data-recovered="true"]'));
  assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
  assert.equal(await page.getAttribute('[data-agree]', 'data-agree'), 'true');
  assertNoErrors(errors);
  await context.close();
});

// The old mini-soak (55 races, heap and buffers) is the soak's now: 1,000 races in one page
// with the heap, live buffers and the race count checked (`cargo xtask soak`); here each race
// of the first test is counted once and leaves no GPU buffer.

/** Waits until the race is really under way: its GPU side has done part of its work, not all. */
async function gpuUnderWay(page) {
  await page.waitForFunction(() => {
    const v = Number(document.querySelector('.lane.gpu .track')?.getAttribute('aria-valuenow'));
    return document.querySelector('.lanes')?.dataset.phase === 'running' && v > 0 && v < 100;
  }, null, { timeout: 120_000 });
}

/**
 * Starts a race (N = 128, naive GPU stage) and checks, once it has finished, that it alone
 * submitted GPU work after `since` submissions, and that each of its submissions was made on
 * an empty queue: nothing of an earlier run was still queued or running, so none of it is in
 * this race's GPU time.
 */
async function cleanRace(page) {
  const before = Number(await page.getAttribute('.lanes', 'data-races'));
  const since = await clickAndCount(page, '#race-start');
  await page.waitForFunction((n) => Number(document.querySelector('.lanes')?.dataset.races) > n, before, { timeout: 120_000 });
  assert.equal(await page.getAttribute('.race-results', 'data-verified'), 'true');
  const own = Number(await page.getAttribute('.race-results', 'data-gpu-submissions'));
  const q = await queueState(page);
  assert.ok(own > 0, 'the race reports its GPU submissions');
  assert.equal(q.submitted - since, own, 'no GPU work but this race\'s was submitted after it started');
  assert.deepEqual(q.pendingAtSubmit.slice(since), new Array(own).fill(0),
    'each of the race\'s submissions was made with nothing earlier unfinished');
  assert.equal(q.completed, q.submitted, 'nothing left queued');
}

// A cancelled race stops submitting at once, and what it had in the queue is not counted in
// the next race's GPU time. Before the fix the GPU side of the next N = 128 race reported the
// cancelled race's remaining minute. (This used to compare wall-clock times with a fresh
// page's; the queue itself is asserted now.)
test('a race after a cancelled race: the cancelled one submits nothing more, the next starts on an empty queue', async () => {
  const { page, context, errors } = await openPage(
    browser, '#/race?lang=en&n=1024&cpu=naive&workers=1&gpu=matmul-naive', { initScript: QUEUE_SPY },
  );
  await waitForProbe(page);
  await page.waitForSelector('#race-start:not([disabled])');
  await page.click('#race-start');
  await gpuUnderWay(page);
  const atCancel = await clickAndCount(page, '#race-cancel');
  await page.waitForSelector('.lanes[data-phase="cancelled"]');
  // At once, while the cancelled race's last submission may still be running.
  await page.fill('#race-n', '128');
  await cleanRace(page);
  // The cancelled race's submissions all came before the cancel.
  const q = await queueState(page);
  const own = Number(await page.getAttribute('.race-results', 'data-gpu-submissions'));
  assert.equal(q.submitted - own, atCancel, 'the cancelled race submitted nothing after Cancel');
  assertNoErrors(errors);
  await context.close();
});

test('leaving the Kernels page mid-run stops its run; the next race starts on an empty queue', async () => {
  const { page, context, errors } = await openPage(
    browser, '#/kernels?lang=en&m=1024&n=1024&k=1024&stage=matmul-naive', { initScript: QUEUE_SPY },
  );
  await waitForProbe(page);
  await page.click('#run-button');
  // Really mid-run: part of the work done.
  await page.waitForFunction(() => {
    const p = Number(document.querySelector('.result [data-progress]')?.dataset.progress);
    return p > 0 && p < 100;
  }, null, { timeout: 120_000 });
  await goto(page, '#/race?lang=en&n=128&gpu=matmul-naive&workers=1');
  await page.waitForSelector('#race-start:not([disabled])');
  // Whatever the left run still had running, nothing of it is submitted after this race
  // starts, nor counted in its time.
  await cleanRace(page);
  assertNoErrors(errors);
  await context.close();
});

/** Milliseconds from a duration cell ("200 µs", "1.23 ms", "4.5 s", "2.50 min"). */
function parseDuration(text) {
  const m = text.trim().match(/^([0-9.,]+)\s*(µs|ms|s|min)$/);
  assert.ok(m, `a duration: ${text}`);
  const v = Number(m[1].replace(/,/g, ''));
  return v * { 'µs': 1e-3, ms: 1, s: 1000, min: 60_000 }[m[2]];
}

// Before the fix each CPU part was a maximum over different workers, so they added up to
// more than the total (79.3 ms of parts for a 61.9 ms race).
test('the CPU breakdown adds up to its total, and the page explains race vs sweep', async () => {
  // One page: the width and the language change, the race is run again at each.
  const { page, context, errors } = await openPage(browser, '#/race?lang=en&n=256&cpu=simd&workers=2');
  await waitForProbe(page);
  for (const [width, lang] of [[390, 'en'], [1280, 'en'], [1920, 'en'], [390, 'zh'], [1280, 'zh'], [1920, 'zh']]) {
    await page.setViewportSize({ width, height: 900 });
    if (lang !== 'en' && !page.url().includes(`lang=${lang}`)) await goto(page, `#/race?lang=${lang}&n=256&cpu=simd&workers=2`);
    await page.waitForSelector('#race-start:not([disabled])');
    await race(page);
    const cells = await page.$$eval('.cpu-breakdown td', (tds) => tds.map((td) => td.textContent));
    const [total, copyIn, compute, copyOut, wait] = cells.slice(0, 5).map(parseDuration);
    const parts = copyIn + compute + copyOut + wait;
    // Each shown value is rounded to three significant digits (numbers::duration): allow
    // half a unit of the third digit of each.
    const half = (v) => (v > 0 ? 0.5 * 10 ** (Math.floor(Math.log10(v)) - 2) : 0);
    const slack = [total, copyIn, compute, copyOut, wait].map(half).reduce((x, y) => x + y) + 1e-9;
    assert.ok(Math.abs(parts - total) <= slack, `parts ${parts} ms vs total ${total} ms`);
    assert.ok(await page.$('[data-vs-sweep]'), 'the difference from the sweep is explained');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      `no sideways scroll at ${width} px`);
    await page.locator('.race-results').screenshot({
      path: `${process.env.TEST_OUTPUT ?? 'test-output'}/race-breakdown-${width}-${lang}.png`,
    });
  }
  assertNoErrors(errors);
  await context.close();
});
