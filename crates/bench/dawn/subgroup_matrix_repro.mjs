// A minimal reproduction of the Dawn subgroup-matrix crash (issue 25, TOOLCHAIN.md §8): Dawn's
// Node binding (npm `webgpu` 0.6.2) on the H200 ran a plain `chromium_experimental_subgroup_matrix`
// kernel exactly once and then died on later dispatches (SIGSEGV, futex error, glibc mutex
// assertion; i8 ran 200+ dispatches at 1024³ but crashed at 2048³/4096³ or on a second problem).
//
// Each VARIANT runs in its OWN process (one Dawn instance per process, so one crash cannot take
// the others down), and changes one thing at a time from a base that worked once:
//   size 1024 | 2048 | 4096, config f16 (f16 -> f32) | i8 (i8 -> i32), dispatches 1 | 50 (each its
//   own submission, waited for), readback or not, buffers destroyed at the end or not, one
//   problem or two (fresh buffers, same pipeline; or `reuse`: the first problem's buffers
//   rewritten, a new bind group), one Dawn instance or two; plus controls: a plain f32
//   kernel under the same toggles (4096³ × 50, and two problems), and f16 without
//   `vulkan_enable_f16_on_nvidia`; and, after one problem's readback, ONE more action (a
//   dispatch, a writeBuffer, an empty submission), with and without the subgroup-matrix
//   kernel and the toggles: on Mesa 26's lavapipe (2026-12-04) a second problem crashed the
//   process (SIGSEGV) with the plain f32 kernel too, so the trigger looked like "work after a
//   readback", not subgroup matrices (`waited` variants, reading back as run.mjs does, died
//   too). The cause found next (2026-12-04, lavapipe 26, node 20, `webgpu` 0.6.2): the
//   object `create()` returns is NOT kept alive by its adapter or device. Once nothing in
//   JavaScript refers to it, V8 may collect it, and the next submission or wait on the
//   device crashes (SIGSEGV; with `node --expose-gc` and gc() right after requestDevice,
//   every time; without, whenever a collection happens to run, so larger problems, which
//   allocate more, die sooner). Every variant below therefore KEEPS the instance
//   (globalThis) unless it says `instance-dropped`; those drop it, and `-gc` ones force a
//   collection after requestDevice and after every dispatch, so the H200 run shows whether
//   this one lifetime bug explains all of the issue's crashes.
// Per variant it prints the outcome: exit code or signal, timed out or not, how far the child
// got (its last STEP line, written synchronously so a crash cannot swallow it), whether every
// checked element was EXACT (inputs are small integers, so every product and sum is exact in
// f32 and i32: the right answer has one value), and the last lines of its stderr.
//
// The kernel: one subgroup per workgroup (workgroup size = the adapter's subgroupMaxSize), each
// computing a 2×2 block of result tiles straight from storage (no shared memory), the config's
// M×N×K tiles taken from adapter.info.subgroupMatrixConfigs: f16 uses the largest f16 -> f32
// config (16×16×16 on the H200), i8 the largest i8 -> i32 one (16×16×32; inputs as array<i32>
// holding four i8 each, offsets and strides in i8 elements).
//
// Usage (driver): node subgroup_matrix_repro.mjs [--out results.jsonl] [--timeout-s 40]
//                   [--budget-s 300] [--only name,name] [--list]
//         (child): node subgroup_matrix_repro.mjs --child '<variant JSON>'
// WEBGPU_MODULE may point at the binding's index.js (as for run.mjs); REPRO_LOADER, see runChild.
import { spawn } from 'node:child_process';
import { writeFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const UNSAFE_F16 = 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia';
const UNSAFE = 'enable-dawn-features=allow_unsafe_apis';

// The base and one change at a time (then a few combinations the issue names).
function variants() {
  const base = { config: 'f16', size: 1024, dispatches: 1, readback: true, destroy: false,
    problems: 1, instances: 1, kernel: 'matrix', flags: [UNSAFE_F16] };
  const v = (name, change) => ({ name, ...base, ...change });
  const list = [];
  for (const config of ['f16', 'i8']) {
    const f = config === 'i8' ? [UNSAFE] : [UNSAFE_F16];
    const c = (name, change) => list.push(v(`${config}-${name}`, { config, flags: f, ...change }));
    c('1024-d1', {});
    c('1024-d50', { dispatches: 50 });
    c('1024-d50-noreadback', { dispatches: 50, readback: false });
    c('1024-d1-destroy', { destroy: true });
    c('1024-d50-destroy', { dispatches: 50, destroy: true });
    c('1024-two-problems', { problems: 2 });
    c('1024-two-problems-destroy', { problems: 2, destroy: true });
    c('1024-two-problems-reuse', { problems: 2, reuse: true });
    // After one problem's readback (mapAsync, copy, unmap): one more action, then wait.
    c('1024-readback-then-dispatch', { after: 'dispatch' });
    c('1024-readback-then-write', { after: 'write' });
    c('1024-readback-then-empty-submit', { after: 'empty' });
    c('1024-readback-destroyed-then-dispatch', { after: 'dispatch', destroyReadback: true });
    // As crates/bench/dawn/run.mjs reads back: onSubmittedWorkDone BEFORE mapAsync.
    c('1024-waited-readback-then-dispatch', { after: 'dispatch', waitBeforeMap: true });
    c('1024-waited-two-problems', { problems: 2, waitBeforeMap: true });
    c('2048-d1', { size: 2048 });
    c('2048-d50', { size: 2048, dispatches: 50 });
    c('4096-d1', { size: 4096 });
    c('4096-d1-noreadback', { size: 4096, readback: false });
    c('4096-d50', { size: 4096, dispatches: 50 });
  }
  // The instance's lifetime: dropped (as a script whose `create()` result is a dead local),
  // with and without forced collections, for the plain kernel and both configs.
  for (const [config, kernel, f] of [['f16', 'plain', [UNSAFE_F16]], ['f16', 'matrix', [UNSAFE_F16]], ['i8', 'matrix', [UNSAFE]]]) {
    const tag = kernel === 'plain' ? 'plain' : config;
    list.push(v(`instance-dropped-gc-${tag}-1024-d1`, { config, kernel, flags: f, dropInstance: true, gc: true }));
    list.push(v(`instance-kept-gc-${tag}-1024-d50`, { config, kernel, flags: f, dispatches: 50, gc: true }));
    list.push(v(`instance-dropped-${tag}-4096-d50`, { config, kernel, flags: f, size: 4096, dispatches: 50, dropInstance: true }));
    list.push(v(`instance-dropped-${tag}-1024-two-problems`, { config, kernel, flags: f, problems: 2, dropInstance: true }));
  }
  // Controls: the same process and toggles without subgroup matrices; f16 without the f16
  // toggle (expected: no shader-f16, so the variant says so); two Dawn instances.
  list.push(v('control-f32-plain-4096-d50', { kernel: 'plain', size: 4096, dispatches: 50 }));
  list.push(v('control-f32-plain-1024-two-problems', { kernel: 'plain', problems: 2 }));
  list.push(v('control-f32-plain-1024-readback-then-dispatch', { kernel: 'plain', after: 'dispatch' }));
  list.push(v('control-f32-plain-1024-readback-then-empty-submit', { kernel: 'plain', after: 'empty' }));
  list.push(v('control-f32-plain-no-toggles-readback-then-dispatch', { kernel: 'plain', after: 'dispatch', flags: [] }));
  list.push(v('control-f32-plain-no-toggles-waited-readback-then-dispatch', { kernel: 'plain', after: 'dispatch', flags: [], waitBeforeMap: true }));
  list.push(v('control-f16-no-f16-toggle', { flags: [UNSAFE] }));
  list.push(v('control-i8-two-instances', { config: 'i8', flags: [UNSAFE], instances: 2 }));
  return list;
}

function step(msg) {
  writeSync(1, `STEP ${msg}\n`);
}

function result(obj) {
  writeSync(1, `RESULT ${JSON.stringify(obj)}\n`);
}

// Small integers, seeded (xorshift32): f16 values in [-2, 2], i8 values in [-8, 7].
function inputs(n, config, seed) {
  let s = (seed * 2654435761) >>> 0 || 1;
  const next = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
  const lo = config === 'i8' ? -8 : -2;
  const span = config === 'i8' ? 16 : 5;
  const a = new Int8Array(n * n);
  const b = new Int8Array(n * n);
  for (let i = 0; i < a.length; i++) a[i] = lo + (next() % span);
  for (let i = 0; i < b.length; i++) b[i] = lo + (next() % span);
  return { a, b };
}

// binary16 bits of the small integers -8…7 (exact).
function f16Bits(x) {
  if (x === 0) return 0;
  const m = Math.abs(x);
  const e = Math.floor(Math.log2(m));
  return (x < 0 ? 0x8000 : 0) | ((e + 15) << 10) | Math.round((m / 2 ** e - 1) * 1024);
}
const F16 = Array.from({ length: 16 }, (_, i) => f16Bits(i - 8));

// The bytes a kernel reads: f16 bits (small integers are exact), f32, or four i8 per i32.
function upload(v, config) {
  if (config === 'i8') return new Uint8Array(v.buffer.slice(0));
  if (config === 'plain') return new Uint8Array(Float32Array.from(v).buffer);
  const h = new Uint16Array(v.length);
  for (let i = 0; i < v.length; i++) h[i] = F16[v[i] + 8];
  return new Uint8Array(h.buffer);
}

function matrixWgsl(cfg, sg, n) {
  const { M, N, K } = cfg;
  const i8 = cfg.componentType === 'i8';
  const [inT, outT, arrIn] = i8 ? ['i8', 'i32', 'i32'] : ['f16', 'f32', 'f16'];
  const pre = i8 ? 'enable subgroups;\nenable chromium_experimental_subgroup_matrix;\n'
    : 'enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\n';
  return `${pre}
@group(0) @binding(0) var<storage, read> a: array<${arrIn}>;
@group(0) @binding(1) var<storage, read> b: array<${arrIn}>;
@group(0) @binding(2) var<storage, read_write> c: array<${outT}>;
const n = ${n}u;
@compute @workgroup_size(${sg})
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row0 = wg.y * ${2 * M}u;
  let col0 = wg.x * ${2 * N}u;
  var c00 = subgroup_matrix_result<${outT}, ${N}, ${M}>();
  var c01 = subgroup_matrix_result<${outT}, ${N}, ${M}>();
  var c10 = subgroup_matrix_result<${outT}, ${N}, ${M}>();
  var c11 = subgroup_matrix_result<${outT}, ${N}, ${M}>();
  for (var k = 0u; k < n; k += ${K}u) {
    let l0 = subgroupMatrixLoad<subgroup_matrix_left<${inT}, ${K}, ${M}>>(&a, row0 * n + k, false, n);
    let l1 = subgroupMatrixLoad<subgroup_matrix_left<${inT}, ${K}, ${M}>>(&a, (row0 + ${M}u) * n + k, false, n);
    let r0 = subgroupMatrixLoad<subgroup_matrix_right<${inT}, ${N}, ${K}>>(&b, k * n + col0, false, n);
    let r1 = subgroupMatrixLoad<subgroup_matrix_right<${inT}, ${N}, ${K}>>(&b, k * n + col0 + ${N}u, false, n);
    c00 = subgroupMatrixMultiplyAccumulate(l0, r0, c00);
    c01 = subgroupMatrixMultiplyAccumulate(l0, r1, c01);
    c10 = subgroupMatrixMultiplyAccumulate(l1, r0, c10);
    c11 = subgroupMatrixMultiplyAccumulate(l1, r1, c11);
  }
  subgroupMatrixStore(&c, row0 * n + col0, c00, false, n);
  subgroupMatrixStore(&c, row0 * n + col0 + ${N}u, c01, false, n);
  subgroupMatrixStore(&c, (row0 + ${M}u) * n + col0, c10, false, n);
  subgroupMatrixStore(&c, (row0 + ${M}u) * n + col0 + ${N}u, c11, false, n);
}
`;
}

// The control: a plain f32 matmul, 16×16 invocations, one output each.
function plainWgsl(n) {
  return `@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
const n = ${n}u;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  var acc = 0.0;
  for (var k = 0u; k < n; k++) { acc += a[g.y * n + k] * b[k * n + g.x]; }
  c[g.y * n + g.x] = acc;
}
`;
}

// The config a variant uses: the largest one of its component type.
function pickConfig(adapter, config) {
  const all = [...(adapter.info?.subgroupMatrixConfigs ?? [])].map((c) => ({
    M: c.M, N: c.N, K: c.K, componentType: c.componentType, resultComponentType: c.resultComponentType,
  }));
  const want = config === 'i8' ? ['i8', 'i32'] : ['f16', 'f32'];
  const fit = all.filter((c) => c.componentType === want[0] && c.resultComponentType === want[1]);
  fit.sort((x, y) => y.M * y.N * y.K - x.M * x.N * x.K);
  return { all, cfg: fit[0] ?? null };
}

async function child(variant) {
  const modPath = process.env.WEBGPU_MODULE;
  const { create, globals } = await import(modPath ? pathToFileURL(modPath).href : 'webgpu');
  Object.assign(globalThis, globals);
  let gpu = create(variant.flags);
  if (variant.instances === 2) {
    step('creating a second Dawn instance (the first stays alive)');
    globalThis.firstInstance = gpu;
    gpu = create(variant.flags);
  }
  // Dawn's device does not keep its instance alive: without this reference V8 may collect
  // it and the next submission crashes (see the header).
  if (!variant.dropInstance) globalThis.keptDawnInstance = gpu;
  const collect = (why) => {
    if (variant.gc && typeof global.gc === 'function') { global.gc(); step(`forced a garbage collection (${why})`); }
  };
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  gpu = null;
  if (!adapter) return result({ outcome: 'no adapter' });
  const info = adapter.info ?? {};
  step(`adapter ${info.vendor} ${info.device} ${info.description}; subgroups ${info.subgroupMinSize}-${info.subgroupMaxSize}`);
  const n = variant.size;
  const plain = variant.kernel === 'plain';
  const features = ['chromium-experimental-subgroup-matrix', 'subgroups', 'shader-f16']
    .filter((f) => adapter.features.has(f));
  const { all, cfg } = pickConfig(adapter, variant.config);
  step(`features offered: ${features.join(', ') || 'none of subgroup-matrix/subgroups/shader-f16'}; configs ${JSON.stringify(all)}`);
  if (!plain && (!cfg || !adapter.features.has('chromium-experimental-subgroup-matrix')
    || (variant.config === 'f16' && !adapter.features.has('shader-f16')))) {
    return result({ outcome: 'not offered', features, configs: all });
  }
  const requiredLimits = {};
  for (const k of ['maxStorageBufferBindingSize', 'maxBufferSize']) requiredLimits[k] = adapter.limits[k];
  const device = await adapter.requestDevice({ requiredFeatures: features, requiredLimits });
  collect('after requestDevice');
  const errors = [];
  device.addEventListener('uncapturederror', (e) => errors.push(String(e.error?.message ?? e)));
  const sg = info.subgroupMaxSize || 32;
  const code = plain ? plainWgsl(n) : matrixWgsl(cfg, sg, n);
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } })
    .catch((e) => { errors.push(String(e?.message ?? e)); return null; });
  const compileError = await device.popErrorScope();
  if (!pipeline || compileError) {
    return result({ outcome: 'compile error', message: compileError?.message ?? errors.join(' | ') });
  }
  step(`pipeline ready (${plain ? 'plain f32' : `${cfg.M}x${cfg.N}x${cfg.K} ${cfg.componentType}->${cfg.resultComponentType}`}, workgroup ${plain ? '16x16' : sg})`);
  const outBytes = n * n * 4;
  const grid = plain ? [n / 16, n / 16] : [n / (2 * cfg.N), n / (2 * cfg.M)];
  const problems = [];
  let allExact = true;
  let kept = null;
  let kept2 = null;
  for (let p = 0; p < variant.problems; p++) {
    const { a, b } = inputs(n, variant.config, 7 + p);
    const kind = plain ? 'plain' : variant.config;
    const mk = (bytes, old) => {
      const buf = old ?? device.createBuffer({ size: bytes.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(buf, 0, bytes);
      return buf;
    };
    const ba = mk(upload(a, kind), kept?.ba);
    const bb = mk(upload(b, kind), kept?.bb);
    const bc = kept?.bc ?? device.createBuffer({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    if (variant.reuse) kept = { ba, bb, bc };
    // NaN (f32) / a marker (i32) where no dispatch wrote.
    device.queue.writeBuffer(bc, 0, new Uint32Array(n * n).fill(0x7fc00000));
    const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
      { binding: 0, resource: { buffer: ba } }, { binding: 1, resource: { buffer: bb } },
      { binding: 2, resource: { buffer: bc } }] });
    step(`problem ${p + 1}: buffers ready`);
    const t0 = performance.now();
    for (let d = 0; d < variant.dispatches; d++) {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(grid[0], grid[1]);
      pass.end();
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      step(`problem ${p + 1}: dispatch ${d + 1}/${variant.dispatches} done`);
      collect(`after dispatch ${d + 1}`);
    }
    const ms = (performance.now() - t0) / variant.dispatches;
    let check = null;
    if (variant.readback) {
      const rb = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(bc, 0, rb, 0, outBytes);
      device.queue.submit([enc.finish()]);
      if (variant.waitBeforeMap) await device.queue.onSubmittedWorkDone();
      await rb.mapAsync(GPUMapMode.READ);
      const got = variant.config === 'i8' && !plain ? new Int32Array(rb.getMappedRange().slice(0))
        : new Float32Array(rb.getMappedRange().slice(0));
      rb.unmap();
      if (variant.destroy || variant.destroyReadback) rb.destroy();
      step(`problem ${p + 1}: read back`);
      // Corners, the last row and column, and 4,096 seeded elements: exact integer products.
      const idx = [0, n - 1, (n - 1) * n, n * n - 1];
      for (let j = 0; j < n; j += 61) idx.push((n - 1) * n + j, j * n + n - 1);
      let s = 12345;
      for (let i = 0; i < 4096; i++) { s = (s * 1103515245 + 12345) >>> 0; idx.push(s % (n * n)); }
      let wrong = 0;
      let first = null;
      for (const e of idx) {
        const r = Math.floor(e / n);
        const col = e % n;
        let want = 0;
        for (let k = 0; k < n; k++) want += a[r * n + k] * b[k * n + col];
        if (got[e] !== want) {
          wrong++;
          first ??= { row: r, col, got: got[e], want };
        }
      }
      check = { exact: wrong === 0, checked: idx.length, wrong, first };
      allExact &&= wrong === 0;
    }
    if (variant.destroy) { ba.destroy(); bb.destroy(); bc.destroy(); step(`problem ${p + 1}: buffers destroyed`); }
    kept2 = { ba, bb, bc, bind };
    problems.push({ msPerDispatch: Number(ms.toFixed(3)),
      tflops: Number((2 * n ** 3 / (ms * 1e9)).toPrecision(3)), check });
  }
  if (variant.after && kept2) {
    step(`after the readback: ${variant.after}`);
    if (variant.after === 'dispatch') {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, kept2.bind);
      pass.dispatchWorkgroups(grid[0], grid[1]);
      pass.end();
      device.queue.submit([enc.finish()]);
    } else if (variant.after === 'write') {
      device.queue.writeBuffer(kept2.ba, 0, new Uint8Array(256));
    } else {
      device.queue.submit([device.createCommandEncoder().finish()]);
    }
    await device.queue.onSubmittedWorkDone();
    step(`after the readback: ${variant.after} done`);
  }
  result({ outcome: 'completed', exact: variant.readback ? allExact : 'not read back', problems, errors });
}

