// The conv page's im2col picture on a phone: "matrix × filter column = output
// column" stays one row beside the matrix (it wrapped, putting the × and the rest ~900 px below
// the matrix's top); a wide row scrolls inside its own box, never the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { launch, openPage, assertNoErrors } from './helpers.mjs';

const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-polish';
mkdirSync(SHOTS, { recursive: true });
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

for (const lang of ['en', 'zh']) {
  for (const width of [390, 1280, 1920]) {
    for (const size of [3, 5]) {
      test(`im2col × column = product on one row at ${width} px, ${size}×${size} filter (${lang})`, async () => {
        const { page, context, errors } = await openPage(browser, `#/conv?lang=${lang}`, { viewport: { width, height: 844 } });
        if (size !== 3) {
          await page.selectOption('#conv-size', String(size));
          await page.waitForFunction((n) => document.querySelector('#conv-im2col')?.dataset.cssW === String(n * n), size);
        }
        const row = page.locator('.conv-matmul');
        await row.scrollIntoViewIfNeeded();
        const [matrix, times, column, product] = await Promise.all([
          page.locator('.conv-matmul > figure').nth(0).boundingBox(),
          page.locator('.conv-matmul > .op').first().boundingBox(),
          page.locator('.conv-matmul > figure').nth(1).boundingBox(),
          page.locator('.conv-matmul > figure').nth(2).boundingBox(),
        ]);
        assert.ok(times.y < matrix.y + matrix.height && times.y >= matrix.y, `× beside the matrix: ${JSON.stringify({ matrix, times })}`);
        for (const [name, box] of [['column', column], ['product', product]]) {
          assert.ok(Math.abs(box.y - matrix.y) < 2, `${name} on the matrix's row: ${box.y} vs ${matrix.y}`);
        }
        assert.ok(times.x >= matrix.x + matrix.width - 1 && column.x > times.x && product.x > column.x, 'in order, left to right');
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `horizontal page overflow of ${overflow}px`);
        await row.screenshot({ path: `${SHOTS}/im2col-${lang}-${width}-${size}.png` });
        assertNoErrors(errors);
        await context.close();
      });
    }
  }
}
