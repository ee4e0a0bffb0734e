// TensorFlow.js's WebGPU backend training the CNN page's default network (issue 24's reference):
// the same layers (conv 5×5 1→6 + bias + ReLU, 2×2 max-pool, conv 5×5 6→16 + bias + ReLU,
// 2×2 max-pool, dense 256→10, softmax cross-entropy, mean over the batch), the same optimiser
// (Adam, lr 0.001, β 0.9/0.999, ε 1e-7) and batch, on the same digits and batch order as the
// page (`bench dump-kernels --cnn`'s train_x.bin, order.bin), through Dawn's Node binding (npm
// `webgpu`, the same as `crates/bench/dawn/cnn.mjs`): `navigator.gpu` is Dawn's `create()`,
// set before the backend is imported (it registers itself only where `navigator.gpu` exists).
// tfjs's layout is NHWC (the page's is NCHW): the same arithmetic, another order in memory.
// Initial weights: tfjs's own (uniform, He-like scale), not the twin's.
//
// Each step uploads its batch (a fresh tensor, as the page's session writes its batch) and runs
// `optimizer.minimize`; nothing is read back until the run ends. Per batch: --runs whole runs
// (fresh variables and optimiser), 20 warm-up steps and a pilot of 20 drained steps, then
// ≥ --min-ms of steps drained by reading the last loss; ms/step = wall / steps; median,
// fastest, slowest. Then a training check: --check-steps steps at the first batch from fresh
// variables, the loss at the start and end, and the test accuracy (it really trains).
//
// Bundled with esbuild into one file to carry (crates/bench/h200/cnn.sh):
//   npx esbuild cnn_tfjs.mjs --bundle --platform=node --format=esm --outfile=cnn_tfjs.bundle.mjs
// Usage: node cnn_tfjs.bundle.mjs --dir D/cnn [--batches 64,256] [--runs 3] [--min-ms 1500]
//          [--check-steps 500] [--out tfjs_cnn.tsv]   (WEBGPU_MODULE: the binding's index.js)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const a = { dir: null, batches: [64, 256], runs: 3, minMs: 1500, checkSteps: 500, out: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const [k, v] = [argv[i], argv[i + 1]];
  if (k === '--dir') a.dir = v;
  else if (k === '--batches') a.batches = v.split(',').map(Number);
  else if (k === '--runs') a.runs = Number(v);
  else if (k === '--min-ms') a.minMs = Number(v);
  else if (k === '--check-steps') a.checkSteps = Number(v);
  else if (k === '--out') a.out = v;
  else throw new Error(`unknown flag ${k}`);
}
if (!a.dir) throw new Error('--dir D/cnn (from `bench dump-kernels --cnn`) is required');

const mod = await import(process.env.WEBGPU_MODULE ? pathToFileURL(process.env.WEBGPU_MODULE).href : 'webgpu');
Object.assign(globalThis, mod.globals);
const gpu = mod.create([]);
Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
const tf = await import('@tensorflow/tfjs-core');
// tfjs-core alone registers no gradients (the `@tensorflow/tfjs` package imports these).
await import('@tensorflow/tfjs-core/dist/register_all_gradients');
await import('@tensorflow/tfjs-backend-webgpu');
if (!(await tf.setBackend('webgpu'))) throw new Error('tfjs: the webgpu backend did not start');
await tf.ready();
const info = tf.backend().adapterInfo || {};
console.log(`tfjs ${tf.version_core}, backend ${tf.getBackend()}, adapter ${info.vendor || ''} ${info.architecture || ''} (Dawn, npm webgpu)`);

const J = JSON.parse(readFileSync(join(a.dir, 'cnn.json'), 'utf8'));
const bin = (name, T) => {
  const b = readFileSync(join(a.dir, name));
  return new T(b.buffer, b.byteOffset, b.byteLength / T.BYTES_PER_ELEMENT);
};
const trainX = bin('train_x.bin', Float32Array);
const trainY = bin('train_y.bin', Uint32Array);
const testX = bin('test_x.bin', Float32Array);
const testY = bin('test_y.bin', Uint32Array);
const order = bin('order.bin', Uint32Array);
const side = J.side, px = side * side, n = J.train, C = J.classes;
const [c1, c2] = J.spec.channels;
const [k1, k2] = J.spec.kernels;
if (J.spec.optimiser !== 'adam') throw new Error('this reference trains the default (Adam)');

