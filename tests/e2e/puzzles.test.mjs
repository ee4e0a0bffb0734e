// GPU puzzles in the browser: the list, a puzzle's reference solution passes, a plausible
// mistake fails with the wrong elements named, a missing guard is caught, progress is kept,
// both languages, no console error, no foreign request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openPage, screenshot, assertNoErrors, assertSameOrigin, setDoc, editorReady, goto,
  editorChecked, runEditor, docText,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the list has twelve puzzles in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/puzzles?lang=${lang}`);
    await page.waitForSelector('.puzzle-list a');
    const ids = await page.$$eval('.puzzle-list a', (as) => as.map((a) => a.dataset.puzzle));
    assert.deepEqual(ids, ['map', 'zip', 'guard', 'map2d', 'broadcast', 'blocks', 'shared', 'dot',
      'prefix_sum', 'axis_sum', 'matmul', 'conv1d']);
    assertNoErrors(errors);
    await context.close();
  }
});

for (const lang of ['en', 'zh']) {
  test(`dot product: the solution passes, a mistake fails with the wrong element shown (${lang})`, async () => {
    for (const width of [390, 1280, 1920]) {
      const { page, context, errors, requests } = await openPage(browser, `#/puzzles/dot?lang=${lang}`,
        { viewport: { width, height: 900 } });
      await editorReady(page, { runnable: true });
      assert.match(await docText(page), /\/\/ TODO/);
      await page.click('.solution .button');
      await page.click('.solution .button');
      // The solution is in and naga has checked it (Run acts on that verdict).
      await editorChecked(page, { includes: 'part[i] = a[i] * b[i];' });
      const solution = await docText(page);
      await runEditor(page);
      assert.ok(await page.$('.editor-result .verdict.ok'), await page.textContent('.editor-result'));
      await screenshot(page, `puzzle-pass-${lang}-${width}`);
      await setDoc(page, solution.replace('var stride = N / 2u', 'var stride = N / 4u'));
      await runEditor(page);
      assert.ok(await page.$('.editor-result .verdict.wrong'));
      const first = await page.textContent('.mismatches li');
      assert.match(first, /out\[0\]/);
      assert.match(first, /140/); // Σ i² for i < 8
      assert.equal(await page.$$eval('.puzzle-out td.wrong', (t) => t.length), 1);
      const noScroll = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(noScroll, `horizontal scroll at ${width}px`);
      await screenshot(page, `puzzle-fail-${lang}-${width}`);
      assertSameOrigin(requests);
      assertNoErrors(errors);
      await context.close();
    }
  });
}

test('guard: a missing guard is caught as writes past the end; solved puzzles are remembered', async () => {
  const { page, context, errors } = await openPage(browser, '#/puzzles/guard?lang=en');
  await editorReady(page);
  await page.click('.solution .button');
  await page.click('.solution .button');
  await editorChecked(page, { includes: 'if (i < N)' });
  const solution = await docText(page);
  await runEditor(page);
  assert.ok(await page.$('.editor-result .verdict.ok'));
  await setDoc(page, solution.replace('if (i < N) {', 'if (true) {'));
  await runEditor(page);
  assert.match(await page.textContent('.verdict.wrong'), /4 elements past the end of out were written/);
  await goto(page, '#/puzzles?lang=en');
  const solved = await page.$$eval('.puzzle-list li', (ls) => ls.filter((l) => l.querySelector('.badge')).map((l) => l.querySelector('a').dataset.puzzle));
  assert.deepEqual(solved, ['guard']);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`an unused buffer is named in words, never a WebGPU error (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/puzzles/zip?lang=${lang}`);
    await editorReady(page, { runnable: true });
    const said = async () => page.textContent('.editor-result .message.error');
    // The untouched starter: reads nothing and writes nothing.
    await editorChecked(page, { includes: '// TODO' });
    await runEditor(page);
    const untouched = await said();
    assert.match(untouched, lang === 'en' ? /Nothing is written to out/ : /没有向 out 写入任何内容/);
    assert.doesNotMatch(untouched, /Invalid|BindGroup|previous error/);
    // A natural wrong answer that leaves b unread.
    await page.click('.solution .button');
    await page.click('.solution .button');
    await editorChecked(page, { includes: 'out[i] = a[i] + b[i];' });
    await setDoc(page, (await docText(page)).replace('out[i] = a[i] + b[i];', 'out[i] = a[i];'));
    await runEditor(page);
    const unread = await said();
    assert.match(unread, lang === 'en' ? /b is never read — the answer needs it/ : /从未读取 b/);
    assert.doesNotMatch(unread, /Invalid|BindGroup|previous error/);
    assertNoErrors(errors);
    await context.close();
  });
}

