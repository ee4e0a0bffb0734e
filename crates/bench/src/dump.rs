//! `bench dump-kernels --dir DIR [--sizes 1024,4096] [--kernels id,…] [--copy-mib 256]`:
//! everything another WebGPU implementation needs to run the catalogue's matmul kernels and
//! the copy probe exactly as the app does, so `crates/bench/dawn/run.mjs` (Dawn) has no
//! second copy of any of it: the composed WGSL, entry point and override constants, the
//! dispatch grid, the uniform, the input buffers' bytes in the kernel's own layout (padding,
//! f16) from the same seeded data, and the elements to check with their f64 reference values
//! and tolerances (the same sample and bound as [`gpu_runtime::run_matmul_verified`]).
//!
//! With `--conv-shapes 1,2,…` (numbers of `bench conv`'s shapes; `small` adds two tiny ones
//! for software adapters) it also writes every conv stage's plan at those shapes
//! ([`gpu_runtime::conv::stage_plan`], as `bench conv` runs it: split-K's reduction and
//! im2col's GEMM included, the runtime's block and slices), with the same seeded inputs and,
//! for each of `--conv-runs` runs (default 3), the elements `bench conv` checks in that run
//! (seed 1 + run) with their f64 reference values and tolerances; `--conv-stages id,…`
//! limits the stages. Given alone (no `--sizes`, `--kernels`), only the conv plans are written.
//! `--conv-ig-tiles id,…` and `--conv-ig-splits n,…` add, at every conv shape, the implicit
//! GEMM with each listed block (`gpu_runtime::conv::IG_TILES`, candidates included) and
//! slice count forced, as `bench conv --ig-tiles … --ig-splits …` runs them, labelled alike;
//! a combination that is the runtime's own plan is written once.
//!
//! With `--cnn DIGITS` it writes the CNN page's training step and evaluation (DIR/cnn/, see
//! [`crate::cnn_bench::dump`]; alone, only that).
//!
//! With `--gpt ASSET` it writes the GPT page's training (DIR/gpt/, see
//! [`crate::gpt_dump`]; alone, only that).
//!
//! With `--mlp 1024,64` it writes the train view's MLP training step at those batches
//! (DIR/mlp/, see [`crate::mlp_bench::dump`]; alone, only that; `--mlp-verify-steps`, default
//! 64, the twin's steps to verify against).
//!
//! With `--gpt-peer default` (or `key=value,…`) it writes the engine GPT's training step for a
//! peer to train and verify (DIR/gpt-peer/, see [`crate::gpt_peer`]; alone, only that).
//!
//! With `--attention-seqs 1024,2048,4096` (`--attention-bh 32`, `--attention-d 64`) it writes,
//! under "attention", each attention path's forward plan at each length as
//! [`gpu_runtime::attention::run_attention`] runs it (naive: three dispatches, fused: one),
//! `bench attention`'s seeded q, k and v, and the elements its check compares with their f64
//! reference values and bounds. Whether the naive path's scores fit a binding is the device's
//! business: each plan carries its `largest_buffer` and the runner applies the runtime's rule.
//! Alone (no `--sizes`, `--kernels`), only the plans (conv, attention) are written.
//!
//! Writes DIR/manifest.json and one DIR/in_*.bin (DIR/conv_*.bin) per distinct input buffer.

use std::collections::HashMap;

use gpu_runtime::attention::{self, AttentionPath, AttnLayout};
use gpu_runtime::conv::{
    force_ig_splits, force_ig_tile, stage_plan, ConvError, ConvStage, IG_TILES,
};
use gpu_runtime::cpu_kernels::conv::{self as cref, ConvShape};
use gpu_runtime::cpu_kernels::data::random_vec;
use gpu_runtime::cpu_kernels::matmul::{self, MatmulSize};
use gpu_runtime::cpu_kernels::verify;
use gpu_runtime::family::job_buffers;
use gpu_runtime::plan::{Binding, Init, Plan};
use gpu_runtime::{
    measurements, Family, Job, KernelSpec, MeasureSize, FULL_CHECK_MACS, SAMPLED_ELEMENTS,
};

