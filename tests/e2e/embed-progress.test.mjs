// Where an embed's progress lives. The course page here is on another *site* than the
// playground (`localhost` vs `127.0.0.1`), as on a real deployment: the browser keeps the
// embed's storage apart from the playground's own site (storage partitioned by the top-level
// site), so a puzzle solved in the embed is not solved on the site's `#/puzzles`. The puzzle
// embed's own "Save progress to a file" carries it over: imported on the site, it is solved.
// The course page can keep it itself: `getProgress` answers with the same file, and
// `setProgress` gives it back in another browser (only adding; a foreign or changed file is
// refused by name).
// Headless Chromium's contexts, like Chrome's private windows, go further and refuse such an
// embed local storage altogether: its progress then lives in the page's memory, the box says
// so, and the file still carries it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BASE_URL, goto, screenshot, assertNoErrors } from './helpers.mjs';
import { browser, hostOrigin, siteFrame, waitMessage, API } from './embed-host.mjs';
import { setDocIn, starterAnswered } from './puzzle-frame.mjs';

const SOLVED = 'gpu-playground.puzzles.solved';

/** Sends `msg` to the embed on `page` and returns its reply (the next message with its id). */
async function ask(page, msg) {
  const from = await page.evaluate(() => window.received.length);
  await page.evaluate(([api, m]) => window.send({ api, version: 1, ...m }), [API, msg]);
  // eslint-disable-next-line no-new-func
  const mine = new Function('d', `return !!d && d.id === ${JSON.stringify(msg.id)}`);
  return (await waitMessage(page, mine, { from, timeout: 30_000 })).data;
}

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

    // The course page keeps it itself: getProgress answers with the same file, and the same
    // learner in another browser (nothing kept there) gets it back with setProgress; a file
    // that is not one, or was changed, is refused by name.
    const got = await ask(page, { type: 'getProgress', id: 'get' });
    assert.equal(got.type, 'progress', JSON.stringify(got));
    assert.deepEqual(JSON.parse(got.file), file, 'the file the box saves');
    const other = await browser.newContext({ viewport: { width, height: 900 } });
    const second = await other.newPage();
    await second.goto(`${courseOrigin}/host.html?w=${width - 40}&src=${encodeURIComponent(src)}`);
    await siteFrame(second, '#w', { path: '/embed/puzzle', lang });
    await waitMessage(second, (d) => d && d.type === 'ready', { timeout: 60_000 });
    const empty = JSON.parse((await ask(second, { type: 'getProgress', id: 'empty' })).file);
    assert.deepEqual(empty.items, {}, 'another browser starts empty');
    for (const [bad, why] of [['{"not":"ours"}', /not a GPU Playground progress file/], [got.file.replace('"map"', '"zip"'), /checksum/], [42, /progress file/]]) {
      const e = await ask(second, { type: 'setProgress', id: 'bad', file: bad });
      assert.equal(e.type, 'error', JSON.stringify(e));
      assert.equal(e.code, 'bad-progress');
      assert.match(e.message, why);
    }
    const set = await ask(second, { type: 'setProgress', id: 'set', file: got.file });
    assert.deepEqual([set.type, set.solved, set.drafts, set.kept], ['progress-set', 1, 1, 0], JSON.stringify(set));
    const back = JSON.parse((await ask(second, { type: 'getProgress', id: 'back' })).file);
    assert.deepEqual(back.items, file.items, 'the progress round-trips');
    const again = await ask(second, { type: 'setProgress', id: 'again', file: got.file });
    assert.deepEqual([again.solved, again.drafts, again.kept], [0, 0, 0], 'reading it twice adds nothing');
    await other.close();

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
