// Train: the crossover experiment (components/train/crossover.rs) — steps/s of the GPU
// (SwiftShader here) and of the tuned CPU (the race's SIMD kernel in wasm) over widths × batch
// sizes. The page's own grid (4 widths × 5 batches up to 512 × 4,096) takes minutes per point on
// SwiftShader, so the whole run is checked on a 2 × 2 grid the link asks for (`xwidths`,
// `xbatches`): one width past 65,535 parameters, batches 1 and 256. Checks that every point
// was measured (or names why not) and how the table writes it, the chart's points, the
// per-width verdicts against the table (no speed is asserted: that is docs/benchmarks.md's); Cancel on the page's full grid; bad grid lists named; screenshots at 390, 1280 and
// 1920 px in English and Chinese. The full grid's figures come from `bench crossover`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors } from './helpers.mjs';

const OUT = join(process.cwd(), 'test-output');
// 256 wide: 67,074 parameters, past the 65,535 where the per-parameter kernels wrap into y.
const WIDTHS = [16, 256];
const BATCHES = [1, 256];
const GRID = `xwidths=${WIDTHS.join(',')}&xbatches=${BATCHES.join(',')}`;
/** Points in the page's own grid (mlp::crossover::PAGE_WIDTHS × PAGE_BATCHES). */
const FULL_GRID = 4 * 5;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function waitForGpu(page) {
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
}

async function rows(page) {
  return page.$$eval('.train-x-table tbody tr', (rs) => rs.map((r) => ({
    width: Number(r.dataset.width),
    batch: Number(r.dataset.batch),
    gpu: r.dataset.gpu === '' ? null : Number(r.dataset.gpu),
    cpu: Number(r.dataset.cpu),
    cells: [...r.cells].map((c) => c.textContent),
  })));
}

function expectedVerdict(points) {
  const wins = points.filter((p) => p.gpu !== null).map((p) => p.gpu > p.cpu);
  if (wins.length === 0) return 'no-gpu';
  const changes = wins.slice(1).filter((w, i) => w !== wins[i]).length;
  if (changes === 0) return wins[0] ? 'gpu-all' : 'cpu-all';
  return changes === 1 && !wins[0] ? 'gpu-from' : 'mixed';
}

async function runToEnd(page) {
  await page.click('#train-x-run');
  await page.waitForSelector('#train-crossover[data-phase="done"]', { timeout: 900_000 });
}

async function shots(page, lang) {
  const section = page.locator('#train-crossover');
  for (const width of [390, 1280, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    // Reading scrollWidth lays the page out at the new width; no wait needed.
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= width, `${lang} ${width} px: the page is ${wide} px wide`);
    await section.screenshot({ path: join(OUT, `train-crossover-${lang}-${width}.png`) });
  }
}

test('crossover: every point measured on both sides, plausible numbers, chart and verdicts from the table', async () => {
  const { page, context, errors } = await openPage(browser, `#/train?lang=en&${GRID}`);
  await waitForGpu(page);
  // The page says it runs the smaller grid the link asks for.
  assert.equal(await page.getAttribute('#train-x-grid', 'data-points'), String(WIDTHS.length * BATCHES.length));
  assert.match(await page.textContent('#train-x-grid'), /widths 16, 256, batch sizes 1, 256\./);
  const t0 = Date.now();
  await runToEnd(page);
  const seconds = (Date.now() - t0) / 1000;
  const got = await rows(page);
  console.log(`crossover grid in ${seconds.toFixed(0)} s; network | batch | GPU steps/s | tuned CPU steps/s | GPU ÷ CPU`);
  for (const r of got) console.log(r.cells.join(' | '));
  assert.equal(got.length, WIDTHS.length * BATCHES.length);
  let i = 0;
  for (const w of WIDTHS) {
    for (const b of BATCHES) {
      const r = got[i++];
      assert.deepEqual([r.width, r.batch], [w, b]);
      // Each side measured a rate (a finite number of steps per second above 0); how fast
      // either is belongs in docs/benchmarks.md, not in a check, so no speed is bounded here.
      assert.ok(Number.isFinite(r.cpu) && r.cpu > 0, `CPU ${w}/${b}: ${r.cpu} steps/s`);
      // The GPU: a measured rate, or a named reason in the cell.
      if (r.gpu !== null) {
        assert.ok(Number.isFinite(r.gpu) && r.gpu > 0, `GPU ${w}/${b}: ${r.gpu}`);
        assert.match(r.cells[2], /^[\d,.]+ ±\d+ %$/);
        // The ratio as the chart's axis writes it, and equal to the two medians' quotient.
        const q = r.gpu / r.cpu;
        // Below 1 the page writes 1/N with N = 1/q rounded; above, q to 3 significant digits.
        assert.match(r.cells[4], q >= 1 ? /^[\d,.]+×$/ : /^1\/[\d,]+$/, r.cells[4]);
        if (q < 1) {
          assert.equal(Number(r.cells[4].slice(2).replace(/,/g, '')), Math.round(1 / q), `${r.cells[4]} vs ${q}`);
        } else {
          const step = q >= 100 ? 0.5 : q >= 10 ? 0.05 : 0.005;
          assert.ok(Math.abs(Number(r.cells[4].replace(/[×,]/g, '')) - q) <= step + 1e-9, `${r.cells[4]} vs ${q}`);
        }
      } else {
        assert.match(r.cells[2], /^(failed \(see note \d+ below\)|does not fit in memory|no WebGPU)$/, r.cells[2]);
        const n = r.cells[2].match(/note (\d+)/)?.[1];
        if (n) assert.match(await page.textContent(`.train-x-failure[data-note="${n}"]`), /^Note \d+: the GPU step failed: .+/);
      }
    }
  }
  // Every width runs on the GPU (past 65,535 parameters the per-parameter kernels wrap their
  // grid into y); only a point too large for the device's buffers may be refused, by name.
  for (const r of got) {
    assert.ok(r.gpu !== null || r.cells[2] === 'does not fit in memory', `${r.width}/${r.batch}: ${r.cells[2]}`);
  }
  assert.ok(got.filter((r) => r.width <= 64).every((r) => r.gpu !== null), 'GPU numbers for width 16');
  // The chart: one line per width, one point per GPU figure.
  for (const [k, w] of WIDTHS.entries()) {
    const pts = (await page.getAttribute(`.train-x-chart polyline.x-w${k}`, 'points')).trim();
    const n = got.filter((r) => r.width === w && r.gpu !== null).length;
    assert.equal(pts === '' ? 0 : pts.split(/\s+/).length, n, `width ${w}: ${pts}`);
  }
  // Each width's verdict is the one its rows support.
  for (const w of WIDTHS) {
    const v = await page.getAttribute(`.train-x-verdicts li[data-width="${w}"]`, 'data-verdict');
    assert.equal(v, expectedVerdict(got.filter((r) => r.width === w)), `width ${w}`);
  }
  assert.match(await page.textContent('.train-crossover .lesson'), /a tuned core does about as many/);
  await shots(page, 'en');
  assertNoErrors(errors);
  await context.close();
});

