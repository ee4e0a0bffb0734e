//! Sizes set through the CSSOM instead of `style="…"` attributes: the Content Security Policy
//! (`style-src 'self'`, no `'unsafe-inline'`) blocks style attributes, not CSSOM writes.
//! An element carries `data-width-pct="42.5"` (its width in %) or `data-css-w="264"` (the
//! custom property `--w` a stylesheet scales it by); after every render of a component that
//! calls [`use_widths`], its style is set from them.

use wasm_bindgen::JsCast;
use yew::prelude::*;

fn apply() {
    apply_percent_widths();
    apply_custom_widths();
}

/// `--w` from `data-css-w` (a plain number), through `style.setProperty`.
fn apply_custom_widths() {
    let Ok(list) = gloo::utils::document().query_selector_all("[data-css-w]") else {
        return;
    };
    for i in 0..list.length() {
        let Some(el) = list
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        let Some(w) = el
            .get_attribute("data-css-w")
            .and_then(|p| p.parse::<f64>().ok())
            .filter(|p| p.is_finite() && *p >= 0.0)
        else {
            continue;
        };
        let Ok(style) = js_sys::Reflect::get(&el, &"style".into()) else {
            continue;
        };
        if let Ok(set) = js_sys::Reflect::get(&style, &"setProperty".into())
            .and_then(|f| f.dyn_into::<js_sys::Function>())
        {
            let _ = set.call2(&style, &"--w".into(), &w.to_string().into());
        }
    }
}

fn apply_percent_widths() {
    let Ok(list) = gloo::utils::document().query_selector_all("[data-width-pct]") else {
        return;
    };
    for i in 0..list.length() {
        let Some(el) = list
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
        else {
            continue;
        };
        let pct = el
            .get_attribute("data-width-pct")
            .and_then(|p| p.parse::<f64>().ok())
            .filter(|p| p.is_finite())
            .map(|p| p.clamp(0.0, 100.0))
            .unwrap_or(0.0);
        // `el.style.width = …` (Reflect keeps web-sys's CSSOM bindings out of the build).
        if let Ok(style) = js_sys::Reflect::get(&el, &"style".into()) {
            let _ = js_sys::Reflect::set(&style, &"width".into(), &format!("{pct}%").into());
        }
    }
}

/// Applies every `data-width-pct` on the page after each render of the calling component.
#[hook]
pub fn use_widths() {
    use_effect(apply);
}
