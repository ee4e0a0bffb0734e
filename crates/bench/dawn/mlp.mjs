// The train view's MLP training step (2-16-16-2, ReLU, Adam, `bench mlp`'s spiral data)
// through Dawn — the WebGPU of Chrome and Edge, via its Node binding (npm `webgpu`) — run
// exactly as `TrainingSession` runs it through wgpu, with nothing of it written twice:
// `bench dump-kernels --dir D --mlp 1024,64` writes D/mlp/ (the composed WGSL, each dispatch's
// kernel, grid, uniform words and both parities' bound buffers, the buffers and their initial
// contents, the training set in batch order, Adam's correction table and the CPU twin's
// parameters after `verify_steps` steps; `crates/bench/src/mlp_bench.rs`, `dump`).
//
// A step, as the session (`TrainingSession::steps`, `ResidentPlan::encode`): nothing is written
// from the CPU; the step ends the compute pass before it (clearing the gradients first where
// the plan sums into them) and runs every dispatch of the plan in one compute pass, binding
// the double-buffered step state by the step's parity. K steps per submit: K such passes in
// one command buffer, one submit.
//
// 1. Verify (each batch and K): a fresh session trains `verify_steps` steps, K per submit,
//    its parameters are read back and each must be within the session's bound of the twin's
//    (`param_gap_ratio`: |Dawn − twin| ≤ the batch's `param_ulps_per_step` per step · ε ·
//    max(|twin|, 1), dumped with the batch). Outside: not timed.
// 2. Speed, as `bench mlp`: --runs whole runs (fresh session each), 3 warm-up steps submitted
//    one at a time and drained, then --steps steps submitted K at a time back to back and
//    drained (onSubmittedWorkDone); µs/step = wall time / steps; median, fastest, slowest.
//
// Usage: node mlp.mjs --dir D/mlp [--batches 1024,64] [--per-submit 1,64] [--steps 10000]
//          [--runs 3] [--out dawn_mlp.tsv] [--flag dawn-toggle]…
// WEBGPU_MODULE may point at the binding's index.js.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function parseArgs(argv) {
  const a = { dir: null, batches: null, perSubmit: [1, 64], steps: 10000, runs: 3, out: null, flags: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--dir') a.dir = v;
    else if (k === '--batches') a.batches = v.split(',').map(Number);
    else if (k === '--per-submit') a.perSubmit = v.split(',').map(Number);
    else if (k === '--steps') a.steps = Number(v);
    else if (k === '--runs') a.runs = Number(v);
    else if (k === '--out') a.out = v;
    else if (k === '--flag') a.flags.push(v);
    else throw new Error(`unknown flag ${k}`);
  }
  if (!a.dir) throw new Error('--dir D/mlp (from `bench dump-kernels --mlp`) is required');
  return a;
}

const median = (v) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
const EPS32 = 2 ** -23;

const args = parseArgs(process.argv.slice(2));
const J = JSON.parse(readFileSync(join(args.dir, 'mlp.json'), 'utf8'));
const file = (name) => {
  const b = readFileSync(join(args.dir, name));
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
};
const f32 = (name) => { const b = file(name); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); };

const mod = await import(process.env.WEBGPU_MODULE ? pathToFileURL(process.env.WEBGPU_MODULE).href : 'webgpu');
Object.assign(globalThis, mod.globals);
const gpu = mod.create(args.flags);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter) throw new Error('no adapter');
const info = adapter.info || {};
console.log(`adapter: ${info.vendor} ${info.architecture} ${info.device} ${info.description} (Dawn, npm webgpu)${args.flags.length ? ' flags ' + args.flags.join(' ') : ''}`);
const device = await adapter.requestDevice({
  requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  },
});
let deviceError = null;
device.addEventListener?.('uncapturederror', (e) => { deviceError = e.error?.message || String(e); });

const pipelines = new Map();
device.pushErrorScope('validation');
for (const k of J.kernels) {
  const module = device.createShaderModule({ code: k.wgsl });
  pipelines.set(k.id, device.createComputePipeline({
    layout: 'auto', compute: { module, entryPoint: k.entry_point, constants: k.constants },
  }));
}
const compileErr = await device.popErrorScope();
if (compileErr) throw new Error(`compiling: ${compileErr.message}`);

const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
// Uniform blocks in multiples of 16 bytes, as `ResidentPlan`.
const uniformBytes = Math.max(16, Math.ceil(J.uniform_words * 4 / 16) * 16);

