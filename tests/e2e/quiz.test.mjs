// The self-check at the end of every lesson (components/learn/quiz.rs, lessons::quiz):
// every lesson in the index has three questions with 3–4 options in both languages; a wrong
// pick says "wrong", names the right answer and explains; the right pick says "right"; exactly
// one option per question is right, and for questions with arithmetic it is the one a hand
// calculation gives; the options work from the keyboard; a language switch keeps the picks;
// another lesson starts fresh. Screenshots at 390, 1280 and 1920 px in en and zh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, assertNoErrors, goto, switchLang, navigatedBy } from './helpers.mjs';
import { join } from 'node:path';

const OUT = process.env.TEST_OUTPUT ?? 'test-output';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Opens lesson `id` in `lang` and waits for its page in that language, quiz included. */
async function openLesson(page, id, lang) {
  await goto(page, `#/learn/${id}?lang=${lang}`);
  await page.waitForSelector(`article.lesson[data-lesson="${id}"] section.quiz[data-quiz="${id}"]`);
}

const question = (n) => `section.quiz .quiz-question[data-question="${n}"]`;

/** Picks option `o` of question `n` and returns what the page shows for it. */
async function pick(page, n, o) {
  await page.click(`${question(n)} .quiz-option[data-option="${o}"]`);
  return page.$eval(question(n), (q) => ({
    state: q.dataset.state,
    verdict: q.querySelector('.quiz-verdict')?.dataset.verdict ?? null,
    verdictText: q.querySelector('.quiz-verdict')?.textContent ?? '',
    why: q.querySelector('.quiz-why')?.textContent ?? '',
    whyVisible: !!q.querySelector('.quiz-why')?.getClientRects().length,
    rightOptions: [...q.querySelectorAll('.quiz-option.is-right')].map((b) => b.textContent.trim()),
    wrongOptions: [...q.querySelectorAll('.quiz-option.is-wrong')].map((b) => Number(b.dataset.option)),
    pressed: [...q.querySelectorAll('.quiz-option[aria-pressed="true"]')].map((b) => Number(b.dataset.option)),
  }));
}

test('every lesson in the index has three questions in en and zh', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn?lang=en');
  const english = new Map();
  for (const lang of ['en', 'zh']) {
    // The index in this language (the English one, shown first, satisfies no wait here).
    if (lang !== 'en') await goto(page, `#/learn?lang=${lang}`);
    await page.waitForSelector('.lesson-list a');
    const ids = await page.$$eval('.lesson-list a', (as) => as.map((a) => new URL(a.href).hash.split('?')[0].replace('#/learn/', '')));
    assert.ok(ids.length >= 12, `the index lists ${ids.length} lessons`);
    for (const id of ids) {
      await openLesson(page, id, lang);
      const qs = await page.$$eval('section.quiz .quiz-question', (els) => els.map((q) => ({
        prompt: q.querySelector('.quiz-prompt').textContent.trim(),
        options: [...q.querySelectorAll('.quiz-option')].map((b) => b.textContent.trim()),
        state: q.dataset.state,
      })));
      assert.equal(qs.length, 3, `${id} (${lang}) has ${qs.length} questions`);
      for (const [i, q] of qs.entries()) {
        const where = `${id} q${i + 1} (${lang})`;
        assert.ok(q.options.length >= 3 && q.options.length <= 4, `${where}: ${q.options.length} options`);
        assert.equal(q.state, 'open', `${where} starts unanswered`);
        for (const text of [q.prompt, ...q.options]) {
          assert.ok(text.length > 0, `${where}: empty text`);
          assert.doesNotMatch(text, /\[quiz\.|undefined/, `${where}: a key is missing: ${text}`);
        }
        // Translated: the prompt is Chinese; an option may be a formula ("S / p"), but none is
        // the English text.
        if (lang === 'zh') {
          assert.match(q.prompt, /[\u4e00-\u9fff]/, `${where}: not Chinese: ${q.prompt}`);
          const en = english.get(`${id} ${i}`) ?? [];
          assert.equal(en.length, q.options.length, `${where}: as many options as in English`);
          for (const [o, text] of q.options.entries()) assert.notEqual(text, en[o], `${where}: option ${o} untranslated`);
        } else {
          english.set(`${id} ${i}`, q.options);
        }
        assert.equal(new Set(q.options).size, q.options.length, `${where}: two options read the same`);
      }
      // The quiz comes after the lesson's body and before the links to other lessons.
      const order = await page.$eval('article.lesson', (a) => {
        const kids = [...a.children];
        return [kids.findIndex((k) => k.matches('section.quiz')), kids.findIndex((k) => k.matches('nav.lesson-nav')), kids.length];
      });
      assert.equal(order[1], order[0] + 1, `${id}: quiz sits right before the lesson links`);
    }
  }
  assertNoErrors(errors);
  await context.close();
});

