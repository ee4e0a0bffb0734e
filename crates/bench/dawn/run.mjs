// The catalogue's matmul kernels and the copy probe through Dawn (the WebGPU of Chrome and
// Edge, via its Node binding, npm `webgpu`), measured like `bench matmul` measures them
// through wgpu, so the two can be printed side by side.
//
// Everything about the kernels comes from `bench dump-kernels --dir DIR` (one source of
// truth): the composed WGSL, entry point, override constants, grid, uniform, the input
// buffers' bytes in the kernel's layout (same seeded data as the wgpu bench), and the
// elements to check with their f64 reference values and tolerances.
//
// Usage: node run.mjs --dir DIR [--out dawn.tsv] [--reps 5] [--warm-ms 500]
//          [--only id,id] [--path dawn] [--flag enable-dawn-features=a,b]…
//          [--runs 3] [--conv-out dawn_conv.tsv] [--attention-out dawn_attention.tsv]
//          [--compile id,id]
//
// Conv plans (`bench dump-kernels --conv-shapes …`): each stage's dispatches in order, each
// its own compute pass (as the runtime's plans: storage writes of one are visible to the
// next), the buffers as the plan lays them out. Measured like `bench conv`: a pilot of 2 + 3
// passes sets the warm-up (≥ --warm-ms of GPU time, 2 to 50,000 passes); then --runs whole
// runs, each with fresh buffers and bind groups (the upload included), warm-up and --reps
// timed passes in back-to-back submissions, and a readback; a pass's time is the sum of its
// dispatches' timestamped compute passes, a run's the median pass, and every run's output is
// checked at the elements `bench conv` checks in that run. The read-back buffer starts as
// NaN, so an element no dispatch wrote fails. Rows go to --conv-out in `bench conv`'s TSV
// format (path dawn). `--only` also selects plans by stage id.
// Attention plans (`bench dump-kernels --attention-seqs …`): measured as the conv plans are
// (the same code), printed as `bench attention` prints them (TFLOP/s counted 4·bh·n²·d / 2,
// median of --runs runs, fastest–slowest, the largest buffer, the worst error as a fraction
// of its bound), every run checked at the rows `bench attention` checks against the same f64
// reference and bound; a path whose largest buffer exceeds the device's largest binding is
// "does not fit", as the runtime refuses it. Rows go to --attention-out in `bench
// attention`'s TSV format (path dawn). `--only` also selects the paths (naive, fused).
// `--compile id,…`: only compile those kernels (for `dump_shaders`) and exit.
// Timing: each timed pass is its own compute pass between GPU timestamps (timestamp-query);
// before them, in the same submission, the kernel runs for at least --warm-ms of GPU time
// (estimated from a pilot pass). A row's figure is the median pass. Without timestamp-query
// the row says "wall clock": submit to onSubmittedWorkDone over every pass of the submission.
// The output buffer is filled with NaN first, so an element the kernel never wrote fails.
// The WEBGPU_MODULE environment variable may point at the binding's index.js.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const HEADER = 'path\tkernel\tsize\trate\tunit\tms\ttiming\tverified\tpass_ms';

function parseArgs(argv) {
  const a = { reps: 5, warmMs: 500, flags: [], only: null, path: 'dawn', out: null, dir: null,
    runs: 3, convOut: null, attentionOut: null, compile: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--dir') a.dir = v;
    else if (k === '--out') a.out = v;
    else if (k === '--reps') a.reps = Number(v);
    else if (k === '--warm-ms') a.warmMs = Number(v);
    else if (k === '--only') a.only = v.split(',');
    else if (k === '--path') a.path = v;
    else if (k === '--flag') a.flags.push(v);
    else if (k === '--runs') a.runs = Number(v);
    else if (k === '--conv-out') a.convOut = v;
    else if (k === '--attention-out') a.attentionOut = v;
    else if (k === '--compile') a.compile = v.split(',');
    else throw new Error(`unknown flag ${k}`);
  }
  if (!a.dir) throw new Error('--dir DIR (from `bench dump-kernels`) is required');
  if (!(a.reps >= 1 && a.reps <= 200)) throw new Error('--reps wants 1 to 200');
  if (!(Number.isInteger(a.runs) && a.runs >= 1 && a.runs <= 50)) throw new Error('--runs wants 1 to 50');
  if (!(a.warmMs >= 0 && a.warmMs <= 10000)) throw new Error('--warm-ms wants 0 to 10000');
  return a;
}

