// Inside the GPT of #/gpt, in one page load: the attention maps of a typed prompt (bad
// prompts named; every layer and head drawn; the GPU's probabilities within the CPU twin's
// bound; hovering, tapping or focusing a character shows where it looks, and the first
// position can look only at itself; maps asked for while the model trains come from the
// trained model, and training goes on), and the seed's claim measured (FLOPs shares from the
// shape, each kernel class's time on the adapter, a software adapter said to be one, Cancel).
// Screenshots of both sections at 390, 1280 and 1920 px in English and Chinese, with no
// sideways scrolling. Every wait is on a condition.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors, switchLang } from './helpers.mjs';

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const num = (page, sel, attr) => page.getAttribute(sel, attr).then(Number);

async function show(page, text) {
  await page.fill('#gpt-attn-prompt', text);
  await page.click('#gpt-attn-show');
}

/** Each head's strip of where position `at` looks: the shade of every character. */
const strips = (page) => page.$$eval('.gpt-attn-head .gpt-attn-looks',
  (ps) => ps.map((p) => [...p.querySelectorAll('span')].map((s) => Number(s.dataset.level))));

test('attention maps and the measured claim, in English and Chinese', async () => {
  const { page, context, errors } = await openPage(browser, '#/gpt?lang=en&data=names');
  // The GPU session is up once the claim's table (read from it) is shown.
  await page.waitForSelector('#gpt-claim-table', { timeout: 90_000 });

  // Bad prompts are named, and nothing runs.
  await show(page, '');
  await page.waitForSelector('#gpt-attn-note[data-note="gpt.attn.empty"]');
  await show(page, 'abcdefghijklmnopqrstuvwxyz');
  await page.waitForSelector('#gpt-attn-note[data-note="gpt.attn.too_long"]');
  assert.match(await page.textContent('#gpt-attn-note'), /26 characters, but the model's context holds 15/);
  await show(page, 'an7a');
  await page.waitForSelector('#gpt-attn-note[data-note="gpt.attn.outside"]');
  assert.match(await page.textContent('#gpt-attn-note'), /"7"/);

  // The untrained model: 2 layers × 2 heads (the software default), checked by the twin.
  await show(page, 'emma');
  await page.waitForSelector('#gpt-attn[data-state="ready"]', { timeout: 60_000 });
  assert.equal(await num(page, '#gpt-attn-result', 'data-steps'), 0);
  assert.equal(await num(page, '#gpt-attn-result', 'data-n'), 5);
  assert.equal(await page.$$eval('.gpt-attn-head', (f) => f.length), 4);
  // Each map: the causal triangle of 5 positions (15 cells) and the picked row's outline.
  const cells = await page.$$eval('svg.gpt-attn-map', (ss) => ss.map((s) => s.querySelectorAll('rect').length));
  assert.deepEqual(cells, [16, 16, 16, 16]);
  assert.equal(await page.getAttribute('#gpt-attn-check', 'data-within'), 'true');
  assert.match(await page.textContent('#gpt-attn-check'), /within its bound from the twin's error analysis/);
  // Hover the start: it can look only at itself, with all of its attention.
  await page.hover('.gpt-attn-char[data-pos="0"]');
  await page.waitForSelector('#gpt-attn-result[data-at="0"]');
  for (const s of await strips(page)) assert.deepEqual(s, [9, 0, 0, 0, 0]);
  // Focus by keyboard: the third letter looks at itself and what came before, never after.
  await page.focus('.gpt-attn-char[data-pos="3"]');
  await page.waitForSelector('#gpt-attn-result[data-at="3"]');
  for (const s of await strips(page)) {
    assert.ok(s.slice(0, 4).every((l) => l > 0), `positions 0–3 seen: ${s}`);
    assert.equal(s[4], 0, `nothing after position 3: ${s}`);
  }

  // While training: the maps of the model as it stands, and training goes on.
  await page.click('#gpt-train-toggle');
  await page.waitForFunction(() => Number(document.querySelector('#gpt-train-gpu').dataset.steps) > 0, null, { timeout: 120_000 });
  await show(page, 'anna');
  await page.waitForSelector('#gpt-attn[data-state="ready"]', { timeout: 60_000 });
  const at = await num(page, '#gpt-attn-result', 'data-steps');
  assert.ok(at > 0, 'the maps of a trained model');
  assert.equal(await page.getAttribute('#gpt-attn-check', 'data-within'), 'true');
  await page.waitForFunction((s) => Number(document.querySelector('#gpt-train-gpu').dataset.steps) > s, at, { timeout: 120_000 });
  await page.click('#gpt-train-toggle');
  await page.waitForSelector('#gpt-train[data-running="false"]');

  // The claim: Cancel stops a measurement; a full one times every class.
  await page.waitForSelector('#gpt-claim-run:not([disabled])');
  await page.click('#gpt-claim-run');
  await page.waitForSelector('#gpt-claim[data-phase="running"]');
  await page.click('#gpt-claim-run');
  await page.waitForSelector('#gpt-claim[data-phase="cancelled"]');
  await page.click('#gpt-claim-run');
  await page.waitForSelector('#gpt-claim[data-phase="done"]', { timeout: 180_000 });
  const rows = await page.$$eval('#gpt-claim-table tbody tr', (rs) => rs.map((r) => ({
    cls: r.dataset.class, flops: Number(r.dataset.flopsShare), time: Number(r.dataset.timeShare), ms: Number(r.dataset.ms),
  })));
  assert.deepEqual(rows.map((r) => r.cls), ['matmul', 'attention', 'other']);
  assert.ok(Math.abs(rows.reduce((a, r) => a + r.flops, 0) - 100) < 1e-6);
  assert.ok(Math.abs(rows.reduce((a, r) => a + r.time, 0) - 100) < 1e-6);
  assert.ok(rows[0].flops > 50, `matmul FLOPs share ${rows[0].flops}`);
  for (const r of rows) assert.ok(r.ms > 0, `${r.cls} took ${r.ms} ms`);
  assert.equal(await page.getAttribute('#gpt-claim-result', 'data-runs'), '5');
  assert.equal(await page.getAttribute('#gpt-claim-result', 'data-software'), 'true');
  await page.waitForSelector('#gpt-claim-software');

  // Both sections at three widths in both languages.
  await page.hover('.gpt-attn-char[data-pos="2"]');
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      await switchLang(page, 'zh');
      await page.waitForSelector('#gpt-claim[data-phase="done"]');
    }
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(scroll <= 0, `${lang} at ${width}: the page scrolls sideways by ${scroll} px`);
      for (const id of ['gpt-attn', 'gpt-claim']) {
        await page.locator(`#${id}`).screenshot({ path: join(OUT, `${id}-${lang}-${width}.png`) });
      }
    }
  }
  assertNoErrors(errors);
  await context.close();
});
