//! The notices `boot.js` raises outside the app: a new version was installed (this visit runs
//! a newer build than the last), a newer one is ready for the next visit, and the browser
//! offers to install the site as an app. `boot.js` sets `data-update` / `data-installable` on
//! `<html>` and fires `gpu-playground-update`; this only renders them.

use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::Ctx;

#[derive(Clone, Debug, Default, PartialEq)]
struct Flags {
    update: Option<String>,
    installable: bool,
}

fn read_flags() -> Flags {
    let el = gloo::utils::document().document_element();
    Flags {
        update: el.as_ref().and_then(|e| e.get_attribute("data-update")),
        installable: el
            .as_ref()
            .and_then(|e| e.get_attribute("data-installable"))
            .is_some(),
    }
}

fn clear(attr: &str) {
    if let Some(el) = gloo::utils::document().document_element() {
        let _ = el.remove_attribute(attr);
    }
}

#[function_component]
pub fn UpdateNotice() -> Html {
    let ctx = use_context::<Ctx>();
    let flags = use_state(read_flags);
    {
        let flags = flags.clone();
        use_effect_with((), move |_| {
            let l = gloo::events::EventListener::new(
                &gloo::utils::window(),
                "gpu-playground-update",
                move |_| flags.set(read_flags()),
            );
            move || drop(l)
        });
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let dismiss = {
        let flags = flags.clone();
        Callback::from(move |_| {
            clear("data-update");
            flags.set(read_flags());
        })
    };
    let reload = Callback::from(|_| {
        let _ = gloo::utils::window().location().reload();
    });
    let install = {
        let flags = flags.clone();
        Callback::from(move |_| {
            let window = gloo::utils::window();
            let key = wasm_bindgen::JsValue::from_str("gpuPlaygroundInstall");
            if let Ok(event) = js_sys::Reflect::get(&window, &key) {
                let prompt = js_sys::Reflect::get(&event, &"prompt".into())
                    .ok()
                    .and_then(|p| p.dyn_into::<js_sys::Function>().ok());
                if let Some(prompt) = prompt {
                    let _ = prompt.call0(&event);
                }
            }
            let _ = js_sys::Reflect::delete_property(&window, &key);
            clear("data-installable");
            flags.set(read_flags());
        })
    };
    let update = match flags.update.as_deref() {
        Some("installed") => html! {
            <p class="notice update" role="status" data-update="installed">
                { ctx.t("update.installed") }
                <button type="button" class="button" onclick={dismiss}>{ ctx.t("update.dismiss") }</button>
            </p>
        },
        Some("available") => html! {
            <p class="notice update" role="status" data-update="available">
                { ctx.t("update.available") }
                <button type="button" class="button" onclick={reload}>{ ctx.t("update.reload") }</button>
            </p>
        },
        _ => html! {},
    };
    html! {
        <>
            { update }
            if flags.installable {
                <p class="notice install">
                    { ctx.t("update.install_hint") }
                    <button type="button" class="button" id="install-app" onclick={install}>{ ctx.t("update.install") }</button>
                </p>
            }
        </>
    }
}
