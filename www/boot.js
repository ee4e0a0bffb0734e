// Starts the app. A file of its own, not an inline script: the Content Security Policy
// (script-src 'self') forbids inline scripts. Relative paths only: the site works from any
// sub-path of any static host.
// A dynamic import, so that the glue failing to load (network error, bad file) reaches the
// same message as the wasm failing, instead of leaving "Loading…" on screen for good.
// The landing page and every embedded widget but a lesson's, the CNN and GPT pages' and the
// editor's (#/embed/<widget>) start the embed module: the same app built without the lessons,
// the CNN and GPT pages and the editor's pages, a third less code to download (docs/benchmarks.md
// "First load"). Anything else starts the whole app. (The embed module reloads the page when
// one of the pages it leaves out is reached inside it; boot.js then starts the whole app.)
const EMBED_MODULE = /^(#\/?)?(\?.*)?$/.test(location.hash)
  || /^#\/embed\/(?!(?:lesson|cnn|gpt|editor|puzzle)(?:[?/]|$))[a-z0-9]/.test(location.hash);
const GLUE = EMBED_MODULE ? './pkg/gpu_playground_embed.js' : './pkg/gpu_playground.js';
import(GLUE).then(async (app) => {
  await app.default();
  // The text of the page's language is fetched by the app (one file per language; the wasm
  // carries none), then it renders.
  await app.boot(LOCALES, ASSETS);
  // Handle for end-to-end tests (e.g. losing the GPU device on purpose).
  window.gpuPlayground = app;
  registerServiceWorker();
}).catch((err) => {
  console.warn('GPU Playground failed to start:', err);
  const boot = document.getElementById('boot');
  if (boot) {
    boot.textContent = 'GPU Playground could not start in this browser (its program or text files failed to load). ' +
      '· GPU 游乐场无法在此浏览器中启动（程序或文本文件加载失败）。';
    boot.className = 'boot error';
  }
});

// Each language's text file (content-hashed names, written by `cargo xtask dist`).
const LOCALES = { /* __LOCALES__ */ };
// Data the app fetches only on the pages that use it (`cnn-digits`: the CNN page's MNIST
// digits; content-hashed names, written by `cargo xtask dist`). Never preloaded.
const ASSETS = { /* __ASSETS__ */ };

// The build's version (written by `cargo xtask dist`; the placeholder stays in an unbuilt copy).
const VERSION = '__BUILD_VERSION__';
const BUILT = !VERSION.startsWith('__');
const root = document.documentElement;
const tellApp = () => dispatchEvent(new Event('gpu-playground-update'));

// "A new version was installed": this visit runs a different build than the last one.
try {
  const seen = localStorage.getItem('gpu-playground.version');
  if (BUILT && seen && seen !== VERSION) root.dataset.update = 'installed';
  if (BUILT) localStorage.setItem('gpu-playground.version', VERSION);
} catch {
  // Storage blocked (private mode, some iframes): no notice, nothing else changes.
}

// Offline after the first visit. A newer build found while this page is open waits for the
// next visit; the page says it is there.
// Registered once the app runs, so the precache download never competes with the first load.
function registerServiceWorker() {
  if (!BUILT || !('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('./sw.js').then((reg) => {
    // A new worker that is installed while an older one controls this page is the next
    // version. The browser may have found it before this script ran (its own update check
    // on navigation), so look at the registration's state as well as listening.
    const announce = () => {
      if (navigator.serviceWorker.controller && root.dataset.update !== 'available') {
        root.dataset.update = 'available';
        tellApp();
      }
    };
    const watch = (next) => {
      if (!next) return;
      const check = () => { if (next.state === 'installed') announce(); };
      next.addEventListener('statechange', check);
      check();
    };
    if (reg.waiting) announce();
    watch(reg.installing);
    reg.addEventListener('updatefound', () => watch(reg.installing));
  }).catch((err) => console.warn('GPU Playground: offline mode unavailable:', err));
}

// The install prompt: kept until the visitor presses the app's Install button.
addEventListener('beforeinstallprompt', (event) => {
  event.preventDefault();
  window.gpuPlaygroundInstall = event;
  root.dataset.installable = 'true';
  tellApp();
});
