//! The wasm entry point the editor's JavaScript calls on every change (debounced there).

use wasm_bindgen::prelude::*;

/// Returns an array of `{from, to, line, column, message}` objects (UTF-16 offsets).
#[wasm_bindgen]
pub fn validate(source: &str) -> js_sys::Array {
    let out = js_sys::Array::new();
    for d in crate::check(source) {
        let o = js_sys::Object::new();
        let set = |k: &str, v: JsValue| {
            // Setting a plain property on a fresh object cannot fail.
            let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &v);
        };
        set("from", JsValue::from(d.from as u32));
        set("to", JsValue::from(d.to as u32));
        set("line", JsValue::from(d.line as u32));
        set("column", JsValue::from(d.column as u32));
        set("message", JsValue::from_str(&d.message));
        out.push(&o);
    }
    out
}

/// Compares the edited source's bindings and entry point with the original's (what the
/// kernel binds): an array of `{kind, group, binding, name, provided, expected, got, bytes,
/// limit, entry, found}` objects (only the fields the kind needs), empty when they fit or
/// when either source does not validate (its diagnostics already say why).
#[wasm_bindgen]
pub fn binding_check(original: &str, edited: &str, entry: &str) -> js_sys::Array {
    use crate::Mismatch;
    let out = js_sys::Array::new();
    let (Some(o), Some(e)) = (
        crate::interface(original, entry),
        crate::interface(edited, entry),
    ) else {
        return out;
    };
    for m in crate::mismatches(&o, &e, entry) {
        let obj = js_sys::Object::new();
        let set = |k: &str, v: JsValue| {
            let _ = js_sys::Reflect::set(&obj, &JsValue::from_str(k), &v);
        };
        let s = |v: &str| JsValue::from_str(v);
        match m {
            Mismatch::NoEntry { entry, found } => {
                set("kind", s("no_entry"));
                set("entry", s(&entry));
                set(
                    "found",
                    s(&if found.is_empty() {
                        "—".to_string()
                    } else {
                        found.join(", ")
                    }),
                );
            }
            Mismatch::Extra {
                group,
                binding,
                name,
                provided,
            } => {
                set("kind", s("extra"));
                set("group", JsValue::from(group));
                set("binding", JsValue::from(binding));
                set("name", s(&name));
                set("provided", s(&provided));
            }
            Mismatch::Missing { binding, name } => {
                set("kind", s("missing"));
                set("binding", JsValue::from(binding));
                set("name", s(&name));
            }
            Mismatch::WrongClass {
                binding,
                name,
                expected,
                got,
            } => {
                set("kind", s("wrong_class"));
                set("binding", JsValue::from(binding));
                set("name", s(&name));
                set("expected", s(expected.name()));
                set("got", s(got.name()));
            }
            Mismatch::ReadOnlyOutput { binding, name } => {
                set("kind", s("read_only_output"));
                set("binding", JsValue::from(binding));
                set("name", s(&name));
            }
            Mismatch::UniformTooLarge {
                binding,
                name,
                bytes,
                provided,
            } => {
                set("kind", s("uniform_too_large"));
                set("binding", JsValue::from(binding));
                set("name", s(&name));
                set("bytes", JsValue::from(bytes));
                set("limit", JsValue::from(provided));
            }
        }
        out.push(&obj);
    }
    out
}

/// `instrument(source, entry)` for the puzzle page's access view: `{source, logBinding,
/// arrays: [{name, binding, len}], unlogged}` (binding and len -1 when absent), or `{error}`.
#[wasm_bindgen]
pub fn instrument(source: &str, entry: &str) -> js_sys::Object {
    let o = js_sys::Object::new();
    let set = |o: &js_sys::Object, k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(o, &JsValue::from_str(k), &v);
    };
    match crate::instrument(source, entry) {
        Err(e) => set(&o, "error", JsValue::from_str(&e)),
        Ok(r) => {
            set(&o, "source", JsValue::from_str(&r.source));
            set(&o, "logBinding", JsValue::from(r.log_binding));
            set(&o, "unlogged", JsValue::from(r.unlogged as u32));
            let arrays = js_sys::Array::new();
            for a in r.arrays {
                let x = js_sys::Object::new();
                set(&x, "name", JsValue::from_str(&a.name));
                let num = |v: Option<u32>| JsValue::from(v.map_or(-1.0, f64::from));
                set(&x, "binding", num(a.binding));
                set(&x, "len", num(a.len));
                arrays.push(&x);
            }
            set(&o, "arrays", arrays.into());
        }
    }
    o
}

/// `budget_loops(source, budget)` for learner-edited kernels: `{source, flagBinding,
/// flagWords, lines: [line of loop n], budget}`, or `{error}` (see `loop_budget.rs`).
#[wasm_bindgen]
pub fn budget_loops(source: &str, budget: u32) -> js_sys::Object {
    let o = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &v);
    };
    match crate::budget_loops(source, budget) {
        Err(e) => set("error", JsValue::from_str(&e)),
        Ok(r) => {
            set("source", JsValue::from_str(&r.source));
            set("flagBinding", JsValue::from(r.flag_binding));
            set("flagWords", JsValue::from(r.flag_words() as u32));
            set("budget", JsValue::from(r.budget));
            let lines = js_sys::Array::new();
            for l in &r.lines {
                lines.push(&JsValue::from(*l));
            }
            set("lines", lines.into());
        }
    }
    o
}
