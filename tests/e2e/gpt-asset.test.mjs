// The GPT page's training text (issue 39 §3): two content-hashed files in the built site
// (`gpt-names.<hash>.txt`, `gpt-poems.<hash>.txt`, the format of crates/gpt/src/asset.rs),
// named in boot.js, never part of the first load or the precache, kept by the service worker
// after their first fetch so that they then work offline. The page that fetches them
// (`gpt_data_asset::load`) does not exist yet: a page script fetches them as it will.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, extname, normalize } from 'node:path';
import { launch, openPage, goto, waitForRoute, assertNoErrors } from './helpers.mjs';

const SITE = process.env.SITE_DIR ?? fileURLToPath(new URL('../../target/e2e-site/', import.meta.url));
const KEYS = ['gpt-names', 'gpt-poems'];
const isGptText = (url) => /\/gpt-(names|poems)\.[0-9a-f]{16}\.txt$/.test(new URL(url).pathname);

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Each corpus's file name in the built site (exactly one per key), in KEYS order. */
async function corpusNames() {
  const files = await readdir(SITE);
  return KEYS.map((key) => {
    const names = files.filter((f) => f.startsWith(`${key}.`));
    assert.equal(names.length, 1, `one ${key} file in the site: ${names.join(', ')}`);
    assert.match(names[0], new RegExp(`^${key}\\.[0-9a-f]{16}\\.txt$`));
    return names[0];
  });
}

/** 32-bit FNV-1a, the format's checksum (`gpt::asset::fnv1a`). */
function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h;
}

/**
 * Checks a corpus file as `CorpusAsset::decode` does (header, checksum, sorted vocabulary that
 * is exactly the documents' characters); returns [documents, characters].
 */
function checkCorpus(key, bytes) {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  const nl = text.indexOf('\n');
  const [magic, version, name, docs, chars, sum] = text.slice(0, nl).split(' ');
  assert.deepEqual([magic, version, name], ['gpt-corpus', '1', key]);
  assert.equal(parseInt(sum, 16), fnv1a(bytes.subarray(Buffer.byteLength(text.slice(0, nl + 1)))), 'checksum');
  const [vocab, ...lines] = text.slice(nl + 1, -1).split('\n');
  const vocabChars = [...vocab];
  assert.equal(vocabChars.length, Number(chars));
  assert.equal(lines.length, Number(docs));
  const used = [...new Set(lines.flatMap((l) => [...l]))].sort((a, b) => a.codePointAt(0) - b.codePointAt(0));
  assert.deepEqual(vocabChars, used, 'the vocabulary is every character the documents use, sorted');
  return [lines.length, vocabChars.length];
}

test('the built site has both corpora under content-hashed names, named in boot.js, kept on use, not precached', async () => {
  const names = await corpusNames();
  // Documents and characters (the model's vocabulary is one more: the boundary), docs/data.md.
  const expected = [[8422, 27], [3707, 3729]];
  for (const [i, key] of KEYS.entries()) {
    const bytes = await readFile(join(SITE, names[i]));
    assert.deepEqual(checkCorpus(key, new Uint8Array(bytes)), expected[i], key);
  }
  const boot = (await readdir(SITE)).find((f) => /^boot\.[0-9a-f]{16}\.js$/.test(f));
  const bootText = await readFile(join(SITE, boot), 'utf8');
  const digits = (await readdir(SITE)).find((f) => f.startsWith('cnn-digits.'));
  const entries = [['cnn-digits', digits], ...KEYS.map((k, i) => [k, names[i]])];
  assert.ok(
    bootText.includes(`const ASSETS = { ${entries.map(([k, n]) => `'${k}': '${n}'`).join(', ')} };`),
    'boot.js names the digits and both corpora',
  );
  const sw = await readFile(join(SITE, 'sw.js'), 'utf8');
  const list = (marker) => sw.match(new RegExp(`const ${marker} = \\[([^\\]]*)\\]`))?.[1] ?? assert.fail(`no ${marker} in sw.js`);
  for (const n of names) assert.ok(!list('PRECACHE').includes(n), `${n} is precached`);
  assert.ok(list('PRECACHE').includes("'index.html'"), 'the precache list was read');
  assert.deepEqual(list('ON_USE').match(/'[^']*'/g), entries.map(([, n]) => `'${n}'`).sort(), 'sw.js keeps the data assets once fetched');
});

/** Serves SITE on a port of this test's own, so that the test can stop it (offline). */
async function serve(t) {
  const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.txt': 'text/plain; charset=utf-8' };
  const served = [];
  const server = http.createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    served.push(path);
    if (path.includes('..')) return res.writeHead(404).end();
    if (path.endsWith('/')) path += 'index.html';
    try {
      const body = await readFile(join(SITE, path));
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const stop = () => {
    if (!server.listening) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  };
  t.after(stop);
  return { origin: `http://127.0.0.1:${server.address().port}`, stop, served };
}

// A page script fetches a corpus as gpt_data_asset::load() will (relative to the page) and
// answers with its length and FNV-1a. (The loop is fnv1a's: the page's CSP allows no eval.)
const fetched = (page, name) => page.evaluate(async (n) => {
  const r = await fetch(n);
  const bytes = new Uint8Array(await r.arrayBuffer());
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return { status: r.status, length: bytes.length, fnv: h };
}, name);

/** Whether a cache holds `url`, polled in the page for up to 30 s. */
const kept = (page, url) => page.evaluate(async (u) => {
  for (const end = performance.now() + 30_000; performance.now() < end;) {
    if (await caches.match(u)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}, url);

test('the first load and the precache leave the corpora alone; once fetched they are kept and work offline', async (t) => {
  const names = await corpusNames();
  const { origin, stop, served } = await serve(t);
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  await page.goto(`${origin}/#/?lang=en`);
  await waitForRoute(page, '/', { lang: 'en' });
  await page.waitForFunction(() => navigator.serviceWorker.controller?.state === 'activated', null, { timeout: 120_000, polling: 100 });
  assert.ok(served.some((p) => /^\/pkg\/gpu_playground_embed_bg\.[0-9a-f]{16}\.wasm$/.test(p)), `the precache was fetched: ${served}`);
  assert.deepEqual(served.filter((p) => p.includes('gpt-')), [], 'the first load or the precache fetched the corpora');
  for (const name of names) {
    const url = `${origin}/${name}`;
    assert.equal(await page.evaluate((u) => caches.match(u).then((r) => !!r), url), false, `${name} cached before use`);
    const file = await readFile(join(SITE, name));
    const expected = { status: 200, length: file.length, fnv: fnv1a(file) };
    assert.deepEqual(await fetched(page, name), expected);
    assert.ok(await kept(page, url), `the service worker did not keep ${name}`);
  }
  assert.deepEqual(served.filter((p) => p.includes('gpt-')), names.map((n) => `/${n}`), 'each fetched once');
  await stop();
  await page.reload();
  await waitForRoute(page, '/', { lang: 'en' });
  for (const name of names) {
    const file = await readFile(join(SITE, name));
    assert.deepEqual(await fetched(page, name), { status: 200, length: file.length, fnv: fnv1a(file) }, `${name} offline`);
  }
  assertNoErrors(errors);
});

test('no page of today fetches the corpora (only the GPT page will)', async () => {
  const { page, context, errors, requests } = await openPage(browser, '#/?lang=en', { serviceWorkers: 'block' });
  for (const route of ['#/cnn?lang=en', '#/train?lang=zh', '#/?lang=zh']) await goto(page, route);
  assert.deepEqual(requests.filter(isGptText), [], 'a page fetched the GPT text');
  assertNoErrors(errors);
  await context.close();
});
