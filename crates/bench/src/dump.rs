//! `bench dump-kernels --dir DIR [--sizes 1024,4096] [--kernels id,…] [--copy-mib 256]`:
//! everything another WebGPU implementation needs to run the catalogue's matmul kernels and
//! the copy probe exactly as the app does, so `crates/bench/dawn/run.mjs` (Dawn) has no
//! second copy of any of it: the composed WGSL, entry point and override constants, the
//! dispatch grid, the uniform, the input buffers' bytes in the kernel's own layout (padding,
//! f16) from the same seeded data, and the elements to check with their f64 reference values
//! and tolerances (the same sample and bound as [`gpu_runtime::run_matmul_verified`]).
//!
//! Writes DIR/manifest.json and one DIR/in_*.bin per distinct input buffer.

use std::collections::HashMap;

use gpu_runtime::cpu_kernels::matmul::{self, MatmulSize};
use gpu_runtime::cpu_kernels::verify;
use gpu_runtime::family::job_buffers;
use gpu_runtime::{
    measure, Family, Job, KernelSpec, MeasureSize, FULL_CHECK_MACS, SAMPLED_ELEMENTS,
};

/// The seed of the wgpu bench's inputs (`run_matmul_verified(…, seed 1, …)`).
pub const SEED: u64 = 1;

/// JSON string literal.
fn js(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn num_list<T: std::fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(","))
}

/// f64 as JSON (finite by construction here; exact round trip through `{:e}`).
fn f(x: f64) -> String {
    format!("{x:e}")
}

pub fn kernel_json(k: &KernelSpec) -> String {
    let consts: Vec<String> = k
        .constants
        .iter()
        .map(|(n, v)| format!("{}:{}", js(n), f(*v)))
        .collect();
    let features: Vec<String> = k.feature_names().iter().map(|n| js(n)).collect();
    format!(
        "{{\"id\":{},\"source_path\":{},\"entry_point\":{},\"constants\":{{{}}},\"workgroup_size\":{},\"features\":[{}],\"wgsl\":{}}}",
        js(k.id),
        js(k.source_path),
        js(k.entry_point),
        consts.join(","),
        num_list(k.workgroup_size),
        features.join(","),
        js(&k.wgsl())
    )
}

/// The elements to check in the RAW (padded) output, their reference values and tolerances.
struct Check {
    raw_index: Vec<usize>,
    value: Vec<f64>,
    tol: Vec<f64>,
}

fn matmul_check(k: &KernelSpec, size: MatmulSize, a: &[f32], b: &[f32]) -> Check {
    let idx: Vec<usize> = matmul::check_indices(size, FULL_CHECK_MACS, SAMPLED_ELEMENTS, SEED)
        .unwrap_or_else(|| (0..size.c_len()).collect());
    let reference = matmul::reference_at(size, a, b, &idx);
    // The same bound as verify::compare: it is held per element as tol = rel·mag + floor.
    let probe = verify::compare(&[0.0], &reference, k.precision);
    let floor = match k.precision {
        verify::Precision::F32 => 0.0,
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

pub fn run(args: &[String]) -> Result<(), String> {
    let mut dir = None;
    let mut sizes = vec![1024u32, 2048, 4096];
    let mut ids: Vec<String> = Vec::new();
    let mut copy_mib = 256u32;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--dir" => dir = Some(value.clone()),
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

    let mut kernels: Vec<KernelSpec> = gpu_runtime::kernels()
        .filter(|k| {
            (k.family == Family::Matmul || k.id == "measure-copy")
                && (ids.is_empty() || ids.iter().any(|i| i == k.id))
        })
        .cloned()
        .collect();
    // The tuner's candidates, unless a kernel list leaves them out: `matmul-tuned@` names all
    // of that kernel's variants, `matmul-double-buffer@` all of that one's.
    kernels.extend(gpu_runtime::catalogue::tile_variants().filter(|v| {
        ids.is_empty()
            || ids
                .iter()
                .any(|i| i.ends_with('@') && v.id.starts_with(i.as_str()))
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
        // Same shape as measure::bandwidth: elements = threads, multiples of 64.
        let elements = copy_mib * (1 << 20) / 4;
        let data = measure::input(elements as usize);
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
    let manifest = format!(
        "{{\"seed\":{SEED},\"kernels\":[{}],\"runs\":[{}]}}\n",
        kernels
            .iter()
            .map(kernel_json)
            .collect::<Vec<_>>()
            .join(","),
        runs.join(",")
    );
    std::fs::write(format!("{dir}/manifest.json"), manifest).map_err(|e| e.to_string())?;
    println!(
        "wrote {dir}/manifest.json: {} kernels, {} runs, {} input files",
        kernels.len(),
        runs.len(),
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
