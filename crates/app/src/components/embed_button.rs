//! The "Embed" button a widget carries on the full page: a panel with the iframe snippet for
//! the widget's current settings (size included), a live preview and a copy button. The
//! snippet is built by `crate::embed::snippet` (pure, unit-tested).

use yew::prelude::*;

use super::Ctx;
use crate::embed::{snippet, widget, Snippet, SnippetWidget};

#[derive(Properties, PartialEq)]
pub struct EmbedButtonProps {
    /// The widget's id in the embed registry (`crate::embed::WIDGETS`).
    pub widget: AttrValue,
    /// Settings that live in the page's route rather than its query (a lesson's or a
    /// puzzle's id), added to the snippet.
    #[prop_or_default]
    pub extra: Vec<(&'static str, String)>,
}

/// The site's address without the hash (where the embed will point).
fn site_base() -> String {
    gloo::utils::window()
        .location()
        .href()
        .ok()
        .map(|h| h.split('#').next().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[function_component]
pub fn EmbedButton(props: &EmbedButtonProps) -> Html {
    let ctx = use_context::<Ctx>();
    let open = use_state(|| false);
    let copied = use_state(|| false);
    let (Some(ctx), Some(w)) = (ctx, widget(&props.widget)) else {
        return html! {};
    };
    // Inside an embed the button would only offer to embed the embed.
    if ctx.route.is_embedded() {
        return html! {};
    }
    // The page's own heading and view tabs would only lead away from the widget.
    let hide: Vec<&str> = w
        .hideable
        .iter()
        .copied()
        .filter(|h| ["heading", "tabs"].contains(h))
        .collect();
    let info = SnippetWidget {
        id: w.id,
        params: w.params,
        hide: &hide,
        size: w.size,
        title: ctx.t(w.title_key),
    };
    let mut query = ctx.query.clone();
    for (k, v) in &props.extra {
        query.set(k, v);
    }
    let s: Snippet = snippet(&site_base(), &info, ctx.lang.code(), query.pairs());
    let toggle = {
        let open = open.clone();
        Callback::from(move |_| open.set(!*open))
    };
    let copy = {
        let (html, copied) = (s.html.clone(), copied.clone());
        Callback::from(move |_| {
            // navigator.clipboard.writeText, through Reflect (no extra web-sys bindings).
            let nav = gloo::utils::window().navigator();
            let clip = js_sys::Reflect::get(&nav, &"clipboard".into()).ok();
            let write = clip.as_ref().and_then(|c| {
                js_sys::Reflect::get(c, &"writeText".into())
                    .ok()
                    .and_then(|f| wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(f).ok())
            });
            if let (Some(c), Some(f)) = (clip, write) {
                let _ = f.call1(&c, &html.clone().into());
                copied.set(true);
            }
        })
    };
    html! {
        <div class="embed-share">
            <button type="button" class="button embed-toggle" aria-expanded={open.to_string()} onclick={toggle}>
                { ctx.t("embed.button") }
            </button>
            if *open {
                <div class="embed-panel" role="group" aria-label={ctx.t("embed.panel")}>
                    <p class="note">{ ctx.t("embed.panel.intro") }</p>
                    <textarea class="embed-snippet" readonly=true rows="3" aria-label={ctx.t("embed.panel.code")}
                        value={s.html.clone()} />
                    <p>
                        <button type="button" class="button primary embed-copy" onclick={copy}>{ ctx.t("embed.panel.copy") }</button>
                        if *copied {
                            <span class="status" role="status">{ ctx.t("embed.panel.copied") }</span>
                        }
                        <a href="examples/course.html" class="embed-doc">{ ctx.t("embed.panel.docs") }</a>
                    </p>
                    <p class="note">{ ctx.t("embed.panel.preview") }</p>
                    <iframe class="embed-preview" src={s.src.clone()} title={ctx.t(w.title_key)}
                        width={s.width.to_string()} height={s.height.to_string()}></iframe>
                </div>
            }
        </div>
    }
}