export function median(v) {
  const s = [...v].sort((x, y) => x - y);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// Passes of passMs each that keep the GPU busy for warmMs (2 to 5,000), as the Rust bench.
export function warmupFor(passMs, warmMs) {
  if (!(warmMs > 0) || !(passMs > 0) || !Number.isFinite(passMs)) return 2;
  return Math.min(5000, Math.max(2, Math.ceil(warmMs / passMs)));
}

// Checks the sampled elements: finite and within tolerance of the f64 reference.
export function check(out, c) {
  let worst = 0;
  for (let i = 0; i < c.index.length; i++) {
    const g = out[c.index[i]];
    const err = Math.abs(g - c.value[i]);
    if (!Number.isFinite(g) || !(err <= c.tol[i])) {
      return { ok: false, first: { index: c.index[i], got: g, want: c.value[i], tol: c.tol[i] } };
    }
    worst = Math.max(worst, err);
  }
  return { ok: true, worst };
}

// `bench conv`'s TSV header (crates/bench/src/conv_bench.rs, TSV_HEADER).
const CONV_HEADER = 'stage\tshape\tgflops_median\tms_median\tms_min\tms_max\truns\ttiming\tverified\tmax_rel_error\textra_bytes\tpath\trun_ms\twall_ms';
// Most passes recorded into one submission (warm-up is split into several, sent back to back).
const PASSES_PER_SUBMIT = 2048;

// The largest |got - want| / Σ|terms| over the checked elements (Σ|terms| = tol / relBound),
// as `bench conv`'s max_rel_error.
export function maxRelError(out, c, relBound) {
  let worst = 0;
  for (let i = 0; i < c.index.length; i++) {
    const mag = c.tol[i] / relBound;
    const err = Math.abs(out[c.index[i]] - c.value[i]);
    if (Number.isFinite(err) && mag > 0) worst = Math.max(worst, err / mag);
  }
  return worst;
}

// Reads (once) the dump's input files.
function fileReader(dir) {
  const files = new Map();
  return (name) => {
    if (!files.has(name)) files.set(name, readFileSync(join(dir, name)));
    return files.get(name);
  };
}

// Measures one dumped plan (a conv stage's or an attention path's): each step its own compute
// pass, as the runtime's plans (storage writes of one are visible to the next), the buffers as
// the plan lays them out. A pilot of 2 + 3 passes sets the warm-up (≥ --warm-ms of GPU time,
// 2 to 50,000 passes); then --runs whole runs, each with fresh buffers and bind groups (the
// upload included), warm-up and --reps timed passes in back-to-back submissions, and a
// readback; a pass's time is the sum of its dispatches' timestamped compute passes, a run's the
// median pass, and every run's output is checked at the plan's elements (run r: checks[r]).
// Returns { unavailable } (why it cannot run) or each run's time and the verdict.
async function measurePlan(device, plan, kernels, pipelineFor, timestamps, args, file) {
  const steps = [];
  for (const st of plan.steps) {
    const k = kernels.get(st.kernel);
    const missing = k.features.filter((f) => !device.features.has(f));
    const pipeline = missing.length ? null : await pipelineFor(k);
    if (!pipeline) return { unavailable: missing.length ? 'unavailable: needs ' + missing.join(', ') : 'shader error' };
    steps.push({ ...st, pipeline });
  }
  const readBack = plan.buffers.find((b) => b.read_back);
  // A fresh set of buffers and bind groups, as the runtime makes for each run.
  const setup = () => {
    const held = [];
    const make = (desc) => { const b = device.createBuffer(desc); held.push(b); return b; };
    const named = new Map();
    for (const b of plan.buffers) {
      const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      if (b.file !== undefined) {
        const bytes = file(b.file);
        if (bytes.byteLength !== b.bytes) throw new Error(`${b.file}: ${bytes.byteLength} bytes, the plan says ${b.bytes}`);
        const size = Math.max(4, Math.ceil(bytes.byteLength / 4) * 4);
        const buf = make({ size, usage, mappedAtCreation: true });
        new Uint8Array(buf.getMappedRange()).set(bytes);
        buf.unmap();
        named.set(b.name, buf);
      } else {
        // WebGPU zero-fills new buffers, as the plan's Init::Zeroed asks.
        const size = Math.max(4, Math.ceil(b.zeroed / 4) * 4);
        const buf = make({ size, usage });
        if (b.read_back) device.queue.writeBuffer(buf, 0, new Float32Array(size / 4).fill(NaN));
        named.set(b.name, buf);
      }
    }
    const groups = steps.map((st) => {
      const words = st.dims.length ? st.dims : [0];
      const uniform = make({ size: Math.ceil(words.length / 4) * 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(uniform, 0, new Uint32Array(words));
      const entries = st.bindings.map((name, i) => ({
        binding: i,
        resource: { buffer: name === null ? uniform : named.get(name) },
      }));
      for (const e of entries) if (!e.resource.buffer) throw new Error(`${plan.label}: unknown buffer in ${JSON.stringify(st.bindings)}`);
      return device.createBindGroup({ layout: st.pipeline.getBindGroupLayout(0), entries });
    });
    return { held, make, named, groups };
  };
  // `warmup` untimed then `reps` timed passes (every step, each its own compute pass);
  // returns each timed pass's time (ms, the sum over its steps) and the output if asked.
  const submit = async (s, warmup, reps, read) => {
    const n = steps.length;
    const qs = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 * reps * n }) : null;
    const resolve = qs && s.make({ size: 16 * reps * n, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const tsRead = qs && s.make({ size: 16 * reps * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const outBuf = s.named.get(readBack.name);
    const staging = read && s.make({ size: outBuf.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const record = (enc, t) => {
      for (let j = 0; j < n; j++) {
        const pass = enc.beginComputePass(qs && t >= 0
          ? { timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * (t * n + j), endOfPassWriteIndex: 2 * (t * n + j) + 1 } }
          : {});
        pass.setPipeline(steps[j].pipeline);
        pass.setBindGroup(0, s.groups[j]);
        pass.dispatchWorkgroups(...steps[j].grid);
        pass.end();
      }
    };
    const t0 = performance.now();
    const perSubmit = Math.max(1, Math.floor(PASSES_PER_SUBMIT / n));
    for (let done = 0; done < warmup; done += perSubmit) {
      const enc = device.createCommandEncoder();
      for (let r = done; r < Math.min(warmup, done + perSubmit); r++) record(enc, -1);
      device.queue.submit([enc.finish()]);
    }
    const enc = device.createCommandEncoder();
    for (let t = 0; t < reps; t++) record(enc, t);
    if (staging) enc.copyBufferToBuffer(outBuf, 0, staging, 0, outBuf.size);
    if (qs) {
      enc.resolveQuerySet(qs, 0, 2 * reps * n, resolve, 0);
      enc.copyBufferToBuffer(resolve, 0, tsRead, 0, 16 * reps * n);
    }
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    const wallMs = performance.now() - t0;
    let passMs;
    let quantized = false;
    if (qs) {
      await tsRead.mapAsync(GPUMapMode.READ);
      const ticks = new BigUint64Array(tsRead.getMappedRange().slice(0));
      tsRead.unmap();
      const deltas = [];
      for (let i = 0; i < reps * n; i++) deltas.push(ticks[2 * i + 1] - ticks[2 * i]);
      quantized = deltas.every((d) => d % 100000n === 0n);
      passMs = [];
      for (let t = 0; t < reps; t++) {
        let sum = 0;
        for (let j = 0; j < n; j++) sum += Number(deltas[t * n + j]) / 1e6;
        passMs.push(sum);
      }
      qs.destroy();
    } else {
      passMs = Array(reps).fill(wallMs / (warmup + reps));
    }
    let out = null;
    if (staging) {
      await staging.mapAsync(GPUMapMode.READ);
      out = new Float32Array(staging.getMappedRange().slice(0));
      staging.unmap();
    }
    return { passMs, quantized, out, wallPerPass: wallMs / (warmup + reps) };
  };
  const destroy = (s) => { for (const b of s.held) b.destroy(); };

  let warmup = 2;
  if (args.warmMs > 0) {
    const s = setup();
    const pilot = await submit(s, 2, 3, false);
    destroy(s);
    const pass = median(pilot.passMs);
    if (pass > 0 && Number.isFinite(pass)) warmup = Math.min(50000, Math.max(2, Math.ceil(args.warmMs / pass)));
  }
  const times = [];
  const wall = [];
  let verified = true;
  let worst = 0;
  let quantized = false;
  let firstBad = null;
  for (let r = 0; r < args.runs; r++) {
    const s = setup();
    const res = await submit(s, warmup, args.reps, true);
    destroy(s);
    const c = plan.checks[r % plan.checks.length];
    const v = check(res.out, c);
    if (!v.ok) { verified = false; firstBad ??= v.first; }
    worst = Math.max(worst, maxRelError(res.out, c, plan.rel_bound));
    quantized ||= res.quantized;
    times.push(median(res.passMs));
    wall.push(res.wallPerPass);
  }
  const timing = timestamps ? (quantized ? 'timestamps (100 µs quantized)' : 'timestamps') : 'wall clock';
  return { times, wall, verified, worst, warmup, timing, firstBad };
}

// Runs the dumped conv plans; returns the TSV rows (header first) and the failures.
async function runConvPlans(device, plans, kernels, pipelineFor, timestamps, args) {
  const rows = [CONV_HEADER];
  let failures = 0;
  const selected = plans.filter((p) => !args.only || args.only.includes(p.stage));
  if (!selected.length) return { rows, failures };
  console.log(`\nconv plans: ${args.runs} whole runs each, ${args.reps} timed passes after ≥ ${args.warmMs} ms of warm-up (at least 2)`);
  console.log('| stage | shape | GFLOP/s (median) | ms median | ms fastest–slowest run | spread | warm-up | timing | verified |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |');
  const file = fileReader(args.dir);
  for (const plan of selected) {
    const m = await measurePlan(device, plan, kernels, pipelineFor, timestamps, args, file);
    if (m.unavailable) {
      console.log(`| ${plan.label} | ${plan.shape} | – | – | – | – | – | ${m.unavailable} | – |`);
      failures++;
      continue;
    }
    const { times, wall, verified, worst, warmup, timing, firstBad } = m;
    const lo = Math.min(...times);
    const hi = Math.max(...times);
    const med = median(times);
    const gflops = plan.flops / (med * 1e6);
    console.log(`| ${plan.label} | ${plan.shape} | ${gflops.toFixed(1)} | ${med.toFixed(3)} | ${lo.toFixed(3)}–${hi.toFixed(3)} | ${(100 * (hi - lo) / med).toFixed(1)} % | ${warmup} | ${timing} | ${verified ? 'yes' : 'NO ' + JSON.stringify(firstBad)} |`);
    rows.push([plan.label, plan.shape, gflops.toFixed(3), med.toFixed(5), lo.toFixed(5), hi.toFixed(5), args.runs,
      timing, verified, worst.toExponential(3), plan.extra_bytes, args.path, times.map((t) => t.toFixed(5)).join(','), wall.map((t) => t.toFixed(5)).join(',')].join('\t'));
    if (!verified) failures++;
  }
  return { rows, failures };
}

// `bench attention`'s TSV header (crates/bench/src/attention_bench.rs).
const ATTN_HEADER = 'path\tkernel\tn\ttflops_median\ttflops_min\ttflops_max\tms_median\tbuffer_bytes\tverified';

// The longest sequence whose bh·n² f32 scores fit `max` bytes (the runtime's `check`).
export function longestFitting(max, bh) {
  return Math.floor(Math.sqrt(Math.floor(max / (bh * 4))));
}

// Runs the dumped attention plans (`bench dump-kernels --attention-seqs …`) as `bench
// attention` runs them and prints its table: TFLOP/s counted 4·bh·n²·d / 2, the median of
// --runs runs (a run's figure: its median pass) and their spread. A plan whose largest buffer
// exceeds the device's largest binding is reported "does not fit", as the runtime refuses it.
async function runAttentionPlans(device, plans, kernels, pipelineFor, timestamps, args) {
  const rows = [ATTN_HEADER];
  let failures = 0;
  const selected = plans.filter((p) => !args.only || args.only.includes(p.path));
  if (!selected.length) return { rows, failures };
  const { bh, d } = selected[0];
  console.log(`\ncausal attention, ${bh} problems, head width ${d}, ${args.path}; median of ${args.runs} runs (fastest–slowest)\n`);
  console.log('| path | n | TFLOP/s | min–max | ms | largest buffer MiB | verified (error / bound) |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
  const file = fileReader(args.dir);
  const max = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  for (const plan of selected) {
    const mib = (plan.largest_buffer / 1048576).toFixed(1);
    if (plan.largest_buffer > max) {
      console.log(`| ${plan.path} | ${plan.n} | – | – | – | ${(plan.largest_buffer / 1048576).toFixed(0)} | does not fit: the largest binding is ${(max / 1048576).toFixed(0)} MiB; n ≤ ${longestFitting(max, plan.bh)} fits |`);
      rows.push([args.path, plan.path, plan.n, '', '', '', '', plan.largest_buffer, 'does-not-fit'].join('\t'));
      continue;
    }
    const m = await measurePlan(device, { ...plan, label: `${plan.path} at n = ${plan.n}` }, kernels, pipelineFor, timestamps, args, file);
    if (m.unavailable) {
      console.log(`| ${plan.path} | ${plan.n} | – | – | – | ${mib} | ${m.unavailable} |`);
      failures++;
      continue;
    }
    const tflops = m.times.map((t) => plan.flops / (t * 1e9));
    const [lo, hi, med] = [Math.min(...tflops), Math.max(...tflops), median(tflops)];
    const ms = median(m.times);
    const verdict = m.verified
      ? `yes (${m.worst.toFixed(3)}; ${m.timing})`
      : `NO ${JSON.stringify(m.firstBad)} (${m.worst.toFixed(3)}; ${m.timing})`;
    console.log(`| ${plan.path} | ${plan.n} | ${med.toFixed(2)} | ${lo.toFixed(2)}–${hi.toFixed(2)} | ${ms.toFixed(3)} | ${mib} | ${verdict} |`);
    rows.push([args.path, plan.path, plan.n, med.toFixed(4), lo.toFixed(4), hi.toFixed(4), ms.toFixed(5),
      plan.largest_buffer, m.verified].join('\t'));
    if (!m.verified) failures++;
  }
  return { rows, failures };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const modPath = process.env.WEBGPU_MODULE;
  const { create, globals } = await import(modPath ? pathToFileURL(modPath).href : 'webgpu');
  Object.assign(globalThis, globals);
  const gpu = create(args.flags);
  // Dawn's Node binding does not keep the instance alive from its device: once this local is
  // dead V8 may collect it, and the next submission crashes (subgroup_matrix_repro.mjs).
  globalThis.keptDawnInstance = gpu;
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('Dawn offered no adapter');
  const info = adapter.info ?? {};
  console.log(`adapter: ${info.vendor} ${info.architecture} ${info.device} ${info.description}`);
  console.log(`features: ${[...adapter.features].sort().join(', ')}`);
  const wanted = ['timestamp-query', 'shader-f16', 'subgroups'].filter((f) => adapter.features.has(f));
  const requiredLimits = {};
  for (const k of ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize',
    'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY',
    'maxComputeWorkgroupsPerDimension']) {
    requiredLimits[k] = adapter.limits[k];
  }
  const device = await adapter.requestDevice({ requiredFeatures: wanted, requiredLimits });
  const uncaptured = [];
  device.addEventListener('uncapturederror', (e) => uncaptured.push(String(e.error?.message ?? e)));
  const timestamps = device.features.has('timestamp-query');
  console.log(`timing: ${timestamps ? 'GPU timestamps (timestamp-query)' : 'wall clock'}`);

  const manifest = JSON.parse(readFileSync(join(args.dir, 'manifest.json'), 'utf8'));
  const kernels = new Map(manifest.kernels.map((k) => [k.id, k]));
  const pipelines = new Map();
  const rows = [HEADER];
  let failures = 0;
  // Compiles (once) a kernel's pipeline; null, with a row saying why, on a shader error.
  const pipelineFor = async (k) => {
    if (!pipelines.has(k.id)) {
      device.pushErrorScope('validation');
      // WGSL for browsers must declare subgroups (`enable subgroups;`), which naga 30 rejects
      // (gfx-rs/wgpu#5555), so the catalogue's source lacks it: add it here, as a page would.
      const code = k.features.includes('subgroups') && !/enable\s+subgroups/.test(k.wgsl)
        ? `enable subgroups;\n${k.wgsl}` : k.wgsl;
      const module = device.createShaderModule({ code, label: k.id });
      const ci = await module.getCompilationInfo();
      const errs = ci.messages.filter((m) => m.type === 'error').map((m) => m.message);
      const pipeline = device.createComputePipeline({
        label: k.id, layout: 'auto',
        compute: { module, entryPoint: k.entry_point, constants: k.constants },
      });
      const err = await device.popErrorScope();
      if (errs.length || err) {
        console.log(`| ${k.id} | – | – | – | – | – | shader error: ${errs.join('; ') || err.message} | – |`);
        failures++;
        pipelines.set(k.id, null);
      } else {
        pipelines.set(k.id, pipeline);
      }
    }
    return pipelines.get(k.id);
  };

  if (args.compile) {
    for (const id of args.compile) {
      const k = kernels.get(id);
      if (!k) throw new Error(`--compile: no kernel ${id} in the manifest`);
      const p = await pipelineFor(k);
      console.log(`compiled ${id}: ${p ? 'ok' : 'FAILED'}`);
    }
    device.destroy();
    if (failures) process.exitCode = 1;
    return;
  }

  if (manifest.runs.length) {
    console.log('\n| kernel | size | rate (median pass) | best pass | ms | warm-up | timing | verified |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |');
  }

  for (const run of manifest.runs) {
    const k = kernels.get(run.kernel);
    if (args.only && !args.only.some((p) => run.kernel === p || (p.endsWith('@') && run.kernel.startsWith(p)))) continue;
    const missing = k.features.filter((f) => !device.features.has(f));
    if (missing.length) {
      console.log(`| ${k.id} | ${run.size} | – | – | – | – | unavailable: needs ${missing.join(', ')} | – |`);
      continue;
    }
    const pipeline = await pipelineFor(k);
    if (!pipeline) continue;

    const buffers = [];
    const make = (desc) => { const b = device.createBuffer(desc); buffers.push(b); return b; };
    const entries = run.inputs.map((file, i) => {
      const bytes = readFileSync(join(args.dir, file));
      const b = make({ size: bytes.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, mappedAtCreation: true });
      new Uint8Array(b.getMappedRange()).set(bytes);
      b.unmap();
      return { binding: i, resource: { buffer: b } };
    });
    const outBytes = run.output_len * 4;
    const output = make({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(output, 0, new Float32Array(run.output_len).fill(NaN));
    entries.push({ binding: entries.length, resource: { buffer: output } });
    // The uniform's words as the runtime's plan has them, rounded up to whole 16-byte rows.
    const uniform = make({ size: Math.max(16, Math.ceil(run.dims.length / 4) * 16), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(uniform, 0, new Uint32Array(run.dims));
    entries.push({ binding: entries.length, resource: { buffer: uniform } });
    const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });

    // One submission: `warmup` untimed passes, then `reps` timestamped ones; returns pass times
    // (ms) and the wall clock of the whole submission.
    const submit = async (warmup, reps, readOutput) => {
      const qs = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 * reps }) : null;
      const resolve = qs && make({ size: 16 * reps, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      const tsRead = qs && make({ size: 16 * reps, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const staging = readOutput && make({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const enc = device.createCommandEncoder();
      for (let r = 0; r < warmup + reps; r++) {
        const t = r - warmup;
        const pass = enc.beginComputePass(qs && t >= 0
          ? { timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * t, endOfPassWriteIndex: 2 * t + 1 } }
          : {});
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup);
        pass.dispatchWorkgroups(...run.grid);
        pass.end();
      }
      if (staging) enc.copyBufferToBuffer(output, 0, staging, 0, outBytes);
      if (qs) {
        enc.resolveQuerySet(qs, 0, 2 * reps, resolve, 0);
        enc.copyBufferToBuffer(resolve, 0, tsRead, 0, 16 * reps);
      }
      const t0 = performance.now();
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      const wallMs = performance.now() - t0;
      let passMs = [];
      let quantized = false;
      if (qs) {
        await tsRead.mapAsync(GPUMapMode.READ);
        const ticks = new BigUint64Array(tsRead.getMappedRange().slice(0));
        tsRead.unmap();
        const deltas = [];
        for (let i = 0; i < reps; i++) deltas.push(ticks[2 * i + 1] - ticks[2 * i]);
        quantized = deltas.every((d) => d % 100000n === 0n);
        passMs = deltas.map((d) => Number(d) / 1e6);
        qs.destroy();
      } else {
        passMs = Array(reps).fill(wallMs / (warmup + reps));
      }
      let out = null;
      if (staging) {
        await staging.mapAsync(GPUMapMode.READ);
        out = new Float32Array(staging.getMappedRange().slice(0));
        staging.unmap();
      }
      return { passMs, wallMs, quantized, out };
    };

    const pilot = await submit(0, 1, false);
    const warmup = args.warmMs > 0 ? warmupFor(pilot.passMs[0], args.warmMs) : 2;
    const res = await submit(warmup, args.reps, true);
    const verdict = check(res.out, run.check);
    const ms = median(res.passMs);
    const best = Math.min(...res.passMs);
    const [rate, unit] = run.flops > 0 ? [run.flops / (ms * 1e6), 'GFLOP/s'] : [run.bytes / (ms * 1e6), 'GB/s'];
    const bestRate = run.flops > 0 ? run.flops / (best * 1e6) : run.bytes / (best * 1e6);
    const timing = timestamps ? (res.quantized ? 'timestamps (100 µs quantized)' : 'timestamps') : 'wall clock';
    console.log(`| ${k.id} | ${run.size} | ${rate.toFixed(1)} ${unit} | ${bestRate.toFixed(1)} | ${ms.toFixed(3)} | ${warmup} | ${timing} | ${verdict.ok ? 'yes' : 'NO ' + JSON.stringify(verdict.first)} |`);
    rows.push([args.path, k.id, run.size, rate.toFixed(3), unit, ms.toFixed(5), timing, verdict.ok,
      res.passMs.map((p) => p.toFixed(5)).join(',')].join('\t'));
    if (!verdict.ok) failures++;
    for (const b of buffers) b.destroy();
  }
  const conv = await runConvPlans(device, manifest.plans ?? [], kernels, pipelineFor, timestamps, args);
  failures += conv.failures;
  if (args.convOut) writeFileSync(args.convOut, conv.rows.join('\n') + '\n');
  const attn = await runAttentionPlans(device, manifest.attention ?? [], kernels, pipelineFor, timestamps, args);
  failures += attn.failures;
  if (args.attentionOut) writeFileSync(args.attentionOut, attn.rows.join('\n') + '\n');
  if (uncaptured.length) {
    console.log(`uncaptured errors: ${uncaptured.join(' | ')}`);
    failures++;
  }
  if (args.out) writeFileSync(args.out, rows.join('\n') + '\n');
  device.destroy();
  if (failures) {
    console.error(`${failures} failure(s)`);
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(`run.mjs: ${e.message}`);
    process.exitCode = 1;
  });
}
