// oEmbed as a consumer sees it: unfurl.js (an oEmbed consumer from npm) is given a widget
// page's URL (`embed/<widget>.html`, `.zh.html`), finds its discovery link and reads the JSON:
// absolute URLs, the widget's title and size, an iframe that opens the widget in that language.
// The harness publishes the site's oEmbed files for the address it serves the site at, as
// `cargo xtask dist --base-url` does for a deployment. The widget page itself opens the widget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { unfurl } from 'unfurl.js';
import { BASE_URL, launch, screenshot, assertNoErrors, waitForRoute } from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
const SITE_DIR = process.env.SITE_DIR;
// The registry as the site was built with it (one widget per line).
const WIDGETS = readFileSync(new URL('../../crates/page-models/embed-widgets.json', import.meta.url), 'utf8')
  .split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l.replace(/,$/, '')));
const NAME = { en: 'GPU Playground', zh: 'GPU 游乐场' };
const TITLE = { en: 'GPU Playground: the CPU vs GPU race', zh: 'GPU Playground：CPU 与 GPU 赛跑' };
// The heights the answers declare: measured per widget and language (embed-heights.test.mjs
// keeps them honest), else the registry's.
const MEASURED = JSON.parse(readFileSync(new URL('../../crates/xtask/oembed-heights.json', import.meta.url), 'utf8'));
const heightOf = (id, lang) => MEASURED[`${id}${lang === 'en' ? '' : `.${lang}`}`] ?? WIDGETS.find((w) => w.id === id).height;
const page = (id, lang) => `${BASE_URL}embed/${id}${lang === 'en' ? '' : `.${lang}`}.html`;

let browser;
let host;
let hostOrigin;
let consumerHtml = '';

before(async () => {
  browser = await launch();
  // A consumer's page on another origin, showing the `html` the oEmbed answer gave.
  host = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><html><head><meta charset="utf-8"><title>consumer</title><link rel="icon" href="data:,"></head><body>${consumerHtml}</body></html>`);
  });
  await new Promise((r) => host.listen(0, '127.0.0.1', r));
  hostOrigin = `http://127.0.0.1:${host.address().port}`;
});
after(async () => {
  await browser?.close();
  await new Promise((r) => host?.close(r));
});

for (const lang of ['en', 'zh']) {
  test(`a consumer finds the race's oEmbed answer from its page and shows it (${lang})`, async () => {
    const url = page('race', lang);
    const found = await unfurl(url, { oembed: true });
    const o = found.oEmbed;
    assert.ok(o, `no oEmbed found from ${url}`);
    assert.equal(o.type, 'rich');
    assert.equal(o.version, '1.0');
    assert.equal(o.title, TITLE[lang]);
    assert.equal(o.provider_name, NAME[lang]);
    assert.equal(o.provider_url, BASE_URL, 'provider_url is the site\'s absolute address');
    assert.equal(o.width, 720);
    const h = heightOf('race', lang);
    assert.equal(o.height, h);
    const src = o.html.match(new RegExp(`^<iframe src="([^"]+)" width="720" height="${h}" title="([^"]+)"`));
    assert.ok(src, o.html);
    // unfurl.js hands the html over with its entities decoded (`&amp;` → `&`); either is one address.
    assert.equal(src[1].replaceAll('&amp;', '&'), `${BASE_URL}#/embed/race?lang=${lang}&hide=heading%2Ctabs`);
    assert.equal(src[2], TITLE[lang]);
    // The page names its own answer with an absolute link.
    const html = await (await fetch(url)).text();
    const link = html.match(/<link rel="alternate" type="application\/json\+oembed" href="([^"]+)"/)?.[1];
    assert.equal(link, `${BASE_URL}embed/race${lang === 'en' ? '' : '.zh'}.json`);

    // The consumer puts the html in its page (another origin): the widget opens in that language.
    consumerHtml = o.html;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    p.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    await p.goto(`${hostOrigin}/`);
    const frame = await (await p.waitForSelector('iframe')).contentFrame();
    await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 60_000 });
    await waitForRoute(frame, '/embed/race', { lang });
    assert.equal(await p.$eval('iframe', (f) => f.getBoundingClientRect().height), h);
    assertNoErrors(errors);
    await context.close();
  });
}

test('every widget has a page in each language whose discovered answer names it', async () => {
  const files = readdirSync(join(SITE_DIR, 'embed'));
  for (const w of WIDGETS) {
    for (const lang of ['en', 'zh']) {
      const name = `${w.id}${lang === 'en' ? '' : '.zh'}`;
      assert.ok(files.includes(`${name}.html`) && files.includes(`${name}.json`), name);
      const { oEmbed: o } = await unfurl(page(w.id, lang), { oembed: true });
      assert.ok(o, `${name}: nothing discovered`);
      assert.equal(o.height, heightOf(w.id, lang), name);
      assert.equal(o.provider_url, BASE_URL, name);
      assert.match(o.html, new RegExp(`^<iframe src="${BASE_URL.replace(/[.]/g, '\\.')}#/embed/${w.id}\\?lang=${lang}[&"]`), name);
      const prefix = lang === 'en' ? 'GPU Playground: ' : 'GPU Playground：';
      assert.ok(o.title.startsWith(prefix) && o.title.length > prefix.length + 1, `${name}: ${o.title}`);
    }
  }
  // index.html's own oEmbed answer (the race) is absolute too.
  const root = await (await fetch(`${BASE_URL}oembed.json`)).json();
  assert.equal(root.provider_url, BASE_URL);
  assert.ok(root.html.startsWith(`<iframe src="${BASE_URL}#/embed/race?lang=en&amp;hide=heading%2Ctabs" `), root.html);
});

for (const lang of ['en', 'zh']) {
  test(`the widget page opens its widget; screenshots at 390, 1280 and 1920 px (${lang})`, async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const p = await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    p.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    await p.goto(page('race', lang));
    assert.equal(await p.title(), TITLE[lang]);
    const frame = await (await p.waitForSelector('[data-gpu-playground] iframe[src]', { state: 'attached' })).contentFrame();
    await waitForRoute(frame, '/embed/race', { lang });
    for (const width of [390, 1280, 1920]) {
      await p.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
      // The frame follows the widget's height (the loader, same origin here).
      const content = await frame.evaluate(() => Math.ceil(document.getElementById('main').getBoundingClientRect().bottom + scrollY));
      await p.waitForFunction(() => {
        const f = document.querySelector('[data-gpu-playground] iframe');
        return f.getAttribute('height') !== '700';
      }, null, { timeout: 30_000 });
      assert.ok(content > 100);
      const pageWidth = await p.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(pageWidth <= width, `the widget page is ${pageWidth} px wide at ${width}`);
      await screenshot(p, `embed-page-race-${lang}-${width}`);
    }
    assertNoErrors(errors);
    await context.close();
  });
}
