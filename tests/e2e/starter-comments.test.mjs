// The code a learner starts from speaks the page's language: the comments of the scratch
// starter and of each puzzle's starter come from the translation files, so in Chinese the
// editor shows Chinese comments (the code itself, and the `// TODO` marker, stay).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, assertNoErrors, editorReady, editorChecked, docText } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const out = (name) => `${process.env.TEST_OUTPUT ?? 'test-output'}/${name}.png`;
/** Comment lines in English: two Latin words in a row (a lone name such as `out` or `a` is
 * a buffer's, and stays in any language). */
const englishComments = (text) => text.split('\n').filter((l) => /\/\/.*[A-Za-z]{2,}\s+[A-Za-z]{2,}/.test(l.replace(/buffers:(begin|end)|TODO/g, '')));

for (const lang of ['en', 'zh']) {
  test(`scratch and puzzle starters have ${lang} comments`, async () => {
    const { page, context, errors } = await openPage(browser, `#/editor?lang=${lang}&scratch`);
    await editorReady(page);
    await editorChecked(page, { includes: 'buffers:begin' });
    const scratch = await docText(page);
    if (lang === 'zh') {
      assert.match(scratch, /^\/\/ 草稿：对表中的缓冲区运行一个计算内核。\n/);
      assert.match(scratch, /\/\/ buffers:begin （由上面的缓冲区表生成/);
      assert.deepEqual(englishComments(scratch), [], 'no English comment in the zh scratch starter');
    } else {
      assert.match(scratch, /^\/\/ Scratch: one compute kernel over the buffers in the table\.\n/);
    }
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator('.code-editor').screenshot({ path: out(`starter-scratch-${width}-${lang}`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    for (const id of ['map', 'axis_sum', 'matmul']) {
      // A fresh load: the starter is what a first visit gets.
      await page.goto(new URL(`#/puzzles/${id}?lang=${lang}`, page.url()).href);
      await page.reload();
      await editorReady(page);
      await editorChecked(page, { includes: '// TODO' });
      const text = await docText(page);
      const title = await page.textContent('.puzzle-page h1');
      assert.ok(text.startsWith(`// ${lang === 'zh' ? '谜题“' : 'Puzzle “'}${title.split(/[:：]\s*/).pop()}`), `${id}: ${text.split('\n')[0]} / ${title}`);
      if (lang === 'zh') {
        assert.match(text, /^\/\/ 谜题“/);
        assert.match(text, /\/\/ TODO: 在这里写出你的答案/);
        assert.deepEqual(englishComments(text), [], `no English comment in the zh starter of ${id}`);
      } else {
        assert.match(text, /^\/\/ Puzzle “/);
        assert.match(text, /\/\/ TODO: write your answer here/);
      }
    }
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator('.code-editor').screenshot({ path: out(`starter-puzzle-${width}-${lang}`) });
    }
    assertNoErrors(errors);
    await context.close();
  });
}
