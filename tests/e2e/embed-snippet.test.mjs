// The Embed dialog's snippet: as wide as the host's column, its height from the
// widget's `resize` messages (a fallback height without them), the host's origin typed into a
// field and written into the snippet, a title in words; the widget sends `resize` only on a real
// change and at most once per 16 ms (the widget's RESIZE_GAP_MS); the conversion page carries Embed buttons.
// The snippet is pasted, unchanged, into a course page served from ANOTHER origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { BASE_URL, launch, assertNoErrors, goto, waitForRoute, startHost, HTML } from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-polish';
mkdirSync(SHOTS, { recursive: true });
let browser;
let host;
let hostOrigin;
/** Snippets the course pages paste, by name (the server reads them from here). */
const pasted = new Map();

/**
 * A course page: a heading, a paragraph, then the snippet exactly as copied; a second script
 * only records what arrives (and lists the resize heights received) and changes nothing.
 */
function coursePage(snippet) {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>course</title><link rel="icon" href="data:,"></head><body>
<script>
window.received = [];
window.resizeHeights = () => received.filter((m) => m.data.type === 'resize').map((m) => m.data.height);
addEventListener('message', (e) => {
  if (e.data && e.data.api === 'gpu-playground') received.push({ data: e.data });
});
</script>
<h1>Week 3</h1><p>Matrix multiplication on the GPU.</p>
${snippet}
</body></html>`;
}

before(async () => {
  browser = await launch();
  host = await startHost((url) => {
    const snippet = pasted.get(url.searchParams.get('s'));
    return url.pathname === '/course.html' && snippet !== undefined
      ? { type: HTML, body: coursePage(snippet) } : null;
  });
  hostOrigin = host.origin;
});
after(async () => {
  await browser?.close();
  await host?.close();
});

/**
 * Runs in every frame of a test's context. In the widget's frame (the site's origin, inside a
 * host) it records each `resize` message the widget is about to post, with the time it is
 * posted (`performance.now()`). The widget builds each message with `JSON.parse` before
 * `postMessage`, so that is where it is seen. Its sizes go out on a timer, never on an animation
 * frame (a cross-origin frame scrolled out of view gets none), coalesced to at most one message
 * per RESIZE_GAP_MS = 16 ms of wall-clock time: that is the claim checked. (An animation frame is
 * no unit here: on a loaded machine one frame outlasts 16 ms, and two timer messages 16 ms apart
 * then share its `document.timeline.currentTime`.)
 */
function recordWidgetResizes(site) {
  if (window.top === window || location.origin !== site) return;
  window.__resizes = [];
  const parse = JSON.parse;
  JSON.parse = function (...args) {
    const v = parse.apply(this, args);
    if (v && v.api === 'gpu-playground' && v.type === 'resize') {
      window.__resizes.push({ at: performance.now(), height: v.height });
    }
    return v;
  };
}

/**
 * The widget's resize messages (with their times) since the `from`-th, once the host has received
 * every one of them: the two lists must agree, so a recorder that sees nothing fails.
 */
async function widgetResizes(page, frame, from = 0) {
  const all = await frame.evaluate(() => window.__resizes);
  assert.ok(all.length > 0, 'the widget posted no resize');
  const got = await (await page.waitForFunction((n) => {
    const h = window.resizeHeights();
    return h.length >= n && h;
  }, all.length)).jsonValue();
  assert.deepEqual(got, all.map((r) => r.height), 'the host received exactly what the widget sent');
  return all.slice(from);
}

async function newPage({ width = 1280, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  await context.addInitScript(recordWidgetResizes, SITE_ORIGIN);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return { context, page, errors };
}

/** Opens the Embed panel of `widget` on the page shown and types `origin` (if any) into its field. */
async function snippetOf(page, widget, origin) {
  const share = page.locator(`.embed-share[data-widget="${widget}"]`);
  await share.locator('.embed-toggle').click();
  if (origin !== undefined) {
    await share.locator('.embed-origin').fill(origin);
    // The field answers: the origin accepted (its note) or refused (its error).
    await share.locator('.embed-origin-note, .embed-origin-error').first().waitFor();
  }
  return share.locator('.embed-snippet').inputValue();
}

test('the snippet: 100 % wide, a fallback height, a title in words; the origin field goes into it (en, zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { context, page, errors } = await newPage();
    // The Embed buttons are instructor tools: turned on as a docs link does.
    await goto(page, `#/kernels?lang=${lang}&stage=matmul-tiled&m=64&n=64&k=64&instructor=1`);
    const bare = await snippetOf(page, 'matmul');
    const iframe = bare.match(/<iframe [^>]*><\/iframe>/)?.[0];
    assert.ok(iframe, bare);
    assert.match(iframe, / width="100%" /, 'as wide as the host\'s column');
    assert.match(iframe, / height="\d{3,4}" /, 'a fallback height for hosts that strip scripts');
    const title = iframe.match(/ title="([^"]*)"/)[1];
    assert.ok(title.startsWith(lang === 'zh' ? 'GPU Playground：' : 'GPU Playground: '), title);
    assert.ok(!/[=(（]/.test(title), `a title in words, no parameter list: ${title}`);
    assert.ok(!bare.includes('<script>') && !bare.includes('parentOrigin'), 'no origin, no script');
    assert.ok(await page.isVisible('.embed-share[data-widget="matmul"] .embed-origin-note'));

    // Something that is no address at all: said at the field, left out of the snippet.
    await page.fill('.embed-share[data-widget="matmul"] .embed-origin', 'course.example.edu/week3');
    await page.waitForSelector('.embed-share[data-widget="matmul"] .embed-origin-error[role="alert"]');
    const badCode = await page.inputValue('.embed-share[data-widget="matmul"] .embed-snippet');
    assert.equal(await page.getAttribute('.embed-share[data-widget="matmul"] .embed-origin', 'aria-invalid'), 'true');
    assert.ok(!(await page.inputValue('.embed-share[data-widget="matmul"] .embed-snippet')).includes('parentOrigin'), badCode);

    // The course page's address, pasted whole: its origin is what the snippet names, and said.
    await page.fill('.embed-share[data-widget="matmul"] .embed-origin', `${hostOrigin}/week3/course.html?x=1`);
    await page.waitForSelector('.embed-share[data-widget="matmul"] .embed-origin-note');
    assert.ok((await page.textContent('.embed-share[data-widget="matmul"] .embed-origin-note')).includes(hostOrigin));
    assert.ok((await page.inputValue('.embed-share[data-widget="matmul"] .embed-snippet')).includes(`parentOrigin=${encodeURIComponent(hostOrigin)}`));

    await page.fill('.embed-share[data-widget="matmul"] .embed-origin', hostOrigin);
    await page.waitForSelector('.embed-share[data-widget="matmul"] .embed-origin-note');
    const code = await page.inputValue('.embed-share[data-widget="matmul"] .embed-snippet');
    assert.ok(code.includes(`parentOrigin=${encodeURIComponent(hostOrigin)}`), code);
    assert.ok(code.includes(`var site = "${SITE_ORIGIN}"`), 'the script trusts the site\'s origin only');
    assert.ok(await page.isVisible('.embed-share[data-widget="matmul"] .embed-origin-note'));
    assert.equal(await page.$('.embed-share[data-widget="matmul"] .embed-origin-error'), null);
    await page.locator('.embed-share.embed-share[data-widget="matmul"] .embed-panel').screenshot({ path: `${SHOTS}/embed-panel-${lang}-1280.png` });
    assertNoErrors(errors);
    await context.close();
  }
});

