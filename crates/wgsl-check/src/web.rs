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