// Questions whose right answer follows from arithmetic a reader can redo: the option the page
// marks right must be this one. (Bytes per parameter 2+2+4+4+4; roof min(20000, 1000 × 0.25);
// 63 × 63 × 256 threads for 1,000² in 16 × 16 blocks; 65,536 ÷ (64 × 32) = 32 of 64 warps;
// 2 × 4096³ ≈ 1.37e11; 1,000 GB/s ÷ 14 GB ≈ 71 tokens/s.)
const BY_HAND = [
  ['vram', 1, /^16 bytes/],
  ['roofline', 1, /250 GFLOP\/s/],
  ['stack', 2, /^1,016,064/],
  ['occupancy', 2, /50 %/],
  ['claims', 1, /137 billion/],
  ['choosing', 2, /About 71\./],
];

test('a wrong pick says wrong and explains; the right pick says right; one option is right', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn?lang=en');
  const lessons = ['simt', 'roofline', 'vram', 'stack', 'occupancy', 'claims', 'choosing'];
  for (const id of lessons) {
    await openLesson(page, id, 'en');
    for (const n of [1, 2, 3]) {
      const count = await page.$$eval(`${question(n)} .quiz-option`, (b) => b.length);
      const right = [];
      for (let o = 0; o < count; o++) {
        const seen = await pick(page, n, o);
        const where = `${id} q${n} option ${o}`;
        assert.deepEqual(seen.pressed, [o], `${where}: only the picked option is pressed`);
        assert.ok(seen.whyVisible && seen.why.trim().length > 40, `${where}: the explanation is shown`);
        assert.equal(seen.rightOptions.length, 1, `${where}: the right answer is marked once`);
        if (seen.verdict === 'right') {
          right.push(o);
          assert.equal(seen.state, 'right');
          assert.match(seen.verdictText, /^Right/);
          assert.deepEqual(seen.wrongOptions, []);
        } else {
          assert.equal(seen.verdict, 'wrong', `${where}: a verdict`);
          assert.equal(seen.state, 'wrong');
          assert.deepEqual(seen.wrongOptions, [o], `${where}: the picked option is marked wrong`);
          // The message names the right answer in words.
          assert.ok(seen.verdictText.includes(seen.rightOptions[0]), `${where}: ${seen.verdictText}`);
        }
      }
      assert.equal(right.length, 1, `${id} q${n}: right options ${right}`);
      // Wrong first, then right: the verdict follows the latest pick.
      const wrong = right[0] === 0 ? 1 : 0;
      assert.equal((await pick(page, n, wrong)).verdict, 'wrong');
      const fixed = await pick(page, n, right[0]);
      assert.equal(fixed.verdict, 'right');
      const hand = BY_HAND.find(([l, q]) => l === id && q === n);
      if (hand) assert.match(fixed.rightOptions[0], hand[2], `${id} q${n}: the right answer by hand`);
    }
  }
  assertNoErrors(errors);
  await context.close();
});

