// Grades an LMS can trust: the `outcome` statements of embeds on a course page of another
// origin (embed-host.mjs), checked against Learning Locker's xAPI 1.0.3 statement validator
// (npm `xapi-validation`, conformance-tested; not a schema written here) once the host has
// added its learner, as docs/embedding.md tells it to. Covers the grading policy (first
// attempt for a self-check question, best attempt for a puzzle), a shown solution earning no
// credit (and the page saying so), names in both languages, responses and interaction types,
// the CNN's `completed` only at its target, and the message API's smaller promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import xapiValidation from 'xapi-validation';
import { BASE_URL, screenshot } from './helpers.mjs';
import { openHost, waitMessage, finish, API } from './embed-host.mjs';
import { setDocIn, starterAnswered } from './puzzle-frame.mjs';

const ADL_VERB = (v) => `http://adlnet.gov/expapi/verbs/${v}`;
const INTERACTION = 'http://adlnet.gov/expapi/activities/cmi.interaction';
// The package is CommonJS with its function as `exports.default`.
const validateStatement = xapiValidation.default;
const ext = (name) => new URL(`xapi/${name}`, BASE_URL).href;

/** Every statement a test sees: valid xAPI 1.0.3 with the host's actor, and our shape. */
function checkStatement(msg) {
  const st = msg.statement;
  assert.equal(st.actor, undefined, 'anonymous: the widget knows no learner');
  const withActor = { ...st, actor: { objectType: 'Agent', account: { homePage: 'https://lms.example.edu', name: 'learner-1' } } };
  const warnings = validateStatement(withActor).map((w) => `${w.path.join('.')}: ${w.name} ${JSON.stringify(w.data)}`);
  assert.deepEqual(warnings, [], `xAPI 1.0.3: ${JSON.stringify(st)}`);
  const def = st.object.definition;
  assert.equal(def.type, INTERACTION, JSON.stringify(def));
  assert.ok(['choice', 'long-fill-in', 'performance'].includes(def.interactionType), JSON.stringify(def));
  // Both languages, in words: never a raw id like "GPU Playground cnn".
  for (const map of [def.name, st.verb.display]) {
    assert.deepEqual(Object.keys(map).sort(), ['en-US', 'zh-CN'], JSON.stringify(map));
    assert.notEqual(map['en-US'], map['zh-CN'], JSON.stringify(map));
  }
  const what = new URL(st.object.id).hash.slice(1);
  const rawIds = [`GPU Playground ${msg.widget}`, `GPU Playground ${msg.widget}: ${what}`];
  assert.ok(!rawIds.includes(def.name['en-US']), `a name in words, not ids: ${def.name['en-US']}`);
  assert.match(def.name['zh-CN'], /[\u4e00-\u9fff]/, def.name['zh-CN']);
  const cx = st.context.extensions;
  assert.ok(['first-attempt', 'best-attempt'].includes(cx[ext('grading-policy')]), JSON.stringify(cx));
  assert.ok(Number.isInteger(cx[ext('attempt')]) && cx[ext('attempt')] >= 1, JSON.stringify(cx));
  assert.equal(typeof cx[ext('solution-shown')], 'boolean', JSON.stringify(cx));
  // Only a statement that sets the grade carries one.
  const grading = ['passed', 'failed'].includes(st.verb.display['en-US']);
  if (!grading) assert.equal(st.result.score, undefined, `${st.verb.id} carries no grade: ${JSON.stringify(st.result)}`);
  return st;
}

const outcomesFrom = async (page, from) => page.evaluate((start) => window.received.slice(start)
  .map((m) => m.data).filter((d) => d && d.type === 'outcome'), from);

/** The next outcome after message index `from`, checked. */
async function nextOutcome(page, from) {
  const msg = (await waitMessage(page, (d) => d && d.type === 'outcome', { from, timeout: 180_000 })).data;
  return checkStatement(msg);
}

const count = (page) => page.evaluate(() => window.received.length);