test('#/conv carries Embed buttons for its filter and receptive-field views', async () => {
  const { context, page, errors } = await newPage({ width: 390, height: 844 });
  await goto(page, '#/conv?lang=zh&instructor=1');
  for (const [widget, path] of [['conv-filter', 'conv-filter'], ['conv-field', 'conv-field']]) {
    const code = await snippetOf(page, widget, hostOrigin);
    assert.ok(code.includes(`#/embed/${path}?`), code);
    assert.ok(code.includes('lang=zh'), code);
  }
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
  await page.screenshot({ path: `${SHOTS}/conv-embed-zh-390.png`, fullPage: true });
  assertNoErrors(errors);
  await context.close();
});

/** The snippet of `widget` on `path`, for the course page's origin, pasted into a new course page. */
async function pastedCourse(path, widget, name, viewport) {
  const { context: c1, page: p1 } = await newPage();
  await goto(p1, `${path}&instructor=1`);
  pasted.set(name, await snippetOf(p1, widget, hostOrigin));
  await c1.close();
  const { context, page, errors } = await newPage(viewport);
  await page.goto(`${hostOrigin}/course.html?s=${name}`);
  const frame = await (await page.waitForSelector('iframe', { state: 'attached' })).contentFrame();
  await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 60_000 });
  return { context, page, errors, frame };
}

/**
 * Waits until the iframe's height is the widget's content height. The snippet's script applies
 * a `resize` in the host's next animation frame, so first the last one received must be applied
 * (on a busy machine that frame can come late, and a message received but not yet applied is
 * not a missing one); the count of messages is read in that same evaluation, so a message that
 * arrives after it is new and one before it is already applied. Then, while the heights differ,
 * a newer `resize` must arrive: a widget that stops telling its height ends in a timeout, not a
 * pass.
 */
