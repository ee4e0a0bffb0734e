// TensorFlow.js's WebGPU backend training the engine's GPT (issue 39's peer for the training
// step): the model of `crates/gpt/src/model.rs` (`gpu_runtime::engine::gpt::model`), written
// with tfjs ops and trained by tfjs's own Adam, through Dawn's Node binding (npm `webgpu`, as
// `cnn_tfjs.mjs`): `navigator.gpu` is Dawn's `create()`, set before the backend is imported.
//
// The model, per `bench dump-kernels --gpt-peer`'s gpt.json (shape, batch, constants) and
// params.bin (the engine's seeded initial parameters, `gpt::ParamLayout` order):
//   x = wte[token] + wpe[position]                                   (rows n = windows × context)
//   per block: x += proj(attention(qkv(LayerNorm(x))));  x += out(GELU(fc(LayerNorm(x))))
//     LayerNorm: (x − mean)/√(var + 1e-5)·γ + β over the width, biased variance
//     attention: causal, h heads of hs; softmax((q·kᵀ)/√hs + mask)·v, masked scores −1e9
//     GELU: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//   LayerNorm, head (no bias), softmax cross-entropy averaged over the rows whose target is
//   not IGNORE (tfjs's SUM_BY_NONZERO_WEIGHTS with weight 0 on them).
//   Adam (tf.train.adam) with the engine's lr, β₁, β₂ and ε (cpu_kernels::optim).
// The one difference from the engine: its head also has a bias (vocab numbers, zero at the
// start); this peer has none, as `gpt::Model` (the reference) has none. One step here is one
// `optimizer.minimize` (forward, backward, Adam) on the batch, uploaded with the step.
//
// Verification first (a peer's time counts only for a verified result): from the dumped
// parameters, 3 steps on the dumped batch; the loss before any step and after each (what
// `minimize` returns is the loss before its update) must be within gpt.json's bound of the
// f64 reference (crates/bench/src/gpt_peer.rs derives it). Otherwise it exits 1, untimed.
//
// Timing: --runs whole runs, each from fresh variables (the dumped ones) and a fresh
// optimiser: 20 warm-up steps, a pilot of 20 steps drained, then ≥ --min-ms of steps back to
// back drained by reading the last loss (await data()); ms/step = wall / steps; median, fastest,
// slowest over the runs.
//
// --sabotage gelu|mask|ln-eps: a deliberate mistake in the model (GELU's √(2/π) replaced by
// 2/π, no causal mask, LayerNorm's ε 1e-3), to see the verification refuse it.
//
// Bundled with esbuild into one file to carry (crates/bench/h200/gpt_tfjs.sh pack); the banner
// gives the bundle a `require` (tfjs-core's Node build requires `util`, which an ES module
// bundle cannot otherwise):
//   npx esbuild gpt_tfjs.mjs --bundle --platform=node --format=esm --outfile=gpt_tfjs.bundle.mjs \
//     --banner:js="import { createRequire as __peerRequire } from 'node:module'; const require = __peerRequire(import.meta.url);"
// Usage: node gpt_tfjs.bundle.mjs --dir D/gpt-peer [--runs 3] [--min-ms 1500] [--warmup 20]
//          [--out tfjs_gpt.tsv] [--sabotage …]   (WEBGPU_MODULE: the binding's index.js)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const a = { dir: null, runs: 3, minMs: 1500, warmup: 20, out: null, sabotage: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const [k, v] = [argv[i], argv[i + 1]];
  if (v === undefined) throw new Error(`${k} needs a value`);
  if (k === '--dir') a.dir = v;
  else if (k === '--runs') a.runs = Number(v);
  else if (k === '--min-ms') a.minMs = Number(v);
  else if (k === '--warmup') a.warmup = Number(v);
  else if (k === '--out') a.out = v;
  else if (k === '--sabotage') a.sabotage = v;
  else throw new Error(`unknown flag ${k}`);
}
if (!a.dir) throw new Error('--dir D/gpt-peer (from `bench dump-kernels --gpt-peer default`) is required');
if (a.sabotage && !['gelu', 'mask', 'ln-eps'].includes(a.sabotage)) throw new Error(`--sabotage gelu|mask|ln-eps, not ${a.sabotage}`);

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

