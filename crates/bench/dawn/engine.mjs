// The training engine's resident plan through Dawn: what `Engine::describe` hands wgpu
// (`bench dump-kernels`, `crates/bench/src/engine_dump.rs`: buffers with their initial
// contents, dispatches with their binding variants as buffer ranges, uniform words and grids,
// programs as op lists per step parity) made into Dawn buffers, pipelines and bind groups, and
// ops encoded as `gpu_runtime::plan::encoder` encodes them: a compute pass runs dispatches in
// order; a clear or a copy ends it; `pass` ends it explicitly. Nothing of a model is written
// here: the models' runners (cnn.mjs, gpt.mjs) add what feeds a step and what checks it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Dawn's device on the best adapter (WEBGPU_MODULE may point at the binding's index.js),
// with the largest buffers it allows; `errors.message` holds the last uncaptured error. The
// caller keeps `gpu` (Dawn's instance) for as long as it uses the device: collected, it
// takes the device with it.
export async function openDevice(flags) {
  const mod = await import(process.env.WEBGPU_MODULE ? pathToFileURL(process.env.WEBGPU_MODULE).href : 'webgpu');
  Object.assign(globalThis, mod.globals);
  const gpu = mod.create(flags);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('no adapter');
  const info = adapter.info || {};
  console.log(`adapter: ${info.vendor} ${info.architecture} ${info.device} ${info.description} (Dawn, npm webgpu)`);
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
  const errors = { message: null };
  device.addEventListener?.('uncapturederror', (ev) => { errors.message = ev.error?.message || String(ev); });
  return { gpu, device, errors };
}

export const median = (v) => {
  const s = [...v].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

// Compiles every kernel of `desc` once; a map from id to pipeline. Throws on a compile error.
export async function pipelines(device, kernels, into = new Map()) {
  device.pushErrorScope('validation');
  for (const k of kernels) {
    if (into.has(k.id)) continue;
    const module = device.createShaderModule({ code: k.wgsl });
    into.set(k.id, device.createComputePipeline({
      layout: 'auto', compute: { module, entryPoint: k.entry_point, constants: k.constants },
    }));
  }
  const err = await device.popErrorScope();
  if (err) throw new Error(`compiling: ${err.message}`);
  return into;
}

// The engine of `desc` (its files in `dir`) on `device`, with `pipes` from `pipelines`.
export function makeEngine(device, desc, dir, pipes) {
  const bufs = new Map();
  for (const b of desc.buffers) {
    const buf = device.createBuffer({ size: Math.ceil(b.bytes / 4) * 4, usage: STORAGE() });
    if (b.init) {
      const bytes = readFileSync(join(dir, b.init));
      device.queue.writeBuffer(buf, 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    bufs.set(b.name, buf);
  }
  const uniforms = [];
  const dispatches = desc.dispatches.map((d) => {
    // Uniform blocks are sized in multiples of 16 bytes, as the plan makes them.
    const words = new Uint32Array(Math.max(4, Math.ceil(d.uniform.length / 4) * 4));
    words.set(d.uniform);
    const uniform = device.createBuffer({ size: words.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(uniform, 0, words);
    uniforms.push(uniform);
    const pipeline = pipes.get(d.kernel);
    const groups = d.variants.map((v) => {
      const entries = v.map((b, i) => ({
        binding: i,
        resource: b.size === null ? { buffer: bufs.get(b.buffer), offset: b.offset } : { buffer: bufs.get(b.buffer), offset: b.offset, size: b.size },
      }));
      entries.push({ binding: v.length, resource: { buffer: uniform } });
      d.after_uniform.forEach((n, i) => entries.push({ binding: v.length + 1 + i, resource: { buffer: bufs.get(n) } }));
      return device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    });
    return { kernel: d.kernel, pipeline, groups, wg: d.workgroups, uniform };
  });
  return { desc, bufs, dispatches, uniforms, steps: 0 };
}

export function destroyEngine(e) {
  for (const b of e.bufs.values()) b.destroy();
  for (const u of e.uniforms) u.destroy();
}

// Encodes `ops` (the dump's op objects) on `enc`; `pass` is the open compute pass or null.
// Returns the pass left open.
export function encodeOps(e, enc, ops, pass = null) {
  const end = () => { if (pass) { pass.end(); pass = null; } };
  for (const op of ops) {
    if (op.dispatch !== undefined) {
      const d = e.dispatches[op.dispatch];
      if (!pass) pass = enc.beginComputePass();
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.groups[op.variant]);
      pass.dispatchWorkgroups(d.wg[0], d.wg[1], d.wg[2]);
    } else if (op.clear !== undefined) {
      end();
      enc.clearBuffer(e.bufs.get(op.clear));
    } else if (op.copy !== undefined) {
      end();
      const [from, fo, to, too, bytes] = op.copy;
      enc.copyBufferToBuffer(e.bufs.get(from), fo, e.bufs.get(to), too, bytes);
    } else if (op.pass !== undefined) {
      end();
    } else {
      throw new Error(`unknown op ${JSON.stringify(op)}`);
    }
  }
  return pass;
}

// One run of program `name` per entry of `around` ([before ops, after ops]), all in one
// command buffer, as `Engine::run_around`; a training program advances the step parity.
export function runAround(device, e, name, around) {
  const p = e.desc.programs[name];
  if (!p) throw new Error(`no program ${name}`);
  const enc = device.createCommandEncoder();
  let pass = null;
  for (const [before, after] of around) {
    pass = encodeOps(e, enc, before, pass);
    pass = encodeOps(e, enc, p.ops[e.steps % 2], pass);
    pass = encodeOps(e, enc, after, pass);
    if (p.steps) e.steps++;
  }
  if (pass) pass.end();
  device.queue.submit([enc.finish()]);
}

// Reads `parts` ([buffer name, byte offset, bytes]) after everything submitted, into
// `staging` (a MAP_READ buffer at least their sum long); Float32Arrays.
export async function readParts(device, e, staging, parts) {
  const enc = device.createCommandEncoder();
  let at = 0;
  for (const [name, off, bytes] of parts) { enc.copyBufferToBuffer(e.bufs.get(name), off, staging, at, bytes); at += bytes; }
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ, 0, at);
  const all = new Float32Array(staging.getMappedRange(0, at).slice(0));
  staging.unmap();
  const out = [];
  at = 0;
  for (const [, , bytes] of parts) { out.push(all.subarray(at / 4, (at + bytes) / 4)); at += bytes; }
  return out;
}