use crate::json::{f, js, kernel_json, num_list};
use crate::{attention_bench, conv_bench};

/// The seed of the wgpu bench's inputs (`run_matmul_verified(…, seed 1, …)`).
pub const SEED: u64 = 1;

/// The elements to check in the RAW (padded) output, their reference values and tolerances.
struct Check {
    raw_index: Vec<usize>,
    value: Vec<f64>,
    tol: Vec<f64>,
}

fn matmul_check(k: &KernelSpec, size: MatmulSize, a: &[f32], b: &[f32]) -> Check {
    let idx: Vec<usize> = matmul::check_indices(size, FULL_CHECK_MACS, SAMPLED_ELEMENTS, SEED)
        .unwrap_or_else(|| (0..size.c_len()).collect());
    // The reference of what the kernel multiplies (f16-rounded inputs for the Tensor Core
    // stage), as the runtime's check.
    let (ja, jb) = verify::judged_inputs(k.precision, a, b);
    let reference = matmul::reference_at(size, &ja, &jb, &idx);
    // The same bound as verify::compare: it is held per element as tol = rel·mag + floor.
    let probe = verify::compare(&[0.0], &reference, k.precision);
    let floor = match k.precision {
        verify::Precision::F32 | verify::Precision::F16Products => 0.0,
        verify::Precision::F16Inputs => {
            2.0 * size.k as f64 * (1.0 / (1u64 << 24) as f64) * reference.max_abs_input
        }
    };
    let job = Job::Matmul { size, a, b };
    let stride = match job_buffers(k, &job).ok().and_then(|l| l.padded_rows) {
        Some((_, stride, _)) => stride,
        None => size.n as usize,
    };
    let n = size.n as usize;
    Check {
        raw_index: idx.iter().map(|&i| (i / n) * stride + i % n).collect(),
        value: reference.value.clone(),
        tol: reference
            .magnitude
            .iter()
            .map(|&m| probe.rel_bound * m + floor)
            .collect(),
    }
}

/// The elements of the NPQK output that `bench conv`'s run `run` checks (seed 1 + run, as
/// [`gpu_runtime::conv::verify_conv`]), as indices into the stored output (rows of
/// `k_stored`), with their reference values and tolerances (the same bound as
/// `verify::compare`: rel_bound · Σ|terms|).
fn conv_check(shape: &ConvShape, x: &[f32], f: &[f32], k_stored: u32, run: u64) -> (Check, f64) {
    let idx = cref::check_indices(shape, FULL_CHECK_MACS, SAMPLED_ELEMENTS, 1 + run)
        .unwrap_or_else(|| (0..shape.y_len()).collect());
    let reference = cref::reference_at(shape, x, f, &idx);
    let rel_bound = verify::compare(&[0.0], &reference, verify::Precision::F32).rel_bound;
    let (k, ks) = (shape.k as usize, k_stored as usize);
    let check = Check {
        raw_index: idx.iter().map(|&i| (i / k) * ks + i % k).collect(),
        value: reference.value.clone(),
        tol: reference.magnitude.iter().map(|&m| rel_bound * m).collect(),
    };
    (check, rel_bound)
}

/// `--conv-shapes`: `bench conv`'s shapes by number, or `small`
/// ([`conv_bench::SMALL_SHAPES`]).
fn conv_shapes(value: &str) -> Result<Vec<(String, ConvShape)>, String> {
    conv_bench::parse_shapes(value)
        .map(|v| v.into_iter().map(|(n, s)| (n.to_string(), s)).collect())
        .map_err(|e| format!("--conv-shapes: {e}"))
}

/// 64-bit FNV-1a, to name input files by content (stages share unpadded inputs).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Writes an input file once (by name) and returns its name.
type WriteInput<'a> = dyn FnMut(String, &[u8]) -> Result<String, String> + 'a;

