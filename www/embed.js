// GPU Playground's one-line embed (docs/embedding.md, "One line in any page"). On the host's page:
//   <div data-gpu-playground="race" data-n="256" data-lang="zh"><a href="…">…</a></div>
//   <script src="https://…/embed.js" async></script>
// Each such <div> becomes an iframe of the widget, 100 % wide, as tall as the widget says in its
// `resize` messages, with `parentOrigin` set to the host page's origin. The frame gets its
// address only when it comes near the viewport (the widget starts then). A bad attribute is a
// message in the <div>, in its language. No inline script or style: it runs under a host's
// strict Content Security Policy. A classic script (document.currentScript names the site).
// `cargo xtask dist` writes the widget list (from page-models' WIDGETS registry) and the text
// (from crates/app/locales) below, and serves this file as embed.js and embed.<hash>.js.
(function () {
  'use strict';
  // Included twice (or as both names): the first copy does the work, a later one only looks
  // for new <div>s.
  var KEY = 'gpuPlaygroundLoader';
  if (window[KEY]) {
    window[KEY].scan();
    return;
  }
  var WIDGETS = /* __WIDGETS__ */[];
  var TEXT = /* __TEXT__ */{};
  var API = 'gpu-playground';
  var LANGS = ['en', 'zh'];
  var THEMES = ['light', 'dark', 'auto'];
  var OWN = ['lang', 'theme', 'hide'];
  var MAX_VALUE = 256;
  // How near the viewport (px) a frame gets its address.
  var NEAR = '600px 0px';

  var script = document.currentScript;
  if (!script || !script.src) {
    script = [].slice.call(document.scripts).filter(function (s) {
      return s.hasAttribute('data-site') || /\/embed(\.[0-9a-f]{16})?\.js([?#]|$)/.test(s.src);
    })[0];
  }
  if (!script) return;
  // A copy served from the course page's own site (so that site's service worker can keep it
  // for offline use; docs/embedding.md, "Offline") names the playground in data-site.
  var SITE;
  try {
    var named = script.getAttribute('data-site');
    SITE = named ? new URL(named.replace(/\/?$/, '/'), location.href).href : new URL('./', script.src).href;
  } catch (e) {
    return;
  }
  var SITE_ORIGIN = new URL(SITE).origin;
  var HOST_ORIGIN = /^https?:$/.test(location.protocol) ? location.origin : null;

  var seen = typeof WeakSet === 'function' ? new WeakSet() : null;
  var frames = [];
  var pending = new Map();

  function t(lang, key, vars) {
    var s = (TEXT[lang] && TEXT[lang][key]) || TEXT.en[key] || key;
    return s.replace(/\{(\w+)\}/g, function (m, name) {
      return vars && name in vars ? String(vars[name]) : m;
    });
  }

  function dataName(key) {
    return 'data-' + key.replace(/[A-Z]/g, function (c) { return '-' + c.toLowerCase(); });
  }

  function list(lang, items) {
    return items.length ? items.join(', ') : t(lang, 'embed.loader.none');
  }

  function widget(id) {
    for (var i = 0; i < WIDGETS.length; i++) if (WIDGETS[i].id === id) return WIDGETS[i];
    return null;
  }

  // The language of the <div>: its data-lang, else the nearest lang= around it.
  function langOf(el) {
    var asked = el.dataset.lang;
    if (LANGS.indexOf(asked) >= 0) return asked;
    var around = el.closest('[lang]');
    return around && /^zh\b/i.test(around.getAttribute('lang')) ? 'zh' : 'en';
  }

  // The widget and its query, or the reasons it cannot be shown.
  function read(el, lang) {
    var d = el.dataset;
    var w = widget(d.gpuPlayground);
    if (!w) {
      return { errors: [t(lang, 'embed.loader.unknown_widget', {
        name: d.gpuPlayground, list: WIDGETS.map(function (x) { return x.id; }).join(', '),
      })] };
    }
    var errors = [];
    var query = [];
    Object.keys(d).forEach(function (key) {
      if (key === 'gpuPlayground' || key === 'gpuPlaygroundState') return;
      var value = d[key];
      var name = dataName(key);
      if (OWN.indexOf(key) < 0 && w.params.indexOf(key) < 0) {
        errors.push(t(lang, 'embed.loader.unknown_param', {
          widget: w.id, name: name, list: list(lang, w.params.map(dataName)),
        }));
      } else if (value.length > MAX_VALUE) {
        errors.push(t(lang, 'embed.loader.too_long', { name: name }));
      } else if (w.whole.indexOf(key) >= 0 && !/^\d{1,15}$/.test(value)) {
        errors.push(t(lang, 'embed.loader.not_whole', { name: name, value: value }));
      } else if (key === 'lang' && LANGS.indexOf(value) < 0) {
        errors.push(t(lang, 'embed.loader.bad_lang', { value: value }));
      } else if (key === 'theme' && THEMES.indexOf(value) < 0) {
        errors.push(t(lang, 'embed.loader.bad_theme', { value: value }));
      } else if (key === 'hide') {
        var names = value.split(',').map(function (h) { return h.trim(); });
        var bad = names.filter(function (h) { return w.hide.indexOf(h) < 0; });
        if (bad.length) {
          errors.push(t(lang, 'embed.loader.bad_hide', {
            widget: w.id, names: bad.join(', '), list: list(lang, w.hide),
          }));
        } else {
          query.push([key, names.join(',')]);
        }
      } else if (key !== 'lang') {
        query.push([key, value]);
      }
    });
    return { widget: w, query: query, errors: errors };
  }

  function address(w, query, lang) {
    var q = query.concat([['lang', lang]]);
    if (HOST_ORIGIN) q.push(['parentOrigin', HOST_ORIGIN]);
    return SITE + '#/embed/' + w.id + '?' + q.map(function (p) {
      return encodeURIComponent(p[0]) + '=' + encodeURIComponent(p[1]);
    }).join('&');
  }

  function showErrors(el, errors, lang) {
    var box = document.createElement('div');
    box.className = 'gpu-playground-error';
    box.setAttribute('role', 'alert');
    box.lang = lang;
    errors.forEach(function (e) {
      var p = document.createElement('p');
      p.textContent = e;
      box.appendChild(p);
    });
    el.insertBefore(box, el.firstChild);
    el.dataset.gpuPlaygroundState = 'error';
  }

  var near = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        near.unobserve(entry.target);
        start(entry.target);
      });
    }, { rootMargin: NEAR })
    : null;

  function start(frame) {
    if (!frame.getAttribute('src')) frame.src = frame.dataset.src;
  }

  function mount(el) {
    if (seen ? seen.has(el) : el.dataset.gpuPlaygroundState) return;
    if (seen) seen.add(el);
    var lang = langOf(el);
    var r = read(el, lang);
    if (r.errors.length) {
      showErrors(el, r.errors, lang);
      return;
    }
    var frame = document.createElement('iframe');
    frame.className = 'gpu-playground-frame';
    frame.title = t(lang, 'embed.frame_title', { widget: t(lang, r.widget.title) });
    frame.width = '100%';
    // The widget's usual height until its first `resize`.
    frame.height = String(r.widget.height);
    frame.frameBorder = '0';
    frame.setAttribute('loading', 'lazy');
    frame.dataset.src = address(r.widget, r.query, lang);
    while (el.firstChild) el.removeChild(el.firstChild);
    el.appendChild(frame);
    el.dataset.gpuPlaygroundState = 'ready';
    frames.push(frame);
    if (near) near.observe(frame);
    else start(frame);
  }

  function scan() {
    var els = document.querySelectorAll('[data-gpu-playground]');
    for (var i = 0; i < els.length; i++) mount(els[i]);
  }

  // Heights from the widgets: only from the site's origin and only from a frame this loader
  // made (matched by its window), applied once per animation frame.
  addEventListener('message', function (e) {
    var d = e.data;
    if (e.origin !== SITE_ORIGIN || !d || d.api !== API || d.type !== 'resize') return;
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow !== e.source) continue;
      var h = Math.min(20000, Math.max(50, Math.ceil(Number(d.height) || 0)));
      if (!pending.size) {
        requestAnimationFrame(function () {
          pending.forEach(function (height, frame) { frame.height = String(height); });
          pending.clear();
        });
      }
      pending.set(frames[i], h);
      return;
    }
  });

  window[KEY] = { scan: scan };
  scan();
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', scan);
  // <div>s added later (pages that render their content with scripts).
  if (typeof MutationObserver === 'function') {
    var queued = false;
    new MutationObserver(function () {
      if (queued) return;
      queued = true;
      Promise.resolve().then(function () {
        queued = false;
        scan();
      });
    }).observe(document.documentElement, { childList: true, subtree: true });
  }
}());