test('a self-check question keeps its first answer: a later click is `answered`, no new grade', async () => {
  // Which option is right: the page marks it once any option is picked.
  let o = await openHost('lesson?lesson=occupancy&lang=en', { width: 900 });
  await o.frame.click('.quiz-question[data-question="1"] .quiz-option[data-option="0"]');
  const right = Number(await o.frame.getAttribute('.quiz-question[data-question="1"] .quiz-option.is-right', 'data-option'));
  await finish(o);
  const wrong = right === 0 ? 1 : 0;

  o = await openHost('lesson?lesson=occupancy&lang=zh', { width: 900 });
  const { page, frame } = o;
  let from = await count(page);
  await frame.click(`.quiz-question[data-question="1"] .quiz-option[data-option="${right}"]`);
  const first = await nextOutcome(page, from);
  assert.equal(first.verb.id, ADL_VERB('passed'));
  assert.deepEqual(first.result.score, { scaled: 1 });
  assert.equal(first.result.response, String(right));
  assert.equal(first.object.definition.interactionType, 'choice');
  assert.equal(first.context.extensions[ext('grading-policy')], 'first-attempt');
  assert.equal(first.context.extensions[ext('attempt')], 1);
  assert.equal(first.context.language, 'zh');
  assert.match(first.object.definition.name['en-US'], /self-check question 1$/);
  assert.match(first.object.definition.name['zh-CN'], /自测题 1$/);

  from = await count(page);
  await frame.click(`.quiz-question[data-question="1"] .quiz-option[data-option="${wrong}"]`);
  const second = await nextOutcome(page, from);
  assert.equal(second.object.id, first.object.id);
  assert.equal(second.verb.id, ADL_VERB('answered'), 'a wrong click after a pass does not overwrite it');
  assert.equal(second.result.success, false);
  assert.equal(second.result.score, undefined);
  assert.equal(second.result.response, String(wrong));
  assert.equal(second.context.extensions[ext('attempt')], 2);
  // Nothing after the pass is a grading verb.
  const all = await outcomesFrom(page, 0);
  assert.deepEqual(all.map((m) => m.statement.verb.display['en-US']), ['passed', 'answered']);
  await finish(o);
});

async function runPuzzle(page, frame) {
  const from = await count(page);
  await frame.click('#puzzle-run:not([disabled])', { timeout: 60_000 });
  return nextOutcome(page, from);
}

test('a puzzle keeps its best run: a wrong run after a pass is `answered`, with the code as response', async () => {
  const o = await openHost('puzzle?id=map&lang=en', { width: 900 });
  const { page, frame } = o;
  const right = await starterAnswered(frame, 'out[i] = a[i] + 10.0;');
  await setDocIn(page, frame, right);
  const pass = await runPuzzle(page, frame);
  assert.equal(pass.verb.id, ADL_VERB('passed'));
  assert.deepEqual(pass.result.score, { scaled: 1 });
  assert.equal(pass.result.response, right);
  assert.equal(pass.object.definition.interactionType, 'long-fill-in');
  assert.equal(pass.object.definition.name['en-US'], 'GPU Playground puzzle: Map');
  assert.equal(pass.context.extensions[ext('grading-policy')], 'best-attempt');
  assert.equal(pass.context.extensions[ext('solution-shown')], false);

  await setDocIn(page, frame, right.replace('a[i] + 10.0', 'a[i] * 10.0'));
  const miss = await runPuzzle(page, frame);
  assert.equal(miss.object.id, pass.object.id);
  assert.equal(miss.verb.id, ADL_VERB('answered'), 'the pass stands');
  assert.equal(miss.result.success, false);
  assert.equal(miss.result.score, undefined);
  assert.equal(miss.result.extensions[ext('attempt-score')], 0);
  assert.match(miss.result.response, /a\[i\] \* 10\.0/);
  await finish(o);
});