test('the options work from the keyboard', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn?lang=en');
  await openLesson(page, 'memory', 'en');
  // Focus the first option of question 1, Tab to the second, pick it with Enter.
  await page.focus(`${question(1)} .quiz-option[data-option="0"]`);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.option), '1');
  await page.keyboard.press('Enter');
  let state = await page.$eval(question(1), (q) => [q.dataset.state, q.querySelector('[aria-pressed="true"]')?.dataset.option]);
  assert.deepEqual(state, ['wrong', '1']);
  // Tab on to the fourth option (the right one: thread i reads element i) and pick it with Space.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.option), '3');
  await page.keyboard.press('Space');
  state = await page.$eval(question(1), (q) => [q.dataset.state, q.querySelector('[aria-pressed="true"]')?.dataset.option]);
  assert.deepEqual(state, ['right', '3']);
  // The focus ring is visible on a focused option.
  const outline = await page.$eval(':focus', (el) => getComputedStyle(el).outlineStyle);
  assert.notEqual(outline, 'none');
  assertNoErrors(errors);
  await context.close();
});

test('a language switch keeps the picks; another lesson starts fresh', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn?lang=en');
  await openLesson(page, 'precision', 'en');
  const q1 = await pick(page, 1, 0); // wrong
  const q2 = await pick(page, 2, 1); // right
  assert.deepEqual([q1.verdict, q2.verdict], ['wrong', 'right']);
  await switchLang(page, 'zh');
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN');
  assert.match(await page.textContent('section.quiz h2'), /[\u4e00-\u9fff]/);
  const after = await page.$$eval('section.quiz .quiz-question', (qs) => qs.map((q) => [
    q.dataset.state, q.querySelector('[aria-pressed="true"]')?.dataset.option ?? null,
    q.querySelector('.quiz-verdict')?.textContent ?? '', q.querySelector('.quiz-why')?.textContent ?? '',
  ]));
  assert.deepEqual(after.map((a) => a.slice(0, 2)), [['wrong', '0'], ['right', '1'], ['open', null]]);
  assert.match(after[0][2], /^不对。正确答案是：/);
  assert.match(after[1][2], /^答对了/);
  assert.match(after[0][3], /[\u4e00-\u9fff]/, 'the explanation is in Chinese now');
  // The next lesson's questions are unanswered.
  await navigatedBy(page, () => page.click('nav.lesson-nav a.next'), { path: '/learn/vram', lang: 'zh' });
  await page.waitForSelector('section.quiz[data-quiz="vram"]');
  const states = await page.$$eval('section.quiz .quiz-question', (qs) => qs.map((q) => q.dataset.state));
  assert.deepEqual(states, ['open', 'open', 'open']);
  assertNoErrors(errors);
  await context.close();
});

for (const width of [390, 1280, 1920]) {
  test(`screenshots at ${width} px in en and zh, no overflow`, async () => {
    const { page, context, errors } = await openPage(browser, '#/learn?lang=en', { viewport: { width, height: 900 } });
    for (const lang of ['en', 'zh']) {
      await openLesson(page, 'roofline', lang);
      await pick(page, 1, 0); // wrong: 20,000 is the compute roof, not this kernel's
      await pick(page, 2, 3); // right: tiling
      const overflow = await page.evaluate(() => {
        const doc = document.documentElement;
        const quiz = document.querySelector('section.quiz');
        const wide = [...quiz.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > doc.clientWidth + 1);
        return { page: doc.scrollWidth - doc.clientWidth, wide: wide.map((e) => e.className) };
      });
      assert.equal(overflow.page, 0, `${width} px ${lang}: the page scrolls sideways`);
      assert.deepEqual(overflow.wide, [], `${width} px ${lang}: quiz elements past the right edge`);
      // Each option's text stays inside its button (no clipping).
      const clipped = await page.$$eval('section.quiz .quiz-option', (bs) => bs.filter((b) => b.scrollWidth > b.clientWidth + 1).length);
      assert.equal(clipped, 0);
      await (await page.$('section.quiz')).screenshot({ path: join(OUT, `quiz-${width}-${lang}.png`) });
    }
    assertNoErrors(errors);
    await context.close();
  });
}
