//! The JSON the Dawn runners read (`crates/bench/dawn/*.mjs`), written by hand (bench has no
//! serde): string literals, number lists and a kernel's description. Shared by every dump
//! (`dump.rs`, and the MLP's and CNN's in `mlp_bench.rs` and `cnn_bench.rs`), which is why it
//! is not in any of them.

use gpu_runtime::KernelSpec;

/// JSON string literal.
pub fn js(s: &str) -> String {
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

pub fn num_list<T: std::fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(","))
}

/// f64 as JSON (finite by construction here; exact round trip through `{:e}`).
pub fn f(x: f64) -> String {
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