async function sizedToContent(page, frame) {
  for (;;) {
    const { seen, frameHeight } = await (await page.waitForFunction(() => {
      const last = window.resizeHeights().at(-1);
      const frameHeight = document.querySelector('iframe').getBoundingClientRect().height;
      return last !== undefined && Math.abs(frameHeight - last) < 1 && { seen: window.received.length, frameHeight };
    }, null, { timeout: 60_000 }).catch(() => {
      throw new Error('no resize arrived, or the last one was never applied to the iframe');
    })).jsonValue();
    const content = await frame.evaluate(() => Math.ceil(document.getElementById('main').getBoundingClientRect().bottom + scrollY));
    if (Math.abs(frameHeight - content) <= 1) return frameHeight;
    await page.waitForFunction((n) => window.received.slice(n).some((m) => m.data.type === 'resize'), seen, { timeout: 30_000 })
      .catch(() => {
        throw new Error(`iframe ${frameHeight} px, content ${content} px, and no resize came`);
      });
  }
}

/** Consecutive resize messages are at least RESIZE_GAP_MS (16 ms) apart; 15 allows the 1 ms
 * granularity of the Date.now() clock the widget spaces them with. */
function assertSpaced(times) {
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  assert.ok(gaps.every((g) => g >= 15), `resizes closer than 16 ms: gaps ${gaps.map((g) => g.toFixed(1)).join(', ')} ms`);
}

for (const [lang, width] of [['en', 390], ['zh', 390], ['en', 1280], ['zh', 1920]]) {
  test(`the pasted snippet on another origin fits ${width} px and follows its content (${lang})`, async () => {
    const name = `matmul-${lang}-${width}`;
    const { context, page, errors, frame } = await pastedCourse(
      `#/kernels?lang=${lang}&stage=matmul-tiled&m=48&n=40&k=24`, 'matmul', name, { width, height: 844 },
    );
    await waitForRoute(frame, '/embed/matmul', { lang });
    const before = await sizedToContent(page, frame);
    const [pageWidth, frameWidth, bodyWidth] = await page.evaluate(() => [
      document.documentElement.scrollWidth, document.querySelector('iframe').getBoundingClientRect().width,
      document.body.getBoundingClientRect().width]);
    assert.ok(pageWidth <= width, `the course page is ${pageWidth} px wide at ${width}`);
    assert.equal(Math.round(frameWidth), Math.round(bodyWidth), 'the iframe fills its column');
    // A run adds its verdict and timings: the frame grows to the new content, no scroll bar.
    await frame.click('#run-button');
    await page.waitForFunction(() => window.received.some((m) => m.data.type === 'run-finished'), null, { timeout: 120_000 });
    const after = await sizedToContent(page, frame);
    assert.ok(after > before, `the frame grew with the result: ${before} → ${after} px`);
    const times = (await widgetResizes(page, frame)).map((r) => r.at);
    await page.screenshot({ path: `${SHOTS}/snippet-course-${lang}-${width}.png`, fullPage: true });
    assertSpaced(times);
    assertNoErrors(errors);
    await context.close();
  });
}

test('the ladder\'s Run all: resize only on a real change, at most one per 16 ms, never bouncing', async () => {
  const { context, page, errors, frame } = await pastedCourse(
    '#/kernels?lang=en&m=33&n=31&k=17', 'ladder', 'ladder', { width: 960, height: 900 },
  );
  await waitForRoute(frame, '/embed/ladder', { lang: 'en' });
  await sizedToContent(page, frame);
  const from = await frame.evaluate(() => window.__resizes.length);
  await frame.click('#run-all-button');
  await page.waitForFunction(() => window.received.some((m) => m.data.type === 'run-finished'), null, { timeout: 300_000 });
  await sizedToContent(page, frame);
  const resizes = (await widgetResizes(page, frame, from)).map((r) => [r.at, r.height]);
  const heights = resizes.map(([, h]) => h);
  console.log(`ladder Run all: ${resizes.length} resize messages: ${heights.join(' ')}`);
  for (let i = 1; i < heights.length; i++) assert.notEqual(heights[i], heights[i - 1], 'a resize without a change');
  assertSpaced(resizes.map(([t]) => t));
  // Bouncing: a height that comes back to the one two messages earlier.
  const bounces = heights.filter((h, i) => i >= 2 && h === heights[i - 2] && h !== heights[i - 1]);
  assert.deepEqual(bounces, [], `the height bounced: ${heights.join(' ')}`);
  assertNoErrors(errors);
  await context.close();
});
