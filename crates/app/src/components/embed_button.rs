//! The "Embed" button a widget carries on the full page: a panel with the one-line loader
//! snippet (`page_models::embed_loader::loader_snippet`: a `<div>` and `embed.js`, which fills
//! in the origin itself) and the iframe snippet for the widget's current settings, a field for the course page's origin (`parentOrigin=`: with
//! it the snippet's script sizes the frame from the widget's `resize` messages), a live
//! preview and a copy button. The snippet is built by `page_models::embed::snippet` (pure,
//! unit-tested). Shown only in instructor mode (`Ctx::instructor`, the footer's switch).

use yew::prelude::*;

use super::Ctx;
use page_models::embed::{origin_typed, snippet, widget, OriginError, Snippet, SnippetWidget};
use page_models::embed_loader::{loader_snippet, snippet_hide};

#[derive(Properties, PartialEq)]
pub struct EmbedButtonProps {
    /// The widget's id in the embed registry (`page_models::embed::WIDGETS`).
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
    // Which snippet was copied last ("loader" or "iframe"), for the "Copied." note beside it.
    let copied = use_state(|| "");
    // What the instructor typed as their page's origin.
    let origin = use_state(String::new);
    let (Some(ctx), Some(w)) = (ctx, widget(&props.widget)) else {
        return html! {};
    };
    // Inside an embed the button would only offer to embed the embed; a learner's view
    // leaves it out unless instructor mode is on.
    if ctx.route.is_embedded() || !ctx.instructor {
        return html! {};
    }
    // The page's own heading and view tabs would only lead away from the widget.
    let hide = snippet_hide(w);
    let title = ctx.tf("embed.frame_title", &[("widget", ctx.t(w.title_key))]);
    let info = SnippetWidget {
        id: w.id,
        params: w.params,
        hide: &hide,
        height: w.height,
        title: &title,
    };
    let mut query = ctx.query.clone();
    for (k, v) in &props.extra {
        query.set(k, v);
    }
    // An empty field is no origin (no messages); a bad one is said at the field and left out.
    let parent = match origin.trim() {
        "" => None,
        typed => Some(origin_typed(typed)),
    };
    let good = parent
        .as_ref()
        .and_then(|p| p.as_ref().ok())
        .map(String::as_str);
    let s: Snippet = snippet(&site_base(), &info, ctx.lang.code(), query.pairs(), good);
    let loader = loader_snippet(&site_base(), w, ctx.lang.code(), query.pairs(), &title);
    let on_origin = {
        let (origin, copied) = (origin.clone(), copied.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            origin.set(input.value());
            copied.set("");
        })
    };
    let height = s.height.to_string();
    // One field per panel (a page may have several panels open).
    let field_id = format!("embed-origin-{}", w.id);
    let origin_note = match &parent {
        None => html! {
            <p class="note embed-origin-note">{ ctx.tf("embed.panel.no_origin", &[("h", &height)]) }</p>
        },
        Some(Ok(o)) => html! {
            <p class="note embed-origin-note">{ ctx.tf("embed.panel.origin_ok", &[("origin", o)]) }</p>
        },
        Some(Err(e)) => {
            let key = match e {
                OriginError::Wildcard => "embed.panel.origin_wildcard",
                OriginError::NotAnOrigin(_) => "embed.panel.origin_bad",
            };
            html! {
                <p class="message error embed-origin-error" role="alert">{ ctx.tf(key, &[("value", origin.trim())]) }</p>
            }
        }
    };
    let toggle = {
        let open = open.clone();
        Callback::from(move |_| open.set(!*open))
    };
    let copy = |which: &'static str, text: &str| {
        let (text, copied) = (text.to_string(), copied.clone());
        Callback::from(move |_| {
            if copy_text(&text) {
                copied.set(which);
            }
        })
    };
    let copied_note = |which: &str| {
        (*copied == which).then(
            || html! { <span class="status" role="status">{ ctx.t("embed.panel.copied") }</span> },
        )
    };
    html! {
        <div class="embed-share" data-widget={w.id}>
            <button type="button" class="button embed-toggle" aria-expanded={open.to_string()} onclick={toggle}>
                { ctx.t("embed.button") }
            </button>
            if *open {
                <div class="embed-panel" role="group" aria-label={ctx.t("embed.panel")}>
                    <p class="note">{ ctx.t("embed.panel.loader") }</p>
                    <textarea class="embed-loader-snippet" readonly=true rows="4" aria-label={ctx.t("embed.panel.loader_code")}
                        value={loader.clone()} />
                    <p>
                        <button type="button" class="button primary embed-copy-loader" onclick={copy("loader", &loader)}>{ ctx.t("embed.panel.copy") }</button>
                        { copied_note("loader") }
                    </p>
                    <p class="note embed-iframe-intro"><strong>{ ctx.t("embed.panel.iframe") }</strong>{" "}{ ctx.tf("embed.panel.intro", &[("h", &height)]) }</p>
                    <div class="field embed-origin-field">
                        <label for={field_id.clone()}>{ ctx.t("embed.panel.origin") }</label>
                        <input id={field_id.clone()} class="embed-origin" type="url" inputmode="url" autocomplete="url"
                            spellcheck="false" placeholder={ctx.t("embed.panel.origin_example")}
                            aria-invalid={matches!(parent, Some(Err(_))).to_string()}
                            value={(*origin).clone()} oninput={on_origin} />
                    </div>
                    { origin_note }
                    <textarea class="embed-snippet" readonly=true rows={if good.is_some() { "8" } else { "3" }} aria-label={ctx.t("embed.panel.code")}
                        value={s.html.clone()} />
                    <p>
                        <button type="button" class="button embed-copy" onclick={copy("iframe", &s.html)}>{ ctx.t("embed.panel.copy") }</button>
                        { copied_note("iframe") }
                        <a href="examples/course.html" class="embed-doc">{ ctx.t("embed.panel.docs") }</a>
                    </p>
                    <p class="note">{ ctx.t("embed.panel.preview") }</p>
                    <iframe class="embed-preview" src={s.src.clone()} title={title.clone()}
                        width="100%" height={height.clone()}></iframe>
                </div>
            }
        </div>
    }
}

/// Writes `text` to the clipboard (`navigator.clipboard.writeText`, through Reflect: no extra
/// web-sys bindings); false where the browser offers no clipboard.
pub(super) fn copy_text(text: &str) -> bool {
    let nav = gloo::utils::window().navigator();
    let clip = js_sys::Reflect::get(&nav, &"clipboard".into()).ok();
    let write = clip.as_ref().and_then(|c| {
        js_sys::Reflect::get(c, &"writeText".into())
            .ok()
            .and_then(|f| wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(f).ok())
    });
    match (clip, write) {
        (Some(c), Some(f)) => f.call1(&c, &text.into()).is_ok(),
        _ => false,
    }
}
