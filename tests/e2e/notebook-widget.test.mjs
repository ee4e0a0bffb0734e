// The notebook widget (python/gpu_playground/gpu_playground/widget.mjs) driven exactly as
// anywidget drives it, on a page of ANOTHER origin standing in for JupyterLab: the module's
// text imported from a blob: address, its default export's `render({ model, el })` called with
// a model that has anywidget's API (get, set, save_changes, on, off), the cleanup it returns
// called when the output goes. The widget's iframe mounts with the model's settings, its
// height follows the widget, a run's `run-finished` lands in the model (set + save_changes),
// a bad name is the loader's message in the output, and the site's widget.mjs works with no
// `site` (it names its own).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  BASE_URL, launch, screenshot, assertNoErrors, waitForRoute, startHost, HTML,
} from './helpers.mjs';

const SITE_ORIGIN = new URL(BASE_URL).origin;
const SITE_DIR = process.env.SITE_DIR;
const API = 'gpu-playground';
// What the Python package hands anywidget as `_esm`.
const ESM = readFileSync(fileURLToPath(new URL('../../python/gpu_playground/gpu_playground/widget.mjs', import.meta.url)), 'utf8');
const HASHED = readdirSync(SITE_DIR).find((f) => /^widget\.[0-9a-f]{16}\.mjs$/.test(f));
let browser;
let host;
let hostOrigin;

// The notebook page: cells whose outputs are where anywidget renders. `window.anywidget`
// does what anywidget's front end does with a model's `_esm` (load_widget + render).
const HOST_JS = `
export function fakeModel(traits) {
  const calls = [];
  const listeners = new Map();
  const model = {
    get(name) { return traits[name]; },
    set(name, value) {
      calls.push(['set', name, JSON.parse(JSON.stringify(value))]);
      traits[name] = value;
      for (const cb of listeners.get('change:' + name) ?? []) cb();
    },
    save_changes() { calls.push(['save_changes']); },
    on(event, cb) { listeners.set(event, [...(listeners.get(event) ?? []), cb]); },
    off(event, cb) { listeners.set(event, (listeners.get(event) ?? []).filter((f) => f !== cb)); },
    send() {},
  };
  // What the kernel does: a trait Python changed (set, then 'change:<name>'), and a custom
  // message from Python's widget.send(content) ('msg:custom' with the content).
  const python = {
    set(name, value) {
      traits[name] = value;
      for (const cb of listeners.get('change:' + name) ?? []) cb();
    },
    send(content) {
      for (const cb of listeners.get('msg:custom') ?? []) cb(content, []);
    },
    listening: () => [...listeners].filter(([, cbs]) => cbs.length).map(([e]) => e).sort(),
  };
  return { model, calls, traits, python };
}

// anywidget: an _esm that is an address is imported from it, any other text from a blob:.
async function loadWidget(esm) {
  let mod;
  if (esm.startsWith('http://') || esm.startsWith('https://')) {
    mod = await import(esm);
  } else {
    const url = URL.createObjectURL(new Blob([esm], { type: 'text/javascript' }));
    try { mod = await import(url); } finally { URL.revokeObjectURL(url); }
  }
  return typeof mod.default === 'function' ? await mod.default() : mod.default;
}

// Every message of the widget API this page hears (the module's frames post to it).
window.seen = [];
addEventListener('message', (e) => { if (e.data?.api === 'gpu-playground') window.seen.push(e.data); });

window.outputs = new Map();
window.anywidget = async (cell, esm, traits) => {
  const widget = await loadWidget(esm);
  const el = document.createElement('div');
  el.className = 'output';
  document.getElementById(cell).appendChild(el);
  const m = fakeModel(traits);
  await widget.initialize?.({ model: m.model });
  const cleanup = await widget.render({ model: m.model, el });
  window.outputs.set(cell, { ...m, el, cleanup });
  return true;
};
window.calls = (cell) => window.outputs.get(cell).calls;
window.removeOutput = (cell) => {
  const o = window.outputs.get(cell);
  o.cleanup?.();
  o.el.remove();
};
`;

