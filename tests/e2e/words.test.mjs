// Words: Chinese pages say Chinese (the cost lesson's presets, the GPU table's
// sources), a count of one takes the singular ("1 block", "1 error"), lesson 6's emptied
// rounding box says what to type, the glossary names its columns on a phone, and the five
// corrected facts (docs/fact-check.md FC-170 to FC-174) are what the pages say.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import {
  launch, openPage, goto, show, assertNoErrors, editorReady, setDoc, runEditor,
} from './helpers.mjs';

const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-polish';
mkdirSync(SHOTS, { recursive: true });
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const text = (page, sel) => page.locator(sel).innerText();

test('zh: the cost presets and the GPU table\'s sources are in Chinese', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/cost?lang=zh');
  const presets = await page.locator('[data-lesson="cost"] button').allInnerTexts();
  const named = presets.filter((t) => t.startsWith('H100'));
  assert.equal(named.length, 3, `three presets: ${presets}`);
  for (const p of named) {
    assert.ok(!/on demand|independent cloud|Capacity Blocks|\/h\b/.test(p), `untranslated preset: ${p}`);
    assert.match(p, /每小时 [\d.]+ 美元/);
  }
  await goto(page, '#/learn/choosing?lang=zh');
  const sources = await page.locator('td.source').allInnerTexts();
  assert.ok(sources.length >= 10, `${sources.length} source cells`);
  for (const s of sources) assert.ok(!/datasheet|data sheet|whitepaper|product page/.test(s), `untranslated source: ${s}`);
  await goto(page, '#/learn/choosing?lang=en');
  assert.ok((await page.locator('td.source').allInnerTexts()).some((s) => s.includes('datasheet')));
  assertNoErrors(errors);
  await context.close();
});

test('one of a count is singular: 1 block per SM, the 1 error to fix (en)', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/occupancy?lang=en');
  // 1,024 threads of 64 registers: 65,536 registers per block, one block per SM.
  await page.fill('#occ-threads', '1024');
  await page.fill('#occ-regs', '64');
  await page.waitForFunction(() => /\b1 block per SM\b/.test(document.querySelector('.big-number')?.textContent ?? ''));
  await page.fill('#occ-threads', '128');
  await page.fill('#occ-regs', '32');
  await page.waitForFunction(() => /\b\d\d? blocks per SM\b/.test(document.querySelector('.big-number')?.textContent ?? ''));
  assert.doesNotMatch(await text(page, '.big-number'), /\b1 blocks\b/);

  await goto(page, '#/editor?lang=en&stage=matmul-naive&m=32&n=32&k=32');
  await editorReady(page, { runnable: true });
  const original = await page.evaluate(() => document.querySelector('.cm-host').editorText());
  await setDoc(page, original.replace('let col = gid.y;', 'let col = gid.y'));
  await runEditor(page);
  const said = await text(page, '.editor-result [role="alert"]');
  assert.match(said, /Fix the 1 error listed under the editor/);
  assert.doesNotMatch(said, /error\(s\)/);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`lesson 6: an emptied rounding box asks for a number, not a size (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/learn/precision?lang=${lang}`);
    await page.fill('#round-input', '');
    await page.waitForSelector('.field.invalid #round-input[aria-invalid="true"]');
    const msg = await text(page, '#round-input-error');
    if (lang === 'en') {
      assert.match(msg, /empty: type a number/);
      assert.doesNotMatch(msg, /size/);
    } else {
      assert.match(msg, /输入框是空的/);
      assert.doesNotMatch(msg, /尺寸|大小/);
    }
    await page.fill('#round-input', '0.1');
    await page.waitForSelector('#round-input[aria-invalid="false"]');
    assertNoErrors(errors);
    await context.close();
  });
}

