// The CNN page's training step (issue 24) through Dawn — the WebGPU of Chrome and Edge, via
// its Node binding (npm `webgpu`) — run exactly as `CnnSession` runs it through wgpu, with
// nothing of it written twice: `bench dump-kernels --dir D --cnn DIGITS` writes D/cnn/ (per
// batch the training engine's own description — buffers, dispatches with their buffer
// ranges, programs — replayed by `engine.mjs`; the seeded split, the batch order and the
// twin's lockstep states with their bounds; `crates/bench/src/cnn_bench.rs`, `dump`).
//
// Steps, as the session: up to `per_submit` steps to a submission; their batches (images,
// then labels as bits, gathered in the twin's order: epoch permutations from order.bin, step
// s takes entries s·B … s·B + B − 1) written at once into the staging buffer, and per step
// two copies into the arena then the engine's train-step program (Adam reads its step number
// from the double-buffered step state it advances on the GPU).
//
// 1. Verify (each batch): `verify.steps` steps in lockstep with the twin — each step starts
//    from the twin's parameters and moments (verify_B_before.bin, in the arena's layout) — and
//    every parameter, moment and the mean loss compared with the twin's (verify_B_after.bin)
//    within the bound of `family/cnn/bound.rs` (verify_B_bound.bin; gaps below 2⁻¹²⁶
//    forgiven, as `bench cnn`). A batch that fails is not timed.
// 2. Speed: --runs whole runs per batch (a fresh engine each), 20 warm-up steps and a pilot
//    of 20 drained steps, then ≥ --min-ms of steps submitted as the session does (at most
//    two submissions in flight) and drained by reading the losses back; ms/step = wall time /
//    steps; median, fastest and slowest run.
// 3. Time to accuracy (batch `spec.batch`, the page's default): the clock starts before the
//    engine is made; every --eval-every steps the 1,000 test digits are evaluated on the GPU
//    (the engine's evaluation program over `eval.images` at a time, logits read back, the
//    first largest logit is the class); the first time at ≥ 90 % and ≥ 97 % and the accuracy
//    at --tta-secs. Past the dumped epochs of batch order the order repeats (said).
//
// Usage: node cnn.mjs --dir D/cnn [--batches 64,256] [--runs 3] [--min-ms 1500]
//          [--tta-secs 60] [--eval-every 50] [--out dawn_cnn.tsv] [--flag dawn-toggle]…
//          [--profile REPS]
// --profile REPS (after each batch's runs): where a step's time goes — after 20 steps, each
// dispatch of the train step alone, REPS times in one compute pass, submitted and drained,
// wall clock per dispatch, sorted, with their sum.
// WEBGPU_MODULE may point at the binding's index.js.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { destroyEngine, median, openDevice, encodeOps, makeEngine, pipelines, readParts, runAround } from './engine.mjs';

function parseArgs(argv) {
  const a = { dir: null, batches: null, runs: 3, minMs: 1500, ttaSecs: 60, evalEvery: 50, out: null, flags: [], profile: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--dir') a.dir = v;
    else if (k === '--batches') a.batches = v.split(',').map(Number);
    else if (k === '--runs') a.runs = Number(v);
    else if (k === '--min-ms') a.minMs = Number(v);
    else if (k === '--tta-secs') a.ttaSecs = Number(v);
    else if (k === '--eval-every') a.evalEvery = Number(v);
    else if (k === '--out') a.out = v;
    else if (k === '--flag') a.flags.push(v);
    else if (k === '--profile') a.profile = Number(v);
    else throw new Error(`unknown flag ${k}`);
  }
  if (!a.dir) throw new Error('--dir D/cnn (from `bench dump-kernels --cnn`) is required');
  return a;
}

const FLUSH = 2 ** -126;

const args = parseArgs(process.argv.slice(2));
const J = JSON.parse(readFileSync(join(args.dir, 'cnn.json'), 'utf8'));
const bin = (name, T) => {
  const b = readFileSync(join(args.dir, name));
  return new T(b.buffer, b.byteOffset, b.byteLength / T.BYTES_PER_ELEMENT);
};
const trainX = bin('train_x.bin', Float32Array);
const trainY = bin('train_y.bin', Uint32Array);
const testX = bin('test_x.bin', Float32Array);
const testY = bin('test_y.bin', Uint32Array);
const order = bin('order.bin', Uint32Array);
const px = J.side * J.side;

