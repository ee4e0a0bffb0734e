//! The width, in CSS px, at which an SVG chart is shown. A chart drawn for a wide viewBox is
//! scaled down on a phone and its text with it (below 11 px at 390 px); a chart that draws its
//! viewBox at this width shows its text at the stylesheet's size.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// What observes the element now, and which element it observes.
struct Watch {
    el: web_sys::Element,
    observer: web_sys::ResizeObserver,
    _on_resize: Closure<dyn FnMut()>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// The rendered width of the element behind `node`, in CSS px; `None` until it has
/// been laid out. Observed after every render, because a chart's SVG may appear only once its
/// run has data.
#[hook]
pub fn use_chart_width(node: NodeRef) -> Option<f64> {
    let width = use_state_eq(|| None::<f64>);
    let watch = use_mut_ref(|| None::<Watch>);
    {
        let width = width.clone();
        let watch = watch.clone();
        use_effect(move || {
            attach(&node, &watch, width);
        });
    }
    {
        // Leaving the page stops the observer.
        let watch = watch.clone();
        use_effect_with((), move |_| move || drop(watch.borrow_mut().take()));
    }
    *width
}

/// A chart's node and the width to draw it at: its rendered width
/// (`page_models::diagram::drawn_width`: `wide` until laid out, never under `min`).
#[hook]
pub fn use_drawn_width(wide: f64, min: f64) -> (NodeRef, f64) {
    let node = use_node_ref();
    let measured = use_chart_width(node.clone());
    (node, page_models::diagram::drawn_width(measured, wide, min))
}

fn attach(node: &NodeRef, watch: &Rc<RefCell<Option<Watch>>>, width: UseStateHandle<Option<f64>>) {
    let el = node.cast::<web_sys::Element>();
    let same = match (&el, watch.borrow().as_ref()) {
        (Some(e), Some(w)) => e == &w.el,
        (None, None) => true,
        _ => false,
    };
    if same {
        return;
    }
    *watch.borrow_mut() = None;
    let Some(el) = el else { return };
    let measure = {
        let el = el.clone();
        move || {
            let w = el.get_bounding_client_rect().width();
            if w > 0.0 {
                width.set(Some(w));
            }
        }
    };
    measure();
    let on_resize = Closure::<dyn FnMut()>::new(measure);
    let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) else {
        return;
    };
    observer.observe(&el);
    *watch.borrow_mut() = Some(Watch {
        el,
        observer,
        _on_resize: on_resize,
    });
}
