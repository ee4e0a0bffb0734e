// Cancel in the kernel editor: a long edited run (1024³ naive matmul on a software adapter)
// stops at its next submission; the page says "Cancelling" while the piece already sent
// finishes, then "Cancelled", nothing is submitted after the click and nothing is left queued
// (watched at the WebGPU API), and the next run is verified. Its own file, so its own browser:
// the watchdog test's endless kernel keeps that browser's software GPU busy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, screenshot, assertNoErrors, editorReady, goto, runEditor } from './helpers.mjs';
import { QUEUE_SPY, queueState } from './queue-spy.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('Cancel stops a long edited run: nothing is sent after it, it says so, and the next run is verified (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser,
      `#/editor?lang=${lang}&stage=matmul-naive&m=1024&n=1024&k=1024`, { initScript: QUEUE_SPY });
    await editorReady(page, { runnable: true });
    await page.click('#editor-run');
    await page.waitForSelector('.editor-result[data-outcome="running"]');
    // Under way: the GPU has been handed work.
    await page.waitForFunction(() => window.__queueSpy.submitted > 0, null, { timeout: 120_000 });
    assert.equal(await page.isDisabled('#editor-run'), true, 'Run waits while a run goes');
    // Every text the result shows from here on: "Cancelling" may last less than a test's
    // round trip (CI, under load, read "Cancelled" already), so it is recorded as it shows.
    await page.evaluate(() => {
      const el = document.querySelector('.editor-result');
      window.__said = [el.textContent];
      new MutationObserver(() => window.__said.push(el.textContent))
        .observe(el, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    // The click and the counts in one task (as clickAndCount does).
    const [atCancel, inFlight] = await page.evaluate(() => {
      document.querySelector('#editor-cancel').click();
      const q = window.__queueSpy;
      return [q.submitted, q.submitted - q.completed];
    });
    await page.waitForSelector('.editor-result[data-outcome="cancelled"]', { timeout: 120_000 });
    const said = await page.evaluate(() => window.__said);
    // A piece was on the GPU at the click (1024³ on SwiftShader takes seconds): the page said
    // so while it finished.
    assert.ok(inFlight > 0, `a piece in flight at Cancel: ${inFlight}`);
    assert.ok(said.some((t) => (lang === 'en' ? /Cancelling/ : /正在取消/).test(t)), JSON.stringify(said));
    const q = await queueState(page);
    assert.equal(q.submitted, atCancel, 'no GPU work submitted after Cancel');
    assert.equal(q.completed, q.submitted, 'nothing of the cancelled run left queued');
    assert.equal(await page.$('#editor-cancel'), null, 'Cancel goes with the run');
    await screenshot(page, `editor-cancelled-${lang}-1280`);
    await goto(page, `#/editor?lang=${lang}&stage=matmul-naive&m=16&n=16&k=16`);
    await editorReady(page, { runnable: true });
    await runEditor(page);
    assert.equal(await page.getAttribute('.editor-result', 'data-outcome'), 'correct', await page.textContent('.editor-result'));
    assertNoErrors(errors);
    await context.close();
  }
});