function runChild(variant, timeoutS) {
  return new Promise((resolve) => {
    const started = Date.now();
    // REPRO_LOADER (local testing only): a dynamic loader command to start each child under,
    // e.g. a private sysroot's `ld-linux-x86-64.so.2 --library-path DIR` (REPRO_NODE: node's path).
    const loader = (process.env.REPRO_LOADER ?? '').split(' ').filter(Boolean);
    const cmd = [...loader, process.env.REPRO_NODE ?? process.execPath, '--expose-gc', new URL(import.meta.url).pathname, '--child', JSON.stringify(variant)];
    const proc = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => { out += d; });
    proc.stderr.on('data', (d) => { err += d; });
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; proc.kill('SIGKILL'); }, timeoutS * 1000);
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      const lines = out.split('\n').filter(Boolean);
      const res = lines.filter((l) => l.startsWith('RESULT ')).map((l) => JSON.parse(l.slice(7)))[0] ?? null;
      const steps = lines.filter((l) => l.startsWith('STEP '));
      resolve({ name: variant.name, variant, code, signal, timedOut, seconds: (Date.now() - started) / 1000,
        lastStep: steps.at(-1)?.slice(5) ?? null, steps: steps.length, result: res,
        stderrTail: err.split('\n').filter(Boolean).slice(-4) });
    });
  });
}