for (const lang of ['en', 'zh']) {
  for (const width of [390, 1280, 1920]) {
    test(`the glossary names its columns at ${width} px (${lang})`, async () => {
      const { page, context, errors } = await openPage(browser, `#/learn/glossary?lang=${lang}`, { viewport: { width, height: 900 } });
      const row = page.locator('#glossary-table tbody tr').first();
      const cells = row.locator('td');
      assert.equal(await cells.count(), 4);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
      const headVisible = await page.isVisible('#glossary-table thead');
      if (width === 390) {
        assert.equal(headVisible, false, 'on a phone the rows are cards');
        // Every cell says which column it is, on its own line, inside the screen.
        const labels = await cells.evaluateAll((tds) => tds.map((td) => getComputedStyle(td, '::before').content));
        assert.deepEqual(labels.slice(0, 2), ['"CUDA"', '"WebGPU / WGSL"']);
        assert.ok(labels.every((l) => l.length > 2 && l !== 'none'), labels.join());
        const boxes = await cells.evaluateAll((tds) => tds.map((td) => td.getBoundingClientRect()).map((r) => [r.top, r.bottom, r.right]));
        for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i][0] >= boxes[i - 1][1] - 1, `cells ${i - 1} and ${i} share a line`);
        assert.ok(boxes.every(([, , right]) => right <= width), 'inside the screen');
      } else {
        assert.equal(headVisible, true, 'the table has its header row');
      }
      await page.screenshot({ path: `${SHOTS}/glossary-${lang}-${width}.png`, fullPage: false });
      assertNoErrors(errors);
      await context.close();
    });
  }
}

test('the corrected facts: sectors, 141 GB, "may" spill, cuDNN\'s implicit GEMM (en, zh)', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/memory?lang=en');
  const memory = await text(page, '.lesson');
  assert.match(memory, /its own 32-byte sector/);
  assert.doesNotMatch(memory, /needs its own line/);
  assert.match(memory, /141 GB on an H200/);
  assert.doesNotMatch(memory, /tens of gigabytes at 1 to 5 TB\/s/);
  await goto(page, '#/learn/memory?lang=zh');
  // FC-170's link reads as what was checked against what (issue 41), not the bare id.
  assert.match(await text(page, '.lesson'), /32 字节扇区.*扇区大小已对照 Nsight Compute 性能分析指南核实/s);
  await goto(page, '#/kernels?lang=en&stage=matmul-blocktile-1d');
  const ladder = await text(page, '.stage-detail p.why');
  assert.match(ladder, /may be placed in slow local memory/);
  assert.doesNotMatch(ladder, /would spill/);
  await goto(page, '#/kernels?lang=en&family=conv&stage=conv-im2col-gemm');
  const conv = await text(page, '.stage-detail p.why');
  assert.match(conv, /cuDNN computes the same product but builds each tile/);
  assert.doesNotMatch(conv, /early Caffe and cuDNN/);
  assertNoErrors(errors);
  await context.close();
});

test('document references are links to the documents the site carries: docs/….md and FC-… (en, zh)', async () => {
  const { page, context, errors } = await openPage(browser, '#/learn/cost?lang=en');
  const link = page.locator('#cost-sources a.doc-link[href="docs/fact-check.html#fc-131"]');
  assert.equal(await link.innerText(), 'the presets checked against each source');
  assert.equal(await page.locator('#cost-sources a.doc-link[href="docs/fact-check.html"]').innerText(), 'docs/fact-check.md');
  assert.equal(await link.getAttribute('target'), '_blank');
  await goto(page, '#/learn/memory?lang=zh');
  assert.ok(await page.locator('a.doc-link[href="docs/fact-check.html#fc-170"]').count() >= 1, 'the zh lesson links its ids too');
  // The document is on the site, rendered, with the id's row as its anchor.
  const href = new URL('docs/fact-check.html#fc-131', page.url()).href;
  const doc = await context.newPage();
  const res = await doc.goto(href);
  assert.equal(res.status(), 200);
  assert.equal(await doc.locator('tr#fc-131 td').first().innerText(), 'FC-131');
  assert.ok(await doc.locator('tr#fc-174').count() === 1, 'this change\'s own checks are in it');
  await doc.setViewportSize({ width: 390, height: 844 });
  await doc.screenshot({ path: `${SHOTS}/doc-fact-check-390.png` });
  const bench = await doc.goto(new URL('docs/benchmarks.html', page.url()).href);
  assert.equal(bench.status(), 200);
  assertNoErrors(errors);
  await context.close();
});

// Every document reference on these pages, outside a link to the document: the words a page
// shows as plain text where they should be links (scripts, code and the editor aside).
const plainReferences = (page) => page.evaluate(() => {
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.parentElement?.closest('a.doc-link, script, style, pre, code, .cm-editor')) continue;
    found.push(...(n.textContent.match(/docs\/[a-z-]+\.md|\bFC-\d+[a-z]?\b/g) ?? []));
  }
  return found;
});

// The int8 lesson names FC-158 where the browser lacks the packed dot product: hide it.
const NO_DP4 = () => {
  const has = globalThis.WGSLLanguageFeatures?.prototype?.has;
  if (has) {
    WGSLLanguageFeatures.prototype.has = function (name) {
      return name === 'packed_4x8_integer_dot_product' ? false : has.call(this, name);
    };
  }
};

