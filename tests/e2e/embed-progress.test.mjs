// Where an embed's progress lives. The course page here is on another *site* than the
// playground (`localhost` vs `127.0.0.1`), as on a real deployment: the browser keeps the
// embed's storage apart from the playground's own site (storage partitioned by the top-level
// site), so a puzzle solved in the embed is not solved on the site's `#/puzzles`. The puzzle
// embed's own "Save progress to a file" carries it over: imported on the site, it is solved.
// Headless Chromium's contexts, like Chrome's private windows, go further and refuse such an
// embed local storage altogether: its progress then lives in the page's memory, the box says
// so, and the file still carries it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BASE_URL, goto, screenshot, assertNoErrors } from './helpers.mjs';
import { browser, hostOrigin, siteFrame, waitMessage } from './embed-host.mjs';
import { setDocIn, starterAnswered } from './puzzle-frame.mjs';

const SOLVED = 'gpu-playground.puzzles.solved';

for (const [lang, width] of [['en', 1280], ['zh', 390]]) {
  test(`a puzzle solved in an embed on another site reaches the playground through the embed's own file (${lang}, ${width} px)`, async () => {
    const courseOrigin = `http://localhost:${new URL(hostOrigin).port}`;
    assert.notEqual(new URL(courseOrigin).hostname, new URL(BASE_URL).hostname, 'another site');
    const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    const src = `${BASE_URL}#/embed/puzzle?id=map&lang=${lang}&parentOrigin=${encodeURIComponent(courseOrigin)}`;
    await page.goto(`${courseOrigin}/host.html?w=${width - 40}&src=${encodeURIComponent(src)}`);
    const frame = await siteFrame(page, '#w', { path: '/embed/puzzle', lang });

    const right = await starterAnswered(frame, 'out[i] = a[i] + 10.0;');
    await setDocIn(page, frame, right);
    const from = await page.evaluate(() => window.received.length);
    await frame.click('#puzzle-run:not([disabled])', { timeout: 60_000 });
    const outcome = await waitMessage(page, (d) => d && d.type === 'outcome', { from, timeout: 180_000 });
    assert.equal(outcome.data.statement.result.success, true, JSON.stringify(outcome.data));

    // The embed's own box says where the progress is and saves it, solve included.
    const box = await frame.waitForSelector('.embed-progress .progress-transfer');
    assert.match(await box.innerText(), lang === 'en' ? /this course page/ : /课程页面/);
    // This browser keeps nothing for a frame of another site: the box says what that means.
    assert.equal(await frame.evaluate(() => { try { return !!localStorage; } catch { return false; } }), false,
      'the browser here refuses the embed storage (if this changes, the note below must go)');
    assert.match(await frame.innerText('.embed-progress .progress-memory'),
      lang === 'en' ? /lasts only until you close or reload the page/ : /只保留到关闭或刷新页面为止/);
    await box.scrollIntoViewIfNeeded();
    await screenshot(page, `embed-progress-${lang}-${width}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      frame.click('.embed-progress .progress-export'),
    ]);
    const path = await download.path();
    const file = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(file.format, 'gpu-playground-progress');
    assert.equal(file.items[SOLVED], 'map', JSON.stringify(file));
    assert.equal(file.items['gpu-playground.draft.puzzle.map'], right);

    // The playground's own site in the same browser: the embed's storage is not its.
    const site = await context.newPage();
    site.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    await goto(site, `#/puzzles?lang=${lang}`);
    assert.equal(await site.$('a[data-puzzle="map"] + .badge.ok'), null,
      'the site sees the embed\'s solve without the file: storage is not partitioned here, and the docs are wrong');
    await site.setInputFiles('.progress-file', path);
    await site.waitForSelector('.progress-status [data-ok="true"]');
    await site.waitForSelector('a[data-puzzle="map"] + .badge.ok');
    assertNoErrors(errors);
    await context.close();
  });
}

test('hide=progress takes the box away', async () => {
  const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${BASE_URL}#/embed/puzzle?id=zip&lang=en&hide=progress`);
  await page.waitForSelector('.code-editor[data-ready="true"]', { timeout: 60_000 });
  assert.equal(await page.$eval('.embed-progress', (e) => e.offsetParent), null);
  await context.close();
});

for (const [lang, width] of [['en', 390], ['zh', 1280]]) {
  test(`the embed's progress box at ${width} px (${lang}): nothing wider than the page`, async () => {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${BASE_URL}#/embed/puzzle?id=map&lang=${lang}`);
    const box = await page.waitForSelector('.embed-progress .progress-transfer', { timeout: 60_000 });
    await box.scrollIntoViewIfNeeded();
    // The playground's own site keeps the progress: no note about memory.
    assert.equal(await page.$('.embed-progress .progress-memory'), null);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= width, `the page is ${wide} px wide at ${width}`);
    await screenshot(page, `embed-progress-${lang}-${width}`);
    await context.close();
  });
}