const HOST_CSS = 'body { margin: 0 auto; max-width: 1100px; padding: 0 12px; font-family: sans-serif }\n'
  + '.cell { border-left: 3px solid #8ab; margin: 12px 0; padding: 4px 8px }\n'
  + '.cell pre { background: #f4f6f8; margin: 0 0 6px; padding: 6px }\n';

function notebook(lang, cells) {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>notebook</title><link rel="stylesheet" href="/host.css">
<script type="module" src="/host.js"></script></head><body>
<h1>${lang === 'zh' ? '第 3 周：GPU 上的矩阵乘法' : 'Week 3: matrix multiplication on the GPU'}</h1>
${cells.map(([id, code]) => `<div class="cell" id="${id}"><pre>${code}</pre></div>`).join('\n')}
</body></html>`;
}

const pages = new Map();

before(async () => {
  assert.ok(HASHED, `no widget.<hash>.mjs in ${SITE_DIR}`);
  assert.equal(readFileSync(`${SITE_DIR}/${HASHED}`, 'utf8'), ESM, 'the site ships the Python package\'s module');
  browser = await launch();
  host = await startHost((url) => {
    const files = { '/host.js': ['text/javascript', HOST_JS], '/host.css': ['text/css', HOST_CSS] };
    if (files[url.pathname]) return { type: files[url.pathname][0], body: files[url.pathname][1] };
    const page = pages.get(url.pathname.slice(1));
    return page ? { type: HTML, body: page } : null;
  });
  hostOrigin = host.origin;
});
after(async () => {
  await browser?.close();
  await host?.close();
});

async function open(name, { width = 1280, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`${hostOrigin}/${name}`);
  await page.waitForFunction(() => typeof window.anywidget === 'function');
  return { context, page, errors };
}

/** The widget frame in cell `cell`, once it shows the site's page with its ready signal. */
async function widgetFrame(page, cell, widget, lang) {
  const frame = await (await page.waitForSelector(`#${cell} .output iframe[src]`, { state: 'attached' })).contentFrame();
  await frame.waitForURL((u) => u.href.startsWith(SITE_ORIGIN), { timeout: 60_000 });
  await waitForRoute(frame, `/embed/${widget}`, { lang });
  return frame;
}

/** Waits until the cell's iframe is as tall as its widget's content (see embed-loader.test.mjs). */
async function followsContent(page, cell, frame) {
  for (let i = 0; i < 20; i++) {
    const content = await frame.evaluate(() => Math.ceil(document.getElementById('main').getBoundingClientRect().bottom + scrollY));
    const ok = await page.waitForFunction(([sel, h]) => {
      const f = document.querySelector(sel);
      return Math.abs(f.getBoundingClientRect().height - Math.max(50, h)) <= 1;
    }, [`#${cell} iframe`, content], { timeout: 10_000 }).then(() => true, () => false);
    if (ok) return content;
  }
  throw new Error(`#${cell}: the iframe never took its widget's height`);
}