/// One conv plan as JSON: its buffers (input files written through `write_input`), steps,
/// output and the per-run checks; None when the stage does not run the shape.
fn conv_plan_json(
    stage: ConvStage,
    name: &str,
    shape: &ConvShape,
    runs: u64,
    kernels: &mut Vec<KernelSpec>,
    write_input: &mut WriteInput<'_>,
) -> Result<Option<String>, String> {
    let (x, f) = shape.inputs(SEED);
    let sp = match stage_plan(stage, shape, &x, &f) {
        Ok(sp) => sp,
        Err(ConvError::NotPointwise | ConvError::PatchTooLarge { .. }) => return Ok(None),
        Err(e) => return Err(format!("{} at {name}: {e}", stage.id())),
    };
    let (buffers, steps) = plan_json(&sp.plan, &format!("conv_{name}"), kernels, write_input)?;
    let mut checks = Vec::new();
    let mut rel = 0.0;
    for run in 0..runs {
        let (c, rel_bound) = conv_check(shape, &x, &f, sp.k_stored, run);
        rel = rel_bound;
        checks.push(format!(
            "{{\"index\":{},\"value\":{},\"tol\":{}}}",
            num_list(&c.raw_index),
            num_list(c.value.iter().map(|&v| f64_json(v))),
            num_list(c.tol.iter().map(|&v| f64_json(v))),
        ));
    }
    Ok(Some(format!(
        "{{\"stage\":{},\"label\":{},\"shape\":{},\"flops\":{},\"extra_bytes\":{},\"buffers\":{},\"steps\":{},\"output\":{},\"rel_bound\":{},\"checks\":[{}]}}",
        js(stage.id()),
        js(&conv_bench::stage_label(stage, shape)),
        js(name),
        f64_json(shape.flops()),
        stage.extra_bytes(shape),
        buffers,
        steps,
        js(sp.output),
        f64_json(rel),
        checks.join(","),
    )))
}

