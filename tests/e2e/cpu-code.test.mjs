// The first lesson and the race both time "the CPU" on the same matmul, with different code
// and ways (one warm thread of the page's module against workers end to end, next to the
// GPU), so their times differ many-fold. Each page says which CPU code it timed and links
// the other, so that a learner does not take one for the other.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, waitForProbe, waitForRoute, navigatedBy, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const out = (name) => `${process.env.TEST_OUTPUT ?? 'test-output'}/${name}.png`;
const TEXT = {
  en: { lesson: /Which CPU code the CPU column times: the race’s SIMD kernel .* on one thread .* several times longer/, race: /The first lesson \(CPU vs GPU\) times the same SIMD kernel differently/ },
  zh: { lesson: /“CPU”一列计时的是哪段 CPU 代码：竞速页的 SIMD 内核.*一个线程.*长好几倍/, race: /第一课（CPU 与 GPU）用不同的方式为同一个 SIMD 内核计时/ },
};

for (const lang of ['en', 'zh']) {
  test(`lesson 1 and the race name the CPU code they timed and link each other (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn/latency-throughput?lang=${lang}`);
    const note = page.locator('[data-widget="race"] [data-cpu-code="simd"]');
    assert.match(await note.textContent(), TEXT[lang].lesson);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator('[data-widget="race"]').screenshot({ path: out(`cpu-code-lesson-${width}-${lang}`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    // The link opens the race's sweep with the same kernel on one worker.
    await navigatedBy(page, () => note.locator('a[data-race-link]').click(), { path: '/race', lang });
    const q = new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
    assert.deepEqual([q.get('view'), q.get('cpu'), q.get('workers')], ['sweep', 'simd', '1']);
    // A race's results say the lesson measured differently, with a link back.
    await goto(page, `#/race?lang=${lang}&n=64`);
    await waitForProbe(page);
    await page.waitForSelector('#race-start:not([disabled])');
    await page.click('#race-start');
    await page.waitForFunction(() => Number(document.querySelector('.lanes')?.dataset.races) > 0, null, { timeout: 120_000 });
    const back = page.locator('[data-vs-lesson]');
    assert.match(await back.textContent(), TEXT[lang].race);
    await back.screenshot({ path: out(`cpu-code-race-${lang}`) });
    await navigatedBy(page, () => back.locator('a').click(), { path: '/learn/latency-throughput', lang });
    assertNoErrors(errors);
    await context.close();
  });
}
