// GPU Playground as a Jupyter widget (docs/embedding.md, "Notebooks and books"): an ES module
// in anywidget's form. `render` writes the same <div data-gpu-playground> the one-line loader
// reads, and adds the site's `embed.js`, so the loader does the checking, the iframe and its
// height (one implementation, one set of messages, in both languages). This module carries the
// model to the widget and the widget back to the model, through the site's message API
// (docs/embedding.md, "Message API"), talking only to its own frame.
// The Python package ships this file (its `_esm`); `cargo xtask dist` copies it into the site
// as widget.mjs and widget.<hash>.mjs.
//
// Model to widget: `widget` (name), `params` (object: n, m, …, theme, hide), `lang`, `site`
// (the playground's address; empty = where this module was loaded from). A change of a
// widget setting in `params` is sent as `setParams` (the frame stays); a new `lang`, `theme`
// or `hide`, or a setting taken away, makes a new frame (they are the address's own). Custom
// messages from Python: `{type: "run"}`, `{type: "getState"}`.
// Widget to model: `results` and `runs` (each `run-finished`), `outcome` and `outcomes` (each
// xAPI statement), `params` and `work` (the `state` that answers `getState`, asked after each
// report: what the learner set and made), `error` (a refusal or a failed run).
const API = 'gpu-playground';
const VERSION = 1;
// Settings of the address, not of the widget: `setParams` does not take them.
const OWN = ['theme', 'hide'];

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

/** A settings object as the address carries it: strings, nothing empty. */
function plain(params) {
  const out = {};
  for (const [key, value] of Object.entries(params || {})) {
    if (value === null || value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return out;
}

function same(a, b) {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

function render({ model, el }) {
  const site = siteOf(model);
  if (!site) {
    const div = document.createElement('div');
    div.className = 'gpu-playground-widget';
    el.appendChild(div);
    // Developer-facing: the Python side always sets `site`.
    div.textContent = 'GPU Playground: the model has no `site` address.';
    div.setAttribute('role', 'alert');
    return () => div.remove();
  }
  const siteOrigin = new URL(site).origin;

  let div = null;
  // What the current frame was made with or was last told (`params` as strings, `lang`).
  let applied = {};
  let appliedLang = '';
  // The frame answered `ready`: requests before it would be lost, so they wait in `queue`.
  let ready = false;
  let queue = [];
  let count = 0;
  // Requests sent and not answered: id → type.
  const asked = new Map();
  let stateAsked = false;
  let stateAgain = false;

  const frameWindow = () => div?.querySelector('iframe')?.contentWindow ?? null;

  function post(msg) {
    if (!ready) {
      queue.push(msg);
      return;
    }
    const id = `nb-${++count}`;
    asked.set(id, msg.type);
    frameWindow()?.postMessage({ api: API, version: VERSION, ...msg, id }, siteOrigin);
  }

  // One `getState` at a time; one asked meanwhile goes after the answer.
  function askState() {
    if (stateAsked) {
      stateAgain = true;
      return;
    }
    stateAsked = true;
    post({ type: 'getState' });
  }

  function mount() {
    div?.remove();
    ready = false;
    stateAsked = false;
    stateAgain = false;
    asked.clear();
    // A Run asked for the old frame is the new one's; a setParams is in its address already.
    queue = queue.filter((m) => m.type === 'run');
    applied = plain(model.get('params'));
    appliedLang = model.get('lang') || '';
    div = document.createElement('div');
    div.className = 'gpu-playground-widget';
    div.setAttribute('data-gpu-playground', String(model.get('widget') ?? ''));
    for (const [key, value] of Object.entries(applied)) div.setAttribute(dataName(key), value);
    if (appliedLang) div.setAttribute('data-lang', appliedLang);
    const link = document.createElement('a');
    link.href = `${site}#/embed/${encodeURIComponent(model.get('widget') ?? '')}`;
    link.target = '_blank';
    link.rel = 'noopener';
    link.textContent = 'GPU Playground';
    div.appendChild(link);
    el.appendChild(div);
    ensureLoader(site);
  }

  // The model's settings changed (by Python, or below from the widget's own `state`).
  const onParams = () => {
    const next = plain(model.get('params'));
    if (same(next, applied)) return;
    const reload = OWN.some((k) => next[k] !== applied[k])
      || Object.keys(applied).some((k) => !(k in next));
    if (reload || !ready) {
      mount();
      return;
    }
    const changed = {};
    for (const [key, value] of Object.entries(next)) if (applied[key] !== value) changed[key] = value;
    applied = next;
    post({ type: 'setParams', params: changed });
  };
  const onLang = () => {
    if ((model.get('lang') || '') !== appliedLang) mount();
  };
  // Python's requests (`GpuPlayground.run()`, `.sync()`).
  const onCustom = (msg) => {
    if (msg?.type === 'run') post({ type: 'run' });
    else if (msg?.type === 'getState') askState();
  };

  // The widget's settings as it reports them, with the address's own ones kept.
  // (Whether the model changed: a reply that changes nothing writes nothing.)
  function fromWidget(params) {
    const next = plain(params);
    const own = plain(model.get('params'));
    for (const k of OWN) if (k in own) next[k] = own[k];
    applied = next;
    if (same(next, own)) return false;
    model.set('params', next);
    return true;
  }

  // Messages only from the site and only from this output's own frame.
  const onMessage = (e) => {
    const d = e.data;
    if (e.origin !== siteOrigin || !d || d.api !== API) return;
    const frame = div?.querySelector('iframe');
    if (!frame || frame.contentWindow !== e.source) return;
    const mine = d.id !== undefined && asked.has(d.id) ? asked.get(d.id) : null;
    if (d.id !== undefined && d.type !== 'run-started') asked.delete(d.id);
    if (d.type === 'ready') {
      ready = true;
      const waiting = queue;
      queue = [];
      for (const m of waiting) post(m);
      // Settings the model got while the frame was loading.
      onParams();
    } else if (d.type === 'run-finished') {
      model.set('results', d.results ?? {});
      model.set('runs', (Number(model.get('runs')) || 0) + 1);
      model.save_changes();
      askState();
    } else if (d.type === 'outcome' && d.statement) {
      model.set('outcome', d.statement);
      model.set('outcomes', [...(model.get('outcomes') || []), d.statement]);
      model.save_changes();
      askState();
    } else if (d.type === 'state' && mine) {
      let changed = fromWidget(d.params);
      if (d.work && JSON.stringify(d.work) !== JSON.stringify(model.get('work') ?? {})) {
        model.set('work', d.work);
        changed = true;
      }
      if (changed) model.save_changes();
      if (mine === 'getState') {
        stateAsked = false;
        if (stateAgain) {
          stateAgain = false;
          askState();
        }
      }
    } else if (d.type === 'error' && (mine || d.code === 'run-failed')) {
      model.set('error', { code: String(d.code ?? ''), message: String(d.message ?? '') });
      model.save_changes();
      if (mine === 'getState') stateAsked = false;
      // A refused setting: the widget kept its own, and the model goes back to them.
      if (mine === 'setParams') askState();
    }
  };

  addEventListener('message', onMessage);
  model.on('change:params', onParams);
  model.on('change:lang', onLang);
  model.on('msg:custom', onCustom);
  mount();
  return () => {
    removeEventListener('message', onMessage);
    model.off('change:params', onParams);
    model.off('change:lang', onLang);
    model.off('msg:custom', onCustom);
    div?.remove();
  };
}

export default { render };