const J = JSON.parse(readFileSync(join(a.dir, 'gpt.json'), 'utf8'));
const bin = (name, T) => {
  const b = readFileSync(join(a.dir, name));
  return new T(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};
const params = bin(J.params.file, Float32Array);
const tokensU = bin(J.tokens, Uint32Array);
const targetsU = bin(J.targets, Uint32Array);
const { vocab: V, context: T, width: C, heads: H, layers: L, head_size: HS } = J.config;
const B = J.batch, N = B * T;
if (params.length !== J.params.count || tokensU.length !== N || targetsU.length !== N) {
  throw new Error(`gpt.json and its files disagree: ${params.length} params, ${tokensU.length} tokens for ${N} rows`);
}
// The batch as tfjs takes it: token ids, targets with IGNORE as class 0 and weight 0.
const tokens = Int32Array.from(tokensU);
const targets = Int32Array.from(targetsU, (g) => (g === J.ignore ? 0 : g));
const weights = Float32Array.from(targetsU, (g) => (g === J.ignore ? 0 : 1));
const gelu_c = a.sabotage === 'gelu' ? 2 / Math.PI : J.gelu.c;
const ln_eps = a.sabotage === 'ln-eps' ? 1e-3 : J.ln_eps;
console.log(`GPT ${L} layers, ${H} heads of ${HS}, width ${C}, context ${T}, vocab ${V}; ${B} windows (${N} rows, ${J.counted} counted); ${J.params.count} parameters; Adam lr ${J.adam.lr}${a.sabotage ? `; SABOTAGED: ${a.sabotage}` : ''}`);

// The causal mask, added to the scores: 0 where key j ≤ query i, −1e9 after (finite: its
// exp after the max is subtracted is exactly 0 in f32).
const maskBias = tf.tidy(() => {
  const m = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = a.sabotage === 'mask' ? 0 : -1e9;
  return tf.tensor2d(m, [T, T]);
});
const scale = 1 / Math.sqrt(HS);

function model() {
  const v = {};
  for (const t of J.params.tensors) {
    const n = t.shape.reduce((x, y) => x * y, 1);
    v[t.name] = tf.tidy(() => tf.variable(tf.tensor(params.subarray(t.offset, t.offset + n), t.shape)));
  }
  const layerNorm = (x, g, b) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, ln_eps))), g), b);
  };
  const linear = (x, w, b) => (b ? tf.add(tf.matMul(x, w), b) : tf.matMul(x, w));
  const heads = (x) => tf.transpose(tf.reshape(x, [B, T, H, HS]), [0, 2, 1, 3]); // [B, H, T, HS]
  const gelu = (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.tanh(tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), J.gelu.a)), gelu_c))));
  const logits = (tok) => {
    let x = tf.add(tf.reshape(tf.gather(v.wte, tok), [B, T, C]), v.wpe);
    x = tf.reshape(x, [N, C]);
    for (let l = 0; l < L; l++) {
      const p = (k) => v[`h${l}.${k}`];
      const qkv = linear(layerNorm(x, p('ln1_g'), p('ln1_b')), p('qkv_w'), p('qkv_b'));
      const [q, k, val] = tf.split(qkv, 3, 1).map(heads);
      const s = tf.add(tf.mul(tf.matMul(q, k, false, true), scale), maskBias);
      const att = tf.reshape(tf.transpose(tf.matMul(tf.softmax(s), val), [0, 2, 1, 3]), [N, C]);
      x = tf.add(x, linear(att, p('proj_w'), p('proj_b')));
      const h = gelu(linear(layerNorm(x, p('ln2_g'), p('ln2_b')), p('fc_w'), p('fc_b')));
      x = tf.add(x, linear(h, p('out_w'), p('out_b')));
    }
    return tf.matMul(layerNorm(x, v.lnf_g, v.lnf_b), v.head);
  };
  const opt = tf.train.adam(J.adam.lr, J.adam.beta1, J.adam.beta2, J.adam.epsilon);
  return { logits, opt, list: Object.values(v) };
}

