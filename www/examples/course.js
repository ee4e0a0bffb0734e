// The worked example of a course page that embeds GPU Playground widgets (docs/embedding.md).
// Copy it to your own site: set SITE to where GPU Playground is hosted, keep the rest.
// It puts four widgets in iframes, sizes each from its `resize` messages, starts the race
// from a button on this page, and prints every result and every outcome (an xAPI statement:
// a puzzle passed, a run completed) the widgets send back.

// Where the playground lives. Here: the folder above this example (same host). On your own
// course site write it out, e.g. 'https://example.github.io/gpu-playground/'.
const SITE = new URL('../', location.href).href;
const SITE_ORIGIN = new URL(SITE).origin;
const API = 'gpu-playground';
const lang = document.documentElement.lang.startsWith('zh') ? 'zh' : 'en';

// Each placeholder <div data-widget="…" data-params="…"> becomes an iframe.
const frames = new Map();
for (const slot of document.querySelectorAll('[data-widget]')) {
  const params = new URLSearchParams(slot.dataset.params ?? '');
  params.set('lang', lang);
  // The embed only talks to the origin named here, never to "*".
  params.set('parentOrigin', location.origin);
  const iframe = document.createElement('iframe');
  iframe.src = `${SITE}#/embed/${slot.dataset.widget}?${params}`;
  iframe.title = slot.dataset.title ?? slot.dataset.widget;
  iframe.className = 'widget';
  // A first guess; the widget's `resize` messages set the real height.
  iframe.height = '320';
  slot.replaceWith(iframe);
  frames.set(slot.dataset.widget, iframe);
}

const results = document.getElementById('results');
const outcomes = document.getElementById('outcomes');
const text = results.dataset;
let finished = 0;

function log(line, kind) {
  const li = document.createElement('li');
  li.textContent = line;
  if (kind) li.className = kind;
  results.append(li);
}

function fmt(x) {
  return typeof x === 'number' ? x.toPrecision(3) : String(x);
}

addEventListener('message', (event) => {
  // Only messages from the playground, and only its own protocol.
  if (event.origin !== SITE_ORIGIN) return;
  const msg = event.data;
  if (!msg || msg.api !== API) return;
  const iframe = [...frames.values()].find((f) => f.contentWindow === event.source);
  if (!iframe) return;
  switch (msg.type) {
    case 'resize':
      iframe.height = String(msg.height);
      iframe.dataset.sized = 'true';
      break;
    case 'run-finished': {
      finished += 1;
      results.dataset.finished = String(finished);
      const r = msg.results;
      const parts = Object.entries(r).map(([k, v]) => `${k} = ${fmt(v)}`);
      log(`${msg.widget}: ${r.verified ? text.verified : text.unverified} · ${parts.join(', ')}`,
        r.verified ? 'ok' : 'bad');
      break;
    }
    case 'outcome': {
      // An xAPI statement without an actor: a course adds its learner and forwards it to its
      // learning record store (docs/embedding.md, "Outcomes"). Here it is only shown.
      const st = msg.statement;
      const o = outcomes.dataset;
      const r = st.result ?? {};
      const bits = [`${st.verb.display['en-US']} ${st.object.id}`];
      if (r.success !== undefined) bits.push(`${o.success} = ${r.success}`);
      if (r.score) bits.push(`${o.score} = ${r.score.scaled}`);
      bits.push(`${o.duration} = ${r.duration}`);
      const li = document.createElement('li');
      li.textContent = bits.join(' · ');
      li.className = r.success === false ? 'bad' : 'ok';
      li.dataset.verb = st.verb.display['en-US'];
      outcomes.append(li);
      outcomes.dataset.count = String(outcomes.children.length);
      break;
    }
    case 'error':
      log(`${text.error} ${msg.code}: ${msg.message}`, 'bad');
      break;
    case 'ready':
      log(`${msg.widget}: ${text.ready}`);
      break;
    default:
      break;
  }
});

document.getElementById('run-race').addEventListener('click', () => {
  const race = frames.get('race');
  race?.contentWindow?.postMessage({ api: API, version: 1, type: 'run', id: `race-${Date.now()}` }, SITE_ORIGIN);
});
