// Train: the crossover experiment (components/train/crossover.rs) — steps/s of the GPU
// (SwiftShader here) and of the tuned CPU (the race's SIMD kernel in wasm) over 4 widths × 5
// batch sizes. Checks every point's numbers against what the arithmetic allows, the chart's
// points, the per-width verdicts against the table, Cancel, and screenshots at 390, 1280 and
// 1920 px in English and Chinese.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors } from './helpers.mjs';

const OUT = join(process.cwd(), 'test-output');
const WIDTHS = [16, 64, 256, 512];
const BATCHES = [1, 16, 256, 1024, 4096];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function waitForGpu(page) {
  await page.waitForSelector('#train-status[data-gpu="ready"]', { timeout: 60_000 });
}

// FLOP of one training step of 2-w-w-2 (mlp::tuned::flops_per_step, written out again):
// forward and weight gradients for every layer, deltas for every layer but the first.
function flops(width, batch) {
  const layers = [[2, width], [width, width], [width, 2]];
  return layers.reduce((f, [i, o], l) => f + (l === 0 ? 2 : 3) * 2 * i * o * batch, 0);
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
    await page.waitForTimeout(200);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= width, `${lang} ${width} px: the page is ${wide} px wide`);
    await section.screenshot({ path: join(OUT, `train-crossover-${lang}-${width}.png`) });
  }
}

test('crossover: every point measured on both sides, plausible numbers, chart and verdicts from the table', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=en');
  await waitForGpu(page);
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
      // The tuned CPU: one wasm core does at most 4 lanes × 2 FLOP × 6 GHz ≈ 50 GFLOP/s, and
      // a step takes at least the time of its FLOPs; at least one step per 60 s was measured.
      const cpuFlops = r.cpu * flops(w, b);
      assert.ok(r.cpu > 1 / 60 && cpuFlops <= 50e9, `CPU ${w}/${b}: ${r.cpu} steps/s = ${cpuFlops / 1e9} GFLOP/s`);
      // The GPU: a number under the same kind of ceiling (SwiftShader is this CPU; even a
      // real GPU does not pass 10¹⁴ FLOP/s here), or a named reason in the cell.
      if (r.gpu !== null) {
        assert.ok(r.gpu > 1 / 60 && r.gpu * flops(w, b) <= 1e14, `GPU ${w}/${b}: ${r.gpu}`);
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
    // A larger batch is a larger step: the CPU's steps/s at 4,096 are below its rate at 1.
    const own = got.filter((r) => r.width === w);
    assert.ok(own[4].cpu < own[0].cpu, `width ${w}: CPU ${own[0].cpu} → ${own[4].cpu}`);
  }
  // Every width runs on the GPU (past 65,535 parameters the per-parameter kernels wrap their
  // grid into y); only a point too large for the device's buffers may be refused, by name.
  for (const r of got) {
    assert.ok(r.gpu !== null || r.cells[2] === 'does not fit in memory', `${r.width}/${r.batch}: ${r.cells[2]}`);
  }
  assert.ok(got.filter((r) => r.width <= 64).every((r) => r.gpu !== null), 'GPU numbers for widths 16 and 64');
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

test('crossover: Cancel stops the run and keeps the points so far; Chinese text and screenshots', async () => {
  const { page, context, errors } = await openPage(browser, '#/train?lang=zh');
  await waitForGpu(page);
  await page.click('#train-x-run');
  assert.equal(await page.textContent('#train-x-run'), '取消');
  await page.waitForFunction(() => document.querySelectorAll('.train-x-table tbody tr').length >= 2,
    null, { timeout: 300_000, polling: 100 });
  await page.click('#train-x-run');
  await page.waitForSelector('#train-crossover[data-phase="cancelled"]', { timeout: 120_000 });
  const kept = (await rows(page)).length;
  assert.ok(kept >= 2 && kept < 20, `${kept} points kept`);
  await page.waitForTimeout(1500);
  assert.equal((await rows(page)).length, kept, 'no point is added after Cancel');
  assert.match(await page.textContent('#train-crossover'), /已取消/);
  // The kept points in Chinese: their network names and figures, the heading. The verdicts and
  // the lesson come with a finished grid, checked in English: the whole grid runs once, since
  // on SwiftShader the 256- and 512-wide points take minutes now that they run on the GPU.
  const first = (await rows(page))[0];
  assert.deepEqual([first.width, first.batch], [16, 1]);
  assert.ok(first.cpu > 0, `CPU figure ${first.cells[3]}`);
  assert.match(await page.textContent('.train-crossover'), /2-16-16-2/);
  assert.match(await page.textContent('.train-crossover h2'), /GPU 从哪里开始超过调优 CPU/);
  await shots(page, 'zh');
  assertNoErrors(errors);
  await context.close();
});