function makeTrainer() {
  const m = model();
  let last = null;
  const step = () => {
    // The step's batch, uploaded as the page's session writes its batch.
    const tok = tf.tensor1d(tokens, 'int32');
    const tgt = tf.tensor1d(targets, 'int32');
    const w = tf.tensor1d(weights);
    const loss = m.opt.minimize(() => tf.losses.softmaxCrossEntropy(tf.oneHot(tgt, V), m.logits(tok), w), true, m.list);
    tok.dispose(); tgt.dispose(); w.dispose();
    if (last) last.dispose();
    last = loss;
  };
  // dataSync() would need an OffscreenCanvas on this backend (none in Node): await data().
  const drained = async (count) => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) step();
    const l = (await last.data())[0];
    return [performance.now() - t0, l];
  };
  const done = () => {
    if (last) last.dispose();
    for (const t of m.list) t.dispose();
    m.opt.dispose();
  };
  return { step, drained, done };
}

// Verification: the losses before any step and after each of the reference's steps.
{
  const t = makeTrainer();
  const got = [];
  for (let k = 0; k < J.reference.loss.length; k++) got.push((await t.drained(1))[1]);
  t.done();
  let ok = true;
  for (let k = 0; k < got.length; k++) {
    const [ref, tol] = [J.reference.loss[k], J.reference.tol[k]];
    const err = Math.abs(got[k] - ref);
    const pass = Number.isFinite(got[k]) && err <= tol;
    ok &&= pass;
    console.log(`verify: after ${J.reference.steps[k]} steps loss ${got[k].toFixed(7)}, f64 reference ${ref.toFixed(7)}, |Δ| ${err.toExponential(2)} ${pass ? '≤' : '>'} bound ${tol.toExponential(2)} (f32 twin |Δ| ${Math.abs(J.reference.twin_f32[k] - ref).toExponential(2)}) ${pass ? 'ok' : 'FAIL'}`);
  }
  if (!ok) {
    console.log('verification FAILED: not timed (a peer\'s time counts only for a verified result)');
    process.exit(1);
  }
  console.log(`verification passed (${got.length} losses within the bound); tensors ${tf.memory().numTensors}`);
}

const median = (v) => { const s = [...v].sort((x, y) => x - y); const k = s.length; return k % 2 ? s[(k - 1) / 2] : (s[k / 2 - 1] + s[k / 2]) / 2; };
const ms = [];
for (let r = 0; r < a.runs; r++) {
  const t = makeTrainer();
  await t.drained(a.warmup);
  const [pilot] = await t.drained(20);
  const count = Math.min(100000, Math.max(20, Math.ceil(a.minMs / (pilot / 20))));
  const [w, loss] = await t.drained(count);
  console.log(`tfjs-webgpu gpt run ${r + 1}: ${(w / count).toFixed(4)} ms/step (${(1000 * count / w).toFixed(1)} steps/s, ${count} steps after ${a.warmup + 20}, last loss ${loss.toFixed(4)}, tensors ${tf.memory().numTensors})`);
  ms.push(w / count);
  t.done();
}
const med = median(ms), lo = Math.min(...ms), hi = Math.max(...ms);
const shape = `L${L} H${H} C${C} T${T} V${V}`;
console.log(`| tfjs-webgpu GPT step | ${shape}, ${B} windows | ${med.toFixed(4)} ms | ${(1000 / med).toFixed(1)} steps/s | ${lo.toFixed(4)}–${hi.toFixed(4)} ms | ${a.runs} runs |`);
const tsv = ['what\tbatch\truns\tmedian\tmin\tmax\tunit\textra'];
tsv.push(`tfjs-gpt-step\t${B}\t${a.runs}\t${med}\t${lo}\t${hi}\tms\ttfjs ${tf.version_core}; ${shape}; ${info.vendor || ''} ${info.architecture || ''}`);
console.log(tsv.join('\n'));
if (a.out) writeFileSync(a.out, tsv.join('\n') + '\n');
process.exit(0);