test('crossover: Cancel stops the run on the full grid and keeps the points so far; Chinese text and screenshots', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=zh');
  await waitForGpu(page);
  assert.equal(await page.$('#train-x-grid'), null, 'no link grid: the page\'s own');
  await page.click('#train-x-run');
  assert.equal(await page.textContent('#train-x-run'), '取消');
  // Without a grid in the link the page runs its full grid: 20 points.
  assert.equal(await page.getAttribute('#train-x-progress progress', 'max'), String(FULL_GRID));
  await page.waitForFunction(() => document.querySelectorAll('.train-x-table tbody tr').length >= 2,
    null, { timeout: 300_000, polling: 100 });
  // Cancel, counting the points shown in the same task as the click: the point being measured
  // when Cancel lands is dropped, so the page keeps exactly these.
  const atClick = await page.evaluate(() => {
    const n = document.querySelectorAll('.train-x-table tbody tr').length;
    document.querySelector('#train-x-run').click();
    return n;
  });
  // "cancelled" is set only once the run's loop has returned: no point can follow it.
  await page.waitForSelector('#train-crossover[data-phase="cancelled"]', { timeout: 120_000 });
  const kept = (await rows(page)).length;
  assert.ok(kept >= 2 && kept < FULL_GRID, `${kept} points kept`);
  assert.equal(kept, atClick, 'no point is added after Cancel');
  assert.equal(await page.$('#train-x-progress'), null, 'no point is being measured');
  assert.equal(await page.textContent('#train-x-run'), '运行交叉点实验');
  assert.match(await page.textContent('#train-crossover'), /已取消/);
  // The kept points in Chinese: their network names and figures, the heading. The verdicts and
  // the lesson come with a finished grid, checked in English on the small grid.
  const first = (await rows(page))[0];
  assert.deepEqual([first.width, first.batch], [16, 1]);
  assert.ok(first.cpu > 0, `CPU figure ${first.cells[3]}`);
  assert.match(await page.textContent('.train-crossover'), /2-16-16-2/);
  assert.match(await page.textContent('.train-crossover h2'), /GPU 从哪里开始超过调优 CPU/);
  await shots(page, 'zh');
  assertNoErrors(errors);
  await context.close();
});

test('crossover: bad grid lists in a link are named and the full grid is used', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=en&xwidths=16,abc&xbatches=0');
  await waitForGpu(page);
  const named = await page.$$eval('.train-x-errors li', (ls) => ls.map((l) => [l.dataset.error, l.textContent]));
  assert.deepEqual(named.map(([k]) => k), ['train.x.err.widths', 'train.x.err.batches']);
  assert.match(named[0][1], /The widths “16,abc” in this link are not usable: give 1 to 4 different whole numbers from 1 to 512/);
  assert.match(named[1][1], /The batch sizes “0” in this link are not usable: give 1 to 5 different whole numbers from 1 to 4096/);
  assert.equal(await page.$('#train-x-grid'), null);
  await page.click('#train-x-run');
  assert.equal(await page.getAttribute('#train-x-progress progress', 'max'), String(FULL_GRID));
  assert.match(await page.textContent('#train-x-progress'), /width 16, batch 1/);
  await page.click('#train-x-run');
  await page.waitForSelector('#train-crossover[data-phase="cancelled"]', { timeout: 120_000 });
  assertNoErrors(errors);
  await context.close();
});