// A session: the batch's buffers, a uniform per dispatch and a bind group per parity.
function makeSession(plan) {
  const bufs = new Map();
  for (const b of plan.buffers) {
    const size = Math.max(4, Math.ceil((b.file ? b.bytes : b.zeroed) / 4) * 4);
    const buf = device.createBuffer({ size, usage: STORAGE });
    if (b.file) device.queue.writeBuffer(buf, 0, file(b.file));
    bufs.set(b.name, buf);
  }
  const uniforms = [];
  const step = plan.step.map((d) => {
    const uniform = device.createBuffer({ size: uniformBytes, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(uniform, 0, new Uint32Array(d.uniform));
    uniforms.push(uniform);
    const pipeline = pipelines.get(d.kernel);
    const groups = d.variants.map((names) => {
      const entries = names.map((n, i) => ({ binding: i, resource: { buffer: bufs.get(n) } }));
      entries.push({ binding: names.length, resource: { buffer: uniform } });
      return device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    });
    return { pipeline, groups, wg: d.workgroups };
  });
  const read = device.createBuffer({ size: Math.max(J.params, plan.batch) * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return { plan, bufs, step, uniforms, read, submitted: 0 };
}

function destroy(s) {
  for (const b of s.bufs.values()) b.destroy();
  for (const u of s.uniforms) u.destroy();
  s.read.destroy();
}

// `count` steps in one command buffer, one submit (`TrainingSession::steps`).
function steps(s, count) {
  const enc = device.createCommandEncoder();
  for (let i = 0; i < count; i++) {
    const parity = (s.submitted + i) % 2;
    if (s.plan.clear_grads) enc.clearBuffer(s.bufs.get('mlp grads'));
    const pass = enc.beginComputePass();
    for (const d of s.step) {
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.groups[parity]);
      pass.dispatchWorkgroups(d.wg[0], d.wg[1], d.wg[2]);
    }
    pass.end();
  }
  device.queue.submit([enc.finish()]);
  s.submitted += count;
}

async function readF32(s, name, bytes) {
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(s.bufs.get(name), 0, s.read, 0, bytes);
  device.queue.submit([enc.finish()]);
  await s.read.mapAsync(GPUMapMode.READ, 0, bytes);
  const out = new Float32Array(s.read.getMappedRange(0, bytes).slice(0));
  s.read.unmap();
  return out;
}

// `param_gap_ratio`: the largest |got − twin| / (ulps · steps · ε · max(|twin|, 1)).
function gapRatio(got, twin, n, ulpsPerStep) {
  let w = 0, at = 0;
  for (let i = 0; i < twin.length; i++) {
    if (!Number.isFinite(got[i])) return [Infinity, i];
    const bound = ulpsPerStep * n * EPS32 * Math.max(Math.abs(twin[i]), 1);
    const r = Math.abs(got[i] - twin[i]) / bound;
    if (r > w) { w = r; at = i; }
  }
  return [w, at];
}

const tsv = ['path\tchecks\tbatch\tper_submit\tdispatches\truns\tsteps\tmedian_us\tmin_us\tmax_us\tverify_steps\tworst_over_bound'];
const batches = args.batches || J.batches.map((b) => b.batch);
const table = [];
for (const B of batches) {
  const plan = J.batches.find((b) => b.batch === B);
  if (!plan) throw new Error(`batch ${B} was not dumped`);
  const twin = f32(plan.twin);
  for (const K of args.perSubmit) {
    // 1. Verify.
    const V = J.verify_steps;
    const v = makeSession(plan);
    for (let left = V; left > 0; left -= Math.min(left, K)) steps(v, Math.min(left, K));
    const got = await readF32(v, 'mlp params', J.params * 4);
    destroy(v);
    const [w, at] = gapRatio(got, twin, V, plan.ulps_per_step);
    const ok = w <= 1 && !deviceError;
    console.log(`verify batch ${B}, ${K} per submit: ${V} steps next to the CPU twin, worst |Dawn − twin| / bound ${w.toFixed(4)} (param ${at}: Dawn ${got[at]}, twin ${twin[at]}) → ${ok ? 'within the bound' : 'OUTSIDE the bound: not timed'}${deviceError ? ' ' + deviceError : ''}`);
    if (!ok) {
      tsv.push(`dawn\tdawn\t${B}\t${K}\t${plan.step.length}\t0\t${args.steps}\tNaN\tNaN\tNaN\t${V}\t${w}`);
      continue;
    }
    // 2. Speed.
    const us = [];
    for (let r = 0; r < args.runs; r++) {
      const s = makeSession(plan);
      for (let i = 0; i < 3; i++) steps(s, 1);
      await device.queue.onSubmittedWorkDone();
      const t0 = performance.now();
      for (let left = args.steps; left > 0; left -= Math.min(left, K)) steps(s, Math.min(left, K));
      await device.queue.onSubmittedWorkDone();
      const t = performance.now() - t0;
      const losses = await readF32(s, 'mlp losses', B * 4);
      let loss = 0; for (const l of losses) loss += l; loss /= B;
      if (!Number.isFinite(loss)) throw new Error(`batch ${B}: loss ${loss}`);
      us.push(1000 * t / args.steps);
      console.log(`dawn batch ${B}, ${K} per submit, run ${r + 1}: ${(1000 * t / args.steps).toFixed(2)} µs/step (${args.steps} steps, last batch loss ${loss.toFixed(4)})`);
      destroy(s);
    }
    const med = median(us), lo = Math.min(...us), hi = Math.max(...us);
    table.push(`| dawn | ${B} | ${plan.step.length} | ${K} | ${med.toFixed(1)} | ${lo.toFixed(1)} … ${hi.toFixed(1)} | ${w.toFixed(4)} |`);
    tsv.push(`dawn\tdawn\t${B}\t${K}\t${plan.step.length}\t${args.runs}\t${args.steps}\t${med}\t${lo}\t${hi}\t${V}\t${w}`);
  }
}
console.log(`\nTraining step through Dawn, µs per step, wall clock over ${args.steps} steps, median of ${args.runs} whole runs, spread = min … max:\n`);
console.log('| path | batch | dispatches | steps per submit | median µs | spread µs | worst gap / bound |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of table) console.log(row);
if (deviceError) { console.log(`device error: ${deviceError}`); process.exitCode = 1; }
if (args.out) writeFileSync(args.out, tsv.join('\n') + '\n');
process.exit(process.exitCode || 0);
