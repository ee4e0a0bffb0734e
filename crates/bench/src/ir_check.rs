//! What a kernel compiles to, checked on naga's IR: which function-local (private) arrays it
//! indexes with a value only known at run time. Drivers cannot keep such an array in
//! registers; it lives in slow local memory. (A 2D-blocktiled kernel whose accumulators were
//! a dynamically indexed array<f32, 64> ran slower than the naive kernel on an H200.)

use naga::{Expression, TypeInner};

/// Names of private arrays indexed dynamically, per function, as "function: variable".
pub fn dynamically_indexed_private_arrays(wgsl: &str) -> Result<Vec<String>, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let mut found = Vec::new();
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        for (_, expr) in f.expressions.iter() {
            let Expression::Access { base, .. } = expr else {
                continue;
            };
            let Expression::LocalVariable(var) = f.expressions[*base] else {
                continue;
            };
            let local = &f.local_variables[var];
            if matches!(module.types[local.ty].inner, TypeInner::Array { .. }) {
                let name = format!(
                    "{}: {}",
                    f.name.as_deref().unwrap_or("?"),
                    local.name.as_deref().unwrap_or("?")
                );
                if !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_dynamic_indexing_and_ignores_constant_indexing() {
        let dynamic =
            "fn f(i: u32) -> f32 { var acc: array<f32, 64>; acc[i] = 1.0; return acc[3]; }";
        assert_eq!(
            dynamically_indexed_private_arrays(dynamic),
            Ok(vec!["f: acc".to_string()])
        );
        let constant = "fn f() -> f32 { var acc: array<f32, 64>; acc[2] = 1.0; return acc[3]; }";
        assert_eq!(dynamically_indexed_private_arrays(constant), Ok(vec![]));
    }

    #[test]
    fn no_ladder_kernel_indexes_a_private_array_dynamically() {
        for k in gpu_runtime::kernels() {
            let found = dynamically_indexed_private_arrays(&k.wgsl()).expect("parses");
            assert!(found.is_empty(), "{}: {found:?}", k.id);
        }
    }
}