for (const [lang, width] of [['en', 1280], ['zh', 390], ['en', 390], ['zh', 1280]]) {
  test(`Show the solution, Put it in the editor, Run: no credit, and the page says so (${lang}, ${width} px)`, async () => {
    const o = await openHost(`puzzle?id=map&lang=${lang}`, { width: width - 40, viewport: { width, height: 900 } });
    const { page, frame } = o;
    await frame.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
    assert.equal(await frame.$('.solution-credit'), null, 'no note before the solution is shown');
    await frame.click('.solution button');
    const note = await frame.textContent('.solution-credit');
    assert.match(note, lang === 'zh' ? /看过答案.*不再得分/ : /seen the solution.*no credit/, note);
    await frame.click('.solution button');
    await frame.waitForFunction(() => document.querySelector('.cm-host')?.editorText?.().includes('a[i] + 10.0'));
    const st = await runPuzzle(page, frame);
    assert.equal(st.result.success, true, 'the code is right');
    assert.notEqual(st.verb.id, ADL_VERB('passed'), `no plain pass after the solution: ${JSON.stringify(st)}`);
    assert.equal(st.verb.id, ADL_VERB('answered'));
    assert.equal(st.result.score, undefined, 'no credit');
    assert.equal(st.result.extensions[ext('attempt-score')], 1);
    assert.equal(st.context.extensions[ext('solution-shown')], true);
    await (await frame.$('.solution-credit')).scrollIntoViewIfNeeded();
    await screenshot(page, `grades-solution-note-${lang}-${width}`);
    await finish(o);
  });
}

test('the CNN: a Pause below its target accuracy is `progressed`, never `completed`', async () => {
  const o = await openHost('cnn?lang=en&hide=inside,draw', { width: 900 });
  const { page } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  // The Train button is enabled once the digits have loaded and the device answered.
  await o.frame.waitForSelector('#cnn-play:not([disabled])', { timeout: 120_000 });
  let from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 1, type: 'run', id: 'train' }), [API]);
  const started = await waitMessage(page, (d) => d && d.id === 'train' && d.type === 'run-started', { from, timeout: 60_000 });
  assert.ok(started);
  from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 1, type: 'run', id: 'pause' }), [API]);
  const done = await waitMessage(page, (d) => d && d.type === 'run-finished', { from, timeout: 180_000 });
  const r = done.data.results;
  assert.equal(r.targetAccuracy, 0.9, JSON.stringify(r));
  const st = await nextOutcome(page, from);
  const reached = typeof r.accuracy === 'number' && r.accuracy >= r.targetAccuracy;
  assert.equal(st.verb.id, ADL_VERB(reached ? 'completed' : 'progressed'), JSON.stringify({ r, st }));
  assert.equal(st.result.completion, reached);
  assert.equal(st.object.definition.interactionType, 'performance');
  assert.equal(st.object.definition.name['en-US'], 'GPU Playground: the digits CNN');
  await finish(o);
});

test('setParams refused: the message names no value used instead, and the state agrees; version', async () => {
  const o = await openHost('race?lang=en&n=64', { width: 900 });
  const { page } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  let from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 1, type: 'setParams', id: 's1', params: { n: 999999 } }), [API]);
  const err = (await waitMessage(page, (d) => d && d.id === 's1', { from })).data;
  assert.equal(err.type, 'error');
  assert.equal(err.code, 'bad-params');
  assert.doesNotMatch(err.message, /using/, err.message);
  assert.match(err.message, /n = "999999".*nothing was changed/, err.message);
  // A request without `version` is read as version 1 (documented); another version is refused.
  from = await count(page);
  await page.evaluate(([api]) => window.send({ api, type: 'getState', id: 'g1' }), [API]);
  const state = (await waitMessage(page, (d) => d && d.id === 'g1', { from })).data;
  assert.equal(state.type, 'state');
  assert.equal(state.params.n, '64', `n stayed 64: ${JSON.stringify(state.params)}`);
  from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 2, type: 'getState', id: 'g2' }), [API]);
  const v2 = (await waitMessage(page, (d) => d && d.id === 'g2', { from })).data;
  assert.equal(v2.code, 'unsupported-version');
  await finish(o);
});
