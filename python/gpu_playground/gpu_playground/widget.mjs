// GPU Playground as a Jupyter widget (docs/embedding.md, "Notebooks and books"): an ES module
// in anywidget's form. `render` writes the same <div data-gpu-playground> the one-line loader
// reads, and adds the site's `embed.js`, so the loader does the checking, the iframe and its
// height (one implementation, one set of messages, in both languages). This module only
// carries the model's settings in and mirrors `run-finished` reports back into the model.
// The Python package ships this file (its `_esm`); `cargo xtask dist` copies it into the site
// as widget.mjs and widget.<hash>.mjs.
//
// Model traits read: `widget` (name), `params` (object: n, m, …, theme, hide), `lang`,
// `site` (the playground's address; empty = where this module was loaded from).
// Traits written: `results` (the last report's `results`), `runs` (how many reports came).
const API = 'gpu-playground';

function siteOf(model) {
  const asked = model.get('site');
  if (asked) return new URL('./', new URL(asked, location.href)).href;
  // Loaded from the site itself (widget.mjs): the site is beside it. anywidget loads a
  // package's copy from a blob: or data: address, which names no site.
  if (/^https?:/.test(import.meta.url)) return new URL('./', import.meta.url).href;
  return null;
}

function dataName(key) {
  return 'data-' + String(key).replace(/[A-Z_]/g, (c) => '-' + (c === '_' ? '' : c.toLowerCase()));
}

// The loader, once per page: a later copy of the tag would only rescan, and its
// MutationObserver sees every <div> a later render adds.
function ensureLoader(site) {
  const src = site + 'embed.js';
  if ([...document.scripts].some((s) => s.src === src)) {
    window.gpuPlaygroundLoader?.scan();
    return;
  }
  const s = document.createElement('script');
  s.src = src;
  s.async = true;
  document.head.appendChild(s);
}

function render({ model, el }) {
  const site = siteOf(model);
  const div = document.createElement('div');
  div.className = 'gpu-playground-widget';
  el.appendChild(div);
  if (!site) {
    // Developer-facing: the Python side always sets `site`.
    div.textContent = 'GPU Playground: the model has no `site` address.';
    div.setAttribute('role', 'alert');
    return () => div.remove();
  }
  const siteOrigin = new URL(site).origin;
  div.setAttribute('data-gpu-playground', String(model.get('widget') ?? ''));
  const params = model.get('params') || {};
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined) continue;
    div.setAttribute(dataName(key), Array.isArray(value) ? value.join(',') : String(value));
  }
  const lang = model.get('lang');
  if (lang) div.setAttribute('data-lang', lang);
  const link = document.createElement('a');
  link.href = `${site}#/embed/${encodeURIComponent(model.get('widget') ?? '')}`;
  link.target = '_blank';
  link.rel = 'noopener';
  link.textContent = 'GPU Playground';
  div.appendChild(link);

  // Reports only from the site and only from this output's own frame.
  const onMessage = (e) => {
    const d = e.data;
    if (e.origin !== siteOrigin || !d || d.api !== API || d.type !== 'run-finished') return;
    const frame = div.querySelector('iframe');
    if (!frame || frame.contentWindow !== e.source) return;
    model.set('results', d.results ?? {});
    model.set('runs', (Number(model.get('runs')) || 0) + 1);
    model.save_changes();
  };
  addEventListener('message', onMessage);
  ensureLoader(site);
  return () => {
    removeEventListener('message', onMessage);
    div.remove();
  };
}

export default { render };
