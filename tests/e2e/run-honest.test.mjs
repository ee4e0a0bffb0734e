// A long matmul on the software adapter, told honestly: the widget warns before the run with
// its estimate, its status names the run's own work (not "earlier GPU work" that does not
// exist), and Cancel shows what is still draining before "cancelled". Never asserts on speed:
// the size is one that is slow on SwiftShader, and the run is cancelled as soon as it moves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, waitForProbe, assertNoErrors } from './helpers.mjs';
import { QUEUE_SPY, queueState, clickAndCount } from './queue-spy.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const SLOW = 'm=4096&n=4096&k=4096&stage=matmul-naive';
const out = (name) => `${process.env.TEST_OUTPUT ?? 'test-output'}/${name}.png`;

/** Records every state the run's status passes through (some last a fraction of a second). */
const watchStatus = (page) => page.evaluate(() => {
  window.__seen = [];
  const note = () => {
    const el = document.querySelector('.result [data-progress]');
    const cancelled = document.querySelector('.result [data-cancelled]');
    const state = cancelled ? 'cancelled' : el?.dataset.progress;
    const last = window.__seen[window.__seen.length - 1];
    if (state && (!last || last.state !== state)) window.__seen.push({ state, text: (cancelled ?? el).textContent });
  };
  new MutationObserver(note).observe(document.querySelector('.result'), { subtree: true, childList: true, attributes: true, characterData: true });
  note();
});

const TEXT = {
  en: { warn: /take long on this adapter: from 1 min 9 s to 22 min 55 s, at the 0\.100? to 2(\.00)? GFLOP\/s that software renderers/, own: /this run's own GPU work/, earlier: /sent before this run/, pieces: /\d+ % done, \d+ pieces? finished/, cancelling: /Cancelling: nothing more is sent to the GPU/ },
  zh: { warn: /在这个适配器上会很慢：需要 1 min 9 s 到 22 min 55 s/, own: /本次运行自己的/, earlier: /本次运行之前提交/, pieces: /已完成 \d+ %，共 \d+ 块/, cancelling: /正在取消：不再向 GPU 提交任何工作/ },
};

test('a slow size on the software adapter: a warning with the estimate before Run, its own pieces while running, "cancelling" until the GPU is idle', async () => {
  const { page, context, errors } = await openPage(browser, `#/kernels?lang=en&${SLOW}`, { initScript: QUEUE_SPY });
  await waitForProbe(page);
  for (const lang of ['en', 'zh']) {
    if (lang !== 'en') await goto(page, `#/kernels?lang=${lang}&${SLOW}`);
    const t = TEXT[lang];
    // Before the run: the warning, with the estimate (4096³ at the assumed 0.1 to 2 GFLOP/s:
    // 23 min to 69 s).
    await page.waitForSelector('.run-widget [data-long-run]');
    const warning = await page.textContent('.run-widget [data-long-run]');
    assert.match(warning, t.warn);
    const [fast, slow] = await page.$eval('.run-widget [data-long-run]', (e) => [+e.dataset.fastMs, +e.dataset.slowMs]);
    assert.ok(Math.abs(fast - 2 * 4096 ** 3 / 2e6) < 1 && Math.abs(slow - 2 * 4096 ** 3 / 1e5) < 1, `estimate ${fast}–${slow} ms`);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      assert.ok(await page.$eval('.run-widget', (el) => el.scrollWidth <= el.clientWidth), `warning fits ${width} px`);
      await page.locator('.run-widget').screenshot({ path: out(`run-long-warning-${width}-${lang}`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    await watchStatus(page);
    await page.click('#run-button');
    // Its own pieces: a percentage above 0, with the count of pieces finished.
    await page.waitForFunction(() => Number(document.querySelector('.result [data-progress]')?.dataset.progress) > 0, null, { timeout: 120_000 });
    const running = await page.textContent('.result [data-progress]');
    assert.match(running, t.own);
    assert.match(running, t.pieces);
    await page.locator('.run-widget').screenshot({ path: out(`run-own-pieces-${lang}`) });
    const atCancel = await clickAndCount(page, '#run-cancel');
    await page.waitForSelector('.result [data-cancelled]', { timeout: 120_000 });
    const q = await queueState(page);
    assert.equal(q.submitted, atCancel, 'no GPU work submitted after Cancel');
    assert.equal(q.completed, q.submitted, 'the GPU is idle when "cancelled" shows');
    const seen = await page.evaluate(() => window.__seen);
    const states = seen.map((s) => s.state);
    // No claim of someone else's work: the queue was empty when the run started.
    assert.ok(!seen.some((s) => t.earlier.test(s.text)), `never "waiting for earlier work": ${JSON.stringify(states)}`);
    // Cancelling was shown, after the run's own progress and before "cancelled".
    const c = states.indexOf('cancelling');
    assert.ok(c > 0 && states.lastIndexOf('cancelled') > c, `cancelling, then cancelled: ${JSON.stringify(states)}`);
    assert.match(seen[c].text, t.cancelling);
    // The warning is back for the next try, and a small size has none.
    await page.waitForSelector('.run-widget [data-long-run]');
    await goto(page, `#/kernels?lang=${lang}&m=256&n=256&k=256&stage=matmul-naive`);
    await page.waitForSelector('.run-widget .shape');
    assert.equal(await page.$('.run-widget [data-long-run]'), null, 'no warning for 256³');
  }
  assertNoErrors(errors);
  await context.close();
});
