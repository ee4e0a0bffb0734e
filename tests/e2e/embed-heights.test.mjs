// oEmbed heights that match the content, and embeds that fit a phone. Every oEmbed answer the
// site publishes (each widget, each puzzle and lesson, the race at each listed size; both
// languages) is opened at the answer's own width (720 px) and its content measured once it has
// settled; the answer's declared height must be within 10 % of it. With UPDATE_OEMBED_HEIGHTS=1
// the measurements are written to crates/xtask/oembed-heights.json, which `cargo xtask dist`
// reads. Then the compact layouts docs/embedding.md names for phones are measured at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_URL, launch, goto, assertNoErrors, screenshot } from './helpers.mjs';

const SITE_DIR = process.env.SITE_DIR;
const OUT = process.env.TEST_OUTPUT ?? decodeURIComponent(new URL('../../test-output', import.meta.url).pathname);
const HEIGHTS = new URL('../../crates/xtask/oembed-heights.json', import.meta.url);
const UPDATE = Boolean(process.env.UPDATE_OEMBED_HEIGHTS);
// The widgets that load the whole app (docs/embedding.md): opened first, so every later answer
// is a hash change in the same document instead of a reload.
const FULL_APP = ['lesson', 'cnn', 'gpt', 'editor', 'puzzle'];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Every published answer: its key (`race`, `puzzle-zip.zh`), the route its iframe opens, its height. */
function answers() {
  return readdirSync(join(SITE_DIR, 'embed')).filter((f) => f.endsWith('.json')).map((f) => {
    const o = JSON.parse(readFileSync(join(SITE_DIR, 'embed', f), 'utf8'));
    const src = o.html.match(/^<iframe src="([^"]+)" width="(\d+)" height="(\d+)"/);
    assert.ok(src, `${f}: ${o.html}`);
    assert.equal(Number(src[3]), o.height, `${f}: the iframe's height is the answer's`);
    const route = src[1].replaceAll('&amp;', '&').slice(BASE_URL.length);
    return { key: f.replace(/\.json$/, ''), route, width: Number(src[2]), height: o.height };
  }).sort((a, b) => {
    const full = (x) => FULL_APP.some((w) => x.route.startsWith(`#/embed/${w}?`));
    return Number(full(b)) - Number(full(a)) || a.key.localeCompare(b.key);
  });
}

/**
 * The embed's content height (as its `resize` messages measure it: the bottom of `#main`) once
 * it has held still for 8 readings 100 ms apart, so fonts, the editor and data have come in.
 */
async function settledHeight(page) {
  const handle = await page.waitForFunction(() => {
    const main = document.getElementById('main');
    if (!main) return false;
    const h = Math.ceil(main.getBoundingClientRect().bottom + scrollY);
    const seen = (window.__heights ??= []);
    seen.push(h);
    const last = seen.slice(-8);
    return last.length === 8 && last.every((x) => x === h) && h > 50 ? h : false;
  }, null, { polling: 100, timeout: 60_000 });
  const h = await handle.jsonValue();
  await page.evaluate(() => { window.__heights = []; });
  return h;
}

test('every oEmbed answer declares its content\'s height at its width, within 10 %', async () => {
  const list = answers();
  assert.ok(list.length > 100, `${list.length} answers`);
  const context = await browser.newContext({ viewport: { width: list[0].width, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const measured = {};
  const off = [];
  for (const a of list) {
    assert.equal(a.width, 720, a.key);
    await goto(page, a.route);
    const h = await settledHeight(page);
    measured[a.key] = h;
    if (Math.abs(a.height - h) > 0.1 * h) off.push(`${a.key}: declares ${a.height}, content ${h}`);
  }
  const keys = Object.keys(measured).sort();
  const text = `{\n${keys.map((k) => `"${k}": ${measured[k]}`).join(',\n')}\n}\n`;
  // Always kept beside the screenshots, so a failed run shows what it measured.
  writeFileSync(join(OUT, 'oembed-heights.measured.json'), text);
  if (UPDATE) {
    writeFileSync(HEIGHTS, text);
  } else {
    assert.deepEqual(off, [], `answers whose height is not their content's (${list.length} measured)`);
  }
  assertNoErrors(errors);
  await context.close();
});

// The layouts docs/embedding.md ("On a phone") gives, with the heights it states at 390 px.
const PHONE = [
  ['cnn', 'heading', 6282],
  ['cnn', 'heading,inside,draw,kernels', 1992],
  ['gpt', 'heading', 7232],
  ['gpt', 'heading,data,tally,experiments,inside', 1818],
  ['simt', 'heading', 3570],
  ['simt', 'heading,replay,counts', 2135],
  ['simt-compare', 'heading', 4700],
  ['simt-compare', 'heading,replay,counts', 3266],
];

test('on a phone (390 px) the compact layouts are as tall as the docs say, and far shorter', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const got = {};
  const off = [];
  for (const [widget, hide, documented] of PHONE) {
    await goto(page, `#/embed/${widget}?lang=en&hide=${hide}`);
    const h = await settledHeight(page);
    got[`${widget} ${hide}`] = h;
    if (Math.abs(documented - h) > 0.1 * h) off.push(`${widget} hide=${hide}: docs say ${documented}, measured ${h}`);
    if (hide !== 'heading') {
      await screenshot(page, `embed-compact-${widget}-en-390`);
      await goto(page, `#/embed/${widget}?lang=zh&hide=${hide}`);
      await settledHeight(page);
      await screenshot(page, `embed-compact-${widget}-zh-390`);
    }
  }
  console.log(`phone heights: ${JSON.stringify(got)}`);
  assert.deepEqual(off, []);
  for (const w of ['cnn', 'gpt', 'simt', 'simt-compare']) {
    const [full, compact] = Object.entries(got).filter(([k]) => k.startsWith(`${w} `)).map(([, v]) => v);
    assert.ok(compact <= 0.75 * full, `${w}: compact ${compact} px against ${full} px`);
  }
  assertNoErrors(errors);
  await context.close();
});