test('anywidget\'s way: the race mounts with the model\'s settings, follows its height, and a run lands in the model', async () => {
  pages.set('nb.html', notebook('en', [['c1', 'GpuPlayground("race", n=64, lang="zh", hide="heading,tabs")']]));
  const { context, page, errors } = await open('nb.html', { width: 900 });
  await page.evaluate(([esm, site]) => window.anywidget('c1', esm, {
    widget: 'race', params: { n: '64', hide: 'heading,tabs' }, lang: 'zh', site, results: {}, runs: 0,
  }), [ESM, BASE_URL]);
  const frame = await widgetFrame(page, 'c1', 'race', 'zh');
  const src = await page.$eval('#c1 iframe', (f) => f.src);
  assert.ok(src.startsWith(`${BASE_URL}#/embed/race?`), src);
  assert.deepEqual(Object.fromEntries(new URLSearchParams(new URL(src).hash.split('?')[1])),
    { n: '64', hide: 'heading,tabs', lang: 'zh', parentOrigin: hostOrigin });
  assert.equal(await frame.inputValue('#race-n'), '64');
  assert.equal(await page.$eval('#c1 iframe', (f) => f.title), 'GPU Playground：CPU 与 GPU 赛跑');
  const before = await followsContent(page, 'c1', frame);
  assert.deepEqual(await page.evaluate(() => window.calls('c1')), [], 'nothing written before a run');

  // A run started in the widget (as a student's click would) ends in the model: its results,
  // then its xAPI statement, then the widget's state asked after them (the race's `work`).
  await frame.click('#race-start');
  await page.waitForFunction(() => window.calls('c1').some((c) => c[1] === 'work'), null, { timeout: 180_000 });
  const calls = await page.evaluate(() => window.calls('c1'));
  assert.deepEqual(calls.slice(0, 3).map((c) => c.slice(0, 2).join(' ')), ['set results', 'set runs', 'save_changes']);
  assert.deepEqual(calls.slice(3).map((c) => c.slice(0, 2).join(' ')),
    ['set outcome', 'set outcomes', 'save_changes', 'set work', 'save_changes']);
  assert.match(calls[3][2].verb.id, /^http:\/\/adlnet\.gov\/expapi\/verbs\//);
  assert.deepEqual(calls[4][2], [calls[3][2]]);
  assert.deepEqual(calls[6][2], { version: 1 });
  const results = calls[0][2];
  assert.equal(results.n, 64);
  assert.equal(results.verified, true);
  assert.ok(results.cpuMs > 0 && results.gpuMs > 0, JSON.stringify(results));
  assert.equal(calls[1][2], 1);
  const grown = await followsContent(page, 'c1', frame);
  assert.ok(grown > before, `the frame grew with the result: ${before} → ${grown}`);

  // A run-finished from a window that is not this output's frame is not the model's: one from
  // a frame of the site this output did not make (the widget's origin, so only the window
  // check stops it) and one from the page itself.
  await page.evaluate((src) => new Promise((r) => {
    const f = document.createElement('iframe');
    f.id = 'stranger';
    f.src = src;
    f.onload = () => r();
    document.body.appendChild(f);
  }), `${BASE_URL}#/embed/gpu?lang=en`);
  const stranger = await (await page.$('#stranger')).contentFrame();
  await stranger.waitForURL((u) => u.href.startsWith(SITE_ORIGIN));
  // Heard here after the module's listener (added earlier) has had them.
  await page.evaluate(() => {
    window.heard = 0;
    addEventListener('message', (e) => { if (e.data?.results?.n === 1) window.heard += 1; });
  });
  const fake = { api: API, version: 1, type: 'run-finished', widget: 'race', results: { n: 1 } };
  await stranger.evaluate((m) => parent.postMessage(m, '*'), fake);
  await page.evaluate((m) => postMessage(m, '*'), fake);
  const settled = (await page.evaluate(() => window.calls('c1'))).length;
  await page.waitForFunction(() => window.heard === 2);
  assert.equal((await page.evaluate(() => window.calls('c1'))).length, settled, 'a report from another window reached the model');
  await page.evaluate(() => document.getElementById('stranger').remove());

  // The output removed: the cleanup takes the frame and stops listening.
  await page.evaluate(() => window.removeOutput('c1'));
  assert.equal(await page.$$eval('iframe', (f) => f.length), 0);
  assertNoErrors(errors);
  await context.close();
});

/** The cell's model as Python changes it (a trait set, or a custom message). */
const python = {
  set: (page, cell, name, value) => page.evaluate(([c, n, v]) => window.outputs.get(c).python.set(n, v), [cell, name, value]),
  send: (page, cell, content) => page.evaluate(([c, m]) => window.outputs.get(c).python.send(m), [cell, content]),
};

/** Waits for a message from a widget frame this page heard, after index `from` of the log. */
async function heard(page, pred, { from = 0, timeout = 60_000 } = {}) {
  const h = await page.waitForFunction(([src, start]) => {
    const p = new Function('m', `return (${src})(m)`);
    return window.seen.slice(start).find((m) => p(m)) ?? false;
  }, [pred.toString(), from], { timeout });
  return h.jsonValue();
}

/** The model's trait once a `set` of it by the module matches `pred` (after call `from`). */
async function modelSet(page, cell, name, pred, { from = 0, timeout = 60_000 } = {}) {
  const h = await page.waitForFunction(([c, n, src, start]) => {
    const p = new Function('v', `return (${src})(v)`);
    return window.calls(c).slice(start).find((x) => x[0] === 'set' && x[1] === n && p(x[2])) ?? false;
  }, [cell, name, pred.toString(), from], { timeout });
  return (await h.jsonValue())[2];
}

test('two-way: Python\'s params, run, getState and lang reach the live widget, and what the learner set comes back', async () => {
  pages.set('nb-two-way.html', notebook('en', [['t1', 'w = GpuPlayground("race", n=64)']]));
  const { context, page, errors } = await open('nb-two-way.html', { width: 900 });
  await page.evaluate(([esm, site]) => window.anywidget('t1', esm, {
    widget: 'race', params: { n: '64' }, lang: 'en', site, results: {}, runs: 0,
    outcome: {}, outcomes: [], work: {}, error: {},
  }), [ESM, BASE_URL]);
  assert.deepEqual(await page.evaluate(() => window.outputs.get('t1').python.listening()),
    ['change:lang', 'change:params', 'msg:custom'], 'the module listens for Python\'s changes and messages');
  const frame = await widgetFrame(page, 't1', 'race', 'en');
  await heard(page, (m) => m.type === 'ready' && m.widget === 'race');
  const first = await page.$eval('#t1 iframe', (f) => { window.firstFrame = f; return f.src; });

  // w.params = {"n": "128"}: sent as setParams; the same frame shows it, nothing reloads.
  let from = await page.evaluate(() => window.seen.length);
  await python.set(page, 't1', 'params', { n: '128' });
  const state = await heard(page, (m) => m.type === 'state', { from });
  assert.deepEqual(state.params, { n: '128' });
  assert.match(String(state.id), /^nb-/, 'the module\'s own request id');
  await frame.waitForFunction(() => document.getElementById('race-n')?.value === '128');
  assert.equal(await page.evaluate(() => document.querySelector('#t1 iframe') === window.firstFrame), true, 'the frame stayed');
  assert.equal(await page.$eval('#t1 iframe', (f) => f.src), first);

  // w.run(): the widget's Run; its results and statement come back as values.
  from = await page.evaluate(() => window.seen.length);
  let mark = await page.evaluate(() => window.calls('t1').length);
  await python.send(page, 't1', { type: 'run' });
  const started = await heard(page, (m) => m.type === 'run-started', { from });
  assert.match(String(started.id), /^nb-/);
  const results = await modelSet(page, 't1', 'results', (r) => r.n === 128, { from: mark, timeout: 180_000 });
  assert.equal(results.verified, true, JSON.stringify(results));
  assert.equal(await modelSet(page, 't1', 'runs', (n) => true, { from: mark }), 1);
  const outcome = await modelSet(page, 't1', 'outcome', (o) => !!o.verb, { from: mark });
  assert.match(outcome.object.id, /\/embed\/race/, JSON.stringify(outcome.object));
  assert.deepEqual(await modelSet(page, 't1', 'outcomes', (l) => l.length === 1, { from: mark }), [outcome]);

  // The learner types another size in the widget; Python's sync() (getState) brings it back,
  // with the address's own settings kept.
  // (A theme is the address's own: a new frame.)
  await python.set(page, 't1', 'params', { n: '128', theme: 'light' });
  await page.waitForFunction(() => document.querySelector('#t1 iframe')?.src.includes('theme=light'));
  assert.equal(await page.evaluate(() => document.querySelector('#t1 iframe') === window.firstFrame), false);
  const learner = await widgetFrame(page, 't1', 'race', 'en');
  await learner.fill('#race-n', '96');
  await learner.waitForFunction(() => location.hash.includes('n=96'));
  mark = await page.evaluate(() => window.calls('t1').length);
  await python.send(page, 't1', { type: 'getState' });
  // The race writes all its settings into its address once one is typed: they all come back,
  // each one of the race's (the registry's), as strings, the theme kept.
  const learnerParams = await modelSet(page, 't1', 'params', (p) => p.n === '96', { from: mark });
  assert.equal(learnerParams.theme, 'light');
  const race = JSON.parse(readFileSync(fileURLToPath(new URL('../../crates/page-models/embed-widgets.json', import.meta.url)), 'utf8'))
    .find((w) => w.id === 'race');
  for (const [key, value] of Object.entries(learnerParams)) {
    assert.ok(key === 'theme' || race.params.includes(key), `${key} is a race setting`);
    assert.equal(typeof value, 'string');
  }

  // A size the page refuses: the widget says why, keeps its own, and the model goes back to it.
  mark = await page.evaluate(() => window.calls('t1').length);
  await python.set(page, 't1', 'params', { ...learnerParams, n: '999999' });
  const error = await modelSet(page, 't1', 'error', (e) => !!e.code, { from: mark });
  assert.equal(error.code, 'bad-params', JSON.stringify(error));
  assert.match(error.message, /nothing was changed/);
  assert.deepEqual(await modelSet(page, 't1', 'params', (p) => p.n === '96', { from: mark }), learnerParams);
  assert.equal(await learner.inputValue('#race-n'), '96');

  // w.lang = "zh": a new frame in Chinese, with the settings it had.
  await python.set(page, 't1', 'lang', 'zh');
  const zh = await widgetFrame(page, 't1', 'race', 'zh');
  const src = await page.$eval('#t1 iframe', (f) => f.src);
  assert.deepEqual(Object.fromEntries(new URLSearchParams(new URL(src).hash.split('?')[1])),
    { ...learnerParams, lang: 'zh', parentOrigin: hostOrigin });
  assert.equal(await zh.inputValue('#race-n'), '96');
  assert.equal(await page.$eval('#t1 iframe', (f) => f.title), 'GPU Playground：CPU 与 GPU 赛跑');

  // The cleanup stops listening to Python too.
  await page.evaluate(() => window.removeOutput('t1'));
  assert.deepEqual(await page.evaluate(() => window.outputs.get('t1').python.listening()), []);
  assertNoErrors(errors);
  await context.close();
});

test('a bad widget name is the loader\'s message in the output; the site\'s widget.mjs names its own site', async () => {
  pages.set('nb-bad.html', notebook('zh', [['bad', 'GpuPlayground("nope")'], ['own', 'GpuPlayground("gpu")']]));
  const { context, page, errors } = await open('nb-bad.html');
  await page.evaluate(([esm, site]) => window.anywidget('bad', esm, { widget: 'nope', params: {}, lang: 'zh', site }), [ESM, BASE_URL]);
  const alert = await page.waitForSelector('#bad .output [role="alert"]');
  assert.match(await alert.textContent(), /GPU 游乐场没有名为“nope”的组件/);
  // By address, as anywidget loads an _esm that is a URL; no `site` trait.
  await page.evaluate((url) => window.anywidget('own', url, { widget: 'gpu', params: {}, lang: '' }), `${BASE_URL}${HASHED}`);
  await widgetFrame(page, 'own', 'gpu', 'zh');
  // The loader came once although two outputs asked for it.
  assert.equal(await page.$$eval('script[src$="embed.js"]', (s) => s.length), 1);
  assertNoErrors(errors);
  await context.close();
});

for (const lang of ['en', 'zh']) {
  test(`screenshots of a notebook with the widget at 390 and 1920 px (${lang})`, async () => {
    pages.set(`nb-shots-${lang}.html`, notebook(lang, [['s1', `GpuPlayground("race", n=256, lang="${lang}")`]]));
    const { context, page, errors } = await open(`nb-shots-${lang}.html`, { width: 390, height: 844 });
    await page.evaluate(([esm, site, l]) => window.anywidget('s1', esm, {
      widget: 'race', params: { n: '256' }, lang: l, site,
    }), [ESM, BASE_URL, lang]);
    const frame = await widgetFrame(page, 's1', 'race', lang);
    for (const width of [390, 1920]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
      await followsContent(page, 's1', frame);
      const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(pageWidth <= width, `the notebook is ${pageWidth} px wide at ${width}`);
      await screenshot(page, `notebook-widget-${lang}-${width}`);
    }
    assertNoErrors(errors);
    await context.close();
  });
}