function model() {
  const he = (shape, fanIn) => tf.variable(tf.randomUniform(shape, -Math.sqrt(6 / fanIn), Math.sqrt(6 / fanIn)));
  const s1 = side - k1 + 1, p1 = Math.floor(s1 / 2), s2 = p1 - k2 + 1, p2 = Math.floor(s2 / 2);
  const d = p2 * p2 * c2;
  const v = {
    w1: he([k1, k1, 1, c1], k1 * k1), b1: tf.variable(tf.zeros([c1])),
    w2: he([k2, k2, c1, c2], k2 * k2 * c1), b2: tf.variable(tf.zeros([c2])),
    wd: he([d, C], d), bd: tf.variable(tf.zeros([C])),
  };
  const forward = (x) => {
    const h1 = tf.relu(tf.add(tf.conv2d(x, v.w1, 1, 'valid'), v.b1));
    const q1 = tf.maxPool(h1, 2, 2, 'valid');
    const h2 = tf.relu(tf.add(tf.conv2d(q1, v.w2, 1, 'valid'), v.b2));
    const q2 = tf.maxPool(h2, 2, 2, 'valid');
    return tf.add(tf.matMul(tf.reshape(q2, [-1, d]), v.wd), v.bd);
  };
  const opt = tf.train.adam(J.spec.lr, 0.9, 0.999, 1e-7);
  return { v, forward, opt, list: Object.values(v) };
}

function dispose(m) {
  for (const t of m.list) t.dispose();
  m.opt.dispose();
}

// Step s's batch in the page's order (order.bin's epochs, repeated past them).
function batchTensors(s, B, xb, yb) {
  for (let i = 0; i < B; i++) {
    const t = s * B + i;
    const e = Math.floor(t / n) % J.epochs;
    const idx = order[e * n + (t % n)];
    xb.set(trainX.subarray(idx * px, (idx + 1) * px), i * px);
    yb[i] = trainY[idx];
  }
  return [tf.tensor4d(xb, [B, side, side, 1]), tf.oneHot(tf.tensor1d(yb, 'int32'), C)];
}

function makeTrainer(B) {
  const m = model();
  const xb = new Float32Array(B * px), yb = new Int32Array(B);
  let s = 0, last = null;
  const step = () => {
    const [x, y] = batchTensors(s, B, xb, yb);
    const loss = m.opt.minimize(() => tf.losses.softmaxCrossEntropy(y, m.forward(x)), true, m.list);
    x.dispose(); y.dispose();
    if (last) last.dispose();
    last = loss;
    s++;
  };
  const drained = async (count) => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) step();
    const l = (await last.data())[0];
    return [performance.now() - t0, l];
  };
  return { m, step, drained, done: () => { if (last) last.dispose(); dispose(m); } };
}

const median = (v) => { const s = [...v].sort((x, y) => x - y); const k = s.length; return k % 2 ? s[(k - 1) / 2] : (s[k / 2 - 1] + s[k / 2]) / 2; };
const tsv = ['what\tbatch\truns\tmedian\tmin\tmax\tunit\textra'];
for (const B of a.batches) {
  const ms = [];
  for (let r = 0; r < a.runs; r++) {
    const t = makeTrainer(B);
    await t.drained(20);
    const [pilot] = await t.drained(20);
    const count = Math.min(100000, Math.max(20, Math.ceil(a.minMs / (pilot / 20))));
    const [w, loss] = await t.drained(count);
    console.log(`tfjs-webgpu batch ${B} run ${r + 1}: ${(w / count).toFixed(4)} ms/step (${(1000 * count / w).toFixed(0)} steps/s, ${count} steps, last loss ${loss.toFixed(4)}, tensors ${tf.memory().numTensors})`);
    ms.push(w / count);
    t.done();
  }
  const med = median(ms), lo = Math.min(...ms), hi = Math.max(...ms);
  console.log(`| tfjs-webgpu | ${B} | ${med.toFixed(4)} ms | ${(1000 / med).toFixed(0)} steps/s | ${lo.toFixed(4)}–${hi.toFixed(4)} ms | ${(B * 1000 / med).toFixed(0)} samples/s |`);
  tsv.push(`tfjs-step\t${B}\t${a.runs}\t${med}\t${lo}\t${hi}\tms\ttfjs ${tf.version_core}`);
}

if (a.checkSteps > 0) {
  const B = a.batches[0];
  const t = makeTrainer(B);
  const [, first] = await t.drained(1);
  const losses = [];
  for (let i = 1; i < a.checkSteps; i += 50) losses.push((await t.drained(Math.min(50, a.checkSteps - i)))[1]);
  const logits = tf.tidy(() => t.m.forward(tf.tensor4d(testX, [testY.length, side, side, 1])));
  const pred = await tf.argMax(logits, 1).data();
  logits.dispose();
  let correct = 0;
  for (let i = 0; i < testY.length; i++) correct += pred[i] === testY[i] ? 1 : 0;
  const acc = correct / testY.length;
  const last = losses[losses.length - 1];
  console.log(`training check (batch ${B}, ${a.checkSteps} steps): loss ${first.toFixed(4)} at step 1 → ${last.toFixed(4)} at step ${a.checkSteps} (every 50: ${losses.map((l) => l.toFixed(3)).join(' ')}); test accuracy ${(acc * 100).toFixed(1)} % → ${last < first / 2 && acc > 0.5 ? 'it trains' : 'NOT TRAINING'}`);
  tsv.push(`tfjs-check\t${B}\t1\t${acc}\t${first}\t${last}\tfraction\ttest accuracy after ${a.checkSteps} steps; loss first, last`);
  t.done();
}
if (a.out) writeFileSync(a.out, tsv.join('\n') + '\n');
process.exit(0);