/// A plan's buffers and steps as JSON lists (input files written through `write_input`, named
/// `{prefix}_{buffer}_{hash}.bin`, every character outside [A-Za-z0-9] of `prefix` as `_`);
/// the kernels it dispatches are added to `kernels` (once per id).
fn plan_json(
    plan: &Plan<'_>,
    prefix: &str,
    kernels: &mut Vec<KernelSpec>,
    write_input: &mut WriteInput<'_>,
) -> Result<(String, String), String> {
    let tag: String = prefix
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut buffers = Vec::new();
    for b in &plan.buffers {
        let source = match &b.init {
            Init::Bytes(bytes) => {
                let file = write_input(format!("{tag}_{}_{:016x}.bin", b.name, fnv(bytes)), bytes)?;
                format!("\"file\":{},\"bytes\":{}", js(&file), bytes.len())
            }
            Init::Zeroed(n) => format!("\"zeroed\":{n}"),
        };
        buffers.push(format!(
            "{{\"name\":{},{source},\"read_back\":{}}}",
            js(b.name),
            b.read_back
        ));
    }
    let mut steps = Vec::new();
    for st in &plan.steps {
        if let Some(k) = kernels.iter().find(|k| k.id == st.kernel.id) {
            // One id, one pipeline in the runner: a kernel made with other constants
            // (another head width) would be run with the first one's.
            if k.constants != st.kernel.constants {
                return Err(format!("{}: two sets of override constants", k.id));
            }
        } else {
            kernels.push(st.kernel.clone());
        }
        let bindings = st
            .dispatch
            .bindings
            .iter()
            .map(|b| match b {
                Binding::Uniform => Ok("null".to_string()),
                Binding::Buffer {
                    name,
                    offset: 0,
                    size: None,
                } => Ok(js(name)),
                other => Err(format!("{}: a partial binding {other:?}", st.kernel.id)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        steps.push(format!(
            "{{\"kernel\":{},\"grid\":{},\"dims\":{},\"bindings\":[{}]}}",
            js(st.kernel.id),
            num_list(st.dispatch.workgroups),
            num_list(&st.dispatch.uniform),
            bindings.join(",")
        ));
    }
    Ok((
        format!("[{}]", buffers.join(",")),
        format!("[{}]", steps.join(",")),
    ))
}

/// Each attention path's forward plan at `bh` problems of `n` positions and head width `d`
/// ([`attention::forward_plan`], as [`attention::run_attention`] runs it), on `bench
/// attention`'s seeded q, k and v, with the elements its check compares (the same 512-row
/// sample, [`attention::rows_to_check`] seeded with n) and their f64 reference values and
/// bounds ([`attention::reference_row`], the bound [`attention::verify`] holds). Whether the
/// naive path's scores fit a binding depends on the device: the runner decides, from
/// `largest_buffer`, as the runtime's check does.
fn attention_plans_json(
    bh: u32,
    n: u32,
    d: u32,
    kernels: &mut Vec<KernelSpec>,
    write_input: &mut WriteInput<'_>,
) -> Result<Vec<String>, String> {
    let l = AttnLayout::separate(bh, n, d);
    let qkv = random_vec(l.qkv_len(), attention_bench::qkv_seed(n));
    let rows = attention::rows_to_check(&l, attention_bench::CHECKED_ROWS, n as u64);
    let (mut index, mut value, mut tol) = (Vec::new(), Vec::new(), Vec::new());
    for &(z, i) in &rows {
        let (want, bound) = attention::reference_row(&l, &qkv, z, i);
        let at = l.out_at(z, i);
        index.extend((0..want.len()).map(|e| at + e));
        value.extend(want.into_iter().map(f64_json));
        tol.extend(bound.into_iter().map(f64_json));
    }
    let check = format!(
        "{{\"index\":{},\"value\":{},\"tol\":{}}}",
        num_list(&index),
        num_list(&value),
        num_list(&tol)
    );
    let widths = attention::Widths::new(d).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for path in AttentionPath::ALL {
        let plan = attention::forward_plan(path, &l, &qkv, &widths)
            .map_err(|e| format!("attention {} at n = {n}: {e}", path.id()))?;
        let (buffers, steps) =
            plan_json(&plan, &format!("attn_{n}_{bh}_{d}"), kernels, write_input)?;
        out.push(format!(
            "{{\"path\":{},\"n\":{n},\"bh\":{bh},\"d\":{d},\"flops\":{},\"largest_buffer\":{},\"buffers\":{buffers},\"steps\":{steps},\"output\":\"out\",\"rel_bound\":1,\"checks\":[{check}]}}",
            js(path.id()),
            f64_json(l.flops()),
            l.largest_buffer(path),
        ));
    }
    Ok(out)
}

fn f64_json(x: f64) -> String {
    f(x)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut dir = None;
    let mut sizes = vec![1024u32, 2048, 4096];
    let mut ids: Vec<String> = Vec::new();
    let mut copy_mib = 256u32;
    let mut conv: Vec<(String, ConvShape)> = Vec::new();
    let mut conv_stages: Vec<ConvStage> = ConvStage::ALL.to_vec();
    let mut conv_runs = 3u64;
    let mut ig_tiles: Vec<Option<&'static str>> = Vec::new();
    let mut ig_splits: Vec<Option<u32>> = Vec::new();
    let mut matmul_given = false;
    let mut cnn: Option<String> = None;
    let mut cnn_batches = vec![64usize, 256];
    let mut cnn_epochs = 300u64;
    let mut cnn_verify = 3u64;
    let mut mlp: Vec<usize> = Vec::new();
    let mut mlp_verify = 64u32;
    let mut gpt_peer = None;
    let mut attn_seqs: Vec<u32> = Vec::new();
    let mut attn_bh = 32u32;
    let mut attn_d = 64u32;
    let mut gpt: Option<crate::gpt_dump::Args> = None;
    let mut gpt_flags: Vec<(String, String)> = Vec::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        matmul_given |= matches!(flag.as_str(), "--sizes" | "--kernels" | "--copy-mib");
        match flag.as_str() {
            "--dir" => dir = Some(value.clone()),
            "--conv-shapes" => conv = conv_shapes(value)?,
            "--attention-seqs" => {
                attn_seqs = value
                    .split(',')
                    .map(|n| n.trim().parse().ok().filter(|n| (1..=65_535).contains(n)))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| format!("--attention-seqs wants 1 to 65535: `{value}`"))?
            }
            "--attention-bh" => {
                attn_bh = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=65_535).contains(n))
                    .ok_or_else(|| format!("--attention-bh wants 1 to 65535: `{value}`"))?
            }
            "--attention-d" => {
                attn_d = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=attention::MAX_HEAD).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "--attention-d wants 1 to {}: `{value}`",
                            attention::MAX_HEAD
                        )
                    })?
            }
            "--cnn" => cnn = Some(value.clone()),
            "--gpt-peer" => gpt_peer = Some(crate::gpt_peer::parse(value)?),
            "--gpt" => gpt = Some(crate::gpt_dump::Args::new(value.clone())),
            f if f.starts_with("--gpt-") => gpt_flags.push((f.to_string(), value.clone())),
            "--mlp" => {
                mlp = value
                    .split(',')
                    .map(|b| b.trim().parse().ok().filter(|b| (1..=8192).contains(b)))
                    .collect::<Option<Vec<usize>>>()
                    .ok_or_else(|| format!("--mlp wants batches of 1 to 8192: `{value}`"))?
            }
            "--mlp-verify-steps" => {
                mlp_verify = value
                    .parse()
                    .ok()
                    .filter(|e| (1..=1000).contains(e))
                    .ok_or_else(|| format!("--mlp-verify-steps wants 1 to 1000: `{value}`"))?
            }
            "--cnn-batches" => {
                cnn_batches = value
                    .split(',')
                    .map(|b| b.trim().parse().ok().filter(|b| (1..=256).contains(b)))
                    .collect::<Option<Vec<usize>>>()
                    .ok_or_else(|| format!("--cnn-batches wants 1 to 256: `{value}`"))?
            }
            "--cnn-epochs" => {
                cnn_epochs = value
                    .parse()
                    .ok()
                    .filter(|e| (1..=5000).contains(e))
                    .ok_or_else(|| format!("--cnn-epochs wants 1 to 5000: `{value}`"))?
            }
            "--cnn-verify-steps" => {
                cnn_verify = value
                    .parse()
                    .ok()
                    .filter(|e| (1..=50).contains(e))
                    .ok_or_else(|| format!("--cnn-verify-steps wants 1 to 50: `{value}`"))?
            }
            "--conv-stages" => {
                conv_stages = value
                    .split(',')
                    .map(|id| {
                        ConvStage::from_id(id.trim()).ok_or_else(|| format!("unknown stage `{id}`"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--conv-ig-tiles" => {
                ig_tiles = value
                    .split(',')
                    .map(|id| {
                        IG_TILES
                            .iter()
                            .find(|t| t.id == id.trim())
                            .map(|t| Some(t.id))
                            .ok_or_else(|| format!("unknown implicit GEMM block `{id}`"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--conv-ig-splits" => {
                ig_splits = value
                    .split(',')
                    .map(|n| {
                        n.trim()
                            .parse()
                            .ok()
                            .filter(|n| (1..=16).contains(n))
                            .map(Some)
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("--conv-ig-splits wants 1 to 16: `{value}`"))?
            }
            "--conv-runs" => {
                conv_runs = value
                    .parse()
                    .ok()
                    .filter(|r| (1..=50).contains(r))
                    .ok_or_else(|| format!("--conv-runs wants 1 to 50: `{value}`"))?
            }
            "--sizes" => {
                sizes = value
                    .split(',')
                    .map(|s| s.trim().parse().ok().filter(|n| (1..=16384).contains(n)))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| format!("--sizes wants numbers from 1 to 16384: `{value}`"))?
            }
            "--kernels" => ids = value.split(',').map(str::to_string).collect(),
            "--copy-mib" => {
                copy_mib = value
                    .parse()
                    .ok()
                    .filter(|m| (1..=2048).contains(m))
                    .ok_or_else(|| format!("--copy-mib wants 1 to 2048: `{value}`"))?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let dir = dir.ok_or("dump-kernels needs --dir DIR")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{dir}: {e}"))?;
    if let Some(g) = &mut gpt {
        for (f, v) in &gpt_flags {
            if !g.take(f, v)? {
                return Err(format!("unknown flag {f}"));
            }
        }
        crate::gpt_dump::dump(&dir, g)?;
    } else if let Some((f, _)) = gpt_flags.first() {
        return Err(format!("{f} needs --gpt ASSET"));
    }
    if !mlp.is_empty() {
        crate::mlp_bench::dump(&dir, &mlp, mlp_verify)?;
    }
    if let Some(digits) = &cnn {
        crate::cnn_bench::dump(&dir, digits, &cnn_batches, cnn_epochs, cnn_verify)?;
    }
    if let Some(spec) = &gpt_peer {
        crate::gpt_peer::dump(&dir, spec)?;
    }
    // Given with nothing else: only the CNN, the MLP, the GPT and its peer.
    if (cnn.is_some() || !mlp.is_empty() || gpt.is_some() || gpt_peer.is_some())
        && conv.is_empty()
        && attn_seqs.is_empty()
        && !matmul_given
    {
        return Ok(());
    }

    // Plans (conv, attention) given without matmul flags: only the plans.
    let conv_only = (!conv.is_empty() || !attn_seqs.is_empty()) && !matmul_given;
    if conv_only {
        sizes.clear();
    }
    let mut kernels: Vec<KernelSpec> = gpu_runtime::kernels()
        .filter(|k| {
            !conv_only
                && (k.family == Family::Matmul || k.id == "measure-copy")
                && (ids.is_empty() || ids.iter().any(|i| i == k.id))
        })
        .cloned()
        .collect();
    // The tuner's candidates, unless a kernel list leaves them out: `matmul-tuned@` names all
    // of that kernel's variants, `matmul-deep-k@` all of that one's, `matmul-tuned@128x128x8`
    // one.
    kernels.extend(gpu_runtime::catalogue::tile_variants().filter(|v| {
        !conv_only
            && (ids.is_empty()
                || ids
                    .iter()
                    .any(|i| i == v.id || (i.ends_with('@') && v.id.starts_with(i.as_str()))))
    }));

    let mut files: HashMap<String, ()> = HashMap::new();
    let mut runs = Vec::new();
    let mut write_input = |name: String, bytes: &[u8]| -> Result<String, String> {
        if files.insert(name.clone(), ()).is_none() {
            std::fs::write(format!("{dir}/{name}"), bytes).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(name)
    };
    for &n in &sizes {
        let size = MatmulSize::new(n, n, n);
        let (a, b) = size.inputs(SEED);
        for k in kernels.iter().filter(|k| k.family == Family::Matmul) {
            let job = Job::Matmul { size, a: &a, b: &b };
            let l = job_buffers(k, &job).map_err(|e| format!("{} at {n}: {e}", k.id))?;
            let mut inputs = Vec::new();
            for (i, bytes) in l.inputs.iter().enumerate() {
                inputs.push(js(&write_input(
                    format!("in_{:?}_{n}_{i}.bin", k.storage),
                    bytes,
                )?));
            }
            let check = matmul_check(k, size, &a, &b);
            runs.push(format!(
                "{{\"kernel\":{},\"size\":{n},\"flops\":{},\"bytes\":0,\"grid\":{},\"dims\":{},\"inputs\":[{}],\"output_len\":{},\"check\":{{\"index\":{},\"value\":{},\"tol\":{}}}}}",
                js(k.id),
                f(size.flops()),
                num_list(l.workgroups),
                num_list(&l.uniform),
                inputs.join(","),
                l.output_len,
                num_list(&check.raw_index),
                num_list(check.value.iter().map(|&v| f(v))),
                num_list(check.tol.iter().map(|&v| f(v))),
            ));
        }
    }
    if let Some(k) = kernels.iter().find(|k| k.id == "measure-copy") {
        // Same shape as measurements::bandwidth: elements = threads, multiples of 64.
        let elements = copy_mib * (1 << 20) / 4;
        let data = measurements::input(elements as usize);
        let size = MeasureSize {
            elements,
            threads: elements,
            param: 0,
        };
        let job = Job::Measure { size, input: &data };
        let l = job_buffers(k, &job).map_err(|e| format!("{}: {e}", k.id))?;
        let name = write_input(format!("in_copy_{elements}.bin"), &l.inputs[0])?;
        // The copy must be exact: check a spread of elements against the input.
        let idx: Vec<usize> = (0..4096)
            .map(|i| i * (elements as usize / 4096))
            .chain([elements as usize - 1])
            .collect();
        runs.push(format!(
            "{{\"kernel\":\"measure-copy\",\"size\":{elements},\"flops\":0,\"bytes\":{},\"grid\":{},\"dims\":{},\"inputs\":[{}],\"output_len\":{},\"check\":{{\"index\":{},\"value\":{},\"tol\":{}}}}}",
            8.0 * elements as f64,
            num_list(l.workgroups),
            num_list(&l.uniform),
            js(&name),
            l.output_len,
            num_list(&idx),
            num_list(idx.iter().map(|&i| f(data[i] as f64))),
            num_list(idx.iter().map(|_| 0)),
        ));
    }
    let mut plans = Vec::new();
    // The forced implicit GEMM variants, after the runtime's own plans.
    let forced: Vec<(Option<&'static str>, Option<u32>)> =
        if ig_tiles.is_empty() && ig_splits.is_empty() {
            Vec::new()
        } else {
            let tiles = if ig_tiles.is_empty() {
                vec![None]
            } else {
                ig_tiles
            };
            let splits = if ig_splits.is_empty() {
                vec![None]
            } else {
                ig_splits
            };
            tiles
                .iter()
                .flat_map(|&t| splits.iter().map(move |&n| (t, n)))
                .collect()
        };
    for (name, shape) in &conv {
        let mut labels = Vec::new();
        let runs = conv_stages
            .iter()
            .map(|&st| (st, (None, None)))
            .chain(forced.iter().map(|&v| (ConvStage::ImplicitGemm, v)));
        for (stage, (tile, splits)) in runs {
            force_ig_tile(tile);
            force_ig_splits(splits);
            let label = conv_bench::stage_label(stage, shape);
            let plan = if labels.contains(&label) {
                None
            } else {
                conv_plan_json(
                    stage,
                    name,
                    shape,
                    conv_runs,
                    &mut kernels,
                    &mut write_input,
                )?
            };
            force_ig_tile(None);
            force_ig_splits(None);
            if let Some(p) = plan {
                labels.push(label);
                plans.push(p);
            }
        }
    }
    let mut attn = Vec::new();
    for &n in &attn_seqs {
        attn.extend(attention_plans_json(
            attn_bh,
            n,
            attn_d,
            &mut kernels,
            &mut write_input,
        )?);
    }
    let manifest = format!(
        "{{\"seed\":{SEED},\"kernels\":[{}],\"runs\":[{}],\"plans\":[{}],\"attention\":[{}]}}\n",
        kernels
            .iter()
            .map(kernel_json)
            .collect::<Vec<_>>()
            .join(","),
        runs.join(","),
        plans.join(","),
        attn.join(",")
    );
    std::fs::write(format!("{dir}/manifest.json"), manifest).map_err(|e| e.to_string())?;
    println!(
        "wrote {dir}/manifest.json: {} kernels, {} runs, {} conv plans, {} attention plans, {} input files",
        kernels.len(),
        runs.len(),
        plans.len(),
        attn.len(),
        files.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(js("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }

    /// `--conv-ig-tiles`/`--conv-ig-splits` add the forced implicit GEMMs after the runtime's
    /// own plans, labelled as `bench conv` labels them, the runtime's own combination once,
    /// and leave nothing forced behind.
    #[test]
    fn forced_implicit_gemm_variants_are_written_once_each() {
        let dir = std::env::temp_dir().join(format!("dump-conv-ig-{}", std::process::id()));
        let dir_s = dir.to_string_lossy().to_string();
        let args = |extra: &[&str]| {
            [
                &["--dir", dir_s.as_str(), "--conv-shapes", "small"][..],
                &["--conv-stages", "conv-implicit-gemm", "--conv-runs", "1"],
                extra,
            ]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
        };
        assert!(run(&args(&["--conv-ig-tiles", "conv-implicit-gemm-3x3"])).is_err());
        assert!(run(&args(&["--conv-ig-splits", "0"])).is_err());
        run(&args(&[
            "--conv-ig-tiles",
            "conv-implicit-gemm,conv-implicit-gemm-32x64",
            "--conv-ig-splits",
            "1,2",
        ]))
        .expect("dumps");
        let manifest = std::fs::read_to_string(dir.join("manifest.json")).expect("written");
        let (first, _) = conv_bench::SMALL_SHAPES[0];
        let labels: Vec<&str> = manifest
            .split("\"label\":\"")
            .skip(1)
            .zip(manifest.split("\"shape\":\"").skip(1))
            .filter(|(_, shape)| shape.starts_with(first))
            .filter_map(|(l, _)| l.split('"').next())
            .collect();
        // The runtime splits this shape's 64×64 GEMM in 2 itself: forced (64×64, 2) is not
        // written again.
        assert_eq!(
            labels,
            [
                "conv-implicit-gemm (conv-implicit-gemm, split-K 2)",
                "conv-implicit-gemm (conv-implicit-gemm)",
                "conv-implicit-gemm (conv-implicit-gemm-32x64)",
                "conv-implicit-gemm (conv-implicit-gemm-32x64, split-K 2)",
            ]
        );
        let (_, small) = conv_bench::SMALL_SHAPES[0];
        assert_eq!(
            gpu_runtime::conv::implicit_gemm_plan(&small),
            Some(("conv-implicit-gemm", 2))
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `--attention-seqs` writes both paths' plans per length (naive: its three dispatches,
    /// fused: one), alone; the checked elements carry `bench attention`'s reference values.
    #[test]
    fn attention_plans_are_written_per_length() {
        let dir = std::env::temp_dir().join(format!("dump-attn-{}", std::process::id()));
        let dir_s = dir.to_string_lossy().to_string();
        let args = |extra: &[&str]| {
            [&["--dir", dir_s.as_str(), "--attention-bh", "2"][..], extra]
                .concat()
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
        };
        assert!(run(&args(&["--attention-seqs", "16", "--attention-d", "65"])).is_err());
        assert!(run(&args(&["--attention-seqs", "0"])).is_err());
        run(&args(&["--attention-seqs", "16,40", "--attention-d", "8"])).expect("dumps");
        let manifest = std::fs::read_to_string(dir.join("manifest.json")).expect("written");
        assert!(
            manifest.contains("\"runs\":[],\"plans\":[]"),
            "only the plans"
        );
        let count = |s: &str| manifest.matches(s).count();
        assert_eq!(count("\"path\":\"naive\""), 2);
        assert_eq!(count("\"path\":\"fused\""), 2);
        assert_eq!(count("{\"kernel\":\"attention-naive-softmax\""), 2);
        assert_eq!(count("{\"kernel\":\"attention-fused\""), 2);
        // Row 5 of problem 1 at n = 40: its first element's reference leads nowhere else.
        let l = AttnLayout::separate(2, 40, 8);
        let qkv = random_vec(l.qkv_len(), attention_bench::qkv_seed(40));
        let (want, _) = attention::reference_row(&l, &qkv, 1, 5);
        assert!(manifest.contains(&f64_json(want[0])));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn checks_point_into_the_padded_output() {
        let k = gpu_runtime::kernel("matmul-tuned").expect("catalogued");
        let size = MatmulSize::new(3, 5, 7);
        let (a, b) = size.inputs(SEED);
        let c = matmul_check(k, size, &a, &b);
        // Small: every element is checked; row r of C starts at r·128 in the padded output.
        assert_eq!(c.raw_index.len(), 15);
        assert_eq!(&c.raw_index[4..7], &[4, 128, 129]);
        let r = matmul::reference(size, &a, &b);
        assert_eq!(c.value, r.value);
        assert!(c.tol.iter().all(|&t| t > 0.0));
    }
}
