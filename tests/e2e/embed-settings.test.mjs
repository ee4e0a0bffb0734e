// An embedded widget follows its host's settings without changing the site's own: a course
// page that embeds a widget in Chinese must not switch the visitor's site to Chinese.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, goto, assertNoErrors } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const saved = (page) => page.evaluate(() => localStorage.getItem('gpu-playground.lang'));

test('an embed with lang=zh shows Chinese but leaves the saved language alone', async () => {
  const { page, context, errors } = await openPage(browser, '#/?lang=en');
  assert.equal(await saved(page), 'en');
  // The same origin and storage: a course page's iframe is this in a frame.
  await goto(page, '#/embed/race?lang=zh');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await saved(page), 'en', 'the embed wrote its language into the site settings');
  // The site itself, opened without a language, is still in English.
  await goto(page, '#/kernels');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assert.equal(await saved(page), 'en');
  // Choosing a language on the site itself is remembered as before.
  await goto(page, '#/kernels?lang=zh');
  assert.equal(await saved(page), 'zh');
  assertNoErrors(errors);
  await context.close();
});
