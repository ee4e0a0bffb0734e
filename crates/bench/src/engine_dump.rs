//! A model on the training engine as data, for the Dawn runner
//! (`crates/bench/dawn/engine.mjs`): what [`Engine::describe`] hands the resident plan —
//! every buffer (its bytes and initial contents), every dispatch (kernel, binding variants as
//! buffer ranges, uniform words, grid, buffers bound after the uniform) and every program's
//! ops per step parity — so Dawn runs the engine's own step, not a copy of it. The models'
//! dumps (`cnn_bench.rs`, `gpt_dump.rs`) add what feeds a step and what checks it.
//!
//! JSON: `{"buffers":[{"name","bytes","init"}], "kernels":[…], "dispatches":[{"kernel",
//! "variants":[[{"buffer","offset","size"}]], "uniform", "workgroups", "after_uniform"}],
//! "programs":{NAME:{"steps","ops":[[op…],[op…]]}}}`, an op being `{"pass":1}`,
//! `{"clear":NAME}`, `{"dispatch":I,"variant":V}` or `{"copy":[FROM,OFFSET,TO,OFFSET,BYTES]}`;
//! a buffer's `init` is a file name in the same folder (its bytes) or null (zeroed). A size
//! of null binds the rest of the buffer.

use gpu_runtime::engine::{Description, Engine};
use gpu_runtime::plan::{Binding, Init, Op};

use crate::json::{js, kernel_json, num_list};

fn op_json(op: &Op) -> String {
    match op {
        Op::Pass => "{\"pass\":1}".into(),
        Op::Clear(name) => format!("{{\"clear\":{}}}", js(name)),
        Op::Dispatch { index, variant } => {
            format!("{{\"dispatch\":{index},\"variant\":{variant}}}")
        }
        Op::Copy {
            from,
            from_offset,
            to,
            to_offset,
            bytes,
        } => format!(
            "{{\"copy\":[{},{from_offset},{},{to_offset},{bytes}]}}",
            js(from),
            js(to)
        ),
    }
}

fn binding_json(b: &Binding) -> Result<String, String> {
    match b {
        Binding::Buffer { name, offset, size } => Ok(format!(
            "{{\"buffer\":{},\"offset\":{offset},\"size\":{}}}",
            js(name),
            size.map_or("null".to_string(), |s| s.to_string())
        )),
        Binding::Uniform => Err("a uniform in a binding list".into()),
    }
}

/// The JSON object of `d` (see the module documentation); buffers with initial bytes are
/// written into `dir` as `init_N.bin`.
pub fn description_json(dir: &str, d: &Description<'_>) -> Result<String, String> {
    let mut buffers = Vec::new();
    for (i, b) in d.buffers.iter().enumerate() {
        let (bytes, init) = match &b.init {
            Init::Bytes(v) => {
                let file = format!("init_{i}.bin");
                std::fs::write(format!("{dir}/{file}"), v.as_ref())
                    .map_err(|e| format!("{dir}/{file}: {e}"))?;
                (v.len() as u64, js(&file))
            }
            Init::Zeroed(n) => (*n, "null".into()),
        };
        buffers.push(format!(
            "{{\"name\":{},\"bytes\":{},\"init\":{init}}}",
            js(b.name),
            bytes.max(4)
        ));
    }
    let mut ids: Vec<&str> = Vec::new();
    let mut kernels = Vec::new();
    let mut dispatches = Vec::new();
    for r in &d.dispatches {
        if !ids.contains(&r.kernel.id) {
            ids.push(r.kernel.id);
            kernels.push(kernel_json(r.kernel));
        }
        let variants = r
            .variants
            .iter()
            .map(|v| {
                v.iter()
                    .map(binding_json)
                    .collect::<Result<Vec<_>, _>>()
                    .map(|b| format!("[{}]", b.join(",")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let after: Vec<String> = r.after_uniform.iter().map(|n| js(n)).collect();
        dispatches.push(format!(
            "{{\"kernel\":{},\"variants\":[{}],\"uniform\":{},\"workgroups\":{},\"after_uniform\":[{}]}}",
            js(r.kernel.id),
            variants.join(","),
            num_list(&r.uniform),
            num_list(r.workgroups),
            after.join(",")
        ));
    }
    let programs: Vec<String> = d
        .programs
        .iter()
        .map(|p| {
            let parity = |ops: &[Op]| {
                let o: Vec<String> = ops.iter().map(op_json).collect();
                format!("[{}]", o.join(","))
            };
            format!(
                "{}:{{\"steps\":{},\"ops\":[{},{}]}}",
                js(p.name),
                p.steps,
                parity(&p.ops[0]),
                parity(&p.ops[1])
            )
        })
        .collect();
    Ok(format!(
        "{{\"buffers\":[{}],\"kernels\":[{}],\"dispatches\":[{}],\"programs\":{{{}}},\"adam\":{}}}",
        buffers.join(","),
        kernels.join(","),
        dispatches.join(","),
        programs.join(","),
        d.adam
    ))
}

/// [`Engine::describe`] as a `String` error, for the dumps.
pub fn describe<'s>(
    net: &gpu_runtime::engine::Net,
    params: &[f32],
    setup: gpu_runtime::engine::Setup<'s>,
) -> Result<Description<'s>, String> {
    Engine::describe(net, params, setup).map_err(|e| e.to_string())
}