const { gpu, device, errors } = await openDevice(args.flags);

const pipes = new Map();
for (const plan of J.batches) await pipelines(device, plan.engine.kernels, pipes);

const ACTS = 'engine acts', DELTAS = 'engine deltas', EVAL_ACTS = 'engine eval acts';
const PARAMS = 'engine params', M = 'engine m', V = 'engine v';

// A session: the engine of batch `plan.batch` and a readback buffer.
function makeSession(plan) {
  const e = makeEngine(device, plan.engine, join(args.dir, plan.dir), pipes);
  const B = plan.batch;
  const W = plan.param_words;
  const read = device.createBuffer({ size: Math.max(3 * W * 4 + B * 4, J.eval.images * J.classes * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return { plan, B, e, read, staged: new Float32Array(plan.per_submit * B * (px + 1)), inFlight: [], wrapped: false };
}

function destroy(s) {
  destroyEngine(s.e);
  s.read.destroy();
}

const n = J.train;
// `count` (≤ per_submit) steps in one submission, as `CnnSession::submit_steps`.
function submitSteps(s, count) {
  const B = s.B, imageBytes = B * px * 4, stepBytes = B * (px + 1) * 4;
  const around = [];
  for (let k = 0; k < count; k++) {
    const base = k * B * (px + 1);
    for (let i = 0; i < B; i++) {
      const t = (s.e.steps + k) * B + i;
      let ep = Math.floor(t / n);
      if (ep >= J.epochs) { ep %= J.epochs; s.wrapped = true; }
      const idx = order[ep * n + (t % n)];
      s.staged.set(trainX.subarray(idx * px, (idx + 1) * px), base + i * px);
      s.staged[base + B * px + i] = new Float32Array(new Uint32Array([trainY[idx]]).buffer)[0];
    }
    const at = k * stepBytes;
    around.push([[
      { copy: [s.plan.staging, at, ACTS, s.plan.input_offset, imageBytes] },
      { copy: [s.plan.staging, at + imageBytes, ACTS, s.plan.targets_offset, B * 4] },
    ], []]);
  }
  device.queue.writeBuffer(s.e.bufs.get(s.plan.staging), 0, s.staged, 0, count * B * (px + 1));
  runAround(device, s.e, 'train_step', around);
}

const meanLoss = (losses) => { let sum = 0; for (const l of losses) sum = Math.fround(sum + l); return Math.fround(sum / losses.length); };

async function steps(s, count) {
  let left = count;
  while (left > 0) {
    const k = Math.min(left, s.plan.per_submit);
    submitSteps(s, k);
    left -= k;
    s.inFlight.push(device.queue.onSubmittedWorkDone());
    if (s.inFlight.length > 2) await s.inFlight.shift();
  }
}

async function drained(s, count) {
  const t0 = performance.now();
  await steps(s, count);
  const [losses] = await readParts(device, s.e, s.read, [[DELTAS, s.plan.losses_offset, s.B * 4]]);
  s.inFlight = [];
  return [performance.now() - t0, meanLoss(losses)];
}

function worst(got, want, bound) {
  let w = 0, at = 0;
  for (let i = 0; i < want.length; i++) {
    const gap = Math.max(0, Math.abs(got[i] - want[i]) - FLUSH);
    const r = !Number.isFinite(got[i]) ? Infinity : gap === 0 ? 0 : bound[i] > 0 ? gap / bound[i] : Infinity;
    if (r > w) { w = r; at = i; }
  }
  return [w, at];
}

async function verify(plan) {
  const K = plan.verify.steps;
  const P = plan.param_words;
  const before = bin(`verify_${plan.batch}_before.bin`, Float32Array);
  const after = bin(`verify_${plan.batch}_after.bin`, Float32Array);
  const bound = bin(`verify_${plan.batch}_bound.bin`, Float64Array);
  const s = makeSession(plan);
  let all = 0;
  for (let k = 0; k < K; k++) {
    const o = 3 * P * k;
    device.queue.writeBuffer(s.e.bufs.get(PARAMS), 0, before.subarray(o, o + P));
    device.queue.writeBuffer(s.e.bufs.get(M), 0, before.subarray(o + P, o + 2 * P));
    device.queue.writeBuffer(s.e.bufs.get(V), 0, before.subarray(o + 2 * P, o + 3 * P));
    submitSteps(s, 1);
    const [p, m, v, losses] = await readParts(device, s.e, s.read, [[PARAMS, 0, P * 4], [M, 0, P * 4], [V, 0, P * 4], [DELTAS, plan.losses_offset, s.B * 4]]);
    const [wp, at] = worst(p, after.subarray(o, o + P), bound.subarray(o, o + P));
    const [wm] = worst(m, after.subarray(o + P, o + 2 * P), bound.subarray(o + P, o + 2 * P));
    const [wv] = worst(v, after.subarray(o + 2 * P, o + 3 * P), bound.subarray(o + 2 * P, o + 3 * P));
    const loss = meanLoss(losses);
    const wl = Math.abs(loss - plan.verify.losses[k]) / plan.verify.loss_bounds[k];
    const w = Math.max(wp, wm, wv, wl);
    console.log(`verify batch ${plan.batch} step ${k + 1}: worst |Dawn − twin| / bound: params ${wp.toFixed(3)} (at ${at}), m ${wm.toFixed(3)}, v ${wv.toFixed(3)}, loss ${wl.toFixed(3)} (Dawn ${loss}, twin ${plan.verify.losses[k]}) → ${w <= 1 ? 'within the bound' : 'OUTSIDE the bound'}`);
    all = Math.max(all, w);
    if (!(w <= 1)) break;
  }
  destroy(s);
  return all;
}

async function testAccuracy(s) {
  const C = J.classes, E = J.eval.images;
  let correct = 0, loss = 0;
  const rowsAll = testY.length;
  for (let r0 = 0; r0 < rowsAll; r0 += E) {
    const rows = Math.min(E, rowsAll - r0);
    device.queue.writeBuffer(s.e.bufs.get(EVAL_ACTS), J.eval.input_offset, testX.subarray(r0 * px, (r0 + rows) * px));
    runAround(device, s.e, 'eval_forward', [[[], []]]);
    const [z] = await readParts(device, s.e, s.read, [[EVAL_ACTS, J.eval.logits_offset, rows * C * 4]]);
    for (let r = 0; r < rows; r++) {
      let best = 0, m = -Infinity;
      for (let j = 0; j < C; j++) { const v = z[r * C + j]; if (v > m) { m = v; best = j; } }
      let sum = 0; for (let j = 0; j < C; j++) sum += Math.exp(z[r * C + j] - m);
      loss += Math.log(sum) - (z[r * C + testY[r0 + r]] - m);
      correct += best === testY[r0 + r] ? 1 : 0;
    }
  }
  return [correct / rowsAll, loss / rowsAll];
}

const tsv = ['what\tbatch\truns\tmedian\tmin\tmax\tunit\textra'];
const batches = args.batches || J.batches.map((b) => b.batch);
for (const B of batches) {
  const plan = J.batches.find((b) => b.batch === B);
  if (!plan) throw new Error(`batch ${B} was not dumped`);
  const w = await verify(plan);
  if (!(w <= 1) || errors.message) {
    console.log(`NOT MEASURED: batch ${B} outside the twin's bound (${w}) ${errors.message || ''}`);
    tsv.push(`dawn-step\t${B}\t0\tNaN\tNaN\tNaN\tms\tFAILED verification ${w}`);
    continue;
  }
  const ms = [];
  for (let r = 0; r < args.runs; r++) {
    const s = makeSession(plan);
    await drained(s, 20);
    const [pilot] = await drained(s, 20);
    const count = Math.min(200000, Math.max(20, Math.ceil(args.minMs / (pilot / 20))));
    const [t, loss] = await drained(s, count);
    if (!Number.isFinite(loss)) throw new Error(`batch ${B}: loss ${loss}`);
    console.log(`dawn batch ${B} run ${r + 1}: ${(t / count).toFixed(4)} ms/step (${(1000 * count / t).toFixed(0)} steps/s, ${count} steps, last loss ${loss.toFixed(4)})`);
    ms.push(t / count);
    destroy(s);
  }
  if (args.profile > 0) {
    const s = makeSession(plan);
    await drained(s, 20);
    const rows = [];
    const ds = plan.engine.programs.train_step.ops[0].filter((op) => op.dispatch !== undefined);
    for (const op of ds) {
      const d = s.e.dispatches[op.dispatch];
      const alone = (reps) => {
        const enc = device.createCommandEncoder();
        encodeOps(s.e, enc, Array(reps).fill(op)).end();
        device.queue.submit([enc.finish()]);
      };
      alone(2);
      await device.queue.onSubmittedWorkDone();
      const t0 = performance.now();
      alone(args.profile);
      await device.queue.onSubmittedWorkDone();
      rows.push([(performance.now() - t0) / args.profile, op.dispatch, d]);
    }
    const sum = rows.reduce((x, r) => x + r[0], 0);
    console.log(`profile batch ${B} (${args.profile} repeats of each dispatch alone, wall clock): sum ${sum.toFixed(4)} ms`);
    for (const [t, i, d] of [...rows].sort((x, y) => y[0] - x[0])) {
      console.log(`  ${t.toFixed(4).padStart(9)} ms  ${(100 * t / sum).toFixed(1).padStart(5)} %  #${String(i).padStart(2)} ${d.kernel}, grid ${d.wg.join('×')}`);
      tsv.push(`dawn-profile\t${B}\t1\t${t}\t\t\tms\t#${i} ${d.kernel} grid ${d.wg.join('x')}`);
    }
    destroy(s);
  }
  const med = median(ms), lo = Math.min(...ms), hi = Math.max(...ms);
  console.log(`| dawn | ${B} | ${med.toFixed(4)} ms | ${(1000 / med).toFixed(0)} steps/s | ${lo.toFixed(4)}–${hi.toFixed(4)} ms | ${(B * 1000 / med).toFixed(0)} samples/s | verified ${plan.verify.steps} steps, worst/bound ${w.toFixed(3)} |`);
  tsv.push(`dawn-step\t${B}\t${args.runs}\t${med}\t${lo}\t${hi}\tms\tverified ${plan.verify.steps} steps, worst/bound ${w.toFixed(3)}`);
}

if (args.ttaSecs > 0) {
  const plan = J.batches.find((b) => b.batch === J.spec.batch);
  console.log(`\ntime to accuracy (Dawn, batch ${plan.batch}, evaluating the ${testY.length} test digits every ${args.evalEvery} steps, for ${args.ttaSecs} s):`);
  const t0 = performance.now();
  const s = makeSession(plan);
  let at90 = null, at97 = null, last = [0, 0, 0], best = 0, i = 0;
  for (;;) {
    await steps(s, args.evalEvery);
    const [acc, loss] = await testAccuracy(s);
    s.inFlight = [];
    const t = (performance.now() - t0) / 1000;
    if (t > args.ttaSecs) break;
    if (i < 40 || i % 20 === 0) console.log(`  ${t.toFixed(3).padStart(8)} s  step ${String(s.steps).padStart(7)}  test accuracy ${(acc * 100).toFixed(1)} %  loss ${loss.toFixed(4)}`);
    i++;
    last = [acc, t, s.steps];
    best = Math.max(best, acc);
    if (acc >= 0.9 && !at90) at90 = [t, s.steps];
    if (acc >= 0.97 && !at97) at97 = [t, s.steps];
  }
  const fmt = (x) => (x ? `${x[0].toFixed(2)} s (step ${x[1]})` : 'not reached');
  console.log(`| dawn | 90 %: ${fmt(at90)} | 97 %: ${fmt(at97)} | at ${args.ttaSecs} s: ${(last[0] * 100).toFixed(1)} % (step ${last[2]}, best ${(best * 100).toFixed(1)} %) |${s.wrapped ? ' (batch order repeated after the dumped epochs)' : ''}`);
  tsv.push(`dawn-tta90\t${plan.batch}\t1\t${at90 ? at90[0] : 'NaN'}\t\t\ts\tstep ${at90 ? at90[1] : '-'}`);
  tsv.push(`dawn-tta97\t${plan.batch}\t1\t${at97 ? at97[0] : 'NaN'}\t\t\ts\tstep ${at97 ? at97[1] : '-'}`);
  tsv.push(`dawn-acc-at-limit\t${plan.batch}\t1\t${last[0]}\t\t\tfraction\tat ${last[1].toFixed(2)} s step ${last[2]}${s.wrapped ? ' order repeated' : ''}`);
  destroy(s);
}
if (errors.message) { console.log(`device error: ${errors.message}`); process.exitCode = 1; }
if (args.out) writeFileSync(args.out, tsv.join('\n') + '\n');
process.exit(process.exitCode || 0);
