// A learning rate far too big on #/cnn (issue 41, round three, item 7), from the start: Adam at
// lr 1 takes the browser tests' network's test loss from 2.99 to about 89 in its first step,
// then back to 2.6–2.9 with accuracy at chance, outside the stall note's band around ln 10
// (crates/page-models/src/cnn/board.rs, `Curves::collapsed`, has the twin's numbers). The page
// says "the step was too big" at the first evaluation after the jump, and keeps saying it while
// the network stays no better than a guess; one note, not a stall note beside it. English at
// 1280 px, Chinese at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors } from './helpers.mjs';
import { ready, evaluatedAt } from './cnn-page.mjs';

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
const TOO_BIG = '#/cnn?ch=4,8&k=5,5&batch=16&lr=1';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const SAID = {
  en: /^The step was too big: with learning rate 1, the test loss jumped from 2\.99 at step 0 to [\d,.]+ at step 1, far above the 2\.30 \(ln 10\)/,
  zh: /^步子太大了：学习率为 1 时，测试损失从第 0 步的 2\.99 跳到第 1 步的 [\d,.]+，远高于/,
};

test('lr 1 from the start: the blown-up loss is explained at the first evaluation after it, and stays said', async () => {
  for (const [lang, width] of [['en', 1280], ['zh', 390]]) {
    const { page, context, errors } = await openPage(browser, `${TOO_BIG}&lang=${lang}`, { viewport: { width, height: 900 } });
    await ready(page);
    await evaluatedAt(page, 0);
    assert.equal(await page.locator('#cnn-collapsed').count(), 0, `${lang}: nothing to say before a step`);
    await page.click('#cnn-step');
    await evaluatedAt(page, 1);
    const jumped = Number((await page.getAttribute('#cnn-status', 'data-gpu-test')).split(' ')[1]);
    assert.ok(jumped > 2 * 2.99, `${lang}: the first step at lr 1 blew the loss up (test loss ${jumped})`);
    const note = page.locator('#cnn-collapsed');
    assert.equal(await note.count(), 1, `${lang}: no note at the first evaluation after the loss jumped to ${jumped}`);
    assert.equal(await note.getAttribute('data-by'), 'loss');
    assert.match(await note.textContent(), SAID[lang]);
    // The loss falls back near ln 10 at once; the note stays while the network is no better
    // than a guess, and no stall note joins it.
    for (let step = 2; step <= 4; step++) {
      await page.click('#cnn-step');
      await evaluatedAt(page, step);
      const [, loss, acc] = (await page.getAttribute('#cnn-status', 'data-gpu-test')).split(' ').map(Number);
      assert.ok(loss > Math.LN10 - 0.3 && acc < 0.2, `${lang}: step ${step} learned after all (loss ${loss}, accuracy ${acc})`);
      assert.equal(await note.count(), 1, `${lang}: the note went at step ${step} (loss ${loss})`);
      assert.match(await note.textContent(), SAID[lang]);
    }
    assert.equal(await page.locator('#cnn-stalled').count(), 0, 'one note, not two');
    assert.equal(await page.locator('#cnn-diverged').count(), 0, 'the loss is still a number');
    await note.scrollIntoViewIfNeeded();
    await note.screenshot({ path: join(OUT, `learner-notes-blown-up-${lang}-${width}.png`) });
    await page.screenshot({ path: join(OUT, `learner-notes-blown-up-page-${lang}-${width}.png`) });
    // The note at the other width (a phone's 390 px, a laptop's 1280 px).
    const other = width === 390 ? 1280 : 390;
    await page.setViewportSize({ width: other, height: 900 });
    await note.scrollIntoViewIfNeeded();
    await note.screenshot({ path: join(OUT, `learner-notes-blown-up-${lang}-${other}.png`) });
    assertNoErrors(errors);
    await context.close();
  }
});

// Issue 41 item 6: "the article's claim" says which. The race's claim view names its article
// (fact-links.test.mjs); the snippet a teacher copies from it titled the frame "checking an
// article's claim". Now the title says which claim, in both languages.
test('the claim widget\'s embed snippet says which claim it checks (en, zh)', async () => {
  const WHICH = { en: 'GPU Playground: checking the “1/100 of the CPU', zh: 'GPU Playground：核查“GPU 仅需 CPU 1/100 的时间”的说法' };
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/race?view=claim&lang=${lang}&instructor=1`);
    const share = page.locator('.embed-share[data-widget="claim"]');
    await share.locator('.embed-toggle').click();
    const snippet = await share.locator('.embed-snippet').inputValue();
    const title = snippet.match(/<iframe [^>]* title="([^"]*)"/)?.[1];
    assert.ok(title, snippet);
    assert.ok(title.startsWith(WHICH[lang]), `${lang}: ${title}`);
    assert.doesNotMatch(title, /an article|文章的说法$/, lang);
    await share.screenshot({ path: join(OUT, `learner-notes-claim-embed-${lang}.png`) });
    assertNoErrors(errors);
    await context.close();
  }
});
