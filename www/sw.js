// Service worker: GPU Playground works offline after the first visit (a classroom with bad
// Wi-Fi). `cargo xtask dist` writes the version and the precache list (every file of the
// site but the editor's and the data assets) below. Content-hashed files (pkg/*.<hash>.js|wasm,
// boot.<hash>.js, locales/*.<hash>.txt, cnn-digits.<hash>.bin, gpt-*.<hash>.txt) never
// change, so they are served from the cache first; everything else (index.html, styles, the
// worker script) from the network first, falling back to the cache when offline or slow. A new
// version installs beside the old one and takes over on the next visit; the page says so.
// The data assets (ON_USE: the CNN's digits, 7.5 MiB; the GPT's names and poems) are fetched
// only by the page that trains on them: stored on
// that first fetch, so the page works offline after one visit, and carried into a new
// version's cache while their name (their content) is unchanged.
const VERSION = '__BUILD_VERSION__';
const CACHE = `gpu-playground-${VERSION}`;
const PRECACHE = [
  // __PRECACHE__
];
const ON_USE = [
  // __ON_USE__
];
const HASHED = /\.[0-9a-f]{16}\.(js|wasm|txt|bin)$/;
// How long a network-first request waits before the cached copy is used.
const NETWORK_WAIT_MS = 4000;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) => cache.addAll(PRECACHE.map((p) => new URL(p, self.registration.scope)))),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => keys.filter((k) => k.startsWith('gpu-playground-') && k !== CACHE))
      .then(async (old) => {
        await keepOnUse(old);
        await Promise.all(old.map((k) => caches.delete(k)));
      })
      .then(() => self.clients.claim()),
  );
});

// Copies the files of ON_USE that an older version's cache holds into this version's cache.
async function keepOnUse(oldCaches) {
  const cache = await caches.open(CACHE);
  for (const file of ON_USE) {
    const url = new URL(file, self.registration.scope).href;
    if (await cache.match(url)) continue;
    for (const name of oldCaches) {
      const hit = await (await caches.open(name)).match(url);
      if (hit) {
        await cache.put(url, hit);
        break;
      }
    }
  }
}

function isOnUse(url) {
  return ON_USE.some((file) => new URL(file, self.registration.scope).href === url.href);
}

self.addEventListener('message', (event) => {
  if (event.data === 'version') event.source?.postMessage({ swVersion: VERSION });
  // A first visit's page fetched a file of ON_USE before this worker controlled it, and hands
  // over the bytes it got (digits_asset.rs): keep them, unless a copy is already here.
  const d = event.data;
  if (d?.type === 'keep' && typeof d.url === 'string' && d.body instanceof ArrayBuffer) {
    const url = new URL(d.url, self.registration.scope);
    if (!isOnUse(url)) return;
    event.waitUntil(caches.open(CACHE).then(async (cache) => {
      if (await cache.match(url.href)) return;
      await cache.put(url.href, new Response(d.body, { headers: { 'content-type': 'application/octet-stream' } }));
    }));
  }
});

// `keep`: store a successful answer (a file of ON_USE, not precached) before the page gets it,
// so that the page finds the copy stored when it has read the answer: one it finds damaged it
// deletes (digits_asset.rs), and a store still under way would put it back. A failure to store
// (storage full) costs only the offline copy.
async function cacheFirst(request, keep) {
  const hit = await caches.match(request, { cacheName: CACHE });
  if (hit) return hit;
  const response = await fetch(request);
  if (keep && response.ok) {
    try {
      await (await caches.open(CACHE)).put(request, response.clone());
    } catch (err) {
      console.warn('GPU Playground: could not keep', request.url, err);
    }
  }
  return response;
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  // The app's own navigations (its root or index.html; the route is in the hash) all show
  // index.html. Any other page of the site (the example course pages) is its own document:
  // answering it with index.html would load the app under /examples/ with every relative
  // path wrong.
  const root = new URL('./', self.registration.scope).href;
  const url = new URL(request.url);
  url.search = '';
  url.hash = '';
  const appPage = url.href === root || url.href === new URL('index.html', root).href;
  const key = request.mode === 'navigate' ? (appPage ? root : url.href) : request;
  const network = fetch(request).then((response) => {
    if (response.ok) cache.put(key, response.clone());
    return response;
  });
  const timeout = new Promise((resolve) => setTimeout(resolve, NETWORK_WAIT_MS));
  try {
    const first = await Promise.race([network, timeout]);
    if (first) return first;
  } catch {
    // Offline: fall through to the cache.
  }
  const cached = await cache.match(key, { ignoreSearch: true });
  return cached ?? network;
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  url.search = '';
  url.hash = '';
  event.respondWith(HASHED.test(url.pathname) ? cacheFirst(request, isOnUse(url)) : networkFirst(request));
});