for (const lang of ['en', 'zh']) {
  test(`stage texts, the int8 note, the GPU table and every lesson link their documents (${lang})`, async () => {
    const { page, context, errors } = await openPage(browser, `#/kernels?lang=${lang}&stage=matmul-tuned`,
      { initScript: NO_DP4 });
    const hrefs = new Set();
    const expectLink = async (scope, href, label) => {
      const link = page.locator(`${scope} a.doc-link[href="${href}"]`).first();
      assert.equal(await link.innerText(), label, `${scope} links ${label} (${page.url()})`);
      assert.equal(await link.getAttribute('target'), '_blank');
      hrefs.add(href);
    };
    const noPlain = async () => assert.deepEqual(await plainReferences(page), [], `plain references on ${page.url()}`);
    // The ladder's stage texts (kernel.<id>.why).
    for (const [path, href, label] of [
      ['stage=matmul-tuned', 'docs/benchmarks.html', 'docs/benchmarks.md'],
      ['stage=matmul-double-buffer', 'docs/benchmarks.html', 'docs/benchmarks.md'],
      ['stage=matmul-blocktile-1d', 'docs/fact-check.html#fc-173',
        { en: "checked against NVIDIA's CUDA C++ Programming Guide", zh: '已对照 NVIDIA CUDA C++ 编程指南核实' }[lang]],
      ['family=conv&stage=conv-im2col-gemm', 'docs/fact-check.html#fc-174',
        { en: 'checked against the cuDNN and Caffe papers', zh: '已对照 cuDNN 与 Caffe 论文核实' }[lang]],
    ]) {
      await show(page, `#/kernels?lang=${lang}&${path}`);
      await expectLink('.stage-detail p.why', href, label);
      await noPlain();
    }
    // The int8 lesson without the packed dot product says so, with its fact-check id.
    await goto(page, `#/learn/int8?lang=${lang}`);
    await page.waitForSelector('[data-widget="int8"] [data-dp4="false"]');
    await expectLink('[data-widget="int8"] [data-dp4="false"]', 'docs/fact-check.html#fc-158',
      { en: "checked against the WGSL specification and Chrome's release notes", zh: '已对照 WGSL 规范和 Chrome 发布说明核实' }[lang]);
    // The GPU table's sources: each id a link to its row, reading as what it checked
    // (issue 41: a bare "FC-05" read as jargon).
    await goto(page, `#/learn/choosing?lang=${lang}`);
    const ids = await page.locator('td.source a.doc-link').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    assert.ok(ids.length >= 8 && ids.every((h) => /^docs\/fact-check\.html#fc-\d+$/.test(h)), `source ids: ${ids}`);
    const words = await page.locator('td.source a.doc-link').allInnerTexts();
    assert.ok(words.every((t) => !/FC-\d/.test(t) && (lang === 'en' ? / checked$/ : /已核实$/).test(t)), `source words: ${words}`);
    await expectLink('td.source', ids[0], words[0]);
    // Every lesson: no reference left as plain text.
    await goto(page, `#/learn?lang=${lang}`);
    const lessons = await page.locator('a[href*="#/learn/"]').evaluateAll(
      (as) => [...new Set(as.map((a) => new URL(a.href).hash.match(/^#\/learn\/([a-z0-9-]+)/)?.[1]).filter(Boolean))]);
    assert.ok(lessons.length >= 20, `lessons found: ${lessons}`);
    for (const id of lessons) {
      await goto(page, `#/learn/${id}?lang=${lang}`);
      await noPlain();
      for (const a of await page.locator('a.doc-link').evaluateAll((as) => as.map((x) => x.getAttribute('href')))) hrefs.add(a);
    }
    // Each address is a document the site carries, and an id's row is in it.
    const docs = new Map();
    for (const href of hrefs) {
      const [path, anchor] = href.split('#');
      if (!docs.has(path)) {
        const res = await page.request.get(new URL(path, page.url()).href);
        assert.equal(res.status(), 200, href);
        docs.set(path, await res.text());
      }
      if (anchor) assert.ok(docs.get(path).includes(`id="${anchor}"`), `${path} has the row ${anchor}`);
    }
    assert.ok(hrefs.has('docs/benchmarks.html') && hrefs.has('docs/fact-check.html#fc-158'), [...hrefs].join(' '));
    assertNoErrors(errors);
    await context.close();
  });
}
