// The `gpt` embed (the tiny GPT trained live) on a course page of another origin
// (embed-host.mjs): `run` starts training and a second `run` pauses it; the pause is reported
// once evaluated where it stopped, and its outcome is graded on the validation loss against
// the bigram's: an early pause, far above it, is `progressed`, never `completed`; a pause below
// it is `completed`. `getState`
// carries where the run got to, equal to what `run-finished` said. Every statement passes
// Learning Locker's xAPI 1.0.3 validator (npm `xapi-validation`). On SwiftShader the adapter
// is named a software one; without WebGPU the CPU twin trains alone and the report says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import xapiValidation from 'xapi-validation';
import { screenshot } from './helpers.mjs';
import { openHost, waitMessage, finish, siteFrame, API } from './embed-host.mjs';

const validateStatement = xapiValidation.default;
const count = (page) => page.evaluate(() => window.received.length);
const send = (page, msg) => page.evaluate(([api, m]) => window.send({ api, version: 1, ...m }), [API, msg]);

/** `getState`'s work. */
async function work(page, id) {
  const from = await count(page);
  await send(page, { type: 'getState', id });
  // eslint-disable-next-line no-new-func
  const mine = new Function('d', `return !!d && d.id === ${JSON.stringify(id)} && d.type === 'state'`);
  return (await waitMessage(page, mine, { from })).data.work;
}

/**
 * Trains until the judged side has been evaluated past step 0 (and, with `below`, below the
 * bigram), pauses with a second `run`, and returns the `run-finished` results and the
 * outcome's statement.
 */
async function trainAndPause(page, sideSteps, below = false) {
  let from = await count(page);
  await send(page, { type: 'run', id: 'train' });
  await waitMessage(page, (d) => d && d.id === 'train' && d.type === 'run-started', { from, timeout: 60_000 });
  await page.waitForFunction(([api, key, low]) => {
    window.send({ api, version: 1, type: 'getState', id: 'poll' });
    const w = window.received.filter((m) => m.data?.id === 'poll').at(-1)?.data?.work;
    return w?.training === 'playing' && w.step > 0 && w[key] > 0 && (!low || w.valLoss < w.targetValLoss);
  }, [API, sideSteps, below], { timeout: 240_000, polling: 500 });
  from = await count(page);
  await send(page, { type: 'run', id: 'pause' });
  const done = (await waitMessage(page, (d) => d && d.type === 'run-finished', { from, timeout: 120_000 })).data;
  const outcome = (await waitMessage(page, (d) => d && d.type === 'outcome', { from, timeout: 30_000 })).data;
  assert.equal(done.widget, 'gpt');
  assert.equal(done.id, 'train', 'the run the host started');
  return { results: done.results, statement: outcome.statement };
}

/**
 * A pause's statement: valid xAPI, a performance answered with its loss, `progressed` and not
 * complete above the bigram (`early`), `completed` below it.
 */
function assertPause(results, st, early) {
  const withActor = { ...st, actor: { objectType: 'Agent', account: { homePage: 'https://lms.example.edu', name: 'learner-1' } } };
  const warnings = validateStatement(withActor).map((w) => `${w.path.join('.')}: ${w.name}`);
  assert.deepEqual(warnings, [], `xAPI 1.0.3: ${JSON.stringify(st)}`);
  assert.equal(results.valLoss > results.targetValLoss, early, `above the bigram: ${JSON.stringify(results)}`);
  const verb = early ? 'progressed' : 'completed';
  assert.equal(st.verb.id, `http://adlnet.gov/expapi/verbs/${verb}`, JSON.stringify(st.verb));
  assert.equal(st.result.completion, !early);
  assert.equal(st.result.score, undefined, 'a training run has no grade');
  assert.equal(st.result.response, `val-loss[.]${results.valLoss.toFixed(4)}`);
  assert.equal(st.object.definition.type, 'http://adlnet.gov/expapi/activities/cmi.interaction');
  assert.equal(st.object.definition.interactionType, 'performance');
  assert.match(st.object.id, /\/embed\/gpt$/);
  assert.match(st.object.definition.name['zh-CN'], /微型 GPT/);
}

test('gpt embed on SwiftShader: run, pause: an early pause is progressed, not completed; getState as reported', async () => {
  const o = await openHost('gpt?lang=en&data=names&hide=tally,experiments', { width: 900 });
  const { page, frame } = o;
  const ready = (await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 })).data;
  assert.deepEqual(ready.params, { data: 'names' });
  await frame.waitForSelector('#gpt-train-toggle:not([disabled])', { timeout: 120_000 });
  const before = await work(page, 'w1');
  assert.equal(before.version, 1);
  assert.equal(before.training, 'paused');
  assert.equal(before.data, 'names');
  assert.equal(before.cpuSteps, 0, JSON.stringify(before));
  const { results, statement } = await trainAndPause(page, 'gpuSteps');
  // SwiftShader is a CPU imitating a GPU: named in the report, and on the page.
  assert.equal(results.adapter, 'software', JSON.stringify(results));
  await frame.waitForSelector('#gpt-train-adapter[data-gpu="gpt.train.software"]');
  assert.equal(results.from, 'gpu');
  assert.equal(results.step, results.gpuSteps, 'evaluated where it stopped');
  assertPause(results, statement, true);
  const after = await work(page, 'w2');
  const { version, training, layers, heads, width, context, batch, lr, ...rest } = after;
  assert.equal(training, 'paused');
  assert.deepEqual([layers, heads, width, context, batch, lr], [2, 2, 16, 16, 16, 0.01], JSON.stringify(after));
  assert.deepEqual(rest, results, 'getState says where the run got to, as run-finished did');
  await screenshot(page, 'embed-gpt-paused-en-900');
  await finish(o);
});

test('gpt embed without WebGPU: the CPU twin trains alone and the report says so (zh)', async () => {
  const o = await openHost('gpt?lang=zh&hide=heading,data,tally,experiments', { width: 390 });
  const { page, context } = o;
  // The same course page again, now in a browser that offers no WebGPU.
  await context.addInitScript(() => { delete Navigator.prototype.gpu; });
  await page.reload();
  const frame = await siteFrame(page, '#w', { path: '/embed/gpt', lang: 'zh' });
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  await frame.waitForSelector('#gpt-train-adapter[data-gpu="gpt.train.no_gpu"]', { timeout: 120_000 });
  const before = await work(page, 'w3');
  assert.equal(before.adapter, 'none');
  assert.equal(before.data, 'poems', 'Chinese: the quatrains');
  // The quatrains' bigram is weak (3,730 characters, few pairs seen twice): the twin passes it
  // in its first few dozen steps, so this run is paused below it and is complete.
  const { results, statement } = await trainAndPause(page, 'cpuSteps', true);
  assert.equal(results.adapter, 'none');
  assert.equal(results.from, 'cpu');
  assert.equal(results.gpuSteps, undefined, 'no GPU steps are made up');
  assert.equal(results.step, results.cpuSteps, 'evaluated where it stopped');
  assertPause(results, statement, false);
  assert.equal(statement.context.language, 'zh');
  await screenshot(page, 'embed-gpt-nogpu-zh-390');
  await finish({ ...o, frame });
});
