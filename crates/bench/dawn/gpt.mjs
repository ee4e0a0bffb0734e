// The `#/gpt` page's training through Dawn — Chrome's WebGPU, via its Node binding (npm
// `webgpu`) — as `GptSession` runs it through wgpu: `bench dump-kernels --dir D --gpt ASSET`
// writes D/gpt/ (the training engine's own description, replayed by `engine.mjs`; the
// windows' buffer; the seeded batch order; the twin's first steps; the bigram's validation
// loss; `crates/bench/src/gpt_dump.rs`).
//
// A step, as the session: its batch's windows copied from the windows' buffer into the
// model's token and target ranges (one copy each per window), then the engine's train-step
// program; N steps to a submission. An evaluation, as `GptSession::eval`: per validation batch
// its windows copied in, the evaluation program, the rows' losses copied into a result slot;
// the slot read back; the loss is Σ row losses / targets counted, in nats per character.
//
// 1. Verify: a fresh engine trains `verify.steps` steps from the dumped start; after each,
//    every parameter, m and v is compared with the twin's within its bound (the twin's
//    compounded first-order bound, `engine::twin`), and the summed row losses too. A failure
//    means nothing is timed.
// 2. Speed, per --per-submit value: --runs whole runs (a fresh engine each), 20 warm-up
//    steps, a pilot of 20 drained steps, then ≥ --min-ms of steps submitted as the app does
//    (at most two submissions in flight), drained by reading the losses back; ms/step = wall
//    time / steps; median, fastest and slowest.
// 3. Time to a validation loss (--tta-secs, 0 skips): the clock starts before the engine is
//    made (the pipelines were compiled for step 1 and are cached, as a page's second run);
//    steps in submissions of --tta-per-submit, the whole validation split evaluated every
//    --eval-every steps (inside the clock); reports the first time at ≤ 90 % of the bigram's
//    loss, the best loss and the loss at the limit.
//
// Usage: node gpt.mjs --dir D/gpt [--per-submit 1,16] [--runs 3] [--min-ms 1500]
//          [--tta-secs 60] [--tta-per-submit 16] [--eval-every 250] [--out dawn_gpt.tsv]
//          [--flag dawn-toggle]…
// WEBGPU_MODULE may point at the binding's index.js.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { destroyEngine, median, openDevice, makeEngine, pipelines, readParts, runAround } from './engine.mjs';

function parseArgs(argv) {
  const a = { dir: null, perSubmit: [1, 16], runs: 3, minMs: 1500, ttaSecs: 60, ttaPerSubmit: 16, evalEvery: 250, out: null, flags: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--dir') a.dir = v;
    else if (k === '--per-submit') a.perSubmit = v.split(',').map(Number);
    else if (k === '--runs') a.runs = Number(v);
    else if (k === '--min-ms') a.minMs = Number(v);
    else if (k === '--tta-secs') a.ttaSecs = Number(v);
    else if (k === '--tta-per-submit') a.ttaPerSubmit = Number(v);
    else if (k === '--eval-every') a.evalEvery = Number(v);
    else if (k === '--out') a.out = v;
    else if (k === '--flag') a.flags.push(v);
    else throw new Error(`unknown flag ${k}`);
  }
  if (!a.dir) throw new Error('--dir D/gpt (from `bench dump-kernels --gpt ASSET`) is required');
  return a;
}


const args = parseArgs(process.argv.slice(2));
const J = JSON.parse(readFileSync(join(args.dir, 'gpt.json'), 'utf8'));
const bin = (name, T) => {
  const b = readFileSync(join(args.dir, name));
  return new T(b.buffer, b.byteOffset, b.byteLength / T.BYTES_PER_ELEMENT);
};
const order = bin('order.bin', Uint32Array);
const B = J.batch, T = J.config.context, P = J.param_words;
console.log(`${J.asset}: ${J.train_docs} train / ${J.val_docs} val texts, vocabulary ${J.config.vocab}; ${J.config.layers} layers, ${J.config.heads} heads, width ${J.config.width}, context ${T}; batch ${B}; ${P} parameter words; bigram ${J.bigram.toFixed(4)} nats/char`);

const { gpu, device, errors } = await openDevice(args.flags);
const pipes = await pipelines(device, J.engine.kernels);