for (const lang of ['en', 'zh']) {
  test(`an answer right only at the puzzle's own size fails at another, named (${lang})`, async () => {
    for (const width of [390, 1280]) {
      const { page, context, errors } = await openPage(browser, `#/puzzles/blocks?lang=${lang}`,
        { viewport: { width, height: 900 } });
      await editorReady(page, { runnable: true });
      await page.click('.solution .button');
      await page.click('.solution .button');
      await editorChecked(page, { includes: 'if (i < N)' });
      const solution = await docText(page);
      await runEditor(page);
      assert.ok(await page.$('.editor-result .verdict.ok'), await page.textContent('.editor-result'));
      // The length written as a number: right at N = 9, wrong at every other size.
      await setDoc(page, solution.replace('if (i < N)', 'if (i < 9u)'));
      await runEditor(page);
      const v = await page.waitForSelector('.editor-result .verdict.wrong[data-failed-size]');
      const size = await v.getAttribute('data-failed-size');
      assert.notEqual(size, '9');
      const text = await v.textContent();
      assert.match(text, lang === 'en'
        ? new RegExp(`wrong at N = ${size}: \\d+ elements|at N = ${size} it wrote \\d+ elements past the end`)
        : new RegExp(`在 N = ${size} 时`));
      // The all-green table below is the puzzle's own size, and says so.
      assert.match(await page.textContent('.editor-result table.puzzle-out caption'),
        lang === 'en' ? /own size \(9 elements\), where this answer is right/ : /谜题本身规模下的输出（9 个元素）/);
      const noScroll = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(noScroll, `horizontal scroll at ${width}px`);
      await screenshot(page, `puzzle-size-fail-${lang}-${width}`);
      assertNoErrors(errors);
      await context.close();
    }
  });
}

test('the landing page leads to the puzzles in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/?lang=${lang}`);
    const card = await page.waitForSelector('.cards a.card[href^="#/puzzles"]');
    assert.match(await card.textContent(), lang === 'en' ? /Puzzles/ : /谜题/);
    await card.click();
    await page.waitForSelector('.puzzle-list a');
    assertNoErrors(errors);
    await context.close();
  }
});

test('an endless loop ends with the loop budget\'s message, not the watchdog', async () => {
  const { page, context, errors } = await openPage(browser, '#/puzzles/map?lang=en');
  await editorReady(page, { runnable: true });
  await page.click('.solution .button');
  await page.click('.solution .button');
  await editorChecked(page, { includes: 'out[i] = a[i] + 10.0;' });
  const solution = await docText(page);
  await setDoc(page, solution.replace('out[i] = a[i] + 10.0;', 'while (true) { }\n    out[i] = a[i] + 10.0;'));
  await runEditor(page);
  const said = await page.textContent('.editor-result');
  assert.match(said, /The loop at line \d+ ran past [\d,]+ iterations/);
  assert.doesNotMatch(said, /timed out|seconds/);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`dot product: every thread adding into out[0] is wrong, and the page says the race is why (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/puzzles/dot?lang=${lang}`);
    await editorReady(page, { runnable: true });
    const starter = await docText(page);
    const lines = starter.split('\n');
    const todo = lines.findIndex((l) => l.includes('TODO'));
    assert.ok(todo >= 0, starter);
    // The first answer many write: read, add, write back, from all eight threads at once.
    lines.splice(todo, 1, '    out[0] = out[0] + a[i] * b[i];');
    await setDoc(page, lines.join('\n'));
    await editorChecked(page, { includes: 'out[0] = out[0] + a[i] * b[i];' });
    await runEditor(page);
    assert.ok(await page.$('.editor-result .verdict.wrong'), await page.textContent('.editor-result'));
    const race = await page.waitForSelector('.editor-result #puzzle-race');
    assert.equal(await race.getAttribute('data-index'), '0');
    const text = await race.textContent();
    assert.match(text, lang === 'en'
      ? /out\[0\] is written by threads 0, 1, 2 and 5 others: a race\. .*that is why the values below are wrong/
      : /out\[0\] 被线程 0, 1, 2 和 另外 5 个线程 写入：这是竞争。.*这就是下面的值不对的原因/, text);
    // The wrong value is still shown beside it.
    assert.match(await page.textContent('.mismatches li'), /out\[0\]/);
    await screenshot(page, `puzzle-dot-race-${lang}`);
    assertNoErrors(errors);
    await context.close();
  });
}

test('Start over keeps the replaced draft one click away (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await openPage(browser, `#/puzzles/map?lang=${lang}`);
    await editorReady(page, { runnable: true });
    const starter = await docText(page);
    const draft = starter.replace(/[^\n]*TODO[^\n]*/, '    out[i] = a[i] + 10.0; // my draft');
    assert.notEqual(draft, starter);
    await setDoc(page, draft);
    await page.click('#puzzle-restart');
    await editorChecked(page, { includes: 'TODO' });
    assert.equal(await docText(page), starter);
    const note = await page.textContent('.puzzle-replaced');
    assert.match(note, lang === 'en' ? /Your draft was replaced/ : /你的草稿已被替换/);
    await page.click('#puzzle-undo');
    await editorChecked(page, { includes: '// my draft' });
    assert.equal(await docText(page), draft);
    assert.equal(await page.$('#puzzle-undo'), null, 'the offer goes once used');
    // It survives a reload: the restored draft is the saved one.
    await page.reload();
    await editorReady(page);
    assert.equal(await docText(page), draft);
    assertNoErrors(errors);
    await context.close();
  }
});
