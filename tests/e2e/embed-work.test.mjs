// The learner's work through the message API: a course page of another origin (embed-host.mjs)
// asks `getState` and gets back, besides the settings, what the learner made in the widget —
// a puzzle's and the kernel editor's code as typed (run or not), a lesson's self-check answers,
// how far a CNN training run got — in the versioned `work` object docs/embedding.md describes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openHost, waitMessage, finish, API } from './embed-host.mjs';
import { setDocIn, starterAnswered } from './puzzle-frame.mjs';

const count = (page) => page.evaluate(() => window.received.length);

/** Sends `getState` and returns its `state` reply. */
async function getState(page, id) {
  const from = await count(page);
  await page.evaluate(([api, id]) => window.send({ api, version: 1, type: 'getState', id }), [API, id]);
  // waitMessage sends its predicate as text: the id goes in as a literal.
  // eslint-disable-next-line no-new-func
  const mine = new Function('d', `return !!d && d.id === ${JSON.stringify(id)}`);
  const reply = (await waitMessage(page, mine, { from })).data;
  assert.equal(reply.type, 'state', JSON.stringify(reply));
  assert.equal(reply.id, id);
  return reply;
}

/** `work` is small: its JSON is the code it carries plus a little. */
function assertSmall(work, code = '') {
  const extra = JSON.stringify(work).length - JSON.stringify(code).length;
  assert.ok(extra < 400, `work carries ${extra} characters besides the code: ${JSON.stringify(work)}`);
}

test('a puzzle: getState carries the code in the editor, typed but not run', async () => {
  const o = await openHost('puzzle?id=map&lang=en', { width: 900 });
  const { page, frame } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  const text = await starterAnswered(frame, 'out[i] = a[i] + 10.0; // mine');
  await setDocIn(page, frame, text);
  const s = await getState(page, 'w1');
  assert.deepEqual(s.work, { version: 1, puzzle: 'map', code: text }, JSON.stringify(s.work));
  assert.equal(s.params.id, 'map', 'the settings are still there');
  assertSmall(s.work, text);
  await finish(o);
});

test('the kernel editor: getState carries the edited source and its stage', async () => {
  const o = await openHost('editor?stage=matmul-tiled&lang=zh', { width: 900 });
  const { page, frame } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  await frame.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  const original = await frame.$eval('.cm-host', (h) => h.editorText());
  const text = `// my tiling notes\n${original}`;
  await setDocIn(page, frame, text);
  const s = await getState(page, 'w2');
  assert.deepEqual(s.work, { version: 1, stage: 'matmul-tiled', code: text });
  assertSmall(s.work, text);
  await finish(o);
});

test('a lesson: getState carries the self-check answers as they stand', async () => {
  const o = await openHost('lesson?lesson=occupancy&lang=en', { width: 900 });
  const { page, frame } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  assert.deepEqual((await getState(page, 'w3')).work, { version: 1, lesson: 'occupancy', answers: [] });
  await frame.click('.quiz-question[data-question="1"] .quiz-option[data-option="0"]');
  await frame.click('.quiz-question[data-question="3"] .quiz-option[data-option="1"]');
  const right = async (q) => Number(await frame.getAttribute(`.quiz-question[data-question="${q}"] .quiz-option.is-right`, 'data-option'));
  const [r1, r3] = [await right(1), await right(3)];
  const s = await getState(page, 'w4');
  assert.deepEqual(s.work, {
    version: 1,
    lesson: 'occupancy',
    answers: [
      { question: 1, picked: 0, right: r1 === 0 },
      { question: 3, picked: 1, right: r3 === 1 },
    ],
  });
  assertSmall(s.work);
  await finish(o);
});

test('the CNN: getState says how far training got, as its run-finished did', async () => {
  const o = await openHost('cnn?lang=en&hide=inside,draw', { width: 900 });
  const { page, frame } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  await frame.waitForSelector('#cnn-play:not([disabled])', { timeout: 120_000 });
  const before = (await getState(page, 'w5')).work;
  assert.equal(before.version, 1);
  assert.equal(before.training, 'paused');
  assert.equal(before.cpuSteps, 0, JSON.stringify(before));
  let from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 1, type: 'run', id: 'train' }), [API]);
  await waitMessage(page, (d) => d && d.id === 'train' && d.type === 'run-started', { from, timeout: 60_000 });
  // Training: steps go up while it plays.
  await page.waitForFunction(([api]) => {
    window.send({ api, version: 1, type: 'getState', id: 'poll' });
    const last = window.received.filter((m) => m.data?.id === 'poll').at(-1)?.data;
    return last?.work?.training === 'playing' && last.work.cpuSteps > 0;
  }, [API], { timeout: 120_000, polling: 500 });
  from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 1, type: 'run', id: 'pause' }), [API]);
  const done = (await waitMessage(page, (d) => d && d.type === 'run-finished', { from, timeout: 180_000 })).data.results;
  const s = await getState(page, 'w6');
  const { ratio, ...expected } = done;
  assert.deepEqual(s.work, { version: 1, training: 'paused', ...expected }, `ratio ${ratio}`);
  assert.ok(s.work.cpuSteps > 0, JSON.stringify(s.work));
  assertSmall(s.work);
  await finish(o);
});

test('a widget without the learner\'s work: `work` is only its version', async () => {
  const o = await openHost('race?lang=en&n=64', { width: 900 });
  const { page } = o;
  await waitMessage(page, (d) => d && d.type === 'ready', { timeout: 60_000 });
  const s = await getState(page, 'w7');
  assert.deepEqual(s.work, { version: 1 });
  // setParams' reply is the settings only: the widget mounts afresh after it.
  const from = await count(page);
  await page.evaluate(([api]) => window.send({ api, version: 1, type: 'setParams', id: 'p1', params: { n: 128 } }), [API]);
  const set = (await waitMessage(page, (d) => d && d.id === 'p1', { from })).data;
  assert.equal(set.type, 'state');
  assert.equal(set.work, undefined);
  await finish(o);
});