function session() {
  const e = makeEngine(device, J.engine, args.dir, pipes);
  const read = device.createBuffer({ size: Math.max(3 * P * 4 + J.rows * 4, J.val_batches * B * T * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return { e, read, inFlight: [], wrapped: false };
}
const destroy = (s) => { destroyEngine(s.e); s.read.destroy(); };

// Windows `idx` of (tokens, targets) at those byte offsets of the data buffer into the model.
function copies(tokensAt, targetsAt, idx) {
  const ops = [];
  for (const [from, to] of [[tokensAt, J.tokens_at], [targetsAt, J.targets_at]]) {
    idx.forEach((i, j) => ops.push({ copy: [J.data, from + i * T * 4, J.acts, to + j * T * 4, T * 4] }));
  }
  return ops;
}

function submitSteps(s, count) {
  const around = [];
  for (let k = 0; k < count; k++) {
    let step = s.e.steps + k;
    if (step >= J.order_steps) { step %= J.order_steps; s.wrapped = true; }
    around.push([copies(J.train_tokens, J.train_targets, order.subarray(step * B, (step + 1) * B)), []]);
  }
  runAround(device, s.e, 'train_step', around);
}

async function steps(s, count, perSubmit) {
  for (let left = count; left > 0;) {
    const k = Math.min(left, perSubmit);
    submitSteps(s, k);
    left -= k;
    s.inFlight.push(device.queue.onSubmittedWorkDone());
    if (s.inFlight.length > 2) await s.inFlight.shift();
  }
}

const sum = (v) => { let t = 0; for (const x of v) t += x; return t; };

async function drained(s, count, perSubmit) {
  const t0 = performance.now();
  await steps(s, count, perSubmit);
  const [losses] = await readParts(device, s.e, s.read, [[J.deltas, J.losses_at, J.rows * 4]]);
  s.inFlight = [];
  return [performance.now() - t0, sum(losses)];
}

async function validation(s) {
  const around = [];
  for (let k = 0; k < J.val_batches; k++) {
    const idx = Array.from({ length: B }, (_, j) => k * B + j);
    around.push([copies(J.val_tokens, J.val_targets, idx), [{ copy: [J.deltas, J.losses_at, J.results, J.slot_at + k * B * T * 4, B * T * 4] }]]);
  }
  runAround(device, s.e, 'eval_loss', around);
  const [losses] = await readParts(device, s.e, s.read, [[J.results, J.slot_at, J.val_batches * B * T * 4]]);
  return sum(losses) / J.val_counted;
}

function worst(got, want, bound) {
  let w = 0, at = 0;
  for (let i = 0; i < want.length; i++) {
    const gap = Math.abs(got[i] - want[i]);
    const r = !Number.isFinite(got[i]) ? Infinity : gap === 0 ? 0 : bound[i] > 0 ? gap / bound[i] : Infinity;
    if (r > w) { w = r; at = i; }
  }
  return [w, at];
}

async function verify() {
  const after = bin('verify_after.bin', Float32Array);
  const bound = bin('verify_bound.bin', Float64Array);
  const s = session();
  let all = 0;
  for (let k = 0; k < J.verify.steps; k++) {
    submitSteps(s, 1);
    const [p, m, v, losses] = await readParts(device, s.e, s.read, [[J.params, 0, P * 4], [J.m, 0, P * 4], [J.v, 0, P * 4], [J.deltas, J.losses_at, J.rows * 4]]);
    const o = 3 * P * k;
    const [wp, at] = worst(p, after.subarray(o, o + P), bound.subarray(o, o + P));
    const [wm] = worst(m, after.subarray(o + P, o + 2 * P), bound.subarray(o + P, o + 2 * P));
    const [wv] = worst(v, after.subarray(o + 2 * P, o + 3 * P), bound.subarray(o + 2 * P, o + 3 * P));
    const l = sum(losses);
    const wl = Math.abs(l - J.verify.loss_sums[k]) / J.verify.loss_bounds[k];
    const w = Math.max(wp, wm, wv, wl);
    console.log(`verify step ${k + 1}: worst |Dawn − twin| / bound: params ${wp.toFixed(3)} (at ${at}), m ${wm.toFixed(3)}, v ${wv.toFixed(3)}, summed row losses ${wl.toFixed(3)} (Dawn ${l.toFixed(4)}, twin ${J.verify.loss_sums[k].toFixed(4)}) → ${w <= 1 ? 'within the bound' : 'OUTSIDE the bound'}`);
    all = Math.max(all, w);
    if (!(w <= 1)) break;
  }
  destroy(s);
  return all;
}

const tsv = ['what\tper_submit\truns\tmedian\tmin\tmax\tunit\textra'];
const w = await verify();
if (!(w <= 1) || errors.message) {
  console.log(`NOT MEASURED: outside the twin's bound (${w}) ${errors.message || ''}`);
  tsv.push(`dawn-gpt-step\t0\t0\tNaN\tNaN\tNaN\tms\tFAILED verification ${w}`);
} else {
  for (const n of args.perSubmit) {
    const ms = [];
    for (let r = 0; r < args.runs; r++) {
      const s = session();
      await drained(s, 20, n);
      const [pilot] = await drained(s, 20, n);
      const count = Math.min(200000, Math.max(20, Math.ceil(args.minMs / (pilot / 20))));
      const [t, loss] = await drained(s, count, n);
      if (!Number.isFinite(loss)) throw new Error(`loss ${loss}`);
      console.log(`dawn ${n} per submit, run ${r + 1}: ${(t / count).toFixed(4)} ms/step (${count} steps${s.wrapped ? ', order repeated' : ''})`);
      ms.push(t / count);
      destroy(s);
    }
    const med = median(ms), lo = Math.min(...ms), hi = Math.max(...ms);
    console.log(`| dawn | ${n} per submit | ${med.toFixed(4)} ms/step | ${lo.toFixed(4)}–${hi.toFixed(4)} | ${(1000 / med).toFixed(0)} steps/s | verified ${J.verify.steps} steps, worst/bound ${w.toFixed(3)} |`);
    tsv.push(`dawn-gpt-step\t${n}\t${args.runs}\t${med}\t${lo}\t${hi}\tms\tverified ${J.verify.steps} steps, worst/bound ${w.toFixed(3)}`);
  }
  if (args.ttaSecs > 0) {
    const goal = 0.9 * J.bigram;
    console.log(`\ntime to a validation loss ≤ 90 % of the bigram's (${goal.toFixed(4)} nats/char; whole validation split every ${args.evalEvery} steps, ${args.ttaPerSubmit} steps a submission, for ${args.ttaSecs} s):`);
    const t0 = performance.now();
    const s = session();
    let at = null, best = Infinity, last = [NaN, 0, 0], i = 0;
    const first = await validation(s);
    console.log(`  ${((performance.now() - t0) / 1000).toFixed(3).padStart(8)} s  step       0  validation ${first.toFixed(4)}`);
    for (;;) {
      await steps(s, args.evalEvery, args.ttaPerSubmit);
      const loss = await validation(s);
      s.inFlight = [];
      const t = (performance.now() - t0) / 1000;
      if (t > args.ttaSecs) break;
      if (i < 40 || i % 10 === 0) console.log(`  ${t.toFixed(3).padStart(8)} s  step ${String(s.e.steps).padStart(7)}  validation ${loss.toFixed(4)}`);
      i++;
      last = [loss, t, s.e.steps];
      best = Math.min(best, loss);
      if (loss <= goal && !at) at = [t, s.e.steps, loss];
    }
    const fmt = (x) => (x ? `${x[0].toFixed(2)} s (step ${x[1]}, ${x[2].toFixed(4)})` : 'not reached');
    console.log(`| dawn | ≤ 90 % of bigram ${J.bigram.toFixed(4)}: ${fmt(at)} | at ${args.ttaSecs} s: ${last[0].toFixed(4)} (step ${last[2]}, best ${best.toFixed(4)}, ${(100 * best / J.bigram).toFixed(1)} % of the bigram) |${s.wrapped ? ' (batch order repeated after the dumped steps)' : ''}`);
    tsv.push(`dawn-gpt-to-90pc-bigram\t${args.ttaPerSubmit}\t1\t${at ? at[0] : 'NaN'}\t\t\ts\tstep ${at ? at[1] : '-'} bigram ${J.bigram}`);
    tsv.push(`dawn-gpt-val-at-limit\t${args.ttaPerSubmit}\t1\t${last[0]}\t\t\tnats/char\tat ${last[1].toFixed(2)} s step ${last[2]} best ${best}`);
    destroy(s);
  }
}
if (errors.message) { console.log(`device error: ${errors.message}`); process.exitCode = 1; }
if (args.out) writeFileSync(args.out, tsv.join('\n') + '\n');
process.exit(process.exitCode || 0);