function summary(r) {
  const how = r.timedOut ? 'TIMED OUT (hung)' : r.signal ? `killed by ${r.signal}` : `exit ${r.code}`;
  const res = r.result;
  let what = 'no result line';
  if (res?.outcome === 'completed') {
    const p = res.problems.map((x) => `${x.tflops} TFLOP/s${x.check ? (x.check.exact ? ' exact' : ` NOT exact (${x.check.wrong}/${x.check.checked})`) : ''}`);
    what = `completed: ${p.join('; ')}${res.errors.length ? `; errors: ${res.errors.join(' | ')}` : ''}`;
  } else if (res) {
    what = `${res.outcome}${res.message ? `: ${res.message}` : ''}`;
  }
  const tail = r.result?.outcome === 'completed' && !r.signal && r.code === 0 ? ''
    : ` | last step: ${r.lastStep} | stderr: ${r.stderrTail.join(' / ')}`;
  return `| ${r.name} | ${how} | ${what}${tail} |`;
}

async function driver(argv) {
  const a = { out: null, timeoutS: 40, budgetS: 300, only: null, list: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--list') { a.list = true; continue; }
    const v = argv[++i];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--out') a.out = v;
    else if (k === '--timeout-s') a.timeoutS = Number(v);
    else if (k === '--budget-s') a.budgetS = Number(v);
    else if (k === '--only') a.only = v.split(',');
    else throw new Error(`unknown flag ${k}`);
  }
  const list = variants().filter((v) => !a.only || a.only.includes(v.name));
  if (a.list) { for (const v of list) console.log(v.name, JSON.stringify(v)); return; }
  const started = Date.now();
  const rows = [];
  console.log('| variant | process | outcome |');
  console.log('| --- | --- | --- |');
  for (const v of list) {
    const left = a.budgetS - (Date.now() - started) / 1000;
    if (left < 5) {
      rows.push({ name: v.name, variant: v, notRun: 'time budget spent' });
      console.log(`| ${v.name} | not run | time budget spent |`);
      continue;
    }
    const r = await runChild(v, Math.min(a.timeoutS, left));
    rows.push(r);
    console.log(summary(r));
  }
  if (a.out) writeFileSync(a.out, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  child(JSON.parse(argv[1])).then(() => process.exit(0), (e) => {
    writeSync(2, `child error: ${e?.stack ?? e}\n`);
    result({ outcome: 'exception', message: String(e?.message ?? e) });
    process.exit(3);
  });
} else {
  driver(argv).catch((e) => { console.error(e); process.exit(1); });
}
