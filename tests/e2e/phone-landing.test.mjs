// Where a learner on a 390 px phone lands (issue 41, round three), in English and Chinese, with
// 1280 px for comparison:
// - the landing leads to the strongest experiences: a link to the matmul ladder, the race and
//   the CNN each in the first screen, without scrolling (the CNN's nav entry is off-screen on
//   a phone, and its card was the seventh), and the CNN link opens #/cnn;
// - "Edit this kernel" opens the editor with the kernel in view, not the page's top with
//   about 60 stage links before the editor (from a matmul stage and from a CNN kernel).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, openPage, assertNoErrors, navigatedBy, editorReady } from './helpers.mjs';

const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
const SIZES = [[390, 844], [1280, 900]];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/**
 * Whether a visible match of `selector` (shadow roots included) lies in the viewport: wholly,
 * or with `wide` (a line of code, wider than a phone and scrolled sideways in its editor) its
 * height and its start.
 */
async function inView(page, selector, { wide = false } = {}) {
  const vp = page.viewportSize();
  for (const el of await page.locator(selector).all()) {
    const b = await el.isVisible() ? await el.boundingBox() : null;
    // Within a pixel: an element scrolled to the top may sit a fraction above it.
    const across = wide ? b?.x < vp.width : b?.x + b?.width <= vp.width + 1;
    if (b && b.y >= -1 && b.x >= -1 && b.y + b.height <= vp.height + 1 && across) return true;
  }
  return false;
}

test('the landing leads to the ladder, the race and the CNN in its first screen', async () => {
  for (const lang of ['en', 'zh']) {
    for (const [width, height] of SIZES) {
      const where = `${lang} ${width}`;
      const { page, context, errors } = await openPage(browser, `#/?lang=${lang}`, { viewport: { width, height } });
      await page.waitForSelector('main h1');
      const missing = [];
      for (const route of ['kernels', 'race', 'cnn']) {
        if (!(await inView(page, `main a[href^="#/${route}?"], header a[href^="#/${route}?"]`))) missing.push(route);
      }
      await page.screenshot({ path: join(OUT, `landing-${lang}-${width}.png`) });
      assert.deepEqual(missing, [], `${where}: links out of the first screen`);
      // The CNN link in the landing itself opens the CNN.
      await navigatedBy(page, () => page.click('main a[href^="#/cnn?"] >> nth=0'), { path: '/cnn', lang });
      await page.waitForSelector('.page.cnn h1');
      assertNoErrors(errors);
      await context.close();
    }
  }
});

/** Opens `from`, clicks the first "Edit this kernel" in `within`, and checks the editor. */
async function editFrom(lang, [width, height], from, within, name) {
  const where = `${lang} ${width} from ${from}`;
  const { page, context, errors } = await openPage(browser, `${from}${from.includes('?') ? '&' : '?'}lang=${lang}`, { viewport: { width, height } });
  // A kernel's link may sit in a folded explanation (the CNN's kernels): unfold the first.
  await page.locator(within).first().waitFor({ timeout: 60_000 });
  const folded = page.locator(`${within} details:has(a[href^="#/editor?"]) > summary`).first();
  if (await folded.count()) await folded.click();
  const link = page.locator(`${within} a[href^="#/editor?"]`).first();
  await link.waitFor({ timeout: 60_000 });
  const stage = new URLSearchParams((await link.getAttribute('href')).split('?')[1]).get('stage');
  await link.scrollIntoViewIfNeeded();
  await navigatedBy(page, () => link.click(), { path: '/editor', lang });
  await page.waitForSelector(`.editor-page[data-stage="${stage}"]`);
  await editorReady(page);
  // The heading that names the kernel, and the kernel's first lines, are in the first screen.
  assert.ok(await inView(page, '.cm-content .cm-line >> nth=0', { wide: true }), `${where}: the kernel's first line is in view`);
  assert.ok(await inView(page, '#editor-editing'), `${where}: the editor's heading is in view`);
  await page.screenshot({ path: join(OUT, `${name}-${lang}-${width}.png`) });
  assertNoErrors(errors);
  await context.close();
}

test('"Edit this kernel" opens the editor with the kernel in view', async () => {
  for (const lang of ['en', 'zh']) {
    for (const size of SIZES) {
      await editFrom(lang, size, '#/kernels', '.ladder', 'edit-from-ladder');
      await editFrom(lang, size, '#/cnn', '#cnn-kernels', 'edit-from-cnn');
    }
  }
});
